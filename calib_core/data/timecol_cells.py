"""The cells of a time column, read so that a time never moves: each cell is kept exactly or counted as dropped.

:func:`parse_cells` reads a column (vectorised; the second pass of odd formats goes cell by cell inside pandas):

* **date/time dtypes** (Parquet ``timestamp[s|ms|us|ns]`` with or without a zone, ``date32``/``date64``, Excel): the
  stored instant, a zone converted to UTC;
* **text**: ``pandas.to_datetime`` with the format inferred from the cells, then the cells that failed in mixed
  formats, then (when the first passes had to use nanoseconds) the cells still failing on their own.  A cell must
  write its year with four digits (``March``, ``Jan 5`` or ``10:30`` alone are no instant: pandas would fill in the
  year 1 or today's date).  A cell with a
  zone (``Z``, ``UTC``, ``GMT``, ``+01:00``, ``-0530`` after a time) is converted to UTC; a cell without one is taken
  as UTC wall time.  When a column holds both, a note says how many cells (which rows) had no zone and were taken
  as UTC, and which offsets the others had;
* **numbers** (also written as text) stay numbers: float64 when every value is exactly a float (|whole numbers| ≤
  2⁵³), else int64 (epochs in nanoseconds keep their last digits);
* **YYYYMMDD[HH] integers** in a column *named* like a time (:func:`time_named`: ``date``, ``time``,
  ``init_date`` …; never a guess on another name) whose filled cells all have 8 (or all 10) digits and are all
  valid dates (and hours 00–23) are read as those times; if some are not, the column stays numbers and a note
  names the first rows that are no date.

Every time is then stored by :mod:`calib_core.data.timecol_units` (``datetime64[ns]`` when every time fits in it,
else ``datetime64[us]``).  Cells that are not kept are counted under their reason: :data:`MISSING_REASON`,
:data:`BAD_REASON`, :data:`YEARS_REASON` (a date before the year 1 or after 9999), :data:`FINE_REASON` (digits below
the microsecond in a column whose other times need microseconds), :data:`NUMBER_REASON` (a whole number too large to
keep exactly), :data:`SUBNS_REASON` (non-zero digits beyond the ninth of a second's fraction).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.predictions import ReadingNote
from .columns import name_list, normalize_name
from .timecol_units import YEARS, fits_ns, from_instants, instants

__all__ = [
    "BAD_REASON",
    "FINE_REASON",
    "MISSING_REASON",
    "NUMBER_REASON",
    "SUBNS_REASON",
    "YEARS_REASON",
    "TimeCells",
    "parse_cells",
    "time_named",
    "yyyymmdd_times",
]

MISSING_REASON = "time: missing value"
BAD_REASON = "time: not a date/time"
YEARS_REASON = "time: outside the years 1 to 9999"
FINE_REASON = "time: digits below the microsecond in a column with dates outside 1677-09-21 to 2262-04-11"
NUMBER_REASON = "time: whole number too large to keep exactly"
SUBNS_REASON = "time: finer than a nanosecond"

NA_TEXT = ("", "na", "nan", "nat", "null", "none", "n/a", "-")
"""Texts read as a missing time (case-insensitive)."""

TIME_WORDS = frozenset({"time", "date", "datetime", "timestamp", "ts", "day", "yyyymmdd", "yyyymmddhh"})
"""Words of a column name (split at ``_``) that make it named like a time."""

_ZONE = re.compile(r"(?:\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?|T\d{2}|T\d{4,6}(?:[.,]\d+)?)\s*"
                   r"(?P<zone>Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)$", re.IGNORECASE)
_FINE = re.compile(r"(\d{2}:\d{2}:\d{2}[.,]\d{6})\d+")
_FRACTION = re.compile(r"\d{2}:\d{2}:\d{2}[.,](\d+)")
_INT = re.compile(r"^[+-]?\d+$")
_YEAR = re.compile(r"\d{4}")
_EXACT = 2.0**53


@dataclass
class TimeCells:
    """The cells of a time column as read by :func:`parse_cells`.

    Attributes
    ----------
    values : ndarray of shape (n,)
        ``datetime64[ns]`` or ``datetime64[us]`` (UTC, no zone; NaT where not kept), or float64 / int64 numbers.
    missing : ndarray of bool of shape (n,)
        Empty cells and NA spellings.
    drops : dict of str to ndarray of bool
        Reason → the filled cells not kept for it (:data:`BAD_REASON`, :data:`YEARS_REASON`, …).
    notes : list of ReadingNote
        Sentences on how the cells were read, shown by the CLI too (zone-less cells taken as UTC; YYYYMMDD-like
        numbers kept as numbers).
    """

    values: np.ndarray
    missing: np.ndarray
    drops: dict[str, np.ndarray] = field(default_factory=dict)
    notes: list[ReadingNote] = field(default_factory=list)

    @property
    def bad(self) -> np.ndarray:
        """Filled cells that are no date/time at all (the count that decides whether a column is a time column)."""
        return self.drops.get(BAD_REASON, np.zeros(self.missing.shape, dtype=bool))

    @property
    def dropped(self) -> np.ndarray:
        """Filled cells not kept, for any reason."""
        out = np.zeros(self.missing.shape, dtype=bool)
        for mask in self.drops.values():
            out |= mask
        return out


def time_named(name: object) -> bool:
    """Whether a column is named like a time: its normalised name, or one of its ``_``-separated words, is a time word.

    Parameters
    ----------
    name : object
        The column name.

    Returns
    -------
    bool
        True for ``date``, ``Date``, ``init_time``, ``valid-date``, ``timestamp`` …; False for ``when``, ``t``.

    Examples
    --------
    >>> time_named("Init date"), time_named("valid_time"), time_named("station")
    (True, True, False)
    """
    norm = normalize_name(name)
    return norm in TIME_WORDS or bool(TIME_WORDS.intersection(norm.split("_")))


def _rows(mask: np.ndarray, k: int = 5) -> str:
    return name_list((np.flatnonzero(mask) + 1).tolist(), k)


def _store(us: np.ndarray, rem: np.ndarray, ok: np.ndarray, drops: dict[str, np.ndarray]) -> np.ndarray:
    """Times kept exactly: the years 1 … 9999; nanoseconds unless a kept time lies outside their range — then
    microseconds, and the cells with digits below the microsecond are dropped (never rounded)."""
    years = ok & ((us < YEARS[0]) | (us >= YEARS[1]))
    ok = ok & ~years
    far = ok & ~fits_ns(us, rem)
    fine = far & (rem != 0)  # too far for nanoseconds, too fine for microseconds
    if (far & ~fine).any():  # the column needs microseconds
        fine = ok & (rem != 0)
    if fine.any():
        drops[FINE_REASON] = fine
        ok = ok & ~fine
    drops[YEARS_REASON] = years
    return from_instants(us, rem, ok)


def _datetimes(s: pd.Series) -> TimeCells:
    if getattr(s.dt, "tz", None) is not None:
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    raw = s.to_numpy()
    us, rem, ok = instants(raw)
    missing = np.isnat(raw)
    drops: dict[str, np.ndarray] = {BAD_REASON: ~ok & ~missing}  # beyond ±2⁶³ µs (datetime64[s] of far years)
    values = _store(us, rem, ok, drops)
    return TimeCells(values, missing, drops)


def _parse(cells: pd.Series, **kwargs) -> pd.Series:
    with warnings.catch_warnings():  # "could not infer format": the cells are then parsed one by one, as intended
        warnings.simplefilter("ignore", UserWarning)
        return pd.to_datetime(cells, errors="coerce", utc=True, **kwargs)


def _instants_of(parsed: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return instants(parsed.dt.tz_localize(None).to_numpy())


def _text_times(text: pd.Series, missing: np.ndarray, name: object) -> TimeCells:
    cells = text.where(~missing)
    n = len(cells)
    us, rem, ok = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    parsed = _parse(cells)
    us[:], rem[:], ok[:] = _instants_of(parsed)
    failed = ~ok & ~missing
    units = {parsed.dt.unit}
    if failed.any():  # other formats among the cells: retry those one by one
        again = _parse(cells[failed], format="mixed")
        us[failed], rem[failed], ok[failed] = _instants_of(again)
        units.add(again.dt.unit)
    failed = ~ok & ~missing
    if failed.any() and "ns" in units:
        # a pass in nanoseconds (a cell with 7-9 fraction digits) misses dates outside 1677-2262: those on their own
        us[failed], rem[failed], ok[failed] = _instants_of(_parse(cells[failed], format="mixed"))
    drops: dict[str, np.ndarray] = {}
    # 7+ fraction digits: pandas keeps them only when it parses in nanoseconds (some paths cut them to the
    # microsecond, and a date outside 1677-2262 does not parse at all): the written digits 7-9 are taken from the text
    frac = text.where(~missing).str.extract(_FRACTION)[0]
    long = (frac.str.len().fillna(0).to_numpy() > 6) & ~missing
    if long.any():
        lost = long & ~ok
        if lost.any():
            cut = text.where(lost).str.replace(_FINE, r"\1", regex=True)
            us[lost], _, ok[lost] = _instants_of(_parse(cut[lost], format="mixed"))
        rem[long & ok] = frac[long & ok].str.slice(6, 9).str.ljust(3, "0").astype(int).to_numpy()
        beyond = long & ok & (frac.str.slice(9).str.strip("0").str.len().fillna(0).to_numpy() > 0)
        drops[SUBNS_REASON] = beyond
        ok &= ~beyond
    # a cell without a four-digit year ("March", "Jan 5", "10:30") is no instant: pandas would fill in the year 1 or
    # today's date
    ok &= text.str.contains(_YEAR, na=False).to_numpy(dtype=bool)
    drops[BAD_REASON] = ~ok & ~missing & ~drops.get(SUBNS_REASON, np.zeros(n, dtype=bool))
    values = _store(us, rem, ok, drops)
    kept = ~np.isnat(values)
    zone = text.where(kept).str.extract(_ZONE)["zone"]
    zoned = zone.notna().to_numpy()
    notes = []
    if (kept & zoned).any() and (kept & ~zoned).any():
        naive = kept & ~zoned
        offsets = name_list(sorted({z.upper() for z in zone.dropna().unique()}), 4)
        notes.append(ReadingNote(
            f"time column {str(name)!r}: {int(naive.sum())} cells have no time zone (rows {_rows(naive)}) and were "
            f"taken as UTC; the other {int((kept & zoned).sum())} cells carry a zone ({offsets}) and were converted "
            "to UTC. Write the zone in every cell if UTC is not the time of the others."))
    return TimeCells(values, missing, drops, notes)


def yyyymmdd_times(numbers: np.ndarray, present: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, int]:
    """YYYYMMDD or YYYYMMDDHH whole numbers as times (vectorised), and which filled cells are no such date.

    For 8 digits v: year ⌊v/10⁴⌋, month ⌊v/10²⌋ mod 10², day v mod 10²; 10 digits: hour v mod 10², the rest as 8.
    Every filled cell must have the same number of digits (8 or 10).

    Parameters
    ----------
    numbers : ndarray of float64 or int64
        The column's numbers.
    present : ndarray of bool
        The filled cells.

    Returns
    -------
    times : ndarray of datetime64[us] or None
        The times (NaT where not filled) when every filled cell is such a date, else None.
    not_dates : ndarray of bool
        Filled cells that have the digits but are no valid date or hour (all False when the digits do not match).
    digits : int
        8 or 10 when every filled cell has that many digits, else 0.

    Examples
    --------
    >>> t, bad, digits = yyyymmdd_times(np.array([2004010100.0, 2004022823.0]), np.array([True, True]))
    >>> np.datetime_as_string(t, unit="h").tolist(), bad.tolist(), digits
    (['2004-01-01T00', '2004-02-28T23'], [False, False], 10)
    """
    v = np.asarray(numbers)
    present = np.asarray(present, dtype=bool)
    none = np.zeros(v.shape, dtype=bool)
    if not present.any():
        return None, none, 0
    with np.errstate(invalid="ignore"):
        f = v.astype(float)
        whole = present & np.isfinite(f) & (f == np.floor(f))
    if not bool(whole[present].all()):
        return None, none, 0
    iv = np.where(present, v, 0).astype(np.int64)
    lengths = [d for d, lo in ((8, 10**7), (10, 10**9)) if bool(((iv[present] >= lo) & (iv[present] < 10 * lo)).all())]
    if not lengths:
        return None, none, 0
    digits = lengths[0]
    hour = iv % 100 if digits == 10 else np.zeros_like(iv)
    ymd = iv // 100 if digits == 10 else iv
    year, month, day = ymd // 10_000, (ymd // 100) % 100, ymd % 100
    months = (np.clip(year, 1, 9999) - 1970) * 12 + np.clip(month, 1, 12) - 1
    first = months.astype("datetime64[M]").astype("datetime64[D]")
    length = ((months + 1).astype("datetime64[M]").astype("datetime64[D]") - first).astype(np.int64)
    valid = (month >= 1) & (month <= 12) & (day >= 1) & (day <= length) & (hour <= 23)
    not_dates = present & ~valid
    if not_dates.any():
        return None, not_dates, digits
    days = first + np.maximum(day - 1, 0).astype("timedelta64[D]")
    times = days.astype("datetime64[us]") + hour.astype("timedelta64[h]")
    return np.where(present, times, np.datetime64("NaT", "us")), none, digits


def _numbers(num: pd.Series, missing: np.ndarray, text: pd.Series | None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Numbers kept exactly: float64 when every value is a float exactly, else int64 (too large ones dropped)."""
    n = len(num)
    drops: dict[str, np.ndarray] = {}
    big = np.zeros(n, dtype=bool)
    dtype = num.dtype
    if pd.api.types.is_integer_dtype(dtype):
        if pd.api.types.is_unsigned_integer_dtype(dtype):
            u = num.to_numpy(dtype="float64", na_value=np.nan)
            big = ~missing & (u >= 2.0**63)
        if big.any():
            num = num.where(~big)
        ints = num.astype("Int64").to_numpy(dtype=np.int64, na_value=0)
        if bool((np.abs(ints[~missing & ~big].astype(float)) <= _EXACT).all()):
            values: np.ndarray = num.to_numpy(dtype=float, na_value=np.nan)
        else:
            values = ints
    else:
        values = num.to_numpy(dtype=float, na_value=np.nan)
        if text is not None:  # whole numbers written as text beside fractions, or beyond int64: no exact float
            written_int = text.str.match(_INT, na=False).to_numpy(dtype=bool)
            big = ~missing & written_int & (np.abs(values) >= _EXACT)
            if big.any():  # from 2⁵³ on, a whole number is kept only if its float is that very integer
                ints = pd.to_numeric(text[big], errors="coerce")
                f = values[big]
                if ints.dtype == np.int64:
                    within = np.abs(f) < 2.0**63
                    big[big] = ~(within & (np.where(within, f, 0).astype(np.int64) == ints.to_numpy()))
    if big.any():
        drops[NUMBER_REASON] = big
    drops[BAD_REASON] = np.isinf(values.astype(float)) & ~missing & ~big
    return values, drops


def parse_cells(series: pd.Series, name: object = None) -> TimeCells:
    """The cells of a time column, each kept exactly or marked with the reason it is not (module docstring).

    Parameters
    ----------
    series : Series
        The column.
    name : object, optional
        The column's name (default ``series.name``): YYYYMMDD[HH] numbers are read as times only in a column named
        like a time (:func:`time_named`), and notes name the column.

    Returns
    -------
    TimeCells
        Values, missing cells, dropped cells by reason, notes.

    Examples
    --------
    >>> cells = parse_cells(pd.Series(["1500-01-01", "2026-01-31", "", "soon"], name="date"))
    >>> str(cells.values[0]), cells.values.dtype, cells.missing.tolist(), cells.bad.tolist()
    ('1500-01-01T00:00:00.000000', dtype('<M8[us]'), [False, False, True, False], [False, False, False, True])
    """
    name = series.name if name is None else name
    s = series
    n = len(s)
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype(object)
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return _datetimes(s)
    if pd.api.types.is_bool_dtype(s.dtype):
        v = np.full(n, np.datetime64("NaT"), dtype="datetime64[ns]")
        return TimeCells(v, np.zeros(n, dtype=bool), {BAD_REASON: np.ones(n, dtype=bool)})
    text = None
    if pd.api.types.is_numeric_dtype(s.dtype):
        num = s
        missing = s.isna().to_numpy(dtype=bool)
    else:
        text = s.astype("string").str.strip()
        missing = (text.isna() | text.str.lower().isin(NA_TEXT)).to_numpy(dtype=bool)
        num = pd.to_numeric(text.where(~missing), errors="coerce")
        if not (num.notna().sum() == (~missing).sum() and (~missing).any()):  # not all numbers: dates
            return _text_times(text, missing, name)
        text = text.where(~missing)
    values, drops = _numbers(num, missing, text)
    notes: list[ReadingNote] = []
    if time_named(name) and values.dtype.kind in "fi":
        present = ~missing & ~drops[BAD_REASON] & ~drops.get(NUMBER_REASON, np.zeros(n, dtype=bool))
        times, not_dates, digits = yyyymmdd_times(values, present)
        if times is not None:
            us, rem, ok = instants(times)
            return TimeCells(_store(us, rem, ok, drops), missing, drops, [ReadingNote(
                f"time column {str(name)!r}: {'YYYYMMDDHH' if digits == 10 else 'YYYYMMDD'} numbers read as "
                "dates/times (UTC).")])
        if not_dates.any():
            form = "YYYYMMDDHH" if digits == 10 else "YYYYMMDD"
            first = name_list([str(int(x)) for x in values[not_dates][:3]], 3)
            notes.append(ReadingNote(
                f"time column {str(name)!r} holds {form} numbers but {int(not_dates.sum())} of its "
                f"{int(present.sum())} are no valid date (rows {_rows(not_dates)}: {first}): the column is read as "
                "numbers, not as dates."))
    return TimeCells(values, missing, drops, notes)
