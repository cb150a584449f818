"""Lab 2 — the Cauchy example (Levi et al. 2019, §2): quantile calibrated, yet useless.

Targets y_t ~ N(0, 1); the forecaster outputs Cauchy(0, γ_t) with γ_t = |z_t|, z_t ~ N(0, 1) drawn
independently of y_t (Levi eq. 4).  Its PIT is F_t(y_t) = F_C(y_t/|z_t|) with F_C the Cauchy(0, 1) CDF, and
the ratio of two independent standard normals is Cauchy(0, 1) (the absolute value does not matter by
symmetry), so P(F_t(y_t) ≤ p) = p exactly: the forecaster is perfectly quantile calibrated although its
scale carries no information about y_t.  The honest forecaster N(0, 1) is calibrated too.  What tells
them apart is calibration *conditional on the forecast*: the central c-interval [−γ_t·tan(πc/2), γ_t·tan(πc/2)]
covers y_t with probability 2Φ(γ_t tan(πc/2)) − 1 — near 0 for small γ_t and near 1 for large γ_t, where
N(0, 1) covers c in every bin — and the proper scores (NLL).  A Cauchy has no mean or variance, so there
is no Levi RMSE-vs-RMV diagram for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..base.regression import Gaussian, PredictiveDistribution
from ..diagrams.regression import pit_histogram_table
from ..metrics import regression as rm
from .regression import binned_coverage_table, diagram_tables, key_bin_mask, ks_sentence, rows_of

__all__ = ["Cauchy", "CAUCHY", "HONEST", "CauchyLab", "run_cauchy", "conditional_coverage", "cauchy_findings"]

CAUCHY = "Cauchy(0, |z|)"
HONEST = "N(0, 1)"


class Cauchy(PredictiveDistribution):
    """Rows of Cauchy(loc_i, γ_i): F(y) = ½ + arctan((y − loc)/γ)/π, F⁻¹(p) = loc + γ·tan(π(p − ½)).

    log f(y) = −log(πγ) − log(1 + ((y − loc)/γ)²).  A Cauchy has no mean and no variance: ``mean`` returns the median
    ``loc`` and ``var`` +inf, and its CRPS is infinite (E|Y| = ∞), so ``crps`` returns +inf.

    Parameters
    ----------
    loc : ndarray of shape (n,)
        Medians (broadcast with ``scale``).
    scale : ndarray of shape (n,)
        Scales γ_i > 0.

    Raises
    ------
    ValueError
        If ``loc`` and ``scale`` are not one-dimensional.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """

    def __init__(self, loc: np.ndarray, scale: np.ndarray) -> None:
        loc, scale = np.broadcast_arrays(np.asarray(loc, dtype=float), np.asarray(scale, dtype=float))
        if loc.ndim != 1:
            raise ValueError("loc and scale must be one-dimensional (one value per row)")
        self.loc = np.array(loc)
        self.scale = np.array(scale)

    def __len__(self) -> int:
        return self.loc.shape[0]

    def mean(self) -> np.ndarray:
        """The median ``loc`` (a Cauchy has no mean)."""
        return self.loc

    def var(self) -> np.ndarray:
        """+inf (a Cauchy has no variance)."""
        return np.full(self.loc.shape, np.inf)

    def cdf(self, y: np.ndarray) -> np.ndarray:
        """½ + arctan((y − loc)/γ)/π."""
        return 0.5 + np.arctan((np.asarray(y, dtype=float) - self.loc) / self.scale) / np.pi

    def ppf(self, p: np.ndarray | float) -> np.ndarray:
        """loc + γ·tan(π(p − ½)) (±inf at p = 0, 1)."""
        pp, two_d = self._broadcast_p(p)
        q = stats.cauchy.ppf(pp, self.loc[:, None], self.scale[:, None])
        return q if two_d else q[:, 0]

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """−log(πγ) − log(1 + ((y − loc)/γ)²)."""
        t = (np.asarray(y, dtype=float) - self.loc) / self.scale
        return -np.log(np.pi * self.scale) - np.log1p(t * t)

    def crps(self, y: np.ndarray) -> np.ndarray:
        """+inf: the CRPS needs a finite first moment."""
        return np.full(self.loc.shape, np.inf)

    def take(self, index: np.ndarray) -> Cauchy:
        return Cauchy(self.loc[index], self.scale[index])


def conditional_coverage(gamma: np.ndarray, coverage: float) -> np.ndarray:
    """Coverage of the Cauchy(0, γ) central c-interval given its scale γ, for y ~ N(0, 1).

    P(|y| ≤ γ·tan(πc/2)) = 2Φ(γ·tan(πc/2)) − 1: the exact curve behind the lab's coverage-by-γ diagram.

    Parameters
    ----------
    gamma : ndarray
        Scales γ.
    coverage : float
        c.

    Returns
    -------
    ndarray
        The coverage at every γ.

    Examples
    --------
    >>> [round(float(v), 4) for v in conditional_coverage(np.array([0.5, 1.0, 3.0]), 0.5)]
    [0.3829, 0.6827, 0.9973]

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    return 2.0 * stats.norm.cdf(np.asarray(gamma, dtype=float) * np.tan(np.pi * coverage / 2.0)) - 1.0


@dataclass(frozen=True)
class CauchyLab:
    """Result of :func:`run_cauchy`.

    Attributes
    ----------
    n : int
        Rows.
    coverage : float
        c of the central interval.
    metrics : DataFrame
        One row per forecaster.
    tables : dict of str to dict of str to DataFrame
        Per forecaster: calibration_curve, pit_histogram, coverage_by_scale (the central-interval coverage per
        equal-count bin of γ).
    dkw_bound : float
        The DKW bound at this N (α = 0.01).
    exact_curve : DataFrame
        The exact coverage curve 2Φ(γ·tan(πc/2)) − 1 on a γ grid (``gamma, coverage``).
    n_bins : int
        γ-bins.
    y : ndarray
        Targets.
    gamma : ndarray
        The Cauchy scales.
    dists : dict of str to PredictiveDistribution
        The forecasters.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """

    n: int
    coverage: float
    metrics: pd.DataFrame
    tables: dict[str, dict[str, pd.DataFrame]]
    dkw_bound: float
    exact_curve: pd.DataFrame
    n_bins: int
    y: np.ndarray
    gamma: np.ndarray
    dists: dict[str, PredictiveDistribution]

    def value(self, model: str, metric: str) -> float:
        m = self.metrics
        return float(m.loc[m["model"] == model, metric].iloc[0])

    def selected_pit(self, bins: tuple[int, ...]) -> dict[str, pd.DataFrame] | None:
        """PIT histogram of every forecaster on the rows of the γ-bins ``bins`` (None with fewer than 2 rows):
        calibration given the forecast's own scale — U-shaped (over-confident) for small γ, ∩ for large γ."""
        mask = key_bin_mask(self.gamma, self.n_bins, bins)
        if mask.sum() < 2:
            return None
        return {name: pit_histogram_table(rows_of(self.y[mask], d.take(mask))) for name, d in self.dists.items()}


def run_cauchy(n: int = 5000, *, seed: int = 0, n_bins: int = 10, coverage: float = 0.5) -> CauchyLab:
    """Levi §2: y ~ N(0, 1), forecasts Cauchy(0, |z|) with z ~ N(0, 1) independent, and the honest N(0, 1).

    Metrics per forecaster: calibration RMSE (levels 0, 0.01, …, 1), max |p̂ − p| (the PIT's KS distance; DKW bound
    at α = 0.01 in ``dkw_bound``), NLL, Spearman(γ, |y|) (rank information of the scale), the mean width of the
    central ``coverage`` interval and the smallest / largest observed coverage over the ``n_bins`` γ-bins.

    Parameters
    ----------
    n : int, default 5000
        Rows.
    seed : int, default 0
        Seed of the simulation.
    n_bins : int, default 10
        Equal-count γ-bins.
    coverage : float, default 0.5
        c of the central interval.

    Returns
    -------
    CauchyLab
        Metrics and tables of both forecasters.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """
    rng = np.random.default_rng(seed)
    y = rng.standard_normal(n)
    gamma = np.abs(rng.standard_normal(n))
    forecasters = {CAUCHY: Cauchy(np.zeros(n), gamma), HONEST: Gaussian(np.zeros(n), np.ones(n))}
    rows, tables = [], {}
    for name, dist in forecasters.items():
        tab = diagram_tables(y, dist, levi=False)
        tab["coverage_by_scale"] = binned_coverage_table(gamma, y, dist, coverage, n_bins)
        tables[name] = tab
        lo, hi = dist.interval(coverage)
        cov = tab["coverage_by_scale"]["observed"]
        rows.append({
            "model": name,
            "calibration_rmse": rm.calibration_rmse(y, dist),
            "max_calibration_deviation": rm.max_calibration_deviation(y, dist),
            "nll": rm.nll(y, dist),
            "spearman_scale_abs_y": float(stats.spearmanr(gamma, np.abs(y)).statistic) if name == CAUCHY else np.nan,
            "mean_width": float(np.mean(hi - lo)),
            "coverage": float(np.mean((y >= lo) & (y <= hi))),
            "min_bin_coverage": float(cov.min()),
            "max_bin_coverage": float(cov.max()),
        })
    dkw = float(np.sqrt(np.log(2.0 / 0.01) / (2.0 * n)))
    grid = np.linspace(0.0, float(tables[CAUCHY]["coverage_by_scale"]["key_mean"].max()), 101)
    exact = pd.DataFrame({"gamma": grid, "coverage": conditional_coverage(grid, coverage)})
    return CauchyLab(n=n, coverage=coverage, metrics=pd.DataFrame(rows), tables=tables, dkw_bound=dkw,
                     exact_curve=exact, n_bins=n_bins, y=y, gamma=gamma, dists=forecasters)


def cauchy_findings(result: CauchyLab) -> list[str]:
    """What the lab's numbers say, computed from :attr:`CauchyLab.metrics` (nothing fixed).

    KS against the DKW bound, coverage overall and its range over γ-bins for both forecasters, Spearman(γ, |y|)
    against its null spread ±2/√(N − 1), and which forecaster the NLL prefers.

    Parameters
    ----------
    result : CauchyLab
        A run of :func:`run_cauchy`.

    Returns
    -------
    list of str
        One sentence per finding, plain text.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """
    m = result.metrics.set_index("model")
    out = [ks_sentence({k: float(m.loc[k, "max_calibration_deviation"]) for k in (CAUCHY, HONEST)},
                       result.dkw_bound, result.n)]
    c = f"{result.coverage:.0%}"
    lo_c, hi_c = float(m.loc[CAUCHY, "min_bin_coverage"]), float(m.loc[CAUCHY, "max_bin_coverage"])
    lo_h, hi_h = float(m.loc[HONEST, "min_bin_coverage"]), float(m.loc[HONEST, "max_bin_coverage"])
    wider = "far more uneven" if (hi_c - lo_c) > 2 * (hi_h - lo_h) else "about as even"
    out.append(f"Coverage of the central {c} intervals over all rows: {float(m.loc[CAUCHY, 'coverage']):.1%} "
               f"(Cauchy) and {float(m.loc[HONEST, 'coverage']):.1%} (N(0, 1)); per γ-bin the Cauchy covers "
               f"{lo_c:.0%}–{hi_c:.0%}, N(0, 1) {lo_h:.0%}–{hi_h:.0%}: the Cauchy's coverage is {wider}.")
    rho = float(m.loc[CAUCHY, "spearman_scale_abs_y"])
    spread = 2.0 / np.sqrt(max(result.n - 1, 1))
    if abs(rho) <= spread:
        info = f"within ±2/√(N − 1) = ±{spread:.3f} of 0: the Cauchy's scale carries no information about |y|"
    else:
        info = f"outside ±2/√(N − 1) = ±{spread:.3f}: the scale tracks |y| in this draw"
    out.append(f"Spearman(γ, |y|) = {rho:+.3f}, {info}.")
    nll = {k: float(m.loc[k, "nll"]) for k in (CAUCHY, HONEST)}
    best = min(nll, key=nll.get)
    out.append(f"The NLL (a proper score) prefers {best} ({nll[CAUCHY]:.3f} Cauchy, {nll[HONEST]:.3f} N(0, 1)).")
    return out
