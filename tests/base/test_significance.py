"""calib_core.base.significance: multiplicity corrections, Monte-Carlo p-values, exact binomial machinery,
block-bootstrap intervals — checked against hand-worked examples and as statistics (seeded)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from calib_core.base import significance as sig


# -- multiplicity: hand examples (the values statsmodels.multipletests gives) ---------------------
def test_holm_hand_example():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted 0.005, 0.01, 0.03, 0.04 → 4·0.005, 3·0.01, 2·0.03, 1·0.04 = .02 .03 .06 .04 → running max
    np.testing.assert_allclose(sig.holm_adjust(p), [0.03, 0.06, 0.06, 0.02])
    assert sig.holm(p, 0.05).tolist() == [True, False, False, True]
    assert sig.holm(p, 0.10).tolist() == [True, True, True, True]


def test_bh_hand_example_and_scipy():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 4·.005/1, 4·.01/2, 4·.03/3, 4·.04/4 = .02 .02 .04 .04 → running min from the right
    np.testing.assert_allclose(sig.bh_adjust(p), [0.02, 0.04, 0.04, 0.02])
    assert sig.benjamini_hochberg(p, 0.03).tolist() == [True, False, False, True]
    rng = np.random.default_rng(1)
    q = rng.random(37) ** 3
    np.testing.assert_allclose(sig.bh_adjust(q), stats.false_discovery_control(q, method="bh"))


def test_holm_textbook_example():
    # Holm (1979)-style worked example: p = .01 .02 .03 .04 .05, m = 5
    p = [0.01, 0.02, 0.03, 0.04, 0.05]
    np.testing.assert_allclose(sig.holm_adjust(p), [0.05, 0.08, 0.09, 0.09, 0.09])
    assert sig.holm(p).tolist() == [True, False, False, False, False]
    # BH rejects all five at 5% (p_(5) = .05 ≤ 5/5·.05)
    assert sig.benjamini_hochberg(p).all()


def test_nan_pvalues_are_outside_the_family():
    p = [0.01, np.nan, 0.04]
    adj = sig.holm_adjust(p)
    assert np.isnan(adj[1])
    np.testing.assert_allclose(adj[[0, 2]], [0.02, 0.04])
    assert sig.holm(p).tolist() == [True, False, True]
    assert np.isnan(sig.bh_adjust([np.nan])).all()
    assert sig.holm([]).size == 0


def test_holm_controls_familywise_error_under_dependence():
    # 4000 families of 5 correlated null tests: FWER ≤ 5% + 2 s.e.
    rng = np.random.default_rng(2)
    z = rng.standard_normal((4000, 1)) * 0.7 + rng.standard_normal((4000, 5)) * 0.7
    p = 2 * stats.norm.sf(np.abs(z / np.sqrt(0.98)))
    any_reject = np.array([sig.holm(row).any() for row in p])
    rate = any_reject.mean()
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 4000)


def test_expected_chance_flags():
    assert sig.expected_chance_flags(20, 0.05) == pytest.approx(1.0)


# -- p-values ---------------------------------------------------------------------------------
def test_monte_carlo_p_formula():
    draws = np.arange(1, 100)  # 99 draws 1..99
    r = sig.monte_carlo_p(95, draws, "greater")
    assert r.p == pytest.approx((1 + 5) / 100)
    assert r.se == pytest.approx(np.sqrt(0.06 * 0.94 / 100))
    assert r.n_draws == 99
    assert sig.monte_carlo_p(1000, draws).p == pytest.approx(1 / 100)  # never 0
    assert sig.monte_carlo_p(5, draws, "less").p == pytest.approx(6 / 100)
    assert sig.monte_carlo_p(50, draws, "two-sided").p == pytest.approx(1.0)
    assert np.isnan(sig.monte_carlo_p(1.0, [np.nan]).p)


def test_monte_carlo_p_is_uniform_under_the_null():
    rng = np.random.default_rng(3)
    ps = np.array([sig.monte_carlo_p(rng.standard_normal(), rng.standard_normal(199)).p for _ in range(2000)])
    # P(p ≤ a) = a exactly for a on the (k/(B+1)) grid
    for a in (0.05, 0.25, 0.5):
        rate = (ps <= a + 1e-12).mean()
        assert abs(rate - a) < 3 * np.sqrt(a * (1 - a) / 2000)


def test_binomial_and_clopper_pearson():
    assert sig.binomial_test(65, 100, 0.9) < 1e-6
    assert sig.binomial_test(90, 100, 0.9) == pytest.approx(1.0)
    lo, hi = sig.clopper_pearson(65, 100)
    ref = stats.binomtest(65, 100).proportion_ci(0.95, method="exact")
    assert (lo, hi) == pytest.approx((ref.low, ref.high))
    assert sig.clopper_pearson(0, 10)[0] == 0.0
    assert sig.clopper_pearson(10, 10)[1] == 1.0


def test_clopper_pearson_coverage_at_least_level():
    rng = np.random.default_rng(4)
    n, p = 50, 0.9
    ks = rng.binomial(n, p, 3000)
    cover = np.mean([lo <= p <= hi for lo, hi in (sig.clopper_pearson(k, n) for k in ks)])
    assert cover >= 0.95 - 2 * np.sqrt(0.05 * 0.95 / 3000)


def test_poisson_binomial_test():
    # equal probabilities: exactly the binomial test
    r = sig.poisson_binomial_test(40, np.full(50, 0.9))
    assert r.p == pytest.approx(sig.binomial_test(40, 50, 0.9)) and r.se == 0.0
    # unequal: simulated, near the normal approximation
    probs = np.r_[np.full(500, 0.8), np.full(500, 0.95)]
    mu, sd = probs.sum(), np.sqrt((probs * (1 - probs)).sum())
    r = sig.poisson_binomial_test(int(mu + 2 * sd), probs, rng=np.random.default_rng(5), n_draws=20_000)
    assert r.p == pytest.approx(2 * stats.norm.sf(2.0), abs=0.015)
    assert 0 < r.se < 0.005


def test_normal_and_gamma_p():
    assert sig.normal_p(1.959963984540054) == pytest.approx(0.05)
    assert sig.normal_p(-1.6448536269514722, "less") == pytest.approx(0.05)
    nu = 30
    x = stats.chi2.ppf(0.99, nu)
    assert sig.gamma_p(x, nu, 2 * nu, "greater") == pytest.approx(0.01)
    assert sig.gamma_p(x, nu, 2 * nu) == pytest.approx(0.02)
    assert np.isnan(sig.gamma_p(1.0, 0.0, 1.0))


# -- block bootstrap and intervals --------------------------------------------------------------
def test_block_ids_and_weights():
    rng = np.random.default_rng(6)
    ids, g = sig.block_ids(10, 256, rng)
    assert g == 10 and ids.tolist() == list(range(10))
    ids, g = sig.block_ids(10_000, 256, rng)
    assert g == 256 and ids.min() >= 0 and ids.max() < 256
    w = sig.block_bootstrap_weights(g, 50, rng)
    assert w.shape == (50, 256) and np.all(w.sum(axis=1) == 256)
    s = rng.random((256, 3))
    jk = sig.jackknife_sums(s)
    np.testing.assert_allclose(jk[0], s[1:].sum(axis=0))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(g=st.integers(1, 300), b=st.integers(1, 60), seed=st.integers(0, 2**32 - 1))
def test_block_weights_are_the_bincount_of_the_same_draws(g, b, seed):
    # the compiled count pass gives the counts of the NumPy formula it replaced, bit for bit, and leaves the
    # generator where the formula left it (the later draws of a diagnosis continue the same stream)
    r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
    picks = r1.integers(0, g, size=(b, g)) + np.arange(b)[:, None] * g
    expected = np.bincount(picks.ravel(), minlength=b * g).reshape(b, g).astype(float)
    got = sig.block_bootstrap_weights(g, b, r2)
    assert got.dtype == np.float64 and got.flags.c_contiguous
    np.testing.assert_array_equal(got, expected)
    assert r1.bit_generator.state == r2.bit_generator.state


def test_block_bootstrap_interval_of_a_mean_covers():
    # 400 data sets of N = 2000 exponential rows: 95% BCa interval of the mean from 200 blocks
    rng = np.random.default_rng(7)
    hits_bca = hits_pct = 0
    reps = 400
    for _ in range(reps):
        x = rng.exponential(size=2000)
        ids, g = sig.block_ids(x.size, 200, rng)
        sums = np.stack([np.bincount(ids, minlength=g), np.bincount(ids, x, minlength=g)], axis=1)
        w = sig.block_bootstrap_weights(g, 400, rng)
        rep = w @ sums
        boot = rep[:, 1] / rep[:, 0]
        jk = sig.jackknife_sums(sums)
        jack = jk[:, 1] / jk[:, 0]
        theta = x.mean()
        lo, hi = sig.bca_interval(theta, boot, jack)
        hits_bca += lo[0] <= 1.0 <= hi[0]
        lo, hi = sig.percentile_interval(boot)
        hits_pct += lo[0] <= 1.0 <= hi[0]
    for hits in (hits_bca, hits_pct):
        assert abs(hits / reps - 0.95) < 3 * np.sqrt(0.05 * 0.95 / reps)


def test_basic_interval_reflects_bias():
    boot = np.linspace(1.0, 2.0, 1001)  # replicates biased upward of θ̂ = 1
    lo, hi = sig.basic_interval(1.0, boot, 0.9)
    assert lo[0] == pytest.approx(2 - 1.95) and hi[0] == pytest.approx(2 - 1.05)


def test_format_p():
    assert sig.format_p(1e-9) == "p < 1e-6"
    assert sig.format_p(0.0123) == "p = 0.012"
    assert sig.format_p(0.5) == "p = 0.50"
    assert sig.format_p(2e-4) == "p = 2.0e-4"
    assert sig.format_p(np.nan) == "no test"


def test_nan_quantiles_equals_numpy_nanquantile_with_and_without_nan():
    """The fast path (no NaN: np.quantile over all columns at once) gives NumPy's nanquantile exactly."""
    from calib_core.base.significance import nan_quantiles

    rng = np.random.default_rng(5)
    for case in range(300):
        x = rng.standard_normal((int(rng.integers(1, 300)), int(rng.integers(1, 16)))) * rng.uniform(0.1, 10)
        if case % 3 == 0:
            x = np.round(x, 1)  # ties
        if case % 4 == 0:
            x[rng.random(x.shape) < 0.1] = np.nan  # NaN: NumPy's own nanquantile
        for q in ([0.025, 0.975], 0.9):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                np.testing.assert_array_equal(nan_quantiles(x, q), np.nanquantile(x, q, axis=0))
