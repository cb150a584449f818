"""Plotly figures for classification calibration, built from the reliability TABLES (never raw rows).

Tables come from ``calib_core.diagrams.classification`` (``reliability_of`` /
``per_class_reliability_of``; the Report's ``"reliability"``, ``"reliability_positive"`` and
``"per_class"`` diagrams):

==================== =======================================================================
table                columns
==================== =======================================================================
reliability          bin, lower, upper, count, fraction, confidence, accuracy, gap
per_class            class[, class_name], bin, lower, upper, count, fraction, confidence, accuracy, gap
==================== =======================================================================

* :func:`reliability_figure` — Guo et al. (2017) Fig. 1 (bottom row): accuracy per confidence bin as
  bars, the **gap** to the bin's mean confidence as a second, hatched bar stacked on it (red when
  over-confident), the diagonal, and a Wilson interval on each bin's accuracy (hover: bin range,
  count, accuracy, interval, mean confidence, gap).  Several models: one line per model, one colour each.
* :func:`confidence_histogram_figure` — Guo Fig. 1 (top row): % of samples per confidence bin with
  vertical lines at the average confidence and the accuracy.
* :func:`per_class_reliability_figure` — one-vs-rest reliability of every class as small multiples.
* :func:`per_class_summary` — per class: frequency, mean predicted probability, one-vs-rest ECE.

Linked views: bars and markers carry ``customdata`` = bin index and ``meta = {"name", "role"}``
(roles ``bars``/``gap``/``hist`` for one model, ``bins``/``hist`` for several), read by
``views.selection.selected_bins``.  ``selected={model: bins}`` marks bins through Plotly's own
``selectedpoints`` (unselected bars dimmed), so both charts show the same selection.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy import stats

from ._style import (
    REFERENCE_COLOR,
    apply_layout,
    merged_colors,
    named_tables,
    plain,
    rgba,
    set_template,
    title_layout,
)

__all__ = [
    "GAP_COLOR",
    "wilson_interval",
    "reliability_figure",
    "confidence_histogram_figure",
    "per_class_reliability_figure",
    "per_class_summary",
    "worst_classes",
    "reliability_values",
    "histogram_values",
]

#: Colour of the gap bars (over-confidence) as in Guo et al. Fig. 1; under-confidence uses GAP_UNDER_COLOR.
GAP_COLOR = "#e45756"
GAP_UNDER_COLOR = "#72b7b2"
#: The clickable column over each bin of a single-model reliability diagram: clear, or a white veil over the bins
#: not selected while some are (so a selection lights the whole bin — accuracy bar, interval and gap — at once).
COLUMN_CLEAR = "rgba(255, 255, 255, 0)"
COLUMN_VEIL = "rgba(255, 255, 255, 0.7)"
_RELIABILITY_COLUMNS = ["bin", "lower", "upper", "count", "confidence", "accuracy", "gap"]
_HIST_COLUMNS = ["bin", "lower", "upper", "count", "fraction", "confidence", "accuracy"]

Tables = pd.DataFrame | Mapping[str, pd.DataFrame]

_AXES = {
    "top_label": ("confidence (max predicted probability)", "accuracy"),
    "positive": ("predicted probability of the positive class", "observed frequency of the positive class"),
    "class": ("predicted probability of the class", "observed frequency of the class"),
}


def wilson_interval(successes: np.ndarray, n: np.ndarray, level: float = 0.90) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion, elementwise (Wilson 1927).

    With p̂ = k/n and z = Φ⁻¹((1 + level)/2): (p̂ + z²/2n ± z·sqrt(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n).  Unlike the
    Wald interval it stays inside [0, 1] and is not degenerate at p̂ ∈ {0, 1} — the usual case for high-confidence
    bins.  Bins with n = 0 get NaN.

    Parameters
    ----------
    successes : ndarray
        k per bin.
    n : ndarray
        Trials per bin.
    level : float, default 0.90
        Confidence level.

    Returns
    -------
    low, high : ndarray
        The interval of every bin.

    Examples
    --------
    >>> low, high = wilson_interval(np.array([10.0]), np.array([10.0]))
    >>> round(float(low[0]), 3), float(high[0])
    (0.787, 1.0)

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. Journal of
       the American Statistical Association, 22(158), 209–212.
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    lo, hi = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    empty = ~(n > 0)
    lo[empty] = np.nan
    hi[empty] = np.nan
    return lo, hi


def _f(t: pd.DataFrame, c: str) -> np.ndarray:
    return t[c].to_numpy(dtype=float)


def _selected_positions(t: pd.DataFrame, bins: Iterable[int] | None) -> list[int] | None:
    """Point indices (positions in the table) of the selected bins; None = no selection for this trace."""
    if bins is None:
        return None
    return np.flatnonzero(np.isin(t["bin"].to_numpy(dtype=np.int64), np.asarray(list(bins), dtype=np.int64))).tolist()


def _sel(selected: Mapping[str, Iterable[int]] | None, name: str) -> list[int] | None:
    """Bins selected for ``name``: None when nothing is selected anywhere (no dimming at all)."""
    if not selected or not any(tuple(v) for v in selected.values()):
        return None
    return list(selected.get(name, ()))


def _bin_text(t: pd.DataFrame, lo: np.ndarray, hi: np.ndarray, level: float, y_name: str) -> list[str]:
    pct = f"{level:.0%}"
    out = []
    for b, a, c, k, conf, acc, l_, h_ in zip(
        t["bin"], _f(t, "lower"), _f(t, "upper"), t["count"], _f(t, "confidence"), _f(t, "accuracy"), lo, hi
    ):
        if not k:
            out.append(f"bin {int(b) + 1}: ({a:.3g}, {c:.3g}]<br>empty")
            continue
        out.append(
            f"bin {int(b) + 1}: ({a:.3g}, {c:.3g}]<br>n = {int(k):,}<br>{y_name} {acc:.3f} "
            f"({pct} CI [{l_:.3f}, {h_:.3f}])"
            f"<br>mean confidence {conf:.3f}<br>gap (conf − {y_name}) {conf - acc:+.3f}"
        )
    return out


def reliability_values(table: pd.DataFrame, *, level: float = 0.90, target: str = "top_label") -> dict[str, Any]:
    """What :func:`reliability_figure` draws of one reliability table, bin by bin (its non-empty bins): the
    accuracy acc = Σ hits / n with its ``level`` Wilson interval (error bars acc − lo, hi − acc, at least 0), the mean
    confidence, the bars' centres and widths on the bins' x-range, the gap |conf − acc| from min(acc, conf) with its
    colour (red: conf ≥ acc), the hover texts and the bin numbers.

    Parameters
    ----------
    table : DataFrame
        A reliability table (``bin, lower, upper, count, confidence, accuracy``).
    level : float, default 0.90
        Level of the Wilson intervals.
    target : {"top_label", "positive", "class"}, default "top_label"
        Names the y value in the hover text (accuracy or frequency).

    Returns
    -------
    dict
        ``table`` (its non-empty rows), ``accuracy``, ``confidence``, ``error_plus``, ``error_minus``, ``bins``,
        ``text``, ``centre``, ``width``, ``gap_height``, ``gap_base``, ``gap_edge`` and ``gap_fill`` (colours).
    """
    y_name = "accuracy" if target == "top_label" else "frequency"
    t = table[table["count"] > 0]  # empty bins have no accuracy: nothing to draw
    count = _f(t, "count")
    acc, conf = _f(t, "accuracy"), _f(t, "confidence")
    lo, hi = wilson_interval(np.nan_to_num(acc) * count, count, level)
    left, right = _f(t, "lower"), _f(t, "upper")
    gap = conf - acc
    edge = [GAP_COLOR if g >= 0 else GAP_UNDER_COLOR for g in gap]
    return {"table": t, "accuracy": acc, "confidence": conf, "error_plus": np.maximum(hi - acc, 0.0),
            "error_minus": np.maximum(acc - lo, 0.0), "bins": t["bin"].to_numpy(dtype=np.int64),
            "text": _bin_text(t, lo, hi, level, y_name), "centre": (left + right) / 2, "width": (right - left),
            "gap_height": np.abs(gap), "gap_base": np.minimum(acc, conf), "gap_edge": edge,
            "gap_fill": [rgba(c, 0.25) for c in edge]}


def histogram_values(table: pd.DataFrame, *, multi: bool = False) -> dict[str, Any]:
    """What :func:`confidence_histogram_figure` draws of one reliability table: the share of samples per bin
    100·n_b / N (zeros when N = 0), the bars' centres (and widths for one model), the hover texts, the bin numbers,
    the mean confidence Σ conf_b·n_b / N and the accuracy Σ acc_b·n_b / N (NaN when N = 0) and the highest share.

    Parameters
    ----------
    table : DataFrame
        A reliability table (``bin, lower, upper, count, confidence, accuracy``).
    multi : bool, default False
        Several models (grouped bars: no widths).

    Returns
    -------
    dict
        ``x``, ``pct``, ``width`` (None for several models), ``text``, ``bins``, ``mean_confidence``,
        ``mean_accuracy`` and ``top`` (the highest share, 0 without bins).
    """
    t = table
    count = _f(t, "count")
    n = count.sum()
    pct = 100.0 * count / n if n > 0 else np.zeros_like(count)
    left, right = _f(t, "lower"), _f(t, "upper")
    text = [
        f"bin {int(b) + 1}: ({a:.3g}, {c:.3g}]<br>n = {int(k):,} ({p:.1f}% of {int(n):,})"
        for b, a, c, k, p in zip(t["bin"], left, right, count, pct)
    ]
    return {"x": (left + right) / 2, "pct": pct, "width": None if multi else (right - left), "text": text,
            "bins": t["bin"].to_numpy(dtype=np.int64),
            "mean_confidence": float(np.nansum(_f(t, "confidence") * count) / n) if n > 0 else np.nan,
            "mean_accuracy": float(np.nansum(_f(t, "accuracy") * count) / n) if n > 0 else np.nan,
            "top": float(np.nanmax(pct)) if pct.size else 0.0}


def reliability_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    selected: Mapping[str, Iterable[int]] | None = None,
    target: str = "top_label",
    level: float = 0.90,
    title: str | None = "Reliability diagram",
) -> go.Figure:
    """Guo et al. (2017) reliability diagram: accuracy per confidence bin against the diagonal.

    acc(B_m) = (1/|B_m|) Σ_{i ∈ B_m} 1[ŷ_i = y_i], conf(B_m) = (1/|B_m|) Σ_{i ∈ B_m} p̂_i (Guo eq. 2–3;
    ECE = Σ_m |B_m|/n · |acc − conf|).  One table: accuracy bars on the bins' x-range (so equal-mass bins show their
    true widths), the gap conf − acc as a hatched bar from the accuracy to the mean confidence (red: over-confident,
    teal: under-confident), ``level`` Wilson intervals on the accuracy as error bars, and over each bin a transparent
    full-height column (role ``"column"``) that takes hover, clicks and selections for the whole bin (the bins not
    selected are veiled).  Several tables: one line + markers per model at (mean confidence, accuracy), with the same
    intervals.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One reliability table, or one per model (the name is the legend entry).
        Reliability columns (``bin, lower, upper, count, fraction, confidence, accuracy, gap``).
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    selected : mapping of str to iterable of int, optional
        Name → selected bins.
    target : {"top_label", "positive", "class"}, default "top_label"
        Only changes the axis titles: confidence vs accuracy, P(y = 1) vs frequency of y = 1 (binary), or a class.
    level : float, default 0.90
        Level of the Wilson intervals.
    title : str or None, default "Reliability diagram"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. Journal of
       the American Statistical Association, 22(158), 209–212.
    """
    named = named_tables(tables, _RELIABILITY_COLUMNS)
    cmap = merged_colors(list(named), colors)
    multi = len(named) > 1
    x_title, y_title = _AXES.get(target, _AXES["top_label"])
    y_name = "accuracy" if target == "top_label" else "frequency"
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1},
            name="perfect calibration", hoverinfo="skip", meta={"role": "reference"},
        )
    )
    for name, t in named.items():
        v = reliability_values(t, level=level, target=target)
        t, acc, conf, text, bins = v["table"], v["accuracy"], v["confidence"], v["text"], v["bins"]
        sel = _selected_positions(t, _sel(selected, name))
        err = {
            "type": "data", "symmetric": False, "array": v["error_plus"],
            "arrayminus": v["error_minus"], "thickness": 1, "width": 2,
        }
        if not multi:
            centre, width = v["centre"], v["width"]
            color = cmap[name]
            fig.add_trace(
                go.Bar(
                    x=centre, y=acc, width=width, name=f"{y_name} (outputs)",
                    marker={"color": rgba(color, 0.85), "line": {"color": color, "width": 1}},
                    error_y={**err, "color": "#333333"}, customdata=bins, text=text, textposition="none",
                    hoverinfo="skip", selectedpoints=sel,  # hover, clicks and dimming: the bin's column below
                    selected={"marker": {"opacity": 1.0}}, unselected={"marker": {"opacity": 1.0}},
                    meta={"name": name, "role": "bars"},
                )
            )
            edge = v["gap_edge"]
            fig.add_trace(
                go.Bar(
                    x=centre, y=v["gap_height"], base=v["gap_base"], width=width,
                    name="gap to mean confidence",
                    marker={
                        "color": v["gap_fill"],
                        "line": {"color": edge, "width": 1},
                        "pattern": {"shape": "/", "fgcolor": edge, "size": 6, "solidity": 0.2},
                    },
                    customdata=bins, text=text, textposition="none",
                    hoverinfo="skip", selectedpoints=sel,
                    selected={"marker": {"opacity": 1.0}}, unselected={"marker": {"opacity": 1.0}},
                    meta={"name": name, "role": "gap"},
                )
            )
            # the whole bin as one clickable column on top: plotly.js selects (and dims) per trace point, so a
            # click on the accuracy bar alone lit only that bar; the column's point stands for the bar and its gap
            # (clear when selected, a white veil over the bins not selected; shift-click and boxes work as usual)
            fig.add_trace(
                go.Bar(
                    x=centre, y=np.ones_like(centre), width=width, name="bin", showlegend=False,
                    marker={"color": COLUMN_CLEAR, "line": {"width": 0}},
                    customdata=bins, text=text, textposition="none",
                    hovertemplate="%{text}<extra>" + plain(name) + "</extra>", selectedpoints=sel,
                    selected={"marker": {"color": COLUMN_CLEAR}}, unselected={"marker": {"color": COLUMN_VEIL}},
                    meta={"name": name, "role": "column"},
                )
            )
        else:
            fig.add_trace(
                go.Scatter(
                    x=conf, y=acc, mode="lines+markers", name=plain(name),
                    line={"color": cmap[name], "width": 1.5}, marker={"color": cmap[name], "size": 8},
                    error_y={**err, "color": cmap[name]},
                    customdata=bins, text=text, hovertemplate="%{text}<extra>" + plain(name) + "</extra>",
                    selectedpoints=sel,
                    selected={"marker": {"opacity": 1.0, "size": 12}}, unselected={"marker": {"opacity": 0.3}},
                    meta={"name": name, "role": "bins"},
                )
            )
    apply_layout(fig, title, x_title, y_title, True)
    fig.update_layout(barmode="overlay", bargap=0)
    fig.update_xaxes(range=[0, 1], constrain="domain")
    fig.update_yaxes(range=[0, 1.02], constrain="domain")
    return fig


def confidence_histogram_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    selected: Mapping[str, Iterable[int]] | None = None,
    target: str = "top_label",
    title: str | None = "auto",
) -> go.Figure:
    """Guo et al. (2017) Fig. 1 (top row): share of samples per confidence bin.

    With the average confidence (dashed) and the accuracy (dotted) of each model as vertical lines — their distance is
    the overall over-confidence conf − acc.  Bars share the reliability diagram's bins (``customdata`` = bin), so a
    selection in either chart marks the same bins.  Several models: grouped bars, one colour each.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One reliability table, or one per model (the name is the legend entry).
        Reliability columns.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    selected : mapping of str to iterable of int, optional
        Name → selected bins.
    target : {"top_label", "positive"}, default "top_label"
        ``"positive"``: the bins are of p(y = 1), not of a confidence.
    title : str or None, default "auto"
        "auto": "Confidence histogram" for the top label, "Predicted-probability histogram" for the positive class.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """
    if title == "auto":
        title = "Confidence histogram" if target == "top_label" else "Predicted-probability histogram"
    named = named_tables(tables, _HIST_COLUMNS)
    cmap = merged_colors(list(named), colors)
    multi = len(named) > 1
    x_title = _AXES.get(target, _AXES["top_label"])[0]
    acc_name = "accuracy" if target == "top_label" else "frequency of positive class"
    conf_name = "avg. confidence" if target == "top_label" else "avg. predicted probability"
    fig = go.Figure()
    top = 0.0
    for name, t in named.items():
        v = histogram_values(t, multi=multi)
        top = max(top, v["top"])
        fig.add_trace(
            go.Bar(
                x=v["x"], y=v["pct"], width=v["width"], name=plain(name),
                marker={"color": rgba(cmap[name], 0.8), "line": {"color": cmap[name], "width": 1}},
                customdata=v["bins"], text=v["text"], textposition="none",
                hovertemplate="%{text}<extra>" + plain(name) + "</extra>",
                selectedpoints=_selected_positions(t, _sel(selected, name)),
                selected={"marker": {"opacity": 1.0, "color": cmap[name]}}, unselected={"marker": {"opacity": 0.25}},
                meta={"name": name, "role": "hist"}, showlegend=multi,
            )
        )
        mean_conf, mean_acc = v["mean_confidence"], v["mean_accuracy"]
        suffix = f" ({plain(name)})" if multi else ""
        for value, dash, label in ((mean_conf, "dash", conf_name), (mean_acc, "dot", acc_name)):
            fig.add_trace(
                go.Scatter(
                    x=[value, value], y=[0, 1], yaxis="y2", mode="lines",
                    line={"color": cmap[name] if multi else REFERENCE_COLOR, "dash": dash, "width": 2},
                    name=f"{label} {value:.3f}{suffix}",
                    hoverinfo="skip",  # the value is in the legend; clicks near a line must reach the bars
                    meta={"name": name, "role": "conf_line" if dash == "dash" else "acc_line"},
                )
            )
    apply_layout(fig, title, x_title, "% of samples", True)
    fig.update_layout(
        barmode="group" if multi else "overlay", bargap=0.05 if multi else 0,
        yaxis2={"overlaying": "y", "range": [0, 1], "visible": False, "fixedrange": True},
    )
    fig.update_layout(xaxis_range=[0, 1], yaxis_range=[0, max(top * 1.08, 1.0)])
    return fig


def per_class_reliability_figure(
    table: pd.DataFrame,
    *,
    class_names: Sequence[str] | None = None,
    classes: Sequence[Any] | None = None,
    max_classes: int = 20,
    ncols: int = 5,
    color: str = "#4c78a8",
    title: str | None = "Per-class reliability (one-vs-rest)",
) -> go.Figure:
    """Small multiples of one-vs-rest reliability, one panel per class.

    For each class k, observed frequency of y = k against the mean predicted p_k per bin (Kull et al. 2019's
    class-wise calibration).  Each panel's title gives its class and ECE_k.

    Parameters
    ----------
    table : DataFrame
        Columns ``class`` + reliability columns.
    class_names : sequence of str, optional
        Display names of the class codes.
    classes : sequence, optional
        The class codes to draw, in that order; default all classes when there are at most ``max_classes``, else the
        ``max_classes`` with the largest one-vs-rest ECE, worst first (:func:`worst_classes`) — never silently the
        first ones.
    max_classes : int, default 20
        Most panels drawn by default.
    ncols : int, default 5
        Panels per row.
    color : str, default "#4c78a8"
        Colour of the curves.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    """
    needed = ["class", "bin", "count", "confidence", "accuracy"]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise ValueError(f"per-class table lacks column(s) {missing}; it has {list(table.columns)}")
    classes = list(classes) if classes is not None else worst_classes(table, max_classes)
    labels = _class_labels(table, classes, class_names)
    ece_k = per_class_summary(table).set_index("class_code")["one-vs-rest ECE"]
    k = len(classes)
    ncols = max(1, min(ncols, k))
    nrows = max(1, math.ceil(k / ncols))
    fig = make_subplots(
        rows=nrows, cols=ncols, shared_xaxes=True, shared_yaxes=True,
        subplot_titles=[f"{plain(s)} · ECE {ece_k[c]:.3f}" for s, c in zip(labels, classes)],
        horizontal_spacing=0.03, vertical_spacing=0.12 if nrows > 1 else 0.0,
    )
    for i, c in enumerate(classes):
        t = table[(table["class"] == c) & (table["count"] > 0)]
        r, col = i // ncols + 1, i % ncols + 1
        fig.add_trace(
            go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1},
                       hoverinfo="skip", showlegend=False, meta={"role": "reference"}),
            row=r, col=col,
        )
        count = _f(t, "count")
        fig.add_trace(
            go.Scatter(
                x=_f(t, "confidence"), y=_f(t, "accuracy"), mode="lines+markers", showlegend=False,
                line={"color": rgba(color, 0.45), "width": 1},
                marker={"color": color, "size": np.clip(5 + 2.5 * np.log10(np.maximum(count, 1)), 5, 14),
                        "line": {"color": "white", "width": 0.5}},
                customdata=np.column_stack([t["bin"].to_numpy(dtype=np.int64) + 1, count]),  # bins numbered from 1
                hovertemplate=(
                    "bin %{customdata[0]}<br>n = %{customdata[1]:,}<br>mean p %{x:.3f}<br>frequency %{y:.3f}"
                    f"<extra>class {plain(labels[i])}</extra>"
                ),
                meta={"name": labels[i], "role": "class"},
            ),
            row=r, col=col,
        )
    fig.update_xaxes(range=[0, 1], tickvals=[0, 0.5, 1])
    fig.update_yaxes(range=[0, 1.02], tickvals=[0, 0.5, 1])
    title_spec, top = title_layout(title, above=25)  # room for the subplot titles
    set_template(fig)
    fig.update_layout(
        title=title_spec, showlegend=False,
        height=max(260, 210 * nrows + 70), margin={"l": 50, "r": 20, "t": top, "b": 40},
    )
    fig.update_annotations(font_size=12)
    return fig


def worst_classes(table: pd.DataFrame, k: int = 20) -> list[Any]:
    """The class codes of a per-class reliability table to show first.

    All of them in class order when there are at most ``k``, else the ``k`` with the largest one-vs-rest ECE_k
    (:func:`per_class_summary`), worst first (ties in class order).

    Parameters
    ----------
    table : DataFrame
        A per-class reliability table.
    k : int, default 20
        How many.

    Returns
    -------
    list
        Class codes.

    References
    ----------
    .. [1] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    """
    summary = per_class_summary(table)
    if len(summary) <= k:
        return list(summary["class_code"])
    order = summary.sort_values("one-vs-rest ECE", ascending=False, kind="stable")
    return list(order["class_code"].iloc[:k])


def per_class_summary(table: pd.DataFrame, class_names: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per class from the per-class reliability table.

    ``class_code``, display ``class``, observed frequency of the class, mean predicted probability, and the
    one-vs-rest ECE_k = Σ_m |B_mk| / n · |freq(B_mk) − conf(B_mk)| (Kull et al. 2019; their mean over k is the
    Report's class-wise ECE).

    Parameters
    ----------
    table : DataFrame
        A per-class reliability table.
    class_names : sequence of str, optional
        Display names of the class codes.

    Returns
    -------
    DataFrame
        One row per class.

    References
    ----------
    .. [1] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    .. [2] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """
    count = _f(table, "count")
    hits = np.nan_to_num(_f(table, "accuracy")) * count
    conf_sum = np.nan_to_num(_f(table, "confidence")) * count
    # the four summed columns only (not a copy of the whole table): the same groups, values and sums
    t = pd.DataFrame({"class": table["class"], "count": table["count"], "hits": hits, "conf_sum": conf_sum,
                      "abs_gap": np.abs(hits - conf_sum)}, index=table.index)
    g = t.groupby("class", sort=True)[["count", "hits", "conf_sum", "abs_gap"]].sum()
    n = g["count"].to_numpy(dtype=float)
    out = pd.DataFrame(
        {
            "class_code": g.index.to_numpy(),
            "class": g.index.to_numpy(),
            "frequency": g["hits"].to_numpy() / n,
            "mean predicted probability": g["conf_sum"].to_numpy() / n,
            "one-vs-rest ECE": g["abs_gap"].to_numpy() / n,
        }
    )
    out["class"] = _class_labels(table, list(out["class"]), class_names)
    return out


def _class_labels(table: pd.DataFrame, classes: Sequence, class_names: Sequence[str] | None) -> list[str]:
    """Display names of class codes: ``class_names[code]``, else the table's ``class_name`` column, else the code."""
    if class_names is not None:
        return [str(class_names[int(c)]) if 0 <= int(c) < len(class_names) else str(c) for c in classes]
    if "class_name" in table.columns:
        mapping = dict(zip(table["class"], table["class_name"]))
        return [str(mapping.get(c, c)) for c in classes]
    return [str(c) for c in classes]
