"""Toy heteroscedastic data sets G, Y, W and 5D (Camporeale & Carè, ACCRUE §5.1).

Targets are y ~ N(f(x), σ(x)²) with x uniform on the domain:

* **G** (Goldberg et al. 1998): x ∈ [0, 1], f(x) = 2 sin(2πx), σ(x) = x/2 + 1/2;
* **Y** (Yuan & Wahba 2004): x ∈ [0, 1], f(x) = 2[exp(−30(x − 0.25)²) + sin(πx²)] − 2,
  σ(x) = exp(sin(2πx))/3;
* **W** (Weigend & Nix 1994; Williams 1996): x ∈ [0, π], f(x) = sin(2.5x) sin(1.5x),
  σ(x) = 0.01 + 0.25(1 − sin(2.5x))²;
* **5D** (Genz 1984): x ∈ [0, 1]⁵, f(x) = 0, σ(x) = 0.45(cos(π + Σ_i 5x_i) + 1.2).

``make_toy(name, n, seed)`` draws a data set; ``toy_mean`` / ``toy_sigma`` evaluate the true
functions (for the "recovered σ(x)" views and the ACCRUE tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TOY_SETS", "ToyData", "toy_domain", "toy_mean", "toy_sigma", "make_toy"]

#: Names of the toy data sets.
TOY_SETS = ("G", "Y", "W", "5D")


@dataclass(frozen=True)
class ToyData:
    """A toy data set: features ``x``, targets ``y``, true mean ``f`` and true std ``sigma``.

    Attributes
    ----------
    name : str
        ``"G"``, ``"Y"``, ``"W"`` or ``"5D"``.
    x : ndarray of shape (n, d)
        The inputs (d = 5 for ``5D``, else 1).
    y : ndarray of shape (n,)
        The targets, y ~ N(f(x), σ(x)²).
    f : ndarray of shape (n,)
        The true mean f(x).
    sigma : ndarray of shape (n,)
        The true standard deviation σ(x).
    """

    name: str
    x: np.ndarray
    y: np.ndarray
    f: np.ndarray
    sigma: np.ndarray

    @property
    def eps(self) -> np.ndarray:
        """ε = y − f(x), the errors of the exact (oracle) mean."""
        return self.y - self.f


def _check(name: str) -> str:
    key = name.upper()
    if key not in TOY_SETS:
        raise ValueError(f"unknown toy set {name!r}; choose one of {TOY_SETS}")
    return key


def toy_domain(name: str) -> tuple[float, float, int]:
    """(low, high, dimension) of the uniform input domain.

    Parameters
    ----------
    name : str
        The toy set (case-insensitive).

    Returns
    -------
    tuple of (float, float, int)
        [0, π] × 1 for ``W``, [0, 1]⁵ for ``5D``, else [0, 1] × 1.

    Raises
    ------
    ValueError
        An unknown toy set.
    """
    key = _check(name)
    if key == "W":
        return 0.0, float(np.pi), 1
    return 0.0, 1.0, 5 if key == "5D" else 1


def _as_x(x: np.ndarray, d: int) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[1] != d:
        raise ValueError(f"expected {d} feature column(s), got {x.shape[1]}")
    return x


def toy_mean(name: str, x: np.ndarray) -> np.ndarray:
    """True mean f(x) of the toy set (ACCRUE §5.1).

    G: 2 sin(2πx); Y: 2[exp(−30(x − 0.25)²) + sin(πx²)] − 2; W: sin(2.5x) sin(1.5x); 5D: 0.

    Parameters
    ----------
    name : str
        The toy set (case-insensitive).
    x : ndarray of shape (n,) or (n, d)
        Inputs in the set's domain.

    Returns
    -------
    ndarray of shape (n,)
        f(x).

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic models",
       International Journal for Uncertainty Quantification 11(4), 2021, §5.1.
    """
    key = _check(name)
    x = _as_x(x, toy_domain(key)[2])
    t = x[:, 0]
    if key == "G":
        return 2.0 * np.sin(2.0 * np.pi * t)
    if key == "Y":
        return 2.0 * (np.exp(-30.0 * (t - 0.25) ** 2) + np.sin(np.pi * t * t)) - 2.0
    if key == "W":
        return np.sin(2.5 * t) * np.sin(1.5 * t)
    return np.zeros(x.shape[0])


def toy_sigma(name: str, x: np.ndarray) -> np.ndarray:
    """True standard deviation σ(x) of the toy set (ACCRUE §5.1).

    G: x/2 + 1/2; Y: exp(sin(2πx))/3; W: 0.01 + 0.25(1 − sin(2.5x))²; 5D: 0.45(cos(π + Σ_i 5x_i) + 1.2).

    Parameters
    ----------
    name : str
        The toy set (case-insensitive).
    x : ndarray of shape (n,) or (n, d)
        Inputs in the set's domain.

    Returns
    -------
    ndarray of shape (n,)
        σ(x).

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic models",
       International Journal for Uncertainty Quantification 11(4), 2021, §5.1.
    """
    key = _check(name)
    x = _as_x(x, toy_domain(key)[2])
    t = x[:, 0]
    if key == "G":
        return 0.5 * t + 0.5
    if key == "Y":
        return np.exp(np.sin(2.0 * np.pi * t)) / 3.0
    if key == "W":
        return 0.01 + 0.25 * (1.0 - np.sin(2.5 * t)) ** 2
    return 0.45 * (np.cos(np.pi + 5.0 * x.sum(axis=1)) + 1.2)


def make_toy(name: str, n: int = 2000, seed: int | np.random.Generator | None = 0) -> ToyData:
    """Draw n points x ~ U(domain), y ~ N(f(x), σ(x)²) of toy set ``name`` (seeded).

    Parameters
    ----------
    name : str
        ``"G"``, ``"Y"``, ``"W"`` or ``"5D"`` (case-insensitive).
    n : int, default 2000
        The number of points.
    seed : int, Generator or None, default 0
        Seed (or generator) of the draws.

    Returns
    -------
    ToyData
        The data set with its true mean and standard deviation.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic models",
       International Journal for Uncertainty Quantification 11(4), 2021, §5.1.
    .. [2] P. W. Goldberg, C. K. I. Williams and C. M. Bishop, "Regression with input-dependent noise: a Gaussian
       process treatment", NIPS 10, 1998 (set G).
    .. [3] M. Yuan and G. Wahba, "Doubly penalized likelihood estimator in heteroscedastic regression", Statistics &
       Probability Letters 69(1), 2004 (set Y).
    .. [4] A. S. Weigend and D. A. Nix, "Predictions with confidence intervals (local error bars)", ICONIP 1994;
       P. M. Williams, "Using neural networks to model conditional multivariate densities", Neural Computation 8(4),
       1996 (set W).
    .. [5] A. Genz, "Testing multidimensional integration routines", Tools, Methods and Languages for Scientific and
       Engineering Computation, 1984 (set 5D).

    Examples
    --------
    >>> from calib_core.data.toy import make_toy
    >>> data = make_toy("G", n=500, seed=0)
    >>> data.x.shape, bool(abs((data.eps / data.sigma).std() - 1) < 0.1)
    ((500, 1), True)
    """
    key = _check(name)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    lo, hi, d = toy_domain(key)
    x = rng.uniform(lo, hi, size=(n, d))
    f = toy_mean(key, x)
    sigma = toy_sigma(key, x)
    y = f + sigma * rng.standard_normal(n)
    return ToyData(name=key, x=x, y=y, f=f, sigma=sigma)
