"""CORP for regression quantiles: the quantile (pinball) score at each level τ decomposed as S = MCB − DSC + UNC.

For a level τ, the forecast x_i = F_i⁻¹(τ) (the predicted τ-quantile) and the target y_i, the quantile score is
QS_τ(x, y) = (1{y ≤ x} − τ)(x − y) = (1 − τ)(x − y) for y ≤ x and τ(y − x) above (Koenker & Bassett 1978; the
convention of ``scoringrules.quantile_score``).  Following the CORP approach (Dimitriadis, Gneiting & Jordan 2021,
PNAS) for quantiles (Gneiting, Wolffram, Resin et al. 2023, "Model diagnostics and forecast evaluation for
quantiles", Annu. Rev. Stat. Appl. 10, §4):

* x̂ = the **isotonic τ-quantile regression** of y on x (the best non-decreasing function of the forecast under the
  quantile score; PAV's answer for the pinball loss), the *recalibrated* forecast;
* r = the marginal empirical τ-quantile of y (a constant: the best forecast that ignores x);
* MCB = S̄(x) − S̄(x̂) ≥ 0 (miscalibration: what recalibration would save),
  DSC = S̄(r) − S̄(x̂) ≥ 0 (discrimination: what the forecast's ordering is worth),
  UNC = S̄(r) (the difficulty of the targets), and S̄(x) = MCB − DSC + UNC exactly.

Both inequalities are exact because the identity and every constant are non-decreasing functions of x.  Calibrated
forecasts have MCB near 0 (PAV's overfit only: it shrinks like log N / N); a good forecaster has a large DSC.

The isotonic quantile regression is computed exactly by threshold partitioning (Hochbaum & Queyranne 2003; Stout
2013): for a value c between consecutive distinct targets, the rows whose fitted value exceeds c form the suffix
(in x order, ties in x kept together) minimising Σ (1{y_i ≤ c} − τ) — a prefix-sum arg-max — and the two sides are
solved again with their values restricted to below / above c.  All segments of one recursion depth are handled at
once with segmented prefix sums, so the cost is about log₂(distinct targets) ≈ 20 vectorised passes over the rows.  The
isotonic fits live in :mod:`calib_core.metrics.regression_isotonic_quantile` (re-exported here).

**Fine grid above** :data:`EXACT_ROWS` **rows** (the exact fit's ~log₂(distinct targets) ≈ 20
passes per level would dominate at 1e6 rows).  The same recursion visits only the thresholds of a grid G of about
:data:`GRID_VALUES` values (order statistics of y, with min y and max y, and of the level's forecasts x, clipped to
[min y, max y]), ≈ 12 passes; its fit is exactly x̂_G = ⌈x̂⌉_G, the exact fit rounded up to the grid (threshold
decomposition: for every threshold c the rows with fit > c are the same optimal suffix whichever other thresholds
are visited), so it is non-decreasing in x and
S̄(x̂) ≤ S̄(x̂_G).  On a level set B of x̂ with value v ∈ (c_{j−1}, c_j] the rounding costs
Σ_B [QS(c_j, y) − QS(v, y)] ≤ (1 + τ)(c_j − v)·#{i ∈ B : c_{j−1} < y_i ≤ c_j} (v is a τ-quantile of B's
targets: #{y < v} ≤ τ|B|; and v ≥ t_j, the smallest target in the cell), so with ``fit_bound`` =
(1 + τ)/N · Σ_i (c_{j(i)} − t_{j(i)})·1{y_i in the grid cell of its own fitted value} the exact terms lie in
MCB ∈ [MCB_G, MCB_G + fit_bound] and DSC ∈ [DSC_G, DSC_G + fit_bound]
(S̄ and UNC are exact).  Only rows whose target falls in the narrow cell of their own fitted value count: the bound
is second order in the cell width (reported with the table; tested against the exact fit).

What it costs at 1e6 rows (CPU; ``bench/heavy_tails.py``): one sort per level's forecasts and one of y (about half
the time; levels whose forecasts are increasing functions of one another, as with a constant scale, share one sort),
and ≈ 12 passes per level, which compare in integers at levels τ = p/q (q·count − p·s: exact, and half the memory
of count − τ·s in floating point) and find the first arg-max of each segment with one ``argmax`` while a pass has
few segments.

Intervals: block bootstrap of the three means with x̂ held fixed (the sampling variability of the scores given the
recalibration; the refit's own variability is not in it, and MCB's plug-in carries PAV's upward bias).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base import significance as sig
from ..base.binning import stable_argsort
from ..base.predictions import PredictionSet, iter_model_distributions
from ..base.regression import PredictiveDistribution
from .regression_decomposition_kernels import band_split_counts, rows_cdf, sorted_quantile
from .regression_isotonic_quantile import (
    EXACT_ROWS,
    GRID_VALUES,
    empirical_quantile,
    grid_isotonic_quantile_regression,
    isotonic_quantile_regression,
    level_orders,
    quantile_grid,
    quantile_score,
    quantile_score_into,
)

__all__ = [
    "DEFAULT_DECOMPOSITION_LEVELS",
    "EXACT_ROWS",
    "GRID_VALUES",
    "grid_isotonic_quantile_regression",
    "quantile_grid",
    "quantile_score",
    "isotonic_quantile_regression",
    "quantile_score_decomposition",
    "quantile_decomposition_table",
    "decomposition_display",
    "QUANTILE_BAND_COLUMNS",
    "QUANTILE_CURVE_COLUMNS",
    "QuantileReliability",
    "quantile_reliability",
    "quantile_reliability_of",
]

#: The levels τ decomposed by default: the ends and quartiles of the central 50% and 90% intervals and the median.
DEFAULT_DECOMPOSITION_LEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)


def quantile_score_decomposition(
    y,
    dist: PredictiveDistribution,
    *,
    levels: Sequence[float] = DEFAULT_DECOMPOSITION_LEVELS,
    n_boot: int = 1_000,
    n_blocks: int = 1_000,
    level: float = 0.95,
    seed: int | None = 0,
    exact_rows: int = EXACT_ROWS,
    grid_values: int = GRID_VALUES,
) -> pd.DataFrame:
    """QS_τ = MCB − DSC + UNC at each level τ (module docstring), with block-bootstrap percentile intervals.

    Up to ``exact_rows`` rows the isotonic fit is exact (``fit_bound`` = 0); above, it is on a grid of about
    ``grid_values`` values (half from the targets, half from each level's forecasts) and the exact MCB and DSC exceed
    the reported ones by at most ``fit_bound``.  Intervals: ``n_boot`` replicates over ``n_blocks`` random row blocks,
    the recalibration held fixed (none when ``n_boot`` is 0).

    Parameters
    ----------
    y : array_like of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions (their τ-quantiles are the forecasts).
    levels : sequence of float, default DEFAULT_DECOMPOSITION_LEVELS
        The levels τ.
    n_boot : int, default 1000
        Bootstrap replicates.
    n_blocks : int, default 1000
        Random row blocks of the bootstrap.
    level : float, default 0.95
        Two-sided level of the intervals.
    seed : int or None, default 0
        Seed of the bootstrap.
    exact_rows : int, default EXACT_ROWS
        Largest N fitted exactly.
    grid_values : int, default GRID_VALUES
        About how many grid values above ``exact_rows``.

    Returns
    -------
    pandas.DataFrame
        One row per τ: ``tau``, ``score``, ``mcb``, ``dsc``, ``unc``, ``fit_bound``, ``<c>_low`` / ``<c>_high`` for
        each of ``score, mcb, dsc, unc``, and ``mcb_share`` = MCB/score.

    References
    ----------
    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.

    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.

    Koenker, R. & Bassett, G. (1978). Regression quantiles. Econometrica 46(1), 33–50.

    Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. Annals of
    Statistics 17(3), 1217–1241.
    """
    y = np.asarray(y, dtype=float)
    n = y.size
    if n < 2:
        raise ValueError(f"the quantile-score decomposition needs at least 2 rows, got {n}")
    rng = np.random.default_rng(np.random.SeedSequence([0 if seed is None else seed, 1616]))
    ids, g = sig.block_ids(n, n_blocks, rng)
    weights = sig.block_bootstrap_weights(g, n_boot, rng) if n_boot > 0 else None
    count = np.bincount(ids, minlength=g).astype(float)
    rows = []
    levels = [float(t) for t in levels]
    forecasts = [np.asarray(dist.ppf(tau), dtype=float) for tau in levels]
    exact = n <= exact_rows
    sorts, y_sort = level_orders(forecasts, None if exact else y)
    if exact:
        targets = np.unique(y, return_inverse=True)
        cum_counts = np.cumsum(np.bincount(targets[1], minlength=targets[0].size))
    else:  # a grid of targets: y sorted with the forecasts; the marginal quantile is an order statistic of it
        order_y, sorted_y = y_sort.order, y_sort.sorted_values
        y_grid = quantile_grid(sorted_y, grid_values // 2)
        cells = np.empty(n, dtype=np.int16 if grid_values < np.iinfo(np.int16).max else np.int32)
    buffers = (np.empty(n), np.empty(n), np.empty(n, dtype=bool))
    for tau, x, (order, _, distinct) in zip(levels, forecasts, sorts):
        if exact:
            fitted, bound = isotonic_quantile_regression(x, y, tau, order=order, targets=targets), 0.0
            r = empirical_quantile(y, tau, targets=targets, cum_counts=cum_counts)
        else:  # this level's grid: the targets' and its forecasts' order statistics, within [min y, max y]
            x_grid = np.clip(quantile_grid(x, grid_values // 2, order=order), sorted_y[0], sorted_y[-1])
            grid = np.unique(np.r_[y_grid, x_grid])
            # grid[cell − 1] < y ≤ grid[cell]: in sorted order, runs of equal cells (no search per row)
            cells[order_y] = np.repeat(np.arange(grid.size, dtype=cells.dtype),
                                       np.diff(np.searchsorted(sorted_y, grid, side="right"), prepend=0))
            fitted, bound = grid_isotonic_quantile_regression(x, y, tau, grid, order=order, cells=cells,
                                                              sorted_y=sorted_y, distinct_x=distinct)
            r = float(sorted_y[min(max(int(np.ceil(n * tau - 1e-12)), 1), n) - 1])
        means, block_sums = [], [count]
        for q in (x, fitted, r):  # the score of x, of the recalibrated x̂ and of the marginal quantile r, row by row
            qs = quantile_score_into(y, q, tau, buffers)
            means.append(float(qs.mean()))
            if weights is not None:
                block_sums.append(np.bincount(ids, qs, g))
        score, rc, unc = means
        row = {"tau": tau, "score": score, "mcb": score - rc, "dsc": unc - rc, "unc": unc, "fit_bound": bound}
        if weights is not None:
            sums = np.stack(block_sums, 1)
            rep = weights @ sums
            with np.errstate(invalid="ignore", divide="ignore"):
                m_x, m_rc, m_r = rep[:, 1] / rep[:, 0], rep[:, 2] / rep[:, 0], rep[:, 3] / rep[:, 0]
            boot = np.stack([m_x, m_x - m_rc, m_r - m_rc, m_r], 1)
            lo_, hi_ = sig.percentile_interval(boot, level)
            for j, k in enumerate(("score", "mcb", "dsc", "unc")):
                row[f"{k}_low"], row[f"{k}_high"] = float(lo_[j]), float(hi_[j])
        row["mcb_share"] = row["mcb"] / score if score > 0 else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def quantile_decomposition_table(
    prediction_set: PredictionSet,
    *,
    levels: Sequence[float] = DEFAULT_DECOMPOSITION_LEVELS,
    n_boot: int = 1_000,
    level: float = 0.95,
    seed: int | None = 0,
) -> pd.DataFrame:
    """:func:`quantile_score_decomposition` of every model of a regression set, stacked with a ``model`` column.

    Parameters
    ----------
    prediction_set : PredictionSet
        A regression prediction set (all its rows per model).
    levels : sequence of float, default DEFAULT_DECOMPOSITION_LEVELS
        The levels τ.
    n_boot : int, default 1000
        Bootstrap replicates.
    level : float, default 0.95
        Two-sided level of the intervals.
    seed : int or None, default 0
        Seed of the bootstrap.

    Returns
    -------
    pandas.DataFrame
        The stacked tables; empty for point predictions.

    References
    ----------
    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.

    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.
    """
    frames = [quantile_score_decomposition(y, dist, levels=levels, n_boot=n_boot, level=level, seed=seed)
              .assign(model=model) for model, y, dist in iter_model_distributions(prediction_set)]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    return out[["model", *[c for c in out.columns if c != "model"]]]


def _fmt(v: float) -> str:
    return "" if not np.isfinite(v) else f"{v:.4g}"


def decomposition_display(table: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The decomposition table as the page shows it.

    One row per (model, τ) with ``QS``, ``MCB``, ``DSC``, ``UNC`` as "value [low, high]" text and the MCB share of the
    score in percent.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`quantile_decomposition_table`.
    level : float, default 0.95
        Level of the intervals, for the column names.

    Returns
    -------
    pandas.DataFrame
        The display table.

    References
    ----------
    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.
    """
    if table.empty:
        return pd.DataFrame()
    out = pd.DataFrame({"model": table["model"].astype(str), "τ": table["tau"].map(lambda t: f"{t:g}")})
    for k, name in (("score", "QS"), ("mcb", "MCB"), ("dsc", "DSC"), ("unc", "UNC")):
        if f"{k}_low" in table:
            out[name] = [f"{_fmt(v)} [{_fmt(a)}, {_fmt(b)}]"
                         for v, a, b in zip(table[k], table[f"{k}_low"], table[f"{k}_high"])]
        else:
            out[name] = table[k].map(_fmt)
    out["MCB share"] = table["mcb_share"].map(lambda v: "" if not np.isfinite(v) else f"{100 * v:.2g}%")
    return out


# =============================================================================================
# CORP quantile reliability diagram (regression side)
# =============================================================================================

#: Columns of :attr:`QuantileReliability.curve`: both ends (in forecast order) of every block of the isotonic
#: τ-quantile recalibration, with the rows in the block.
QUANTILE_CURVE_COLUMNS = ["forecast", "recalibrated", "count"]
#: Columns of :attr:`QuantileReliability.bands`: one row per group of consecutive forecasts (its mean forecast and
#: its rows), the pointwise consistency band under calibration.
QUANTILE_BAND_COLUMNS = ["forecast", "count", "consistency_low", "consistency_high"]


@dataclass
class QuantileReliability:
    """CORP quantile reliability of one forecaster at one level τ (see :func:`quantile_reliability`).

    Attributes
    ----------
    tau : float
        The level τ.
    curve : pandas.DataFrame
        :data:`QUANTILE_CURVE_COLUMNS`: the exact step curve x ↦ x̂ (small at any N).
    bands : pandas.DataFrame
        :data:`QUANTILE_BAND_COLUMNS`: the consistency band.
    decomposition : dict
        ``{"score", "mcb", "dsc", "unc"}`` of QS_τ (no intervals: :func:`quantile_score_decomposition` has them).
    n : int
        Number of rows.
    info : dict
        τ, N, the band's level, draws, groups and grid.

    References
    ----------
    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.

    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.
    """

    tau: float
    curve: pd.DataFrame
    bands: pd.DataFrame
    decomposition: dict
    n: int
    info: dict = field(default_factory=dict)


def _group_bounds(xs: np.ndarray, n_groups: int) -> np.ndarray:
    """Start positions of about ``n_groups`` groups of consecutive sorted forecasts ``xs`` of near-equal counts,
    each boundary moved forward to the next change of x (equal forecasts stay in one group); ends with N."""
    n = xs.size
    change = np.r_[0, np.flatnonzero(xs[1:] > xs[:-1]) + 1]
    target = (np.arange(n_groups) * n) // n_groups
    starts = np.unique(change[np.minimum(np.searchsorted(change, target), change.size - 1)])
    return np.r_[starts, n]


def quantile_reliability(
    y,
    dist: PredictiveDistribution,
    *,
    tau: float = 0.5,
    n_resamples: int = 200,
    band_level: float = 0.90,
    max_groups: int = 100,
    grid: int = 256,
    per_group: int = 16,
    normal_above: float = 25.0,
    seed: int | None = 0,
) -> QuantileReliability:
    """CORP reliability diagram of the predicted τ-quantiles x_i = F_i⁻¹(τ), with a consistency band.

    The isotonic τ-quantile regression x̂ of y on x (:func:`isotonic_quantile_regression`, exact) drawn against x
    (Gneiting et al. 2023, §3–4; the CORP approach of Dimitriadis, Gneiting & Jordan 2021).  A calibrated τ-quantile
    forecast (P(y ≤ x | x) = τ) has x̂ ≈ x (the diagonal); x̂ above the diagonal = the predicted quantile is too low
    there (more than a share τ of targets fall below it), below = too high.

    **Consistency band** (pointwise ``band_level``, 90% as in the papers) under the hypothesis of calibration: the
    targets redrawn from the forecasts, y*_i ~ F_i, and the fit recomputed.  Computed without redrawing N rows:

    * the fit is restricted to be constant on ``max_groups`` groups of consecutive forecasts (near-equal counts,
      equal forecasts together) and to values in a grid c_1 < … < c_C (``grid`` values: quantiles of the forecasts
      and of the targets).  By threshold decomposition the fit exceeds c_j exactly on the groups from s_j on, where
      s_j is the first arg-max over group boundaries b of Σ_{g < b} (K_gj − τ n_g), K_gj = #{i ∈ g : y*_i ≤ c_j};
      so P(x̂*(g) > c_j) = P(s_j ≤ g) needs only the law of the counts at each c_j separately;
    * K_gj ~ Binomial(n_g, p̄_gj), p̄_gj the mean of F_i(c_j) over up to ``per_group`` rows spread through group g
      (the exact law is Poisson-binomial with that mean and a variance smaller by Σ(F_i(c_j) − p̄_gj)²: the band
      errs wide); ``n_resamples`` draws per grid value; where n_g p̄(1 − p̄) ≥ ``normal_above`` the count is drawn
      from the normal law with the binomial's mean and variance instead (skewness below 0.2; cheaper, and the cells
      that carry information at large N);
    * the band at group g is [c_{J_lo − 1}, c_{J_hi}], where J_q is the first j with P̂(x̂*(g) ≤ c_j) ≥ q at
      q = (1 ∓ band_level)/2: the grid cell edges outside the quantiles (conservative by at most one cell on each
      side).  Cost O(R·G·C) whatever N; the draws are taken from NumPy's generator in NumPy's order by one compiled
      loop (:func:`calib_core.metrics.regression_decomposition_kernels.band_split_counts`, the same band bit for bit).

    Where the CORP curve leaves the band, the forecast's τ-quantile is miscalibrated there beyond what chance
    produces at this N.

    Parameters
    ----------
    y : array_like of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    tau : float, default 0.5
        The level τ.
    n_resamples : int, default 200
        Null draws per grid value.
    band_level : float, default 0.90
        Pointwise level of the band.
    max_groups : int, default 100
        Groups of consecutive forecasts.
    grid : int, default 256
        Grid values.
    per_group : int, default 16
        Rows per group behind p̄_gj.
    normal_above : float, default 25.0
        n_g p̄(1 − p̄) above which counts are drawn from the normal law.
    seed : int or None, default 0
        Seed of the draws.

    Returns
    -------
    QuantileReliability
        Curve, band and the decomposition QS_τ = MCB − DSC + UNC of this fit (module docstring).

    References
    ----------
    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.

    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.

    Hong, Y. (2013). On computing the distribution function for the Poisson binomial distribution.
    Computational Statistics & Data Analysis 59, 41–51.
    """
    y = np.asarray(y, dtype=float)
    n = y.size
    if n < 2:
        raise ValueError(f"the quantile reliability diagram needs at least 2 rows, got {n}")
    if not 0.0 < tau < 1.0:
        raise ValueError(f"the quantile level τ must lie in (0, 1), got {tau}")
    x = np.asarray(dist.ppf(tau), dtype=float)
    order = stable_argsort(x)
    xs = x[order]
    targets = np.unique(y, return_inverse=True)
    fitted = isotonic_quantile_regression(x, y, tau, order=order, targets=targets)
    fs = fitted[order]
    s_x, s_c = float(quantile_score(y, x, tau).mean()), float(quantile_score(y, fitted, tau).mean())
    unc = float(quantile_score(y, empirical_quantile(y, tau, targets=targets), tau).mean())
    decomposition = {"score": s_x, "mcb": s_x - s_c, "dsc": unc - s_c, "unc": unc}

    # the curve: both ends of every block of equal fitted value (in forecast order)
    new = np.r_[True, fs[1:] != fs[:-1]]
    b_starts = np.flatnonzero(new)
    b_ends = np.r_[b_starts[1:], n] - 1
    pos = np.unique(np.r_[b_starts, b_ends])
    block_of = np.cumsum(new) - 1
    curve = pd.DataFrame({"forecast": xs[pos], "recalibrated": fs[pos],
                          "count": np.diff(np.r_[b_starts, n])[block_of[pos]].astype(float)})

    # groups of consecutive forecasts and the value grid
    bounds = _group_bounds(xs, max(1, int(max_groups)))
    g_start, g_len = bounds[:-1], np.diff(bounds)
    n_g = g_len.astype(float)
    xbar = np.add.reduceat(xs, g_start) / n_g
    levels = (np.arange(grid // 2) + 0.5) / (grid // 2)
    y_values, y_inverse = targets  # y's sorted values from its distinct values and their cumulative counts
    y_cum = np.cumsum(np.bincount(y_inverse, minlength=y_values.size))
    if np.isnan(xs[-1]) or np.isnan(y_values[-1]):  # NaN: NumPy's own quantiles (all NaN)
        c = np.unique(np.r_[np.quantile(xs, levels), np.quantile(y, levels)])
    else:  # np.quantile of sorted values, without its partitions (the same bits)
        c = np.unique(np.r_[sorted_quantile(xs.__getitem__, n, levels),
                            sorted_quantile(lambda i: y_values[np.searchsorted(y_cum, i, side="right")], n, levels)])
    lo_q, hi_q = (1.0 - band_level) / 2.0, (1.0 + band_level) / 2.0
    cons_lo = cons_hi = np.full(g_start.size, np.nan)
    if n_resamples > 0 and c.size > 1:
        rng = np.random.default_rng(np.random.SeedSequence([0 if seed is None else seed, 1617]))
        k = np.minimum(g_len, int(per_group))
        rep_group = np.repeat(np.arange(g_start.size), k)
        within = np.arange(k.sum()) - np.repeat(np.cumsum(k) - k, k)
        rep_pos = g_start[rep_group] + ((2 * within + 1) * g_len[rep_group]) // (2 * k[rep_group])  # k-tile midpoints
        rep_rows = order[rep_pos]
        cdf = rows_cdf(dist, rep_rows, c)  # F_i(c_j), representative rows × grid
        p_bar = np.clip(np.add.reduceat(cdf, np.r_[0, np.cumsum(k)[:-1]], axis=0) / k[:, None], 0.0, 1.0)  # G × C
        r = int(n_resamples)
        split_counts = band_split_counts(rng, p_bar, n_g, tau, normal_above, r)  # the NumPy draws, compiled
        above = np.cumsum(split_counts, axis=1)[:, :-1] / r  # P(x̂*(g) > c_j) = P(s_j ≤ g), C × G
        cdf_g = np.maximum.accumulate(1.0 - above, axis=0)  # P(x̂*(g) ≤ c_j), non-decreasing in j
        j_lo = (cdf_g < lo_q).sum(axis=0)  # first j with cdf ≥ q
        j_hi = (cdf_g < hi_q).sum(axis=0)
        cons_lo = np.where(j_lo > 0, c[np.maximum(j_lo - 1, 0)], -np.inf)
        cons_hi = np.where(j_hi < c.size, c[np.minimum(j_hi, c.size - 1)], np.inf)
        cons_lo, cons_hi = np.maximum(cons_lo, c[0]), np.minimum(cons_hi, c[-1])  # shown within the grid
    bands = pd.DataFrame({"forecast": xbar, "count": n_g, "consistency_low": cons_lo, "consistency_high": cons_hi})
    info = {"tau": float(tau), "n": n, "band_level": band_level, "n_resamples": int(n_resamples),
            "normal_above": float(normal_above),
            "n_groups": int(g_start.size), "grid": int(c.size), "per_group": int(per_group)}
    for t in (curve, bands):
        t.attrs.update(info)
    return QuantileReliability(tau=float(tau), curve=curve, bands=bands, decomposition=decomposition, n=n, info=info)


def quantile_reliability_of(
    prediction_set: PredictionSet, *, tau: float = 0.5, **options
) -> dict[str, QuantileReliability]:
    """:func:`quantile_reliability` of every model of a regression set (all its rows per model, at least 2).

    Parameters
    ----------
    prediction_set : PredictionSet
        A regression prediction set.
    tau : float, default 0.5
        The level τ.
    **options
        Passed to :func:`quantile_reliability`.

    Returns
    -------
    dict of str to QuantileReliability
        Model → diagram; empty for point predictions.

    References
    ----------
    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.

    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.
    """
    return {model: quantile_reliability(y, dist, tau=tau, **options)
            for model, y, dist in iter_model_distributions(prediction_set)}
