"""``evaluate_regression``: fit regression recalibrators on calibration rows, score them on held-out test rows.

The regression hooks of the trial loop (:func:`calib_core.evaluation.trials.run_trials`, on the splits of
:mod:`calib_core.base.protocol`; ``cc.evaluate`` dispatches regression sets here); the classification mirror is
``calib_core.evaluation.classification.evaluate_classification``.
Calibrators take ``fit(dist, y, *, features=None)`` / ``transform(dist, *, features=None)``; metrics are the names of
``regression.metrics.summary_statistics`` and/or callables ``f(y, dist) -> float``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import PredictionSet
from ..base.protocol import DIAGRAM_RESAMPLES, EvaluationResult, Progress
from ..base.regression import PredictiveDistribution
from ..calibrators.registry import default_metric_keys
from ..diagnosis.nonfinite import extreme_rows_note
from ..diagrams.regression import regression_diagrams
from ..metrics.regression import RegressionRows, summary_statistics
from .nonfinite_notes import add_nonfinite_notes
from .trials import TrialTask, normalise_calibrators, run_trials, slice_comparison_rows

__all__ = ["DEFAULT_METRICS", "SLICE_METRICS", "evaluate_regression", "slice_comparison_regression"]


#: Metrics of the per-slice comparison (:func:`slice_comparison_regression`): coverage of the 90% central interval,
#: mean and std of z, ENCE, the PIT's largest deviation (KS), CRPS and NLL.
SLICE_METRICS = ("coverage_90", "z_mean", "z_std", "ence", "max_calibration_deviation", "crps", "nll")

#: Metrics reported by default (the registry's regression metrics marked ``evaluate_default``; names of
#: ``regression.metrics.summary_statistics``).
DEFAULT_METRICS = default_metric_keys("regression")

MetricFn = Callable[[np.ndarray, PredictiveDistribution], float]


def _normalise_metrics(metrics: Any) -> tuple[list[str], dict[str, MetricFn]]:
    """(names taken from summary_statistics, custom callables by name)."""
    if metrics is None:
        return list(DEFAULT_METRICS), {}
    if isinstance(metrics, Mapping):
        items = list(metrics.items())
    else:
        items = [
            (m, m) if isinstance(m, str) else (getattr(m, "__name__", f"metric_{i}"), m) for i, m in enumerate(metrics)
        ]
    named: list[str] = []
    custom: dict[str, MetricFn] = {}
    for name, m in items:
        if isinstance(m, str):
            named.append(m)
        elif callable(m):
            custom[str(name)] = m
        else:
            raise TypeError(f"metric {name!r} must be a name or a callable (y, dist) -> float")
    return named, custom


def evaluate_regression(
    prediction_set: PredictionSet,
    calibrators: Any,
    *,
    split: Any = None,
    repeats: int = 1,
    seed: int = 0,
    test_fraction: float = 0.5,
    metrics: Any = None,
    diagrams: bool = False,
    progress: Progress | None = None,
) -> EvaluationResult:
    """Fit each calibrator on calibration rows and score it on held-out test rows.

    Parameters
    ----------
    prediction_set : PredictionSet
        A regression set.  Point-only sets (``dist is None``) pass their ``point`` predictions to
        the calibrators (read as means; see :mod:`calib_core.calibrators.regression`).  Feature
        columns are passed as ``features=`` (a DataFrame) to every ``fit``/``transform``; slice-wise calibrators
        (``uses_groups``) also get ``groups=``, the labels of their ``by`` column
        (:func:`~calib_core.evaluation.trials.slice_inputs`), and the rows they fit globally are counted in the
        messages.
    calibrators : mapping name → estimator, a sequence of estimators, or one estimator
        Unfitted calibrators with ``fit(dist, y, *, features=None)`` / ``transform(dist, *, features=None)``;
        each is cloned per trial.  ``None`` stands for the uncalibrated predictions.
    split : None, "column", "random", or an array
        ``None``: the ``split`` column when it has both ``cal`` and ``test`` rows, otherwise a random
        split.  An array gives per-row labels (``cal``/``test``) or a boolean "is test" mask.
    repeats : int
        Number of trials (random split re-drawn each time; with a fixed split there is one trial).
    seed : int
        Random split of trial t: permutation from ``default_rng([seed, t])``.
    test_fraction : float
        Share of the rows held out by a random split.
    metrics : None, sequence or mapping
        Names from ``regression.metrics.summary_statistics`` (default :data:`DEFAULT_METRICS`) and/or
        callables ``f(y, dist) -> float`` (mapping name → callable, or functions named by
        ``__name__``), evaluated on the test rows.
    diagrams : bool
        Also compute, for the first trial, the diagram tables of the test rows
        (:func:`~calib_core.diagrams.regression.regression_diagrams`, ``DIAGRAM_RESAMPLES`` bootstrap resamples)
        and the calibrated predictions of every row, with the estimators fitted in that trial.
    progress : callable ``progress(done, total, text)``, optional
        Called as the work completes.

    Returns
    -------
    EvaluationResult
        ``.long`` (model × calibrator × trial × metric) and ``.summary`` (mean ± std over trials), the first
        trial's fitted estimators (``.fitted``), and with ``diagrams=True`` ``.diagrams`` and ``.calibrated``.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (§5.1: the held-out protocol).
    .. [2] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
           regression", Proc. 35th ICML, PMLR 80, 2796–2804, 2018.
    .. [3] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)
    >>> group = np.where(np.arange(200) < 100, "a", "b")
    >>> ps = cc.PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, sigma), group=group)
    >>> res = evaluate_regression(ps, [None, cc.StdScaling()], metrics=["z_std", "coverage_90"], repeats=3)
    >>> res.wide().round(3)
    metric            z_std  coverage_90
    model calibrator
    model none        2.113        0.560
          StdScaling  1.144        0.873
    """
    if prediction_set.task != "regression":
        raise ValueError("evaluate() works on regression prediction sets")
    if prediction_set.y is None:
        raise ValueError("the prediction set has no targets y")
    cals = normalise_calibrators(calibrators)
    named, custom = _normalise_metrics(metrics)
    task = _RegressionTrials(prediction_set, named, custom, seed)
    result = run_trials(prediction_set, cals, task, split=split, repeats=repeats, seed=seed,
                        test_fraction=test_fraction, diagrams=diagrams, progress=progress)
    p = prediction_set  # inf / NaN means: the rows behind them in the summary's notes
    with np.errstate(all="ignore"):
        add_nonfinite_notes(result, p.y, p.point if task.point_only else p.dist.mean(),
                            None if task.point_only else p.dist.std(), p.row_number)
    return result


class _RegressionTrials(TrialTask):
    """The regression hooks of the trial loop: distributions (or point predictions) in, ``fit(dist, y,
    features=…)`` / ``transform(dist, features=…)``, the summary statistics of the test rows out."""

    task = "regression"

    def __init__(self, pset: PredictionSet, named: list[str], custom: dict[str, MetricFn], seed: int) -> None:
        self.pset = pset
        self.named = named
        self.custom = custom
        self.seed = seed
        self.point_only = pset.dist is None

    def admit(self, cals: dict[str, Any], messages: list[str]) -> dict[str, Any]:
        """Point-only sets: no uncalibrated baseline (it has no uncertainty)."""
        if self.point_only and self.pset.point is None:
            raise ValueError("the prediction set has neither a predictive distribution nor point predictions")
        if self.point_only and any(c is None for c in cals.values()):
            messages.append("point predictions only: the uncalibrated baseline has no uncertainty and is skipped")
            cals = {k: v for k, v in cals.items() if v is not None}
        p = self.pset
        with np.errstate(all="ignore"):  # rows whose squares overflow: named once, before the trials
            extreme = extreme_rows_note(p.y, p.point if self.point_only else p.dist.mean(),
                                        None if self.point_only else p.dist.std(), p.row_number)
        if extreme:
            messages.append(extreme)
        return cals

    def split(self, cal_idx: np.ndarray, test_idx: np.ndarray) -> tuple[PredictionSet, PredictionSet]:
        """The calibration and the test rows as prediction sets."""
        return self.pset.take(cal_idx), self.pset.take(test_idx)

    def _predictions(self, s: PredictionSet) -> Any:
        return s.point if self.point_only else s.dist

    def baseline(self, rows: tuple[PredictionSet, PredictionSet]) -> Any:
        """The test rows' own predictions."""
        return self._predictions(rows[1])

    def fit(self, est: Any, rows: tuple[PredictionSet, PredictionSet], groups: Mapping[str, Any]) -> None:
        """``est.fit(dist, y, features=…)`` on the calibration rows."""
        cal_set = rows[0]
        est.fit(self._predictions(cal_set), cal_set.y, features=cal_set.features, **groups)

    def apply(self, est: Any, rows: tuple[PredictionSet, PredictionSet], groups: Mapping[str, Any]) -> Any:
        """``est.transform(dist, features=…)`` of the test rows."""
        test_set = rows[1]
        return est.transform(self._predictions(test_set), features=test_set.features, **groups)

    def measure(self, est: Any, out: Any, rows: tuple[PredictionSet, PredictionSet]) -> dict[str, float]:
        """The summary statistics of the test rows (only when named metrics are asked for)."""
        # a calibrated σ of 0 or an overflowing error gives NaN/inf statistics on purpose, not warnings
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return summary_statistics(RegressionRows(rows[1].y, out)) if self.named else {}

    def scores(self, est: Any, out: Any, measured: dict[str, float],
               rows: tuple[PredictionSet, PredictionSet]) -> dict[str, float]:
        """The named statistics, then the custom metrics ``f(y, dist)``."""
        values: dict[str, float] = {}
        if self.named:
            for m in self.named:
                if m not in measured:
                    raise KeyError(f"unknown metric {m!r}; available: {sorted(measured)}")
                values[m] = measured[m]
        for m, fn in self.custom.items():
            values[m] = float(fn(rows[1].y, out))
        return values

    def view(self, sub: PredictionSet, rows: np.ndarray, test_rel: np.ndarray, est: Any,
             groups: Mapping[str, Any]) -> tuple[Any, Any]:
        """Diagram tables of the test rows and the calibrated distribution of every row of one model."""
        base = sub.dist if sub.dist is not None else sub.point
        dist = sub.dist if est is None else est.transform(base, features=sub.features, **groups)
        rr = RegressionRows(sub.y[test_rel], dist.take(test_rel), pit_seed=self.seed)
        return regression_diagrams(rr, n_resamples=DIAGRAM_RESAMPLES, seed=self.seed), dist


def slice_comparison_regression(
    prediction_set: PredictionSet, result: EvaluationResult, *, by: str, metrics: Any = SLICE_METRICS
) -> pd.DataFrame:
    """Per-slice calibration of the held-out rows before and after every calibrator.

    For each model and each slice g of column ``by`` (``"group"`` or a feature column), the statistics
    ``metrics`` (names of ``regression.metrics.summary_statistics``; default :data:`SLICE_METRICS`) of the first
    trial's test rows of g under every calibrator of ``result`` (``cc.evaluate(..., diagrams=True)``), the
    uncalibrated baseline included: a slice-wise calibrator should move every slice, not just the average, towards
    coverage 0.9, mean z 0 and std z 1.

    Parameters
    ----------
    prediction_set : PredictionSet
        The evaluated regression set.
    result : EvaluationResult
        Its evaluation with ``diagrams=True``.
    by : str
        The slice column.
    metrics : sequence of str, default :data:`SLICE_METRICS`
        Names of ``regression.metrics.summary_statistics``.

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
    .. [1] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005, §4.5
           (calibration within every category of a Mondrian taxonomy).
    .. [2] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)
    >>> group = np.where(np.arange(200) < 100, "a", "b")
    >>> ps = cc.PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, sigma), group=group)
    >>> res = evaluate_regression(ps, [None, cc.StdScaling()], diagrams=True)
    >>> slice_comparison_regression(ps, res, by="group", metrics=["z_std"]).round(3)
       model       slice  calibrator  n_test  z_std
    0  model  (all rows)        none     100  2.143
    1  model  (all rows)  StdScaling     100  1.173
    2  model           a        none      46  2.405
    3  model           a  StdScaling      46  1.317
    4  model           b        none      54  1.855
    5  model           b  StdScaling      54  1.016
    """
    if not result.calibrated:
        raise ValueError("the evaluation holds no calibrated predictions: run it with diagrams=True")
    y = np.asarray(prediction_set.y, dtype=float)

    def score(rows: np.ndarray, rel: np.ndarray, dist: Any) -> dict[str, float]:
        """The summary statistics of some held-out rows of one model."""
        return summary_statistics(RegressionRows(y[rows], dist.take(rel), pit_seed=result.seed))

    return slice_comparison_rows(prediction_set, result, by, score, list(metrics))
