"""AppTest: the anytime-valid monitor in the "Over time" section of the Regression and Classification pages — the
e-value chart with the alarm line at 1/α = 20, one sentence per model, why it is there, and that a picked time
range restricts the views below but not the monitor (it always watches the whole season).  Hub data: the time is
target_end_date and the lag the largest horizon."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core.base.regression import Gaussian
from tests.hub_synthetic import synthetic_hub
from views.pages import md_escape

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300
LOOKING = ("Looking at the windows every week and reacting to any that falls outside its band raises false alarms "
           "well above 5%; the monitor's alarm line holds 5% however often you look.")


def drifting_regression(n: int = 3000, seed: int = 0) -> cc.PredictionSet:
    """Two models over 12 weeks; the truth is drawn from N(μ, σ²) except model "drifts" after week 8, whose targets
    come from N(μ, (1.8σ)²) (its σ became too small)."""
    rng = np.random.default_rng(seed)
    days = rng.integers(0, 84, n)
    model = np.where(np.arange(n) % 2 == 0, "calibrated", "drifts")
    mu, sigma = rng.normal(size=n), np.exp(rng.normal(scale=0.2, size=n))
    y = mu + np.where((model == "drifts") & (days >= 56), 1.8, 1.0) * sigma * rng.normal(size=n)
    return cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=Gaussian(mu, sigma), point=mu,
                            model=model, time=(np.datetime64("2026-01-05") + days.astype("timedelta64[D]")
                                               ).astype("datetime64[ns]"),
                            row_number=np.arange(1, n + 1), n_read=n)


def run_page(page: str, pset: cc.PredictionSet, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in {"pset": pset, "pset_token": f"test:{time.time_ns()}", "pset_name": "t.csv",
                       "pset_origin": "upload", **state}.items():
        at.session_state[key] = value
    at.switch_page(f"pages/{page}").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def monitor_spec(at: AppTest, prefix: str) -> dict:
    return next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == f"{prefix}_monitor_chart")


def texts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown] + [c.value for c in at.caption]


def test_regression_page_shows_the_monitor_beside_the_windows():
    at = run_page("regression.py", drifting_regression(), reg_resamples=0, reg_sims=0)
    spec = monitor_spec(at, "reg")
    roles = [(d.get("meta") or {}).get("role") for d in spec["data"]]
    assert roles.count("curve") == 2 and "alarm_line" in roles
    assert spec["layout"]["yaxis"]["type"] == "log"
    line = next(d for d in spec["data"] if (d.get("meta") or {}).get("role") == "alarm_line")
    assert line["name"] == "alarm line: 1/α = 20" and line["y"] == [20.0, 20.0]
    shown = texts(at)
    assert LOOKING in shown and "**Anytime-valid monitor**" in shown
    assert any("it always watches the whole season" in c for c in shown)
    sentences = [s for s in shown if s.startswith(("calibrated: ", "drifts: "))]
    assert len(sentences) == 2, shown
    assert sentences[0].startswith("calibrated: No alarm") and sentences[1].startswith("drifts: Alarm on")
    # the alarm of the drifting model is marked, with its change point; the calibrated model has neither
    marks = {((d.get("meta") or {}).get("name"), d["meta"]["role"]) for d in spec["data"]
             if (d.get("meta") or {}).get("role") in ("alarm", "change_point")}
    assert marks == {("drifts", "alarm"), ("drifts", "change_point")}
    # the windows chart is drawn first, the monitor under it
    keys = [c.key for c in at.get("plotly_chart")]
    assert keys.index("reg_time_chart") < keys.index("reg_monitor_chart")


def test_a_picked_time_range_does_not_restrict_the_monitor():
    at = run_page("regression.py", drifting_regression(), reg_resamples=0, reg_sims=0)
    before = monitor_spec(at, "reg")
    ckey, _ = at.session_state["reg_time_pick"]
    at.session_state["reg_time_pick"] = (ckey, (10, 11))  # the last two weeks, as a box drawn over the windows
    at.run()
    assert not at.exception
    assert any(m.value.startswith("**Time range 2026-03-16") for m in at.markdown)
    after = monitor_spec(at, "reg")
    paths = [[d["x"], d["y"]] for d in before["data"] if (d.get("meta") or {}).get("role") == "curve"]
    assert paths == [[d["x"], d["y"]] for d in after["data"] if (d.get("meta") or {}).get("role") == "curve"]


def test_classification_page_shows_the_monitor():
    rng = np.random.default_rng(1)
    n = 2000
    f = rng.uniform(0.05, 0.95, n)
    days = rng.integers(0, 70, n)
    y = (rng.random(n) < np.where(days >= 49, 0.6 * f, f)).astype(int)  # over-confident in the last 3 weeks
    pset = cc.PredictionSet(task="classification", layout="probs", labels=y, probs=np.column_stack([1 - f, f]),
                            classes=["0", "1"], time=(np.datetime64("2026-01-05") + days.astype("timedelta64[D]")
                                                      ).astype("datetime64[ns]"),
                            row_number=np.arange(1, n + 1), n_read=n)
    at = run_page("classification.py", pset, cls_resamples=0, cls_sims=0)
    spec = monitor_spec(at, "cls")
    assert [(d.get("meta") or {}).get("role") for d in spec["data"]].count("curve") == 1
    shown = texts(at)
    assert LOOKING in shown
    assert any(s.startswith("Alarm on ") for s in shown), shown  # one model: the sentence names none


def test_hub_data_watch_target_end_dates_with_the_largest_horizon_as_lag():
    pset = synthetic_hub(n_locations=4, n_dates=8, models=("calibrated", "narrow"))
    at = run_page("regression.py", pset, reg_resamples=0, reg_sims=0)
    spec = monitor_spec(at, "reg")
    assert spec["layout"]["xaxis"]["title"]["text"] == "target_end_date"
    caption = next(c.value for c in at.caption if "whole season" in c.value)
    assert "rows with the same target_end_date are one step" in caption and "4 interleaved monitors" in caption


def test_model_names_in_the_monitor_sentences_stay_text():
    pset = drifting_regression(1200)
    hostile = "**bold** [x](http://127.0.0.1:9/) :red[r]"
    pset.model = np.where(pset.model == "drifts", hostile, pset.model).astype(object)
    at = run_page("regression.py", pset, reg_resamples=0, reg_sims=0)
    named = [m.value for m in at.markdown if "Alarm" in m.value or "No alarm" in m.value]
    assert len(named) == 2 and any(v.startswith(md_escape(hostile) + ": ") for v in named), named
    assert not any(hostile in v for v in named)  # never the raw Markdown
