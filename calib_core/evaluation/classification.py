"""``evaluate_classification``: fit classification calibrators on calibration rows, score them on test rows.

The classification twin of :func:`calib_core.evaluation.regression.evaluate_regression` (the held-out protocol applied
to the classification calibrators; ``cc.evaluate`` dispatches classification sets here) with the same output: an
:class:`~calib_core.base.protocol.EvaluationResult` whose ``long`` table has one row per (model, calibrator, trial,
metric) and whose ``summary`` gives mean ± std (ddof = 1) over trials.  The trial loop is the one of
:func:`calib_core.evaluation.trials.run_trials` (splits from :mod:`calib_core.base.protocol`), so a regression and a
classification comparison are drawn, fitted and summarised identically; this module supplies the classification
hooks:

* split: the ``split`` column (``cal``/``test``) when it has both, otherwise a random split whose trial t is the
  permutation of ``default_rng([seed, t])`` with ``test_fraction`` of the rows held out (``repeats`` trials);
* every calibrator is cloned (``sklearn.base.clone``) per trial, fitted on the calibration rows only
  (``fit(scores, labels)``) and applied to the test rows only (``predict_proba``); ``None`` = the uncalibrated
  probabilities of the same test rows; the calibrators' warnings become messages;
* scores: logits when the file gave logits (the calibrators' ``input`` is set to ``"logits"`` when it was
  ``"auto"``), else the probabilities (``input="probs"``); logits = log p;
* metrics on the test rows, from :class:`~calib_core.metrics.classification.ClassificationRows` (Guo et al. 2017):
  ECE and MCE (``n_bins`` bins, ``strategy``), NLL (from logits with log-sum-exp for the uncalibrated rows, from the
  calibrated probabilities otherwise), Brier, accuracy, mean confidence, class-wise ECE, and for K = 2 the
  positive-class ECE/MCE.

``progress(done, total, text)`` is called after every fitted (trial, calibrator) pair so a UI can show progress
(BBQ and repeats can take seconds).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..base.predictions import PredictionSet
from ..base.protocol import EvaluationResult, Progress
from ..calibrators.registry import default_metric_keys
from ..diagrams.classification import reliability_of
from ..diagrams.classification_corp import plane_terms
from ..metrics.classification import ClassificationRows, Strategy
from .trials import TrialTask, normalise_calibrators, run_trials, slice_comparison_rows

__all__ = ["evaluate_classification", "DEFAULT_CLASSIFICATION_METRICS", "calibrator_input", "SLICE_METRICS",
           "slice_comparison_classification"]


#: Metrics reported by default (the registry's classification metrics marked ``evaluate_default``; keys of
#: ``ClassificationRows.statistics``).
DEFAULT_CLASSIFICATION_METRICS = default_metric_keys("classification")


def calibrator_input(pset: PredictionSet) -> tuple[np.ndarray, str]:
    """The scores a classification calibrator is fitted on: ``(logits, "logits")`` when the set has logits,
    else ``(probs, "probs")``.

    Temperature, vector and matrix scaling act on logits (Guo et al. 2017, §4.2); from probabilities they use
    log p.

    Parameters
    ----------
    pset : PredictionSet
        A classification set with full probability vectors.

    Returns
    -------
    scores : ndarray of shape (N, K)
        Logits or probabilities, float.
    kind : {"logits", "probs"}
        Which.

    Raises
    ------
    ValueError
        A set with the top-label confidence only.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017.
    """
    if pset.top_label_only or pset.probs is None:
        raise ValueError(
            "classification calibrators need the full probability (or logit) vector of every row; this file has "
            "the top-label confidence only"
        )
    if pset.logits is not None:
        return np.asarray(pset.logits, dtype=float), "logits"
    return np.asarray(pset.probs, dtype=float), "probs"


def _prepared(cal: Any, kind: str) -> Any:
    est = clone(cal)
    params = est.get_params(deep=False)
    if params.get("input", None) == "auto":
        est.set_params(input=kind)
    return est


def evaluate_classification(
    prediction_set: PredictionSet,
    calibrators: Any,
    *,
    split: Any = None,
    repeats: int = 1,
    seed: int = 0,
    test_fraction: float = 0.5,
    metrics: Sequence[str] | None = None,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
    diagrams: bool = False,
    progress: Progress | None = None,
) -> EvaluationResult:
    """Fit each classification calibrator on calibration rows and score it on held-out test rows.

    Parameters
    ----------
    prediction_set : PredictionSet
        A classification set with full probability vectors (and logits when available).
    calibrators : mapping name → estimator, a sequence of estimators, or one estimator
        Unfitted estimators (``fit(X, labels)`` / ``predict_proba(X)``); ``None`` stands for the uncalibrated
        probabilities.  Slice-wise calibrators (``uses_groups``) also get ``groups=``, the labels of their ``by``
        column.
    split, repeats, seed, test_fraction :
        As in :func:`calib_core.evaluate` (the same split helpers).
    metrics : sequence of str, optional
        Names from :data:`DEFAULT_CLASSIFICATION_METRICS` (default: all that apply; binary-only ones are skipped
        for K > 2).
    n_bins : int, default 15
        ECE/MCE bins (Guo et al.: 15 equal-width bins).
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.
    diagrams : bool, default False
        Also compute, for the first trial, the reliability table of the test rows and the calibrated
        probabilities of every row, with the estimators fitted in that trial.
    progress : callable ``progress(done, total, text)``, optional
        Called as the work completes.

    Returns
    -------
    EvaluationResult
        ``long``, ``summary``, ``splits``, ``fit_seconds``, ``messages``, the first trial's fitted estimators
        ``fitted``; with ``diagrams=True`` also ``diagrams`` and ``calibrated``.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017.
    .. [2] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: the held-out protocol, shared by both tasks here).

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> from calib_core.base.classification import softmax
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(200, 3))
    >>> labels = (rng.random((200, 1)) > softmax(z / 2, axis=1).cumsum(axis=1)).sum(axis=1)
    >>> group = np.where(np.arange(200) < 100, "a", "b")
    >>> ps = cc.PredictionSet(task="classification", labels=labels, probs=softmax(z, axis=1), logits=z, group=group)
    >>> res = evaluate_classification(ps, [None, cc.TemperatureScaling()], metrics=["ece", "nll"], repeats=3)
    >>> res.wide().round(3)
    metric                      ece    nll
    model calibrator
    model none                0.179  0.929
          TemperatureScaling  0.107  0.770
    """
    pset = prediction_set
    if pset.task != "classification":
        raise ValueError("evaluate_classification() works on classification prediction sets")
    scores, kind = calibrator_input(pset)
    cals = normalise_calibrators(calibrators)
    wanted = list(metrics) if metrics is not None else list(DEFAULT_CLASSIFICATION_METRICS)
    unknown = [m for m in wanted if m not in DEFAULT_CLASSIFICATION_METRICS]
    if unknown:
        raise KeyError(f"unknown metric(s) {unknown}; available: {list(DEFAULT_CLASSIFICATION_METRICS)}")
    task = _ClassificationTrials(pset, scores, kind, wanted, n_bins, strategy, diagrams)
    return run_trials(pset, cals, task, split=split, repeats=repeats, seed=seed, test_fraction=test_fraction,
                      diagrams=diagrams, progress=progress)


class _ClassificationTrials(TrialTask):
    """The classification hooks of the trial loop: scores (logits or probabilities) in, ``fit(X, labels)`` /
    ``predict_proba(X)``, the statistics of :class:`~calib_core.metrics.classification.ClassificationRows` out;
    the calibrators' warnings become messages."""

    task = "classification"

    def __init__(self, pset: PredictionSet, scores: np.ndarray, kind: str, wanted: list[str], n_bins: int,
                 strategy: Strategy, diagrams: bool) -> None:
        self.pset = pset
        self.inputs = scores
        self.kind = kind
        self.wanted = wanted
        self.n_bins = n_bins
        self.strategy = strategy
        self.diagrams = diagrams

    def split(self, cal_idx: np.ndarray, test_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The calibration and the test row positions."""
        return cal_idx, test_idx

    @contextmanager
    def capture(self, name: str, messages: list[str]) -> Iterator[None]:
        """Every warning of fitting and measuring becomes a message (once) "name: warning"."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        for w in caught:
            text = f"{name}: {w.message}"
            if text not in messages:
                messages.append(text)

    def baseline(self, rows: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """The test rows' own probabilities."""
        return self.pset.probs[rows[1]]

    def prepare(self, cal: Any) -> Any:
        """A clone of ``cal`` reading the set's kind of scores when its ``input`` is ``"auto"``."""
        return _prepared(cal, self.kind)

    def fit(self, est: Any, rows: tuple[np.ndarray, np.ndarray], groups: Mapping[str, Any]) -> None:
        """``est.fit(scores, labels)`` on the calibration rows."""
        cal_idx = rows[0]
        est.fit(self.inputs[cal_idx], self.pset.labels[cal_idx], **groups)

    def apply(self, est: Any, rows: tuple[np.ndarray, np.ndarray], groups: Mapping[str, Any]) -> np.ndarray:
        """``est.predict_proba(scores)`` of the test rows."""
        return est.predict_proba(self.inputs[rows[1]], **groups)

    def measure(self, est: Any, out: np.ndarray, rows: tuple[np.ndarray, np.ndarray]) -> ClassificationRows:
        """The test rows' statistics (the uncalibrated NLL from the logits, with log-sum-exp, when the set has
        them)."""
        test_idx = rows[1]
        logits = None if est is not None or self.pset.logits is None else self.pset.logits[test_idx]
        return ClassificationRows(self.pset.labels[test_idx], out, logits, n_bins=self.n_bins,
                                  strategy=self.strategy)

    def scores(self, est: Any, out: np.ndarray, measured: ClassificationRows,
               rows: tuple[np.ndarray, np.ndarray]) -> dict[str, float]:
        """The wanted statistics; with diagrams the MCB–DSC plane's coordinates, every trial (the plane shows
        their means)."""
        stats = measured.statistics()
        values = {m: stats[m] for m in self.wanted if m in stats}
        if self.diagrams:
            values.update(plane_terms(self.pset.labels[rows[1]], out))
        return values

    def view(self, sub: PredictionSet, rows: np.ndarray, test_rel: np.ndarray, est: Any,
             groups: Mapping[str, Any]) -> tuple[Any, Any]:
        """Reliability table of the test rows and the calibrated probabilities of every row of one model."""
        probs = sub.probs if est is None else est.predict_proba(self.inputs[rows], **groups)
        crow = ClassificationRows(sub.labels[test_rel], probs[test_rel], n_bins=self.n_bins, strategy=self.strategy)
        return {"reliability": reliability_of(crow)}, probs


#: Metrics of the per-slice comparison (:func:`slice_comparison_classification`).
SLICE_METRICS = ("ece", "mean_confidence", "accuracy", "nll", "brier")


def slice_comparison_classification(
    prediction_set: PredictionSet,
    result: EvaluationResult,
    *,
    by: str,
    metrics: Sequence[str] = SLICE_METRICS,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
) -> pd.DataFrame:
    """Per-slice calibration of the held-out rows before and after every calibrator.

    For each model and each slice g of column ``by`` (``"group"`` or a feature column), the statistics ``metrics``
    (names of ``ClassificationRows.statistics``: top-label ECE with ``n_bins`` ``strategy`` bins, Guo et al. 2017;
    mean confidence, accuracy, NLL, Brier) of the first trial's test rows of g under every calibrator of ``result``
    (``cc.evaluate(..., diagrams=True)``), the uncalibrated baseline included.

    Parameters
    ----------
    prediction_set : PredictionSet
        The evaluated classification set.
    result : EvaluationResult
        Its evaluation with ``diagrams=True``.
    by : str
        The slice column.
    metrics : sequence of str, default :data:`SLICE_METRICS`
        Keys of ``ClassificationRows.statistics``.
    n_bins : int, default 15
        ECE bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.

    Returns
    -------
    DataFrame
        Columns model, slice (``(all rows)`` first), calibrator, n_test, then ``metrics``.

    Raises
    ------
    ValueError
        An evaluation without calibrated predictions.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017.
    .. [2] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005, §4.5.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> from calib_core.base.classification import softmax
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(200, 3))
    >>> labels = (rng.random((200, 1)) > softmax(z / 2, axis=1).cumsum(axis=1)).sum(axis=1)
    >>> group = np.where(np.arange(200) < 100, "a", "b")
    >>> ps = cc.PredictionSet(task="classification", labels=labels, probs=softmax(z, axis=1), logits=z, group=group)
    >>> res = evaluate_classification(ps, [None, cc.TemperatureScaling()], diagrams=True)
    >>> slice_comparison_classification(ps, res, by="group", metrics=["ece"]).round(3)
       model       slice          calibrator  n_test    ece
    0  model  (all rows)                none     100  0.224
    1  model  (all rows)  TemperatureScaling     100  0.139
    2  model           a                none      46  0.235
    3  model           a  TemperatureScaling      46  0.164
    4  model           b                none      54  0.217
    5  model           b  TemperatureScaling      54  0.135
    """
    if not result.calibrated:
        raise ValueError("the evaluation holds no calibrated predictions: run it with diagrams=True")
    labels = np.asarray(prediction_set.labels)

    def score(rows: np.ndarray, rel: np.ndarray, probs: Any) -> dict[str, float]:
        """The statistics of some held-out rows of one model."""
        crow = ClassificationRows(labels[rows], np.asarray(probs)[rel], None, n_bins=n_bins, strategy=strategy)
        return crow.statistics(classwise=False)

    return slice_comparison_rows(prediction_set, result, by, score, list(metrics))
