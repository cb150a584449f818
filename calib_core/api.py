"""The task-dispatching entry points of ``calib_core``: :func:`load_predictions`, :func:`diagnose`, :func:`evaluate`,
:func:`slice_comparison`.

Each looks at the task (given, detected from the file's columns, or ``PredictionSet.task``) and hands over to the
regression or the classification half, which mirror each other layer for layer (``data``, ``diagnosis``,
``evaluation``: ``parse_*_frame``, ``diagnose_*``, ``evaluate_*``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .base.limits import check_options as check_sizes
from .base.predictions import InputError, PredictionSet
from .base.protocol import EvaluationResult
from .base.report import Report
from .data.bytes import read_table, source_name
from .data.classification import parse_classification_frame
from .data.detect import detect_task
from .data.hub import is_hub_frame, read_hub, truth_missing_error
from .data.hub_formats import ROUND_FILE
from .data.nonfinite_cells import nonfinite_cell_notes
from .data.regression import parse_regression_frame
from .diagnosis.classification import diagnose_classification
from .diagnosis.regression import diagnose_regression
from .evaluation.classification import evaluate_classification, slice_comparison_classification
from .evaluation.comparison import ModelComparison, compare_models
from .evaluation.regression import evaluate_regression, slice_comparison_regression

__all__ = ["compare_models", "diagnose", "evaluate", "load_predictions", "slice_comparison", "ModelComparison"]


def load_predictions(
    path_or_buffer: Any,
    task: str | None = None,
    columns: Mapping[str, Any] | None = None,
    *,
    source: str | None = None,
    renormalize: bool = False,
    max_bytes: int | None = None,
    limit_hint: str | None = None,
    crossing: str = "rearrange",
    layout: str | None = None,
    truth: Any = None,
    output_type: str | None = None,
) -> PredictionSet:
    """Read and validate a prediction file: ``cc.load_predictions``.

    The file is read by :func:`~calib_core.data.bytes.read_table` (format and encoding recognised from the content),
    its task detected by :func:`~calib_core.data.detect.detect_task` unless given, and its columns parsed by the
    task's parser (:func:`~calib_core.data.regression.parse_regression_frame` or
    :func:`~calib_core.data.classification.parse_classification_frame`).  Every problem raises ``InputError`` whose
    message names the file, the column(s), the row(s) and what to do; dropped rows are counted in ``.dropped`` and
    explained in ``.messages``.

    Parameters
    ----------
    path_or_buffer : str, os.PathLike, bytes or binary file-like
        A path, the file's bytes, or a binary file-like (Streamlit's ``UploadedFile`` works).  A DataFrame is not
        read: write it to bytes first (``frame.to_csv(index=False).encode()``).
    task : {"regression", "classification"}, optional
        The task; None detects it from the column names.
    columns : mapping, optional
        Roles → the file's column names, e.g. ``{"y": "E", "mean": "pred", "std": "uE", "samples": ["P1", "P2"],
        "quantiles": {"0.05": "lo", "0.95": "hi"}}``; a role mapped to None is not used.  Roles not given are found
        by name (``calib_core.data.columns.ALIASES``).
    source : str, optional
        The file name shown in messages (default: the path's or buffer's name).
    renormalize : bool, default False
        Classification: divide rows of probabilities not summing to 1 by their sum (and say so) instead of refusing
        them.
    max_bytes : int, optional
        Bounds the file, its decompressed bytes and what it decodes to in memory, each checked before decoding
        (default ``DEFAULT_MAX_BYTES``, 1 GiB; see :func:`calib_core.data.bytes.read_table`).
    limit_hint : str, optional
        How to raise that limit in the caller's words (the dashboard: its ``server.maxUploadSize``).
    crossing : {"rearrange", "drop"}, default "rearrange"
        Regression: rows whose quantiles decrease with the level are sorted per row (the rearrangement of
        Chernozhukov, Fernández-Val & Galichon 2010, which never increases the quantile loss), counted and said in
        ``.messages``; ``"drop"`` drops them instead (counted in ``.dropped``).
    layout : {"gaussian", "quantile", "sample", "point"}, optional
        Regression: the layout to read when the file has several (e.g. mean/std and quantile columns); None reads
        the one that keeps the most rows (on a tie sample > quantile > gaussian) and says which and why.
    truth : path, bytes, file-like or DataFrame, optional
        Forecast hubs: the truth (target data) of the model output.  With it — or with a list of files, a folder, a
        hub-format DataFrame, or ``output_type`` — the forecasts are read by :func:`calib_core.data.hub.read_hub`
        (hubverse or legacy COVID-19 hub format, one row per model × forecast unit); a hub file without truth
        raises an ``InputError`` asking for it.
    output_type : str, optional
        Forecast hubs: the output type to read (quantile, sample, pmf, cdf, median, mean; default quantile, else the
        only one present).

    Returns
    -------
    PredictionSet
        The validated predictions: targets or labels, the predictive distributions or probabilities, the optional
        split / group / model / time columns, the dropped rows (``n_read == n_rows + dropped.total``) and the
        loader's messages.

    Raises
    ------
    InputError
        An unreadable file, an unknown task, missing or ambiguous columns, invalid values, too few valid rows.

    See Also
    --------
    diagnose : the diagnosis of the loaded predictions.
    evaluate : recalibration on held-out rows.

    Examples
    --------
    Gaussian forecasts (a mean and a standard deviation per row) whose errors are 1.5 times wider than predicted:

    >>> import numpy as np, pandas as pd
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mean, std = rng.normal(size=200), rng.uniform(0.5, 1.5, size=200)
    >>> frame = pd.DataFrame({"y": mean + 1.5 * std * rng.standard_normal(200), "mean": mean, "std": std})
    >>> ps = cc.load_predictions(frame.to_csv(index=False).encode(), source="preds.csv")
    >>> ps.task, ps.layout, ps.n_rows, ps.dropped.total
    ('regression', 'gaussian', 200, 0)

    Columns with other names are mapped to their roles; a row with a missing value is dropped and counted:

    >>> other = frame.set_axis(["T_obs", "T_fc", "T_sd"], axis=1)
    >>> other.loc[3, "T_sd"] = np.nan
    >>> ps = cc.load_predictions(other.to_csv(index=False).encode(), columns={"y": "T_obs", "mean": "T_fc",
    ...                          "std": "T_sd"})
    >>> ps.n_read, ps.n_rows, ps.dropped.summary()[["reason", "count"]].to_dict("records")
    (200, 199, [{'reason': 'T_sd: missing value', 'count': 1}])

    Quantiles that decrease with the level (row 2) are sorted per row by default, or dropped with ``crossing="drop"``:

    >>> q = pd.DataFrame({"y": [0.1, 0.5, 0.9], "q0.1": [0.0, 0.4, 1.0], "q0.9": [1.0, 0.2, 2.0]})
    >>> ps = cc.load_predictions(q.to_csv(index=False).encode())
    >>> ps.n_rows, ps.dist.values[1].tolist()
    (3, [0.2, 0.4])
    >>> cc.load_predictions(q.to_csv(index=False).encode(), crossing="drop").row_number.tolist()
    [1, 3]

    A forecast hub's model output (long: task IDs, output_type, output_type_id, value) is read with its truth, one row
    per forecast unit; location codes stay text:

    >>> rows = [("2022-12-05", h, "01", "quantile", f"{lv:g}", 10.0 * h + 20 * (lv - 0.5))
    ...         for h in (1, 2) for lv in (0.1, 0.5, 0.9)]
    >>> hub = pd.DataFrame(rows, columns=["reference_date", "horizon", "location", "output_type", "output_type_id",
    ...                                   "value"])
    >>> truth = pd.DataFrame({"date": ["2022-12-06", "2022-12-07"], "location": ["01", "01"], "observation": [11, 18]})
    >>> ps = cc.load_predictions(hub.to_csv(index=False).encode(), truth=truth.to_csv(index=False).encode())
    >>> ps.layout, ps.units["location"].tolist(), ps.units["horizon"].tolist(), ps.y.tolist()
    ('quantile', ['01', '01'], [1, 2], [11.0, 18.0])
    """
    src = source_name(path_or_buffer, source)
    if task not in (None, "regression", "classification"):
        raise InputError(f"unknown task {task!r}", source=src, hint="use 'regression', 'classification' or None")
    if columns is not None and not isinstance(columns, Mapping):
        raise InputError("columns must be a mapping from role to column name", source=src,
                         hint="e.g. columns={'y': 'target', 'mean': 'pred', 'std': 'sigma'}",
                         app_hint="choose the columns under Column mapping")
    if columns is None and _hub_input(path_or_buffer, truth, output_type):
        return read_hub(path_or_buffer, truth, output_type=output_type, source=source, max_bytes=max_bytes,
                        limit_hint=limit_hint, crossing=crossing)
    frame = read_table(path_or_buffer, source=src, max_bytes=max_bytes, limit_hint=limit_hint)
    if columns is None and is_hub_frame(frame):
        raise truth_missing_error(frame, src)
    kind = task or detect_task(frame, columns)
    try:
        if kind == "classification":
            pset = parse_classification_frame(frame, src, columns, renormalize)
        else:
            pset = parse_regression_frame(frame, src, columns, crossing=crossing, layout=layout, consume=True)
        pset.messages.extend(nonfinite_cell_notes(pset.slice_columns, pset.row_number))
        return pset
    except InputError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, MemoryError) as exc:
        # Safety net so that bad input never shows a traceback in the UI; the cause is chained.
        raise InputError(
            f"unexpected problem while reading the {kind} columns ({type(exc).__name__}: {str(exc)[:200]})",
            source=src,
            hint="check the column mapping; if the file looks right, please report this as a bug",
        ) from exc


def _hub_input(obj: Any, truth: Any, output_type: str | None) -> bool:
    """Whether ``load_predictions`` hands over to the forecast-hub reader: truth or an output type given, a list of
    files, a folder, or a DataFrame in hub format."""
    if truth is not None or output_type is not None or isinstance(obj, (list, tuple)):
        return True
    if isinstance(obj, pd.DataFrame):
        return is_hub_frame(obj)
    if not (isinstance(obj, (str, os.PathLike)) and Path(obj).is_dir()):
        return False
    folder = Path(obj)  # a hub, its model-output folder or a model's folder (<round>-<model>.csv files)
    if (folder / "model-output").is_dir() or (folder / "data-processed").is_dir():
        return True
    return any(ROUND_FILE.match(p.name) for p in [*folder.glob("*"), *folder.glob("*/*")])


def diagnose(prediction_set: PredictionSet, **options: Any) -> Report:
    """Diagnose a PredictionSet: metric table, headline verdicts and the data behind every diagram.

    For each model and each group: every metric's value with a bootstrap interval, the value a perfectly calibrated
    forecaster with the same predictions would get, and the p-value of the test of perfect calibration; a headline
    verdict per (model, group) from a small primary family of tests (Holm), the other calibration statistics flagged
    by Benjamini–Hochberg; and the diagram tables.  Regression: quantile calibration and the calibration curve
    (Kuleshov et al. 2018), ENCE and the RMSE-vs-RMV reliability diagram over σ-bins (Levi et al. 2019), z-scores,
    PIT, coverage, NLL / CRPS (Gneiting & Raftery 2007).  Classification: ECE / MCE and reliability diagrams over
    confidence bins (Guo et al. 2017), Brier score, NLL, class-wise and smooth calibration errors.

    Parameters
    ----------
    prediction_set : PredictionSet
        Predictions loaded by :func:`load_predictions` (either task).
    **options
        Passed to the task's diagnosis: for regression see
        :func:`~calib_core.diagnosis.regression.diagnose_regression` (``n_bins``, ``binning``, ``pit_bins``,
        ``n_resamples``, ``n_simulations``, ``level``, ``alpha``, ``seed``, ``by_group``, ``diagrams``); for
        classification :func:`~calib_core.diagnosis.classification.diagnose_classification` (``n_bins``,
        ``strategy``, …, the same resampling options).  ``n_resamples=0`` switches the intervals off and
        ``n_simulations=0`` the tests and verdicts.  Dependent rows: ``cluster`` (default ``"auto"``: a forecast
        hub's rows clustered by their reference date, other data independent rows; a column name; None) and
        ``block_length`` (None: whole clusters; k or ``"auto"``: moving blocks of k consecutive cluster values) make
        every interval resample whole clusters and every test cluster-aware
        (:func:`~calib_core.base.clustering.resolve_clustering`); ``Report.options["clustering"]`` says which.

    Returns
    -------
    Report
        ``metrics`` (one row per model, group and metric), ``verdicts`` (one row per model and group) and
        ``diagrams`` (``{(model, group): {name: table}}``).

    References
    ----------
    .. [1] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
       regression", ICML 2018.
    .. [2] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
       regression tasks", arXiv:1905.11659, 2019.
    .. [3] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", ICML 2017.
    .. [4] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation", Journal of
       the American Statistical Association 102(477), 2007.
    .. [5] S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian Journal of Statistics
       6(2), 1979; Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate", Journal of the Royal
       Statistical Society B 57(1), 1995.

    Examples
    --------
    Gaussian forecasts whose errors are 1.5 times wider than predicted are found over-confident (few resamples and
    simulations keep the example fast; the defaults are 1000 and 2000):

    >>> import numpy as np, pandas as pd
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mean, std = rng.normal(size=200), rng.uniform(0.5, 1.5, size=200)
    >>> frame = pd.DataFrame({"y": mean + 1.5 * std * rng.standard_normal(200), "mean": mean, "std": std})
    >>> ps = cc.load_predictions(frame.to_csv(index=False).encode(), source="preds.csv")
    >>> report = cc.diagnose(ps, n_resamples=50, n_simulations=50)
    >>> {"nll", "crps", "ence", "z_std", "coverage_90"} <= set(report.metrics["metric"])
    True
    >>> values = report.metrics.set_index("metric")["value"]
    >>> float(round(values["z_std"], 2)), float(round(values["coverage_90"], 3))
    (1.49, 0.725)
    >>> report.verdicts[["model", "verdict"]].to_dict("records")
    [{'model': 'model', 'verdict': 'miscalibrated'}]
    """
    check_sizes(options, source=prediction_set.source)  # every user-set size capped before anything is allocated
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

    The held-out protocol of Kuleshov et al. (2018) and Guo et al. (2017) — a recalibration map is fitted on one part
    of the data and judged on another — repeated over random splits as in Zelikman et al. (2020)
    (:mod:`calib_core.base.protocol`).  Regression sets go to
    :func:`~calib_core.evaluation.regression.evaluate_regression`, classification sets to
    :func:`~calib_core.evaluation.classification.evaluate_classification`.

    Parameters
    ----------
    prediction_set : PredictionSet
        Predictions loaded by :func:`load_predictions` (either task).
    calibrators : mapping of str to calibrator or None, sequence of calibrators, or one calibrator
        Unfitted calibrators of the task (``cc.StdScaling()``, ``cc.TemperatureScaling()`` …), by name; each is cloned
        per trial.  ``None`` as a calibrator stands for the uncalibrated predictions.
    split : None, "column", "random", or array-like, optional
        None: the ``split`` column when it has both ``cal`` and ``test`` rows, else a random split; ``"column"``;
        ``"random"``; or per-row labels / an "is test" mask.
    repeats : int, default 1
        Random trials; trial t is drawn from ``default_rng([seed, t])``.
    seed : int, default 0
        Seed of the random splits.
    test_fraction : float, default 0.5
        Share of the rows held out in a random split.
    metrics : sequence of str or mapping, optional
        Metric keys of the registry, evaluated on the test rows (default: the task's evaluation metrics); for
        regression also callables ``f(y, dist) -> float``.
    **options
        Passed to the task's evaluation (classification: ``n_bins``, ``strategy``; both: ``diagrams``,
        ``progress``).

    Returns
    -------
    EvaluationResult
        ``long`` (every trial's values), ``summary`` (mean and std over trials per model, calibrator and metric),
        ``splits``, ``fit_seconds`` and ``messages``.

    References
    ----------
    .. [1] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
       regression", ICML 2018.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", ICML 2017.
    .. [3] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
       empirically", arXiv:2005.12496, 2020.

    Examples
    --------
    Std scaling (σ multiplied by one factor fitted on the calibration rows) against the uncalibrated forecasts of
    Gaussian predictions that are 1.5 times too narrow, on one random half held out:

    >>> import numpy as np, pandas as pd
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mean, std = rng.normal(size=200), rng.uniform(0.5, 1.5, size=200)
    >>> frame = pd.DataFrame({"y": mean + 1.5 * std * rng.standard_normal(200), "mean": mean, "std": std})
    >>> ps = cc.load_predictions(frame.to_csv(index=False).encode(), source="preds.csv")
    >>> result = cc.evaluate(ps, {"uncalibrated": None, "std scaling": cc.StdScaling()}, seed=0)
    >>> result.summary.columns.tolist()
    ['model', 'calibrator', 'metric', 'mean', 'std', 'n_trials']
    >>> table = result.summary.pivot(index="metric", columns="calibrator", values="mean")
    >>> table.loc[["coverage_90", "ence"], ["uncalibrated", "std scaling"]].round(2)  # doctest: +NORMALIZE_WHITESPACE
    calibrator   uncalibrated  std scaling
    metric
    coverage_90          0.67         0.86
    ence                 0.58         0.26
    """
    kwargs = dict(split=split, repeats=repeats, seed=seed, test_fraction=test_fraction, metrics=metrics, **options)
    check_sizes(kwargs, source=prediction_set.source)
    if prediction_set.task == "classification":
        return evaluate_classification(prediction_set, calibrators, **kwargs)
    return evaluate_regression(prediction_set, calibrators, **kwargs)


def slice_comparison(prediction_set: PredictionSet, result: EvaluationResult, *, by: str, **options: Any):
    """Per-slice metrics of the held-out rows of an evaluation before and after every calibrator.

    The evaluation must have been run with ``cc.evaluate(..., diagrams=True)``.  Regression:
    :func:`~calib_core.evaluation.regression.slice_comparison_regression`; classification:
    :func:`~calib_core.evaluation.classification.slice_comparison_classification`.

    Parameters
    ----------
    prediction_set : PredictionSet
        The prediction set that was evaluated.
    result : EvaluationResult
        The evaluation.
    by : str
        The slices: ``"group"`` or a feature / slice column.
    **options
        ``metrics``, and ``n_bins`` / ``strategy`` for classification.

    Returns
    -------
    DataFrame
        One row per (model, slice, calibrator).
    """
    if prediction_set.task == "classification":
        return slice_comparison_classification(prediction_set, result, by=by, **options)
    return slice_comparison_regression(prediction_set, result, by=by, **options)
