"""The trial loop of ``cc.evaluate``, written once for both tasks: split → fit on calibration rows → apply to test
rows → score, over models × trials × calibrators.

The protocol (:mod:`calib_core.base.protocol`; Zelikman et al. 2020, §5.1) draws the splits; this module runs the
calibrators on them.  :func:`run_trials` owns the order of operations, the timings, the failures, the progress
count and the first-trial views, and asks a :class:`TrialTask` — supplied by
:mod:`calib_core.evaluation.regression` and :mod:`calib_core.evaluation.classification` — only what differs
between the tasks: how the rows of a split are read, how a calibrator is fitted and applied, how the test rows are
scored and what the ``diagrams=True`` views keep.  So a regression and a classification comparison are split,
fitted, recorded and summarised by the same lines.

The helpers the loop shares with the per-slice comparison live here too: the calibrator names
(:func:`normalise_calibrators`), the slice labels of the slice-wise calibrators (:func:`slice_inputs`,
:func:`slice_kwargs`, :func:`slice_note`), the bookkeeping (:class:`TrialLog`), the first trial's views
(:func:`first_trial_views`) and the per-slice metric rows (:func:`slice_comparison_rows`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..base.groupwise import slice_labels
from ..base.predictions import PredictionSet
from ..base.protocol import (
    EvaluationResult,
    Progress,
    build_result,
    model_rows,
    split_mode,
    trial_count,
    trial_labels,
    trial_splits,
)

__all__ = [
    "TrialLog",
    "TrialTask",
    "first_trial_views",
    "normalise_calibrators",
    "run_trials",
    "slice_comparison_rows",
    "slice_inputs",
    "slice_kwargs",
    "slice_note",
]


def normalise_calibrators(calibrators: Any) -> dict[str, Any]:
    """Calibrators as a dict name → estimator.

    A mapping is kept; one estimator or a sequence is named by class (``"none"`` for None; repeated names get
    " (2)", " (3)" …).

    Parameters
    ----------
    calibrators : mapping name → estimator, sequence of estimators, one estimator or None
        What ``cc.evaluate`` was given; None stands for the uncalibrated predictions.

    Returns
    -------
    dict of str → estimator or None
        The calibrators in the order given.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: every method against the uncalibrated baseline).

    Examples
    --------
    >>> from calib_core.calibrators.regression import StdScaling
    >>> list(normalise_calibrators([None, StdScaling(), StdScaling()]))
    ['none', 'StdScaling', 'StdScaling (2)']
    """
    if calibrators is None:
        return {"none": None}
    if isinstance(calibrators, Mapping):
        return dict(calibrators)
    if not isinstance(calibrators, Sequence) or isinstance(calibrators, str):
        calibrators = [calibrators]
    out: dict[str, Any] = {}
    for cal in calibrators:
        base = "none" if cal is None else type(cal).__name__
        name, k = base, 2
        while name in out:
            name, k = f"{base} ({k})", k + 1
        out[name] = cal
    return out


def slice_inputs(pset: PredictionSet, cals: Mapping[str, Any]) -> dict[str, np.ndarray | Exception]:
    """The slice labels every slice-wise calibrator (``uses_groups``) reads.

    Parameters
    ----------
    pset : PredictionSet
        The evaluated set.
    cals : mapping name → estimator or None
        The calibrators; only those with ``uses_groups`` are read.

    Returns
    -------
    dict of str → ndarray of shape (n_rows,) or Exception
        Per ``by`` column of a slice-wise calibrator, the per-row labels of ``pset``
        (:func:`calib_core.base.groupwise.slice_labels`), or the ``ValueError`` saying why there are none (raised when
        that calibrator is fitted, so it fails alone with the reason in the messages).

    References
    ----------
    .. [1] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005, §4.5
           (Mondrian taxonomies: one calibration per category of the rows).
    """
    out: dict[str, np.ndarray | Exception] = {}
    for cal in cals.values():
        if cal is None or not getattr(cal, "uses_groups", False):
            continue
        by = str(cal.get_params(deep=False).get("by"))
        if by not in out:
            try:
                out[by] = slice_labels(pset, by)
            except ValueError as exc:
                out[by] = exc
    return out


def slice_kwargs(cal: Any, slices: Mapping[str, np.ndarray | Exception], rows: np.ndarray) -> dict[str, Any]:
    """The extra keyword arguments of ``fit`` / ``transform`` for some rows: the slice labels of a slice-wise
    calibrator.

    Parameters
    ----------
    cal : estimator or None
        A calibrator (fitted or not).
    slices : mapping
        :func:`slice_inputs` of the evaluation.
    rows : ndarray of int
        Row positions in the evaluated set.

    Returns
    -------
    dict
        ``{"groups": labels of rows}`` for a slice-wise calibrator, ``{}`` for the others.

    Raises
    ------
    ValueError
        The reason the slice column of a slice-wise calibrator is missing.

    References
    ----------
    .. [1] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005, §4.5.
    """
    if cal is None or not getattr(cal, "uses_groups", False):
        return {}
    labels = slices[str(cal.get_params(deep=False).get("by"))]
    if isinstance(labels, Exception):
        raise labels
    return {"groups": labels[rows]}


def slice_note(est: Any, kwargs: Mapping[str, Any], name: str, messages: list[str]) -> None:
    """Append (once) the note of a fitted slice-wise calibrator counting the rows that used the global fit.

    Parameters
    ----------
    est : estimator
        The fitted calibrator (its ``note(groups)`` is read when it has one).
    kwargs : mapping
        The :func:`slice_kwargs` it was applied with.
    name : str
        The calibrator's name in the evaluation.
    messages : list of str
        The evaluation's messages (appended to).

    References
    ----------
    .. [1] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005, §4.5.
    """
    if "groups" not in kwargs or not hasattr(est, "note"):
        return
    note = est.note(kwargs["groups"])
    if note:
        text = f"{name}: {note}"
        if text not in messages:
            messages.append(text)


class TrialLog:
    """Bookkeeping of the trial loop of an evaluation, shared by both tasks.

    Collects the long-table rows, the fit timings, the splits, the first trial's fitted estimators and the
    failures, appends to ``messages`` and counts progress; :meth:`result` builds the :class:`EvaluationResult`.

    Parameters
    ----------
    models : sequence of str
        The models of the evaluated set.
    n_calibrators : int
        Number of calibrators (the uncalibrated baseline included).
    n_trials : int
        Number of trials.
    diagrams : bool
        Whether the first trial's views follow (one more progress step per model and calibrator).
    messages : list of str
        The evaluation's messages (appended to).
    progress : callable ``progress(done, total, text)``, optional
        Called after every step.

    Attributes
    ----------
    total : int
        models × calibrators × (trials, + 1 for the first-trial diagrams).
    done : int
        Steps done so far.
    rows : list of list
        Long-table rows (model, calibrator, trial, metric, value, n_cal, n_test).
    timing : list of list
        (model, calibrator, trial, seconds) per fit.
    splits : list of dict
        The splits drawn (filled by :func:`~calib_core.base.protocol.trial_splits`).
    fitted : dict of str → dict of str → estimator
        Model → name → the estimator fitted in the first trial (None for the baseline).
    failed : dict of (str, str) → Exception
        (model, name) → the exception of a calibrator that failed in the first trial.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1).
    """

    def __init__(
        self,
        models: Sequence[str],
        n_calibrators: int,
        n_trials: int,
        diagrams: bool,
        messages: list[str],
        progress: Progress | None = None,
    ) -> None:
        self.n_calibrators = n_calibrators
        self.total = len(models) * n_calibrators * (n_trials + (1 if diagrams else 0))
        self.done = 0
        self.progress = progress
        self.messages = messages
        self.rows: list[list[Any]] = []
        self.timing: list[list[Any]] = []
        self.splits: list[dict[str, Any]] = []
        self.fitted: dict[str, dict[str, Any]] = {m: {} for m in models}
        self.failed: dict[tuple[str, str], Exception] = {}

    def step(self, text: str) -> None:
        """One unit of work done: advance the count and report ``text``."""
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total, text)

    def skip_trial(self) -> None:
        """A skipped (model, trial): count its calibrators as done without reporting (``on_skip`` of
        :func:`~calib_core.base.protocol.trial_splits`)."""
        self.done += self.n_calibrators

    def failure(self, model: str, trial: int, name: str, exc: Exception, text: str) -> None:
        """Calibrator ``name`` failed on (model, trial): note it in ``messages``, keep the first trial's exception
        for the diagrams, and step with ``text``."""
        self.messages.append(f"model {model!r}, trial {trial}: calibrator {name!r} failed: {exc}")
        if trial == 0:
            self.failed[(model, name)] = exc
        self.step(text)

    def fitted_in(self, model: str, trial: int, name: str, estimator: Any, seconds: float) -> None:
        """Calibrator ``name`` was fitted and applied in ``seconds``; the first trial's estimator is kept."""
        self.timing.append([model, name, trial, seconds])
        if trial == 0:
            self.fitted[model][name] = estimator

    def add_values(
        self, model: str, name: str, trial: int, values: Mapping[str, float], n_cal: int, n_test: int
    ) -> None:
        """Long-table rows (one per metric, in the order of ``values``) of one (model, calibrator, trial)."""
        for metric, value in values.items():
            self.rows.append([model, name, trial, metric, float(value), int(n_cal), int(n_test)])

    def result(self, **extra: Any) -> EvaluationResult:
        """The :class:`EvaluationResult` of everything collected (``extra``: the other fields)."""
        return build_result(self.rows, self.timing, self.splits, self.messages, fitted=self.fitted, **extra)


class TrialTask:
    """What a task plugs into :func:`run_trials`: how it reads, fits, applies, scores and shows.

    A subclass sets :attr:`task` and overrides the hooks; the loop calls them in this order for every (model,
    trial, calibrator): ``rows = split(cal_idx, test_idx)`` once per split; then, inside ``capture(name,
    messages)`` and the failure guard, either ``baseline(rows)`` (the uncalibrated predictions of the test rows)
    or ``prepare(cal)`` → ``fit(est, rows, groups)`` → ``apply(est, rows, groups)``, the fit + apply time is
    recorded, and ``measure(est, out, rows)`` (an exception up to here fails this calibrator alone); then, outside
    the guard, ``scores(est, out, measured, rows)`` gives the long-table values.  With ``diagrams=True``
    ``view(sub, rows, test_rel, est, groups)`` gives the first trial's diagram tables and calibrated predictions.

    Attributes
    ----------
    task : str
        ``"regression"`` or ``"classification"`` (the result's ``task``).

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1).
    """

    task: str = ""

    def admit(self, cals: dict[str, Any], messages: list[str]) -> dict[str, Any]:
        """The calibrators this set can run (default: all), noting in ``messages`` any left out."""
        return cals

    def split(self, cal_idx: np.ndarray, test_idx: np.ndarray) -> Any:
        """The rows of one split as the hooks read them."""
        raise NotImplementedError  # pragma: no cover

    def capture(self, name: str, messages: list[str]) -> Any:
        """A context manager around fitting and measuring calibrator ``name`` (default: nothing)."""
        return _nothing()

    def baseline(self, rows: Any) -> Any:
        """The uncalibrated predictions of the test rows."""
        raise NotImplementedError  # pragma: no cover

    def prepare(self, cal: Any) -> Any:
        """A fresh, unfitted copy of ``cal`` for one trial (default: ``sklearn.base.clone``)."""
        return clone(cal)

    def fit(self, est: Any, rows: Any, groups: Mapping[str, Any]) -> None:
        """Fit ``est`` on the calibration rows (``groups``: :func:`slice_kwargs` of those rows)."""
        raise NotImplementedError  # pragma: no cover

    def apply(self, est: Any, rows: Any, groups: Mapping[str, Any]) -> Any:
        """The calibrated predictions of the test rows (``groups``: :func:`slice_kwargs` of those rows)."""
        raise NotImplementedError  # pragma: no cover

    def measure(self, est: Any, out: Any, rows: Any) -> Any:
        """What the scores are read from (computed inside the failure guard)."""
        raise NotImplementedError  # pragma: no cover

    def scores(self, est: Any, out: Any, measured: Any, rows: Any) -> dict[str, float]:
        """The long-table values of one (model, trial, calibrator), metric → value, in report order."""
        raise NotImplementedError  # pragma: no cover

    def view(self, sub: PredictionSet, rows: np.ndarray, test_rel: np.ndarray, est: Any,
             groups: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        """``(diagram tables of the test rows, calibrated predictions of every row)`` of one model's rows ``sub``
        (``rows``: their positions in the set; ``test_rel``: the test rows inside ``sub``; ``groups``:
        :func:`slice_kwargs` of ``rows``)."""
        raise NotImplementedError  # pragma: no cover


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def run_trials(
    pset: PredictionSet,
    cals: dict[str, Any],
    task: TrialTask,
    *,
    split: Any,
    repeats: int,
    seed: int,
    test_fraction: float,
    diagrams: bool,
    progress: Progress | None,
) -> EvaluationResult:
    """Fit every calibrator on the calibration rows of every trial and score it on the test rows.

    For every model and trial of the protocol (:func:`~calib_core.base.protocol.trial_splits`: the split column,
    or the random split of trial t drawn from ``default_rng([seed, t])``), every calibrator is copied
    (``task.prepare``), fitted on the calibration rows only and applied to the test rows only; None gives the
    uncalibrated predictions of the same test rows.  A calibrator that raises fails alone (its message is kept,
    the others go on).  With ``diagrams=True`` the estimators fitted in the first trial give the diagram tables of
    its test rows and the calibrated predictions of every row (:func:`first_trial_views`).

    Parameters
    ----------
    pset : PredictionSet
        The evaluated set (already checked by the task).
    cals : dict of str → estimator or None
        :func:`normalise_calibrators` of the calibrators.
    task : TrialTask
        The task's hooks.
    split, repeats, seed, test_fraction :
        The protocol's arguments (:func:`calib_core.evaluate`).
    diagrams : bool
        Also compute the first trial's views.
    progress : callable ``progress(done, total, text)`` or None
        Called after every fitted (model, trial, calibrator) and every view.

    Returns
    -------
    EvaluationResult
        The long and summary tables, splits, timings, messages, first-trial estimators and, with ``diagrams=True``,
        the views.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1).
    .. [2] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
           regression", Proc. 35th ICML, PMLR 80, 2018 (recalibration fitted on held-out rows).
    .. [3] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 2017 (§4: calibration methods fitted on a validation set, scored on a test set).
    """
    how, labels = split_mode(pset, split)
    messages: list[str] = []
    n_trials = trial_count(how, repeats, messages)
    cals = task.admit(cals, messages)

    slices = slice_inputs(pset, cals)
    models = pset.models()
    log = TrialLog(models, len(cals), n_trials, diagrams, messages, progress)
    for model, trial, cal_idx, test_idx in trial_splits(
        pset, labels, how, n_trials, seed, test_fraction, log.splits, messages, on_skip=log.skip_trial
    ):
        rows = task.split(cal_idx, test_idx)
        where = f"trial {trial + 1}/{n_trials}" + (f" · {model}" if len(models) > 1 else "")
        for name, cal in cals.items():
            t0 = time.perf_counter()
            try:
                with task.capture(name, messages):
                    if cal is None:
                        est, out = None, task.baseline(rows)
                    else:
                        est = task.prepare(cal)
                        task.fit(est, rows, slice_kwargs(cal, slices, cal_idx))
                        kw = slice_kwargs(cal, slices, test_idx)
                        out = task.apply(est, rows, kw)
                        slice_note(est, kw, name, messages)
                    seconds = time.perf_counter() - t0
                    measured = task.measure(est, out, rows)
            except Exception as exc:  # noqa: BLE001 - reported to the user, the others go on
                log.failure(model, trial, name, exc, f"{name} failed · {where}")
                continue
            log.fitted_in(model, trial, name, est, seconds)
            log.add_values(model, name, trial, task.scores(est, out, measured, rows), cal_idx.size, test_idx.size)
            log.step(f"{name} · {where}")

    views: dict[str, Any] = {}
    if diagrams:

        def view(sub: PredictionSet, rows: np.ndarray, test_rel: np.ndarray, est: Any) -> tuple[Any, Any]:
            """The task's view of one model's rows, with the slice labels of those rows."""
            return task.view(sub, rows, test_rel, est, slice_kwargs(est, slices, rows))

        views = first_trial_views(pset, cals, log, view)
    return log.result(
        task=task.task, calibrators=list(cals), n_trials=n_trials, split=how, seed=int(seed),
        test_fraction=float(test_fraction), split_labels=trial_labels(pset, how, labels, 0, seed, test_fraction),
        **views,
    )


def first_trial_views(
    pset: PredictionSet,
    cals: Mapping[str, Any],
    log: TrialLog,
    view: Callable[[PredictionSet, np.ndarray, np.ndarray, Any], tuple[dict[str, Any], Any]],
) -> dict[str, Any]:
    """Diagram tables of the first trial's test rows and calibrated predictions of every row, per model and
    calibrator, from the estimators fitted in that trial (``diagrams=True`` of an evaluation).

    A calibrator that failed (in the first trial or here) is noted once in ``log.messages``; each (model,
    calibrator) is one progress step.

    Parameters
    ----------
    pset : PredictionSet
        The evaluated set.
    cals : mapping name → estimator or None
        The calibrators of the evaluation.
    log : TrialLog
        The loop's books (splits, first-trial estimators, failures).
    view : callable ``view(sub, rows, test_rel, estimator) -> (tables, calibrated)``
        The task's view of one model: ``sub`` = the model's rows (``rows``: their positions in ``pset``),
        ``test_rel`` = positions of the first trial's test rows inside ``sub``, ``estimator`` = the fitted
        calibrator (None for the uncalibrated baseline).

    Returns
    -------
    dict
        ``{"diagrams": …, "calibrated": …}``, each model → name → result (models without a first split: empty).

    References
    ----------
    .. [1] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
           regression", Proc. 35th ICML, PMLR 80, 2018 (calibration curves before and after recalibration).
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 2017 (reliability diagrams).
    """
    diagrams: dict[str, dict[str, dict[str, Any]]] = {}
    calibrated: dict[str, dict[str, Any]] = {}
    first = {s["model"]: s for s in log.splits if s["trial"] == 0}
    for model in pset.models():
        diagrams[model], calibrated[model] = {}, {}
        split = first.get(model)
        if split is None or split["cal"].size == 0 or split["test"].size == 0:
            for _ in cals:
                log.step("diagrams")
            continue
        rows = model_rows(pset, model)
        test_rel = np.flatnonzero(np.isin(rows, split["test"]))
        sub = pset.take(rows)
        for name in cals:
            try:
                if name not in log.fitted[model]:
                    raise log.failed.get((model, name)) or RuntimeError("not fitted")
                diagrams[model][name], calibrated[model][name] = view(sub, rows, test_rel, log.fitted[model][name])
            except Exception as exc:  # noqa: BLE001 - shown to the user; the other calibrators go on
                text = f"{name} (model {model}): diagrams skipped: {exc}"
                if text not in log.messages:
                    log.messages.append(text)
            log.step(f"diagrams · {name}")
    return {"diagrams": diagrams, "calibrated": calibrated}


def slice_comparison_rows(
    pset: PredictionSet,
    result: EvaluationResult,
    by: str,
    score: Callable[[np.ndarray, np.ndarray, Any], dict[str, float]],
    keys: Sequence[str],
) -> pd.DataFrame:
    """Per-slice metrics of the first trial's held-out rows, before and after every calibrator (both tasks).

    Loops over models × slices × calibrators; each score is vectorised over its rows.

    Parameters
    ----------
    pset : PredictionSet
        The evaluated set.
    result : EvaluationResult
        An evaluation with ``diagrams=True``, whose ``calibrated`` predictions cover every row of each model.
    by : str
        The slice column (``"group"`` or a feature column, :func:`calib_core.base.groupwise.slice_labels`); the
        slice ``(all rows)`` comes first.
    score : callable ``score(rows, rel, predictions) -> dict``
        The task's statistics of some held-out rows: ``rows`` = their positions in ``pset``, ``rel`` = the same rows
        as positions in the model's calibrated ``predictions``.
    keys : sequence of str
        The statistics kept, in column order.

    Returns
    -------
    DataFrame
        Columns model, slice, calibrator, n_test, then ``keys``; one row per (model, slice, calibrator), the
        uncalibrated baseline included.

    References
    ----------
    .. [1] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005, §4.5
           (validity within each category of a Mondrian taxonomy).
    """
    labels = slice_labels(pset, by)
    test_all = np.char.lower(np.asarray(result.split_labels).astype(str)) == "test"
    out: list[dict[str, Any]] = []
    for model, by_cal in (result.calibrated or {}).items():
        rows = model_rows(pset, model)
        test = test_all[rows]
        lab = labels[rows]
        slices = [("(all rows)", test)] + [(str(g), test & (lab == g)) for g in np.unique(lab[test])]
        for g, mask in slices:
            idx = np.flatnonzero(mask)
            if idx.size == 0:
                continue
            for name in result.calibrators:
                if name not in by_cal:
                    continue
                with np.errstate(all="ignore"):
                    values = score(rows[idx], idx, by_cal[name])
                out.append({"model": model, "slice": g, "calibrator": name, "n_test": int(idx.size),
                            **{k: float(values.get(k, np.nan)) for k in keys}})
    return pd.DataFrame(out, columns=["model", "slice", "calibrator", "n_test", *keys])
