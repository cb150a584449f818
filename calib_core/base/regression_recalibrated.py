"""Recalibrated predictive distributions: ``ShapeScale`` (CRUDE), ``IsotonicRecalibrated`` (Kuleshov) and
``SlicedDistribution``.

``ShapeScale(mean, std, z_sorted)`` (:mod:`calib_core.base.regression_shape_scale`)
    Y = μ + σ·Ẑ with Ẑ the empirical distribution of L calibration z-scores (Zelikman et al.,
    "CRUDE", §3.1–3.2).  Discrete: the CDF jumps by 1/L at every μ + σ·ẑ_j.

``IsotonicRecalibrated(base, mapping)`` (:mod:`calib_core.base.regression_isotonic`)
    G = R∘F with F the base CDF and R a monotone piecewise-linear map of [0, 1] onto [0, 1]
    (Kuleshov et al. 2018; its side effects analysed in Utpala & Rai, "Quantile regularization",
    QR §3 and appendix A.2).  The quantile function is G⁻¹ = F⁻¹∘R⁻¹, the density is the
    piecewise rescaled base density g = R'(F(y))·f(y) (QR eq. 10), and the moments and the CRPS
    are exact integrals over the pieces of R (see the class docstring).

``SlicedDistribution(parts, part_of)`` (this module)
    Row i follows part ``part_of[i]`` (e.g. one ``ShapeScale`` per slice: Mondrian split conformal, Vovk et al.
    2003): every method evaluates each part on its own rows and scatters the results back.

All are vectorised over rows (no Python loops over rows; ``SlicedDistribution`` loops over its parts).  This
module re-exports the first two (``calib_core.regression.recalibrated`` is this module).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .regression import PredictiveDistribution
from .regression_isotonic import IsotonicRecalibrated, compose_mappings, normalise_mapping
from .regression_shape_scale import ShapeScale

__all__ = ["ShapeScale", "IsotonicRecalibrated", "SlicedDistribution", "normalise_mapping", "compose_mappings"]


class SlicedDistribution(PredictiveDistribution):
    """Rows drawn from different distribution objects: row i is row ``pos[i]`` of ``parts[part_of[i]]``.

    The calibrated distribution of a slice-wise calibrator whose slices have different shapes (Mondrian split
    conformal: one empirical shape Ẑ_g per slice g).  Every method evaluates each part on the rows that follow it and
    scatters the answers back, so F_i, F_i⁻¹, log f_i, CRPS_i, mean and variance of row i are exactly those of its
    part.

    Parameters
    ----------
    parts : list of PredictiveDistribution
        The parts; ``parts[k]`` has as many rows as ``part_of == k``, in the order of those rows.
    part_of : array_like of int, shape (N,)
        The part of every row, in 0..len(parts) − 1.

    References
    ----------
    Vovk, V., Lindsay, D., Nouretdinov, I. & Gammerman, A. (2003). Mondrian confidence machine. Technical
    report, Royal Holloway, University of London.

    Vovk, V., Gammerman, A. & Shafer, G. (2005). Algorithmic Learning in a Random World. Springer.
    """

    def __init__(self, parts: list[PredictiveDistribution], part_of: Any) -> None:
        part_of = np.asarray(part_of, dtype=np.int64)
        if part_of.ndim != 1:
            raise ValueError("part_of must be one-dimensional (one part per row)")
        if part_of.size and (part_of.min() < 0 or part_of.max() >= len(parts)):
            raise ValueError(f"part_of must lie in 0..{len(parts) - 1}")
        counts = np.bincount(part_of, minlength=len(parts))
        for k, (part, c) in enumerate(zip(parts, counts)):
            if len(part) != c:
                raise ValueError(f"part {k} has {len(part)} rows but {c} rows follow it")
        self.parts = list(parts)
        self.part_of = part_of
        self._rows = [np.flatnonzero(part_of == k) for k in range(len(parts))]
        self.is_discrete = any(p.is_discrete for p in self.parts)

    def __len__(self) -> int:
        return self.part_of.size

    def _scatter(self, method: str, arg: Any = None, two_d: bool = False) -> np.ndarray:
        out: np.ndarray | None = None
        for part, rows in zip(self.parts, self._rows):
            if rows.size == 0:
                continue
            fn = getattr(part, method)
            if arg is None:
                val = np.asarray(fn(), dtype=float)
            else:
                a = np.asarray(arg, dtype=float)
                val = np.asarray(fn(a if a.ndim == 0 else a[rows]), dtype=float)
            if out is None:
                out = np.empty((len(self),) + val.shape[1:], dtype=float)
            out[rows] = val
        if out is None:
            width = (np.asarray(arg).shape[1],) if two_d else ()
            out = np.empty((0,) + width)
        return out

    def mean(self) -> np.ndarray:
        """Mean of every row's own part."""
        return self._scatter("mean")

    def var(self) -> np.ndarray:
        """Variance of every row's own part."""
        return self._scatter("var")

    def _ys(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        return y if y.ndim else np.broadcast_to(y, (len(self),))

    def cdf(self, y: np.ndarray) -> np.ndarray:
        """F_{part(i)}(y_i)."""
        return self._scatter("cdf", self._ys(y))

    def cdf_left(self, y: np.ndarray) -> np.ndarray:
        """F_{part(i)}(y_i−)."""
        return self._scatter("cdf_left", self._ys(y))

    def ppf(self, p: np.ndarray | float) -> np.ndarray:
        """F_{part(i)}⁻¹(p) (p: a scalar, one level per row, or (N, L) / (1, L) levels)."""
        pp, two_d = self._broadcast_p(p)
        q = self._scatter("ppf", np.ascontiguousarray(pp), two_d=True)
        return q if two_d else q[:, 0]

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """log f_{part(i)}(y_i)."""
        return self._scatter("logpdf", self._ys(y))

    def crps(self, y: np.ndarray) -> np.ndarray:
        """CRPS of every row's own part."""
        return self._scatter("crps", self._ys(y))

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One draw per row from its own part."""
        out = np.empty(len(self))
        for part, rows in zip(self.parts, self._rows):
            if rows.size:
                out[rows] = part.sample(rng)
        return out

    def take(self, index: np.ndarray) -> SlicedDistribution:
        """Rows ``index`` (boolean mask or integer index), each still following its own part."""
        idx = np.arange(len(self))[np.asarray(index)]
        pos = np.empty(len(self), dtype=np.int64)
        for rows in self._rows:
            pos[rows] = np.arange(rows.size)
        new_of = self.part_of[idx]
        parts = [part.take(pos[idx[new_of == k]]) for k, part in enumerate(self.parts)]
        return SlicedDistribution(parts, new_of)
