"""The e-process bookkeeping of the calibration monitor (calib_core.base.eprocess): products of factors, the mixture,
lag-h interleaving and its guaranteed value, the change point, the sentences and the result object."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calib_core.base.eprocess import (
    PATH_COLUMNS,
    change_point_index,
    combine_eprocess,
    monitor_result,
    monitor_sentence,
    time_steps,
    time_unit,
)
from calib_core.base.eprocess_inputs import auto_lag, model_rows, monitor_time
from calib_core.base.predictions import InputError, PredictionSet


def test_lag_one_is_the_mixture_of_products():
    rng = np.random.default_rng(0)
    f = rng.uniform(0.5, 1.6, size=(3, 10))
    log_e, log_g = combine_eprocess(np.log(f))
    np.testing.assert_allclose(np.exp(log_e), np.cumprod(f, axis=1).mean(axis=0))
    np.testing.assert_allclose(log_g, log_e)


def test_lag_h_averages_interleaved_products_and_the_guarantee_uses_the_floors():
    rng = np.random.default_rng(1)
    h, t_n = 3, 11
    f = rng.uniform(0.5, 1.6, size=(2, t_n))
    floors = np.full((2, t_n + h - 1), 0.25)
    log_e, log_g = combine_eprocess(np.log(f), floors, lag=h)
    want = np.zeros(t_n)
    guar = np.zeros(t_n)
    for t in range(t_n):
        for j in range(h):
            prod = np.prod(f[:, [s for s in range(t + 1) if s % h == j]], axis=1)
            want[t] += prod.mean() / h
            pending = any(t < s <= t + h - 1 and s % h == j for s in range(t + h))
            guar[t] += prod.mean() / h * (0.25 if pending else 1.0)
    np.testing.assert_allclose(np.exp(log_e), want)
    np.testing.assert_allclose(np.exp(log_g), guar)
    assert np.all(log_g <= log_e + 1e-12)


def test_a_bust_strategy_leaves_the_others():
    with np.errstate(divide="ignore"):
        lf = np.log(np.array([[0.0, 2.0], [2.0, 2.0]]))
    log_e, _ = combine_eprocess(lf)
    np.testing.assert_allclose(np.exp(log_e), [1.0, 2.0])


def test_change_point_is_after_the_minimum_before_the_alarm():
    assert change_point_index(np.log([1.2, 0.4, 0.3, 3.0, 40.0]), slack=1.0) == 3
    assert change_point_index(np.log([2.0, 4.0, 8.0]), slack=1.0) == 0  # rose from the start
    assert change_point_index(np.log([2.0, 4.0, 8.0])) == 1  # the latest within a factor 2 of the lowest
    assert change_point_index(np.log([0.5, 0.2, 30.0, 0.01]), end=2, slack=1.0) == 2


def test_time_steps_and_units():
    codes, labels = time_steps(pd.to_datetime(["2026-01-10", "2026-01-03", "2026-01-10"]).to_numpy())
    assert codes.tolist() == [1, 0, 1]
    assert time_unit(labels) == "week"
    assert time_unit(np.array(["2026-01-01", "2026-01-02"], dtype="datetime64[ns]")) == "day"
    assert time_unit(np.array(["2026-01-01", "2026-02-01", "2026-03-01"], dtype="datetime64[ns]")) == "month"
    assert time_unit(np.array([1.0, 2.0])) == "time step"


def test_sentences():
    assert monitor_sentence(n_steps=52, e_last=2.1, threshold=20, unit="week") == (
        "No alarm: after 52 weeks the evidence against calibration is e = 2.1, below the alarm line 20.")
    assert monitor_sentence(n_steps=40, e_last=50, threshold=20, unit="week", alarm_label="2026-08-03",
                            e_alarm=24.0, change_label="2026-07-13") == (
        "Alarm in week 2026-08-03 (e = 24 ≥ 20); the change most likely began around 2026-07-13.")


def test_result_per_model_and_the_first_alarm():
    labels = pd.date_range("2026-01-03", periods=4, freq="7D").to_numpy()
    quiet = np.log([1.0, 0.9, 1.1, 2.0])
    loud = np.log([1.0, 5.0, 30.0, 90.0])
    r = monitor_result([dict(model="a", labels=labels, n=np.full(4, 50), log_e=quiet, log_guaranteed=quiet),
                        dict(model="b", labels=labels, n=np.full(4, 50), log_e=loud, log_guaranteed=loud)],
                       alpha=0.05, lag=1, method="test")
    assert list(r.path.columns) == list(PATH_COLUMNS)
    assert r.models == ["a", "b"]
    assert r.threshold == 20.0
    assert r.alarm_time == pd.Timestamp("2026-01-17")
    assert r.path["alarm"].sum() == 2
    a = r.model("a")
    assert a.alarm_time is None and a.sentence.startswith("No alarm: after 4 weeks")
    assert r.model("b").sentence.startswith("Alarm in week 2026-01-17 (e = 30 ≥ 20)")
    with pytest.raises(KeyError, match="no model"):
        r.model("c")


def test_monitor_inputs():
    assert [(n, r.tolist()) for n, r in model_rows(np.array(["b", "a", "b"]), 3)] == [("b", [0, 2]), ("a", [1])]
    units = pd.DataFrame({"horizon": [0, 1, 3], "target_end_date": pd.to_datetime(["2026-01-03"] * 3)})
    ps = PredictionSet(task="regression", y=np.zeros(3), units=units)
    assert auto_lag(ps) == 4
    assert monitor_time(ps).dtype.kind == "M"
    with pytest.raises(InputError, match="no time column"):
        monitor_time(PredictionSet(task="regression", y=np.zeros(3)))
    with pytest.raises(InputError, match="'week' is not in the file"):
        monitor_time(ps, "week")
