"""What a calibration monitor reads from a prediction set: the time of every row, the models and the lag.

The monitor's steps are the distinct times (:func:`calib_core.base.eprocess.time_steps`).  A prediction set gives
its time column, else a forecast hub's ``target_end_date`` (:func:`monitor_time`); a hub's horizons give the lag
(:func:`auto_lag`): the outcome of a forecast of horizon k made on a reference date is known k + 1 steps later.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .predictions import InputError, PredictionSet

__all__ = ["monitor_time", "auto_lag"]


def monitor_time(pset: PredictionSet, time: Any = None) -> np.ndarray:
    """The time of every row of a prediction set for a monitor.

    ``time``: an array (one value per row), a column name (looked up in ``pset.units``, then
    ``pset.slice_columns``; ``"time"`` is the set's time column), or None: the set's time column, else a hub's
    ``target_end_date``.

    Parameters
    ----------
    pset : PredictionSet
        The predictions.
    time : array-like, str or None, default None
        Which time.

    Returns
    -------
    ndarray of shape (N,)
        The times.

    Raises
    ------
    InputError
        When there is no time, naming the columns that could be one.

    References
    ----------
    .. [1] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [2] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663 (correction: *Biometrika* 109(4), 1181).
    """
    n = pset.n_rows
    if time is not None and not isinstance(time, str):
        values = np.asarray(time)
        if values.shape != (n,):
            raise ValueError(f"time must have one value per row ({n}), got shape {values.shape}")
        return values
    frames = [f for f in (pset.units, pset.slice_columns) if f is not None]
    if isinstance(time, str) and time != "time":
        for f in frames:
            if time in f.columns:
                return f[time].to_numpy()
        names = sorted({str(c) for f in frames for c in f.columns} | ({"time"} if pset.time is not None else set()))
        raise InputError(f"{pset.source}: the monitor's time column {time!r} is not in the file.",
                         source=pset.source, columns=[time],
                         hint=f"choose one of: {', '.join(names) or 'no column is available'}.")
    if pset.time is not None:
        return np.asarray(pset.time)
    if pset.units is not None and "target_end_date" in pset.units.columns:
        return pset.units["target_end_date"].to_numpy()
    raise InputError(f"{pset.source}: the monitor needs a time for every row, and the file has no time column.",
                     source=pset.source,
                     hint="add a column named time or date (or map one with columns={'time': ...}), or pass time=.",
                     app_hint="map a time column on the Data page.")


def auto_lag(pset: PredictionSet | None) -> int:
    """The lag of a prediction set's forecasts in steps: 1 + the largest horizon of a hub's rows, else 1.

    A hub forecast of horizon k made on a reference date knows outcomes up to the week before it, so its outcome
    comes k + 1 steps later; any larger lag is also valid (a bet that uses less of the past).

    Parameters
    ----------
    pset : PredictionSet or None
        The predictions.

    Returns
    -------
    int
        h ≥ 1.

    References
    ----------
    .. [1] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [2] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663 (correction: *Biometrika* 109(4), 1181).
    """
    if pset is None or pset.units is None or "horizon" not in pset.units.columns:
        return 1
    hz = pd.to_numeric(pset.units["horizon"], errors="coerce").to_numpy(dtype=float)
    hz = hz[np.isfinite(hz)]
    return int(max(1, 1 + hz.max())) if hz.size else 1


def resolve_lag(lag: Any, pset: PredictionSet | None) -> int:
    """The lag h of a monitor: an integer >= 1, or "auto"/None for :func:`auto_lag`."""
    if lag == "auto" or lag is None:
        return auto_lag(pset)
    if isinstance(lag, bool) or not isinstance(lag, int | np.integer) or int(lag) < 1:
        raise ValueError(f"lag must be an integer >= 1 or 'auto', got {lag!r}")
    return int(lag)


def model_rows(model: Any, n: int) -> list[tuple[str, np.ndarray]]:
    """The rows of every model, in order of first appearance (one model "model" when None)."""
    if model is None:
        return [("model", np.arange(n))]
    values = np.asarray(model)
    if values.shape != (n,):
        raise ValueError(f"model must have one value per row ({n}), got shape {values.shape}")
    codes, names = pd.factorize(values)
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(names)))[:-1]
    return [(str(name), rows) for name, rows in zip(names, np.split(order, bounds), strict=True)]
