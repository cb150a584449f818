"""CORP for regression quantiles (regression side): the exact isotonic τ-quantile regression
(against a linear-programming brute force), the decomposition QS = MCB − DSC + UNC (exact identity, MCB, DSC ≥ 0,
hypothesis), its behaviour for calibrated and miscalibrated forecasters (seeded simulations), and the quantile and
interval scores against scoringrules (point 8)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import calib_core as cc
from calib_core.base.regression import Gaussian, QuantileSet, norm_ppf
from calib_core.data.examples import levi_synthetic
from calib_core.metrics import regression as rm
from calib_core.metrics.regression_decomposition import (
    isotonic_quantile_regression,
    quantile_decomposition_table,
    quantile_score,
    quantile_score_decomposition,
)
from tests.peers import require_peer


def lp_isotonic_quantile_loss(x: np.ndarray, y: np.ndarray, tau: float) -> float:
    """min over non-decreasing f(x) of mean QS_τ(f, y), by linear programming (f, u⁺, u⁻; y − f = u⁺ − u⁻)."""
    n = x.size
    o = np.argsort(x, kind="stable")
    c = np.concatenate([np.zeros(n), tau * np.ones(n), (1 - tau) * np.ones(n)])
    a_eq = np.hstack([np.eye(n), np.eye(n), -np.eye(n)])
    a_ub = []
    for k in range(n - 1):
        i, j = o[k], o[k + 1]
        row = np.zeros(3 * n)
        row[i], row[j] = 1.0, -1.0
        a_ub.append(row)
        if x[i] == x[j]:
            a_ub.append(-row)
    kw = {"A_ub": np.array(a_ub), "b_ub": np.zeros(len(a_ub))} if a_ub else {}
    res = linprog(c, A_eq=a_eq, b_eq=y, bounds=[(None, None)] * n + [(0, None)] * (2 * n), method="highs", **kw)
    assert res.status == 0
    return res.fun / n


@pytest.mark.parametrize("case", range(120))
def test_isotonic_quantile_regression_is_optimal(case):
    rng = np.random.default_rng(case)
    n = int(rng.integers(1, 30))
    x = rng.integers(0, 5, n).astype(float) if case % 2 else rng.normal(size=n)  # ties in x every other case
    y = np.round(rng.normal(size=n) + 0.7 * x, 1 if case % 3 == 0 else 8)  # ties in y every third case
    tau = float(rng.uniform(0.02, 0.98))
    f = isotonic_quantile_regression(x, y, tau)
    o = np.argsort(x, kind="stable")
    assert np.all(np.diff(f[o]) >= 0)  # non-decreasing in x
    for v in np.unique(x):
        assert np.ptp(f[x == v]) == 0  # a function of x
    assert set(f) <= set(y)
    assert quantile_score(y, f, tau).mean() <= lp_isotonic_quantile_loss(x, y, tau) + 1e-10


def test_isotonic_quantile_regression_edges():
    assert isotonic_quantile_regression(np.array([3.0]), np.array([7.0]), 0.3).tolist() == [7.0]
    # increasing data are their own fit; decreasing data pool to one τ-quantile
    x = np.arange(6.0)
    np.testing.assert_array_equal(isotonic_quantile_regression(x, x * 2, 0.5), x * 2)
    f = isotonic_quantile_regression(x, -x, 0.5)
    assert np.ptp(f) == 0
    with pytest.raises(ValueError, match="τ"):
        isotonic_quantile_regression(x, x, 1.0)
    with pytest.raises(ValueError, match="same length"):
        isotonic_quantile_regression(x, x[:3], 0.5)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 400), st.floats(0.02, 0.98), st.floats(0.3, 3.0))
def test_decomposition_identity_and_signs(seed, n, tau, factor):
    rng = np.random.default_rng(seed)
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + s * rng.standard_normal(n)
    t = quantile_score_decomposition(y, Gaussian(mu, factor * s), levels=(tau,), n_boot=0).iloc[0]
    assert t["score"] == pytest.approx(t["mcb"] - t["dsc"] + t["unc"], rel=1e-12, abs=1e-14)
    assert t["mcb"] >= -1e-12 and t["dsc"] >= -1e-12
    # the recalibration depends on the order of the forecast only: a strictly increasing map of x changes nothing
    x = np.asarray(Gaussian(mu, factor * s).ppf(tau))
    np.testing.assert_array_equal(isotonic_quantile_regression(x, y, tau),
                                  isotonic_quantile_regression(np.exp(x / 4.0) * 3.0 + 1.0, y, tau))


def test_calibrated_forecasts_have_small_mcb_and_over_confident_ones_large():
    rng = np.random.default_rng(1)
    n = 20_000
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + s * rng.standard_normal(n)
    good = quantile_score_decomposition(y, Gaussian(mu, s), n_boot=200)
    bad = quantile_score_decomposition(y, Gaussian(mu, 0.5 * s), n_boot=200)
    assert (good["mcb_share"] < 0.02).all(), good  # PAV's overfit alone: measured 0.5–1.1% at N = 20,000
    tails = bad[bad["tau"].isin([0.05, 0.95])]
    assert (tails["mcb_share"] > 0.1).all() and (tails["mcb_low"] > good["mcb_high"].max()).all()
    # the median forecast is the mean: shrinking σ does not move it, so MCB stays small there
    assert bad.loc[bad["tau"] == 0.5, "mcb_share"].iloc[0] < 0.01
    for t in (good, bad):  # every interval holds its value
        for k in ("score", "mcb", "dsc", "unc"):
            assert (t[f"{k}_low"] <= t[k] + 1e-12).all() and (t[k] <= t[f"{k}_high"] + 1e-12).all()


def test_mcb_of_calibrated_forecasts_shrinks_with_n():
    rng = np.random.default_rng(2)
    shares = []
    for n in (500, 5_000, 50_000):
        vals = []
        for _ in range(6):
            mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
            y = mu + s * rng.standard_normal(n)
            vals.append(quantile_score_decomposition(y, Gaussian(mu, s), levels=(0.9,), n_boot=0)["mcb"].iloc[0])
        shares.append(np.mean(vals))
    assert shares[0] > shares[1] > shares[2]


def test_table_per_model():
    pset = levi_synthetic(n=1500)
    t = quantile_decomposition_table(pset, n_boot=100)
    assert set(t["model"]) == {"true sigma", "random sigma"}
    assert len(t) == 10
    rnd = t[t["model"] == "random sigma"].set_index("tau")
    tru = t[t["model"] == "true sigma"].set_index("tau")
    assert (rnd.loc[[0.05, 0.95], "mcb"] > tru.loc[[0.05, 0.95], "mcb"]).all()
    point = cc.PredictionSet(task="regression", y=np.arange(5.0), point=np.arange(5.0) + 0.5)
    assert quantile_decomposition_table(point).empty


# ------------------------------------------------------------------------------------- scoringrules (point 8)
def test_quantile_and_interval_scores_against_scoringrules():
    sr = require_peer("scoringrules")
    rng = np.random.default_rng(3)
    n = 5000
    mu, s = rng.normal(size=n) * 3, rng.uniform(0.1, 4.0, n)
    y = mu + 1.3 * s * rng.standard_t(4, n)
    d = Gaussian(mu, s)
    for tau in (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99):
        q = np.asarray(d.ppf(tau))
        np.testing.assert_allclose(quantile_score(y, q, tau), np.asarray(sr.quantile_score(y, q, tau)), rtol=1e-9,
                                   atol=0)
        t = quantile_score_decomposition(y, d, levels=(tau,), n_boot=0).iloc[0]
        assert t["score"] == pytest.approx(float(np.mean(sr.quantile_score(y, q, tau))), rel=1e-9)
    # the interval score of the metric table is (2/α)(QS_{α/2} + QS_{1−α/2}) and scoringrules' interval score
    for c in (0.5, 0.9):
        a = 1 - c
        lo, hi = np.asarray(d.ppf(a / 2)), np.asarray(d.ppf(1 - a / 2))
        ours = rm.interval_table(y, d, coverages=[c])["interval_score"].iloc[0]
        assert ours == pytest.approx(float(np.mean(sr.interval_score(y, lo, hi, a))), rel=1e-9)
        assert ours == pytest.approx(float(np.mean((2 / a) * (quantile_score(y, lo, a / 2)
                                                               + quantile_score(y, hi, 1 - a / 2)))), rel=1e-9)
    # a quantile set's given levels: the forecast quantiles are the given values
    tau9 = np.arange(1, 10) / 10
    qs = QuantileSet(tau9, mu[:, None] + s[:, None] * norm_ppf(tau9)[None, :])
    t = quantile_score_decomposition(y, qs, levels=(0.1, 0.9), n_boot=0)
    for j, tau in ((0, 0.1), (8, 0.9)):
        ref = float(np.mean(sr.quantile_score(y, qs.values[:, j], tau)))
        assert t.loc[t["tau"] == tau, "score"].iloc[0] == pytest.approx(ref, rel=1e-9)


# ------------------------------------------------------------------------------ the grid fit
@pytest.mark.parametrize("case", range(200))
def test_grid_fit_is_the_exact_fit_rounded_up_to_the_grid_within_its_bound(case):
    """Above EXACT_ROWS the decomposition fits on a grid: the fit must be ⌈exact fit⌉ on the grid (ties in x and y,
    grids of targets and of other values) and its mean score exceed the exact one by at most the stated bound."""
    from calib_core.metrics.regression_decomposition import grid_isotonic_quantile_regression, quantile_grid

    rng = np.random.default_rng(1000 + case)
    n = int(rng.integers(2, 300))
    x = rng.integers(0, 6, n).astype(float) if case % 2 else rng.normal(size=n)
    y = np.round(rng.normal(size=n) + rng.uniform(-1, 2) * x, 1 if case % 3 == 0 else 8)
    tau = float(rng.uniform(0.02, 0.98))
    size = int(rng.integers(1, 40))
    grid = quantile_grid(np.sort(y), size)
    if case % 4 == 0:  # values that are not targets (the forecasts' order statistics), within [min y, max y]
        grid = np.unique(np.r_[grid, np.clip(quantile_grid(np.sort(x), size), y.min(), y.max())])
    exact = isotonic_quantile_regression(x, y, tau)
    fit, bound = grid_isotonic_quantile_regression(x, y, tau, grid)
    np.testing.assert_array_equal(fit, grid[np.searchsorted(grid, exact, side="left")])
    excess = quantile_score(y, fit, tau).mean() - quantile_score(y, exact, tau).mean()
    assert -1e-12 <= excess <= bound + 1e-12
    if grid.size == np.unique(y).size:  # every target on the grid: the exact fit, no error
        np.testing.assert_array_equal(fit, exact)
        assert bound == 0.0


def test_grid_fit_refuses_a_grid_without_the_targets_range():
    from calib_core.metrics.regression_decomposition import grid_isotonic_quantile_regression

    x, y = np.arange(5.0), np.array([0.0, 2.0, 1.0, 4.0, 3.0])
    with pytest.raises(ValueError, match="smallest and the largest target"):
        grid_isotonic_quantile_regression(x, y, 0.5, np.array([1.0, 4.0]))


@pytest.mark.parametrize("factor", [1.0, 0.6])
def test_decomposition_on_the_grid_brackets_the_exact_one(factor):
    """The same data decomposed exactly and on the grid (EXACT_ROWS lowered): QS and UNC equal, the exact MCB and DSC
    within [grid value, grid value + fit_bound], and the bound small against the score."""
    rng = np.random.default_rng(7)
    n = 40_000
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + s * rng.standard_normal(n)
    dist = Gaussian(mu, factor * s)
    exact = quantile_score_decomposition(y, dist, n_boot=0)
    grid = quantile_score_decomposition(y, dist, n_boot=0, exact_rows=1_000)
    assert (exact["fit_bound"] == 0).all() and (grid["fit_bound"] > 0).all()
    np.testing.assert_allclose(grid["score"], exact["score"], rtol=1e-12)
    np.testing.assert_allclose(grid["unc"], exact["unc"], rtol=1e-12)
    for term in ("mcb", "dsc"):
        assert (exact[term] >= grid[term] - 1e-12).all(), term
        assert (exact[term] <= grid[term] + grid["fit_bound"] + 1e-12).all(), term
    assert (grid["fit_bound"] < 0.01 * grid["score"]).all()


@pytest.mark.parametrize("case", range(60))
def test_integer_comparisons_at_ratio_levels_give_an_exact_fit(case):
    """At levels τ = p/q (every default level) the grid recursion compares q·count − p·s in integers.  With every
    target on the grid its fit is an exact fit: non-decreasing, a function of x, values among the targets, and the
    same mean score as the floating-point exact fit (ties in x and y, up to 64 and more segments per pass)."""
    from calib_core.metrics.regression_decomposition import grid_isotonic_quantile_regression

    rng = np.random.default_rng(5000 + case)
    n = int(rng.integers(2, 40)) if case % 3 else int(rng.integers(500, 3000))
    x = rng.integers(0, 8, n).astype(float) if case % 2 else rng.normal(size=n)
    y = np.round(rng.normal(size=n) + rng.uniform(-1, 2) * x, 1 if case % 4 == 0 else 8)
    tau = [0.05, 0.25, 0.5, 0.75, 0.95, 0.1, 1 / 3, 0.9][case % 8]
    exact = isotonic_quantile_regression(x, y, tau)
    fit, bound = grid_isotonic_quantile_regression(x, y, tau, np.unique(y))
    assert bound == 0.0
    o = np.argsort(x, kind="stable")
    assert np.all(np.diff(fit[o]) >= 0)
    for v in np.unique(x):
        assert np.ptp(fit[x == v]) == 0
    assert set(fit) <= set(y)
    assert quantile_score(y, fit, tau).mean() == pytest.approx(quantile_score(y, exact, tau).mean(), rel=1e-12,
                                                               abs=1e-15)


def test_levels_whose_forecasts_share_an_order_share_one_sort():
    """Levels of a constant-scale forecast are increasing functions of one another: one sort serves all of them
    (the same order array), and it sorts each level's forecasts; varying scales get a stable argsort each; a level
    that agrees with another on the sampled rows but not on all rows gets its own sort."""
    from calib_core.metrics.regression_isotonic_quantile import _ORDER_SAMPLE, level_orders

    rng = np.random.default_rng(3)
    n = 20_000
    mu = rng.normal(size=n)
    levels = (0.05, 0.5, 0.95)
    shared = [np.asarray(Gaussian(mu, np.full(n, 1.5)).ppf(t)) for t in levels]
    sorts, y_sort = level_orders(shared)
    assert y_sort is None
    assert all(s.order is sorts[0].order for s in sorts)
    for f, s in zip(shared, sorts):
        assert np.all(np.diff(f[s.order]) >= 0) and s.distinct
    tied = [np.asarray(Gaussian(np.round(mu, 1), np.full(n, 1.5)).ppf(t)) for t in levels]  # ties: one sort still
    sorts, _ = level_orders(tied)
    assert all(s.order is sorts[0].order for s in sorts) and not any(s.distinct for s in sorts)
    for f, s in zip(tied, sorts):
        assert np.all(np.diff(f[s.order]) >= 0)
    varying = [np.asarray(Gaussian(mu, rng.uniform(0.5, 2.0, n)).ppf(t)) for t in levels]
    y = rng.normal(size=n)
    sorts, y_sort = level_orders(varying, y)
    for f, s in zip(varying, sorts):
        np.testing.assert_array_equal(s.order, np.argsort(f, kind="stable"))
    np.testing.assert_array_equal(y_sort.order, np.argsort(y, kind="stable"))
    np.testing.assert_array_equal(y_sort.sorted_values, np.sort(y))
    # the sampled rows (evenly spaced) in one order, two rows between them swapped
    base = np.arange(n, dtype=float)
    sampled = set(np.linspace(0, n - 1, min(n, _ORDER_SAMPLE)).astype(np.int64).tolist())
    a = next(i for i in range(1, n - 1) if i not in sampled and i + 1 not in sampled)
    other = base.copy()
    other[[a, a + 1]] = other[[a + 1, a]]
    sorts, _ = level_orders([base, other])
    np.testing.assert_array_equal(sorts[1].order, np.argsort(other, kind="stable"))


@pytest.mark.parametrize("kind", ["constant scale", "ties", "constant forecasts"])
def test_decomposition_on_the_grid_brackets_the_exact_one_for_shared_orders_ties_and_constants(kind):
    """The grid decomposition's new paths (levels sharing one sort, tied forecasts and targets, one forecast for every
    row): QS and UNC equal to the exact decomposition's, the exact MCB and DSC within [grid, grid + fit_bound]."""
    rng = np.random.default_rng(11)
    n = 30_000
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + s * rng.standard_normal(n)
    if kind == "constant scale":
        dist = Gaussian(mu, np.full(n, 1.4))
    elif kind == "ties":
        dist, y = Gaussian(np.round(mu, 1), np.round(s, 1)), np.round(y, 1)
    else:
        dist = Gaussian(np.zeros(n), np.ones(n))
    exact = quantile_score_decomposition(y, dist, n_boot=0)
    grid = quantile_score_decomposition(y, dist, n_boot=0, exact_rows=1_000)
    np.testing.assert_allclose(grid["score"], exact["score"], rtol=1e-12)
    np.testing.assert_allclose(grid["unc"], exact["unc"], rtol=1e-12)
    for term in ("mcb", "dsc"):
        assert (exact[term] >= grid[term] - 1e-12).all(), term
        assert (exact[term] <= grid[term] + grid["fit_bound"] + 1e-12).all(), term
    assert (grid["fit_bound"] < 0.01 * grid["score"]).all()
    if kind == "constant forecasts":  # nothing to discriminate: DSC 0 exactly, and within the bound on the grid
        assert (exact["dsc"].abs() < 1e-12).all()
