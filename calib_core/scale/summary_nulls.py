"""The null laws behind the regression tests a summary supports: the exact multinomial null of the calibration-curve
statistics (:func:`curve_null`, the in-memory construction and seeds), the KS p-value (:func:`ks_p_value`) and
ENCE's Gaussian null from the summary's exact Σσ² and Σσ⁴ (:func:`gaussian_ence_test`).  Used by
:mod:`calib_core.scale.summary_report`.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..base import significance as sig
from ..base.mergeable import exact_float

__all__ = ["curve_null"]


def _ence_of(s_var: np.ndarray, s_sq: np.ndarray) -> np.ndarray:
    """ENCE from per-bin Σσ² and Σε² (last axis = bins): mean over bins with Σσ² > 0 of |1 − √(Σε²/Σσ²)|."""
    with np.errstate(all="ignore"):
        term = np.abs(1.0 - np.sqrt(s_sq / s_var))
    ok = s_var > 0
    return np.where(ok, term, 0.0).sum(axis=-1) / np.maximum(ok.sum(axis=-1), 1)


def gaussian_ence_test(row: dict, value: float, part: dict, n_null: int, n_boot: int, level: float,
                        seed: int) -> None:
    """ENCE of a Gaussian forecaster against its null with σ fixed, as ``regression.inference`` does it.

    Per σ-bin Σε² = Σσ²z² ~ gamma with the exact mean Σσ² and variance 2Σσ⁴ (Satterthwaite; Levi et al. 2019, Pernot
    2024), from the summary's exact Σσ² and Σσ⁴; the interval is the basic bootstrap of the block sums (σ-bins fixed),
    clipped at 0, with lower end 0 unless the test rejects at 1 − ``level``.

    Parameters
    ----------
    row : dict
        ENCE's row of the metric table, updated in place (p-value, null mean, debiased value, interval).
    value : float
        The observed ENCE.
    part : dict of str to ndarray
        The summary part.
    n_null : int
        Null draws.
    n_boot : int
        Bootstrap replicates (0: no interval).
    level : float
        Confidence level.
    seed : int
        Seed of the draws.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance components.
       Biometrics Bulletin, 2(6), 110–114.
    .. [3] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    .. [4] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 16]))
    v_bin = exact_float(part["x:var"], part.get("nf:var"))
    var_bin = 2.0 * exact_float(part["x:var2"], part.get("nf:var2"))
    ok = (v_bin > 0) & (var_bin > 0) & np.isfinite(var_bin)
    sims = np.tile(v_bin, (n_null, 1))
    shape = np.where(ok, v_bin**2 / np.where(ok, var_bin, 1.0), 1.0)
    scale = np.where(ok, var_bin / np.where(ok, v_bin, 1.0), 1.0)
    sims[:, ok] = rng.gamma(shape[ok], scale[ok], size=(n_null, int(ok.sum())))
    null = _ence_of(v_bin, sims)
    mc = sig.monte_carlo_p(value, null, "greater")
    ref = float(null.mean())
    row.update(p_value=mc.p, p_mc_se=mc.se, perfect=ref, debiased=value - ref,
               test=f"Monte Carlo ({n_null} draws of per-bin Σσ²z², gamma with the bin's exact null mean and "
                    "variance, from the summary's Σσ² and Σσ⁴)")
    if n_boot > 0:
        bins = part["blk_bins"]
        w = sig.block_bootstrap_weights(bins.shape[0], n_boot, rng)
        rep = _ence_of(np.einsum("rg,gb->rb", w, bins[..., 1]), np.einsum("rg,gb->rb", w, bins[..., 2]))
        lo, hi = sig.basic_interval(value, rep, level)
        lo0, hi0 = max(0.0, float(lo[0])), max(0.0, float(hi[0]))
        if mc.p > 1.0 - level:
            lo0 = 0.0
        row.update(ci_low=lo0, ci_high=hi0,
                   interval="basic bootstrap (blocks, σ-bins fixed), clipped at 0; lower end 0 unless the test rejects")


def ks_p_value(d: float, n: int) -> float:
    """Two-sided KS p-value of D = d with N uniform PITs (as ``regression.inference``).

    The exact law up to N = 20,000, beyond it Kolmogorov's limit with Stephens' correction (√N + 0.12 + 0.11/√N)·D.

    Parameters
    ----------
    d : float
        The KS distance.
    n : int
        N.

    Returns
    -------
    float
        The p-value.

    References
    ----------
    .. [1] Stephens, M. A. (1970). Use of the Kolmogorov–Smirnov, Cramér–von Mises and related statistics without
       extensive tables. Journal of the Royal Statistical Society B, 32(1), 115–122.
    """
    if n <= 20_000:
        return float(stats.kstwo.sf(d, n))
    k = np.sqrt(n) + 0.12 + 0.11 / np.sqrt(n)
    return float(stats.kstwobign.sf(k * d))


def curve_null(n: int, levels: tuple[float, ...], qce_levels: tuple[float, ...], n_null: int) -> dict[str, np.ndarray]:
    """Null draws of the calibration-curve statistics for N uniform PITs, exact.

    calibration_rmse (on ``levels``) and the l2 QCE (on ``qce_levels``) from multinomial counts of the cells between
    the grid points — the construction (and the seed) of the in-memory curve tests in ``regression.inference``, so
    the p-values agree with ``cc.diagnose``'s.

    Parameters
    ----------
    n : int
        N, the number of PITs.
    levels : tuple of float
        The calibration-curve levels.
    qce_levels : tuple of float
        The quantile calibration error's levels.
    n_null : int
        Number of null draws.

    Returns
    -------
    dict of str to ndarray of shape (n_null,)
        ``calibration_rmse`` and ``quantile_calibration_error`` of every draw.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [2] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    """
    rng = np.random.default_rng(np.random.SeedSequence([20240513, n, n_null]))
    lev = np.asarray(levels, dtype=float)
    qlev = np.asarray(qce_levels, dtype=float)
    cuts = np.unique(np.concatenate([lev, qlev, [0.0, 1.0]]))
    cuts = cuts[(cuts > 0) & (cuts < 1)]
    edges = np.concatenate([[0.0], cuts, [1.0]])
    counts = rng.multinomial(n, np.diff(edges), size=n_null)
    cdf = np.concatenate([np.zeros((n_null, 1)), np.cumsum(counts, axis=1)], axis=1) / n
    p_lev = cdf[:, np.searchsorted(edges, np.clip(lev, 0, 1))]
    p_lev[:, lev <= 0] = 0.0
    p_q = cdf[:, np.searchsorted(edges, qlev)]
    return {"calibration_rmse": np.sqrt(np.mean((p_lev - lev) ** 2, axis=1)),
            "quantile_calibration_error": np.mean((p_q - qlev) ** 2, axis=1)}
