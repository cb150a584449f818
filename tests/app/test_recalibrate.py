"""AppTest of the Recalibrate page (pages/recalibrate.py): calibrators, split, run, comparison table, diagrams,
downloads.  The page is run on its own (it falls back to a built-in example) and through app.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from plotly.offline import get_plotlyjs
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core.calibrators import classification as ccal
from calib_core.calibrators import regression as rcal
from calib_core.data import examples
from calib_core.evaluation.classification import evaluate_classification

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "recalibrate.py")
APP = str(REPO / "app.py")
TIMEOUT = 180
DIABETES = "Diabetes — Gaussian (mean, std) of a boosting ensemble"
DIGITS = "Digits — over-confident classifier (10 classes, logits)"
BREAST = "Breast cancer — binary classifier (logit of malignant)"


def specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def spec_of(at: AppTest, key: str) -> dict:
    """The figure JSON of the chart with widget key ``key``."""
    return next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == key)


def metric_headers(table: pd.DataFrame) -> set[str]:
    """The metric labels of the comparison table's columns (without the direction arrows)."""
    return {c.split(" ↓")[0].split(" ↑")[0].split(" →")[0] for c in table.columns if c not in ("model", "calibrator")}


def role_traces(spec: dict, role: str) -> list[dict]:
    return [d for d in spec["data"] if d.get("meta", {}).get("role") == role and d.get("visible", True) is not False]


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.fixture
def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    ok(at)
    return at


@pytest.fixture
def captured(monkeypatch) -> dict:
    """Deferred download callables by file id (``st.download_button(data=callable)``), to read the downloads."""
    store: dict = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, *args, **kwargs):
        file_id = original(self, data_callable, *args, **kwargs)
        store[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return store


def download(at: AppTest, captured: dict, key_part: str):
    button = next(b for b in at.get("download_button") if key_part in b.proto.id)
    return captured[button.proto.deferred_file_id]()


def run_random(at: AppTest, calibrators: list[str], repeats: int, task: str = "regression") -> AppTest:
    at.multiselect(key=f"recal_cals_{task}").set_value(calibrators).run()
    at.radio(key="recal_split").set_value("random").run()
    at.number_input(key="recal_repeats").set_value(repeats).run()
    next(b for b in at.button if b.label == "Run comparison").click().run()
    ok(at)
    return at


def test_page_runs_standalone_on_an_example(page):
    assert page.title[0].value == "Recalibrate"
    assert any("built-in example" in i.value for i in page.info)
    assert page.selectbox(key="recal_example").value == DIABETES
    assert page.multiselect(key="recal_cals_regression").value == ["std scaling", "isotonic (Kuleshov)", "CRUDE",
                                                                   "σ-binning"]
    # the diabetes example has a split column: it is the default, repeats are then off
    assert page.radio(key="recal_split").value == "split column"
    assert page.number_input(key="recal_repeats").disabled
    assert not page.dataframe and not page.get("plotly_chart")
    assert any("press **Run comparison**" in i.value for i in page.info)


def test_regression_comparison_is_cc_evaluate_with_the_same_splits(page, captured):
    at = run_random(page, ["std scaling", "CRUDE"], repeats=3)
    table = at.dataframe[0].value
    assert list(table.columns[:1]) == ["calibrator"] and list(table["calibrator"]) == ["uncalibrated", "std scaling",
                                                                                        "CRUDE"]
    assert {"calibration RMSE", "ENCE (Levi)", "NLL", "CRPS", "coverage 90%"} <= metric_headers(table)
    assert all("±" in v for v in table.iloc[0, 1:])  # three trials: mean ± std
    assert any("3 random splits" in c.value for c in at.caption)

    # the numbers are cc.evaluate's, with the same three random splits
    pset = examples.diabetes_example("gaussian")
    ref = cc.evaluate(pset, {"uncalibrated": None, "std scaling": rcal.StdScaling(), "CRUDE": rcal.CRUDE()},
                      split="random", repeats=3, seed=0)
    got = at.session_state["recal_result"]["result"]
    merged = ref.summary.merge(got.summary, on=["model", "calibrator", "metric"], suffixes=("_ref", "_page"))
    assert len(merged) == len(ref.summary) == len(got.summary)
    np.testing.assert_allclose(merged["mean_page"], merged["mean_ref"], rtol=1e-12)
    np.testing.assert_allclose(merged["std_page"], merged["std_ref"], rtol=1e-10)

    # std scaling fixes the over-confident example: its z spread and calibration error go down on held-out rows
    wide = got.wide("mean").loc["model"]
    assert wide.loc["std scaling", "calibration_rmse"] < 0.5 * wide.loc["uncalibrated", "calibration_rmse"]
    assert wide.loc["std scaling", "nll"] < wide.loc["uncalibrated", "nll"]

    # before/after diagrams: one colour per calibrator on every chart; the perfect-calibration band drawn once
    s = specs(at)
    assert len(s) == 7  # the comparison's dot plot + six diagrams
    kuleshov, levi = spec_of(at, "recal_kuleshov"), spec_of(at, "recal_levi")
    curves = role_traces(kuleshov, "curve")
    assert [c["name"] for c in curves] == ["uncalibrated", "std scaling", "CRUDE"]
    colors = [c["line"]["color"] for c in curves]
    assert len(set(colors)) == 3
    assert len(role_traces(kuleshov, "band_high")) == 1
    # Levi small multiples: one panel per calibrator, the uncalibrated bins in grey behind each
    assert [d["marker"]["color"] for d in role_traces(levi, "bins")] == colors[1:]
    assert len(role_traces(levi, "reference_bins")) == 2
    dots = spec_of(at, "recal_dots")
    assert [d["marker"]["color"] for d in role_traces(dots, "legend") if d.get("mode") == "markers"][:3] == colors
    for spec in s[2:]:  # PIT, Levi panels, intervals, z, Q-Q: the same colour for the same calibrator
        named = {d["name"]: d for d in spec["data"] if d.get("meta", {}).get("name") in ("std scaling", "CRUDE")}
        assert named["CRUDE"]["line" if "line" in named["CRUDE"] else "marker"]["color"] == colors[2]
    for c in at.get("plotly_chart"):
        assert len(c.proto.spec) < 200_000  # diagram tables, never rows

    # downloads: comparison CSV, calibrated predictions (CSV + Parquet), figure HTML, page report
    summary = pd.read_csv(io.BytesIO(download(at, captured, "recal_dl_summary")))
    assert set(summary["calibrator"]) == {"uncalibrated", "std scaling", "CRUDE"}
    assert {"mean", "std", "n_trials"} <= set(summary.columns)
    calibrated = pd.read_csv(io.BytesIO(download(at, captured, "recal_dl_csv")))
    assert at.selectbox(key="recal_dl_which").value == "std scaling"
    assert len(calibrated) == pset.n_rows and set(calibrated["calibrator"]) == {"std scaling"}
    assert set(calibrated["split"]) == {"cal", "test"}
    np.testing.assert_allclose(calibrated["y"], pset.y)
    pq = pd.read_parquet(io.BytesIO(download(at, captured, "recal_dl_parquet")))
    pd.testing.assert_frame_equal(pq, calibrated, check_dtype=False)
    # std scaling fitted on the calibration rows of trial 1: σ' = s·σ with s² = mean z² over those rows
    cal_rows = calibrated["split"].to_numpy() == "cal"
    z = (pset.y - pset.dist.mean()) / pset.dist.std()
    s_hat = np.sqrt(np.mean(z[cal_rows] ** 2))
    np.testing.assert_allclose(calibrated["std"], s_hat * pset.dist.std(), rtol=1e-10)
    fig_html = download(at, captured, "recal_dl_figure")
    assert fig_html.lower().startswith("<!doctype html>")
    assert "<title>Quantile calibration (test rows)</title>" in fig_html
    assert fig_html.count("Plotly.newPlot") == 1 and get_plotlyjs() in fig_html
    report = download(at, captured, "recal_dl_report")
    assert report.count("Plotly.newPlot(") == 6 and "<script src" not in report.replace("<script src=\"\"", "")
    assert "Comparison on held-out rows" in report and "std scaling" in report


def test_parameters_reach_the_calibrators_and_stale_results_are_flagged(page):
    at = run_random(page, ["σ-binning"], repeats=2)
    assert not at.warning
    at.number_input(key="recal_p_regression_σ-binning_n_bins").set_value(4).run()
    assert any("controls changed" in w.value for w in at.warning)
    next(b for b in at.button if b.label == "Run comparison").click().run()
    ok(at)
    assert not at.warning
    assert at.session_state["recal_result"]["settings"]["calibrators"] == {"σ-binning": "SigmaBinning(n_bins=4)"}
    # the result survives an unrelated rerun (choosing another download)
    at.selectbox(key="recal_dl_fig").select("RMSE vs RMV (Levi)").run()
    ok(at)
    assert at.dataframe and not at.warning


def test_result_is_dropped_when_the_data_change(page):
    at = run_random(page, ["std scaling"], repeats=2)
    assert at.dataframe
    at.selectbox(key="recal_example").select("Diabetes — 9 quantiles of the same ensemble").run()
    ok(at)
    assert not at.dataframe and any("press **Run comparison**" in i.value for i in at.info)


def test_classification_comparison_and_reliability_overlay(page):
    page.selectbox(key="recal_example").select(DIGITS).run()
    ok(page)
    ms = page.multiselect(key="recal_cals_classification")
    assert ms.value == ["temperature scaling", "histogram binning", "isotonic", "BBQ"]
    assert "Platt scaling" not in ms.options  # binary only; digits has 10 classes
    at = run_random(page, ["temperature scaling", "matrix scaling"], repeats=2, task="classification")
    table = at.dataframe[0].value
    assert list(table["calibrator"]) == ["uncalibrated", "temperature scaling", "matrix scaling"]
    assert {"ECE", "class-wise ECE", "NLL", "Brier", "accuracy"} <= metric_headers(table)
    at.multiselect(key="recal_metrics_classification").select("mce").run()  # any metric on demand
    ok(at)
    assert "MCE" in metric_headers(at.dataframe[0].value)
    got = at.session_state["recal_result"]["result"]
    pset = examples.digits_example()
    ref = evaluate_classification(pset, {"uncalibrated": None, "temperature scaling": ccal.TemperatureScaling(),
                                         "matrix scaling": ccal.MatrixScaling()}, split="random", repeats=2, seed=0,
                                diagrams=True)  # as the page (which also records the MCB–DSC plane's terms)
    pd.testing.assert_frame_equal(got.summary, ref.summary)
    wide = got.wide("mean").loc["model"]
    assert wide.loc["temperature scaling", "ece"] < 0.5 * wide.loc["uncalibrated", "ece"]  # over-confident model
    s = specs(at)
    assert len(s) == 4  # the dot plot, the MCB–DSC plane, the reliability diagram and the confidence histogram
    lines = role_traces(spec_of(at, "recal_reliability"), "bins")
    assert [d["name"] for d in lines] == ["uncalibrated", "temperature scaling", "matrix scaling"]
    assert len({d["marker"]["color"] for d in lines}) == 3
    assert len(role_traces(spec_of(at, "recal_confidence"), "hist")) == 3


def test_binary_set_offers_platt_and_split_column(page):
    page.selectbox(key="recal_example").select(BREAST).run()
    ok(page)
    assert "Platt scaling" in page.multiselect(key="recal_cals_classification").options
    page.multiselect(key="recal_cals_classification").set_value(["Platt scaling", "BBQ"]).run()
    next(b for b in page.button if b.label == "Run comparison").click().run()
    ok(page)
    assert list(page.dataframe[0].value["calibrator"]) == ["uncalibrated", "Platt scaling", "BBQ"]
    assert any("split column" in c.value and "one trial" in c.value for c in page.caption)


def test_data_from_the_data_page_with_two_models():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    pset = examples.levi_synthetic(n=2000)
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = "example:levi-small"
    at.session_state["pset_name"] = "Levi small"
    at.run()
    ok(at)
    assert any("from the Data page" in c.value for c in at.caption)
    assert not at.get("selectbox") or "recal_example" not in [s.key for s in at.selectbox]
    at.multiselect(key="recal_cals_regression").set_value(["std scaling", "σ-binning"]).run()
    next(b for b in at.button if b.label == "Run comparison").click().run()
    ok(at)
    table = at.dataframe[0].value
    assert list(table.columns[:2]) == ["model", "calibrator"]
    assert list(zip(table["model"], table["calibrator"]))[:4] == [
        ("true sigma", "uncalibrated"), ("true sigma", "std scaling"), ("true sigma", "σ-binning"),
        ("random sigma", "uncalibrated")]
    assert at.selectbox(key="recal_model").options == ["true sigma", "random sigma"]
    # Levi's point: σ-binning fixes the random-σ model's Kuleshov curve, but ENCE still shows σ is uninformative
    wide = at.session_state["recal_result"]["result"].wide("mean")
    assert wide.loc[("random sigma", "σ-binning"), "calibration_rmse"] < 0.05
    assert wide.loc[("random sigma", "uncalibrated"), "ence"] > 5 * wide.loc[("true sigma", "uncalibrated"), "ence"]
    at.selectbox(key="recal_model").select("random sigma").run()
    ok(at)
    curves = role_traces(spec_of(at, "recal_kuleshov"), "curve")
    assert [c["name"] for c in curves] == ["uncalibrated", "std scaling", "σ-binning"]


def test_point_predictions_offer_sigma_estimators_only():
    rng = np.random.default_rng(0)
    n = 600
    x = rng.uniform(-1, 1, size=n)
    mean = 2 * x
    y = mean + (0.2 + np.abs(x)) * rng.normal(size=n)
    pset = cc.PredictionSet(task="regression", source="points.csv", layout="point", y=y, point=mean,
                            features=pd.DataFrame({"x0": x}), n_read=n)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = "upload:points"
    at.run()
    ok(at)
    # σ estimators only; the feature column x0 also makes a slice column, so the slice-wise ones (per-slice RMSE
    # on point predictions) are offered too
    assert at.multiselect(key="recal_cals_regression").options == ["constant σ", "k-means σ", "ACCRUE",
                                                                   "std scaling per slice", "Mondrian conformal"]
    assert any("Point predictions only" in i.value for i in at.info)
    at.multiselect(key="recal_cals_regression").set_value(["constant σ", "ACCRUE"]).run()
    next(b for b in at.button if b.label == "Run comparison").click().run()
    ok(at)
    table = at.dataframe[0].value
    assert list(table["calibrator"]) == ["constant σ", "ACCRUE"]  # no uncertainty "before"
    wide = at.session_state["recal_result"]["result"].wide("mean").loc["model"]
    assert wide.loc["ACCRUE", "nll"] < wide.loc["constant σ", "nll"]  # σ(x) grows with |x|: ACCRUE finds it


def test_no_calibrator_disables_run(page):
    page.multiselect(key="recal_cals_regression").set_value([]).run()
    ok(page)
    assert next(b for b in page.button if b.label == "Run comparison").disabled
    assert any("at least one calibrator" in c.value for c in page.caption)


def test_page_is_registered_in_the_app():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    ok(at)
    at.switch_page("pages/recalibrate.py").run()
    ok(at)
    assert at.title[0].value == "Recalibrate"


SEVEN = ["std scaling", "MLE + shift", "isotonic (Kuleshov)", "CRUDE", "split conformal", "σ-binning", "constant σ"]


def test_comparison_is_a_dot_plot_with_a_narrow_table_below(page):
    """Issue 14, point 1: the comparison's main view is a dot plot (one row per metric, best marked, uncalibrated
    as reference) and the table below has one row per calibrator and the chosen metric columns only."""
    from calib_core.evaluation.tables import comparison_summary
    from views.pages import COMPARISON_METRICS

    at = run_random(page, SEVEN, repeats=2)
    result = at.session_state["recal_result"]["result"]
    summary = comparison_summary(result)
    dots = spec_of(at, "recal_dots")
    layout = dots["layout"]
    rows = [layout[k]["ticktext"][0] for k in sorted((k for k in layout if k.startswith("yaxis")),
                                                     key=lambda k: int(k[5:] or 1)) if "ticktext" in layout[k]]
    default = [k for k in pd.unique(summary["metric"]) if k in COMPARISON_METRICS["regression"]]
    labels = dict(zip(summary["metric"], summary["label"]))
    assert [r.rsplit(" ", 1)[0] if r.endswith(("↓", "↑")) else r.split(" →")[0] for r in rows] == [
        labels[k] for k in default]
    # the stars are the summary's best cells, one dot per calibrator per row
    for trace in role_traces(dots, "dots"):
        part = summary[(summary["metric"] == trace["meta"]["metric"]) & (summary["model"] == trace["meta"]["model"])]
        assert trace["meta"]["best"] == list(part.loc[part["best"], "calibrator"])
        assert sorted(trace["meta"]["calibrators"]) == sorted(part["calibrator"][~np.isnan(part["mean"])])
    assert any(t["meta"]["best"] for t in role_traces(dots, "dots"))
    # the uncalibrated predictions as a dashed reference line in every row
    assert sum(1 for sh in layout["shapes"] if sh["line"].get("dash") == "dash") == len(default)
    table = at.dataframe[0].value
    assert list(table["calibrator"]) == ["uncalibrated", *SEVEN]
    # 8 calibrators as rows, not 8 columns (when a mean is inf — isotonic's NLL may be, where a test target falls
    # beyond its truncation — the note saying so is a caption under the table, not a column)
    assert "note" not in table.columns and len(table.columns) == 1 + len(default)
    # the metric picker drives both
    at.multiselect(key="recal_metrics_regression").unselect("sharpness").select("rmse").run()
    ok(at)
    assert "sharpness √mean σ²" not in metric_headers(at.dataframe[0].value)
    assert "RMSE" in metric_headers(at.dataframe[0].value)
    ticks = [v["ticktext"][0] for k, v in spec_of(at, "recal_dots")["layout"].items()
             if k.startswith("yaxis") and "ticktext" in v]
    assert any(t.startswith("RMSE") for t in ticks) and not any(t.startswith("sharpness") for t in ticks)


def test_levi_small_multiples_and_log_axes(page):
    """Issue 14, points 1 and 6: one Levi panel per calibrator (no tangle of 8 curves with error bars) and a log-axes
    toggle that changes every panel's axis type."""
    at = run_random(page, SEVEN, repeats=1)
    levi = spec_of(at, "recal_levi")
    assert [d["name"] for d in role_traces(levi, "bins")] == SEVEN
    assert len({d["xaxis"] for d in role_traces(levi, "bins")}) == len(SEVEN)  # one panel each
    assert levi["layout"]["xaxis"].get("type", "linear") == "linear"
    at.toggle(key="recal_levi_log").set_value(True).run()
    ok(at)
    levi = spec_of(at, "recal_levi")
    axes = [v for k, v in levi["layout"].items() if k.startswith(("xaxis", "yaxis"))]
    assert len(axes) >= 2 * len(SEVEN) and all(a["type"] == "log" for a in axes)
    assert len({tuple(a["range"]) for a in axes}) == 1  # one shared range: the same diagonal in every panel


def slice_table(at: AppTest) -> pd.DataFrame:
    """The per-slice table (the one dataframe with a "slice" column)."""
    return next(d.value for d in at.dataframe if "slice" in d.value.columns)


def _sliced_regression(n: int = 4000, seed: int = 0) -> cc.PredictionSet:
    """σ = 1 predictions whose true noise is 2 in region 'north', 0.5 in 'south' and 1 in the small 'east'."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east"], n, p=[0.45, 0.45, 0.10])
    mu = rng.normal(size=n)
    scale = np.select([region == "north", region == "south"], [2.0, 0.5], 1.0)
    y = mu + scale * rng.standard_normal(n)
    return cc.PredictionSet(task="regression", source="regions.csv", layout="gaussian", y=y,
                            dist=cc.Gaussian(mu, np.ones(n)), group=region, n_read=n)


def test_slice_wise_calibrators_and_the_per_slice_table():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["pset"] = _sliced_regression()
    at.session_state["pset_token"] = "upload:regions"
    at.session_state["pset_name"] = "regions.csv"
    at.run()
    ok(at)
    offered = at.multiselect(key="recal_cals_regression").options
    assert {"std scaling per slice", "Mondrian conformal"} <= set(offered)
    at = run_random(at, ["std scaling", "std scaling per slice", "Mondrian conformal"], repeats=1)
    assert at.selectbox(key="recal_slice_by").value == "group"
    assert at.selectbox(key="recal_slice_metric").value == "coverage_90"
    table = slice_table(at)
    assert list(table.columns) == ["slice", "test rows", "uncalibrated", "std scaling", "std scaling per slice",
                                   "Mondrian conformal"]
    rows = table.set_index("slice")
    assert list(rows.index) == ["(all rows)", "east", "north", "south"]
    assert rows["test rows"].iloc[1:].sum() == rows.loc["(all rows)", "test rows"]
    cov = rows[["uncalibrated", "std scaling", "std scaling per slice", "Mondrian conformal"]].astype(float)
    # the global std scaling leaves the noisy region under-covered and the quiet one over-covered; per slice ≈ 0.9
    assert cov.loc["north", "std scaling"] < 0.8 and cov.loc["south", "std scaling"] > 0.97
    for region in ("north", "south"):
        for cal in ("std scaling per slice", "Mondrian conformal"):
            assert abs(cov.loc[region, cal] - 0.9) < 0.04, (region, cal)
    at.selectbox(key="recal_slice_metric").set_value("z_std").run()
    ok(at)
    z_std = slice_table(at).set_index("slice")
    assert float(z_std.loc["north", "uncalibrated"]) == pytest.approx(2.0, rel=0.1)
    assert float(z_std.loc["north", "std scaling per slice"]) == pytest.approx(1.0, abs=0.08)


def test_slice_column_missing_for_a_calibrator_is_reported():
    """A slice-wise calibrator set to a column that this data lacks fails alone, with the reason."""
    pset = _sliced_regression(n=600)
    res = cc.evaluate(pset, {"m": rcal.MondrianConformal(by="x9"), "s": rcal.StdScaling()})
    assert any("no column 'x9' to slice by" in m for m in res.messages)


def test_classification_offers_temperature_per_slice():
    rng = np.random.default_rng(2)
    n = 3000
    g = rng.choice(["a", "b"], n)
    z = rng.normal(size=(n, 3)) * 2
    t = np.where(g == "a", 0.5, 2.0)
    p = np.exp(z / t[:, None])
    p /= p.sum(axis=1, keepdims=True)
    labels = (np.cumsum(p, axis=1) < rng.random(n)[:, None]).sum(axis=1).clip(0, 2)
    probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    pset = cc.PredictionSet(task="classification", source="g.csv", labels=labels, probs=probs, logits=z,
                            classes=["0", "1", "2"], group=g, n_read=n)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = "upload:g"
    at.run()
    ok(at)
    at = run_random(at, ["temperature scaling", "temperature scaling per slice"], repeats=1, task="classification")
    assert at.selectbox(key="recal_slice_metric").value == "ece"
    at.selectbox(key="recal_slice_metric").set_value("nll").run()
    nll = slice_table(at).set_index("slice")
    for s in ("a", "b"):
        assert float(nll.loc[s, "temperature scaling per slice"]) < float(nll.loc[s, "temperature scaling"])
