"""The calibrator comparison behind the Recalibrate page (``cc.evaluate(..., diagrams=True)``, the comparison table,
the before/after figures and the calibrated-predictions download), tested without Streamlit."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import calib_core as cc
from calib_core import examples, export
from calib_core.classification import calibrators as ccal
from calib_core.plots.comparison import comparison_figures
from calib_core.plots.tables import comparison_table
from calib_core.protocol import has_split_column, split_labels
from calib_core.regression import calibrators as rcal

BASELINE = "uncalibrated"
SETTINGS = {"split": "random", "repeats": 3, "seed": 0, "test_fraction": 0.5}


def test_regression_comparison_matches_evaluate_and_builds_every_view():
    pset = examples.diabetes_example("gaussian")
    chosen = {"std scaling": rcal.StdScaling(), "CRUDE": rcal.CRUDE()}
    calls = []
    out = cc.evaluate(pset, {BASELINE: None, **chosen}, **SETTINGS, diagrams=True,
                      progress=lambda done, total, text: calls.append(done / total))
    assert out.calibrators == [BASELINE, "std scaling", "CRUDE"]
    assert calls and calls[-1] == pytest.approx(1.0) and all(0 <= f <= 1 for f in calls)
    # same protocol and splits as cc.evaluate with the same seed
    ref = cc.evaluate(pset, {"std scaling": rcal.StdScaling()}, split="random", repeats=3, seed=0)
    got = out.wide("mean").loc[("model", "std scaling")]
    want = ref.wide("mean").loc[("model", "std scaling")]
    assert got["calibration_rmse"] == pytest.approx(want["calibration_rmse"], rel=1e-12)
    # the over-confident example gets better calibrated on held-out rows
    assert got["calibration_rmse"] < out.wide("mean").loc[("model", BASELINE), "calibration_rmse"]
    body, best = comparison_table(out)
    assert list(body.columns[:2]) == ["metric", "better"] and best.shape == body.shape
    figs = comparison_figures(out, "model")
    assert len(figs) == 6 and all(len(f.data) >= 3 for f in figs.values())
    frame = export.calibrated_frame(pset, out, "CRUDE")
    assert len(frame) == pset.n_rows and set(np.unique(frame["split"])) == {"cal", "test"}


def test_classification_comparison_and_split_column():
    pset = examples.digits_example()
    assert has_split_column(pset) == (pset.split is not None)
    out = cc.evaluate(pset, {BASELINE: None, "temperature": ccal.TemperatureScaling()}, **SETTINGS, n_bins=15,
                      strategy="uniform", diagrams=True)
    mean = out.wide("mean")
    assert mean.loc[(mean.index[0][0], "temperature"), "ece"] < mean.loc[(mean.index[0][0], BASELINE), "ece"]
    figs = comparison_figures(out, out.summary["model"].iloc[0])
    assert set(figs) == {"Reliability diagram", "Confidence histogram"}


def test_split_labels_are_cc_evaluate_splits():
    pset = examples.levi_synthetic(n=400)
    labels = split_labels(pset, trial=1, seed=3, test_fraction=0.25)
    for model in pset.models():
        lab = labels[pset.model == model]
        assert (lab == "test").sum() == pytest.approx(0.25 * lab.size, abs=1)


class CountingStd(BaseEstimator):
    """std scaling that counts its fits (class attribute: clones share it)."""

    fits = 0

    def fit(self, dist, y, *, features=None):
        type(self).fits += 1
        self.inner_ = rcal.StdScaling().fit(dist, y, features=features)
        return self

    def transform(self, dist, *, features=None):
        return self.inner_.transform(dist, features=features)


def test_diagrams_reuse_the_estimators_fitted_in_the_first_trial():
    pset = examples.diabetes_example("gaussian")
    CountingStd.fits = 0
    out = cc.evaluate(pset, {"counted": CountingStd()}, split="random", repeats=2, seed=0, diagrams=True)
    assert CountingStd.fits == 2  # one fit per trial; the diagrams and downloads fit nothing again
    est = out.fitted["model"]["counted"]
    first = next(s for s in out.splits if s["trial"] == 0)
    z = (pset.y - pset.dist.mean()) / pset.dist.std()
    assert est.inner_.scale_ == pytest.approx(np.sqrt(np.mean(z[first["cal"]] ** 2)), rel=1e-12)
    assert set(out.split_labels[first["cal"]]) == {"cal"} and set(out.split_labels[first["test"]]) == {"test"}
    np.testing.assert_allclose(out.calibrated["model"]["counted"].std(), est.inner_.scale_ * pset.dist.std())
    assert out.task == "regression" and out.n_trials == 2 and out.split == "random"
    without = cc.evaluate(pset, {"counted": CountingStd()}, split="random", repeats=2, seed=0)
    assert not without.diagrams and not without.calibrated and "counted" in without.fitted["model"]
    np.testing.assert_array_equal(without.summary["mean"], out.summary["mean"])


def test_evaluate_dispatches_on_the_task_with_keyword_options():
    pset = examples.digits_example()
    res = cc.evaluate(pset, ccal.TemperatureScaling(), split="random", repeats=1, seed=0)
    assert res.task == "classification" and res.calibrators == ["TemperatureScaling"]
    with pytest.raises(TypeError):
        cc.evaluate(pset, ccal.TemperatureScaling(), "random")  # options are keyword-only


def test_evaluation_report_html_reads_the_result():
    pset = examples.levi_synthetic(n=600)
    out = cc.evaluate(pset, {BASELINE: None, "std": rcal.StdScaling()}, split="random", repeats=2, seed=1,
                      test_fraction=0.3, diagrams=True)
    assert out.split_description() == "2 random splits (seed 1, 30% test)"
    html = export.evaluation_report_html(pset, out, title="Comparison")
    assert "Comparison on held-out rows (2 random splits (seed 1, 30% test))" in html
    assert html.count("Plotly.newPlot(") == 12  # 6 before/after figures per model, two models
    assert "true sigma" in html and "random sigma" in html
