"""A quantile set's stated levels in a mergeable summary: the bracketing counts per level and per stated pair.

What a chunk of quantile-set rows adds to its summary part (:func:`stated_part`): ``stated_lo`` / ``stated_hi``, the
counts L_τ = #{y < q_τ} and U_τ = #{y ≤ q_τ} per stated level, and ``stated_open:<c>`` / ``stated_closed:<c>``, the
open and closed counts of every central interval whose ends are both stated.  They are sums, so merged summaries
hold them exactly; :func:`stated_values` gives ``pit_chi2`` and ``max_level_deviation`` and
:func:`stated_summary_tests` their tests, the same numbers as ``cc.diagnose`` on the rows
(:mod:`calib_core.inference.regression_stated`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.mergeable import SummarySpec
from ..base.regression import QuantileSet
from ..diagrams.regression import stated_cells_frame, stated_levels_frame
from ..inference.regression_stated import other_stated_coverages, stated_count_tests
from ..metrics.regression_stated import (
    level_deviation,
    min_pit_chi2,
    stated_level_counts,
    stated_pair_counts,
    stated_pairs,
)

__all__ = ["stated_part", "stated_values", "stated_summary_tests", "stated_diagrams", "other_pair_counts",
           "other_stated_values"]


def coverage_tag(c: float) -> str:  # as regression_values.coverage_tag (which imports this module)
    return f"{100 * c:g}"


def stated_part(y: np.ndarray, dist: QuantileSet, coverages) -> dict[str, np.ndarray]:
    """The stated-level counts of one chunk of quantile-set rows (empty for any other layout).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The chunk's predictions.
    coverages : sequence of float
        The spec's central-interval levels.

    Returns
    -------
    dict of str to ndarray
        ``stated_lo``, ``stated_hi`` (int64, shape (Q,)) and ``stated_open:<c>``, ``stated_closed:<c>`` (int64,
        shape (1,)) per stated pair (of ``coverages`` and every other central pair the levels state).

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [2] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """
    if not isinstance(dist, QuantileSet):
        return {}
    lo, hi = stated_level_counts(y, dist.values)
    out = {"stated_lo": lo.astype(np.int64), "stated_hi": hi.astype(np.int64)}
    every = (*coverages, *(1.0 - 2.0 * dist.levels[dist.levels < 0.5]))  # the spec's levels and every stated pair
    for c, (k_open, k_closed) in stated_pair_counts(y, dist.values, stated_pairs(dist.levels, every)).items():
        out[f"stated_open:{coverage_tag(c)}"] = np.array([k_open], dtype=np.int64)
        out[f"stated_closed:{coverage_tag(c)}"] = np.array([k_closed], dtype=np.int64)
    return out


def stated_values(part: dict, spec: SummarySpec) -> dict[str, float]:
    """``pit_chi2`` and ``max_level_deviation`` from a (merged) part's counts (empty without them).

    Parameters
    ----------
    part : dict of str to ndarray
        A summary part.
    spec : SummarySpec
        Its spec (``quantile_levels``).

    Returns
    -------
    dict of str to float
        The two statistics, as :func:`calib_core.metrics.regression_stated.stated_statistics` gives them in memory.

    References
    ----------
    .. [1] Pearson, K. (1900). On the criterion that a given system of deviations from the probable in the case of
       a correlated system of variables is such that it can be reasonably supposed to have arisen from random
       sampling. *Philosophical Magazine* 50(302), 157–175.
    .. [2] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    """
    if "stated_lo" not in part or not spec.quantile_levels:
        return {}
    n = float(part["n"].sum())
    tau = np.asarray(spec.quantile_levels, dtype=float)
    lo, hi = part["stated_lo"].astype(float), part["stated_hi"].astype(float)
    return {"pit_chi2": min_pit_chi2(lo, hi, n, tau)[0],
            "max_level_deviation": float(level_deviation(lo, hi, n, tau).max())}


def other_stated_values(part: dict, spec: SummarySpec) -> dict[str, float]:
    """``coverage_<c>`` (closed count / N, ends included) of every stated central pair outside the spec's coverages,
    as :func:`calib_core.metrics.regression_wis.wis_statistics` gives them in memory.

    Parameters
    ----------
    part : dict of str to ndarray
        A summary part.
    spec : SummarySpec
        Its spec.

    Returns
    -------
    dict of str to float
        The coverages, narrowest first.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """
    n = float(part["n"].sum())
    counts = other_pair_counts(part, spec)
    return {f"coverage_{coverage_tag(c)}": counts[c][1] / n for c in sorted(counts)}


def stated_summary_tests(rec: dict[str, dict[str, Any]], values: dict[str, float], part: dict, spec: SummarySpec,
                         *, n_null: int, level: float, seed: int) -> None:
    """The quantile-set tests of a summary (:func:`~calib_core.inference.regression_stated.stated_count_tests`):
    nothing unless the part holds the stated counts.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : dict of str to float
        The point values.
    part : dict of str to ndarray
        The merged part.
    spec : SummarySpec
        Its spec.
    n_null : int
        Monte Carlo draws.
    level : float
        Two-sided level of the intervals.
    seed : int
        Seeds the Monte Carlo nulls.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    .. [2] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    """
    if "stated_lo" not in part or not spec.quantile_levels:
        return
    tau = np.asarray(spec.quantile_levels, dtype=float)
    tags = {c: coverage_tag(c) for c in stated_pairs(tau, spec.coverages)}
    pairs = {c: (float(part[f"stated_open:{t}"].sum()), float(part[f"stated_closed:{t}"].sum()))
             for c, t in tags.items()}
    stated_count_tests(rec, values, part["stated_lo"], part["stated_hi"], pairs, int(part["n"].sum()), tau,
                       spec.coverages, int(n_null), level, seed)
    other_stated_coverages(rec, other_pair_counts(part, spec), int(part["n"].sum()), level)


def other_pair_counts(part: dict, spec: SummarySpec) -> dict[float, tuple[float, float]]:
    """(open, closed) counts of the stated central pairs outside the spec's coverages, from a (merged) part.

    Parameters
    ----------
    part : dict of str to ndarray
        A summary part.
    spec : SummarySpec
        Its spec (``quantile_levels``, ``coverages``).

    Returns
    -------
    dict of float to (float, float)
        c → (#{q_lo < y < q_hi}, #{q_lo ≤ y ≤ q_hi}), c = 1 − 2τ.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """
    if "stated_lo" not in part or not spec.quantile_levels:
        return {}
    tau = np.asarray(spec.quantile_levels, dtype=float)
    known = {coverage_tag(c) for c in spec.coverages}
    out = {}
    for c in stated_pairs(tau, 1.0 - 2.0 * tau[tau < 0.5]):
        t = coverage_tag(c)
        if t not in known and f"stated_open:{t}" in part:
            out[c] = (float(part[f"stated_open:{t}"].sum()), float(part[f"stated_closed:{t}"].sum()))
    return out


def stated_diagrams(part: dict, spec: SummarySpec) -> dict[str, Any]:
    """A quantile set's PIT histogram over the cells between its stated levels and its ``stated_levels`` table from
    a summary part (as ``cc.diagnose`` draws them; empty without the stated counts).

    Parameters
    ----------
    part : dict of str to ndarray
        A (merged) summary part.
    spec : SummarySpec
        Its spec.

    Returns
    -------
    dict of str to DataFrame
        ``pit_histogram`` and ``stated_levels``, or {}.

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [2] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    """
    if "stated_lo" not in part or not spec.quantile_levels:
        return {}
    n = int(part["n"].sum())
    if n == 0:
        return {}
    tau = np.asarray(spec.quantile_levels, dtype=float)
    lo, hi = part["stated_lo"], part["stated_hi"]
    return {"pit_histogram": stated_cells_frame(lo, hi, n, tau), "stated_levels": stated_levels_frame(lo, hi, n, tau)}
