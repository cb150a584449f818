"""The anytime-valid calibration monitor of probability forecasts (calib_core.inference.classification_monitor).

Seasons of 52 weekly looks with 50 rows a week, outcomes drawn from the TRUE probabilities: the factors have mean 1,
the alarm is raised in at most 5% of seasons (+ 2 Monte-Carlo standard errors) — with a date effect shared by the
rows of a week too — and miscalibrated probabilities from week 30 are flagged in most seasons.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calib_core.base.predictions import InputError, PredictionSet
from calib_core.inference.classification_monitor import event_bets, probability_monitor

T, N_ROWS, SHIFT = 52, 50, 29
ALPHA = 0.05


def _bound(n: int, p: float = ALPHA) -> float:
    return p + 2 * np.sqrt(p * (1 - p) / n)


def _grid(seasons: int) -> tuple[np.ndarray, np.ndarray]:
    return np.repeat(np.arange(seasons), T * N_ROWS), np.tile(np.repeat(np.arange(T), N_ROWS), seasons)


def _seasons(seasons: int, rng: np.random.Generator, *, date: float = 0.0, kind: str = "calibrated"):
    """Forecast probabilities p; the TRUE probability of each row is p itself (calibrated), or, with a date effect,
    the forecast is the true probability averaged over the week's shared shock (so it is calibrated given what
    the forecaster knows).  From week 30: ``"low"`` forecasts 0.1 below the truth, ``"overconfident"`` the truth's
    logit × 1.8."""
    season, week = _grid(seasons)
    logit = rng.normal(0.0, 1.2, season.size)
    if date:
        shock = rng.standard_normal(seasons * T)[season * T + week] * date
        truth = 1 / (1 + np.exp(-(logit + shock)))
        nodes = np.polynomial.hermite_e.hermegauss(40)
        p = (1 / (1 + np.exp(-(logit[:, None] + date * nodes[0][None, :]))) @ nodes[1]) / nodes[1].sum()
    else:
        truth = p = 1 / (1 + np.exp(-logit))
    y = (rng.random(season.size) < truth).astype(int)
    late = week >= SHIFT
    if kind == "low":
        p = np.where(late, np.clip(p - 0.1, 0.01, 0.99), p)
    elif kind == "overconfident":
        p = np.where(late, 1 / (1 + np.exp(-1.8 * logit)), p)
    return y, p, week, season


def _alarm_share(result, after: int | None = None) -> float:
    times = pd.to_numeric(result.summary["alarm_time"], errors="coerce")
    return float((times >= after).mean()) if after is not None else float(times.notna().mean())


def test_factors_have_mean_one_under_calibration():
    rng = np.random.default_rng(1)
    y, p, week, season = _seasons(100, rng)
    f = np.concatenate([np.exp(event_bets(week[season == s], y[season == s], p[season == s], T)[0])
                        for s in range(100)], axis=1)
    se = f.std(axis=1, ddof=1) / np.sqrt(f.shape[1])
    assert np.all(np.abs(f.mean(axis=1) - 1.0) < 4 * se)


@pytest.mark.parametrize("date", [0.0, 1.0])
def test_calibrated_probabilities_raise_at_most_five_percent(date):
    """52 weekly looks, 300 seasons: ≤ 5% (+ 2 s.e.) alarm, with a week effect of standard deviation 1 on the
    logit shared by the week's rows too."""
    seasons = 300
    y, p, week, season = _seasons(seasons, np.random.default_rng(int(2 + date)), date=date)
    r = probability_monitor(y, p, week, model=season)
    assert _alarm_share(r) <= _bound(seasons)


@pytest.mark.parametrize("kind", ["low", "overconfident"])
def test_miscalibration_from_week_30_is_flagged_in_most_seasons(kind):
    """Forecasts 0.1 too low, or over-confident (logit × 1.8), from week 30: the alarm after week 30 in ≥ 80% of
    100 seasons (measured: all), none before beyond the 5% bound, the change point's median within a week."""
    seasons = 100
    y, p, week, season = _seasons(seasons, np.random.default_rng(7), kind=kind)
    r = probability_monitor(y, p, week, model=season)
    assert _alarm_share(r, after=SHIFT) >= 0.8
    assert _alarm_share(r) - _alarm_share(r, after=SHIFT) <= _bound(seasons)
    cp = pd.to_numeric(r.summary["change_point"], errors="coerce")[r.summary["alarm_time"].notna()]
    assert abs(np.median(cp) - SHIFT) <= 1


def test_lag_keeps_validity_for_overlapping_forecasts():
    """Outcomes driven by a shock that lasts 3 weeks, forecast 3 weeks ahead with the probability averaged over
    the shocks not yet seen: lag 3 keeps ≤ 5% (+ 2 s.e.) of 300 seasons."""
    seasons, h = 300, 3
    rng = np.random.default_rng(9)
    season, week = _grid(seasons)
    shocks = rng.standard_normal((seasons, T + h))
    overlap = np.stack([shocks[:, k: k + T] for k in range(h)]).sum(axis=0) / np.sqrt(h)
    logit = rng.normal(0.0, 1.0, season.size)
    truth = 1 / (1 + np.exp(-(logit + overlap[season, week])))
    nodes = np.polynomial.hermite_e.hermegauss(40)
    p = (1 / (1 + np.exp(-(logit[:, None] + nodes[0][None, :]))) @ nodes[1]) / nodes[1].sum()
    y = (rng.random(season.size) < truth).astype(int)
    r = probability_monitor(y, p, week, model=season, lag=h)
    assert _alarm_share(r) <= _bound(seasons)


def test_prediction_sets_binary_multiclass_and_top_label():
    rng = np.random.default_rng(4)
    week = np.repeat(np.arange(30), 40)
    probs = rng.dirichlet(np.ones(3), week.size)
    labels = (rng.random(week.size)[:, None] > np.cumsum(probs, axis=1)).sum(axis=1)
    multi = PredictionSet(task="classification", labels=labels, probs=probs, time=week)
    r = probability_monitor(multi)
    assert r.alarm_time is None and "top label" in r.method
    p1 = rng.uniform(0.05, 0.95, week.size)
    lab = (rng.random(week.size) < p1).astype(int)
    binary = PredictionSet(task="classification", labels=lab, probs=np.c_[1 - p1, p1], time=week)
    assert "positive class" in probability_monitor(binary).method
    pred = np.where(p1 >= 0.5, 1, 0)
    top = PredictionSet(task="classification", labels=lab, top_label_only=True,
                        confidence=np.maximum(p1, 1 - p1), point=pred, time=week)
    assert probability_monitor(top).path.shape[0] == 30


def test_errors():
    with pytest.raises(ValueError, match="outcomes need"):
        probability_monitor(np.array([0, 1]))
    with pytest.raises(ValueError, match="0 or 1"):
        probability_monitor(np.array([0, 2]), np.array([0.5, 0.5]), np.array([0, 1]))
    with pytest.raises(InputError, match="pit_monitor"):
        probability_monitor(PredictionSet(task="regression", y=np.zeros(2), time=np.array([0, 1])))
