"""The Data page's forecast-hub loading: forecast files plus a truth file uploaded, or a hub folder on the server.

``cc.load_predictions(forecasts, truth=..., output_type=...)`` reads them (hub format detected from the columns).
Uploads are parsed once per content (sha1 of every file, the truth's, the output type) and kept in the shared
upload store (:data:`dashboard.state.UPLOADS`); a server folder is read when its *Open* button is pressed.  Errors
never end the session: the reader's message is kept in session state (``data_hub_error``, ``data_upload_error``)
and the previously loaded data stays.

Widget keys (all on the Data page): ``data_hub_forecasts`` (several forecast files), ``data_hub_truth`` (the truth
file), ``data_hub_output_type``; ``data_hub_path`` / ``data_hub_truth_path`` / ``data_hub_open`` (server folder);
``data_upload_truth`` / ``data_upload_output_type`` (a hub file given to the single *Prediction file* uploader).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core.data.bytes import read_table
from calib_core.data.hub import is_hub_frame
from views import loading

from .state import UPLOADS, content_token, set_data, upload_columns, upload_limit_bytes, upload_limit_hint
from .summary import allowed_data_dirs

__all__ = ["hub_ident", "hub_types", "is_hub_upload", "open_hub_folder", "output_types", "parse_hub",
           "parse_hub_uploads", "parse_single_hub", "single_types"]

#: A file as (name, bytes).
NamedBytes = tuple[str, bytes]


def _buffer(name: str, data: bytes) -> io.BytesIO:
    """The bytes as a binary file-like that carries its name (the reader takes the model and round from it)."""
    buffer = io.BytesIO(data)
    buffer.name = name
    return buffer


@st.cache_data(max_entries=64, show_spinner=False)
def output_types(token: str, _data: bytes, file_name: str) -> list[str]:
    """The output types of a hubverse forecast file, in order of appearance ([] when it has no ``output_type``
    column or cannot be read)."""
    try:
        frame = read_table(_data, source=file_name, max_bytes=upload_limit_bytes(), limit_hint=upload_limit_hint())
    except cc.InputError:
        return []
    if "output_type" not in frame.columns:
        return []
    return [str(v) for v in pd.unique(frame["output_type"].astype(str).str.strip())]


def is_hub_upload(token: str, data: bytes, file_name: str) -> bool:
    """Whether an upload is a forecast-hub file (hubverse or legacy columns, ``is_hub_frame`` of its first rows)."""
    try:
        _, head, _ = upload_columns(token, data, file_name)
    except cc.InputError:
        return False
    return bool(is_hub_frame(head))


def parse_hub(files: Sequence[NamedBytes], truth: NamedBytes | None, output_type: str | None) -> cc.PredictionSet:
    """``cc.load_predictions`` of uploaded forecast files and truth (size limits of uploads), cached in
    :data:`dashboard.state.UPLOADS` on the files' names and sha1s, the truth's and the output type; raises the
    reader's InputError."""
    key = ("hub", tuple((name, content_token(data)) for name, data in files),
           None if truth is None else (truth[0], content_token(truth[1])), output_type)
    pset = UPLOADS.get(key)
    if pset is None:
        buffers = [_buffer(name, data) for name, data in files]
        with st.spinner("Reading the forecasts and joining the truth…"):
            pset = cc.load_predictions(buffers[0] if len(buffers) == 1 else buffers,
                                       truth=None if truth is None else _buffer(*truth), output_type=output_type,
                                       max_bytes=upload_limit_bytes(), limit_hint=upload_limit_hint())
        UPLOADS.put(key, pset)
    return pset


def _token(files: Sequence[NamedBytes], truth: NamedBytes | None, output_type: str | None) -> str:
    parts = "|".join(f"{name}:{content_token(data)}" for name, data in files)
    truth_part = "" if truth is None else f"{truth[0]}:{content_token(truth[1])}"
    return f"hub:{content_token(f'{parts}||{truth_part}'.encode())}:{output_type or 'auto'}"


def _present(files: Sequence[NamedBytes]) -> list[str]:
    found: list[str] = []
    for name, data in files:
        found += [t for t in output_types(content_token(data), data, name) if t not in found]
    return found


def _failed(key: str, err: Exception) -> None:
    """Keep the reader's message (the page shows it, escaped); an unexpected error is said, never raised."""
    if isinstance(err, cc.InputError):
        st.session_state[key] = loading.hub_page_message(err.app_message())
    else:
        st.session_state[key] = (f"The files could not be read ({type(err).__name__}: {err}). The data loaded "
                                 "before stays; please report this file.")


def _load(files: Sequence[NamedBytes], truth: NamedBytes | None, type_key: str, error_key: str, name: str) -> None:
    output_type = loading.output_type_option(_present(files), st.session_state.get(type_key))
    try:
        pset = parse_hub(files, truth, output_type)
    except Exception as err:  # noqa: BLE001 - a message on the page, the session goes on
        _failed(error_key, err)
        return
    set_data(pset, _token(files, truth, output_type), name, "upload")
    st.session_state["data_notice"] = f"Loaded: {name}"


def _uploaded(value: Any) -> list[NamedBytes]:
    items = value if isinstance(value, list) else [] if value is None else [value]
    return [(item.name, item.getvalue()) for item in items]


def hub_ident() -> tuple[Any, ...] | None:
    """What the hub uploaders hold now (names, sha1s, output type): the page reparses when it changed (e.g. a
    widget restored after a page switch)."""
    files = _uploaded(st.session_state.get("data_hub_forecasts"))
    if not files:
        return None
    truth = _uploaded(st.session_state.get("data_hub_truth"))
    return (tuple((n, content_token(d)) for n, d in files), tuple((n, content_token(d)) for n, d in truth),
            st.session_state.get("data_hub_output_type"))


def parse_hub_uploads() -> None:
    """Callback of the hub uploaders and the Output type control: read the forecast files with the truth file."""
    st.session_state.pop("data_hub_error", None)
    files = _uploaded(st.session_state.get("data_hub_forecasts"))
    st.session_state["data_hub_ident"] = hub_ident()
    if not files:  # emptied: the loaded data stays
        return
    truth = _uploaded(st.session_state.get("data_hub_truth"))
    name = files[0][0] if len(files) == 1 else f"{len(files)} forecast files"
    if truth:
        name += f" + {truth[0][0]}"
    _load(files, truth[0] if truth else None, "data_hub_output_type", "data_hub_error", name)


def parse_single_hub(name: str, data: bytes) -> None:
    """The single *Prediction file* uploader got a hub file: read it with the truth file of ``data_upload_truth``
    (without one, the reader's message asks for it)."""
    truth = _uploaded(st.session_state.get("data_upload_truth"))
    label = f"{name} + {truth[0][0]}" if truth else name
    _load([(name, data)], truth[0] if truth else None, "data_upload_output_type", "data_upload_error", label)


def single_types(name: str, data: bytes) -> list[str]:
    """The output types of a single uploaded hub file."""
    return _present([(name, data)])


def hub_types() -> list[str]:
    """The output types of the uploaded forecast files."""
    return _present(_uploaded(st.session_state.get("data_hub_forecasts")))


def open_hub_folder() -> None:
    """*Open hub folder* callback: the folder and its truth (typed, else the hub's target-data file) under the
    allowed directories; keeps the loaded data on errors."""
    st.session_state.pop("data_hub_error", None)
    allowed = allowed_data_dirs()
    text = str(st.session_state.get("data_hub_path", "")).strip()
    truth_text = str(st.session_state.get("data_hub_truth_path", "")).strip()
    output_type = loading.output_type_option([], st.session_state.get("data_hub_output_type"))
    try:
        folder = loading.resolve_hub_folder(text, allowed)
        found = loading.hub_truth_file(folder) if not truth_text else None
        truth = (loading.resolve_truth_file(truth_text or str(found), allowed)  # checked like a typed path
                 if truth_text or found is not None else None)  # none: the reader's message asks for it
        with st.spinner("Reading the hub and joining the truth…"):
            pset = cc.load_predictions(str(folder), truth=None if truth is None else str(truth),
                                       output_type=output_type, max_bytes=upload_limit_bytes(),
                                       limit_hint=upload_limit_hint())
    except Exception as err:  # noqa: BLE001 - a message on the page, the session goes on
        _failed("data_hub_error", err)
        return
    name = folder.name if truth is None else f"{folder.name} + {truth.name}"
    token = f"hubdir:{content_token(f'{folder}|{truth}'.encode())}:{output_type or 'auto'}:{pset.n_read}"
    set_data(pset, token, name, "upload")
    st.session_state["data_hub_truth_used"] = str(truth)
    st.session_state["data_notice"] = f"Opened the hub {name}"
