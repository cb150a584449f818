"""The z histogram's notes of rows beyond its range (text traces hanging from the plot's top corners): both sides
stacked (never side by side over each other) and the y axis tall enough that they sit above every bar and the
N(0, 1) curve; another selection of the same height changes the notes traces' text and place only."""

from __future__ import annotations

import numpy as np
import pandas as pd

from calib_core.plots import z_histogram_figure
from calib_core.plots._style import HEIGHT
from calib_core.plots.regression import NOTE_LINE_PX


def _table(outside_left: int, outside_right: int, peak: float = 0.45) -> pd.DataFrame:
    edges = np.linspace(-4, 4, 33)
    centre = (edges[:-1] + edges[1:]) / 2
    density = peak * np.exp(-0.5 * centre**2)
    count = np.round(density * 1000).astype(int)
    outside = np.zeros(32, dtype=int)
    outside[0], outside[-1] = outside_left, outside_right
    return pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": count, "density": density,
                         "normal_density": np.exp(-0.5 * centre**2) / np.sqrt(2 * np.pi), "outside": outside})


def _notes(fig) -> dict:
    return {t.meta["side"]: t for t in fig.data if (t.meta or {}).get("role") == "notes"}


def test_notes_on_both_sides_are_stacked_above_the_data():
    tables = {"model": _table(12, 7), "model · selected": _table(3, 2, peak=0.6)}
    fig = z_histogram_figure(tables, dashes={"model · selected": "dash"})
    notes = _notes(fig)
    left, right = notes["left"], notes["right"]
    assert (left.mode, left.textposition, right.textposition) == ("text", "bottom right", "bottom left")
    assert left.x[0] == -4 and right.x[0] == 4 and not fig.layout.annotations
    n_left = left.text[0].count("<br>") + 1
    plot_px = HEIGHT - fig.layout.margin.t - fig.layout.margin.b
    top = fig.layout.yaxis.range[1]
    assert left.y[0] == top
    # the right side's block starts below the left one's
    assert np.isclose((top - right.y[0]) / top * plot_px, n_left * NOTE_LINE_PX + 4)
    notes_px = n_left * NOTE_LINE_PX + 4 + (right.text[0].count("<br>") + 1) * NOTE_LINE_PX + 4
    assert 0.6 <= top * (1 - notes_px / plot_px)  # the tallest bar stays below the notes


def test_notes_name_every_table_and_their_rows():
    fig = z_histogram_figure({"model": _table(12, 0), "model · selected": _table(1, 0, peak=0.6)})
    notes = _notes(fig)
    assert list(notes) == ["left"]
    lines = notes["left"].text[0].split("<br>")
    assert lines[0].startswith("model: 12 rows (") and lines[0].endswith(") with z < −4")
    assert lines[1].startswith("model · selected: 1 row (") and lines[2] == "in the end bar ◂"


def test_another_selection_moves_only_the_notes_traces_data():
    """Two selections under the same top (the whole data's bars are the tallest): the same layout and trace
    properties, only x, y and text differ (what a chart updates in place)."""
    a = z_histogram_figure({"model": _table(12, 7), "model · selected": _table(3, 2, peak=0.3)}).to_plotly_json()
    b = z_histogram_figure({"model": _table(12, 7), "model · selected": _table(1, 5, peak=0.32)}).to_plotly_json()
    assert a["layout"] == b["layout"]
    rest = [[{k: v for k, v in t.items() if k not in ("x", "y", "text", "customdata")} for t in f["data"]]
            for f in (a, b)]
    assert rest[0] == rest[1]


def test_without_notes_the_axis_starts_at_zero_and_fits_the_data():
    fig = z_histogram_figure(_table(0, 0))
    assert not _notes(fig) and fig.layout.yaxis.rangemode == "tozero" and fig.layout.yaxis.range is None
