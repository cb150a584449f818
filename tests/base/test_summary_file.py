"""Summary files are checked against their schema before use (``calib_core.base.mergeable_validate`` /
``mergeable_read``): each hostile file below — generated here from a valid one — is refused with an ``InputError``
naming the file (and the part), never another exception, never a large allocation; valid files of every layout read
back equal to what was written."""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest

import calib_core as cc
from calib_core.base import mergeable_validate as V
from calib_core.base.mergeable import Summary, merge_parts
from calib_core.base.mergeable_exact import exact_float, ints_to_bytes
from calib_core.base.mergeable_read import summary_file_bytes
from calib_core.base.predictions import ALL
from calib_core.metrics.regression_wis import WIS_PARTS
from calib_core.scale import summary as S
from calib_core.scale.regression_values import coverage_tag
from tests.scale.test_summary import classification_set, ensemble_set, gaussian_set, quantile_set, top_label_set
from tests.summary_hostile import (
    SOURCE,
    archive,
    file_of,
    header_of,
    load_array,
    members,
    npy,
    outcome,
    point_set,
    same,
    summary_of,
    with_array,
    with_header,
)


def refused(data: bytes, *needles: str, max_bytes: int = 2**31) -> str:
    with pytest.raises(cc.InputError) as err:
        Summary.from_bytes(data, source=SOURCE, max_bytes=max_bytes)
    text = str(err.value)
    assert SOURCE in text and "What to do:" in text, text
    for needle in needles:
        assert needle in text, (needle, text)
    assert err.value.app_hint is None or "--save-summary" in err.value.app_message()
    return text


def _set(path: tuple, value):
    def edit(h):
        node = h
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    return edit


# ----------------------------------------------------------------------------------------- valid files
LAYOUTS = {
    "gaussian-groups": (lambda: gaussian_set(300, groups=True), {}), "quantile": (lambda: quantile_set(200), {}),
    "ensemble": (lambda: ensemble_set(150), {}), "classes-3": (lambda: classification_set(250, 3), {}),
    "binary": (lambda: classification_set(250, 2), {}), "top-label": (lambda: top_label_set(200), {}),
    "point": (point_set, {}), "classes-3-equal-mass": (lambda: classification_set(250, 3), {"strategy": "quantile"}),
    "binary-equal-mass": (lambda: classification_set(250, 2), {"strategy": "quantile"}),
    "top-label-equal-mass": (lambda: top_label_set(200), {"strategy": "quantile"}),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_layout_reads_back_equal(layout):
    make, options = LAYOUTS[layout]
    pset = make()
    s = S.summarize(pset, spec=S.spec_for(pset, n_blocks=16, **options))
    for summary in (s, S.merge(s, s)):
        back = Summary.from_bytes(summary.to_bytes(), source="ok.summary")
        assert same(back, summary)


def test_the_schema_names_what_the_writers_write():
    assert V._WIS == WIS_PARTS
    assert V._tag(0.975) == coverage_tag(0.975) and V._tag(0.5) == coverage_tag(0.5)
    assert list(V.SPEC_FIELDS) == list(S.SummarySpec.__dataclass_fields__)
    assert ints_to_bytes(np.array([1], dtype=object)).shape == (1, V.EXACT_BYTES)
    assert 2 ** 1138 * 2 ** 1024 * 2 ** 62 < 2 ** V.EXACT_MAX_BITS  # any sum of ≤ 2**62 float64 values fits


def test_rows_dropped_and_non_finite_counters_read_back():
    frame = gaussian_set(200, seed=4)
    y = frame.y.copy()
    y[:3] = np.inf  # non-finite errors: nf:* counters
    pset = cc.PredictionSet(task="regression", y=y, dist=frame.dist, layout="gaussian", row_number=frame.row_number)
    s = S.summarize(pset, spec=S.spec_for(pset, n_blocks=16))
    s.dropped = {"y: missing value": {"count": 2, "first": [4, 9]}}
    assert any(k.startswith("nf:") for k in s.parts[("model", ALL)])
    assert same(Summary.from_bytes(s.to_bytes(), source="nf.summary"), s)


# ----------------------------------------------------------------------------------------- the cases
@pytest.mark.parametrize("value", [10**15, 1e15, -5, 0, 2**70, "2000", None, True, 240.0])
def test_a_header_row_count_that_is_not_the_parts_rows_is_refused(value):
    text = refused(with_header(file_of("gauss"), _set(("n_rows",), value)), "n_rows")
    if type(value) is int and value == 10**15:
        assert "240 rows" in text  # the parts' own count is named


def test_a_billion_bins_is_refused_before_anything_is_allocated():
    data = with_header(file_of("gauss"), _set(("spec", "n_bins"), 10**9))
    tracemalloc.start()
    try:
        refused(data, "spec.n_bins", f"{V.MAX_BINS:,}")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * len(data) + (8 << 20), peak


@pytest.mark.parametrize("kind", ["no parts", "a part without arrays", "an empty array"])
def test_empty_parts_are_refused(kind):
    data = file_of("gauss")
    if kind == "no parts":
        refused(with_header(data, _set(("parts",), [])), "no parts")
    elif kind == "a part without arrays":
        refused(with_header(data, _set(("parts", 0, "arrays"), [])), "array 'blk' is missing")
    else:
        refused(with_array(data, "n", npy(np.zeros(0, dtype=np.int64))), "array 'n'", "shape (0,)")


def test_negative_counts_are_refused():
    data = file_of("gauss")
    n = load_array(data, "n")
    n[0] = -1
    refused(with_array(data, "n", npy(n)), "array 'n'", "negative count")


@pytest.mark.parametrize("name,shape", [("n", (14,)), ("curve", (15, 5)), ("blk_bins", (16, 15, 2)), ("blk", (16,))])
def test_mismatched_shapes_are_refused(name, shape):
    refused(with_array(file_of("gauss"), name, npy(np.zeros(shape, dtype=load_array(file_of("gauss"), name).dtype))),
            f"array {name!r}", "shape")


def test_nan_and_float_counts_are_refused():
    data = file_of("gauss")
    n = load_array(data, "n").astype(float)
    refused(with_array(data, "n", npy(n)), "array 'n'", "float64", "whole numbers")
    n[2] = np.nan
    refused(with_array(data, "n", npy(n)), "array 'n'")
    blk = load_array(data, "blk")
    blk[0, 0] = np.nan
    refused(with_array(data, "blk", npy(blk)), "blk[:, 0]", "whole row counts")


def test_counts_that_do_not_hold_together_are_refused():
    data = file_of("gauss")
    n = load_array(data, "n")
    n[0] += 1  # n no longer the σ-bins' rows in the blocks
    refused(with_array(data, "n", npy(n)), "blk")
    hit = load_array(file_of("cls2"), "hit")
    hit[:] = load_array(file_of("cls2"), "n") + 1
    refused(with_array(file_of("cls2"), "hit", npy(hit)), "'hit' counts rows beyond 'n'")


def test_a_crc_error_names_the_member_and_the_part():
    data = bytearray(file_of("cls2"))
    name = next(a["file"] for a in header_of(bytes(data))["parts"][0]["arrays"] if a["name"] == "n").encode()
    pos = data.find(b"PK\x01\x02")
    while data[pos + 46:pos + 46 + len(name)] != name:  # the member's central directory record
        pos = data.find(b"PK\x01\x02", pos + 4)
    data[pos + 16] ^= 0xFF  # its stored CRC-32: the data decompresses, the checksum does not match
    refused(bytes(data), "array 'n'", "model 'model', all rows", "checksum", "damaged")


def test_a_damaged_deflate_stream_is_refused_as_damaged():
    data = bytearray(file_of("gauss"))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("header.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start:start + 8] = b"\xff" * 8  # an invalid deflate block (zlib error -3)
    refused(bytes(data), "header.json", "damaged")


# ----------------------------------------------------------------------------------------- bounds before decoding
def test_members_are_bounded_before_they_are_decompressed():
    data = file_of("gauss")
    refused(data, "expands to", "more than the limit", max_bytes=10_000)
    with pytest.raises(cc.InputError, match="What to do: pass a larger --max-size-mb"):
        Summary.from_bytes(data, source=SOURCE, max_bytes=10_000, limit_hint="pass a larger --max-size-mb (now 0)")
    items = members(data)
    items["header.json"] = b" " * (V.MAX_HEADER_BYTES + 1)  # compresses to a few KB
    refused(archive(items), "header.json", "bytes")


def test_a_file_opened_by_path_is_bounded_before_it_is_read(tmp_path):
    path = tmp_path / "big.summary"
    path.write_bytes(file_of("cls2"))
    assert summary_file_bytes(path) == file_of("cls2")
    with pytest.raises(cc.InputError, match="more than the limit of 100 .*What to do: raise it"):
        summary_file_bytes(path, 100, "raise it")
    with pytest.raises(cc.InputError, match="cannot read"):
        summary_file_bytes(tmp_path / "missing.summary")


def test_a_huge_npy_shape_is_refused_before_it_is_allocated():
    data = file_of("gauss")
    raw = npy(np.zeros(15, dtype=np.int64)).replace(b"(15,)", b"(4000000000,)", 1)
    tracemalloc.start()
    try:
        refused(with_array(data, "n", raw), "array 'n'", "shape")
        fake = with_array(data, "pit_le", npy(np.zeros(V.MAX_GRID, dtype=np.int64)))
        refused(fake, "array 'pit_le'", "states")  # a member far larger than its shape: refused from the directory
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * len(data) + (16 << 20), peak


def test_too_many_members_are_refused_from_the_end_record():
    data = bytearray(file_of("cls2"))
    eocd = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, eocd + 8, 0xFFF0, 0xFFF0)  # fewer than the zip64 flag, more than any summary
    data[eocd + 12:eocd + 16] = struct.pack("<L", 0x7FFFFFF0)  # a directory of 2 GiB
    tracemalloc.start()
    try:
        refused(bytes(data), "zip directory")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_deeply_nested_or_non_finite_json_is_refused():
    items = members(file_of("cls2"))
    items["header.json"] = b"[" * 100_000 + b"]" * 100_000
    refused(archive(items), "header.json")
    items["header.json"] = items["header.json"][:0] + json.dumps(header_of(file_of("cls2"))).replace(
        '"kde_floor": 0.0', '"kde_floor": NaN').encode()
    refused(archive(items), "NaN")


class _Boom:
    ran = False

    def __reduce__(self):
        return (_Boom.run, ())

    @staticmethod
    def run():  # pragma: no cover - must never be called
        _Boom.ran = True


def test_a_pickled_array_is_never_unpickled():
    arr = np.empty(15, dtype=object)
    arr[:] = [_Boom()] * 15
    refused(with_array(file_of("gauss"), "n", npy(arr, allow_pickle=True)), "array 'n'")
    assert not _Boom.ran


@pytest.mark.parametrize("compression", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_other_compressions_are_refused(compression):
    refused(archive(members(file_of("cls2")), compression=compression), "compressed")


def test_an_exact_sum_beyond_any_float_sum_is_refused():
    data = file_of("cls2")
    raw = load_array(data, "x:conf")
    raw[0, -1] = 0x40  # a positive value of ~2**2366
    refused(with_array(data, "x:conf", npy(raw)), "array 'x:conf'", "exact sum")


def test_an_exact_sum_beyond_its_rows_of_float64_values_is_refused():
    data = file_of("cls2")
    n_rows = summary_of("cls2").n_rows
    huge = ints_to_bytes(np.array([n_rows << (1138 + 1024)] + [0] * 14, dtype=object))
    refused(with_array(data, "x:conf", npy(huge)), "array 'x:conf'", "exact sum beyond")


def test_exact_sums_that_no_rows_could_add_up_to_are_refused():
    data = file_of("gauss")
    var = np.array([-1] + [0] * 14, dtype=object)  # Σσ² < 0
    refused(with_array(data, "x:var", npy(ints_to_bytes(var))), "array 'x:var'", "negative sum")
    n = load_array(data, "n", part=1)
    empty = int(np.flatnonzero(n == 0)[0]) if (n == 0).any() else None
    if empty is not None:  # a sum in an empty σ-bin
        z = np.zeros(15, dtype=object)
        z[empty] = 1
        refused(with_array(data, "x:z", npy(ints_to_bytes(z)), part=1), "array 'x:z'", "beyond its rows")


def test_parts_that_do_not_add_up_are_refused():
    data = file_of("gauss")
    # the groups of a model hold more rows than the model: a group's arrays copied as a third group
    items, header = members(data), header_of(data)
    copy = {"model": "model", "group": "c", "arrays": []}
    for a in header["parts"][1]["arrays"]:
        items["c/" + a["file"]] = items[a["file"]]
        copy["arrays"].append({**a, "file": "c/" + a["file"]})
    header["parts"].append(copy)
    items["header.json"] = json.dumps(header).encode()
    refused(archive(items), "more than the model")
    refused(with_header(data, _set(("models",), ["model", "other"])), "models")
    refused(with_header(data, lambda h: h["parts"][1]["arrays"].pop(0)), "array 'blk' is missing")
    refused(with_header(data, lambda h: h["parts"][0].update(group="g")), "no all-rows part")


def test_exact_sums_beyond_the_float_range_round_to_infinity():
    big = 1 << (1138 + 1030)
    np.testing.assert_array_equal(exact_float(np.array([big, -big, 0], dtype=object)), [np.inf, -np.inf, 0.0])


# ----------------------------------------------------------------------------------------- merging
def test_merging_summaries_of_different_specs_names_the_fields():
    pset = gaussian_set(200, seed=6)
    a = S.summarize(pset, spec=S.spec_for(pset, n_bins=10))
    b = S.summarize(pset, spec=S.spec_for(pset, n_bins=12))
    with pytest.raises(cc.InputError, match="different specs") as err:
        S.merge(a, b)
    assert "n_bins 10 vs 12" in str(err.value)


def test_merging_parts_of_different_shapes_names_the_array_not_a_broadcast():
    a = {"n": np.zeros(3, dtype=np.int64), "sigma_min": np.zeros(3)}
    b = {"n": np.zeros(3, dtype=np.int64), "sigma_min": np.zeros(4)}
    with pytest.raises(ValueError, match="'sigma_min' is float64 of shape \\(3,\\) in one and float64 of shape"):
        merge_parts(a, b, " (model 'm', group 'g')")
    b = {"n": np.zeros(3), "sigma_min": np.zeros(3)}
    with pytest.raises(ValueError, match="'n' is int64"):
        merge_parts(a, b)


def test_the_source_of_every_refusal_is_the_file():
    assert outcome(file_of("point"), summary_of("point")) == "equal"
    assert outcome(file_of("point")[:-5], summary_of("point")) == "error"
