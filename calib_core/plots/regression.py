"""Plotly figures for the regression diagnostics, built from DIAGRAM TABLES (never raw rows).

Every builder takes one table or a mapping ``{name: table}`` (one trace group and one colour per
name, e.g. per model) in the schemas produced by ``calib_core.diagrams.regression``:

==================== =====================================================================
table                columns
==================== =====================================================================
calibration_curve    level, observed, band_low, band_high            (levels 0, 0.01, …, 1)
levi_bins            bin, count, sigma_low, sigma_high, rmv, rmse, rmse_low, rmse_high
pit_histogram        left, right, count, density
z_histogram          left, right, count, density, normal_density
qq                   theoretical, observed
intervals            coverage, observed, mean_width, interval_score
rank_histogram       rank, count, expected, band_low, band_high       (ensembles only)
==================== =====================================================================

The Levi figures (``levi_bins``) are in :mod:`calib_core.plots.regression_levi`.  The payload therefore is O(bins),
a few kB, whatever the number of rows.  Figures carry an explicit template (``plotly_white``): ``import streamlit``
replaces Plotly's default template with a placeholder one whose colours only Streamlit's frontend understands, so
figures exported from a Streamlit process would otherwise lose their colours.  Pages should show them with
``st.plotly_chart(fig, theme=None)`` so that the figure is drawn as built.

Selections: bar and marker traces carry ``customdata`` = the bin index (Levi bins, histograms), so
a Streamlit ``on_select`` callback can read ``points[i]["customdata"]`` and
``points[i]["curve_number"]``; ``figure.data[curve_number].meta`` holds ``{"name": …, "role": …}``.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Collection, Iterable, Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import (
    HEIGHT,
    PALETTE,
    REFERENCE_COLOR,
    TEMPLATE,
    Tables,
    apply_layout,
    float_column,
    identity_line,
    merged_colors,
    model_colors,
    named_tables,
    plain,
    rgba,
)
from .regression_parts import (
    CLIPPED_MARKER,
    CLIPPED_NAME,
    NOTE_LINE_PX,
    clipped_parts,
    finite_edges,
    histogram_hover_text,
    note_traces,
    notes_height,
)

__all__ = [
    "TEMPLATE",
    "figure_token",
    "mark_selected",
    "PALETTE",
    "model_colors",
    "calibration_curve_figure",
    "pit_histogram_figure",
    "z_histogram_figure",
    "NOTE_LINE_PX",
    "qq_figure",
    "intervals_figure",
    "rank_histogram_figure",
]


def calibration_curve_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "Quantile calibration",
    dashes: Mapping[str, str] | None = None,
    bands: Collection[str] | None = None,
) -> go.Figure:
    """Kuleshov et al. (2018) quantile-calibration curve: observed p̂_j = mean(u ≤ p_j) vs expected p_j.

    Draws the diagonal (perfect calibration), each table's curve and its 95% consistency band (``band_low``–
    ``band_high``: where the curve of a perfectly calibrated forecaster with the same N falls 95% of the time) as a
    translucent ribbon in the same colour.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model (the name is the legend entry).
        Columns ``level, observed, band_low, band_high``.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title (None: no title).
    dashes : mapping of str to str, optional
        Plotly dash style per name (e.g. a selection's curve dashed over the overall one).
    bands : collection of str, optional
        The names whose band is drawn (default: all).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [2] Säilynoja, T., Bürkner, P.-C., & Vehtari, A. (2022). Graphical test for discrete uniformity and its
       applications in goodness-of-fit evaluation and multiple sample comparison. Statistics and Computing, 32,
       32.
    """
    named = named_tables(tables, ["level", "observed", "band_low", "band_high"])
    cmap = merged_colors(list(named), colors)
    multi = len(named) > 1
    fig = go.Figure()
    fig.add_trace(identity_line(0.0, 1.0))
    for name, t in named.items():
        level, obs, lo, hi = (float_column(t, c) for c in ("level", "observed", "band_low", "band_high"))
        color = cmap[name]
        dash = (dashes or {}).get(name, "solid")
        if bands is not None and name not in bands:
            fig.add_trace(
                go.Scatter(
                    x=level, y=obs, mode="lines", line={"color": color, "width": 2.5, "dash": dash}, name=plain(name),
                    legendgroup=name, customdata=np.column_stack([lo, hi]),
                    hovertemplate=(
                        "expected %{x:.2f}<br>observed %{y:.3f}<br>"
                        "95% band [%{customdata[0]:.3f}, %{customdata[1]:.3f}]<extra>" + plain(name) + "</extra>"
                    ),
                    meta={"name": name, "role": "curve"},
                )
            )
            continue
        fig.add_trace(
            go.Scatter(
                x=level, y=lo, mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip",
                legendgroup=name, meta={"name": name, "role": "band_low"},
            )
        )
        fig.add_trace(
            go.Scatter(
                x=level, y=hi, mode="lines", line={"width": 0}, fill="tonexty", fillcolor=rgba(color, 0.18),
                name=f"{plain(name)}: 95% band" if multi else "95% band (perfect calibration)", showlegend=not multi,
                hoverinfo="skip", legendgroup=name, meta={"name": name, "role": "band_high"},
            )
        )
        fig.add_trace(
            go.Scatter(
                x=level, y=obs, mode="lines", line={"color": color, "width": 2.5, "dash": dash}, name=plain(name),
                legendgroup=name, customdata=np.column_stack([lo, hi]),
                hovertemplate=(
                    "expected %{x:.2f}<br>observed %{y:.3f}<br>"
                    "95% band [%{customdata[0]:.3f}, %{customdata[1]:.3f}]<extra>" + plain(name) + "</extra>"
                ),
                meta={"name": name, "role": "curve"},
            )
        )
    apply_layout(
        fig, title, "expected proportion p (predicted quantile level)", "observed proportion of y ≤ F⁻¹(p)", True
    )
    fig.update_xaxes(range=[0, 1], constrain="domain")
    fig.update_yaxes(range=[0, 1], scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def figure_token(fig: go.Figure) -> str:
    """sha1 of a figure's JSON: identifies what Streamlit sends (and hence the chart widget's identity).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        A figure.

    Returns
    -------
    str
        The hexadecimal digest.
    """
    return hashlib.sha1(fig.to_json().encode()).hexdigest()


def mark_selected(
    fig: go.Figure,
    selected: Mapping[str, Iterable[int]] | None,
    roles: Collection[str] = ("bins", "bars", "gap", "column", "hist"),
) -> go.Figure:
    """Mark selected bins on every selectable trace through Plotly's ``selectedpoints`` (in place).

    A trace counts when ``meta["role"]`` is in ``roles``; its points are selected when their ``customdata`` (the bin
    index) is in ``selected[meta["name"]]``.  With no selection at all every trace is reset (``selectedpoints = None``:
    nothing dimmed).  The traces' ``selected``/``unselected`` styles decide the look, the same as for a live plotly.js
    selection.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        A figure of this package's builders (changed in place).
    selected : mapping of str to iterable of int or None
        Name → selected bin indices.
    roles : collection of str, default ("bins", "bars", "gap", "column", "hist")
        ``meta`` roles of the selectable traces.

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig``.
    """
    any_selected = bool(selected) and any(tuple(v) for v in selected.values())
    for trace in fig.data:
        meta = trace.meta if isinstance(trace.meta, dict) else None
        if not meta or meta.get("role") not in roles:
            continue
        if not any_selected:
            trace.selectedpoints = None
            continue
        bins = np.asarray(list(selected.get(meta.get("name"), ())), dtype=np.int64)
        cd = np.asarray(trace.customdata if trace.customdata is not None else [], dtype=float).reshape(-1)
        trace.selectedpoints = np.flatnonzero(np.isin(cd, bins)).tolist()
    return fig


def _histogram_traces(
    fig: go.Figure,
    named: Mapping[str, pd.DataFrame],
    cmap: Mapping[str, str],
    extra: str = "",
    dashes: Mapping[str, str] | None = None,
) -> None:
    """Bars for one table; step outlines (one colour each) when several tables are overlaid."""
    multi = len(named) > 1
    for name, t in named.items():
        left, right = finite_edges(t)
        dens = float_column(t, "density")
        text = histogram_hover_text(t, left, right, extra)
        bins = np.arange(dens.size, dtype=np.int64)
        if not multi:
            fig.add_trace(
                go.Bar(
                    x=(left + right) / 2, y=dens, width=right - left, name=plain(name),
                    marker={"color": rgba(cmap[name], 0.75), "line": {"color": cmap[name], "width": 1}},
                    customdata=bins, text=text, textposition="none",
                    hovertemplate="%{text}<extra>" + plain(name) + "</extra>",
                    meta={"name": name, "role": "bars"},
                )
            )
        else:
            fig.add_trace(
                go.Scatter(
                    x=np.concatenate([left, right[-1:]]), y=np.concatenate([dens, dens[-1:]]),
                    mode="lines", name=plain(name),
                    line={"shape": "hv", "color": cmap[name], "width": 2, "dash": (dashes or {}).get(name, "solid")},
                    customdata=np.concatenate([bins, bins[-1:]]), text=text + text[-1:],
                    hovertemplate="%{text}<extra>" + plain(name) + "</extra>",
                    meta={"name": name, "role": "steps"},
                )
            )
    fig.update_layout(bargap=0)


def pit_histogram_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "PIT histogram",
    dashes: Mapping[str, str] | None = None,
) -> go.Figure:
    """Histogram of the PIT u = F(y) as a density, with the Uniform(0, 1) reference (density 1).

    A calibrated forecaster has a flat histogram (Dawid 1984; Gneiting et al. 2007); ∪-shape means over-confident,
    ∩-shape under-confident, slope means bias.  Bars for one table, step lines for several.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model (the name is the legend entry).
        Columns ``left, right, count, density``.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title (None: no title).
    dashes : mapping of str to str, optional
        Plotly dash style per name (e.g. a selection's curve dashed over the overall one).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Dawid, A. P. (1984). Present position and potential developments: some personal views. Statistical
       theory: the prequential approach. Journal of the Royal Statistical Society A, 147(2), 278–292.
    .. [2] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.
    """
    named = named_tables(tables, ["left", "right", "count", "density"])
    cmap = merged_colors(list(named), colors)
    fig = go.Figure()
    _histogram_traces(fig, named, cmap, dashes=dashes)
    fig.add_trace(
        go.Scatter(
            x=[0.0, 1.0], y=[1.0, 1.0], mode="lines", line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1.5},
            name="uniform", hoverinfo="skip", meta={"role": "reference"},
        )
    )
    apply_layout(fig, title, "PIT u = F(y)", "density", True)
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(rangemode="tozero")
    return fig


def z_histogram_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "Standardised residuals",
    dashes: Mapping[str, str] | None = None,
) -> go.Figure:
    """Histogram of z = (y − μ)/σ as a density against the N(0, 1) density φ(z).

    The smooth reference curve is φ evaluated on a fine grid over the histogram's range; the table's
    ``normal_density`` (the N(0, 1) mass of each bin divided by its width) is shown on hover.  The optional
    ``outside`` count (rows beyond the range counted in the end bins) is drawn hatched grey on top of its end bin
    (one model) and named in a note at the chart's edge ("12 rows (0.3%) with z < −10 are in this bar"), so a pile-up
    is never read as the tail's shape.  The notes are text traces (role ``"notes"``): another selection with
    the same axes changes the chart's traces only, which it updates in place.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model (the name is the legend entry).
        Columns ``left, right, count, density, normal_density`` and optionally ``outside``.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title (None: no title).
    dashes : mapping of str to str, optional
        Plotly dash style per name (e.g. a selection's curve dashed over the overall one).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    named = named_tables(tables, ["left", "right", "count", "density", "normal_density"])
    cmap = merged_colors(list(named), colors)
    fig = go.Figure()
    _histogram_traces(fig, named, cmap, extra="normal_density", dashes=dashes)
    lo = min(float(finite_edges(t)[0].min()) for t in named.values())
    hi = max(float(finite_edges(t)[1].max()) for t in named.values())
    grid = np.linspace(lo, hi, 201)
    normal = np.exp(-0.5 * grid**2) / np.sqrt(2 * np.pi)
    fig.add_trace(
        go.Scatter(
            x=grid, y=normal, mode="lines",
            line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1.5}, name="N(0, 1)", hoverinfo="skip",
            meta={"role": "reference"},
        )
    )
    notes = _mark_clipped(fig, named)
    notes_px = notes_height(notes)[0]
    apply_layout(fig, title, "z = (y − μ) / σ", "density", True)
    fig.update_xaxes(range=[lo, hi])
    if notes_px:  # room above the bars and the N(0, 1) curve for the notes: they never cover the data
        layout = fig.layout
        plot_px = HEIGHT - layout.margin.t - layout.margin.b
        data_top = max([float(np.nanmax(normal))]
                       + [float(np.nanmax(float_column(t, "density"), initial=0.0)) for t in named.values()])
        top = 1.02 * data_top / max(1.0 - notes_px / plot_px, 0.4)
        fig.update_yaxes(range=[0.0, top])
        for trace in note_traces(notes, lo, hi, top, plot_px):
            fig.add_trace(go.Scatter({k: v for k, v in trace.items() if k != "type"}))
    else:
        fig.update_yaxes(rangemode="tozero")
    return fig


def _mark_clipped(fig: go.Figure, named: Mapping[str, pd.DataFrame]) -> dict[str, list[str]]:
    """The rows beyond a histogram's range that its end bins hold (table column ``outside``): a hatched grey
    segment on top of the end bar (one table); returns the lines of the note of each side."""
    bars, notes = clipped_parts(named)
    for i, bar in enumerate(bars):
        fig.add_trace(go.Bar(
            x=bar["x"], y=bar["y"], base=bar["base"], width=bar["width"], name=CLIPPED_NAME, legendgroup="clipped",
            showlegend=i == 0, marker=copy.deepcopy(CLIPPED_MARKER), hovertemplate=bar["hovertemplate"],
            meta={"name": bar["name"], "role": "clipped"}))
    return notes




def qq_figure(
    tables: Tables, *, colors: Mapping[str, str] | None = None, title: str | None = "Normal Q-Q plot of z"
) -> go.Figure:
    """Q-Q plot: observed quantiles of z against N(0, 1) quantiles, with the identity line.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model (the name is the legend entry).
        Columns ``theoretical, observed`` (quantile pairs; the diagram module decides how many).
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title (None: no title).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    named = named_tables(tables, ["theoretical", "observed"])
    cmap = merged_colors(list(named), colors)
    fig = go.Figure()
    vals = np.concatenate([np.concatenate([float_column(t, "theoretical"), float_column(t, "observed")])
                           for t in named.values()])
    vals = vals[np.isfinite(vals)]
    lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (-3.0, 3.0)
    fig.add_trace(identity_line(lo, hi, "z ~ N(0, 1)"))
    for name, t in named.items():
        x, y = float_column(t, "theoretical"), float_column(t, "observed")
        trace = go.Scattergl if x.size > 2000 else go.Scatter
        fig.add_trace(
            trace(
                x=x, y=y, mode="markers", name=plain(name), marker={"color": cmap[name], "size": 5},
                hovertemplate="N(0,1) quantile %{x:.3f}<br>observed %{y:.3f}<extra>" + plain(name) + "</extra>",
                meta={"name": name, "role": "points"},
            )
        )
    apply_layout(fig, title, "N(0, 1) quantile", "observed quantile of z", len(named) > 1)
    return fig


def intervals_figure(
    tables: Tables, *, colors: Mapping[str, str] | None = None, title: str | None = "Central intervals"
) -> go.Figure:
    """Observed coverage (PICP) of the central prediction intervals against their nominal coverage.

    Points above the diagonal are too wide (under-confident), below too narrow.  Hover shows the mean width and the
    interval score (Gneiting & Raftery 2007, eq. 43) of each interval.  A table with an ``expected`` column (an
    ensemble) also gets that line, dashed: a calibrated ensemble of M members covers its finite-M expectation, not
    the nominal c, so its points are read against that line.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model (the name is the legend entry).
        Columns ``coverage, observed, mean_width, interval_score``.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title (None: no title).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Gneiting, T., & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       Journal of the American Statistical Association, 102(477), 359–378.
    """
    named = named_tables(tables, ["coverage", "observed", "mean_width", "interval_score"])
    cmap = merged_colors(list(named), colors)
    nominal = np.concatenate([float_column(t, "coverage") for t in named.values()])
    observed = np.concatenate([float_column(t, "observed") for t in named.values()])
    both = np.concatenate([nominal, observed])
    lo = max(0.0, float(np.nanmin(both)) - 0.05) if both.size else 0.0
    fig = go.Figure()
    fig.add_trace(identity_line(lo, 1.0, "observed = nominal"))
    for name, t in named.items():
        cov, obs = float_column(t, "coverage"), float_column(t, "observed")
        fig.add_trace(
            go.Scatter(
                x=cov, y=obs, mode="lines+markers", name=plain(name),
                line={"color": cmap[name], "width": 1.5}, marker={"color": cmap[name], "size": 8},
                customdata=np.column_stack([float_column(t, "mean_width"), float_column(t, "interval_score")]),
                hovertemplate=(
                    "nominal %{x:.0%}<br>observed %{y:.1%}<br>mean width %{customdata[0]:.4g}"
                    "<br>interval score %{customdata[1]:.4g}<extra>" + plain(name) + "</extra>"
                ),
                meta={"name": name, "role": "points"},
            )
        )
        if "expected" in t.columns:  # an ensemble: the finite-M coverage of a calibrated ensemble, not c
            fig.add_trace(go.Scatter(
                x=cov, y=float_column(t, "expected"), mode="lines+markers", name=f"{plain(name)}: calibrated ensemble",
                line={"color": cmap[name], "width": 1, "dash": "dash"}, marker={"color": cmap[name], "symbol": "x"},
                hovertemplate="nominal %{x:.0%}<br>a calibrated ensemble covers %{y:.1%}<extra>" + plain(name)
                + "</extra>", meta={"name": name, "role": "expected"}))
    apply_layout(fig, title, "nominal coverage", "observed coverage (PICP)",
                 len(named) > 1 or any("expected" in t.columns for t in named.values()))
    fig.update_xaxes(range=[lo, 1.0], tickformat=".0%", constrain="domain")
    fig.update_yaxes(range=[lo, 1.0], tickformat=".0%", scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def rank_histogram_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "Rank histogram",
) -> go.Figure:
    """The rank (Talagrand) histogram of ensembles: the share of targets at each rank 0 … M among the M members,
    as count / expected (1 = flat = calibrated), with the simultaneous range of a calibrated ensemble (shaded).

    A calibrated ensemble (target and members exchangeable) has a flat histogram; a U shape means too little spread
    (targets outside the members), a ∩ shape too much, a slope a bias (many low ranks: forecasts too high).  Ties
    are broken at random.  Bars for one table, lines with markers for several.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model.  Columns ``rank, count, expected, band_low, band_high``.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title (None: no title).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
       integrations. Journal of Climate 9(7), 1518–1530.
    .. [2] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. Monthly Weather
       Review 129(3), 550–560.
    """
    named = named_tables(tables, ["rank", "count", "expected", "band_low", "band_high"])
    cmap = merged_colors(list(named), colors)
    fig = go.Figure()
    for i, (name, t) in enumerate(named.items()):
        rank = t["rank"].to_numpy(dtype=float)
        exp = t["expected"].to_numpy(dtype=float)
        ratio = t["count"].to_numpy(dtype=float) / exp
        color = cmap[name]
        fig.add_trace(go.Scatter(
            x=np.r_[rank, rank[::-1]], y=np.r_[t["band_high"].to_numpy(dtype=float) / exp,
                                                (t["band_low"].to_numpy(dtype=float) / exp)[::-1]],
            fill="toself", fillcolor=rgba(color, 0.12), line={"width": 0}, hoverinfo="skip",
            name="calibrated range (95%, all ranks)" + (f" — {plain(name)}" if len(named) > 1 else ""),
            showlegend=i == 0 or len(named) > 1, meta={"name": name, "role": "band"}))
        custom = np.column_stack([t["count"].to_numpy(), exp])
        hover = "rank %{x}<br>%{customdata[0]:,} targets (expected %{customdata[1]:,.1f})<extra>" + plain(name) + \
            "</extra>"
        trace = go.Bar(x=rank, y=ratio, marker={"color": color}, customdata=custom, hovertemplate=hover) \
            if len(named) == 1 else go.Scatter(x=rank, y=ratio, mode="lines+markers", line={"color": color},
                                               customdata=custom, hovertemplate=hover)
        trace.update(name=plain(name), meta={"name": name, "role": "histogram"})
        fig.add_trace(trace)
    if named:
        top = max(float(t["rank"].max()) for t in named.values())
        fig.add_trace(go.Scatter(x=[-0.5, top + 0.5], y=[1.0, 1.0], mode="lines", name="flat (calibrated)",
                                 line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1.5}, hoverinfo="skip",
                                 meta={"role": "reference"}))
    apply_layout(fig, title, "rank of the target among the members", "count / expected", True)
    fig.update_yaxes(rangemode="tozero")
    return fig
