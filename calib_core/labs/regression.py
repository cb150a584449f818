"""Shared pieces of the regression labs (labs 1–5): diagram tables and conditional coverage by bins.

Every lab compares a few forecasters of the same targets.  :func:`diagram_tables` gives the data
behind the usual diagrams (Kuleshov curve with its band, Levi σ-bins, PIT histogram) from the core's
own builders (``calib_core.diagrams.regression``), and :func:`binned_coverage_table` the observed
coverage of the central interval per equal-count bin of any per-row key (σ, a feature x, the
Cauchy scale γ …): calibration *conditional* on that key, which average (quantile) calibration
does not promise (Levi et al. 2019 §2; Utpala & Rai §4.3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..base.binning import bin_sums, equal_count_bins
from ..base.regression import PredictiveDistribution
from ..diagrams.regression import calibration_curve_table, levi_bins_table, pit_histogram_table
from ..metrics.regression import RegressionRows

__all__ = ["diagram_tables", "binned_coverage_table", "key_bin_mask", "rows_of"]


def rows_of(y: np.ndarray, dist: PredictiveDistribution) -> RegressionRows:
    """The core's per-row quantities (ε, z, PIT u = F(y), σ) of (y, dist).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The forecasts.

    Returns
    -------
    RegressionRows
        The prepared rows.

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    return RegressionRows(np.asarray(y, dtype=float), dist)


def diagram_tables(
    y: np.ndarray,
    dist: PredictiveDistribution,
    *,
    n_bins: int = 15,
    n_resamples: int = 100,
    pit_bins: int = 20,
    seed: int = 0,
    levi: bool = True,
) -> dict[str, pd.DataFrame]:
    """The data behind a lab's usual diagrams of (y, dist).

    ``calibration_curve`` (Kuleshov et al. 2018: p̂_j = mean(u ≤ p_j) with the Bin(N, p_j)/N 95% band),
    ``pit_histogram`` and, when ``levi`` (σ finite), ``levi_bins`` (Levi et al. 2019: RMV_j = sqrt(mean σ²) against
    RMSE_j = sqrt(mean ε²) per equal-count σ-bin, 90% bootstrap interval).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The forecasts.
    n_bins : int, default 15
        Levi σ-bins.
    n_resamples : int, default 100
        Bootstrap replicates of the Levi interval.
    pit_bins : int, default 20
        Bins of the PIT histogram.
    seed : int, default 0
        Seed of the bootstrap.
    levi : bool, default True
        Also the Levi bins (False when σ is not finite, e.g. a Cauchy).

    Returns
    -------
    dict of str to DataFrame
        The tables by name.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.
    """
    rows = rows_of(y, dist)
    out = {
        "calibration_curve": calibration_curve_table(rows),
        "pit_histogram": pit_histogram_table(rows, n_bins=pit_bins),
    }
    if levi:
        out["levi_bins"] = levi_bins_table(rows, n_bins=n_bins, binning="count", n_resamples=n_resamples, seed=seed)
    return out


def binned_coverage_table(
    key: np.ndarray,
    y: np.ndarray,
    dist: PredictiveDistribution,
    coverage: float = 0.9,
    n_bins: int = 10,
    band: float = 0.95,
) -> pd.DataFrame:
    """Observed coverage of the central ``coverage`` interval per equal-count bin of ``key``.

    Rows are sorted by ``key`` and split into B equal-count bins (the binning engine's convention); per bin j:
    observed_j = mean 1{F⁻¹((1−c)/2) ≤ y ≤ F⁻¹((1+c)/2)} over its n_j rows.  A forecaster calibrated
    *conditionally on the key* has observed_j ≈ c; ``band_low``/``band_high`` are the central ``band`` range of
    Bin(n_j, c)/n_j, where such a forecaster's bin falls.

    Parameters
    ----------
    key : ndarray of shape (n,)
        The per-row key (σ, a feature x, the Cauchy scale γ …).
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The forecasts.
    coverage : float, default 0.9
        c, the interval's nominal coverage.
    n_bins : int, default 10
        B.
    band : float, default 0.95
        Level of the binomial band.

    Returns
    -------
    DataFrame
        ``bin, count, key_low, key_high, key_mean, observed, expected, band_low, band_high`` (non-empty bins).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    """
    key = np.asarray(key, dtype=float)
    y = np.asarray(y, dtype=float)
    order = np.argsort(key, kind="stable")
    b = equal_count_bins(key, n_bins, order=order)
    lo, hi = dist.interval(coverage)
    inside = ((y >= lo) & (y <= hi)).astype(float)
    cnt, s_key, s_in = bin_sums(b, n_bins, key, inside)
    ks = key[order]
    starts = (np.cumsum(cnt) - cnt).astype(np.int64)
    ok = cnt > 0
    k_low = np.full(n_bins, np.nan)
    k_high = np.full(n_bins, np.nan)
    k_low[ok] = ks[starts[ok]]
    k_high[ok] = ks[starts[ok] + cnt[ok].astype(np.int64) - 1]
    a = (1.0 - band) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = s_in / cnt
        band_low = stats.binom.ppf(a, cnt, coverage) / cnt
        band_high = stats.binom.ppf(1.0 - a, cnt, coverage) / cnt
        key_mean = s_key / cnt
    table = pd.DataFrame(
        {
            "bin": np.arange(n_bins),
            "count": cnt.astype(np.int64),
            "key_low": k_low,
            "key_high": k_high,
            "key_mean": key_mean,
            "observed": observed,
            "expected": np.full(n_bins, float(coverage)),
            "band_low": band_low,
            "band_high": band_high,
        }
    )
    return table[table["count"] > 0].reset_index(drop=True)


def key_bin_mask(key: np.ndarray, n_bins: int, bins: tuple[int, ...] | list[int]) -> np.ndarray:
    """Rows whose equal-count bin of ``key`` (the binning of :func:`binned_coverage_table`) is in ``bins``.

    Parameters
    ----------
    key : ndarray of shape (n,)
        The per-row key.
    n_bins : int
        B.
    bins : tuple or list of int
        Selected bins.

    Returns
    -------
    ndarray of shape (n,) of bool
        The row mask.

    Examples
    --------
    >>> key_bin_mask(np.arange(10.0), 5, [0, 4]).tolist()
    [True, True, False, False, False, False, False, False, True, True]

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    key = np.asarray(key, dtype=float)
    b = equal_count_bins(key, n_bins, order=np.argsort(key, kind="stable"))
    return np.isin(b, np.asarray(list(bins), dtype=np.int64))


def ks_sentence(ks: dict[str, float], bound: float, n: int) -> str:
    """Both KS distances against the DKW bound ε = sqrt(log(2/α)/(2N)) (α = 1%): below it, a forecaster is
    indistinguishable from perfect quantile calibration at this N (Dvoretzky–Kiefer–Wolfowitz, Massart 1990)."""
    parts = ", ".join(f"{m} {v:.4f}" for m, v in ks.items())
    above = [m for m, v in ks.items() if v > bound]
    every = "both" if len(ks) == 2 else "all"
    if not above:
        verdict = f"{every} below it: quantile calibration cannot tell them apart"
    elif len(above) == len(ks):
        verdict = f"{every} above it: each is distinguishable from perfect quantile calibration"
    else:
        rest = "the other" if len(ks) - len(above) == 1 else "the others"
        verdict = f"{' and '.join(above)} above it, {rest} below"
    return f"KS distance {parts} against the DKW bound {bound:.4f} (α = 1%, N = {n:,}): {verdict}."

