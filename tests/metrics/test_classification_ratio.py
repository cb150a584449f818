"""Calibration ratio Σp/Σy and TCE: definitions against brute force, invariances (hypothesis),
the ratio's interval coverage and TCE's test by seeded simulation with binomial tolerance, and the wiring into the
diagnosis, the registry and the Classification page."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import calib_core as cc
from calib_core.base.significance import binomial_test
from calib_core.calibrators import registry as reg
from calib_core.metrics import classification_ratio as cr
from calib_core.metrics.classification import confidence_bins


def binomial_bound(rate, n_sets, sigmas=2.0):
    return rate + sigmas * math.sqrt(rate * (1 - rate) / n_sets)


# ------------------------------------------------------------------------------------------------ ratio
def test_ratio_known_answers_and_targets():
    probs = np.array([0.9, 0.8, 0.3, 0.6])
    labels = np.array([1, 0, 0, 1])
    # positive class: Σp / #positives
    assert cr.calibration_ratio(labels, probs, target="positive") == pytest.approx(2.6 / 2)
    # top label: confidences 0.9, 0.8, 0.7, 0.6; correct: 1, 0, 1, 1
    assert cr.calibration_ratio(labels, probs) == pytest.approx(3.0 / 3)
    assert cr.ratio_of(np.array([0.2, 0.3]), np.zeros(2)) == math.inf
    w = np.array([2.0, 1.0, 1.0, 1.0])
    rep = np.array([0, 0, 1, 2, 3])
    assert cr.calibration_ratio(labels, probs, target="positive", weights=w) == pytest.approx(
        cr.calibration_ratio(labels[rep], probs[rep], target="positive"))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.01, 0.99), min_size=3, max_size=80), st.integers(0, 2**32 - 1))
def test_ratio_interval_contains_the_estimate_and_scales(fs, seed):
    f = np.array(fs)
    y = (np.random.default_rng(seed).random(f.size) < 0.5).astype(float)
    if y.sum() == 0:
        y[0] = 1.0
    r = cr.ratio_of(f, y)
    lo, hi = cr.ratio_interval(f, y)
    assert lo <= r <= hi
    lo99, hi99 = cr.ratio_interval(f, y, level=0.99)
    assert lo99 <= lo and hi <= hi99  # nested levels
    # the log-scale interval is equivariant: scaling f scales R and its interval
    lo2, hi2 = cr.ratio_interval(0.5 * f, y)
    assert lo2 == pytest.approx(0.5 * lo) and hi2 == pytest.approx(0.5 * hi)


@pytest.mark.parametrize("kind, n, n_sets", [("balanced", 300, 400), ("ads", 5000, 300)])
def test_ratio_interval_coverage(kind, n, n_sets):
    """Coverage of the population ratio E f / E y (computed from the law) by the 95 % delta-method interval."""
    rng = np.random.default_rng(17 if kind == "balanced" else 18)
    if kind == "balanced":  # f ~ Beta(2, 3), P(y = 1 | f) = min(1, 1.2 f): over-predicts less than it misses
        a, b, scale = 2.0, 3.0, 1.2
    else:  # ads-like: f ~ Beta(1, 49) (mean 2 %), truth 0.8 f (the model over-predicts by 25 %)
        a, b, scale = 1.0, 49.0, 0.8
    grid = np.linspace(0, 1, 200001)
    dens = stats.beta.pdf(grid, a, b)
    ef = np.trapezoid(grid * dens, grid)
    ey = np.trapezoid(np.minimum(1.0, scale * grid) * dens, grid)
    truth = ef / ey
    covered = []
    for _ in range(n_sets):
        f = rng.beta(a, b, n)
        y = (rng.random(n) < np.minimum(1.0, scale * f)).astype(float)
        lo, hi = cr.ratio_interval(f, y)
        covered.append(lo <= truth <= hi)
    rate = float(np.mean(covered))
    print(f"{kind}: truth {truth:.4f}, coverage {rate:.3f} over {n_sets} sets of {n}")
    assert rate >= 0.95 - 2 * math.sqrt(0.95 * 0.05 / n_sets)
    assert rate <= 0.95 + 2 * math.sqrt(0.95 * 0.05 / n_sets) + 0.01  # not needlessly wide


# ------------------------------------------------------------------------------------------------ TCE
def brute_tce(f, y, n_bins=10, alpha=0.05):
    idx, _ = confidence_bins(f, n_bins, "quantile")
    rejected = 0
    for b in range(n_bins):  # the definition, row by row
        rows = np.nonzero(idx == b)[0]
        k, n = int(y[rows].sum()), rows.size
        for i in rows:
            rejected += binomial_test(k, n, float(f[i])) <= alpha
    return 100.0 * rejected / f.size


@pytest.mark.parametrize("seed, n", [(0, 60), (1, 250), (2, 400)])
def test_tce_is_the_share_of_rows_rejected_by_their_bin(seed, n):
    rng = np.random.default_rng(seed)
    f = rng.beta(2, 5, n)
    y = (rng.random(n) < np.clip(1.3 * f, 0, 1)).astype(float)
    assert cr.tce_of(f, y) == pytest.approx(brute_tce(f, y), abs=1e-9)


def test_minlike_convention_matches_scipy_binomtest_row_by_row():
    rng = np.random.default_rng(3)
    f = rng.beta(2, 5, 200)
    y = (rng.random(200) < f).astype(float)
    idx, _ = confidence_bins(f, 10, "quantile")
    rejected = sum(
        stats.binomtest(int(y[idx == b].sum()), int((idx == b).sum()), float(p)).pvalue <= 0.05
        for b in range(10) for p in f[idx == b]
    )
    assert cr.tce_of(f, y, test="minlike") == pytest.approx(100.0 * rejected / 200)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=12, max_size=120), st.integers(0, 2**32 - 1))
def test_tce_bounds_and_permutation(fs, seed):
    f = np.array(fs)
    rng = np.random.default_rng(seed)
    y = (rng.random(f.size) < f).astype(float)
    v = cr.tce_of(f, y)
    assert 0.0 <= v <= 100.0
    perm = rng.permutation(f.size)
    assert cr.tce_of(f[perm], y[perm]) == pytest.approx(v)


def test_tce_test_false_alarms_and_power():
    rng = np.random.default_rng(5)
    p_null = []
    for i in range(100):
        n = 400 if i % 2 else 3000  # exact draws at 400, per-bin normal / binomial draws at 3,000
        f = rng.beta(2, 5, n)
        y = (rng.random(n) < f).astype(float)
        obs, null, _ = cr.tce_null(f, y, n_draws=300, exact_budget=200_000, rng=rng)
        p_null.append((1 + np.sum(null >= obs - 1e-9)) / (1 + null.size))
    p_null = np.array(p_null)
    print(f"TCE: share p ≤ 0.05 = {np.mean(p_null <= 0.05):.3f}, ≤ 0.2 = {np.mean(p_null <= 0.2):.3f}")
    assert np.mean(p_null <= 0.05) <= binomial_bound(0.05, p_null.size)
    assert np.mean(p_null <= 0.2) <= binomial_bound(0.2, p_null.size)
    hits = []
    for _ in range(10):
        f = rng.beta(2, 5, 3000)
        y = (rng.random(3000) < np.clip(1.3 * f, 0, 1)).astype(float)
        obs, null, _ = cr.tce_null(f, y, n_draws=300, rng=rng)
        hits.append((1 + np.sum(null >= obs)) / (1 + null.size) <= 0.05)
    assert np.mean(hits) >= 0.9


# ------------------------------------------------------------------------------------------------ wiring
def test_diagnosis_reports_ratio_and_tce_with_tests():
    rng = np.random.default_rng(8)
    n = 2000
    p = rng.beta(2, 5, n)
    y = (rng.random(n) < np.clip(0.7 * p, 0, 1)).astype(int)  # over-predicts the positive class by ~40 %
    pset = cc.PredictionSet(task="classification", labels=y, probs=np.column_stack([1 - p, p]))
    rep = cc.diagnose(pset, n_resamples=200, n_simulations=1000)
    t = rep.metrics.set_index("metric")
    for key in ("calibration_ratio", "calibration_ratio_positive", "tce", "tce_positive"):
        assert t.loc[key, "kind"] == reg.CALIBRATION and np.isfinite(t.loc[key, "p_value"]), key
        assert t.loc[key, "family"] == "secondary"
        assert reg.metric(key, "classification")(y, pset.probs) == pytest.approx(t.loc[key, "value"], rel=1e-9)
    r = t.loc["calibration_ratio_positive"]
    assert r["value"] == pytest.approx(p.sum() / y.sum())
    assert 1.2 < r["ci_low"] < r["value"] < r["ci_high"] and r["p_value"] < 1e-3
    assert np.isnan(t.loc["tce", "ci_low"]) and "no interval" in t.loc["tce", "note"]
    off = cc.diagnose(pset, n_resamples=0, n_simulations=0, tce=False).metrics
    assert "tce" not in set(off["metric"]) and "calibration_ratio" in set(off["metric"])
