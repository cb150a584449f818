"""What every metric and every calibrator *is*, in one place.

Two registries, read by everything that names a metric or a calibrator (the display tables, the comparison table,
the evaluation defaults, the Help and Recalibrate pages, the exports):

* **metrics** — one :class:`Metric` per (task, key): readable label, formula, paper, how to read it, the direction
  in which a value is better (``"lower"``, ``"higher"``, a target value such as 0.9 for the 90% coverage or 1 for
  std z, or ``None`` when no direction is better), its ``kind`` (:data:`CALIBRATION`, :data:`PROPER`,
  :data:`DESCRIPTIVE`: the names of ``calib_core.base.report.KINDS``, which the inference layers read too), the function
  that computes it and that function's default options.  The interval metrics form parametrised families
  (:class:`MetricFamily`: coverage, mean width and interval score of the central interval of nominal coverage c); the
  registry holds their members at :data:`~calib_core.metrics.regression.DEFAULT_COVERAGES` and :func:`metric` builds a
  member at any other level (``"coverage_97.5"``).
* **calibrators** — one :class:`CalibratorEntry` per recalibration method: name, class, paper, task, which inputs it
  needs (feature columns, whether it works on point predictions, binary labels only), its parameters with the
  defaults read from the class's constructor signature, and the few parameters worth tuning (:class:`Tunable`:
  kind, bounds, choices).

Metric functions take the targets first: ``fn(y, dist, **options)`` for regression and
``fn(labels, probs, **options)`` for classification, returning a float.

Kinds (the next layer attaches a statistical test to every calibration statistic):

* *calibration statistic*: a statistic with the null hypothesis "the targets are draws from the predicted
  distributions" (PIT/KS, calibration RMSE, ENCE, coverage, mean z, ECE, …);
* *proper score*: a strictly proper scoring rule (NLL, CRPS, Brier, interval score); its expectation under the
  null is a reference value, not a test;
* *descriptive*: a property of the predictions or of their accuracy (sharpness, Cv, widths, RMSE, accuracy,
  Spearman ρ): no verdict.

The entries live in ``registry_metrics`` (:class:`Metric`, :class:`MetricFamily`, :data:`METRICS`,
:data:`FAMILIES`), ``registry_decomposition`` (:data:`DECOMPOSITION_TERMS`) and ``registry_calibrators``
(:class:`CalibratorEntry`, :data:`CALIBRATORS`); this module holds the metric lookups and re-exports the rest.
"""

from __future__ import annotations

import pandas as pd

from .registry_calibrators import (
    CALIBRATORS,
    CalibratorEntry,
    Tunable,
    available_calibrators,
    calibrator,
    calibrator_help_table,
    calibrators,
    constructor_defaults,
)
from .registry_decomposition import (
    DECOMPOSITION_TERMS,
    decomposition_help_table,
    decomposition_term,
    decomposition_terms,
)
from .registry_metrics import (
    CALIBRATION,
    DESCRIPTIVE,
    FAMILIES,
    KINDS,
    METRICS,
    PROPER,
    TASKS,
    Metric,
    MetricFamily,
    check_task,
    direction_text,
)

__all__ = [
    "CALIBRATION",
    "PROPER",
    "DESCRIPTIVE",
    "KINDS",
    "TASKS",
    "Metric",
    "MetricFamily",
    "METRICS",
    "FAMILIES",
    "metric",
    "metrics",
    "metric_keys",
    "metric_label",
    "default_metric_keys",
    "direction_text",
    "metric_help_table",
    "DECOMPOSITION_TERMS",
    "decomposition_term",
    "decomposition_terms",
    "decomposition_help_table",
    "calibrator_help_table",
    "Tunable",
    "CalibratorEntry",
    "CALIBRATORS",
    "calibrator",
    "calibrators",
    "available_calibrators",
    "constructor_defaults",
]


_BY_KEY: dict[tuple[str, str], Metric] = {(m.task, m.key): m for m in METRICS}
if len(_BY_KEY) != len(METRICS):  # pragma: no cover - a registry edit gone wrong
    raise RuntimeError("duplicate (task, key) in the metric registry")


def metric(key: str, task: str | None = None) -> Metric:
    """The registry entry of ``key`` (``task`` None: regression first, then classification).

    Interval family members at any level resolve (``"coverage_97.5"``), and so do the decomposition terms
    (:data:`DECOMPOSITION_TERMS`, ``"mcb_brier"``).

    Parameters
    ----------
    key : str
        The metric's key.
    task : {"regression", "classification"} or None, default None
        Look in one task only.

    Returns
    -------
    Metric
        The entry.

    Raises
    ------
    KeyError
        An unknown key.

    Examples
    --------
    >>> metric("coverage_97.5").label
    'coverage 97.5%'
    """
    check_task(task)
    for t in (task,) if task is not None else TASKS:
        if (t, key) in _BY_KEY:
            return _BY_KEY[(t, key)]
        for fam in FAMILIES:
            if fam.task == t and (level := fam.level_of(key)) is not None:
                return fam.at(level)
        for m in DECOMPOSITION_TERMS:  # e.g. the MCB–DSC plane's per-trial terms in a comparison table
            if m.task == t and m.key == key:
                return m
    raise KeyError(f"unknown metric {key!r}" + (f" for {task}" if task else ""))


def metrics(task: str | None = None, kind: str | None = None) -> list[Metric]:
    """Registry entries in registry order, optionally of one task and/or one kind.

    Parameters
    ----------
    task : {"regression", "classification"} or None, default None
        The task (None: both).
    kind : str or None, default None
        One of :data:`KINDS` (None: all).

    Returns
    -------
    list of Metric
        The entries.

    Examples
    --------
    >>> [m.key for m in metrics("classification", "proper score")]
    ['nll', 'brier', 'rps']
    """
    check_task(task)
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    return [m for m in METRICS if (task is None or m.task == task) and (kind is None or m.kind == kind)]


def metric_keys(task: str, kind: str | None = None) -> list[str]:
    """Keys of one task's metrics in registry order.

    Parameters
    ----------
    task : {"regression", "classification"}
        The task.
    kind : str or None, default None
        One of :data:`KINDS` (None: all).

    Returns
    -------
    list of str
        The keys.

    Examples
    --------
    >>> metric_keys("classification")[:4]
    ['ece', 'smooth_ece', 'smooth_ece_positive', 'mce']
    """
    return [m.key for m in metrics(task, kind)]


def default_metric_keys(task: str) -> tuple[str, ...]:
    """The metrics ``cc.evaluate`` reports by default for ``task``.

    Parameters
    ----------
    task : {"regression", "classification"}
        The task.

    Returns
    -------
    tuple of str
        Their keys, in registry order.

    Examples
    --------
    >>> default_metric_keys("regression")[:3]
    ('calibration_rmse', 'quantile_calibration_error', 'miscalibration_area')
    """
    return tuple(m.key for m in metrics(task) if m.evaluate_default)


def metric_label(key: str, task: str | None = None) -> str:
    """Readable label of a metric key (``coverage_90`` → "coverage 90%"); unknown keys are returned as is.

    Parameters
    ----------
    key : str
        The metric's key.
    task : {"regression", "classification"} or None, default None
        Look in one task only.

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> metric_label("coverage_90"), metric_label("my_metric")
    ('coverage 90%', 'my_metric')
    """
    try:
        return metric(key, task).label
    except KeyError:
        return key


def metric_help_table(task: str) -> pd.DataFrame:
    """One row per metric of ``task`` (an interval family once, as "coverage c%"): metric, kind, better,
    formula, paper, how to read it.

    Parameters
    ----------
    task : {"regression", "classification"}
        The task.

    Returns
    -------
    DataFrame
        The Help page's table of the metrics.
    """
    rows = []
    shown: set[str] = set()
    for m in metrics(task):
        if m.family is not None:
            if m.family in shown:
                continue
            shown.add(m.family)
            fam = next(f for f in FAMILIES if f.key == m.family)
            name = fam.help_label
            better = "≈ c" if fam.direction == "target" else direction_text(fam.direction)
        else:
            name, better = m.label, direction_text(m.direction)
        rows.append({"metric": name, "kind": m.kind, "better": better, "formula": m.formula, "paper": m.paper,
                     "how to read it": m.reading})
    return pd.DataFrame(rows, columns=["metric", "kind", "better", "formula", "paper", "how to read it"])
