"""dashboard.redraw_cache: what a redraw reuses changes nothing a browser receives."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools
import pytest

from calib_core import plots
from dashboard.cache import content_key
from dashboard.redraw_cache import keyed_digest, marked_figure, prepared_figure


def _levi_figure() -> go.Figure:
    rng = np.random.default_rng(3)
    rmv = np.sort(rng.uniform(0.5, 2.0, 8))
    table = pd.DataFrame({"bin": np.arange(8), "count": np.full(8, 100), "sigma_low": rmv - 0.1,
                          "sigma_high": rmv + 0.1, "rmv": rmv, "rmse": rmv * 1.2, "rmse_low": rmv * 1.1,
                          "rmse_high": rmv * 1.3})
    return plots.mark_selected(plots.levi_figure({"model": table}), {"model": (2, 3)})


def _spec(fig) -> str:
    """What ``st.plotly_chart`` sends: ``plotly.io.to_json`` of the dict Plotly's tools make of the figure."""
    return pio.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True), validate=False)


def test_a_prepared_figure_sends_the_same_json_every_time_and_its_dict_stays_unchanged():
    fig = _levi_figure()
    expected = _spec(fig)
    prepared = prepared_figure(fig)
    assert _spec(prepared) == expected
    wire = prepared.to_dict()
    frozen = json.dumps(wire, sort_keys=True, default=str)
    for _ in range(3):  # every rerun serialises the same shared dict: Plotly must not change it
        assert _spec(prepared_figure(fig)) == expected
    assert json.dumps(wire, sort_keys=True, default=str) == frozen
    assert prepared_figure(fig).to_dict() is wire  # made once per figure
    assert [t.meta for t in prepared.data] == [t.meta for t in fig.data]  # what a selection callback reads
    assert prepared_figure("not a figure") == "not a figure"


def test_a_keyed_digest_is_the_content_key_of_its_parts_and_is_not_recomputed():
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    calls = []

    def parts():
        calls.append(1)
        return (frame, {"m": "#123456"}, True)

    key = ("test_redraw_cache", object())
    assert keyed_digest(key, parts) == content_key(frame, {"m": "#123456"}, True)
    assert keyed_digest(key, parts) == content_key(frame, {"m": "#123456"}, True)
    assert len(calls) == 1


def _plain_levi_figure() -> go.Figure:
    rng = np.random.default_rng(5)
    tables = {}
    for name in ("a", "b"):
        rmv = np.sort(rng.uniform(0.5, 2.0, 6))
        tables[name] = pd.DataFrame({"bin": np.arange(6), "count": np.full(6, 50), "sigma_low": rmv - 0.1,
                                     "sigma_high": rmv + 0.1, "rmv": rmv, "rmse": rmv * 1.1, "rmse_low": rmv,
                                     "rmse_high": rmv * 1.2})
    return plots.levi_figure(tables)


@pytest.mark.parametrize("selected", [{}, None, {"a": (2,)}, {"a": (0, 5), "b": (3,)}, {"b": ()}, {"gone": (1,)}])
def test_a_marked_figure_sends_what_mark_selected_gives(selected):
    plain = _plain_levi_figure()
    expected = _spec(plots.mark_selected(_plain_levi_figure(), selected))
    before = _spec(plain)
    assert _spec(marked_figure(plain, selected)) == expected
    assert _spec(marked_figure(plain, selected)) == expected  # the memoised patch
    assert _spec(plain) == before  # the shared figure is not changed


def test_a_marked_figure_with_a_layout_meta_sends_what_update_layout_gives():
    plain = _plain_levi_figure()
    real = _plain_levi_figure()
    real.update_layout(meta={"selection_epoch": 2})
    expected = _spec(plots.mark_selected(real, {"a": (1,)}))
    assert _spec(marked_figure(plain, {"a": (1,)}, layout_meta={"selection_epoch": 2})) == expected
    assert _spec(marked_figure(plain, {"a": (1,)}, layout_meta={"selection_epoch": 3})) != expected


def test_shared_metric_frames_equal_those_of_dashboard_show_metric_groups():
    import calib_core as cc
    import dashboard.display as display
    from calib_core.data import examples
    from dashboard import redraw_cache
    from views import pages as views
    from views.numbers import display_numbers

    report = cc.diagnose(examples.levi_synthetic(n=400), by_group=False, n_resamples=50, n_simulations=50)
    table = views.metric_table(report.metrics, 0.95, compact=True)
    parts, tests = display._metric_group_frames(table, report.metrics)
    shown, (shown_tests, tests_config) = redraw_cache._shown_groups(lambda: table, report.metrics)
    assert [h for h, _ in parts] == [h for h, _, _ in shown] and parts
    for (_, part), (_, frame, config) in zip(parts, shown):
        expected, expected_config = display_numbers(part, display._metric_column_config({}))
        pd.testing.assert_frame_equal(frame, expected, check_exact=True)
        assert config == expected_config
    expected_tests, expected_tests_config = display_numbers(tests, None)
    pd.testing.assert_frame_equal(shown_tests, expected_tests, check_exact=True)
    assert tests_config == expected_tests_config
