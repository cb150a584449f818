"""How times are stored, exactly, and the arithmetic on them that never wraps around.

**Storage.**  A time column's values are ``datetime64[ns]`` when every time lies in that unit's range
(1677-09-21 00:12:43.145224193 to 2262-04-11 23:47:16.854775807, what pandas used to hold all times in: data in that
range is stored as before), else ``datetime64[us]`` (exact to the microsecond; the loader accepts the years 1 to
9999, the years ISO 8601 writes with four digits).  Both are UTC without a zone.

**Exact decomposition.**  Every conversion goes through :func:`instants`: the microseconds since 1970-01-01 (int64,
floored) and the nanoseconds left over (0 … 999), computed with integer floor division — never NumPy's unit casts,
which wrap around silently at the ends of the nanosecond range (``datetime64[ns]`` of 1677-09-21 cast to ``[us]``
gives 2262).  :func:`from_instants` builds the stored values back (nanoseconds when every value fits, else
microseconds), :func:`floor_times` floors to whole days or hours, :func:`time_text` writes times as text for labels
(NumPy's ISO writer: four-digit years from 0001 to 9999), :func:`as_unit_of` puts computed bounds into the unit of
the data when they fit.
"""

from __future__ import annotations

import numpy as np

from ..base.predictions import InputError

__all__ = [
    "NS_RANGE",
    "US_PER",
    "YEARS",
    "as_unit_of",
    "far_dates_error",
    "fits_ns",
    "floor_times",
    "from_instants",
    "instants",
    "outside_ns",
    "time_text",
]

NAT = np.iinfo(np.int64).min
"""The int64 of NaT."""

US_PER = {"D": 86_400_000_000, "h": 3_600_000_000, "m": 60_000_000, "s": 1_000_000, "ms": 1_000, "us": 1}
"""Microseconds per unit of the coarser-than-nanosecond datetime64 units."""

_NS_MIN = NAT + 1
_NS_MAX = np.iinfo(np.int64).max
NS_RANGE = ((_NS_MIN // 1000, _NS_MIN % 1000), (_NS_MAX // 1000, _NS_MAX % 1000))
"""The ``datetime64[ns]`` range as (microseconds, nanoseconds left) of its first and its last instant."""

YEARS = (int(np.datetime64("0001-01-01", "us").astype(np.int64)), int(np.datetime64("10000-01-01", "us").astype(
    np.int64)))
"""Microseconds of 0001-01-01 and of 10000-01-01: the times the loader accepts lie in [YEARS[0], YEARS[1])."""


def instants(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Datetimes of any unit as microseconds since the epoch and the nanoseconds left, exactly (vectorised).

    us = ⌊t / 1 µs⌋, rem = t − us · 1 µs ∈ {0, …, 999} ns, by integer floor division of the stored int64 (finer
    units) or an overflow-checked product (coarser units: values beyond ±2⁶³ µs are marked as not valid).

    Parameters
    ----------
    values : ndarray of datetime64
        Times of any unit (``D``, ``h``, ``m``, ``s``, ``ms``, ``us``, ``ns``); NaT allowed.

    Returns
    -------
    us : ndarray of int64
        Microseconds since 1970-01-01 (0 where not valid).
    rem : ndarray of int64
        Nanoseconds left, 0 … 999 (0 where not valid).
    valid : ndarray of bool
        False for NaT and for times beyond the int64 microseconds.

    Examples
    --------
    >>> us, rem, ok = instants(np.array(["1677-09-21T00:12:43.145224193", "NaT"], dtype="datetime64[ns]"))
    >>> us.tolist(), rem.tolist(), ok.tolist()
    ([-9223372036854776, 0], [193, 0], [True, False])
    """
    v = np.asarray(values)
    if v.dtype.kind != "M":
        raise TypeError(f"datetime64 values expected, got {v.dtype}")
    unit, count = np.datetime_data(v.dtype)
    if unit in ("W", "M", "Y"):  # calendar units: whole days first (exact; days hold ±2.5e16 years)
        v = v.astype("datetime64[D]")
        unit, count = "D", 1
    i8 = np.ascontiguousarray(v).view(np.int64).ravel()
    valid = i8 != NAT
    if unit == "ns" and count == 1:
        us, rem = np.floor_divide(i8, 1000), np.mod(i8, 1000)
    elif unit in US_PER:
        factor = US_PER[unit] * int(count)
        limit = _NS_MAX // factor
        valid &= np.abs(np.where(valid, i8, 0)) <= limit
        us, rem = np.where(valid, i8, 0) * factor, np.zeros(i8.shape, dtype=np.int64)
    else:
        raise TypeError(f"datetime64 unit {count}{unit} is not supported for times")
    us = np.where(valid, us, 0).astype(np.int64)
    rem = np.where(valid, rem, 0).astype(np.int64)
    return us.reshape(v.shape), rem.reshape(v.shape), valid.reshape(v.shape)


def fits_ns(us: np.ndarray, rem: np.ndarray) -> np.ndarray:
    """Whether times given as (microseconds, nanoseconds left) fit in ``datetime64[ns]``, exactly at both ends.

    Parameters
    ----------
    us, rem : ndarray of int64
        :func:`instants`.

    Returns
    -------
    ndarray of bool
        True where (us, rem) lies in [1677-09-21 00:12:43.145224193, 2262-04-11 23:47:16.854775807].

    Examples
    --------
    >>> fits_ns(np.array([-9223372036854776, -9223372036854776]), np.array([193, 192])).tolist()
    [True, False]
    """
    (lo_us, lo_rem), (hi_us, hi_rem) = NS_RANGE
    return ((us > lo_us) | ((us == lo_us) & (rem >= lo_rem))) & ((us < hi_us) | ((us == hi_us) & (rem <= hi_rem)))


def from_instants(us: np.ndarray, rem: np.ndarray, valid: np.ndarray, *, unit: str | None = None) -> np.ndarray:
    """Stored times from (microseconds, nanoseconds left): ``datetime64[ns]`` when every valid time fits, else ``[us]``.

    Nanoseconds t = us · 1000 + rem, computed as (us + 1) · 1000 − (1000 − rem) below the epoch so that the first
    instant of the range does not overflow; in microseconds the nanoseconds left are floored away (callers that must
    be exact drop those cells first, :mod:`calib_core.data.timecol_cells`).

    Parameters
    ----------
    us, rem : ndarray of int64
        :func:`instants`.
    valid : ndarray of bool
        False: NaT.
    unit : {"ns", "us"}, optional
        Force a unit (``"ns"`` only when every valid time fits; checked).

    Returns
    -------
    ndarray of datetime64[ns] or datetime64[us]
        The times.

    Examples
    --------
    >>> us, rem, ok = instants(np.array(["1500-01-01", "2026-01-01"], dtype="datetime64[s]"))
    >>> from_instants(us, rem, ok).dtype, from_instants(us[1:], rem[1:], ok[1:]).dtype
    (dtype('<M8[us]'), dtype('<M8[ns]'))
    """
    us = np.asarray(us, dtype=np.int64)
    rem = np.asarray(rem, dtype=np.int64)
    valid = np.asarray(valid, dtype=bool)
    fits = fits_ns(us, rem) | ~valid
    if unit is None:
        unit = "ns" if bool(fits.all()) else "us"
    if unit == "ns":
        if not fits.all():
            raise ValueError("times beyond the datetime64[ns] range cannot be stored in nanoseconds")
        safe = np.where(valid, us, 0)
        ns = np.where(safe < 0, (safe + 1) * 1000 - (1000 - rem), safe * 1000 + rem)
        return np.where(valid, ns, NAT).astype(np.int64).view("datetime64[ns]")
    if unit != "us":
        raise ValueError(f"unit must be 'ns' or 'us', got {unit!r}")
    return np.where(valid, us, NAT).astype(np.int64).view("datetime64[us]")


def outside_ns(values: np.ndarray) -> np.ndarray:
    """Which times lie outside the ``datetime64[ns]`` range (1677-09-21 00:12:43.145224193 … 2262-04-11
    23:47:16.854775807): the times a nanosecond cast would wrap around (NaT: False).

    Parameters
    ----------
    values : ndarray of datetime64
        Times of any unit.

    Returns
    -------
    ndarray of bool
        True where the time does not fit in nanoseconds.

    Examples
    --------
    >>> outside_ns(np.array(["1500-01-01", "2026-01-01", "NaT"], dtype="datetime64[s]")).tolist()
    [True, False, False]
    """
    us, rem, ok = instants(values)
    return ok & ~fits_ns(us, rem)


def far_dates_error(column: str, examples: np.ndarray, count: int, source: str, rows: list[int]) -> InputError:
    """The error of a forecast hub's dates outside 1677-09-21 … 2262-04-11, which its tables hold in nanoseconds.

    Parameters
    ----------
    column : str
        The date column.
    examples : ndarray
        The distinct cells outside the range (the first three are named).
    count : int
        How many cells.
    source : str
        The file.
    rows : list of int
        1-based rows of those cells in the file.

    Returns
    -------
    InputError
        The error to raise (never a date moved to another year).
    """
    shown = ", ".join(repr(str(v)) for v in list(examples)[:3])
    first = ", ".join(str(r) for r in rows[:10]) + (" …" if len(rows) > 10 else "")
    return InputError(f"column {column!r}: {count} date(s) lie outside 1677-09-21 … 2262-04-11, the dates a forecast "
                      f"hub is read with (e.g. {shown}; rows {first})", source=source, columns=[column],
                      rows=list(rows[:20]), hint="check the years of these dates (YYYY-MM-DD)")


def as_unit_of(computed: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Computed times (window bounds, floored steps) in the unit of the data ``like`` when they fit, else as stored by
    :func:`from_instants` (microseconds when a bound lies beyond the nanosecond range).

    Parameters
    ----------
    computed : ndarray of datetime64
        The times to convert (any unit).
    like : ndarray of datetime64
        The data whose unit is preferred.

    Returns
    -------
    ndarray of datetime64
        ``computed``, exactly, in ``like``'s unit when possible.

    Examples
    --------
    >>> like = np.array(["2262-04-01"], dtype="datetime64[ns]")
    >>> as_unit_of(np.array(["2262-01-01", "2263-01-01"], dtype="datetime64[us]"), like).dtype
    dtype('<M8[us]')
    """
    us, rem, ok = instants(computed)
    want = np.datetime_data(np.asarray(like).dtype)[0]
    if want == "ns" and bool((fits_ns(us, rem) | ~ok).all()):
        return from_instants(us, rem, ok, unit="ns")
    if want == "us" and not bool(rem[ok].any()):
        return from_instants(us, rem, ok, unit="us")
    return from_instants(us, rem, ok)


def floor_times(values: np.ndarray, unit: str) -> np.ndarray:
    """Times floored to whole ``unit`` (``"D"``, ``"h"``, ``"m"``, ``"s"``), in the unit of the data when they fit.

    ⌊t / u⌋ · u with integer floor division of the microseconds (no overflow: a day floored below the first
    nanosecond instant, 1677-09-21 00:00, is stored in microseconds).

    Parameters
    ----------
    values : ndarray of datetime64
        The times.
    unit : {"D", "h", "m", "s"}
        The unit floored to.

    Returns
    -------
    ndarray of datetime64
        The floored times (NaT stays NaT).

    Examples
    --------
    >>> t = np.array(["1677-09-21T00:12:43.145224193"], dtype="datetime64[ns]")
    >>> floor_times(t, "D")
    array(['1677-09-21T00:00:00.000000'], dtype='datetime64[us]')
    """
    us, _, ok = instants(values)
    per = US_PER[unit]
    floored = np.floor_divide(us, per) * per
    return as_unit_of(from_instants(floored, np.zeros_like(floored), ok, unit="us"), values)


def time_text(values: np.ndarray, unit: str = "m") -> list[str]:
    """Times as text for labels: ``YYYY-MM-DD hh:mm`` (``unit="m"``), ``YYYY-MM-DD`` (``"D"``), ``YYYY-MM``
    (``"M"``), ``YYYY`` (``"Y"``), ``YYYY-MM-DD hh:00`` (``"h"``) — NumPy's ISO 8601 writer, four-digit years
    0001 … 9999 (``strftime`` writes year 1 as ``1``), floored, vectorised.

    Parameters
    ----------
    values : ndarray of datetime64
        The times.
    unit : {"m", "h", "D", "M", "Y"}, default "m"
        The last field written.

    Returns
    -------
    list of str
        One text per time.

    Examples
    --------
    >>> time_text(np.array(["0001-01-01T10:05", "9999-12-31T23:59"], dtype="datetime64[us]"))
    ['0001-01-01 10:05', '9999-12-31 23:59']
    """
    v = np.asarray(values)
    us, _, ok = instants(v)
    # through microseconds (exact, floored): NumPy's writer on [ns] near the range's ends is then never involved
    base = from_instants(us, np.zeros_like(us), ok, unit="us")
    if unit == "h":
        text = np.char.add(np.datetime_as_string(base, unit="h"), ":00")
    else:
        text = np.datetime_as_string(base, unit=unit)
    return np.char.replace(text.astype(str), "T", " ").tolist()
