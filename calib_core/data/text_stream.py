"""Delimited text read as a stream: one pass over the bytes for what the reader needs, never the whole text at once.

:func:`calib_core.data.text.read_text` reads UTF-8 text (the usual case) without holding the file's bytes, its
decoded ``str`` and the parsed frame together: :func:`scan_text` makes one pass over a stream of the bytes (chunks of
8 MB: is it UTF-8, does it hold a quote, how many line breaks, the first MB for the delimiter and the header) and the
C parser then reads a fresh stream of the same bytes, in chunks (pandas' ``low_memory=True``), so that the peak of a
load is the parsed columns plus a chunk.  Columns whose chunks were parsed to different types (numbers in some
chunks, text in others: the C parser then warns of mixed types) are read again as text, as a whole-file read would
(:func:`mixed_columns`).  Text that is not UTF-8 (a legacy encoding, UTF-16/32) is decoded in memory as before.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import pandas as pd

__all__ = ["CHUNK_BYTES", "CHUNK_ROWS", "HEAD_BYTES", "TextScan", "mixed_columns", "read_csv_chunked", "scan_text"]

CHUNK_BYTES = 1 << 20
"""Bytes read per step of the scan (8 MB): the scan's own memory."""

HEAD_BYTES = 1 << 20
"""Bytes kept from the start of the text for the delimiter, the header and the comments (1 MB)."""

Opener = Callable[[], IO[bytes]]


@dataclass(frozen=True)
class TextScan:
    """What one pass over the bytes of a text file found.

    Attributes
    ----------
    size : int
        Bytes in the stream.
    head : bytes
        The first ``HEAD_BYTES`` bytes (all of them for a smaller file).
    utf8 : bool
        The whole stream is valid UTF-8 (a UTF-8 byte-order mark allowed).
    bom : bool
        It starts with the UTF-8 byte-order mark.
    has_quote : bool
        A double quote occurs somewhere.
    newlines, returns : int
        Counts of ``\\n`` and ``\\r`` in the whole stream.
    """

    size: int
    head: bytes
    utf8: bool
    bom: bool
    has_quote: bool
    newlines: int
    returns: int


_OTHER_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


def scan_text(opener: Opener) -> TextScan:
    """One pass over a stream of text bytes, chunk by chunk (see :class:`TextScan`).

    The UTF-8 check stops at the first invalid byte (the caller then decodes the text in memory); a UTF-16 / UTF-32
    byte-order mark, or NUL bytes in every other position of the first 4 kB (UTF-16 without mark), count as not UTF-8.
    Memory: one chunk of ``CHUNK_BYTES`` and its decoded text, whatever the file's size.

    Parameters
    ----------
    opener : callable
        Returns a fresh binary stream of the (decompressed) bytes; errors of the stream (size limit, corrupt
        compression) propagate to the caller.

    Returns
    -------
    TextScan
        The counts and the head.

    Examples
    --------
    >>> import io
    >>> from calib_core.data.text_stream import scan_text
    >>> s = scan_text(lambda: io.BytesIO(b'a,b\\n1,"x"\\n'))
    >>> s.size, s.utf8, s.has_quote, s.newlines
    (10, True, True, 2)
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    head = bytearray()
    size = newlines = returns = 0
    utf8, quote = True, False
    with opener() as stream:
        while True:
            chunk = stream.read(CHUNK_BYTES)
            if not chunk:
                break
            if len(head) < HEAD_BYTES:
                head += chunk[: HEAD_BYTES - len(head)]
            size += len(chunk)
            newlines += chunk.count(b"\n")
            returns += chunk.count(b"\r")
            quote = quote or b'"' in chunk
            if utf8:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    utf8 = False
    if utf8:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            utf8 = False
    head_bytes = bytes(head)
    if head_bytes.startswith(_OTHER_BOMS) or _utf16_without_bom(head_bytes[:4096]):
        utf8 = False
    return TextScan(size=size, head=head_bytes, utf8=utf8, bom=head_bytes.startswith(codecs.BOM_UTF8),
                    has_quote=quote, newlines=newlines, returns=returns)


def _utf16_without_bom(head: bytes) -> bool:
    """NUL bytes in most odd (or even) positions and almost none in the others: UTF-16 text without a mark."""
    if len(head) < 4:
        return False
    even = head[0::2].count(0) / max(1, len(head[0::2]))
    odd = head[1::2].count(0) / max(1, len(head[1::2]))
    return (odd > 0.3 and even < 0.05) or (even > 0.3 and odd < 0.05)


def mixed_columns(frame: pd.DataFrame) -> list[str]:
    """Columns a chunked read gave values of several types (numbers from some chunks, text from others).

    A whole-file read would have read such a column as text throughout; the caller reads them again as text.

    Parameters
    ----------
    frame : DataFrame
        The frame of a chunked ``read_csv``.

    Returns
    -------
    list of str
        The names of the object columns whose non-missing values are not all strings.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.text_stream import mixed_columns
    >>> mixed_columns(pd.DataFrame({"a": pd.Series([1.5, "x"], dtype=object), "b": ["u", "v"]}))
    ['a']
    """
    out = []
    for name in frame.columns:
        column = frame[name]
        if column.dtype == object and pd.api.types.infer_dtype(column, skipna=True) not in ("string", "empty"):
            out.append(str(name))
    return out


CHUNK_ROWS = 1 << 20
"""Rows the C parser reads per step of :func:`read_csv_chunked`."""


def read_csv_chunked(stream: IO[Any], kwargs: dict[str, Any], n_max: int | None) -> pd.DataFrame | None:
    """``pd.read_csv(stream, **kwargs)`` read ``CHUNK_ROWS`` rows at a time into the final columns.

    Numeric columns (integers, floats, booleans) are copied chunk by chunk into one array per column allocated once
    for at most ``n_max`` rows (the file's line count), so the peak is the columns plus one chunk — pandas' own
    chunked read concatenates every chunk at the end (twice the columns, the freed chunks kept by the allocator).
    An integer column that meets a chunk of floats becomes float, as pandas' reader makes it; text columns, and
    every column when ``n_max`` is None, are concatenated at the end (``pd.concat``: a column of text in one chunk and
    numbers in another comes out mixed, for :func:`mixed_columns`).

    Parameters
    ----------
    stream : file-like
        What ``pd.read_csv`` reads.
    kwargs : dict
        Its options (``chunksize`` is set here).
    n_max : int or None
        An upper bound of the data rows (None: no preallocation).

    Returns
    -------
    DataFrame or None
        The table, one array per column (not consolidated into blocks); None when the parser gave no chunk at all
        (a header without rows: the caller reads it whole).

    Examples
    --------
    >>> import io
    >>> from calib_core.data.text_stream import read_csv_chunked
    >>> read_csv_chunked(io.BytesIO(b"a,b\\n1,x\\n2.5,y\\n"), {}, 3).to_dict("list")
    {'a': [1.0, 2.5], 'b': ['x', 'y']}
    """
    import numpy as np

    arrays: dict[int, Any] = {}
    parts: dict[int, list[Any]] = {}
    names: list[Any] = []
    filled = 0
    for chunk in pd.read_csv(stream, chunksize=CHUNK_ROWS, **kwargs):
        k = len(chunk)
        if not names:
            names = list(chunk.columns)
        for j in range(chunk.shape[1]):
            values = chunk.iloc[:, j]
            numeric = isinstance(values.dtype, np.dtype) and values.dtype.kind in "iufb"
            if j in parts or n_max is None or not numeric or filled + k > n_max:
                if j not in parts:  # from here on, concatenated at the end
                    parts[j] = [arrays.pop(j)[:filled]] if j in arrays else []
                parts[j].append(values.reset_index(drop=True))
                continue
            target = arrays.get(j)
            if target is None:
                target = arrays[j] = np.empty(n_max, dtype=values.dtype)
            if target.dtype != values.dtype:
                common = np.result_type(target.dtype, values.dtype)
                if common.kind not in "iufb" or (target.dtype.kind == "b") != (values.dtype.kind == "b"):
                    parts[j] = [pd.Series(arrays.pop(j)[:filled]), values.reset_index(drop=True)]
                    continue
                target = arrays[j] = target.astype(common)
            target[filled:filled + k] = values.to_numpy()
        filled += k
        del chunk
    out: dict[Any, Any] = {}
    for j, name in enumerate(names):
        if j in arrays:
            a = arrays.pop(j)
            out[name] = a[:filled] if n_max is None or n_max - filled <= filled // 8 else a[:filled].copy()
        else:
            pieces = [p if isinstance(p, pd.Series) else pd.Series(p) for p in parts.pop(j)]
            out[name] = pd.concat(pieces, ignore_index=True) if pieces else pd.Series([], dtype=object)
    if not names:  # no chunk at all: the caller reads the (header-only) file at once
        return None
    return pd.DataFrame(out, copy=False)
