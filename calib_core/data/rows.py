"""Rows of a prediction file: their values, and which are kept or dropped (counted, with the reason).

:func:`numeric_values` / :func:`numeric_block` turn column(s) into float arrays naming bad cells,
:func:`label_values` into shared strings (the split / group / model columns are read in
:mod:`calib_core.data.rows_labels`).  :class:`RowFilter` is a parser's row bookkeeping: each check drops rows
under a reason, counted in a ``DropReport`` (``n_read == n_rows + dropped.total``), and :func:`require_valid_rows`
refuses a file with too few valid rows.  Rows that a stray quote merged with the lines after it are found while
the text is read (:func:`merged_rows`, ``frame.attrs["merged_rows"]``) and dropped first, under
:data:`MERGED_ROWS_REASON` (:func:`broken_rows`).

Data rows are numbered from 1 (the first row after the header; blank lines are skipped); these are the
numbers in ``PredictionSet.row_number``, ``DropReport`` and every message.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import DropReport, InputError
from .columns import frame_source

__all__ = [
    "MERGED_ROWS_REASON",
    "RowFilter",
    "broken_rows",
    "label_values",
    "merged_rows",
    "numeric_block",
    "numeric_values",
    "require_valid_rows",
    "rows_text",
    "take_kept",
]


# ----------------------------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------------------------


_NA_SPELLINGS = ["na", "n/a", "nan", "-nan", "null", "none", "<na>", "#n/a", "#na", "#n/a n/a"]


def numeric_values(frame: pd.DataFrame, name: str, *, source: str | None = None, role: str | None = None) -> np.ndarray:
    """Column as float64 (missing → NaN); non-numeric cells raise ``InputError`` naming column and rows.

    Empty cells and the usual NA spellings (NA, NaN, null, …) are missing values, not errors; ``inf``
    and ``-inf`` are parsed (and later dropped as non-finite by the validators).  True/False cells are refused, never
    read as 1/0.  Rows the reader found broken (:func:`broken_rows`) read as missing whatever their cells hold.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    name : str
        The column.
    source : str, optional
        The file name for messages.
    role : str, optional
        The role the column plays, named in messages when it differs from the column name.

    Returns
    -------
    ndarray of shape (n,)
        The values as float64, NaN where missing.

    Raises
    ------
    InputError
        Non-numeric cells (the first rows and their values are named, and a delimiter or decimal mark found in them),
        or True/False values.
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
        text = idx.size > 0.5 * max(int(as_str.notna().sum()), 1)  # mostly text: labels or names, not typos
        raise InputError(
            f"column {name!r}{what} has non-numeric values in {idx.size} row(s) ({examples}"
            f"{', …' if idx.size > 3 else ''}){delim_note}",
            source=frame_source(frame, source),
            columns=[str(name)],
            rows=rows[:20],
            hint=(f"column {name!r} holds text: if it holds class labels, read the file as a classification file "
                  f"(task='classification', columns={{'label': '{name}'}}); otherwise map another column to this role"
                  if text else "correct those cells to numbers ('.' as decimal point, no thousands separators), or "
                  "map another column to this role"),
            app_hint=(f"column {name!r} holds text: if it holds class labels, choose Task: classification under "
                      f"Column mapping with {name!r} as the label column; otherwise choose another column for this "
                      "role there" if text else "correct those cells to numbers ('.' as decimal point, no thousands "
                      "separators), or choose another column for this role under Column mapping"),
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
    """Several columns as one float64 array, with the checks of :func:`numeric_values`.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    names : sequence of str
        The columns, in the order of the output's columns.
    source : str, optional
        The file name for messages.
    role : str, optional
        The role the columns play (``"samples"``, ``"probs"`` …), named in messages.

    Returns
    -------
    ndarray of shape (n, len(names))
        The values, NaN where missing.

    Raises
    ------
    InputError
        As :func:`numeric_values`, for the first bad column.
    """
    sub = frame[list(names)]
    if all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_complex_dtype(t)
           and not pd.api.types.is_bool_dtype(t) for t in sub.dtypes):
        return sub.to_numpy(dtype=float, na_value=np.nan)
    return np.column_stack([numeric_values(frame, n, source=source, role=role) for n in names])


def label_values(frame: pd.DataFrame, name: str, missing: str = "(missing)") -> np.ndarray:
    """Column as an object array of stripped strings (integral floats written without '.0'; NaN → ``missing``).

    Rows the reader found broken (several lines read as one row, :func:`broken_rows`) read as ``missing``: their
    cells are fragments of other rows, and a split column's roles are judged without them.  Strings are made once per
    distinct value and shared by code (a per-row conversion of 10⁷ labels would build 10⁷ str objects).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    name : str
        The column.
    missing : str, default "(missing)"
        The label of missing (and empty) cells.

    Returns
    -------
    ndarray of object of shape (n,)
        One string per row.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from calib_core.data.rows import label_values
    >>> label_values(pd.DataFrame({"g": [1.0, 2.0, np.nan]}), "g").tolist()
    ['1', '2', '(missing)']
    """
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
# Row bookkeeping shared by the per-task parsers
# ----------------------------------------------------------------------------------------------


MERGED_ROWS_REASON = "a quote opens and closes lines later: several lines read as one row"
"""The drop reason of a data row that holds a line break inside a cell (``frame.attrs["merged_rows"]``)."""


class RowFilter:
    """Row bookkeeping of a parser: accumulates drop reasons; the mask ``keep`` is the AND of all checks.

    Given the frame, rows the reader found broken (several lines read as one row, ``frame.attrs["merged_rows"]``)
    are dropped first, under :data:`MERGED_ROWS_REASON`, and no later check counts them again (their cells are
    garbage: "missing value" would be a wrong reason).

    Parameters
    ----------
    n : int
        Number of data rows.
    frame : DataFrame, optional
        The table read from the file, whose broken rows are dropped at once.

    Attributes
    ----------
    keep : ndarray of bool of shape (n,)
        The rows that passed every check so far.
    report : DropReport
        Reason → 1-based row numbers of the dropped rows.
    counts : dict of str to int
        Reason → number of rows dropped for it.
    broken : ndarray of bool of shape (n,)
        The rows the reader found broken.

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.data.rows import RowFilter
    >>> rows = RowFilter(4)
    >>> rows.finite("std", np.array([1.0, np.nan, 2.0, np.inf]))
    >>> rows.keep.tolist(), rows.counts
    ([True, False, True, False], {'std: missing value': 1, 'std: infinite value': 1})
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
        """Drop the rows where ``bad`` under ``reason`` (rows already dropped as broken are not counted again).

        Parameters
        ----------
        reason : str
            The drop reason, as shown in ``PredictionSet.dropped``.
        bad : ndarray of bool of shape (n,)
            The rows that fail the check.
        """
        bad = np.asarray(bad, dtype=bool)
        if reason != MERGED_ROWS_REASON:
            bad = bad & ~self.broken
        if bad.any():
            self.report.add(reason, np.flatnonzero(bad) + 1)
            self.counts[reason] = int(bad.sum())
            self.keep &= ~bad

    def finite(self, label: str, values: np.ndarray) -> None:
        """Drop rows with NaN (missing) or ±inf in ``values`` (1-D, or 2-D: any column).

        Parameters
        ----------
        label : str
            The column or role, the start of the reasons ``"<label>: missing value"`` / ``"<label>: infinite value"``.
        values : ndarray of shape (n,) or (n, k)
            The values checked.
        """
        v = values if values.ndim == 2 else values[:, None]
        self.drop(f"{label}: missing value", np.isnan(v).any(axis=1))
        self.drop(f"{label}: infinite value", np.isinf(v).any(axis=1))


def broken_rows(frame: pd.DataFrame) -> np.ndarray:
    """Boolean mask of the data rows the reader found broken.

    Broken rows are those of ``frame.attrs["merged_rows"]``: several lines of the file read as one row because of an
    unbalanced quote (:func:`merged_rows`).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.

    Returns
    -------
    ndarray of bool of shape (n,)
        True on the broken rows; all False for frames without that attribute.
    """
    mask = np.zeros(len(frame), dtype=bool)
    rows = [m["row"] - 1 for m in frame.attrs.get("merged_rows") or () if 0 < m["row"] <= len(frame)]
    mask[rows] = True
    return mask


def rows_text(idx: np.ndarray, k: int = 10) -> str:
    """1-based row numbers of 0-based row indices as text, the first ``k`` of them (`` …`` when there are more).

    Parameters
    ----------
    idx : ndarray of int
        0-based row indices.
    k : int, default 10
        How many are shown.

    Returns
    -------
    str
        ``"1, 4, 9"``; ``"1, 2, 3 …"`` when there are more than ``k``.
    """
    r = (np.asarray(idx) + 1).tolist()
    return ", ".join(map(str, r[:k])) + (" …" if len(r) > k else "")


def require_valid_rows(rows: RowFilter, *, source: str, columns: list[str], min_rows: int = 2) -> np.ndarray:
    """The ``keep`` mask of a parser's row bookkeeping, once every check has run.

    Computes the number of rows that passed all checks of ``rows``; when fewer than ``min_rows`` (default 2: too few
    for any metric or calibrator) remain it raises.  Shared by the regression and the classification parsers; one
    partition of a larger data set is parsed with ``min_rows=0`` (its drops are counted, the data set as a whole is
    checked once every partition is read).

    Parameters
    ----------
    rows : RowFilter
        The parser's row bookkeeping.
    source : str
        The file name for the message.
    columns : list of str
        The columns used, named in the message.
    min_rows : int, default 2
        The fewest valid rows accepted.

    Returns
    -------
    ndarray of bool of shape (n,)
        ``rows.keep``.

    Raises
    ------
    InputError
        Fewer than ``min_rows`` valid rows; the message gives the counts per drop reason and the first 1-based row
        numbers that were dropped.
    """
    keep = rows.keep
    n_keep = int(keep.sum())
    if n_keep < min_rows and not rows.counts:  # nothing dropped: the file itself is that small
        raise InputError(
            f"the file has {keep.size} data row(s); a diagnosis needs at least {min_rows}",
            source=source,
            columns=columns,
            hint=f"use a file with at least {min_rows} rows of predictions and targets (e.g. every test-set row)",
        )
    if n_keep < min_rows:
        summary = "; ".join(f"{r}: {c}" for r, c in rows.counts.items())
        raise InputError(
            f"only {n_keep} of {keep.size} row(s) are valid (at least {min_rows} are needed); rows dropped — {summary}",
            source=source,
            columns=columns,
            rows=sorted({int(r) for v in rows.report.reasons.values() for r in v[:5]})[:20],
            hint="fix the missing/invalid values listed, or check that the right columns are mapped",
        )
    return keep


def merged_rows(frame: pd.DataFrame, body: str, delim: str, n_skipped: int) -> list[dict[str, Any]]:
    """Data rows that hold a line break inside a cell, with the lines of the file they span.

    A quote that opens and is closed lines later (an unbalanced quote closed by the next stray one) makes the parser
    read every line in between as part of one cell, so an 11-line file yields 7 rows.

    Cheap when nothing is wrong: without a quote in the text, or with no more line breaks than rows + header,
    no cell can hold one and nothing is scanned; otherwise the text columns are searched (vectorised) and the
    lines of the few rows found are counted with the ``csv`` module up to the last of them.

    Parameters
    ----------
    frame : DataFrame
        The table parsed from ``body``.
    body : str
        The text after the leading comment lines.
    delim : str
        The delimiter (``"whitespace"`` for runs of spaces).
    n_skipped : int
        The number of comment lines before the header (added to the line numbers).

    Returns
    -------
    list of dict
        One entry per broken row: ``row`` (1-based data row), ``column``, ``first_line`` and ``last_line`` (1-based
        lines of the file; 0 when they cannot be told).
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


def take_kept(values: np.ndarray | None, keep: np.ndarray, all_kept: bool | None = None) -> np.ndarray | None:
    """The kept rows of ``values``: ``values[keep]``, or — when every row is kept — ``values`` itself (made writeable
    when it is a read-only view of a frame the loader owns), so a file without dropped rows is not copied again.

    Parameters
    ----------
    values : ndarray or None
        One value (or row of values) per data row.
    keep : ndarray of bool of shape (n,)
        The kept rows.
    all_kept : bool, optional
        ``keep.all()``, when the caller knows it.

    Returns
    -------
    ndarray or None
        The kept rows (None for None).

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.data.rows import take_kept
    >>> a = np.arange(3.0)
    >>> take_kept(a, np.array([True, True, True])) is a, take_kept(a, np.array([True, False, True])).tolist()
    (True, [0.0, 2.0])
    """
    if values is None:
        return None
    if not (bool(keep.all()) if all_kept is None else all_kept):
        return values[keep]
    if not values.flags.writeable:
        try:
            values.flags.writeable = True  # a view pandas marked read-only; its frame is dropped by the loader
        except ValueError:
            return values.copy()
    return values
