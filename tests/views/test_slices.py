"""The worst slices before and after a recalibration:
``calib_core.slices.candidates.restrict_slices`` and
``views.slices.slices_before_after`` — the held-out rows of the evaluation's first trial, the explorer's
slices restricted to them, every ranking's statistics equal to a direct computation from the calibrated
predictions, and a planted slice flagged before and not after a slice-wise calibrator."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special

import calib_core as cc
from calib_core import plots
from calib_core.base.predictions import PredictionSet
from calib_core.base.regression import Gaussian
from calib_core.calibrators.classification import GroupTemperatureScaling, TemperatureScaling
from calib_core.calibrators.regression import GroupStdScaling, StdScaling
from calib_core.slices.candidates import candidate_slices, restrict_slices, slice_mask
from views import slices as slice_views


def two_models(n: int = 8000, seed: int = 0) -> PredictionSet:
    """Two models of the same targets, calibrated except site = s3 (σ 45% too small) for both."""
    rng = np.random.default_rng(seed)
    site = np.array([f"s{i}" for i in range(6)])[rng.integers(0, 6, n)]
    x = rng.normal(size=n)
    mu, sigma = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
    y = mu + np.where(site == "s3", 1.45, 1.0) * sigma * rng.normal(size=n)
    model = np.where(np.arange(n) < n // 2, "A", "B").astype(object)
    return PredictionSet(task="regression", y=y, dist=Gaussian(mu, sigma), point=mu, model=model,
                         slice_columns=pd.DataFrame({"site": site, "x": x}))


def test_restricted_slices_are_the_explorers_slices_on_the_held_out_rows():
    pset = two_models(4000, seed=1)
    full = candidate_slices(pset, n_bins=4, min_size=80)
    rows = np.sort(np.random.default_rng(2).choice(pset.n_rows, 1700, replace=False))
    held = restrict_slices(full, rows, min_size=80)
    assert held.n_rows == rows.size and held.columns == full.columns and held.levels == full.levels
    by_label = {full.label[s]: slice_mask(full, s) for s in range(full.n_slices)}
    for s in range(held.n_slices):  # same name, same rows (the bins keep the edges cut on all rows)
        np.testing.assert_array_equal(slice_mask(held, s), by_label[held.label[s]][rows])
        assert held.size[s] == slice_mask(held, s).sum() >= 80
    # every slice of the full set with ≥ 80 held-out rows is there, unless it is as large as a parent there
    kept = set(held.label)
    for label, mask in by_label.items():
        if mask[rows].sum() >= 80 and " & " not in label:
            assert label in kept
    masks = np.zeros(pset.n_rows, bool)
    masks[rows] = True
    np.testing.assert_array_equal(slice_mask(restrict_slices(full, masks, min_size=80), 0), slice_mask(held, 0))
    with pytest.raises(ValueError, match="must have the slices' 4000 rows"):
        restrict_slices(full, masks[:10], min_size=80)


def test_before_after_ranks_held_out_rows_with_the_calibrated_predictions():
    pset = two_models()
    res = cc.evaluate(pset, {"uncalibrated": None, "std scaling": StdScaling(),
                             "per site": GroupStdScaling(by="site")}, diagrams=True, repeats=1, seed=3)
    ranking, sset = slice_views.explore_slices(pset, n_bins=3, min_size=100)
    ba = slice_views.slices_before_after(pset, res, slices=sset, min_size=100)
    first = {s["model"]: s for s in res.splits if s["trial"] == 0}
    test = np.sort(np.concatenate([first[m]["test"] for m in ("A", "B")]))
    np.testing.assert_array_equal(ba.rows, test)
    assert ba.n_cal + ba.rows.size == pset.n_rows and not np.isin(ba.rows, first["A"]["cal"]).any()
    assert list(ba.rankings) == ["uncalibrated", "std scaling", "per site"] and ba.after == ["std scaling", "per site"]
    assert "model" in ba.slices.columns  # the model column slices the held-out rows of both models
    for name, rk in ba.rankings.items():
        z = np.empty(pset.n_rows)  # z of every row under this calibrator, from its calibrated distribution
        for m in ("A", "B"):
            mrows = np.flatnonzero(pset.model == m)
            z[mrows] = special.ndtri(np.clip(res.calibrated[m][name].pit(pset.y[mrows]), 1e-12, 1 - 1e-12))
        zt = z[ba.rows]
        for _, row in rk.iterrows():
            mask = slice_mask(ba.slices, int(row["index"]))
            assert row["n"] == mask.sum() >= 100
            np.testing.assert_allclose(row["mean z"], zt[mask].mean(), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(row["std z"], zt[mask].std(ddof=1), rtol=1e-9)
    before, after = ba.rankings["uncalibrated"], ba.rankings["per site"]
    assert before.loc[0, "slice"] == "site = s3" and before.loc[0, "flagged"]
    assert not after.loc[after["slice"] == "site = s3", "flagged"].iloc[0]
    assert ba.rankings["std scaling"].loc[ba.rankings["std scaling"]["slice"] == "site = s3", "flagged"].iloc[0]
    table = slice_views.before_after_table(ba, "per site")
    assert table.loc[0, "slice"] == "site = s3" and table.loc[0, "verdict after"] == "no longer flagged"
    assert list(table["rank before"]) == list(range(1, len(table) + 1))
    by_after = slice_views.before_after_table(ba, "per site", order="after")
    assert list(by_after["rank after"]) == list(range(1, len(by_after) + 1))
    assert (table["evidence after"] >= 0).all() and not np.signbit(table["evidence after"]).any()
    text = slice_views.before_after_sentence(ba, "per site", min_size=100)
    assert f"{ba.rows.size:,} held-out (test) rows" in text and f"other {ba.n_cal:,} rows only" in text
    # the funnel: open markers before, filled after, segments for the slices flagged in either
    b, a, limits = slice_views.before_after_funnel(ba, "per site", "std z")
    np.testing.assert_array_equal(np.sort(b["index"]), np.sort(a["index"]))
    fig = plots.funnel_figure(a, limits, statistic="std z", before=b, labels=("before", "after per site"))
    names = [t.name for t in fig.data]
    assert {"flagged before", "slices after per site", "before → after per site"} <= set(names)
    seg = next(t for t in fig.data if t.name == "before → after per site")
    assert len(seg.x) == 3 * int((b["flagged"].to_numpy() | a.set_index("index").loc[b["index"], "flagged"]
                                  .to_numpy()).sum())


def test_before_after_classification_with_temperature_per_slice():
    rng = np.random.default_rng(4)
    n, k = 9000, 3
    site = rng.choice(["a", "b", "c"], n)
    logits = rng.normal(scale=2.0, size=(n, k))
    true_t = np.where(site == "c", 2.5, 1.0)  # site c: logits 2.5× too sharp
    p_true = np.exp(logits / true_t[:, None])
    p_true /= p_true.sum(axis=1, keepdims=True)
    labels = (rng.random(n)[:, None] > np.cumsum(p_true, axis=1)).sum(axis=1)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    pset = PredictionSet(task="classification", labels=labels, probs=p, logits=logits, classes=["0", "1", "2"],
                         group=site.astype(object), slice_columns=pd.DataFrame({"x": rng.normal(size=n)}))
    res = cc.evaluate(pset, {"uncalibrated": None, "T": TemperatureScaling(),
                             "T per slice": GroupTemperatureScaling()}, diagrams=True, repeats=1, seed=0)
    ba = slice_views.slices_before_after(pset, res, min_size=150, n_bins=3)
    before, after = ba.rankings["uncalibrated"], ba.rankings["T per slice"]
    assert before.loc[0, "slice"] == "group = c" and before.loc[0, "flagged"]
    assert not after.loc[after["slice"] == "group = c", "flagged"].iloc[0]
    q = res.calibrated["model"]["T per slice"][ba.rows] if "model" in res.calibrated else \
        next(iter(res.calibrated.values()))["T per slice"][ba.rows]
    f, y = q.max(axis=1), (q.argmax(axis=1) == labels[ba.rows]).astype(float)
    for _, row in after.iterrows():
        m = slice_mask(ba.slices, int(row["index"]))
        np.testing.assert_allclose(row["calibration ratio"], f[m].sum() / y[m].sum(), rtol=1e-9)
    assert set(ba.base_rates) == {"uncalibrated", "T", "T per slice"}
    _, _, limits = slice_views.before_after_funnel(ba, "T per slice", "calibration ratio")
    assert (limits["lower adjusted"] < 1).all() and (limits["upper adjusted"] > 1).all()


def test_before_after_needs_calibrated_predictions():
    pset = two_models(1000)
    res = cc.evaluate(pset, {"uncalibrated": None, "s": StdScaling()}, repeats=1)
    with pytest.raises(ValueError, match="diagrams=True"):
        slice_views.slices_before_after(pset, res)


def test_display_table_shows_finite_evidence_and_the_effect_tie_break():
    """At 60,000 rows the planted slice's p is far below float range: its evidence is shown as a finite number (one
    decimal; the page formats it with thousands separators), with the effect size that breaks ties beside it."""
    rng = np.random.default_rng(4)
    n = 60_000
    site = np.array([f"s{i}" for i in range(3)])[rng.integers(0, 3, n)]
    mu, sigma = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
    y = mu + np.where(site == "s1", 2.0, 1.0) * sigma * rng.normal(size=n)
    pset = PredictionSet(task="regression", y=y, dist=Gaussian(mu, sigma), point=mu,
                         slice_columns=pd.DataFrame({"site": site, "x": rng.normal(size=n)}))
    ranking, _ = slice_views.explore_slices(pset)
    table = slice_views.slice_display_table(ranking, "regression")
    assert list(table.columns[-4:]) == ["evidence", "effect", "adjusted p", "verdict"]
    assert table.loc[0, "slice"] == "site = s1" and 1_000 < table.loc[0, "evidence"] < 1e5
    assert np.isfinite(table["evidence"]).all() and (table["evidence"] == table["evidence"].round(1)).all()
    shown = slice_views.before_after_display(pd.DataFrame({
        "rank before": [1], "rank after": [7], "slice": ["site = s1"], "n": [n], "test": ["std z"],
        "before → after": ["2 → 1"], "evidence before": [5321.44], "evidence after": [0.0],
        "adjusted p before": [0.0], "adjusted p after": [1.0], "verdict after": ["no longer flagged"]}))
    assert shown.loc[0, "evidence"] == "5,321.4 → 0.0"
