"""Lab 5 — same NLPD, different reliability (Camporeale & Carè, "ACCRUE", §3, Fig. 2).

Data (ACCRUE §3, after Goldberg et al. 1998): x ~ U[0, 1], σ(x) = x + ½, y ~ N(0, σ(x)²); every model
predicts the mean 0, so the errors ε_i = y_i are fixed and the models differ only in σ_i.

* **calibrated**: σ_i = σ(x_i), the data-generating σ — its reliability diagram is the diagonal.
* **equal NLPD**: σ̃_i ≠ σ_i on the same NLPD contour, ½log σ̃² + ε²/(2σ̃²) = ½log σ² + ε²/(2σ²)
  (ACCRUE eq. 5) — row by row, so the mean NLPD is *exactly* the same, yet the model is badly miscalibrated.
  With w = ε²/σ² the equation is w̃·e^(−w̃) = w·e^(−w), solved in closed form by the other real branch of
  Lambert's W: w̃ = −W_k(−w·e^(−w)) (k = −1 when w < 1, k = 0 when w > 1), σ̃² = ε²/w̃.
* **sequence** (Fig. 2 right): σ_i²(t) = (1 − t)·σ_i² + t·ε_i², t = 0 … t_max, moving every variance towards
  the per-row NLPD minimum σ² = ε²: along the path each row's NLPD decreases (d NLPD/dσ² = (σ² − ε²)/(2σ⁴) keeps
  its sign), so the mean NLPD falls monotonically while the standardised errors η_i = ε_i/(√2σ_i) are pushed
  towards ±1/√2 and the reliability score RS (ACCRUE eq. 8) grows.

ACCRUE's reliability diagram is the empirical CDF of Φ_i = ½(erf η_i + 1), the PIT — the Kuleshov curve of
the core.  The paper reports NLPD without the constant ½log 2π (0.45 for the calibrated model); both are given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from ..base.regression import LOG_2PI, Gaussian
from ..metrics import regression as rm
from .regression import diagram_tables

__all__ = ["CALIBRATED", "EQUAL_NLPD", "NlpdLab", "equal_nlpd_sigma", "nlpd_per_row", "run_nlpd", "nlpd_findings"]

CALIBRATED = "calibrated σ(x)"
EQUAL_NLPD = "equal-NLPD σ̃"


def nlpd_per_row(eps: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """NLPD(ε, σ) = ½log σ² + ε²/(2σ²) + ½log 2π (ACCRUE eq. 1), per row.

    Parameters
    ----------
    eps : ndarray
        Errors ε.
    sigma : ndarray
        Predicted standard deviations σ.

    Returns
    -------
    ndarray
        The negative log predictive density of every row.

    Examples
    --------
    >>> round(float(nlpd_per_row(np.array([0.0]), np.array([1.0]))[0]), 4)
    0.9189

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    .. [2] Gneiting, T., & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       Journal of the American Statistical Association, 102(477), 359–378.
    """
    eps, sigma = np.asarray(eps, dtype=float), np.asarray(sigma, dtype=float)
    return np.log(sigma) + 0.5 * (eps / sigma) ** 2 + 0.5 * LOG_2PI


def equal_nlpd_sigma(eps: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """The other σ̃ with NLPD(ε, σ̃) = NLPD(ε, σ) (ACCRUE eq. 5), per row, in closed form.

    With w = ε²/σ²: NLPD − ½log ε² − ½log 2π = (w − log w)/2, so the two solutions are the two roots of
    w·e^(−w) = const, i.e. w̃ = −W_k(−w·e^(−w)) on the branch k the given w is not on (k = −1 for w < 1, k = 0 for
    w > 1; W = Lambert's W), and σ̃ = |ε|/√w̃.  σ̃ = σ when σ² = ε² (the NLPD minimum, a double root) or ε = 0
    (NLPD = log σ + const is then monotone in σ: no second solution).

    Parameters
    ----------
    eps : ndarray
        Errors ε.
    sigma : ndarray
        Predicted standard deviations σ.

    Returns
    -------
    ndarray
        σ̃ of every row.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    .. [2] Corless, R. M., Gonnet, G. H., Hare, D. E. G., Jeffrey, D. J., & Knuth, D. E. (1996). On the Lambert W
       function. Advances in Computational Mathematics, 5, 329–359.
    """
    eps, sigma = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(sigma, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w = (eps / sigma) ** 2
        arg = np.maximum(-w * np.exp(-w), -np.exp(-1.0))  # rounding guard at w = 1 (the branch point −1/e)
        w_other = np.where(w < 1.0, -special.lambertw(arg, -1).real, -special.lambertw(arg, 0).real)
        # |z| > ~26: w·e^(−w) underflows; then w̃ = e^(log w̃) with log w̃ = w̃ − (w − log w) ≈ log w − w exactly
        # to double precision, and σ̃ = |ε|·exp((w − log w)/2) (+inf beyond the float range)
        log_sigma_far = np.log(np.abs(eps)) + 0.5 * (w - np.log(w))
        out = np.where(w > 700.0, np.exp(log_sigma_far), np.abs(eps) / np.sqrt(w_other))
    return np.where((eps == 0) | np.isnan(out) | (out <= 0), sigma, out)


@dataclass(frozen=True)
class NlpdLab:
    """Result of :func:`run_nlpd`.

    Attributes
    ----------
    n : int
        Rows.
    metrics : DataFrame
        One row per model (the calibrated, the equal-NLPD one, then the sequence t = t_0 … t_max) with ``nlpd`` (mean
        NLPD), ``nlpd_paper`` (without ½log 2π, as ACCRUE reports it), ``reliability`` (RS, ACCRUE eq. 8),
        ``max_calibration_deviation`` (ACCRUE's "Cal. err."), ``crps`` and ``t`` (NaN for the equal-NLPD model).
    curves : dict of str to DataFrame
        The reliability diagram (Kuleshov curve with its 95% band) of each model.
    sequence : tuple of str
        The models of the sequence, in order (the calibrated one first).

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    """

    n: int
    metrics: pd.DataFrame
    curves: dict[str, pd.DataFrame]
    sequence: tuple[str, ...]

    def value(self, model: str, metric: str) -> float:
        m = self.metrics
        return float(m.loc[m["model"] == model, metric].iloc[0])


def run_nlpd(n: int = 1000, *, seed: int = 0, steps: int = 6, t_max: float = 0.9) -> NlpdLab:
    """ACCRUE Fig. 2: the calibrated model, its equal-NLPD twin and ``steps`` models t ∈ linspace(0, t_max).

    Parameters
    ----------
    n : int, default 1000
        Rows (ACCRUE §3, after Goldberg et al. 1998).
    seed : int, default 0
        Seed of the simulation.
    steps : int, default 6
        Models of the sequence σ_i²(t) = (1 − t)·σ_i² + t·ε_i².
    t_max : float, default 0.9
        The last t.

    Returns
    -------
    NlpdLab
        Metrics and reliability curves of every model.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    .. [2] Goldberg, P. W., Williams, C. K. I., & Bishop, C. M. (1998). Regression with input-dependent noise: a
       Gaussian process treatment. Advances in Neural Information Processing Systems 10, 493–499.
    """
    if not 0.0 <= t_max < 1.0:
        raise ValueError("t_max must be in [0, 1): at t = 1 a target with ε = 0 gets σ = 0")
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, n)
    sigma = x + 0.5
    y = rng.normal(0.0, sigma)
    mean = np.zeros(n)
    models: dict[str, tuple[np.ndarray, float]] = {
        CALIBRATED: (sigma, 0.0),
        EQUAL_NLPD: (equal_nlpd_sigma(y - mean, sigma), np.nan),
    }
    sequence = []
    for t in np.linspace(0.0, t_max, steps)[1:] if steps > 1 else []:
        name = f"t = {t:.2f}"
        models[name] = (np.sqrt((1.0 - t) * sigma**2 + t * y**2), float(t))
        sequence.append(name)
    rows, curves = [], {}
    for name, (s, t) in models.items():
        dist = Gaussian(mean, s)
        nlpd = rm.nll(y, dist)
        rows.append({"model": name, "t": t, "nlpd": nlpd, "nlpd_paper": nlpd - 0.5 * LOG_2PI,
                     "reliability": rm.reliability_score(y, dist),
                     "max_calibration_deviation": rm.max_calibration_deviation(y, dist), "crps": rm.crps(y, dist)})
        curves[name] = diagram_tables(y, dist, levi=False)["calibration_curve"]
    return NlpdLab(n=n, metrics=pd.DataFrame(rows), curves=curves, sequence=(CALIBRATED, *sequence))


def _trend(values: np.ndarray) -> str:
    d = np.diff(np.asarray(values, dtype=float))
    return "falls at every step" if np.all(d < 0) else "rises at every step" if np.all(d > 0) else "is not monotone"


def nlpd_findings(result: NlpdLab) -> list[str]:
    """What the numbers say, computed from :attr:`NlpdLab.metrics` (nothing fixed).

    The pair's NLPD (equal?) against their RS and KS, and along the sequence whether NLPD, RS and CRPS fall or rise
    at every step.

    Parameters
    ----------
    result : NlpdLab
        A run of :func:`run_nlpd`.

    Returns
    -------
    list of str
        One sentence per finding, plain text.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    """
    m = result.metrics.set_index("model")
    a, b = float(m.loc[CALIBRATED, "nlpd"]), float(m.loc[EQUAL_NLPD, "nlpd"])
    equal = "the same" if abs(a - b) <= 1e-9 * max(abs(a), 1.0) else "not the same"
    out = [f"The pair: NLPD {a:.6f} and {b:.6f} ({equal}), but RS {float(m.loc[CALIBRATED, 'reliability']):.4f} "
           f"against {float(m.loc[EQUAL_NLPD, 'reliability']):.4f} and the largest reliability gap (KS) "
           f"{float(m.loc[CALIBRATED, 'max_calibration_deviation']):.3f} against "
           f"{float(m.loc[EQUAL_NLPD, 'max_calibration_deviation']):.3f}."]
    seq = m.loc[list(result.sequence)]
    nl, rs, cr = seq["nlpd"].to_numpy(), seq["reliability"].to_numpy(), seq["crps"].to_numpy()
    out.append(f"Along the sequence ({len(seq)} models) the NLPD {_trend(nl)} ({nl[0]:.3f} → {nl[-1]:.3f}), RS "
               f"{_trend(rs)} ({rs[0]:.4f} → {rs[-1]:.4f}) and the CRPS {_trend(cr)} ({cr[0]:.3f} → {cr[-1]:.3f}).")
    if _trend(nl) == "falls at every step" and _trend(rs) == "rises at every step":
        out.append("Both are 'lower is better' and they move in opposite directions: a lower NLPD is not a better "
                   "calibrated model.")
    return out
