"""Redraws of the Regression page on unchanged data: a view toggle recomputes nothing, and what a redraw shows from
its caches equals what a fresh session computes (``dashboard.redraw_cache``)."""

from __future__ import annotations

import collections

import pandas as pd
import pytest

import calib_core
import calib_core.plots
import dashboard.redraw_cache
from tests.app.test_pages import LEVI, bins_points, load_example, new_app, plotly_select, specs


@pytest.fixture
def counts(monkeypatch):
    """{name: calls} of ``cc.diagnose`` (what the page's caches call on a miss) and of the page's figure builders."""
    counted: collections.Counter = collections.Counter()

    def spy(module, name, counted_as=None):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            counted[counted_as or name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    spy(calib_core, "diagnose")
    for name in ("levi_figure", "calibration_curve_figure", "pit_ecdf_difference_figure", "pit_histogram_figure",
                 "z_histogram_figure", "intervals_figure"):
        spy(calib_core.plots, name)
    # the page's Levi diagram is built as a plain dict (the validated figure's JSON without Plotly validation)
    spy(dashboard.redraw_cache, "levi_figure_dict", "levi_figure")
    return counted


def _page():
    from dashboard.cache import clear_caches

    clear_caches()
    at = load_example(new_app(), LEVI)
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _shown(at):
    """Every figure's JSON, every table and every Markdown text of the page."""
    return specs(at), [t.value for t in at.dataframe], [m.value for m in at.markdown]


def _assert_same(a, b):
    assert a[0] == b[0]
    assert len(a[1]) == len(b[1]) and a[1]
    for x, y in zip(a[1], b[1]):
        pd.testing.assert_frame_equal(x, y, check_exact=True)
    assert a[2] == b[2]


def test_view_toggles_recompute_nothing(counts):
    at = _page()
    plotly_select(at, "reg_levi_chart", bins_points(specs(at)["reg_levi_chart"], "random sigma", [2]))
    for value in ("ECDF difference", "curve"):  # each view once: its figure is built the first time only
        at.segmented_control(key="reg_curve_view").set_value(value).run()
    at.toggle(key="reg_levi_log").set_value(True).run()
    at.toggle(key="reg_levi_log").set_value(False).run()
    counts.clear()
    for _ in range(2):  # the toggles back and forth: nothing diagnosed, no figure built
        at.segmented_control(key="reg_curve_view").set_value("ECDF difference").run()
        at.toggle(key="reg_levi_log").set_value(True).run()
        at.segmented_control(key="reg_curve_view").set_value("curve").run()
        at.toggle(key="reg_levi_log").set_value(False).run()
        assert not at.exception, [e.value for e in at.exception]
    assert sum(counts.values()) == 0, dict(counts)
    assert at.session_state["reg_sel"].bins == {"random sigma": (2,)}


def test_a_first_view_toggle_builds_its_figure_and_diagnoses_nothing(counts):
    at = _page()
    counts.clear()
    at.segmented_control(key="reg_curve_view").set_value("ECDF difference").run()
    assert counts["diagnose"] == 0 and counts["pit_ecdf_difference_figure"] == 1
    assert sum(counts.values()) == 1, dict(counts)
    at.toggle(key="reg_levi_log").set_value(True).run()
    assert counts["diagnose"] == 0 and counts["levi_figure"] == 1
    assert sum(counts.values()) == 2, dict(counts)


def test_a_cached_redraw_shows_what_a_fresh_session_computes():
    """σ-bins 15 → 16 → 15 and a σ-bin click, with the selection's cached diagnosis, figures, digests and row
    mask: every figure, table and text equals a session that computed them with all caches emptied."""
    at = _page()
    at.slider(key="reg_n_bins").set_value(16).run()
    at.slider(key="reg_n_bins").set_value(15).run()
    plotly_select(at, "reg_levi_chart", bins_points(specs(at)["reg_levi_chart"], "random sigma", [3]))
    at.segmented_control(key="reg_curve_view").set_value("ECDF difference").run()
    at.segmented_control(key="reg_curve_view").set_value("curve").run()  # the selection redrawn from the caches
    cached = _shown(at)

    fresh = _page()
    plotly_select(fresh, "reg_levi_chart", bins_points(specs(fresh)["reg_levi_chart"], "random sigma", [3]))
    _assert_same(cached, _shown(fresh))
    assert "rows selected" in " ".join(cached[2])
