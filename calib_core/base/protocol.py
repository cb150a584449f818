"""The evaluation protocol shared by both tasks: splits, trials, the result type.

Protocol (CRUDE §5.1): the rows of each model are split into calibration and test rows,
either by the ``split`` column (``cal``/``test``) or at random (test fraction 0.5, seed 0); every
calibrator is cloned (``sklearn.base.clone``), fitted on the calibration rows only and applied to
the test rows only; every metric is computed on the test rows.  ``repeats = R`` re-draws the random
split R times (CRUDE uses 20 trials) and the summary reports mean ± std over trials.

The long table has one row per (model, calibrator, trial, metric); ``None`` as a calibrator means
"no recalibration" (the base predictions on the same test rows).  The trial loop that fits and scores the
calibrators is written once, in :mod:`calib_core.evaluation.trials`, and the per-task modules
``calib_core.evaluation.regression`` and ``calib_core.evaluation.classification`` plug in their hooks;
``cc.evaluate`` (:mod:`calib_core.api`) dispatches on the task.  Both tasks draw their splits with
:func:`trial_splits` and get their :class:`EvaluationResult` from :func:`build_result`, so they are split and
summarised identically.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .predictions import PredictionSet

__all__ = [
    "DIAGRAM_RESAMPLES",
    "EvaluationResult",
    "Progress",
    "LONG_COLUMNS",
    "MIN_SPLIT_ROWS",
    "SUMMARY_COLUMNS",
    "build_result",
    "has_split_column",
    "model_rows",
    "split_mode",
    "split_labels",
    "split_rows",
    "split_too_small",
    "summarise",
    "trial_count",
    "trial_labels",
    "trial_splits",
]


LONG_COLUMNS = ["model", "calibrator", "trial", "metric", "value", "n_cal", "n_test"]
SUMMARY_COLUMNS = ["model", "calibrator", "metric", "mean", "std", "n_trials"]
#: Bootstrap resamples for the intervals of the before/after diagram tables (``diagrams=True``).
DIAGRAM_RESAMPLES = 100

#: Fewest calibration rows and fewest test rows of a model's split: one row fits no spread, and one test row has no
#: calibration curve, no standard deviation of z and no bin to compare — such a model is skipped with a message.
MIN_SPLIT_ROWS = 2

#: ``progress(done, total, text)``: called as the work of an evaluation completes.
Progress = Callable[[int, int, str], None]


@dataclass
class EvaluationResult:
    """Result of :func:`calib_core.evaluate` (both tasks).

    Attributes
    ----------
    long : DataFrame
        Columns model, calibrator, trial, metric, value, n_cal, n_test: one row per calibrator × metric × trial and
        model.
    summary : DataFrame
        Columns model, calibrator, metric, mean, std (ddof = 1 over trials; NaN for a single trial or when a value
        is infinite), n_trials (:func:`summarise`).
    splits : list of dict
        Per (model, trial), the 0-based row positions of the calibration and test rows in the prediction set
        (``{"model", "trial", "cal", "test"}``).
    fit_seconds : DataFrame or None
        Fit + transform time per (model, calibrator, trial) (columns model, calibrator, trial, seconds).
    messages : list of str
        Anything skipped or adjusted, in words.
    task : {"regression", "classification"}
        The task.
    calibrators : list of str
        The calibrator names in the order given.
    n_trials : int
        Number of trials.
    split : {"column", "random"}
        ``"column"``: a fixed split (the split column or given labels); ``"random"``, with its ``seed`` and
        ``test_fraction``.
    seed : int
        Seed of the random split.
    test_fraction : float
        Share of test rows of the random split.
    split_labels : ndarray of str or None
        Per-row labels of the first trial (``cal``/``test``; a fixed split keeps its own lower-cased labels).
    fitted : dict
        Per model, the estimators fitted on the first trial's calibration rows (name → estimator, None for the
        uncalibrated baseline), so views of that trial reuse them instead of fitting again.
    diagrams : dict
        With ``diagrams=True``: per model and calibrator, the diagram tables of the first trial's test rows.
    calibrated : dict
        With ``diagrams=True``: per model and calibrator, the calibrated predictions of every row of the model (a
        distribution for regression, a probability matrix for classification).

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).
    """

    long: pd.DataFrame
    summary: pd.DataFrame
    splits: list[dict[str, Any]] = field(default_factory=list)
    fit_seconds: pd.DataFrame | None = None
    messages: list[str] = field(default_factory=list)
    task: str = "regression"
    calibrators: list[str] = field(default_factory=list)
    n_trials: int = 1
    split: str = "random"
    seed: int = 0
    test_fraction: float = 0.5
    split_labels: np.ndarray | None = None
    fitted: dict[str, dict[str, Any]] = field(default_factory=dict)
    diagrams: dict[str, dict[str, dict[str, pd.DataFrame]]] = field(default_factory=dict)
    calibrated: dict[str, dict[str, Any]] = field(default_factory=dict)

    def split_description(self) -> str:
        """How the rows were split, in words (e.g. "20 random splits (seed 0, 50% test)")."""
        if self.split == "column":
            return "the file's split column"
        n = self.n_trials
        return f"{n} random split{'s' if n > 1 else ''} (seed {self.seed}, {self.test_fraction:.0%} test)"

    def wide(self, stat: str = "mean", model: str | None = None) -> pd.DataFrame:
        """Calibrators as rows, metrics as columns (``stat`` = "mean" or "std")."""
        s = self.summary
        if model is not None:
            s = s[s["model"] == model]
        return s.pivot_table(index=["model", "calibrator"], columns="metric", values=stat, sort=False)

    def formatted(self, digits: int = 3, model: str | None = None) -> pd.DataFrame:
        """"mean ± std" strings, calibrators as rows and metrics as columns."""
        s = self.summary if model is None else self.summary[self.summary["model"] == model]
        txt = s.assign(
            text=[
                f"{m:.{digits}g}" if not np.isfinite(sd) else f"{m:.{digits}g} ± {sd:.{digits}g}"
                for m, sd in zip(s["mean"], s["std"])
            ]
        )
        order = pd.MultiIndex.from_frame(s[["model", "calibrator"]].drop_duplicates())
        wide = txt.pivot(index=["model", "calibrator"], columns="metric", values="text")
        return wide.reindex(index=order, columns=pd.unique(s["metric"]))


def split_rows(
    n: int,
    split_labels: np.ndarray | None,
    how: str,
    trial: int,
    seed: int,
    test_fraction: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Calibration and test row positions (0-based) for one trial.

    ``how="column"``: rows labelled ``cal`` / ``test`` (case-insensitive; other labels are left
    out).  ``how="random"``: a permutation drawn from ``default_rng([seed, trial])``; the first
    round(test_fraction·n) rows (at least 1, at most n − 1) are the test rows.

    Parameters
    ----------
    n : int
        Number of rows.
    split_labels : ndarray of shape (n,) or None
        The labels of a fixed split.
    how : {"column", "random"}
        The split.
    trial, seed : int
        The trial and the seed of a random split.
    test_fraction : float
        Share of test rows of a random split, strictly between 0 and 1.

    Returns
    -------
    cal, test : ndarray of int
        Sorted row positions.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).

    Examples
    --------
    >>> split_rows(6, None, "random", trial=0, seed=0, test_fraction=0.5)
    (array([0, 1, 4]), array([2, 3, 5]))
    """
    if how == "column":
        lab = np.char.lower(np.asarray(split_labels).astype(str))
        return np.flatnonzero(lab == "cal"), np.flatnonzero(lab == "test")
    if how != "random":
        raise ValueError(f"split must be None, 'column', 'random' or an array, got {how!r}")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError("test_fraction must be strictly between 0 and 1")
    if n < 2:
        raise ValueError("a random split needs at least 2 rows")
    perm = np.random.default_rng([int(seed), int(trial)]).permutation(n)
    n_test = int(np.clip(round(test_fraction * n), 1, n - 1))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def split_too_small(
    model: str, n: int, labels: np.ndarray | None, how: str, test_fraction: float, *, others: bool = False
) -> str:
    """Why ``model``'s ``n`` rows cannot be split into at least :data:`MIN_SPLIT_ROWS` calibration and as many test
    rows ("" when they can), in the words of the evaluation: a random split holds out round(test_fraction·n) rows
    (at least 1, at most n − 1, as :func:`split_rows`); a fixed split counts the model's ``cal`` and ``test``
    labels.

    Parameters
    ----------
    model : str
        The model's name.
    n : int
        Its number of rows.
    labels : ndarray of shape (n,) or None
        Its labels of a fixed split.
    how : {"column", "random"}
        The split.
    test_fraction : float
        Share of test rows of a random split.
    others : bool, default False
        The set has other models, which are still recalibrated (the message says so).

    Returns
    -------
    str
        The message, or "".

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).

    Examples
    --------
    >>> split_too_small("A", 3, None, "random", 0.5)
    "model 'A': 3 row(s) give 1 calibration and 2 test row(s) at test fraction 0.5 — too few to recalibrate ..."
    >>> split_too_small("A", 4, None, "random", 0.5)
    ''
    """
    if how == "column":
        lab = np.char.lower(np.asarray(labels).astype(str))
        n_cal, n_test = int(np.count_nonzero(lab == "cal")), int(np.count_nonzero(lab == "test"))
        given = f"the split column gives {n_cal} calibration and {n_test} test row(s)"
    else:
        n_test = int(np.clip(round(test_fraction * n), 1, n - 1)) if n >= 2 else 0
        n_cal = n - n_test
        given = f"{n} row(s) give {n_cal} calibration and {n_test} test row(s) at test fraction {test_fraction:g}"
    if n_cal >= MIN_SPLIT_ROWS and n_test >= MIN_SPLIT_ROWS:
        return ""
    return (f"model {model!r}: {given} — too few to recalibrate (at least {MIN_SPLIT_ROWS} of each are needed); "
            "skipped" + (", the other models are recalibrated" if others else ""))


def split_mode(pset: PredictionSet, split: Any) -> tuple[str, np.ndarray | None]:
    """``(how, labels)`` for :func:`split_rows` from the ``split`` argument of an evaluation (see
    :func:`calib_core.api.evaluate`): the split column, a random split, or per-row labels / an "is test" mask.

    Parameters
    ----------
    pset : PredictionSet
        The evaluated set.
    split : None, "column", "random" or array_like of shape (n_rows,)
        None: the split column when it has both ``cal`` and ``test`` rows, else random; an array: per-row labels
        or a boolean "is test" mask.

    Returns
    -------
    how : {"column", "random"}
        The split.
    labels : ndarray or None
        The per-row labels of a fixed split.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).
    """
    if split is None:
        if pset.split is not None:
            lab = np.char.lower(np.asarray(pset.split).astype(str))
            if np.any(lab == "cal") and np.any(lab == "test"):
                return "column", np.asarray(pset.split)
        return "random", None
    if isinstance(split, str):
        if split == "column":
            if pset.split is None:
                raise ValueError("split='column' but the prediction set has no split column")
            return "column", np.asarray(pset.split)
        return split, None
    arr = np.asarray(split)
    if arr.shape != (pset.n_rows,):
        raise ValueError(f"a split array must have one entry per row ({pset.n_rows}), got shape {arr.shape}")
    if arr.dtype == bool:
        arr = np.where(arr, "test", "cal")
    return "column", arr


def has_split_column(pset: PredictionSet) -> bool:
    """True when the set has a ``split`` column with both ``cal`` and ``test`` rows.

    Parameters
    ----------
    pset : PredictionSet
        The set.

    Returns
    -------
    bool
        Whether its split column fixes the split.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).
    """
    if pset.split is None:
        return False
    lab = np.char.lower(np.asarray(pset.split).astype(str))
    return bool(np.any(lab == "cal") and np.any(lab == "test"))


def model_rows(pset: PredictionSet, model: str) -> np.ndarray:
    """0-based row positions of ``model`` in the set (every row when the set has no model column).

    Parameters
    ----------
    pset : PredictionSet
        The set.
    model : str
        One of its models.

    Returns
    -------
    ndarray of int
        The rows.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).
    """
    return np.arange(pset.n_rows) if pset.model is None else np.flatnonzero(pset.model == model)


def trial_count(how: str, repeats: int, messages: list[str]) -> int:
    """Number of trials of an evaluation: ``max(1, repeats)`` for a random split; a fixed split (``how ==
    "column"``) gives one trial, and asking for more is noted in ``messages``.

    Parameters
    ----------
    how : {"column", "random"}
        The split.
    repeats : int
        The trials asked for.
    messages : list of str
        The evaluation's messages (appended to).

    Returns
    -------
    int
        The number of trials.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).

    Examples
    --------
    >>> messages = []
    >>> trial_count("column", 5, messages), messages
    (1, ['the split is fixed by the split column, so repeats=5 gives one trial'])
    """
    n_trials = max(1, int(repeats))
    if how == "column" and n_trials > 1:
        messages.append(f"the split is fixed by the split column, so repeats={repeats} gives one trial")
        n_trials = 1
    return n_trials


def trial_labels(
    pset: PredictionSet, how: str, labels: np.ndarray | None, trial: int, seed: int, test_fraction: float
) -> np.ndarray:
    """Per-row split labels of one trial: a fixed split's own labels (lower-cased), or ``cal``/``test`` of the
    random draw of each model (exactly the rows :func:`trial_splits` yields).

    Parameters
    ----------
    pset : PredictionSet
        The set.
    how : {"column", "random"}
        The split.
    labels : ndarray or None
        The labels of a fixed split.
    trial, seed : int
        The trial and the seed of a random split.
    test_fraction : float
        Share of test rows of a random split.

    Returns
    -------
    ndarray of str, shape (n_rows,)
        ``cal`` / ``test`` ("" for a model of one row, which has no split).

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).
    """
    if how == "column":
        return np.char.lower(np.asarray(labels).astype(str))
    out = np.full(pset.n_rows, "", dtype=object)  # "": a model of one row, which has no split
    for model in pset.models():
        rows = model_rows(pset, model)
        if rows.size < 2:
            continue
        cal_pos, test_pos = split_rows(rows.size, None, how, trial, seed, test_fraction)
        out[rows[cal_pos]] = "cal"
        out[rows[test_pos]] = "test"
    return out.astype(str)


def split_labels(pset: PredictionSet, trial: int, seed: int, test_fraction: float) -> np.ndarray:
    """Per-row ``cal``/``test`` labels of random trial ``trial`` (the evaluation's own random split, per model).

    Parameters
    ----------
    pset : PredictionSet
        The set.
    trial, seed : int
        The trial and the seed.
    test_fraction : float
        Share of test rows.

    Returns
    -------
    ndarray of str, shape (n_rows,)
        The labels (:func:`trial_labels` of the random split).

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).
    """
    return trial_labels(pset, "random", None, trial, seed, test_fraction)


def trial_splits(
    pset: PredictionSet,
    labels: np.ndarray | None,
    how: str,
    n_trials: int,
    seed: int,
    test_fraction: float,
    splits: list[dict[str, Any]],
    messages: list[str],
    on_skip: Callable[[], None] | None = None,
) -> Iterator[tuple[str, int, np.ndarray, np.ndarray]]:
    """Yield ``(model, trial, cal_idx, test_idx)`` for every model and trial of the protocol.

    Each split is recorded in ``splits``.  A model whose rows give fewer than :data:`MIN_SPLIT_ROWS` calibration or
    test rows (:func:`split_too_small`; the sizes are the same in every trial) is named in ``messages``, each of its
    trials announced through ``on_skip`` and none yielded: the other models go on.  Shared by the regression and
    the classification evaluation so both draw exactly the same rows.

    Parameters
    ----------
    pset : PredictionSet
        The set.
    labels : ndarray or None
        The labels of a fixed split.
    how : {"column", "random"}
        The split.
    n_trials, seed : int
        Number of trials; the seed of a random split.
    test_fraction : float
        Share of test rows of a random split.
    splits : list of dict
        Appended to: ``{"model", "trial", "cal", "test"}`` per yielded split.
    messages : list of str
        Appended to: the models skipped.
    on_skip : callable or None, default None
        Called once per trial of a skipped model.

    Yields
    ------
    tuple of (str, int, ndarray, ndarray)
        The model, the trial, the calibration and the test row positions in ``pset``.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).
    """
    models = pset.models()
    for model in models:
        mrows = model_rows(pset, model)
        lab = None if labels is None else labels[mrows]
        small = split_too_small(model, mrows.size, lab, how, test_fraction, others=len(models) > 1)
        if small:
            messages.append(small)
            for _ in range(n_trials):
                if on_skip is not None:
                    on_skip()
            continue
        for trial in range(n_trials):
            cal_pos, test_pos = split_rows(mrows.size, lab, how, trial, seed, test_fraction)
            cal_idx, test_idx = mrows[cal_pos], mrows[test_pos]
            splits.append({"model": model, "trial": trial, "cal": cal_idx, "test": test_idx})
            yield model, trial, cal_idx, test_idx


def build_result(
    rows: list[list[Any]],
    timing: list[list[Any]],
    splits: list[dict[str, Any]],
    messages: list[str],
    **extra: Any,
) -> EvaluationResult:
    """The EvaluationResult of collected long-table rows and fit timings.

    Parameters
    ----------
    rows, timing : list of list
        Long-table rows (:data:`LONG_COLUMNS`); (model, calibrator, trial, seconds) rows.
    splits, messages : list
        The splits drawn; the messages.
    **extra
        The other fields of :class:`EvaluationResult`.

    Returns
    -------
    EvaluationResult
        With the summary of the long table (:func:`summarise`).

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).
    """
    long = pd.DataFrame(rows, columns=LONG_COLUMNS)
    fit_seconds = pd.DataFrame(timing, columns=["model", "calibrator", "trial", "seconds"])
    return EvaluationResult(
        long=long, summary=summarise(long), splits=splits, fit_seconds=fit_seconds, messages=messages, **extra
    )


def summarise(long: pd.DataFrame) -> pd.DataFrame:
    """Summary table (model, calibrator, metric, mean, std, n_trials) of a long table.

    The mean and the standard deviation (ddof = 1) over trials; an infinite value (e.g. an NLL beyond an isotonic
    truncation) makes the mean infinite and the std NaN; one trial gives a NaN std.

    Parameters
    ----------
    long : DataFrame
        Columns :data:`LONG_COLUMNS`.

    Returns
    -------
    DataFrame
        Columns :data:`SUMMARY_COLUMNS`, groups in order of appearance.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: calibration and test rows, 20 random trials, mean ± std).
    """
    if long.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)

    def agg(v: pd.Series) -> pd.Series:
        """Mean and ddof=1 std over trials (an infinite value makes the mean infinite, the std NaN)."""
        x = v.to_numpy(dtype=float)
        fin = x[np.isfinite(x)]
        if fin.size < x.size:  # an infinite value (e.g. NLL beyond an isotonic truncation) dominates
            mean = float(np.mean(x)) if not np.isnan(x).all() else np.nan
        else:
            mean = float(fin.mean()) if fin.size else np.nan
        std = float(np.std(fin, ddof=1)) if fin.size > 1 and fin.size == x.size else np.nan
        return pd.Series({"mean": mean, "std": std, "n_trials": int(x.size)})

    g = long.groupby(["model", "calibrator", "metric"], sort=False)["value"]
    out = g.apply(agg).unstack().reset_index()
    out["n_trials"] = out["n_trials"].astype(int)
    return out[SUMMARY_COLUMNS]
