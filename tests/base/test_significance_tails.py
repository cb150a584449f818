"""The log-space tails of :mod:`calib_core.base.significance_tails`: SciPy's numbers where SciPy's log tail is a
normal float, mpmath's (50 digits) where it underflows, finite and monotone at extreme arguments."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from scipy import special, stats

from calib_core.base.significance_tails import (
    log_binom_cdf,
    log_binom_sf,
    log_chi2_cdf,
    log_chi2_sf,
    log_gamma_lower,
    log_gamma_upper,
    log_norm_sf,
    log_norm_two_sided,
    log_two_sided,
)

mp.mp.dps = 50


def _mp_log_q(a: float, x: float) -> float:
    return float(mp.log(mp.gammainc(a, x, mp.inf, regularized=True)))


def _mp_log_p(a: float, x: float) -> float:
    return float(mp.log(mp.gammainc(a, 0, x, regularized=True)))


def _log_binom_tail_by_sum(k: int, n: int, p: float, lower: bool) -> float:
    """The tail as a log-sum-exp of SciPy's log pmf over every count (exact, independent of the continued fraction)."""
    j = np.arange(0, k + 1) if lower else np.arange(k + 1, n + 1)
    return float(special.logsumexp(stats.binom.logpmf(j, n, p)))


def test_moderate_arguments_are_scipys_numbers():
    x = np.linspace(0.5, 400.0, 60)
    for df in (1.0, 7.0, 99.0, 250.0):
        np.testing.assert_array_equal(log_chi2_sf(x, df), stats.chi2.logsf(x, df))
        np.testing.assert_array_equal(log_chi2_cdf(x, df), stats.chi2.logcdf(x, df))
    k = np.arange(0, 301)
    np.testing.assert_array_equal(log_binom_cdf(k, 300, 0.1), stats.binom.logcdf(k, 300, 0.1))
    np.testing.assert_array_equal(log_binom_sf(k, 300, 0.9), stats.binom.logsf(k, 300, 0.9))
    np.testing.assert_allclose(log_norm_sf(np.linspace(-5, 30, 50)), stats.norm.logsf(np.linspace(-5, 30, 50)))


@pytest.mark.parametrize(("a", "x"), [(5e4, 6e4), (5e4, 1e5), (50.0, 400.0), (50.0, 5000.0), (5.0, 2000.0),
                                      (2.5, 800.0), (0.5, 1000.0), (5e5, 6e5), (10.0, 1000.0), (50.0, 1e6)])
def test_upper_gamma_where_scipy_underflows_matches_mpmath(a, x):
    got = float(log_gamma_upper(a, x))
    assert got < -200 and np.isfinite(got)
    assert got == pytest.approx(_mp_log_q(a, x), rel=1e-6)


@pytest.mark.parametrize(("a", "x"), [(5e4, 4e4), (5e4, 1e4), (50.0, 0.01), (5.0, 1e-80), (2.5, 1e-200),
                                      (5e5, 4.5e5), (10.0, 1e-70), (30.0, 1.0)])
def test_lower_gamma_where_scipy_underflows_matches_mpmath(a, x):
    got = float(log_gamma_lower(a, x))
    assert np.isfinite(got)
    assert got == pytest.approx(_mp_log_p(a, x), rel=1e-9)


@pytest.mark.parametrize(("k", "n", "p", "lower"), [
    (5000, 100_000, 0.1, True), (1000, 100_000, 0.1, True), (80_000, 100_000, 0.9, True), (0, 100_000, 0.1, True),
    (85_000, 100_000, 0.9, True), (15_000, 100_000, 0.1, False), (30_000, 100_000, 0.1, False),
    (99_000, 100_000, 0.9, False), (99_999 - 1, 100_000, 0.9, False), (130_000, 1_000_000, 0.1, False),
])
def test_binomial_tails_where_scipy_underflows_are_exact(k, n, p, lower):
    got = float(log_binom_cdf(k, n, p) if lower else log_binom_sf(k, n, p))
    assert got < -200 and np.isfinite(got)
    assert got == pytest.approx(_log_binom_tail_by_sum(k, n, p, lower), rel=1e-11)
    scipy_value = stats.binom.logcdf(k, n, p) if lower else stats.binom.logsf(k, n, p)
    assert scipy_value == -np.inf or scipy_value == pytest.approx(got, rel=1e-9)


@pytest.mark.parametrize("df", [2.0, 9.0, 99.0, 1e4, 1e5, 1e6])
def test_chi2_tails_are_finite_and_monotone_at_extreme_arguments(df):
    x = np.geomspace(1e-6, 1e9, 6000) * df
    sf, cdf = log_chi2_sf(x, df), log_chi2_cdf(x, df)
    assert np.isfinite(sf).all() and np.isfinite(cdf).all()
    assert (np.diff(sf) <= 0).all() and (np.diff(cdf) >= 0).all()
    assert sf[-1] < -1e6 and cdf[0] < -10  # far beyond float range where SciPy gives −inf


@pytest.mark.parametrize(("n", "p"), [(100_000, 0.1), (100_000, 0.9), (1_000_000, 0.5)])
def test_binomial_tails_are_finite_and_monotone_over_every_count(n, p):
    k = np.arange(0, n + 1, max(n // 50_000, 1))
    cdf, sf = log_binom_cdf(k, n, p), log_binom_sf(k, n, p)
    assert np.isfinite(cdf).all() and np.isfinite(sf[k < n]).all()
    assert (np.diff(cdf) >= 0).all() and (np.diff(sf) <= 0).all()
    assert log_binom_cdf(-1, n, p) == -np.inf and log_binom_sf(n, n, p) == -np.inf
    assert log_binom_cdf(n, n, p) == 0.0 and log_binom_sf(-1, n, p) == 0.0


def test_normal_and_two_sided_helpers():
    z = np.array([0.0, 1.959963984540054, 40.0, -40.0, 1e4])
    lp = log_norm_two_sided(z)
    assert lp[0] == 0.0 and lp[1] == pytest.approx(np.log(0.05), rel=1e-12)
    assert lp[2] == lp[3] and np.isfinite(lp).all() and (np.diff(lp[[0, 1, 2, 4]]) < 0).all()
    assert float(log_norm_sf(1e4)) == pytest.approx(-0.5e8 - np.log(1e4) - 0.5 * np.log(2 * np.pi), rel=1e-12)
    assert float(log_two_sided(np.log(0.3), np.log(0.9))) == pytest.approx(np.log(0.6))
    assert float(log_two_sided(np.log(0.7), np.log(0.8))) == 0.0
