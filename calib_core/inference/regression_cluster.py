"""Regression tests and intervals that respect a clustering: rows resampled by whole clusters or moving blocks.

With a :class:`~calib_core.base.clustering.Clustering` (forecasts made on one date share that date's surprise), the
exact and simulated nulls of :mod:`~calib_core.inference.regression_tests` (independent rows) are far too
confident: 2,000 rows from 40 dates carry the information of a few dozen rows.  :func:`cluster_tests` replaces
every calibration statistic's p-value, and every interval not built on block sums, by a cluster-aware one:

================================================  =================================================================
statistic                                         test under clustering
================================================  =================================================================
mean z, coverage_c, below_median,                 cluster bootstrap-t of the mean of the per-row values or
range_coverage, a stated pair's coverage          indicators (CR1 standard errors, equal-tailed;
                                                  :func:`~calib_core.base.clustering.cluster_bootstrap_t`);
                                                  interval the bootstrap-t interval
std z, ZMS, mean log z²                           the same for the means of (z − z̄)², z², log z² (a mean of
                                                  squares is skewed and its spread estimate heavy-tailed: the
                                                  bootstrap-t follows both, a centred percentile test did not)
skewness, kurtosis                                centred bootstrap of the cluster replicates of the block sums
                                                  (Hall & Wilson 1991): p = #{|θ* − θ̂| ≥ |θ̂ − θ₀|}
PIT uniformity (KS), miscalibration area,         distance of the PIT's CDF from the diagonal on a grid,
calibration_rmse, l2 QCE, max_level_deviation     D = ‖F̂ − id‖ against D* = ‖F* − F̂‖ of the replicates (centred
                                                  distance); interval the band [D − q, D + q], q the level-quantile
                                                  of D*
pit_chi2, rank_chi2                               N Σ_k (p*_k − p̂_k)²/π_k against N Σ_k (p̂_k − π_k)²/π_k (cell
                                                  shares of the replicates)
ENCE (:func:`cluster_ence_test`)                  studentised per-bin deviations d_b = RMSE_b/RMV_b − 1 from the
                                                  per-(cluster, σ-bin) sums, centred distance of their mean |·|
PIT entropy, reliability score, anything else     no cluster-aware test: p = NaN and a note
================================================  =================================================================

Measured with calibrated Gaussian forecasts whose errors share a date effect (half the error variance; 40 dates ×
50 locations, 200 data sets): family-wise false alarms of the verdict 6.0% (Gaussian), 3.5% (23-level quantile
set), 4.0% (20-member ensemble), against 79–88% with independent-rows tests; 91%, 87%, 92% detected when the
stated spread is 0.8 of the true one.

Quantile sets use the stated levels only: the PIT cell of each target between its stated quantiles, a target equal
to a stated quantile placed uniformly at random over the cells next to it (seeded).  The perfect-calibration
reference values (``perfect``) stay as they are: values, not tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from ..base.clustering import (
    MIN_RELIABLE_CLUSTERS,
    centred_bootstrap_p,
    centred_distance_p,
    cluster_bootstrap_t,
    cluster_mean_test,
)
from ..base.regression import Gaussian, QuantileSet
from ..base.report import CALIBRATION_STATISTIC
from ..metrics.regression import DEFAULT_LEVELS, RegressionRows
from ..metrics.regression_ensemble_ranks import ensemble_ranks, ensemble_size, range_coverage_expected
from ..metrics.regression_stated import stated_pairs
from .regression_nulls import NullModel

__all__ = ["cluster_tests", "cluster_ence_test", "cumulative_by_cluster", "one_cluster", "NO_CLUSTER_TEST",
           "ONE_CLUSTER"]


#: The note of a calibration statistic that has no cluster-aware test (its i.i.d. p-value is withheld)
NO_CLUSTER_TEST = ("no test under clustering: this statistic has no cluster-aware test here (its independent-rows "
                   "p-value would be too small), so it is withheld")

#: Cells of the fine PIT grid of the KS distance and the miscalibration area (fewer when B·G is large)
_FINE_GRID = 1000
_GRID_BUDGET = 4e8  # B · G · cells of the replicate curves' matrix product



def cumulative_by_cluster(u: np.ndarray, codes: np.ndarray, g: int, grid: np.ndarray) -> np.ndarray:
    """Per-cluster counts of u ≤ t_j on a grid: C[c, j] = #{i in cluster c: u_i ≤ t_j}.

    Parameters
    ----------
    u : ndarray of shape (N,)
        PIT values.
    codes : ndarray of int, shape (N,)
        Cluster of each row (0 … G − 1).
    g : int
        G.
    grid : ndarray of shape (L,)
        Increasing grid t.

    Returns
    -------
    ndarray of shape (G, L)
        The counts (float).

    References
    ----------
    .. [1] Bickel, P. J. & Freedman, D. A. (1981). Some asymptotic theory for the bootstrap. *Annals of Statistics*
       9(6), 1196–1217.

    Examples
    --------
    >>> cumulative_by_cluster(np.array([0.1, 0.6, 0.3]), np.array([0, 0, 1]), 2, np.array([0.25, 0.5])).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    grid = np.asarray(grid, dtype=float)
    m = grid.size
    cell = np.searchsorted(grid, u, side="left")  # u ≤ t_j ⇔ cell ≤ j
    counts = np.bincount(np.asarray(codes, dtype=np.intp) * (m + 1) + cell, minlength=g * (m + 1)).reshape(g, m + 1)
    return np.cumsum(counts, axis=1)[:, :m].astype(float)


def _mean_row(row: dict[str, Any], x: np.ndarray, codes: np.ndarray, weights: np.ndarray, null: float, what: str,
              level: float, test: bool = True, back=None) -> None:
    """Cluster bootstrap-t test (``test``) and interval of a mean of per-row values ``x``
    (:func:`~calib_core.base.clustering.cluster_bootstrap_t`); with fewer than ``MIN_RELIABLE_CLUSTERS`` clusters
    the cluster-robust t test with G − 1 d.f. (a bootstrap of 3 clusters has 10 distinct resamples).  The row's
    value is the mean of ``x`` up to a constant, or ``back`` of it (the interval's ends then go through ``back``)."""
    g = int(weights.shape[1])
    if g >= MIN_RELIABLE_CLUSTERS:
        p, lo, hi, _ = cluster_bootstrap_t(x, codes, weights, null, level)
        how, se_mc = f"cluster bootstrap-t of the mean {what} (CR1 standard error, equal-tailed)", 1.0
        ci_how = "cluster bootstrap-t interval (CR1 standard error)"
    else:  # a handful of clusters: few distinct resamples; the t law with G − 1 d.f. is the conservative choice
        _, p, se = cluster_mean_test(x, codes, null)
        q = float(special.stdtrit(max(g - 1, 1), 0.5 + level / 2.0)) * se
        m = float(np.mean(x))
        lo, hi, se_mc = m - q, m + q, 0.0
        how = f"cluster-robust t test of the mean {what} (CR1 variance, {g - 1} d.f.)"
        ci_how = f"cluster-robust t interval ({g - 1} d.f.)"
    upd: dict[str, Any] = {}
    if test:
        b = max(int(weights.shape[0]), 1)
        upd.update(p_value=p, test=how,
                   p_mc_se=se_mc * float(np.sqrt(p * (1 - p) / b)) if np.isfinite(p) else np.nan)
    v = row["value"]
    if np.isfinite(lo) and np.isfinite(hi) and np.isfinite(v):
        if back is None:
            m = float(np.mean(x))
            lo, hi = v + (lo - m), v + (hi - m)
        else:
            lo, hi = back(lo), back(hi)
        upd.update(ci_low=float(lo), ci_high=float(hi), interval=ci_how)
    row.update(upd)


def _distance_row(row: dict[str, Any], d_obs: float, d_boot: np.ndarray, level: float, what: str, *,
                  squared: bool = False, upper: float = np.inf, interval: bool = True, test: bool = True) -> None:
    """Centred-distance p-value (``test``) and the band [D − q, D + q] around the row's value (q the
    level-quantile of D*)."""
    if test:
        p = centred_distance_p(d_obs, d_boot)
        row.update(p_value=float(p), test=f"centred cluster bootstrap of {what} (Hall & Wilson 1991)",
                   p_mc_se=float(np.sqrt(p * (1 - p) / max(d_boot.size, 1))) if np.isfinite(p) else 0.0)
    finite = d_boot[np.isfinite(d_boot)]
    v = row["value"]
    if not interval or finite.size == 0 or not np.isfinite(v):
        return
    q = float(np.quantile(finite, level))
    if squared:  # a squared distance: the band on its root
        lo, hi = max(0.0, np.sqrt(v) - np.sqrt(q)) ** 2, min(np.sqrt(upper), np.sqrt(v) + np.sqrt(q)) ** 2
    else:
        lo, hi = max(0.0, v - q), min(upper, v + q)
    row.update(ci_low=float(lo), ci_high=float(hi),
               interval="cluster bootstrap band: value ± the level-quantile of the replicates' distance from the "
                        "estimate")


def _curves(cum: np.ndarray, n_g: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The estimate F̂ (L,) and the replicates F* (B, L) of a CDF on a grid from per-cluster cumulative counts."""
    f_hat = cum.sum(axis=0) / n_g.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        f_rep = (weights @ cum) / (weights @ n_g)[:, None]
    return f_hat, f_rep


def _quantile_pit(r: RegressionRows, seed: int | None) -> np.ndarray:
    """A quantile set's PIT at its stated levels: the cell between the stated quantiles around each target, a
    target equal to stated quantiles uniform over the cells next to them (seeded)."""
    d = r.dist
    tau = np.concatenate([[0.0], np.asarray(d.levels, dtype=float), [1.0]])
    below = np.zeros(r.n, dtype=np.intp)
    at_most = np.zeros(r.n, dtype=np.intp)
    for j in range(d.values.shape[1]):  # over the stated levels, vectorised over rows
        q = d.values[:, j]
        below += q < r.y
        at_most += q <= r.y
    lo, hi = tau[below], tau[at_most + 1]
    v = np.random.default_rng((0 if seed is None else int(seed), 31)).random(r.n)
    return lo + v * (hi - lo)


def _below_median(r: RegressionRows, u: np.ndarray) -> np.ndarray | None:
    """Per-row share below the median: 1{y < m} with ties ½ (Gaussians), u < ½ otherwise."""
    if isinstance(r.dist, Gaussian):
        return (r.y < r.mean) + 0.5 * (r.y == r.mean)
    return (u < 0.5).astype(float)


def _coverage_indicator(r: RegressionRows, c: float, u: np.ndarray, pairs: Mapping[float, tuple[int, int]]):
    """Per-row 1{target inside the central c-interval}, or None when the layout cannot say it per row."""
    if isinstance(r.dist, QuantileSet) and pairs:
        i, j = next(iter(pairs.values()))
        tau = r.dist.levels
        return ((u > tau[i]) & (u <= tau[j])).astype(float)
    cached = r.__dict__.get("_interval_cache", {}).get(c)
    if cached is not None:
        return np.asarray(cached[0], dtype=float)
    if r._gaussian:
        return (r.abs_z <= float(special.ndtri(0.5 + c / 2.0))).astype(float)
    lo, hi = r.dist.interval(c)
    return ((r.y >= lo) & (r.y <= hi)).astype(float)


def cluster_tests(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows, null: NullModel,
                  codes: np.ndarray, weights: np.ndarray, boot: Mapping[str, np.ndarray], coverages, level: float,
                  seed: int | None, block_length: int | None = None) -> None:
    """Replace every calibration statistic's p-value (and the intervals not built on block sums) by its
    cluster-aware version (module docstring); statistics without one get p = NaN and :data:`NO_CLUSTER_TEST`.
    ENCE is left to :func:`cluster_ence_test` (its bins come later).

    Mean-type: t = (x̄ − μ₀)/√V, V = G/(G − 1) Σ_g (Σ_{i∈g}(x_i − x̄))²/N², Student t with G − 1 d.f.  Spread and
    shape: p = (1 + #{|θ* − θ̂| ≥ |θ̂ − θ₀|})/(1 + B).  Distances: p = (1 + #{‖m* − m̂‖ ≥ ‖m̂ − m₀‖})/(1 + B).

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    null : NullModel
        The layout's null model (per-row z moments and coverage probabilities).
    codes : ndarray of int, shape (N,)
        Cluster of each row, 0 … G − 1.
    weights : ndarray of shape (B, G)
        Cluster (or moving-block) bootstrap weights.
    boot : mapping of str to ndarray
        Replicates of the smooth statistics from the same weights
        (:func:`~calib_core.inference.regression_bootstrap.bootstrap_intervals`).
    coverages : sequence of float
        Central-interval levels.
    level : float
        Two-sided level of the intervals.
    seed : int or None
        Seeds the random placement of targets tied with a quantile set's stated quantiles.
    block_length : int or None, default None
        The clustering's moving-block length (None: whole clusters), for the intervals' names.

    References
    ----------
    .. [1] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. *Journal of
       Human Resources* 50(2), 317–372.
    .. [2] Hall, P. & Wilson, S. R. (1991). Two guidelines for bootstrap hypothesis testing. *Biometrics* 47(2),
       757–762.
    .. [3] Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. *Journal of the Royal Statistical
       Society B* 69(3), 369–390.
    .. [4] Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. *Annals of
       Statistics* 17(3), 1217–1241.
    """
    codes = np.asarray(codes, dtype=np.intp)
    g = int(weights.shape[1])
    if g < 2:
        one_cluster(rec)
        return
    n_g = np.bincount(codes, minlength=g).astype(float)
    done: set[str] = {"ence"}
    quantile = isinstance(r.dist, QuantileSet)
    u = _quantile_pit(r, seed) if quantile else r.u
    tested = {k for k, row in rec.items() if np.isfinite(row["p_value"])}
    # ---- means (descriptive ones get the interval alone) ------------------------------------------
    if np.isfinite(values.get("z_mean", np.nan)):
        zc = codes if r.z_ok is None else codes[r.z_ok]
        m1 = np.broadcast_to(np.asarray(null.z_moments()[0], dtype=float), zc.shape)
        x = r.z_finite - np.where(np.isfinite(m1), m1, 0.0)
        _mean_row(rec["z_mean"], x, zc, weights, 0.0, "z (minus its per-row null mean)", level, "z_mean" in tested)
        done.add("z_mean")
    if np.isfinite(values.get("below_median", np.nan)):
        _mean_row(rec["below_median"], _below_median(r, u), codes, weights, 0.5, "1{target below the median}",
                  level, "below_median" in tested)
        done.add("below_median")
    for key in [k for k in rec if k.startswith("coverage_") and np.isfinite(rec[k]["value"])]:
        c = float(key.split("_", 1)[1]) / 100.0
        stated = stated_pairs(r.dist.levels, [c]) if quantile else {}
        x = _coverage_indicator(r, c, u, stated)
        if x is None:
            continue
        probs = null.coverage_prob(c) if not quantile and any(abs(c - cc) < 1e-12 for cc in coverages) else c
        if np.ndim(probs) == 0:
            _mean_row(rec[key], x, codes, weights, float(probs), "coverage indicator", level, key in tested)
        else:
            _mean_row(rec[key], x - np.asarray(probs, dtype=float) + float(np.mean(probs)), codes, weights,
                      float(np.mean(probs)), "coverage indicator minus its per-row probability", level,
                      key in tested)
        done.add(key)
    m = ensemble_size(r.dist)
    if m and "range_coverage" in rec:
        ranks = ensemble_ranks(r)
        _mean_row(rec["range_coverage"], ((ranks >= 1) & (ranks <= m - 1)).astype(float), codes, weights,
                  float(range_coverage_expected(m)), "1{target inside the member range}", level,
                  "range_coverage" in tested)
        done.add("range_coverage")
    # ---- spread: bootstrap-t of a mean of squares; shape: centred bootstrap of the replicates ---------
    _spread_rows(rec, values, r, tested, done, codes, weights, level)
    for k in ("z_skewness", "z_excess_kurtosis"):
        if k in tested and k in boot:
            row = rec[k]
            p = centred_bootstrap_p(float(row["value"]), np.asarray(boot[k], dtype=float), float(row["perfect"]))
            row.update(p_value=float(p), p_mc_se=float(np.sqrt(p * (1 - p) / boot[k].shape[0])),
                       test="centred cluster bootstrap against the value under perfect calibration (Hall & Wilson "
                            "1991)")
            done.add(k)
    # ---- distances of the PIT's CDF ---------------------------------------------------------------
    _curve_distances(rec, values, tested, done, r.u, codes, g, n_g, weights, level)
    if quantile:
        _stated_distances(rec, tested, done, u, r.dist.levels, codes, g, n_g, weights, level)
    if m and "rank_chi2" in tested:
        ranks = ensemble_ranks(r)
        _chi2_row(rec["rank_chi2"], ranks, codes, g, np.full(m + 1, 1.0 / (m + 1)), weights, "the rank histogram")
        done.add("rank_chi2")
    how = "cluster bootstrap" if block_length is None else "moving-block bootstrap of clusters"
    for row in rec.values():  # intervals made of block sums resampled clusters: say so
        row["interval"] = row["interval"].replace("block bootstrap", how).replace("(blocks,", "(clusters,")
    for k in tested - done:
        if rec[k]["kind"] == CALIBRATION_STATISTIC:
            note = rec[k]["note"]
            rec[k].update(p_value=np.nan, p_mc_se=np.nan, test="",
                          note=f"{note}; {NO_CLUSTER_TEST}" if note else NO_CLUSTER_TEST)


def _spread_rows(rec, values, r: RegressionRows, tested, done, codes, weights, level) -> None:
    """std z (the mean of (z − z̄)² against the square of its value under perfect calibration), ZMS (mean z²) and
    mean log z²: cluster bootstrap-t of a mean of per-row values (a mean of squares is skewed: the bootstrap-t
    follows it, the centred percentile test did not — 11% false alarms at 5% with 40 dates sharing half the error
    variance)."""
    zc = codes if r.z_ok is None else codes[r.z_ok]
    z = r.z_finite
    if np.isfinite(values.get("z_std", np.nan)) and z.size > 1:
        ref = float(rec["z_std"]["perfect"])
        _mean_row(rec["z_std"], (z - z.mean()) ** 2, zc, weights, ref * ref if np.isfinite(ref) else 1.0,
                  "(z − z̄)² (std z squared)", level, "z_std" in tested, back=lambda a: float(np.sqrt(max(a, 0.0))))
        done.add("z_std")
    if np.isfinite(values.get("zms", np.nan)) and z.size > 1:
        ref = float(rec["zms"]["perfect"])
        _mean_row(rec["zms"], z * z, zc, weights, ref if np.isfinite(ref) else 1.0, "z²", level, "zms" in tested)
        done.add("zms")
    lz, lz_ok = r.__dict__.get("_log_z2") or (None, None)
    if lz is not None and np.isfinite(values.get("mean_log_z2", np.nan)) and lz.size > 1:
        ref = float(rec["mean_log_z2"]["perfect"])
        if np.isfinite(ref):
            _mean_row(rec["mean_log_z2"], lz, zc if lz_ok is None else zc[lz_ok], weights, ref, "log z²", level,
                      "mean_log_z2" in tested)
            done.add("mean_log_z2")


def _curve_distances(rec, values, tested, done, u, codes, g, n_g, weights, level) -> None:
    """KS distance and miscalibration area (fine grid), calibration_rmse (the level grid), l2 QCE (j/100): the test
    where the statistic is tested, the band wherever it has a value (descriptive ones too)."""
    have = {k for k in ("max_calibration_deviation", "miscalibration_area", "calibration_rmse",
                        "quantile_calibration_error") if k in rec and np.isfinite(values.get(k, np.nan))}
    if have & {"max_calibration_deviation", "miscalibration_area"}:
        b = max(int(weights.shape[0]), 1)
        k = int(min(_FINE_GRID, max(100, _GRID_BUDGET // max(b * g, 1))))
        grid = np.arange(1, k) / k
        f_hat, f_rep = _curves(cumulative_by_cluster(u, codes, g, grid), n_g, weights)
        for key, agg, what in (("max_calibration_deviation", np.max, "max"), ("miscalibration_area", np.mean, "mean")):
            if key in have:
                _distance_row(rec[key], float(agg(np.abs(f_hat - grid))), agg(np.abs(f_rep - f_hat), axis=1), level,
                              f"the PIT's CDF: {what} |F* − F̂| on {k - 1} grid points", upper=1.0,
                              test=key in tested)
                done.add(key)
    for key, grid, sq in (("calibration_rmse", np.asarray(DEFAULT_LEVELS, dtype=float), False),
                          ("quantile_calibration_error", np.arange(1, 101) / 100.0, True)):
        if key not in have:
            continue
        f_hat, f_rep = _curves(cumulative_by_cluster(u, codes, g, grid), n_g, weights)
        d_obs = float(np.mean((f_hat - grid) ** 2))
        d_rep = np.mean((f_rep - f_hat) ** 2, axis=1)
        if not sq:
            d_obs, d_rep = float(np.sqrt(d_obs)), np.sqrt(d_rep)
        _distance_row(rec[key], d_obs, d_rep, level, "the calibration curve (mean squared distance on its grid)",
                      squared=sq, upper=1.0, test=key in tested)
        done.add(key)


def _chi2_row(row, cells, codes, g, probs, weights, what) -> None:
    """Pearson-type distance of cell shares: D = N Σ (p̂ − π)²/π against D* = N Σ (p* − p̂)²/π."""
    k = probs.size
    cnt = np.bincount(codes * k + np.asarray(cells, dtype=np.intp), minlength=g * k).reshape(g, k).astype(float)
    n = cnt.sum()
    ph = cnt.sum(axis=0) / n
    rep = weights @ cnt
    with np.errstate(invalid="ignore", divide="ignore"):
        ps = rep / rep.sum(axis=1, keepdims=True)
    d_obs = float(n * np.sum((ph - probs) ** 2 / probs))
    d_rep = n * np.sum((ps - ph) ** 2 / probs, axis=1)
    _distance_row(row, d_obs, d_rep, 0.95, f"{what}: N Σ (p*_k − p̂_k)²/π_k", interval=False)


def _stated_distances(rec, tested, done, u, levels, codes, g, n_g, weights, level) -> None:
    """A quantile set's stated levels: the PIT histogram over their cells and the largest level deviation."""
    if not ({"pit_chi2", "max_level_deviation"} & tested):
        return
    tau = np.asarray(levels, dtype=float)
    if "pit_chi2" in tested:
        edges = np.concatenate([[0.0], tau, [1.0]])
        cells = np.clip(np.searchsorted(tau, u, side="left"), 0, tau.size)
        _chi2_row(rec["pit_chi2"], cells, codes, g, np.diff(edges), weights, "the PIT histogram over the stated levels")
        done.add("pit_chi2")
    if "max_level_deviation" in tested:
        f_hat, f_rep = _curves(cumulative_by_cluster(u, codes, g, tau), n_g, weights)
        _distance_row(rec["max_level_deviation"], float(np.max(np.abs(f_hat - tau))),
                      np.max(np.abs(f_rep - f_hat), axis=1), level,
                      "the share below each stated quantile: max |F*(τ) − F̂(τ)|", upper=1.0)
        done.add("max_level_deviation")


#: The note of every statistic of a subset whose rows all lie in one cluster
ONE_CLUSTER = ("no test and no interval: every row of this subset lies in one cluster, so the clustering leaves "
               "nothing to resample")


def one_cluster(rec: dict[str, dict[str, Any]]) -> None:
    """Clear every p-value and interval of a subset whose rows are one cluster, with :data:`ONE_CLUSTER` in the
    calibration statistics' notes.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).

    References
    ----------
    .. [1] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. *Journal of
       Human Resources* 50(2), 317–372.
    """
    for row in rec.values():
        row.update(p_value=np.nan, p_mc_se=np.nan, test="", ci_low=np.nan, ci_high=np.nan, interval="")
        if row["kind"] == CALIBRATION_STATISTIC:
            row["note"] = f"{row['note']}; {ONE_CLUSTER}" if row["note"] else ONE_CLUSTER


def cluster_ence_test(row: dict[str, Any], value: float, r: RegressionRows, codes: np.ndarray,
                      weights: np.ndarray, n_bins: int, binning: str, level: float, z_moments: tuple | None = None,
                      ensemble_bin_moments: np.ndarray | None = None) -> None:
    """ENCE's cluster-aware test and interval.  With R_b = Σε²/Σσ² of σ-bin b (so d_b = √R_b − 1 = RMSE_b/RMV_b − 1)
    from the per-(cluster, bin) sums, its cluster-robust standard error s_b = √(c_b Σ_g (e_gb − R_b v_gb)²)/(2√R_b
    V_b) (ratio estimator, c_b = k_b/(k_b − 1) for the k_b clusters with rows in the bin): the studentised distance
    D = mean_b |d̂_b|/s_b against the replicates' D* = mean_b |d*_b − d̂_b|/s*_b (bins held fixed; Hall & Wilson
    1991 — studentised, because the bins share the clusters' surprise and an unstudentised distance of a mean of
    squares is skewed).  Interval: the band [max(0, ENCE − q), ENCE + q], q the level-quantile of the replicates'
    mean_b |d*_b − d̂_b|.

    Parameters
    ----------
    row : dict
        ENCE's record (updated; its reference and debiased value stay).
    value : float
        ENCE at these bins.
    r : RegressionRows
        The rows.
    codes : ndarray of int, shape (N,)
        Cluster of each row.
    weights : ndarray of shape (B, G)
        Cluster bootstrap weights.
    n_bins : int
        σ-bins.
    binning : {"count", "width"}
        Their binning.
    level : float
        Two-sided level of the interval.
    z_moments : tuple, optional
        The null's per-row moments (E z, E z², …); each bin's deviation is centred at √(Σσ² E z²/Σσ²), its value
        under perfect calibration (1 for Gaussians).
    ensemble_bin_moments : ndarray of shape (5, bins), optional
        An ensemble's exchangeability null per σ-bin (each candidate target binned by its own σ): the centre is then
        √(E Σε²/E Σσ²) of each bin.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [2] Hall, P. & Wilson, S. R. (1991). Two guidelines for bootstrap hypothesis testing. *Biometrics* 47(2),
       757–762.
    """
    g = int(weights.shape[1])
    if g < 2:
        row.update(p_value=np.nan, p_mc_se=np.nan, test="", ci_low=np.nan, ci_high=np.nan, interval="")
        return
    if not np.isfinite(row["p_value"]) or not np.isfinite(value):
        return
    nb = int(n_bins)
    b = r.sigma_bins(n_bins, binning)
    idx = np.asarray(codes, dtype=np.intp) * nb + b
    s_v = np.bincount(idx, weights=r.var, minlength=g * nb).reshape(g, nb)
    m2 = np.ones(r.n)
    if z_moments is not None:
        m2z = np.broadcast_to(np.asarray(z_moments[1], dtype=float), (int(r.z_finite.shape[0]),))
        m2[r.z_ok if r.z_ok is not None else slice(None)] = np.where(np.isfinite(m2z), m2z, 1.0)
    null_e = np.bincount(b, weights=r.var * m2, minlength=nb)
    s_e = np.bincount(idx, weights=r.sq_err, minlength=g * nb).reshape(g, nb)
    k_b = np.count_nonzero(np.bincount(idx, minlength=g * nb).reshape(g, nb), axis=0).astype(float)
    v_tot, e_tot = s_v.sum(axis=0), s_e.sum(axis=0)
    ok = (v_tot > 0) & np.isfinite(v_tot) & np.isfinite(e_tot) & (k_b > 1)
    if not ok.any():
        row.update(p_value=np.nan, p_mc_se=np.nan, test="", note=NO_CLUSTER_TEST)
        return
    s_v, s_e, k_b = s_v[:, ok], s_e[:, ok], k_b[ok]
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.sqrt(null_e[ok] / v_tot[ok])  # √R_b under perfect calibration
        if ensemble_bin_moments is not None and np.shape(ensemble_bin_moments)[-1] == nb:
            mx, _, mv = np.asarray(ensemble_bin_moments, dtype=float)[:3]
            centre = np.sqrt(mx[ok] / mv[ok])
    cr1 = k_b / (k_b - 1.0)  # CR1 per bin: a bin holding few clusters (σ-bins that follow the clusters)

    def studentised(e, v, ee, ev, vv, centre):
        # d_b = √(E_b/V_b) − 1; Var R_b ≈ CR1 Σ_g (e_g − R v_g)²/V² (ratio estimator), se(d) = se(R)/(2√R)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = e / v
            var_r = cr1 * np.maximum(ee - 2 * ratio * ev + ratio * ratio * vv, 0.0) / (v * v)
            se = np.sqrt(var_r) / (2.0 * np.sqrt(ratio))
            return (np.sqrt(ratio) - centre) / se

    cols = [s_e, s_v, s_e * s_e, s_e * s_v, s_v * s_v]
    tot = [c.sum(axis=0) for c in cols]
    d_hat = np.sqrt(tot[0] / tot[1])
    t_obs = studentised(*tot, centre)
    t_rep = studentised(*(weights @ c for c in cols), d_hat)
    fin = np.isfinite(t_rep)
    dist = np.where(fin.any(axis=1), np.where(fin, np.abs(t_rep), 0.0).sum(axis=1) / np.maximum(fin.sum(axis=1), 1),
                    np.nan)
    d_obs = float(np.mean(np.abs(t_obs[np.isfinite(t_obs)]))) if np.isfinite(t_obs).any() else np.nan
    _distance_row(row, d_obs, dist, level, "the σ-bins' studentised deviations: mean_b |d*_b − d̂_b|/s*_b, "
                  "d_b = RMSE_b/RMV_b − 1 (bins fixed)", interval=False)
    # interval: the band of the unstudentised deviations (the same replicates), ENCE ± their level-quantile
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = np.abs(np.sqrt((weights @ s_e) / (weights @ s_v)) - d_hat)
    used = np.isfinite(dev)
    plain = np.where(used, dev, 0.0).sum(axis=1) / np.maximum(used.sum(axis=1), 1)
    plain = plain[used.any(axis=1)]
    if plain.size:
        q = float(np.quantile(plain, level))
        row.update(ci_low=max(0.0, value - q), ci_high=value + q,
                   interval="cluster bootstrap band: ENCE ± the level-quantile of the replicates' mean |d*_b − d̂_b|")

