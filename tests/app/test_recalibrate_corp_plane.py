"""AppTests of the MCB–DSC plane on the Recalibrate page: one point per model and calibrator at
the core's (MCB, DSC), arrows from the uncalibrated predictions, hostile names escaped, and a click that selects the
model and the calibrator in the views below."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core.data import examples
from calib_core.diagrams import classification_corp as C
from tests.app.test_pages import decode
from tests.app.test_recalibrate import (  # noqa: F401  (captured: a fixture)
    PAGE,
    TIMEOUT,
    captured,
    download,
    ok,
    role_traces,
    run_random,
    spec_of,
)


def _click(at: AppTest, key: str, customdata: list[str]) -> AppTest:
    """Run the page as if the user clicked the plane's point with this customdata (fires its on_select)."""
    chart = next(c for c in at.get("plotly_chart") if c.key == key)
    states = at._tree.get_widget_states()
    event = {"selection": {"points": [{"curve_number": 0, "point_index": 0, "customdata": customdata}],
                           "point_indices": [0], "box": [], "lasso": []}}
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(event)))
    at._run(states)
    ok(at)
    return at


def _two_models() -> cc.PredictionSet:
    d = examples.digits_example()
    logits = np.log(np.clip(d.probs, 1e-12, 1))
    sharp = np.exp(2 * logits)
    sharp /= sharp.sum(axis=1, keepdims=True)
    n = d.labels.size
    names = np.array(["digits <b>base</b>"] * n + ["sharpened"] * n, dtype=object)
    return cc.PredictionSet(task="classification", labels=np.r_[d.labels, d.labels],
                            probs=np.vstack([d.probs, sharp]), model=names)


@pytest.fixture(scope="module")
def plane_page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["pset"] = _two_models()
    at.session_state["pset_token"] = "test:two-digits"
    at.session_state["pset_name"] = "two digits models"
    at.run()
    ok(at)
    at.multiselect(key="recal_cals_classification").set_value(["temperature scaling", "isotonic"]).run()
    at.radio(key="recal_split").set_value("random").run()
    at.number_input(key="recal_repeats").set_value(1).run()
    next(b for b in at.button if b.label == "Run comparison").click().run()
    ok(at)
    return at


def test_plane_points_are_the_cores_decomposition(plane_page):
    at = plane_page
    spec = spec_of(at, "recal_plane")
    points = role_traces(spec, "plane")
    assert [p["name"] for p in points] == ["uncalibrated", "temperature scaling", "isotonic"]
    result = at.session_state["recal_result"]["result"]
    pset = at.session_state["pset"]
    want = C.mcb_dsc_points(pset, result).set_index(["model", "calibrator"])
    for trace in points:
        for (model, cal), x, y in zip(trace["customdata"], decode(trace["x"]), decode(trace["y"])):
            assert x == pytest.approx(want.loc[(model, cal), "mcb"], rel=1e-12)
            assert y == pytest.approx(want.loc[(model, cal), "dsc"], rel=1e-12)
    # by hand for one point: the uncalibrated top-label Brier decomposition on the first trial's test rows
    test = next(s["test"] for s in result.splits if s["trial"] == 0 and s["model"] == "sharpened")
    x, y = C.binary_events(pset.labels[test], pset.probs[test], target="top_label")
    d = C.decompose(x, y)
    assert want.loc[("sharpened", "uncalibrated"), "mcb"] == pytest.approx(d["mcb"], rel=1e-12)
    # recalibration moves the over-confident models left; arrows: 2 per model
    for m in ("digits <b>base</b>", "sharpened"):
        assert want.loc[(m, "temperature scaling"), "mcb"] < want.loc[(m, "uncalibrated"), "mcb"]
    arrows = [a for a in spec["layout"]["annotations"] if a.get("showarrow")]
    assert len(arrows) == 4
    # hover names are escaped (Plotly renders HTML in hover text)
    hover = " ".join(h for t in points for h in t["hovertext"])
    assert "digits &lt;b&gt;base&lt;/b&gt;" in hover and "<b>base</b>" not in hover


def test_click_selects_model_and_calibrator(plane_page):
    at = _click(plane_page, "recal_plane", ["sharpened", "isotonic"])
    assert at.selectbox(key="recal_model").value == "sharpened"
    assert at.selectbox(key="recal_dl_which").value == "isotonic"
    # the picked point is ringed, and the other calibrators are faded in the before/after reliability diagram
    spec = spec_of(at, "recal_plane")
    assert spec["data"][-1]["marker"]["size"] == 22
    lines = role_traces(spec_of(at, "recal_reliability"), "bins")
    assert {d["name"]: d.get("opacity", 1) for d in lines} == {"uncalibrated": 0.2, "temperature scaling": 0.2,
                                                               "isotonic": 1}
    # the user can still choose another model afterwards: the old click is not re-applied
    at.selectbox(key="recal_model").select("digits <b>base</b>").run()
    ok(at)
    assert at.selectbox(key="recal_model").value == "digits <b>base</b>"


def test_plane_is_the_mean_over_trials_and_in_the_page_report(captured):  # noqa: F811
    """Issue 16, point 3 follow-up: with 3 trials every point is the mean of the terms on each trial's test rows
    (by hand for the uncalibrated predictions), with ± one std bars, and the page's HTML report holds the plane."""
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["pset"] = examples.digits_example()
    at.session_state["pset_token"] = "test:digits-3-trials"
    at.session_state["pset_name"] = "digits"
    at.run()
    ok(at)
    at = run_random(at, ["temperature scaling"], repeats=3, task="classification")
    result = at.session_state["recal_result"]["result"]
    pset = at.session_state["pset"]
    assert result.n_trials == 3
    mcb = []
    for s in (s for s in result.splits if s["model"] == "model"):
        x, y = C.binary_events(pset.labels[s["test"]], pset.probs[s["test"]], target="top_label")
        mcb.append(C.decompose(x, y)["mcb"])
    assert len(mcb) == 3 and np.ptp(mcb) > 0  # the trials differ
    spec = spec_of(at, "recal_plane")
    base = next(t for t in role_traces(spec, "plane") if t["name"] == "uncalibrated")
    assert decode(base["x"])[0] == pytest.approx(np.mean(mcb), rel=1e-12)
    assert decode(base["error_x"]["array"])[0] == pytest.approx(np.std(mcb, ddof=1), rel=1e-9)
    assert "mean over 3 trials" in base["hovertext"][0]
    report = download(at, captured, "recal_dl_report")
    assert "MCB–DSC plane" in report and "mean over 3 trials" in report
