"""The anytime-valid monitor of the "Over time" section (Regression and Classification pages): running it on the
filtered rows with the lag of the whole data, which alarms and change points the chart draws, the path as drawn, and
the section's own texts.  Pure pandas, no Streamlit.

The monitor itself is :func:`calib_core.inference.regression_monitor.pit_monitor` /
:func:`calib_core.inference.classification_monitor.probability_monitor`: an e-process per model over the time
column, whose alarm line 1/α holds the false-alarm rate α however often the page is looked at.  The fixed windows
drawn above it do not: each window has a 95% band, so a reader who looks every week and reacts to any window outside
its band raises a false alarm far more often than 5% over a season.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from calib_core.base.eprocess import MonitorResult
from calib_core.base.eprocess_inputs import auto_lag
from calib_core.base.predictions import PredictionSet
from calib_core.data.timecol_units import US_PER, floor_times, instants
from calib_core.inference.classification_monitor import probability_monitor
from calib_core.inference.regression_monitor import pit_monitor

__all__ = [
    "ALPHA",
    "CAPTION",
    "drawn_marks",
    "looking_sentence",
    "model_sentences",
    "monitor_caption",
    "run_monitor",
    "step_time",
    "thin_path",
    "time_name",
]

ALPHA = 0.05
"""The monitor's false-alarm rate on the pages (the alarm line at 1/α = 20)."""

CAPTION = ("The monitor uses the rows the filters chose but not the time range picked above: it always watches the "
           "whole season.")


def looking_sentence(alpha: float = ALPHA) -> str:
    """Why the monitor and not the windows: looking every week at fixed windows inflates false alarms.

    Parameters
    ----------
    alpha : float, default :data:`ALPHA`
        The monitor's false-alarm rate.

    Returns
    -------
    str
        The sentence (the project's own text).

    Examples
    --------
    >>> looking_sentence()[:58]
    'Looking at the windows every week and reacting to any that'
    """
    pct = f"{100 * alpha:g}%"
    return (f"Looking at the windows every week and reacting to any that falls outside its band raises false alarms "
            f"well above {pct}; the monitor's alarm line holds {pct} however often you look.")


def time_name(units: pd.DataFrame | None) -> str:
    """How the section names the time: ``target_end_date`` for hub data (the time the loader took), else "time".

    Parameters
    ----------
    units : DataFrame or None
        ``PredictionSet.units``.

    Returns
    -------
    str
        The name (project text: a fixed column name of the hub format, or "time").
    """
    return "target_end_date" if units is not None and "target_end_date" in units.columns else "time"


def step_time(time: np.ndarray) -> tuple[np.ndarray, str | None]:
    """The monitor's time steps: the time column, or its calendar days (hours) when nearly every row has its own time.

    The monitor learns its bets from the steps before each step, and a step of one row teaches its bets little: on
    time stamps to the second (12,000 rows, 11,994 distinct times) the bets lose at almost every step and miss a
    drift that the monitor finds within a week on the same rows grouped by day.  Grouping rows into coarser steps is
    valid (every bet still uses the steps before its own only; the factors of a step are averaged).  Datetimes with
    fewer than 2 rows per distinct time on average are floored to the day (or to the hour when they span less than
    two weeks, :func:`~calib_core.data.timecol_units.floor_times`: exact, in the data's unit or in microseconds when
    a floored day lies before the nanosecond range); other time columns are used as they are.

    Parameters
    ----------
    time : ndarray
        The time of every row.

    Returns
    -------
    time : ndarray
        The step of every row.
    unit : str or None
        ``"day"`` or ``"hour"`` when the times were grouped, else None.

    Examples
    --------
    >>> t = np.datetime64("2026-01-05") + np.arange(0, 40 * 86400, 3600).astype("timedelta64[s]")
    >>> steps, unit = step_time(t)
    >>> unit, np.unique(steps).size
    ('day', 40)
    """
    t = np.asarray(time)
    if not np.issubdtype(t.dtype, np.datetime64) or t.size == 0:
        return t, None
    if 2 * np.unique(t).size <= t.size:
        return t, None
    us = instants(t)[0]  # the span in microseconds: a nanosecond span over 292 years would overflow
    unit = "D" if int(us.max()) - int(us.min()) >= 14 * US_PER["D"] else "h"
    return floor_times(t, unit), ("day" if unit == "D" else "hour")


def run_monitor(rows: PredictionSet, whole: PredictionSet | None = None, *, alpha: float = ALPHA) -> MonitorResult:
    """The monitor of every model of ``rows`` over its time column: one e-process per model.

    ``pit_monitor`` (regression) or ``probability_monitor`` (classification) over the steps of :func:`step_time`,
    with the lag of the *whole* data
    (:func:`~calib_core.base.eprocess_inputs.auto_lag`: 1 + the largest horizon of a hub, else 1): a filter
    that keeps the short horizons only does not shorten the overlap of the forecasts.

    Parameters
    ----------
    rows : PredictionSet
        The rows to watch (the page's filters applied), with a time column (hub data: ``target_end_date``).
    whole : PredictionSet, optional
        The whole data, for the lag (default ``rows``).
    alpha : float, default :data:`ALPHA`
        The false-alarm rate (the alarm line is 1/α).

    Returns
    -------
    MonitorResult
        ``path`` (model, time, n, factor, e_value, log10_e, e_guaranteed, alarm), ``summary`` (one row per model
        with its ``alarm_time``, ``change_point`` and ``sentence``), ``threshold``, ``lag``.

    Raises
    ------
    InputError
        If the rows have no time, no targets or no predictive distributions.
    """
    monitor = pit_monitor if rows.task == "regression" else probability_monitor
    lag = auto_lag(whole if whole is not None else rows)
    if rows.time is None:  # hub data without a time column: the monitor takes target_end_date itself
        return monitor(rows, alpha=alpha, lag=lag)
    return monitor(rows, time=step_time(rows.time)[0], alpha=alpha, lag=lag)


def monitor_caption(lag: int, time_name: str = "time", grouped: str | None = None) -> str:
    """The caption under the monitor chart: how the rows are used, the lag.

    Parameters
    ----------
    lag : int
        The lag the monitor used (``MonitorResult.lag``).
    time_name : str, default "time"
        The time as the section names it (:func:`time_name`: project text).
    grouped : str, optional
        ``"day"`` / ``"hour"`` when :func:`step_time` grouped the rows.

    Returns
    -------
    str
        The caption (the project's own text).

    Examples
    --------
    >>> monitor_caption(1)[:48]
    'The e-value multiplies the evidence against cali'
    """
    if grouped:
        text = (f"The e-value multiplies the evidence against calibration at every step; nearly every row has its "
                f"own {time_name}, so the rows of each {grouped} are one step (a bet learns from the steps before "
                f"it). " + CAPTION)
    else:
        text = (f"The e-value multiplies the evidence against calibration at every {time_name}; rows with the same "
                f"{time_name} are one step. " + CAPTION)
    if lag > 1:
        text += (f" A forecast's outcome comes up to {lag} steps after it is made, so {lag} interleaved monitors "
                 f"(every {lag}th step) are averaged, and the line drawn is the evidence already guaranteed when "
                 f"the forecasts made so far are resolved.")
    return text


def model_sentences(summary: pd.DataFrame) -> list[str]:
    """The monitor's sentence of every model, named by its model when there are several.

    Parameters
    ----------
    summary : DataFrame
        ``MonitorResult.summary``: ``model`` and ``sentence`` per model.

    Returns
    -------
    list of str
        "A: Alarm on …" per model (the model's name from the file: escape it before Markdown); one model: its
        sentence alone.

    Examples
    --------
    >>> model_sentences(pd.DataFrame({"model": ["a", "b"], "sentence": ["Alarm on …", "No alarm: …"]}))
    ['a: Alarm on …', 'b: No alarm: …']
    """
    sentences = [str(s) for s in summary["sentence"]]
    if len(sentences) < 2:
        return sentences
    prefix = [f"{m}: " for m in summary["model"]]
    return [s if s.startswith(p) else p + s for p, s in zip(prefix, sentences, strict=True)]


def drawn_marks(summary: pd.DataFrame) -> tuple[dict[str, Any], dict[str, Any]]:
    """The alarm times and change points the chart draws: only those of models with an alarm.

    The monitor estimates a change point for every model (the step after which its e-process rose most); for a model
    without an alarm that is the argmax over a path that found nothing, and drawn it would read as a detected change.

    Parameters
    ----------
    summary : DataFrame
        ``MonitorResult.summary``: ``model``, ``alarm_time``, ``change_point`` per model.

    Returns
    -------
    alarm_time, change_point : dict of str to time
        Per model with an alarm.

    Examples
    --------
    >>> summary = pd.DataFrame({"model": ["a", "b"], "alarm_time": [5.0, None], "change_point": [3.0, 1.0]})
    >>> drawn_marks(summary)
    ({'a': 5.0}, {'a': 3.0})
    """
    alarms: dict[str, Any] = {}
    changes: dict[str, Any] = {}
    for model, alarm, change in zip(summary["model"], summary["alarm_time"], summary["change_point"], strict=True):
        if _missing(alarm):
            continue
        alarms[str(model)] = alarm
        if not _missing(change):
            changes[str(model)] = change
    return alarms, changes


def _missing(value: Any) -> bool:
    """None, NaN or NaT."""
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def thin_path(path: pd.DataFrame, threshold: float, max_steps: int = 2000) -> pd.DataFrame:
    """The path as drawn: at most about ``max_steps`` steps per model, its shape kept.

    A time column of timestamps to the second makes every row a step (12,000 steps for 12,000 rows).  A model with
    more steps is cut into ``max_steps // 2`` runs of consecutive steps and each run keeps its lowest and highest
    e-value (min–max decimation: every peak and trough of the line stays where it was), plus the first and last step
    and the first step on or over the alarm line.  The sentences use the whole path.

    Parameters
    ----------
    path : DataFrame
        The monitor's path (``model``, ``time``, ``e_value``), in time order within each model.
    threshold : float
        The alarm line 1/α.
    max_steps : int, default 2000
        Steps per model drawn at most (about).

    Returns
    -------
    DataFrame
        The rows kept, in the path's order.

    Examples
    --------
    >>> path = pd.DataFrame({"model": "a", "time": np.arange(10_000.0), "e_value": np.linspace(1, 30, 10_000)})
    >>> len(thin_path(path, 20.0, max_steps=100)) <= 102
    True
    """
    n = path.groupby("model", sort=False)["model"].transform("size").to_numpy()
    if n.size == 0 or n.max() <= max_steps:
        return path
    pos = path.groupby("model", sort=False).cumcount().to_numpy()
    runs = max(max_steps // 2, 1)
    bucket = pos * runs // n
    e = path["e_value"].to_numpy(dtype=float)
    frame = pd.DataFrame({"model": path["model"].to_numpy(), "bucket": bucket, "e": e, "row": np.arange(e.size)})
    by = frame.groupby(["model", "bucket"], sort=False)
    lo = frame["row"].to_numpy()[by["e"].idxmin().to_numpy()]
    hi = frame["row"].to_numpy()[by["e"].idxmax().to_numpy()]
    over = frame[e >= threshold].groupby("model", sort=False)["row"].min().to_numpy()
    ends = (pos == 0) | (pos == n - 1)
    keep = np.zeros(e.size, dtype=bool)
    keep[np.r_[lo, hi, over].astype(np.int64)] = True
    return path[keep | ends]

