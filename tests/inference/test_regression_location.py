"""calib_core.inference.regression_location: below_median's exact binomial test against ½ (ties bracketed) and its
Clopper–Pearson interval, tested as statistics (targets drawn from the true law)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from calib_core.base.regression import Gaussian, QuantileSet, SampleSet, norm_ppf
from calib_core.inference.regression import infer_regression
from calib_core.inference.regression_location import below_median_test
from calib_core.metrics.regression import RegressionRows
from calib_core.metrics.regression_location import median_counts

TAU9 = np.arange(1, 10) / 10


def ceiling(rate: float, reps: int) -> float:
    return rate + 2.0 * np.sqrt(rate * (1 - rate) / reps)


def test_without_ties_it_is_scipys_exact_binomial_test_and_the_interval_inverts_it():
    for k, n in ((0, 10), (3, 10), (50, 100), (60, 100), (4_870, 10_000), (5_200, 10_000)):
        p, lo, hi = below_median_test(k, k, n, 0.95)
        assert p == pytest.approx(stats.binomtest(k, n, 0.5).pvalue, rel=1e-9)
        ci = stats.binomtest(k, n, 0.5).proportion_ci(0.95, method="exact")
        assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-9)
        assert (p < 0.05) == (not lo <= 0.5 <= hi)  # the interval is the test inverted


def test_ties_are_bracketed_conservatively():
    # all 100 targets tied with the median: L = 0, U = 100 is consistent with ½ (no evidence either way)
    p, lo, hi = below_median_test(0, 100, 100)
    assert p == 1.0 and lo == 0.0 and hi == 1.0
    p_hi, _, _ = below_median_test(70, 80, 100)  # 70 strictly below: too many whatever the ties
    assert p_hi < 1e-4


def _integer_quantile_set(n: int, rng: np.random.Generator, f: float = 1.0):
    """Poisson(λ) counts with their exact (integer) quantiles stated: many ties y = q_½."""
    lam = rng.uniform(0.5, 4.0, n)
    y = rng.poisson(lam).astype(float)
    q = stats.poisson.ppf(TAU9[None, :], lam[:, None])
    med = q[:, 4:5]
    q = np.maximum.accumulate(med + f * (q - med), axis=1)  # spread scaled about the stated median
    return y, QuantileSet(TAU9, q)


def test_false_alarms_at_most_alpha_when_sigma_is_wrong_and_with_ties():
    rng = np.random.default_rng(7)
    reps, n = 150, 400
    cases = {
        "gaussian, σ too small in half the rows": lambda: _gauss(n, rng, np.where(rng.random(n) < 0.5, 1 / 1.5, 1)),
        "gaussian, σ × 1.3": lambda: _gauss(n, rng, 1.3),
        "integer quantiles (ties)": lambda: _integer_quantile_set(n, rng, 0.7),
        "ensemble, σ × 0.7": lambda: _ensemble(n, rng, 0.7, rain=False),
        "calibrated ensemble, rain zeros (ties)": lambda: _ensemble(n, rng, 1.0, rain=True),
        "ensemble, rain zeros, σ × 0.7": lambda: _ensemble(n, rng, 0.7, rain=True),
        "ensemble of 11, rain zeros, σ × 1.4": lambda: _ensemble(n, rng, 1.4, rain=True, members=11),
    }
    for name, make in cases.items():
        alarms = 0
        for _ in range(reps):
            y, d = make()
            lo, hi, m = median_counts(RegressionRows(y, d, pit_seed=int(rng.integers(2**31))))
            alarms += below_median_test(int(lo), int(hi), int(m))[0] <= 0.05
        assert alarms / reps <= ceiling(0.05, reps), (name, alarms)


def _gauss(n, rng, f):
    mu, s = rng.normal(size=n), np.exp(0.3 * rng.normal(size=n))
    return mu + s * rng.normal(size=n), Gaussian(mu, s * f)


def _ensemble(n, rng, f, rain, members=10):
    """Members mu + f·N(0, 1); with ``rain`` target and members censored at 0 (exchangeable only when f = 1; the
    middle members commute with the censoring, so the bracketed counts stay valid with a wrong spread)."""
    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    x = mu[:, None] + f * rng.normal(size=(n, members))
    return (np.maximum(y, 0.0), SampleSet(np.maximum(x, 0.0))) if rain else (y, SampleSet(x))


def test_in_the_inference_table_with_its_interval_and_reference():
    rng = np.random.default_rng(8)
    n = 3000
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2, n)
    y = mu + s * rng.normal(size=n)
    for d in (Gaussian(mu + 0.15 * s, s), QuantileSet(TAU9, (mu + 0.15 * s)[:, None] + s[:, None] * norm_ppf(TAU9))):
        row = infer_regression(y, d, n_boot=50, n_null=200).table.loc["below_median"]
        assert row["perfect"] == 0.5 and row["ci_low"] <= row["value"] <= row["ci_high"]
        assert row["value"] > 0.5 and row["p_value"] < 1e-6  # forecasts too high: more targets below them
        assert row["ci_low"] > 0.5
    d = QuantileSet(np.array([0.1, 0.9]), mu[:, None] + s[:, None] * norm_ppf(np.array([0.1, 0.9])))
    row = infer_regression(y, d, n_boot=50, n_null=200).table.loc["below_median"]
    assert np.isnan(row["p_value"]) and "τ = ½" in row["note"]
