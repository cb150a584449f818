"""Figures of a calibrator comparison (one colour per calibrator on every chart)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..calibrators.registry import KINDS
from ._style import REFERENCE_COLOR, merged_colors, plain, set_template, title_layout
from .classification import confidence_histogram_figure, reliability_figure
from .regression import (
    calibration_curve_figure,
    intervals_figure,
    model_colors,
    pit_histogram_figure,
    qq_figure,
    z_histogram_figure,
)
from .regression_levi import levi_panels_figure

__all__ = ["comparison_figures", "comparison_dot_figure"]

#: Per-row height (px) of the dot plot and the room for its legend.
DOT_ROW_HEIGHT = 40
_ARROW = {"lower": "↓", "higher": "↑"}
_KIND_HEADING = {KINDS[0]: "Calibration statistics", KINDS[1]: "Proper scores", KINDS[2]: "Descriptive"}
BEST_COLOR = "#111111"
TARGET_COLOR = "#54a24b"


def _row_range(values: np.ndarray) -> tuple[float, float]:
    """(low, high) of one metric row: the finite values padded by 8% of their span (± 5% of |value| if flat)."""
    v = values[np.isfinite(values)]
    if not v.size:
        return 0.0, 1.0
    lo, hi = float(v.min()), float(v.max())
    pad = 0.08 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1e-12)
    return lo - pad, hi + pad


def comparison_dot_figure(
    summary: pd.DataFrame,
    *,
    colors: Mapping[str, str] | None = None,
    reference: str | None = "uncalibrated",
    title: str | None = None,
) -> go.Figure:
    """Dot plot of a calibrator comparison: one row per metric, one dot per calibrator at its mean over trials.

    Each dot has a ± std whisker.  The best calibrator of each row is drawn as a black-rimmed star and named beside
    it; the ``reference`` calibrator's mean is a dashed vertical line through the row, and a target value (0.9 for
    the 90% coverage) a green one.  Each row and model column has its own x-axis fitted to its values (metrics and
    models have different scales); rows are grouped by the registry's kind (headed in the left margin); the row label
    carries the direction (↓ lower is better, ↑ higher, → target).  An infinite mean (e.g. the NLL of a calibrator
    that gives a target zero density) is drawn as a ▶ at the right edge of its row.  Within a row the calibrators are
    dodged vertically in legend order (first on top), so dots with equal means stay visible.

    Parameters
    ----------
    summary : DataFrame
        :func:`calib_core.diagnosis.tables.comparison_summary`'s table (model, calibrator, metric, label, kind,
        better, target, mean, std, best).
    colors : mapping of str to str, optional
        Colour per calibrator.
    reference : str or None, default "uncalibrated"
        The calibrator whose mean is drawn as a dashed line.
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    need = ["model", "calibrator", "metric", "label", "kind", "better", "target", "mean", "std", "best"]
    missing = [c for c in need if c not in summary.columns]
    if missing:
        raise ValueError(f"comparison summary lacks column(s) {missing}; it has {list(summary.columns)}")
    models = list(pd.unique(summary["model"]))
    cals = list(pd.unique(summary["calibrator"]))
    keys = list(pd.unique(summary["metric"]))
    cmap = merged_colors(cals, colors)
    n_rows, n_cols = max(len(keys), 1), max(len(models), 1)
    plot_height = DOT_ROW_HEIGHT * n_rows
    gap = 22  # px between rows: the x tick labels of the row above
    fig = make_subplots(
        rows=n_rows, cols=n_cols, column_titles=[plain(m) for m in models] if n_cols > 1 else None,
        horizontal_spacing=0.05,
        vertical_spacing=min(gap / (plot_height + gap * n_rows), 0.5 / max(n_rows - 1, 1)),
    )
    n_cal = len(cals)
    dodge = {c: 0.32 - 0.64 * i / max(n_cal - 1, 1) if n_cal > 1 else 0.0 for i, c in enumerate(cals)}
    info = summary.drop_duplicates("metric").set_index("metric")
    by_key = {k: g for k, g in summary.groupby("metric", sort=False)}
    first_of_kind: dict[str, int] = {}
    for r, key in enumerate(keys, start=1):
        rows = by_key[key]
        kind = info.loc[key, "kind"]
        first_of_kind.setdefault(kind, r)
        target = float(info.loc[key, "target"])
        for c, model in enumerate(models, start=1):
            part = rows[rows["model"] == model]
            m = part["mean"].to_numpy(dtype=float)
            sd = np.nan_to_num(part["std"].to_numpy(dtype=float), nan=0.0, posinf=0.0)
            inf = np.isinf(m)
            lo, hi = _row_range(np.concatenate([m - sd, m + sd, [target]]))
            edge = hi  # where an infinite mean is drawn
            if inf.any():
                hi = hi + 0.06 * (hi - lo)
            x = np.where(inf, edge, m)
            best = part["best"].to_numpy(dtype=bool)
            names = part["calibrator"].to_numpy()
            shown = np.isfinite(x)
            text = [
                f"{plain(name)}: {'inf' if i else f'{v:.4g}'}" + (f" ± {e:.3g}" if e > 0 and not i else "")
                + (" · best" if b else "")
                for name, v, e, i, b in zip(names, m, sd, inf, best)
            ]
            fig.add_trace(
                go.Scatter(
                    x=x[shown], y=[dodge[n] for n in names[shown]], mode="markers+text", showlegend=False,
                    textposition="middle right", textfont={"size": 10, "color": BEST_COLOR},
                    texttemplate=[f"  {plain(n)}" if b else "" for n, b in zip(names[shown], best[shown])],
                    marker={
                        "color": [cmap[n] for n in names[shown]],
                        "size": np.where(best, 13, 8)[shown],
                        "symbol": np.where(inf, "triangle-right", np.where(best, "star", "circle"))[shown],
                        "line": {"color": BEST_COLOR, "width": np.where(best, 1.5, 0.0)[shown]},
                    },
                    error_x={"type": "data", "array": np.where(inf, 0.0, sd)[shown], "color": "#888888",
                             "thickness": 1, "width": 2},
                    text=np.asarray(text, dtype=object)[shown],
                    hovertemplate="%{text}<extra>" + str(info.loc[key, "label"]) + "</extra>",
                    meta={"role": "dots", "metric": key, "model": model, "calibrators": list(names[shown]),
                          "best": [str(n) for n in names[best]]},
                ),
                row=r, col=c,
            )
            ref = part.loc[part["calibrator"] == reference, "mean"].to_numpy(dtype=float)
            if ref.size and np.isfinite(ref[0]):
                fig.add_vline(x=float(ref[0]), row=r, col=c, line={"color": REFERENCE_COLOR, "dash": "dash",
                                                                      "width": 1})
            if np.isfinite(target):
                fig.add_vline(x=target, row=r, col=c, line={"color": TARGET_COLOR, "width": 1.5})
            fig.update_xaxes(row=r, col=c, range=[lo, hi], nticks=5, tickfont={"size": 10})
        arrow = _ARROW.get(str(info.loc[key, "better"]), "→ " + str(info.loc[key, "better"])[2:]
                           if info.loc[key, "better"] else "")
        fig.update_yaxes(row=r, col=1, tickvals=[0], ticktext=[f"{info.loc[key, 'label']} {arrow}".strip()])
    fig.update_yaxes(range=[-0.5, 0.5], showgrid=False, zeroline=False, fixedrange=True)
    for c in range(2, n_cols + 1):
        fig.update_yaxes(col=c, showticklabels=False)
    for kind, r in first_of_kind.items():
        yaxis = fig.get_subplot(r, 1).yaxis
        fig.add_annotation(
            text=f"<b>{_KIND_HEADING.get(kind, kind)}</b>", xref="paper", x=0, xanchor="right", xshift=-8,
            yref=f"{yaxis.plotly_name.replace('axis', '')} domain", y=1, yanchor="bottom", showarrow=False,
            font={"size": 11, "color": REFERENCE_COLOR},
        )
    for cal in cals:  # the legend: one entry per calibrator, the best star and the reference lines
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=plain(cal),
                                 marker={"color": cmap[cal], "size": 9}, meta={"role": "legend"}))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="best of the row",
                             marker={"color": "white", "symbol": "star", "size": 12,
                                     "line": {"color": BEST_COLOR, "width": 1.5}}, meta={"role": "legend"}))
    if reference in cmap:
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=f"{plain(reference)} (reference)",
                                 line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, meta={"role": "legend"}))
    if np.isfinite(summary["target"].to_numpy(dtype=float)).any():
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="target value",
                                 line={"color": TARGET_COLOR, "width": 1.5}, meta={"role": "legend"}))
    title_spec, top = title_layout(title)
    legend_rows = 1 + (len(cals) + 2) // 5
    set_template(fig)
    fig.update_layout(
        title=title_spec, height=top + plot_height + gap * n_rows + 30 + 24 * legend_rows,
        margin={"l": 230, "r": 20, "t": top + (22 if n_cols > 1 else 0), "b": 30 + 24 * legend_rows},
        showlegend=True, hovermode="closest",
        legend={"orientation": "h", "yanchor": "top", "y": -(24.0 / (plot_height + gap * n_rows)),
                "xanchor": "left", "x": 0},
    )
    return fig



def _single_band(fig, names: list[str]) -> None:
    """The 95% consistency band depends on N only (the same test rows for every calibrator): draw it once, grey."""
    first = True
    for tr in fig.data:
        meta = tr.meta or {}
        if meta.get("role") in ("band_low", "band_high"):
            if meta.get("name") != names[0]:
                tr.visible = False
            elif meta.get("role") == "band_high":
                tr.fillcolor = "rgba(85,85,85,0.15)"
                tr.name = "95% band (perfect calibration)"
                tr.showlegend = first
                first = False


def comparison_figures(result: Any, model: str, *, reference: str | None = "uncalibrated",
                       log_axes: bool = False) -> dict[str, Any]:
    """Before/after figures of an evaluation for one model, one colour per calibrator.

    The diagram tables of the first trial's test rows (``cc.evaluate(..., diagrams=True)``).  The Levi diagram is
    drawn as small multiples (:func:`calib_core.plots.regression_levi.levi_panels_figure`: one panel per calibrator,
    ``reference`` in grey behind each).

    Parameters
    ----------
    result : EvaluationResult
        An evaluation with diagrams.
    model : str
        The model whose figures are drawn.
    reference : str or None, default "uncalibrated"
        The calibrator drawn in grey behind each Levi panel.
    log_axes : bool, default False
        Log-log axes for the Levi panels.

    Returns
    -------
    dict of str to plotly.graph_objects.Figure
        Figure title → figure (empty when the model has no diagrams).
    """
    task = result.task
    tables = (result.diagrams or {}).get(model, {})
    names = [n for n in result.calibrators if n in tables]
    colors = model_colors(result.calibrators)
    if not names:
        return {}

    def pick(key: str) -> dict[str, pd.DataFrame]:
        return {n: tables[n][key] for n in names}

    if task == "regression":
        kul = calibration_curve_figure(pick("calibration_curve"), colors=colors,
                                             title="Quantile calibration (test rows)")
        _single_band(kul, names)
        return {
            "Quantile calibration (Kuleshov)": kul,
            "RMSE vs RMV (Levi)": levi_panels_figure(pick("levi_bins"), colors=colors, reference=reference,
                                                     log_axes=log_axes,
                                                     title="RMSE vs RMV per σ-bin (test rows)"),
            "PIT histogram": pit_histogram_figure(pick("pit_histogram"), colors=colors,
                                                        title="PIT histogram (test rows)"),
            "Central intervals": intervals_figure(pick("intervals"), colors=colors,
                                                        title="Central intervals (test rows)"),
            "Standardised residuals": z_histogram_figure(pick("z_histogram"), colors=colors,
                                                               title="Standardised residuals (test rows)"),
            "Q-Q plot": qq_figure(pick("qq"), colors=colors, title="Normal Q-Q plot of z (test rows)"),
        }
    rel = pick("reliability")
    hist = confidence_histogram_figure(rel, colors=colors, title="Confidence histogram (test rows)")
    for tr in hist.data:  # one legend entry per calibrator: its mean-confidence / accuracy lines stay on hover
        if (tr.meta or {}).get("role") in ("conf_line", "acc_line"):
            tr.showlegend = False
    return {
        "Reliability diagram": reliability_figure(rel, colors=colors, title="Reliability diagram (test rows)"),
        "Confidence histogram": hist,
    }
