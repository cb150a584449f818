"""Figures of a comparison of models against a baseline (``cc.compare_models``): the skill plot and the matrix of
pairwise ratios.

Both take the tables of a ``ModelComparison``, never rows: ``.table`` (one row per model: ``model``, ``n_units``,
``mean_score``, ``relative_score``, ``relative_lo``, ``relative_hi``, ``p_holm``, ``better_than_baseline``,
``in_mcs`` …) and ``.pairwise`` (long: ``model_a``, ``model_b``, ``ratio``, ``p_value``).  Lower scores are better,
so a relative score below 1 is a model better than the baseline.  Model names are text from a file: every one goes
through :func:`calib_core.plots._style.plain` on its way into a figure.  The skill plot's points are selectable
(``meta = {"name": "model", "role": "bins"}``, ``customdata`` the model's row in the table given), as every linked
chart of the dashboard (``views.selection``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import HEIGHT, REFERENCE_COLOR, apply_layout, plain

__all__ = ["VERDICT_COLORS", "VERDICT_LEGEND", "VERDICTS", "verdicts", "skill_figure", "pairwise_figure",
           "pairwise_matrix"]

#: The verdict of a model against the baseline, in the order of the legend.
VERDICTS = ("better than the baseline", "not distinguishable", "worse than the baseline", "baseline")
#: Colours of the verdicts (green, grey, red; the baseline black).
VERDICT_COLORS = {"better than the baseline": "#54a24b", "not distinguishable": "#8c8c8c",
                  "worse than the baseline": "#e45756", "baseline": "#111111"}
#: The verdicts' legend entries (the plot's title names the baseline).
VERDICT_LEGEND = {"better than the baseline": "better", "not distinguishable": "not distinguishable",
                  "worse than the baseline": "worse", "baseline": "baseline"}
_SYMBOLS = {"baseline": "diamond"}


def verdicts(table: pd.DataFrame, baseline: str, alpha: float = 0.05) -> np.ndarray:
    """Each model's verdict against the baseline after Holm's correction.

    A model is better (worse) than the baseline when its Holm-adjusted p-value is below ``alpha`` and its mean
    score is lower (higher) than the baseline's on the common units: the Diebold–Mariano statistic of the score
    differences S_model − S_baseline is negative (positive); without one, its relative score θ_i / θ_baseline is
    below (above) 1.  Otherwise the two are not distinguishable at that level.

    Parameters
    ----------
    table : pandas.DataFrame
        ``ModelComparison.table``: ``model``, ``relative_score``, ``p_holm``, optionally ``dm_statistic`` and
        ``better_than_baseline`` (used when the relative score is missing).
    baseline : str
        The baseline model.
    alpha : float, default 0.05
        Family-wise level of the Holm-adjusted tests.

    Returns
    -------
    ndarray of str
        One of :data:`VERDICTS` per row of ``table``.

    Examples
    --------
    >>> t = pd.DataFrame({"model": ["b", "x", "y", "z"], "relative_score": [1, 0.8, 1.3, 0.95],
    ...                   "p_holm": [np.nan, 0.01, 0.002, 0.4]})
    >>> verdicts(t, "b").tolist()
    ['baseline', 'better than the baseline', 'worse than the baseline', 'not distinguishable']
    """
    rel = table["relative_score"].to_numpy(float)
    p = table["p_holm"].to_numpy(float)
    # the sign of the tested difference (the Diebold–Mariano statistic) where there is one, else the relative score
    better = rel < 1
    if "better_than_baseline" in table:
        better = np.where(np.isfinite(rel), better, table["better_than_baseline"].to_numpy(bool))
    if "dm_statistic" in table:
        stat = table["dm_statistic"].to_numpy(float)
        better = np.where(np.isfinite(stat), stat < 0, better)
    significant = np.isfinite(p) & (p < alpha)
    out = np.where(significant, np.where(better, VERDICTS[0], VERDICTS[2]), VERDICTS[1]).astype(object)
    out[(table["model"].astype(str) == str(baseline)).to_numpy()] = VERDICTS[3]
    return out


def _ratio_text(x: float) -> str:
    return "–" if not np.isfinite(x) else f"{x:.3g}"


def _p_text(p: float) -> str:
    if not np.isfinite(p):
        return "–"
    return f"{p:.2g}" if p >= 1e-4 else "< 1e-4"


def skill_figure(
    table: pd.DataFrame,
    baseline: str,
    *,
    alpha: float = 0.05,
    score: str = "score",
    title: str | None = None,
) -> go.Figure:
    """Each model's relative score against the baseline with its interval, on a log axis, sorted.

    The relative score of model i is θ_i / θ_baseline, θ_i the geometric mean over the models j of the ratio of mean
    scores S̄_i / S̄_j on their common units (Cramer et al. 2022); a vertical line at 1 is the baseline.  Points are
    coloured by :func:`verdicts` (better / worse than the baseline after Holm, or not distinguishable); error bars are
    the interval ``relative_lo``–``relative_hi``.  Models are sorted by relative score, the best at the top.

    Parameters
    ----------
    table : pandas.DataFrame
        ``ModelComparison.table``.
    baseline : str
        The baseline model.
    alpha : float, default 0.05
        Level of the verdicts (and of the interval's label: 1 − alpha).
    score : str, default "score"
        The score's name for the axis and hover ("WIS", "CRPS" …).
    title : str or None
        Figure title (default: the score relative to the baseline).

    Returns
    -------
    plotly.graph_objects.Figure
        One horizontal trace per verdict present; selectable points (``meta`` name ``model``, ``customdata`` the
        model's row number in ``table``).
    """
    # best (lowest relative score) first; drawn from the top (the category axis is reversed below)
    order = np.lexsort((table["model"].astype(str).to_numpy(), table["mean_score"].to_numpy(float),
                        np.nan_to_num(table["relative_score"].to_numpy(float), nan=np.inf)))
    rel = table["relative_score"].to_numpy(float)
    lo = table["relative_lo"].to_numpy(float) if "relative_lo" in table else np.full(len(table), np.nan)
    hi = table["relative_hi"].to_numpy(float) if "relative_hi" in table else np.full(len(table), np.nan)
    p = table["p_holm"].to_numpy(float)
    n = table["n_units"].to_numpy(float) if "n_units" in table else np.full(len(table), np.nan)
    in_mcs = table["in_mcs"].to_numpy(bool) if "in_mcs" in table else np.zeros(len(table), bool)
    verdict = verdicts(table, baseline, alpha)
    names = np.array([plain(m) for m in table["model"]], dtype=object)
    is_base = (table["model"].astype(str) == str(baseline)).to_numpy()
    lo, hi = np.where(is_base, np.nan, lo), np.where(is_base, np.nan, hi)  # the baseline's own interval is 1–1
    level = f"{1 - alpha:.0%}"
    hover = np.array([
        f"{name}<br>{score} relative to the baseline: {_ratio_text(r)}"
        + (f"<br>{level} interval {_ratio_text(a)}–{_ratio_text(b)}" if np.isfinite(a) and np.isfinite(b) else "")
        + (f"<br>p = {_p_text(q)} after Holm" if np.isfinite(q) else "")
        + f"<br>{v}" + ("<br>in the model confidence set" if m else "<br>outside the model confidence set")
        + (f"<br>{c:,.0f} forecast units" if np.isfinite(c) else "")
        for name, r, a, b, q, v, m, c in zip(names, rel, lo, hi, p, verdict, in_mcs, n)
    ], dtype=object)
    traces = []
    for v in VERDICTS:
        rows = order[verdict[order] == v]
        if not len(rows):
            continue
        has = np.isfinite(lo[rows]) & np.isfinite(hi[rows]) & np.isfinite(rel[rows])
        traces.append(go.Scatter(
            x=rel[rows], y=names[rows], mode="markers", name=VERDICT_LEGEND[v],
            marker={"color": VERDICT_COLORS[v], "size": 11, "symbol": _SYMBOLS.get(v, "circle"),
                    "line": {"color": "white", "width": 1}},
            error_x={"type": "data", "symmetric": False, "array": np.where(has, hi[rows] - rel[rows], 0.0),
                     "arrayminus": np.where(has, rel[rows] - lo[rows], 0.0), "color": VERDICT_COLORS[v],
                     "thickness": 2, "width": 5, "visible": bool(has.any())},
            customdata=rows.astype(np.int64), meta={"name": "model", "role": "bins"},
            hovertext=hover[rows].tolist(), hoverinfo="text",
            selected={"marker": {"size": 15}}, unselected={"marker": {"opacity": 0.5}},
        ))
    fig = go.Figure(traces)
    values = np.r_[rel, lo, hi, 1.0]
    values = values[np.isfinite(values) & (values > 0)]
    span = np.log10([values.min(), values.max()])
    pad = max(0.02, 0.08 * (span[1] - span[0]))
    fig.update_layout(shapes=[{"type": "line", "xref": "x", "x0": 1, "x1": 1, "yref": "paper", "y0": 0, "y1": 1,
                               "line": {"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, "layer": "below"}])
    ticks = _log_ticks(10 ** (span[0] - pad), 10 ** (span[1] + pad))
    fig.update_xaxes(type="log", range=[span[0] - pad, span[1] + pad], tickvals=ticks,
                     ticktext=[f"{t:g}" for t in ticks])
    # a category axis draws its first category at the bottom: reversed, the best model is on top
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=names[order].tolist(),
                     autorange="reversed", automargin=True)
    fig = apply_layout(fig, title if title is not None else f"{score} relative to the baseline",
                       f"relative {score} (log scale; < 1: better)", "", True)
    # the legend at the foot of the figure, below the axis title, whatever the figure's height
    fig.update_layout(height=max(HEIGHT - 80, min(900, 210 + 34 * len(table))),
                      legend={"yref": "container", "y": 0, "yanchor": "bottom"},
                      margin={"b": 100})
    return fig


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Readable ticks of a log axis from ``lo`` to ``hi``: 1, 2, 5 × powers of ten, thinned to at most 9."""
    exps = np.arange(np.floor(np.log10(lo)), np.ceil(np.log10(hi)) + 1)
    ticks = []
    for mantissas in ((1, 1.1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9), (1, 1.25, 1.5, 2, 3, 5, 7),
                      (1, 1.5, 2, 3, 5, 7), (1, 2, 5), (1,)):
        grid = np.sort(np.outer(10.0 ** exps, mantissas).ravel())
        ticks = [float(f"{t:.3g}") for t in grid if lo <= t <= hi]
        if len(ticks) <= 9:
            break
    return ticks if 1.0 in ticks or not (lo <= 1 <= hi) else sorted({*ticks, 1.0})


def pairwise_matrix(pairwise: pd.DataFrame, order: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                                         list[str]]:
    """The pairwise ratios as square matrices, row model over column model.

    A pair given in one direction only is filled in the other with the reciprocal ratio 1 / r and the same
    p-value; the diagonal is 1 (no test).

    Parameters
    ----------
    pairwise : pandas.DataFrame
        ``ModelComparison.pairwise``: ``model_a``, ``model_b``, ``ratio`` (mean score of a over mean score of b on
        their common units), ``p_value``.
    order : sequence of str, optional
        The models in the order of the rows and columns (default: as they first appear).

    Returns
    -------
    ratio : ndarray of float, shape (M, M)
        ``ratio[i, j]`` = S̄_i / S̄_j.
    p_value : ndarray of float, shape (M, M)
        The p-value of each pair (NaN on the diagonal and for pairs without one).
    models : list of str
        The models of the rows and columns.

    Examples
    --------
    >>> r, p, m = pairwise_matrix(pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "ratio": [0.5],
    ...                                         "p_value": [0.01]}))
    >>> m, r.tolist(), p[1, 0]
    (['a', 'b'], [[1.0, 0.5], [2.0, 1.0]], 0.01)
    """
    a = pairwise["model_a"].astype(str).to_numpy()
    b = pairwise["model_b"].astype(str).to_numpy()
    models = [str(m) for m in order] if order is not None else list(pd.unique(np.r_[a, b]))
    index = pd.Index(models)
    ia, ib = index.get_indexer(a), index.get_indexer(b)
    keep = (ia >= 0) & (ib >= 0)
    ia, ib = ia[keep], ib[keep]
    ratios = pairwise["ratio"].to_numpy(float)[keep]
    p = pairwise["p_value"].to_numpy(float)[keep] if "p_value" in pairwise else np.full(len(ia), np.nan)
    m = len(models)
    ratio, pv = np.full((m, m), np.nan), np.full((m, m), np.nan)
    ratio[ib, ia], pv[ib, ia] = 1.0 / ratios, p  # the reverse direction first: a pair given both ways keeps its own
    ratio[ia, ib], pv[ia, ib] = ratios, p
    np.fill_diagonal(ratio, 1.0)
    np.fill_diagonal(pv, np.nan)
    return ratio, pv, models


def pairwise_figure(
    pairwise: pd.DataFrame,
    order: Sequence[str] | None = None,
    *,
    score: str = "score",
    title: str | None = None,
) -> go.Figure:
    """A heatmap of the pairwise ratios of mean scores, row model over column model, diverging around 1 on a log
    scale, the ratio printed in each cell and its p-value in the hover.

    Blue cells: the row model scores lower (better) than the column model, red: higher.  The colour is
    log10(ratio), centred on 0 and symmetric, so a ratio r and 1 / r get opposite colours of the same strength.

    Parameters
    ----------
    pairwise : pandas.DataFrame
        ``ModelComparison.pairwise`` (see :func:`pairwise_matrix`).
    order : sequence of str, optional
        The models in the order of the rows and columns (the skill plot's order reads best).
    score : str, default "score"
        The score's name ("WIS", "CRPS" …).
    title : str or None
        Figure title (default: the pairwise ratios of the score).

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Heatmap``.
    """
    ratio, pv, models = pairwise_matrix(pairwise, order)
    z = np.log10(ratio)
    top = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 0.0
    top = max(top, np.log10(1.05))
    labels = [plain(m) for m in models]
    text = np.vectorize(_ratio_text, otypes=[object])(ratio) if ratio.size else np.empty((0, 0), object)
    hover = np.array([[f"{labels[i]} / {labels[j]}: {score} ratio {_ratio_text(ratio[i, j])}"
                       + (f"<br>p = {_p_text(pv[i, j])}" if np.isfinite(pv[i, j]) else "")
                       for j in range(len(models))] for i in range(len(models))], dtype=object)
    ticks = _log_ticks(10 ** -top, 10 ** top)
    fig = go.Figure(go.Heatmap(
        x=labels, y=labels, z=z, text=text, texttemplate="%{text}", hovertext=hover, hoverinfo="text",
        colorscale="RdBu_r", zmid=0, zmin=-top, zmax=top, xgap=1, ygap=1,
        colorbar={"title": {"text": f"{score} ratio", "side": "right"}, "tickvals": np.log10(ticks).tolist(),
                  "ticktext": [f"{t:g}" for t in ticks]},
    ))
    fig.update_xaxes(type="category", side="bottom", automargin=True)
    fig.update_yaxes(type="category", autorange="reversed", automargin=True)
    fig = apply_layout(fig, title if title is not None else f"Pairwise {score} ratios",
                       "column model (denominator)", "row model (numerator)", False)
    fig.update_layout(height=max(HEIGHT - 60, min(900, 200 + 46 * len(models))))
    return fig
