"""calib_core.comparison: the engine of the Recalibrate page, tested without Streamlit."""

from __future__ import annotations

import numpy as np
import pytest

import calib_core as cc
from calib_core import comparison, examples
from calib_core.classification import calibrators as ccal
from calib_core.plots.comparison import comparison_figures
from calib_core.regression import calibrators as rcal

SETTINGS = {"split": "random", "repeats": 3, "seed": 0, "test_fraction": 0.5, "n_bins": 15, "strategy": "uniform"}


def test_regression_comparison_matches_evaluate_and_builds_every_view():
    pset = examples.diabetes_example("gaussian")
    chosen = {"std scaling": rcal.StdScaling(), "CRUDE": rcal.CRUDE()}
    calls = []
    out = comparison.compare_calibrators(pset, chosen, SETTINGS, lambda f, text: calls.append(f))
    assert out["calibrators"] == [comparison.BASELINE, "std scaling", "CRUDE"]
    assert calls and calls[-1] == pytest.approx(1.0) and all(0 <= f <= 1 for f in calls)
    # same protocol and splits as cc.evaluate with the same seed
    ref = cc.evaluate(pset, {"std scaling": rcal.StdScaling()}, split="random", repeats=3, seed=0)
    got = out["result"].wide("mean").loc[("model", "std scaling")]
    want = ref.wide("mean").loc[("model", "std scaling")]
    assert got["calibration_rmse"] == pytest.approx(want["calibration_rmse"], rel=1e-12)
    # the over-confident example gets better calibrated on held-out rows
    assert got["calibration_rmse"] < out["result"].wide("mean").loc[("model", comparison.BASELINE), "calibration_rmse"]
    body, best = comparison.comparison_table(out["result"], out["calibrators"])
    assert list(body.columns[:2]) == ["metric", "better"] and best.shape == body.shape
    figs = comparison_figures(out, "model", "regression")
    assert len(figs) == 6 and all(len(f.data) >= 3 for f in figs.values())
    frame = comparison.calibrated_frame(pset, out, "CRUDE")
    assert len(frame) == pset.n_rows and set(np.unique(frame["split"])) == {"cal", "test"}


def test_classification_comparison_and_split_column():
    pset = examples.digits_example()
    assert comparison.has_split_column(pset) == (pset.split is not None)
    out = comparison.compare_calibrators(pset, {"temperature": ccal.TemperatureScaling()}, SETTINGS, lambda *a: None)
    mean = out["result"].wide("mean")
    assert mean.loc[(mean.index[0][0], "temperature"), "ece"] < mean.loc[(mean.index[0][0], comparison.BASELINE), "ece"]
    figs = comparison_figures(out, out["result"].summary["model"].iloc[0], "classification")
    assert set(figs) == {"Reliability diagram", "Confidence histogram"}


def test_split_labels_are_cc_evaluate_splits():
    pset = examples.levi_synthetic(n=400)
    labels = comparison.split_labels(pset, trial=1, seed=3, test_fraction=0.25)
    for model in pset.models():
        lab = labels[pset.model == model]
        assert (lab == "test").sum() == pytest.approx(0.25 * lab.size, abs=1)
