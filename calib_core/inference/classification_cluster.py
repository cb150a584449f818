"""Classification tests and intervals for dependent rows: every p-value and interval respects a clustering.

Under a :class:`~calib_core.base.clustering.Clustering` (forecasts made on one date share that date's surprise) the
null draws of :mod:`~calib_core.inference.classification_nulls` — labels drawn independently row by row — are too
narrow, and their p-values reject a calibrated forecaster far more often than ``alpha``.  Here every test is
replaced by one that holds whatever the dependence inside a cluster, built on the same replicates as the intervals
(whole clusters, or moving blocks of consecutive clusters, re-weighted: one matrix product of per-cluster bin sums):

* **means** — the overall gap mean confidence − accuracy (and the calibration ratio Σf/Σy, monotone in it), the
  top-bin gap, the positive class's overall gap: the cluster-robust t test with G − 1 degrees of freedom
  (:func:`~calib_core.base.clustering.cluster_mean_test`; Cameron & Miller 2015) for whole clusters; for moving
  blocks of k the t test with the moving-block bootstrap's standard error (× √(G/(G − 1))) and the 1.5 (G/k − 1)
  degrees of freedom of overlapping batch means (Meketon & Schmeiser 1984; the plain centred bootstrap p-value
  raised 10 % false alarms for the top-bin gap, 40 dates, blocks of 3);
* **distances** (0 under perfect calibration) — ECE, ECE of the positive class, class-wise ECE: with
  μ̂_c = Σ_{i∈c}(hit_i − conf_i)/N per cell c (a bin, or a (class, bin) pair), D = Σ_c |μ̂_c| against the centred
  replicates D* = Σ_c |μ*_c − μ̂_c| (:func:`~calib_core.base.clustering.centred_distance_p`; Hall & Wilson 1991);
  the smooth ECE: its smoothed residual curve centred the same way
  (:func:`~calib_core.metrics.classification_smooth.smooth_inference`, ``centred_test``);
* **not tested** (p = NaN, the reason in the row): TCE — its per-bin exact binomial tests assume independent rows
  and its value has no population counterpart to centre at; MCE — a maximum over bins, and a bin whose rows all
  come from one cluster never varies between cluster replicates, so the centred bootstrap of
  max_c |δ*_c − δ̂_c| (δ = accuracy − confidence of a bin) raised false alarms in about half of the calibrated
  date-shocked data sets (40 dates × 50 rows; 8 % for the top label); no interval either.

Intervals: the distances get plug-in ± the ``level`` quantile of their centred replicates (valid by the triangle
inequality, |Σ|μ| − Σ|μ̂|| ≤ Σ|μ − μ̂|; it excludes 0 exactly when the test rejects at 1 − ``level``), the means and
ratios the percentile bootstrap of the cluster replicates.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..base.clustering import Clustering, centred_distance_p, cluster_mean_test
from ..metrics.classification import ClassificationRows
from .classification_cells import percentile_bounds

__all__ = ["NOT_TESTABLE", "NOT_TESTABLE_MAX", "centred_l1", "cluster_tests", "cluster_intervals"]


#: The test column of a statistic that has no cluster-aware test (its p-value is NaN).
NOT_TESTABLE = ("not tested with clustered rows: TCE's per-bin binomial tests assume independent rows and its value "
                "has no population counterpart to centre a bootstrap at")

#: The test column of MCE under a clustering (p-value and interval NaN).
NOT_TESTABLE_MAX = ("not tested with clustered rows: a maximum over bins, and a bin whose rows come from one cluster "
                    "has no cluster-to-cluster variation to resample (its centred bootstrap raised false alarms in "
                    "half of the calibrated data sets); read ECE's test")


def centred_l1(sums: list[np.ndarray], dev: np.ndarray, n: float) -> np.ndarray:
    """Centred distance of an ECE-type statistic per replicate: D* = Σ_c |μ*_c − μ̂_c|, μ_c = Σ_{i∈c}(h_i − v_i)/N.

    Parameters
    ----------
    sums : list of ndarray of shape (R, C)
        The replicates' per-cell (count, Σv, Σh, …).
    dev : ndarray of shape (C,)
        The data's Σ(h − v) per cell.
    n : float
        The data's rows N.

    Returns
    -------
    ndarray of shape (R,)
        D* (NaN for a replicate without rows).

    References
    ----------
    .. [1] Hall, P. & Wilson, S. R. (1991). Two guidelines for bootstrap hypothesis testing. *Biometrics* 47(2),
       757–762.

    Examples
    --------
    >>> sums = [np.array([[2.0, 2.0]]), np.array([[1.0, 1.0]]), np.array([[2.0, 1.0]])]
    >>> centred_l1(sums, np.array([1.0, 0.0]), 4.0).tolist()
    [0.0]
    """
    count, s_v, s_h = sums[0], sums[1], sums[2]
    n_star = count.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs((s_h - s_v) / n_star - dev / n).sum(axis=1)


def _recoded(codes: np.ndarray) -> np.ndarray:
    return np.unique(codes, return_inverse=True)[1].astype(np.intp)


def _mean_p(x: np.ndarray, codes: np.ndarray, stat: float, boot: np.ndarray,
            clustering: Clustering) -> tuple[float, float, str]:
    """(p, Monte-Carlo s.e., how) of a mean's test: cluster-robust t for whole clusters, else the centred
    moving-block bootstrap."""
    if clustering.block_length is None:
        c = _recoded(codes)
        g = int(c.max()) + 1 if c.size else 0
        _, p, _ = cluster_mean_test(x, c)
        return float(p), 0.0, f"cluster-robust t test (CR1, {g} clusters, Student t with {g - 1} df)"
    # moving blocks: studentised by the replicates' spread (× √(G/(G − 1)), as CR1); that spread is a noisy variance
    # estimate (about G/k independent blocks), so Student t with the 1.5 (G/k − 1) degrees of freedom of overlapping
    # batch means (Meketon & Schmeiser 1984) — the plain centred bootstrap p-value, and t with G − 1 df, raised 10 %
    # false alarms for the top-bin gap at 40 dates, blocks of 3
    b = np.asarray(boot, dtype=float)
    b = b[np.isfinite(b)]
    g = clustering.n_clusters
    se = float(b.std(ddof=1)) * math.sqrt(g / (g - 1.0)) if b.size > 1 and g > 1 else float("nan")
    if not se > 0 or not np.isfinite(stat):
        return float("nan"), float("nan"), "moving-block bootstrap: no spread"
    df = max(1, int(1.5 * (g / clustering.block_length - 1.0)))  # overlapping batch means (Meketon & Schmeiser)
    p = float(2.0 * stats.t.sf(abs(stat) / se, df))
    return p, 0.0, (f"t test with the moving-block bootstrap standard error ({b.size} replicates, Student t with "
                    f"{df} df)")


def _distance_p(d_obs: float, d_boot: np.ndarray, what: str, clustering: Clustering) -> tuple[float, float, str]:
    p = float(centred_distance_p(d_obs, d_boot))
    r = int(np.isfinite(d_boot).sum())
    kind = "cluster" if clustering.block_length is None else "moving-block"
    return p, math.sqrt(p * (1.0 - p) / max(r, 1)), f"centred {kind} bootstrap of {what} ({r} replicates)"


def _gap_reps(sums: list[np.ndarray], sel: np.ndarray | None = None) -> np.ndarray:
    """Replicates of mean(v − h) over the selected cells."""
    count, s_v, s_h = (a if sel is None else a[:, sel] for a in sums[:3])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (s_v - s_h).sum(axis=1) / count.sum(axis=1)


def cluster_tests(rows: ClassificationRows, bins, boot: dict, clustering: Clustering, obs: dict, pvals: dict,
                  cw: dict | None) -> None:
    """Replace every p-value of ``pvals`` by its cluster-aware test (module docstring); ``boot`` gains the centred
    distances (``<name>_centred``) the intervals use.

    Parameters
    ----------
    rows : ClassificationRows
        The rows.
    bins : object
        The per-bin summaries of :func:`~calib_core.inference.classification.infer_classification` (``top``,
        ``top_sel``, ``pos``, ``n``).
    boot : dict
        The replicates (``top_sums``, ``positive_sums`` and the statistics), from the clustering's design.
    clustering : Clustering
        The rows' clusters.
    obs : dict of str to float
        Observed statistics.
    pvals : dict of str to (float, float, str)
        Updated in place.
    cw : dict or None
        Class-wise results (``boot_l1``: its centred distance replicates).

    Returns
    -------
    None

    References
    ----------
    .. [1] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. *Journal of
       Human Resources* 50(2), 317–372.
    .. [2] Hall, P. & Wilson, S. R. (1991). Two guidelines for bootstrap hypothesis testing. *Biometrics* 47(2),
       757–762.
    """
    codes = clustering.codes
    n, top = float(bins.n), bins.top
    ts = boot["top_sums"]
    boot["ece_centred"] = centred_l1(ts, top.dev, n)
    pvals["ece"] = _distance_p(obs["ece"], boot["ece_centred"], "Σ_bins |μ* − μ̂|", clustering)
    x = rows.confidence - rows.correct
    boot["top_bin_gap"] = _gap_reps(ts, bins.top_sel)
    in_top = bins.top_sel[rows.bin_index]
    pvals["top_bin_gap"] = _mean_p(x[in_top], codes[in_top], obs["top_bin_gap"], boot["top_bin_gap"], clustering)
    gap = _mean_p(x, codes, obs["confidence_gap"], boot["confidence_gap"], clustering)
    pvals["confidence_gap"] = gap
    boot["calibration_ratio"] = ts[1].sum(axis=1) / ts[2].sum(axis=1)
    if "calibration_ratio" in pvals:
        pvals["calibration_ratio"] = (gap[0], gap[1], gap[2] + " of Σ(f − y); R is monotone in it")
    if bins.pos is not None:
        pos, ps = bins.pos, boot["positive_sums"]
        pvals["ece_positive"] = _distance_p(obs["ece_positive"], boot["ece_positive_l1"], "Σ_bins |μ* − μ̂|",
                                            clustering)
        boot["calibration_ratio_positive"] = ps[1].sum(axis=1) / ps[2].sum(axis=1)
        if "calibration_ratio_positive" in pvals:
            gp = _mean_p(pos.v - pos.h, codes, float((pos.s_v.sum() - pos.s_h.sum()) / n), _gap_reps(ps),
                         clustering)
            pvals["calibration_ratio_positive"] = (gp[0], gp[1], gp[2] + " of Σ(f − y); R is monotone in it")
    if cw is not None and "classwise_ece" in pvals:
        pvals["classwise_ece"] = _distance_p(obs["classwise_ece"], cw["boot_l1"], "Σ_cells |μ* − μ̂| / K",
                                             clustering)
    for keys, why in ((("tce", "tce_positive"), NOT_TESTABLE), (("mce", "mce_positive"), NOT_TESTABLE_MAX)):
        for key in keys:
            if key in pvals:
                pvals[key] = (float("nan"), float("nan"), why)


def _band(plug: float, d_boot: np.ndarray, level: float, what: str) -> tuple[float, float, str]:
    d = np.asarray(d_boot, dtype=float)
    d = d[np.isfinite(d)]
    q = float(np.quantile(d, level)) if d.size else float("nan")
    return (max(0.0, plug - q), plug + q,
            f"plug-in ± the level quantile of the centred cluster-bootstrap error {what} (triangle inequality)")


def cluster_intervals(bins, obs: dict, boot: dict, cw: dict | None,
                      level: float) -> dict[str, tuple[float, float, str]]:
    """(low, high, how) of every interval that :func:`cluster_tests`' replicates change: distances as plug-in ± the
    ``level`` quantile of their centred replicates, means and ratios the percentile bootstrap.

    Parameters
    ----------
    bins : object
        The per-bin summaries (``pos`` for binary files).
    obs : dict of str to float
        Observed statistics.
    boot : dict
        Replicates, after :func:`cluster_tests`.
    cw : dict or None
        Class-wise results.
    level : float
        Two-sided level.

    Returns
    -------
    dict of str to (float, float, str)
        The intervals, by statistic.

    References
    ----------
    .. [1] Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. *Journal of the Royal Statistical
       Society B* 69(3), 369–390.
    .. [2] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    """
    nan = float("nan")
    ci = {"ece": _band(obs["ece"], boot["ece_centred"], level, "Σ_bins |μ* − μ̂|"), "mce": (nan, nan, "")}
    how = "percentile cluster bootstrap"
    for key in ("accuracy", "top_bin_gap", "calibration_ratio", "calibration_ratio_positive"):
        if key in boot and key in obs:
            ci[key] = (*percentile_bounds(boot[key], level), how)
    if bins.pos is not None:
        ci["ece_positive"] = _band(obs["ece_positive"], boot["ece_positive_l1"], level, "Σ_bins |μ* − μ̂|")
        ci["mce_positive"] = (nan, nan, "")
    if cw is not None and "classwise_ece" in obs:
        ci["classwise_ece"] = _band(obs["classwise_ece"], cw["boot_l1"], level, "Σ_cells |μ* − μ̂| / K")
    return ci
