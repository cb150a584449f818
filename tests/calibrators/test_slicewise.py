"""Slice-wise (group-conditional) calibrators: std scaling per slice, Mondrian split conformal,
temperature scaling per slice.

Properties: a slice's transform depends only on its own calibration rows; with one slice each equals its global
calibrator; slices unseen at fit time or with too few calibration rows get the global fit and a note counting those
rows; Mondrian conformal covers every slice with probability ≥ 1 − α (seeded simulation, tolerance from the
simulated spread); ``cc.evaluate`` passes the slices and the per-slice comparison moves every slice.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import calib_core as cc
from calib_core.base.groupwise import SliceFit, slice_columns, slice_labels
from calib_core.base.regression_recalibrated import SlicedDistribution
from calib_core.calibrators import registry
from calib_core.calibrators.classification import GroupTemperatureScaling, TemperatureScaling
from calib_core.calibrators.regression import (
    GroupStdScaling,
    MondrianConformal,
    SplitConformal,
    StdScaling,
    conformal_bounds,
)

SCALES = {"a": 2.0, "b": 0.5, "c": 1.0}


def _regression(n: int = 3000, seed: int = 0, probs=(0.45, 0.45, 0.10)):
    """Gaussian predictions with σ = 1 whose true noise scale depends on the slice (SCALES)."""
    rng = np.random.default_rng(seed)
    g = rng.choice(list(SCALES), n, p=list(probs))
    mu = rng.normal(size=n) * 3
    sigma = rng.uniform(0.5, 1.5, n)
    true = np.array([SCALES[v] for v in g])
    y = mu + sigma * true * rng.standard_normal(n)
    return cc.Gaussian(mu, sigma), y, g


def _classification(n: int = 6000, seed: int = 0):
    """Logits whose true temperature depends on the slice: labels ~ softmax(z / T_g)."""
    rng = np.random.default_rng(seed)
    temps = {"a": 0.5, "b": 2.0, "c": 1.0}
    g = rng.choice(list(temps), n, p=[0.4, 0.4, 0.2])
    z = rng.normal(size=(n, 4)) * 2.5
    t = np.array([temps[v] for v in g])
    p = np.exp(z / t[:, None])
    p /= p.sum(axis=1, keepdims=True)
    u = rng.random(n)
    labels = np.minimum((np.cumsum(p, axis=1) < u[:, None]).sum(axis=1), 3)
    return z, labels, g, temps


# ---------------------------------------------------------------------------------------------------------------
# a slice depends only on its own calibration rows
# ---------------------------------------------------------------------------------------------------------------
def _perturbed(dist, y, g, seed=5):
    """The same rows, but the targets of every row outside slice 'a' redrawn at 3× the scale and 500 extra rows of
    slice 'b' appended."""
    rng = np.random.default_rng(seed)
    y2 = y.copy()
    out = g != "a"
    y2[out] = dist.mean()[out] + 3.0 * rng.standard_normal(out.sum())
    extra = 500
    mu = np.concatenate([dist.mean(), rng.normal(size=extra)])
    sd = np.concatenate([dist.std(), np.ones(extra)])
    return cc.Gaussian(mu, sd), np.concatenate([y2, rng.normal(size=extra) * 7]), np.concatenate([g, ["b"] * extra])


@pytest.mark.parametrize("cls", [GroupStdScaling, MondrianConformal], ids=lambda c: c.__name__)
def test_regression_slice_depends_only_on_its_own_rows(cls):
    dist, y, g = _regression()
    test, _, gt = _regression(n=400, seed=9)
    a = gt == "a"
    one = cls().fit(dist, y, groups=g)
    d2, y2, g2 = _perturbed(dist, y, g)
    two = cls().fit(d2, y2, groups=g2)
    before, after = one.transform(test, groups=gt), two.transform(test, groups=gt)
    p = np.array([[0.05, 0.25, 0.5, 0.75, 0.95]])
    np.testing.assert_array_equal(before.ppf(p)[a], after.ppf(p)[a])
    np.testing.assert_array_equal(before.std()[a], after.std()[a])
    assert not np.allclose(before.std()[~a], after.std()[~a])  # the other slices did move
    if cls is MondrianConformal:
        lo1, hi1 = one.interval(test, 0.9, groups=gt)
        lo2, hi2 = two.interval(test, 0.9, groups=gt)
        np.testing.assert_array_equal(lo1[a], lo2[a])
        np.testing.assert_array_equal(hi1[a], hi2[a])


def test_temperature_slice_depends_only_on_its_own_rows():
    z, labels, g, _ = _classification()
    one = GroupTemperatureScaling().fit(z, labels, groups=g)
    rng = np.random.default_rng(1)
    lab2 = labels.copy()
    out = g != "a"
    lab2[out] = rng.integers(0, 4, out.sum())
    two = GroupTemperatureScaling().fit(z, lab2, groups=g)
    zt, _, gt, _ = _classification(n=500, seed=3)
    a = gt == "a"
    p1, p2 = one.predict_proba(zt, groups=gt), two.predict_proba(zt, groups=gt)
    np.testing.assert_array_equal(p1[a], p2[a])
    assert not np.allclose(p1[~a], p2[~a])


# ---------------------------------------------------------------------------------------------------------------
# one slice = the global calibrator
# ---------------------------------------------------------------------------------------------------------------
def test_one_slice_equals_the_global_calibrators():
    dist, y, _ = _regression()
    one = np.full(y.size, "all")
    gs = GroupStdScaling().fit(dist, y, groups=one)
    ss = StdScaling().fit(dist, y)
    assert gs.global_scale_ == ss.scale_
    # the slice's sum is a bincount, the global one NumPy's pairwise mean: equal up to rounding
    np.testing.assert_allclose(gs.scale_, [ss.scale_], rtol=1e-13)
    np.testing.assert_allclose(gs.transform(dist, groups=one).std(), ss.transform(dist).std(), rtol=1e-13)
    for signed in (False, True):
        mc = MondrianConformal(signed=signed).fit(dist, y, groups=one)
        sc = SplitConformal(signed=signed).fit(dist, y)
        for c in (0.5, 0.8, 0.9, 0.99):
            for a, b in zip(mc.interval(dist, c, groups=one), sc.interval(dist, c)):
                np.testing.assert_array_equal(a, b)
        p = np.array([[0.01, 0.3, 0.5, 0.9]])
        np.testing.assert_array_equal(mc.transform(dist, groups=one).ppf(p), sc.transform(dist).ppf(p))
        np.testing.assert_array_equal(mc.transform(dist, groups=one).crps(y), sc.transform(dist).crps(y))
    z, labels, _, _ = _classification()
    one = np.full(labels.size, "all")
    gt = GroupTemperatureScaling().fit(z, labels, groups=one)
    tt = TemperatureScaling().fit(z, labels)
    assert gt.temperature_[0] == tt.temperature_
    np.testing.assert_array_equal(gt.predict_proba(z, groups=one), tt.predict_proba(z))


def test_per_slice_fits_recover_the_slice_scales_and_temperatures():
    dist, y, g = _regression(n=20000, seed=2)
    gs = GroupStdScaling().fit(dist, y, groups=g)
    fitted = dict(zip(gs.slices_.levels, gs.scale_))
    for k, s in SCALES.items():  # s_g² = mean z² over ~2000-9000 rows: relative se ≈ 1/√(2n) < 2%
        assert fitted[k] == pytest.approx(s, rel=0.06)
    z, labels, g, temps = _classification(n=30000, seed=4)
    gt = GroupTemperatureScaling().fit(z, labels, groups=g)
    fitted = dict(zip(gt.slices_.levels, gt.temperature_))
    for k, t in temps.items():
        assert fitted[k] == pytest.approx(t, rel=0.1)


# ---------------------------------------------------------------------------------------------------------------
# Mondrian conformal: coverage ≥ 1 − α in every slice
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("signed", [False, True])
def test_mondrian_covers_every_slice(signed):
    """R seeded data sets, each with L = 49 calibration rows per slice (slices of very different noise) and 200 test
    rows per slice.  The coverage given the calibration rows is Beta-distributed around ⌈(L + 1)(1 − α)⌉/(L + 1)
    (= 0.90 for α = 0.1, symmetric scores); its mean over R data sets must be ≥ 1 − α minus 3.5 simulated standard
    errors in every slice, and close to that rank's value (not an infinite interval).  The pooled split-conformal
    interval fails the noisiest slice."""
    alpha, L, m, R = 0.1, 49, 200, 300
    rng = np.random.default_rng(11 + signed)
    cov = {k: [] for k in SCALES}
    pooled = {k: [] for k in SCALES}
    for _ in range(R):
        g = np.repeat(list(SCALES), L)
        gt = np.repeat(list(SCALES), m)
        mu, mt = rng.normal(size=g.size), rng.normal(size=gt.size)
        y = mu + np.array([SCALES[v] for v in g]) * rng.standard_normal(g.size)
        yt = mt + np.array([SCALES[v] for v in gt]) * rng.standard_normal(gt.size)
        d, dt = cc.Gaussian(mu, np.ones_like(mu)), cc.Gaussian(mt, np.ones_like(mt))
        lo, hi = MondrianConformal(signed=signed, min_rows=L).fit(d, y, groups=g).interval(dt, 1 - alpha, groups=gt)
        plo, phi = SplitConformal(signed=signed).fit(d, y).interval(dt, 1 - alpha)
        hit, phit = (yt >= lo) & (yt <= hi), (yt >= plo) & (yt <= phi)
        for k in SCALES:
            cov[k].append(hit[gt == k].mean())
            pooled[k].append(phit[gt == k].mean())
    for k in SCALES:
        c = np.asarray(cov[k])
        se = c.std(ddof=1) / np.sqrt(R)
        assert c.mean() >= 1 - alpha - 3.5 * se, (k, c.mean(), se)
        assert c.mean() <= 0.95, (k, c.mean())  # finite, not trivially conservative
    assert np.mean(pooled["a"]) < 1 - alpha - 0.05  # the pooled quantile under-covers the noisy slice


def test_conformal_bounds_ranks():
    s = np.arange(1.0, 20.0)  # L = 19: rank ⌈20·0.9⌉ = 18
    assert conformal_bounds(s, 0.9) == (-18.0, 18.0)
    assert conformal_bounds(s, 0.99) == (-np.inf, np.inf)  # rank 20 > L


# ---------------------------------------------------------------------------------------------------------------
# fallbacks, notes, contract
# ---------------------------------------------------------------------------------------------------------------
def test_unseen_and_small_slices_use_the_global_fit_with_a_note():
    dist, y, g = _regression(n=2000, probs=(0.5, 0.49, 0.01))
    n_c = int((g == "c").sum())
    assert 0 < n_c < 30
    gs = GroupStdScaling().fit(dist, y, groups=g)
    test, _, gt = _regression(n=300, seed=4)
    gt = gt.astype(object)
    gt[:7] = "new"
    out = gs.transform(test, groups=gt).std() / test.std()
    glob = (gt == "new") | (gt == "c")
    np.testing.assert_allclose(out[glob], gs.global_scale_)
    assert not np.isclose(out[~glob], gs.global_scale_).any()
    note = gs.note(gt)
    assert f"{int(glob.sum()):,} of 300 rows use the global fit" in note
    assert "'new' had no calibration rows" in note and "'c' had fewer than 30 calibration rows" in note
    assert gs.note(gt[~glob]) is None
    mc = MondrianConformal().fit(dist, y, groups=g)
    lo, hi = mc.interval(test, 0.9, groups=gt)
    plo, phi = SplitConformal().fit(dist, y).interval(test, 0.9)
    np.testing.assert_array_equal(lo[glob], plo[glob])
    assert not np.allclose(hi[~glob], phi[~glob])


def test_degenerate_temperature_slice_falls_back():
    z, labels, g, _ = _classification(n=4000)
    g = g.astype(object)
    perfect = np.flatnonzero(g == "c")[:60]
    g[perfect] = "perfect"
    labels = labels.copy()
    labels[perfect] = z[perfect].argmax(axis=1)  # every row of the slice classified correctly: T → 0 unbounded
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning escapes: the slice falls back instead of capping T
        gt = GroupTemperatureScaling().fit(z, labels, groups=g)
    k = list(gt.slices_.levels).index("perfect")
    assert gt.temperature_[k] == gt.global_temperature_
    assert "'perfect' had a degenerate fit of their own" in gt.note(g)


def test_contract_groups_required_clone_and_not_fitted():
    dist, y, g = _regression(n=500)
    for est in (GroupStdScaling(), MondrianConformal()):
        with pytest.raises(NotFittedError):
            est.transform(dist, groups=g)
        with pytest.raises(ValueError, match="groups="):
            clone(est).fit(dist, y)
        with pytest.raises(ValueError, match="shape"):
            clone(est).fit(dist, y, groups=g[:-1])
        with pytest.raises(TypeError):
            type(est)("group")  # keyword-only
    with pytest.raises(ValueError, match="min_rows"):
        GroupStdScaling(min_rows=0).fit(dist, y, groups=g)
    z, labels, gz, _ = _classification(n=500)
    with pytest.raises(NotFittedError):
        GroupTemperatureScaling().predict_proba(z, groups=gz)
    with pytest.raises(ValueError, match="groups="):
        GroupTemperatureScaling().fit(z, labels)


def test_sliced_distribution_matches_its_parts():
    dist, y, g = _regression(n=600)
    mc = MondrianConformal().fit(dist, y, groups=g)
    out = mc.transform(dist, groups=g)
    assert isinstance(out, SlicedDistribution)
    for k, shape in zip(mc.slices_.levels, mc.shapes_):
        rows = g == k
        part = cc.ShapeScale(dist.mean()[rows], dist.std()[rows], shape, assume_sorted=True)
        for name in ("mean", "std"):
            np.testing.assert_array_equal(getattr(out, name)()[rows], getattr(part, name)())
        for name in ("cdf", "cdf_left", "crps", "logpdf"):
            np.testing.assert_array_equal(getattr(out, name)(y)[rows], getattr(part, name)(y[rows]))
        np.testing.assert_array_equal(out.ppf(np.array([[0.1, 0.9]]))[rows], part.ppf(np.array([[0.1, 0.9]])))
    idx = np.array([5, 2, 400, 3])
    sub = out.take(idx)
    np.testing.assert_array_equal(sub.cdf(y[idx]), out.cdf(y)[idx])
    np.testing.assert_array_equal(out.take(g == "b").mean(), out.mean()[g == "b"])


def test_slice_labels_and_columns():
    rng = np.random.default_rng(0)
    n = 200
    feats = {"x1": rng.normal(size=n), "site": rng.choice(["n", "s"], n), "k": rng.integers(0, 3, n).astype(float)}
    import pandas as pd

    ps = cc.PredictionSet(task="regression", y=rng.normal(size=n), dist=cc.Gaussian(np.zeros(n), np.ones(n)),
                          group=rng.choice(["g1", "g2"], n), features=pd.DataFrame(feats))
    assert slice_columns(ps) == ["group", "x1", "site", "k"]
    lab = slice_labels(ps, "x1")
    assert len(np.unique(lab)) == 5 and np.unique(lab, return_counts=True)[1].tolist() == [40] * 5
    assert set(slice_labels(ps, "site")) == {"n", "s"}
    assert set(slice_labels(ps, "k")) == {"0.0", "1.0", "2.0"}
    with pytest.raises(ValueError, match="no column 'nope'"):
        slice_labels(ps, "nope")
    sf, codes = SliceFit.of(np.array(["b", "a", "b"]), 2)
    assert sf.levels.tolist() == ["a", "b"] and codes.tolist() == [1, 0, 1] and sf.own.tolist() == [False, True]


# ---------------------------------------------------------------------------------------------------------------
# registry and evaluation
# ---------------------------------------------------------------------------------------------------------------
def test_registry_offers_slice_wise_calibrators_only_with_slices():
    names = {e.name for e in registry.available_calibrators("regression")}
    assert "Mondrian conformal" not in names and "std scaling per slice" not in names
    names = {e.name for e in registry.available_calibrators("regression", has_slices=True)}
    assert {"Mondrian conformal", "std scaling per slice"} <= names
    names = {e.name for e in registry.available_calibrators("classification", has_slices=True, n_classes=3)}
    assert "temperature scaling per slice" in names
    entry = registry.calibrator("Mondrian conformal")
    assert entry.needs_slices and [t.kind for t in entry.tunable][:1] == ["slice"]
    assert entry.default_of("by") == "group" and entry.default_of("min_rows") == 30


def test_evaluate_fits_per_slice_and_the_slice_table_shows_it():
    dist, y, g = _regression(n=6000, seed=3)
    ps = cc.PredictionSet(task="regression", y=y, dist=dist, group=g)
    res = cc.evaluate(ps, {"uncalibrated": None, "std scaling": StdScaling(),
                           "per slice": GroupStdScaling(), "Mondrian": MondrianConformal()}, diagrams=True)
    table = cc.slice_comparison(ps, res, by="group")
    assert set(table["slice"]) == {"(all rows)", "a", "b", "c"}
    z_std = table.pivot_table(index="slice", columns="calibrator", values="z_std")
    for k, s in SCALES.items():  # before: z std ≈ the slice's scale; per slice: ≈ 1; global scaling: off for a, b
        assert z_std.loc[k, "uncalibrated"] == pytest.approx(s, rel=0.1)
        assert z_std.loc[k, "per slice"] == pytest.approx(1.0, abs=0.1)
    assert abs(z_std.loc["a", "std scaling"] - 1) > 0.3 and abs(z_std.loc["b", "std scaling"] - 1) > 0.3
    cov = table.pivot_table(index="slice", columns="calibrator", values="coverage_90")
    assert (cov.loc[["a", "b", "c"], "Mondrian"] > 0.85).all()
    assert cov.loc["a", "std scaling"] < 0.8
    assert (table["n_test"].groupby([table["slice"], table["calibrator"]]).first().loc["(all rows)"] == 3000).all()


def test_evaluate_without_the_slice_column_says_why():
    dist, y, _ = _regression(n=400)
    ps = cc.PredictionSet(task="regression", y=y, dist=dist)
    res = cc.evaluate(ps, {"s": StdScaling(), "m": MondrianConformal()})
    assert any("calibrator 'm' failed: this data has no group column" in m for m in res.messages)
    assert set(res.summary["calibrator"]) == {"s"}


def test_evaluate_classification_per_slice():
    z, labels, g, _ = _classification(n=8000, seed=6)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    ps = cc.PredictionSet(task="classification", labels=labels, probs=p, logits=z, group=g,
                          classes=["0", "1", "2", "3"])
    res = cc.evaluate(ps, {"uncalibrated": None, "T": TemperatureScaling(),
                           "T per slice": GroupTemperatureScaling()}, diagrams=True)
    table = cc.slice_comparison(ps, res, by="group")
    nll = table.pivot_table(index="slice", columns="calibrator", values="nll")
    assert (nll.loc[["a", "b"], "T per slice"] < nll.loc[["a", "b"], "T"] - 0.01).all()
    ece = table.pivot_table(index="slice", columns="calibrator", values="ece")
    assert ece.loc["a", "T per slice"] < ece.loc["a", "T"]
