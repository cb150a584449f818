"""A control change on the Classification page recomputes only what it changes (a redraw's server CPU).

A new bins count or binning redoes the binned part of the diagnosis and keeps the rest (the clinical set, the smooth
ECE, the smoothed calibration curve: ``views.classification_stages``); the page then shows exactly what a fresh
session opened at those bins shows.  View toggles (histogram scale, smooth diagram) recompute nothing.
"""

from __future__ import annotations

import collections

import pytest

import calib_core.plots
import views.classification_stages
from dashboard import classification_redraw
from tests.app.test_pages import CANCER, DIGITS, load_example, new_app, specs, table

# the staged diagnosis calls infer_classification itself (with the stage's memo of the bin-free parts)
SPIED = {views.classification_stages: ("infer_classification", "clinical_table_values",
                                       "smoothed_calibration_diagrams"),
         calib_core.plots: ("reliability_figure", "confidence_histogram_figure", "smooth_reliability_figure")}


@pytest.fixture
def calls(monkeypatch):
    """{function name: calls} of the staged diagnosis's parts and the page's figure builders."""
    counts: collections.Counter = collections.Counter()

    def spy(module, name):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for module, names in SPIED.items():
        for name in names:
            spy(module, name)
    return counts


def _page(example: str, **state):
    at = load_example(new_app(), example)
    for key, value in {"cls_resamples": 200, "cls_sims": 1000, **state}.items():  # before the first diagnosis
        at.session_state[key] = value
    at.switch_page("pages/classification.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _shown(at):
    """The metric table, the verdict lines and the reliability diagram's data as the page shows them."""
    metrics = table(at, "metric", "value", "95% CI", "perfectly calibrated", "p-value", "verdict")
    charts = specs(at)
    return (metrics, [w.value for w in at.warning] + [s.value for s in at.success],
            [charts[k]["data"] for k in ("cls_rel_chart", "cls_hist_chart")],
            [(charts[k]["data"], charts[k]["layout"]) for k in charts if k == "cls_per_class"])


@pytest.mark.parametrize("example", [DIGITS, CANCER], ids=["digits K=10", "breast cancer binary"])
def test_a_bins_change_shows_what_a_fresh_session_shows_and_keeps_the_bins_free_part(calls, example):
    from dashboard.cache import clear_caches

    clear_caches()
    at = _page(example)
    calls.clear()
    at.slider(key="cls_n_bins").set_value(12).run()
    at.session_state["cls_strategy"] = "equal mass"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert calls["infer_classification"] == 2  # the binned part, once per bins choice
    assert calls["clinical_table_values"] == 0 and calls["smoothed_calibration_diagrams"] == 0  # kept
    redrawn = _shown(at)

    clear_caches()  # a fresh session opened at those bins computes everything and builds every figure anew
    classification_redraw._SKELETONS.clear()
    fresh = _shown(_page(example, cls_n_bins=12, cls_strategy="equal mass"))
    assert calls["clinical_table_values"] == 1  # computed again: the caches were emptied
    assert redrawn[0].equals(fresh[0]) and redrawn[1] == fresh[1]
    assert redrawn[2] == fresh[2]
    assert redrawn[3] == fresh[3] and (example == CANCER or redrawn[3])  # the per-class figure: patched = built


def test_view_toggles_recompute_nothing(calls):
    at = _page(DIGITS)
    calls.clear()
    at.session_state["cls_hist_scale"] = "log"
    at.run()
    at.session_state["cls_smooth"] = False
    at.run()
    at.session_state["cls_smooth"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert calls["infer_classification"] == calls["clinical_table_values"] == 0  # no diagnosis
    assert calls["reliability_figure"] == 0 and calls["smooth_reliability_figure"] == 0  # cached figures
    assert calls["confidence_histogram_figure"] == 1  # the histogram on its log axis, once
