"""The interface of a vectorised predictive distribution for regression, and the standard normal functions.

:class:`PredictiveDistribution` holds N independent univariate predictive distributions, one per row, and
evaluates them all at once: ``cdf(y)``, ``ppf(p)``, ``logpdf(y)`` and ``crps(y)`` take an array of length N (or
something that broadcasts to it) and return an array of length N.  The distributions themselves (``Gaussian``,
``QuantileSet``, ``SampleSet``) are in :mod:`calib_core.base.regression`, which re-exports these names.

Notation: ε = y − μ, z = ε/σ, PIT u = F(y).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from scipy import special

__all__ = ["PredictiveDistribution", "norm_cdf", "norm_pdf", "norm_ppf", "gaussian_crps"]


SQRT2 = np.sqrt(2.0)

SQRT_PI = np.sqrt(np.pi)

LOG_2PI = np.log(2.0 * np.pi)


def norm_cdf(z: np.ndarray) -> np.ndarray:
    """Standard normal CDF Φ(z) = ½ erfc(−z/√2) (accurate in the lower tail).

    Parameters
    ----------
    z : array_like
        Points.

    Returns
    -------
    ndarray
        Φ(z).

    References
    ----------
    Abramowitz, M. & Stegun, I. A. (1964). Handbook of Mathematical Functions, §26.2. National Bureau of
    Standards.
    """
    x = np.asarray(z, dtype=float)
    if x.ndim == 0:
        return 0.5 * special.erfc(-x / SQRT2)
    t = np.negative(x)  # the same steps in one buffer (no temporaries to allocate)
    t /= SQRT2
    special.erfc(t, out=t)
    t *= 0.5
    return t


def norm_pdf(z: np.ndarray) -> np.ndarray:
    """Standard normal density φ(z) = exp(−z²/2)/√(2π).

    Parameters
    ----------
    z : array_like
        Points.

    Returns
    -------
    ndarray
        φ(z).

    References
    ----------
    Abramowitz, M. & Stegun, I. A. (1964). Handbook of Mathematical Functions, §26.2. National Bureau of
    Standards.
    """
    x = np.asarray(z, dtype=float)
    if x.ndim == 0:
        return np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)
    t = np.multiply(-0.5, x)  # the same steps in one buffer (no temporaries to allocate)
    t *= x
    np.exp(t, out=t)
    t /= np.sqrt(2.0 * np.pi)
    return t


def norm_ppf(p: np.ndarray) -> np.ndarray:
    """Standard normal quantile Φ⁻¹(p) (±inf at 0 and 1).

    Parameters
    ----------
    p : array_like
        Probabilities in [0, 1].

    Returns
    -------
    ndarray
        Φ⁻¹(p).

    References
    ----------
    Abramowitz, M. & Stegun, I. A. (1964). Handbook of Mathematical Functions, §26.2. National Bureau of
    Standards.
    """
    return special.ndtri(np.asarray(p, dtype=float))


def gaussian_crps(y: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """Closed-form CRPS of N(μ, σ²) at y: CRPS = σ [z (2Φ(z) − 1) + 2φ(z) − 1/√π], z = (y − μ)/σ.

    Parameters
    ----------
    y : array_like
        Targets.
    mean : array_like
        Means μ.
    std : array_like
        Standard deviations σ > 0.

    Returns
    -------
    ndarray
        The CRPS per row.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.

    Camporeale, E. & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
    models. International Journal for Uncertainty Quantification 11(4), 81–94.
    """
    std = np.asarray(std, dtype=float)
    z = (np.asarray(y, dtype=float) - mean) / std
    return std * (z * (2.0 * norm_cdf(z) - 1.0) + 2.0 * norm_pdf(z) - 1.0 / SQRT_PI)


def as_rows(a: Any, name: str) -> np.ndarray:
    arr = np.asarray(a, dtype=float)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per row), got shape {arr.shape}")
    return arr


class PredictiveDistribution(ABC):
    """N univariate predictive distributions evaluated together.

    Subclasses implement ``mean``, ``var``, ``cdf``, ``ppf``, ``logpdf``, ``crps`` and ``take``.  ``y`` arguments
    are arrays of shape (N,); ``p`` arguments of ``ppf`` are a scalar, an array of shape (N,), or a 2-D array of
    shape (N, L) or (1, L) giving L levels per row.

    Attributes
    ----------
    is_discrete : bool
        True when the distribution has atoms (its CDF jumps), e.g. an empirical ensemble.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.

    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.
    """

    #: True when the distribution has atoms (its CDF jumps), e.g. an empirical ensemble.
    is_discrete: bool = False

    def nan_rows(self) -> np.ndarray:
        """Boolean mask of the rows whose parameters contain NaN (the metrics' NaN policy, README "NaN policy")."""
        return np.isnan(np.asarray(self.mean(), dtype=float))

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def mean(self) -> np.ndarray:
        """Predictive mean μ per row."""

    @abstractmethod
    def var(self) -> np.ndarray:
        """Predictive variance σ² per row."""

    def std(self) -> np.ndarray:
        """Predictive standard deviation σ = √var per row."""
        return np.sqrt(self.var())

    @abstractmethod
    def cdf(self, y: np.ndarray) -> np.ndarray:
        """F_i(y_i) per row (the PIT when y is the observed target)."""

    @abstractmethod
    def ppf(self, p: np.ndarray | float) -> np.ndarray:
        """Quantile function F_i⁻¹(p)."""

    @abstractmethod
    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """log f_i(y_i); the NLL is its negative mean."""

    @abstractmethod
    def crps(self, y: np.ndarray) -> np.ndarray:
        """CRPS(F_i, y_i) = ∫ (F_i(x) − 1{x ≥ y_i})² dx per row."""

    @abstractmethod
    def take(self, index: np.ndarray) -> PredictiveDistribution:
        """The distributions of the selected rows (boolean mask or integer index)."""

    def cdf_left(self, y: np.ndarray) -> np.ndarray:
        """F_i(y_i−), the left limit of the CDF; equals ``cdf`` for continuous distributions."""
        return self.cdf(y)

    def pit(self, y: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """PIT values u_i, uniform on (0, 1) when the targets are drawn from the predictions.

        Continuous distributions: u = F(y).  With atoms (``is_discrete``) and a generator: the
        randomised PIT u = F(y−) + V·(F(y) − F(y−)), V ~ U(0, 1) (Czado, Gneiting & Held 2009).
        """
        u = np.asarray(self.cdf(y), dtype=float)
        if self.is_discrete and rng is not None:
            left = np.asarray(self.cdf_left(y), dtype=float)
            u = left + rng.random(u.shape[0]) * (u - left)
        return u

    def interval(self, coverage: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Central interval [F⁻¹((1−c)/2), F⁻¹((1+c)/2)] of nominal coverage c per row."""
        c = np.asarray(coverage, dtype=float)
        return self.ppf(0.5 - c / 2.0), self.ppf(0.5 + c / 2.0)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One draw per row, y_i = F_i⁻¹(U_i) with U_i ~ Uniform(0, 1)."""
        return self.ppf(rng.random(len(self)))

    def calibrated_draw(
        self, y: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, PredictiveDistribution]:
        """Targets and predictions of a perfectly calibrated forecaster like this one.

        Used for the perfect-calibration reference values: by default y* ~ F_i with the same
        predictions (``y`` is not used).  Ensembles override it (see ``SampleSet``).
        """
        return self.sample(rng), self

    def _broadcast_p(self, p: np.ndarray | float) -> tuple[np.ndarray, bool]:
        """Return p as (N, L) and whether the caller asked for a 2-D answer."""
        arr = np.asarray(p, dtype=float)
        if arr.ndim == 2:
            return np.broadcast_to(arr, (len(self), arr.shape[1])), True
        return np.broadcast_to(arr, (len(self),))[:, None], False

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={len(self)})"
