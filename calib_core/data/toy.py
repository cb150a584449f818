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
    """A toy data set: features ``x`` (n, d), targets ``y``, true mean ``f`` and true std ``sigma``."""

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
    """(low, high, dimension) of the uniform input domain."""
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
    """True mean f(x) of the toy set (ACCRUE §5.1)."""
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
    """True standard deviation σ(x) of the toy set (ACCRUE §5.1)."""
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
    """Draw n points x ~ U(domain), y ~ N(f(x), σ(x)²) of toy set ``name`` (seeded)."""
    key = _check(name)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    lo, hi, d = toy_domain(key)
    x = rng.uniform(lo, hi, size=(n, d))
    f = toy_mean(key, x)
    sigma = toy_sigma(key, x)
    y = f + sigma * rng.standard_normal(n)
    return ToyData(name=key, x=x, y=y, f=f, sigma=sigma)
