"""Regression intervals from per-block sums: a bootstrap that costs one matrix product.

Rows are assigned to G random blocks once, the sufficient statistics of every smooth metric (Σσ, Σσ², Σε², Σ|ε|,
NLL, CRPS, Σzᵏ for k ≤ 8, Σ log z², interval widths and scores) are summed per block (:func:`block_table`), and all
bootstrap replicates are one (R × G) @ (G × q) product of multinomial weights with those sums
(:mod:`calib_core.base.significance`); :func:`smooth_stats` turns any sums back into the metrics.
:func:`bootstrap_intervals` gives the BCa intervals of the smooth metrics (the WIS and its parts from a product of
their own) and bootstrap-t intervals, with delta-method standard errors, of std z, skewness and excess kurtosis.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from ..base import significance as sig
from ..base.compiled import compiled_kernel
from ..metrics.regression import RegressionRows
from ..metrics.regression_rows import sigma_unit
from ..metrics.regression_tails import (
    log_zms_standard_error,
)

__all__ = ["block_table", "smooth_stats", "bootstrap_intervals", "bootstrap_t_p"]


def block_table(rows: RegressionRows, ids: np.ndarray, g: int, coverages,
                need_interval_scores: bool) -> tuple[np.ndarray, list[str]]:
    """Per-block sums (G × q) of the sufficient statistics of the smooth metrics, and their names.

    The sums: rows; Σσ, Σσ², Σε², Σ|ε|, Σ NLL, Σ CRPS; the number of finite z and Σzᵏ for k = 1…8 (moments 5–8
    give the delta-method standard errors of std z, skewness and kurtosis); Σ log z² and Σ (log z²)² where known;
    and, with ``need_interval_scores``, the interval widths and scores (Gaussian: Σσ(|z| − k)₊, the width being
    2kσ).

    Parameters
    ----------
    rows : RegressionRows
        The rows (their cached per-row quantities are read).
    ids : ndarray of shape (N,)
        Random block of each row.
    g : int
        Number of blocks G.
    coverages : sequence of float
        Central-interval levels.
    need_interval_scores : bool
        Also sum the interval widths and scores.

    Returns
    -------
    sums : ndarray of shape (G, q)
        Per-block sums.
    names : list of str
        Their names (columns of ``sums``).

    References
    ----------
    .. [1] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    .. [2] Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. *Annals of
       Statistics* 17(3), 1217–1241.
    """
    r = rows
    cols: dict[str, np.ndarray] = {}
    ids = np.ascontiguousarray(ids, dtype=np.int64)

    def add(name, w=None, index=ids):
        cols[name] = np.bincount(index, weights=w, minlength=g).astype(float)

    def add_all(names, sums):  # the columns of a compiled pass's (G, k) sums
        for j, name in enumerate(names):
            cols[name] = sums[:, j]

    unit = sigma_unit(r.sigma)
    if unit == 1.0:
        add_all(("n", "s_sigma", "s_var", "s_sq", "s_abs", "s_nll", "s_crps"),
                _row_block_sums(ids, g, *(_f64(a) for a in (r.sigma, r.var, r.sq_err, r.eps, r.neg_logpdf, r.crps))))
    else:  # σ² would over- or underflow: sums of σ/c and (σ/c)², and log2 c per row, for sharpness and Cv
        add("n")
        add("s_sigma", r.sigma)
        add("s_var", (r.sigma / unit) ** 2)
        add("s_sigma_c", r.sigma / unit)
        add("s_log2_unit", np.full(r.sigma.shape, np.log2(unit)))
        add("s_sq", r.sq_err)
        add("s_abs", np.abs(r.eps))
        add("s_nll", r.neg_logpdf)
        add("s_crps", r.crps)
    zid = ids if r.z_ok is None else np.ascontiguousarray(ids[r.z_ok])
    # the number of finite z and Σzᵏ, k = 1…8 (moments 5–8: the delta-method standard errors of std z, skewness and
    # kurtosis, for their bootstrap-t intervals)
    add_all(("nz", "s_z", "s_z2", "s_z3", "s_z4", "s_z5", "s_z6", "s_z7", "s_z8"),
            _power_block_sums(zid, _f64(r.z_finite), g, 8))
    # log z² (mean log z², the heavy-tail-robust ZMS): rows with z = 0 left out, as in the point estimate
    lz, lz_ok = r.__dict__.get("_log_z2") or (None, None)
    if lz is not None:
        lid = zid if lz_ok is None else np.ascontiguousarray(zid[lz_ok])
        add_all(("n_lz", "s_lz", "s_lz2"), _power_block_sums(lid, _f64(lz), g, 2))
    if need_interval_scores:
        tags = [f"{100 * c:g}" for c in coverages]
        if r._gaussian:  # Σσ(|z| − k)₊ per level; the width is 2kσ: from s_sigma
            ks = np.array([float(special.ndtri(0.5 + c / 2.0)) for c in coverages])
            add_all([f"s_pen_{tag}" for tag in tags],
                    _penalty_block_sums(ids, g, _f64(r.abs_z), _f64(r.sigma), ks))
        else:
            for c, tag in zip(coverages, tags):
                alpha = 1.0 - c
                known = r.__dict__.get("_interval_cache", {}).get(c)  # (inside, width, score) of summary_statistics
                if known is None:
                    lo, hi = r.dist.interval(c)
                    width = hi - lo
                    known = (None, width, width + (2.0 / alpha) * (np.maximum(lo - r.y, 0) + np.maximum(r.y - hi, 0)))
                add(f"s_width_{tag}", known[1])
                add(f"s_score_{tag}", known[2])
    names = list(cols)
    return np.stack([cols[k] for k in names], axis=1), names


def _f64(a: np.ndarray) -> np.ndarray:
    """A kernel's argument: contiguous float64 (no copy when it is already)."""
    return np.ascontiguousarray(a, dtype=np.float64)


@compiled_kernel
def _row_block_sums(ids, g, sigma, var, sq_err, eps, nll, crps):
    """Per block b (``ids``): [rows, Σσ, Σσ², Σε², Σ|ε|, Σ NLL, Σ CRPS], shape (G, 7).

    Each column is ``np.bincount(ids, weights=w, minlength=G)`` of its per-row values (Efron & Tibshirani 1993,
    ch. 6: a replicate of a mean is a weighted sum of block sums): added row by row in the same order, so the same
    bits, in one pass over the rows.
    """
    out = np.zeros((g, 7))
    for i in range(ids.shape[0]):
        b = ids[i]
        out[b, 0] += 1.0
        out[b, 1] += sigma[i]
        out[b, 2] += var[i]
        out[b, 3] += sq_err[i]
        out[b, 4] += abs(eps[i])
        out[b, 5] += nll[i]
        out[b, 6] += crps[i]
    return out


@compiled_kernel
def _power_block_sums(ids, z, g, top):
    """Per block b (``ids``): [count, Σz, Σz², …, Σz^top] (top ≤ 8), shape (G, top + 1).

    The powers are NumPy's products of :func:`block_table` — z² = z·z, z³ = z²·z, z⁴ = z²·z², z⁵ = z⁴·z,
    z⁶ = z⁴·z², z⁷ = (z⁴·z²)·z, z⁸ = z⁴·z⁴ — summed row by row as ``np.bincount(ids, weights=zᵏ)`` sums them: the
    same bits, without the eight temporary arrays (moments up to 8 for the delta-method standard errors; Serfling
    1980, §2.2.3).
    """
    out = np.zeros((g, top + 1))
    for i in range(ids.shape[0]):
        b = ids[i]
        v = z[i]
        out[b, 0] += 1.0
        out[b, 1] += v
        v2 = v * v
        out[b, 2] += v2
        if top > 2:
            v4 = v2 * v2
            v6 = v4 * v2
            out[b, 3] += v2 * v
            out[b, 4] += v4
            out[b, 5] += v4 * v
            out[b, 6] += v6
            out[b, 7] += v6 * v
            out[b, 8] += v4 * v4
    return out


@compiled_kernel
def _penalty_block_sums(ids, g, abs_z, sigma, ks):
    """Per block b and level c: Σ σ·(|z| − k_c)₊, shape (G, len(ks)) — the Gaussian interval score's penalty
    (Gneiting & Raftery 2007, §6.2: score = width + (2/α)·σ(|z| − k)₊, width 2kσ).

    ``np.maximum(|z| − k, 0)·σ`` per row (NaN stays NaN) summed as ``np.bincount(ids, weights=…)``: the same bits.
    """
    out = np.zeros((g, ks.shape[0]))
    for i in range(ids.shape[0]):
        b = ids[i]
        for c in range(ks.shape[0]):
            t = abs_z[i] - ks[c]
            if t < 0.0:
                t = 0.0
            out[b, c] += t * sigma[i]
    return out


def smooth_stats(s: np.ndarray, names: list[str], gaussian: bool, coverages) -> dict[str, np.ndarray]:
    """The smooth metrics as functions of (replicate) sums.

    NLL, CRPS, RMSE, MAE, sharpness, Cv, std z, ZMS (and log ZMS with its delta-method s.e.), mean log z² (with its
    s.e.), skewness, excess kurtosis (with the delta-method s.e. of both and of log std z), and the interval widths
    and scores of ``coverages``.

    Parameters
    ----------
    s : ndarray of shape (R, q)
        Sums (rows: the data's total, bootstrap replicates or jackknife leave-one-block-out sums).
    names : list of str
        The columns of ``s`` (:func:`block_table`).
    gaussian : bool
        Gaussian layout (interval widths and scores from Σσ and the penalty sums).
    coverages : sequence of float
        Central-interval levels.

    Returns
    -------
    dict of str to ndarray of shape (R,)
        Each metric per row of ``s``.

    References
    ----------
    .. [1] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    .. [2] Serfling, R. J. (1980). *Approximation Theorems of Mathematical Statistics*. Wiley, §2.2.3 and §3.3.
    """
    c = {k: s[:, i] for i, k in enumerate(names)}
    out: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        n = c["n"]
        out["nll"] = c["s_nll"] / n
        out["crps"] = c["s_crps"] / n
        out["rmse"] = np.sqrt(c["s_sq"] / n)
        out["mae"] = c["s_abs"] / n
        # σ divided by c = 2^e first when σ² would over- or underflow (block_table): sharpness = c·√(Σ(σ/c)²/n)
        unit = np.exp2(c["s_log2_unit"] / n) if "s_log2_unit" in c else 1.0
        s_sigma = c.get("s_sigma_c", c["s_sigma"])
        out["sharpness"] = np.sqrt(c["s_var"] / n) * unit
        mean_s = s_sigma / n
        out["cv"] = np.sqrt(np.maximum(c["s_var"] - s_sigma * mean_s, 0.0) / (n - 1.0)) / mean_s
        nz = c["nz"]
        m = c["s_z"] / nz
        e2, e3, e4 = c["s_z2"] / nz, c["s_z3"] / nz, c["s_z4"] / nz
        m2 = np.maximum(e2 - m * m, 0.0)
        m3 = e3 - 3 * m * e2 + 2 * m**3
        m4 = e4 - 4 * m * e3 + 6 * m * m * e2 - 3 * m**4
        out["z_std"] = np.sqrt(m2)
        out["zms"] = e2
        out["log_zms"] = np.log(e2)
        out["se_log_zms"] = log_zms_standard_error(e2, e4, nz)
        if "s_lz" in c:
            ml = c["s_lz"] / c["n_lz"]
            out["mean_log_z2"] = ml
            out["se_mean_log_z2"] = np.sqrt(np.maximum(c["s_lz2"] / c["n_lz"] - ml * ml, 0.0) / c["n_lz"])
        out["z_skewness"] = m3 / m2**1.5
        out["z_excess_kurtosis"] = m4 / m2**2 - 3.0
        if "s_z8" in c:
            out.update(_shape_standard_errors([c["s_z"] / nz, *(c[f"s_z{j}"] / nz for j in range(2, 9))], nz))
        for cov in coverages:
            tag = f"{100 * cov:g}"
            if gaussian:
                k = float(special.ndtri(0.5 + cov / 2.0))
                width = 2.0 * k * mean_s
                out[f"width_{tag}"] = width
                out[f"interval_score_{tag}"] = width + (2.0 / (1.0 - cov)) * c[f"s_pen_{tag}"] / n
            elif f"s_width_{tag}" in c:
                out[f"width_{tag}"] = c[f"s_width_{tag}"] / n
                out[f"interval_score_{tag}"] = c[f"s_score_{tag}"] / n
    return out


#: C(k, j) for k ≤ 8 (``scipy.special.comb``'s values, looked up instead of called 45 times per use)
_BINOMIAL = [[special.comb(k, j) for j in range(k + 1)] for k in range(9)]


def _shape_standard_errors(raw: list[np.ndarray], nz: np.ndarray) -> dict[str, np.ndarray]:
    """Delta-method (influence-function) standard errors of log std z, skewness and excess kurtosis.

    ``raw`` = [E z, E z², …, E z⁸] (sample means, any shape), ``nz`` the number of z.  With central moments
    μ_k = Σ_j C(k, j) E z^j (−m)^{k−j} and d = z − m, the influence functions are polynomials in d:
    log σ: (d² − μ₂)/(2μ₂); skewness γ₁ = μ₃/μ₂^{3/2}: μ₂^{−3/2}(d³ − 3μ₂d − μ₃) − (3/2)μ₃μ₂^{−5/2}(d² − μ₂);
    kurtosis γ₂ = μ₄/μ₂² − 3: μ₂^{−2}(d⁴ − 4μ₃d − μ₄) − 2μ₄μ₂^{−3}(d² − μ₂) (Serfling 1980, §2.2.3 and
    §3.3), and Var(θ̂) ≈ E[IF²]/N = Σ_{i,j} c_i c_j μ_{i+j} / N for IF = Σ_i c_i dⁱ.  Returns
    ``log_z_std``, and ``se_log_z_std``, ``se_z_skewness``, ``se_z_excess_kurtosis``.
    """
    m = raw[0]
    e = [np.ones_like(m), *raw]
    mu = [np.ones_like(m), np.zeros_like(m)]
    neg = -m
    powers = [neg**p for p in range(9)]  # (−m)^p once each (the same values as computed in every term)
    for k in range(2, 9):
        mu.append(sum(_BINOMIAL[k][j] * e[j] * powers[k - j] for j in range(k + 1)))
    m2, m3, m4 = np.maximum(mu[2], 0.0), mu[3], mu[4]

    def var_of(coef: dict[int, np.ndarray]) -> np.ndarray:
        return sum(ci * cj * mu[i + j] for i, ci in coef.items() for j, cj in coef.items()) / nz

    with np.errstate(all="ignore"):
        a = m2**-1.5
        b = -1.5 * m3 * m2**-2.5
        skew = {3: a, 2: b, 1: -3.0 * a * m2, 0: -(a * m3 + b * m2)}
        c4, c2 = m2**-2.0, -2.0 * m4 * m2**-3.0
        kurt = {4: c4, 2: c2, 1: -4.0 * m3 * c4, 0: -(c4 * m4 + c2 * m2)}
        out = {
            "log_z_std": 0.5 * np.log(m2),
            "se_log_z_std": np.sqrt(np.maximum(mu[4] - m2 * m2, 0.0) / (4.0 * m2 * m2) / nz),
            "se_z_skewness": np.sqrt(np.maximum(var_of(skew), 0.0)),
            "se_z_excess_kurtosis": np.sqrt(np.maximum(var_of(kurt), 0.0)),
        }
    return out


def bootstrap_intervals(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows,
                        ids: np.ndarray, g: int, weights: np.ndarray, coverages,
                        level: float) -> tuple[np.ndarray, list[str], dict[str, np.ndarray]]:
    """Bootstrap intervals of the smooth metrics, written into their records.

    BCa (bias-corrected and accelerated; acceleration from the leave-one-block-out jackknife) for every smooth
    metric; bootstrap-t with delta-method standard errors for std z (on log std z), skewness (symmetric) and
    excess kurtosis, where BCa under-covered (0.92 at N = 1,000 for all three).

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    ids : ndarray of shape (N,)
        Random block of each row.
    g : int
        Number of blocks.
    weights : ndarray of shape (R, g)
        Multinomial bootstrap weights of the blocks.
    coverages : sequence of float
        Central-interval levels.
    level : float
        Two-sided level.

    Returns
    -------
    sums : ndarray of shape (g, q)
        The per-block sums (:func:`block_table`).
    names : list of str
        Their names.
    boot : dict of str to ndarray
        Bootstrap replicates of every smooth metric (:func:`smooth_stats`).

    References
    ----------
    .. [1] Efron, B. (1987). Better bootstrap confidence intervals. *Journal of the American Statistical
       Association* 82(397), 171–185.
    .. [2] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    .. [3] Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. *Annals of
       Statistics* 17(3), 1217–1241.
    """
    n = r.n
    need_scores = any(k.startswith("interval_score_") for k in values)
    sums, names = block_table(r, ids, g, coverages, need_scores)
    boot = smooth_stats(weights @ sums, names, r._gaussian, coverages)
    jack = smooth_stats(sig.jackknife_sums(sums), names, r._gaussian, coverages)
    smooth = [k for k in boot if k in values]
    theta = np.array([values[k] for k in smooth])
    boot_m = np.stack([boot[k] for k in smooth], 1)
    lo, hi = sig.bca_interval(theta, boot_m, np.stack([jack[k] for k in smooth], 1), level)
    method = "BCa, block bootstrap" if g < n else "BCa bootstrap"
    for k, a, b in zip(smooth, lo, hi):
        rec[k].update(ci_low=float(a), ci_high=float(b), interval=method)
    _wis_intervals(rec, values, r, ids, g, weights, level, method)
    _shape_intervals(rec, values, r, sums, names, boot, g, n, level)
    return sums, names, boot


def _wis_intervals(rec, values, r: RegressionRows, ids, g, weights, level, method) -> None:
    """BCa intervals of the WIS and its parts (means of per-row values, :mod:`calib_core.metrics.regression_wis`),
    from their own block sums (a product of its own: the other metrics' sums and intervals stay bit for bit)."""
    parts = r.__dict__.get("_wis_parts")
    keys = [k for k in ("wis", "wis_dispersion", "wis_overprediction", "wis_underprediction") if k in values]
    if parts is None or not keys:
        return
    cols = parts.columns()
    sums = np.stack([np.bincount(ids, minlength=g).astype(float)]
                    + [np.bincount(ids, weights=cols[k], minlength=g) for k in keys], axis=1)
    boot, jack = weights @ sums, sig.jackknife_sums(sums)
    lo, hi = sig.bca_interval(np.array([values[k] for k in keys]), boot[:, 1:] / boot[:, :1],
                              jack[:, 1:] / jack[:, :1], level)
    for k, a, b in zip(keys, lo, hi):
        rec[k].update(ci_low=float(a), ci_high=float(b), interval=method)


def _shape_intervals(rec, values, r: RegressionRows, sums, names, boot, g, n, level) -> None:
    """std z, skewness and excess kurtosis of z: bootstrap-t intervals with the delta-method standard errors of
    :func:`_shape_standard_errors` (BCa under-covered: 0.92 at N = 1,000 for all three).

    std z: equal-tailed on log std z; skewness: symmetric (its law is nearly symmetric; the equal-tailed one
    covered 0.93); excess kurtosis: equal-tailed (its law is skewed).  Measured on N(0, 1) z (500–1,000 data
    sets per N): log std z 0.95 at N = 200, 1,000, 1,500; skewness 0.94–0.95; kurtosis 0.91 (N = 200),
    0.92–0.93 (500–1,500) — a fourth moment needs many rows, and heavy tails make it worse; below N = 10,000
    the row's note says so (the union with the BCa interval was no better: 0.93 at N = 1,000).
    """
    keys = [k for k in ("z_std", "z_skewness", "z_excess_kurtosis") if k in values and np.isfinite(values[k])]
    if not keys or "se_log_z_std" not in boot:
        return
    full = smooth_stats(sums.sum(axis=0, keepdims=True), names, r._gaussian, ())
    where = "block bootstrap" if g < n else "bootstrap"
    nz = int(r.z_finite.shape[0])
    for k in keys:
        if k == "z_std":
            theta, se, rep, rep_se = full["log_z_std"], full["se_log_z_std"], boot["log_z_std"], boot["se_log_z_std"]
        else:
            theta, se, rep, rep_se = full[k], full[f"se_{k}"], boot[k], boot[f"se_{k}"]
        sym = k == "z_skewness"
        lo, hi = sig.studentized_interval(theta, se, rep, rep_se, level, symmetric=sym)
        lo, hi = float(lo[0]), float(hi[0])
        if not (np.isfinite(lo) and np.isfinite(hi)):
            continue
        how = f"{'symmetric ' if sym else ''}bootstrap-t ({where}, delta-method s.e.)"
        if k == "z_std":
            lo, hi, how = float(np.exp(lo)), float(np.exp(hi)), how + " on log std z"
        rec[k].update(ci_low=lo, ci_high=hi, interval=how)
        if k == "z_skewness" and rep.shape[0] >= _BOOT_TEST_MIN:
            # the same statistic's test at 0, which the interval inverts (z_tests takes the larger of its p-value
            # and D'Agostino's; kurtosis keeps Anscombe–Glynn alone: heavy tails are what it is there to see)
            p = bootstrap_t_p(float(theta[0]), float(se[0]), rep, rep_se, 0.0, symmetric=True)
            rec[k].update(p_value=p, p_mc_se=float(np.sqrt(p * (1 - p) / rep.shape[0])))
        if k == "z_excess_kurtosis" and nz < _KURTOSIS_FULL_N:
            rec[k]["note"] = ("a fourth-moment statistic: its interval covers less than its level at this N (measured "
                              "with Gaussian errors: 0.91 at N = 200, 0.92–0.93 at N = 500–1,500; less with heavy "
                              "tails)")


def bootstrap_t_p(theta: float, se: float, boot: np.ndarray, boot_se: np.ndarray, theta0: float, *,
                  symmetric: bool = False) -> float:
    """The p-value of H0: θ = θ₀ that the bootstrap-t interval of θ inverts.

    With t₀ = (θ̂ − θ₀)/ŝe and the studentised replicates t*_b = (θ*_b − θ̂)/ŝe*_b: symmetric,
    p = #{|t*| ≥ |t₀|}/R; equal-tailed, p = min(1, 2 min(#{t* ≥ t₀}, #{t* ≤ t₀})/R) — so θ₀ lies outside the
    level-(1 − a) bootstrap-t interval (:func:`calib_core.base.significance.studentized_interval`) exactly when
    p < a, up to the interpolation of the replicates' quantiles.

    Parameters
    ----------
    theta : float
        The estimate θ̂.
    se : float
        Its standard error ŝe.
    boot : ndarray of shape (R,) or (R, 1)
        The bootstrap replicates θ*.
    boot_se : ndarray of shape (R,) or (R, 1)
        Each replicate's own standard error.
    theta0 : float
        The value under test.
    symmetric : bool, default False
        Invert the symmetric bootstrap-t interval.

    Returns
    -------
    float
        The p-value (NaN without a finite estimate, s.e. or replicate).

    References
    ----------
    .. [1] Hall, P. (1992). *The Bootstrap and Edgeworth Expansion*. Springer.
    .. [2] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall, §12.5 and §16.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> t = rng.standard_normal(2000)
    >>> round(bootstrap_t_p(3.0, 1.0, 3.0 + t, np.ones(2000), 0.0, symmetric=True), 3)
    0.003
    """
    with np.errstate(all="ignore"):
        t = (np.ravel(np.asarray(boot, dtype=float)) - theta) / np.ravel(np.asarray(boot_se, dtype=float))
        t0 = (theta - theta0) / se
    t = t[np.isfinite(t)]
    if t.size == 0 or not np.isfinite(t0):
        return float("nan")
    if symmetric:
        return float(np.mean(np.abs(t) >= abs(t0)))
    return float(min(1.0, 2.0 * min(np.mean(t >= t0), np.mean(t <= t0))))


#: fewest bootstrap replicates whose bootstrap-t p-value the skewness test uses (fewer: too coarse)
_BOOT_TEST_MIN = 200

#: below this many z, the kurtosis interval's note says that it under-covers (measured up to N = 1,500)
_KURTOSIS_FULL_N = 10_000
