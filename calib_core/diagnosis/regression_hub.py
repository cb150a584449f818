"""A forecast hub's scores grouped by model, horizon, location and date: the forecaster's tables.

A hub (``cc.load_predictions(hub_folder, truth=...)``) gives one row per (model × forecast unit) with the stated
quantiles of each unit and its task IDs in ``pset.units`` (location, horizon, reference and target dates …).  The
forecaster asks for every score *per group*: per model, per model and horizon, per location and target date.  All
of them are means or shares over the rows of a group, so they are computed once per row
(:func:`forecast_rows`: the WIS and its parts, the central-interval coverages, the count of stated quantiles below
the target, the bias) and then summed per group with ``np.bincount`` (:func:`forecast_scores`,
:func:`forecast_heatmap`): a filter or a selection regroups the per-row arrays and never recomputes a score.

Per group g with n_g rows:

* ``wis`` and its parts ``wis_dispersion``, ``wis_overprediction``, ``wis_underprediction`` — means over the rows
  of WIS = (1/(K+½))(½|y − m| + Σ_k α_k/2 · IS_{α_k}) (Bracher et al. 2021; per row from
  :func:`calib_core.metrics.regression_wis.wis_parts`);
* ``coverage_<c>`` — the share of targets inside the stated central interval of nominal coverage c % (inclusive
  ends; :func:`calib_core.metrics.regression_wis.central_coverages`);
* ``share_lt_<τ>`` = #{y < q_τ}/n_g and ``share_le_<τ>`` = #{y ≤ q_τ}/n_g — the quantile coverage of every stated
  level, bracketed by the open and the closed count (equal without ties; a calibrated forecast has
  share_lt ≤ τ ≤ share_le in the population);
* ``below_median`` = (#{y < q_½} + #{y ≤ q_½}) / (2 n_g) — the share below the stated median, ties counted half
  (as :mod:`calib_core.metrics.regression_location`; ½ when calibrated, above ½ = forecasts too high);
* ``pit_departure`` = max_τ max(0, share_lt_τ − τ, τ − share_le_τ) — the largest distance of a stated level's
  coverage bracket from its level: the PIT over the Q + 1 cells between the stated levels, summarised
  (:func:`calib_core.metrics.regression_stated.level_deviation`; 0 when every bracket holds its level);
* ``bias`` — the mean of the quantile bias of Funk et al. (2019) as scoringutils defines it per row: 0 when
  y = median; 1 − 2 max{τ : q_τ ≤ y} when y < median (1 when y is below every quantile); 1 − 2 min{τ : q_τ ≥ y}
  when y > median (−1 above every quantile).  In [−1, 1]; > 0 = forecasts too high.  The median is the stated
  q_½, else the linear interpolation of the two innermost levels (as scoringutils).

No Python loop over rows: per-row values come from vectorised array operations, groups from integer codes of each
grouping column (computed once per data set) and ``np.bincount``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.predictions import InputError, PredictionSet
from ..base.regression import QuantileSet
from ..metrics.regression_stated import level_deviation
from ..metrics.regression_wis import central_coverages, wis_parts

__all__ = ["ForecastRows", "forecast_rows", "quantile_bias", "forecast_scores", "forecast_heatmap",
           "score_columns", "hub_score_tables", "HEATMAP_VALUES"]

#: Values a heatmap cell can show besides any column of :func:`forecast_scores` (computed from them).
HEATMAP_VALUES = ("wis_relative",)
_TOL = 1e-9
_MAX_DENSE = 4_000_000  # largest product of group sizes counted with a dense np.bincount


@dataclass
class ForecastRows:
    """The per-row scores of a forecast hub's quantile forecasts, and integer codes of every grouping column.

    Built once per data set by :func:`forecast_rows`; :func:`forecast_scores` and :func:`forecast_heatmap` only sum
    these arrays per group.

    Attributes
    ----------
    levels : ndarray of shape (Q,)
        The stated quantile levels τ.
    values : ndarray of shape (N, C)
        The per-row means' terms, one column per name of ``columns``: ``wis``, ``wis_dispersion``,
        ``wis_overprediction``, ``wis_underprediction`` (Bracher et al. 2021), ``coverage_<c>`` (1 when y lies in the
        stated central interval of nominal coverage c %, else 0) and ``bias`` (:func:`quantile_bias`).  One matrix,
        stored column by column, so a group sum is one ``np.bincount`` per column.
    columns : list of str
        The names of the columns of ``values``.
    n_below, n_at_or_below : ndarray of int of shape (N,)
        #{τ : q_τ < y} and #{τ : q_τ ≤ y} per row: y < q_τj ⟺ n_at_or_below ≤ j and y ≤ q_τj ⟺ n_below ≤ j.
    codes : dict of str to ndarray of int
        Per grouping column (``model`` and every column of ``units``) the code of each row in ``vocab``.
    vocab : dict of str to ndarray
        Per grouping column its sorted distinct values.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """

    levels: np.ndarray
    values: np.ndarray
    columns: list[str]
    n_below: np.ndarray
    n_at_or_below: np.ndarray
    codes: dict[str, np.ndarray] = field(default_factory=dict)
    vocab: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.values.shape[0])

    @property
    def dimensions(self) -> list[str]:
        """The columns one can group by (``model`` and the task-ID columns)."""
        return list(self.codes)

    @property
    def coverages(self) -> dict[str, np.ndarray]:
        """``coverage_<c>`` → its column of ``values`` (1: inside), narrowest interval first."""
        return {c: self.column(c) for c in self.columns if c.startswith("coverage_")}

    def column(self, name: str) -> np.ndarray:
        """One column of ``values`` by name (a view)."""
        return self.values[:, self.columns.index(name)]


def quantile_bias(y: np.ndarray, values: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The quantile bias of every row (Funk et al. 2019, as scoringutils computes it).

    B = 0 if y = m; B = 1 − 2 max{τ : q_τ ≤ y} if y < m (max ∅ = 0); B = 1 − 2 min{τ : q_τ ≥ y} if y > m
    (min ∅ = 1); m the stated median q_½, else the linear interpolation of the two innermost levels.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    values : ndarray of shape (N, Q)
        Stated quantiles, non-decreasing along each row.
    levels : ndarray of shape (Q,)
        Stated levels τ, increasing.

    Returns
    -------
    ndarray of shape (N,)
        B in [−1, 1]; > 0: the forecast lies above the target (too high).

    References
    ----------
    .. [1] Funk, S., Camacho, A., Kucharski, A. J., Lowe, R., Eggo, R. M. & Edmunds, W. J. (2019). Assessing the
       performance of real-time epidemic forecasts: a case study of Ebola in the Western Area region of Sierra
       Leone, 2014–15. *PLOS Computational Biology* 15(2), e1006785.
    .. [2] Bosse, N. I., Gruson, H., Cori, A., van Leeuwen, E., Funk, S. & Abbott, S. (2022). Evaluating forecasts
       with scoringutils in R. *arXiv* 2205.07090.

    Examples
    --------
    >>> q = np.array([[1.0, 2.0, 3.0]] * 4)
    >>> quantile_bias(np.array([0.0, 1.5, 2.0, 2.5]), q, np.array([0.25, 0.5, 0.75])).tolist()
    [1.0, 0.5, 0.0, -0.5]
    """
    y = np.asarray(y, dtype=float)
    q = np.asarray(values, dtype=float)
    tau = np.asarray(levels, dtype=float)
    m = _median(q, tau)
    n_le = (q <= y[:, None]).sum(axis=1)
    n_lt = (q < y[:, None]).sum(axis=1)
    tau_lo = np.concatenate([[0.0], tau])[n_le]  # max{τ : q_τ ≤ y}; 0 when none
    tau_hi = np.concatenate([tau, [1.0]])[n_lt]  # min{τ : q_τ ≥ y}; 1 when none
    out = np.where(y < m, 1.0 - 2.0 * tau_lo, np.where(y > m, 1.0 - 2.0 * tau_hi, 0.0))
    return np.where(np.isnan(y) | np.isnan(m), np.nan, out)


def _median(q: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The stated median q_½, else the interpolation of the innermost levels around ½ (NaN if one side is absent)."""
    hit = np.flatnonzero(np.abs(tau - 0.5) < _TOL)
    if hit.size:
        return q[:, hit[0]]
    below, above = np.flatnonzero(tau < 0.5), np.flatnonzero(tau > 0.5)
    if not below.size or not above.size:
        return np.full(q.shape[0], np.nan)
    i, j = below[-1], above[0]
    w = (0.5 - tau[i]) / (tau[j] - tau[i])
    return q[:, i] + w * (q[:, j] - q[:, i])


def forecast_rows(pset: PredictionSet) -> ForecastRows:
    """The per-row scores of a hub's quantile forecasts, computed once (the input of every grouped table).

    WIS parts and central coverages from :mod:`calib_core.metrics.regression_wis`; the counts of stated quantiles
    below the target; the bias :func:`quantile_bias`; integer codes of ``model`` and of every ``units`` column.

    Parameters
    ----------
    pset : PredictionSet
        Regression predictions with a :class:`~calib_core.base.regression.QuantileSet` (a hub's quantile
        forecasts); ``units`` (the task IDs) when grouping by anything else than the model.

    Returns
    -------
    ForecastRows
        The per-row arrays.

    Raises
    ------
    InputError
        Not a quantile set.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> from calib_core.base.regression import QuantileSet
    >>> d = QuantileSet([0.25, 0.5, 0.75], np.array([[1.0, 2.0, 3.0]] * 2))
    >>> r = forecast_rows(cc.PredictionSet(task="regression", y=np.array([2.0, 4.0]), dist=d))
    >>> r.n_at_or_below.tolist(), r.coverages["coverage_50"].tolist()
    ([2, 3], [1.0, 0.0])
    """
    if pset.task != "regression" or not isinstance(pset.dist, QuantileSet):
        raise InputError("forecast scores need quantile forecasts (a hub's quantile output)", source=pset.source,
                         hint="load the hub's quantile forecasts (output_type='quantile') with their truth file")
    y = np.asarray(pset.y, dtype=float)
    q, tau = pset.dist.values, np.asarray(pset.dist.levels, dtype=float)
    parts = wis_parts(y, pset.dist)
    coverages = central_coverages(y, pset.dist)
    order = sorted(coverages, key=lambda k: float(k.split("_", 1)[1]))
    codes: dict[str, np.ndarray] = {}
    vocab: dict[str, np.ndarray] = {}
    keys = {"model": np.asarray(pset.model if pset.model is not None else np.full(y.size, "model"), dtype=object)}
    if pset.units is not None:
        keys.update({str(c): pset.units[c].to_numpy() for c in pset.units.columns if str(c) != "model"})
    for name, column in keys.items():
        code, uniques = pd.factorize(column, sort=True, use_na_sentinel=False)
        codes[name] = code.astype(np.int64)
        vocab[name] = np.asarray(uniques)
    columns = ["wis", "wis_dispersion", "wis_overprediction", "wis_underprediction", *order, "bias"]
    values = np.empty((y.size, len(columns)), order="F")  # columns contiguous: one np.bincount each
    values[:, :4] = np.column_stack([parts.wis, parts.dispersion, parts.overprediction, parts.underprediction])
    for j, name in enumerate(order):
        values[:, 4 + j] = coverages[name]
    values[:, -1] = quantile_bias(y, q, tau)
    return ForecastRows(levels=tau, values=values, columns=columns,
                        n_below=(q < y[:, None]).sum(axis=1).astype(np.int64),
                        n_at_or_below=(q <= y[:, None]).sum(axis=1).astype(np.int64), codes=codes, vocab=vocab)


def _rows_of(data: PredictionSet | ForecastRows) -> ForecastRows:
    return data if isinstance(data, ForecastRows) else forecast_rows(data)


def _group_index(rows: ForecastRows, by: Sequence[str], mask: np.ndarray | None) -> tuple[np.ndarray, pd.DataFrame]:
    """(group of every kept row, the table of group keys): codes combined by ``np.ravel_multi_index``."""
    unknown = [b for b in by if b not in rows.codes]
    if unknown:
        raise InputError(f"cannot group by {', '.join(map(repr, unknown))}: not a column of these forecasts",
                         columns=list(unknown), hint=f"group by one of {', '.join(rows.codes)}")
    sizes = tuple(int(rows.vocab[b].size) for b in by)
    if not by:
        combined = np.zeros(rows.n_rows, dtype=np.int64)
    else:
        combined = np.ravel_multi_index(tuple(rows.codes[b] for b in by), sizes)
    if mask is not None:
        combined = combined[np.asarray(mask, dtype=bool)]
    total = int(np.prod(sizes, dtype=np.int64)) if by else 1
    if total <= _MAX_DENSE:
        present = np.flatnonzero(np.bincount(combined, minlength=total))
        lookup = np.full(total, -1, dtype=np.int64)
        lookup[present] = np.arange(present.size)
        group = lookup[combined]
    else:
        present, group = np.unique(combined, return_inverse=True)
    keys = pd.DataFrame(index=range(present.size))
    if by:
        parts = np.unravel_index(present, sizes)
        for b, part in zip(by, parts):
            keys[b] = rows.vocab[b][part]
    return group, keys


def score_columns(rows: ForecastRows) -> list[str]:
    """The score columns of :func:`forecast_scores` for these rows, in their order.

    Parameters
    ----------
    rows : ForecastRows
        Per-row scores.

    Returns
    -------
    list of str
        ``n``, ``wis`` and its parts, ``coverage_<c>``, ``below_median``, ``bias``, ``pit_departure``, then
        ``share_lt_<τ>`` and ``share_le_<τ>`` of every stated level.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """
    levels = [f"{t:g}" for t in rows.levels]
    return (["n", *rows.columns[:-1],
             "below_median", "bias", "pit_departure"]
            + [f"share_lt_{t}" for t in levels] + [f"share_le_{t}" for t in levels])


def forecast_scores(
    data: PredictionSet | ForecastRows,
    by: Sequence[str] = ("model",),
    mask: np.ndarray | None = None,
) -> pd.DataFrame:
    """Every forecast score per group: one row per distinct value of the ``by`` columns among the kept rows.

    Means over the n_g rows of group g: wis, its parts, coverage_<c>, bias; shares: share_lt_τ = #{y < q_τ}/n_g,
    share_le_τ = #{y ≤ q_τ}/n_g, below_median = (share_lt_½ + share_le_½)/2; pit_departure =
    max_τ max(0, share_lt_τ − τ, τ − share_le_τ) (see the module docstring).  Sums by ``np.bincount``.

    Parameters
    ----------
    data : PredictionSet or ForecastRows
        A hub's quantile forecasts, or their per-row scores (:func:`forecast_rows`, to regroup without recomputing).
    by : sequence of str, default ("model",)
        Grouping columns: ``model`` and any task-ID column (``horizon``, ``location``, ``reference_date``,
        ``target_end_date`` …).  ``()`` gives one row for all kept rows.
    mask : ndarray of bool of shape (N,), optional
        The rows to use (filters, selections).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns (sorted by their values), then :func:`score_columns`.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    .. [2] Funk, S., Camacho, A., Kucharski, A. J., Lowe, R., Eggo, R. M. & Edmunds, W. J. (2019). Assessing the
       performance of real-time epidemic forecasts: a case study of Ebola in the Western Area region of Sierra
       Leone, 2014–15. *PLOS Computational Biology* 15(2), e1006785.
    .. [3] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.

    Examples
    --------
    >>> from calib_core.base.regression import QuantileSet
    >>> d = QuantileSet([0.25, 0.5, 0.75], np.array([[1.0, 2.0, 3.0]] * 4))
    >>> p = cc.PredictionSet(task="regression", y=np.array([0.0, 1.5, 2.5, 4.0]), dist=d,
    ...                      model=np.array(["a", "a", "b", "b"]))
    >>> print(forecast_scores(p)[["model", "n", "coverage_50", "below_median", "bias"]].to_string(index=False))
    model  n  coverage_50  below_median  bias
        a  2          0.5           1.0  0.75
        b  2          0.5           0.0 -0.75
    """
    rows = _rows_of(data)
    by = tuple(by)
    group, keys = _group_index(rows, by, mask)
    g = len(keys)
    n = np.bincount(group, minlength=g).astype(float)
    if mask is not None:  # the dropped rows go to a group of their own (g), counted and then left out: no copies
        full = np.full(rows.n_rows, g, dtype=np.int64)
        full[np.asarray(mask, dtype=bool)] = group
        group = full
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.column_stack([np.bincount(group, weights=rows.values[:, j], minlength=g + 1)[:g]
                                 for j in range(rows.values.shape[1])]) / n[:, None]
    q = rows.levels.size
    lower = _cumulative_counts(group, rows.n_at_or_below, g, q)  # #{y < q_τj} = #{n_at_or_below ≤ j}
    upper = _cumulative_counts(group, rows.n_below, g, q)  # #{y ≤ q_τj} = #{n_below ≤ j}
    with np.errstate(invalid="ignore", divide="ignore"):
        share_lt, share_le = lower / n[:, None], upper / n[:, None]
        departure = level_deviation(lower, upper, n[:, None], rows.levels).max(axis=1) if q else np.full(g, np.nan)
    half = np.flatnonzero(np.abs(rows.levels - 0.5) < _TOL)
    levels = [f"{t:g}" for t in rows.levels]
    out = {b: keys[b].to_numpy() for b in by} | {"n": n.astype(np.int64)}
    out |= {name: means[:, j] for j, name in enumerate(rows.columns[:-1])}  # wis, its parts, the coverages
    out["below_median"] = (share_lt[:, half[0]] + share_le[:, half[0]]) / 2 if half.size else np.full(g, np.nan)
    out["bias"] = means[:, -1]
    out["pit_departure"] = np.where(n > 0, departure, np.nan)
    out |= {f"share_lt_{t}": share_lt[:, j] for j, t in enumerate(levels)}
    out |= {f"share_le_{t}": share_le[:, j] for j, t in enumerate(levels)}
    return pd.DataFrame(out)


def _cumulative_counts(group: np.ndarray, k: np.ndarray, g: int, q: int) -> np.ndarray:
    """(G, Q) counts #{rows of group with k ≤ j}, j = 0 … Q − 1 (rows of group G, the dropped ones, left out)."""
    hist = np.bincount(group * (q + 1) + k, minlength=(g + 1) * (q + 1))[:g * (q + 1)].reshape(g, q + 1)
    return np.cumsum(hist, axis=1)[:, :q].astype(float)


def forecast_heatmap(
    data: PredictionSet | ForecastRows,
    value: str = "coverage_50",
    rows: str = "location",
    columns: str = "target_end_date",
    mask: np.ndarray | None = None,
) -> pd.DataFrame:
    """The table of a heatmap: one score per (row value, column value) cell, all kept models pooled.

    ``value`` is any column of :func:`forecast_scores` (``coverage_50``, ``pit_departure``, ``wis``, ``bias`` …) or
    ``wis_relative`` = the cell's mean WIS / the mean WIS of its heatmap row over all its cells (locations on very
    different scales become comparable: 1 = the row's average, 2 = twice as bad).

    Parameters
    ----------
    data : PredictionSet or ForecastRows
        A hub's quantile forecasts or their per-row scores.
    value : str, default "coverage_50"
        The score of a cell.
    rows, columns : str, default "location", "target_end_date"
        The grouping columns of the heatmap's rows and columns (``horizon``, ``reference_date``, ``model`` …).
    mask : ndarray of bool of shape (N,), optional
        The rows to use.

    Returns
    -------
    pandas.DataFrame
        ``row``, ``column``, ``value``, ``n`` and the cell's codes ``row_code``, ``column_code`` (the index of its
        values in the sorted distinct values of the whole data: stable under filters, used to select cells).

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> from calib_core.base.regression import QuantileSet
    >>> d = QuantileSet([0.25, 0.5, 0.75], np.array([[1.0, 2.0, 3.0]] * 3))
    >>> units = pd.DataFrame({"location": ["01", "01", "02"], "horizon": [1, 2, 1]})
    >>> p = cc.PredictionSet(task="regression", y=np.array([0.0, 2.0, 2.5]), dist=d, units=units)
    >>> forecast_heatmap(p, "coverage_50", "location", "horizon")[["row", "column", "value", "n"]].values.tolist()
    [['01', 1, 0.0, 1], ['01', 2, 1.0, 1], ['02', 1, 1.0, 1]]
    """
    per_row = _rows_of(data)
    if rows == columns:
        raise InputError(f"the heatmap's rows and columns are both {rows!r}", columns=[rows],
                         hint="choose two different columns")
    scores = forecast_scores(per_row, (rows, columns), mask)
    if value == "wis_relative":
        weighted = scores["wis"] * scores["n"]
        total = weighted.groupby(scores[rows]).transform("sum") / scores["n"].groupby(scores[rows]).transform("sum")
        with np.errstate(invalid="ignore", divide="ignore"):
            cell = (scores["wis"] / total).to_numpy()
    elif value in scores.columns and value not in (rows, columns, "n"):
        cell = scores[value].to_numpy(dtype=float)
    else:
        raise InputError(f"no score {value!r} for a heatmap",
                         hint=f"choose one of {', '.join(score_columns(per_row)[1:])} or wis_relative")
    return pd.DataFrame({
        "row": scores[rows].to_numpy(), "column": scores[columns].to_numpy(), "value": cell,
        "n": scores["n"].to_numpy(),
        "row_code": pd.Index(per_row.vocab[rows]).get_indexer(scores[rows]),
        "column_code": pd.Index(per_row.vocab[columns]).get_indexer(scores[columns]),
    })


def hub_score_tables(pset: PredictionSet) -> dict[str, pd.DataFrame]:
    """A hub report's score tables: by model, by model × horizon and by model × location.

    Each is :func:`forecast_scores` grouped that way — the mean weighted interval score and its parts (Bracher et
    al. 2021), the coverage of every stated central interval, the share below the median, the quantile bias and the
    PIT departure — without the per-level share columns; a grouping whose column the hub lacks is left out.

    Parameters
    ----------
    pset : PredictionSet
        A hub's quantile forecasts (``units`` set by the hub reader).

    Returns
    -------
    dict of str to pandas.DataFrame
        Title → table, in the report's order.

    References
    ----------
    Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
    format. PLOS Computational Biology 17(2), e1008618.
    """
    tables: dict[str, pd.DataFrame] = {}
    if pset.units is None:
        return tables
    rows = forecast_rows(pset)  # the per-row scores once, regrouped three times
    for title, by in (("Scores by model", ("model",)), ("Scores by model and horizon", ("model", "horizon")),
                      ("Scores by model and location", ("model", "location"))):
        if any(c != "model" and c not in pset.units for c in by):
            continue
        table = forecast_scores(rows, by=by)
        tables[title] = table[[c for c in table.columns if not c.startswith(("share_lt_", "share_le_"))]]
    return tables
