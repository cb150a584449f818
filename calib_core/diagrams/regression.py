"""The data behind every regression diagram, as small pandas tables.

Each builder takes a :class:`~calib_core.metrics.regression.RegressionRows` and returns a table
whose size depends on the number of bins or levels, never on N — the figures in
``calib_core.plots`` draw these tables, so the browser never receives raw rows.  The binned
tables come from the same binning engine (``calib_core.base.binning``) and the same per-row
quantities as the metrics, so a bar and its number always agree.

Schemas
-------
calibration_curve : level, observed, band_low, band_high
    Kuleshov curve p̂_j = mean(u ≤ p_j) on p = 0, 0.01, …, 1 and the 95% band of a perfectly calibrated
    forecaster with the same N: binomial quantiles of Bin(N, p_j)/N at the level adjusted so that the whole curve
    stays inside with probability 95% (simultaneous; Säilynoja, Bürkner & Vehtari 2022; ``calib_core.base.ecdf_bands``).
levi_bins : bin, count, sigma_low, sigma_high, rmv, rmse, rmse_low, rmse_high
    Levi et al. 2019 σ-bins; [rmse_low, rmse_high] is a bootstrap 90% interval of the bin RMSE
    (block bootstrap: per-block, per-bin sums re-weighted, see ``calib_core.base.significance``).
pit_histogram : left, right, count, density
    Quantile sets: the cells between the stated levels (0, τ₁], …, (τ_Q, 1], counts of targets per cell (with ties
    the assignment of the smallest χ², :func:`calib_core.metrics.regression_stated.min_pit_chi2`).
stated_levels : level, lower, upper, ci_low, ci_high, p_value
    Quantile sets only: per stated level τ the bracket [#{y < q_τ}/N, #{y ≤ q_τ}/N] of P(y ≤ q_τ), its
    Clopper–Pearson interval and the bracketed exact binomial p-value.
z_histogram : left, right, count, density, normal_density, outside
    Standardised residuals; values beyond the outer edges are counted in the end bins.
qq : theoretical, observed
    At most ``max_points`` quantiles of z against N(0, 1).
intervals : coverage, observed, mean_width, interval_score (+ expected for ensembles: the finite-M coverage)
rank_histogram : rank, count, expected, band_low, band_high
    Ensembles only: the rank (Talagrand) histogram of the target among the M members (ties broken at random),
    expected N/(M + 1) per rank, and the range of a calibrated ensemble's count per rank (binomial, simultaneous
    over the M + 1 ranks by Bonferroni).

The calibration curve of a quantile set is drawn at its stated levels (and 0, 1) only.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection

import numpy as np
import pandas as pd
from scipy import stats

from ..base.binning import counts_from_sorted
from ..base.clustering import Clustering, cluster_design
from ..base.ecdf_bands import ecdf_band
from ..base.frames import float_frame
from ..base.regression import QuantileSet, norm_pdf, norm_ppf
from ..base.significance import block_bootstrap_weights, block_ids, nan_quantiles
from ..metrics.regression import (
    DEFAULT_COVERAGES,
    DEFAULT_LEVELS,
    Binning,
    RegressionRows,
    interval_table,
    observed_proportions,
)
from ..metrics.regression_ensemble_ranks import ensemble_size, order_interval_probabilities, rank_counts
from ..metrics.regression_stated import (
    clopper_pearson_bounds,
    level_pvalues,
    min_pit_chi2,
    pit_cells,
    stated_level_counts,
)

__all__ = [
    "calibration_curve_table",
    "levi_bins_table",
    "pit_histogram_table",
    "z_histogram_table",
    "qq_table",
    "intervals_table",
    "stated_levels_table",
    "rank_histogram_table",
    "stated_levels_frame",
    "stated_cells_frame",
    "regression_diagrams",
]


def calibration_curve_table(
    rows: RegressionRows, *, levels: np.ndarray = DEFAULT_LEVELS, band: float = 0.95, simultaneous: bool = True
) -> pd.DataFrame:
    """Observed vs expected quantile levels with the consistency band of a calibrated forecaster.

    p̂_j = mean_i 1[u_i ≤ p_j], u_i = F_i(y_i) the PIT (Kuleshov et al. 2018, the quantile calibration curve).
    Under perfect calibration N·p̂_j ~ Binomial(N, p_j).  ``simultaneous`` (default): the band is Bin(N, p_j)
    quantiles at the adjusted level γ for which the whole curve of a calibrated forecaster stays inside with
    probability ``band`` (Säilynoja, Bürkner & Vehtari 2022; :func:`calib_core.base.ecdf_bands.ecdf_band`); else the
    pointwise central ``band`` range / N (each level alone).

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    levels : ndarray, default DEFAULT_LEVELS
        Levels p_j.
    band : float, default 0.95
        Level of the band.
    simultaneous : bool, default True
        Simultaneous or pointwise band.

    Returns
    -------
    pandas.DataFrame
        Columns ``level, observed, band_low, band_high``; ``attrs``: ``band`` ("simultaneous" / "pointwise"),
        ``gamma``.

    References
    ----------
    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.

    Säilynoja, T., Bürkner, P.-C. & Vehtari, A. (2022). Graphical test for discrete uniformity and its
    applications in goodness-of-fit evaluation and multiple sample comparison. Statistics and Computing 32, 32.
    """
    levels = np.asarray(levels, dtype=float)
    observed = observed_proportions(rows, None, levels, "quantile")
    lo, hi, gamma = ecdf_band(rows.n, levels, band, simultaneous=simultaneous)
    out = float_frame({"level": levels, "observed": observed, "band_low": lo, "band_high": hi})
    out.attrs.update(band="simultaneous" if simultaneous else "pointwise", gamma=gamma)
    return out


def levi_bins_table(
    rows: RegressionRows,
    *,
    n_bins: int = 15,
    binning: Binning = "count",
    n_resamples: int = 200,
    level: float = 0.90,
    seed: int | None = 0,
    n_blocks: int = 256,
    clustering: Clustering | None = None,
) -> pd.DataFrame:
    """Levi reliability diagram data: per σ-bin count, σ range, RMV, RMSE and its bootstrap interval.

    RMV_j = sqrt(mean σ²), RMSE_j = sqrt(mean ε²) over the bin's rows (Levi et al. 2019, §3).  The interval is a
    percentile bootstrap with bin membership held fixed, computed on per-block sums: rows go to ``n_blocks`` random
    blocks once, each replicate re-weights the blocks (multinomial), so the ``n_resamples`` replicates are one
    (R × G) @ (G × 2·bins) product instead of R passes over N rows (the ordinary row bootstrap when N ≤ n_blocks).

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    n_bins : int, default 15
        σ-bins.
    binning : {"count", "width"}, default "count"
        Equal-count or equal-width bins.
    n_resamples : int, default 200
        Bootstrap replicates.
    level : float, default 0.90
        Level of the interval.
    seed : int or None, default 0
        Seed of the bootstrap.
    n_blocks : int, default 256
        Random row blocks.
    clustering : Clustering, optional
        Rows resampled together (:func:`~calib_core.base.clustering.cluster_design`): the blocks are its clusters
        (or moving blocks of them); None: random row blocks.

    Returns
    -------
    pandas.DataFrame
        Columns ``bin, count, sigma_low, sigma_high, rmv, rmse, rmse_low, rmse_high``.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    b = rows.sigma_bins(n_bins, binning)
    cnt, s_var, s_err = rows.sigma_bin_sums(n_bins, binning)
    smin, smax = _sigma_range_by_bin(rows, cnt)
    with np.errstate(invalid="ignore", divide="ignore"):
        rmv = np.sqrt(s_var / cnt)
        rmse = np.sqrt(s_err / cnt)
    lo = np.full(n_bins, np.nan)
    hi = np.full(n_bins, np.nan)
    if n_resamples > 0 and rows.n > 1:
        if clustering is None:
            rng = np.random.default_rng(seed)
            ids, g = block_ids(rows.n, n_blocks, rng)
        else:
            ids, g, weights, _ = cluster_design(clustering, n_resamples, seed)
        key = ids * n_bins + b
        sums = np.hstack([np.bincount(key, minlength=g * n_bins).reshape(g, n_bins).astype(float),
                          np.bincount(key, weights=rows.sq_err, minlength=g * n_bins).reshape(g, n_bins)])
        if clustering is None:
            weights = block_bootstrap_weights(g, n_resamples, rng)
        reps = weights @ sums
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = np.sqrt(reps[:, n_bins:] / reps[:, :n_bins])
        a = (1.0 - level) / 2.0
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a bin empty in every replicate
            lo, hi = nan_quantiles(reps, [a, 1.0 - a])
    count = cnt.astype(np.int64)
    keep = count > 0  # the non-empty bins, chosen before the frame is built (one frame, its index 0 … k − 1)
    columns = {"bin": np.arange(n_bins), "count": count, "sigma_low": smin, "sigma_high": smax, "rmv": rmv,
               "rmse": rmse, "rmse_low": lo, "rmse_high": hi}
    return pd.DataFrame({name: np.asarray(values)[keep] for name, values in columns.items()})


def _sigma_range_by_bin(rows: RegressionRows, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest σ of each bin: σ-bins are contiguous blocks of the sorted σ, so the
    block boundaries follow from the bin counts (O(B) after the sort)."""
    counts = counts.astype(np.int64)
    starts = np.cumsum(counts) - counts
    ok = counts > 0
    order = rows.sigma_order
    smin = np.full(counts.shape, np.nan)
    smax = np.full(counts.shape, np.nan)
    smin[ok] = rows.sigma[order[starts[ok]]]
    smax[ok] = rows.sigma[order[starts[ok] + counts[ok] - 1]]
    return smin, smax


def pit_histogram_table(rows: RegressionRows, *, n_bins: int = 20) -> pd.DataFrame:
    """PIT histogram on [0, 1]: u_i = F_i(y_i), density count_b/(N·width_b), uniform (= 1) under calibration.

    Quantile sets: the cells between the stated levels (``n_bins`` unused), counted from the stated quantiles alone.

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    n_bins : int, default 20
        Bins.

    Returns
    -------
    pandas.DataFrame
        Columns ``left, right, count, density``.

    References
    ----------
    Dawid, A. P. (1984). Statistical theory: the prequential approach. Journal of the Royal Statistical Society
    A 147(2), 278–292.

    Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
    Journal of the Royal Statistical Society B 69(2), 243–268.

    Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. Biometrics 65(4),
    1254–1261.
    """
    if isinstance(rows.dist, QuantileSet):  # the cells between the stated levels, counted from the stated quantiles
        lo, hi = stated_level_counts(rows.y, rows.dist.values)
        return stated_cells_frame(lo, hi, rows.n, rows.dist.levels)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    cnt = counts_from_sorted(rows.u_sorted, edges, closed="left")
    dens = cnt / (rows.n * np.diff(edges))
    return pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": cnt.astype(np.int64), "density": dens})


def z_histogram_table(rows: RegressionRows, *, n_bins: int = 40, limit: float | None = None) -> pd.DataFrame:
    """Histogram of the standardised errors z = (y − μ)/σ on [−L, L] against the N(0, 1) density φ(z).

    N(0, 1) is their distribution for a calibrated Gaussian forecaster.  L = max(4, 99.5th percentile of |z|)
    capped at 10 unless given; z beyond ±L falls in the end bins, and ``outside`` counts those rows (#{z < −L} in the
    first bin, #{z ≥ L} in the last, 0 elsewhere) so that a figure can mark the clipped mass instead of showing it as
    a pile-up.

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    n_bins : int, default 40
        Bins.
    limit : float or None, default None
        L; None: chosen from the data.

    Returns
    -------
    pandas.DataFrame
        Columns ``left, right, count, density, normal_density, outside``.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Pernot, P. (2022). Prediction uncertainty validation for computational chemists. The Journal of Chemical
    Physics 157(14), 144103.
    """
    z = rows.z_sorted
    if limit is None:
        limit = float(np.clip(_abs_quantile_of_sorted(z, 0.995), 4.0, 10.0)) if z.shape[0] else 4.0
    edges = np.linspace(-limit, limit, n_bins + 1)
    cnt = counts_from_sorted(z, edges, closed="left")
    centres = 0.5 * (edges[:-1] + edges[1:])
    outside = np.zeros(n_bins, dtype=np.int64)
    outside[0] += int(np.searchsorted(z, -limit, side="left"))
    outside[-1] += int(z.shape[0] - np.searchsorted(z, limit, side="left"))
    return pd.DataFrame(
        {
            "left": edges[:-1],
            "right": edges[1:],
            "count": cnt.astype(np.int64),
            "density": cnt / (max(z.shape[0], 1) * np.diff(edges)),
            "normal_density": norm_pdf(centres),
            "outside": outside,
        }
    )


def _abs_quantile_of_sorted(z_sorted: np.ndarray, q: float) -> float:
    """``np.quantile(np.abs(z), q)`` (linear interpolation) for sorted z with q ≥ ½, from the tails only.

    The order statistics of |z| from rank ⌊(N−1)q⌋ up are among the m = N − ⌊(N−1)q⌋ + 1 smallest
    and m largest z, so only those 2m values are partitioned (N·(1 − q) instead of N).
    """
    n = z_sorted.shape[0]
    h = (n - 1) * q
    lo = int(np.floor(h))
    m = min(n, n - lo + 1)
    candidates = np.abs(np.concatenate([z_sorted[:m], z_sorted[max(m, n - m):]]))
    k = candidates.shape[0] - (n - lo)  # the rank-lo value of |z| is rank k among the candidates
    pair = np.partition(candidates, [k, min(k + 1, candidates.shape[0] - 1)])[[k, min(k + 1, candidates.shape[0] - 1)]]
    return float(np.quantile(pair, h - lo))


def qq_table(rows: RegressionRows, *, max_points: int = 512) -> pd.DataFrame:
    """Normal Q-Q points of the standardised errors: Φ⁻¹((i − ½)/N) against the i-th smallest z = (y − μ)/σ.

    Thinned to ≤ ``max_points``; on the diagonal for z ~ N(0, 1).

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    max_points : int, default 512
        Most points returned.

    Returns
    -------
    pandas.DataFrame
        Columns ``theoretical, observed``.

    References
    ----------
    Wilk, M. B. & Gnanadesikan, R. (1968). Probability plotting methods for the analysis of data. Biometrika
    55(1), 1–17.
    """
    n = rows.z_sorted.shape[0]
    idx = np.unique(np.linspace(0, n - 1, min(n, max_points)).round().astype(np.int64))
    return float_frame({"theoretical": norm_ppf((idx + 0.5) / n), "observed": rows.z_sorted[idx]})


def intervals_table(rows: RegressionRows, *, coverages=DEFAULT_COVERAGES) -> pd.DataFrame:
    """Nominal vs observed coverage, mean width and interval score of the central intervals [l, u].

    IS_α = (u − l) + (2/α)(l − y)₊ + (2/α)(y − u)₊, α = 1 − c.

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    coverages : sequence of float, default DEFAULT_COVERAGES
        Nominal coverages c.

    Returns
    -------
    pandas.DataFrame
        Columns ``coverage, observed, mean_width, interval_score`` and, for an ensemble, ``expected``: the
        coverage a calibrated ensemble of M members has, not c (the central interval of M members is an
        order-statistic interval whose coverage under exchangeability is finite-M, e.g. 7/9 for the "90%"
        interval [x_(1), x_(8)] of 8 members;
        :func:`~calib_core.metrics.regression_ensemble_ranks.order_interval_probabilities`).

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """
    table = interval_table(rows, rows.dist, coverages=coverages)
    if ensemble_size(rows.dist):  # an ensemble's finite-M expectation (7/9 for the "90%" interval of 8 members)
        table["expected"] = order_interval_probabilities(rows.y, rows.dist.samples, list(coverages)).mean(axis=0)
    return table


def rank_histogram_table(rows: RegressionRows, *, level: float = 0.95) -> pd.DataFrame:
    """The rank (Talagrand) histogram of an ensemble: O_k = #{i : r_i = k}, k = 0, …, M, with r_i the target's
    randomised rank among its M members, against E = N/(M + 1) and the ``level`` range of a calibrated ensemble's
    counts, Binomial(N, 1/(M + 1)) quantiles at (1 − level)/(2(M + 1)) and 1 − that (simultaneous over the ranks by
    Bonferroni).  A U shape: too little spread; ∩: too much; a slope: a bias (many low ranks: the forecasts too
    high).

    Parameters
    ----------
    rows : RegressionRows
        Rows of an ensemble (:class:`~calib_core.base.regression.SampleSet`).
    level : float, default 0.95
        Level of the calibrated ensemble's range.

    Returns
    -------
    pandas.DataFrame
        Columns ``rank, count, expected, band_low, band_high`` (M + 1 rows).

    References
    ----------
    Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
    integrations. Journal of Climate 9(7), 1518–1530.

    Talagrand, O., Vautard, R. & Strauss, B. (1997). Evaluation of probabilistic prediction systems. Proc. ECMWF
    Workshop on Predictability, 1–25.

    Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. Monthly Weather Review
    129(3), 550–560.
    """
    m = ensemble_size(rows.dist)
    counts = rank_counts(rows)
    n, k = rows.n, m + 1
    a = (1.0 - level) / (2.0 * k)
    lo, hi = stats.binom.ppf([a, 1.0 - a], n, 1.0 / k)
    return pd.DataFrame({"rank": np.arange(k), "count": counts.astype(np.int64), "expected": np.full(k, n / k),
                         "band_low": np.full(k, lo), "band_high": np.full(k, hi)})


def stated_levels_table(rows: RegressionRows, *, level: float = 0.95) -> pd.DataFrame:
    """Per stated level of a quantile set: τ, the bracket [L/N, U/N] of P(y ≤ q_τ) (L = #{y < q_τ}, U = #{y ≤ q_τ};
    equal without ties), its Clopper–Pearson interval (lower end from L, upper end from U) and the bracketed exact
    binomial p-value min(1, 2 min(P(Bin(N, τ) ≥ L), P(Bin(N, τ) ≤ U))).

    Parameters
    ----------
    rows : RegressionRows
        Rows of a quantile set (any other layout: an empty table).
    level : float, default 0.95
        Level of the Clopper–Pearson intervals.

    Returns
    -------
    pandas.DataFrame
        Columns ``level, lower, upper, ci_low, ci_high, p_value``.

    References
    ----------
    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of the
    binomial. Biometrika 26(4), 404–413.

    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.

    Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
    format. PLOS Computational Biology 17(2), e1008618.
    """
    if not isinstance(rows.dist, QuantileSet):
        return pd.DataFrame(columns=["level", "lower", "upper", "ci_low", "ci_high", "p_value"])
    lo, hi = stated_level_counts(rows.y, rows.dist.values)
    return stated_levels_frame(lo, hi, rows.n, rows.dist.levels, level=level)


def stated_levels_frame(lower: np.ndarray, upper: np.ndarray, n: int, levels: np.ndarray, *,
                        level: float = 0.95) -> pd.DataFrame:
    """:func:`stated_levels_table` from the counts L_τ = #{y < q_τ}, U_τ = #{y ≤ q_τ} (what a summary keeps).

    Parameters
    ----------
    lower, upper : ndarray of shape (Q,)
        The bracketing counts.
    n : int
        N.
    levels : ndarray of shape (Q,)
        τ.
    level : float, default 0.95
        Level of the Clopper–Pearson intervals.

    Returns
    -------
    pandas.DataFrame
        Columns ``level, lower, upper, ci_low, ci_high, p_value``.

    References
    ----------
    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of the
    binomial. Biometrika 26(4), 404–413.
    """
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    tau = np.asarray(levels, dtype=float)
    ci_lo, ci_hi = clopper_pearson_bounds(lo, hi, n, level)
    return pd.DataFrame({"level": tau, "lower": lo / n, "upper": hi / n, "ci_low": ci_lo, "ci_high": ci_hi,
                         "p_value": level_pvalues(lo, hi, n, tau)})


def stated_cells_frame(lower: np.ndarray, upper: np.ndarray, n: int, levels: np.ndarray) -> pd.DataFrame:
    """The PIT histogram of a quantile set over the cells between its stated levels, from the counts L_τ, U_τ: the
    cell counts of the smallest χ² the ties allow (the data's own counts without ties).

    Parameters
    ----------
    lower, upper : ndarray of shape (Q,)
        The bracketing counts.
    n : int
        N.
    levels : ndarray of shape (Q,)
        τ.

    Returns
    -------
    pandas.DataFrame
        Columns ``left, right, count, density``.

    References
    ----------
    Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
    Journal of the Royal Statistical Society B 69(2), 243–268.
    """
    edges = pit_cells(levels)[0]
    cnt = np.rint(min_pit_chi2(np.asarray(lower, dtype=float), np.asarray(upper, dtype=float), float(n), levels)[1])
    return pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": cnt.astype(np.int64),
                         "density": cnt / (n * np.diff(edges))})


def regression_diagrams(
    rows: RegressionRows,
    *,
    n_bins: int = 15,
    binning: Binning = "count",
    pit_bins: int = 20,
    n_resamples: int = 200,
    seed: int | None = 0,
    clustering: Clustering | None = None,
    tables: Collection[str] | None = None,
) -> dict[str, pd.DataFrame]:
    """All diagram tables of one (y, dist) pair, keyed by the schema names of the module docstring.

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    n_bins : int, default 15
        σ-bins of the Levi diagram.
    binning : {"count", "width"}, default "count"
        Equal-count or equal-width σ-bins.
    pit_bins : int, default 20
        Bins of the PIT histogram.
    n_resamples : int, default 200
        Bootstrap replicates of the Levi diagram.
    seed : int or None, default 0
        Seed of the bootstrap.
    clustering : Clustering, optional
        Rows resampled together by the Levi table's bootstrap (the other tables' bands are perfect-calibration
        bands, drawn for independent rows).
    tables : collection of str, optional
        Only the tables of these names (the same tables; None: all).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``calibration_curve``, ``levi_bins``, ``pit_histogram``, ``z_histogram``, ``qq``, ``intervals``; for a
        quantile set also ``stated_levels`` (its calibration curve at the stated levels, its PIT histogram over the
        cells between them); for an ensemble also ``rank_histogram``.

    References
    ----------
    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.

    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Dawid, A. P. (1984). Statistical theory: the prequential approach. Journal of the Royal Statistical Society
    A 147(2), 278–292.

    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """
    stated = isinstance(rows.dist, QuantileSet)
    curve_levels = np.unique(np.concatenate([[0.0], rows.dist.levels, [1.0]])) if stated else DEFAULT_LEVELS
    makers = {
        "calibration_curve": lambda: calibration_curve_table(rows, levels=curve_levels),
        "levi_bins": lambda: levi_bins_table(rows, n_bins=n_bins, binning=binning, n_resamples=n_resamples,
                                             seed=seed, clustering=clustering),
        "pit_histogram": lambda: pit_histogram_table(rows, n_bins=pit_bins),
        "z_histogram": lambda: z_histogram_table(rows),
        "qq": lambda: qq_table(rows),
        "intervals": lambda: intervals_table(rows),
    }
    if stated:
        makers["stated_levels"] = lambda: stated_levels_table(rows)
    if ensemble_size(rows.dist):
        makers["rank_histogram"] = lambda: rank_histogram_table(rows)
    return {name: make() for name, make in makers.items() if tables is None or name in tables}
