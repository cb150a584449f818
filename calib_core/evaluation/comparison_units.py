"""Which rows of different models forecast the same thing: the forecast units of ``cc.compare_models``.

Two models can only be compared on the targets both forecast.  A forecast unit is named by its task IDs (a hub's
``location``, ``target``, ``horizon``, reference and target dates: ``pset.units`` without the model), by columns
the user names (``units=``), or — when every model has the same rows with the same targets in the same order — by
its position.  :func:`match_units` numbers the units, lays every model's per-row score into a units × models
matrix (NaN where a model has no forecast) and says in words which units some model lacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.predictions import InputError, PredictionSet

__all__ = ["UnitScores", "UnitMatch", "match_units", "unit_columns"]


@dataclass(frozen=True)
class UnitScores:
    """The per-row score of a prediction set, its key and its name in sentences.

    Attributes
    ----------
    values : ndarray of shape (N,)
        The score of every row (lower is better).
    key : str
        ``"wis"``, ``"crps"``, ``"log"`` or ``"brier"``.
    label : str
        The name in sentences ("WIS", "CRPS", "log score", "Brier score", "log loss").
    positive : bool
        Whether the score is never negative (relative scores are ratios of mean scores and need it).
    note : str
        What was scored, in words ("" when nothing to say).

    References
    ----------
    .. [1] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.
    """

    values: np.ndarray
    key: str
    label: str
    positive: bool = True
    note: str = ""


@dataclass(frozen=True)
class UnitMatch:
    """The forecast units of a prediction set with several models.

    Attributes
    ----------
    models : list of str
        The models, in order of first appearance.
    model_code : ndarray of int of shape (N,)
        Every row's model, an index into ``models``.
    unit : ndarray of int of shape (N,)
        Every row's forecast unit, 0 … U − 1.
    n_units : int
        U, the units any model forecasts.
    first_row : ndarray of int of shape (U,)
        A row of every unit (the first).
    how : str
        How the units were matched, in words.
    columns : list of str
        The columns that name a unit (empty when matched by position).
    notes : list of str
        What a user must know (targets that differ between models on one unit).

    References
    ----------
    .. [1] Cramer, E. Y. et al. (2022). Evaluation of individual and ensemble probabilistic forecasts of COVID-19
       mortality in the United States. *PNAS* 119(15), e2113561119.
    """

    models: list[str]
    model_code: np.ndarray
    unit: np.ndarray
    n_units: int
    first_row: np.ndarray
    how: str
    columns: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def matrix(self, values: np.ndarray) -> np.ndarray:
        """Per-row values as a (U, M) matrix: the value of each unit's row of each model, NaN where none."""
        out = np.full((self.n_units, len(self.models)), np.nan)
        out[self.unit, self.model_code] = np.asarray(values, dtype=float)
        return out


def _column(pset: PredictionSet, name: str) -> np.ndarray | None:
    if pset.units is not None and name in pset.units.columns:
        return pset.units[name].to_numpy()
    if pset.slice_columns is not None and name in pset.slice_columns.columns:
        return pset.slice_columns[name].to_numpy()
    return {"time": pset.time, "group": pset.group}.get(name)


def unit_columns(pset: PredictionSet) -> list[str]:
    """The columns that can name a forecast unit: a hub's task IDs, the columns no role took, ``time``, ``group``.

    Parameters
    ----------
    pset : PredictionSet
        The predictions.

    Returns
    -------
    list of str
        Column names.

    References
    ----------
    .. [1] Cramer, E. Y. et al. (2022). Evaluation of individual and ensemble probabilistic forecasts of COVID-19
       mortality in the United States. *PNAS* 119(15), e2113561119.
    """
    names = [c for c in (pset.units.columns if pset.units is not None else []) if c != "model"]
    names += [c for c in (pset.slice_columns.columns if pset.slice_columns is not None else []) if c not in names]
    names += [c for c, v in (("time", pset.time), ("group", pset.group)) if v is not None and c not in names]
    return [str(c) for c in names]


def _codes(values: np.ndarray) -> np.ndarray:
    try:
        codes, _ = pd.factorize(pd.Series(values), use_na_sentinel=False)
    except TypeError:
        codes, _ = pd.factorize(pd.Series(values).astype(str), use_na_sentinel=False)
    return np.asarray(codes, dtype=np.int64)


def _targets(pset: PredictionSet) -> np.ndarray:
    return np.asarray(pset.y if pset.task == "regression" else pset.labels)


def _rows_text(rows: np.ndarray, pset: PredictionSet) -> str:
    rn = pset.row_number[rows] if pset.row_number is not None else rows + 1
    shown = ", ".join(str(int(r)) for r in rn[:5])
    return shown + (" …" if rn.size > 5 else "")


def _by_position(pset: PredictionSet, models: list[str], code: np.ndarray) -> tuple[np.ndarray, int]:
    counts = np.bincount(code, minlength=len(models))
    y = _targets(pset)
    hint = ("add a column naming each forecast unit (e.g. an id, or location and date) and pass units=[its "
            "columns]; with a forecast hub, load its model-output folder with truth=")
    app_hint = "add a column naming each forecast unit (e.g. an id, or location and date) to the file and load it again"
    if np.unique(counts).size > 1:
        per = ", ".join(f"{m} {int(c):,}" for m, c in zip(models, counts))
        raise InputError(f"the models' rows cannot be matched: they have different numbers of rows ({per}) and the "
                         "file names no forecast unit", source=pset.source, columns=["model"], hint=hint,
                         app_hint=app_hint)
    n = int(counts[0])
    order = np.argsort(code, kind="stable")  # rows of model 0, then model 1 …, each in file order
    pos = np.empty(code.size, dtype=np.int64)
    pos[order] = np.tile(np.arange(n), len(models))
    ym = y[order].reshape(len(models), n)
    if pset.task == "regression":
        same = (ym == ym[0]) | (np.isnan(ym.astype(float)) & np.isnan(ym[0].astype(float)))
    else:
        same = ym == ym[0]
    bad = np.flatnonzero(~same.all(axis=0))
    if bad.size:
        k = int(np.flatnonzero(~same[:, bad[0]])[0])
        rows = order[k * n + bad]
        raise InputError(f"the models' rows cannot be matched by position: model '{models[k]}' has other targets "
                         f"than model '{models[0]}' at {bad.size:,} of {n:,} positions (rows {_rows_text(rows, pset)}) "
                         "and the file names no forecast unit", source=pset.source, columns=["model"],
                         rows=[int(r) for r in rows[:10] + 1], hint=hint, app_hint=app_hint)
    return pos, n


def match_units(pset: PredictionSet, units: str | Sequence[str] | None = None) -> UnitMatch:
    """Number the forecast units of a prediction set with several models.

    Units are named by the ``units`` columns when given (looked up in ``pset.units``, ``pset.slice_columns``, then
    ``time`` and ``group``); else by a hub's task IDs (``pset.units`` without ``model``); else by position, when
    every model has the same number of rows and identical targets in the same order.

    Parameters
    ----------
    pset : PredictionSet
        The predictions (a ``model`` column with at least two models).
    units : str or sequence of str, optional
        The columns that name a forecast unit.

    Returns
    -------
    UnitMatch
        Models, every row's model and unit, how they were matched.

    Raises
    ------
    InputError
        One model only; an unknown ``units`` column (the message lists the choices); rows that cannot be matched
        (no unit columns and models with other rows or targets); two rows of one model for the same unit.

    References
    ----------
    .. [1] Cramer, E. Y. et al. (2022). Evaluation of individual and ensemble probabilistic forecasts of COVID-19
       mortality in the United States. *PNAS* 119(15), e2113561119.

    Examples
    --------
    >>> import numpy as np
    >>> ps = PredictionSet("regression", y=np.array([1.0, 2.0, 1.0, 2.0]), model=np.array(["a", "a", "b", "b"]))
    >>> m = match_units(ps)
    >>> m.models, m.unit.tolist(), m.how
    (['a', 'b'], [0, 1, 0, 1], 'by position (every model has the same 2 rows with the same targets)')
    """
    models = [str(m) for m in pset.models()]
    if pset.model is None or len(models) < 2:
        raise InputError(f"a comparison needs two models; the data has one ({models[0]!r})", source=pset.source,
                         columns=["model"], hint="load a file with a model column naming two or more models",
                         app_hint="load a file with a model column naming two or more models")
    code = np.asarray(pd.Categorical(np.asarray(pset.model).astype(str), categories=models).codes, dtype=np.int64)
    if isinstance(units, str):
        units = [units]
    if units is None and pset.units is not None:
        units = [c for c in pset.units.columns if c != "model"]
    notes: list[str] = []
    if units:
        cols = [str(c) for c in units]
        missing = [c for c in cols if _column(pset, c) is None]
        if missing:
            choices = unit_columns(pset)
            listed = ", ".join(f"'{c}'" for c in choices) if choices else "none in this file"
            raise InputError(f"cannot match forecast units by {missing}: the loaded data has no such column "
                             f"(columns that can name a unit: {listed})", source=pset.source, columns=missing,
                             hint="pass units= some of those columns", app_hint="pick the columns that name a unit")
        unit = _codes(_column(pset, cols[0]))
        for c in cols[1:]:  # combine one column at a time: codes stay below N², hashed, never sorted
            nxt = _codes(_column(pset, c))
            unit = _codes(unit * (int(nxt.max()) + 1) + nxt)
        how = "by " + ", ".join(cols)
    else:
        cols = []
        unit, n = _by_position(pset, models, code)
        how = f"by position (every model has the same {n:,} rows with the same targets)"
    n_units = int(unit.max()) + 1 if unit.size else 0
    key = unit * len(models) + code
    order = np.argsort(key, kind="stable")
    dup = order[1:][key[order][1:] == key[order][:-1]]
    if dup.size:
        m = models[int(code[dup[0]])]
        raise InputError(f"model '{m}' has {dup.size + 1:,} rows for one forecast unit or more (rows "
                         f"{_rows_text(dup, pset)}): the columns {cols} do not tell its forecasts apart",
                         source=pset.source, columns=cols, rows=[int(r) + 1 for r in dup[:10]],
                         hint="pass units= with the column that tells them apart as well",
                         app_hint="add the column that tells those rows apart")
    first = np.full(n_units, -1, dtype=np.int64)
    first[unit[::-1]] = np.arange(unit.size)[::-1]
    y = _targets(pset)
    differ = y != y[first][unit]
    if pset.task == "regression":
        yf = y.astype(float)
        differ &= ~(np.isnan(yf) & np.isnan(yf[first][unit]))
    if differ.any():
        n_bad = np.unique(unit[differ]).size
        notes.append(f"the models' targets differ on {n_bad:,} of {n_units:,} forecast units matched {how} (rows "
                     f"{_rows_text(np.flatnonzero(differ), pset)}): each model is scored against its own target; "
                     "check that these columns name the same forecast for every model")
    return UnitMatch(models=models, model_code=code, unit=unit, n_units=n_units, first_row=first, how=how,
                     columns=cols, notes=notes)
