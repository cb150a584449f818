"""The statistics of a quantile set's stated levels (calib_core.metrics.regression_stated): brackets, the PIT χ² of
the cells between the levels, and its smallest value under ties."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from calib_core.base.regression import Gaussian, QuantileSet
from calib_core.metrics import regression_stated as rs
from calib_core.metrics.regression import RegressionRows, summary_statistics

TAU = np.arange(1, 10) / 10


def gaussian_quantiles(n: int, rng: np.random.Generator, tau=TAU):
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    q = mu[:, None] + sd[:, None] * special.ndtri(tau)[None, :]
    return mu + sd * rng.standard_normal(n), q  # y from the TRUE law


def test_brackets_equal_the_counts_without_ties_and_chi2_is_pearsons():
    rng = np.random.default_rng(0)
    y, q = gaussian_quantiles(2_000, rng)
    lo, hi = rs.stated_level_counts(y, q)
    np.testing.assert_array_equal(lo, hi)
    np.testing.assert_array_equal(hi, (y[:, None] <= q).sum(axis=0))
    cells = np.bincount((y[:, None] > q).sum(axis=1), minlength=TAU.size + 1)
    e = y.size * np.diff(np.r_[0, TAU, 1])
    s = rs.stated_statistics(y, QuantileSet(TAU, q))
    assert s["pit_chi2"] == pytest.approx(np.sum((cells - e) ** 2 / e), rel=1e-9)
    assert s["pit_chi2"] == pytest.approx(stats.chisquare(cells, e).statistic, rel=1e-9)
    assert s["max_level_deviation"] == pytest.approx(np.max(np.abs(hi / y.size - TAU)), abs=1e-12)


def test_summary_statistics_and_registry_functions_carry_them_for_quantile_sets_only():
    rng = np.random.default_rng(1)
    y, q = gaussian_quantiles(500, rng)
    vals = summary_statistics(RegressionRows(y, QuantileSet(TAU, q)))
    assert vals["pit_chi2"] == rs.pit_chi2(y, QuantileSet(TAU, q))
    assert vals["max_level_deviation"] == rs.max_level_deviation(y, QuantileSet(TAU, q))
    g = Gaussian(np.zeros(5), np.ones(5))
    assert "pit_chi2" not in summary_statistics(RegressionRows(np.zeros(5), g))
    assert np.isnan(rs.pit_chi2(np.zeros(5), g)) and np.isnan(rs.max_level_deviation(np.zeros(5), g))
    # weights: the statistic of the replicate
    w = rng.multinomial(500, np.full(500, 1 / 500)).astype(float)
    rep = np.repeat(np.arange(500), w.astype(int))
    a = summary_statistics(RegressionRows(y, QuantileSet(TAU, q)), w)
    b = rs.stated_statistics(y[rep], QuantileSet(TAU, q[rep]))
    assert a["pit_chi2"] == pytest.approx(b["pit_chi2"], rel=1e-9)


def test_min_chi2_under_ties_never_exceeds_the_randomised_pits():
    """Integer targets, quantiles of the exact discrete law (they tie): the smallest χ² over the brackets is at most
    the χ² of the randomised PIT's cell counts, every time (what makes the test valid)."""
    rng = np.random.default_rng(2)
    for _ in range(40):
        n = 300
        lam = rng.uniform(0.3, 6, n)
        q = stats.poisson.ppf(TAU[None, :], lam[:, None])
        y = rng.poisson(lam).astype(float)
        lo, hi = rs.stated_level_counts(y, q)
        assert np.all(lo <= hi) and np.any(lo < hi)
        chi2, counts = rs.min_pit_chi2(lo, hi, float(n), TAU)
        left, right = stats.poisson.cdf(y - 1, lam), stats.poisson.cdf(y, lam)
        u = left + rng.random(n) * (right - left)  # Czado et al. 2009
        cells = np.bincount(np.searchsorted(TAU, u, side="left"), minlength=TAU.size + 1)
        e = n * np.diff(np.r_[0, TAU, 1])
        cum = np.cumsum(cells)[:-1]
        assert np.all(lo <= cum) and np.all(cum <= hi)  # the randomised counts lie in the brackets
        assert chi2 <= np.sum((cells - e) ** 2 / e) + 1e-6
        assert counts.sum() == pytest.approx(n) and np.all(counts >= -1e-6)


def test_pairs_levels_zero_and_one_and_deviation():
    assert rs.stated_pairs(TAU, (0.5, 0.8, 0.9)) == {0.8: (0, 8)}
    assert rs.stated_pairs(np.array([0.05, 0.25, 0.5, 0.75, 0.95]), (0.5, 0.9)) == {0.5: (1, 3), 0.9: (0, 4)}
    edges, interior = rs.pit_cells(np.array([0.0, 0.3, 1.0]))
    assert edges.tolist() == [0.0, 0.3, 1.0] and interior.tolist() == [False, True, False]
    d = rs.level_deviation(np.array([8.0]), np.array([12.0]), 100.0, np.array([0.1]))
    assert d.tolist() == [0.0]  # the bracket [0.08, 0.12] holds 0.1
    # open / closed counts of a stated pair with a target on an end
    y = np.array([0.0, 0.5, 1.0, 2.0])
    q = np.tile([0.0, 1.0], (4, 1))
    assert rs.stated_pair_counts(y, q, {0.8: (0, 1)}) == {0.8: (1.0, 3.0)}


def test_bracket_binomial_p_is_the_exact_test_without_ties():
    for k in (0, 3, 50, 88, 100):
        want = min(1.0, 2 * min(stats.binom.cdf(k, 100, 0.9), stats.binom.sf(k - 1, 100, 0.9)))
        assert float(rs.bracket_binomial_p(k, k, 100, 0.9)) == pytest.approx(want, rel=1e-9, abs=1e-300)
    # a bracket takes the larger of its ends' p-values per tail
    assert float(rs.bracket_binomial_p(80, 95, 100, 0.9)) == 1.0
    lo, hi = rs.clopper_pearson_bounds(np.array([80.0]), np.array([95.0]), 100)
    assert lo[0] < 0.8 < 0.95 < hi[0]
