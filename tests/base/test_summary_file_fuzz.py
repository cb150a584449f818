"""Fuzzing the summary-file reader (``Summary.from_bytes``) as the loaders are fuzzed (``tests/data/
test_reading_fuzz.py``): valid summaries of four layouts (Gaussian with groups, quantile set, binary classes, point
predictions) cut at every class of offset, with bits flipped, each header field set out of range or to the wrong
type, and each array missing, of the wrong dtype or shape, NaN, negative or float where the schema wants counts.

Invariant: the reader returns the summary that was written (or, for a header edit the schema cannot tell from a
real file — another seed, source text or dropped-rows list — exactly what the edited header says), or raises
``cc.InputError`` naming the file; never another exception.  ``derandomize=True`` and no example database: CI runs
the same cases each time; ``@pytest.mark.slow`` runs ten times as many.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from calib_core.base.mergeable import Summary
from calib_core.base.predictions import InputError
from tests.summary_hostile import (
    SOURCE,
    archive,
    file_of,
    header_of,
    load_array,
    members,
    npy,
    outcome,
    same,
    summary_of,
    with_array,
)

KINDS = ("gauss1", "quant", "cls2", "point")  # the slow run adds "gauss", with groups (three parts)
SLOW: list[bool] = []  # set while the slow run draws (it adds the three-part summary)
OUTCOMES: dict[str, dict[str, int]] = {c: {"equal": 0, "error": 0} for c in ("truncate", "flip", "header", "array")}


def _settings(n: int):
    return settings(max_examples=n, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def _regions(data: bytes) -> dict[str, tuple[int, int]]:
    """Byte ranges of the archive: first local header, member data, central directory, end record."""
    eocd = data.rfind(b"PK\x05\x06")
    (cd_size, cd_start) = struct.unpack("<LL", data[eocd + 12:eocd + 20])
    name_len = struct.unpack("<H", data[26:28])[0]
    return {"local header": (0, 30 + name_len), "member data": (30 + name_len, cd_start),
            "directory": (cd_start, cd_start + cd_size), "end record": (eocd, len(data)), "anywhere": (0, len(data))}


REGIONS = ("local header", "member data", "directory", "end record", "anywhere")


@st.composite
def truncations(draw):
    """(kind, offset): a ``kind`` summary cut at ``offset``, drawn within one region of the archive."""
    kind = draw(st.sampled_from(KINDS if not SLOW else (*KINDS, "gauss")))
    lo, hi = _regions(file_of(kind))[draw(st.sampled_from(REGIONS))]
    return kind, draw(st.integers(lo, hi - 1))


@st.composite
def bit_flips(draw):
    """(kind, [(byte, bit), ...]): 1 to 4 bits flipped within one region of the archive."""
    kind = draw(st.sampled_from(KINDS if not SLOW else (*KINDS, "gauss")))
    lo, hi = _regions(file_of(kind))[draw(st.sampled_from(REGIONS))]
    n = draw(st.integers(1, 4))
    return kind, [(draw(st.integers(lo, hi - 1)), draw(st.integers(0, 7))) for _ in range(n)]


def _flipped(kind: str, flips) -> bytes:
    data = bytearray(file_of(kind))
    for pos, bit in flips:
        data[pos] ^= 1 << bit
    return bytes(data)


DELETE = object()
HOSTILE = [DELETE, None, True, False, -1, 0, 1, 2, 3, 255, 2**31, 10**9, 10**15, 2**64, -5, 1.5, 1e15, -0.0, "x", "",
           "a" * 2_000, [], [1, 2], [0.5, 0.2], [-1.0, 0.5], [0.0, 1.0], [[1]], {}, {"count": 1}, ["m"], [None],
           10**400, 1e308, [10**400], -(2**63)]
SPEC_FIELDS = ("task", "layout", "levels", "qce_levels", "pit_edges", "curve_edges", "pit_bins", "z_edges", "coverages",
               "n_bins", "sigma_edges", "strategy", "closed", "conf_edges", "n_classes", "n_blocks", "seed",
               "kde_floor", "edges_exact", "quantile_levels", "version")
PATHS = ([("format",), ("version",), ("n_rows",), ("dropped",), ("source",), ("models",), ("parts",), ("extra",),
          ("parts", 0), ("parts", 0, "model"), ("parts", 0, "group"), ("parts", 0, "arrays"),
          ("parts", 0, "arrays", 0), ("parts", 0, "arrays", 0, "name"), ("parts", 0, "arrays", 0, "file"),
          ("parts", 0, "arrays", 0, "exact"), ("models", 0), ("spec", "extra")]
         + [("spec", f) for f in SPEC_FIELDS] + [("spec", "sigma_edges", 0), ("spec", "sigma_edges", 0, 2),
                                                 ("spec", "sigma_edges", 0, 3), ("spec", "levels", 0)])


def _edit(header: dict, path: tuple, value) -> bool:
    node = header
    for k in path[:-1]:
        if isinstance(node, dict) and k in node or isinstance(node, list) and isinstance(k, int) and k < len(node):
            node = node[k]
        else:
            return False
    last = path[-1]
    if isinstance(node, list) and not (isinstance(last, int) and last < len(node)):
        return False
    if value is DELETE:
        if isinstance(node, dict):
            node.pop(last, None)
        else:
            del node[last]
    else:
        node[last] = value
    return True


def _deep(v):
    """JSON lists as the tuples of a spec (nested lists as nested tuples; a flat list in one C-level call)."""
    if not isinstance(v, list):
        return v
    return tuple(_deep(x) for x in v) if any(isinstance(x, list) for x in v) else tuple(v)


def _expected(original: Summary, header: dict) -> Summary:
    """The summary an edited header describes, when the edit is one a real file could hold (else the original)."""
    out = copy.copy(original)
    out.source = header.get("source", "<summary>")
    out.dropped = header.get("dropped")
    out.models = tuple(header["models"]) if isinstance(header.get("models"), list) else original.models
    spec = header.get("spec")
    if isinstance(spec, dict):
        fields = {k: _deep(v) for k, v in spec.items() if k in SPEC_FIELDS}
        try:
            out.spec = dataclasses.replace(original.spec, **fields)
        except TypeError:
            pass
    return out


@st.composite
def header_edits(draw):
    """(kind, path, value): the header of a ``kind`` summary with the field at ``path`` set to ``value``."""
    kind = draw(st.sampled_from(KINDS if not SLOW else (*KINDS, "gauss")))
    return kind, draw(st.sampled_from(PATHS)), draw(st.integers(0, len(HOSTILE) - 1))


def _edited(kind: str, path: tuple, value) -> tuple[bytes, dict]:
    header = header_of(file_of(kind))
    if not _edit(header, path, value):
        _edit(header, path[:1], DELETE)
    items = members(file_of(kind))
    items["header.json"] = json.dumps(header).encode()
    return archive(items), header


def _mutation(arr: np.ndarray, how: str) -> bytes | None:
    """The member of ``arr`` changed as ``how`` says (None: the member is removed)."""
    flat = arr.reshape(-1)
    as_float = arr.astype(float)
    if how == "missing":
        return None
    if how in ("NaN", "negative"):
        bad = arr.copy() if arr.dtype != np.uint8 else as_float
        if how == "NaN":
            bad = bad.astype(float)
        bad.reshape(-1)[0] = np.nan if how == "NaN" else -1 - abs(bad.reshape(-1)[0])
        return npy(bad)
    if how == "object":
        obj = np.empty(arr.shape, dtype=object)
        obj[...] = 1
        return npy(obj, allow_pickle=True)
    return {
        "float where int": lambda: npy(as_float + 0.5),
        "int32": lambda: npy(arr.astype(np.int32)),
        "big-endian": lambda: npy(arr.astype(arr.dtype.newbyteorder(">"))),
        "shorter": lambda: npy(flat[:-1] if flat.size > 1 else flat[:0]),
        "longer": lambda: npy(np.concatenate([flat, flat[:1]])),
        "extra axis": lambda: npy(arr[..., None]),
        "transposed": lambda: npy(np.asfortranarray(arr)) if arr.ndim > 1 else npy(arr[None, ...]),
        "empty": lambda: npy(flat[:0]),
        "header only": lambda: npy(arr)[:128],
        "not npy": lambda: b"PK\x03\x04" + b"\0" * 40,
    }[how]()


MUTATIONS = ("missing", "float where int", "int32", "big-endian", "object", "NaN", "negative", "shorter", "longer",
             "extra axis", "transposed", "empty", "header only", "not npy")


@functools.cache
def _names(kind: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(sorted(a["name"] for a in p["arrays"])) for p in header_of(file_of(kind))["parts"])


@functools.cache
def _array(kind: str, name: str, part: int) -> np.ndarray:
    """The array as written (read once per kind, name and part; read-only, ``_mutation`` copies before changing)."""
    arr = load_array(file_of(kind), name, part)
    arr.flags.writeable = False
    return arr


@st.composite
def array_edits(draw):
    """(kind, part, array, mutation): one array of one part of a ``kind`` summary changed as ``mutation`` says."""
    kind = draw(st.sampled_from(KINDS if not SLOW else (*KINDS, "gauss")))
    names = _names(kind)
    part = draw(st.integers(0, len(names) - 1))
    name = draw(st.sampled_from(names[part]))
    return kind, part, name, draw(st.sampled_from(MUTATIONS))


def _run(category: str, kind: str, data: bytes, expected: Summary | None = None) -> str:
    got = outcome(data, expected or summary_of(kind)) if expected is None else _outcome_edit(data, expected)
    OUTCOMES[category][got] += 1
    return got


def _outcome_edit(data: bytes, expected: Summary) -> str:
    try:
        back = Summary.from_bytes(data, source=SOURCE)
    except InputError as err:
        assert SOURCE in str(err) and "What to do:" in str(err), str(err)
        return "error"
    assert same(back, expected), "an edited header was read as something it does not say"
    return "equal"


def _fuzz(category: str, strategy, n: int):
    @_settings(n)
    @given(case=strategy)
    def run(case):
        if category == "header":
            kind, path, value = case
            data, header = _edited(kind, path, HOSTILE[value])
            _run(category, kind, data, _expected(summary_of(kind), header))
        elif category == "array":
            kind, part, name, how = case
            arr = _array(kind, name, part)
            raw = _mutation(arr, how)
            assume(raw != npy(arr))  # e.g. bytes have no byte order
            assume(how != "float where int" or not name.startswith(("blk", "sigma_", "z_m", "z_s", "pit_s")))
            data = with_array(file_of(kind), name, raw, part)
            assert _run(category, kind, data) == "error", case  # every array mutation is refused
        elif category == "truncate":
            _run(category, case[0], file_of(case[0])[:case[1]])
        else:
            _run(category, case[0], _flipped(*case))
    return run


BUDGET = {"truncate": 120, "flip": 160, "header": 150, "array": 120}
STRATEGIES = {"truncate": truncations(), "flip": bit_flips(), "header": header_edits(), "array": array_edits()}


@pytest.mark.parametrize("category", list(BUDGET))
def test_the_reader_returns_what_was_written_or_an_input_error(category):
    _fuzz(category, STRATEGIES[category], BUDGET[category])()


@pytest.mark.slow
@pytest.mark.parametrize("category", list(BUDGET))
def test_the_reader_fuzzed_ten_times_longer(category):
    SLOW.append(True)
    try:
        _fuzz(category, STRATEGIES[category], 10 * BUDGET[category])()
    finally:
        SLOW.clear()
    print(f"summary-file fuzz outcomes after {category}:", OUTCOMES)


def test_the_fuzz_figures():
    """Runs after the default fuzz tests (file order): every category ran, and its outcomes are stated."""
    total = sum(sum(v.values()) for v in OUTCOMES.values())
    if total == 0:
        pytest.skip("run with the fuzz tests above")
    print("summary-file fuzz outcomes:", OUTCOMES)
    assert all(sum(v.values()) >= 50 for v in OUTCOMES.values()), OUTCOMES
    assert OUTCOMES["array"]["equal"] == 0
    assert OUTCOMES["truncate"]["equal"] == 0  # every cut loses the end record or a member
