"""Reading the bytes of a prediction file into a DataFrame: size limits, compression, formats, :func:`read_table`.

``cc.load_predictions`` (:mod:`calib_core.api`) reads the file with :func:`read_table`, detects the task with
:func:`calib_core.data.detect.detect_task` and hands the frame to the task's parser
(:mod:`calib_core.data.regression` or :mod:`calib_core.data.classification`).

* Formats are recognised from the content, not the name: Parquet (``PAR1`` magic; the footer's row
  count, column count and decoded size — rows × columns × bytes, :func:`parquet_decoded_bytes` — are checked
  *before* any data is read), ``.npz`` archives of plain arrays (``np.load(..., allow_pickle=False)``; a 2-D
  array ``probs`` becomes columns ``prob_0 … prob_{K−1}``, a 1-D array ``labels`` the column ``label``),
  gzip / bzip2 / xz / single-file zip compressed tables (decompressed as a stream that stops one byte past
  the size limit), Excel ``.xlsx`` only if ``openpyxl`` is installed, and delimited text otherwise
  (:func:`calib_core.data.text.read_text`: encodings, comments, delimiter sniffing).
  Pickles, legacy ``.xls`` and other binary content are refused with a message.
* Errors → ``InputError``: empty file, binary garbage, more than ``max_bytes`` bytes (default
  ``DEFAULT_MAX_BYTES``) of file, decompressed text or decoded Parquet / npz data, more than ``MAX_ROWS``
  declared rows, more than :data:`calib_core.data.columns.MAX_COLUMNS` columns, duplicate column names.

Data rows are numbered from 1 (the first row after the header; blank lines are skipped); these are the
numbers in ``PredictionSet.row_number``, ``DropReport`` and every message.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError
from . import parquet_size
from .bytes_arrays import check_flat_columns, check_names, read_excel, read_npz
from .bytes_stream import LimitedStream, Payload, decompressing, regular_file
from .columns import MAX_COLUMNS, check_columns, name_list
from .text import read_text

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_ROWS",
    "parquet_decoded_bytes",
    "read_table",
    "size_text",
    "source_name",
]

DEFAULT_MAX_BYTES = 1 << 30
"""Size limit (bytes of file, decompressed text, or uncompressed Parquet/npz data) when ``max_bytes`` is None."""

DEFAULT_LIMIT_HINT = "pass a larger max_bytes"
"""How to raise the size limit, in the words of the caller (the dashboard and the CLI pass their own)."""

MAX_ROWS = 100_000_000
"""Parquet / npz files declaring more rows than this are refused before they are read."""


def size_text(n: float) -> str:
    """Bytes in words: ``1,000 bytes`` below 1 MB, else three significant digits (binary units).

    ``4.58 MB`` / ``500 MB`` / ``14.9 GB``, in binary units as Streamlit's ``server.maxUploadSize``.

    Parameters
    ----------
    n : float
        A number of bytes.

    Returns
    -------
    str
        The size in words.

    Examples
    --------
    >>> from calib_core.data.bytes import size_text
    >>> size_text(1000), size_text(3 << 20), size_text(15 << 30)
    ('1,000 bytes', '3 MB', '15 GB')
    """
    if n < 1 << 20:
        return f"{int(n):,} bytes"
    if n < 1 << 30:
        return f"{n / (1 << 20):.3g} MB"
    return f"{n / (1 << 30):.3g} GB"


def _too_big(what: str, limit: int, src: str, limit_hint: str | None) -> InputError:
    """The one message of every size check: what is too big, the limit, and how to raise it (``what`` ending in
    "more than" is continued by the limit)."""
    joiner = " " if what.endswith("more than") else ", more than "
    return InputError(
        f"{what}{joiner}the size limit of {size_text(limit)}",
        source=src,
        hint="split the file or keep only the columns you need, or raise the limit: "
        + (limit_hint or DEFAULT_LIMIT_HINT),
    )


_MAGIC_PICKLE = re.compile(rb"^\x80[\x02-\x05]")


def source_name(path_or_buffer: Any, source: str | None = None) -> str:
    """The file name shown in messages: ``source`` if given, else the path's or buffer's ``.name``.

    Parameters
    ----------
    path_or_buffer : str, os.PathLike, bytes or file-like
        What is read.
    source : str, optional
        The name given by the caller, which wins.

    Returns
    -------
    str
        The name (the last path component), or ``"<memory>"`` for nameless bytes.
    """
    if source:
        return str(source)
    if isinstance(path_or_buffer, (str, os.PathLike)):
        return Path(path_or_buffer).name or str(path_or_buffer)
    name = getattr(path_or_buffer, "name", None)
    if isinstance(name, str) and name:
        return Path(name).name
    return "<memory>"


# ----------------------------------------------------------------------------------------------
# Reading bytes
# ----------------------------------------------------------------------------------------------


def _read_bytes(path_or_buffer: Any, src: str, limit: int, limit_hint: str | None = None) -> bytes:
    """All bytes of a path, bytes object or file-like (``getvalue()`` or ``read()``), refusing > limit."""
    too_big = "is larger than the size limit of {lim} ({size})"
    hint = f"split the file, drop unused columns, or raise the limit: {limit_hint or DEFAULT_LIMIT_HINT}"
    if isinstance(path_or_buffer, (bytes, bytearray, memoryview)):
        data = bytes(path_or_buffer)
    elif isinstance(path_or_buffer, (str, os.PathLike)):
        p = Path(path_or_buffer)
        if not p.exists():
            raise InputError(f"file not found: {p}", source=src, hint="check the path")
        if not p.is_file():
            raise InputError(f"{p} is not a regular file", source=src, hint="pass the path of a CSV/TSV/Parquet file")
        size = p.stat().st_size
        if size > limit:
            raise InputError(too_big.format(lim=size_text(limit), size=f"{size:,} bytes"), source=src, hint=hint)
        data = p.read_bytes()
    elif hasattr(path_or_buffer, "getvalue"):
        data = path_or_buffer.getvalue()
    elif hasattr(path_or_buffer, "read"):
        data = path_or_buffer.read(limit + 1)
    else:
        raise InputError(
            f"cannot read an object of type {type(path_or_buffer).__name__}",
            source=src,
            hint="pass a file path, bytes, or a binary file-like object",
        )
    if isinstance(data, str):
        data = data.encode("utf-8")
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise InputError("the upload did not give bytes", source=src, hint="pass a binary file-like object")
    if len(data) > limit:
        raise InputError(too_big.format(lim=size_text(limit), size=f"at least {len(data):,} bytes"), source=src,
                         hint=hint)
    return data


def read_table(
    path_or_buffer: Any, *, source: str | None = None, max_bytes: int | None = None, limit_hint: str | None = None,
    text_except: list[str] | None = None, text_categories: bool = False,
) -> pd.DataFrame:
    """Read a prediction table from a path, bytes or binary file-like (e.g. Streamlit's ``UploadedFile``).

    The format is recognised from the content (see the module docstring): Parquet, npz, gzip / bzip2 / xz /
    single-file zip compressed tables, Excel (only with openpyxl) or delimited text with sniffed delimiter and
    encoding (:func:`calib_core.data.text.read_text`).  Nothing is unpickled or evaluated.  ``max_bytes`` bounds the
    file, its decompressed bytes (decompression stops one byte past it) and what a Parquet / npz file decodes to in
    memory (from its footer: rows × columns × bytes, :func:`parquet_decoded_bytes`), each checked *before* decoding.
    An exception of another type than ``InputError`` from a parser (a bug or a case no check foresaw) is wrapped in
    an ``InputError`` saying so, so that no upload ever ends in a traceback.

    Parameters
    ----------
    path_or_buffer : str, os.PathLike, bytes or binary file-like
        The file: a path, its bytes, or an object with ``getvalue()`` or ``read()``.
    source : str, optional
        The file name shown in messages (default: :func:`source_name`).
    max_bytes : int, optional
        The size limit in bytes (default ``DEFAULT_MAX_BYTES``, 1 GiB).
    limit_hint : str, optional
        How to raise the limit, in the caller's words (default "pass a larger max_bytes").
    text_except : list of str, optional
        Delimited text only: every column but these is read as text, verbatim (forecast-hub task IDs: ``01`` stays
        ``01``, ``NA`` stays ``NA``; :func:`calib_core.data.text.read_text`).  Parquet columns keep their stored types.
    text_categories : bool, default False
        With ``text_except``: Parquet text columns (but those named) come back as categoricals of the file's
        dictionaries (the same values; a null → a missing code) instead of one string per row
        (:func:`_parquet_categories`); delimited text columns as object columns of Python strings (no Arrow
        string copy; pandas' ``dtype="category"`` would turn ``01`` into the number 1).  The size checks are the
        same, before decoding.

    Returns
    -------
    DataFrame
        The table with a fresh RangeIndex (data row r is ``frame.iloc[r − 1]``) and ``frame.attrs`` holding
        ``source``, ``format``, ``comments`` (leading '#' lines), ``compression`` when it was compressed and, for
        text, ``encoding``, ``delimiter``, ``decimal``, ``header_line``, ``legacy_lines`` and ``merged_rows``.

    Raises
    ------
    InputError
        Anything that is not a readable, non-empty table with unique column names within the limits.

    Examples
    --------
    >>> from calib_core.data.bytes import read_table
    >>> frame = read_table(b"# units: K\\ny;mean;std\\n1,5;1,2;0,3\\n2,0;2,1;0,4\\n", source="t.csv")
    >>> frame.to_dict("list"), frame.attrs["delimiter"], frame.attrs["decimal"], frame.attrs["comments"]
    ({'y': [1.5, 2.0], 'mean': [1.2, 2.1], 'std': [0.3, 0.4]}, ';', ',', ['units: K'])
    """
    src = source_name(path_or_buffer, source)
    try:
        return _read_table(path_or_buffer, src, max_bytes, limit_hint, text_except, text_categories)
    except InputError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, MemoryError, EOFError,
            OSError, NotImplementedError, RecursionError, zlib.error, lzma.LZMAError) as exc:
        raise InputError(
            f"unexpected problem while reading the file ({type(exc).__name__}: {str(exc)[:200]})",
            source=src,
            hint="re-save it as plain UTF-8 CSV; if the file looks right, please report this as a bug",
        ) from exc


def _read_table(path_or_buffer: Any, src: str, max_bytes: int | None, limit_hint: str | None = None,
                text_except: list[str] | None = None, text_categories: bool = False) -> pd.DataFrame:
    """``read_table`` without the last-resort wrapping of unexpected exceptions."""
    limit = DEFAULT_MAX_BYTES if max_bytes is None else int(max_bytes)
    path = regular_file(path_or_buffer)
    if path is not None and path.stat().st_size <= limit:  # read from disk as needed, never whole for text
        payload = Payload(path=path)
    else:
        payload = Payload(data=_read_bytes(path_or_buffer, src, limit, limit_hint))
    head = payload.head
    if not payload.size or (not head.strip() and not payload.read_all().strip()):
        raise InputError("is empty", source=src, hint="upload a table with a header row and one row per example")
    compressed = _compression(head)
    text: Any = None  # a function opening a stream of the (decompressed) text, when it is read as a stream
    if compressed:
        text = _inflating(payload, compressed, src, limit, limit_hint)
        if text is None:
            data = _inflate(payload.read_all(), compressed, src, limit, limit_hint)
    elif head[:4] == b"PK\x03\x04":
        data, compressed = _unzip_single_table(payload.read_all(), src, limit, limit_hint)
    elif head[:4] == b"PAR1" or _MAGIC_PICKLE.match(head) or head[:6] == b"\x93NUMPY" \
            or head[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        data = head
    else:
        text = payload.open
    if text is not None:
        data = b""
    if text is None and head[:4] == b"PAR1" and not compressed:
        frame = _read_parquet(payload.path if payload.data is None else payload.data, src, limit, limit_hint,
                              keep=text_except if text_categories and text_except is not None else None)
    elif text is not None:
        frame = read_text(text, src) if text_except is None else read_text(text, src, text_except=text_except,
                                                                            text_objects=text_categories)
    elif data[:4] == b"PAR1":
        frame = _read_parquet(data, src, limit, limit_hint,
                              keep=text_except if text_categories and text_except is not None else None)
    elif data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                names = zf.namelist()
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
            raise InputError(f"looks like a zip archive but cannot be opened ({exc})", source=src,
                             hint="upload the CSV itself") from None
        if names and all(n.endswith(".npy") for n in names):
            frame = _read_npz(data, src, limit, limit_hint)
        elif any(n.startswith("xl/") for n in names) or "[Content_Types].xml" in names:
            frame = read_excel(data, src)
        else:
            raise InputError("is a zip archive", source=src, hint="unzip it and upload the CSV/Parquet file inside")
    elif data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        raise InputError("is a legacy Excel (.xls) or other OLE2 file, which is not read", source=src,
                         hint="save the sheet as CSV (UTF-8) and upload that")
    elif _MAGIC_PICKLE.match(data) or data[:6] == b"\x93NUMPY":
        raise InputError(
            "looks like a Python pickle or a raw .npy array; these are never loaded (unpickling can run code)",
            source=src,
            hint="export the predictions as CSV or Parquet (or an .npz of named arrays)",
        )
    else:
        frame = read_text(data, src) if text_except is None else read_text(data, src, text_except=text_except,
                                                                            text_objects=text_categories)
    if frame.shape[1] == 0:
        raise InputError("has no columns", source=src, hint="upload a table with a header row")
    frame = frame.reset_index(drop=True)
    frame.attrs["source"] = src
    if compressed:
        frame.attrs["compression"] = compressed
    return frame


def _compression(data: bytes) -> str:
    """The compression format of ``data`` from its magic bytes ("" for none; zip archives are told apart later)."""
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    if data[:3] == b"BZh" and data[3:4].isdigit() and data[4:10] in (b"\x31\x41\x59\x26\x53\x59",
                                                                    b"\x17\x72\x45\x38\x50\x90"):
        return "bzip2"
    if data[:6] == b"\xfd7zXZ\x00":
        return "xz"
    return ""


def _inflate(data: bytes, kind: str, src: str, limit: int, limit_hint: str | None) -> bytes:
    """Decompress ``data`` (gzip, bzip2, xz) as a stream that stops one byte past ``limit``: a bomb of a few MB
    that would inflate to GBs costs at most ``limit`` bytes before it is refused."""
    opener = {"gzip": lambda b: gzip.GzipFile(fileobj=b), "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind]
    try:
        with opener(io.BytesIO(data)) as stream:
            out = stream.read(limit + 1)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error, lzma.LZMAError, ValueError) as exc:
        raise InputError(f"looks {kind}-compressed but cannot be decompressed ({exc})", source=src,
                         hint="upload the uncompressed CSV") from None
    if len(out) > limit:
        raise _too_big(f"is {kind}-compressed and decompresses to more than", limit, src, limit_hint)
    if not out.strip():
        raise InputError(f"is empty (after {kind} decompression)", source=src, hint="upload a non-empty table")
    return out


def _inflating(payload: Payload, kind: str, src: str, limit: int, limit_hint: str | None) -> Any:
    """A function opening a decompressing stream of ``payload`` that stops one byte past ``limit`` (a bomb costs a
    chunk, never its size), for text read as a stream; None when what it decompresses to is not text (Parquet, a zip
    archive, a pickle …: decompressed in memory by :func:`_inflate` and read as such) or is empty."""

    def too_big() -> InputError:
        return _too_big(f"is {kind}-compressed and decompresses to more than", limit, src, limit_hint)

    def corrupt(exc: BaseException) -> InputError:
        return InputError(f"looks {kind}-compressed but cannot be decompressed ({exc})", source=src,
                          hint="upload the uncompressed CSV")

    def opener() -> Any:
        return io.BufferedReader(LimitedStream(decompressing(kind, payload.open()), limit, too_big, corrupt),
                                 buffer_size=1 << 20)

    with opener() as stream:
        head = stream.read(1 << 16)
    if not head.strip() or head[:4] in (b"PAR1", b"PK\x03\x04") or _compression(head) or _MAGIC_PICKLE.match(head) \
            or head[:6] == b"\x93NUMPY" or head[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        return None
    return opener


def _unzip_single_table(data: bytes, src: str, limit: int, limit_hint: str | None) -> tuple[bytes, str]:
    """A zip archive holding exactly one table file (``preds.csv.zip``): that file's bytes, read as a stream that
    stops one byte past ``limit`` (the declared size is not trusted).  npz archives (every member ``.npy``) and
    Excel workbooks are returned unchanged, to be read as such; other archives are refused."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX/")]
            names = [i.filename for i in infos]
            if (names and all(n.endswith(".npy") for n in names)) or any(n.startswith("xl/") for n in names) \
                    or "[Content_Types].xml" in names:
                return data, ""
            if len(infos) != 1:
                raise InputError(
                    f"is a zip archive of {len(infos)} files" + (f" ({name_list(names, 5)})" if names else ""),
                    source=src, hint="unzip it and upload the CSV/Parquet file inside")
            with zf.open(infos[0]) as member:
                out = member.read(limit + 1)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError, zlib.error) as exc:
        raise InputError(f"looks like a zip archive but cannot be opened ({exc})", source=src,
                         hint="upload the CSV itself") from None
    if len(out) > limit:
        raise _too_big(f"holds {infos[0].filename}, which decompresses to more than", limit, src,
                       limit_hint)
    if not out.strip():
        raise InputError(f"is empty (after unzipping {infos[0].filename})", source=src, hint="upload a non-empty table")
    return out, "zip"


# ----------------------------------------------------------------------------------------------
# Parquet, npz, Excel
# ----------------------------------------------------------------------------------------------


def parquet_decoded_bytes(meta: Any, schema: Any = None) -> int:
    """Bytes the decoded table will take, from the Parquet footer alone (nothing is decompressed).

    Every value costs at least 8 bytes once decoded (float64 / int64 / an object pointer in pandas; wider
    fixed-length values their width), and string / binary columns — read as dictionaries, see :func:`_read_parquet`
    — add their uncompressed pages (an upper bound of their distinct values).  Run-length / dictionary encoding lets a
    file of a few kB declare 10⁸ constant rows; this is what they decode to.

    Parameters
    ----------
    meta : pyarrow.parquet.FileMetaData
        The file's footer (``ParquetFile.metadata``).
    schema : pyarrow.parquet.ParquetSchema, optional
        The file's schema, for the width of fixed-length byte arrays.

    Returns
    -------
    int
        The decoded size in bytes.
    """
    return parquet_size.decoded_bytes(meta, schema)  # the size module: footer and dictionary page headers


def _read_parquet(data: Any, src: str, limit: int, limit_hint: str | None = None,
                  keep: list[str] | None = None) -> pd.DataFrame:
    """A Parquet file (its bytes or its path) as a DataFrame, its size checked from the footer first; ``keep`` (the
    opt-in of ``text_categories``): text columns not in ``keep`` come back as categoricals of the file's dictionaries.

    Columns are decoded one at a time (:func:`_parquet_columns`): the peak is the frame plus one column, not the
    decoded Arrow table and the frame together.  Nested columns (list, struct, map …) and empty names are refused
    before anything is decoded."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pa.BufferReader(data) if isinstance(data, (bytes, bytearray, memoryview)) else str(data)
    try:
        pf = pq.ParquetFile(source)
        meta = pf.metadata
        n_rows, n_cols = int(meta.num_rows), int(meta.num_columns)
        decoded = parquet_decoded_bytes(meta, pf.schema)
        fields = list(pf.schema_arrow)
        text_columns = [f.name for f in fields
                        if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
                        or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"is not a readable Parquet file ({str(exc)[:200]})", source=src,
                         hint="re-export it with pandas.DataFrame.to_parquet or upload CSV") from None
    if n_cols > MAX_COLUMNS:
        raise InputError(f"has {n_cols:,} columns, more than the limit of {MAX_COLUMNS:,}", source=src,
                         hint="keep only the columns you need")
    if n_rows > MAX_ROWS:
        raise InputError(f"declares {n_rows:,} rows, more than the limit of {MAX_ROWS:,}", source=src,
                         hint="split the file")
    if decoded > limit:
        raise _too_big(f"declares {n_rows:,} rows × {n_cols:,} columns, which decode to about "
                       f"{size_text(decoded)} in memory", limit, src, limit_hint)
    check_flat_columns(fields, src)
    check_names([f.name for f in fields], src)
    meta_pandas = (pf.schema_arrow.metadata or {}).get(b"pandas") or b""
    stored_index = re.search(rb'"index_columns":\s*\[\s*"', meta_pandas) is not None
    if text_columns:  # strings stay dictionaries while decoding: a repeated long string is held once
        pf = pq.ParquetFile(source, read_dictionary=text_columns)
    try:
        plain = text_columns if keep is None else [c for c in text_columns if c in keep]
        if stored_index:  # an index stored as columns: the whole table, for pandas to restore it
            frame = _parquet_whole(pf, keep, text_columns, plain, src)
        else:
            frame = _parquet_columns(pf, [f.name for f in fields],
                                     [] if keep is None else [c for c in text_columns if c not in keep], plain, src)
    except (pa.ArrowException, OSError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise InputError(f"Parquet data could not be read ({str(exc)[:200]})", source=src,
                         hint="re-export it with pandas.DataFrame.to_parquet or upload CSV") from None
    finally:
        pa.default_memory_pool().release_unused()
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    frame = frame.reset_index(drop=True)
    check_columns(list(frame.columns), src)
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs.update({"format": "parquet", "comments": []})
    return frame


def _parquet_columns(pf: Any, names: list[str], categorical: list[str], plain: list[str], src: str) -> pd.DataFrame:
    """The columns of a Parquet file decoded one at a time, each to pandas at once (the system allocator, which
    gives memory back to the OS) and its Arrow data released before the next: ``categorical`` text columns as
    pandas categoricals of their dictionary, ``plain`` text columns as object columns of one shared str per distinct
    value.  The columns are not copied into one block (``copy=False``)."""
    import pyarrow as pa

    check_columns(names, src)
    out: dict[str, Any] = {}
    floats = _plain_float_columns(pf)
    for name in names:
        if name in floats:  # row group by row group into one array: the peak is one row group, not the column
            out[name] = _parquet_float_column(pf, name)
            continue
        table = pf.read(columns=[name], use_pandas_metadata=False)
        try:
            part = _parquet_categories(table, categorical, plain, src) if name in categorical else None
            if part is None:
                part = table.to_pandas(memory_pool=pa.system_memory_pool())
        except (KeyError, IndexError, AttributeError, TypeError, ValueError):
            if b"pandas" not in (table.schema.metadata or {}):
                raise
            # malformed pandas metadata (hand-made or hostile file): the column is read without it
            part = table.replace_schema_metadata(None).to_pandas(memory_pool=pa.system_memory_pool())
        del table
        pa.default_memory_pool().release_unused()
        values = part.iloc[:, 0] if part.shape[1] else pd.Series([], dtype=object)
        if name in plain and isinstance(values.dtype, pd.CategoricalDtype):
            values = _categorical_to_object(values)
        out[name] = values.to_numpy() if isinstance(values.dtype, np.dtype) else values.array
        del part, values
    return pd.DataFrame(out, copy=False)


def _plain_float_columns(pf: Any) -> set[str]:
    """Columns stored as float32 / float64 whose pandas metadata (if any) says a NumPy float dtype: read by
    :func:`_parquet_float_column` (nulls become NaN, as pyarrow's conversion gives them)."""
    import json

    import pyarrow as pa

    floats = {f.name for f in pf.schema_arrow if pa.types.is_float32(f.type) or pa.types.is_float64(f.type)}
    meta = (pf.schema_arrow.metadata or {}).get(b"pandas")
    if meta:
        try:
            stated = {c.get("name"): c.get("numpy_type") for c in json.loads(meta).get("columns", [])}
        except (ValueError, TypeError, AttributeError):
            return set()
        floats = {n for n in floats if stated.get(n, "float64") in ("float64", "float32")}
    return floats


def _parquet_float_column(pf: Any, name: str) -> np.ndarray:
    """One float column, decoded row group by row group into one NumPy array (null → NaN)."""
    import pyarrow as pa

    meta = pf.metadata
    dtype = np.float32 if pa.types.is_float32(pf.schema_arrow.field(name).type) else np.float64
    out = np.empty(int(meta.num_rows), dtype=dtype)
    start = 0
    for i in range(meta.num_row_groups):
        column = pf.read_row_group(i, columns=[name], use_pandas_metadata=False).column(0)
        for chunk in column.chunks:
            k = len(chunk)
            out[start:start + k] = chunk.to_numpy(zero_copy_only=False)
            start += k
        del column
        pa.default_memory_pool().release_unused()
    return out[:start] if start != out.size else out


def _parquet_whole(pf: Any, keep: list[str] | None, text_columns: list[str], plain: list[str],
                   src: str) -> pd.DataFrame:
    """The whole table at once (files whose pandas metadata stores an index as columns)."""
    import pyarrow as pa

    table = pf.read()
    frame = None if keep is None else _parquet_categories(table, [c for c in text_columns if c not in keep],
                                                          plain, src)
    try:
        if frame is None:
            frame = table.to_pandas(memory_pool=pa.system_memory_pool())
    except (KeyError, IndexError, AttributeError, TypeError, ValueError):
        if b"pandas" not in (table.schema.metadata or {}):
            raise
        frame = table.replace_schema_metadata(None).to_pandas(memory_pool=pa.system_memory_pool())
    del table
    for name in plain:  # back to plain object columns (one shared str per distinct value)
        if name in frame.columns and isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = _categorical_to_object(frame[name])
    return frame


def _parquet_categories(table: Any, categorical: list[str], plain: list[str], src: str) -> pd.DataFrame | None:
    """The columns of a decoded Parquet table, ``categorical`` ones (read as dictionaries) as pandas categoricals of
    their dictionary (object categories; a null → a missing code), ``plain`` text ones as object columns, the others
    as pyarrow converts each column.
    None when the pandas metadata stores an index (the caller's whole-table conversion restores it)."""
    import pyarrow as pa

    meta = (table.schema.metadata or {}).get(b"pandas")
    if meta is not None and re.search(rb'"index_columns":\s*\[\s*"', meta):
        return None
    check_columns(list(table.column_names), src)
    table = table.unify_dictionaries()
    data: dict[str, Any] = {}
    for name, column in zip(table.column_names, table.columns):
        if name in categorical and pa.types.is_dictionary(column.type):
            chunks = column.chunks
            codes = (np.concatenate([(c.indices.fill_null(-1) if c.null_count else c.indices).to_numpy()
                                     for c in chunks]) if chunks
                     else np.zeros(0, dtype=np.int32))
            values = chunks[0].dictionary if chunks else pa.array([], pa.string())
            categories = pd.Index(values.to_numpy(zero_copy_only=False).astype(object), dtype=object)
            data[name] = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(categories), validate=False)
        else:
            values = column.to_pandas(memory_pool=pa.system_memory_pool())
            text = name in plain and isinstance(values.dtype, pd.CategoricalDtype)
            data[name] = _categorical_to_object(values) if text else values
    return pd.DataFrame(data)


def _categorical_to_object(values: pd.Series) -> pd.Series:
    """A categorical column as an object column of the same values (missing → None, as pyarrow gives them),
    each distinct value one shared object."""
    categories = np.asarray(values.cat.categories, dtype=object)
    codes = values.cat.codes.to_numpy()
    out = np.empty(codes.size, dtype=object)
    valid = codes >= 0
    out[valid] = categories[codes[valid]]
    return pd.Series(out, index=values.index, name=values.name)


def _read_npz(data: bytes, src: str, limit: int, limit_hint: str | None = None) -> pd.DataFrame:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        total = sum(info.file_size for info in zf.infolist())  # zipfile never inflates a member past its size
    if total > limit:
        raise _too_big(f"is an npz archive whose arrays take {size_text(total)}", limit, src, limit_hint)
    return read_npz(data, src)
