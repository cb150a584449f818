"""Fuzzing the time parser (``calib_core.data.timecol_cells.parse_cells``): a time never moves.

Cells are drawn from their parts — a year 1 … 9999, month, day, hour, minute, second, 0 … 9 fraction digits, no
zone / ``Z`` / ``UTC`` / an offset of ±14 h, ISO 8601 with ``T`` or a space, or a date alone — so the instant each
cell writes is known exactly (Python integers: microseconds since 1970 and the nanoseconds left).  The invariant:
every filled cell is either kept as exactly that instant (zone-less cells as UTC wall time) or counted as dropped with
a reason that holds for it (a year outside 1 … 9999 once the offset is applied, digits below the microsecond in a
column that needs microseconds); a note says so when zoned and zone-less cells are kept together.  Arbitrary text,
numbers (integers to ±2⁶³, floats, both also written as text) and mixtures never raise, and every cell is kept,
missing or dropped.  ``derandomize=True`` and no example database: the same cases each run; a bigger run is marked
slow.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.data.timecol_cells import (
    BAD_REASON,
    FINE_REASON,
    MISSING_REASON,
    NUMBER_REASON,
    SUBNS_REASON,
    YEARS_REASON,
    parse_cells,
)
from calib_core.data.timecol_units import YEARS, instants

EPOCH = dt.date(1970, 1, 1).toordinal()
US_DAY = 86_400_000_000


def _settings(n: int):
    return settings(max_examples=n, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def written_time(draw) -> tuple[str, int | None, bool]:
    """A cell and the instant it writes: (text, nanoseconds since 1970 as a Python int or None, zoned)."""
    year = draw(st.integers(1, 9999))
    month = draw(st.integers(1, 12))
    day = draw(st.integers(1, [31, 29 if (year % 4 == 0 and (year % 100 or year % 400 == 0)) else 28, 31, 30, 31,
                                   30, 31, 31, 30, 31, 30, 31][month - 1]))
    date = f"{year:04d}-{month:02d}-{day:02d}"
    ns = (dt.date(year, month, day).toordinal() - EPOCH) * US_DAY * 1000
    if draw(st.booleans()):
        return date, ns, False
    hour, minute, second = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    text = f"{date}{draw(st.sampled_from(['T', ' ']))}{hour:02d}:{minute:02d}:{second:02d}"
    ns += ((hour * 60 + minute) * 60 + second) * 10**9
    digits = draw(st.integers(0, 9))
    if digits:
        frac = draw(st.integers(0, 10**digits - 1))
        text += f".{frac:0{digits}d}"
        ns += frac * 10 ** (9 - digits)
    zone = draw(st.sampled_from(["none", "none", "Z", "UTC", "offset"]))
    if zone == "none":
        return text, ns, False
    if zone == "offset":
        minutes = draw(st.integers(-14 * 60, 14 * 60))
        sign = "+" if minutes >= 0 else "-"
        text += f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
        ns -= minutes * 60 * 10**9
    else:
        text += zone if zone == "Z" else " UTC"
    return text, ns, True


def _kept_ns(values: np.ndarray) -> list[int | None]:
    us, rem, ok = instants(values)
    return [int(u) * 1000 + int(r) if k else None for u, r, k in zip(us, rem, ok, strict=True)]


def _check_partition(cells, n: int) -> np.ndarray:
    """Every cell kept, missing or dropped for exactly one reason; returns the kept mask."""
    dropped = np.zeros(n, dtype=bool)
    for reason, mask in cells.drops.items():
        assert reason in (BAD_REASON, YEARS_REASON, FINE_REASON, NUMBER_REASON, SUBNS_REASON), reason
        assert not (dropped & mask).any(), f"a cell dropped twice ({reason})"
        dropped |= mask
    assert not (dropped & cells.missing).any()
    kept = ~dropped & ~cells.missing
    if cells.values.dtype.kind == "M":
        assert not np.isnat(cells.values[kept]).any()
        us = instants(cells.values[kept])[0]
        assert ((us >= YEARS[0]) & (us < YEARS[1])).all(), "a kept time outside the years 1 to 9999"
    return kept


def _check_written(column: list[tuple[str, int | None, bool]]) -> None:
    texts = [c[0] for c in column]
    cells = parse_cells(pd.Series(texts, dtype=object), "time")
    kept = _check_partition(cells, len(texts))
    got = _kept_ns(cells.values)
    expected = [c[1] for c in column]
    in_years = np.array([YEARS[0] * 1000 <= e < YEARS[1] * 1000 for e in expected])
    ns_lo, ns_hi = -(2**63) + 1, 2**63 - 1
    wide = any(in_years[i] and not ns_lo <= e <= ns_hi for i, e in enumerate(expected))  # a time needs microseconds
    for i, (text, e, _) in enumerate(column):
        if kept[i]:
            assert got[i] == e, f"{text!r} moved: {got[i]} ns, written {e} ns"
        else:
            years = cells.drops.get(YEARS_REASON, np.zeros(len(texts), bool))[i]
            fine = cells.drops.get(FINE_REASON, np.zeros(len(texts), bool))[i]
            assert (years and not in_years[i]) or (fine and wide and e % 1000), \
                f"{text!r} dropped without a reason that holds: { {r: bool(m[i]) for r, m in cells.drops.items()} }"
    zoned = np.array([c[2] for c in column])
    both = (kept & zoned).any() and (kept & ~zoned).any()
    assert both == any("taken as UTC" in n for n in cells.notes)


@_settings(70)
@given(st.lists(written_time(), min_size=1, max_size=12))
def test_written_times_are_kept_exactly_or_dropped_with_a_reason(column):
    _check_written(column)


@pytest.mark.slow
@_settings(3000)
@given(st.lists(written_time(), min_size=1, max_size=30))
def test_written_times_many(column):
    _check_written(column)


@_settings(60)
@given(st.lists(st.one_of(st.text(max_size=30), st.sampled_from(["", "NA", "nan", "-", "soon", "2026-13-45",
                                                                  "10000-01-01", "0000-01-01", "-0001-06-01"])),
                min_size=1, max_size=12))
def test_arbitrary_text_never_raises_and_every_cell_is_counted(texts):
    cells = parse_cells(pd.Series(texts, dtype=object), "date")
    kept = _check_partition(cells, len(texts))
    if cells.values.dtype.kind == "M":  # a kept cell writes its year (nothing filled in from today or the year 1)
        assert all(re.search(r"\d{4}", texts[i]) for i in np.flatnonzero(kept))


@st.composite
def numbers(draw) -> tuple[list, bool]:
    as_text = draw(st.booleans())
    kind = draw(st.sampled_from(["int", "float", "mixed"]))
    ints = st.integers(-(2**63) + 1, 2**63 - 1)
    floats = st.floats(allow_nan=False, allow_infinity=False)
    element = {"int": ints, "float": floats, "mixed": st.one_of(ints, floats)}[kind]
    return draw(st.lists(element, min_size=1, max_size=10)), as_text


@_settings(120)
@given(numbers())
def test_numbers_are_kept_exactly_or_dropped_as_too_large(case):
    values, as_text = case
    if as_text:
        series = pd.Series([repr(v) if isinstance(v, float) else str(v) for v in values], dtype=object)
    elif all(isinstance(v, int) for v in values) or all(isinstance(v, float) for v in values):
        series = pd.Series(values, dtype="int64" if isinstance(values[0], int) else "float64")
    else:  # Python ints beside floats: an object column (a float64 column would round the ints before the parser)
        series = pd.Series(values, dtype=object)
    cells = parse_cells(series, "step")
    kept = _check_partition(cells, len(values))
    assert cells.values.dtype.kind in "fi"
    for i, v in enumerate(values):
        if kept[i]:
            got = cells.values[i]
            assert (int(got) == v) if isinstance(v, int) else (float(got) == v), (v, got)
        else:
            assert isinstance(v, int) and abs(v) > 2**53 and cells.drops[NUMBER_REASON][i], v


@_settings(40)
@given(st.lists(written_time(), min_size=3, max_size=10), st.lists(st.booleans(), min_size=10, max_size=10))
def test_through_the_loader_kept_plus_dropped_is_read_and_times_are_exact(column, blank):
    texts = [("" if b else c[0]) for c, b in zip(column, blank, strict=False)]
    n = len(texts)
    frame = pd.DataFrame({"time": texts, "y": np.linspace(0, 1, n), "mean": 0.5, "std": 1.0})
    try:
        ps = cc.load_predictions(frame.to_csv(index=False).encode(), source="fuzz.csv")
    except cc.InputError as exc:  # every time cell empty or dropped: no rows left
        assert "fuzz.csv" in str(exc)
        return
    assert ps.n_rows + ps.dropped.total == ps.n_read == n
    if ps.time is None:  # a detected column with no filled cell is not used as time
        assert all(t == "" for t in texts)
        return
    assert set(ps.dropped.reasons) <= {MISSING_REASON, BAD_REASON, YEARS_REASON, FINE_REASON}
    got = _kept_ns(ps.time)
    for row, g in zip(ps.row_number, got, strict=True):
        assert g == column[row - 1][1], (column[row - 1][0], g)
