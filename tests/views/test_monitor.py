"""views.monitor: the monitor on the filtered rows with the whole data's lag, the marks drawn, long paths thinned,
the section's texts."""

from __future__ import annotations

import numpy as np
import pandas as pd

import calib_core as cc
from calib_core.base.regression import Gaussian
from views import monitor as vm


def test_marks_drawn_for_models_with_an_alarm_only():
    times = pd.date_range("2026-01-03", periods=4, freq="W-SAT")
    summary = pd.DataFrame({"model": ["drift", "fine", "late"], "alarm_time": [times[3], pd.NaT, times[2]],
                            "change_point": [times[1], times[0], pd.NaT]})
    alarms, changes = vm.drawn_marks(summary)
    assert alarms == {"drift": times[3], "late": times[2]} and changes == {"drift": times[1]}
    assert vm.drawn_marks(summary.iloc[1:2]) == ({}, {})


def test_sentences_named_by_model_when_there_are_several():
    two = pd.DataFrame({"model": ["a", "b: x"], "sentence": ["No alarm: after 3 weeks …", "b: x: Alarm on …"]})
    assert vm.model_sentences(two) == ["a: No alarm: after 3 weeks …", "b: x: Alarm on …"]  # never named twice
    assert vm.model_sentences(two.iloc[:1]) == ["No alarm: after 3 weeks …"]


def drifting(n_weeks: int = 30, per_week: int = 60, seed: int = 0, horizon: np.ndarray | None = None
             ) -> cc.PredictionSet:
    """Two models; the targets are drawn from the TRUE law: N(μ, σ²) for "fine", and for "drift" N(μ, σ²) until
    week 15 and N(μ, (2σ)²) after (its σ became half the truth's)."""
    rng = np.random.default_rng(seed)
    week = np.repeat(np.arange(n_weeks), per_week)
    model = np.where(np.arange(week.size) % 2 == 0, "fine", "drift")
    mu, sigma = rng.normal(size=week.size), np.exp(rng.normal(scale=0.2, size=week.size))
    y = mu + np.where((model == "drift") & (week >= 15), 2.0, 1.0) * sigma * rng.standard_normal(week.size)
    t = (np.datetime64("2026-01-03") + 7 * week.astype("timedelta64[D]")).astype("datetime64[ns]")
    units = None if horizon is None else pd.DataFrame({"horizon": horizon[np.arange(week.size) % horizon.size],
                                                       "target_end_date": t})
    return cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=Gaussian(mu, sigma), model=model, time=t,
                            units=units)


def test_the_monitor_runs_on_the_filtered_rows_with_the_whole_datas_lag():
    pset = drifting()
    result = vm.run_monitor(pset)
    assert result.lag == 1 and result.threshold == 20.0 and set(result.path["model"]) == {"fine", "drift"}
    alarms, changes = vm.drawn_marks(result.summary)
    assert set(alarms) == {"drift"}  # the drift is found; the calibrated model raises no alarm on this seed
    assert pd.Timestamp(changes["drift"]) <= pd.Timestamp(alarms["drift"])
    assert pd.Timestamp(alarms["drift"]) >= pd.Timestamp("2026-01-03") + pd.Timedelta(weeks=15)
    # hub data: the lag comes from the whole data's horizons (0…3: 4 steps), even when a filter keeps horizon 0 only
    hub = drifting(horizon=np.array([0, 1, 2, 3]))
    short = hub.take(hub.units["horizon"].to_numpy() == 0)
    assert vm.run_monitor(short, hub).lag == 4 and vm.run_monitor(short).lag == 1
    # classification: the probability monitor
    rng = np.random.default_rng(1)
    f = rng.uniform(0.05, 0.95, 600)
    cls = cc.PredictionSet(task="classification", layout="probs", labels=(rng.random(600) < f).astype(int),
                           probs=np.column_stack([1 - f, f]), classes=["0", "1"], time=np.repeat(np.arange(20.0), 30))
    got = vm.run_monitor(cls)
    assert got.path["time"].nunique() == 20 and got.summary["sentence"].iloc[0].startswith("No alarm")


def test_section_texts():
    assert vm.looking_sentence() == (
        "Looking at the windows every week and reacting to any that falls outside its band raises false alarms well "
        "above 5%; the monitor's alarm line holds 5% however often you look.")
    one = vm.monitor_caption(1)
    assert vm.CAPTION in one and "whole season" in one and "interleaved" not in one
    hub = vm.monitor_caption(4, "target_end_date")
    assert "rows with the same target_end_date are one step" in hub and "4 interleaved monitors" in hub
    assert vm.time_name(None) == "time" and vm.time_name(pd.DataFrame({"target_end_date": []})) == "target_end_date"


def test_long_paths_are_thinned_for_drawing_with_their_peaks_troughs_and_alarm():
    rng = np.random.default_rng(0)
    n = 12_000
    log_e = np.cumsum(rng.normal(0, 0.05, n))
    log_e[5000] = 5.0  # a lone peak: must be drawn
    log_e[7000] = -9.0  # a lone trough
    path = pd.DataFrame({"model": np.repeat(["a", "b"], n), "time": np.r_[np.arange(n), np.arange(n)] * 1.0,
                         "e_value": np.exp(np.r_[log_e, -log_e])})
    thin = vm.thin_path(path, 20.0, max_steps=1000)
    a, b = thin[thin["model"] == "a"], thin[thin["model"] == "b"]
    assert 900 <= len(a) <= 1003 and 900 <= len(b) <= 1003
    assert {0.0, 5000.0, 7000.0, n - 1.0} <= set(a["time"]) and {0.0, 5000.0, 7000.0, n - 1.0} <= set(b["time"])
    first_alarm = path.loc[(path["model"] == "a") & (path["e_value"] >= 20), "time"].min()
    assert first_alarm in set(a["time"])
    assert list(thin.index) == sorted(thin.index)  # in the path's order
    short = path.groupby("model").head(50)
    assert vm.thin_path(short, 20.0, max_steps=1000) is short


def test_time_stamps_of_single_rows_are_grouped_into_days():
    rng = np.random.default_rng(0)
    secs = rng.integers(0, 84 * 86400, 12_000)
    t = np.datetime64("2026-01-05", "s") + secs.astype("timedelta64[s]")
    steps, unit = vm.step_time(t)
    assert unit == "day" and np.unique(steps).size == 84 and steps.dtype == np.dtype("datetime64[ns]")
    assert (steps <= t).all() and (t - steps < np.timedelta64(1, "D")).all()
    short = t[secs < 5 * 86400]
    assert vm.step_time(short)[1] == "hour"
    daily = steps  # many rows per time: kept as they are
    assert vm.step_time(daily)[0] is daily or np.array_equal(vm.step_time(daily)[0], daily)
    assert vm.step_time(daily)[1] is None and vm.step_time(secs.astype(float))[1] is None


def test_a_drift_on_time_stamps_to_the_second_is_found_in_daily_steps():
    """12 weeks of rows at random seconds; the truth is drawn from N(μ, σ²) and, from week 9, from N(μ, (1.6σ)²):
    the monitor over daily steps raises its alarm after the drift starts and places the change near it; the same
    forecaster calibrated throughout raises none (on this seed)."""
    rng = np.random.default_rng(0)
    n = 12_000
    secs = rng.integers(0, 84 * 86400, n)
    t = (np.datetime64("2026-01-05", "s") + secs.astype("timedelta64[s]")).astype("datetime64[ns]")
    mu = rng.normal(size=n)
    z = rng.standard_normal(n)
    for scale, alarm in ((np.where(secs >= 56 * 86400, 1.6, 1.0), True), (np.ones(n), False)):
        pset = cc.PredictionSet(task="regression", layout="gaussian", y=mu + scale * z, dist=Gaussian(mu, np.ones(n)),
                                time=t)
        summary = vm.run_monitor(pset).summary
        assert (not pd.isna(summary["alarm_time"].iloc[0])) == alarm, summary
        if alarm:
            start = pd.Timestamp("2026-03-02")
            assert start <= summary["alarm_time"].iloc[0] <= start + pd.Timedelta(days=14)
            assert abs(summary["change_point"].iloc[0] - start) <= pd.Timedelta(days=7)
