"""The test and interval of ``below_median``, the share of targets below the forecast median
(:mod:`calib_core.metrics.regression_location`).

Null: under perfect calibration P(y < median) = ½ for every row, whatever the spread — a forecast with the right
centre and a wrong σ passes (for symmetric laws; e.g. σ too small in one region only, the heteroscedastic case in
which mean z may lean either way).  With the counts L = #{y < median} and U = #{y ≤ median} (L = U without ties;
for quantile sets the stated q_½, whose definition gives P(y < q_½) ≤ ½ ≤ P(y ≤ q_½) under H0; for ensembles the
middle members, a target between the two middle members of an even ensemble counted by its randomised rank PIT —
so L is stochastically at most and U at least a Binomial(N, ½), also when censoring (rain zeros) makes ties):

    p = min(1, 2 · min(P(B ≥ L), P(B ≤ U))),   B ~ Binomial(N, ½)

— exact, and conservative with ties.  Interval: Clopper–Pearson, the lower end from L and the upper from U, i.e.
the test inverted: ½ lies outside the level-(1 − a) interval exactly when p < a.  Reference (``perfect``) ½.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from ..base import significance as sig
from ..base.regression import QuantileSet, SampleSet
from ..metrics.regression_location import median_counts
from ..metrics.regression_rows import RegressionRows

__all__ = ["below_median_test", "location_tests"]


def below_median_test(lo: int, hi: int, n: int, level: float = 0.95) -> tuple[float, float, float]:
    """Exact two-sided test of P(y < median) = ½ from the bracketing counts L ≤ U, and its Clopper–Pearson
    interval.

    p = min(1, 2 min(P(B ≥ L), P(B ≤ U))) with B ~ Binomial(N, ½); interval [CP_low(L), CP_high(U)].

    Parameters
    ----------
    lo : int
        L = #{y < median}.
    hi : int
        U = #{y ≤ median} (= L without ties).
    n : int
        Rows N.
    level : float, default 0.95
        Two-sided level of the interval.

    Returns
    -------
    tuple of float
        (p-value, interval low, interval high).

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    .. [2] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. *Journal of the Royal Statistical Society B* 69(2), 243–268.

    Examples
    --------
    >>> p, a, b = below_median_test(60, 60, 100)
    >>> round(p, 4), a < 0.5 < b
    (0.0569, True)
    """
    lo, hi, n = int(lo), int(hi), int(n)
    if n <= 0:
        return float("nan"), float("nan"), float("nan")
    upper_tail = float(special.bdtrc(lo - 1, n, 0.5)) if lo > 0 else 1.0  # P(B ≥ L)
    lower_tail = float(special.bdtr(hi, n, 0.5))  # P(B ≤ U)
    p = min(1.0, 2.0 * min(upper_tail, lower_tail))
    ci_lo = sig.clopper_pearson(lo, n, level)[0]
    ci_hi = sig.clopper_pearson(hi, n, level)[1]
    return p, float(ci_lo), float(ci_hi)


def location_tests(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows,
                   level: float) -> None:
    """``below_median``'s exact binomial test against ½ (ties bracketed) and Clopper–Pearson interval, written into
    its record.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    level : float
        Two-sided level of the interval.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    .. [2] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [3] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    """
    if "below_median" not in values:
        return
    row = rec["below_median"]
    if not np.isfinite(values["below_median"]):
        if isinstance(r.dist, QuantileSet):
            row["note"] = "undefined: the quantile set does not state the level τ = ½"
        return
    lo, hi, n = median_counts(r)
    p, a, b = below_median_test(int(lo), int(hi), int(n), level)
    if isinstance(r.dist, SampleSet) and lo == hi:
        how = "exact binomial against ½ (target below the middle member(s): randomised rank PIT u < ½)"
    elif lo < hi:
        how = (f"exact binomial against ½, {int(hi - lo):,} tie(s) with the median bracketed "
               "(#{y < median} too large or #{y ≤ median} too small; conservative)")
    else:
        how = "exact binomial against ½"
    row.update(p_value=p, p_mc_se=0.0, test=how, perfect=0.5, ci_low=a, ci_high=b,
               interval="Clopper–Pearson (exact; ends from #{y < median} and #{y ≤ median})" if lo < hi
               else "Clopper–Pearson (exact)")
