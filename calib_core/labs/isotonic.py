"""Lab 4 — side effects of isotonic recalibration (Utpala & Rai, "Quantile regularization", §3, Fig. 2).

QR's illustration: Bayesian linear regression fitted to 256 training points of y = 3x + ε, ε ~ N(0, 1),
x ~ U[−4, 4], then Kuleshov et al.'s isotonic recalibration fitted on only 32 calibration points.  The
recalibrated CDF is G = R∘F with R the piecewise-linear map through the calibration pairs (c_(i), i/m)
(:class:`~calib_core.calibrators.regression.IsotonicRecalibration`,
:class:`~calib_core.base.regression_recalibrated.IsotonicRecalibrated`), and

* **truncated support** (QR §3, B.2): R reaches 1 at c_(m) = max_i c_i, so G(y) = 1 beyond
  y_trun = F⁻¹(c_(m)); every test target above it gets density 0 (NLL = ∞);
* **spiky density** (claim 1, eq. 10): g(y) = s_k·f(y) with slopes s_k = 1/(m·(c_(k+1) − c_(k))) — the
  density jumps at every F⁻¹(c_(k)) and is inflated where two calibration PITs are close;
* **shifted mean** (claims 2–3): E[Y_iso] = μ − δ·σ with δ a constant of the map.

The remedy of QR §3 (``add_endpoint=True``): targets i/(m + 1) and the extra pair (1, 1), so R < 1 on [0, 1)
and the support is not truncated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base.regression import Gaussian
from ..calibrators.regression import IsotonicRecalibration
from ..metrics import regression as rm

__all__ = ["BayesianLinearRegression", "IsotonicLab", "run_isotonic", "isotonic_findings", "BEFORE", "AFTER"]

BEFORE = "before (Bayesian linear regression)"
AFTER = "after isotonic recalibration"


class BayesianLinearRegression:
    """Conjugate Bayesian linear regression with features φ(x) = (1, x) (Bishop 2006, §3.3).

    Prior w ~ N(0, α⁻¹I), likelihood y | x, w ~ N(wᵀφ(x), β⁻¹) with known noise precision β.  Posterior
    w | D ~ N(m_N, S_N) with S_N⁻¹ = αI + βΦᵀΦ and m_N = βS_NΦᵀy; posterior predictive at x:
    N(m_Nᵀφ(x), 1/β + φ(x)ᵀS_Nφ(x)) — closed form, no sampling.

    Parameters
    ----------
    alpha : float, default 1e-2
        α, the prior precision of the weights.
    beta : float, default 1.0
        β, the known noise precision.

    Attributes
    ----------
    mean_ : ndarray of shape (2,)
        m_N, after :meth:`fit`.
    cov_ : ndarray of shape (2, 2)
        S_N, after :meth:`fit`.

    References
    ----------
    .. [1] Bishop, C. M. (2006). Pattern Recognition and Machine Learning, §3.3. Springer.
    """

    def __init__(self, *, alpha: float = 1e-2, beta: float = 1.0) -> None:
        self.alpha = alpha
        self.beta = beta

    @staticmethod
    def features(x: np.ndarray) -> np.ndarray:
        """Design matrix Φ with rows φ(x_i) = (1, x_i)."""
        x = np.asarray(x, dtype=float)
        return np.column_stack([np.ones_like(x), x])

    def fit(self, x: np.ndarray, y: np.ndarray) -> BayesianLinearRegression:
        """Posterior mean ``mean_`` = m_N and covariance ``cov_`` = S_N."""
        phi = self.features(x)
        precision = self.alpha * np.eye(phi.shape[1]) + self.beta * phi.T @ phi
        self.cov_ = np.linalg.inv(precision)
        self.mean_ = self.beta * self.cov_ @ phi.T @ np.asarray(y, dtype=float)
        return self

    def predict(self, x: np.ndarray) -> Gaussian:
        """Posterior predictive N(m_Nᵀφ(x), 1/β + φ(x)ᵀS_Nφ(x)) per row."""
        phi = self.features(x)
        var = 1.0 / self.beta + np.einsum("ij,jk,ik->i", phi, self.cov_, phi)
        return Gaussian(phi @ self.mean_, np.sqrt(var))


@dataclass(frozen=True)
class IsotonicLab:
    """Result of :func:`run_isotonic`.

    Attributes
    ----------
    x_star : float
        The test input where the densities are evaluated.
    add_endpoint : bool
        Whether QR's (1, 1) remedy was used.
    numbers : dict of str to float
        The side effects as one dict — truncation level a* (``truncation_u``), the truncation point, mean before /
        after and the shift at x*, δ (QR claim 3), the largest density inflation max_k s_k (``spike_ratio``), the
        share of test targets with zero recalibrated density, NLL and calibration RMSE on the test rows before /
        after.
    map_knots : DataFrame
        The recalibration map's knots (``u, R``).
    calibration_pairs : DataFrame
        (``u, target``).
    density : DataFrame
        y and the two densities at x* on a grid that resolves the jumps.
    training : DataFrame
        The training rows (``x, y``).
    posterior_mean : (float, float)
        m_N of the Bayesian linear regression.

    References
    ----------
    .. [1] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    """

    x_star: float
    add_endpoint: bool
    numbers: dict[str, float]
    map_knots: pd.DataFrame
    calibration_pairs: pd.DataFrame
    density: pd.DataFrame
    training: pd.DataFrame
    posterior_mean: tuple[float, float]


def run_isotonic(
    n_train: int = 256,
    n_cal: int = 32,
    n_test: int = 2000,
    *,
    seed: int = 0,
    slope: float = 3.0,
    noise: float = 1.0,
    assumed_noise: float = 1.0,
    add_endpoint: bool = False,
    x_star: float = 1.0,
    grid_points: int = 1200,
) -> IsotonicLab:
    """QR §3's example: BLR on y = slope·x + noise·ε, x ~ U[−4, 4]; isotonic recalibration on ``n_cal`` points.

    Parameters
    ----------
    n_train : int, default 256
        Training rows of the Bayesian linear regression.
    n_cal : int, default 32
        Calibration rows of the isotonic map.
    n_test : int, default 2000
        Test rows.
    seed : int, default 0
        Seed of the simulation.
    slope : float, default 3.0
        The true slope.
    noise : float, default 1.0
        The true noise standard deviation.
    assumed_noise : float, default 1.0
        The model's noise standard deviation β^(−1/2) (= ``noise``: a well-specified model; otherwise the
        recalibration has something to fix).
    add_endpoint : bool, default False
        QR's (1, 1) remedy.
    x_star : float, default 1.0
        The test input where the predictive density before / after is evaluated.
    grid_points : int, default 1200
        Grid points of the densities.

    Returns
    -------
    IsotonicLab
        The side effects and the data behind the figures.

    References
    ----------
    .. [1] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Bishop, C. M. (2006). Pattern Recognition and Machine Learning, §3.3. Springer.
    """
    # three independent streams: moving m (or the test size) keeps the training set, hence the base model, fixed
    def draw(part: int, size: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng([seed, part])
        xs = rng.uniform(-4.0, 4.0, size)
        return xs, slope * xs + noise * rng.standard_normal(size)

    parts = [draw(part, size) for part, size in enumerate((n_train, n_cal, n_test))]
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    train, cal, test = np.split(np.arange(x.size), [n_train, n_train + n_cal])
    blr = BayesianLinearRegression(beta=1.0 / assumed_noise**2).fit(x[train], y[train])
    pred_cal, pred_test = blr.predict(x[cal]), blr.predict(x[test])
    iso = IsotonicRecalibration(add_endpoint=add_endpoint).fit(pred_cal, y[cal])
    recal_test = iso.transform(pred_test)

    star = blr.predict(np.array([float(x_star)]))
    recal_star = iso.transform(star)
    mu, sigma = float(star.mean()[0]), float(star.std()[0])
    mean_after = float(recal_star.mean()[0])
    y_trun = float(recal_star.truncation_point()[0])

    logpdf_after = recal_test.logpdf(y[test])
    zero = ~np.isfinite(logpdf_after)
    numbers = {
        "truncation_u": float(iso.truncation_u_),
        "truncation_point": y_trun,
        "mean_before": mu,
        "mean_after": mean_after,
        "mean_shift": mean_after - mu,
        "delta": float(iso.delta_),
        "sigma_star": sigma,
        "spike_ratio": float(iso.spike_ratio_),
        "zero_density_share": float(zero.mean()),
        "nll_before": rm.nll(y[test], pred_test),
        "nll_after": float(-np.mean(logpdf_after)),
        "nll_after_finite_rows": float(-np.mean(logpdf_after[~zero])) if (~zero).any() else np.nan,
        "calibration_rmse_before": rm.calibration_rmse(y[test], pred_test),
        "calibration_rmse_after": rm.calibration_rmse(y[test], recal_test),
    }

    # the recalibration pairs the map was fitted on (Kuleshov: (c_i, #{c_j ≤ c_i}/m), QR: /(m + 1))
    u_cal = np.sort(pred_cal.cdf(y[cal]))
    target = np.searchsorted(u_cal, u_cal, side="right") / (n_cal + 1.0 if add_endpoint else float(n_cal))
    # a grid over μ ± 4.5σ plus both sides of every jump F⁻¹(a_k) of the density
    lo, hi = mu - 4.5 * sigma, mu + 4.5 * sigma
    knots_u = np.asarray(iso.mapping_x_)
    inner = knots_u[(knots_u > 0.0) & (knots_u < 1.0)]
    y_knots = np.asarray(star.ppf(inner[None, :]))[0]
    y_knots = y_knots[(y_knots > lo) & (y_knots < hi)]
    eps = 1e-6 * sigma
    grid = np.unique(np.concatenate([np.linspace(lo, hi, grid_points), y_knots - eps, y_knots + eps]))
    n_grid = grid.size
    base_rows = Gaussian(np.full(n_grid, mu), np.full(n_grid, sigma))
    density = pd.DataFrame({
        "y": grid,
        BEFORE: np.exp(base_rows.logpdf(grid)),
        AFTER: iso.transform(base_rows).pdf(grid),
    })
    return IsotonicLab(
        x_star=float(x_star), add_endpoint=bool(add_endpoint), numbers=numbers,
        map_knots=pd.DataFrame({"u": iso.mapping_x_, "R": iso.mapping_y_}),
        calibration_pairs=pd.DataFrame({"u": u_cal, "target": target}),
        density=density, training=pd.DataFrame({"x": x[train], "y": y[train]}),
        posterior_mean=(float(blr.mean_[0]), float(blr.mean_[1])),
    )


def isotonic_findings(result: IsotonicLab, *, n_cal: int, well_specified: bool) -> list[str]:
    """What the lab's numbers say, one sentence each, computed from :attr:`IsotonicLab.numbers` (nothing fixed).

    Calibration RMSE before/after (better or worse, and why for a well-specified model), the truncation of the
    support (QR §3: R = 1 from a* on, zero density beyond F⁻¹(a*), NLL = ∞), the largest density inflation max_k s_k
    (QR eq. 10) and the mean shift −δσ (QR claim 3).

    Parameters
    ----------
    result : IsotonicLab
        A run of :func:`run_isotonic`.
    n_cal : int
        Its calibration rows.
    well_specified : bool
        Whether the model's noise was the true one.

    Returns
    -------
    list of str
        One sentence per finding, plain text.

    References
    ----------
    .. [1] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    """
    n = result.numbers
    before, after = n["calibration_rmse_before"], n["calibration_rmse_after"]
    if after > before:
        change = f"worse ({after / before:.1f}× the error before)" if before > 0 else "worse"
        why = (" The model was calibrated to begin with (assumed noise = data noise): the map fitted on "
               f"m = {n_cal} points adds only its own noise." if well_specified else
               f" The map fitted on m = {n_cal} points adds more noise than the model's miscalibration it removes."
               )
    else:
        change = "better"
        why = ("" if well_specified else
               " The model's assumed noise differs from the data's, so there was miscalibration to remove.")
    out = [f"Test calibration RMSE {before:.4f} before and {after:.4f} after: the map makes it {change}.{why}"]
    if n["truncation_u"] < 1.0:
        share = n["zero_density_share"]
        if share > 0:
            out.append(
                f"R reaches 1 at a* = {n['truncation_u']:.4f}: {share:.1%} of the test targets lie beyond the "
                f"truncation point and get zero density, so the test NLL is ∞ (on the other rows "
                f"{n['nll_after_finite_rows']:.3f}, against {n['nll_before']:.3f} before).")
        else:
            out.append(
                f"R reaches 1 at a* = {n['truncation_u']:.4f}, but no test target of this draw lies beyond the "
                f"truncation point: test NLL {n['nll_after']:.3f} after, {n['nll_before']:.3f} before.")
    else:
        out.append(f"With the (1, 1) end point R < 1 on [0, 1): no truncation, and the test NLL is finite "
                   f"({n['nll_after']:.3f} after, {n['nll_before']:.3f} before).")
    spike = n["spike_ratio"]
    out.append(f"Spikes: where two calibration PITs are closest the recalibrated density is "
               f"{spike:.1f}× the base density" if spike < 100 else
               f"Spikes: where two calibration PITs are closest the recalibrated density is "
               f"{spike:,.0f}× the base density")
    out[-1] += " (s_k = 1/(m·gap): the closer two of the m calibration PITs, the higher the spike)."
    out.append(f"The mean at x* moves from {n['mean_before']:.3f} to {n['mean_after']:.3f} "
               f"({n['mean_shift']:+.3f} = −δσ, δ = {n['delta']:.3f}).")
    return out
