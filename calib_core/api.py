"""The task-dispatching entry points of ``calib_core``: :func:`load_predictions`, :func:`diagnose`, :func:`evaluate`,
:func:`slice_comparison`.

Each looks at the task (given, detected from the file's columns, or ``PredictionSet.task``) and hands over to the
regression or the classification half, which mirror each other module for module (``reading``, ``diagnose``,
``evaluate``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base.predictions import InputError, PredictionSet
from .base.protocol import EvaluationResult
from .base.report import Report
from .data.bytes import read_table, source_name
from .data.classification import parse_classification_frame
from .data.detect import detect_task
from .data.regression import parse_regression_frame
from .diagnosis.classification import diagnose_classification
from .diagnosis.regression import diagnose_regression
from .evaluation.classification import evaluate_classification, slice_comparison_classification
from .evaluation.regression import evaluate_regression, slice_comparison_regression

__all__ = ["diagnose", "evaluate", "load_predictions", "slice_comparison"]


def load_predictions(
    path_or_buffer: Any,
    task: str | None = None,
    columns: Mapping[str, Any] | None = None,
    *,
    source: str | None = None,
    renormalize: bool = False,
    max_bytes: int | None = None,
    limit_hint: str | None = None,
) -> PredictionSet:
    """Read and validate a prediction file: ``cc.load_predictions``.

    ``path_or_buffer`` is a path, bytes, or a binary file-like (Streamlit's ``UploadedFile`` works).
    ``task`` is ``"regression"``, ``"classification"`` or None (detected by ``detect_task``).
    ``columns`` maps roles to the file's column names, e.g. ``{"y": "E", "mean": "pred", "std": "uE",
    "samples": ["P1", "P2"], "quantiles": {"0.05": "lo", "0.95": "hi"}}``; a role mapped to None is
    not used.  ``renormalize`` is passed to the classification loader (rows of probabilities not summing
    to 1).  ``max_bytes`` bounds the file, its decompressed bytes and what it decodes to in memory, each checked
    before decoding (default ``DEFAULT_MAX_BYTES``; see ``calib_core.data.bytes.read_table``); ``limit_hint`` says
    how to raise that limit in the caller's words (the dashboard: its ``server.maxUploadSize``).

    Returns a validated ``PredictionSet``; every problem raises ``InputError`` whose message names the
    file, the column(s), the row(s) and what to do.  Dropped rows are in ``.dropped`` and ``.messages``.
    """
    src = source_name(path_or_buffer, source)
    if task not in (None, "regression", "classification"):
        raise InputError(f"unknown task {task!r}", source=src, hint="use 'regression', 'classification' or None")
    if columns is not None and not isinstance(columns, Mapping):
        raise InputError("columns must be a mapping from role to column name", source=src,
                         hint="e.g. columns={'y': 'target', 'mean': 'pred', 'std': 'sigma'}",
                         app_hint="choose the columns under Column mapping")
    frame = read_table(path_or_buffer, source=src, max_bytes=max_bytes, limit_hint=limit_hint)
    kind = task or detect_task(frame, columns)
    try:
        if kind == "classification":
            return parse_classification_frame(frame, src, columns, renormalize)
        return parse_regression_frame(frame, src, columns)
    except InputError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, MemoryError) as exc:
        # Safety net so that bad input never shows a traceback in the UI; the cause is chained.
        raise InputError(
            f"unexpected problem while reading the {kind} columns ({type(exc).__name__}: {str(exc)[:200]})",
            source=src,
            hint="check the column mapping; if the file looks right, please report this as a bug",
        ) from exc


def diagnose(prediction_set: PredictionSet, **options: Any) -> Report:
    """Diagnose a PredictionSet: metric table (value, bootstrap CI, perfect-calibration value) and
    the data behind every diagram, for each model and each group.

    Regression options: see :func:`~calib_core.diagnosis.regression.diagnose_regression`.  Classification sets are
    handed to ``calib_core.diagnosis.classification.diagnose_classification`` with the same options.
    """
    if prediction_set.task == "classification":
        return diagnose_classification(prediction_set, **options)
    return diagnose_regression(prediction_set, **options)


def evaluate(
    prediction_set: PredictionSet,
    calibrators: Any,
    *,
    split: Any = None,
    repeats: int = 1,
    seed: int = 0,
    test_fraction: float = 0.5,
    metrics: Any = None,
    **options: Any,
) -> EvaluationResult:
    """Fit each calibrator on calibration rows and score it on held-out test rows, for either task.

    The protocol (:mod:`calib_core.base.protocol`): ``split`` is None (the ``split`` column when it has both ``cal`` and
    ``test`` rows, else a random split), ``"column"``, ``"random"`` or per-row labels / an "is test" mask;
    ``repeats`` random trials, trial t drawn from ``default_rng([seed, t])`` with ``test_fraction`` of the rows
    held out; ``None`` as a calibrator stands for the uncalibrated predictions.  Regression sets go to
    :func:`~calib_core.evaluation.regression.evaluate_regression`, classification sets to
    :func:`~calib_core.evaluation.classification.evaluate_classification` (``options``: ``n_bins``, ``strategy``,
    ``progress``).  Returns an :class:`~calib_core.base.protocol.EvaluationResult` (``long``, ``summary``, ``splits``,
    ``fit_seconds``, ``messages``).
    """
    kwargs = dict(split=split, repeats=repeats, seed=seed, test_fraction=test_fraction, metrics=metrics, **options)
    if prediction_set.task == "classification":
        return evaluate_classification(prediction_set, calibrators, **kwargs)
    return evaluate_regression(prediction_set, calibrators, **kwargs)


def slice_comparison(prediction_set: PredictionSet, result: EvaluationResult, *, by: str, **options: Any):
    """Per-slice metrics of the held-out rows of an evaluation (``cc.evaluate(..., diagrams=True)``) before and
    after every calibrator, for the slices of column ``by`` (``"group"`` or a feature column): one row per (model,
    slice, calibrator).  Regression: :func:`~calib_core.evaluation.regression.slice_comparison_regression`;
    classification: :func:`~calib_core.evaluation.classification.slice_comparison_classification` (``options``:
    ``metrics``, and ``n_bins``/``strategy`` for classification)."""
    if prediction_set.task == "classification":
        return slice_comparison_classification(prediction_set, result, by=by, **options)
    return slice_comparison_regression(prediction_set, result, by=by, **options)
