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
``data_key``         this session's key into the server-side store of loaded data (see below)
===================  ==================================================================================

Data that stays: :func:`set_data` also keeps the loaded data in a server-side store (:mod:`dashboard.store`, one
per server process, :func:`data_store`) under an unguessable key (``secrets.token_urlsafe(16)``) that this session
puts into its own address as ``?data=<key>`` (:data:`DATA_PARAM`).  A reload or the same address in a new tab
starts a new session, which finds the key in its address and gets the data back (:func:`keep_data`, called by
``app.py`` on every run); without the key nothing is found.  Bounds: :data:`STORE_MAX_BYTES` for all sessions
together (least recently used data evicted first) and :data:`STORE_IDLE_HOURS` after the last use; a server
restart forgets everything.  Built-in examples are kept by title only (they are rebuilt from the cache).

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
from calib_core.data import examples
from calib_core.data.bytes import read_table
from calib_core.data.detect import guess_columns
from calib_core.data.hub_example import example_hub_frames
from calib_core.data.timecol import find_time_column
from views.pages import md_escape

from .store import STORE_MAX_BYTES, BoundedStore, approx_nbytes

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
    "Forecast hub — 4 synthetic models of 23 quantiles: calibrated, too narrow, biased, too wide": (
        "regression",
        lambda: _example_hub(),
    ),
}


def _example_hub() -> cc.PredictionSet:
    """A seeded synthetic forecast hub (8 locations, 12 weekly rounds, horizons 0–3) read as a user's hub is."""
    hub = example_hub_frames(n_models=4, n_locations=8, n_rounds=12,
                             miscalibration=["calibrated", "narrow", "biased", "wide"])
    return cc.load_predictions(hub.forecasts, truth=hub.truth, source="example forecast hub")
DEFAULT_REGRESSION_EXAMPLE = "Levi et al. §4.1 synthetic — true σ vs random σ"
DEFAULT_CLASSIFICATION_EXAMPLE = "Digits — over-confident classifier (10 classes, logits)"
HUB_EXAMPLE = "Forecast hub — 4 synthetic models of 23 quantiles: calibrated, too narrow, biased, too wide"

UPLOAD_TYPES = ["csv", "tsv", "txt", "parquet", "pq", "npz"]  # npz: plain arrays only (read with allow_pickle=False)
MAX_TABLE_ROWS = 200  # row tables show at most this many rows

_PERSISTENT = "_persistent_widget_keys"  # session key: the set of widget keys kept across page switches

DATA_PARAM = "data"  #: query parameter of the address that holds the session's key into the data store
STORE_IDLE_HOURS = 12  #: loaded data is forgotten this long after its last use
_DATA_KEY = "data_key"  # session key: this session's key into the data store
_EXAMPLE_NBYTES = 1024  # an example is kept by its title


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
#: each entry kept an hour after its last use.  A session's loaded set is the cached object itself, not a copy.
UPLOADS = BoundedStore(max_bytes=upload_limit_bytes, max_idle_seconds=3600)


def parse_upload(
    token: str, data: bytes, file_name: str, mapping_json: str, task: str | None, renormalize: bool,
    crossing: str = "rearrange", layout: str | None = None,
) -> cc.PredictionSet:
    """``cc.load_predictions`` of uploaded bytes (size limits: :func:`upload_limit_bytes`), cached in
    :data:`UPLOADS` on (sha1, file name, mapping, task, renormalize, crossing, layout)."""
    key = (token, file_name, mapping_json, task, bool(renormalize), crossing, layout)
    pset = UPLOADS.get(key)
    if pset is None:
        columns = json.loads(mapping_json) if mapping_json else None
        with st.spinner("Reading and validating the file…"):
            pset = cc.load_predictions(data, task=task, columns=columns, source=file_name, renormalize=renormalize,
                                       max_bytes=upload_limit_bytes(), limit_hint=upload_limit_hint(),
                                       crossing=crossing, layout=layout)
        UPLOADS.put(key, pset)
    return pset


@st.cache_data(max_entries=8, show_spinner=False)
def upload_columns(token: str, _data: bytes, file_name: str) -> tuple[list[str], pd.DataFrame, dict[str, Any]]:
    """Column names, the first rows and what detection guessed (``guess_columns``) of an upload, for the
    column-mapping form; raises InputError."""
    frame = read_table(_data, source=file_name, max_bytes=upload_limit_bytes(), limit_hint=upload_limit_hint())
    guess = guess_columns(frame)
    taken = [v for k, v in guess.items() if k != "task" and isinstance(v, str)]
    guess["time"] = find_time_column(frame, None, exclude=taken)[0]  # by name or dtype (data.timecol)
    return [str(c) for c in frame.columns], frame.head(10), guess


def set_data(pset: cc.PredictionSet, token: str, name: str, origin: str) -> None:
    """Make ``pset`` the loaded data of this session (resets selections tied to the old data) and keep it in the
    server-side store under this session's key (created on first use; put into the address by :func:`keep_data`).
    """
    for key in ("summary", "summary_token", "summary_name", "summary_note"):  # rows replace a loaded summary
        st.session_state.pop(key, None)
    st.session_state["pset"] = pset
    st.session_state["pset_token"] = token
    st.session_state["pset_name"] = name
    st.session_state["pset_origin"] = origin
    _store_current()


@st.cache_resource(show_spinner=False)
def data_store() -> BoundedStore:
    """The server process's store of loaded data (:data:`STORE_MAX_BYTES`, :data:`STORE_IDLE_HOURS`; keys are
    unguessable tokens)."""
    return BoundedStore(max_bytes=STORE_MAX_BYTES, max_idle_seconds=STORE_IDLE_HOURS * 3600.0, tokens_only=True)


def _store_current() -> bool:
    """Put this session's loaded data into the store under its key (made now if it has none); False if it is too
    large to keep (it then stays in this tab only)."""
    pset = st.session_state.get("pset")
    if pset is None:
        return False
    store = data_store()
    key = st.session_state.get(_DATA_KEY) or store.new_token()
    st.session_state[_DATA_KEY] = key
    origin = st.session_state.get("pset_origin", "upload")
    record = {name: st.session_state.get(name) for name in ("pset_token", "pset_name", "pset_origin")}
    if origin == "example" and record["pset_name"] in EXAMPLES:
        kept = store.put(key, record, nbytes=_EXAMPLE_NBYTES)  # rebuilt from load_example's cache
    else:
        kept = store.put(key, {**record, "pset": pset}, nbytes=approx_nbytes(pset))
    st.session_state["data_kept"] = kept
    return kept


def keep_data(*, in_address: bool = True) -> None:
    """Once per run (``app.py``, before the page): bring back or keep this session's data.

    * Nothing loaded and ``?data=<key>`` in the address: the stored data comes back (a reload, a new tab); an
      unknown or expired key leaves the address and :func:`data_status` says the data is no longer kept.
    * Data loaded: it counts as used (its idle time restarts), is stored again if it was evicted meanwhile, and
      its key is put into the address — unless ``in_address`` is False (pages whose links are meant to be shared,
      the labs: their address never carries it).
    """
    store = data_store()
    params = st.query_params
    if st.session_state.get("pset") is None:
        key = params.get(DATA_PARAM)
        if key is None:
            return
        record = store.get(key)
        if record is None:
            st.session_state["data_lost"] = True
            del params[DATA_PARAM]
            return
        pset = record["pset"] if "pset" in record else load_example(record["pset_name"])
        st.session_state["pset"] = pset
        for name in ("pset_token", "pset_name", "pset_origin"):
            st.session_state[name] = record[name]
        st.session_state[_DATA_KEY] = key
        st.session_state["data_kept"] = True
    else:
        key = st.session_state.get(_DATA_KEY)
        if key is None or (st.session_state.get("data_kept") and store.get(key) is None):
            _store_current()  # first time, or evicted / expired while this tab stayed open: keep it again
            key = st.session_state.get(_DATA_KEY)
    if not st.session_state.get("data_kept"):
        key = None
    if in_address and key is not None:
        if params.get(DATA_PARAM) != key:
            params[DATA_PARAM] = key
    elif DATA_PARAM in params:
        del params[DATA_PARAM]


def data_status(*, home: bool = False, in_address: bool = True) -> None:
    """The sidebar's status of the loaded data: what is loaded, how long it is kept and how to get it back
    (``home``: the Home page, which diagnoses a built-in example and says so beside it when data is loaded;
    ``in_address`` as in :func:`keep_data`)."""
    hours = f"{STORE_IDLE_HOURS:d} hours"
    pset = st.session_state.get("pset")
    summary = st.session_state.get("summary")
    if pset is None and summary is not None:

        st.markdown(f"**Loaded:** {md_escape(st.session_state.get('summary_name', summary.source))}")
        st.caption(f"{summary.spec.task} · summary of {summary.n_rows:,} rows · no rows held")
        st.caption("A summary is kept in this tab only: a reload forgets it (open it again on the Data page).")
        return
    if pset is None:
        if st.session_state.get("data_lost"):
            st.caption(
                f"The data of this address is no longer kept (data is kept {hours} after its last use, while the "
                "server runs and has room): load it again on the Data page."
            )
        elif home:
            st.caption("No data of yours loaded yet: Home diagnoses a built-in example. Load your own on the Data "
                       "page.")
        else:
            st.caption("No data loaded yet — see the Data page.")
        return

    st.markdown(f"**Loaded:** {md_escape(st.session_state.get('pset_name', pset.source))}")
    st.caption(f"{pset.task} · `{pset.layout}` · {pset.n_rows:,} rows")
    if not st.session_state.get("data_kept"):
        budget = STORE_MAX_BYTES / 1024**3
        st.caption(f"Too large to keep on this server beyond this tab (over {budget:g} GB): a reload forgets it.")
    elif in_address:
        st.caption(
            f"Kept on this server for {hours} after its last use: a reload, or this address in a new tab, brings "
            "it back. The address is its private key: share it only with people who may see the data."
        )
    else:
        st.caption(
            f"Kept on this server for {hours} after its last use. Lab addresses leave out the key to it, so they "
            "can be shared; any other page's address brings it back after a reload."
        )


def loaded_data_link() -> None:
    """On Home, when data is loaded: a link to the page that diagnoses it, saying that Home shows an example."""
    pset = st.session_state.get("pset")
    if pset is None:
        return

    target = "pages/regression.py" if pset.task == "regression" else "pages/classification.py"
    name = md_escape(st.session_state.get("pset_name", pset.source))
    st.page_link(target, label=f"Your data, {name}, is loaded: diagnose it on the {pset.task.title()} page. "
                 "Below: a built-in example.", icon=":material/arrow_forward:")


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
    summary = st.session_state.get("summary")
    if data is None and summary is not None:
        name = md_escape(st.session_state.get("summary_name", summary.source))
        st.warning(f"The loaded data ({name}) is a summary of {summary.n_rows:,} **{summary.spec.task}** rows; this "
                   f"page diagnoses **{task}** predictions.")
    elif data is None:
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
