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
* ``to_csv_bytes`` (spreadsheet formulas neutralised), ``to_parquet_bytes``, ``calibrated_predictions_frame`` /
  ``calibrated_probabilities_frame`` / ``calibrated_frame`` (predictions in the loader's own file layout) — the
  table writers of :mod:`calib_core.data.writing`, re-exported here so that every download lives under
  ``calib_core.export``.

Figures carry an explicit template: ``import streamlit`` replaces Plotly's default template with a placeholder
one (colours ``#000001``…) that only Streamlit's frontend understands; :func:`figure_html` and
:func:`report_html` replace such a template (or a missing one) with ``calib_core.plots.TEMPLATE``.
"""

from __future__ import annotations

import datetime as _dt
import html
import platform
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
from .base.report import ALL, Report
from .data.writing import (
    EXPORT_LEVELS,
    FORMULA_PREFIXES,
    calibrated_frame,
    calibrated_predictions_frame,
    calibrated_probabilities_frame,
    neutralise_formulas,
    to_csv_bytes,
    to_parquet_bytes,
)
from .plots.classification import confidence_histogram_figure, reliability_figure
from .plots.clinical import smoothed_calibration_figure

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
    "clustering_statement",
    "calibrated_predictions_frame",
    "calibrated_probabilities_frame",
    "calibrated_frame",
    "evaluation_figures",
    "evaluation_report_html",
]


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
    """One figure as a complete HTML page that renders offline (plotly.js inlined, explicit template).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure (a missing template or Streamlit's placeholder one is replaced by ``calib_core.plots.TEMPLATE``).
    title : str, optional
        The page title (default: the figure's title, else "figure").

    Returns
    -------
    str
        The HTML page.
    """
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
    histogram (Guo et al. 2017 Fig. 1), for binary sets the positive-class reliability diagram, and the smoothed
    (loess) calibration curve with its bootstrap band.  Built from the diagram tables only (O(bins)).

    Parameters
    ----------
    report : Report
        A diagnosis (``cc.diagnose``).
    group : str, default ALL
        The group whose diagrams are drawn.

    Returns
    -------
    dict of str to plotly.graph_objects.Figure
        Title → figure, for the diagrams the report holds.

    References
    ----------
    .. [1] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
       regression", ICML 2018.
    .. [2] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
       regression tasks", arXiv:1905.11659, 2019.
    .. [3] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", ICML 2017.
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
        smoothed = _tables_of(report, "smoothed_calibration_positive", group) or _tables_of(
            report, "smoothed_calibration", group)
        if smoothed:  # the loess curve with its bootstrap band (Austin & Steyerberg 2019)
            out["Smoothed calibration curve"] = smoothed_calibration_figure(smoothed, colors=colors)
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
    """The metric table of one group as displayed in the report.

    Parameters
    ----------
    report : Report
        A diagnosis (``cc.diagnose``).
    group : str, default ALL
        The group.

    Returns
    -------
    DataFrame
        One row per (model, metric): value, debiased value (when any is finite), interval, perfect-calibration value,
        p-value (± Monte-Carlo s.e.), verdict of the test (Holm / BH flag), test and note; the ``model`` column only
        when there are several models.
    """
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


def clustering_statement(options: Mapping[str, Any]) -> str:
    """Which rows the intervals and tests resampled together, in words, from a Report's options: "Intervals and
    tests: whole reference_date clusters resampled (12 clusters)" or "Intervals and tests: rows treated as
    independent" ("" when the options do not say).

    Parameters
    ----------
    options : mapping
        ``Report.options`` (its ``clustering``: ``Clustering.describe()`` or ``"independent rows"``).

    Returns
    -------
    str
        The sentence.

    Examples
    --------
    >>> clustering_statement({"clustering": "independent rows"})
    'Intervals and tests: rows treated as independent'
    """
    text = str(options.get("clustering") or "")
    if not text:
        return ""
    return f"Intervals and tests: {'rows treated as independent' if text == 'independent rows' else text}"


def metrics_with_verdicts(metrics: pd.DataFrame, verdicts: pd.DataFrame | None,
                          options: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The long metric table with the headline of its (model, group) appended to every row (the metric CSV export).

    Parameters
    ----------
    metrics : DataFrame
        ``Report.metrics``.
    verdicts : DataFrame or None
        ``Report.verdicts``.
    options : mapping, optional
        ``Report.options``: when they say which rows were resampled together, a ``resampling`` column holds
        :func:`clustering_statement` on every row.

    Returns
    -------
    DataFrame
        ``metrics`` with ``headline_verdict``, ``headline_direction``, ``headline_p_value`` and ``headline`` (the
        sentence); ``metrics`` itself when there are no verdicts.
    """
    statement = clustering_statement(options or {})
    if statement:
        metrics = metrics.assign(resampling=statement.removeprefix("Intervals and tests: "))
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
    p-value of its test and its Holm / BH flag (see ``calib_core.plots.metric_display_table``); ``tables``; figures;
    options; versions.  plotly.js is inlined once in ``<head>`` and every figure is a div drawn by it; all text is
    HTML-escaped.

    Parameters
    ----------
    report : Report or None
        A diagnosis; ``None`` for pages whose content is only ``tables``/``figures``.
    title : str
        The report's title.
    figures : mapping of str to Figure, or sequence of Figure, optional
        The figures (default: :func:`default_figures` of the report).
    prediction_set : PredictionSet, optional
        The loaded file, for the data summary and the loader's messages.
    tables : mapping of str to DataFrame, optional
        Extra titled tables (e.g. the calibrator comparison).
    notes : sequence of str, default ()
        Notes shown before the metrics (the report's own notes follow).
    options : mapping, optional
        Options listed with the report's own.

    Returns
    -------
    str
        The HTML document.
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
        statement = clustering_statement(report.options)
        if statement:
            parts.append(f'<p class="note clustering">{html.escape(statement)}.</p>')
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
    """The before/after figures of every model of an evaluation run with ``diagrams=True``.

    Parameters
    ----------
    result : EvaluationResult
        The evaluation (``cc.evaluate(..., diagrams=True)``).

    Returns
    -------
    dict of str to plotly.graph_objects.Figure
        Figures named ``"<figure> — <model>"`` when there are several models, else ``"<figure>"``.
    """
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
    """A self-contained HTML report of an evaluation (``cc.evaluate``).

    The comparison table on held-out rows (mean ± std over trials, the registry's "better" direction), the messages
    as notes, the before/after figures and the options (the split, seed and trials of the result first, then
    ``options``), laid out by :func:`report_html`.

    Parameters
    ----------
    prediction_set : PredictionSet or None
        The loaded file, for the data summary.
    result : EvaluationResult
        The evaluation.
    title : str
        The report's title.
    figures : mapping of str to Figure, optional
        The figures (default: :func:`evaluation_figures`).
    options : mapping, optional
        More options to list.

    Returns
    -------
    str
        The HTML document.
    """
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
