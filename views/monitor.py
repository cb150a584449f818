"""The anytime-valid monitor of the "Over time" section (Regression and Classification pages): which lag to use,
one sentence per model, which change points to draw, and the section's own texts.  Pure pandas, no Streamlit.

The monitor itself is :func:`calib_core.inference.regression_monitor.pit_monitor` /
:func:`calib_core.inference.classification_monitor.probability_monitor`: an e-process per model over the time
column, whose alarm line 1/α holds the false-alarm rate α however often the page is looked at.  The fixed windows
drawn above it do not: each window has a 95% band, so a reader who looks every week and reacts to any window outside
its band raises a false alarm far more often than 5% over a season.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "CAPTION",
    "alarm_change_points",
    "looking_sentence",
    "monitor_caption",
    "monitor_lag",
    "monitor_summary",
    "time_text",
]

CAPTION = ("The monitor uses the rows the filters chose but not the time range picked above: it always watches the "
           "whole season.")


def looking_sentence(alpha: float = 0.05) -> str:
    """Why the monitor and not the windows: looking every week at fixed windows inflates false alarms.

    Parameters
    ----------
    alpha : float, default 0.05
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


def monitor_lag(units: pd.DataFrame | None) -> int:
    """The lag of the monitor's bets: the number of time steps between a forecast and its outcome.

    Forecast-hub data (``units`` with a ``horizon`` column): a forecast of the step at horizon h is made before the
    outcomes of the steps in between are known, so the monitor bets on every lag-th step only (lag interleaved
    e-processes, averaged).  The lag is max(h_max, h_max − h_min + 1): the largest horizon, and the number of
    horizons spanned when the smallest is at most 0 (hubs whose horizon 0 or −1 is a nowcast of a step not yet
    observed when the round is made: horizons 0…3 are 4 steps ahead of the last observed step).  A larger lag keeps
    the monitor valid (it only bets less often).  Other files: 1.

    Parameters
    ----------
    units : DataFrame or None
        The hub's task-ID columns (``PredictionSet.units``) of the whole data (not only the filtered horizons).

    Returns
    -------
    int
        The lag (≥ 1).

    Examples
    --------
    >>> monitor_lag(pd.DataFrame({"horizon": [1, 2, 3, 4]})), monitor_lag(pd.DataFrame({"horizon": [0, 1, 2, 3]}))
    (4, 4)
    >>> monitor_lag(None)
    1
    """
    if units is None or "horizon" not in units.columns:
        return 1
    h = pd.to_numeric(units["horizon"], errors="coerce").to_numpy(dtype=float)
    h = h[np.isfinite(h)]
    if h.size == 0:
        return 1
    hi, lo = int(h.max()), int(h.min())
    return max(1, hi, hi - lo + 1)


def monitor_caption(lag: int, time_name: str = "time") -> str:
    """The caption under the monitor chart: how the rows are used, the lag.

    Parameters
    ----------
    lag : int
        The lag passed to the monitor (:func:`monitor_lag`).
    time_name : str, default "time"
        The time column as the section names it (project text, e.g. ``target_end_date`` of hub data).

    Returns
    -------
    str
        The caption (the project's own text).
    """
    text = (f"The e-value multiplies the evidence against calibration at every {time_name}; rows with the same "
            f"{time_name} are one step. " + CAPTION)
    if lag > 1:
        text += (f" Forecasts up to {lag} steps ahead overlap, so {lag} interleaved monitors (every {lag}th step) "
                 f"are averaged.")
    return text


def time_text(value: Any) -> str:
    """A time as the sentences show it: a date (with the clock when it is not midnight) or a number.

    Parameters
    ----------
    value : datetime64, Timestamp or number
        The time.

    Returns
    -------
    str
        The text.

    Examples
    --------
    >>> time_text(np.datetime64("2026-03-07")), time_text(np.datetime64("2026-03-07T06:30")), time_text(12.0)
    ('2026-03-07', '2026-03-07 06:30', '12')
    """
    if isinstance(value, np.datetime64 | pd.Timestamp):
        ts = pd.Timestamp(value)
        return f"{ts:%Y-%m-%d}" if ts == ts.normalize() else f"{ts:%Y-%m-%d %H:%M}"
    return f"{float(value):.6g}"


def _get(value: Any, model: str) -> Any:
    """One model's time from a scalar or a mapping (None when missing)."""
    got = value.get(model) if isinstance(value, Mapping) else value
    return None if got is None or (not isinstance(got, str) and bool(pd.isna(got))) else got


def monitor_summary(path: pd.DataFrame, threshold: float, alarm_time: Any = None, change_point: Any = None, *,
                    name_models: bool = True) -> pd.DataFrame:
    """One row per model: its e-value now and at most, its alarm, its change point and its sentence.

    A model with an alarm (E_t ≥ 1/α at some t): "A: alarm on 2026-03-07 — the e-value reached 23 ≥ 20: these
    forecasts are judged miscalibrated (a calibrated forecaster reaches the line with probability at most 5%); the change
    is estimated to start after 2026-02-14.  The e-value is now 410."  Without: "B: no alarm — the e-value stayed
    below the alarm line 20 (at most 3.1, now 0.8): no evidence against calibration so far."

    Parameters
    ----------
    path : DataFrame
        The monitor's path: ``model``, ``time``, ``e_value`` per model × time step (``alarm`` optional: recomputed
        as e_value ≥ threshold).
    threshold : float
        The alarm line 1/α.
    alarm_time, change_point : time or mapping of str to time, optional
        The monitor's first alarm and estimated change point: one for every model, or one per model.  A model
        whose path reaches the line but has no alarm time given gets the first such time of its path.
    name_models : bool, default True
        Start each sentence with the model's name (False for a file without a model column).

    Returns
    -------
    DataFrame
        ``model, steps, e_now, e_max, alarm, alarm_time, change_point, sentence`` (model names as in the file:
        escape them before Markdown).

    Examples
    --------
    >>> path = pd.DataFrame({"model": "a", "time": [1.0, 2.0, 3.0], "e_value": [2.0, 25.0, 40.0]})
    >>> monitor_summary(path, 20.0, change_point=1.0, name_models=False)["sentence"].iloc[0][:44]
    'Alarm at 2 — the e-value reached 25 ≥ 20: th'
    """
    threshold = float(threshold)
    alpha = 1.0 / threshold
    out = []
    for model, m in path.groupby("model", sort=False):
        m = m.sort_values("time", kind="stable")
        e = m["e_value"].to_numpy(dtype=float)
        times = m["time"].to_numpy()
        over = np.flatnonzero(e >= threshold)
        alarm_t = _get(alarm_time, model)
        if alarm_t is None and over.size:
            alarm_t = times[over[0]]
        alarmed = alarm_t is not None
        cp = _get(change_point, model) if alarmed else None
        if alarmed:
            at = np.flatnonzero(times >= np.asarray(alarm_t, dtype=times.dtype))
            e_at = float(e[at[0]]) if at.size else float(e.max())
            head = f"{model}: alarm on" if name_models else "Alarm on"
            if not np.issubdtype(times.dtype, np.datetime64):
                head = head.replace(" on", " at")
            text = (f"{head} {time_text(alarm_t)} — the e-value reached {e_at:.3g} ≥ {threshold:g}: these "
                    f"forecasts are judged miscalibrated (a calibrated forecaster reaches the line with probability at most "
                    f"{100 * alpha:g}%)")
            text += f"; the change is estimated to start after {time_text(cp)}." if cp is not None else "."
            text += f" The e-value is now {e[-1]:.3g}."
        else:
            head = f"{model}: no alarm" if name_models else "No alarm"
            text = (f"{head} — the e-value stayed below the alarm line {threshold:g} (at most {e.max():.3g}, now "
                    f"{e[-1]:.3g}): no evidence against calibration so far.")
        out.append({"model": model, "steps": int(e.size), "e_now": float(e[-1]), "e_max": float(e.max()),
                    "alarm": alarmed, "alarm_time": alarm_t, "change_point": cp, "sentence": text})
    return pd.DataFrame(out, columns=["model", "steps", "e_now", "e_max", "alarm", "alarm_time", "change_point",
                                      "sentence"])


def alarm_change_points(summary: pd.DataFrame) -> tuple[dict[str, Any], dict[str, Any]]:
    """The alarm times and change points the chart draws: only those of models with an alarm.

    A change point of a model without an alarm is the argmax of a ratio of a path that found nothing: drawn, it
    would read as a detected change.

    Parameters
    ----------
    summary : DataFrame
        :func:`monitor_summary`'s table.

    Returns
    -------
    alarm_time, change_point : dict of str to time
        Per model with an alarm.
    """
    hit = summary[summary["alarm"]]
    alarms = dict(zip(hit["model"], hit["alarm_time"], strict=True))
    changes = {m: c for m, c in zip(hit["model"], hit["change_point"], strict=True) if _get(c, m) is not None}
    return alarms, changes
