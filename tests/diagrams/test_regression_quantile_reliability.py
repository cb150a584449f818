"""CORP quantile reliability diagram (regression side): the exact isotonic τ-quantile regression
against an independent brute-force min–max formula, the curve and band properties, the consistency band's
pointwise rate for calibrated forecasters (seeded simulation) and its power against a miscalibrated one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.base.regression import Gaussian
from calib_core.data.examples import levi_synthetic
from calib_core.metrics.regression_decomposition import (
    QUANTILE_BAND_COLUMNS,
    QUANTILE_CURVE_COLUMNS,
    isotonic_quantile_regression,
    quantile_reliability,
    quantile_reliability_of,
    quantile_score,
    quantile_score_decomposition,
)


def minmax_isotonic_quantile(x: np.ndarray, y: np.ndarray, tau: float) -> np.ndarray:
    """Brute force, O(n²) blocks: f(x_i) = max_{a ≤ i} min_{b ≥ i} q_τ(y over tie-groups a..b) (the min–max formula
    of isotonic regression, Robertson, Wright & Dykstra 1988, Thm 1.4.4, with the lower τ-quantile
    y_(⌈mτ⌉) of a block of m targets as its Cauchy mean).  Independent of the threshold partitioning."""
    ux = np.unique(x)
    groups = [y[x == v] for v in ux]
    k = len(groups)
    q = np.full((k, k), np.nan)
    for a in range(k):
        for b in range(a, k):
            block = np.sort(np.concatenate(groups[a:b + 1]))
            q[a, b] = block[int(np.ceil(block.size * tau - 1e-12)) - 1]
    fit_groups = np.array([max(min(q[a, b] for b in range(i, k)) for a in range(i + 1)) for i in range(k)])
    return fit_groups[np.searchsorted(ux, x)]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 40), st.sampled_from([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.37]),
       st.booleans(), st.booleans())
def test_isotonic_quantile_regression_matches_the_minmax_formula(seed, n, tau, ties_x, ties_y):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, n).astype(float) if ties_x else rng.normal(size=n)
    y = np.round(rng.normal(size=n) + 0.5 * x, 0 if ties_y else 9)
    ours = isotonic_quantile_regression(x, y, tau)
    oracle = minmax_isotonic_quantile(x, y, tau)
    o = np.argsort(x, kind="stable")
    assert np.all(np.diff(oracle[o]) >= 0)  # the oracle is isotonic
    s_ours, s_oracle = quantile_score(y, ours, tau).mean(), quantile_score(y, oracle, tau).mean()
    assert s_ours == pytest.approx(s_oracle, rel=1e-12, abs=1e-12)  # both optimal (the minimiser need not be unique)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 600), st.sampled_from([0.05, 0.25, 0.5, 0.75, 0.95]),
       st.floats(0.4, 2.5))
def test_curve_and_band_properties(seed, n, tau, factor):
    rng = np.random.default_rng(seed)
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + s * rng.standard_normal(n)
    r = quantile_reliability(y, Gaussian(mu, factor * s), tau=tau, n_resamples=50, seed=seed)
    assert list(r.curve.columns) == QUANTILE_CURVE_COLUMNS and list(r.bands.columns) == QUANTILE_BAND_COLUMNS
    c, b = r.curve, r.bands
    assert np.all(np.diff(c["forecast"]) >= 0) and np.all(np.diff(c["recalibrated"]) >= 0)  # isotonic
    assert set(c["recalibrated"]) <= set(y)
    assert b["count"].sum() == n and np.all(np.diff(b["forecast"]) > 0)
    lo, hi = b["consistency_low"].to_numpy(), b["consistency_high"].to_numpy()
    assert np.all(lo <= hi) and np.all(np.diff(lo) >= 0) and np.all(np.diff(hi) >= 0)  # monotone bands
    d = r.decomposition
    assert d["score"] == pytest.approx(d["mcb"] - d["dsc"] + d["unc"], abs=1e-12)
    assert d["mcb"] >= -1e-12 and d["dsc"] >= -1e-12
    ref = quantile_score_decomposition(y, Gaussian(mu, factor * s), levels=[tau], n_boot=0).iloc[0]
    assert d["mcb"] == pytest.approx(ref["mcb"], abs=1e-12) and d["dsc"] == pytest.approx(ref["dsc"], abs=1e-12)


def _inside_rate(n: int, tau: float, seed: int, scale: float = 1.0) -> float:
    rng = np.random.default_rng(seed)
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + s * rng.standard_normal(n)
    d = Gaussian(mu, scale * s)
    r = quantile_reliability(y, d, tau=tau, n_resamples=200, seed=seed)
    x = d.ppf(tau)
    o = np.argsort(x, kind="stable")
    f = isotonic_quantile_regression(x, y, tau)[o]
    cnt = r.bands["count"].to_numpy().astype(int)
    mid = f[np.r_[0, np.cumsum(cnt)[:-1]] + cnt // 2]  # the CORP curve at each group's middle row
    return float(np.mean((mid >= r.bands["consistency_low"]) & (mid <= r.bands["consistency_high"])))


def _check_rate(n: int, tau: float, n_sets: int) -> None:
    """Calibrated Gaussian forecasts (y drawn from them): the CORP curve lies inside the pointwise 90% band at about
    90% of the groups (mean over ``n_sets`` data sets, the spread between data sets as its standard error; the
    band's grid cells make it err wide by at most one cell, hence the asymmetric tolerance)."""
    rates = np.array([_inside_rate(n, tau, seed) for seed in range(n_sets)])
    se = rates.std(ddof=1) / np.sqrt(rates.size)
    assert 0.9 - 3 * se - 0.01 <= rates.mean() <= 0.9 + 3 * se + 0.04, (rates.mean(), se)


def test_calibrated_forecasts_stay_inside_the_band_at_its_level():
    _check_rate(1000, 0.9, 6)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "tau"), [(300, 0.5), (1500, 0.1), (1500, 0.5), (1500, 0.95), (20_000, 0.25)])
def test_calibrated_forecasts_stay_inside_the_band_slow(n, tau):
    _check_rate(n, tau, 20)


def test_over_confident_quantiles_leave_the_band():
    """σ shrunk to 0.6 of the truth: the predicted 5% and 95% quantiles are too central, and the CORP curve leaves
    the band at most groups."""
    assert _inside_rate(3000, 0.95, 7, scale=0.6) < 0.3
    assert _inside_rate(3000, 0.05, 8, scale=0.6) < 0.3


def test_per_model_and_guards():
    pset = levi_synthetic(n=600, seed=3)
    out = quantile_reliability_of(pset, tau=0.75, n_resamples=20)
    assert set(out) == set(pset.models()) and all(r.tau == 0.75 for r in out.values())
    point = cc.PredictionSet(task="regression", y=np.arange(5.0), point=np.arange(5.0) + 0.5)
    assert quantile_reliability_of(point, tau=0.5) == {}
    with pytest.raises(ValueError, match="τ"):
        quantile_reliability(np.arange(4.0), Gaussian(np.zeros(4), np.ones(4)), tau=1.0)
    with pytest.raises(ValueError, match="at least 2 rows"):
        quantile_reliability(np.arange(1.0), Gaussian(np.zeros(1), np.ones(1)))
