"""The calibrator comparison behind the Recalibrate page (``cc.evaluate(..., diagrams=True)``, the comparison table,
the before/after figures and the calibrated-predictions download), tested without Streamlit."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import calib_core as cc
from calib_core import export
from calib_core.base.protocol import has_split_column, split_labels
from calib_core.calibrators import classification as ccal
from calib_core.calibrators import regression as rcal
from calib_core.data import examples
from calib_core.evaluation.tables import comparison_table
from calib_core.plots.comparison import comparison_figures

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


# ------------------------------------------------------------------------- the comparison's summary and dot plot
class _Result:
    """The parts of an EvaluationResult that the summary reads."""

    def __init__(self, summary, calibrators, task="regression"):
        self.summary, self.calibrators, self.task = summary, calibrators, task


def _fake_result(means: dict[str, dict[str, float]], task="regression") -> _Result:
    import pandas as pd

    rows = [{"model": "m", "calibrator": c, "metric": k, "mean": v, "std": 0.01 * abs(v) if np.isfinite(v) else np.nan,
             "n_trials": 3} for c, by in means.items() for k, v in by.items()]
    return _Result(pd.DataFrame(rows), list(means), task)


def test_comparison_summary_best_follows_the_registry_direction():
    from calib_core.evaluation.tables import comparison_summary

    means = {
        "uncalibrated": {"nll": 2.0, "coverage_90": 0.70, "sharpness": 1.0, "rmse": 0.5, "pit_entropy": -0.3},
        "a": {"nll": np.inf, "coverage_90": 0.93, "sharpness": 0.5, "rmse": 0.5, "pit_entropy": -0.01},
        "b": {"nll": 1.5, "coverage_90": 0.88, "sharpness": 0.7, "rmse": 0.5, "pit_entropy": -0.02},
        "c": {"nll": 1.7, "coverage_90": 0.95, "sharpness": 0.9, "rmse": 0.4, "pit_entropy": -0.05},
    }
    s = comparison_summary(_fake_result(means))
    best = {k: list(g.loc[g["best"], "calibrator"]) for k, g in s.groupby("metric")}
    assert best["nll"] == ["b"]  # lower wins; an infinite NLL never does
    assert best["coverage_90"] == ["b"]  # closest to the 0.9 target (0.88 beats 0.93)
    assert best["pit_entropy"] == ["a"]  # higher wins
    assert best["sharpness"] == []  # no direction: nothing is better
    assert best["rmse"] == ["c"]
    s2 = comparison_summary(_fake_result({c: {"rmse": 0.5} for c in "wxyz"}))
    assert not s2["best"].any()  # all four tie: nothing marked
    # grouped by kind: calibration statistics, proper scores, descriptive
    kinds = list(dict.fromkeys(s["kind"]))
    assert kinds == ["calibration statistic", "proper score", "descriptive"]
    assert s.loc[s["metric"] == "coverage_90", "target"].iloc[0] == 0.9
    assert s.loc[s["metric"] == "coverage_90", "better"].iloc[0] == "≈ 0.9"


def test_comparison_columns_rows_are_calibrators_with_the_chosen_metrics():
    from calib_core.evaluation.tables import comparison_columns, comparison_summary

    means = {"uncalibrated": {"nll": 2.0, "ence": 0.3, "crps": 1.0}, "a": {"nll": np.inf, "ence": 0.1, "crps": 0.8}}
    s = comparison_summary(_fake_result(means))
    table, best = comparison_columns(s, ["nll", "ence"])
    assert list(table.columns) == ["calibrator", "NLL ↓", "ENCE (Levi) ↓"]
    assert list(table["calibrator"]) == ["uncalibrated", "a"]
    assert table.loc[1, "NLL ↓"] == "inf" and table.loc[0, "ENCE (Levi) ↓"] == "0.3 ± 0.003"
    assert best.shape == table.shape
    assert best["NLL ↓"].tolist() == [True, False] and best["ENCE (Levi) ↓"].tolist() == [False, True]


def test_dot_figure_rows_stars_reference_and_infinite_means():
    from calib_core.evaluation.tables import comparison_summary
    from calib_core.plots.comparison import comparison_dot_figure

    means = {"uncalibrated": {"nll": 2.0, "ence": 0.3, "coverage_90": 0.7},
             "a": {"nll": np.inf, "ence": 0.1, "coverage_90": 0.85},
             "b": {"nll": 1.5, "ence": 0.2, "coverage_90": 0.99}}
    fig = comparison_dot_figure(comparison_summary(_fake_result(means)))
    dots = [t for t in fig.data if (t.meta or {}).get("role") == "dots"]
    assert [t.meta["metric"] for t in dots] == ["ence", "coverage_90", "nll"]  # calibration statistics first
    ticks = [fig.layout[f"yaxis{i if i > 1 else ''}"].ticktext[0] for i in range(1, 4)]
    assert ticks == ["ENCE (Levi) ↓", "coverage 90% → 0.9", "NLL ↓"]
    for t in dots:  # the best dot is a star, named beside it
        symbols = list(t.marker.symbol)
        for name, sym, label in zip(t.meta["calibrators"], symbols, t.texttemplate):
            assert (sym == "star") == (name in t.meta["best"]) or sym == "triangle-right"
            assert (label.strip() == name) == (name in t.meta["best"])
    nll = dots[2]
    i = nll.meta["calibrators"].index("a")
    assert nll.marker.symbol[i] == "triangle-right"  # infinite mean: ▶ at the right edge of the row
    xaxis = fig.layout[nll.xaxis.replace("x", "xaxis")]
    assert nll.x[i] < xaxis.range[1] and nll.x[i] >= max(v for v in nll.x if v != nll.x[i])
    shapes = fig.layout.shapes
    assert sum(1 for sh in shapes if sh.line.dash == "dash") == 3  # the uncalibrated mean in every row
    assert any(sh.x0 == 0.9 for sh in shapes)  # the coverage target


def test_levi_panels_one_per_calibrator_with_shared_axes():
    from calib_core.plots.regression_levi import levi_panels_figure

    pset = examples.levi_synthetic(n=1000)
    out = cc.evaluate(pset, {BASELINE: None, "std": rcal.StdScaling(), "CRUDE": rcal.CRUDE()}, split="column",
                      diagrams=True)
    tables = {n: out.diagrams["random sigma"][n]["levi_bins"] for n in out.calibrators}
    for log in (False, True):
        fig = levi_panels_figure(tables, reference=BASELINE, log_axes=log)
        bins = [t for t in fig.data if (t.meta or {}).get("role") == "bins"]
        assert [t.name for t in bins] == ["std", "CRUDE"] and bins[0].xaxis != bins[1].xaxis
        assert sum((t.meta or {}).get("role") == "reference_bins" for t in fig.data) == 2
        axes = [fig.layout[k] for k in fig.layout if k.startswith(("xaxis", "yaxis"))]
        assert {a.type for a in axes} == {"log" if log else "linear"}
        assert len({tuple(a.range) for a in axes}) == 1
        # zoomed to the calibrated bins: the uncalibrated random σ (RMV up to ~10) runs out of view
        cal = np.concatenate([tables[n][["rmv", "rmse"]].to_numpy().ravel() for n in ("std", "CRUDE")])
        hi = 10 ** axes[0].range[1] if log else axes[0].range[1]
        assert hi >= cal.max() and hi < tables[BASELINE]["rmv"].max()
