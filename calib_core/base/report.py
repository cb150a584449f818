"""The Report returned by ``cc.diagnose``: a long metric table, a verdicts table and the data behind every diagram.

The metric table (``Report.metrics``) has one row per (model, group, metric) with columns

    model, group, metric, value, ci_low, ci_high, perfect, perfect_low, perfect_high,
    kind, family, debiased, interval, p_value, p_mc_se, test, adjusted_p, flag, note

``value`` is the metric on the data and ``[ci_low, ci_high]`` the interval for its population value (the method
in ``interval``: BCa or basic block bootstrap, exact binomial, KS band, …); ``perfect`` is the value a perfectly
calibrated forecaster with the same predictions gets on average at this N (its exact expectation where one is
known, else simulated; ``[perfect_low, perfect_high]`` its central range where the inference layer gives one).
``kind`` is the metric's kind in the registry (calibration statistic, proper score, descriptive).  Every
calibration statistic has a test: ``p_value`` (two-sided unless the statistic only grows with miscalibration),
``p_mc_se`` the Monte-Carlo standard error of a simulated p-value (0 for exact tests), ``test`` its name;
``family`` is ``"primary"`` (the small pre-declared family behind the headline verdict, Holm at family-wise
``alpha``) or ``"secondary"`` (Benjamini–Hochberg at false-discovery rate ``alpha``); ``adjusted_p`` the Holm- or
BH-adjusted p-value and ``flag`` whether it is at most ``alpha``.  ``debiased`` is a bias-corrected estimate where
the plug-in is biased (ENCE, ECE, calibration RMSE, …) and ``note`` says e.g. why a value sits outside its interval.
``group == ALL`` is the whole model.

The verdicts table (``Report.verdicts``) has one row per (model, group) with columns :data:`VERDICT_COLUMNS`:
the headline ``verdict`` ("calibrated" = no evidence of miscalibration, "miscalibrated", or "not tested"), its
``direction`` (e.g. "over-confident"), ``p_value`` (the smallest Holm-adjusted p-value of the primary family: the
family-wise p-value of "perfectly calibrated"), the statistic that decided it (``lead``), the plain ``sentence``,
and the bookkeeping of the multiplicity correction (tests in the family, secondary tests, BH flags, flags expected
by chance).

``diagrams[(model, group)]`` maps a diagram name to its table (see ``regression.diagrams`` and
``classification.metrics`` for the schemas).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .frames import typed_column
from .predictions import ALL, PredictionSet
from .report_html import REPR_MAX_MODELS, report_html_fragment
from .resampling import bootstrap_intervals, simulate_reference

__all__ = [
    "CALIBRATION_STATISTIC",
    "PROPER_SCORE",
    "DESCRIPTIVE",
    "KINDS",
    "Report",
    "ALL",
    "METRIC_COLUMNS",
    "INFERENCE_COLUMNS",
    "VERDICT_COLUMNS",
    "metric_rows",
    "inference_metric_rows",
    "metric_frame",
    "verdict_row",
    "empty_verdicts",
    "subset_name",
    "NOT_TESTED",
    "CALIBRATED",
    "MISCALIBRATED",
    "headline_of",
    "blank_inference",
    "report_html_fragment",
    "REPR_MAX_MODELS",
    "diagnosis_report",
]

#: What a metric is (its ``kind`` in the metric registry and in the ``kind`` column): a calibration statistic
#: (tested against "targets are draws from the predicted distributions"), a proper score (its expectation under
#: that hypothesis is a reference, not a test) or descriptive (no verdict).  Defined here, below the registry and
#: the inference layers, so that both read the same names without importing each other.
CALIBRATION_STATISTIC = "calibration statistic"
PROPER_SCORE = "proper score"
DESCRIPTIVE = "descriptive"
KINDS = (CALIBRATION_STATISTIC, PROPER_SCORE, DESCRIPTIVE)

METRIC_COLUMNS = [
    "model",
    "group",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "perfect",
    "perfect_low",
    "perfect_high",
    "kind",
    "family",
    "debiased",
    "interval",
    "p_value",
    "p_mc_se",
    "test",
    "adjusted_p",
    "flag",
    "note",
]
#: The columns of the metric table that the inference layer fills (after the point value).
INFERENCE_COLUMNS = METRIC_COLUMNS[4:]
VERDICT_COLUMNS = [
    "model",
    "group",
    "n",
    "verdict",
    "direction",
    "p_value",
    "lead",
    "sentence",
    "n_tests",
    "alpha",
    "n_secondary",
    "n_flags",
    "expected_chance_flags",
]


def metric_rows(
    statistic: Callable[[np.ndarray | None], Mapping[str, float]],
    n: int,
    simulate: Callable[[np.random.Generator], Mapping[str, float]] | None = None,
    *,
    model: str = "model",
    group: str = ALL,
    n_resamples: int = 200,
    n_simulations: int = 50,
    level: float = 0.95,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Evaluate ``statistic(None)`` and attach bootstrap CIs and perfect-calibration values.

    ``statistic(weights)`` returns ``{metric: value}`` for row weights (``None`` = the data);
    ``simulate(rng)`` returns the same metrics on simulated perfectly calibrated targets.
    ``n_resamples = 0`` / ``n_simulations = 0`` switch either part off (NaN columns).

    Parameters
    ----------
    statistic : callable
        ``statistic(weights) -> {metric: value}``.
    n : int
        Number of rows (the length of the weights).
    simulate : callable, optional
        ``simulate(rng) -> {metric: value}`` on simulated perfectly calibrated targets.
    model, group : str
        The (model, group) of the rows.
    n_resamples : int, default 200
        Bootstrap replicates (0: no intervals).
    n_simulations : int, default 50
        Simulations of perfect calibration (0: no perfect-calibration values).
    level : float, default 0.95
        Two-sided level of the intervals and of the perfect-calibration range.
    seed : int or None, default 0
        Seeds the bootstrap and the simulations.

    Returns
    -------
    DataFrame
        One row per metric, columns :data:`METRIC_COLUMNS`.
    """
    values = statistic(None)
    ci = bootstrap_intervals(statistic, n, n_resamples, level, seed) if n_resamples else {}
    ref = simulate_reference(simulate, n_simulations, level, seed) if (simulate and n_simulations) else {}
    nan3 = (np.nan, np.nan, np.nan)
    rows = []
    for name, v in values.items():
        lo, hi = ci.get(name, (np.nan, np.nan))
        pm, pl, ph = ref.get(name, nan3)
        how = "percentile bootstrap" if np.isfinite(lo) else ""
        rows.append([model, group, name, float(v), lo, hi, pm, pl, ph, "", "", np.nan, how, np.nan, np.nan, "",
                     np.nan, False, ""])
    return pd.DataFrame(rows, columns=METRIC_COLUMNS)


def verdict_row(
    model: str,
    group: str,
    n: int,
    *,
    verdict: str,
    direction: str | None = "",
    p_value: float = np.nan,
    lead: str = "",
    sentence: str = "",
    n_tests: int = 0,
    alpha: float = 0.05,
    n_secondary: int = 0,
    n_flags: int = 0,
    expected_chance_flags: float = np.nan,
) -> dict[str, Any]:
    """One row of ``Report.verdicts`` (see the module docstring).

    Parameters
    ----------
    model, group : str
        The (model, group).
    n : int
        Rows.
    verdict : str
        :data:`CALIBRATED`, :data:`MISCALIBRATED` or :data:`NOT_TESTED`.
    direction : str or None, default ""
        How the forecaster is miscalibrated ("" or None: no direction).
    p_value : float, default NaN
        Family-wise p-value of "perfectly calibrated" (smallest Holm-adjusted p-value of the primary family).
    lead : str, default ""
        The statistic that decided the verdict.
    sentence : str, default ""
        The verdict in words.
    n_tests : int, default 0
        Tests in the primary family.
    alpha : float, default 0.05
        Family-wise level.
    n_secondary : int, default 0
        Secondary tests.
    n_flags : int, default 0
        Secondary statistics flagged by Benjamini–Hochberg.
    expected_chance_flags : float, default NaN
        Flags expected by chance (α × secondary tests).

    Returns
    -------
    dict
        Keys :data:`VERDICT_COLUMNS`.
    """
    return {
        "model": model,
        "group": group,
        "n": int(n),
        "verdict": verdict,
        "direction": direction or "",
        "p_value": float(p_value),
        "lead": lead,
        "sentence": sentence,
        "n_tests": int(n_tests),
        "alpha": float(alpha),
        "n_secondary": int(n_secondary),
        "n_flags": int(n_flags),
        "expected_chance_flags": float(expected_chance_flags),
    }


def subset_name(model: str, group: str, pset: PredictionSet | None = None, mask: np.ndarray | None = None) -> str:
    """How a report's notes name one (model, group): "model 'm', all rows" or "model 'm', group 'dry'".

    With ``pset`` and the subset's row ``mask``, the rows of :data:`ALL` that all belong to one group are named by
    it (a diagnosis of one group's rows without ``by_group``, as the dashboard's group filter makes); called only
    when a note is written, so the extra pass over the group column costs nothing otherwise.

    Parameters
    ----------
    model, group : str
        The (model, group).
    pset : PredictionSet, optional
        The prediction set (to name the one group of a subset of :data:`ALL`).
    mask : ndarray of bool, optional
        The subset's rows.

    Returns
    -------
    str
        E.g. "model 'm', all rows".
    """
    if group == ALL and pset is not None and pset.group is not None:
        values = pd.unique(pset.group if mask is None else pset.group[mask])
        if len(values) == 1:
            group = str(values[0])
    return f"model {model!r}, " + ("all rows" if group == ALL else f"group {group!r}")


def empty_verdicts() -> pd.DataFrame:
    """A verdicts table without rows.

    Returns
    -------
    DataFrame
        Columns :data:`VERDICT_COLUMNS`, no rows.
    """
    return pd.DataFrame(columns=VERDICT_COLUMNS)


#: Verdict of a (model, group) whose statistics were not tested (null draws switched off, point predictions).
NOT_TESTED = "not tested"
#: Verdict of a (model, group) whose primary family no test rejects (no evidence of miscalibration at this N).
CALIBRATED = "calibrated"
#: Verdict of a (model, group) whose primary family Holm's procedure rejects at family-wise ``alpha``.
MISCALIBRATED = "miscalibrated"


def headline_of(table: pd.DataFrame) -> tuple[float, str]:
    """(family-wise p-value, lead statistic) of a standardised inference table: the smallest Holm-adjusted p-value of
    the primary family and the primary statistic with the smallest raw p-value.

    Parameters
    ----------
    table : DataFrame
        Indexed by metric, with ``family``, ``p_value`` and ``adjusted_p``.

    Returns
    -------
    (float, str)
        The family-wise p-value and the lead statistic (NaN and "" without a tested primary statistic).
    """
    prim = table[(table["family"] == "primary") & np.isfinite(table["p_value"].to_numpy(dtype=float))]
    if prim.empty:
        return float("nan"), ""
    return float(prim["adjusted_p"].min()), str(prim["p_value"].astype(float).idxmin())


def blank_inference(table: pd.DataFrame, intervals: bool, tests: bool) -> pd.DataFrame:
    """Switch off the intervals (``n_resamples = 0``) or the tests (``n_simulations = 0``) of a standardised
    inference table: their columns become empty.

    Parameters
    ----------
    table : DataFrame
        Indexed by metric, with :data:`INFERENCE_COLUMNS`.
    intervals : bool
        Keep the intervals.
    tests : bool
        Keep the tests and perfect-calibration values.

    Returns
    -------
    DataFrame
        A copy with the switched-off columns empty.
    """
    t = table.copy()
    if not intervals:
        t[["ci_low", "ci_high"]] = np.nan
        t["interval"] = ""
    if not tests:
        t[["perfect", "perfect_low", "perfect_high", "p_value", "p_mc_se", "adjusted_p"]] = np.nan
        t[["test", "family"]] = ""
        t["flag"] = False
    return t


_INFERENCE_DEFAULTS: dict[str, Any] = {
    "ci_low": np.nan, "ci_high": np.nan, "perfect": np.nan, "perfect_low": np.nan, "perfect_high": np.nan,
    "kind": "", "family": "", "debiased": np.nan, "interval": "", "p_value": np.nan, "p_mc_se": np.nan, "test": "",
    "adjusted_p": np.nan, "flag": False, "note": "",
}


def inference_metric_rows(
    model: str,
    group: str,
    values: Mapping[str, float],
    inference: pd.DataFrame | None,
    *,
    kinds: Mapping[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> pd.DataFrame:
    """Metric-table rows (:data:`METRIC_COLUMNS`) of one (model, group).

    ``values`` are the point estimates (they are the ``value`` column, whatever the inference layer computed);
    ``inference`` is indexed by metric with any of :data:`INFERENCE_COLUMNS` (missing ones get their empty value);
    ``extra`` names statistics of ``inference`` that are not in ``values`` (e.g. a test statistic of the primary
    family) and are appended with the inference layer's own value.  ``kinds`` fills ``kind`` where the inference
    table has none.

    Parameters
    ----------
    model, group : str
        The (model, group).
    values : mapping of str to float
        Point values.
    inference : DataFrame or None
        The inference table (e.g. :attr:`calib_core.inference.result.InferenceResult.table`).
    kinds : mapping of str to str, optional
        Kinds of metrics the inference table has no kind for.
    extra : tuple of str, default ()
        Inference statistics to append.

    Returns
    -------
    DataFrame
        Columns :data:`METRIC_COLUMNS`.
    """
    kinds = kinds or {}
    inf = inference if inference is not None else pd.DataFrame()
    names = list(values) + [k for k in extra if k in inf.index and k not in values]
    # the inference table read column by column, once (a row look-up by label costs ~0.1 ms, 40 of them a table)
    row_of = {name: i for i, name in enumerate(inf.index)} if inf.index.is_unique else None
    columns = {col: inf[col].to_numpy() for col in _INFERENCE_DEFAULTS if col in inf.columns}
    k = len(names)
    cells: dict[str, Any] = {"model": [model] * k, "group": [group] * k, "metric": names}
    if row_of is None:  # repeated labels: as before, by label, one metric at a time
        rows = []
        for name in names:
            row = inf.loc[name] if name in inf.index else None
            rows.append({col: row[col] for col in _INFERENCE_DEFAULTS if row is not None and col in row.index})
        cells["value"] = [float(values[name]) if name in values else float(inf.loc[name, "value"]) for name in names]
    else:
        at = [row_of.get(name) for name in names]
        cells["value"] = [float(values[name]) if name in values else float(inf["value"].iloc[i])
                          for name, i in zip(names, at)]
        found = [i for i in at if i is not None]
    for col, default in _INFERENCE_DEFAULTS.items():
        if row_of is None:
            raw = [found_row.get(col, default) for found_row in rows]
        elif col not in columns:
            raw = [default] * k
        elif isinstance(default, float) and columns[col].dtype == np.float64 and len(found) == k:
            cells[col] = columns[col][found]  # every metric in the table: the float column as it is, one take
            continue
        else:
            column = columns[col]
            raw = [default if i is None else column[i] for i in at]
        if isinstance(default, float):
            cells[col] = [default if v is None else v for v in raw]
        else:  # a missing string or flag (None or NaN) is the empty value
            cells[col] = [default if v is None or (isinstance(v, float) and np.isnan(v)) else v for v in raw]
    cells["kind"] = [v if v else kinds.get(name, "") for name, v in zip(names, cells["kind"])]
    return metric_frame(cells)


_METRIC_KIND = {col: ("str" if isinstance(default, str) else "bool" if isinstance(default, bool) else "float")
                for col, default in _INFERENCE_DEFAULTS.items()}
_METRIC_KIND.update(model="str", group="str", metric="str", value="float")


def metric_frame(cells: Mapping[str, list[Any]]) -> pd.DataFrame:
    """The metric table (:data:`METRIC_COLUMNS`, a RangeIndex) of the cells of each column, built column by column.

    The frame equals ``pd.DataFrame.from_records(rows, columns=METRIC_COLUMNS)`` with ``flag`` cast to bool — the
    way the table was built from one record per metric — dtypes included: a column whose cells are all plain
    strings, floats or booleans is built with the dtype pandas would infer for it (:data:`_STR_DTYPE`, float64,
    bool), in one step; any other column (a cell of another type, e.g. an integer p-value standard error) sends
    the whole table through the general constructor.

    Parameters
    ----------
    cells : mapping of str to list
        The cells of every column of :data:`METRIC_COLUMNS`, one per metric (equal lengths).

    Returns
    -------
    DataFrame
        Columns :data:`METRIC_COLUMNS`.

    Examples
    --------
    >>> cells = {c: [""] for c in METRIC_COLUMNS}
    >>> cells.update({c: [float("nan")] for c in ("value", "ci_low", "ci_high", "perfect", "perfect_low",
    ...               "perfect_high", "debiased", "p_value", "p_mc_se", "adjusted_p")})
    >>> cells.update(model=["m"], group=["all"], metric=["rmse"], value=[0.5], flag=[False])
    >>> t = metric_frame(cells)
    >>> float(t.loc[0, "value"]), str(t["flag"].dtype)
    (0.5, 'bool')
    """
    built = {}
    for col in METRIC_COLUMNS:
        column = typed_column(cells[col], _METRIC_KIND[col]) if len(cells[col]) else None
        if column is None:  # no rows, or a cell of another type: from the records, pandas inferring every column
            records = [dict(zip(METRIC_COLUMNS, row)) for row in zip(*(list(cells[c]) for c in METRIC_COLUMNS))]
            frame = pd.DataFrame.from_records(records, columns=METRIC_COLUMNS)
            frame["flag"] = frame["flag"].astype(bool)
            return frame
        built[col] = column
    return pd.DataFrame(built)  # copied: the float columns in one block, as pandas lays out a frame of records


@dataclass
class Report:
    """Diagnostics of one PredictionSet: ``metrics`` (long table) and ``diagrams``.

    Attributes
    ----------
    task : str
        "regression" or "classification".
    metrics : DataFrame
        One row per (model, group, metric), columns :data:`METRIC_COLUMNS`.
    diagrams : dict
        ``diagrams[(model, group)][name]``: the diagram tables.
    source : str
        Where the predictions came from.
    n_rows : int
        Rows of the prediction set.
    dropped : DataFrame or None
        Summary of the rows dropped on reading.
    options : dict
        The diagnose function's settings and notes; ``cluster``, ``block_length``, ``n_clusters`` and
        ``clustering`` (:meth:`~calib_core.base.clustering.Clustering.describe`, or "independent rows") say which
        rows the intervals and tests resampled together.
    verdicts : DataFrame
        One row per (model, group), columns :data:`VERDICT_COLUMNS`.
    """

    task: str
    metrics: pd.DataFrame
    diagrams: dict[tuple[str, str], dict[str, pd.DataFrame]] = field(default_factory=dict)
    source: str = "<memory>"
    n_rows: int = 0
    dropped: pd.DataFrame | None = None
    options: dict[str, Any] = field(default_factory=dict)
    verdicts: pd.DataFrame = field(default_factory=empty_verdicts)

    @property
    def models(self) -> list[str]:
        return list(pd.unique(self.metrics["model"]))

    @property
    def groups(self) -> list[str]:
        return list(pd.unique(self.metrics["group"]))

    def table(self, model: str | None = None, group: str = ALL) -> pd.DataFrame:
        """The metric rows of one model (default: the first) and group, indexed by metric."""
        model = self.models[0] if model is None else model
        m = self.metrics
        sel = m[(m["model"] == model) & (m["group"] == group)]
        return sel.drop(columns=["model", "group"]).set_index("metric")

    def value(self, metric: str, model: str | None = None, group: str = ALL) -> float:
        """One metric's value."""
        return float(self.table(model, group).loc[metric, "value"])

    def verdict(self, model: str | None = None, group: str = ALL) -> dict[str, Any]:
        """The headline verdict of one model (default: the first) and group, as a dict of :data:`VERDICT_COLUMNS`."""
        model = self.models[0] if model is None else model
        v = self.verdicts
        sel = v[(v["model"] == model) & (v["group"] == group)]
        if sel.empty:
            raise KeyError(f"no verdict for model {model!r}, group {group!r}")
        return sel.iloc[0].to_dict()

    def sentences(self, group: str = ALL) -> list[tuple[str, str]]:
        """(model, sentence) of every model for one group, in the report's model order."""
        v = self.verdicts[self.verdicts["group"] == group]
        return [(str(m), str(s)) for m, s in zip(v["model"], v["sentence"])]

    def wide(self, column: str = "value") -> pd.DataFrame:
        """Metrics as columns, one row per (model, group)."""
        return self.metrics.pivot_table(index=["model", "group"], columns="metric", values=column, sort=False)

    def _repr_html_(self) -> str:
        """Jupyter display: the metric table of the whole data and the main diagram (a small inline SVG).

        The main diagram is Kuleshov's quantile-calibration curve (Levi's RMSE-vs-RMV diagram when the report has
        no curve) for regression and the reliability diagram for classification; every model is one colour (at
        most ``REPR_MAX_MODELS``).  Offline and small: no scripts, no CDN, every text from the data escaped.
        """
        return report_html_fragment(self)


def diagnosis_report(
    task: str,
    pset: PredictionSet,
    *,
    tables: list[pd.DataFrame],
    verdicts: list[dict[str, Any]],
    diagrams: dict[tuple[str, str], dict[str, pd.DataFrame]],
    options: dict[str, Any],
) -> Report:
    """The :class:`Report` of one diagnosis of ``pset``: the per-(model, group) metric tables stacked into
    ``metrics`` (:data:`METRIC_COLUMNS`, no rows when there are no tables), the :func:`verdict_row` dicts as the
    ``verdicts`` frame (:func:`empty_verdicts` when there are none), the data's source, row count and dropped-row
    summary, and ``options`` as given (the diagnose function's settings and notes).

    Parameters
    ----------
    task : str
        "regression" or "classification".
    pset : PredictionSet
        The diagnosed prediction set.
    tables : list of DataFrame
        Metric rows per (model, group).
    verdicts : list of dict
        :func:`verdict_row` per (model, group).
    diagrams : dict
        Diagram tables per (model, group).
    options : dict
        Settings and notes.

    Returns
    -------
    Report
        The report.
    """
    return Report(
        task=task,
        metrics=pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=METRIC_COLUMNS),
        diagrams=diagrams,
        source=pset.source,
        n_rows=pset.n_rows,
        dropped=pset.dropped.summary(),
        verdicts=pd.DataFrame(verdicts) if verdicts else empty_verdicts(),
        options=options,
    )
