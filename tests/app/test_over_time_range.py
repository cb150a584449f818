"""AppTest: the "Over time" section of the Regression and Classification pages on times far from today — a file of
the year 1500 (stored in microseconds), one ending in the year 9999 (a year window ends in 10000), and rows at the
exact first and last instants of the nanosecond range (which used to crash the figure with "Overflow in int64
addition").  The windows chart, the monitor and a picked time range work at both ends; the files are made here."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core.base.regression import Gaussian

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300
I64 = np.iinfo(np.int64)


def run_page(page: str, pset: cc.PredictionSet, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in {"pset": pset, "pset_token": f"test:{time.time_ns()}", "pset_name": "t.csv",
                       "pset_origin": "upload", **state}.items():
        at.session_state[key] = value
    at.switch_page(f"pages/{page}").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def chart_spec(at: AppTest, key: str) -> dict:
    return next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == key)


def windows_x(at: AppTest, prefix: str) -> list[str]:
    spec = chart_spec(at, f"{prefix}_time_chart")
    return [x for d in spec["data"] if (d.get("meta") or {}).get("role") == "window" for x in d["x"]]


def test_regression_page_over_time_in_the_year_1500_from_a_csv_file():
    rng = np.random.default_rng(0)
    n = 1500
    days = rng.integers(0, 84, n)
    mean = rng.normal(size=n)
    y = mean + np.where(days >= 56, 1.8, 1.0) * rng.normal(size=n)
    stamps = np.datetime_as_string(np.datetime64("1500-03-01", "D") + days.astype("timedelta64[D]"))
    data = pd.DataFrame({"date": stamps, "y": y, "mean": mean, "std": 1.0}).to_csv(index=False).encode()
    pset = cc.load_predictions(data, source="old.csv")
    assert pset.time.dtype == np.dtype("datetime64[us]")
    at = run_page("regression.py", pset, reg_resamples=0, reg_sims=0)
    assert any(h.value == "Over time" for h in at.subheader)
    xs = windows_x(at, "reg")
    assert xs and all(str(x).startswith("1500-") for x in xs), xs[:3]  # not 2084, not 1816
    monitor = chart_spec(at, "reg_monitor_chart")
    assert any((d.get("meta") or {}).get("role") == "curve" for d in monitor["data"])
    assert any(m.value.startswith("Alarm on day 1500-") for m in at.markdown), [m.value for m in at.markdown]
    ckey, _ = at.session_state["reg_time_pick"]
    at.session_state["reg_time_pick"] = (ckey, (10, 11))
    at.run()
    assert not at.exception
    assert any(m.value.startswith("**Time range 1500-05-") for m in at.markdown), [m.value for m in at.markdown]


def test_classification_page_over_time_up_to_the_last_day_of_9999():
    rng = np.random.default_rng(1)
    n = 1200
    days = rng.integers(0, 120, n)
    f = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < f).astype(int)
    t = np.datetime64("9999-12-31", "us") - days.astype("timedelta64[D]")
    pset = cc.PredictionSet(task="classification", layout="probs", labels=y, probs=np.column_stack([1 - f, f]),
                            classes=["0", "1"], time=t, row_number=np.arange(1, n + 1), n_read=n)
    at = run_page("classification.py", pset, cls_resamples=0, cls_sims=0)
    at.selectbox(key="cls_time_window").set_value("year").run()
    assert not at.exception, [e.value for e in at.exception]
    xs = windows_x(at, "cls")
    assert [str(x)[:4] for x in xs] == ["9999"], xs
    ckey, _ = at.session_state["cls_time_pick"]
    at.session_state["cls_time_pick"] = (ckey, (0,))
    at.run()
    assert not at.exception
    assert any(m.value.startswith("**Time range 9999-01-01 00:00 to 10000-01-01 00:00") for m in at.markdown)


def test_rows_at_the_exact_ends_of_the_nanosecond_range_draw():
    rng = np.random.default_rng(2)
    n = 400
    t = np.resize(np.array([I64.min + 1, I64.min + 1 + 10**12, I64.max - 10**12, I64.max]), n).view("datetime64[ns]")
    mu = rng.normal(size=n)
    pset = cc.PredictionSet(task="regression", layout="gaussian", y=mu + rng.normal(size=n),
                            dist=Gaussian(mu, np.ones(n)), point=mu, time=t, row_number=np.arange(1, n + 1),
                            n_read=n)
    at = run_page("regression.py", pset, reg_resamples=0, reg_sims=0)
    for window in ("N equal windows", "year", "day"):
        at.selectbox(key="reg_time_window").set_value(window).run()
        assert not at.exception, (window, [e.value for e in at.exception])
        spec = chart_spec(at, "reg_time_chart")
        band = next(d["x"] for d in spec["data"] if (d.get("meta") or {}).get("role") == "band_low")
        assert str(band[0]).startswith("1677-") and str(band[-1]).startswith(("2262-", "2263-")), (window, band)
        assert windows_x(at, "reg")
