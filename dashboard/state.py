"""Session state of the dashboard: the loaded-data contract, built-in examples, uploads, widget defaults and the
one widget-persistence mechanism.

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

Widget persistence: Streamlit deletes the state of a widget whose page is not rendered.  A page declares the
keys that must survive page switches with :func:`init_state` (``persist=True``) or :func:`persist`; ``app.py``
(which runs on every page) calls :func:`keep_widget_values`, which re-assigns them at the start of every run so
Streamlit keeps them (file uploaders and buttons cannot be set this way and are never declared).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core import examples
from calib_core.reading import read_table
from calib_core.views import md_escape

from .cache import BytesBoundedCache

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

_PERSISTENT = "_persistent_widget_keys"  # session key: the set of widget keys kept across page switches


# --------------------------------------------------------------------------------------------------
# widget state
# --------------------------------------------------------------------------------------------------
def persist(*keys: str) -> None:
    """Keep the values of these widget keys across page switches (see the module docstring)."""
    st.session_state.setdefault(_PERSISTENT, set()).update(keys)


def init_state(defaults: Mapping[str, Any], *, persist: bool = False) -> None:
    """``setdefault`` for widget keys: widgets are then created without ``value=`` (no double default).

    ``persist=True`` also keeps the keys across page switches (:func:`persist`).
    """
    for k, v in defaults.items():
        st.session_state.setdefault(k, v)
    if persist:
        st.session_state.setdefault(_PERSISTENT, set()).update(defaults)


def persistent(key: str, default: Any) -> str:
    """One persistent widget key with its default (for ``key=persistent("name", default)``); returns ``key``."""
    init_state({key: default}, persist=True)
    return key


def keep_widget_values() -> None:
    """Re-assign every persistent widget key present (``app.py`` calls this on every run, before the page)."""
    for key in st.session_state.get(_PERSISTENT, ()):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def record_run_time(started: float, page: str) -> None:
    """Store the server time of this page run (ms) in ``st.session_state["page_run_ms"][page]``.

    Read by tests and benchmarks (redraw budget: < 200 ms at 10⁵ rows once the diagnosis is cached); runs
    that end early (``st.stop``) keep the previous value.
    """
    st.session_state.setdefault("page_run_ms", {})[page] = 1000.0 * (time.perf_counter() - started)


# --------------------------------------------------------------------------------------------------
# loading (cached on content tokens)
# --------------------------------------------------------------------------------------------------
def upload_limit_mb() -> int:
    """Largest accepted upload in MB: ``server.maxUploadSize`` (set in ``.streamlit/config.toml``).

    The server refuses bigger request bodies, so the uploader widget is given the same value (its check runs in
    the browser, before anything is sent, and shows “File must be … MB or smaller”).
    """
    return int(st.get_option("server.maxUploadSize"))


def content_token(data: bytes) -> str:
    """sha1 of the uploaded bytes: the identity of an upload for caches and selections."""
    return hashlib.sha1(data).hexdigest()


@st.cache_data(max_entries=8, show_spinner="Training / simulating the example…")
def load_example(name: str) -> cc.PredictionSet:
    """A built-in example (cached: trained once per server process)."""
    return EXAMPLES[name][1]()


def upload_limit_bytes() -> int:
    """:func:`upload_limit_mb` in bytes: the limit the core loader applies to an upload's decompressed and decoded
    size (``max_bytes``), so that a small compressed or run-length-encoded file cannot take more memory than the
    largest file the server accepts."""
    return upload_limit_mb() << 20


def upload_limit_hint() -> str:
    """How to raise the upload limit, for the loader's size messages."""
    return (f"start the dashboard with a larger --server.maxUploadSize (in MB; now {upload_limit_mb():,}), or set "
            "maxUploadSize under [server] in .streamlit/config.toml")


#: Parsed uploads shared by all sessions, bounded in bytes: at most the upload limit in total (one largest upload),
#: each entry kept an hour at most.  A session's loaded set is the cached object itself, not a copy.
UPLOADS = BytesBoundedCache(upload_limit_bytes, ttl=3600)


def parse_upload(
    token: str, data: bytes, file_name: str, mapping_json: str, task: str | None, renormalize: bool
) -> cc.PredictionSet:
    """``cc.load_predictions`` of uploaded bytes (size limits: :func:`upload_limit_bytes`), cached in
    :data:`UPLOADS` on (sha1, file name, mapping, task, renormalize)."""
    key = (token, file_name, mapping_json, task, bool(renormalize))
    pset = UPLOADS.get(key)
    if pset is None:
        columns = json.loads(mapping_json) if mapping_json else None
        with st.spinner("Reading and validating the file…"):
            pset = cc.load_predictions(data, task=task, columns=columns, source=file_name, renormalize=renormalize,
                                       max_bytes=upload_limit_bytes(), limit_hint=upload_limit_hint())
        UPLOADS.put(key, pset)
    return pset


@st.cache_data(max_entries=8, show_spinner=False)
def upload_columns(token: str, _data: bytes, file_name: str) -> tuple[list[str], pd.DataFrame]:
    """Column names and the first rows of an upload (for the column-mapping form); raises InputError."""
    frame = read_table(_data, source=file_name, max_bytes=upload_limit_bytes(), limit_hint=upload_limit_hint())
    return [str(c) for c in frame.columns], frame.head(10)


def set_data(pset: cc.PredictionSet, token: str, name: str, origin: str) -> None:
    """Make ``pset`` the loaded data of this session (resets selections tied to the old data)."""
    st.session_state["pset"] = pset
    st.session_state["pset_token"] = token
    st.session_state["pset_name"] = name
    st.session_state["pset_origin"] = origin


def set_example(title: str) -> None:
    """Make the built-in example ``title`` the loaded data."""
    set_data(load_example(title), f"example:{title}", title, "example")


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
            f"The loaded data ({md_escape(data[2])}) is a **{data[0].task}** set; this page diagnoses **{task}** "
            "predictions."
        )
    c1, c2 = st.columns([1, 2])
    c1.page_link("pages/data.py", label="Go to the Data page", icon=":material/upload_file:")
    if c2.button(f"Load the example “{default_example}”", key=f"load_default_{task}"):
        set_example(default_example)
        st.rerun()
    st.stop()
