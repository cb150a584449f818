"""AppTest (headless) tests of the Data, Regression, Classification and Help pages.

Plotly selections are driven through the same path a browser selection takes: the chart's widget state
(the JSON Streamlit's frontend sends, ``{"selection": {"points": [...]}}``) is delivered with the next
run, so Streamlit deserialises it and fires the page's ``on_select`` callback.  AppTest has no public API
for that, so :func:`plotly_select` appends a ``WidgetState`` to the widget states of the run (private
``AppTest._tree`` / ``AppTest._run``; see ../shared/recipes/streamlit-testing/NOTES.md §4.1).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from calib_core.data import examples, templates
from views.selection import BinSelection

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 180
LEVI = "Levi et al. §4.1 synthetic — true σ vs random σ"
DIABETES = "Diabetes — Gaussian (mean, std) of a boosting ensemble"
DIGITS = "Digits — over-confident classifier (10 classes, logits)"
CANCER = "Breast cancer — binary classifier (logit of malignant)"


# ------------------------------------------------------------------------------------------- helpers
def new_app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    return at


def load_example(at: AppTest, name: str) -> AppTest:
    at.switch_page("pages/data.py").run()
    at.selectbox(key="data_example").select(name).run()
    at.button(key="data_load_example").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["pset_name"] == name
    return at


def upload(at: AppTest, name: str, data: bytes, mime: str = "text/csv") -> AppTest:
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload").upload(name, data, mime).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def specs(at: AppTest) -> dict[str, dict]:
    """Figure JSON of every plotly chart, by widget key — ``st.plotly_chart`` or ``dashboard.live_chart`` (a component
    whose data is the figure's JSON and its key)."""
    out = {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    for c in at.get("bidi_component"):
        if c.proto.component_name == "calab_live_chart":
            data = json.loads(c.proto.json)
            out[data["key"]] = json.loads(data["spec"])
    return out


def open_tab(at: AppTest, key: str, label: str) -> AppTest:
    """Open the tab ``label`` of the lazy tabs ``key`` (as a click on it does) and rerun: only the open tab is drawn."""
    at.session_state[key] = label
    return at.run()


def plotly_select(at: AppTest, chart_key: str, points: list[dict]) -> AppTest:
    """Run the app as if the user selected ``points`` in chart ``chart_key`` (fires its on_select callback)."""
    chart = next(c for c in at.get("plotly_chart") if c.key == chart_key)
    states = at._tree.get_widget_states()
    event = {"selection": {"points": points, "point_indices": [p.get("point_index", 0) for p in points],
                           "box": [], "lasso": []}}
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(event)))
    at._run(states)
    assert not at.exception, [e.value for e in at.exception]
    return at


def bins_points(spec: dict, name: str, bins: list[int], role: str = "bins") -> list[dict]:
    """Plotly points (curve_number, point_index, customdata) of the given bins of trace ``name``."""
    curve, trace = next((i, d) for i, d in enumerate(spec["data"])
                        if d.get("meta", {}).get("name") == name and d["meta"].get("role") == role)
    cd = decode(trace["customdata"])
    return [{"curve_number": curve, "point_index": int(i), "point_number": int(i), "customdata": int(cd[i])}
            for i in range(len(cd)) if int(cd[i]) in bins]


def decode(value) -> np.ndarray:
    """Plotly 7 encodes numpy arrays as base64 typed arrays ({"dtype", "bdata"})."""
    if isinstance(value, dict) and "bdata" in value:
        import base64

        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    return np.asarray(value)


def markdown_text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def table(at: AppTest, *columns: str) -> pd.DataFrame:
    """The first table on the page having all ``columns``: a metric table shown as one dataframe per family
    (calibration statistics, proper scores, descriptive) is put back together — every dataframe that follows
    the first match and has the ``metric`` column, up to the next one without it."""
    frames = [d.value for d in at.dataframe]
    for i, frame in enumerate(frames):
        if set(columns) <= set(frame.columns):
            parts = [frame]
            if "metric" in frame.columns:
                for more in frames[i + 1:]:
                    if "metric" not in more.columns or "test" in more.columns:  # the tests expander ends it
                        break
                    parts.append(more)
            return pd.concat(parts, ignore_index=True) if len(parts) > 1 else frame
    raise AssertionError(f"no dataframe with columns {columns}: {[list(d.value.columns) for d in at.dataframe]}")


@pytest.fixture(scope="module")
def app() -> AppTest:
    return new_app()


# ------------------------------------------------------------------------------------------- Data page
def test_data_page_loads_every_example(app):
    at = app
    for name in ("Diabetes — 9 quantiles of the same ensemble", "Diabetes — 50 ensemble samples", LEVI, DIGITS, CANCER,
                 DIABETES):
        load_example(at, name)
        pset = at.session_state["pset"]
        assert at.session_state["pset_token"] == f"example:{name}"
        assert not at.error
        assert [m.value for m in at.metric][:3] == [f"{pset.n_read:,}", f"{pset.n_rows:,}", "0"]
        assert any(name in m.value for m in at.markdown)  # the summary names the data
    assert at.session_state["pset"].layout == "gaussian"
    assert len(at.get("download_button")) == len(templates.TEMPLATES)


def test_upload_counts_dropped_rows():
    at = new_app()
    frame = examples.diabetes_frame().head(60).copy()
    frame.loc[[3, 7], "std"] = -1.0  # σ ≤ 0
    frame.loc[11, "y"] = np.nan
    upload(at, "preds.csv", csv_bytes(frame))
    pset = at.session_state["pset"]
    assert pset.n_rows == 57 and at.session_state["pset_name"] == "preds.csv"
    assert at.session_state["pset_token"].startswith("upload:")
    assert [m.value for m in at.metric][:3] == ["60", "57", "3"]
    dropped = table(at, "reason", "count")
    assert dropped["count"].sum() == 3 and dropped["rows"].str.contains("4").any()  # 1-based row numbers


def test_broken_upload_shows_the_loaders_message_and_keeps_the_data():
    at = load_example(new_app(), DIABETES)
    upload(at, "broken.csv", b"\x00\x01\x02garbage\xff\xfe" * 50)
    assert at.error and "broken.csv" in at.error[0].value
    assert at.session_state["pset_name"] == DIABETES  # previous data kept
    assert any("previously loaded data" in c.value for c in at.caption)
    at.switch_page("pages/regression.py").run()  # the app stays usable
    assert not at.exception and not at.error and at.title[0].value == "Regression diagnostics"


def test_column_mapping_when_guessing_fails():
    at = new_app()
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"truth_value": rng.normal(size=50), "guess": rng.normal(size=50),
                          "spread": rng.uniform(0.5, 2, 50), "fold": np.repeat(["cal", "test"], 25)})
    upload(at, "odd.csv", csv_bytes(frame))
    assert at.error and "odd.csv" in at.error[0].value and "target" in at.error[0].value
    assert "pset" not in at.session_state
    at.selectbox(key="data_map_y").select("truth_value")
    at.selectbox(key="data_map_mean").select("guess")
    at.selectbox(key="data_map_kind").select("std").run()
    at.selectbox(key="data_map_spread").select("spread")
    at.selectbox(key="data_map_split").select("fold")
    at.button(key="data_map_apply").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    pset = at.session_state["pset"]
    assert pset.layout == "gaussian" and pset.n_rows == 50
    np.testing.assert_allclose(pset.dist.std(), frame["spread"])
    np.testing.assert_allclose(pset.y, frame["truth_value"])
    assert set(pset.split) == {"cal", "test"}


def test_classification_mapping():
    at = new_app()
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(3), size=40)
    frame = pd.DataFrame({"gold": rng.integers(0, 3, 40), "s0": p[:, 0], "s1": p[:, 1], "s2": p[:, 2]})
    upload(at, "scores.csv", csv_bytes(frame))
    assert at.error  # neither a label nor prob_* columns are recognisable
    at.segmented_control(key="data_map_task").set_value("classification").run()
    at.selectbox(key="data_map_label").select("gold")
    at.multiselect(key="data_map_scores").select("s0").select("s1").select("s2")
    at.button(key="data_map_apply").click().run()
    assert not at.error, [e.value for e in at.error]
    pset = at.session_state["pset"]
    assert pset.task == "classification" and pset.probs.shape == (40, 3)
    np.testing.assert_allclose(pset.probs, p)


# ------------------------------------------------------------------------------------------- Regression
@pytest.fixture(scope="module")
def levi_app() -> AppTest:
    at = load_example(new_app(), LEVI)
    at.switch_page("pages/regression.py").run()
    at.selectbox(key="reg_resamples").select(200).run()
    at.selectbox(key="reg_sims").select(1000).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def levi_bins_trace(spec: dict, name: str) -> dict:
    return next(d for d in spec["data"] if d.get("meta", {}).get("name") == name and d["meta"]["role"] == "bins")


def test_regression_page_draws_every_lens_with_one_colour_per_model(levi_app):
    at = levi_app
    s = specs(at)
    assert {"reg_levi_chart", "reg_kuleshov", "reg_pit", "reg_z", "reg_intervals"} <= set(s)
    assert "reg_qq" not in s  # a closed tab is not drawn (lazy tabs)
    assert "reg_qq" in specs(open_tab(at, "reg_more_tab", "Q-Q plot"))
    open_tab(at, "reg_more_tab", "Intervals")
    for key in ("reg_levi_chart", "reg_kuleshov"):
        names = [d["name"] for d in s[key]["data"] if d.get("meta", {}).get("role") in ("bins", "curve")]
        assert names == ["true sigma", "random sigma"]
    colors = {d["name"]: d["line"]["color"] for d in s["reg_levi_chart"]["data"] if d.get("meta", {}).get("name")}
    assert colors["true sigma"] != colors["random sigma"]
    assert all(len(json.dumps(v)) < 100_000 for v in s.values())
    t = table(at, "metric", "95% CI", "perfectly calibrated", "p-value", "verdict")
    ence = t[t["metric"] == "ENCE (Levi)"].set_index("model")
    assert ence.loc["random sigma", "value"] == pytest.approx(0.84, abs=0.03)
    assert ence.loc["random sigma", "verdict"] == "rejected (Holm)"
    assert ence.loc["true sigma", "verdict"] == "not significant"
    # one sentence per model above the table: the true-σ model calibrated, the random-σ one not
    said = [e.value for e in at.success] + [e.value for e in at.warning]
    assert any(v.startswith("**true sigma** — No evidence of miscalibration") for v in said), said
    assert any(v.startswith("**random sigma** — Under-confident") for v in said), said
    assert "No σ-bins selected" in markdown_text(at)


def test_regression_controls(levi_app):
    at = levi_app
    at.slider(key="reg_n_bins").set_value(10).run()
    assert len(decode(levi_bins_trace(specs(at)["reg_levi_chart"], "true sigma")["customdata"])) == 10
    at.segmented_control(key="reg_binning").set_value("equal width").run()
    assert not at.exception
    assert at.session_state["pset"].n_rows == 20_000
    at.selectbox(key="reg_resamples").select(0).run()
    t = table(at, "metric", "95% CI")
    assert (t["95% CI"] == "[–, –]").all()
    at.selectbox(key="reg_sims").select(0).run()
    t = table(at, "metric", "value", "95% CI")  # no null draws: no reference, p-value or verdict columns
    assert "perfectly calibrated" not in t.columns and "verdict" not in t.columns and "p-value" not in t.columns
    at.selectbox(key="reg_rows").select("test").run()
    assert at.get("plotly_chart") and not at.exception
    at.multiselect(key="reg_models").unselect("true sigma").run()
    names = [d["name"] for d in specs(at)["reg_levi_chart"]["data"] if d.get("meta", {}).get("role") == "bins"]
    assert names == ["random sigma"]
    assert "model" not in table(at, "metric", "value").columns
    # back to the defaults for the next tests
    at.multiselect(key="reg_models").select("true sigma")
    at.selectbox(key="reg_rows").select("all")
    at.segmented_control(key="reg_binning").set_value("equal count")
    at.slider(key="reg_n_bins").set_value(15)
    at.selectbox(key="reg_resamples").select(200)
    at.selectbox(key="reg_sims").select(1000).run()
    assert not at.exception


def test_levi_log_axes_toggle(levi_app):
    """Issue 14, point 6: log axes spread σ-bins of different scales; the identity line and the selection stay."""
    at = levi_app
    linear = specs(at)["reg_levi_chart"]["layout"]
    assert linear["xaxis"].get("type", "linear") == "linear"
    at.toggle(key="reg_levi_log").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    spec = specs(at)["reg_levi_chart"]
    assert spec["layout"]["xaxis"]["type"] == spec["layout"]["yaxis"]["type"] == "log"
    assert spec["layout"]["xaxis"]["range"] == spec["layout"]["yaxis"]["range"]
    assert any(d.get("meta", {}).get("role") == "reference" for d in spec["data"])
    plotly_select(at, "reg_levi_chart", bins_points(spec, "random sigma", [3]))
    assert at.session_state["reg_sel"].bins == {"random sigma": (3,)}
    at.toggle(key="reg_levi_log").set_value(False).run()
    assert specs(at)["reg_levi_chart"]["layout"]["xaxis"].get("type", "linear") == "linear"
    assert at.session_state["reg_sel"].bins == {"random sigma": (3,)}  # the axes are a view, not a new binning
    at.button(key="reg_clear").click().run()
    assert at.session_state["reg_sel"].empty


def test_levi_selection_recomputes_the_linked_views(levi_app):
    at = levi_app
    before = table(at, "metric", "value")
    spec = specs(at)["reg_levi_chart"]
    plotly_select(at, "reg_levi_chart", bins_points(spec, "random sigma", [0, 1, 2]))
    text = markdown_text(at)
    assert "2,000 rows selected from σ-bins 1–3 of 15 (random sigma)" in text  # numbered from 1, as the hovers
    sel: BinSelection = at.session_state["reg_sel"]
    assert sel.bins == {"random sigma": (0, 1, 2)}
    s = specs(at)
    # the conditional curves are drawn over the overall ones, dashed
    curves = [d for d in s["reg_kuleshov"]["data"] if d.get("meta", {}).get("role") == "curve"]
    assert [c["name"] for c in curves][-1] == "random sigma · selected" and curves[-1]["line"]["dash"] == "dash"
    assert any(d["name"] == "random sigma · selected" for d in s["reg_pit"]["data"])
    # the metric table now compares the selection with all rows, and the numbers differ
    t = table(at, "metric", "selection", "all rows")
    assert set(t["model"]) == {"random sigma"}
    shp = t.set_index("metric").loc["sharpness √mean σ²"]
    assert shp["selection"] < 0.7 * shp["all rows"]  # the three smallest-σ bins of σ ~ U[1, 10]
    assert shp["all rows"] == pytest.approx(before[(before["metric"] == "sharpness √mean σ²")
                                                   & (before["model"] == "random sigma")]["value"].iloc[0])
    # shift-click adds: plotly sends the accumulated points
    plotly_select(at, "reg_levi_chart", bins_points(spec, "random sigma", [0, 1, 2])
                  + bins_points(spec, "true sigma", [14]))
    assert at.session_state["reg_sel"].bins == {"random sigma": (0, 1, 2), "true sigma": (14,)}
    assert "σ-bin 15 of 15 (true sigma)" in markdown_text(at)
    # an unrelated control keeps the selection …
    at.selectbox(key="reg_resamples").select(500).run()
    assert at.session_state["reg_sel"].bins == {"random sigma": (0, 1, 2), "true sigma": (14,)}
    assert "rows selected" in markdown_text(at)
    # … and the Levi figure draws it (selected bins marked through selectedpoints)
    tr = levi_bins_trace(specs(at)["reg_levi_chart"], "random sigma")
    assert tr["selectedpoints"] == [0, 1, 2]
    # changing the bins resets it
    at.slider(key="reg_n_bins").set_value(12).run()
    assert at.session_state["reg_sel"].empty and "No σ-bins selected" in markdown_text(at)
    at.slider(key="reg_n_bins").set_value(15).run()
    plotly_select(at, "reg_levi_chart", bins_points(specs(at)["reg_levi_chart"], "true sigma", [7]))
    assert "rows selected" in markdown_text(at)
    # Clear
    at.button(key="reg_clear").click().run()
    assert at.session_state["reg_sel"].empty and "No σ-bins selected" in markdown_text(at)
    assert at.session_state["reg_sync"]["epoch"] >= 1
    assert "selection" not in table(at, "metric", "value").columns


def test_regression_group_selector_and_point_only_file():
    at = new_app()
    upload(at, "multi.csv", templates.template_csv("multi_model", n_rows=400))
    at.switch_page("pages/regression.py").run()
    at.selectbox(key="reg_resamples").select(0).run()
    assert at.selectbox(key="reg_group").options == ["(all rows)", "small x", "large x"]
    at.selectbox(key="reg_group").select("large x").run()
    assert not at.exception and not at.error
    upload(at, "point.csv", templates.template_csv("point"))
    at.switch_page("pages/regression.py").run()
    assert any("point predictions only" in w.value for w in at.warning)
    assert set(table(at, "metric", "value")["metric"]) == {"RMSE", "MAE"}


# ------------------------------------------------------------------------------------------- Classification
@pytest.fixture(scope="module")
def digits_app() -> AppTest:
    at = load_example(new_app(), DIGITS)
    at.switch_page("pages/classification.py").run()
    at.selectbox(key="cls_resamples").select(200).run()
    at.selectbox(key="cls_sims").select(1000).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_classification_page_tables_and_figures(digits_app):
    at = digits_app
    s = specs(at)
    assert {"cls_rel_chart", "cls_hist_chart", "cls_per_class"} <= set(s)
    rel_roles = [d.get("meta", {}).get("role") for d in s["cls_rel_chart"]["data"]]
    assert rel_roles == ["reference", "bars", "gap", "column"]  # the clickable column over each bin
    t = table(at, "metric", "value", "95% CI", "perfectly calibrated", "p-value", "verdict").set_index("metric")
    # the registry's order within each family: calibration statistics first, then the proper scores
    assert list(t.index[:3]) == ["ECE", "smooth ECE", "MCE"]  # smooth ECE next to the binned one
    assert [m for m in t.index if m in ("NLL", "Brier")] == ["NLL", "Brier"]
    assert list(t.index).index("NLL") > list(t.index).index("class-wise ECE")
    assert t.loc["ECE", "verdict"] == "rejected (Holm)" and t.loc["ECE", "value"] == pytest.approx(0.0508, abs=2e-3)
    assert any(w.value.startswith("Over-confident") for w in at.warning), [w.value for w in at.warning]
    assert "Top-label reliability" in markdown_text(at)
    per_class = table(at, "class →")
    assert list(per_class["class →"]) == ["frequency", "mean predicted probability", "one-vs-rest ECE"]
    assert at.segmented_control(key="cls_target").disabled  # not a binary file


def test_classification_controls(digits_app):
    at = digits_app
    at.slider(key="cls_n_bins").set_value(10).run()
    cd = decode(specs(at)["cls_hist_chart"]["data"][0]["customdata"])
    assert len(cd) == 10
    at.segmented_control(key="cls_strategy").set_value("equal mass").run()
    hist = specs(at)["cls_hist_chart"]["data"][0]
    share = decode(hist["y"])
    # equal-mass bins hold ~10% of the rows each (ties at confidence 1.0 can merge the top two bins)
    assert share.sum() == pytest.approx(100) and np.sum(np.abs(share - 10) < 1) >= 8
    at.segmented_control(key="cls_hist_scale").set_value("log").run()
    layout = specs(at)["cls_hist_chart"]["layout"]
    assert layout["yaxis"]["type"] == "log" and layout["yaxis2"].get("type", "linear") == "linear"
    at.selectbox(key="cls_rows").select("cal").run()
    assert not at.exception
    at.selectbox(key="cls_rows").select("all")
    at.segmented_control(key="cls_hist_scale").set_value("linear")
    at.segmented_control(key="cls_strategy").set_value("equal width")
    at.slider(key="cls_n_bins").set_value(15).run()
    assert not at.exception


def test_reliability_selection_links_histogram_breakdown_and_rows(digits_app):
    at = digits_app
    spec = specs(at)["cls_rel_chart"]
    plotly_select(at, "cls_rel_chart", bins_points(spec, "model", [13], role="bars"))
    assert at.session_state["cls_sel"].bins == {"model": (13,)}
    assert "14 rows selected from confidence bin 14 of 15." in markdown_text(at)
    # the histogram highlights the same bin
    hist = specs(at)["cls_hist_chart"]["data"][0]
    assert [int(decode(hist["customdata"])[i]) for i in hist["selectedpoints"]] == [13]
    rows = table(at, "row", "label", "predicted", "confidence", "correct")
    assert len(rows) == 14 and rows["confidence"].between(13 / 15, 14 / 15).all()
    breakdown = table(at, "class", "predicted", "accuracy", "mean confidence", "gap")
    assert breakdown["predicted"].sum() == 14
    assert breakdown["true"].sum() == 14
    pset = at.session_state["pset"]
    conf = pset.probs.max(axis=1)
    in_bin = (conf > 13 / 15) & (conf <= 14 / 15)
    assert rows["correct"].mean() == pytest.approx(np.mean(pset.labels[in_bin] == pset.probs[in_bin].argmax(1)))
    # selecting in the histogram (the other chart) works the same way, and box selections add bins
    spec_h = specs(at)["cls_hist_chart"]
    plotly_select(at, "cls_hist_chart", bins_points(spec_h, "model", [12, 13, 14], role="hist"))
    assert at.session_state["cls_sel"].bins == {"model": (12, 13, 14)}
    assert "selected from confidence bins 13–15 of 15." in markdown_text(at)
    assert len(table(at, "row", "label", "predicted")) == 200  # first 200 rows of the selection
    at.button(key="cls_clear").click().run()
    assert at.session_state["cls_sel"].empty and "No bins selected" in markdown_text(at)


def test_binary_positive_class_semantics():
    at = load_example(new_app(), CANCER)
    at.switch_page("pages/classification.py").run()
    at.selectbox(key="cls_resamples").select(0).run()
    assert not at.segmented_control(key="cls_target").disabled
    assert "Top-label reliability** (binary)" in markdown_text(at)
    at.segmented_control(key="cls_target").set_value("positive class").run()
    assert "Positive-class reliability" in markdown_text(at) and "malignant" in markdown_text(at)
    spec = specs(at)["cls_rel_chart"]
    assert "positive class" in spec["layout"]["xaxis"]["title"]["text"]
    metrics = set(table(at, "metric", "value")["metric"])
    assert {"ECE (positive class)", "MCE (positive class)"} <= metrics
    plotly_select(at, "cls_rel_chart", bins_points(spec, "model", [0], role="bars"))
    rows = table(at, "row", "label", "P(malignant)")
    assert (rows["P(malignant)"] <= 1 / 15).all()


# ------------------------------------------------------------------------------------------- without data / Help
def test_pages_without_data_offer_the_data_page_and_an_example():
    at = new_app()
    at.switch_page("pages/classification.py").run()
    assert at.info and "No data loaded" in at.info[0].value
    at.button(key="load_default_classification").click().run()
    assert at.session_state["pset_name"] == DIGITS and not at.exception
    at.switch_page("pages/regression.py").run()  # classification data on the regression page
    assert at.warning and "classification" in at.warning[0].value
    at.button(key="load_default_regression").click().run()
    assert at.session_state["pset"].task == "regression" and at.title[0].value == "Regression diagnostics"


def test_help_page_lists_every_metric_with_formula_and_paper():
    at = new_app()
    at.switch_page("pages/help.py").run()
    assert not at.exception
    reg, cls = at.table[0].value, at.table[1].value
    assert {"ENCE (Levi)", "calibration RMSE", "PIT entropy", "reliability score RS", "CRPS"} <= set(reg["metric"])
    assert {"ECE", "MCE", "NLL", "Brier", "class-wise ECE"} <= set(cls["metric"])
    for t in (reg, cls):
        assert (t["formula"].str.len() > 5).all() and (t["how to read it"].str.len() > 5).all()
    assert reg.set_index("metric").loc["ENCE (Levi)", "paper"].startswith("Levi et al. 2019")
    assert cls.set_index("metric").loc["ECE", "paper"].startswith("Guo et al. 2017")
    text = markdown_text(at)
    for title in ("Levi reliability diagram", "Quantile calibration curve", "PIT histogram",
                  "Classification reliability diagram", "Confidence histogram", "Per-class reliability"):
        assert title in text


def test_home_links_to_the_data_page(app):
    at = app
    at.switch_page("pages/home.py").run()
    links = [e.proto.page for e in at.get("page_link")]
    assert any("data" in str(p) for p in links)


def test_home_example_opens_on_the_regression_page():
    at = new_app()
    at.segmented_control(key="home_rows").set_value("test").run()
    at.button(key="home_explore").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["pset_name"] == DIABETES and at.session_state["reg_rows"] == "test"
    assert at.title[0].value == "Regression diagnostics"
    assert at.selectbox(key="reg_rows").value == "test"


def test_renormalise_option_reloads_the_upload():
    at = new_app()
    p = np.random.default_rng(2).dirichlet(np.ones(3), size=30) * 1.05  # rows sum to 1.05
    frame = pd.DataFrame({"label": np.arange(30) % 3, "prob_0": p[:, 0], "prob_1": p[:, 1], "prob_2": p[:, 2]})
    upload(at, "unnormalised.csv", csv_bytes(frame))
    assert at.error and "renormal" in at.error[0].value.lower()
    at.checkbox(key="data_renormalize").check().run()
    assert not at.error, [e.value for e in at.error]
    pset = at.session_state["pset"]
    np.testing.assert_allclose(pset.probs.sum(axis=1), 1.0)
    assert at.session_state["pset_token"].endswith(":1")  # the option is part of the data token


def test_classification_with_two_models_overlays_and_selects_per_model():
    at = new_app()
    d = examples.digits_example()
    tempered = np.exp(d.logits / 4.0)
    tempered /= tempered.sum(axis=1, keepdims=True)
    frames = [pd.DataFrame(probs, columns=[f"prob_{k}" for k in range(10)]).assign(label=d.labels, model=name)
              for name, probs in (("raw", d.probs), ("T = 4", tempered))]
    upload(at, "two_models.csv", csv_bytes(pd.concat(frames, ignore_index=True)))
    at.switch_page("pages/classification.py").run()
    at.selectbox(key="cls_resamples").select(0).run()
    s = specs(at)
    lines = [d_ for d_ in s["cls_rel_chart"]["data"] if d_.get("meta", {}).get("role") == "bins"]
    assert [ln["name"] for ln in lines] == ["raw", "T = 4"] and lines[0]["line"]["color"] != lines[1]["line"]["color"]
    rows = table(at, "model", "metric", "value")
    ece = rows[rows["metric"] == "ECE"].set_index("model")["value"]
    assert ece["T = 4"] < ece["raw"]
    points = bins_points(s["cls_rel_chart"], "T = 4", [12, 13])
    plotly_select(at, "cls_rel_chart", points)
    assert at.session_state["cls_sel"].bins == {"T = 4": (12, 13)}
    assert "confidence bins 13–14 of 15 (T = 4)" in markdown_text(at)
    breakdown = table(at, "class", "predicted", "accuracy", "gap")
    assert "model" not in breakdown.columns or set(breakdown["model"]) == {"T = 4"}
    rows = table(at, "row", "model", "label", "predicted")
    assert set(rows["model"]) == {"T = 4"} and rows["confidence"].between(12 / 15, 14 / 15).all()
    # an unrelated control keeps the selection; the histogram shows it on the same model only
    at.segmented_control(key="cls_hist_scale").set_value("log").run()
    assert at.session_state["cls_sel"].bins == {"T = 4": (12, 13)}
    hist = [d_ for d_ in specs(at)["cls_hist_chart"]["data"] if d_.get("meta", {}).get("role") == "hist"]
    assert hist[0]["selectedpoints"] == [] and len(hist[1]["selectedpoints"]) == 2
    at.selectbox(key="cls_per_class_model").select("T = 4").run()
    assert not at.exception
