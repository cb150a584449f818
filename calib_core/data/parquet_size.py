"""What a Parquet file decodes to, from its footer and its dictionary page headers, before any data is read.

Run-length and dictionary encoding let a file of a few kB declare far more than it holds: 2·10⁷ constant rows in
one row group fit in 262 kB, and a text column whose dictionary holds one 10 MB string, referenced by 10⁶ rows,
fits in 17 kB and decodes to 10 TB of strings.  :func:`row_group_sizes` estimates, per row group and column, the
bytes a plain read takes (pyarrow's Arrow arrays, then pandas):

* a fixed-width value costs its width, at least 8 bytes (float64 / int64 / a pointer in pandas);
* a text or binary value (``BYTE_ARRAY``) costs 8 bytes plus its length; the lengths are the column chunk's
  uncompressed pages for plainly encoded values and, for dictionary-encoded ones, rows × the mean length of a
  dictionary value — the dictionary page's uncompressed size and value count are read from its page header
  (a few dozen bytes at ``dictionary_page_offset``, Thrift compact protocol), never from the page itself.

The footer alone (no ``source``) gives the older, smaller bound in which a dictionary counts once — what a read with
``read_dictionary`` takes (:func:`decoded_bytes`, the upload reader's check).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ColumnSize", "RowGroupSize", "decoded_bytes", "dictionary_page_header", "row_group_sizes"]

_HEADER_BYTES = 512
"""Bytes read at a dictionary page offset to parse its header (a dictionary page header has no statistics)."""


@dataclass(frozen=True)
class ColumnSize:
    """One column chunk's estimated decoded size.

    Attributes
    ----------
    name : str
        The column (its path in the schema).
    rows : int
        Values of the chunk (rows of the row group, or more for repeated columns).
    decoded : int
        Bytes once decoded.
    dictionary_values : int
        Values of its dictionary page (0: no dictionary page, or its header could not be read).
    dictionary_bytes : int
        Uncompressed bytes of its dictionary page.
    """

    name: str
    rows: int
    decoded: int
    dictionary_values: int = 0
    dictionary_bytes: int = 0

    @property
    def bytes_per_row(self) -> float:
        """Decoded bytes per value.

        Returns
        -------
        float
            ``decoded / rows`` (0 for an empty chunk).
        """
        return self.decoded / self.rows if self.rows else 0.0


@dataclass(frozen=True)
class RowGroupSize:
    """One row group's estimated decoded size.

    Attributes
    ----------
    index : int
        The row group's position in the file.
    rows : int
        Its rows.
    columns : tuple of ColumnSize
        Its column chunks.
    """

    index: int
    rows: int
    columns: tuple[ColumnSize, ...]

    @property
    def decoded(self) -> int:
        """Bytes of the whole row group once decoded.

        Returns
        -------
        int
            Σ of its columns' decoded bytes.
        """
        return sum(c.decoded for c in self.columns)

    @property
    def bytes_per_row(self) -> float:
        """Decoded bytes of one row.

        Returns
        -------
        float
            ``decoded / rows`` (0 for an empty row group).
        """
        return self.decoded / self.rows if self.rows else 0.0

    def widest(self) -> ColumnSize | None:
        """The column with the most decoded bytes per row.

        Returns
        -------
        ColumnSize or None
            The column (None without columns).
        """
        return max(self.columns, key=lambda c: c.bytes_per_row, default=None)


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return out, pos


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _skip(buf: bytes, pos: int, kind: int, depth: int) -> int:
    """Skip one Thrift compact value of type ``kind`` starting at ``pos``."""
    if depth > 16:
        raise ValueError("nested too deep")
    if kind in (1, 2):  # booleans are in the field header
        return pos
    if kind == 3:
        return pos + 1
    if kind in (4, 5, 6):
        return _varint(buf, pos)[1]
    if kind == 7:
        return pos + 8
    if kind == 8:
        n, pos = _varint(buf, pos)
        return pos + n
    if kind in (9, 10):
        if pos >= len(buf):
            raise ValueError("truncated list")
        head = buf[pos]
        pos += 1
        size, elem = head >> 4, head & 0x0F
        if size == 15:
            size, pos = _varint(buf, pos)
        for _ in range(min(size, len(buf))):
            pos = _skip(buf, pos, 1 if elem == 1 else elem, depth + 1)
        return pos
    if kind == 11:
        size, pos = _varint(buf, pos)
        if size:
            types = buf[pos]
            pos += 1
            for _ in range(min(size, len(buf))):
                pos = _skip(buf, pos, types >> 4, depth + 1)
                pos = _skip(buf, pos, types & 0x0F, depth + 1)
        return pos
    if kind == 12:
        return _struct(buf, pos, depth + 1)[1]
    raise ValueError(f"unknown Thrift type {kind}")


def _struct(buf: bytes, pos: int, depth: int = 0) -> tuple[dict[int, Any], int]:
    """A Thrift compact struct: field id → int (integers) or dict (structs); other fields skipped."""
    fields: dict[int, Any] = {}
    last = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated struct")
        head = buf[pos]
        pos += 1
        if head == 0:
            return fields, pos
        delta, kind = head >> 4, head & 0x0F
        if delta:
            fid = last + delta
        else:
            raw, pos = _varint(buf, pos)
            fid = _zigzag(raw)
        last = fid
        if kind in (4, 5, 6):
            raw, pos = _varint(buf, pos)
            fields[fid] = _zigzag(raw)
        elif kind == 12:
            fields[fid], pos = _struct(buf, pos, depth + 1)
        else:
            pos = _skip(buf, pos, kind, depth)


def dictionary_page_header(source: Any, offset: int) -> tuple[int, int] | None:
    """The value count and uncompressed size of the dictionary page at ``offset``, from its header alone.

    The Parquet ``PageHeader`` (Thrift compact protocol): field 2 is ``uncompressed_page_size``, field 7 the
    ``DictionaryPageHeader`` whose field 1 is ``num_values``.  The mean value length is
    (uncompressed − 4·values) / values (PLAIN byte arrays carry a 4-byte length each).

    Parameters
    ----------
    source : path, file-like or pyarrow NativeFile
        The file (a path is opened and closed here).
    offset : int
        The column chunk's ``dictionary_page_offset``.

    Returns
    -------
    (int, int) or None
        ``(num_values, uncompressed_bytes)``; None when the header cannot be read or is not a dictionary page.

    Examples
    --------
    >>> header = bytes([0x15, 0x04, 0x15, 0xC8, 0x01, 0x15, 0x10, 0x4C, 0x15, 0x06, 0x15, 0x00, 0x00, 0x00])
    >>> import io
    >>> dictionary_page_header(io.BytesIO(header), 0)
    (3, 100)
    """
    try:
        if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
            with open(source, "rb") as fh:
                fh.seek(int(offset))
                buf = fh.read(_HEADER_BYTES)
        else:
            source.seek(int(offset))
            buf = bytes(source.read(_HEADER_BYTES))
        fields, _ = _struct(buf, 0)
    except (OSError, ValueError, IndexError, TypeError, AttributeError):
        return None
    page = fields.get(7)
    size = fields.get(2)
    if not isinstance(page, dict) or not isinstance(size, int) or size < 0:
        return None
    values = page.get(1)
    if not isinstance(values, int) or values < 0:
        return None
    return values, size


def _fixed_width(kind: str, schema: Any, j: int) -> int:
    if kind == "FIXED_LEN_BYTE_ARRAY" and schema is not None:
        try:
            return max(8, int(schema.column(j).length or 0))
        except (IndexError, AttributeError, TypeError, ValueError):
            return 8
    return 8


def row_group_sizes(meta: Any, schema: Any = None, source: Any = None) -> list[RowGroupSize]:
    """Every row group's estimated decoded size, per column.

    Per column chunk of ``n`` values: fixed width ``n · max(8, width)``; byte arrays
    ``8·n + max(U, n · (D − 4·d) / d + (U − D))`` with ``U`` the chunk's uncompressed bytes, ``D`` and ``d`` its
    dictionary page's uncompressed bytes and value count (read from the page header at ``source``); without
    ``source`` (or a dictionary page) ``8·n + U``.

    Parameters
    ----------
    meta : pyarrow.parquet.FileMetaData
        The footer (``ParquetFile.metadata``).
    schema : pyarrow.parquet.ParquetSchema, optional
        The Parquet schema, for the width of fixed-length byte arrays.
    source : path or file-like, optional
        The file, to read the dictionary page headers.

    Returns
    -------
    list of RowGroupSize
        One per row group, in file order.

    Examples
    --------
    >>> import io, pyarrow as pa, pyarrow.parquet as pq
    >>> sink = io.BytesIO()
    >>> note = pa.DictionaryArray.from_arrays(pa.array([0] * 1000, pa.int32()), pa.array(["x" * 10_000]))
    >>> pq.write_table(pa.table({"y": [0.5] * 1000, "note": note}), sink)
    >>> meta = pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata
    >>> [c.decoded for c in row_group_sizes(meta, source=io.BytesIO(sink.getvalue()))[0].columns]
    [8000, 10008050]
    """
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        try:
            with open(source, "rb") as fh:  # one open for every dictionary page header of the file
                return row_group_sizes(meta, schema, fh)
        except OSError:
            source = None
    out: list[RowGroupSize] = []
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        rows = int(group.num_rows)
        columns: list[ColumnSize] = []
        for j in range(group.num_columns):
            chunk = group.column(j)
            n = max(int(chunk.num_values), rows)
            kind = chunk.physical_type
            name = str(chunk.path_in_schema)
            if kind != "BYTE_ARRAY":
                columns.append(ColumnSize(name, n, n * _fixed_width(kind, schema, j)))
                continue
            uncompressed = max(0, int(chunk.total_uncompressed_size))
            header = None
            if source is not None and chunk.has_dictionary_page and chunk.dictionary_page_offset is not None:
                header = dictionary_page_header(source, int(chunk.dictionary_page_offset))
            if header is None or header[0] == 0:
                columns.append(ColumnSize(name, n, 8 * n + uncompressed))
                continue
            values, dict_bytes = header
            mean = max(0, dict_bytes - 4 * values) / values
            expanded = int(n * mean) + max(0, uncompressed - dict_bytes)
            columns.append(ColumnSize(name, n, 8 * n + max(uncompressed, expanded), values, dict_bytes))
        out.append(RowGroupSize(i, rows, tuple(columns)))
    return out


def decoded_bytes(meta: Any, schema: Any = None, source: Any = None) -> int:
    """Bytes the whole file decodes to (:func:`row_group_sizes` summed).

    Without ``source`` a dictionary counts once (the size of a read that keeps text as dictionaries); with it, a
    dictionary-encoded text column counts rows × the mean dictionary value (a plain read).

    Parameters
    ----------
    meta : pyarrow.parquet.FileMetaData
        The footer.
    schema : pyarrow.parquet.ParquetSchema, optional
        The Parquet schema.
    source : path or file-like, optional
        The file, to read the dictionary page headers.

    Returns
    -------
    int
        Σ over row groups and columns of the decoded bytes.

    Examples
    --------
    >>> import io, pyarrow as pa, pyarrow.parquet as pq
    >>> sink = io.BytesIO()
    >>> pq.write_table(pa.table({"y": [0.0] * 100, "std": [1.0] * 100}), sink)
    >>> decoded_bytes(pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata)
    1600
    """
    return sum(g.decoded for g in row_group_sizes(meta, schema, source))
