"""Heavy-tail-robust regression statistics (Pernot 2023–24): ZMS and mean log z², their tests and references, and
ENCE as a function of the number of σ-bins with its perfect-calibration curve.

* **ZMS** = mean z² (:func:`calib_core.metrics.regression.zms`; Pernot 2023, "Calibration in machine learning
  uncertainty quantification: beyond consistency to target adaptivity", APL Mach. Learn. 1, 046121).  Under H0
  (every target a draw from its predicted law) E z_i² = 1 for any law with a variance, and Σz² has the exact per-row
  moments of the null model: for Gaussians Σz² ~ χ²_N exactly; otherwise the gamma law with the exact mean Σ E z_i²
  and variance Σ Var z_i² (Satterthwaite, as the std z test).  Its interval: bootstrap-t on log ZMS with the
  delta-method standard error √((m₄ − m₂²)/N)/m₂ from the block sums of z² and z⁴.
* **mean log z²** (:func:`calib_core.metrics.regression.mean_log_z2`): the log-based variant.  Pernot (2024,
  arXiv 2402.10043, "Negative impact of heavy-tailed uncertainty and error distributions on the reliability of
  calibration statistics for machine learning regression tasks") shows that means of z² (and of ε², σ²) and their
  bootstrap intervals become unreliable when z has few finite moments; log z² has all its moments, so its mean is
  a statistic whose interval and test stay valid under heavy tails.  Its reference depends on the error law: for
  calibrated Gaussian z it is E log χ²₁ = ψ(½) + log 2 ≈ −1.2704 with variance ψ′(½) = π²/2 (a normal test on the
  mean, exact moments); for Student-t_ν errors scaled to variance 1 it is ψ(½) − ψ(ν/2) + log(ν − 2)
  (:func:`log_z2_moments_student`).  For the other layouts (quantile sets, ensembles) the reference is simulated
  from the calibrated forecaster (one draw per row on a random subsample), and the test's variance adds the
  reference's Monte-Carlo variance.
* **ENCE against the number of bins** (:func:`ence_by_bins`): Pernot (2024, arXiv 2402.10043 §ENCE; 2403.00423)
  shows that ENCE grows with the number of σ-bins B even under perfect calibration (each bin's RMSE/RMV ratio is
  estimated from N/B rows, so E|1 − RMSE/RMV| ~ 1/√(2N/B)).  The curve of ENCE against B, next to its null mean
  and band at every B, tells a real conditional miscalibration (ENCE above the band at every B) from the
  binning's noise floor.

Cost: everything here is computed from per-row quantities already known (z², log z²) and, for ENCE by bins, from
cumulative sums of σ², ε² and σ⁴ in σ order (one pass; each bin count then costs O(B), not O(N)).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from ..base import significance as sig
from ..base.predictions import PredictionSet, iter_model_distributions
from .regression import LOG_CHI2_1_MEAN, LOG_CHI2_1_VAR, Binning, RegressionRows

__all__ = [
    "LOG_CHI2_1_MEAN",
    "LOG_CHI2_1_VAR",
    "log_z2_moments_student",
    "zms_test",
    "mean_log_z2_test",
    "log_zms_standard_error",
    "simulated_log_z2_null",
    "ence_by_bins",
    "ence_by_bins_tables",
    "DEFAULT_BIN_COUNTS",
]

#: Bin counts of the ENCE-against-bins curve (the page's σ-bin slider runs 5–50).
DEFAULT_BIN_COUNTS = (2, 3, 4, 5, 7, 10, 15, 20, 25, 30, 40, 50, 75, 100)


def log_z2_moments_student(nu: float) -> tuple[float, float]:
    """(E log z², Var log z²) for z = t·√((ν − 2)/ν), t ~ Student-t_ν (a unit-variance Student law, ν > 2).

    t² = χ²₁/(χ²_ν/ν) gives E log t² = ψ(½) + log 2 − ψ(ν/2) − log(2/ν) and Var log t² = ψ′(½) + ψ′(ν/2), so
    E log z² = ψ(½) − ψ(ν/2) + log(ν − 2).  ν → ∞ gives the Gaussian −1.2704 and π²/2.

    Parameters
    ----------
    nu : float
        Degrees of freedom ν > 2.

    Returns
    -------
    mean : float
        E log z².
    var : float
        Var log z².

    References
    ----------
    Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the reliability
    of calibration statistics for machine learning regression tasks. arXiv:2402.10043.

    Johnson, N. L., Kotz, S. & Balakrishnan, N. (1995). Continuous Univariate Distributions, vol. 2, 2nd ed.
    Wiley (Student's t, ch. 28).
    """
    if not nu > 2:
        raise ValueError(f"a unit-variance Student-t law needs ν > 2 degrees of freedom, got {nu}")
    mean = float(special.digamma(0.5) - special.digamma(nu / 2.0) + np.log(nu - 2.0))
    var = float(special.polygamma(1, 0.5) + special.polygamma(1, nu / 2.0))
    return mean, var


def zms_test(sum_z2: float, mean_null: float, var_null: float) -> float:
    """Two-sided p-value of Σz² against the gamma law with the null's exact mean and variance.

    The null mean Σ E z_i² and variance Σ Var z_i² are matched by a gamma law (χ²_N exactly for Gaussians: mean N,
    variance 2N).

    Parameters
    ----------
    sum_z2 : float
        Observed Σ_i z_i².
    mean_null : float
        Its mean under calibration.
    var_null : float
        Its variance under calibration.

    Returns
    -------
    float
        The two-sided p-value.

    References
    ----------
    Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
    target adaptivity. APL Machine Learning 1(4), 046121.

    Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance components. Biometrics
    Bulletin 2(6), 110–114.
    """
    return sig.gamma_p(float(sum_z2), float(mean_null), float(var_null))


def mean_log_z2_test(value: float, n: int, ref: float, var_per_row: float, ref_var: float = 0.0) -> float:
    """Two-sided normal p-value of a mean of n values of log z² against a reference.

    z = (value − ref)/√(var_per_row/n + ref_var).

    Parameters
    ----------
    value : float
        The observed mean of log z².
    n : int
        Number of rows it averages.
    ref : float
        Its value under calibration (E log χ²₁ ≈ −1.2704 for Gaussians).
    var_per_row : float
        Per-row null variance of log z² (π²/2 for Gaussians).
    ref_var : float, default 0.0
        Monte-Carlo variance of a simulated ``ref``.

    Returns
    -------
    float
        The two-sided p-value (NaN when undefined).

    References
    ----------
    Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the reliability
    of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    """
    se = np.sqrt(var_per_row / max(n, 1) + ref_var)
    if not (se > 0 and np.isfinite(value)):
        return float("nan")
    return float(sig.normal_p((value - ref) / se))


def log_zms_standard_error(m2: np.ndarray, m4: np.ndarray, nz: np.ndarray) -> np.ndarray:
    """Delta-method standard error of log ZMS, √((m₄ − m₂²)/N)/m₂, vectorised over replicates.

    Parameters
    ----------
    m2 : ndarray
        Raw moment m₂ = mean z².
    m4 : ndarray
        Raw moment m₄ = mean z⁴.
    nz : ndarray
        Number of rows N behind each moment.

    Returns
    -------
    ndarray
        The standard errors.

    References
    ----------
    Oehlert, G. W. (1992). A note on the delta method. The American Statistician 46(1), 27–29.

    Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the reliability
    of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    """
    with np.errstate(all="ignore"):
        return np.sqrt(np.maximum(m4 - m2 * m2, 0.0) / nz) / m2


def simulated_log_z2_null(rows: RegressionRows, rng: np.random.Generator, *, sample: int = 20_000
                          ) -> tuple[float, float, float]:
    """Mean and variances of log z² for a perfectly calibrated forecaster with these predictions.

    ``sample`` random rows (with replacement), one calibrated draw each (``dist.calibrated_draw``: y* ~ F_i, or the
    swapped member for ensembles).

    Parameters
    ----------
    rows : RegressionRows
        The rows (their predictions).
    rng : numpy.random.Generator
        Random numbers.
    sample : int, default 20000
        Rows drawn.

    Returns
    -------
    mean : float
        Mean of log z² under calibration.
    var_per_row : float
        Per-row variance of log z².
    mc_var : float
        Monte-Carlo variance of ``mean``.

    References
    ----------
    Pernot, P. (2024). Validation of ML-UQ calibration statistics using simulated reference values: a
    sensitivity analysis. arXiv:2403.00423.

    Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the reliability
    of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    """
    take = np.sort(rng.integers(0, rows.n, size=sample))
    sub = rows.dist.take(take)
    y_star, d_star = sub.calibrated_draw(rows.y[take], rng)
    mu = np.asarray(d_star.mean(), dtype=float)
    sd = np.asarray(d_star.std(), dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lz = 2.0 * np.log(np.abs((y_star - mu) / sd))
    lz = lz[np.isfinite(lz)]
    if lz.size < 2:
        return float("nan"), float("nan"), float("nan")
    var = float(lz.var(ddof=1))
    return float(lz.mean()), var, var / lz.size


# =============================================================================================
# ENCE against the number of σ-bins
# =============================================================================================


def _count_bin_starts(n: int, n_bins: int) -> np.ndarray:
    """Start positions (in σ order) of B equal-count bins, as :func:`calib_core.base.binning.equal_count_bins` cuts
    them: bin k holds the sorted positions ⌈kN/B⌉ … ⌈(k + 1)N/B⌉ − 1."""
    return (np.arange(n_bins + 1, dtype=np.int64) * n + n_bins - 1) // n_bins


def ence_by_bins(
    rows: RegressionRows,
    *,
    bin_counts: Sequence[int] = DEFAULT_BIN_COUNTS,
    binning: Binning = "count",
    n_null: int = 1_000,
    level: float = 0.95,
    seed: int | None = 0,
) -> pd.DataFrame:
    """ENCE at each number of σ-bins B, with its value under perfect calibration (null mean and central band).

    ENCE grows with B under perfect calibration (Pernot 2024).  ENCE_B = (1/B′) Σ_b |1 − √(Σ_b ε²/Σ_b σ²)| over
    the B′ non-empty bins (Levi et al. 2019, eq. 8, in its RMSE/RMV form), equal-count bins of sorted σ
    (``binning="count"``) or equal-width ones.  The null (σ fixed, targets drawn from the predictions, Gaussian z):
    per bin Σσ²z² is gamma with the exact mean Σσ² and variance 2Σσ⁴ (exact when a bin's σ are equal, Satterthwaite
    otherwise) — the same null as the ENCE test of :func:`calib_core.inference.regression.infer_regression`, with
    ``n_null`` draws per B.  ``ence`` equals :func:`calib_core.metrics.regression.ence` at the same B and binning
    (bins whose σ are all 0 left out).

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    bin_counts : sequence of int, default DEFAULT_BIN_COUNTS
        The numbers of bins B.
    binning : {"count", "width"}, default "count"
        Equal-count or equal-width σ-bins.
    n_null : int, default 1000
        Null draws per B.
    level : float, default 0.95
        Level of the central null band.
    seed : int or None, default 0
        Seed of the null draws.

    Returns
    -------
    pandas.DataFrame
        One row per B: ``n_bins``, ``ence``, ``null_mean``, ``null_low``, ``null_high`` (the band), ``p_value``
        (Monte Carlo, ENCE ≥ observed), ``excess`` (ENCE − null mean) and ``rows_per_bin``.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the reliability
    of calibration statistics for machine learning regression tasks. arXiv:2402.10043.

    Pernot, P. (2024). Validation of ML-UQ calibration statistics using simulated reference values: a
    sensitivity analysis. arXiv:2403.00423.
    """
    if binning not in ("count", "width"):
        raise ValueError(f"binning must be 'count' or 'width', got {binning!r}")
    rng = np.random.default_rng(np.random.SeedSequence([0 if seed is None else seed, 16]))
    srt = rows.sigma_order
    var = rows.var[srt]
    sq = rows.sq_err[srt]
    n = var.size
    cum_v = np.concatenate([[0.0], np.cumsum(var)])
    cum_e = np.concatenate([[0.0], np.cumsum(sq)])
    cum_v2 = np.concatenate([[0.0], np.cumsum(var * var)])
    sig_sorted = rows.sigma_sorted
    a = (1.0 - level) / 2.0
    out = []
    for b in sorted({int(x) for x in bin_counts if int(x) >= 1}):
        if binning == "count":
            starts = _count_bin_starts(n, b)
        else:
            lo, hi = float(sig_sorted[0]), float(sig_sorted[-1])
            if hi <= lo:  # as calib_core.base.binning.equal_width_bins
                hi = lo + 1.0 if lo == 0 else lo + abs(lo) * 1e-9 + 1e-300
            edges = np.linspace(lo, hi, b + 1)[1:-1]
            starts = np.concatenate([[0], np.searchsorted(sig_sorted, edges, side="left"), [n]])
        s_v = np.diff(cum_v[starts])
        s_e = np.diff(cum_e[starts])
        s_v2 = np.diff(cum_v2[starts])
        cnt = np.diff(starts)
        used = (cnt > 0) & (s_v > 0)
        s_v, s_e, s_v2 = s_v[used], s_e[used], s_v2[used]
        ence = float(np.mean(np.abs(1.0 - np.sqrt(s_e / s_v)))) if used.any() else float("nan")
        shape = s_v * s_v / (2.0 * s_v2)
        scale = 2.0 * s_v2 / s_v
        draws = rng.gamma(shape, scale, size=(n_null, s_v.size))
        null = np.mean(np.abs(1.0 - np.sqrt(draws / s_v)), axis=1)
        mc = sig.monte_carlo_p(ence, null, "greater")
        out.append({"n_bins": b, "ence": ence, "null_mean": float(null.mean()),
                    "null_low": float(np.quantile(null, a)), "null_high": float(np.quantile(null, 1.0 - a)),
                    "p_value": mc.p, "excess": ence - float(null.mean()), "rows_per_bin": n / b})
    return pd.DataFrame(out, columns=["n_bins", "ence", "null_mean", "null_low", "null_high", "p_value", "excess",
                                      "rows_per_bin"])


def ence_by_bins_tables(prediction_set: PredictionSet, **options: Any) -> dict[str, pd.DataFrame]:
    """:func:`ence_by_bins` of every model of a regression prediction set (all its rows per model).

    Models with fewer than 2 rows or no predictive distribution are left out.

    Parameters
    ----------
    prediction_set : PredictionSet
        A regression :class:`~calib_core.base.predictions.PredictionSet`.
    **options
        ``bin_counts``, ``binning``, ``n_null``, ``level``, ``seed`` of :func:`ence_by_bins`.

    Returns
    -------
    dict of str to pandas.DataFrame
        Model → table.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Pernot, P. (2024). Validation of ML-UQ calibration statistics using simulated reference values: a
    sensitivity analysis. arXiv:2403.00423.
    """
    return {model: ence_by_bins(RegressionRows(y, dist), **options)
            for model, y, dist in iter_model_distributions(prediction_set)}
