"""Reading a summary file (``Summary.to_bytes``) bounded before anything is decoded, against the schema of
:mod:`calib_core.base.mergeable_validate`.

In this order, each refusal an ``InputError`` naming the file and the part:

1. the zip end record: members ≤ ``MAX_ENTRIES`` and a directory ≤ ``MAX_DIRECTORY_BYTES`` before ``zipfile``
   parses the directory; then every member stored or deflated, not encrypted, named once, and the sizes the
   directory states adding up to at most ``max_bytes`` (what the archive expands to, before decompressing);
2. ``header.json`` ≤ ``MAX_HEADER_BYTES``, UTF-8 JSON without NaN / Infinity, checked field by field
   (:func:`~calib_core.base.mergeable_validate.check_header`);
3. every array: its name and shape from the schema, then its member's stated size against that shape (before it
   is decompressed), its ``.npy`` header (at most 10,000 bytes, parsed by ``numpy.lib.format`` without pickle):
   dtype int64 / float64 / uint8 little-endian, C order, the expected shape, and exactly shape × item size bytes
   of data; the zip's CRC-32 checked as the member is read (a mismatch: "damaged");
4. values: counts ≥ 0, exact sums within 2²²³², the counts of each part holding together and the header's
   ``n_rows`` equal to the rows of the parts.

Nothing is unpickled; the largest allocation is one member of at most its stated size.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .mergeable_exact import bytes_to_ints
from .mergeable_validate import (
    EXACT_BYTES,
    EXACT_MAX_BITS,
    MAX_DIRECTORY_BYTES,
    MAX_ENTRIES,
    MAX_HEADER_BYTES,
    array_schema,
    check_header,
    check_part_counts,
    part_label,
    summary_error,
)
from .predictions import ALL

__all__ = ["SummaryContent", "read_summary_archive", "summary_file_bytes", "MAX_SUMMARY_FILE_BYTES"]

#: Largest summary file opened by path (the command line; the dashboard uses its upload limit).
MAX_SUMMARY_FILE_BYTES = 2**31
_NPY_HEADER = 10_000  # numpy's own default cap on a .npy header
_DTYPES = {"count": np.dtype("<i8"), "float": np.dtype("<f8"), "exact": np.dtype("u1")}
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError, KeyError,
               NotImplementedError, RuntimeError, struct.error, UnicodeDecodeError, OverflowError, IndexError)


@dataclass
class SummaryContent:
    """A summary file's checked content, from which :class:`~calib_core.base.mergeable.Summary` is built.

    Attributes
    ----------
    spec : dict
        The spec's fields (lists as tuples).
    parts : dict of (str, str) to dict of str to ndarray
        Per (model, group) the arrays (exact sums as object arrays of Python integers).
    n_rows : int
        Rows summarised.
    dropped : dict
        Dropped rows per reason.
    source : str
        Where the rows came from (the header's text).
    models : tuple
        The models.

    References
    ----------
    .. [1] Miller, B. P., Fredriksen, L., & So, B. (1990). An empirical study of the reliability of UNIX
       utilities. Communications of the ACM, 33(12), 32–44.
    """

    spec: dict[str, Any]
    parts: dict[tuple[str, str], dict[str, np.ndarray]] = field(default_factory=dict)
    n_rows: int = 0
    dropped: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "<summary>"
    models: tuple = ()


def summary_file_bytes(path: str | Path, limit: int = MAX_SUMMARY_FILE_BYTES, limit_hint: str | None = None) -> bytes:
    """The bytes of a summary file opened by path, its size checked against ``limit`` before it is read.

    Parameters
    ----------
    path : str or Path
        The file.
    limit : int, default MAX_SUMMARY_FILE_BYTES
        Largest size in bytes.
    limit_hint : str, optional
        How to raise the limit (the CLI's option, the dashboard's setting).

    Returns
    -------
    bytes
        The file's bytes.

    References
    ----------
    .. [1] Miller, B. P., Fredriksen, L., & So, B. (1990). An empirical study of the reliability of UNIX
       utilities. Communications of the ACM, 33(12), 32–44.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > limit:
            raise summary_error(f"the file has {size:,} bytes, more than the limit of {limit:,} for a summary file",
                                str(path), hint=limit_hint)
        with p.open("rb") as fh:
            return fh.read(limit + 1)
    except OSError as exc:
        raise summary_error(f"cannot read the summary file ({exc.strerror or exc})", str(path)) from None


def _end_record(data: bytes) -> tuple[int, int] | None:
    """(members, directory bytes) from the zip end record (zip64 if flagged), or None when not found."""
    end = len(data) - 22
    pos = end if end >= 0 and data[end:end + 4] == b"PK\x05\x06" else data.rfind(b"PK\x05\x06", max(0, end - 65535))
    if pos < 0 or pos + 22 > len(data):
        return None
    count, size = struct.unpack("<HL", data[pos + 10:pos + 16])
    if (count == 0xFFFF or size == 0xFFFFFFFF) and pos >= 20 and data[pos - 20:pos - 16] == b"PK\x06\x07":
        (offset,) = struct.unpack("<Q", data[pos - 12:pos - 4])
        if 0 <= offset <= len(data) - 56 and data[offset:offset + 4] == b"PK\x06\x06":
            count, size = struct.unpack("<QQ", data[offset + 32:offset + 48])
    return count, size


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, what: str, source: str) -> bytes:
    """A member's bytes (at most its stated size), its CRC-32 checked by ``zipfile`` as it is read."""
    try:
        with zf.open(info) as fh:
            raw = fh.read(info.file_size + 1)
    except _ZIP_ERRORS as exc:
        why = ("its checksum (CRC-32) does not match its contents" if "CRC" in str(exc)
               else f"it cannot be decompressed ({type(exc).__name__}: {str(exc)[:80]})")
        raise summary_error(f"{what} is damaged: {why}; the file was changed or cut short after it was written",
                            source) from None
    if len(raw) != info.file_size:
        raise summary_error(f"{what} is damaged: {len(raw):,} bytes instead of the {info.file_size:,} its directory "
                            "entry states", source)
    return raw


def _npy(raw: bytes, kind: str, shape: tuple[int, ...], what: str, source: str) -> np.ndarray:
    """Parse a ``.npy`` member: header bounded and checked against (kind, shape) before the data is used."""
    bio = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(bio)
        reader = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}[version]
        got_shape, fortran, dtype = reader(bio, max_header_size=_NPY_HEADER)
    except (ValueError, KeyError, SyntaxError, TypeError, RecursionError, MemoryError, EOFError, OverflowError) as exc:
        raise summary_error(f"{what} is not a readable .npy array ({str(exc)[:80]})", source) from None
    want = _DTYPES[kind]
    if dtype != want or fortran:
        found = dtype.str if dtype.byteorder == ">" or dtype.kind in "OV" else dtype.name
        raise summary_error(f"{what} holds {found}{' (Fortran order)' if fortran else ''}; it must be "
                            f"{want.name} ({'whole numbers' if kind == 'count' else kind})", source)
    full = shape + ((EXACT_BYTES,) if kind == "exact" else ())
    if tuple(got_shape) != full:
        raise summary_error(f"{what} has shape {tuple(got_shape)}; the spec's bins need {full}", source)
    count = int(np.prod(full, dtype=np.int64))
    if len(raw) - bio.tell() != count * want.itemsize:
        raise summary_error(f"{what} holds {len(raw) - bio.tell():,} bytes of data instead of "
                            f"{count * want.itemsize:,}", source)
    arr = np.frombuffer(raw, dtype=want, count=count, offset=bio.tell()).reshape(full).copy()
    if kind == "count" and arr.size and arr.min() < 0:
        raise summary_error(f"{what} holds a negative count ({int(arr.min()):,})", source)
    if kind == "exact" and arr.size:
        top = arr[..., EXACT_MAX_BITS // 8:]  # sign extension only
        positive = (top == 0).all(axis=-1)
        negative = (top == 255).all(axis=-1)
        if not (positive | negative).all():
            raise summary_error(f"{what} holds an exact sum beyond any sum of float64 values", source)
    return arr


def read_summary_archive(data: bytes, *, source: str = "<summary>", max_bytes: int = 2**31,
                         limit_hint: str | None = None) -> SummaryContent:
    """Read and check a summary file's bytes (module docstring): its checked content, or ``InputError``.

    The archive is refused when Σ stated member sizes > ``max_bytes`` (the decompressed size, from the directory,
    before anything is decompressed), and each array when its stated size ≠ ``.npy`` header + Π shape × item
    size — so no allocation exceeds what the directory states and the schema allows.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    source : str, default "<summary>"
        The file's name, for messages.
    max_bytes : int, default 2**31
        Largest decompressed size.
    limit_hint : str, optional
        How to raise ``max_bytes`` (the CLI's option, the dashboard's setting), for the size message.

    Returns
    -------
    SummaryContent
        The checked content.

    References
    ----------
    .. [1] Peterson, W. W., & Brown, D. T. (1961). Cyclic codes for error detection. Proceedings of the IRE,
       49(1), 228–235.
    .. [2] Miller, B. P., Fredriksen, L., & So, B. (1990). An empirical study of the reliability of UNIX
       utilities. Communications of the ACM, 33(12), 32–44.
    """
    data = bytes(data)
    if data[:4] != b"PK\x03\x04":
        raise summary_error("not a calibration summary file: a summary file is a zip archive written by "
                            "--save-summary", source)
    end = _end_record(data)
    if end is not None and (end[0] > MAX_ENTRIES or end[1] > MAX_DIRECTORY_BYTES):
        raise summary_error(f"not a calibration summary file: its zip directory lists {end[0]:,} members in "
                            f"{end[1]:,} bytes (at most {MAX_ENTRIES:,} members in {MAX_DIRECTORY_BYTES:,} bytes)",
                            source)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except _ZIP_ERRORS as exc:
        raise summary_error(f"not a calibration summary file: the zip archive is damaged or cut short "
                            f"({type(exc).__name__}: {str(exc)[:80]})", source) from None
    names = [i.filename for i in infos]
    if len(infos) > MAX_ENTRIES or len(set(names)) != len(names):
        raise summary_error("not a calibration summary file: its zip directory lists too many members or one "
                            "twice", source)
    odd = [i.filename for i in infos if i.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
           or i.flag_bits & 0x1]
    if odd:
        raise summary_error(f"the member {odd[0][:80]!r} is encrypted or compressed in a way --save-summary never "
                            "writes", source)
    expanded = sum(i.file_size for i in infos)
    if expanded > max_bytes:
        raise summary_error(f"the summary file expands to {expanded:,} bytes, more than the limit of {max_bytes:,}",
                            source, hint=limit_hint)
    by_name = dict(zip(names, infos))
    info = by_name.get("header.json")
    if info is None:
        raise summary_error("not a calibration summary file: it holds no header.json", source)
    if info.file_size > MAX_HEADER_BYTES:
        raise summary_error(f"header.json has {info.file_size:,} bytes (at most {MAX_HEADER_BYTES:,})", source)
    raw = _member(zf, info, "header.json", source)
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise summary_error(f"not a calibration summary file: header.json is not JSON ({str(exc)[:80]})",
                            source) from None
    head = check_header(header, source)
    spec = head["spec"]
    parts: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    rows: dict[tuple[str, str], int] = {}
    for model, group, arrays in head["parts"]:
        where = part_label(model, group)
        try:
            schema = array_schema(spec, [a[0] for a in arrays])
        except ValueError as exc:
            raise summary_error(f"{where}: {exc}", source) from None
        got: dict[str, np.ndarray] = {}
        for name, file, exact in arrays:
            kind, shape = schema[name]
            what = f"{where}, array {name!r} ({file[:80]!r})"
            info = by_name.get(file)
            if info is None:
                raise summary_error(f"{what} is missing from the archive", source)
            if exact != (kind == "exact"):
                raise summary_error(f"{what} is marked {'exact' if exact else 'plain'}; it must be "
                                    f"{'exact' if kind == 'exact' else 'plain'}", source)
            itemsize = _DTYPES[kind].itemsize * (EXACT_BYTES if kind == "exact" else 1)
            most = int(np.prod(shape, dtype=np.int64)) * itemsize + _NPY_HEADER + 16
            if info.file_size > most:
                raise summary_error(f"{what} states {info.file_size:,} bytes; its shape {shape} needs at most "
                                    f"{most:,}", source)
            arr = _npy(_member(zf, info, what, source), kind, shape, what, source)
            got[name] = bytes_to_ints(arr) if kind == "exact" else arr
        try:
            rows[(model, group)] = check_part_counts(spec, got)
        except ValueError as exc:
            raise summary_error(f"{where}: {exc}", source) from None
        parts[(model, group)] = got
    _check_totals(rows, {k: set(v) for k, v in parts.items()}, head["n_rows"], source)
    return SummaryContent(spec, parts, head["n_rows"], head["dropped"], head["source"], head["models"])


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _check_totals(part_rows: Mapping[tuple[str, str], int], names: Mapping[tuple[str, str], set], n_rows: int,
                 source: str) -> None:
    """Hold the parts to the header: n_rows = Σ_models N(model, all rows); a group's parts hold at most their
    model's rows; every part lists the same arrays (``nf:`` counters aside, as ``merge_parts`` needs)."""
    whole = {m: v for (m, g), v in part_rows.items() if g == ALL}
    if sum(whole.values()) != n_rows:
        raise summary_error(f"header.json: n_rows is {n_rows:,} but the parts hold {sum(whole.values()):,} rows "
                            "(the all-rows part of every model counted once)", source)
    in_groups: dict[str, int] = {}
    for (m, g), v in part_rows.items():
        if g != ALL:
            in_groups[m] = in_groups.get(m, 0) + v
    over = sorted(m for m, v in in_groups.items() if v > whole[m])
    if over:
        raise summary_error(f"the groups of model {over[0]!r} hold {in_groups[over[0]]:,} rows, more than the "
                            f"model's {whole[over[0]]:,}", source)
    kinds = {frozenset(n for n in v if not n.startswith("nf:")) for v in names.values()}
    if len(kinds) > 1:
        a, b = sorted(kinds, key=len)[:2]
        raise summary_error(f"the parts hold different arrays (e.g. {sorted(a ^ b)[:3]!r:.80}): a summary's parts "
                            "all hold the same ones", source)
