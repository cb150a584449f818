"""The z histogram's notes of rows beyond its range: both sides stacked (never side by side over each other) and
the y axis tall enough that they sit above every bar and the N(0, 1) curve."""

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


def test_notes_on_both_sides_are_stacked_above_the_data():
    tables = {"model": _table(12, 7), "model · selected": _table(3, 2, peak=0.6)}
    fig = z_histogram_figure(tables, dashes={"model · selected": "dash"})
    left, right = (next(a for a in fig.layout.annotations if a.xanchor == side) for side in ("left", "right"))
    n_left = left.text.count("<br>") + 1
    assert right.yshift == -(n_left * NOTE_LINE_PX + 4)  # the right side's block starts below the left one's
    notes_px = n_left * NOTE_LINE_PX + 4 + (right.text.count("<br>") + 1) * NOTE_LINE_PX + 4
    plot_px = HEIGHT - fig.layout.margin.t - fig.layout.margin.b
    top = fig.layout.yaxis.range[1]
    assert 0.6 <= top * (1 - notes_px / plot_px)  # the tallest bar stays below the notes


def test_without_notes_the_axis_starts_at_zero_and_fits_the_data():
    fig = z_histogram_figure(_table(0, 0))
    assert not fig.layout.annotations and fig.layout.yaxis.rangemode == "tozero" and fig.layout.yaxis.range is None
