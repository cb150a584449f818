"""AppTest of the clinical lab (pages/lab_clinical.py) and of the Classification page's clinical parts: the
smoothed (loess) calibration curve among the reliability diagrams and the prevalence control of binary files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit, logit
from streamlit.testing.v1 import AppTest

from calib_core.labs.clinical import SCENARIOS, run_clinical
from tests.app.test_pages import CANCER, DIGITS, decode, load_example, new_app, specs, table

REPO = Path(__file__).resolve().parents[2]
DEV, OVER, MOVED = SCENARIOS


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _value(state: dict, table: str, model: str, key: str, method: str | None = None) -> float:
    t = state[table]
    rows = [i for i, m in enumerate(t["model"]) if m == model and (method is None or t["method"][i] == method)]
    return float(t[key][rows[0]])


def test_lab_clinical_defaults_and_changed_sliders():
    at = AppTest.from_file(str(REPO / "pages" / "lab_clinical.py"), default_timeout=240)
    at.run()
    ok(at)
    state = at.session_state["lab_clinical"]
    assert state["params"] == {"n_small": 100, "n_dev": 5000, "n_val": 2000, "shift": 1.0, "seed": 0}
    core = run_clinical(**state["params"], n_resamples=0)
    for model in SCENARIOS:  # the page's numbers are the core's
        for key in ("calibration_in_the_large", "calibration_slope", "ici", "hosmer_lemeshow"):
            assert _value(state, "metrics", model, key) == pytest.approx(core.value(model, key), rel=1e-12)
    # the claims on screen: slope story for the over-fitted model, intercept story for the transported one
    assert _value(state, "metrics", OVER, "calibration_slope") < 0.8
    assert _value(state, "metrics", MOVED, "calibration_in_the_large") > 0.7
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["calibration slope, over-fitted"] == f"{_value(state, 'metrics', OVER, 'calibration_slope'):.2f}"
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) == 5
    shown = " ".join(m.value for m in at.markdown)
    assert all(sentence[:60] in shown for sentence in state["findings"])
    assert "Hosmer–Lemeshow, development model" in shown and "What each recalibration repaired" in shown
    # a larger small sample and a negative shift: the numbers and the sentences move with them
    at.select_slider(key="labcl_small").set_value(1000).run()
    at.slider(key="labcl_shift").set_value(-1.5).run()
    ok(at)
    moved = at.session_state["lab_clinical"]
    assert moved["params"]["n_small"] == 1000 and moved["params"]["shift"] == -1.5
    assert _value(moved, "metrics", OVER, "calibration_slope") > _value(state, "metrics", OVER, "calibration_slope")
    assert _value(moved, "metrics", MOVED, "calibration_in_the_large") < -1.0
    assert moved["findings"] != state["findings"]
    assert "over-estimates the average risk" in moved["findings"][1]


def _smoothed(at: AppTest) -> dict:
    return specs(at)["cls_smoothed_chart"]


def test_classification_page_smoothed_curve_and_prevalence():
    at = load_example(new_app(), CANCER)
    at.switch_page("pages/classification.py").run()
    at.selectbox(key="cls_resamples").select(200).run()
    ok(at)
    spec = _smoothed(at)
    assert [d.get("meta", {}).get("role") for d in spec["data"]] == ["reference", "histogram", "band", "band", "curve"]
    assert "positive class" in spec["layout"]["xaxis"]["title"]["text"]
    assert any("Loess calibration curve" in c.value and "200 bootstrap replicates" in c.value for c in at.caption)
    before = table(at, "metric", "value").set_index("metric")["value"].astype(float)
    assert not at.info  # the control is off: nothing adjusted
    at.checkbox(key="cls_prevalence_on").check().run()
    at.number_input(key="cls_prevalence").set_value(0.05).run()
    ok(at)
    statement = " ".join(i.value for i in at.info)
    assert "prevalence of 5%" in statement
    after = table(at, "metric", "value").set_index("metric")["value"].astype(float)
    assert after["calibration-in-the-large (CITL)"] != before["calibration-in-the-large (CITL)"]
    assert after["ICI (integrated calibration index)"] != before["ICI (integrated calibration index)"]
    # the statement's shift is the diagnosis's: logit π̂ − logit 0.05
    share = float(statement.split("share of positives, ")[1].split("%")[0]) / 100
    assert f"{logit(share) - logit(0.05):+.2f}"[:4] in statement
    assert 0 < expit(logit(0.5) + logit(share) - logit(0.05)) < 1
    # the curve is drawn from the adjusted probabilities: it moved
    curve = next(d for d in _smoothed(at)["data"] if d.get("meta", {}).get("role") == "curve")
    old = next(d for d in spec["data"] if d.get("meta", {}).get("role") == "curve")
    assert not np.allclose(decode(curve["y"]), decode(old["y"]))
    # the CORP lens reads the same probabilities (no error, no stale cache)
    at.segmented_control(key="cls_rel_kind").set_value("CORP (PAV)").run()
    ok(at)
    at.checkbox(key="cls_prevalence_on").uncheck().run()
    ok(at)
    assert not at.info


def test_multiclass_file_has_no_prevalence_control_and_a_top_label_curve():
    at = load_example(new_app(), DIGITS)
    at.switch_page("pages/classification.py").run()
    at.selectbox(key="cls_resamples").select(0).run()
    ok(at)
    assert not [c for c in at.checkbox if c.key == "cls_prevalence_on"]
    spec = _smoothed(at)
    assert "confidence" in spec["layout"]["xaxis"]["title"]["text"]
    assert [d.get("meta", {}).get("role") for d in spec["data"]] == ["reference", "histogram", "curve"]
