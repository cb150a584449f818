"""views.monitor: the lag of hub data, one sentence per model, the change points drawn, the section's texts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from views import monitor as vm


def path_table() -> pd.DataFrame:
    times = pd.date_range("2026-01-03", periods=6, freq="W-SAT").to_numpy()
    return pd.DataFrame({
        "model": ["drift"] * 6 + ["fine"] * 6,
        "time": np.r_[times, times],
        "e_value": [1.0, 0.7, 3.0, 24.0, 90.0, 410.0, 1.2, 0.8, 3.1, 1.5, 0.9, 0.8],
    })


def test_lag_is_the_largest_horizon_or_the_horizons_spanned():
    assert vm.monitor_lag(None) == 1
    assert vm.monitor_lag(pd.DataFrame({"location": ["a"]})) == 1
    assert vm.monitor_lag(pd.DataFrame({"horizon": [1, 2, 3, 4]})) == 4  # the largest horizon
    assert vm.monitor_lag(pd.DataFrame({"horizon": [0, 1, 2, 3]})) == 4  # horizon 0 is a step ahead too
    assert vm.monitor_lag(pd.DataFrame({"horizon": [-1, 0, 1, 2, 3]})) == 5
    assert vm.monitor_lag(pd.DataFrame({"horizon": [0, 0]})) == 1
    assert vm.monitor_lag(pd.DataFrame({"horizon": [np.nan, 2.0]})) == 2


def test_one_sentence_per_model_with_alarm_and_change_point():
    times = path_table()["time"].unique()
    s = vm.monitor_summary(path_table(), 20.0, alarm_time={"drift": times[3]},
                           change_point={"drift": times[1], "fine": times[4]})
    assert list(s["model"]) == ["drift", "fine"] and list(s["alarm"]) == [True, False]
    drift, fine = s["sentence"]
    assert drift == ("drift: alarm on 2026-01-24 — the e-value reached 24 ≥ 20: these forecasts are judged "
                     "miscalibrated (a calibrated forecaster reaches the line with probability at most 5%); the "
                     "change is estimated to start after 2026-01-10. The e-value is now 410.")
    assert fine == ("fine: no alarm — the e-value stayed below the alarm line 20 (at most 3.1, now 0.8): no evidence "
                    "against calibration so far.")
    assert s["e_max"].tolist() == [410.0, 3.1] and s["steps"].tolist() == [6, 6]
    # the chart draws the change point of the model with an alarm only
    alarms, changes = vm.alarm_change_points(s)
    assert alarms == {"drift": times[3]} and changes == {"drift": times[1]}


def test_alarm_read_from_the_path_when_not_given_and_numbers_on_x():
    path = path_table().assign(time=np.r_[np.arange(1.0, 7.0), np.arange(1.0, 7.0)])
    s = vm.monitor_summary(path, 20.0, change_point=2.0, name_models=False)
    assert s.loc[0, "alarm_time"] == 4.0 and s.loc[0, "change_point"] == 2.0
    assert s.loc[0, "sentence"].startswith("Alarm at 4 — the e-value reached 24 ≥ 20")
    assert s.loc[1, "sentence"].startswith("No alarm — ") and pd.isna(s.loc[1, "change_point"])
    # alpha = 0.01: the line is 100 and the sentence says 1%
    s = vm.monitor_summary(path, 100.0)
    assert "at most 1%" in s.loc[0, "sentence"] and s.loc[0, "alarm_time"] == 6.0


def test_section_texts():
    assert vm.looking_sentence() == (
        "Looking at the windows every week and reacting to any that falls outside its band raises false alarms well "
        "above 5%; the monitor's alarm line holds 5% however often you look.")
    one = vm.monitor_caption(1)
    assert vm.CAPTION in one and "whole season" in one and "interleaved" not in one
    hub = vm.monitor_caption(4, "target_end_date")
    assert "rows with the same target_end_date are one step" in hub and "4 interleaved monitors" in hub
    assert vm.time_text(np.datetime64("2026-01-03T00:00:00.000000000")) == "2026-01-03"
