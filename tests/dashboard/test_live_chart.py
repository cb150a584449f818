"""``dashboard.live_chart``: the figure JSON it sends is the figure's (what ``st.plotly_chart`` sends), made once per
shared figure; ``chart(live=True)`` keeps ``st.plotly_chart`` for a selectable chart."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from dashboard import display
from dashboard.redraw_cache import prepared_figure


def _figure() -> go.Figure:
    return go.Figure(go.Scatter(x=np.linspace(0, 1, 5), y=np.arange(5.0), name="a <b>", meta={"role": "curve"}))


def test_the_json_sent_is_the_figures_and_made_once_per_shared_figure():
    fig = _figure()
    shared = prepared_figure(fig)
    text = display._figure_json(shared)
    assert json.loads(text) == json.loads(pio.to_json(prepared_figure(fig).to_dict(), validate=False))
    assert json.loads(text)["data"][0]["name"] == "a <b>"
    assert display._figure_json(prepared_figure(fig)) is text  # the same wire dict: not serialised again
    other = display._figure_json(prepared_figure(_figure()))
    assert other == text and other is not text  # another figure object: its own JSON


def test_a_selectable_chart_stays_a_plotly_chart(monkeypatch):
    calls = []
    monkeypatch.setattr(display, "live_chart", lambda fig, key: calls.append(("live", key)))
    monkeypatch.setattr(display.st, "plotly_chart", lambda fig, key, **kw: calls.append(("plotly", key)))
    display.chart(_figure(), "k1", live=True)
    display.chart(_figure(), "k2", live=True, on_select=lambda: None)
    display.chart(_figure(), "k3")
    assert calls == [("live", "k1"), ("plotly", "k2"), ("plotly", "k3")]
