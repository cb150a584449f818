"""Dates never move: every time cell of a CSV or Parquet file is kept exactly or counted as dropped with its reason.

Times outside the nanosecond range (1677-09-21 … 2262-04-11) used to wrap around (1677-01-01 read as 2261-07-22,
1500-01-01 in a Parquet ``timestamp[s]`` as 2084); they are now stored in microseconds (the years 1 to 9999).
Data inside that range is stored in nanoseconds as before.  Zone-less cells beside zoned ones are taken as UTC and a
note says so; YYYYMMDD[HH] whole numbers in a column named like a time are dates.  The hostile files are made here.
"""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import calib_core as cc
from calib_core.base.predictions import ReadingNote
from calib_core.data.timecol import (
    BAD_REASON,
    FINE_REASON,
    MISSING_REASON,
    NUMBER_REASON,
    YEARS_REASON,
    parse_time,
)
from calib_core.data.timecol_cells import parse_cells
from calib_core.data.timecol_units import instants

SRFT = Path("/work/shared/data/real/weather_srft_uwme_temp_ensemble/srft_temperature_kelvin.csv")
NS_MIN, NS_MAX = "1677-09-21T00:12:43.145224193", "2262-04-11T23:47:16.854775807"


def exact(values: np.ndarray) -> list[str]:
    """Every time as its exact ISO text to the nanosecond (through integers: no unit cast that could wrap)."""
    us, rem, ok = instants(values)
    text = np.datetime_as_string(np.where(ok, us, np.iinfo(np.int64).min).view("datetime64[us]"), unit="us")
    return [f"{t}{r:03d}" if k else "NaT" for t, r, k in zip(text, rem, ok, strict=True)]


def csv_file(times: list, **extra) -> bytes:
    n = len(times)
    frame = pd.DataFrame({"time": times, "y": np.linspace(-1, 1, n), "mean": 0.0, "std": 1.0, **extra})
    return frame.to_csv(index=False).encode()


def parquet_file(array: pa.Array, name: str = "time") -> bytes:
    n = len(array)
    table = pa.table({name: array, "y": np.linspace(-1, 1, n), "mean": np.zeros(n), "std": np.ones(n)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def reasons(ps: cc.PredictionSet) -> dict[str, list[int]]:
    return {r: v.tolist() for r, v in ps.dropped.reasons.items()}


# ---------------------------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cells", [
    ["1677-01-01", "2026-01-01"],          # used to become 2261-07-22
    ["2262-12-31", "2026-01-01"],          # used to become 1678-06-11
    ["1000-01-01", "9999-12-31"],          # used to become 2169 / 1816
    ["0001-01-01T00:00:00", "9999-12-31T23:59:59.999999"],
    ["1500-01-01 12:30", "1500-01-02 12:30"],
])
def test_csv_dates_outside_the_nanosecond_range_are_kept_exactly(cells):
    ps = cc.load_predictions(csv_file(cells), source="far.csv")
    assert ps.n_rows == len(cells) and not ps.dropped.reasons
    assert ps.time.dtype == np.dtype("datetime64[us]")
    assert exact(ps.time) == [exact(np.array([pd.Timestamp(c).as_unit("us").asm8]))[0] for c in cells]
    assert any("kept to the microsecond" in m for m in ps.messages)


def test_csv_in_range_dates_are_stored_in_nanoseconds_as_before():
    ps = cc.load_predictions(csv_file(["2026-01-31", "2026-02-01T10:00:00.123456789", NS_MIN, NS_MAX]),
                             source="in.csv")
    assert ps.time.dtype == np.dtype("datetime64[ns]")
    assert exact(ps.time) == ["2026-01-31T00:00:00.000000000", "2026-02-01T10:00:00.123456789", NS_MIN, NS_MAX]


def test_csv_dates_outside_the_years_1_to_9999_are_dropped_with_their_reason():
    ps = cc.load_predictions(csv_file(["0000-06-01", "2026-01-01", "-0001-01-01", "10000-01-01", "", "2026-01-02"]),
                             source="years.csv")
    assert reasons(ps) == {YEARS_REASON: [1, 3], BAD_REASON: [4], MISSING_REASON: [5]}
    assert exact(ps.time) == ["2026-01-01T00:00:00.000000000", "2026-01-02T00:00:00.000000000"]
    assert any("time: outside the years 1 to 9999: 2 (rows 1, 3)" in m for m in ps.messages)


def test_cells_without_a_year_are_no_instants():
    ps = cc.load_predictions(csv_file(["2026-01-01", "March", "10:30", "Jan 5", "Jan 5 2026", "2026-01-03"]),
                             source="partial.csv")
    assert reasons(ps) == {BAD_REASON: [2, 3, 4]}
    assert exact(ps.time) == ["2026-01-01T00:00:00.000000000", "2026-01-05T00:00:00.000000000",
                              "2026-01-03T00:00:00.000000000"]


def test_nanoseconds_beside_far_dates_are_dropped_not_rounded():
    cells = ["1500-01-01", "2026-01-01T00:00:00.123456789", "2026-01-01T00:00:00.123456", "1500-01-01T00:00:00.0000001",
             "1500-01-01T00:00:00.1234560"]
    ps = cc.load_predictions(csv_file(cells), source="fine.csv")
    assert reasons(ps) == {FINE_REASON: [2, 4]}
    assert ps.time.dtype == np.dtype("datetime64[us]")
    assert exact(ps.time) == ["1500-01-01T00:00:00.000000000", "2026-01-01T00:00:00.123456000",
                              "1500-01-01T00:00:00.123456000"]


def test_zone_less_cells_beside_zoned_ones_are_taken_as_utc_and_a_note_says_so():
    cells = ["2026-01-01T00:00:00+01:00", "2026-01-01T05:00", "2026-01-01T06:00Z", "2026-01-01 07:00"]
    ps = cc.load_predictions(csv_file(cells), source="zones.csv")
    assert exact(ps.time) == ["2025-12-31T23:00:00.000000000", "2026-01-01T05:00:00.000000000",
                              "2026-01-01T06:00:00.000000000", "2026-01-01T07:00:00.000000000"]
    notes = [m for m in ps.messages if "taken as UTC" in m]
    assert len(notes) == 1 and isinstance(notes[0], ReadingNote)  # the CLI prints reading notes
    assert "2 cells have no time zone (rows 2, 4)" in notes[0] and "+01:00, Z" in notes[0]
    # one zone for every cell, or none: no note
    ps = cc.load_predictions(csv_file(["2026-01-01T00:00:00+01:00", "2026-01-01T05:00+01:00"]), source="z.csv")
    assert not any("taken as UTC" in m for m in ps.messages)
    assert exact(ps.time)[1] == "2026-01-01T04:00:00.000000000"


def test_numbers_stay_numbers_exactly():
    big = [1_700_000_000_123_456_789, 1_700_000_000_123_456_790, 1_700_000_000_123_456_791]  # ns epochs
    ps = cc.load_predictions(csv_file(big), source="epochs.csv")
    assert ps.time.dtype == np.int64 and ps.time.tolist() == big  # float64 would merge them (2⁵³ < 1.7e18)
    ps = cc.load_predictions(csv_file([1.5, 2.25, 3.0]), source="steps.csv")
    assert ps.time.dtype == float and ps.time.tolist() == [1.5, 2.25, 3.0]
    # a whole number written beside fractions that no float holds exactly (the cells as text, as in the parser)
    v, missing, bad = parse_time(pd.Series(["1.5", "9007199254740993", "2"], name="time"))
    assert bad.tolist() == [False, True, False] and v[[0, 2]].tolist() == [1.5, 2.0]
    cells = parse_cells(pd.Series(["1.5", "99999999999999999999"]), "time")
    assert cells.drops[NUMBER_REASON].tolist() == [False, True]


# ---------------------------------------------------------------------------------------------------------------
# Parquet
# ---------------------------------------------------------------------------------------------------------------
FAR = [dt.datetime(1, 1, 1), dt.datetime(1500, 1, 1, 12), dt.datetime(2026, 5, 4, 3, 2, 1),
       dt.datetime(9999, 12, 31, 23, 59, 59)]


@pytest.mark.parametrize("unit", ["s", "ms", "us"])
@pytest.mark.parametrize("tz", [None, "UTC", "Europe/Paris"])
def test_parquet_timestamps_far_from_today_are_kept_exactly(unit, tz):
    ps = cc.load_predictions(parquet_file(pa.array(FAR, pa.timestamp(unit, tz=tz))), source="far.parquet")
    assert ps.n_rows == 4 and not ps.dropped.reasons
    # naive datetimes written into a zoned column are UTC instants: the same instants come back, in UTC
    assert exact(ps.time) == [f"{d.isoformat()}.000000000" if d.microsecond == 0 else d.isoformat() for d in FAR]


def test_parquet_timestamp_s_of_1500_is_not_2084():
    ps = cc.load_predictions(parquet_file(pa.array([dt.datetime(1500, 1, 1)] * 3, pa.timestamp("s"))),
                             source="old.parquet")
    assert exact(ps.time)[0] == "1500-01-01T00:00:00.000000000"


@pytest.mark.parametrize("tz", [None, "America/New_York"])
def test_parquet_nanoseconds_at_both_ends_of_their_range(tz):
    ends = [np.iinfo(np.int64).min + 1, np.iinfo(np.int64).max, 1_700_000_000_123_456_789]
    ps = cc.load_predictions(parquet_file(pa.array(ends, pa.timestamp("ns", tz=tz))), source="ends.parquet")
    assert ps.time.dtype == np.dtype("datetime64[ns]") and ps.time.view(np.int64).tolist() == ends


@pytest.mark.parametrize("kind", [pa.date32(), pa.date64()])
def test_parquet_dates(kind):
    days = [dt.date(1, 1, 1), dt.date(1582, 10, 15), dt.date(9999, 12, 31), None]
    ps = cc.load_predictions(parquet_file(pa.array(days, kind)), source="days.parquet")
    assert reasons(ps) == {MISSING_REASON: [4]}
    assert exact(ps.time) == ["0001-01-01T00:00:00.000000000", "1582-10-15T00:00:00.000000000",
                              "9999-12-31T00:00:00.000000000"]


def test_parquet_times_beyond_the_year_9999_are_dropped_with_their_reason():
    ms = [0, 20_000 * 365 * 86_400_000, -62_135_596_800_000 - 1, 1]  # 1970, the year ≈ 21970, 0000-12-31 23:59:59.999
    ps = cc.load_predictions(parquet_file(pa.array(ms, pa.timestamp("ms"))), source="beyond.parquet")
    assert reasons(ps) == {YEARS_REASON: [2, 3]}
    assert exact(ps.time) == ["1970-01-01T00:00:00.000000000", "1970-01-01T00:00:00.001000000"]


# ---------------------------------------------------------------------------------------------------------------
# YYYYMMDD[HH] numbers
# ---------------------------------------------------------------------------------------------------------------
def test_yyyymmddhh_numbers_in_a_time_named_column_are_dates():
    ps = cc.load_predictions(csv_file([2004010100, 2004022823, 2004022900]), source="srft.csv")
    assert exact(ps.time) == ["2004-01-01T00:00:00.000000000", "2004-02-28T23:00:00.000000000",
                              "2004-02-29T00:00:00.000000000"]
    assert any("YYYYMMDDHH numbers read as dates/times" in m for m in ps.messages)
    frame = pd.DataFrame({"init_date": [20040101, 10000101, 99991231], "y": [0.0, 1.0, 2.0], "mean": 0.0, "std": 1.0})
    ps = cc.load_predictions(frame.to_csv(index=False).encode(), source="d.csv", columns={"time": "init_date"})
    assert exact(ps.time) == ["2004-01-01T00:00:00.000000000", "1000-01-01T00:00:00.000000000",
                              "9999-12-31T00:00:00.000000000"]


def test_yyyymmdd_numbers_that_are_no_dates_stay_numbers_with_a_note():
    ps = cc.load_predictions(csv_file([2004010100, 2004023100, 2004010124]), source="bad.csv")
    assert ps.time.dtype == float and ps.time.tolist() == [2004010100, 2004023100, 2004010124]
    note = next(m for m in ps.messages if "no valid date" in m)
    assert "2 of its 3" in note and "rows 2, 3" in note and "2004023100" in note


def test_no_guess_on_a_column_not_named_like_a_time():
    frame = pd.DataFrame({"when": [20040101, 20040102, 20040103], "y": [0.0, 1.0, 2.0], "mean": 0.0, "std": 1.0})
    ps = cc.load_predictions(frame.to_csv(index=False).encode(), source="w.csv", columns={"time": "when"})
    assert ps.time.dtype == float and ps.time.tolist() == [20040101, 20040102, 20040103]
    v, _, _ = parse_time(pd.Series([20040101, 20040102], name="station"))
    assert v.dtype == float


@pytest.mark.skipif(not SRFT.exists(), reason="the SRFT real file is not on this machine")
def test_srft_real_file_read_in_place_has_its_52_dates():
    ps = cc.load_predictions(SRFT)
    assert np.issubdtype(ps.time.dtype, np.datetime64) and ps.n_rows == 36826
    days = np.unique(ps.time)
    assert days.size == 52 and exact(days[[0, -1]]) == ["2004-01-01T00:00:00.000000000",
                                                       "2004-02-28T00:00:00.000000000"]
    assert any("time column 'date': YYYYMMDDHH numbers read as dates/times" in m for m in ps.messages)
