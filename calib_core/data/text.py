"""Reading delimited text: encodings, leading comments, the delimiter, rows merged by a stray quote.

:func:`read_text` turns the bytes of a CSV / TSV / whitespace-separated file into a DataFrame
(:func:`calib_core.data.bytes.read_table` calls it for every file that is not Parquet, npz or Excel).

* Text encodings: UTF-8, UTF-8 with BOM, UTF-16/UTF-32 with BOM (and UTF-16 without BOM when every
  other byte is NUL), then Windows-1252 (Latin-1 for the bytes 1252 leaves undefined).  A UTF-8 file with a few
  lines that are not UTF-8 is read line by line (those lines as Windows-1252, named in a message), never as
  Windows-1252 as a whole (``Zürich`` → ``ZÃ¼rich``).
* A quote that opens and is closed only lines later makes the parser read the lines in between as one cell:
  such rows are found (``frame.attrs["merged_rows"]``, with their lines, :func:`calib_core.data.rows.merged_rows`)
  and dropped by the parsers under ``MERGED_ROWS_REASON``; a quote never closed is refused naming its line.
* Lines starting with ``#`` (and blank lines) before the header are comments; they are kept in
  ``frame.attrs["comments"]`` and shown in messages.
* The delimiter is sniffed among ``,``, tab, ``;``, ``|`` and runs of whitespace: the candidate that
  splits the header into the most fields while ≥ 90 % of the first 50 lines have that many fields.
  ``;`` files whose numbers use a decimal comma (``1,5``) are read with ``decimal=","``.
* Errors → ``InputError``: empty file, binary garbage, everything in one column (unsupported
  delimiter), a header and data rows split by different delimiters, duplicate column names, more
  than ``MAX_COLUMNS`` columns, ragged rows (the line is named; a decimal comma in a comma-separated file is
  named as the likely cause).

How the text was read (merged rows, lines that were not UTF-8, a legacy encoding) is put in words for the
parsers' messages by :func:`reading_notes`.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import warnings
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..base.limits import MAX_NAME_CHARS
from ..base.predictions import InputError, ReadingNote
from .columns import check_columns, name_list
from .rows import merged_rows
from .text_stream import Opener, mixed_columns, read_csv_chunked, scan_text

__all__ = ["check_name_lengths", "read_text", "reading_notes"]

_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d+,\d+(?:[eE][-+]?\d+)?\s*$")
_PANDAS_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_PANDAS_EOF_QUOTE = re.compile(r"EOF inside string starting at row (\d+)")
_INTEGER = re.compile(r"^\s*[-+]?\d+\s*$")
_DELIM_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "'|'", "whitespace": "spaces"}


# ----------------------------------------------------------------------------------------------
# Decoding
# ----------------------------------------------------------------------------------------------


_NA_TEXT = ["", "NA", "N/A", "NaN", "nan", "NULL", "null", "None", "#N/A", "-nan", "-NaN"]
"""Cells read as missing in the numeric columns of a text-ID read (``read_text(..., text_except=...)``)."""


def _decode(data: bytes, src: str) -> tuple[str, str, list[int]]:
    """Decode text: BOMs first, then UTF-8, Windows-1252 (line by line in a file that is mostly UTF-8,
    :func:`_decode_utf8_or_legacy`), Latin-1; refuse binary content.  Returns (text, encoding, 1-based numbers of
    the lines read as Windows-1252 in a mostly-UTF-8 file)."""
    boms = (
        (b"\xff\xfe\x00\x00", "utf-32-le"),
        (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
    )
    text: str | None = None
    encoding = ""
    legacy_lines: list[int] = []
    for bom, enc in boms:
        if data.startswith(bom):
            if enc == "utf-8-sig":
                text, encoding, legacy_lines = _decode_utf8_or_legacy(data[len(bom):])
                encoding = {"utf-8": enc, "cp1252": "cp1252"}.get(encoding, encoding)
                break
            try:
                text = data[len(bom):].decode(enc.replace("-sig", ""))
                encoding = enc
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"starts with a {enc} byte-order mark but is not valid {enc} ({exc.reason} at byte {exc.start})",
                    source=src,
                    hint="re-save the file as UTF-8 CSV",
                ) from None
            break
    if text is None:
        head = data[:4096]
        if len(head) >= 4:
            even_nul = head[0::2].count(0) / max(1, len(head[0::2]))
            odd_nul = head[1::2].count(0) / max(1, len(head[1::2]))
            for enc, cond in (("utf-16-le", odd_nul > 0.3 and even_nul < 0.05),
                              ("utf-16-be", even_nul > 0.3 and odd_nul < 0.05)):
                if cond:
                    try:
                        text, encoding = data.decode(enc), enc
                    except UnicodeDecodeError:
                        pass
                    break
    if text is None:
        text, encoding, legacy_lines = _decode_utf8_or_legacy(data)
    _check_binary(text[:65536], src)
    return text, encoding, legacy_lines


_ASCII_CONTROL = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
"""The characters of ``_CONTROL_CHARS`` within ASCII."""


def _count_control(sample: str) -> int:
    """``len(_CONTROL_CHARS.findall(sample))``; an ASCII sample counted by deleting its bytes (one C pass)."""
    if sample.isascii():
        raw = sample.encode("ascii")
        return len(raw) - len(raw.translate(None, _ASCII_CONTROL))
    return len(_CONTROL_CHARS.findall(sample))


def _first_lines(text: str, k: int) -> list[str]:
    """``text.splitlines()[:k]``, splitting growing prefixes: a prefix with more than k lines has the same first k
    (each ends with its line break inside the prefix)."""
    size = 65536
    while size < len(text):
        lines = text[:size].splitlines()
        if len(lines) > k:
            return lines[:k]
        size *= 4
    return text.splitlines()[:k]


_UNDECODED = re.compile("[\udc80-\udcff]")  # bytes that are not UTF-8, kept by errors="surrogateescape"
_NON_ASCII = re.compile("[\u0080-\ud7ff\ue000-\U0010ffff]")  # characters UTF-8 did decode beyond ASCII
_UNDECODED_LINE = re.compile("[^\n]*[\udc80-\udcff][^\n]*")


def _legacy(raw: bytes) -> str:
    """Windows-1252, or Latin-1 where 1252 leaves a byte undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D)."""
    try:
        return raw.decode("cp1252")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _decode_utf8_or_legacy(data: bytes) -> tuple[str, str, list[int]]:
    """Text of a file without byte-order mark: UTF-8 where it is UTF-8, Windows-1252 where it is not.

    A file that is valid UTF-8 is UTF-8.  A file in which no byte sequence decodes as UTF-8 beyond ASCII is a
    legacy file: Windows-1252 (Latin-1 where 1252 leaves a byte undefined).  A file with both — UTF-8 text and
    some lines holding bytes that are not UTF-8 (one cell typed on another machine) — is decoded line by line:
    each line that is not UTF-8 is read as Windows-1252 and every other line as UTF-8, so that ``Zürich`` stays
    ``Zürich`` on the UTF-8 lines instead of the whole file becoming ``ZÃ¼rich``.  The encoding is then
    ``"utf-8+cp1252"``.  Returns (text, encoding, 1-based numbers of the lines read as Windows-1252 in a mixed
    file).  One pass in C (``surrogateescape``); Python runs once per line that is not UTF-8.
    """
    try:
        return data.decode("utf-8"), "utf-8", []
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", errors="surrogateescape")
    if not _NON_ASCII.search(text):
        return _legacy(data), "cp1252", []
    starts: list[int] = []

    def legacy(m: re.Match[str]) -> str:
        starts.append(m.start())
        return _legacy(m.group(0).encode("utf-8", "surrogateescape"))

    fixed = _UNDECODED_LINE.sub(legacy, text)
    lines, line, pos = [], 1, 0
    for start in starts:
        line += text.count("\n", pos, start)
        pos = start
        lines.append(line)
    return fixed, "utf-8+cp1252", lines


# ----------------------------------------------------------------------------------------------
# Comments, delimiter, header
# ----------------------------------------------------------------------------------------------


_LEADING_COMMENTS = re.compile(r"(?:[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n))*")


def _split_comments(text: str) -> tuple[list[str], str, int]:
    """Leading '#'-comment and blank lines, the text after them, and how many lines were removed."""
    m = _LEADING_COMMENTS.match(text)
    prefix = m.group(0) if m else ""
    rest = text[len(prefix):]
    if rest.lstrip().startswith("#") and "\n" not in rest and "\r" not in rest:
        prefix, rest = text, ""  # a final comment line without a newline
    lines = prefix.splitlines()
    comments = [ln.strip()[1:].strip() for ln in lines if ln.strip().startswith("#")]
    return comments, rest, len(lines)


def _field_counts(lines: list[str], delim: str) -> list[int]:
    if delim == "whitespace":
        return [len(ln.split()) for ln in lines if ln.strip()]
    try:
        return [len(row) for row in csv.reader(lines, delimiter=delim) if row]
    except csv.Error:
        return []


def _sniff_delimiter(lines: list[str], src: str) -> str:
    """Pick the delimiter that splits the header into most fields, consistently over the first 50 lines.

    Comma, tab, ';' and '|' compete (≥ 90 % of the sampled lines must have the header's field count;
    fully consistent candidates win, then more fields, then the order, tab first for .tsv files).
    Runs of whitespace are tried only when none of them works.  If no candidate is consistent, the one
    splitting the header into most fields is used and the parser reports the first ragged line.
    """
    sample = lines[:50]
    ext = Path(src).suffix.lower()
    order = ["\t", ",", ";", "|"] if ext in (".tsv", ".tab") else [",", "\t", ";", "|"]
    best: tuple[bool, int, int] | None = None
    best_delim = ""
    fallback: tuple[int, str] = (1, "")
    for rank, delim in enumerate(order + ["whitespace"]):
        if delim == "whitespace" and best_delim:
            break
        counts = _field_counts(sample, delim)
        if not counts or counts[0] < 2:
            continue
        if counts[0] > fallback[0] and delim != "whitespace":
            fallback = (counts[0], delim)
        consistency = sum(c == counts[0] for c in counts) / len(counts)
        if consistency < 0.9:
            continue
        score = (consistency >= 0.999, counts[0], -rank)
        if best is None or score > best:
            best, best_delim = score, delim
    if not best_delim:
        best_delim = fallback[1]
    if not best_delim:
        first = sample[0] if sample else ""
        raise InputError(
            f"everything is in one column (header {first[:80]!r}): no comma, tab, semicolon, '|' or whitespace "
            "delimiter splits the rows",
            source=src,
            columns=[first[:80]],
            hint="save the file as comma- or tab-separated text with a header row (e.g. y_true,mean,std)",
        )
    return best_delim


def _header_fields(line: str, delim: str) -> list[str]:
    if delim == "whitespace":
        return line.split()
    try:
        return next(csv.reader([line], delimiter=delim, skipinitialspace=True), [])
    except csv.Error:
        return line.split(delim)


def _check_extra_fields(lines: list[str], header: list[str], delim: str, n_skipped: int, src: str) -> None:
    """Refuse sampled data rows with more non-empty fields than the header (pandas would shift or drop them)."""
    try:
        if delim == "whitespace":
            rows = [ln.split() for ln in lines[1:]]
        else:
            rows = list(csv.reader(lines[1:], delimiter=delim))
    except csv.Error:
        return
    k = len(header)
    for i, row in enumerate(rows):
        if len(row) > k and any(c.strip() for c in row[k:]):
            # every field an integer: numbers written with a decimal comma (1,5) in a comma-separated file
            decimal_comma = delim == "," and all(_INTEGER.match(c) for c in row if c.strip())
            raise InputError(
                f"line {n_skipped + 2 + i} (data row {i + 1}) has {len(row)} fields but the header has {k}"
                + (" (numbers written with a decimal comma, e.g. 1,5, split into two fields)" if decimal_comma else ""),
                source=src,
                rows=[i + 1],
                hint="every row needs a header name for each value (row names without a header cell? add a name "
                "such as 'id' to the header), and values containing the delimiter must be quoted"
                + ("; with a decimal comma use ';' as the delimiter or '.' in numbers" if decimal_comma else ""),
            )


def _check_data_delimiter(lines: list[str], header: list[str], delim: str, src: str) -> None:
    """Refuse a header split by one delimiter whose data rows are one field there but split by another one."""
    data = [ln for ln in lines[1:] if ln.strip()]
    if len(header) < 2 or not data:
        return
    own = _field_counts(data, delim)
    if sum(c <= 1 for c in own) < 0.9 * len(data):
        return
    for other in (",", "\t", ";", "|"):
        if other == delim:
            continue
        counts = _field_counts(data, other)
        if counts and sum(c == len(header) for c in counts) >= 0.9 * len(data):
            raise InputError(
                f"the header row is separated by {_DELIM_NAMES[delim]} ({len(header)} columns) but the data rows by "
                f"{_DELIM_NAMES[other]}: mixed delimiters",
                source=src,
                columns=[str(h) for h in header[:20]],
                hint="use one delimiter for the whole file (re-save it as CSV from a spreadsheet or pandas)",
            )


# ----------------------------------------------------------------------------------------------
# Parsing
# ----------------------------------------------------------------------------------------------


def read_text(data: bytes | Opener, src: str, *, text_except: Sequence[str] | None = None,
              text_objects: bool = False) -> pd.DataFrame:
    """Parse the bytes of a delimited text file into a DataFrame.

    Decodes the text (byte-order marks, UTF-8, Windows-1252 line by line in a mostly-UTF-8 file), keeps the leading
    ``#`` comment lines, sniffs the delimiter, checks the header (:func:`calib_core.data.columns.check_columns`; a
    name longer than :data:`calib_core.base.limits.MAX_NAME_CHARS` characters is refused), the data rows' delimiter
    and their field counts on the first 50 lines, reads ``;`` files with a decimal comma as such, and finds the rows a
    stray quote merged (:func:`calib_core.data.rows.merged_rows`).  UTF-8 text is read as a stream
    (:mod:`calib_core.data.text_stream`): one pass to check it, then the C parser in chunks — never the bytes, the
    decoded ``str`` and the frame at once; other encodings are decoded in memory.

    Parameters
    ----------
    data : bytes or callable
        The file's bytes (already decompressed), or a function returning a fresh binary stream of them (called twice:
        a scan and the parse; a decompressing stream is never held whole).
    src : str
        The file name for messages; its suffix ``.tsv`` / ``.tab`` puts tab first among the delimiters.
    text_except : sequence of str, optional
        When given, every column but these is read as text, verbatim (no number or NA conversion: location ``01``
        stays ``01``, ``NA`` stays ``NA``) — a forecast hub's task IDs; the named columns are read as numbers
        (as text when a cell is no number, for the caller to name it).
    text_objects : bool, default False
        With ``text_except``: the text columns as object columns of Python strings (the same text, verbatim),
        not pandas' Arrow-backed ``str`` — for a caller that factorises them at once.

    Returns
    -------
    DataFrame
        The table (column names stripped) with ``attrs`` ``format`` (``"csv"`` or ``"tsv"``), ``delimiter``,
        ``decimal``, ``encoding``, ``comments``, ``header_line``, ``legacy_lines`` and ``merged_rows``.

    Raises
    ------
    InputError
        Empty text or only comments, binary content, a single column, mixed delimiters, too many or duplicate
        columns, a column name over the length limit, a row with more fields than the header, a quote never closed,
        or text pandas cannot parse.
    """
    opener: Opener = data if callable(data) else (lambda: io.BytesIO(data))  # type: ignore[arg-type,return-value]
    scan = scan_text(opener)
    if scan.utf8:
        head = codecs.getincrementaldecoder("utf-8")().decode(scan.head[3:] if scan.bom else scan.head)
        whole = scan.size == len(scan.head)
        comments, body_head, n_skipped = _split_comments(head)
        if whole or body_head.strip():
            _check_binary(head[:65536], src)
            prefix = head[: len(head) - len(body_head)]
            breaks = (scan.newlines - prefix.count("\n")) or (scan.returns - prefix.count("\r"))

            def body() -> str:  # only for a file with quotes and more line breaks than rows (merged_rows)
                with opener() as stream:
                    text = stream.read().decode("utf-8-sig" if scan.bom else "utf-8")
                return _split_comments(text)[1]

            return _parse(opener, body_head, whole, body, (scan.has_quote, breaks), comments, n_skipped,
                          "utf-8-sig" if scan.bom else "utf-8", [], src, text_except, text_objects,
                          n_max=scan.newlines + 1)
    raw = data if isinstance(data, bytes) else _read_all(opener)
    text, encoding, legacy_lines = _decode(raw, src)
    comments, body_text, n_skipped = _split_comments(text)
    del text
    as_bytes = encoding in ("utf-8", "utf-8-sig")
    source: Opener = (lambda: io.BytesIO(raw)) if as_bytes else (lambda: io.StringIO(body_text))  # type: ignore
    return _parse(source, body_text, True, lambda: body_text, ('"' in body_text, None), comments, n_skipped,
                  encoding, legacy_lines, src, text_except, text_objects)


def _read_all(opener: Opener) -> bytes:
    with opener() as stream:
        return stream.read()


def _parse(source: Any, body_head: str, whole: bool, body: Any, quotes: tuple[bool, int | None],
           comments: list[str], n_skipped: int, encoding: str, legacy_lines: list[int], src: str,
           text_except: Sequence[str] | None, text_objects: bool, n_max: int | None = None) -> pd.DataFrame:
    """The part of :func:`read_text` after decoding: ``source()`` opens what the C parser reads (a stream of the
    bytes for UTF-8 — the comment lines skipped by count — or of ``body``'s text); ``body_head`` is the start of the
    text after the comments (all of it when ``whole``), ``body()`` all of it, called only when a quote may have merged
    lines (``quotes``: a quote anywhere, the line breaks of the body or None to count them in ``body()``)."""
    lines = _first_lines(body_head[:1_000_000], 51)
    if (len(lines) == 51 or len(body_head) > 1_000_000 or not whole) and len(lines) > 1:
        lines = lines[:-1]  # the last sampled line may be cut
    if not body_head[:65536].strip() or not lines:
        what = "is empty" if not comments and not body_head.strip() else "contains only comment lines, no header row"
        raise InputError(what, source=src, hint="upload a table with a header row and one row per example")
    sample = body_head[:1_000_000]
    if not whole and len(sample) == 1_000_000 and "\n" not in sample and "\r" not in sample:
        _long_header(lines[0] if lines else sample, src)  # the header line does not end within the sample
    delim = _sniff_delimiter(lines, src)
    header = _header_fields(lines[0], delim)
    check_name_lengths(header, src)
    check_columns(header, src)
    _check_data_delimiter(lines, header, delim, src)
    _check_extra_fields(lines, header, delim, n_skipped, src)
    decimal = "."
    if delim == ";":
        cells = [c for row in csv.reader(lines[1:], delimiter=";") for c in row]
        if cells and sum(bool(_DECIMAL_COMMA.match(c)) for c in cells) >= 0.2 * len(cells):
            decimal = ","
    # low_memory: the C parser reads chunk by chunk (the peak is the columns plus a chunk); columns whose chunks
    # came out as different types are read again as text below, as a whole-file read gives them
    kwargs: dict[str, Any] = {"skipinitialspace": True, "low_memory": True, "decimal": decimal, "index_col": False}
    if delim == "whitespace":
        kwargs["sep"] = r"\s+"
        kwargs.pop("skipinitialspace")
    else:
        kwargs["sep"] = delim
    as_bytes = encoding in ("utf-8", "utf-8-sig")
    if as_bytes:
        kwargs.update(encoding=encoding, skiprows=n_skipped)
    if text_except is not None:
        numeric = [c for c in header if c in set(text_except)]
        kwargs.update(keep_default_na=False, na_values={c: _NA_TEXT for c in numeric},
                      dtype=defaultdict(lambda: str, {c: "float64" for c in numeric}))
        if text_objects:  # named: pandas 3 gives its default a str dtype even when it says object
            kwargs["dtype"] = defaultdict(lambda: object, {**{c: object for c in header}, **kwargs["dtype"]})
    frame = _read_csv(source, kwargs, text_except, text_objects, as_bytes, n_skipped, src, n_max)
    frame.columns = [str(c).strip() for c in frame.columns]
    has_quote, breaks = quotes
    merged: list[dict[str, Any]] = []
    if has_quote and (breaks is None or breaks > len(frame) + 1):
        merged = merged_rows(frame, body(), delim, n_skipped)
    frame.attrs.update(
        {
            "format": "tsv" if delim == "\t" else "csv",
            "delimiter": delim,
            "decimal": decimal,
            "encoding": encoding,
            "comments": comments,
            "header_line": n_skipped + 1,
            "legacy_lines": legacy_lines,
            "merged_rows": merged,
        }
    )
    return frame


def _read_csv(source: Any, kwargs: dict[str, Any], text_except: Sequence[str] | None, text_objects: bool,
              as_bytes: bool, n_skipped: int, src: str, n_max: int | None = None) -> pd.DataFrame:
    """``pd.read_csv`` of ``source()`` in chunks (:func:`~calib_core.data.text_stream.read_csv_chunked`, at most
    ``n_max`` rows) with the parser's errors in words; columns whose chunks gave mixed types read again as text."""

    def read() -> pd.DataFrame:
        with source() as stream:
            frame = read_csv_chunked(stream, kwargs, n_max)
        if frame is None:
            with source() as stream:
                frame = pd.read_csv(stream, engine="c", **kwargs)
        return frame

    try:
        with warnings.catch_warnings():
            # trailing delimiters on every line: the empty last field is dropped (checked above)
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            try:
                frame = read()
            except ValueError as exc:
                if text_except is None or isinstance(exc, InputError):
                    raise
                # a numeric column holds text: read it as text for the caller to name the cells
                kwargs["dtype"] = object if text_objects else str
                frame = read()
            mixed = mixed_columns(frame) if text_except is None else []
            if mixed:
                del frame
                kwargs["dtype"] = dict.fromkeys(mixed, str)
                frame = read()
    except InputError:
        raise
    except pd.errors.ParserError as exc:
        msg = str(exc)
        m = _PANDAS_EOF_QUOTE.search(msg)
        if m:
            line = int(m.group(1)) + 1 + (0 if as_bytes else n_skipped)
            raise InputError(
                f"line {line} (data row {line - n_skipped - 1}): a quote (\") opens there and is never closed, so "
                "every line after it would be read as one cell",
                source=src,
                rows=[line - n_skipped - 1],
                hint=f"remove the stray quote on line {line} or close it (a value that contains a quote is written "
                'in quotes with the quote doubled: "a ""b"" c")',
            ) from None
        m = _PANDAS_LINE.search(msg)
        if m:
            expected, line, saw = (int(g) for g in m.groups())
            line = line if as_bytes else line + n_skipped
            raise InputError(
                f"line {line} (data row {line - n_skipped - 1}) has {saw} fields but the header has {expected}",
                source=src,
                rows=[line - n_skipped - 1],
                hint="check quoting and the delimiter on that line (a value containing the delimiter must be "
                "quoted)",
            ) from None
        raise InputError(f"could not be parsed as delimited text ({msg.strip()[:200]})", source=src,
                         hint="save the file as plain comma-separated CSV") from None
    except (pd.errors.EmptyDataError, ValueError, csv.Error, OverflowError) as exc:
        raise InputError(f"could not be parsed as delimited text ({str(exc)[:200]})", source=src,
                         hint="save the file as plain comma-separated CSV") from None
    return frame


def check_name_lengths(names: Sequence[Any], src: str) -> None:
    """Refuse a column name longer than :data:`calib_core.base.limits.MAX_NAME_CHARS` characters.

    Parameters
    ----------
    names : sequence
        The column names of the file, in file order.
    src : str
        The file name for the message.

    Raises
    ------
    InputError
        Naming the column's position, its length and the limit.

    Examples
    --------
    >>> from calib_core.data.text import check_name_lengths
    >>> check_name_lengths(["y", "mean"], "f.csv")
    """
    for i, name in enumerate(names):
        n = len(str(name))
        if n > MAX_NAME_CHARS:
            raise InputError(
                f"column {i + 1}'s name ({str(name)[:40]!r}…) is {n:,} characters long, over the limit of "
                f"{MAX_NAME_CHARS:,} characters for a column name",
                source=src,
                columns=[f"column {i + 1}"],
                hint="check that the first line of the file is a header row of short names (a file without a header "
                "line, or a line break missing after the header, puts data into the names)",
            )


def _long_header(partial: str, src: str) -> None:
    """The first line does not end within the first MB: its longest cell is the name refused."""
    longest = max(re.split(r"[,\t;|]", partial), key=len)
    position = re.split(r"[,\t;|]", partial).index(longest) + 1
    raise InputError(
        f"column {position}'s name ({longest[:40]!r}…) is at least {len(longest):,} characters long, over the limit "
        f"of {MAX_NAME_CHARS:,} characters for a column name (the header line does not end within the first "
        f"{len(partial):,} characters)",
        source=src,
        columns=[f"column {position}"],
        hint="check that the first line of the file is a header row of short names",
    )


def _check_binary(sample: str, src: str) -> None:
    """Refuse text with NUL bytes or many control characters (binary content)."""
    n_ctrl = _count_control(sample)
    if "\x00" in sample or n_ctrl > max(2, 0.01 * len(sample)):
        raise InputError(
            "does not look like a text table (it contains binary data: control characters or NUL bytes)",
            source=src,
            hint="upload a CSV, TSV or Parquet file; compressed or binary formats other than gzip/Parquet/npz "
            "are not read",
        )


def reading_notes(frame: pd.DataFrame) -> list[ReadingNote]:
    """The reader's sentences on how the text was read, for a parser's messages.

    Lines read as several-lines-in-one-row (an unbalanced quote; those rows are dropped), lines that were not UTF-8
    in a UTF-8 file (read as Windows-1252) and a legacy encoding.

    Parameters
    ----------
    frame : DataFrame
        A table read by :func:`read_text` (other frames give no notes).

    Returns
    -------
    list of ReadingNote
        The notes; ``[]`` for a plain UTF-8 file (and for Parquet / npz / Excel).
    """
    notes: list[str] = []
    for m in (frame.attrs.get("merged_rows") or [])[:5]:
        if m["first_line"]:
            notes.append(
                f"lines {m['first_line']}–{m['last_line']} were read as one row (data row {m['row']}): a quote (\") "
                f"in column {m['column']!r} opens on line {m['first_line']} and closes only on line {m['last_line']}; "
                "that row is dropped. Remove the stray quote (or close it on its line) to get the "
                f"{m['last_line'] - m['first_line'] + 1} lines back as rows."
            )
        else:
            notes.append(f"data row {m['row']} holds a line break in column {m['column']!r} (a quote opens and closes "
                         "lines later): several lines were read as one row, which is dropped. Remove the stray quote.")
    merged = frame.attrs.get("merged_rows") or []
    if len(merged) > 5:
        more = name_list([m["row"] for m in merged[5:]], 10)
        notes.append(f"… and {len(merged) - 5} more such row(s) (data rows {more}).")
    legacy = frame.attrs.get("legacy_lines") or []
    encoding = frame.attrs.get("encoding")
    if legacy:
        notes.append(
            f"{len(legacy)} line(s) are not valid UTF-8 (lines {name_list(legacy, 10)}): they were read as "
            "Windows-1252 (é, ü, € …) and the rest of the file as UTF-8. Check the text on those lines; re-save the "
            "file as UTF-8 to be sure."
        )
    elif encoding not in (None, "utf-8", "utf-8-sig"):
        notes.append(f"text encoding: {encoding}.")
    return [ReadingNote(n) for n in notes]
