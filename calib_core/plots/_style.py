"""The look shared by every figure builder of :mod:`calib_core.plots` (template, palette, layout, table checks).

A private module: the names are public here so the builders of both tasks and the labs import them from one place.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = [
    "HEIGHT",
    "PALETTE",
    "REFERENCE_COLOR",
    "TEMPLATE",
    "Tables",
    "apply_layout",
    "float_column",
    "identity_line",
    "merged_colors",
    "model_colors",
    "named_tables",
    "plain",
    "rgba",
    "set_template",
    "title_layout",
]

TEMPLATE = "plotly_white"
#: Colour-blind-friendly qualitative palette (Vega "tableau10"), one colour per model.
PALETTE = (
    "#4c78a8",
    "#f58518",
    "#54a24b",
    "#e45756",
    "#72b7b2",
    "#b279a2",
    "#ff9da6",
    "#9d755d",
    "#eeca3b",
    "#bab0ac",
)
REFERENCE_COLOR = "#555555"
HEIGHT = 420
"""Figure height in pixels."""
MODEBAR_HEIGHT = 30
"""Pixels at the top of a figure kept for Plotly's toolbar (it appears in the top-right corner on hover)."""
TITLE_LINE = 22
"""Pixels per line of a figure title."""

Tables = pd.DataFrame | Mapping[str, pd.DataFrame]


def plain(text: Any) -> str:
    """Text from a file (a model, group or class name) as Plotly shows it, literally.

    Plotly renders a subset of HTML in trace names, hover labels, titles, subplot titles, tick labels and
    annotations (``<b>``, ``<i>``, ``<a href>``, ``<br>``, ``<span style>`` …) and fills ``%{…}`` fields of hover
    templates; it decodes the entities ``&lt;``, ``&gt;``, ``&amp;`` and numeric ones when it draws.  So ``&``,
    ``<`` and ``>`` are written as entities (``html.escape`` without quotes: Plotly does not decode ``&quot;``)
    and ``%`` as ``&#37;``: the name is drawn as typed and can neither open a tag nor a template field.  Every
    name from a file goes through this once, on its way into a figure; ``meta`` keeps the raw name (selections
    are matched on it).

    Parameters
    ----------
    text : object
        The name (converted with ``str``).

    Returns
    -------
    str
        The escaped text.

    Examples
    --------
    >>> plain("<b>A & B</b> 50%")
    '&lt;b&gt;A &amp; B&lt;/b&gt; 50&#37;'
    """
    return html.escape(str(text), quote=False).replace("%", "&#37;")


def model_colors(names: Sequence[str]) -> dict[str, str]:
    """Stable colour per name: the i-th name gets ``PALETTE[i mod 10]``.

    Pass the same ``colors`` mapping to every builder on a page so a model keeps its colour.

    Parameters
    ----------
    names : sequence of str
        The names, in order.

    Returns
    -------
    dict of str to str
        Name → ``"#rrggbb"``.

    Examples
    --------
    >>> model_colors(["a", "b"])
    {'a': '#4c78a8', 'b': '#f58518'}
    """
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def named_tables(tables: Tables, required: Sequence[str], default_name: str = "model") -> dict[str, pd.DataFrame]:
    """Normalise one table or a mapping of tables to ``{name: table}`` and check the columns.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model.
    required : sequence of str
        Columns every table must have.
    default_name : str, default "model"
        The name of a single table.

    Returns
    -------
    dict of str to DataFrame
        The named tables.

    Raises
    ------
    ValueError
        If no table is given or a table lacks a required column.
    """
    named = {default_name: tables} if isinstance(tables, pd.DataFrame) else dict(tables)
    if not named:
        raise ValueError("no diagram table given")
    for name, table in named.items():
        missing = [c for c in required if c not in table.columns]
        if missing:
            raise ValueError(f"diagram table {name!r} lacks column(s) {missing}; it has {list(table.columns)}")
    return named


def merged_colors(names: Sequence[str], colors: Mapping[str, str] | None) -> dict[str, str]:
    """:func:`model_colors` of ``names``, overridden by the caller's ``colors`` for those names.

    Parameters
    ----------
    names : sequence of str
        The names, in order.
    colors : mapping of str to str or None
        The caller's colours (names not in ``names`` are ignored).

    Returns
    -------
    dict of str to str
        Name → colour.
    """
    base = model_colors(names)
    if colors:
        base.update({k: v for k, v in colors.items() if k in base})
    return base


def rgba(hex_color: str, alpha: float) -> str:
    """``"#rrggbb"`` as a CSS ``rgba(r,g,b,alpha)`` string.

    Parameters
    ----------
    hex_color : str
        ``"#rrggbb"``.
    alpha : float
        Opacity in [0, 1].

    Returns
    -------
    str
        The CSS colour.

    Examples
    --------
    >>> rgba("#4c78a8", 0.5)
    'rgba(76,120,168,0.5)'
    """
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def title_layout(title: str | None, *, lines: int = 1, above: int = 0) -> tuple[dict | None, int]:
    """(Plotly ``title``, top margin in px) that keep a title clear of the toolbar.

    The title sits just above the plotting area (left-aligned, ``yref="paper"``) and the top margin holds
    :data:`MODEBAR_HEIGHT` above it, so the toolbar Plotly shows on hover (top-right corner of the figure) never
    covers the title or the data.

    Parameters
    ----------
    title : str or None
        The title (None or empty: no title, the toolbar's margin only).
    lines : int, default 1
        Lines of the title text (``<br>``-separated).
    above : int, default 0
        Pixels between the title and the plotting area kept for other text (subplot or column titles).

    Returns
    -------
    title : dict or None
        The Plotly title specification.
    top : int
        The top margin in pixels.
    """
    top = MODEBAR_HEIGHT + 4 + above
    if not title:
        return None, top
    spec = {"text": title, "x": 0, "xref": "paper", "xanchor": "left", "y": 1, "yref": "paper",
            "yanchor": "bottom", "pad": {"b": 8 + above}}
    return spec, top + TITLE_LINE * max(lines, 1) + 8


@functools.cache
def _validated_template() -> go.layout.Template:
    """:data:`TEMPLATE` as Plotly validates it when a figure's ``layout.template`` is set (once per process)."""
    return go.Figure().update_layout(template=TEMPLATE).layout.template


def set_template(fig: go.Figure) -> go.Figure:
    """Give ``fig`` the template :data:`TEMPLATE` without Plotly validating it again.

    As ``fig.update_layout(template=TEMPLATE)`` does, without Plotly validating the template's ~1,000 properties
    again for every figure.  Setting a template makes Plotly look it up and re-validate all of it (16–20 ms per
    figure, most of a figure's build time: a redraw of the Regression page builds up to 7).  Here it is validated
    once per process (:func:`_validated_template`) and every figure receives its own copy of that validated object
    with validation off for this one assignment (0.7 ms); the figure's JSON is byte-identical
    (``tests/plots/test_regression.py``) and later layout updates of the figure are validated as usual.  Call it
    where ``template=TEMPLATE`` would be passed.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure (changed in place).

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig``.
    """
    layout = fig.layout
    layout._validate = False  # noqa: SLF001 (Plotly's own switch; the value assigned is already validated)
    try:
        fig.update_layout(template=_validated_template())
    finally:
        layout._validate = True  # noqa: SLF001
    return fig


def apply_layout(fig: go.Figure, title: str | None, xaxis: str, yaxis: str, multi: bool) -> go.Figure:
    """The common look of every figure.

    Template (:func:`set_template`), titles, height, margins, a legend below when ``multi``; the title placed by
    :func:`title_layout` (below the toolbar).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure (changed in place).
    title : str or None
        Figure title.
    xaxis, yaxis : str
        Axis titles.
    multi : bool
        Several models: show the legend below the plot.

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig``.
    """
    title_spec, top = title_layout(title, lines=str(title or "").count("<br>") + 1)
    set_template(fig)
    fig.update_layout(
        title=title_spec,
        xaxis_title=xaxis,
        yaxis_title=yaxis,
        height=HEIGHT,
        margin={"l": 60, "r": 20, "t": top, "b": 95 if multi else 55},
        showlegend=multi,
        # below the x-axis title: never collides with the title or the data
        legend={"orientation": "h", "yanchor": "top", "y": -0.17, "xanchor": "center", "x": 0.5},
        hovermode="closest",
    )
    return fig


def float_column(table: pd.DataFrame, name: str) -> np.ndarray:
    """Column ``name`` of a diagram table as a float array.

    Parameters
    ----------
    table : DataFrame
        A diagram table.
    name : str
        A column.

    Returns
    -------
    ndarray of float
        Its values.
    """
    return table[name].to_numpy(dtype=float)


def identity_line(lo: float, hi: float, name: str = "ideal") -> go.Scatter:
    """The reference line y = x from (lo, lo) to (hi, hi): dashed grey, no hover, ``meta`` role ``"reference"``.

    Parameters
    ----------
    lo, hi : float
        Its ends.
    name : str, default "ideal"
        Its legend entry.

    Returns
    -------
    plotly.graph_objects.Scatter
        The trace.
    """
    return go.Scatter(
        x=[lo, hi],
        y=[lo, hi],
        mode="lines",
        line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1},
        name=name,
        hoverinfo="skip",
        meta={"role": "reference"},
    )
