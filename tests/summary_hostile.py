"""Hostile summary files, generated from valid ones (never committed as binaries): rewrite a summary archive with
one member, one header field or one array changed, truncate it, flip its bits — and the check every reader must
pass: the summary read back equals the one written, or ``InputError`` names the file."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

import calib_core as cc
from calib_core.base.mergeable import Summary
from calib_core.base.predictions import PredictionSet
from calib_core.scale import summary as S
from tests.scale.test_summary import classification_set, gaussian_set, quantile_set

SOURCE = "hostile.summary"


def point_set(n: int = 120, seed: int = 9) -> PredictionSet:
    rng = np.random.default_rng(seed)
    y = rng.standard_normal(n)
    return PredictionSet(task="regression", y=y, point=y + 0.3 * rng.standard_normal(n), layout="point",
                         row_number=np.arange(1, n + 1, dtype=np.int64))


@cache
def summary_of(kind: str) -> Summary:
    """Small valid summaries: ``gauss`` (three parts: all rows and two groups), ``gauss1`` (one part), ``quant``,
    ``cls2``, ``point``."""
    pset = {"gauss": lambda: gaussian_set(240, seed=3, groups=True), "gauss1": lambda: gaussian_set(120, seed=8),
            "quant": lambda: quantile_set(150),
            "cls2": lambda: classification_set(200, 2), "point": point_set}[kind]()
    return S.summarize(pset, spec=S.spec_for(pset, n_blocks=16))


@cache
def file_of(kind: str) -> bytes:
    return summary_of(kind).to_bytes()


@cache
def _members(data: bytes) -> tuple[tuple[str, bytes], ...]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return tuple((name, zf.read(name)) for name in zf.namelist())


def members(data: bytes) -> dict[str, bytes]:
    """The archive's members by name (a fresh dict: edit it freely)."""
    return dict(_members(data))


def archive(items: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    """A zip of ``items`` (stored: fast to build; the reader takes stored and deflated members alike)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, raw in items.items():
            zf.writestr(name, raw)
    return buf.getvalue()


def header_of(data: bytes) -> dict[str, Any]:
    return json.loads(members(data)["header.json"])


def with_header(data: bytes, edit: Callable[[dict], Any]) -> bytes:
    """The archive with ``edit(header)`` applied to header.json (``edit`` changes it in place)."""
    items = members(data)
    header = json.loads(items["header.json"])
    edit(header)
    items["header.json"] = json.dumps(header).encode()
    return archive(items)


def npy(arr: np.ndarray, *, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def array_file(data: bytes, name: str, part: int = 0) -> str:
    return next(a["file"] for a in header_of(data)["parts"][part]["arrays"] if a["name"] == name)


def with_array(data: bytes, name: str, raw: bytes | None, part: int = 0) -> bytes:
    """The archive with the member of array ``name`` (of part ``part``) replaced by ``raw`` (None: removed)."""
    items = members(data)
    file = array_file(data, name, part)
    if raw is None:
        del items[file]
    else:
        items[file] = raw
    return archive(items)


def load_array(data: bytes, name: str, part: int = 0) -> np.ndarray:
    return np.load(io.BytesIO(members(data)[array_file(data, name, part)]), allow_pickle=False)


def same(a: Summary, b: Summary) -> bool:
    """Equal summaries: spec, rows, dropped rows, source, models and every array bit for bit (NaN = NaN)."""
    if (a.spec, a.n_rows, a.dropped, a.source, a.models) != (b.spec, b.n_rows, b.dropped, b.source, b.models):
        return False
    if set(a.parts) != set(b.parts):
        return False
    for key, pa in a.parts.items():
        pb = b.parts[key]
        if set(pa) != set(pb):
            return False
        for name, x in pa.items():
            y = pb[name]
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            if not np.array_equal(x, y, equal_nan=x.dtype != object):
                return False
    return True


def outcome(data: bytes, original: Summary, *, max_bytes: int = 2**31) -> str:
    """``"equal"`` or ``"error"`` (an ``InputError`` naming the file); anything else fails the caller."""
    try:
        back = Summary.from_bytes(data, source=SOURCE, max_bytes=max_bytes)
    except cc.InputError as err:
        assert SOURCE in str(err) and "What to do:" in str(err), str(err)
        assert "internal" not in str(err).lower()
        return "error"
    assert same(back, original), "a changed file was read as a different summary"
    return "equal"
