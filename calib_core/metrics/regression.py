"""Regression calibration diagnostics.

Every public function takes ``(y, dist, ...)`` — the targets and a
:class:`calib_core.base.regression.PredictiveDistribution` — and returns a plain ``float``.
Notation: ε = y − μ, z = ε/σ, PIT u = F(y), N rows.

All of them are thin wrappers around :class:`RegressionRows`, which computes the per-row
quantities and the sort orders once, and around weighted implementations (``_stat_*``) that
also serve the bootstrap: a bootstrap replicate is a vector of multinomial count weights w
(Σw = N), so a resampled metric costs O(N) on the pre-sorted data instead of a new sort.

The metrics live in four modules, all re-exported here (``calib_core.regression.metrics`` is this module):

* :mod:`calib_core.metrics.regression_rows` — :class:`RegressionRows`, the PIT, the NaN policy, undefined z;
* :mod:`calib_core.metrics.regression_curves` — the quantile-calibration curve and the statistics of the PIT
  ECDF (calibration RMSE, quantile calibration error, miscalibration area, maximum deviation, PIT entropy);
* :mod:`calib_core.metrics.regression_scores` — proper scores (NLL, CRPS, interval score), interval coverage,
  sharpness, RMSE and MAE;
* this module — the statistics of σ and z (ENCE, Cv, reliability score, moments of z, ZMS, mean log z²,
  Spearman ρ(σ, |ε|)) and :func:`summary_statistics`, every scalar at once.

Papers: Kuleshov et al. 2018 (quantile calibration), Levi et al. 2019 (ENCE, Cv, RMSE-vs-RMV),
Utpala & Rai 2020 "Quantile regularization" (QR; l2 calibration error eq. 8, sample-spacing PIT
entropy eq. 6), Zelikman et al. "CRUDE" (calibration RMSE over 100 levels, sharpness),
Camporeale & Carè "ACCRUE" (CRPS eq. 5, reliability score eq. 8).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..base.regression import PredictiveDistribution, norm_cdf, norm_pdf
from .regression_curves import (
    calibration_curve,
    calibration_rmse,
    max_calibration_deviation,
    mean_absolute_calibration_error,
    miscalibration_area,
    observed_proportions,
    pit_entropy,
    quantile_calibration_error,
    stat_area,
    stat_max_deviation,
    stat_pit_entropy,
)
from .regression_ensemble_ranks import ensemble_statistics
from .regression_kernels import norm_cdf_rows, rank_difference_squares
from .regression_location import stat_below_median
from .regression_point import fused_eligible, gaussian_point_values
from .regression_rows import (
    DEFAULT_COVERAGES,
    DEFAULT_LEVELS,
    Z_CAUSES,
    Binning,
    RegressionRows,
    dot,
    metric_rows,
    needs_rescaling,
    pit,
    power_of_two,
    reject_nan_inputs,
    root_mean_square,
    stat_ence,
    undefined_z_counts,
    undefined_z_note,
    wmean,
)
from .regression_scores import (
    crps,
    interval_coverage,
    interval_table,
    mae,
    nll,
    rmse,
    sharpness,
    stat_intervals,
    zero_density_note,
    zero_density_rows,
)
from .regression_sorts import rank_d2
from .regression_stated import stated_statistics
from .regression_wis import wis_statistics

__all__ = [
    "RegressionRows",
    "DEFAULT_LEVELS",
    "DEFAULT_COVERAGES",
    "observed_proportions",
    "pit",
    "nll",
    "zero_density_rows",
    "zero_density_note",
    "crps",
    "sharpness",
    "rmse",
    "mae",
    "ence",
    "cv",
    "calibration_curve",
    "calibration_rmse",
    "mean_absolute_calibration_error",
    "quantile_calibration_error",
    "miscalibration_area",
    "max_calibration_deviation",
    "reliability_score",
    "pit_entropy",
    "interval_coverage",
    "interval_table",
    "standardized_residual_stats",
    "zms",
    "mean_log_z2",
    "spearman_sigma_error",
    "summary_statistics",
    "Z_CAUSES",
    "undefined_z_counts",
    "undefined_z_note",
]


def _stat_reliability_score(r: RegressionRows, w: np.ndarray | None) -> float:
    """ACCRUE eq. 8 with weights (energy-distance form, exact)."""
    z = r.z_finite
    if z.shape[0] == 0:  # no row with a finite z (σ = 0, or y − mean or z overflowing): RS is undefined
        return float("nan")
    if w is None:
        # Only Σ η_(i)(2i − 1) needs the order; the other terms are sums over rows:
        # erf(η) = 2Φ(z) − 1 and exp(−η²) = √(2π) φ(z) for η = z/√2.
        n = z.shape[0]
        fused = r.__dict__.get("_fused")
        if fused is not None:  # Σφ(z) from the compiled pass (regression_point.py); Σ z·2Φ(z) as before (RS is a
            # difference of O(1) terms: its bits stay those of the dot product)
            buf = np.multiply(2.0, r.u)
            s_erf = dot(z, buf) / np.sqrt(2.0)
            s_exp = np.sqrt(2.0 * np.pi) * fused["sums"]["phi"]
            eta_sorted = np.divide(r.z_sorted, np.sqrt(2.0), out=buf)  # the buffer of 2Φ(z) reused: one array less
        else:
            eta_sorted = r.z_sorted / np.sqrt(2.0)
            s_erf = dot(z, 2.0 * r.u if r._gaussian else 2.0 * norm_cdf(z)) / np.sqrt(2.0)
            s_exp = np.sqrt(2.0 * np.pi) * (r.phi.sum() if r._gaussian else norm_pdf(z).sum())
        weights_2i_1 = np.arange(1, 2 * n, 2, dtype=float)  # 2i − 1, i = 1 … n (exact integers: one pass)
        s_rank = dot(eta_sorted, weights_2i_1)
        return float(s_erf / n - s_rank / n**2 + s_exp / (np.sqrt(np.pi) * n) - 0.5 * np.sqrt(2.0 / np.pi))
    w = r.z_weights(w)
    eta = r.z_sorted / np.sqrt(2.0)
    ws = w[r.z_order]
    if not ws.sum() > 0:  # a replicate that drew none of the rows with a finite z
        return float("nan")
    ws = ws / ws.sum()
    before = np.cumsum(ws) - ws
    e_abs = eta * special.erf(eta) + np.exp(-eta * eta) / np.sqrt(np.pi)  # E|η − X|, X ~ N(0, ½)
    half_pair = ws * eta * (2.0 * before + ws - 1.0)  # ½ Σ_ij w_i w_j |η_i − η_j| per i
    return float(np.sum(ws * e_abs) - np.sum(half_pair) - 0.5 * np.sqrt(2.0 / np.pi))


def _scale_free_cv(s: np.ndarray, w: np.ndarray | None = None) -> float:
    """Cv = std(σ, ddof=1)/mean(σ) (Levi eq. 9), with σ divided by the power of two of its largest value first
    when σ² could over- or underflow (exact; Cv is scale-free)."""
    if needs_rescaling(s):
        s = s / power_of_two(np.max(np.abs(s[np.isfinite(s)])) if np.isfinite(s).any() else 1.0)
    if w is None:
        if s.size < 2 or not np.mean(s) > 0:  # one row, or every σ = 0: no spread to compare with
            return float("nan")
        return float(np.std(s, ddof=1) / np.mean(s))
    tot = w.sum()
    if tot <= 1:
        return float("nan")
    m = dot(w, s) / tot
    if not m > 0:
        return float("nan")
    v = dot(w, (s - m) ** 2) / (tot - 1.0)
    return float(np.sqrt(v) / m)


def _stat_cv(r: RegressionRows, w: np.ndarray | None) -> float:
    """Cv = std(σ, ddof=1)/mean(σ) (Levi eq. 9)."""
    return _scale_free_cv(r.sigma, w)


def _stat_z_moments(r: RegressionRows, w: np.ndarray | None) -> dict[str, float]:
    z, w = r.z_finite, r.z_weights(w)
    if z.shape[0] == 0 or (w is not None and not w.sum() > 0):  # no finite z: undefined
        return dict.fromkeys(("z_mean", "z_std", "z_skewness", "z_excess_kurtosis"), float("nan"))
    m = wmean(z, w)
    d = z - m
    d2 = d * d
    m2 = wmean(d2, w)
    m3 = wmean(np.multiply(d2, d, out=d), w)  # d is not needed again: its buffer takes d²·d, then d²·d²
    m4 = wmean(np.multiply(d2, d2, out=d), w)
    return {
        "z_mean": m,
        "z_std": float(np.sqrt(m2)),
        "z_skewness": float(m3 / m2**1.5) if m2 > 0 else float("nan"),
        "z_excess_kurtosis": float(m4 / m2**2 - 3.0) if m2 > 0 else float("nan"),
    }


def _log_z2(r: RegressionRows) -> tuple[np.ndarray, np.ndarray | None]:
    """log z² = 2 log|z| over ``z_finite`` (no underflow of z²), and the mask of the rows where it is finite (None:
    all; z = 0 exactly, e.g. a target equal to the predicted mean in rounded data, gives −∞ and is left out)."""
    cache = r.__dict__
    if "_log_z2" not in cache:
        with np.errstate(divide="ignore"):
            lz = np.abs(r.z_finite)  # 2 log|z|, in one buffer
            np.log(lz, out=lz)
            lz *= 2.0
        ok = np.isfinite(lz)
        cache["_log_z2"] = (lz, None) if ok.all() else (lz[ok], ok)
    return cache["_log_z2"]


def _stat_zms(r: RegressionRows, w: np.ndarray | None) -> dict[str, float]:
    """ZMS = mean z² and mean log z² over the rows with a finite z (the latter also without z = 0)."""
    z, wz = r.z_finite, r.z_weights(w)
    lz, ok = _log_z2(r)
    wl = wz if (wz is None or ok is None) else wz[ok]
    return {
        "zms": wmean(z * z, wz) if z.size else float("nan"),
        "mean_log_z2": wmean(lz, wl) if lz.size else float("nan"),
    }


def _stat_spearman(r: RegressionRows, w: np.ndarray | None) -> float:
    """Spearman ρ(σ, |ε|): Pearson correlation of the (tie-averaged) ranks.

    With count weights the ranks are those of the resample itself: a row drawn w_i times in a tie
    group starting after cumulative weight W_< gets rank W_< + (W_group + 1)/2, as ``np.repeat``
    of the rows would give.  The sort orders are computed once.
    """
    cache = r.__dict__.setdefault("_rank_cache", {})
    if (w is None and "groups" not in cache and r.n > 1 and r._distinct.get("sigma_order")
            and r._distinct.get("abs_eps_order")):  # no ties (known from the sorts): Σd² in one compiled pass
        n = float(r.n)
        ranks = r._ranks
        if "sigma_order" in ranks and "abs_eps_order" in ranks:  # positions written by the sorts: one row pass
            return float(1.0 - 6.0 * rank_d2(ranks["sigma_order"], ranks["abs_eps_order"]) / (n * (n * n - 1.0)))
        return float(1.0 - 6.0 * rank_difference_squares(r.sigma_order, r.abs_eps_order) / (n * (n * n - 1.0)))
    if "groups" not in cache:
        known, distinct = r._sorted_by_order, r._distinct
        cache["groups"] = tuple(
            _TieGroups(values, getattr(r, name), known.get(name), distinct.get(name, False))
            for values, name in ((r.sigma, "sigma_order"), (np.abs(r.eps), "abs_eps_order"))
        )
    ga, gb = cache["groups"]
    if w is None and ga.no_ties and gb.no_ties and r.n > 1:
        # ranks are permutations of 1..N: ρ = 1 − 6 Σ dᵢ² / (N(N² − 1)), d = rank difference (exact integers)
        d = (ga.group_of_row - gb.group_of_row).astype(float)
        n = float(r.n)
        return float(1.0 - 6.0 * dot(d, d) / (n * (n * n - 1.0)))
    a, b = ga.ranks(w), gb.ranks(w)
    ma, mb = wmean(a, w), wmean(b, w)
    da, db = a - ma, b - mb
    den = np.sqrt(wmean(da * da, w) * wmean(db * db, w))
    return float(wmean(da * db, w) / den) if den > 0 else float("nan")


class _TieGroups:
    """Runs of equal values in sorted order, for tie-averaged ranks of the data or of a resample.

    Without ties (the usual case for continuous predictions) every run is one row: the ranks are the
    inverse permutation of the sort order and no run bookkeeping is built.
    """

    def __init__(
        self, x: np.ndarray, order: np.ndarray, x_sorted: np.ndarray | None = None, distinct: bool = False
    ) -> None:
        n = x.shape[0]
        self.order = order
        if distinct:  # known from the sort: no value twice
            self.no_ties = True
        else:
            xs = x[order] if x_sorted is None else x_sorted
            new_run = np.empty(n, dtype=bool)
            new_run[:1] = True
            np.not_equal(xs[1:], xs[:-1], out=new_run[1:])
            self.no_ties = bool(new_run.all())
        index_type = np.int32 if n < 2**31 else np.int64
        self.group_of_row = np.empty(n, dtype=index_type)
        if self.no_ties:  # group = position in the sorted order
            self.group_of_row[order] = np.arange(n, dtype=index_type)
            return
        self.starts = np.flatnonzero(new_run)
        self.ends = np.append(self.starts[1:], n)
        self.group_of_row[order] = np.cumsum(new_run, dtype=index_type) - 1

    def ranks(self, w: np.ndarray | None = None) -> np.ndarray:
        """Ranks 1..N with ties averaged (``scipy.stats.rankdata``); with count weights, the ranks
        of the resample: a tie group after cumulative weight W_< with weight W_g gets W_< + (W_g + 1)/2."""
        if self.no_ties:
            if w is None:
                return self.group_of_row + 1.0
            ws = w[self.order]
            before = np.cumsum(ws) - ws
            return (before + (ws + 1.0) / 2.0)[self.group_of_row]
        if w is None:
            before = self.starts.astype(float)
            size = (self.ends - self.starts).astype(float)
            return (before + (size + 1.0) / 2.0)[self.group_of_row]
        cw = np.concatenate([[0.0], np.cumsum(w[self.order])])
        before = cw[self.starts]
        size = cw[self.ends] - before
        return (before + (size + 1.0) / 2.0)[self.group_of_row]


def summary_statistics(
    rows: RegressionRows,
    weights: np.ndarray | None = None,
    *,
    n_bins: int = 15,
    binning: Binning = "count",
    levels: np.ndarray = DEFAULT_LEVELS,
    n_qce_levels: int = 100,
    coverages=DEFAULT_COVERAGES,
) -> dict[str, float]:
    """Every regression calibration scalar for one (y, dist) pair, as ``{name: value}``.

    With ``weights`` (multinomial bootstrap counts, Σw = N) every statistic is that of the resample, in O(N) on the
    pre-sorted rows.  The statistics that need no sort are computed while the sorts run
    (:meth:`RegressionRows.compute_orders`).

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    weights : ndarray of shape (n,) or None, default None
        Row weights of a bootstrap replicate; None: the data.
    n_bins : int, default 15
        σ-bins of the ENCE.
    binning : {"count", "width"}, default "count"
        Binning of the ENCE (:func:`ence`).
    levels : ndarray, default DEFAULT_LEVELS
        Levels of the calibration RMSE.
    n_qce_levels : int, default 100
        M of the quantile calibration error.
    coverages : sequence of float, default DEFAULT_COVERAGES
        Central interval coverages.

    Returns
    -------
    dict of str to float
        ``nll``, ``crps``, ``rmse``, ``mae``, ``sharpness``, ``ence``, ``cv``, ``calibration_rmse``,
        ``quantile_calibration_error``, ``miscalibration_area``, ``max_calibration_deviation``,
        ``reliability_score``, ``pit_entropy``, ``spearman_sigma_abs_error``, the moments of z (``z_mean``,
        ``z_std``, ``z_skewness``, ``z_excess_kurtosis``), ``zms``, ``mean_log_z2``, ``below_median`` and, per
        coverage c, ``coverage_c``, ``width_c`` and ``interval_score_c``; for quantile sets also ``pit_chi2`` and
        ``max_level_deviation`` (:mod:`calib_core.metrics.regression_stated`) and the coverage of every other stated
        central interval; ``wis``, ``wis_dispersion``, ``wis_overprediction``, ``wis_underprediction``
        (:mod:`calib_core.metrics.regression_wis`).

    References
    ----------
    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.

    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Utpala, S. & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression models.
    arXiv:2002.12860.

    Zelikman, E., Healy, C., Zhou, S. & Avati, A. (2020). CRUDE: calibrating regression uncertainty
    distributions empirically. arXiv:2005.12496.

    Camporeale, E. & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
    models. International Journal for Uncertainty Quantification 11(4), 81–94.

    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
    format. PLOS Computational Biology 17(2), e1008618.
    """
    r, w = rows, weights

    fused = w is None and fused_eligible(r)

    def order_free() -> dict[str, float]:  # statistics that need no sort: computed while the sorts run
        if fused:  # Gaussian rows: two compiled passes (regression_point.py), the same values
            free = gaussian_point_values(r, coverages)
            if "mean_log_z2" not in free:  # some z = 0: left out of the mean, as below
                free["mean_log_z2"] = _stat_zms(r, None)["mean_log_z2"]
            return free
        free = {
            "nll": wmean(r.neg_logpdf, w),
            "crps": wmean(r.crps, w),
            "rmse": float(np.sqrt(wmean(r.sq_err, w))),
            "mae": wmean(np.abs(r.eps), w),
            "sharpness": root_mean_square(r.sigma, w),  # scale-free: σ = 1e±170 neither over- nor underflows
            "cv": _stat_cv(r, w),
        }
        free.update(_stat_z_moments(r, w))
        free.update(_stat_zms(r, w))
        return free

    if fused and "u" not in r.__dict__:  # Φ(z) in one compiled loop: SciPy's bits, no temporaries
        r.__dict__["u"] = norm_cdf_rows(r.z)
    free = r.compute_orders(meanwhile=order_free, z_order=not fused)
    curve = observed_proportions(r, w, levels, "quantile")
    qce_levels = np.arange(1, n_qce_levels + 1) / n_qce_levels
    qce_curve = observed_proportions(r, w, qce_levels, "quantile")
    out = {
        "nll": free["nll"],
        "crps": free["crps"],
        "rmse": free["rmse"],
        "mae": free["mae"],
        "sharpness": free["sharpness"],
        "ence": stat_ence(r, w, n_bins, binning),
        "cv": free["cv"],
        "calibration_rmse": float(np.sqrt(np.mean((curve - levels) ** 2))),
        "quantile_calibration_error": float(np.mean((qce_curve - qce_levels) ** 2)),
        "miscalibration_area": stat_area(r, w),
        "max_calibration_deviation": stat_max_deviation(r, w),
        "reliability_score": _stat_reliability_score(r, w),
        "pit_entropy": stat_pit_entropy(r, w),
        "spearman_sigma_abs_error": _stat_spearman(r, w),
    }
    out.update({k: free[k] for k in ("z_mean", "z_std", "z_skewness", "z_excess_kurtosis", "zms", "mean_log_z2")})
    out["below_median"] = stat_below_median(r, w)  # location no wrong σ can fake (metrics/regression_location.py)
    out.update(stat_intervals(r, w, coverages))
    out.update(stated_statistics(r.y, r.dist, w))  # quantile sets: the statistics of the stated levels
    out.update(ensemble_statistics(r, w))  # ensembles: rank_chi2, range_coverage (regression_ensemble_ranks)
    out.update(wis_statistics(r, w, coverages))  # WIS and its parts; a quantile set's other stated intervals
    return out


def ence(y: np.ndarray, dist: PredictiveDistribution, *, n_bins: int = 15, binning: Binning = "count") -> float:
    """Expected normalised calibration error (Levi et al. 2019, eq. 8).

    Rows are grouped into B bins by predicted σ; per bin RMV_j = sqrt(mean σ²) and RMSE_j = sqrt(mean ε²);
    ENCE = (1/B') Σ_j |RMV_j − RMSE_j| / RMV_j over the B' non-empty bins.  Bins whose σ are all 0 (possible for
    degenerate ensembles) are left out of the mean.  ``binning="count"`` (default, Levi): equal-count bins on the
    sorted σ (sizes differ by ≤ 1).  ``binning="width"``: B equal-width bins between min σ and max σ, [a, b) with the
    last bin closed — netcal 1.4's convention (use ``n_bins=10`` to reproduce its default).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    n_bins : int, default 15
        B, the number of σ-bins.
    binning : {"count", "width"}, default "count"
        Equal-count or equal-width bins.

    Returns
    -------
    float
        The ENCE (scale-free; NaN when every σ is 0).

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    return stat_ence(metric_rows(y, dist), None, n_bins, binning)


def cv(y: np.ndarray | None, dist: PredictiveDistribution) -> float:
    """Coefficient of variation of the predicted σ (Levi et al. 2019, eq. 9).

    C_v = sqrt(Σ_t (σ_t − μ_σ)² / (T − 1)) / μ_σ with μ_σ = mean σ, i.e. std(σ, ddof=1) / mean(σ).  Scale invariant;
    0 for a constant σ.

    Parameters
    ----------
    y : ndarray of shape (n,) or None
        Ignored: C_v depends on the predictions only (``y`` is taken first like every regression metric).
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        C_v (NaN for one row or when every σ is 0).

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    if isinstance(y, PredictiveDistribution):
        raise TypeError("cv takes (y, dist) like every regression metric (y may be None): cv(None, dist)")
    reject_nan_inputs(None, dist)
    return _scale_free_cv(np.asarray(dist.std(), dtype=float))


def reliability_score(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Reliability score RS (ACCRUE eq. 8) of the standardised errors.

    With η_i = ε_i/(√2 σ_i) sorted ascending,
    RS = Σ_i [η_i/N (erf η_i + 1) − η_i/N² (2i − 1) + exp(−η_i²)/(√π N)] − ½√(2/π)
       = ∫ (Φ(η) − C(η))² dη,  Φ(η) = ½(1 + erf η) and C the empirical CDF of η.
    For non-Gaussian distributions it is computed on z = (y − mean)/std, i.e. against a Gaussian reference of the
    same mean and variance.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        RS ≥ 0 (NaN when no row has a finite z).

    References
    ----------
    Camporeale, E. & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
    models. International Journal for Uncertainty Quantification 11(4), 81–94.
    """
    return _stat_reliability_score(metric_rows(y, dist), None)


def standardized_residual_stats(y: np.ndarray, dist: PredictiveDistribution) -> dict[str, float]:
    """Mean, std (ddof=0), skewness and excess kurtosis of z = (y − μ)/σ (N(0, 1): 0, 1, 0, 0).

    Skewness m₃/m₂^{3/2} and excess kurtosis m₄/m₂² − 3 from the central moments m_k; rows without a finite z are
    left out.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    dict of str to float
        ``z_mean``, ``z_std``, ``z_skewness``, ``z_excess_kurtosis``.

    References
    ----------
    Joanes, D. N. & Gill, C. A. (1998). Comparing measures of sample skewness and kurtosis. Journal of the Royal
    Statistical Society D 47(1), 183–189.

    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    return _stat_z_moments(metric_rows(y, dist), None)


def zms(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean squared z-score ZMS = (1/N) Σ_i z_i², z = (y − μ)/σ.

    1 for a calibrated variance (E z² = 1 whatever the error law), > 1 when σ is too small on average.  Unlike the
    calibration error MSE − mean σ², it is a mean of ratios, so a few very large σ or errors (heavy-tailed uncertainty
    and error distributions) move it much less; its scale behaviour is exact: σ → cσ gives ZMS/c².  Rows with σ = 0
    are left out (as for every z statistic).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        The ZMS.

    References
    ----------
    Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
    target adaptivity. APL Machine Learning 1(4), 046121.

    Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the reliability
    of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    """
    return _stat_zms(metric_rows(y, dist), None)["zms"]


#: E log χ²₁ = ψ(½) + log 2 = −(γ + log 2) ≈ −1.2704: mean log z² of a calibrated Gaussian forecaster
LOG_CHI2_1_MEAN = float(special.digamma(0.5) + np.log(2.0))

#: Var log χ²₁ = ψ′(½) = π²/2
LOG_CHI2_1_VAR = float(np.pi**2 / 2.0)


def mean_log_z2(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean log squared z-score (1/N′) Σ_i log z_i² over the N′ rows with a finite, non-zero z.

    The log-based, heavy-tail-robust variant of ZMS.  ZMS averages z², whose law under heavy tails has few finite
    moments (Pernot 2024); log z² has every moment whenever z has a density bounded near 0, so its mean and interval
    stay reliable.  The price is a reference that depends on the error law: under calibrated Gaussian z it is
    E log χ²₁ = ψ(½) + log 2 = −(γ + log 2) ≈ −1.2704 (:data:`LOG_CHI2_1_MEAN`, variance π²/2), and lower for
    heavier-tailed unit-variance laws (Student-t₅ scaled to variance 1: ≈ −1.57).  σ → cσ shifts it by −2 log c
    exactly; it is a log-scale average: exp(mean log z² + 1.2704) is a geometric ZMS, 1 when calibrated and Gaussian.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        The mean of log z².

    References
    ----------
    Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the reliability
    of calibration statistics for machine learning regression tasks. arXiv:2402.10043.

    Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
    target adaptivity. APL Machine Learning 1(4), 046121.
    """
    return _stat_zms(metric_rows(y, dist), None)["mean_log_z2"]


def spearman_sigma_error(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Spearman rank correlation ρ(σ, |ε|): how informative the uncertainty is.

    The Pearson correlation of the tie-averaged ranks of σ and of |ε|.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        ρ in [−1, 1] (NaN when either has a single rank).

    References
    ----------
    Spearman, C. (1904). The proof and measurement of association between two things. American Journal of
    Psychology 15(1), 72–101.

    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    return _stat_spearman(metric_rows(y, dist), None)
