"""The grid behind the smooth ECE (Błasiok & Nakkiran 2023, "Smooth ECE: Principled reliability diagrams via kernel
smoothing", arXiv 2309.12236): the kernel-smoothed residuals on nodes in [0, 1], their cosine transform, the
automatic bandwidth and the error bound; and the ``relplot`` package's own discretisation, reproduced.

The rows (f_i, y_i) are rounded onto the nodes t_j = j/E (spacing Δ = 1/E) by linear interpolation; on [0, 1] the
reflected Gaussian kernel is diagonal in the cosine basis, K_σ(t, f) = 1 + 2 Σ_{m≥1} exp(−π²m²σ²/2) cos(πmt)
cos(πmf), so one DCT-I of the node masses gives the coefficients once and each bandwidth costs one inverse DCT-I,
O(E log E), independent of N.  The grid's error is at most B(σ) = φ(1)(Δ/σ)²·mean|r| (:func:`error_bound`).  The
definitions, the error bound and the two conventions are set out in :mod:`calib_core.metrics.classification_smooth`,
which builds the public smooth-ECE functions on this module and re-exports its names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import fft, optimize, signal

from ..base.binning import reject_nan
from .classification_kernels import smooth_node_sums

__all__ = ["SmoothECE", "SmoothGrid", "error_bound", "smooth_fit", "relplot_smece_sigma"]


#: φ(1): the constant of the error bound B = φ(1)·(Δ/σ)²·mean|r| (∫|φ''| = 4φ(1)/σ², times 2·Δ²/8).
PHI1 = math.exp(-0.5) / math.sqrt(2.0 * math.pi)

_MIN_LOG2, _MAX_LOG2 = 10, 22


def error_bound(delta: float, sigma: float, mean_abs_residual: float) -> float:
    """Bound B = φ(1)·(Δ/σ)²·mean|r| on |smECE_σ on the grid of spacing Δ − the exact smECE_σ| (module docstring).

    Parameters
    ----------
    delta : float
        Grid spacing Δ.
    sigma : float
        Bandwidth σ.
    mean_abs_residual : float
        mean_i |y_i − f_i|.

    Returns
    -------
    float
        B (inf for σ ≤ 0).

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """
    if sigma <= 0:
        return math.inf
    return PHI1 * (delta / sigma) ** 2 * mean_abs_residual


# =============================================================================================
# the grid and its cosine transform
# =============================================================================================


def split_nodes(f: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Left node j and weight λ of the right node for every f on the nodes j/size (f = 1 → node size − 1, λ = 1)."""
    x = f * size
    j = np.minimum(x.astype(np.int64), size - 1)
    return j, x - j


def node_sums(j: np.ndarray, lam: np.ndarray, values: np.ndarray | None, size: int,
               key_offset: np.ndarray | None = None, n_groups: int = 1) -> np.ndarray:
    """Σ of ``values`` (None: 1) spread on the size + 1 nodes by linear interpolation, per group (key_offset)."""
    v = np.ones_like(lam) if values is None else values
    right = lam * v
    left = v - right
    nodes = size + 1
    key = j if key_offset is None else j + key_offset * nodes
    out = np.bincount(key, weights=left, minlength=n_groups * nodes)
    out[1:] += np.bincount(key, weights=right, minlength=n_groups * nodes)[:-1]
    return out.reshape(n_groups, nodes) if key_offset is not None else out


def cos_coeffs(u: np.ndarray) -> np.ndarray:
    """A_m = Σ_j u_j cos(π m j / E), m = 0..E, along the last axis (DCT-I with the end nodes weighted once)."""
    out = fft.dct(u, type=1, axis=-1)
    out += u[..., :1]
    sign = np.where(np.arange(u.shape[-1]) % 2 == 0, 1.0, -1.0)
    out += sign * u[..., -1:]
    out *= 0.5
    return out


def _gains(sigma, n_modes: int) -> np.ndarray:
    """exp(−π²m²σ²/2), m = 0..n_modes − 1 (σ scalar or an array of shape (R, 1))."""
    m = np.arange(n_modes, dtype=float)
    s = np.asarray(sigma, dtype=float)
    return np.exp(-0.5 * (math.pi * m) ** 2 * s * s)


def smooth_nodes(coeffs: np.ndarray, sigma, n: np.ndarray | float, nodes: int) -> np.ndarray:
    """h(t_l) = (1/n)[A_0 + 2 Σ_m g_m A_m cos(π m l / E)] on the ``nodes`` nodes, from (possibly truncated) A."""
    m = coeffs.shape[-1]
    c = coeffs * _gains(sigma, m)
    c[..., 1:] *= 2.0
    # Σ_m c_m cos(π m l / E) = (dct1(c)_l + c_0 + (−1)^l c_E) / 2, c zero-padded to the E + 1 nodes
    out = fft.dct(c, type=1, n=nodes, axis=-1)
    out += c[..., :1]
    if m == nodes:
        sign = np.where(np.arange(nodes) % 2 == 0, 1.0, -1.0)
        out += sign * c[..., -1:]
    out *= 0.5
    return out / np.asarray(n, dtype=float)


def abs_integral(h: np.ndarray, delta: float) -> np.ndarray:
    """∫₀¹ |L h| for the piecewise-linear interpolant L h of node values h (last axis), exact per segment:
    the trapezoid sum of |h| minus, on each segment where h changes sign, 2|a||b|/(|a| + |b|)·Δ/2 (there ∫|L h| =
    Δ(a² + b²)/(2(|a| + |b|)) instead of Δ(|a| + |b|)/2)."""
    ah = np.abs(h)
    total = ah.sum(axis=-1) - 0.5 * (ah[..., 0] + ah[..., -1])
    sb = np.signbit(h)
    where = np.nonzero(sb[..., 1:] != sb[..., :-1])
    if where[0].size:
        left = where[:-1] + (where[-1],)
        right = where[:-1] + (where[-1] + 1,)
        x, z = ah[left], ah[right]
        s = x + z
        corr = np.where(s > 0, x * z / np.where(s > 0, s, 1.0), 0.0)
        if h.ndim == 1:
            total = total - corr.sum()
        else:  # (R, nodes)
            total = total - np.bincount(where[0], weights=corr, minlength=h.shape[0])
    return delta * total


def truncate_modes(sigma: float, nodes: int) -> int:
    """Number of cosine modes with exp(−π²m²σ²/2) ≥ 1e-17."""
    m = int(math.ceil(math.sqrt(2.0 * 17.0 * math.log(10.0)) / (math.pi * sigma))) + 1
    return int(min(nodes, max(m, 2)))


class SmoothGrid:
    """Rows rounded onto E + 1 nodes t_j = j/E, with the cosine coefficients of their node masses.

    Holds n, mean |r|, the node masses of r = y − f (``resid``), of 1 (``mass``, the density) and of y (``hits``; both
    computed when first asked for) and their cosine coefficients (computed once; every bandwidth reuses them).

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities in [0, 1].
    y : ndarray of shape (n,)
        Outcomes, 0 or 1.
    size : int
        E, the number of grid intervals.
    resid : ndarray of shape (size + 1,) or None, default None
        Node masses of the residuals, when already known (e.g. a null draw's).
    mean_abs_residual : float or None, default None
        mean |r| that goes with ``resid``.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """

    def __init__(self, f: np.ndarray, y: np.ndarray, size: int, *, resid: np.ndarray | None = None,
                 mean_abs_residual: float | None = None) -> None:
        self.size = int(size)
        self.n = float(f.shape[0])
        self._f, self._y = f, y
        self._masses: dict[str, np.ndarray] = {}
        r = None
        if resid is None:  # the residual, mass and hit masses in one compiled pass (node_sums's, bit for bit)
            r = y - f
            resid, self._masses["mass"], self._masses["hits"] = smooth_node_sums(f, y, r, self.size)
        self.resid = resid
        if mean_abs_residual is None:
            mean_abs_residual = float(np.abs(r).mean()) if r is not None and r.size else 0.0
        self.mean_abs_residual = float(mean_abs_residual)
        self._coeffs: dict[str, np.ndarray] = {}

    @property
    def delta(self) -> float:
        return 1.0 / self.size

    def nodes(self, which: str) -> np.ndarray:
        """Node masses of ``"resid"`` (y − f), ``"mass"`` (1) or ``"hits"`` (y)."""
        if which == "resid":
            return self.resid
        if which not in self._masses:
            raise ValueError("this grid holds residual masses only")
        return self._masses[which]

    def coeffs(self, which: str = "resid") -> np.ndarray:
        if which not in self._coeffs:
            self._coeffs[which] = cos_coeffs(self.nodes(which))
        return self._coeffs[which]

    def smece(self, sigma: float) -> float:
        """smECE_σ on this grid."""
        if self.n <= 0:
            return float("nan")
        c = self.coeffs("resid")
        h = smooth_nodes(c[: truncate_modes(sigma, c.shape[-1])], sigma, self.n, self.size + 1)
        return float(abs_integral(h, self.delta))

    def smoothed(self, which: str, sigma: float) -> np.ndarray:
        """(1/N) Σ_i K_σ(t_l, f_i)·v_i at the nodes (v = 1: the density δ̂; v = y: numerator of the curve)."""
        return smooth_nodes(self.coeffs(which), sigma, self.n, self.size + 1)

    def fixed_point(self, guess: float | None = None) -> float:
        """The root σ* of smECE_σ − σ on this grid (Brent, 1e-14); 0 when every residual is 0.  ``guess``: a nearby
        root (e.g. on a coarser grid) to bracket first."""
        if self.mean_abs_residual <= 0:
            return 0.0
        g = lambda s: self.smece(s) - s  # noqa: E731
        lo, hi = self.delta / 4.0, max(self.mean_abs_residual, 1e-300)
        if guess is not None and guess > lo:
            a, b = guess * 0.98, guess * 1.02
            if a > lo and b < hi and g(a) > 0 > g(b):
                lo, hi = a, b
        if g(lo) <= 0:  # the root lies below the grid's resolution: report the bracket's end
            return lo
        if g(hi) >= 0:
            return hi
        return float(optimize.brentq(g, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200))


@dataclass(frozen=True)
class SmoothECE:
    """A smooth ECE estimate and how it was computed.

    Attributes
    ----------
    value : float
        smECE.
    sigma : float
        The bandwidth it is evaluated at (= value in the paper convention).
    bound : float
        Bound on |value − the exact smECE at ``sigma``| (NaN for the relplot convention, which reproduces that
        package's own discretisation).
    grid_size : int
        E.
    n : int
        Rows.
    convention : str
        ``"paper"`` or ``"relplot"``.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """

    value: float
    sigma: float
    bound: float
    grid_size: int
    n: int
    convention: str


def clean_events(values: np.ndarray, outcomes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(values, dtype=float).ravel()
    y = np.asarray(outcomes, dtype=float).ravel()
    if f.shape != y.shape:
        raise ValueError(f"values and outcomes must have the same length; got {f.size} and {y.size}")
    reject_nan(f, "probs")
    reject_nan(y, "labels")
    if f.size and (f.min() < 0.0 or f.max() > 1.0):
        raise ValueError("predicted probabilities must lie in [0, 1]")
    return f, y


def _grid_for(sigma: float, mean_abs: float, tol: float) -> int:
    """Smallest power-of-two E (2^10 … 2^22) with φ(1)(Δ/σ)² mean|r| ≤ tol."""
    if sigma <= 0 or PHI1 * mean_abs <= 0:  # the product underflows for subnormal residuals (mean|r| ~ 5e-324)
        return 2 ** _MIN_LOG2
    delta = sigma * math.sqrt(tol / (PHI1 * mean_abs))
    k = math.ceil(math.log2(1.0 / delta)) if delta < 1 else 0
    return 2 ** int(min(max(k, _MIN_LOG2), _MAX_LOG2))


def smooth_fit(f: np.ndarray, y: np.ndarray, *, sigma: float | None = None, tol: float = 1e-6
               ) -> tuple[SmoothECE, SmoothGrid]:
    """The paper-convention estimate of cleaned arrays, and the grid it was computed on (reused for the curve).

    The grid is refined (powers of two up to 2^22) until the error bound at the bandwidth used is within ``tol``.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities in [0, 1].
    y : ndarray of shape (n,)
        Outcomes, 0 or 1.
    sigma : float or None, default None
        Fixed bandwidth; None: the fixed point σ*.
    tol : float, default 1e-6
        Target of the error bound.

    Returns
    -------
    estimate : SmoothECE
        The smooth ECE.
    grid : SmoothGrid
        Its grid.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """
    n = f.shape[0]
    grid = SmoothGrid(f, y, 2 ** 12)
    s = None
    for _ in range(4):  # refine the grid until the bound at the bandwidth used is within tol (or 2^22)
        s = grid.fixed_point(s) if sigma is None else float(sigma)
        want = _grid_for(s, grid.mean_abs_residual, tol)
        if want <= grid.size:
            break
        grid = SmoothGrid(f, y, want)
        s = grid.fixed_point(s) if sigma is None else float(sigma)
    value = grid.smece(s) if s > 0 else 0.0  # = s up to Brent's tolerance when sigma is None
    bound = error_bound(grid.delta, s, grid.mean_abs_residual) if s > 0 else 0.0
    return SmoothECE(float(value), float(s), float(bound), grid.size, n, "paper"), grid


# =============================================================================================
# relplot 1.0.3, step by step (vectorised: bincount instead of add.at, FFT convolution)
# =============================================================================================


def _relplot_round(f: np.ndarray, v: np.ndarray, points: int) -> np.ndarray:
    bins = np.clip((f * (points - 1)).astype(np.int64), 0, points - 2)
    frac = f * (points - 1) - bins
    out = np.bincount(bins, weights=(1.0 - frac) * v, minlength=points)
    out[1:] += np.bincount(bins, weights=frac * v, minlength=points)[:-1]
    return out


def _relplot_apply(f: np.ndarray, v: np.ndarray, sigma: float, t: np.ndarray) -> np.ndarray:
    points = max(2000, round(20 / sigma)) // 2 + 1
    values = _relplot_round(f, v, points)
    grid = np.linspace(0, 1, points)
    ker = np.exp(-(grid - 0.5) * (grid - 0.5) / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)
    ext = np.concatenate([np.flip(values)[:-1], values, np.flip(values)[1:]])
    smoothed = signal.fftconvolve(ext, ker, mode="valid")[points // 2: points // 2 + points]
    inds = np.clip((t * (points - 1)).astype(np.int64), 0, points - 2)
    size = 1 / (points - 1)
    res = (t - inds * size) / size
    return smoothed[inds] * (1 - res) + smoothed[inds + 1] * res


def relplot_smece_sigma(values: np.ndarray, outcomes: np.ndarray, sigma: float) -> float:
    """``relplot.smECE_sigma(f, y, sigma)``: relplot 1.0.3's smECE at a fixed bandwidth, vectorised.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Probabilities in [0, 1].
    outcomes : ndarray of shape (n,)
        Outcomes, 0 or 1.
    sigma : float
        Bandwidth.

    Returns
    -------
    float
        smECE_σ as relplot computes it.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).

    Błasiok, J. & Nakkiran, P. (2023). relplot: reliability diagrams and smooth ECE, Python package 1.0.3.
    https://github.com/apple/ml-calibration.
    """
    f, y = clean_events(values, outcomes)
    return _relplot_smece(f, f - y, float(sigma))


def _relplot_smece(f: np.ndarray, r: np.ndarray, sigma: float) -> float:
    ev = max(round(10 / sigma), 200)
    t = np.linspace(0, 1, ev)
    num = _relplot_apply(f, r, sigma, t)
    dens = _relplot_apply(f, np.ones_like(r), sigma, t) + 0.0001
    ys = num / dens
    return float(np.sum(np.abs(ys) * dens) / np.sum(dens))


def relplot_smooth_ece(f: np.ndarray, y: np.ndarray, sigma: float | None) -> SmoothECE:
    r = f - y
    if sigma is None:
        if _relplot_pred(f, r, 1.0):
            s = 1.0
        else:
            s, end = 1.0, 0.0
            for _ in range(10):  # relplot's search_param: 10 bisection steps (a loop over steps, not rows)
                mid = (s + end) / 2
                if _relplot_pred(f, r, mid):
                    end = mid
                else:
                    s = mid
    else:
        s = float(sigma)
    return SmoothECE(_relplot_smece(f, r, s), float(s), float("nan"), max(2000, round(20 / s)) // 2, f.size,
                     "relplot")


def _relplot_pred(f: np.ndarray, r: np.ndarray, alpha: float) -> bool:
    return alpha < 0.001 or alpha < _relplot_smece(f, r, alpha)
