"""Reading prediction files, task-neutral: formats, encodings, column aliases, task detection.

``cc.load_predictions`` (:mod:`calib_core.api`) reads the file with :func:`read_table`, detects the task with
:func:`detect_task` and hands the frame to the task's parser (``calib_core.data.regression`` or
``calib_core.data.classification``).  The pieces both parsers use live here: ``find_column`` /
``resolve_column`` (role → column name via ``ALIASES``), ``numeric_values`` / ``numeric_block`` (column(s) →
float array, naming bad cells), ``label_values``, ``row_labels`` (split/group/model columns) and the row
bookkeeping :class:`RowFilter` (drop reasons → ``DropReport``).

Reading (``read_table``)
------------------------
* Formats are recognised from the content, not the name: Parquet (``PAR1`` magic; the footer's row
  count, column count and decoded size — rows × columns × bytes, :func:`parquet_decoded_bytes` — are checked
  *before* any data is read), ``.npz`` archives of plain arrays (``np.load(..., allow_pickle=False)``; a 2-D
  array ``probs`` becomes columns ``prob_0 … prob_{K−1}``, a 1-D array ``labels`` the column ``label``),
  gzip / bzip2 / xz / single-file zip compressed tables (decompressed as a stream that stops one byte past
  the size limit), Excel ``.xlsx`` only if ``openpyxl`` is installed, and delimited text otherwise.
  Pickles, legacy ``.xls`` and other binary content are refused with a message.
* Text encodings: UTF-8, UTF-8 with BOM, UTF-16/UTF-32 with BOM (and UTF-16 without BOM when every
  other byte is NUL), then Windows-1252 (Latin-1 for the bytes 1252 leaves undefined).  A UTF-8 file with a few
  lines that are not UTF-8 is read line by line (those lines as Windows-1252, named in a message), never as
  Windows-1252 as a whole (``Zürich`` → ``ZÃ¼rich``).
* A quote that opens and is closed only lines later makes the parser read the lines in between as one cell:
  such rows are found (``frame.attrs["merged_rows"]``, with their lines) and dropped by the parsers under
  ``MERGED_ROWS_REASON``; a quote never closed is refused naming its line.
* Lines starting with ``#`` (and blank lines) before the header are comments; they are kept in
  ``frame.attrs["comments"]`` and shown in messages.
* The delimiter is sniffed among ``,``, tab, ``;``, ``|`` and runs of whitespace: the candidate that
  splits the header into the most fields while ≥ 90 % of the first 50 lines have that many fields.
  ``;`` files whose numbers use a decimal comma (``1,5``) are read with ``decimal=","``.
* Errors → ``InputError``: empty file, binary garbage, everything in one column (unsupported
  delimiter), a header and data rows split by different delimiters, duplicate column names, more
  than ``MAX_COLUMNS`` columns, more than ``max_bytes`` bytes (default ``DEFAULT_MAX_BYTES``), ragged
  rows (the line is named; a decimal comma in a comma-separated file is named as the likely cause).

Data rows are numbered from 1 (the first row after the header; blank lines are skipped); these are the
numbers in ``PredictionSet.row_number``, ``DropReport`` and every message.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import os
import re
import warnings
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import DropReport, InputError, Message, ReadingNote

__all__ = [
    "ALIASES",
    "CLASSIFICATION_ROLES",
    "DEFAULT_MAX_BYTES",
    "MAX_COLUMNS",
    "REGRESSION_ROLES",
    "detect_task",
    "guess_columns",
    "score_column",
    "split_roles",
    "find_column",
    "find_feature_columns",
    "find_quantile_columns",
    "find_score_columns",
    "LABEL_FALLBACK",
    "row_label_columns",
    "unused_columns_note",
    "SLICE_CATEGORICAL_MAX",
    "column_kinds",
    "slice_columns",
    "kept_rows",
    "find_sample_columns",
    "MERGED_ROWS_REASON",
    "RowFilter",
    "broken_rows",
    "comment_note",
    "reading_notes",
    "frame_source",
    "label_values",
    "name_list",
    "normalize_name",
    "numeric_block",
    "numeric_values",
    "parse_quantile_level",
    "read_table",
    "require_valid_rows",
    "resolve_column",
    "row_labels",
    "source_name",
]

DEFAULT_MAX_BYTES = 1 << 30
"""Size limit (bytes of file, decompressed text, or uncompressed Parquet/npz data) when ``max_bytes`` is None."""

MAX_COLUMNS = 10_000
"""Files with more columns than this are refused before they are parsed."""

DEFAULT_LIMIT_HINT = "pass a larger max_bytes"
"""How to raise the size limit, in the words of the caller (the dashboard and the CLI pass their own)."""


def size_text(n: float) -> str:
    """Bytes in words: ``1,000 bytes`` below 1 MB, else three significant digits, ``4.58 MB`` / ``500 MB`` /
    ``14.9 GB`` (binary units, as Streamlit's ``server.maxUploadSize``)."""
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

MAX_ROWS = 100_000_000
"""Parquet / npz files declaring more rows than this are refused before they are read."""

# ----------------------------------------------------------------------------------------------
# The alias table: every name-based guess in the loader comes from here.
# ----------------------------------------------------------------------------------------------

ALIASES: dict[str, tuple[str, ...]] = {
    # target (observed value)
    "y": ("y", "y_true", "ytrue", "true", "target", "obs", "observed", "observation", "y_obs", "truth",
          "actual", "y_test"),
    # predictive mean / point prediction (``point`` is the fallback used only when no ``mean`` exists)
    "mean": ("mean", "mu", "y_pred", "ypred", "pred", "prediction", "predicted", "y_hat", "yhat", "pred_mean",
             "mean_pred", "predictive_mean", "ens_mean", "ensemble_mean", "loc"),
    "point": ("point_pred", "point", "point_prediction"),
    # predictive spread
    "std": ("std", "sigma", "sd", "stddev", "std_dev", "stdev", "y_std", "pred_std", "std_pred", "predictive_std",
            "uncertainty", "unc", "u", "ue", "u_e", "scale", "ens_std", "ensemble_std", "spread"),
    "var": ("var", "variance", "y_var", "pred_var", "predictive_var", "sigma2", "sigma_sq", "sigma_squared",
            "ens_var"),
    "log_var": ("log_var", "logvar", "log_variance", "log_sigma2", "log_sigma_sq"),
    "log_std": ("log_std", "logstd", "log_sigma", "logsigma", "log_scale"),
    "u95": ("u95", "u_95", "expanded_uncertainty", "expanded_uncertainty_95"),
    # error-only files: E = reference − prediction
    "error": ("e", "error", "err", "errors", "residual", "residuals", "resid"),
    # optional row attributes
    "split": ("split", "subset", "role", "split_role", "is_test", "is_cal", "is_calibration", "fold", "partition",
              "set"),
    "group": ("group", "groups", "slice", "subgroup", "stratum", "category"),
    "model": ("model", "models", "model_name", "method", "forecaster"),
    # classification (used here to detect the task; parsed in classification.reading)
    "label": ("label", "labels", "true_label", "y_label", "class", "class_label", "target_label"),
    "confidence": ("confidence", "conf", "max_prob", "top_prob"),
    "pred_label": ("pred_label", "predicted_label", "pred_class", "predicted_class", "prediction_label"),
}
"""Role → accepted column names, in priority order, compared after ``normalize_name``.

Name patterns (regular expressions on normalised names) complete the table:
quantiles ``QUANTILE_PATTERN`` (``q0.05``, ``q_0.05``, ``quantile_0.05``, ``q5``, ``q97.5``, ``q5%``),
members ``SAMPLE_PATTERN`` (``sample_0``, ``member_*``, ``m0``, ``ens_1``, ``draw_3`` …; ECMWF-style
``CTR``/``ctrl`` + ``P1 … Pn`` when both kinds are present), features ``FEATURE_PATTERN`` (``x``, ``x1``,
``x_*``, ``feature_*``) and classification score columns (:func:`score_column`: ``prob_<class>``, ``proba_<class>``,
``p_<class>``, ``<class>_prob``, ``logit_<class>`` …).
"""

QUANTILE_PATTERN = re.compile(r"^(?:q|quantile|qtl|quant|tau)[_\-]?(\d+(?:\.\d*)?|\.\d+)(%?)$")
SAMPLE_PATTERN = re.compile(
    r"^(?:(?:sample|member|mem|draw|particle|realization|realisation)(?:_(?P<any>[a-z0-9][\w.]*)|(?P<num>\d+))"
    r"|(?:m|ens|ensemble)_?\d+)$"
)
SAMPLE_SUFFIX_EXCLUDED = frozenset(
    {"mean", "std", "sd", "var", "avg", "average", "median", "spread", "size", "count", "weight", "id", "idx", "index"}
)
ECMWF_CONTROL = frozenset({"ctr", "ctrl", "control", "cf"})
ECMWF_PERTURBED = re.compile(r"^(?:p|pf)_?\d+$")
FEATURE_PATTERN = re.compile(r"^(?:x|x\d+|x_.+|feature_.+|feat_.+)$")
CLASS_SCORE_PATTERN = re.compile(r"^(?:prob|proba|probability|logit|logits)(?:_.+|\d+)?$")
_SCORE_PREFIX = re.compile(
    r"^(?P<kind>probability|probs|proba|prob|p|logits|logit)(?:[_\s.\-]+(?P<name>\S.*)|(?P<num>\d+))?$", re.IGNORECASE
)
_SCORE_SUFFIX = re.compile(r"^(?P<name>.*\S)[_\s.\-]+(?P<kind>probability|proba|prob|logits|logit)$", re.IGNORECASE)
_SCORE_SUFFIX_EXCLUDED = frozenset(
    {"max", "top", "pred", "predicted", "mean", "avg", "average", "label", "class", "true", "y_true", "y_pred"}
)

REGRESSION_ROLES = frozenset(
    {"y", "mean", "point", "std", "var", "log_var", "log_std", "u95", "error", "quantiles", "samples", "split",
     "group", "model", "features", "time"}
)
"""Keys accepted in ``columns`` for regression files."""

CLASSIFICATION_ROLES = frozenset(
    {"label", "labels", "probs", "prob", "logits", "logit", "confidence", "pred_label", "classes", "positive"}
)
"""Keys that, in ``columns``, mark a classification file (they are passed on to the classification loader)."""

SPLIT_SYNONYMS = {
    "cal": "cal", "calib": "cal", "calibration": "cal", "calibrate": "cal", "val": "cal", "valid": "cal",
    "validation": "cal", "test": "test", "testing": "test", "eval": "test", "evaluation": "test", "holdout": "test",
}

SPLIT_TRAIN = frozenset({"train", "training", "fit"})
"""Split values of rows used for neither calibration nor testing (kept as ``train``)."""

_MAGIC_PICKLE = re.compile(rb"^\x80[\x02-\x05]")
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d+,\d+(?:[eE][-+]?\d+)?\s*$")
_PANDAS_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_PANDAS_EOF_QUOTE = re.compile(r"EOF inside string starting at row (\d+)")
_NA_SPELLINGS = ["na", "n/a", "nan", "-nan", "null", "none", "<na>", "#n/a", "#na", "#n/a n/a"]
_INTEGER = re.compile(r"^\s*[-+]?\d+\s*$")
_DELIM_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "'|'", "whitespace": "spaces"}


def normalize_name(name: Any) -> str:
    """Column name as compared with the alias table: stripped, lower-case, runs of space/hyphen → ``_``."""
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def source_name(path_or_buffer: Any, source: str | None = None) -> str:
    """The file name shown in messages: ``source`` if given, else the path's or buffer's ``.name``."""
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


def _check_columns(names: Sequence[Any], src: str) -> None:
    """Refuse too many columns and duplicate names (case-insensitive, ignoring surrounding spaces)."""
    if len(names) > MAX_COLUMNS:
        raise InputError(
            f"has {len(names):,} columns, more than the limit of {MAX_COLUMNS:,}",
            source=src,
            hint="keep only the columns you need (target, prediction, uncertainty, optional split/group/model)",
        )
    norm = [normalize_name(n) for n in names]
    seen: dict[str, int] = {}
    dups: list[str] = []
    for name, key in zip(names, norm):
        if key and key in seen:
            dups.append(str(name))
        seen[key] = seen.get(key, 0) + 1
    if dups:
        dup_keys = {normalize_name(d) for d in dups}
        shown = sorted({str(n) for n, k in zip(names, norm) if k in dup_keys})
        raise InputError(
            f"duplicate column names: {', '.join(repr(s) for s in shown)} (names are compared case-insensitively)",
            source=src,
            columns=shown,
            hint="rename or remove the duplicate columns so every name is unique",
        )


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


def _read_text(data: bytes, src: str) -> pd.DataFrame:
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
    _check_columns(header, src)
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
    try:
        with warnings.catch_warnings():
            # trailing delimiters on every line: the empty last field is dropped (checked above)
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
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
            "merged_rows": _merged_rows(frame, body, delim, n_skipped),
        }
    )
    return frame


def _merged_rows(frame: pd.DataFrame, body: str, delim: str, n_skipped: int) -> list[dict[str, Any]]:
    """Data rows that hold a line break inside a cell: a quote that opens and is closed lines later (an
    unbalanced quote closed by the next stray one) makes the parser read every line in between as part of one
    cell, so an 11-line file yields 7 rows.  Each entry: ``row`` (1-based data row), ``column``, ``first_line`` and
    ``last_line`` (1-based lines of the file; 0 when they cannot be told).

    Cheap when nothing is wrong: without a quote in the text, or with no more line breaks than rows + header,
    no cell can hold one and nothing is scanned; otherwise the text columns are searched (vectorised) and the
    lines of the few rows found are counted with the ``csv`` module up to the last of them.
    """
    if '"' not in body:
        return []
    breaks = body.count("\n") or body.count("\r")
    if breaks <= len(frame) + 1:
        return []
    hit = np.zeros(len(frame), dtype=bool)
    where: dict[int, str] = {}
    for name in frame.columns:
        column = frame[name]
        if column.dtype != object and not pd.api.types.is_string_dtype(column.dtype):
            continue
        try:
            has = column.str.contains("[\r\n]", regex=True, na=False).to_numpy(dtype=bool)
        except (AttributeError, TypeError):  # no strings in the column
            continue
        for i in np.flatnonzero(has & ~hit):
            where[int(i)] = str(name)
        hit |= has
    if not hit.any():
        return []
    lines = _record_lines(body, delim, int(np.flatnonzero(hit)[-1]))
    out = []
    for i in np.flatnonzero(hit):
        first, last = lines.get(int(i), (0, 0))
        out.append({"row": int(i) + 1, "column": where[int(i)], "first_line": first + n_skipped if first else 0,
                    "last_line": last + n_skipped if last else 0})
    return out


def _record_lines(body: str, delim: str, last: int) -> dict[int, tuple[int, int]]:
    """{0-based data row: (first, last) 1-based line of ``body``} for the data rows up to ``last``, read with the
    ``csv`` module (blank lines skipped as the parser skips them); {} when it cannot follow the text."""
    reader = csv.reader(io.StringIO(body, newline=None), delimiter=" " if delim == "whitespace" else delim,
                        skipinitialspace=delim == "whitespace")
    out: dict[int, tuple[int, int]] = {}
    record = -1  # the header is record −1
    try:
        while record <= last:
            before = reader.line_num
            row = next(reader)
            if not row or not any(cell.strip() for cell in row):
                continue
            if record >= 0:
                out[record] = (before + 1, reader.line_num)
            record += 1
    except (csv.Error, StopIteration):
        return {}
    return out


def parquet_decoded_bytes(meta: Any, schema: Any = None) -> int:
    """Bytes the decoded table will take, from the Parquet footer alone (nothing is decompressed): every value
    costs at least 8 bytes once decoded (float64 / int64 / an object pointer in pandas; wider fixed-length
    values their width), and string / binary columns — read as dictionaries, see :func:`_read_parquet` — add
    their uncompressed pages (an upper bound of their distinct values).  Run-length / dictionary encoding lets a
    file of a few kB declare 10⁸ constant rows; this is what they decode to."""
    total = 0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j in range(group.num_columns):
            column = group.column(j)
            values = max(int(column.num_values), int(group.num_rows))
            kind = column.physical_type
            if kind == "FIXED_LEN_BYTE_ARRAY" and schema is not None:
                width = max(8, int(schema.column(j).length or 0))
            else:
                width = 8
            total += values * width
            if kind == "BYTE_ARRAY":
                total += int(column.total_uncompressed_size)
    return total


def _read_parquet(data: bytes, src: str, limit: int, limit_hint: str | None = None) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
        meta = pf.metadata
        n_rows, n_cols = int(meta.num_rows), int(meta.num_columns)
        decoded = parquet_decoded_bytes(meta, pf.schema)
        text_columns = [f.name for f in pf.schema_arrow
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
    if text_columns:  # strings stay dictionaries while decoding: a repeated long string is held once
        pf = pq.ParquetFile(pa.BufferReader(data), read_dictionary=text_columns)
    try:
        # the pandas blocks go to the system allocator (returned to the OS when the frame is freed) and the
        # decoded Arrow table is released at once: Arrow's default pool (mimalloc) would otherwise keep its
        # pages (≈ the uncompressed size) for the life of the process — 0.5 GB at 1e7 rows × 3 floats
        table = pf.read()
        try:
            frame = table.to_pandas(memory_pool=pa.system_memory_pool())
        except (KeyError, IndexError, AttributeError, TypeError, ValueError):
            if b"pandas" not in (table.schema.metadata or {}):
                raise
            # malformed pandas metadata (hand-made or hostile file): the columns are read without it
            frame = table.replace_schema_metadata(None).to_pandas(memory_pool=pa.system_memory_pool())
        del table
        for name in text_columns:  # back to plain object columns (one shared str per distinct value)
            if name in frame.columns and isinstance(frame[name].dtype, pd.CategoricalDtype):
                frame[name] = _categorical_to_object(frame[name])
    except (pa.ArrowException, OSError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise InputError(f"Parquet data could not be read ({str(exc)[:200]})", source=src,
                         hint="re-export it with pandas.DataFrame.to_parquet or upload CSV") from None
    finally:
        pa.default_memory_pool().release_unused()
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    frame = frame.reset_index(drop=True)
    _check_columns(list(frame.columns), src)
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs.update({"format": "parquet", "comments": []})
    return frame


def _categorical_to_object(values: pd.Series) -> pd.Series:
    """A categorical column as an object column of the same values (missing → None, as pyarrow gives them),
    each distinct value one shared object."""
    categories = np.asarray(values.cat.categories, dtype=object)
    codes = values.cat.codes.to_numpy()
    out = np.empty(codes.size, dtype=object)
    valid = codes >= 0
    out[valid] = categories[codes[valid]]
    return pd.Series(out, index=values.index, name=values.name)


_NPZ_NAMES = {"probs": "prob", "logits": "logit", "samples": "sample", "members": "member", "labels": "label",
              "quantiles": "q"}


def _read_npz(data: bytes, src: str, limit: int, limit_hint: str | None = None) -> pd.DataFrame:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        total = sum(info.file_size for info in zf.infolist())  # zipfile never inflates a member past its size
    if total > limit:
        raise _too_big(f"is an npz archive whose arrays take {size_text(total)}", limit, src, limit_hint)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:  # corrupt archives raise many types (zlib.error, TokenError from a bad .npy header, …)
        raise InputError(
            f"npz archive could not be read without pickle ({str(exc)[:200]})",
            source=src,
            hint="store plain numeric arrays (np.savez with allow_pickle=False readable arrays), or upload CSV",
        ) from None
    cols: dict[str, np.ndarray] = {}
    n_rows: int | None = None
    for key, arr in arrays.items():
        if arr.ndim == 0 or arr.ndim > 2:
            continue
        if n_rows is None:
            n_rows = arr.shape[0]
        if arr.shape[0] != n_rows:
            raise InputError(
                f"npz arrays have different lengths ({key!r} has {arr.shape[0]} rows, expected {n_rows})",
                source=src,
                columns=[key],
                hint="every array must have one entry (row) per example",
            )
        base = _NPZ_NAMES.get(key.lower(), key)
        if arr.ndim == 1:
            cols[base] = arr
        else:
            if arr.shape[1] > MAX_COLUMNS:
                raise InputError(f"npz array {key!r} has {arr.shape[1]:,} columns, more than {MAX_COLUMNS:,}",
                                 source=src, columns=[key], hint="store fewer columns")
            for j in range(arr.shape[1]):
                cols[f"{base}_{j}"] = arr[:, j]
    if not cols:
        raise InputError("npz archive holds no 1-D or 2-D arrays", source=src,
                         hint="store e.g. probs (N, K) and labels (N,), or y, mean, std (N,)")
    _check_columns(list(cols), src)
    frame = pd.DataFrame(cols)
    frame.attrs.update({"format": "npz", "comments": []})
    return frame


def _read_excel(data: bytes, src: str) -> pd.DataFrame:
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise InputError(
            "is an Excel workbook, and reading Excel needs the optional package openpyxl, which is not installed",
            source=src,
            hint="save the sheet as CSV (UTF-8) and upload that, or `pip install openpyxl`",
        ) from None
    try:
        frame = pd.read_excel(io.BytesIO(data), sheet_name=0, engine="openpyxl")
    except Exception as exc:  # openpyxl raises many types on malformed workbooks
        raise InputError(f"Excel workbook could not be read ({str(exc)[:200]})", source=src,
                         hint="save the sheet as CSV and upload that") from None
    _check_columns(list(frame.columns), src)
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs.update({"format": "excel", "comments": []})
    return frame


def read_table(
    path_or_buffer: Any, *, source: str | None = None, max_bytes: int | None = None, limit_hint: str | None = None
) -> pd.DataFrame:
    """Read a prediction table from a path, bytes or binary file-like (e.g. Streamlit's ``UploadedFile``).

    The format is recognised from the content (see the module docstring): Parquet, npz, gzip / bzip2 / xz /
    single-file zip compressed tables, Excel (only with openpyxl) or delimited text with sniffed delimiter and
    encoding.  Nothing is unpickled or evaluated.  ``max_bytes`` (default ``DEFAULT_MAX_BYTES``) bounds the file,
    its decompressed bytes (decompression stops one byte past it) and what a Parquet / npz file decodes to in
    memory (from its footer: rows × columns × bytes, :func:`parquet_decoded_bytes`), each checked *before*
    decoding; ``limit_hint`` says how to raise the limit in the caller's words (default "pass a larger
    max_bytes").  Returns a DataFrame with a fresh RangeIndex (data row r is ``frame.iloc[r − 1]``) and
    ``frame.attrs`` holding ``source``, ``format``, ``comments`` (leading '#' lines) and, for text,
    ``encoding``, ``delimiter``, ``decimal`` and ``header_line``.  Raises ``InputError`` for anything
    that is not a readable, non-empty table with unique column names; an exception of another type from a
    parser (a bug or a case no check foresaw) is wrapped in an ``InputError`` saying so, so that no upload
    ever ends in a traceback.
    """
    src = source_name(path_or_buffer, source)
    try:
        return _read_table(path_or_buffer, src, max_bytes, limit_hint)
    except InputError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, MemoryError, EOFError,
            OSError, NotImplementedError, RecursionError, zlib.error, lzma.LZMAError) as exc:
        raise InputError(
            f"unexpected problem while reading the file ({type(exc).__name__}: {str(exc)[:200]})",
            source=src,
            hint="re-save it as plain UTF-8 CSV; if the file looks right, please report this as a bug",
        ) from exc


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


def _read_table(path_or_buffer: Any, src: str, max_bytes: int | None, limit_hint: str | None = None) -> pd.DataFrame:
    """``read_table`` without the last-resort wrapping of unexpected exceptions."""
    limit = DEFAULT_MAX_BYTES if max_bytes is None else int(max_bytes)
    data = _read_bytes(path_or_buffer, src, limit, limit_hint)
    if not data or (not data[:65536].strip() and not data.strip()):
        raise InputError("is empty", source=src, hint="upload a table with a header row and one row per example")
    compressed = _compression(data)
    if compressed:
        data = _inflate(data, compressed, src, limit, limit_hint)
    elif data[:4] == b"PK\x03\x04":
        data, compressed = _unzip_single_table(data, src, limit, limit_hint)
    if data[:4] == b"PAR1":
        frame = _read_parquet(data, src, limit, limit_hint)
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
            frame = _read_excel(data, src)
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
        frame = _read_text(data, src)
    if frame.shape[1] == 0:
        raise InputError("has no columns", source=src, hint="upload a table with a header row")
    frame = frame.reset_index(drop=True)
    frame.attrs["source"] = src
    if compressed:
        frame.attrs["compression"] = compressed
    return frame


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
# Finding columns
# ----------------------------------------------------------------------------------------------


def frame_source(frame: pd.DataFrame, source: str | None) -> str:
    """The file name for messages: ``source``, else ``frame.attrs["source"]``, else ``"<memory>"``."""
    return source or frame.attrs.get("source") or "<memory>"


def comment_note(frame: pd.DataFrame) -> str:
    """The file's leading '#' comments as a sentence to append to a message ("" when there are none)."""
    comments = frame.attrs.get("comments") or []
    return f" The file's header comment says: {' / '.join(comments)[:200]!r}." if comments else ""


def resolve_column(frame: pd.DataFrame, name: Any, *, role: str, source: str | None = None) -> str:
    """The frame column a user-given name refers to (exact match first, then case-insensitive)."""
    src = frame_source(frame, source)
    if name in frame.columns:
        return str(name)
    key = normalize_name(name)
    hits = [c for c in frame.columns if normalize_name(c) == key]
    if len(hits) == 1:
        return str(hits[0])
    if len(hits) > 1:
        raise InputError(f"column name {name!r} (role {role!r}) matches several columns: {hits}", source=src,
                         columns=[str(h) for h in hits], hint="rename the columns so they differ")
    raise InputError(
        f"column {name!r} given for role {role!r} is not in the file (columns: {name_list(frame.columns)})",
        source=src,
        columns=[str(name)],
        hint="check the spelling in the column mapping",
        app_hint="choose the column again under Column mapping",
    )


def name_list(names: Sequence[Any], k: int = 20) -> str:
    """The first ``k`` names joined by commas, with the total when there are more."""
    names = [str(n) for n in names]
    return ", ".join(names[:k]) + (f", … ({len(names)} in all)" if len(names) > k else "")


def find_column(
    frame: pd.DataFrame,
    role: str,
    columns: Mapping[str, Any] | None = None,
    *,
    source: str | None = None,
    exclude: Sequence[str] = (),
) -> str | None:
    """Column for ``role``: the user's mapping if given, else the first alias of ``ALIASES[role]`` present.

    ``columns[role] = None`` means "do not use this role" and returns None.  Columns in ``exclude``
    (already claimed by another role) are skipped.  Several columns matching the same alias
    (e.g. ``Mean`` and ``mean``) raise ``InputError``.
    """
    if columns is not None and role in columns:
        name = columns[role]
        return None if name is None else resolve_column(frame, name, role=role, source=source)
    norm = {c: normalize_name(c) for c in frame.columns if c not in exclude}
    for alias in ALIASES.get(role, ()):
        hits = [c for c, k in norm.items() if k == alias]
        if len(hits) == 1:
            return str(hits[0])
        if len(hits) > 1:
            raise InputError(
                f"several columns could be the {role!r} column: {hits}",
                source=frame_source(frame, source),
                columns=[str(h) for h in hits],
                hint=f"pass columns={{'{role}': '<name>'}} to choose one",
                app_hint=f"choose the {role} column under Column mapping and load the file again",
            )
    return None


LABEL_FALLBACK = ("y", "y_true", "ytrue", "true", "target", "truth", "ground_truth", "gt")
"""Names of a classification file's label column when no ``ALIASES["label"]`` name exists (in this order)."""


def score_column(name: Any) -> tuple[str, str, str] | None:
    """(kind, class name, style) of a classification score column name, or None.

    ``kind`` is ``"probs"`` or ``"logits"``; the class name is the rest of the name with its case kept (``""`` for a
    bare ``prob`` / ``logit`` column).  Styles: ``"prefix"`` — ``prob_<class>``, ``proba_<class>``,
    ``probability_<class>``, ``probs_<class>``, ``prob0``, ``logit_<class>``, ``logits_<class>``; ``"p"`` —
    ``p_<class>`` (not ``p1`` / ``p_value``); ``"suffix"`` — ``<class>_prob``, ``<class>_proba``,
    ``<class>_probability``, ``<class>_logit`` (not ``max_prob`` / ``top_prob``, which are top-label confidences).
    Separators may be ``_``, ``-``, ``.`` or spaces; the kind is matched case-insensitively.
    """
    text = str(name).strip()
    m = _SCORE_PREFIX.match(text)
    if m:
        kind = "logits" if m.group("kind").lower().startswith("logit") else "probs"
        cls = m.group("name") or m.group("num") or ""
        if m.group("kind").lower() == "p":
            if not m.group("name") or normalize_name(cls) in ("value", "val", "adj", "adjusted"):
                return None
            return kind, cls, "p"
        return kind, cls, "prefix"
    m = _SCORE_SUFFIX.match(text)
    if m and normalize_name(m.group("name")) not in _SCORE_SUFFIX_EXCLUDED:
        kind = "logits" if m.group("kind").lower().startswith("logit") else "probs"
        return kind, m.group("name"), "suffix"
    return None


def find_score_columns(frame: pd.DataFrame, *, exclude: Sequence[str] = ()) -> dict[str, list[tuple[str, str]]]:
    """Classification score columns found by name (:func:`score_column`): kind → [(column, class name)], file order.

    ``prob_*`` / ``proba_*`` / ``logit_*`` columns count alone; the weaker ``p_<class>`` and ``<class>_prob`` styles
    only when at least two columns of that kind use them (one ``p_hat`` or ``x_prob`` is no class vector), and
    ``p_<n>`` columns never when the file has an ECMWF control column (``CTR``/``ctrl``: then ``P1 … Pn`` are
    ensemble members).
    """
    ecmwf = any(normalize_name(c) in ECMWF_CONTROL for c in frame.columns)
    hits: dict[str, list[tuple[str, str, str]]] = {"probs": [], "logits": []}
    for c in frame.columns:
        if c in exclude:
            continue
        found = score_column(c)
        if found is None:
            continue
        kind, cls, style = found
        if style == "p" and ecmwf and cls.isdigit():
            continue
        hits[kind].append((str(c), cls, style))
    out: dict[str, list[tuple[str, str]]] = {}
    for kind, items in hits.items():
        weak = [t for t in items if t[2] != "prefix"]
        if len(weak) < 2:
            items = [t for t in items if t[2] == "prefix"]
        out[kind] = [(c, cls) for c, cls, _ in items]
    return out


def parse_quantile_level(name: Any) -> float | None:
    """Quantile level from a column name, or None.

    ``q0.05``, ``q_0.05``, ``quantile_0.05`` → 0.05 (a number with a dot ≤ 1 is a level);
    ``q5``, ``q05``, ``q5%``, ``q97.5`` → 0.05, 0.05, 0.05, 0.975 (integers and numbers > 1 are percent).
    Levels outside [0, 1] give None.
    """
    m = QUANTILE_PATTERN.match(normalize_name(name))
    if not m:
        return None
    num, pct = m.groups()
    value = float(num)
    if pct or "." not in num or value > 1.0:
        value /= 100.0
    return value if 0.0 <= value <= 1.0 else None


def _level_key(key: Any) -> float | None:
    if isinstance(key, (int, float, np.floating, np.integer)) and not isinstance(key, bool):
        v = float(key)
        return v if 0.0 <= v <= 1.0 else None
    s = str(key).strip()
    try:
        v = float(s.rstrip("%"))
    except ValueError:
        return parse_quantile_level(s)
    if s.endswith("%"):
        v /= 100.0
    return v if 0.0 <= v <= 1.0 else None


def find_quantile_columns(
    frame: pd.DataFrame, columns: Mapping[str, Any] | None = None, *, source: str | None = None
) -> tuple[np.ndarray, list[str]]:
    """Quantile levels (sorted, strictly increasing) and their columns; empty when there are none.

    ``columns["quantiles"]`` may be a dict ``{level: column}`` (levels as numbers, ``"0.05"`` or
    ``"5%"``) or a list of column names whose levels are read from the names.
    """
    src = frame_source(frame, source)
    spec = ... if columns is None else columns.get("quantiles", ...)
    pairs: list[tuple[float, str]] = []
    if spec is None:
        return np.empty(0), []
    if spec is ...:
        for c in frame.columns:
            lev = parse_quantile_level(c)
            if lev is not None:
                pairs.append((lev, str(c)))
    elif isinstance(spec, Mapping):
        for key, name in spec.items():
            lev = _level_key(key)
            if lev is None:
                raise InputError(f"quantile level {key!r} is not a number in [0, 1]", source=src,
                                 hint="write levels like 0.05 or '5%'")
            pairs.append((lev, resolve_column(frame, name, role="quantiles", source=src)))
    elif isinstance(spec, Sequence) and not isinstance(spec, str):
        for name in spec:
            col = resolve_column(frame, name, role="quantiles", source=src)
            lev = parse_quantile_level(col)
            if lev is None:
                raise InputError(
                    f"the level of quantile column {col!r} cannot be read from its name",
                    source=src,
                    columns=[col],
                    hint="map levels explicitly: columns={'quantiles': {0.05: 'lo', 0.95: 'hi'}}",
                    app_hint="write the levels of the chosen columns under 'Quantile levels of these columns' in "
                    "the Column mapping",
                )
            pairs.append((lev, col))
    else:
        raise InputError("columns['quantiles'] must be a dict {level: column} or a list of column names",
                         source=src, hint="e.g. columns={'quantiles': {0.05: 'lo', 0.5: 'med', 0.95: 'hi'}}",
                         app_hint="choose the quantile columns under Column mapping")
    if not pairs:
        return np.empty(0), []
    pairs.sort(key=lambda t: t[0])
    levels = np.array([p[0] for p in pairs])
    names = [p[1] for p in pairs]
    same = np.flatnonzero(np.diff(levels) <= 0)
    if same.size:
        i = int(same[0])
        raise InputError(
            f"quantile columns {names[i]!r} and {names[i + 1]!r} both give level {levels[i]:g}; levels must be "
            "strictly increasing",
            source=src,
            columns=[names[i], names[i + 1]],
            hint="remove one of them or map the levels explicitly with columns={'quantiles': {...}}",
            app_hint="remove one of them from the file, or choose the quantile columns and write their levels under "
            "Column mapping",
        )
    return levels, names


def find_sample_columns(
    frame: pd.DataFrame, columns: Mapping[str, Any] | None = None, *, source: str | None = None
) -> list[str]:
    """Ensemble-member / sample columns in file order (see ``SAMPLE_PATTERN``), or the user's list.

    ECMWF-style names (a control ``CTR``/``ctrl``/``control``/``cf`` plus perturbed ``P1 … Pn``) are
    recognised only when both kinds are present; a deterministic ``HRES`` run is not a member.
    """
    src = frame_source(frame, source)
    spec = ... if columns is None else columns.get("samples", ...)
    if spec is None:
        return []
    if spec is not ...:
        if isinstance(spec, str) or not isinstance(spec, Sequence):
            raise InputError("columns['samples'] must be a list of column names", source=src,
                             hint="e.g. columns={'samples': ['CTR', 'P1', 'P2']}",
                             app_hint="choose the sample columns under Column mapping")
        return [resolve_column(frame, n, role="samples", source=src) for n in spec]
    found = []
    for c in frame.columns:
        m = SAMPLE_PATTERN.match(normalize_name(c))
        if m and (m.group("any") or "") not in SAMPLE_SUFFIX_EXCLUDED:
            found.append(str(c))
    if not found:
        ctrl = [str(c) for c in frame.columns if normalize_name(c) in ECMWF_CONTROL]
        pert = [str(c) for c in frame.columns if ECMWF_PERTURBED.match(normalize_name(c))]
        if len(ctrl) == 1 and pert:
            found = [str(c) for c in frame.columns if str(c) in ctrl or str(c) in pert]
    return found


def find_feature_columns(
    frame: pd.DataFrame, columns: Mapping[str, Any] | None = None, *, source: str | None = None,
    exclude: Sequence[str] = (),
) -> list[str]:
    """Feature columns: ``x``, ``x1``, ``x_*``, ``feature_*`` (case-insensitive), or the user's list."""
    spec = ... if columns is None else columns.get("features", ...)
    if spec is None:
        return []
    if spec is not ...:
        if isinstance(spec, str):
            spec = [spec]
        return [resolve_column(frame, n, role="features", source=source) for n in spec]
    return [str(c) for c in frame.columns if c not in exclude and FEATURE_PATTERN.match(normalize_name(c))]


# ----------------------------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------------------------


def numeric_values(frame: pd.DataFrame, name: str, *, source: str | None = None, role: str | None = None) -> np.ndarray:
    """Column as float64 (missing → NaN); non-numeric cells raise ``InputError`` naming column and rows.

    Empty cells and the usual NA spellings (NA, NaN, null, …) are missing values, not errors; ``inf``
    and ``-inf`` are parsed (and later dropped as non-finite by the validators).
    """
    s = frame[name]
    what = f" ({role})" if role and role != name else ""
    if pd.api.types.is_bool_dtype(s.dtype):
        raise _boolean_error(frame, name, what, source, np.arange(len(s)))
    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_complex_dtype(s.dtype):
        return s.to_numpy(dtype=float, na_value=np.nan)
    as_str = s.astype("string").str.strip()
    as_str = as_str.mask(as_str.str.lower().isin(_NA_SPELLINGS))  # text columns (Parquet, npz): "NA" is missing
    broken = broken_rows(frame)
    if broken.any():  # dropped by the parser for the line breaks in them, whatever their cells hold
        as_str = as_str.mask(broken)
    values = pd.to_numeric(as_str, errors="coerce")
    bad = values.isna().to_numpy() & as_str.notna().to_numpy() & (as_str != "").fillna(False).to_numpy()
    if bad.any():
        boolean = as_str.str.lower().isin(["true", "false"]).to_numpy() & bad
        if boolean.any():
            raise _boolean_error(frame, name, what, source, np.flatnonzero(boolean))
        idx = np.flatnonzero(bad)
        rows = (idx + 1).tolist()
        examples = ", ".join(f"row {r}: {str(s.iloc[i])[:20]!r}" for r, i in zip(rows[:3], idx[:3]))
        delims = sorted({d for d in ",;\t|" for v in as_str.iloc[idx[:20]] if d in v})
        delim_note = (
            f"; the cells contain {', '.join(repr(d) for d in delims)}: is the file's delimiter or decimal mark "
            "different from what the header suggests?" if delims else ""
        )
        raise InputError(
            f"column {name!r}{what} has non-numeric values in {idx.size} row(s) ({examples}"
            f"{', …' if idx.size > 3 else ''}){delim_note}",
            source=frame_source(frame, source),
            columns=[str(name)],
            rows=rows[:20],
            hint="fix those cells or leave them empty (empty cells are counted as missing and the row is "
            "dropped); numbers must use '.' as decimal point and no thousands separators",
        )
    return values.to_numpy(dtype=float, na_value=np.nan)


def _boolean_error(frame: pd.DataFrame, name: str, what: str, source: str | None, idx: np.ndarray) -> InputError:
    """The refusal of True/False in a numeric column (they are not read as 1/0: a σ of True is no number)."""
    idx = np.asarray(idx)
    rows = (idx[:20] + 1).tolist()
    where = "in every row" if idx.size == len(frame) else (
        f"in {idx.size} row(s): {', '.join(map(str, rows[:5]))}{', …' if idx.size > 5 else ''}")
    return InputError(
        f"column {name!r}{what} holds True/False values {where}, not numbers; they are not read as 1/0",
        source=frame_source(frame, source),
        columns=[str(name)],
        rows=rows,
        hint="write numbers in that column (0 and 1 if that is what is meant), or check that the right column is "
        "mapped to this role",
    )


def numeric_block(frame: pd.DataFrame, names: Sequence[str], *, source: str | None = None,
                  role: str | None = None) -> np.ndarray:
    """Several columns as a float64 array of shape (N, len(names)), with the checks of ``numeric_values``."""
    sub = frame[list(names)]
    if all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_complex_dtype(t)
           and not pd.api.types.is_bool_dtype(t) for t in sub.dtypes):
        return sub.to_numpy(dtype=float, na_value=np.nan)
    return np.column_stack([numeric_values(frame, n, source=source, role=role) for n in names])


def label_values(frame: pd.DataFrame, name: str, missing: str = "(missing)") -> np.ndarray:
    """Column as an object array of stripped strings (integral floats written without '.0'; NaN → ``missing``).

    Rows the reader found broken (several lines read as one row, :func:`broken_rows`) read as ``missing``: their
    cells are fragments of other rows, and a split column's roles are judged without them."""
    broken = broken_rows(frame)
    if broken.any():  # a frame without the reader's attrs: no row is broken in it
        return label_values(pd.DataFrame({name: frame[name].mask(broken)}), name, missing)
    s = frame[name]
    if pd.api.types.is_float_dtype(s.dtype):
        v = s.to_numpy(dtype=float, na_value=np.nan)
        out = s.astype(str).to_numpy(dtype=object)
        integral = np.isfinite(v) & (v == np.round(v)) & (np.abs(v) < 2**53)
        out[integral] = v[integral].astype(np.int64).astype(str)
        out[np.isnan(v)] = missing
        return out
    # strings are made once per distinct value and shared by code: a per-row conversion of 1e7 labels
    # would build 1e7 str objects (≈ 0.6 GB) that the PredictionSet then keeps
    codes, uniques = pd.factorize(s, use_na_sentinel=True)  # missing → code −1
    names = pd.Series(uniques).astype("string").str.strip().fillna(missing).to_numpy(dtype=object)
    names[names == ""] = missing
    return np.append(names, np.array([missing], dtype=object))[codes]


# ----------------------------------------------------------------------------------------------
# Task detection
# ----------------------------------------------------------------------------------------------


def detect_task(frame: pd.DataFrame, columns: Mapping[str, Any] | None = None) -> str:
    """``"classification"`` or ``"regression"`` from the column names (and the mapping's keys).

    Classification when the mapping uses classification roles, or when the file has score columns
    (:func:`find_score_columns`: ``prob_<class>``, ``proba_<class>``, ``p_<class>``, ``<class>_prob``, ``logit_*`` …),
    or a label column with a confidence (top-label) column, and no regression uncertainty columns
    (std/var/quantiles/samples/error) unless a label column is present; otherwise regression.
    """
    keys = set(columns or ())
    if keys & CLASSIFICATION_ROLES:
        return "classification"
    if keys & (REGRESSION_ROLES - {"split", "group", "model", "features"}):
        return "regression"
    norm = [normalize_name(c) for c in frame.columns]
    scores = find_score_columns(frame)
    has_scores = bool(scores["probs"] or scores["logits"])
    has_label = any(k in ALIASES["label"] for k in norm)
    has_conf = any(k in ALIASES["confidence"] for k in norm)
    has_pred_label = any(k in ALIASES["pred_label"] for k in norm)
    cls = has_scores or (has_conf and (has_label or has_pred_label))
    if not cls:
        return "regression"
    reg_roles = ("std", "var", "log_var", "log_std", "error")
    reg = any(k in ALIASES[r] for r in reg_roles for k in norm)
    reg = reg or any(parse_quantile_level(c) is not None for c in frame.columns)
    reg = reg or bool(find_sample_columns(frame))
    return "regression" if reg and not has_label else "classification"


# ----------------------------------------------------------------------------------------------
# Row bookkeeping shared by the per-task parsers
# ----------------------------------------------------------------------------------------------


MERGED_ROWS_REASON = "a quote opens and closes lines later: several lines read as one row"
"""The drop reason of a data row that holds a line break inside a cell (``frame.attrs["merged_rows"]``)."""


class RowFilter:
    """Row bookkeeping of a parser: accumulates drop reasons (a ``DropReport`` and counts per reason); the
    mask ``keep`` is the AND of all checks.

    Given the frame, rows the reader found broken (several lines read as one row, ``frame.attrs["merged_rows"]``)
    are dropped first, under :data:`MERGED_ROWS_REASON`, and no later check counts them again (their cells are
    garbage: "missing value" would be a wrong reason).
    """

    def __init__(self, n: int, frame: pd.DataFrame | None = None) -> None:
        self.keep = np.ones(n, dtype=bool)
        self.report = DropReport()
        self.counts: dict[str, int] = {}
        self.broken = np.zeros(n, dtype=bool)
        if frame is not None:
            self.broken = broken_rows(frame)
            self.drop(MERGED_ROWS_REASON, self.broken)

    def drop(self, reason: str, bad: np.ndarray) -> None:
        bad = np.asarray(bad, dtype=bool)
        if reason != MERGED_ROWS_REASON:
            bad = bad & ~self.broken
        if bad.any():
            self.report.add(reason, np.flatnonzero(bad) + 1)
            self.counts[reason] = int(bad.sum())
            self.keep &= ~bad

    def finite(self, label: str, values: np.ndarray) -> None:
        """Drop rows with NaN (missing) or ±inf in ``values`` (1-D, or 2-D: any column)."""
        v = values if values.ndim == 2 else values[:, None]
        self.drop(f"{label}: missing value", np.isnan(v).any(axis=1))
        self.drop(f"{label}: infinite value", np.isinf(v).any(axis=1))


def broken_rows(frame: pd.DataFrame) -> np.ndarray:
    """Boolean mask of the data rows the reader found broken (``frame.attrs["merged_rows"]``: several lines of the
    file read as one row because of an unbalanced quote); all False for other frames."""
    mask = np.zeros(len(frame), dtype=bool)
    rows = [m["row"] - 1 for m in frame.attrs.get("merged_rows") or () if 0 < m["row"] <= len(frame)]
    mask[rows] = True
    return mask


def reading_notes(frame: pd.DataFrame) -> list[ReadingNote]:
    """The reader's sentences on how the text was read, for a parser's messages: lines read as several-lines-in-
    one-row (an unbalanced quote; those rows are dropped), lines that were not UTF-8 in a UTF-8 file (read as
    Windows-1252) and a legacy encoding.  [] for a plain UTF-8 file (and for Parquet / npz / Excel)."""
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


def require_valid_rows(rows: RowFilter, *, source: str, columns: list[str], min_rows: int = 2) -> np.ndarray:
    """The ``keep`` mask of a parser's row bookkeeping, once every check has run.

    Computes the number of rows that passed all checks of ``rows``; when fewer than ``min_rows`` (default 2: too few
    for any metric or calibrator) remain it raises an :class:`InputError` naming ``source`` and ``columns``, the
    counts per drop reason and the first 1-based row numbers that were dropped.  Shared by the regression and the
    classification parsers; one partition of a larger data set is parsed with ``min_rows=0`` (its drops are counted,
    the data set as a whole is checked once every partition is read).
    """
    keep = rows.keep
    n_keep = int(keep.sum())
    if n_keep < min_rows:
        summary = "; ".join(f"{r}: {c}" for r, c in rows.counts.items()) or "none"
        raise InputError(
            f"only {n_keep} of {keep.size} row(s) are valid (at least {min_rows} are needed); rows dropped — {summary}",
            source=source,
            columns=columns,
            rows=sorted({int(r) for v in rows.report.reasons.values() for r in v[:5]})[:20],
            hint="fix the missing/invalid values listed, or check that the right columns are mapped",
        )
    return keep


_SPLIT_01_NAMES = frozenset({"split", "role", "split_role", "subset", "partition", "set", "is_test", "is_cal",
                             "is_calibration"})
_SPLIT_01_CAL = frozenset({"is_cal", "is_calibration"})
_TRUE = frozenset({"1", "true", "yes"})
_FALSE = frozenset({"0", "false", "no"})


def split_roles(values: np.ndarray, name: str, missing: str = "(missing)") -> tuple[np.ndarray, str] | None:
    """The per-row roles ``cal`` / ``test`` (/ ``train``) of a split column's values, or None when they are no roles.

    Values are roles when every distinct value is a role word — ``cal``, ``calib``, ``calibration``, ``val``,
    ``valid``, ``validation`` → ``cal``; ``test``, ``testing``, ``eval``, ``holdout`` → ``test``; ``train``,
    ``training``, ``fit`` → ``train`` (case-insensitive) — and one of cal/test occurs; or when they are 0/1
    (true/false) in a column named like a split (``split``, ``role``, ``is_test`` …): 1 = test, 0 = cal (``is_cal`` /
    ``is_calibration``: 1 = cal).  Anything else (fold numbers 0–4, site names) gives None: such a column is a
    group, not a split.  Returns the mapped values (``missing`` kept) and a sentence on any renaming ("" if none).
    """
    uniq = [str(u) for u in pd.unique(values) if str(u) != missing]
    if not uniq:
        return None
    low = {u: u.strip().lower() for u in uniq}
    words = {**SPLIT_SYNONYMS, **{w: "train" for w in SPLIT_TRAIN}}
    mapping: dict[str, str] | None = None
    note = ""
    if all(v in words for v in low.values()) and any(words[v] in ("cal", "test") for v in low.values()):
        mapping = {u: words[v] for u, v in low.items()}
        renamed = sorted(f"{k}→{v}" for k, v in mapping.items() if k != v)
        note = f"split values renamed: {', '.join(renamed[:10])}." if renamed else ""
    elif normalize_name(name) in _SPLIT_01_NAMES and set(low.values()) <= (_TRUE | _FALSE):
        one, zero = ("cal", "test") if normalize_name(name) in _SPLIT_01_CAL else ("test", "cal")
        mapping = {u: one if v in _TRUE else zero for u, v in low.items()}
        note = f"split column {name!r}: 1 read as {one}, 0 as {zero}."
    if mapping is None:
        return None
    mapping[missing] = missing
    return pd.Series(values).map(mapping).to_numpy(dtype=object), note


def _value_list(values: np.ndarray, k: int = 6) -> str:
    uniq = pd.unique(values)
    shown = ", ".join(str(u) for u in uniq[:k])
    return shown + (f", … ({len(uniq)} values)" if len(uniq) > k else "")


def row_label_columns(
    frame: pd.DataFrame, cols: Mapping[str, Any], src: str, used: Sequence[str]
) -> tuple[dict[str, str | None], np.ndarray | None, list[str]]:
    """Which columns are the split, group and model columns, the split's per-row roles, and notes on the choice.

    The mapping's choice is taken as given.  Found by name (``ALIASES``), a split column is taken only when its
    values are calibration/test roles (:func:`split_roles`); otherwise (e.g. ``fold`` 0–4) it becomes the group
    column when the file has none, and a note says so.  Returns ({role: column or None}, split roles or None, notes).
    """
    taken = list(used)
    names: dict[str, str | None] = {}
    notes: list[str] = []
    split_values: np.ndarray | None = None
    offered: str | None = None
    name = find_column(frame, "split", cols, source=src, exclude=taken)
    if name is not None:
        raw = label_values(frame, name)
        roles = split_roles(raw, name)
        if roles is not None:
            split_values, note = roles
            notes += [note] if note else []
        elif "split" in cols:  # the user's choice: values kept as they are
            split_values = raw
            notes.append(
                f"split values other than cal/test kept as they are: {sorted({str(v) for v in pd.unique(raw)})[:10]}."
            )
        else:
            offered, name = name, None
        if name is not None:
            taken.append(name)
    names["split"] = name
    for role in ("group", "model"):
        found = find_column(frame, role, cols, source=src, exclude=taken)
        if role == "group" and found is None and offered is not None and "group" not in cols:
            found = offered
            values = _value_list(label_values(frame, offered))
            notes.append(Message(
                f"column {offered!r} (values {values}) does not hold calibration/test roles (cal/test, 0/1 in a "
                "column named split or is_test), so it is read as a group, not as the split. If it is the split, "
                f"pass columns={{'split': '{offered}'}}.",
                f"column {offered!r} (values {values}) does not hold calibration/test roles (cal/test, 0/1 in a "
                "column named split or is_test), so it is read as a group, not as the split. If it is the split, "
                f"choose it as the split column under Column mapping above and load the file again.",
            ))
        elif role == "group" and offered is not None:
            notes.append(Message(
                f"column {offered!r} does not hold calibration/test roles and a group column exists: not used. "
                f"Pass columns={{'split': '{offered}'}} to use it as the split.",
                f"column {offered!r} does not hold calibration/test roles and a group column exists: not used. "
                "Choose it as the split column under Column mapping above to use it as the split.",
            ))
        names[role] = found
        if found is not None:
            taken.append(found)
    return names, split_values, notes


def row_labels(
    frame: pd.DataFrame, cols: Mapping[str, Any], src: str, used: list[str], messages: list[str]
) -> dict[str, np.ndarray | None]:
    """Optional split / group / model columns as string arrays (:func:`row_label_columns`; split roles cal/test).

    The columns taken are appended to ``used`` and the notes on the choice to ``messages``.
    """
    names, split_values, notes = row_label_columns(frame, cols, src, used)
    messages += notes
    out: dict[str, np.ndarray | None] = {}
    for role in ("split", "group", "model"):
        name = names[role]
        if name is not None:
            used.append(name)
        out[role] = None if name is None else label_values(frame, name)
    if names["split"] is not None:
        out["split"] = split_values
        unknown = sorted({str(v) for v in pd.unique(split_values)} - {"cal", "test", "train", "(missing)"})
        if unknown and "split" not in cols:
            messages.append(f"split values other than cal/test kept as they are: {unknown[:10]}.")
    return out


def unused_columns_note(frame: pd.DataFrame, used: Sequence[str]) -> str:
    """The loader's sentence on columns no role took ("" when every column is used); a pandas index is named."""
    ignored = [str(c) for c in frame.columns if c not in used]
    if not ignored:
        return ""
    index = [c for c in ignored if re.fullmatch(r"(?:Unnamed: 0|index|)", c)]
    note = f"columns not used: {name_list(ignored, 12)}"
    if index:
        note += f" ({index[0] or 'an unnamed column'!r} looks like a row index, as pandas writes it)"
    return note + "."


def guess_columns(frame: pd.DataFrame) -> dict[str, Any]:
    """What detection makes of a file's columns, as a ``columns=`` mapping plus ``"task"`` (for a mapping form).

    The same rules as the parsers (:func:`detect_task`, ``ALIASES``, :func:`find_score_columns`, the regression
    layout preference sample > quantile > gaussian, :func:`row_label_columns`), but never raising: a role that
    cannot be decided is left out.  Regression keys: ``y`` / ``error``, ``mean``, one of ``std`` / ``var`` /
    ``log_var`` / ``log_std`` / ``u95`` / ``quantiles`` (a list) / ``samples``; classification keys: ``label``,
    ``probs`` or ``logits`` (lists); both: ``split``, ``group``, ``model``.
    """
    task = detect_task(frame)
    out: dict[str, Any] = {"task": task}
    used: list[str] = []

    def take(role: str) -> str | None:
        try:
            name = find_column(frame, role, None, exclude=used)
        except InputError:
            return None
        if name is not None:
            used.append(name)
        return name

    if task == "classification":
        label = take("label")
        if label is None:
            norm = {c: normalize_name(c) for c in frame.columns}
            label = next((str(c) for alias in LABEL_FALLBACK for c, k in norm.items() if k == alias), None)
            if label is not None:
                used.append(label)
        if label is not None:
            out["label"] = label
        scores = find_score_columns(frame, exclude=used)
        kind = "logits" if len(scores["logits"]) >= 2 or (scores["logits"] and not scores["probs"]) else "probs"
        if scores[kind]:
            if all(cls.isdigit() for _, cls in scores[kind]):
                scores[kind].sort(key=lambda t: int(t[1]))
            out[kind] = [c for c, _ in scores[kind]]
            used += out[kind]
    else:
        y = take("y") or take("error")
        if y is not None:
            out["y" if normalize_name(y) in ALIASES["y"] else "error"] = y
        mean = take("mean") or take("point")
        if mean is not None:
            out["mean"] = mean
        try:
            samples = [c for c in find_sample_columns(frame) if c not in used]
            levels, quantiles = find_quantile_columns(frame)
        except InputError:
            samples, quantiles = [], []
        quantiles = [c for c in quantiles if c not in used]
        if len(samples) >= 2:
            out["samples"] = samples
        elif len(quantiles) >= 2:
            out["quantiles"] = quantiles
        else:
            for role in ("std", "var", "log_var", "log_std", "u95"):
                col = take(role)
                if col is not None:
                    out[role] = col
                    break
        used += out.get("samples", []) + out.get("quantiles", [])
    try:
        names, _, _ = row_label_columns(frame, {}, frame_source(frame, None), used)
    except InputError:
        names = {}
    out.update({role: name for role, name in names.items() if name is not None})
    return out


# ----------------------------------------------------------------------------------------------
# Columns kept for slices
# ----------------------------------------------------------------------------------------------

#: A numeric column with at most this many distinct values is a categorical slice column (its values are slices);
#: above it, a numeric one (cut into quantile bins).
SLICE_CATEGORICAL_MAX = 12
_INDEX_NAME = re.compile(r"(?:Unnamed: 0|index|)")


def column_kinds(frame: pd.DataFrame) -> dict[str, str]:
    """``{column: "numeric" | "categorical"}``: numeric when the dtype is a number (not boolean) with more than
    :data:`SLICE_CATEGORICAL_MAX` distinct values, categorical otherwise (text, booleans, few-valued codes)."""
    out = {}
    for c in frame.columns:
        values = frame[c]
        numeric = pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype)
        out[str(c)] = "numeric" if numeric and _more_values_than(values, SLICE_CATEGORICAL_MAX) else "categorical"
    return out


def _more_values_than(values: pd.Series, k: int) -> bool:
    """Whether ``values`` has more than k distinct non-missing values; the first 4,096 rows decide when they
    already have more (the full count only otherwise: same answer, without hashing every row of a wide feature)."""
    return bool(values.iloc[:4096].nunique(dropna=True) > k or values.nunique(dropna=True) > k)


def kept_rows(frame: pd.DataFrame, names: Sequence[str], keep: np.ndarray) -> pd.DataFrame:
    """Columns ``names`` of ``frame`` on the rows where ``keep`` (a boolean mask), index 0 … k−1.  When every row is
    kept the columns are not copied (copy-on-write: a later write to either frame copies then)."""
    keep = np.asarray(keep, dtype=bool)
    out = frame[list(names)] if keep.all() else frame.loc[keep, list(names)]
    return out.reset_index(drop=True)


def slice_columns(
    frame: pd.DataFrame, used: Sequence[str], keep: np.ndarray, messages: list[str],
) -> pd.DataFrame | None:
    """The columns no role took (features and any other column, row-index columns left out), on the kept rows, as
    candidate slice columns (``PredictionSet.slice_columns``); text columns that are entirely numbers become
    numbers.  Appends one message counting them by kind (:func:`column_kinds`); ``None`` when there is none."""
    names = [c for c in frame.columns if c not in used and not _INDEX_NAME.fullmatch(str(c))]
    if not names:
        return None
    out = kept_rows(frame, names, keep)
    out.columns = [str(c) for c in names]
    for c in out.columns:
        if out[c].dtype == object:
            conv = pd.to_numeric(out[c], errors="coerce")
            if conv.notna().sum() == out[c].notna().sum():
                out[c] = conv
    kinds = column_kinds(out)
    by_kind = {kind: [c for c, k in kinds.items() if k == kind] for kind in ("numeric", "categorical")}
    parts = [f"{len(cols)} {kind} ({name_list(cols, 6)})" for kind, cols in by_kind.items() if cols]
    messages.append(f"columns kept for slices: {', '.join(parts)}.")
    return out
