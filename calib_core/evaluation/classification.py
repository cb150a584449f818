"""``evaluate_classification``: fit classification calibrators on calibration rows, score them on test rows.

The classification twin of :func:`calib_core.evaluation.regression.evaluate_regression` (the held-out protocol applied
to the classification calibrators; ``cc.evaluate`` dispatches classification sets here) with the same output: an
:class:`~calib_core.base.protocol.EvaluationResult` whose ``long`` table has one row per (model, calibrator, trial,
metric) and whose ``summary`` gives mean ± std (ddof = 1) over trials. The split helpers, the calibrator-name
normalisation and the summary are *reused* from :mod:`calib_core.base.protocol`, so a regression and a classification
comparison are drawn and summarised identically:

* split: the ``split`` column (``cal``/``test``) when it has both, otherwise a random split whose trial t is the
  permutation of ``default_rng([seed, t])`` with ``test_fraction`` of the rows held out (``repeats`` trials);
* every calibrator is cloned (``sklearn.base.clone``) per trial, fitted on the calibration rows only
  (``fit(scores, labels)``) and applied to the test rows only (``predict_proba``); ``None`` = the uncalibrated
  probabilities of the same test rows;
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

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..base.predictions import PredictionSet
from ..base.protocol import (
    EvaluationResult,
    Progress,
    TrialLog,
    first_trial_views,
    normalise_calibrators,
    slice_comparison_rows,
    slice_inputs,
    slice_kwargs,
    slice_note,
    split_mode,
    trial_count,
    trial_labels,
    trial_splits,
)
from ..calibrators.registry import default_metric_keys
from ..diagrams.classification import reliability_of
from ..diagrams.classification_corp import plane_terms
from ..metrics.classification import ClassificationRows, Strategy

__all__ = ["evaluate_classification", "DEFAULT_CLASSIFICATION_METRICS", "calibrator_input", "SLICE_METRICS",
           "slice_comparison_classification"]

#: Metrics reported by default (the registry's classification metrics marked ``evaluate_default``; keys of
#: ``ClassificationRows.statistics``).
DEFAULT_CLASSIFICATION_METRICS = default_metric_keys("classification")

def calibrator_input(pset: PredictionSet) -> tuple[np.ndarray, str]:
    """The scores a classification calibrator is fitted on: ``(logits, "logits")`` when the set has logits,
    else ``(probs, "probs")``."""
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
    prediction_set : a classification PredictionSet with full probability vectors (and logits when available).
    calibrators : mapping name → unfitted estimator (``fit(X, labels)`` / ``predict_proba(X)``), a sequence of
        estimators or one; ``None`` stands for the uncalibrated probabilities.  Slice-wise calibrators
        (``uses_groups``) also get ``groups=``, the labels of their ``by`` column.
    split, repeats, seed, test_fraction : as in :func:`calib_core.evaluate` (the same split helpers).
    metrics : names from :data:`DEFAULT_CLASSIFICATION_METRICS` (default: all that apply; binary-only ones are
        skipped for K > 2).
    n_bins, strategy : ECE/MCE bins (Guo et al.: 15 equal-width bins; ``"quantile"`` = equal-mass).
    diagrams : also compute, for the first trial, the reliability table of the test rows and the calibrated
        probabilities of every row, with the estimators fitted in that trial.
    progress : optional callback ``progress(done, total, text)``.

    Returns
    -------
    :class:`~calib_core.base.protocol.EvaluationResult` (``long``, ``summary``, ``splits``, ``fit_seconds``,
    ``messages``, the first trial's fitted estimators ``fitted``; with ``diagrams=True`` also ``diagrams`` and
    ``calibrated``).
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
    how, labels = split_mode(pset, split)
    messages: list[str] = []
    n_trials = trial_count(how, repeats, messages)

    slices = slice_inputs(pset, cals)
    models = pset.models()
    log = TrialLog(models, len(cals), n_trials, diagrams, messages, progress)
    for model, trial, cal_idx, test_idx in trial_splits(
        pset, labels, how, n_trials, seed, test_fraction, log.splits, messages, on_skip=log.skip_trial
    ):
        y_cal, y_test = pset.labels[cal_idx], pset.labels[test_idx]
        for name, cal in cals.items():
            t0 = time.perf_counter()
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    est = None
                    if cal is None:
                        logits = None if pset.logits is None else pset.logits[test_idx]
                        crow = ClassificationRows(
                            y_test, pset.probs[test_idx], logits, n_bins=n_bins, strategy=strategy
                        )
                    else:
                        est = _prepared(cal, kind)
                        est.fit(scores[cal_idx], y_cal, **slice_kwargs(cal, slices, cal_idx))
                        kw = slice_kwargs(cal, slices, test_idx)
                        probs = est.predict_proba(scores[test_idx], **kw)
                        slice_note(est, kw, name, messages)
                        crow = ClassificationRows(y_test, probs, None, n_bins=n_bins, strategy=strategy)
                for w in caught:
                    text = f"{name}: {w.message}"
                    if text not in messages:
                        messages.append(text)
            except Exception as exc:  # noqa: BLE001 - reported to the user, the others go on
                log.failure(model, trial, name, exc, f"{name} failed (trial {trial + 1}/{n_trials})")
                continue
            log.fitted_in(model, trial, name, est, time.perf_counter() - t0)
            stats = crow.statistics()
            values = {m: stats[m] for m in wanted if m in stats}
            if diagrams:  # the MCB–DSC plane's coordinates, every trial (the plane shows their means)
                values.update(plane_terms(y_test, pset.probs[test_idx] if est is None else probs))
            log.add_values(model, name, trial, values, cal_idx.size, test_idx.size)
            log.step(f"{name} · trial {trial + 1}/{n_trials}" + (f" · {model}" if len(models) > 1 else ""))

    views: dict[str, Any] = {}
    if diagrams:

        def view(sub: PredictionSet, rows: np.ndarray, test_rel: np.ndarray, est: Any) -> tuple[Any, Any]:
            """Reliability table of the test rows and the calibrated probabilities of every row of one model."""
            probs = sub.probs if est is None else est.predict_proba(scores[rows], **slice_kwargs(est, slices, rows))
            crow = ClassificationRows(sub.labels[test_rel], probs[test_rel], n_bins=n_bins, strategy=strategy)
            return {"reliability": reliability_of(crow)}, probs

        views = first_trial_views(pset, cals, log, view)
    return log.result(
        task="classification", calibrators=list(cals), n_trials=n_trials,
        split=how, seed=int(seed), test_fraction=float(test_fraction),
        split_labels=trial_labels(pset, how, labels, 0, seed, test_fraction), **views,
    )


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
    (``cc.evaluate(..., diagrams=True)``), the uncalibrated baseline included.  Columns: model, slice (``(all
    rows)`` first), calibrator, n_test, metrics.
    """
    if not result.calibrated:
        raise ValueError("the evaluation holds no calibrated predictions: run it with diagrams=True")
    labels = np.asarray(prediction_set.labels)

    def score(rows: np.ndarray, rel: np.ndarray, probs: Any) -> dict[str, float]:
        """The statistics of some held-out rows of one model."""
        crow = ClassificationRows(labels[rows], np.asarray(probs)[rel], None, n_bins=n_bins, strategy=strategy)
        return crow.statistics(classwise=False)

    return slice_comparison_rows(prediction_set, result, by, score, list(metrics))
