"""The Jupyter display of a :class:`~calib_core.base.report.Report` (``Report._repr_html_``): the metric table of the
whole data and the main diagram as a small inline SVG.

The main diagram is Kuleshov's quantile-calibration curve (Levi's RMSE-vs-RMV diagram when the report has no curve)
for regression and the reliability diagram for classification; every model is one colour (at most
:data:`REPR_MAX_MODELS`).  Offline and small: no scripts, no CDN, every text from the data escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from .predictions import ALL

__all__ = ["REPR_MAX_MODELS", "report_html_fragment"]

#: At most this many models are drawn and tabulated by ``_repr_html_`` (the rest are named in a note).
REPR_MAX_MODELS = 8
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
_W, _H, _L, _R, _T, _B = 360, 300, 48, 12, 12, 40  # SVG size and margins (px)


def _fmt(value: float) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.4g}"


def _main_diagram(task: str, tables: Mapping[str, pd.DataFrame]) -> tuple[str, pd.DataFrame] | None:
    """The diagram a Report shows first: Kuleshov's curve (else Levi's) for regression, reliability otherwise."""
    names = ("calibration_curve", "levi_bins") if task == "regression" else ("reliability",)
    return next(((n, tables[n]) for n in names if n in tables and len(tables[n])), None)


def _curve(name: str, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """x, y (and a band, if any) of one model's main diagram."""
    if name == "calibration_curve":
        return (table["level"].to_numpy(float), table["observed"].to_numpy(float),
                table["band_low"].to_numpy(float), table["band_high"].to_numpy(float))
    if name == "levi_bins":
        return table["rmv"].to_numpy(float), table["rmse"].to_numpy(float), None, None
    table = table[table["count"] > 0]  # reliability: empty bins have no accuracy
    return table["confidence"].to_numpy(float), table["accuracy"].to_numpy(float), None, None


_AXES = {
    "calibration_curve": ("Kuleshov calibration curve", "expected quantile level", "observed frequency"),
    "levi_bins": ("Levi reliability diagram", "RMV (predicted σ)", "RMSE (observed error)"),
    "reliability": ("Reliability diagram", "confidence", "accuracy"),
}


def _svg(name: str, curves: list[tuple[str, tuple]]) -> str:
    """A small inline SVG of the main diagram: the diagonal, each model's curve (and band), axes, legend."""
    finite = [np.isfinite(x) & np.isfinite(y) for _, (x, y, _lo, _hi) in curves]
    if name == "levi_bins":  # RMSE vs RMV: both axes from 0 to the largest value
        top = max([float(np.max(np.r_[x[f], y[f]])) for (_, (x, y, _, _)), f in zip(curves, finite) if f.any()],
                  default=1.0)
        top = top * 1.05 if top > 0 else 1.0
    else:
        top = 1.0
    pw, ph = _W - _L - _R, _H - _T - _B

    def px(v: np.ndarray) -> np.ndarray:
        return _L + np.clip(v / top, 0, 1) * pw

    def py(v: np.ndarray) -> np.ndarray:
        return _T + (1 - np.clip(v / top, 0, 1)) * ph

    def points(xs: np.ndarray, ys: np.ndarray) -> str:
        return " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px(xs), py(ys)))

    title, xlabel, ylabel = (escape(t) for t in _AXES[name])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
           f'font-family="sans-serif" font-size="11" role="img" aria-label="{title}">',
           f"<title>{title}</title>",
           f'<rect x="{_L}" y="{_T}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>']
    for i in range(5):  # ticks and grid
        v = top * i / 4
        x, y = float(px(np.array(v))), float(py(np.array(v)))
        out.append(f'<line x1="{x:.1f}" y1="{_T}" x2="{x:.1f}" y2="{_T + ph}" stroke="#eee"/>'
                   f'<line x1="{_L}" y1="{y:.1f}" x2="{_L + pw}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{x:.1f}" y="{_T + ph + 13}" text-anchor="middle">{v:.3g}</text>'
                   f'<text x="{_L - 4}" y="{y + 4:.1f}" text-anchor="end">{v:.3g}</text>')
    out.append(f'<line x1="{_L}" y1="{_T + ph}" x2="{_L + pw}" y2="{_T}" stroke="#444" stroke-dasharray="4 3"/>')
    for i, ((_model, (x, y, lo, hi)), f) in enumerate(zip(curves, finite)):
        colour = _COLOURS[i % len(_COLOURS)]
        if lo is not None and hi is not None:
            band = np.isfinite(x) & np.isfinite(lo) & np.isfinite(hi)
            if band.any():
                outline = points(np.r_[x[band], x[band][::-1]], np.r_[hi[band], lo[band][::-1]])
                out.append(f'<polygon points="{outline}" fill="{colour}" fill-opacity="0.12" stroke="none"/>')
        if f.any():
            out.append(f'<polyline points="{points(x[f], y[f])}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
            if name != "calibration_curve":  # binned diagrams: one marker per bin
                out.extend(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2.5" fill="{colour}"/>'
                           for a, b in zip(px(x[f]), py(y[f])))
    for i, (model, _) in enumerate(curves):  # legend, top left inside the plot
        colour = _COLOURS[i % len(_COLOURS)]
        y = _T + 14 + 14 * i
        label = escape(model if len(model) <= 40 else model[:39] + "…")
        out.append(f'<line x1="{_L + 8}" y1="{y - 4}" x2="{_L + 24}" y2="{y - 4}" stroke="{colour}" stroke-width="2"/>'
                   f'<text x="{_L + 28}" y="{y}">{label}</text>')
    out.append(f'<text x="{_L + pw / 2:.1f}" y="{_H - 8}" text-anchor="middle">{xlabel}</text>'
               f'<text transform="translate(12 {_T + ph / 2:.1f}) rotate(-90)" text-anchor="middle">{ylabel}</text>'
               "</svg>")
    return "".join(out)


def _cell(row: pd.Series) -> str:
    ci = f" [{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]" if np.isfinite(row["ci_low"]) else ""
    perfect = f"<br><small>perfect {_fmt(row['perfect'])}</small>" if np.isfinite(row["perfect"]) else ""
    return f"<td>{_fmt(row['value'])}<small>{ci}</small>{perfect}</td>"


def report_html_fragment(report: Any) -> str:
    """``Report._repr_html_``: the metric table of the whole data and the main diagram (inline SVG, no scripts).

    Parameters
    ----------
    report : Report
        The report (:class:`calib_core.base.report.Report`; read through its attributes).

    Returns
    -------
    str
        An HTML fragment.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML* (the quantile-calibration curve).
    .. [2] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659* (RMSE against RMV).
    .. [3] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML* (the reliability diagram).
    """
    models = report.models
    shown = models[:REPR_MAX_MODELS]
    m = report.metrics[(report.metrics["group"] == ALL) & report.metrics["model"].isin(shown)]
    cells = {(r["model"], r["metric"]): _cell(r) for _, r in m.iterrows()}
    level = report.options.get("level", 0.95)
    head = "".join(f"<th>{escape(str(model))}</th>" for model in shown)
    body = "".join(
        f"<tr><th>{escape(str(metric))}</th>" + "".join(cells.get((model, metric), "<td></td>") for model in shown)
        + "</tr>"
        for metric in pd.unique(m["metric"])
    )
    table = (f'<table class="dataframe"><thead><tr><th>metric</th>{head}</tr></thead><tbody>{body}</tbody></table>'
             f"<small>value [{level:.0%} bootstrap CI]; perfect: the value a perfectly calibrated forecaster with the "
             "same predictions gets</small>")
    groups = [g for g in report.groups if g != ALL]
    notes = []
    if len(models) > len(shown):
        notes.append(f"first {len(shown)} of {len(models)} models shown")
    if groups:
        notes.append(f"whole data shown; {len(groups)} groups in <code>report.table(model, group)</code>")
    summary = (f"<b>Calibration report</b> — {escape(report.task)}, {escape(str(report.source))}, "
               f"{report.n_rows:,} rows, {len(models)} model(s)" + "".join(f"; {n}" for n in notes))
    first = next((_main_diagram(report.task, report.diagrams[(mod, ALL)]) for mod in shown
                  if (mod, ALL) in report.diagrams), None)
    figure = ""
    if first is not None:
        name = first[0]
        curves = [(str(mod), _curve(name, report.diagrams[(mod, ALL)][name])) for mod in shown
                  if name in report.diagrams.get((mod, ALL), {})]
        figure = f"<div>{_svg(name, curves)}</div>"
    return (f'<div class="calibration-report"><p>{summary}</p>'
            f'<div style="display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start">'
            f"{figure}<div>{table}</div></div></div>")
