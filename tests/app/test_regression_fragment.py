"""The Regression page's linked views are a fragment (``st.fragment``): a σ-bin click, Clear and the view toggles
rerun that part only, as the browser asks (a ``rerun_script`` with the fragment's id), and what the page shows
afterwards equals what a full run after the same interaction shows.

``AppTest`` reruns the whole script on every interaction; :func:`fragment_rerun` sends the rerun the browser sends
for a widget inside a fragment (``RerunData.fragment_id_queue``, as ``AppSession`` builds it from the BackMsg's
``fragment_id``), through AppTest's own runner; its element tree then holds what that run sent (the browser keeps
the rest of the page from the run before).
"""

from __future__ import annotations

import collections
import json

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

import dashboard
from tests.app.test_pages import LEVI, bins_points, load_example, new_app, plotly_select, specs
from tests.app.test_regression_redraw_cache import _assert_same, _shown

FRAGMENT = "reg_linked"  # the key of the page's fragment (st.fragment(key=...))


@pytest.fixture
def page_runs(monkeypatch):
    """{name: calls} of steps above the fragment (the filters, the diagnosis) — a full run calls them."""
    counted: collections.Counter = collections.Counter()
    for name in ("filter_controls", "diagnose_rows"):
        real = getattr(dashboard, name)

        def wrapper(*args, _real=real, _name=name, **kwargs):
            counted[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(dashboard, name, wrapper)
    return counted


def _page():
    from dashboard.cache import clear_caches

    clear_caches()
    at = load_example(new_app(), LEVI)
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def fragment_rerun(at, monkeypatch, widget_states) -> None:
    """Rerun the page's linked-views fragment only with ``widget_states`` (what the browser sends for a widget
    drawn inside it)."""
    import streamlit.testing.v1.local_script_runner as runner

    fragment_ids = at._fragment_storage.resolve_target(FRAGMENT)
    real = runner.RerunData
    with monkeypatch.context() as m:
        m.setattr(runner, "RerunData", lambda **kw: real(**kw, fragment_id_queue=list(fragment_ids),
                                                         is_fragment_scoped_rerun=True))
        at._run(widget_states)
    assert not at.exception, [e.value for e in at.exception]


def _same_part(part, full):
    """``(part, full)`` cut to what a fragment run sends: the figures and tables (all inside the fragment) and the
    last Markdown texts of the full run (those above the fragment come first)."""
    texts = part[2]
    assert texts
    return part, (full[0], full[1], full[2][-len(texts):])


def _click_states(at, bins):
    chart = next(c for c in at.get("plotly_chart") if c.key == "reg_levi_chart")
    points = bins_points(specs(at)["reg_levi_chart"], "random sigma", bins)
    states = at._tree.get_widget_states()
    event = {"selection": {"points": points, "point_indices": [p["point_index"] for p in points], "box": [],
                           "lasso": []}}
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(event)))
    return states


def test_a_click_reruns_the_fragment_only_and_shows_what_a_full_run_shows(monkeypatch, page_runs):
    full = _page()
    plotly_select(full, "reg_levi_chart", bins_points(specs(full)["reg_levi_chart"], "random sigma", [3]))
    expected = _shown(full)

    part = _page()
    page_runs.clear()
    fragment_rerun(part, monkeypatch, _click_states(part, [3]))
    assert sum(page_runs.values()) == 0, dict(page_runs)  # nothing above the fragment ran
    assert part.session_state["reg_sel"].bins == {"random sigma": (3,)}
    assert [s.key for s in part.slider] == []  # the controls above were not sent again (the browser keeps them)
    _assert_same(*_same_part(_shown(part), expected))  # every figure, table and text it sent, the selection's
    assert "Metrics of the selected rows" in [h.value for h in part.subheader]


def test_view_toggles_and_clear_rerun_the_fragment_only(monkeypatch, page_runs):
    at = _page()
    fragment_rerun(at, monkeypatch, _click_states(at, [2]))
    page_runs.clear()
    for key, value in (("reg_levi_log", True), ("reg_curve_view", "ECDF difference")):
        widget = at.toggle(key=key) if key == "reg_levi_log" else at.segmented_control(key=key)
        widget.set_value(value)
        fragment_rerun(at, monkeypatch, at._tree.get_widget_states())
        assert at.session_state[key] == value, key
    assert specs(at)["reg_levi_chart"]["layout"]["xaxis"]["type"] == "log"
    at.button(key="reg_clear").click()
    fragment_rerun(at, monkeypatch, at._tree.get_widget_states())
    assert at.session_state["reg_sel"].empty
    assert sum(page_runs.values()) == 0, dict(page_runs)
    part = _shown(at)
    at.run()  # a full run with the same state shows the same page
    assert sum(page_runs.values()) == 2, dict(page_runs)
    _assert_same(*_same_part(part, _shown(at)))
