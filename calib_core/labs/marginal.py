"""Lab 3 — the degenerate marginal forecaster (Utpala & Rai, "Quantile regularization", §4.3, claim 5).

Data (QR §4.3): x ~ N(0, s_x²), y | x ~ N(a·x, σ²); the paper takes a = 5, σ = 1, s_x = 4 (it writes
N(x | 0, 4) and the marginal N(0, 401) = N(0, a²s_x² + σ²), so 4 is the standard deviation).  Two forecasters:

* **ideal** N(a·x, σ²), the true conditional distribution;
* **marginal** N(0, a²s_x² + σ²), the same distribution for every x — the marginal of y.

Claim 5: a forecaster that outputs the marginal of Y for every x is perfectly quantile calibrated
(P(F(Y) ≤ p) = p because F is the CDF of Y itself).  So the Kuleshov curve and the PIT cannot tell the two
apart; what can: sharpness sqrt(mean σ²) (√401 ≈ 20 against 1), the Levi diagram (every σ-bin of the marginal
piles up at RMV = √401, Cv = 0), the proper scores (CRPS, NLL) and the coverage conditional on x (the
marginal's intervals cover everything near x = 0 and nothing at large |x|).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base.regression import Gaussian, PredictiveDistribution
from ..diagrams.regression import pit_histogram_table
from ..metrics import regression as rm
from .regression import binned_coverage_table, diagram_tables, key_bin_mask, ks_sentence, rows_of

__all__ = ["IDEAL", "MARGINAL", "MarginalLab", "run_marginal", "marginal_findings"]

IDEAL = "ideal N(a·x, σ²)"
MARGINAL = "marginal N(0, a²s²+σ²)"


@dataclass(frozen=True)
class MarginalLab:
    """Result of :func:`run_marginal`.

    Attributes
    ----------
    n : int
        Rows.
    coverage : float
        c of the central interval.
    marginal_sigma : float
        The marginal's σ = sqrt(a²s_x² + σ²).
    dkw_bound : float
        The DKW bound at this N.
    metrics : DataFrame
        One row per forecaster.
    tables : dict of str to dict of str to DataFrame
        Per forecaster: calibration_curve, pit_histogram, levi_bins, coverage_by_x.
    n_bins : int
        Bins (σ and x).
    x, y : ndarray
        Inputs and targets.
    dists : dict of str to PredictiveDistribution
        The forecasters.

    References
    ----------
    .. [1] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """

    n: int
    coverage: float
    marginal_sigma: float
    dkw_bound: float
    metrics: pd.DataFrame
    tables: dict[str, dict[str, pd.DataFrame]]
    n_bins: int
    x: np.ndarray
    y: np.ndarray
    dists: dict[str, PredictiveDistribution]

    def value(self, model: str, metric: str) -> float:
        m = self.metrics
        return float(m.loc[m["model"] == model, metric].iloc[0])

    def selected_pit(self, bins: tuple[int, ...]) -> dict[str, pd.DataFrame] | None:
        """PIT histogram of every forecaster on the rows of the x-bins ``bins`` (None with fewer than 2 rows):
        calibration given the input — the marginal's PIT piles up at 0 or 1 at the extremes of x."""
        mask = key_bin_mask(self.x, self.n_bins, bins)
        if mask.sum() < 2:
            return None
        return {name: pit_histogram_table(rows_of(self.y[mask], d.take(mask))) for name, d in self.dists.items()}


def run_marginal(
    n: int = 5000,
    *,
    seed: int = 0,
    slope: float = 5.0,
    noise: float = 1.0,
    x_std: float = 4.0,
    n_bins: int = 15,
    coverage: float = 0.9,
    n_resamples: int = 100,
) -> MarginalLab:
    """QR §4.3 with y | x ~ N(slope·x, noise²), x ~ N(0, x_std²): the ideal and the marginal forecaster.

    Metrics per forecaster (``calib_core.metrics.regression``): calibration RMSE, max |p̂ − p| (KS), sharpness, Cv,
    ENCE (``n_bins`` σ-bins), CRPS, NLL, RMSE, and the smallest / largest coverage of the central ``coverage``
    interval over ``n_bins`` equal-count bins of x.

    Parameters
    ----------
    n : int, default 5000
        Rows.
    seed : int, default 0
        Seed of the simulation.
    slope : float, default 5.0
        a.
    noise : float, default 1.0
        σ.
    x_std : float, default 4.0
        s_x.
    n_bins : int, default 15
        σ-bins and x-bins.
    coverage : float, default 0.9
        c of the central interval.
    n_resamples : int, default 100
        Bootstrap replicates of the Levi interval.

    Returns
    -------
    MarginalLab
        Metrics and tables of both forecasters.

    References
    ----------
    .. [1] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Gneiting, T., & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       Journal of the American Statistical Association, 102(477), 359–378.
    """
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, x_std, n)
    y = rng.normal(slope * x, noise)
    marginal_sigma = float(np.sqrt(slope**2 * x_std**2 + noise**2))
    forecasters = {
        IDEAL: Gaussian(slope * x, np.full(n, noise)),
        MARGINAL: Gaussian(np.zeros(n), np.full(n, marginal_sigma)),
    }
    rows, tables = [], {}
    keys = ("calibration_rmse", "max_calibration_deviation", "sharpness", "cv", "ence", "crps", "nll", "rmse")
    for name, dist in forecasters.items():
        tab = diagram_tables(y, dist, n_bins=n_bins, n_resamples=n_resamples, seed=seed)
        tab["coverage_by_x"] = binned_coverage_table(x, y, dist, coverage, n_bins)
        tables[name] = tab
        s = rm.summary_statistics(rows_of(y, dist), n_bins=n_bins)
        cov = tab["coverage_by_x"]["observed"]
        rows.append({"model": name, **{k: float(s[k]) for k in keys},
                     "min_bin_coverage": float(cov.min()), "max_bin_coverage": float(cov.max())})
    dkw = float(np.sqrt(np.log(2.0 / 0.01) / (2.0 * n)))
    return MarginalLab(n=n, coverage=coverage, marginal_sigma=marginal_sigma, dkw_bound=dkw,
                       metrics=pd.DataFrame(rows), tables=tables, n_bins=n_bins, x=x, y=y, dists=forecasters)


def marginal_findings(result: MarginalLab) -> list[str]:
    """What the lab's numbers say, computed from :attr:`MarginalLab.metrics` (nothing fixed).

    KS against the DKW bound, sharpness, coverage given x (range over x-bins) and which forecaster the proper scores
    prefer.

    Parameters
    ----------
    result : MarginalLab
        A run of :func:`run_marginal`.

    Returns
    -------
    list of str
        One sentence per finding, plain text.

    References
    ----------
    .. [1] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    .. [2] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """
    m = result.metrics.set_index("model")
    out = [ks_sentence({k: float(m.loc[k, "max_calibration_deviation"]) for k in (IDEAL, MARGINAL)},
                       result.dkw_bound, result.n)]
    s_i, s_m = float(m.loc[IDEAL, "sharpness"]), float(m.loc[MARGINAL, "sharpness"])
    out.append(f"Sharpness sqrt(mean σ²): {s_i:.3g} (ideal) against {s_m:.3g} (marginal), "
               f"{s_m / s_i:.1f}× wider; ENCE {float(m.loc[IDEAL, 'ence']):.3f} and "
               f"{float(m.loc[MARGINAL, 'ence']):.3f}, Cv 0 for both (each σ is constant).")
    lo_i, hi_i = float(m.loc[IDEAL, "min_bin_coverage"]), float(m.loc[IDEAL, "max_bin_coverage"])
    lo_m, hi_m = float(m.loc[MARGINAL, "min_bin_coverage"]), float(m.loc[MARGINAL, "max_bin_coverage"])
    tail = ("it ignores x" if (hi_m - lo_m) > 2 * (hi_i - lo_i) else "about as even as the ideal's here")
    out.append(f"Coverage of the central {result.coverage:.0%} interval per x-bin: {lo_i:.0%}–{hi_i:.0%} (ideal), "
               f"{lo_m:.0%}–{hi_m:.0%} (marginal): {tail}.")
    diff = {name: float(m.loc[MARGINAL, name]) - float(m.loc[IDEAL, name]) for name in ("crps", "nll")}
    tie = all(abs(d) <= 1e-9 * abs(float(m.loc[IDEAL, name])) for name, d in diff.items())
    better = [name for name, d in diff.items() if d > 0]
    scores = f"CRPS {float(m.loc[IDEAL, 'crps']):.3g} vs {float(m.loc[MARGINAL, 'crps']):.3g}, " \
             f"NLL {float(m.loc[IDEAL, 'nll']):.3g} vs {float(m.loc[MARGINAL, 'nll']):.3g}"
    prefer = ("a tie: with these sliders the two forecasters coincide" if tie else
              "both prefer the ideal forecaster" if len(better) == 2 else
              "both prefer the marginal forecaster" if not better else "they disagree")
    out.append(f"Proper scores ({scores}): {prefer}.")
    return out
