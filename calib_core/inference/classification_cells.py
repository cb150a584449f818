"""Per-cell statistics of binned classification rows: plug-in and debiased ECE, MCE, and the intervals of MCE and of
sums of absolute cell deviations.

A *cell* is a confidence bin (top label, positive class) or a (class, bin) pair (class-wise ECE); every function here
reads per-cell sums — row count n, Σ confidence, Σ hits, Σ c(1 − c) — over the last axis, so that the data, every
bootstrap replicate and every null draw go through the same code.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..base.significance import percentile_interval

__all__ = ["expected_abs", "ece_cells", "mce_cells", "percentile_bounds", "mce_interval", "l1_band"]


def expected_abs(d: np.ndarray, s: np.ndarray) -> np.ndarray:
    """E|d + sZ| for Z ~ N(0, 1) (folded normal mean); |d| where s = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = d / s
        out = s * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * r * r) + d * (1.0 - 2.0 * special.ndtr(-r))
    return np.where(s > 0, out, np.abs(d))


def ece_cells(count, s_conf, s_hit, s_var, total):
    """Plug-in and debiased ECE over the last axis (cells) of per-cell sums (any leading shape).

    Plug-in Σ|Σhit − Σconf| / total.  Debiased: each cell's bias E|δ̂| − |δ| is estimated as
    E|δ̂ + σZ| − |δ̂| (Kumar et al. 2019, §5) with δ̂ = acc − conf and σ² = Σ c(1 − c) / n², the variance of
    the cell's accuracy under the forecast — exact under H0 (where the bias matters), and immaterial when
    |δ| ≫ σ; unlike acc(1 − acc)/n it is not 0 in small cells that happen to be all right or all wrong.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(count > 0, count, 1.0)
        d = np.where(count > 0, (s_hit - s_conf) / safe, 0.0)
        sd = np.sqrt(np.clip(s_var, 0.0, None)) / safe
    plug = np.abs(s_hit - s_conf).sum(axis=-1) / total
    bias = (count * (expected_abs(d, sd) - np.abs(d))).sum(axis=-1) / total
    return plug, plug - bias


def mce_cells(count: np.ndarray, dev: np.ndarray) -> np.ndarray:
    """max over non-empty bins of |dev| / count (last axis)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(count > 0, np.abs(dev) / np.where(count > 0, count, 1.0), -np.inf)
    out = r.max(axis=-1)
    return np.where(np.isfinite(out), out, np.nan)


def percentile_bounds(x: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = percentile_interval(np.asarray(x, dtype=float), level)
    return float(lo[0]), float(hi[0])


def mce_interval(count: np.ndarray, s_conf: np.ndarray, s_hit: np.ndarray, level: float) -> tuple[float, float, str]:
    """Interval for max_m |acc_m − conf_m| over the non-empty bins, from simultaneous per-bin intervals.

    Given the bins' row counts n_m, the numbers correct are independent Binomial(n_m, acc_m), so Clopper–Pearson
    intervals at level ``level``^(1/M) (Šidák, M non-empty bins) hold for all bins at once with probability
    ≥ ``level``.  With each δ_m = acc_m − conf_m in I_m = CP_m − conf_m (conf_m the bin's mean confidence), the
    maximum of |δ_m| lies in [max_m min_{x∈I_m} |x|, max_m max_{x∈I_m} |x|] — the plug-in always inside.  Exact
    and conservative; wide when a bin holds a few rows (which is what MCE is then worth).  A bootstrap of a
    maximum is inconsistent (its basic interval covered 0.24–0.95 of the population MCE in the simulation study).
    """
    live = np.nonzero(count > 0)[0]
    if live.size == 0:
        return np.nan, np.nan, ""
    n = count[live]
    k = np.clip(np.round(s_hit[live]), 0, n)
    a = (1.0 - level ** (1.0 / live.size)) / 2.0
    with np.errstate(all="ignore"):
        lo = np.where(k > 0, special.betaincinv(np.maximum(k, 1e-300), n - k + 1, a), 0.0)
        hi = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1e-300), 1.0 - a), 1.0)
    conf = s_conf[live] / n
    d_lo, d_hi = lo - conf, hi - conf
    near = np.where((d_lo <= 0) & (d_hi >= 0), 0.0, np.minimum(np.abs(d_lo), np.abs(d_hi)))
    far = np.maximum(np.abs(d_lo), np.abs(d_hi))
    how = f"max over bins of simultaneous Clopper–Pearson intervals (Šidák over {live.size} bins; conservative)"
    return float(near.max()), float(far.max()), how


def l1_band(plug: float, boot_l1: np.ndarray, null_draws: np.ndarray, level: float) -> tuple[float, float, str]:
    """[plug − Q, plug + Q] (clipped at 0) for a sum of absolute cell deviations, Σ_c |μ_c| / K.

    By the triangle inequality |Σ|μ̂_c| − Σ|μ_c|| ≤ Σ|μ̂_c − μ_c|, so if Q bounds the summed absolute error of the
    cells with probability ``level`` the interval covers with at least that probability, whatever the cells'
    sizes.  Q is the larger of two ``level`` quantiles of that error: the block bootstrap's (Σ|μ̂* − μ̂|, right
    for cells of many rows, whatever the truth) and the null law's (the label noise under the forecast, exact
    for cells of a few rows where the bootstrap sees too little noise).  The debiased estimate was no base for an
    interval: in cells of a few rows its Gaussian correction leaves a large upward bias (coverage 0.00–0.59 under
    temperature miscalibration at K = 10, 100 below N = 10,000).
    """
    b = np.asarray(boot_l1, dtype=float)
    d = np.asarray(null_draws, dtype=float)
    q = max(float(np.quantile(b[np.isfinite(b)], level)) if np.isfinite(b).any() else 0.0,
            float(np.quantile(d[np.isfinite(d)], level)) if np.isfinite(d).any() else 0.0)
    how = "plug-in ± the level quantile of the summed cell errors (bootstrap or null law, the larger; conservative)"
    return max(0.0, plug - q), plug + q, how
