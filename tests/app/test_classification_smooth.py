"""Classification page: the smooth reliability diagram and the smooth ECE next to the binned ECE (
point 4), top-label and positive class, and the toggle."""

from __future__ import annotations

import pytest

from tests.app.test_pages import CANCER, DIGITS, load_example, new_app, specs, table


@pytest.fixture(scope="module")
def digits_app():
    at = load_example(new_app(), DIGITS)
    at.switch_page("pages/classification.py").run()
    at.selectbox(key="cls_resamples").select(200).run()
    at.selectbox(key="cls_sims").select(1000).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_smooth_diagram_and_metric_next_to_binned_ece(digits_app):
    at = digits_app
    s = specs(at)
    assert "cls_smooth_chart" in s
    roles = [d.get("meta", {}).get("role") for d in s["cls_smooth_chart"]["data"]]
    assert roles == ["reference", "density", "curve"]
    t = table(at, "metric", "value", "95% CI", "perfectly calibrated", "p-value").set_index("metric")
    names = list(t.index)
    assert names.index("smooth ECE") == names.index("ECE") + 1
    value = float(t.loc["smooth ECE", "value"])
    assert 0 < value < 1
    curve = next(d for d in s["cls_smooth_chart"]["data"] if d.get("meta", {}).get("role") == "curve")
    assert f"σ* = {value:.3g}" in curve["name"]  # the bandwidth is the value (smECE = σ*)
    assert str(t.loc["smooth ECE", "p-value"]).strip() not in ("", "nan")
    at.toggle(key="cls_smooth").set_value(False).run()
    assert "cls_smooth_chart" not in specs(at)
    at.toggle(key="cls_smooth").set_value(True).run()
    assert "cls_smooth_chart" in specs(at) and not at.exception


def test_binary_positive_class_smooth_ece():
    at = load_example(new_app(), CANCER)
    at.switch_page("pages/classification.py").run()
    at.selectbox(key="cls_resamples").select(0).run()
    metrics = set(table(at, "metric", "value")["metric"])
    assert {"smooth ECE", "smooth ECE (positive class)"} <= metrics
    at.segmented_control(key="cls_target").set_value("positive class").run()
    spec = specs(at)["cls_smooth_chart"]
    assert "positive class" in spec["layout"]["xaxis"]["title"]["text"]
    assert not at.exception


def test_calibration_ratio_always_and_tce_as_an_option(digits_app):
    at = digits_app
    names = set(table(at, "metric", "value")["metric"])
    assert "calibration ratio Σp/Σy" in names and "TCE (%)" not in names
    at.checkbox(key="cls_tce").check().run()
    assert not at.exception
    t = table(at, "metric", "value", "p-value").set_index("metric")
    assert "TCE (%)" in t.index and 0 <= float(t.loc["TCE (%)", "value"]) <= 100
    at.checkbox(key="cls_tce").uncheck().run()
    assert "TCE (%)" not in set(table(at, "metric", "value")["metric"])
