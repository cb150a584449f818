"""Lab 1 — random uncertainty looks calibrated (Levi et al. 2019, §4.1, Fig. 1–2).

Data (Levi §4.1): x ~ U[0.1, 1], y ~ N(x, x²); both forecasters predict the true mean μ = x and
differ in σ:

* **random σ** ~ U[σ_lo, σ_hi] drawn independently of everything (Levi: U[1, 10]);
* **learned σ**: σ̂(x) = √(π/2)·(a + b·x), least squares of |y − μ| on (1, x) over a separate
  training set (E|ε| = σ·√(2/π) for Gaussian errors, so this is a consistent fit of σ(x) = x —
  the stand-in for the paper's NLL-trained uncertainty branch).

Each is recalibrated on a calibration set with Kuleshov et al.'s isotonic map
(:class:`~calib_core.calibrators.regression.IsotonicRecalibration`) and with STD scaling
(:class:`~calib_core.calibrators.regression.StdScaling`, Levi's own method), then evaluated on test
rows.  The claim: after isotonic recalibration both quantile-calibration curves lie on the diagonal
(calibration RMSE ≈ noise), while the Levi RMSE-vs-RMV diagram, ENCE (Levi eq. 8) and Cv (eq. 9)
tell the random σ (flat RMSE, ENCE ≈ 0.5 after scaling) from the learned one (ENCE ≈ 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base.regression import Gaussian, PredictiveDistribution
from ..calibrators.regression import IsotonicRecalibration, StdScaling
from ..diagrams.bin_rows import rows_in_bins, sigma_bins
from ..diagrams.regression import calibration_curve_table
from ..metrics import regression as rm
from .regression import diagram_tables, ks_sentence, rows_of

__all__ = ["RANDOM", "LEARNED", "STAGES", "RandomSigmaLab", "fit_learned_sigma", "run_random_sigma",
           "random_sigma_findings"]

RANDOM = "random σ"
LEARNED = "learned σ"
#: Stages of every forecaster: raw, after STD scaling, after Kuleshov's isotonic recalibration.
STAGES = ("raw", "STD scaling", "isotonic")


def fit_learned_sigma(x: np.ndarray, abs_error: np.ndarray) -> tuple[float, float]:
    """(a, b) of σ̂(x) = √(π/2)·(a + b·x): least squares of |ε| on (1, x).

    For ε ~ N(0, σ(x)²), E|ε| = σ(x)·√(2/π); with σ(x) = x (Levi §4.1) the fit recovers a ≈ 0, b ≈ √(2/π).

    Parameters
    ----------
    x : ndarray of shape (n,)
        Inputs.
    abs_error : ndarray of shape (n,)
        |ε| of the training rows.

    Returns
    -------
    a, b : float
        The coefficients.

    Examples
    --------
    >>> a, b = fit_learned_sigma(np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]))
    >>> round(a, 6), round(b, 6)
    (1.0, 1.0)

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    design = np.column_stack([np.ones_like(x), x])
    coef, *_ = np.linalg.lstsq(design, abs_error, rcond=None)
    return float(coef[0]), float(coef[1])


@dataclass(frozen=True)
class RandomSigmaLab:
    """Result of :func:`run_random_sigma`.

    Attributes
    ----------
    n_bins : int
        Levi σ-bins.
    metrics : DataFrame
        One row per (model, stage) with calibration RMSE, max calibration deviation (KS of the PIT), ENCE, Cv,
        Spearman(σ, |ε|), sharpness, NLL — on the test rows.
    tables : dict of (str, str) to dict of str to DataFrame
        The diagram tables (calibration_curve, pit_histogram, levi_bins) of each (model, stage) on the test rows.
    y_test, x_test : ndarray
        The test rows (for conditional views, :meth:`conditional_curve`).
    dists : dict of (str, str) to PredictiveDistribution
        The forecasts of each (model, stage) on the test rows.
    learned_coef : (float, float)
        (a, b) of the learned σ (:func:`fit_learned_sigma`).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    """

    n_bins: int
    metrics: pd.DataFrame
    tables: dict[tuple[str, str], dict[str, pd.DataFrame]]
    y_test: np.ndarray
    x_test: np.ndarray
    dists: dict[tuple[str, str], PredictiveDistribution]
    learned_coef: tuple[float, float]

    def value(self, model: str, stage: str, metric: str) -> float:
        """One number of the metric table."""
        m = self.metrics
        sel = m[(m["model"] == model) & (m["stage"] == stage)]
        return float(sel[metric].iloc[0])

    def zero_density_notes(self) -> list[str]:
        """Why an NLL of the metric table is ∞: for every (model, stage) with test targets where the predictive
        density is 0 (isotonic recalibration's truncated support), ``regression.metrics.zero_density_note`` naming
        the rows (test rows numbered from 1) and the cause, prefixed with the forecaster."""
        notes = []
        for (model, stage), dist in self.dists.items():
            note = rm.zero_density_note(self.y_test, dist, what="test rows")
            if note:
                notes.append(f"{model}, {stage}: {note}")
        return notes

    def conditional_curve(self, model: str, stage: str, bins: tuple[int, ...]) -> pd.DataFrame | None:
        """Kuleshov curve (with its band at the selection's N) of the test rows in ``model``'s σ-bins ``bins``
        at ``stage`` — calibration conditional on σ (Levi et al. 2019 §2–3).  None with fewer than 2 rows."""
        dist = self.dists[(model, stage)]
        mask = rows_in_bins(sigma_bins(dist.std(), self.n_bins, "count"), {"model": bins})
        if mask.sum() < 2:
            return None
        return calibration_curve_table(rows_of(self.y_test[mask], dist.take(mask)))


def _metric_row(y: np.ndarray, dist: PredictiveDistribution, n_bins: int) -> dict[str, float]:
    stats_ = rm.summary_statistics(rows_of(y, dist), n_bins=n_bins)
    keys = ("calibration_rmse", "max_calibration_deviation", "ence", "cv", "spearman_sigma_abs_error",
            "sharpness", "nll", "rmse")
    return {k: float(stats_[k]) for k in keys}


def run_random_sigma(
    n_test: int = 4000,
    n_cal: int = 2000,
    *,
    seed: int = 0,
    sigma_low: float = 1.0,
    sigma_high: float = 10.0,
    n_bins: int = 15,
    n_resamples: int = 100,
) -> RandomSigmaLab:
    """Levi §4.1 with a random and a learned σ, raw / STD-scaled / isotonic-recalibrated (see the module doc).

    Parameters
    ----------
    n_test : int, default 4000
        Test rows.
    n_cal : int, default 2000
        Rows of the training set (for the learned σ) and of the calibration set each.
    seed : int, default 0
        Seed of the simulation.
    sigma_low, sigma_high : float, default 1.0, 10.0
        The random σ ~ U[sigma_low, sigma_high], drawn for every row independently.
    n_bins : int, default 15
        Levi σ-bins.
    n_resamples : int, default 100
        Bootstrap replicates of the Levi interval.

    Returns
    -------
    RandomSigmaLab
        Metrics and diagram tables of every (model, stage).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    """
    if not 0 < sigma_low <= sigma_high:
        raise ValueError("need 0 < sigma_low ≤ sigma_high")
    rng = np.random.default_rng(seed)
    n = 2 * n_cal + n_test
    x = rng.uniform(0.1, 1.0, n)
    y = rng.normal(x, x)
    s_random = rng.uniform(sigma_low, sigma_high, n)
    train, cal, test = np.split(np.arange(n), [n_cal, 2 * n_cal])
    a, b = fit_learned_sigma(x[train], np.abs(y[train] - x[train]))
    s_learned = np.maximum(np.sqrt(np.pi / 2.0) * (a + b * x), 1e-3)
    metrics, tables, dists = [], {}, {}
    for model, sigma in ((RANDOM, s_random), (LEARNED, s_learned)):
        d_cal, d_test = Gaussian(x[cal], sigma[cal]), Gaussian(x[test], sigma[test])
        staged = {
            "raw": d_test,
            "STD scaling": StdScaling().fit(d_cal, y[cal]).transform(d_test),
            "isotonic": IsotonicRecalibration().fit(d_cal, y[cal]).transform(d_test),
        }
        for stage, dist in staged.items():
            dists[(model, stage)] = dist
            tables[(model, stage)] = diagram_tables(y[test], dist, n_bins=n_bins, n_resamples=n_resamples, seed=seed)
            metrics.append({"model": model, "stage": stage, **_metric_row(y[test], dist, n_bins)})
    return RandomSigmaLab(
        n_bins=n_bins, metrics=pd.DataFrame(metrics), tables=tables, y_test=y[test], x_test=x[test], dists=dists,
        learned_coef=(a, b),
    )


def random_sigma_findings(result: RandomSigmaLab, stage: str) -> list[str]:
    """What the numbers of ``stage`` say, computed from :attr:`RandomSigmaLab.metrics` (nothing fixed).

    KS of both against the DKW bound sqrt(log(2/α)/(2N)) (α = 1%), ENCE (does it tell them apart), Cv (spread of σ)
    and Spearman(σ, |ε|) against its null spread ±2/√(N − 1).

    Parameters
    ----------
    result : RandomSigmaLab
        A run of :func:`run_random_sigma`.
    stage : str
        One of :data:`STAGES`.

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
    m = result.metrics[result.metrics["stage"] == stage].set_index("model")
    n = int(np.asarray(result.y_test).size)
    bound = float(np.sqrt(np.log(2 / 0.01) / (2 * n)))
    ks = {k: float(m.loc[k, "max_calibration_deviation"]) for k in (RANDOM, LEARNED)}
    out = [f"After {stage}: " + ks_sentence(ks, bound, n)]
    e_r, e_l = float(m.loc[RANDOM, "ence"]), float(m.loc[LEARNED, "ence"])
    apart = (f"ENCE tells them apart ({e_r:.3f} random σ, {e_l:.3f} learned σ, {e_r / e_l:.0f}×)" if e_r > 2 * e_l
             else f"ENCE does not tell them apart ({e_r:.3f} random σ, {e_l:.3f} learned σ)")
    out.append(apart + ".")
    c_r, c_l = float(m.loc[RANDOM, "cv"]), float(m.loc[LEARNED, "cv"])
    same = abs(c_r - c_l) <= 0.2 * max(c_r, c_l)
    out.append(f"Cv {c_r:.2f} (random) and {c_l:.2f} (learned): "
               + ("about the same — Cv measures how much σ varies, not whether it is informative." if same else
                  "different, but Cv measures how much σ varies, not whether it is informative."))
    spread = 2.0 / np.sqrt(max(n - 1, 1))
    rho = {k: float(m.loc[k, "spearman_sigma_abs_error"]) for k in (RANDOM, LEARNED)}
    words = {k: ("carries no information about |ε|" if abs(v) <= spread else "tracks |ε|") for k, v in rho.items()}
    out.append(f"Spearman(σ, |ε|): {rho[RANDOM]:+.3f} for the random σ ({words[RANDOM]}), {rho[LEARNED]:+.3f} for the "
               f"learned σ ({words[LEARNED]}); ±{spread:.3f} is two standard errors of 0 at N = {n:,}.")
    return out
