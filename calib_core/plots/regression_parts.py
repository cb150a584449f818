"""Pieces shared by the validated histogram figures of :mod:`calib_core.plots.regression` and their plain-dict
twins in :mod:`calib_core.plots.regression_dicts`: finite bin edges, the bins' hover text, and the rows a z
histogram's end bins hold beyond its range (the hatched segment on the end bar and the note naming them).

Built from the ``pit_histogram`` / ``z_histogram`` diagram tables (``left, right, count, density`` and optionally
``normal_density``, ``outside``) of ``calib_core.diagrams.regression``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ._style import float_column, plain

__all__ = ["finite_edges", "histogram_hover_text", "clipped_parts", "notes_height", "note_traces", "CLIPPED_NAME",
           "CLIPPED_MARKER", "NOTE_LINE_PX"]

NOTE_LINE_PX = 15  # height of a line of 11 px note text (Plotly's line spacing is ~1.3 em)


def finite_edges(t: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Bin edges of a histogram table with infinite outer edges (overflow bins) replaced by the median finite
    bin width (1 when no width is finite).

    Parameters
    ----------
    t : DataFrame
        A histogram table (``left``, ``right``).

    Returns
    -------
    (ndarray, ndarray)
        The finite left and right edges.

    Examples
    --------
    >>> finite_edges(pd.DataFrame({"left": [-np.inf, 0.0], "right": [0.0, 1.0]}))
    (array([-1.,  0.]), array([0., 1.]))
    """
    left, right = float_column(t, "left").copy(), float_column(t, "right").copy()
    width = right - left
    finite_w = width[np.isfinite(width)]
    w = float(np.median(finite_w)) if finite_w.size else 1.0
    left = np.where(np.isfinite(left), left, right - w)
    right = np.where(np.isfinite(right), right, left + w)
    return left, right


def histogram_hover_text(t: pd.DataFrame, left: np.ndarray, right: np.ndarray, extra: str = "") -> list[str]:
    """Hover text of every bin of a histogram table: its range, count and density (and the ``extra`` column's value
    as "N(0,1)", the reference density of the z histogram).

    Parameters
    ----------
    t : DataFrame
        A histogram table (``count``, ``density`` and ``extra``).
    left, right : ndarray
        The bins' finite edges (:func:`finite_edges`).
    extra : str, default ""
        A column shown as the N(0, 1) density ("": none).

    Returns
    -------
    list of str
        One text per bin.

    Examples
    --------
    >>> t = pd.DataFrame({"count": [3], "density": [0.5]})
    >>> histogram_hover_text(t, np.array([0.0]), np.array([1.0]))
    ['[0, 1)<br>n = 3<br>density 0.5']
    """
    count, dens = t["count"].to_numpy(), float_column(t, "density")
    hover_extra = t[extra].to_numpy(dtype=float) if extra else np.full(dens.size, np.nan)
    return [
        f"[{a:.3g}, {b:.3g})<br>n = {int(k):,}<br>density {d:.3g}" + (f"<br>N(0,1) {r:.3g}" if extra else "")
        for a, b, k, d, r in zip(left, right, count, dens, hover_extra)
    ]


CLIPPED_NAME = "beyond the range (clipped into the end bin)"  #: legend entry of the clipped rows' segments
#: look of the clipped rows' segment on top of an end bar (hatched grey)
CLIPPED_MARKER = {"color": "rgba(120, 120, 120, 0.35)", "line": {"color": "#555555", "width": 1},
                  "pattern": {"fgcolor": "#555555", "shape": "x", "size": 5, "solidity": 0.3}}


def clipped_parts(named: Mapping[str, pd.DataFrame]) -> tuple[list[dict], dict[str, list[str]]]:
    """The rows beyond a histogram's range that its end bins hold (table column ``outside``): the hatched segment
    on top of each end bar holding some (one table only) and the lines of the note of each side.

    Parameters
    ----------
    named : mapping of str to DataFrame
        The histogram tables by name (``left, right, count, density`` and optionally ``outside``).

    Returns
    -------
    bars : list of dict
        One per segment: ``name`` (the table's), ``x``, ``y`` (its height k/(N·width)), ``base``, ``width`` (lists
        of one value) and ``hovertemplate``.
    notes : dict of str to list of str
        ``{"left": lines, "right": lines}``: "12 rows (0.3%) with z < −10" (the table's name first when several).

    Examples
    --------
    >>> t = pd.DataFrame({"left": [-1.0, 0.0], "right": [0.0, 1.0], "count": [6, 4], "density": [0.6, 0.4],
    ...                   "outside": [2, 0]})
    >>> bars, notes = clipped_parts({"m": t})
    >>> notes["left"], round(float(bars[0]["y"][0]), 3)
    (['2 rows (20%) with z < −1'], 0.2)
    """
    notes: dict[str, list[str]] = {"left": [], "right": []}
    bars: list[dict] = []
    for name, t in named.items():
        if "outside" not in t.columns or not len(t):
            continue
        n = max(int(t["count"].sum()), 1)
        left, right = finite_edges(t)
        for side, i in (("left", 0), ("right", len(t) - 1)):
            k = int(t["outside"].iloc[i])
            if k <= 0:
                continue
            edge = f"{left[0] if side == 'left' else right[-1]:.3g}".replace("-", "−")
            what = f"z < {edge}" if side == "left" else f"z ≥ {edge}"
            who = f"{plain(name)}: " if len(named) > 1 else ""
            notes[side].append(f"{who}{k:,} row{'s' * (k != 1)} ({100 * k / n:.2g}%) with {what}")
            if len(named) == 1:
                width = right[i] - left[i]
                height = k / (n * width)
                bars.append({"name": name, "x": [(left[i] + right[i]) / 2], "y": [height],
                             "base": [float(t["density"].iloc[i]) - height], "width": [width],
                             "hovertemplate": f"{k:,} row{'s' * (k != 1)} with {what}, counted in this end bin"
                                              "<extra></extra>"})
    return bars, notes


def notes_height(notes: Mapping[str, list[str]]) -> tuple[int, int]:
    """(height in pixels the notes of :func:`clipped_parts` take at the top of the chart, the offset of the right
    side's block): when both sides have a note the right one goes below the left one (side by side they overlap in
    a half-width chart); 0 without notes.

    Parameters
    ----------
    notes : mapping of str to list of str
        ``{"left": lines, "right": lines}``.

    Returns
    -------
    (int, int)
        The height and the right block's offset below the top.

    Examples
    --------
    >>> notes_height({"left": ["2 rows (20%) with z < −1"], "right": []})
    (34, 0)
    """
    height = {side: (len(lines) + 1) * NOTE_LINE_PX + 4 if lines else 0 for side, lines in notes.items()}
    below = height["left"] if notes["left"] and notes["right"] else 0
    return (below + height["right"] if below else max(height.values())), below


def note_traces(notes: Mapping[str, list[str]], lo: float, hi: float, top: float, plot_px: float) -> list[dict]:
    """The notes of :func:`clipped_parts` as text traces (properties in Plotly's order, ``type`` last) hanging from
    the top corners of the plot (x = lo, hi; y axis [0, top] over ``plot_px`` pixels), the right side's block below
    the left one's when both have one.  Traces, not layout annotations: a new selection changes their text and
    position only, which a chart updates in place like its other traces.

    Parameters
    ----------
    notes : mapping of str to list of str
        ``{"left": lines, "right": lines}``.
    lo, hi : float
        The x range.
    top : float
        The y axis's end (data units).
    plot_px : float
        The plot area's height in pixels.

    Returns
    -------
    list of dict
        One trace per side with lines.

    Examples
    --------
    >>> [t["text"] for t in note_traces({"left": ["2 rows (20%) with z < −1"], "right": []}, -1.0, 1.0, 0.5, 300)]
    [['2 rows (20%) with z < −1<br>in the end bar ◂']]
    """
    below = notes_height(notes)[1]
    out = []
    for side, lines in notes.items():
        if lines:
            shift = below if side == "right" else 0
            out.append({
                "cliponaxis": False, "hoverinfo": "skip", "meta": {"role": "notes", "side": side}, "mode": "text",
                "name": "notes", "showlegend": False,
                "text": ["<br>".join(lines) + ("<br>in the end bar ◂" if side == "left" else "<br>▸ in the end bar")],
                "textfont": {"color": "#555555", "size": 11},
                "textposition": "bottom right" if side == "left" else "bottom left",
                "x": [lo if side == "left" else hi], "y": [top - top * shift / plot_px], "type": "scatter"})
    return out
