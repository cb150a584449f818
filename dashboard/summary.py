"""A loaded summary instead of rows: the Data page opens a summary file or summarises a Parquet data set on the
server, and the Regression / Classification pages draw from it.

Session state (next to the row contract of :mod:`dashboard.state`; a session has rows *or* a summary loaded):

===================  ==================================================================================
key                  value
===================  ==================================================================================
``summary``          the loaded :class:`calib_core.scale.summary.Summary` (never mutated)
``summary_token``    its identity for caches and selections (``"summary:<sha1>"`` or ``"parquet:<sha1>"``)
``summary_name``     display name (file name or the path / glob typed)
``summary_note``     how it was made (engine, files, passes, seconds), shown on the Data page
===================  ==================================================================================

Operator settings (read on every use, so a restart is not needed to change them):

* allowed directories for server files: ``CALIB_LAB_DATA_DIR`` (``os.pathsep``-separated) and/or ``data_dirs``
  under ``[calibration_lab]`` in ``.streamlit/secrets.toml`` — nothing is allowed by default
  (:mod:`views.data_dirs`);
* the engine: ``CALIB_LAB_DASK_SCHEDULER`` (or ``dask_scheduler`` under ``[calibration_lab]``) — unset: the
  embedded engine in this server process (:class:`calib_core.scale.embedded.EmbeddedEngine`: a few threads, memory
  about threads × one partition, no Dask needed); ``local``: a Dask ``LocalCluster`` of 2 workers;
  ``tcp://HOST:PORT``: that cluster.

A summary is kept in the tab's session only (not in the server's data store): a reload forgets it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import streamlit as st

import calib_core as cc
from calib_core.base.mergeable_read import summary_file_bytes
from calib_core.scale.embedded import EmbeddedEngine
from views import data_dirs
from views import summary as sv

from .display import md_escape
from .state import upload_limit_bytes, upload_limit_hint

ENGINE_VAR = "CALIB_LAB_DASK_SCHEDULER"
_KEYS = ("summary", "summary_token", "summary_name", "summary_note")


def _secret(key: str) -> Any:
    """``[calibration_lab] key`` of ``.streamlit/secrets.toml`` (None when there is no such file or entry)."""
    try:
        section = st.secrets.get(data_dirs.SECRETS_SECTION[0])
    except Exception:  # noqa: BLE001 - no secrets file, or an unreadable one: nothing configured there
        return None
    if section is None:
        return None
    try:
        return section.get(key)
    except AttributeError:
        return None


def allowed_data_dirs() -> list[Path]:
    """The directories the operator allows (environment variable and secrets; existing ones, resolved)."""
    configured = _secret(data_dirs.SECRETS_SECTION[1])
    if configured is not None and not isinstance(configured, str):
        configured = [str(p) for p in configured]
    return data_dirs.allowed_dirs(os.environ.get(data_dirs.ENV_VAR), configured)


def engine() -> tuple[Any, str]:
    """(scheduler for ``distributed.summarize_parquet``, its description) from the operator's setting: unset, the
    embedded engine (a new :class:`~calib_core.scale.embedded.EmbeddedEngine` per call, its default threads)."""
    value = os.environ.get(ENGINE_VAR) or _secret("dask_scheduler")
    if not value:
        eng = EmbeddedEngine()
        threads = f"{eng.threads} thread{'s' if eng.threads != 1 else ''}"
        return eng, f"the embedded engine in this server process ({threads}, memory about one partition each)"
    if str(value).strip().lower() == "local":
        return None, "a local Dask cluster of 2 worker processes"
    return str(value).strip(), f"the Dask cluster at {value}"


def set_summary(summary: Any, token: str, name: str, note: str = "") -> None:
    """Make ``summary`` the loaded data of this session: the rows loaded before are dropped from the session (and
    its address no longer brings them back), selections tied to them reset."""
    for key in ("pset", "pset_token", "pset_name", "pset_origin", "data_key", "data_kept"):
        st.session_state.pop(key, None)
    if "data" in st.query_params:
        del st.query_params["data"]
    st.session_state["summary"] = summary
    st.session_state["summary_token"] = token
    st.session_state["summary_name"] = name
    st.session_state["summary_note"] = note


def clear_summary() -> None:
    """Forget the loaded summary (rows were loaded instead)."""
    for key in _KEYS:
        st.session_state.pop(key, None)


def current_summary(task: str | None = None) -> tuple[Any, str, str] | None:
    """(summary, token, name) of the loaded summary (of ``task`` if given), or None."""
    summary = st.session_state.get("summary")
    if summary is None or (task is not None and summary.spec.task != task):
        return None
    return summary, st.session_state["summary_token"], st.session_state.get("summary_name", summary.source)


def open_summary_bytes(data: bytes, name: str) -> None:
    """Read a summary file's bytes and make it the loaded data (raises ``InputError`` with the file's name; the
    session's data stays as it was).  What the archive may expand to is bounded by the upload limit, as a data
    file's decoded size is."""
    summary = sv.read_summary(data, source=name, max_bytes=upload_limit_bytes(), limit_hint=upload_limit_hint())
    set_summary(summary, f"summary:{hashlib.sha1(data).hexdigest()}", name, f"Summary file {name}.")


def open_summary_path(text: str) -> None:
    """Open the summary file ``text`` names under the allowed directories (``views.data_dirs``): its size is
    checked against the upload limit before it is read, then as :func:`open_summary_bytes`."""
    path = data_dirs.resolve_summary_file(text, allowed_data_dirs())
    open_summary_bytes(summary_file_bytes(path, upload_limit_bytes(), upload_limit_hint()), path.name)


def summarize_server_data(text: str, n_bins: int) -> None:
    """Summarise the Parquet data set ``text`` names under the allowed directories on the configured engine and
    make its summary the loaded data (raises ``InputError`` for a refused path or bad data)."""
    scheduler, where = engine()
    with st.spinner(f"Summarising {md_escape(text)} ({md_escape(where)})…"):
        result = sv.summarize_data_set(text, allowed_data_dirs(), scheduler=scheduler, n_bins=n_bins)
    stamp = "|".join(f"{f}:{os.stat(f).st_size}:{os.stat(f).st_mtime_ns}" for f in result.files)
    token = "parquet:" + hashlib.sha1(f"{stamp}|{n_bins}".encode()).hexdigest()
    note = (f"Summarised {where}: {len(result.files):,} file(s), {len(result.partitions):,} partition(s), "
            f"{result.n_read:,} rows read, {result.passes} pass(es) over the data, {result.seconds['total']:.1f} s.")
    set_summary(result.summary, token, text, note)


@st.cache_data(max_entries=16, show_spinner="Computing the metrics, tests and diagrams of the summary…")
def summary_report(token: str, _summary: Any, n_resamples: int, n_simulations: int) -> cc.Report:
    """``calib_core.scale.summary.report`` of the loaded summary, cached on its token and the options."""
    return sv.summary_report(_summary, n_resamples=n_resamples, n_simulations=n_simulations, seed=0)


def summary_caption(summary: Any, name: str) -> str:
    """One line under a page title: what is loaded (Markdown, the name escaped)."""
    return (f"Data: **{md_escape(name)}** — a summary of {summary.n_rows:,} rows ({md_escape(summary.spec.task)}, "
            f"{md_escape(summary.spec.layout)}, {len(summary.models)} model(s)); no rows are held.")
