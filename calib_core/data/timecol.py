"""The time column of a prediction file: which column it is and how its cells are read.

* **Which column.**  The user's mapping ``columns={"time": "<name>"}`` (``None``: no time column), else the first
  column whose normalised name is one of :data:`TIME_ALIASES` (``time``, ``timestamp``, ``date``, ``datetime`` …),
  else a column whose dtype already is a date/time (Parquet, Excel) that no other role took.
* **How it is read** (:func:`parse_time`, :mod:`calib_core.data.timecol_cells`): date/time dtypes as they are
  (time-zone aware values converted to UTC); text through ``pandas.to_datetime`` — first with the format inferred
  from the cells (fast, vectorised), then the cells that failed one by one in mixed formats (zone-less cells beside
  zoned ones are taken as UTC, and a message says so); numbers as numbers (an epoch, a step or a period index:
  windows are then N equal spans of those numbers), except YYYYMMDD[HH] whole numbers in a column named like a
  time, which are dates.  Missing cells and cells that are no date/time are counted as dropped rows with their row
  numbers (reasons :data:`MISSING_REASON` and :data:`BAD_REASON`; dates before the year 1 or after 9999
  :data:`YEARS_REASON`), unless most cells of a *detected* column fail: then the column is not a time column and a
  message says so (a mapped column raises an ``InputError`` naming the column and the first bad rows).

**A time never moves.**  Values are ``datetime64[ns]`` (UTC, no zone) when every time fits in that unit (1677-09-21
to 2262-04-11), else ``datetime64[us]`` (the years 1 to 9999, exact to the microsecond;
:mod:`calib_core.data.timecol_units`), or numbers (``float64``; ``int64`` when a whole number is beyond 2⁵³);
:func:`time_kind` tells which.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError, Message
from .columns import name_list, normalize_name, resolve_column
from .rows import RowFilter
from .timecol_cells import (
    BAD_REASON,
    FINE_REASON,
    MISSING_REASON,
    NUMBER_REASON,
    SUBNS_REASON,
    YEARS_REASON,
    parse_cells,
    time_named,
)

__all__ = [
    "BAD_REASON",
    "FINE_REASON",
    "MISSING_REASON",
    "NUMBER_REASON",
    "SUBNS_REASON",
    "TIME_ALIASES",
    "YEARS_REASON",
    "find_time_column",
    "parse_time",
    "read_time",
    "time_kind",
    "time_named",
]

TIME_ALIASES = ("time", "timestamp", "date", "datetime", "date_time", "ts", "time_stamp", "event_time", "event_date",
                "created_at", "valid_time", "forecast_time", "issue_time", "day")
"""Normalised column names read as the time column, in priority order."""



def find_time_column(
    frame: pd.DataFrame, columns: Mapping[str, Any] | None, *, source: str | None = None,
    exclude: Sequence[str] = (),
) -> tuple[str | None, bool]:
    """The time column of a frame and whether the user mapped it (rules in the module docstring).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    columns : mapping or None
        The user's ``columns=`` mapping (``columns["time"]``: a name, or None for no time column).
    source : str, optional
        The file name for messages.
    exclude : sequence of str, default ()
        Columns already taken by other roles.

    Returns
    -------
    name : str or None
        The time column, or None.
    mapped : bool
        Whether the user's mapping chose it (or chose none).
    """
    if columns is not None and "time" in columns:
        name = columns["time"]
        return (None, True) if name is None else (resolve_column(frame, name, role="time", source=source), True)
    free = [c for c in frame.columns if c not in exclude]
    norm = {str(c): normalize_name(c) for c in free}
    for alias in TIME_ALIASES:
        for c in free:
            if norm[str(c)] == alias:
                return str(c), False
    for c in free:
        if pd.api.types.is_datetime64_any_dtype(frame[c].dtype):
            return str(c), False
    return None, False


def time_kind(values: np.ndarray | None) -> str | None:
    """``"datetime"`` for datetime64 values, ``"number"`` for numbers, None for no time column.

    Parameters
    ----------
    values : ndarray or None
        A time column's values (:func:`parse_time`).

    Returns
    -------
    str or None
        ``"datetime"``, ``"number"`` or None.
    """
    if values is None:
        return None
    return "datetime" if np.issubdtype(np.asarray(values).dtype, np.datetime64) else "number"


def parse_time(series: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values of a time column's cells, with the missing and the not-kept cells marked (vectorised).

    :func:`~calib_core.data.timecol_cells.parse_cells` with its reasons merged: date/time dtypes are kept (time-zone
    aware values converted to UTC); text goes through ``pandas.to_datetime``, first with the format inferred from the
    cells, then the cells that failed one by one in mixed formats; numbers (also written as text) stay numbers.
    Times are stored exactly (``datetime64[ns]`` when they all fit in it, else ``datetime64[us]``).

    Parameters
    ----------
    series : Series
        The column.

    Returns
    -------
    values : ndarray of shape (n,)
        ``datetime64[ns]`` or ``datetime64[us]`` (UTC, no zone), or numbers (float64, or int64 when some whole
        number is beyond 2⁵³).
    missing : ndarray of bool of shape (n,)
        Empty cells and NA spellings.
    bad : ndarray of bool of shape (n,)
        Filled cells not kept (no date/time, infinite numbers, years outside 1 to 9999, …).

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.timecol import parse_time
    >>> values, missing, bad = parse_time(pd.Series(["2026-01-31", "", "soon"]))
    >>> str(values[0]), missing.tolist(), bad.tolist()
    ('2026-01-31T00:00:00.000000000', [False, True, False], [False, False, True])
    """
    cells = parse_cells(series)
    return cells.values, cells.missing, cells.dropped


def read_time(
    frame: pd.DataFrame, columns: Mapping[str, Any] | None, src: str, used: list[str], rows: RowFilter,
    messages: list[str],
) -> np.ndarray | None:
    """The time column of a parser's frame (all rows), its missing and bad cells dropped through ``rows``.

    The column is appended to ``used`` and a sentence on it to ``messages``.  A *detected* column most of whose
    cells are no date/time is not used (a message says so); a *mapped* one raises.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    columns : mapping or None
        The user's ``columns=`` mapping.
    src : str
        The file name for messages.
    used : list of str
        Columns already taken by other roles; the time column is appended.
    rows : RowFilter
        The parser's row bookkeeping (drop reasons :data:`MISSING_REASON` and :data:`BAD_REASON`).
    messages : list of str
        The parser's messages; a sentence on the time column is appended.

    Returns
    -------
    ndarray of shape (n,) or None
        The time values of every row, or None when the file has no (usable) time column.

    Raises
    ------
    InputError
        A mapped time column more than half of whose filled cells are no date/time.
    """
    name, mapped = find_time_column(frame, columns, source=src, exclude=used)
    if name is None:
        return None
    cells = parse_cells(frame[name], name)
    values, missing, bad = cells.values, cells.missing, cells.bad
    present = int((~missing).sum())
    n_bad = int(bad.sum())
    if present == 0 or n_bad > present / 2:
        first = name_list((np.flatnonzero(bad) + 1).tolist(), 5)
        if mapped:
            raise InputError(
                f"time column {name!r}: {n_bad} of {present} filled cells are no date/time (rows {first})",
                source=src, columns=[name], rows=(np.flatnonzero(bad)[:20] + 1).tolist(),
                hint="map a column of dates/times (ISO 8601 such as 2026-01-31 or 2026-01-31T12:00) or numbers",
                app_hint="choose another time column under Column mapping (or none) and load the file again",
            )
        messages.append(Message(
            f"column {name!r} looks like a time column by its name but {n_bad} of {present} cells are no date/time: "
            "not used as time (map it with columns={'time': ...} to see the rows).",
            f"column {name!r} looks like a time column by its name but {n_bad} of {present} cells are no date/time: "
            "not used as time (choose it as the time column under Column mapping to see the rows)."))
        return None
    used.append(name)
    rows.drop(MISSING_REASON, missing)
    for reason, mask in cells.drops.items():  # not a date, years, finer than kept, too large a number
        rows.drop(reason, mask)
    messages.extend(cells.notes)
    kept = values[rows.keep & ~missing & ~cells.dropped]
    if kept.size:
        if time_kind(values) == "datetime":
            span = f"{pd.Timestamp(kept.min())} to {pd.Timestamp(kept.max())}"
            if np.datetime_data(values.dtype)[0] == "us":
                span += " (kept to the microsecond: times outside 1677-09-21 to 2262-04-11)"
        else:
            span = f"{kept.min():g} to {kept.max():g} (numbers)"
        messages.append(f"time from column {name!r}: {span}.")
    return values
