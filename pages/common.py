"""Shared Streamlit glue of the dashboard pages (the only UI module imported by several pages).

Session-state contract (every page may read these; only the Data page and :func:`set_data` write them):

===================  ==================================================================================
key                  value
===================  ==================================================================================
``pset``             the loaded, validated :class:`calib_core.PredictionSet` (never mutated)
``pset_token``       content token of the loaded data: ``"upload:<sha1 of the bytes>:<mapping hash>"`` or
                     ``"example:<name>"``; cache keys and selections are tied to it
``pset_name``        display name (file name or example title)
``pset_origin``      ``"upload"`` or ``"example"``
===================  ==================================================================================

Heavy work is cached with ``st.cache_data`` keyed on small explicit tokens (the data token and the
options), with the data itself passed as ``_``-prefixed arguments that Streamlit does not hash —
Streamlit hashes only a sample of large arrays/frames, so hashing the data would give stale hits.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core import examples, plots
from calib_core.io import read_table
from calib_core.selection import BinSelection

#: Built-in examples: title → (task, loader).  Trained / simulated on first use and cached.
EXAMPLES: dict[str, tuple[str, Callable[[], cc.PredictionSet]]] = {
    "Diabetes — Gaussian (mean, std) of a boosting ensemble": ("regression", lambda: examples.diabetes_example()),
    "Diabetes — 9 quantiles of the same ensemble": ("regression", lambda: examples.diabetes_example("quantile")),
    "Diabetes — 50 ensemble samples": ("regression", lambda: examples.diabetes_example("sample")),
    "Levi et al. §4.1 synthetic — true σ vs random σ": ("regression", lambda: examples.levi_synthetic()),
    "Digits — over-confident classifier (10 classes, logits)": ("classification", lambda: examples.digits_example()),
    "Breast cancer — binary classifier (logit of malignant)": (
        "classification",
        lambda: examples.breast_cancer_example(),
    ),
}
DEFAULT_REGRESSION_EXAMPLE = "Levi et al. §4.1 synthetic — true σ vs random σ"
DEFAULT_CLASSIFICATION_EXAMPLE = "Digits — over-confident classifier (10 classes, logits)"

UPLOAD_TYPES = ["csv", "tsv", "txt", "parquet", "pq", "npz"]  # npz: plain arrays only (read with allow_pickle=False)
MAX_TABLE_ROWS = 200  # row tables show at most this many rows


# --------------------------------------------------------------------------------------------------
# loading (cached on content tokens)
# --------------------------------------------------------------------------------------------------
def upload_limit_mb() -> int:
    """Largest accepted upload in MB: ``server.maxUploadSize`` (set in ``.streamlit/config.toml``).

    The server refuses bigger request bodies, so the uploader widget is given the same value (its check runs in
    the browser, before anything is sent, and shows “File must be … MB or smaller”).
    """
    return int(st.get_option("server.maxUploadSize"))


_MARKDOWN_ACTIVE = re.compile(r"([\\\[\]<>])")


def md_escape(text: object) -> str:
    """Text from an uploaded file (file, column and class names, cell values inside loader messages) made inert for
    ``st.markdown`` / ``st.error`` / ``st.caption``: ``[``, ``]``, ``<``, ``>`` and ``\\`` are backslash-escaped, so a
    file cannot put links, remote images (``![](https://…)``), autolinks or ``:color[…]`` directives on the page."""
    return _MARKDOWN_ACTIVE.sub(r"\\\1", str(text))


def content_token(data: bytes) -> str:
    """sha1 of the uploaded bytes: the identity of an upload for caches and selections."""
    return hashlib.sha1(data).hexdigest()


@st.cache_data(max_entries=8, show_spinner="Training / simulating the example…")
def load_example(name: str) -> cc.PredictionSet:
    """A built-in example (cached: trained once per server process)."""
    return EXAMPLES[name][1]()


@st.cache_data(max_entries=4, ttl=3600, show_spinner="Reading and validating the file…")
def parse_upload(
    token: str, _data: bytes, file_name: str, mapping_json: str, task: str | None, renormalize: bool
) -> cc.PredictionSet:
    """``cc.load_predictions`` of uploaded bytes, cached on (sha1, mapping, task, renormalize).

    Few entries, kept an hour: each holds a pickled set (≈ 0.4 GB at 10⁷ rows) beside the sessions' own copies.
    """
    columns = json.loads(mapping_json) if mapping_json else None
    return cc.load_predictions(_data, task=task, columns=columns, source=file_name, renormalize=renormalize)


@st.cache_data(max_entries=8, show_spinner=False)
def upload_columns(token: str, _data: bytes, file_name: str) -> tuple[list[str], pd.DataFrame]:
    """Column names and the first rows of an upload (for the column-mapping form); raises InputError."""
    frame = read_table(_data, source=file_name)
    return [str(c) for c in frame.columns], frame.head(10)


def set_data(pset: cc.PredictionSet, token: str, name: str, origin: str) -> None:
    """Make ``pset`` the loaded data of this session (resets selections tied to the old data)."""
    st.session_state["pset"] = pset
    st.session_state["pset_token"] = token
    st.session_state["pset_name"] = name
    st.session_state["pset_origin"] = origin


def current_data() -> tuple[cc.PredictionSet, str, str] | None:
    """(pset, token, name) of the loaded data, or None."""
    pset = st.session_state.get("pset")
    if pset is None:
        return None
    return pset, st.session_state["pset_token"], st.session_state.get("pset_name", pset.source)


def require_data(task: str, default_example: str) -> tuple[cc.PredictionSet, str, str]:
    """The loaded data if it is of ``task``; otherwise explain and offer the Data page or an example."""
    data = current_data()
    if data is not None and data[0].task == task:
        return data
    if data is None:
        st.info(f"No data loaded yet. Upload a file on the Data page, or start from a built-in {task} example.")
    else:
        st.warning(
            f"The loaded data ({data[2]}) is a **{data[0].task}** set; this page diagnoses **{task}** predictions."
        )
    c1, c2 = st.columns([1, 2])
    c1.page_link("pages/data.py", label="Go to the Data page", icon=":material/upload_file:")
    if c2.button(f"Load the example “{default_example}”", key=f"load_default_{task}"):
        set_data(load_example(default_example), f"example:{default_example}", default_example, "example")
        st.rerun()
    st.stop()


# --------------------------------------------------------------------------------------------------
# filtering (rows, models, group)
# --------------------------------------------------------------------------------------------------
def filter_controls(pset: cc.PredictionSet, prefix: str) -> tuple[str, tuple[str, ...], str, tuple[int, int]]:
    """Rows (split), models and group selectors plus the bootstrap-resamples and simulation selectors (one row).

    Returns (rows, models, group, (n_resamples, n_simulations)); the first three go into the cache keys.
    """
    models = pset.models()
    groups = [cc.ALL] + ([str(g) for g in pd.unique(pset.group)] if pset.group is not None else [])
    splits = ["all"] + ([s for s in ("cal", "test") if pset.split is not None and (pset.split == s).any()])
    init_state({f"{prefix}_models": models, f"{prefix}_group": cc.ALL, f"{prefix}_rows": "all"})
    if any(m not in models for m in st.session_state[f"{prefix}_models"]):  # data changed under the widget
        st.session_state[f"{prefix}_models"] = models
    if st.session_state[f"{prefix}_group"] not in groups:
        st.session_state[f"{prefix}_group"] = cc.ALL
    if st.session_state[f"{prefix}_rows"] not in splits:
        st.session_state[f"{prefix}_rows"] = "all"
    init_state({f"{prefix}_resamples": 200 if pset.n_rows <= 50_000 else 50, f"{prefix}_sims": 50})
    c1, c2, c3, c4, c5 = st.columns([3, 2, 2, 2, 2])
    chosen = c1.multiselect(
        "Models", models, key=f"{prefix}_models", disabled=len(models) < 2,
        help="Several models are overlaid with one colour each.",
    )
    group = c2.selectbox(
        "Group", groups, key=f"{prefix}_group", disabled=len(groups) < 2,
        help="Diagnose one slice of the `group` column, or all rows.",
    )
    rows = c3.selectbox(
        "Rows", splits, key=f"{prefix}_rows", disabled=len(splits) < 2,
        help="Rows of the `split` column (calibration / test), or all.",
    )
    n_resamples = c4.selectbox(
        "Bootstrap resamples", [0, 50, 100, 200, 500], key=f"{prefix}_resamples",
        help="Resamples of the rows for the percentile bootstrap CI of every metric (0 switches CIs off; faster).",
    )
    n_sims = c5.selectbox(
        "Perfect-calibration sims", [0, 20, 50, 100], key=f"{prefix}_sims",
        help="Simulations of a perfectly calibrated forecaster with the same predictions (targets or labels drawn "
        "from them): the value it would get at this N, and the range of noise.",
    )
    chosen = tuple(m for m in models if m in (chosen or models)) or tuple(models)
    return rows, chosen, group, (int(n_resamples), int(n_sims))


def subset(pset: cc.PredictionSet, rows: str, models: Iterable[str], group: str) -> cc.PredictionSet:
    """The rows of ``pset`` in the chosen split, models and group (vectorised masks)."""
    mask = np.ones(pset.n_rows, dtype=bool)
    if rows != "all" and pset.split is not None:
        mask &= pset.split == rows
    if pset.model is not None:
        mask &= np.isin(pset.model, list(models))
    if group != cc.ALL and pset.group is not None:
        mask &= pset.group.astype(str) == group
    return pset if mask.all() else pset.take(mask)


@st.cache_data(max_entries=64, show_spinner="Diagnosing (bootstrap CIs and perfect-calibration simulations)…")
def diagnosed(key: str, _pset: cc.PredictionSet, options_json: str) -> cc.Report:
    """``cc.diagnose`` cached on an explicit key (data token + filters + selection) and the options."""
    return cc.diagnose(_pset, by_group=False, **json.loads(options_json))


def diagnose_cached(key: str, pset: cc.PredictionSet, **options: Any) -> cc.Report:
    """:func:`diagnosed` with the options serialised (sorted keys) so equal options hit the same entry."""
    return diagnosed(key, pset, json.dumps(options, sort_keys=True))


def init_state(defaults: Mapping[str, Any]) -> None:
    """``setdefault`` for widget keys: widgets are then created without ``value=`` (no double default)."""
    for k, v in defaults.items():
        st.session_state.setdefault(k, v)


def record_run_time(started: float, page: str) -> None:
    """Store the server time of this page run (ms) in ``st.session_state["page_run_ms"][page]``.

    Read by tests and benchmarks (redraw budget: < 200 ms at 10⁵ rows once the diagnosis is cached); runs
    that end early (``st.stop``) keep the previous value.
    """
    st.session_state.setdefault("page_run_ms", {})[page] = 1000.0 * (time.perf_counter() - started)


# --------------------------------------------------------------------------------------------------
# display
# --------------------------------------------------------------------------------------------------
@st.cache_resource(max_entries=512, show_spinner=False)
def _figure(key: str, _build: Callable[[], Any]) -> Any:
    return _build()


def figure(key: str, build: Callable[[], Any]) -> Any:
    """A Plotly figure built once per ``key`` and shared (``st.cache_resource``): building a figure costs
    20–60 ms of Plotly validation, which would dominate a redraw.  ``key`` must determine the figure
    completely (data token, filters, options, selection drawn, epoch); the returned figure is never mutated.
    """
    return _figure(key, build)


def chart(fig, key: str, **kwargs: Any):
    """``st.plotly_chart`` as built (``theme=None``: the figure's own template), full width."""
    return st.plotly_chart(fig, key=key, theme=None, width="stretch", config={"displaylogo": False}, **kwargs)


def _fmt(x: float) -> str:
    return "–" if pd.isna(x) else f"{x:.4g}"


def metric_table(
    metrics: pd.DataFrame,
    level: float = 0.95,
    keys: Iterable[str] | None = None,
    compact: bool = False,
    keep_model: bool = False,
) -> pd.DataFrame:
    """Display table: metric, value, CI, perfect-calibration value and its range, verdict (+ model if several).

    ``compact`` drops the perfect-calibration range column (narrow layouts; the verdict still uses it);
    ``keep_model`` keeps the model column even when only one model is present.
    """
    t = plots.metric_display_table(metrics)
    if keys is not None:
        order = {k: i for i, k in enumerate(keys)}
        t = t[t["metric"].isin(order)].copy()
        t["_o"] = t["metric"].map(order)
        t = t.sort_values(["_o"], kind="stable").drop(columns="_o")
    pct = f"{level:.0%}"
    out = pd.DataFrame(
        {
            "model": t["model"].to_numpy(),
            "metric": t["label"].to_numpy(),
            "value": t["value"].to_numpy(),
            f"{pct} CI": [f"[{_fmt(a)}, {_fmt(b)}]" for a, b in zip(t["ci_low"], t["ci_high"])],
            "perfectly calibrated": t["perfect"].to_numpy(),
            f"perfect {pct} range": [f"[{_fmt(a)}, {_fmt(b)}]" for a, b in zip(t["perfect_low"], t["perfect_high"])],
            "verdict": t["verdict"].to_numpy(),
        }
    )
    if out["model"].nunique() <= 1 and not keep_model:
        out = out.drop(columns="model")
    if compact:
        out = out.drop(columns=f"perfect {pct} range")
    if out["perfectly calibrated"].isna().all():  # no reference (simulations off, or point predictions)
        out = out.drop(columns=["perfectly calibrated", "verdict"] + ([] if compact else [f"perfect {pct} range"]))
    return out.reset_index(drop=True)


METRIC_COLUMN_CONFIG = {
    "value": st.column_config.NumberColumn(format="%.4g"),
    "selection": st.column_config.NumberColumn(format="%.4g", help="The metric on the selected rows only"),
    "all rows": st.column_config.NumberColumn(format="%.4g", help="The metric on all rows (no selection)"),
    "perfectly calibrated": st.column_config.NumberColumn(
        format="%.4g", help="Mean over targets simulated from the predictions themselves (same N)"
    ),
    "verdict": st.column_config.TextColumn(help="Is the value outside the perfect-calibration range (beyond noise)?"),
}


def show_metric_table(table: pd.DataFrame, height: int | str = "auto") -> None:
    st.dataframe(table, hide_index=True, width="stretch", height=height, column_config=METRIC_COLUMN_CONFIG)


def export_row(
    prefix: str,
    *,
    title: str,
    report: cc.Report,
    figures: Mapping[str, Any],
    metrics: pd.DataFrame,
    pset: cc.PredictionSet,
    tables: Mapping[str, pd.DataFrame] | None = None,
    notes: Iterable[str] = (),
) -> None:
    """Download buttons of a diagnosis page: the metric table (CSV, formula-neutralised), any one figure (offline
    HTML) and the page report (self-contained HTML with data summary, metric tables, figures; ``calib_core.export``).
    Files are built only when a button is pressed (callable data); pressing one does not rerun the page."""
    from calib_core import export

    stem = "".join(ch if ch.isalnum() else "_" for ch in str(st.session_state.get("pset_name", "data")))[:40]
    st.subheader("Export")
    c1, c2, c3, c4 = st.columns([2, 2, 2, 2], vertical_alignment="bottom")
    c1.download_button(
        "Metric table (CSV)", data=lambda: export.to_csv_bytes(metrics), file_name=f"{stem}_{prefix}_metrics.csv",
        mime="text/csv", key=f"{prefix}_dl_metrics", icon=":material/table:", width="stretch", on_click="ignore",
        help="Every metric with its CI and perfect-calibration value (cells starting with = + - @ are neutralised)",
    )
    names = list(figures)
    which = c2.selectbox("Figure", names, key=f"{prefix}_dl_figure_name")
    c3.download_button(
        "Figure (HTML)", data=lambda: export.figure_html(figures[which], title=which),
        file_name=f"{stem}_{prefix}_{''.join(ch if ch.isalnum() else '_' for ch in which)}.html", mime="text/html",
        key=f"{prefix}_dl_figure", icon=":material/bar_chart:", width="stretch", on_click="ignore",
        help="The chosen figure as an interactive HTML file that works offline",
    )
    c4.download_button(
        "Page report (HTML)",
        data=lambda: export.report_html(report, title=title, figures=figures, prediction_set=pset, tables=tables,
                                        notes=list(notes), options=report.options),
        file_name=f"{stem}_{prefix}_report.html", mime="text/html", key=f"{prefix}_dl_report",
        icon=":material/description:", width="stretch", on_click="ignore",
        help="A self-contained HTML report of this page (data summary, metric tables, figures)",
    )


def data_caption(pset: cc.PredictionSet, name: str) -> str:
    """One line: name, task, layout, rows and models."""
    models = pset.models()
    extra = f" · {len(models)} models" if len(models) > 1 else ""
    return f"**{md_escape(name)}** · {pset.task}, layout `{pset.layout}` · {pset.n_rows:,} rows{extra}"


# --------------------------------------------------------------------------------------------------
# linked bin selection of the lab pages (one chart's bins select rows for the other views)
# --------------------------------------------------------------------------------------------------
def lab_bin_selection(prefix: str, context: tuple) -> tuple[BinSelection, int]:
    """The lab's stored bin selection (``{prefix}_sel``; reset when ``context`` — data and options — changes)
    and its chart epoch (``{prefix}_epoch``: bumped by Clear so the chart becomes a new widget)."""
    stored = st.session_state.get(f"{prefix}_sel")
    selection = stored.valid_for(context) if isinstance(stored, BinSelection) else BinSelection(context, {})
    st.session_state[f"{prefix}_sel"] = selection
    return selection, st.session_state.setdefault(f"{prefix}_epoch", 0)


def lab_selection_callbacks(
    prefix: str, context: tuple, chart_key: str, trace_meta: list[dict | None]
) -> tuple[Callable[[], None], Callable[[], None]]:
    """``on_select`` for the chart ``chart_key`` (its event → bins, via the traces' ``meta``) and ``clear``."""

    def on_select() -> None:
        st.session_state[f"{prefix}_sel"] = BinSelection.from_event(
            st.session_state.get(chart_key), trace_meta, context
        )

    def clear() -> None:
        st.session_state[f"{prefix}_sel"] = BinSelection(context, {})
        st.session_state[f"{prefix}_epoch"] = st.session_state.get(f"{prefix}_epoch", 0) + 1

    return on_select, clear


def selection_row(prefix: str, selection: BinSelection, text: str, clear: Callable[[], None]) -> None:
    """What is selected (``text``, Markdown) beside a Clear selection button (disabled when nothing is)."""
    info, clear_col = st.columns([5, 1], vertical_alignment="center")
    info.markdown(text)
    clear_col.button("Clear selection", key=f"{prefix}_clear", on_click=clear, disabled=selection.empty,
                     width="stretch")
