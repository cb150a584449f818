"""ENCE (Levi et al. 2019) tested and bounded: its null law with σ fixed and its bootstrap interval, from per-bin sums.

ENCE = (1/B) Σ_b |1 − RMSE_b / RMV_b| over σ-bins b (RMV_b² the mean predicted variance, RMSE_b² the mean squared
error of the bin).  Under perfect calibration with σ fixed, each bin's Σσ²z² has the exact mean Σσ² E z² and
variance Σσ⁴ Var z²; the null draws are gamma per bin with those moments (Satterthwaite; exact for equal σ in a bin),
or for ensembles the per-bin (Σε², Σσ²) laws of the exchangeability null.  ENCE is biased upward by about its null
mean (Pernot 2024), so the table also gives the debiased value ENCE − null mean (clipped at 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import significance as sig
from ..metrics.regression import RegressionRows

__all__ = ["ence_test", "sigma_bin_edges"]


def ence_test(row: dict[str, Any], value: float, r: RegressionRows, z_moments, ensemble_bin_moments, ids, g, weights,
              n_bins, binning, n_null, rng, level) -> None:
    """ENCE's test, reference, debiased value and interval, written into its record ``row``.

    Null: Monte Carlo, per σ-bin Σσ²z² gamma with the bin's exact null mean and variance (σ fixed), or for
    ensembles the per-bin (Σε², Σσ²) laws of the exchangeability null; ``perfect`` is the null draws' mean and
    ``debiased`` = max(0, ENCE − that mean) (a negative difference is clipped and the note says so).  Interval:
    ENCE replicated from the per-(block, bin) sums with the bins held fixed; the hull of the basic interval (which
    corrects the plug-in's upward bias and can end below the plug-in) and the percentile interval (an upper bound of
    E ENCE, itself at least the population ENCE), so it contains the plug-in; clipped at 0, its lower end 0 unless
    the test rejects (at the boundary the bootstrap of |·| is biased, and a value the test cannot tell from perfect
    calibration must not be excluded from 0).

    Parameters
    ----------
    row : dict
        ENCE's record (updated).
    value : float
        ENCE at these bins.
    r : RegressionRows
        The rows.
    z_moments : tuple of ndarray or float
        Per-row null moments (E z, E z², E z³, E z⁴) (:meth:`NullModel.z_moments`).
    ensemble_bin_moments : ndarray of shape (5, bins) or None
        The exchangeability null's per-bin moments (ensembles), else None.
    ids : ndarray of shape (N,)
        Random block of each row.
    g : int
        Number of blocks.
    weights : ndarray of shape (R, g)
        Bootstrap weights of the blocks.
    n_bins : int
        σ-bins.
    binning : {"count", "width"}
        Equal-count or equal-width σ-bins.
    n_null : int
        Null draws.
    rng : numpy.random.Generator
        Random stream of the null draws.
    level : float
        Two-sided level of the interval.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [2] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the reliability
       of calibration statistics for machine learning regression tasks. *arXiv:2402.10043*.
    """
    b = r.sigma_bins(n_bins, binning)
    nb = int(n_bins)
    var = r.var
    m1, m2, m3, m4 = z_moments
    # per (block, bin) Σσ² and Σε²: the interval's replicates, and Σσ² per bin for the null
    idx = ids * nb + b
    bs_var = np.bincount(idx, weights=var, minlength=g * nb).reshape(g, nb)
    bs_sq = np.bincount(idx, weights=r.sq_err, minlength=g * nb).reshape(g, nb)
    v_bin = bs_var.sum(axis=0)
    if ensemble_bin_moments is not None:
        null_draws = _ensemble_ence_null(ensemble_bin_moments, n_null, rng)
        how = "per-bin Σε², Σσ² of the exchangeability null (each candidate binned by its own σ): Σσ² normal, " \
              "Σε² | Σσ² gamma, exact moments"
    else:
        null_draws = _gamma_ence_null(r, b, nb, v_bin, m2, m4, n_null, rng)
        how = "per-bin Σσ²z², gamma with the bin's exact null mean and variance"
    mc = sig.monte_carlo_p(value, null_draws, "greater")
    ref = float(null_draws.mean())
    # interval: replicate ENCE from the block sums with the bins held fixed; basic bootstrap.  One product with the
    # two sums side by side reads the (R × g) weights once (the same numbers as two products, column by column)
    rep_sums = weights @ np.hstack([bs_var, bs_sq])
    rep = _ence_from_bin_sums(rep_sums[:, :nb], rep_sums[:, nb:])
    lo, hi = sig.basic_interval(value, rep, level)
    q_lo, q_hi = np.nanquantile(rep, [0.5 - level / 2, 0.5 + level / 2])
    # the basic interval [2v − q_hi, 2v − q_lo] corrects the plug-in's upward bias; near perfect calibration the
    # replicates all lie above v and it ends below the plug-in.  Its hull with the percentile interval [q_lo, q_hi]
    # (an upper bound of E ENCE ≥ the population ENCE, so conservative) always contains the plug-in
    lo0 = max(0.0, min(float(lo[0]), float(q_lo)))
    hi0 = max(0.0, float(hi[0]), float(q_hi))
    if mc.p > 1.0 - level:
        # at the boundary (population ENCE 0) the bootstrap of |·| is biased; an ENCE the null test cannot tell
        # from perfect calibration must not be excluded from 0 by its interval (test inversion at 0)
        lo0 = 0.0
    debiased = value - ref
    row.update(
        p_value=mc.p, p_mc_se=mc.se, perfect=ref, debiased=max(debiased, 0.0), ci_low=lo0, ci_high=hi0,
        interval="hull of the basic and percentile bootstrap (blocks, σ-bins fixed), clipped at 0; lower end 0 "
                 "unless the test rejects",
        test=f"Monte Carlo ({n_null} draws of {how})",
    )
    if debiased < 0:
        row["note"] = (f"debiased value ENCE − null mean = {debiased:.3g} clipped at 0: ENCE is no larger than a "
                       f"perfectly calibrated forecaster's at this N ({ref:.3g} on average; Pernot 2024)")


def sigma_bin_edges(sigma: np.ndarray, bins: np.ndarray, nb: int) -> tuple[np.ndarray, np.ndarray]:
    """Interior edges between consecutive non-empty σ-bins (midpoints between a bin's largest σ and the
    next bin's smallest), so that ``searchsorted(edges, σ, "right")`` reproduces the bins of distinct σ.

    Parameters
    ----------
    sigma : ndarray of shape (N,)
        Predicted standard deviations.
    bins : ndarray of shape (N,)
        σ-bin of each row.
    nb : int
        Number of bins.

    Returns
    -------
    edges : ndarray
        Interior edges between the non-empty bins.
    used : ndarray
        Indices of the non-empty bins.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    """
    lo = np.full(nb, np.inf)
    hi = np.full(nb, -np.inf)
    np.minimum.at(lo, bins, sigma)
    np.maximum.at(hi, bins, sigma)
    used = np.flatnonzero(np.isfinite(lo))
    return 0.5 * (hi[used[:-1]] + lo[used[1:]]), used


def _ensemble_ence_null(moments: np.ndarray, n_null: int, rng) -> np.ndarray:
    """ENCE under the exchangeability null of an ensemble from the per-bin laws of (Σσ², Σε²), each
    candidate target binned by its own σ at the observed edges: Σσ² ~ normal, Σε² given Σσ² ~ gamma
    (linear regression on Σσ²), bins independent; exact means, variances and covariances."""
    mx, vx, mv, vv, cxv = moments
    nb = mx.size
    vv = np.maximum(vv, 0.0)
    sd_v = np.sqrt(vv)
    v = mv[None, :] + sd_v[None, :] * rng.standard_normal((n_null, nb))
    v = np.maximum(v, 1e-12 * np.maximum(mv, 1e-300))
    with np.errstate(all="ignore"):
        beta = np.where(vv > 0, cxv / vv, 0.0)
        cond_mean = np.maximum(mx[None, :] + beta[None, :] * (v - mv[None, :]), 1e-300)
        cond_var = np.maximum(vx - beta * cxv, 1e-6 * vx)  # |ρ| ≤ 1 − 5e-7: rounding never leaves var ≤ 0
        cond_var = np.where(cond_var > 0, cond_var, 1.0)
        shape = cond_mean**2 / cond_var[None, :]
        scale = cond_var[None, :] / cond_mean
    x = rng.gamma(shape, scale)
    x[:, mx <= 0] = 0.0
    v[:, mv <= 0] = 0.0
    return _ence_from_bin_sums(v, x)


def _gamma_ence_null(r, b, nb, v_bin, m2, m4, n_null, rng) -> np.ndarray:
    """ENCE under H0 with σ fixed: per bin Σσ²z² ~ gamma with the exact mean Σσ²E z² and variance
    Σσ⁴ Var z² (Satterthwaite; exact when the σ in a bin are equal)."""
    var = r.var
    if np.ndim(m2) == 0 and np.ndim(m4) == 0 and r.z_ok is None:
        mean_bin = v_bin * float(m2)
        var_bin = np.bincount(b, weights=var * var, minlength=nb) * (float(m4) - float(m2) ** 2)
    else:
        m2r, m4r = np.zeros(r.n), np.zeros(r.n)  # rows with σ = 0 add nothing under H0
        m2r[r.z_ok if r.z_ok is not None else slice(None)] = m2
        m4r[r.z_ok if r.z_ok is not None else slice(None)] = m4
        m2r = np.nan_to_num(m2r, nan=1.0)
        m4r = np.nan_to_num(m4r, nan=3.0)
        mean_bin = np.bincount(b, weights=var * m2r, minlength=nb)
        var_bin = np.bincount(b, weights=var * var * np.maximum(m4r - m2r * m2r, 0.0), minlength=nb)
    okb = (v_bin > 0) & (mean_bin > 0) & (var_bin > 0)
    sims = np.zeros((n_null, nb))
    shape = np.where(okb, mean_bin**2 / np.where(okb, var_bin, 1.0), 1.0)
    scale = np.where(okb, var_bin / np.where(okb, mean_bin, 1.0), 1.0)
    sims[:, okb] = rng.gamma(shape[okb], scale[okb], size=(n_null, int(okb.sum())))
    sims[:, ~okb] = mean_bin[~okb]
    return _ence_from_bin_sums(v_bin, sims)


def _ence_from_bin_sums(s_var: np.ndarray, s_sq: np.ndarray) -> np.ndarray:
    """ENCE from per-bin Σσ² and Σε² (last axis = bins): mean over bins with Σσ² > 0 of |1 − √(Σε²/Σσ²)|."""
    with np.errstate(all="ignore"):
        term = np.abs(1.0 - np.sqrt(s_sq / s_var))
    ok = s_var > 0
    return np.where(ok, term, 0.0).sum(axis=-1) / np.maximum(ok.sum(axis=-1), 1)
