"""The Compare models page in AppTest: its empty state (and the example hub it loads), its controls, the sentences,
both figures, the table and the download, and the way to a model's diagnosis (a button, a click on a point)."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.base.predictions import PredictionSet
from tests.app.test_pages import decode, new_app, plotly_select, specs
from tests.hub_synthetic import synthetic_hub
from views.pages import md_escape


def _with(at, pset, token="cmp-test"):
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = token
    at.session_state["pset_name"] = "synthetic hub"
    at.session_state["pset_origin"] = "upload"
    at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _table(at):
    return next(d.value for d in at.dataframe if "vs baseline" in d.value.columns)


def test_empty_state_says_why_and_loads_the_example_hub():
    at = new_app()
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert "No data loaded" in " ".join(i.value for i in at.info)
    assert not at.get("plotly_chart")
    at.button(key="cmp_load_example").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = _table(at)
    assert sorted(table["model"]) == ["team1-calibrated", "team2-narrow", "team3-biased", "team4-wide"]
    assert at.selectbox(key="cmp_baseline").value == "team1-calibrated"  # no model named like a baseline: the first
    assert set(table["units"]) == {384}  # 8 locations × 12 rounds × 4 horizons, all forecast by every model


def test_one_model_is_nothing_to_compare():
    pset = synthetic_hub(n_locations=2, n_dates=2)
    pset = pset.take(pset.model == pset.models()[0])
    at = _with(new_app(), pset, "one-model")
    assert "one model" in " ".join(i.value for i in at.info)


@pytest.fixture(scope="module")
def cmp_app():
    return _with(new_app(), synthetic_hub(n_locations=4, n_dates=5))


def test_page_shows_sentences_figures_table_and_download(cmp_app):
    at = cmp_app
    table = _table(at)
    assert {"model", "units", "mean WIS", "relative WIS", "95% interval", "p (Holm)", "vs baseline", "in MCS"} <= set(
        table.columns)
    assert {"cmp_skill_chart", "cmp_pairwise"} <= set(specs(at))
    text = " ".join(m.value for m in at.markdown)
    assert "of the baseline" in text  # the core's sentences
    assert "α = 0.05" in " ".join(c.value for c in at.caption)
    assert at.selectbox(key="cmp_cluster").value == "auto"
    assert at.selectbox(key="cmp_score").disabled  # quantile forecasts: WIS only
    assert at.session_state["page_run_ms"]["compare"] > 0
    assert any(b.key == "cmp_download" for b in at.get("download_button"))


def test_baseline_and_resampling_controls_recompute(cmp_app):
    at = cmp_app
    other = [m for m in at.selectbox(key="cmp_baseline").options if m != at.selectbox(key="cmp_baseline").value][0]
    at.selectbox(key="cmp_baseline").set_value(other).run()
    assert not at.exception, [e.value for e in at.exception]
    table = _table(at)
    assert table.set_index("model").loc[other, "vs baseline"] == "baseline"
    at.selectbox(key="cmp_cluster").set_value("none").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="cmp_block").disabled  # independent rows: no blocks
    at.selectbox(key="cmp_cluster").set_value("reference_date").run()
    assert not at.exception and not at.selectbox(key="cmp_block").disabled
    at.selectbox(key="cmp_block").set_value(2).run()
    assert not at.exception, [e.value for e in at.exception]
    assert md_escape("moving blocks of 2 consecutive reference_date") in " ".join(c.value for c in at.caption)
    at.selectbox(key="cmp_block").set_value(8).run()  # longer than the 5 rounds: the core's message, no crash
    assert not at.exception
    assert "Could not compare" in " ".join(e.value for e in at.error)
    at.selectbox(key="cmp_block").set_value("whole").run()
    assert not at.error


def test_the_button_opens_the_model_on_the_regression_page():
    at = _with(new_app(), synthetic_hub(n_locations=3, n_dates=3), "open-test")
    model = at.selectbox(key="cmp_open_model").options[-1]
    at.selectbox(key="cmp_open_model").set_value(model).run()
    at.button(key="cmp_open_button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Regression diagnostics" in [t.value for t in at.title]
    assert at.multiselect(key="reg_models").value == [model]


def test_a_click_on_a_point_opens_the_model_on_the_regression_page():
    at = _with(new_app(), synthetic_hub(n_locations=3, n_dates=3), "click-test")
    spec = specs(at)["cmp_skill_chart"]
    curve, trace = next((i, d) for i, d in enumerate(spec["data"]) if d.get("meta", {}).get("name") == "model")
    code = int(decode(trace["customdata"])[0])
    drawn = trace["y"][0]  # the model of that point, as the plot names it (plain names here)
    at = plotly_select(at, "cmp_skill_chart", [{"curve_number": curve, "point_index": 0, "point_number": 0,
                                                "customdata": code}])
    assert "Regression diagnostics" in [t.value for t in at.title]
    assert at.multiselect(key="reg_models").value == [drawn]


def _two_classifiers(names=("*bold*", "[x](http://e)")):
    rng = np.random.default_rng(0)
    n = 300
    labels = rng.integers(0, 2, n)
    p_good = np.clip(0.5 + 0.35 * (2 * labels - 1) + rng.normal(0, 0.1, n), 0.02, 0.98)
    p_bad = np.full(n, 0.5)
    probs = np.r_[np.c_[1 - p_good, p_good], np.c_[1 - p_bad, p_bad]]
    return PredictionSet(task="classification", labels=np.r_[labels, labels], probs=probs, classes=["no", "yes"],
                         model=np.repeat(np.array(names), n))


def test_classifiers_are_compared_by_brier_or_log_score_and_open_on_the_classification_page():
    names = ("*bold*", "[x](http://e)")
    at = _with(new_app(), _two_classifiers(names), "cls-test")
    assert at.selectbox(key="cmp_score").options == ["Brier score", "log score"]
    assert not at.selectbox(key="cmp_score").disabled
    text = " ".join(m.value for m in at.markdown)
    assert md_escape(names[0]) in text and "*bold*" not in text  # the core's sentences, escaped
    assert _table(at).set_index("model")["vs baseline"].to_dict() == {names[0]: "baseline", names[1]: "worse"}
    at.selectbox(key="cmp_score").set_value("log").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "mean log score" in _table(at).columns
    at.selectbox(key="cmp_open_model").set_value(names[1]).run()
    at.button(key="cmp_open_button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Classification diagnostics" in [t.value for t in at.title]
    assert at.multiselect(key="cls_models").value == [names[1]]


def test_the_real_example_hub_starts_from_its_baseline_and_says_it_has_few_rounds(real_data_dir):
    import calib_core as cc

    hub = real_data_dir / "hubverse_simple_forecast_hub"
    if not hub.is_dir():
        pytest.skip("the example hub is not in the real data folder")
    pset = cc.load_predictions(str(hub), truth=str(hub / "target-data" / "covid-hospitalizations.csv"))
    at = _with(new_app(), pset, "real-hub")
    assert at.selectbox(key="cmp_baseline").value == "simple_hub-baseline"
    table = _table(at)
    assert table["model"].tolist() == ["UMass-ar", "UMass-gbq", "simple_hub-baseline"]
    assert table["relative WIS"].tolist() == ["0.677", "0.863", "1.00"]
    assert table["vs baseline"].tolist() == ["not distinguishable", "not distinguishable", "baseline"]
    captions = " ".join(c.value for c in at.caption)
    assert "only 3 reference" in captions and "unreliable" in captions


def test_gaussians_by_crps_draw_the_plots_and_by_a_negative_log_score_say_why_not():
    from calib_core.base.regression import Gaussian

    rng = np.random.default_rng(0)
    n = 200
    y = rng.normal(0, 0.1, n)
    pset = PredictionSet(task="regression", layout="gaussian", y=np.r_[y, y],
                         dist=Gaussian(np.zeros(2 * n), np.r_[np.full(n, 0.1), np.full(n, 0.3)]),
                         model=np.repeat(np.array(["sharp", "wide"]), n))
    at = _with(new_app(), pset, "gauss-test")
    assert at.selectbox(key="cmp_score").value == "crps"
    assert at.selectbox(key="cmp_cluster").value == "auto" and at.selectbox(key="cmp_block").disabled
    assert {"cmp_skill_chart", "cmp_pairwise"} <= set(specs(at))
    assert _table(at).set_index("model")["vs baseline"].to_dict() == {"sharp": "baseline", "wide": "worse"}
    at.selectbox(key="cmp_score").set_value("log").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.get("plotly_chart")
    assert "No relative scores to draw" in " ".join(i.value for i in at.info)
    table = _table(at)
    assert table["model"].tolist() == ["sharp", "wide"]  # by mean log score
    assert table.set_index("model").loc["wide", "vs baseline"] == "worse"
