"""A forecast hub's rows named as its forecast units: the task IDs of a row, for the notes of inf / NaN metrics.

A hub's prediction set has one row per (model × forecast unit); its ``row_number`` is the unit's number in reading
order (the numbers the loader's drop messages use, "units 1, 19").  A note naming "row 1" would send the user to
line 1 of some file; the note names "forecast unit 1 [location 01, reference_date 2024-01-06, horizon 0]" instead,
the task IDs the user finds in the model-output and truth files.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..base.predictions import PredictionSet

__all__ = ["hub_unit_label", "unit_names"]

_SKIPPED = ("target_end_date",)  # follows from the round and the horizon


def hub_unit_label(pset: PredictionSet, mask: np.ndarray) -> Callable[[int], str] | None:
    """Position in the subset ``mask`` → the task IDs of that forecast unit ("location 01, horizon 0"); None when
    the set is no forecast hub (no ``units``).

    Parameters
    ----------
    pset : PredictionSet
        The prediction set (its ``units``: one row of task IDs per row).
    mask : ndarray of bool of shape (n,)
        The subset (a model, a group).

    Returns
    -------
    callable or None
        ``label(position) -> str``, evaluated only for the few rows a note names.

    References
    ----------
    Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
    format. PLOS Computational Biology 17(2), e1008618.

    Examples
    --------
    >>> units = pd.DataFrame({"location": ["01", "02"], "horizon": [0, 1]})
    >>> ps = PredictionSet(task="regression", y=np.zeros(2), point=np.zeros(2), units=units)
    >>> hub_unit_label(ps, np.array([False, True]))(0)
    'location 02, horizon 1'
    """
    units = getattr(pset, "units", None)
    if units is None or not len(units.columns):
        return None
    where = np.flatnonzero(np.asarray(mask, dtype=bool))
    shown = [c for c in units.columns if c not in _SKIPPED] or list(units.columns)

    def label(pos: int) -> str:
        row = units.iloc[int(where[pos])]
        return ", ".join(f"{c} {_cell(row[c])}" for c in shown)

    return label


def _cell(v: object) -> str:
    if isinstance(v, pd.Timestamp | np.datetime64):
        return str(pd.Timestamp(v).date())
    return str(v)


def unit_names(pset: PredictionSet, rows: np.ndarray, *, shown: int = 3) -> str:
    """The first ``shown`` of some rows named as forecast units, e.g. "unit 1 [location 01, horizon 0], unit 7 […]
    …" (their ``row_number``s and task IDs; "row 4" without units); ``""`` for no rows.

    Parameters
    ----------
    pset : PredictionSet
        The prediction set.
    rows : ndarray of int
        Row positions (0-based).
    shown : int, default 3
        How many are named.

    Returns
    -------
    str
        The names, " …" when more rows follow.

    References
    ----------
    Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
    format. PLOS Computational Biology 17(2), e1008618.

    Examples
    --------
    >>> units = pd.DataFrame({"location": ["01", "02"], "horizon": [0, 1]})
    >>> ps = PredictionSet(task="regression", y=np.zeros(2), point=np.zeros(2), units=units)
    >>> unit_names(ps, np.array([1]))
    'unit 2 [location 02, horizon 1]'
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        return ""
    n = len(pset.y) if pset.y is not None else int(rows.max()) + 1
    numbers = np.arange(1, n + 1) if pset.row_number is None else np.asarray(pset.row_number)
    label = hub_unit_label(pset, np.ones(n, dtype=bool))
    names = [f"unit {int(numbers[r]):,} [{label(int(r))}]" if label is not None else f"row {int(numbers[r]):,}"
             for r in rows[:shown]]
    return ", ".join(names) + (" …" if rows.size > shown else "")
