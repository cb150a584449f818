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

import csv
import io
import re
import warnings
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..base.predictions import InputError, ReadingNote
from .columns import check_columns, name_list
from .rows import merged_rows

__all__ = ["read_text", "reading_notes"]

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
    sample = text[:65536]
    n_ctrl = len(_CONTROL_CHARS.findall(sample))
    if "\x00" in sample or n_ctrl > max(2, 0.01 * len(sample)):
        raise InputError(
            "does not look like a text table (it contains binary data: control characters or NUL bytes)",
            source=src,
            hint="upload a CSV, TSV or Parquet file; compressed or binary formats other than gzip/Parquet/npz "
            "are not read",
        )
    return text, encoding, legacy_lines


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


def read_text(data: bytes, src: str, *, text_except: Sequence[str] | None = None) -> pd.DataFrame:
    """Parse the bytes of a delimited text file into a DataFrame.

    Decodes the text (byte-order marks, UTF-8, Windows-1252 line by line in a mostly-UTF-8 file), keeps the leading
    ``#`` comment lines, sniffs the delimiter, checks the header (:func:`calib_core.data.columns.check_columns`), the
    data rows' delimiter and their field counts on the first 50 lines, reads ``;`` files with a decimal comma as such,
    and finds the rows a stray quote merged (:func:`calib_core.data.rows.merged_rows`).  UTF-8 text goes to the C parser
    as bytes (no second copy of the file as a str).

    Parameters
    ----------
    data : bytes
        The file's bytes (already decompressed).
    src : str
        The file name for messages; its suffix ``.tsv`` / ``.tab`` puts tab first among the delimiters.
    text_except : sequence of str, optional
        When given, every column but these is read as text, verbatim (no number or NA conversion: location ``01``
        stays ``01``, ``NA`` stays ``NA``) — a forecast hub's task IDs; the named columns are read as numbers
        (as text when a cell is no number, for the caller to name it).

    Returns
    -------
    DataFrame
        The table (column names stripped) with ``attrs`` ``format`` (``"csv"`` or ``"tsv"``), ``delimiter``,
        ``decimal``, ``encoding``, ``comments``, ``header_line``, ``legacy_lines`` and ``merged_rows``.

    Raises
    ------
    InputError
        Empty text or only comments, binary content, a single column, mixed delimiters, too many or duplicate
        columns, a row with more fields than the header, a quote never closed, or text pandas cannot parse.
    """
    text, encoding, legacy_lines = _decode(data, src)
    comments, body, n_skipped = _split_comments(text)
    lines = body[:1_000_000].splitlines()[:51]
    if (len(lines) == 51 or len(body) > 1_000_000) and len(lines) > 1:
        lines = lines[:-1]  # the last sampled line may be cut
    if not body[:65536].strip() or not lines:
        what = "is empty" if not text.strip() else "contains only comment lines, no header row"
        raise InputError(what, source=src, hint="upload a table with a header row and one row per example")
    delim = _sniff_delimiter(lines, src)
    header = _header_fields(lines[0], delim)
    check_columns(header, src)
    _check_data_delimiter(lines, header, delim, src)
    _check_extra_fields(lines, header, delim, n_skipped, src)
    decimal = "."
    if delim == ";":
        cells = [c for row in csv.reader(lines[1:], delimiter=";") for c in row]
        if cells and sum(bool(_DECIMAL_COMMA.match(c)) for c in cells) >= 0.2 * len(cells):
            decimal = ","
    kwargs: dict[str, Any] = {"skipinitialspace": True, "low_memory": False, "decimal": decimal, "index_col": False}
    if delim == "whitespace":
        kwargs["sep"] = r"\s+"
        kwargs.pop("skipinitialspace")
    else:
        kwargs["sep"] = delim
    # UTF-8 text goes to the C parser as bytes (no second copy of the file as a str)
    as_bytes = encoding in ("utf-8", "utf-8-sig")
    if as_bytes:
        kwargs.update(encoding=encoding, skiprows=n_skipped)
    if text_except is not None:
        numeric = [c for c in header if c in set(text_except)]
        kwargs.update(keep_default_na=False, na_values={c: _NA_TEXT for c in numeric},
                      dtype=defaultdict(lambda: str, {c: "float64" for c in numeric}))
    try:
        with warnings.catch_warnings():
            # trailing delimiters on every line: the empty last field is dropped (checked above)
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            try:
                frame = pd.read_csv(io.BytesIO(data) if as_bytes else io.StringIO(body), engine="c", **kwargs)
            except ValueError:
                if text_except is None:
                    raise
                kwargs["dtype"] = str  # a numeric column holds text: read it as text for the caller to name the cells
                frame = pd.read_csv(io.BytesIO(data) if as_bytes else io.StringIO(body), engine="c", **kwargs)
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
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs.update(
        {
            "format": "tsv" if delim == "\t" else "csv",
            "delimiter": delim,
            "decimal": decimal,
            "encoding": encoding,
            "comments": comments,
            "header_line": n_skipped + 1,
            "legacy_lines": legacy_lines,
            "merged_rows": merged_rows(frame, body, delim, n_skipped),
        }
    )
    return frame


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
