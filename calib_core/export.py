"""Exports: self-contained HTML reports, single-figure HTML, CSV/Parquet bytes and calibrated-prediction tables.

Everything here is pure Python (pandas, plotly, pyarrow); the dashboard's download buttons and the command line
(``python -m calib_core report FILE --out report.html``) call the same functions, so the browser and the CLI write
the same report.

* :func:`report_html` — one HTML file that renders **offline**: plotly.js is inlined once
  (``plotly.offline.get_plotlyjs()``, ~4.8 MB), every figure is a ``<div>`` drawn by it, and there is no external
  ``<script src>``, stylesheet or font.  It contains the data summary (rows read / kept / dropped and why), the
  headline verdict of every model and group in words, the metric tables with their interval, the value a perfectly
  calibrated forecaster would get, the p-value of every calibration statistic and its Holm / BH flag, any extra
  tables (e.g. the calibrator comparison), the options and the versions.
* :func:`figure_html` — one figure as a complete offline HTML page.
* :func:`to_csv_bytes` — CSV with spreadsheet formula injection neutralised (OWASP "CSV injection"): a text cell
  that starts with ``=``, ``+``, ``-``, ``@``, tab, CR or LF gets a leading single quote, so Excel/LibreOffice show
  it as text instead of evaluating it.  Numeric columns are written as numbers (``-1.5`` stays ``-1.5``), and so
  are text cells that are a plain decimal number literal (``"-1.5"``, ``"+3e-2"``): a spreadsheet reads those as
  numbers, never as formulas.  Column names are neutralised like text cells.
* :func:`to_parquet_bytes` — Parquet (pyarrow), a typed binary format that needs no neutralisation.
* :func:`calibrated_predictions_frame` / :func:`calibrated_probabilities_frame` — a (recalibrated) regression
  distribution or classification probability matrix as a tidy table in the loader's own file layout, so
  an exported file can be uploaded again.

Figures carry an explicit template: ``import streamlit`` replaces Plotly's default template with a placeholder
one (colours ``#000001``…) that only Streamlit's frontend understands; :func:`figure_html` and
:func:`report_html` replace such a template (or a missing one) with ``calib_core.plots.TEMPLATE``.
"""

from __future__ import annotations

import datetime as _dt
import html
import io
import platform
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly
import plotly.graph_objects as go
import plotly.io as pio

from . import __version__, plots
from .base.predictions import PredictionSet
from .base.protocol import EvaluationResult
from .base.regression import PredictiveDistribution
from .base.report import ALL, Report
from .plots.classification import confidence_histogram_figure, reliability_figure

__all__ = [
    "EXPORT_LEVELS",
    "FORMULA_PREFIXES",
    "neutralise_formulas",
    "to_csv_bytes",
    "to_parquet_bytes",
    "figure_html",
    "default_figures",
    "report_html",
    "metric_table_html_frame",
    "metrics_with_verdicts",
    "calibrated_predictions_frame",
    "calibrated_probabilities_frame",
    "calibrated_frame",
    "evaluation_figures",
    "evaluation_report_html",
]

#: Quantile levels written by :func:`calibrated_predictions_frame` (columns ``q0.05`` … ``q0.95``).
EXPORT_LEVELS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
#: First characters that make a spreadsheet evaluate a cell (OWASP CSV injection; LF added for safety).
FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r", "\n")
# A plain decimal number literal (what a spreadsheet parses as a number, never as a formula).
_NUMBER_LITERAL = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"


# =============================================================================================
# CSV / Parquet
# =============================================================================================


_IS_STR = np.frompyfunc(lambda v: isinstance(v, str), 1, 1)
_NUMBER_RE = re.compile(_NUMBER_LITERAL)


def _neutralise_series(s: pd.Series) -> pd.Series:
    """Prefix ``'`` to the string cells of ``s`` that start with a formula character; ``s`` itself when none does.

    Array operations on the cells (their first characters compared at once); only the few cells that start with a
    formula character are matched against the number-literal pattern one by one."""
    values = s.to_numpy(dtype=object)
    if values.size == 0:
        return s
    is_str = _IS_STR(values).astype(bool)
    if not is_str.any():
        return s
    where = np.flatnonzero(is_str)
    first = values[where].astype(str).astype("U1")  # each text cell's first character ('' for an empty cell)
    starts = where[np.isin(first, FORMULA_PREFIXES)]
    risky = [i for i in starts if not _NUMBER_RE.fullmatch(values[i])]
    if not risky:
        return s
    out = s.astype(object).copy()
    out.iloc[risky] = ["'" + values[i] for i in risky]
    return out


def neutralise_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells and column names cannot start a spreadsheet formula.

    Rule (OWASP, "CSV Injection"): a text cell whose first character is one of ``= + - @``, tab, CR or LF is
    prefixed with a single quote ``'``, unless the whole cell is a plain decimal number literal (``-1.5``,
    ``+2``, ``1e-3``), which a spreadsheet reads as a number.  Numeric, boolean and datetime columns are left
    untouched, so negative numbers stay numbers.
    """
    out = df.copy()
    for col in out.columns:
        s = out[col]
        if (
            pd.api.types.is_numeric_dtype(s)
            or pd.api.types.is_bool_dtype(s)
            or pd.api.types.is_datetime64_any_dtype(s)
        ):
            continue
        categorical = isinstance(s.dtype, pd.CategoricalDtype)
        if categorical:
            s = s.astype(object)
        safe = _neutralise_series(s)
        if safe is not s or categorical:  # an unchanged text column is left as it is
            out[col] = safe
    names = pd.Series([str(c) for c in out.columns], dtype=object)
    out.columns = list(_neutralise_series(names))
    return out


def to_csv_bytes(df: pd.DataFrame, *, index: bool = False) -> bytes:
    """UTF-8 CSV of ``df`` (RFC 4180: CRLF line ends, so fields holding CR or LF are quoted) with formula
    injection neutralised (see :func:`neutralise_formulas`).

    Floats are written with full precision (``repr``), NaN as an empty cell.
    """
    frame = df.reset_index() if index else df
    # CRLF line ends (RFC 4180): a field holding a lone CR or LF is then always quoted
    return neutralise_formulas(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def to_parquet_bytes(df: pd.DataFrame, *, index: bool = False) -> bytes:
    """Parquet bytes of ``df`` (pyarrow engine; the index is dropped unless ``index=True``).

    Column names are converted to strings (Parquet requires it); object columns holding mixed types are written
    as strings.
    """
    frame = df.reset_index() if index else df.reset_index(drop=True)
    frame = frame.rename(columns=str)
    for col in frame.columns:
        s = frame[col]
        if s.dtype == object:
            kinds = {type(v) for v in s.dropna()}
            if len(kinds) > 1:
                frame[col] = s.map(lambda v: v if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))
    buf = io.BytesIO()
    frame.to_parquet(buf, engine="pyarrow", index=False)
    return buf.getvalue()


# =============================================================================================
# calibrated predictions as tables
# =============================================================================================


def _meta_columns(pset: PredictionSet, n: int) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    if pset.row_number is not None and len(pset.row_number) == n:
        out["row"] = np.asarray(pset.row_number)
    return out


def _label_columns(pset: PredictionSet, out: dict[str, Any]) -> None:
    for name in ("split", "group", "model"):
        a = getattr(pset, name)
        if a is not None:
            out[name] = np.asarray(a).astype(str)


def _level_name(p: float) -> str:
    return f"q{p:g}"


def calibrated_predictions_frame(
    pset: PredictionSet,
    dist: PredictiveDistribution,
    *,
    levels: Sequence[float] = EXPORT_LEVELS,
    calibrator: str | None = None,
) -> pd.DataFrame:
    """A (recalibrated) regression distribution as a tidy table, one row per prediction row.

    Columns: ``row`` (1-based row in the source file, when known), ``y``, ``mean`` = E[Y], ``std`` = sqrt(Var Y),
    ``q<p>`` = F⁻¹(p) for every level p (default ``q0.05 … q0.95``), then ``split``, ``group``, ``model`` when the
    set has them and ``calibrator`` when given.  Reading it back with ``cc.load_predictions`` gives the same
    distribution in the quantile layout (piecewise-linear between the exported quantiles).
    ``dist`` must have the same rows as ``pset`` (e.g. ``calibrator.transform(pset.dist)`` or the test rows of
    both).
    """
    n = len(dist)
    if pset.y is None or len(pset.y) != n:
        raise ValueError(f"the distribution has {n} rows but the prediction set has {pset.n_rows}")
    p = np.asarray(sorted({float(v) for v in levels}), dtype=float)
    if p.size and (p.min() <= 0 or p.max() >= 1):
        raise ValueError("quantile levels must lie strictly between 0 and 1")
    out: dict[str, Any] = _meta_columns(pset, n)
    out["y"] = np.asarray(pset.y, dtype=float)
    out["mean"] = np.asarray(dist.mean(), dtype=float)
    out["std"] = np.asarray(dist.std(), dtype=float)
    if p.size:
        q = np.asarray(dist.ppf(p[None, :]), dtype=float).reshape(n, p.size)
        for j, level in enumerate(p):
            out[_level_name(level)] = q[:, j]
    _label_columns(pset, out)
    if calibrator is not None:
        out["calibrator"] = np.full(n, calibrator, dtype=object)
    return pd.DataFrame(out)


def calibrated_probabilities_frame(
    pset: PredictionSet, probs: np.ndarray, *, calibrator: str | None = None
) -> pd.DataFrame:
    """(Recalibrated) class probabilities as a tidy table in the loader's probability layout.

    Columns: ``row`` (when known), ``label`` (0..K−1), ``prob_0 … prob_{K−1}``, ``confidence`` = max_k p_k,
    ``prediction`` = argmax_k p_k, ``split``/``group``/``model`` when present and ``calibrator`` when given.
    """
    P = np.asarray(probs, dtype=float)
    if P.ndim == 1:
        P = np.column_stack([1.0 - P, P])
    n = P.shape[0]
    if pset.labels is None or len(pset.labels) != n:
        raise ValueError(f"the probabilities have {n} rows but the prediction set has {pset.n_rows}")
    out: dict[str, Any] = _meta_columns(pset, n)
    out["label"] = np.asarray(pset.labels)
    for k in range(P.shape[1]):
        out[f"prob_{k}"] = P[:, k]
    out["confidence"] = P.max(axis=1)
    out["prediction"] = P.argmax(axis=1)
    _label_columns(pset, out)
    if calibrator is not None:
        out["calibrator"] = np.full(n, calibrator, dtype=object)
    return pd.DataFrame(out)


def calibrated_frame(pset: PredictionSet, result: EvaluationResult, name: str) -> pd.DataFrame:
    """Calibrated predictions of every row by calibrator ``name`` of an evaluation (``cc.evaluate(...,
    diagrams=True)``: each model's calibrator fitted on its first trial's calibration rows), in the file layout of
    :func:`calibrated_predictions_frame` / :func:`calibrated_probabilities_frame`; ``split`` says which rows were
    used for fitting (cal) and which were held out (test)."""
    parts = []
    for model, by_cal in (result.calibrated or {}).items():
        if name not in by_cal:
            continue
        rows = np.arange(pset.n_rows) if pset.model is None else np.flatnonzero(pset.model == model)
        sub = pset.take(rows)
        sub.split = result.split_labels[rows]
        if pset.task == "regression":
            parts.append(calibrated_predictions_frame(sub, by_cal[name], calibrator=name))
        else:
            parts.append(calibrated_probabilities_frame(sub, by_cal[name], calibrator=name))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# =============================================================================================
# figures
# =============================================================================================


def _is_placeholder_template(fig: go.Figure) -> bool:
    """True when the figure has no template or Streamlit's placeholder one (colours #000001 …)."""
    tmpl = fig.layout.template
    if tmpl is None:
        return True
    colorway = tmpl.layout.colorway
    if not tmpl.to_plotly_json():
        return True
    return bool(colorway) and str(colorway[0]).lower() == "#000001"


def _with_template(fig: go.Figure) -> go.Figure:
    fig = go.Figure(fig)
    if _is_placeholder_template(fig):
        fig.update_layout(template=plots.TEMPLATE)
    return fig


def figure_html(fig: go.Figure, *, title: str | None = None) -> str:
    """One figure as a complete HTML page that renders offline (plotly.js inlined, explicit template)."""
    fig = _with_template(fig)
    page_title = title or (fig.layout.title.text if fig.layout.title and fig.layout.title.text else "figure")
    body = pio.to_html(
        fig, include_plotlyjs=True, full_html=True, config={"displaylogo": False}, default_width="100%"
    )
    # give the page a title (plotly's full_html has none)
    return body.replace("<head>", f"<head><title>{html.escape(page_title)}</title>", 1)


def _tables_of(report: Report, name: str, group: str = ALL) -> dict[str, pd.DataFrame]:
    return {
        m: report.diagrams[(m, group)][name]
        for m in report.models
        if (m, group) in report.diagrams and name in report.diagrams[(m, group)]
    }


_REGRESSION_FIGURES = (
    ("calibration_curve", "calibration_curve_figure"),
    ("levi_bins", "levi_figure"),
    ("pit_histogram", "pit_histogram_figure"),
    ("z_histogram", "z_histogram_figure"),
    ("qq", "qq_figure"),
    ("intervals", "intervals_figure"),
)
def default_figures(report: Report, group: str = ALL) -> dict[str, go.Figure]:
    """The diagrams of a Report, one figure per diagram with every model overlaid (one colour per model).

    Regression: Kuleshov quantile-calibration curve, Levi RMSE-vs-RMV, PIT histogram, z histogram, Q-Q plot and
    central intervals (``calib_core.plots`` builders).  Classification: the reliability diagram and confidence
    histogram (Guo et al. 2017 Fig. 1) and, for binary sets, the positive-class reliability diagram.  Built from
    the diagram tables only (O(bins)).
    """
    colors = plots.model_colors(report.models)
    out: dict[str, go.Figure] = {}
    if report.task == "regression":
        for table, builder in _REGRESSION_FIGURES:
            tables = _tables_of(report, table, group)
            if tables:
                fig = getattr(plots, builder)(tables, colors=colors)
                out[fig.layout.title.text or table] = fig
    else:
        tables = _tables_of(report, "reliability", group)
        if tables:
            out["Reliability diagram"] = reliability_figure(tables, colors=colors)
            out["Confidence histogram"] = confidence_histogram_figure(tables, colors=colors)
        positive = _tables_of(report, "reliability_positive", group)
        if positive:
            out["Positive-class reliability"] = reliability_figure(
                positive, colors=colors, target="positive", title="Positive-class reliability (P(y = 1))"
            )
    return out


# =============================================================================================
# HTML report
# =============================================================================================

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:2rem auto;
max-width:1200px;padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.7rem;margin-bottom:.2rem}h2{font-size:1.3rem;margin-top:2.2rem;border-bottom:1px solid #ddd;
padding-bottom:.2rem}h3{font-size:1.05rem;margin-top:1.4rem}
.meta{color:#666;font-size:.9rem}
table.tbl{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1rem 0}
table.tbl th,table.tbl td{border:1px solid #ddd;padding:.25rem .5rem;text-align:right}
table.tbl th{background:#f4f6f8}table.tbl td:first-child,table.tbl th:first-child{text-align:left}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1rem}
.figure{border:1px solid #eee;border-radius:4px;padding:.4rem;min-width:0}
.note{color:#555;font-size:.9rem}
.beyond{color:#b00020;font-weight:600}
.ok{color:#1b5e20}
table.kv td{text-align:left}
"""


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, (float, np.floating)):
        return "–" if not np.isfinite(x) else f"{float(x):.4g}"
    return str(x)


def _table_html(df: pd.DataFrame) -> str:
    """HTML table with escaped cells and 4 significant digits for floats."""
    if df is None or df.empty:
        return '<p class="note">(none)</p>'
    return df.to_html(
        index=False,
        escape=True,
        border=0,
        classes="tbl",
        na_rep="–",
        float_format=lambda v: f"{v:.4g}",
    )


def metric_table_html_frame(report: Report, group: str = ALL) -> pd.DataFrame:
    """The metric table of one group as displayed in the report: value, interval, perfect-calibration value,
    p-value (± Monte-Carlo s.e.), verdict of the test (Holm / BH flag), test and note."""
    t = plots.metric_display_table(report.metrics, model=None, group=group)
    level = report.options.get("level", 0.95)
    pct = f"{level:.0%}"
    out = pd.DataFrame(
        {
            "model": t["model"].astype(str),
            "metric": t["label"],
            "value": t["value"].astype(float),
            "debiased": t["debiased"].astype(float),
            f"{pct} CI": [f"[{_fmt(a)}, {_fmt(b)}]" for a, b in zip(t["ci_low"], t["ci_high"])],
            "perfectly calibrated": t["perfect"].astype(float),
            "p-value": t["p_text"],
            "verdict": t["verdict"],
            "test": t["test"],
            "note": t["note"],
        }
    )
    if out["model"].nunique() <= 1:
        out = out.drop(columns="model")
    if not np.isfinite(out["debiased"].to_numpy(dtype=float)).any():
        out = out.drop(columns="debiased")
    return out


def metrics_with_verdicts(metrics: pd.DataFrame, verdicts: pd.DataFrame | None) -> pd.DataFrame:
    """The long metric table with the headline of its (model, group) appended to every row: ``headline_verdict``,
    ``headline_direction``, ``headline_p_value``, ``headline`` (the sentence) — the metric CSV export."""
    if verdicts is None or verdicts.empty:
        return metrics
    keys = [k for k in ("model", "group", "rows") if k in metrics.columns and k in verdicts.columns]
    head = verdicts[keys + ["verdict", "direction", "p_value", "sentence"]].rename(
        columns={"verdict": "headline_verdict", "direction": "headline_direction", "p_value": "headline_p_value",
                 "sentence": "headline"}
    )
    return metrics.merge(head, on=keys, how="left")


def _verdicts_html(report: Report, group: str) -> str:
    v = report.verdicts
    v = v[v["group"] == group] if len(v) else v
    if not len(v):
        return ""
    items = []
    for _, row in v.iterrows():
        cls = {"miscalibrated": "beyond", "calibrated": "ok"}.get(str(row["verdict"]), "")
        who = f"<b>{html.escape(str(row['model']))}</b>: " if len(v) > 1 else ""
        items.append(f'<li class="{cls}">{who}{html.escape(str(row["sentence"]))}</li>')
    return '<ul class="verdicts">' + "".join(items) + "</ul>"


def _versions() -> dict[str, str]:
    import scipy
    import sklearn

    return {
        "calib_core": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "plotly": plotly.__version__,
    }


def _kv_table(items: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_fmt(v))}</td></tr>" for k, v in items.items()
    )
    return f'<table class="tbl kv">{rows}</table>'


def _data_summary(report: Report | None, pset: PredictionSet | None) -> tuple[dict[str, Any], pd.DataFrame | None]:
    info: dict[str, Any] = {}
    dropped: pd.DataFrame | None = None
    if pset is not None:
        info["file"] = pset.source
        info["task"] = pset.task
        info["layout"] = pset.layout
        n_read = pset.n_read or pset.n_rows
        info["rows read"] = f"{n_read:,}"
        info["rows kept"] = f"{pset.n_rows:,}"
        info["rows dropped"] = f"{pset.dropped.total:,}"
        info["models"] = ", ".join(map(str, pset.models()))
        if pset.group is not None:
            info["groups"] = ", ".join(map(str, pd.unique(pset.group)[:20]))
        if pset.split is not None:
            vals, counts = np.unique(pset.split.astype(str), return_counts=True)
            info["split"] = ", ".join(f"{v}: {c:,}" for v, c in zip(vals, counts))
        if pset.task == "classification" and pset.classes is not None:
            info["classes"] = f"{len(pset.classes)}: " + ", ".join(map(str, pset.classes[:20]))
        if pset.features is not None and pset.features.shape[1]:
            info["feature columns"] = ", ".join(map(str, pset.features.columns[:20]))
        dropped = pset.dropped.summary()
    elif report is not None:
        info["file"] = report.source
        info["task"] = report.task
        info["layout"] = report.options.get("layout", "")
        info["rows kept"] = f"{report.n_rows:,}"
        info["models"] = ", ".join(map(str, report.models))
        dropped = report.dropped
        if dropped is not None and len(dropped):
            info["rows dropped"] = f"{int(dropped['count'].sum()):,} (sum over reasons)"
    return info, dropped


def report_html(
    report: Report | None,
    *,
    title: str,
    figures: Mapping[str, go.Figure] | Sequence[go.Figure] | None = None,
    prediction_set: PredictionSet | None = None,
    tables: Mapping[str, pd.DataFrame] | None = None,
    notes: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
) -> str:
    """A self-contained HTML report that renders offline.

    Sections: header (title, time, version); data summary (file, task, layout, rows read / kept / dropped with the
    reasons and row numbers, models, groups, split, loader messages — from ``prediction_set`` when given, else from
    the Report); notes; per group the headline verdict of every model in words and the metric table, each metric
    with its value, interval, the mean value of a perfectly calibrated forecaster with the same predictions, the
    p-value of its test and its Holm / BH flag (see ``calib_core.plots.metric_display_table``); ``tables``
    (extra titled tables, e.g. the calibrator comparison); figures (``figures`` or, when ``None``,
    :func:`default_figures` of the report); options; versions.  plotly.js is inlined once in ``<head>`` and every
    figure is a div drawn by it; all text is HTML-escaped.  ``report`` may be ``None`` for pages whose content is
    only ``tables``/``figures``.
    """
    now = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    versions = _versions()
    parts: list[str] = []
    parts.append(f"<h1>{html.escape(title)}</h1>")
    parts.append(f'<p class="meta">Calibration Lab {html.escape(versions["calib_core"])} · generated {now}</p>')

    info, dropped = _data_summary(report, prediction_set)
    if info:
        parts.append("<h2>Data</h2>")
        parts.append(_kv_table(info))
        if dropped is not None and len(dropped):
            parts.append("<h3>Dropped rows</h3>")
            parts.append(_table_html(dropped))
        msgs = list(prediction_set.messages) if prediction_set is not None else []
        if msgs:
            parts.append("<h3>Loader messages</h3><ul>" + "".join(f"<li>{html.escape(m)}</li>" for m in msgs) + "</ul>")

    all_notes = list(notes) + (list(report.options.get("notes", [])) if report is not None else [])
    if all_notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(str(m))}</li>" for m in all_notes) + "</ul>")

    if report is not None and len(report.metrics):
        parts.append("<h2>Metrics</h2>")
        parts.append(
            '<p class="note">Each value comes with its interval and the value a perfectly calibrated forecaster '
            "with the same predicted distributions would get at this sample size; every calibration statistic with "
            "the p-value of the test of perfect calibration. The headline verdict of each model comes from a small "
            "primary family of tests with Holm's correction (family-wise 5%, <em>rejected (Holm)</em>); the other "
            "calibration statistics are flagged by Benjamini–Hochberg at a 5% false-discovery rate "
            "(<em>flagged (BH)</em>).</p>"
        )
        for group in report.groups:
            frame = metric_table_html_frame(report, group)
            parts.append(f"<h3>{'All rows' if group == ALL else 'Group ' + html.escape(str(group))}</h3>")
            parts.append(_verdicts_html(report, group))
            table = _table_html(frame)
            for text in ("rejected (Holm)", "flagged (BH)"):
                table = table.replace(f"<td>{text}</td>", f'<td class="beyond">{text}</td>')
            parts.append(table)

    for name, table in (tables or {}).items():
        parts.append(f"<h2>{html.escape(str(name))}</h2>")
        parts.append(_table_html(table))

    if figures is None:
        figures = default_figures(report) if report is not None else {}
    named = dict(figures) if isinstance(figures, Mapping) else {f"Figure {i + 1}": f for i, f in enumerate(figures)}
    if named:
        parts.append("<h2>Diagrams</h2>")
        parts.append('<div class="figs">')
        for i, (name, fig) in enumerate(named.items()):
            div = pio.to_html(
                _with_template(fig),
                include_plotlyjs=False,
                full_html=False,
                div_id=f"calib-figure-{i}",
                config={"displaylogo": False, "responsive": True},
                default_width="100%",
            )
            parts.append(f'<div class="figure" title="{html.escape(str(name))}">{div}</div>')
        parts.append("</div>")

    opts: dict[str, Any] = {}
    if report is not None:
        opts.update({k: v for k, v in report.options.items() if k not in ("notes", "classes") and v not in ([], "")})
    opts.update(options or {})
    if opts:
        parts.append("<h2>Options</h2>")
        parts.append(_kv_table({k: v if not isinstance(v, (list, tuple)) else ", ".join(map(str, v))
                                for k, v in opts.items()}))
    parts.append("<h2>Versions</h2>")
    parts.append(_kv_table(versions))

    from plotly.offline import get_plotlyjs

    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n"
        f'<script type="text/javascript">{get_plotlyjs()}</script>\n</head>\n<body>\n'
        + "\n".join(parts)
        + "\n</body>\n</html>\n"
    )


def evaluation_figures(result: EvaluationResult) -> dict[str, go.Figure]:
    """The before/after figures of every model of an evaluation run with ``diagrams=True`` (named
    "<figure> — <model>" when there are several models)."""
    models = [m for m in result.diagrams if result.diagrams[m]]
    out: dict[str, go.Figure] = {}
    for m in models:
        for name, fig in plots.comparison_figures(result, m).items():
            out[f"{name} — {m}" if len(models) > 1 else name] = fig
    return out


def evaluation_report_html(
    prediction_set: PredictionSet | None,
    result: EvaluationResult,
    *,
    title: str,
    figures: Mapping[str, go.Figure] | None = None,
    options: Mapping[str, Any] | None = None,
) -> str:
    """A self-contained HTML report of an evaluation (``cc.evaluate``): the comparison table on held-out rows
    (mean ± std over trials, the registry's "better" direction), the messages as notes, the before/after figures
    (``figures``, default :func:`evaluation_figures`), and the options (the split, seed and trials of the result
    first, then ``options``)."""
    table, _ = plots.comparison_table(result)
    opts: dict[str, Any] = {"split": result.split_description(), "trials": result.n_trials}
    if result.split == "random":
        opts.update({"seed": result.seed, "test fraction": result.test_fraction})
    opts.update(options or {})
    return report_html(
        None,
        title=title,
        figures=evaluation_figures(result) if figures is None else figures,
        prediction_set=prediction_set,
        tables={f"Comparison on held-out rows ({result.split_description()})": table},
        notes=result.messages,
        options=opts,
    )
