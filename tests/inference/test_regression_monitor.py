"""The anytime-valid calibration monitor of regression forecasts (calib_core.inference.regression_monitor).

Statistics tested as statistics: seasons of 52 weekly looks with 50 locations a week, targets drawn from the TRUE
law of each row (Gaussian forecasts, quantile sets stating the true law's quantiles, ensembles whose members and
target are exchangeable draws).  Under calibration the factors have mean 1 (a test martingale) and the alarm is
raised in at most 5% of seasons (+ 2 Monte-Carlo standard errors) however often one looks (Ville); a shift at
week 30 is flagged in most seasons; a date effect shared by all locations and overlapping h-step forecasts keep
the 5%.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from calib_core.base.eprocess import combine_eprocess
from calib_core.base.predictions import InputError, PredictionSet
from calib_core.base.regression import Gaussian, QuantileSet, SampleSet
from calib_core.data.hub_example import HUB_LEVELS
from calib_core.inference.regression_monitor import (
    cell_monitor,
    histogram_bets,
    pit_monitor,
    prediction_cells,
)

T, N_LOC, SHIFT = 52, 50, 29  # 52 weeks, 50 locations, the change in week 30 (index 29)
ALPHA = 0.05


def _bound(n: int, p: float = ALPHA) -> float:
    return p + 2 * np.sqrt(p * (1 - p) / n)


def _grid(seasons: int) -> tuple[np.ndarray, np.ndarray]:
    season = np.repeat(np.arange(seasons), T * N_LOC)
    week = np.tile(np.repeat(np.arange(T), N_LOC), seasons)
    return season, week


def _gaussian_set(seasons: int, rng: np.random.Generator, *, date: float = 0.0, bias: float = 0.0,
                  scale: float = 1.0) -> PredictionSet:
    """N(μ, σ) forecasts, targets from the TRUE law: a date effect of share ``date`` of the variance is shared by
    the locations of a week (the forecast's σ covers it); from week 30 the forecast's mean is off by ``bias`` σ
    and its σ multiplied by ``scale``."""
    season, week = _grid(seasons)
    mu = rng.normal(size=season.size) * 3
    sd = np.exp(rng.normal(size=season.size) * 0.3)
    shared = rng.standard_normal(seasons * T)[season * T + week]
    y = mu + sd * (np.sqrt(date) * shared + np.sqrt(1 - date) * rng.standard_normal(season.size))
    late = week >= SHIFT
    f_mu = mu - np.where(late, bias, 0.0) * sd
    f_sd = sd * np.where(late, scale, 1.0)
    return PredictionSet(task="regression", y=y, dist=Gaussian(f_mu, f_sd), time=week, model=season.astype(str))


def _alarm_share(result, after: int | None = None) -> float:
    times = pd.to_numeric(result.summary["alarm_time"], errors="coerce")
    return float((times >= after).mean()) if after is not None else float(times.notna().mean())


def test_factors_have_mean_one_under_calibration():
    """Every strategy's step factor has conditional mean 1: its average over seasons and weeks is 1 within 4
    standard errors (the factors of a test martingale are martingale differences + 1: uncorrelated)."""
    rng = np.random.default_rng(11)
    seasons = 150
    season, week = _grid(seasons)
    cells = rng.integers(0, 10, season.size)
    f = []
    for s in range(seasons):
        rows = season == s
        lf, _ = histogram_bets(week[rows], cells[rows], cells[rows], np.full(10, 0.1), T)
        f.append(np.exp(lf))
    f = np.concatenate(f, axis=1)  # (M, seasons · T)
    se = f.std(axis=1, ddof=1) / np.sqrt(f.shape[1])
    assert np.all(np.abs(f.mean(axis=1) - 1.0) < 4 * se + 1e-12), (f.mean(axis=1), se)


def test_unequal_cells_keep_mean_one():
    """Quantile cells of unequal mass (the 23 hub levels, grouped): after a strongly non-uniform history the next
    row's factor, averaged over the cells with their null masses, is exactly 1 for every strategy."""
    pi = np.diff(np.concatenate([[0.0], HUB_LEVELS, [1.0]]))
    history = np.random.default_rng(2).integers(0, 4, 200)
    step = np.concatenate([np.zeros(200, int), [1]])
    g_rows = []
    for c in range(pi.size):
        cells = np.concatenate([history, [c]])
        lf, _ = histogram_bets(step, cells, cells, pi, 2, windows=(None, 4))
        g_rows.append(np.exp(lf[:, 1]))
    np.testing.assert_allclose((np.array(g_rows) * pi[:, None]).sum(axis=0), 1.0, rtol=1e-12)


@pytest.mark.parametrize("date", [0.0, 0.5])
def test_gaussian_forecasts_raise_at_most_five_percent_false_alarms(date):
    """Calibrated Gaussian forecasts, 52 weekly looks: the alarm in ≤ 5% (+ 2 MC s.e.) of 200 seasons — with a
    date effect carrying half the variance too (the rows of a week averaged, not multiplied)."""
    seasons = 200
    r = pit_monitor(_gaussian_set(seasons, np.random.default_rng(int(10 + 10 * date)), date=date))
    assert r.summary.shape[0] == seasons
    assert _alarm_share(r) <= _bound(seasons)


def test_quantile_sets_from_the_true_law_raise_at_most_five_percent():
    """Quantile sets stating the 23 hub levels of each row's TRUE law (a Student t₅ with its own centre and
    scale), targets drawn from that law: ≤ 5% (+ 2 s.e.) of 200 seasons alarm."""
    seasons = 200
    rng = np.random.default_rng(21)
    season, week = _grid(seasons)
    loc = rng.normal(size=season.size) * 10
    sc = np.exp(rng.normal(size=season.size) * 0.5)
    values = loc[:, None] + sc[:, None] * stats.t.ppf(np.array(HUB_LEVELS), 5)[None, :]
    y = loc + sc * rng.standard_t(5, size=season.size)
    ps = PredictionSet(task="regression", y=y, dist=QuantileSet(HUB_LEVELS, values), time=week,
                       model=season.astype(str))
    assert _alarm_share(pit_monitor(ps)) <= _bound(seasons)


def test_count_quantile_sets_with_ties_stay_valid():
    """Integer targets and the integer quantiles of their TRUE Poisson law (targets equal to stated quantiles,
    several levels tied): each tied row pays its range's smallest bet, and ≤ 5% (+ 2 s.e.) of seasons alarm."""
    seasons = 150
    rng = np.random.default_rng(22)
    season, week = _grid(seasons)
    choices = np.exp(np.linspace(-0.5, 2.5, 25))
    pick = rng.integers(0, choices.size, season.size)
    lam = choices[pick]
    values = stats.poisson.ppf(np.array(HUB_LEVELS)[None, :], choices[:, None])[pick]
    y = rng.poisson(lam).astype(float)
    ps = PredictionSet(task="regression", y=y, dist=QuantileSet(HUB_LEVELS, values), time=week,
                       model=season.astype(str))
    lo, hi, _ = prediction_cells(ps.y, ps.dist)
    assert np.mean(hi > lo) > 0.3  # the ties are there
    assert _alarm_share(pit_monitor(ps)) <= _bound(seasons)


def test_ensembles_of_exchangeable_members_raise_at_most_five_percent():
    """Ensembles of 20 members and a target drawn from the same law (rounded to 0.5: ties between members and
    target), 150 seasons: ≤ 5% (+ 2 s.e.) alarm."""
    seasons = 150
    rng = np.random.default_rng(23)
    season, week = _grid(seasons)
    loc = rng.normal(size=(season.size, 1)) * 2
    draws = np.round((loc + rng.standard_normal((season.size, 21))) * 2) / 2
    ps = PredictionSet(task="regression", y=draws[:, 0], dist=SampleSet(draws[:, 1:]), time=week,
                       model=season.astype(str))
    assert _alarm_share(pit_monitor(ps)) <= _bound(seasons)


@pytest.mark.parametrize(("bias", "scale"), [(0.5, 1.0), (0.0, 0.7)])
def test_a_shift_at_week_30_is_flagged_in_most_seasons(bias, scale):
    """A bias of 0.5 σ, or a σ shrunk to 0.7 of the truth, from week 30: the alarm after the shift in ≥ 80% of
    100 seasons (measured: all), and the change point's median within a week of week 30."""
    seasons = 100
    r = pit_monitor(_gaussian_set(seasons, np.random.default_rng(31), bias=bias, scale=scale))
    assert _alarm_share(r, after=SHIFT) >= 0.8
    assert _alarm_share(r) - _alarm_share(r, after=SHIFT) <= _bound(seasons)  # no alarms before
    cp = pd.to_numeric(r.summary["change_point"], errors="coerce")[r.summary["alarm_time"].notna()]
    assert abs(np.median(cp) - SHIFT) <= 1


def test_overlapping_h_step_forecasts_stay_valid_with_the_lag():
    """4-step-ahead forecasts whose errors overlap (y_t = a sum of the last 4 weekly shocks, shared by the
    locations, plus noise; the forecast N(0, total variance) is the true law given what was known 4 weeks
    before): with lag = 4 the alarm stays ≤ 5% (+ 2 s.e.) of 200 seasons; betting as if outcomes came a week
    after their forecast (lag 1) alarms in most seasons (measured: 82%)."""
    seasons, h = 200, 4
    rng = np.random.default_rng(41)
    season, week = _grid(seasons)
    shocks = rng.standard_normal((seasons, T + h))
    overlap = np.stack([shocks[:, k: k + T] for k in range(h)]).sum(axis=0)  # (seasons, T), MA(h − 1)
    y = 0.6 * overlap[season, week] / np.sqrt(h) + 0.8 * rng.standard_normal(season.size)
    u = stats.norm.cdf(y)
    r = pit_monitor(u, week, model=season, lag=h)
    assert r.lag == h
    assert _alarm_share(r) <= _bound(seasons)
    assert np.all(r.path["e_guaranteed"] <= r.path["e_value"] * (1 + 1e-12))
    assert _alarm_share(pit_monitor(u, week, model=season, lag=1)) > 0.5


def test_hub_sets_use_target_dates_and_the_horizon_lag():
    units = pd.DataFrame({"location": ["a", "b"] * 6, "horizon": np.repeat([0, 1, 2], 4),
                          "target_end_date": pd.to_datetime(["2026-01-03", "2026-01-03", "2026-01-10",
                                                             "2026-01-10"] * 3)})
    rng = np.random.default_rng(0)
    ps = PredictionSet(task="regression", y=rng.standard_normal(12),
                       dist=QuantileSet([0.25, 0.5, 0.75], np.tile([-0.67, 0.0, 0.67], (12, 1))), units=units)
    r = pit_monitor(ps)
    assert r.lag == 3
    assert r.path["n"].tolist() == [6, 6]
    assert r.unit == "week"
    assert r.sentence.startswith("No alarm: after 2 weeks")


def test_cell_monitor_example_and_errors():
    week = np.repeat(np.arange(12), 40)
    cells = np.where(week >= 6, 0, np.arange(week.size) % 4)
    r = cell_monitor(cells, np.full(4, 0.25), week)
    assert r.alarm_time is not None and r.change_point == 6
    with pytest.raises(ValueError, match="masses"):
        cell_monitor(cells, np.full(4, 0.3), week)
    with pytest.raises(ValueError, match="cells must lie"):
        cell_monitor(cells + 4, np.full(4, 0.25), week)
    with pytest.raises(ValueError, match="PIT values"):
        pit_monitor(np.array([0.5, 1.5]), np.array([0, 1]))
    with pytest.raises(ValueError, match="lag"):
        pit_monitor(np.array([0.5, 0.5]), np.array([0, 1]), lag=0)
    with pytest.raises(InputError, match="point predictions only"):
        pit_monitor(PredictionSet(task="regression", y=np.zeros(2), point=np.zeros(2), time=np.array([0, 1])))


def test_guarantee_is_below_the_e_value_and_equal_for_lag_one():
    rng = np.random.default_rng(5)
    week = np.repeat(np.arange(20), 30)
    u = rng.random(week.size)
    one = pit_monitor(u, week, lag=1)
    np.testing.assert_allclose(one.path["e_guaranteed"], one.path["e_value"])
    lf, fl = histogram_bets(week, (u * 10).astype(int), (u * 10).astype(int), np.full(10, 0.1), 20, lag=3)
    log_e, log_g = combine_eprocess(lf, fl, 3)
    assert np.all(log_g <= log_e + 1e-12)
