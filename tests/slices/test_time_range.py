"""Calibration over time at both ends of any range the loader accepts: the first and last instants of the nanosecond
range (where ``t.max() + 1 ns`` and unit casts used to overflow or wrap around, and the Over-time figure crashed with
"Overflow in int64 addition") and the years 1 and 9999 (stored in microseconds).  Windows hold every row, their
bounds are in order and their labels have four-digit years; the window table, the figure, the monitor's steps and
the monitor itself run; in-range data gives the windows it gave before."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.regression import Gaussian
from calib_core.data.timecol_units import as_unit_of, floor_times, from_instants, instants, time_text
from calib_core.plots.timewindows import time_windows_figure
from calib_core.slices.time import window_codes, window_table
from views.monitor import run_monitor, step_time

I64 = np.iinfo(np.int64)
RANGES = {
    "nanosecond range ends": np.array([I64.min + 1, I64.max]).view("datetime64[ns]"),
    "first nanosecond instant only": np.array([I64.min + 1] * 2).view("datetime64[ns]"),
    "last nanosecond instant only": np.array([I64.max] * 2).view("datetime64[ns]"),
    "years 1 and 9999": np.array(["0001-01-01", "9999-12-31T23:59:59.999999"], dtype="datetime64[us]"),
    "year 1 only": np.array(["0001-01-01"] * 2, dtype="datetime64[us]"),
    "year 9999 only": np.array(["9999-12-31T23:59:59.999999"] * 2, dtype="datetime64[us]"),
}
WINDOWS = ["hour", "day", "week", "month", "quarter", "year", 1, 7]


def _ns(values: np.ndarray) -> np.ndarray:
    """Times as exact Python integers of nanoseconds (object array)."""
    us, rem, _ = instants(values)
    return us.astype(object) * 1000 + rem.astype(object)


def _pset(t: np.ndarray, task: str, n: int = 200, seed: int = 0) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    time = np.resize(t, n)
    if task == "regression":
        mu = rng.normal(size=n)
        return cc.PredictionSet(task="regression", layout="gaussian", y=mu + rng.normal(size=n),
                                dist=Gaussian(mu, np.ones(n)), point=mu, time=time, n_read=n)
    p = rng.uniform(0.05, 0.95, n)
    probs = np.column_stack([1 - p, p])
    labels = (rng.uniform(size=n) < p).astype(np.int64)
    return cc.PredictionSet(task="classification", layout="probs", labels=labels, probs=probs, classes=["0", "1"],
                            time=time, n_read=n)


@pytest.mark.parametrize("name", list(RANGES))
@pytest.mark.parametrize("window", WINDOWS)
def test_windows_hold_every_row_at_both_ends(name, window):
    t = np.resize(RANGES[name], 50)
    codes, table = window_codes(t, window)
    start, end, rows = _ns(table["start"].to_numpy()), _ns(table["end"].to_numpy()), _ns(t)
    assert (start[codes] <= rows).all()
    last = codes == codes.max()
    # half-open [start, end), except the last span of N windows ending at the very last nanosecond instant
    assert ((rows < end[codes]) | (last & (rows == end[codes]) & (rows == I64.max))).all()
    assert (np.diff(start.astype(float)) >= 0).all()
    assert all(lab[:4].isdigit() or lab.startswith("week of ") for lab in table["label"])


@pytest.mark.parametrize("name", list(RANGES))
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_window_table_and_figure_at_both_ends(name, task):
    ps = _pset(RANGES[name], task)
    for window in ("year", 1, 5, "day"):
        table, codes = window_table(ps, window=window)
        assert int(table.drop_duplicates("window")["n"].sum()) == ps.n_rows
        metric = table["metric"].iloc[0]
        fig = time_windows_figure(table, metric)
        mid = next(d for d in fig.data if (d.meta or {}).get("role") == "window").x
        lo, hi = _ns(table["start"].to_numpy()), _ns(table["end"].to_numpy())
        mids = _ns(np.asarray(mid))
        w = table[table["metric"] == metric]
        assert ((mids >= _ns(w["start"].to_numpy())) & (mids <= _ns(w["end"].to_numpy()))).all()
        assert lo.min() <= mids.min() and mids.max() <= hi.max()
        fig.to_json()


@pytest.mark.parametrize("name", list(RANGES))
def test_monitor_steps_and_monitor_at_both_ends(name):
    t = np.resize(RANGES[name], 400)
    steps, unit = step_time(t)
    assert unit is None and (_ns(steps) == _ns(t)).all()  # few distinct times: used as they are
    ps = _pset(RANGES[name], "regression", n=400)
    result = run_monitor(ps)
    assert len(result.summary) == 1 and result.summary["sentence"].iloc[0]


def test_steps_floor_to_days_without_wrapping_before_the_first_nanosecond_day():
    t = np.array([I64.min + 1 + k * 3_600_000_000_000 for k in range(24 * 30)]).view("datetime64[ns]")
    steps, unit = step_time(t)
    assert unit == "day" and steps.dtype == np.dtype("datetime64[us]")  # 1677-09-21 00:00 is before the range
    assert (_ns(steps) <= _ns(t)).all() and ((_ns(t) - _ns(steps)) < 86_400 * 10**9).all()
    assert time_text(steps[:1], "D") == ["1677-09-21"]


def test_monitor_alarm_sentences_write_four_digit_years():
    rng = np.random.default_rng(1)
    days = np.repeat(np.arange(80), 20)
    mu = rng.normal(size=days.size)
    y = mu + np.where(days > 40, 2.0, 1.0) * rng.normal(size=days.size)
    t = np.datetime64("0001-01-01", "us") + days.astype("timedelta64[D]")
    ps = cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=Gaussian(mu, np.ones(days.size)), point=mu,
                          time=t, n_read=days.size)
    sentence = run_monitor(ps).summary["sentence"].iloc[0]
    assert sentence.startswith("Alarm on day 0001-0") and "began around 0001-0" in sentence


def test_in_range_windows_are_those_of_before():
    """The windows of in-range nanosecond data: the calendar bounds and labels pandas gives, the equal spans from the
    nanosecond integers (as before the wide range was added)."""
    rng = np.random.default_rng(3)
    t = (np.datetime64("2026-01-01T00:00:00", "ns") + rng.integers(0, 90 * 86_400 * 10**9, 500).astype(
        "timedelta64[ns]"))
    for window, freq, fmt in [("day", "D", "%Y-%m-%d"), ("week", "W-SUN", "week of %Y-%m-%d"), ("month", "M", "%Y-%m"),
                              ("hour", "h", "%Y-%m-%d %H:00")]:
        codes, table = window_codes(t, window)
        per = pd.DatetimeIndex(t).to_period(freq)
        uniq = per.unique().sort_values()
        assert table["start"].dtype == np.dtype("datetime64[ns]")
        assert (table["start"].to_numpy() == uniq.start_time.to_numpy(dtype="datetime64[ns]")).all()
        assert (table["end"].to_numpy() == (uniq + 1).start_time.to_numpy(dtype="datetime64[ns]")).all()
        assert table["label"].tolist() == [pd.Timestamp(s).strftime(fmt) for s in uniq.start_time]
    codes, table = window_codes(t, 12)
    x = t.astype(np.int64).astype(float)
    width = (x.max() - x.min()) / 12
    assert (codes == np.unique(np.clip(np.floor((x - x.min()) / width).astype(np.int64), 0, 11),
                               return_inverse=True)[1]).all()
    assert table["end"].iloc[-1] == pd.Timestamp(t.max()) + pd.Timedelta(1, "ns")


def test_unit_helpers_never_wrap():
    t = np.array([I64.min + 1, I64.max]).view("datetime64[ns]")
    us, rem, ok = instants(t)
    assert ok.all() and rem.tolist() == [193, 807]
    assert (from_instants(us, rem, ok) == t).all() and from_instants(us, rem, ok).dtype == t.dtype
    wide = np.array(["2262-01-01", "2263-01-01"], dtype="datetime64[us]")
    assert as_unit_of(wide, t).dtype == np.dtype("datetime64[us]")  # 2263 does not fit in nanoseconds
    assert as_unit_of(wide[:1], t).dtype == np.dtype("datetime64[ns]")
    assert floor_times(t, "D").dtype == np.dtype("datetime64[us]")
    assert time_text(np.array(["0001-01-01", "9999-12-31"], dtype="datetime64[D]"), "D") == ["0001-01-01",
                                                                                            "9999-12-31"]
