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


def test_steady_ranges_fix_autoranged_axes_to_rounded_ends():
    fig = display.steady_ranges(go.Figure(go.Scatter(x=[0.0, 1.0], y=[0.2, 1.37])))
    assert tuple(fig.layout.yaxis.range) == (0.0, 1.5) and tuple(fig.layout.xaxis.range) == (0.0, 1.2)
    other = display.steady_ranges(go.Figure(go.Scatter(x=[0.0, 1.0], y=[0.2, 1.41])))
    assert tuple(other.layout.yaxis.range) == (0.0, 1.5)  # a nearby selection: the same axes
    signed = display.steady_ranges(go.Figure(go.Scatter(x=[0.0, 1.0], y=[-0.02, 0.013])))
    assert tuple(signed.layout.yaxis.range) == (-0.025, 0.025)  # symmetric about 0, holding every value
    kept = go.Figure(go.Scatter(x=[1.0, 10.0], y=[1.0, 2.0]))
    kept.update_xaxes(type="log").update_yaxes(range=[0, 5])
    display.steady_ranges(kept)
    assert kept.layout.xaxis.range is None and tuple(kept.layout.yaxis.range) == (0, 5)  # log / set axes left alone
