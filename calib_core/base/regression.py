"""Vectorised predictive distributions for regression.

Every distribution holds N independent univariate predictive distributions, one per row, and
evaluates them all at once: ``cdf(y)``, ``ppf(p)``, ``logpdf(y)`` and ``crps(y)`` take an array
of length N (or something that broadcasts to it) and return an array of length N.  There are no
Python loops over rows.

Notation: ε = y − μ, z = ε/σ, PIT u = F(y).

The interface is modelled on ``scipy.stats`` frozen distributions, minus the parameters: the
objects are immutable and can be sliced row-wise with ``dist.take(index)``.

The interface (:class:`PredictiveDistribution`) and the standard normal functions are in
:mod:`calib_core.base.regression_distribution` (re-exported here).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from .regression_distribution import (
    LOG_2PI,
    PredictiveDistribution,
    as_rows,
    gaussian_crps,
    norm_cdf,
    norm_pdf,
    norm_ppf,
)

__all__ = [
    "PredictiveDistribution",
    "Gaussian",
    "QuantileSet",
    "SampleSet",
    "norm_cdf",
    "norm_pdf",
    "norm_ppf",
    "gaussian_crps",
]


def _rate_times(lam: np.ndarray, d: np.ndarray) -> np.ndarray:
    """λ·d with 0 where d = 0 (λ = ∞ for a tail collapsed onto tied outer quantiles: a point mass)."""
    with np.errstate(invalid="ignore"):
        return np.where(d == 0, 0.0, lam * d)


def _over_rate(x: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """x/λ with 0 where λ = ∞."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isinf(lam), 0.0, x / lam)


class Gaussian(PredictiveDistribution):
    """Independent Gaussians N(μ_i, σ_i²).

    Parameters
    ----------
    mean, std : array-like of shape (N,)
        Predictive means μ and standard deviations σ (> 0).
    copy : bool, default True
        False: float arrays of equal shape are kept as given, not copied (the loader's own arrays).

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """

    def __init__(self, mean: Any, std: Any, *, copy: bool = True) -> None:
        mean = as_rows(mean, "mean")
        std = as_rows(std, "std")
        if not copy and mean.shape == std.shape:  # the loader hands over arrays it owns: no second copy
            self._mean, self._std = mean, std
            return
        mean, std = np.broadcast_arrays(mean, std)
        self._mean = np.array(mean, dtype=float)
        self._std = np.array(std, dtype=float)

    def __len__(self) -> int:
        return self._mean.shape[0]

    def nan_rows(self) -> np.ndarray:
        return np.isnan(self._mean) | np.isnan(self._std)

    def mean(self) -> np.ndarray:
        return self._mean

    def var(self) -> np.ndarray:
        return self._std**2

    def std(self) -> np.ndarray:
        return self._std

    def _z(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        if y.ndim == 2:
            return (y - self._mean[:, None]) / self._std[:, None]
        return (y - self._mean) / self._std

    def cdf(self, y: np.ndarray) -> np.ndarray:
        """Φ((y − μ)/σ)."""
        return norm_cdf(self._z(y))

    def ppf(self, p: np.ndarray | float) -> np.ndarray:
        """μ + σ Φ⁻¹(p) (Φ⁻¹ evaluated once per distinct level shape, then broadcast)."""
        zp = norm_ppf(np.asarray(p, dtype=float))
        if zp.ndim == 2:
            return self._mean[:, None] + self._std[:, None] * zp
        return self._mean + self._std * zp

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """−½ log(2πσ²) − ε²/(2σ²)."""
        z = self._z(y)
        return -0.5 * LOG_2PI - np.log(self._std) - 0.5 * z * z

    def crps(self, y: np.ndarray) -> np.ndarray:
        """σ [z(2Φ(z) − 1) + 2φ(z) − 1/√π] (closed form)."""
        return gaussian_crps(y, self._mean, self._std)

    def take(self, index: np.ndarray) -> Gaussian:
        return Gaussian(self._mean[index], self._std[index])

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self._mean + self._std * rng.standard_normal(len(self))


class QuantileSet(PredictiveDistribution):
    """Distributions given by L quantiles per row, τ_1 < … < τ_L, values q_i1 ≤ … ≤ q_iL.

    Between two given quantiles the CDF is linear (a uniform density on each segment).  Outside
    them the tails are exponential and continue the density of the outermost segment:

        F(y) = τ_1 exp(λ_lo (y − q_1)),            y < q_1,  λ_lo = f_1/τ_1,
        1 − F(y) = (1 − τ_L) exp(−λ_hi (y − q_L)),  y > q_L,  λ_hi = f_L/(1 − τ_L),

    with f_1 = (τ_2 − τ_1)/(q_2 − q_1) and f_L = (τ_L − τ_{L−1})/(q_L − q_{L−1}) the densities
    of the first and last segment.  The support is the whole real line, the CDF and the density
    are continuous at q_1 and q_L, and every moment is finite.  If τ_1 = 0 or τ_L = 1 that tail is
    absent (the support ends there).  Mean, variance and CRPS are exact for this distribution.
    Zero-width segments (tied quantiles) are atoms of size Δτ.

    Parameters
    ----------
    levels : array-like of shape (L,)
        Strictly increasing quantile levels in [0, 1], L ≥ 2.
    values : array-like of shape (N, L)
        Quantiles per row, non-decreasing along each row.

    References
    ----------
    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.

    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """

    def __init__(self, levels: Any, values: Any) -> None:
        levels = np.asarray(levels, dtype=float)
        values = np.asarray(values, dtype=float)
        if levels.ndim != 1 or levels.size < 2:
            raise ValueError("QuantileSet needs at least two levels")
        if np.any(np.diff(levels) <= 0) or levels[0] < 0 or levels[-1] > 1:
            raise ValueError("quantile levels must be strictly increasing within [0, 1]")
        if values.ndim == 1:
            values = values[None, :]
        if values.ndim != 2 or values.shape[1] != levels.size:
            raise ValueError(f"values must have shape (N, {levels.size}), got {values.shape}")
        if np.any(np.diff(values, axis=1) < 0):
            raise ValueError("quantile values must be non-decreasing in the level")
        self.levels = levels
        self.values = values
        dq_lo = values[:, 1] - values[:, 0]
        dq_hi = values[:, -1] - values[:, -2]
        with np.errstate(divide="ignore", invalid="ignore"):
            self._f_lo = (levels[1] - levels[0]) / dq_lo
            self._f_hi = (levels[-1] - levels[-2]) / dq_hi
            self._lam_lo = self._f_lo / levels[0]
            self._lam_hi = self._f_hi / (1.0 - levels[-1])

    def __len__(self) -> int:
        return self.values.shape[0]

    def nan_rows(self) -> np.ndarray:
        return np.isnan(self.values).any(axis=1)

    def take(self, index: np.ndarray) -> QuantileSet:
        return QuantileSet(self.levels, self.values[index])

    # -- moments ---------------------------------------------------------------------------
    def _moments(self) -> tuple[np.ndarray, np.ndarray]:
        tau, q = self.levels, self.values
        mass = np.diff(tau)  # (L-1,)
        a, b = q[:, :-1], q[:, 1:]
        m1 = (mass * (a + b) / 2.0).sum(axis=1)
        m2 = (mass * (a * a + a * b + b * b) / 3.0).sum(axis=1)
        if tau[0] > 0:  # lower tail: q_1 − Exp(λ_lo) with mass τ_1
            inv = _over_rate(1.0, self._lam_lo)
            mu_t = q[:, 0] - inv
            m1 = m1 + tau[0] * mu_t
            m2 = m2 + tau[0] * (mu_t**2 + inv**2)
        if tau[-1] < 1:  # upper tail: q_L + Exp(λ_hi) with mass 1 − τ_L
            inv = _over_rate(1.0, self._lam_hi)
            mu_t = q[:, -1] + inv
            m1 = m1 + (1 - tau[-1]) * mu_t
            m2 = m2 + (1 - tau[-1]) * (mu_t**2 + inv**2)
        return m1, m2

    def _moments_once(self) -> tuple[np.ndarray, np.ndarray]:
        # the values are not changed after construction (take() builds a new set), so E[Y], E[Y²] are kept
        cached = self.__dict__.get("_moments_cache")
        if cached is None:
            cached = self.__dict__["_moments_cache"] = self._moments()
        return cached

    def mean(self) -> np.ndarray:
        """Exact mean of the piecewise-uniform distribution with exponential tails."""
        return self._moments_once()[0].copy()

    def var(self) -> np.ndarray:
        """Exact variance E[Y²] − E[Y]² of the same distribution."""
        m1, m2 = self._moments_once()
        return np.maximum(m2 - m1 * m1, 0.0)

    # -- cdf / ppf -------------------------------------------------------------------------
    def _segment(self, y: np.ndarray) -> np.ndarray:
        """k_i = #{j : q_ij ≤ y_i} ∈ 0..L (vectorised, O(N·L))."""
        return (self.values <= y[:, None]).sum(axis=1)

    def cdf(self, y: np.ndarray) -> np.ndarray:
        """Piecewise-linear interpolation of (q_ij, τ_j) with exponential tails."""
        y = as_rows(y, "y")
        y = np.broadcast_to(y, (len(self),))
        tau, q = self.levels, self.values
        L = tau.size
        k = self._segment(y)
        rows = np.arange(len(self))
        kk = np.clip(k, 1, L - 1)
        lo, hi = q[rows, kk - 1], q[rows, kk]
        width = hi - lo
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(width > 0, (y - lo) / width, 1.0)
        out = tau[kk - 1] + frac * (tau[kk] - tau[kk - 1])
        with np.errstate(over="ignore", invalid="ignore"):
            low_tail = tau[0] * np.exp(_rate_times(self._lam_lo, y - q[:, 0])) if tau[0] > 0 else 0.0
            if tau[-1] < 1:  # a collapsed tail (λ = ∞) is an atom at q_L: F(q_L) = 1
                high_tail = 1.0 - (1 - tau[-1]) * np.exp(-_rate_times(self._lam_hi, y - q[:, -1]))
                high_tail = np.where(np.isinf(self._lam_hi), 1.0, high_tail)
            else:
                high_tail = 1.0
        out = np.where(k == 0, low_tail, out)
        out = np.where(k == L, high_tail, out)
        return np.clip(out, 0.0, 1.0)

    def ppf(self, p: np.ndarray | float) -> np.ndarray:
        """Inverse of ``cdf``: linear between given quantiles, exponential beyond them."""
        pp, two_d = self._broadcast_p(p)
        tau, q = self.levels, self.values
        L = tau.size
        j = np.clip(np.searchsorted(tau, pp, side="right"), 1, L - 1)  # segment (j-1, j)
        rows = np.arange(len(self))[:, None]
        lo, hi = q[rows, j - 1], q[rows, j]
        frac = (pp - tau[j - 1]) / (tau[j] - tau[j - 1])
        out = lo + frac * (hi - lo)
        with np.errstate(divide="ignore", invalid="ignore"):
            if tau[0] > 0:
                tail = q[:, :1] + _over_rate(np.log(pp / tau[0]), self._lam_lo[:, None])
                out = np.where(pp < tau[0], tail, out)
            if tau[-1] < 1:
                tail = q[:, -1:] - _over_rate(np.log((1 - pp) / (1 - tau[-1])), self._lam_hi[:, None])
                out = np.where(pp > tau[-1], tail, out)
        return out if two_d else out[:, 0]

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """log density: log(Δτ/Δq) inside a segment, the exponential tail density outside."""
        y = np.broadcast_to(as_rows(y, "y"), (len(self),))
        tau, q = self.levels, self.values
        L = tau.size
        k = self._segment(y)
        rows = np.arange(len(self))
        kk = np.clip(k, 1, L - 1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            logd = np.log((tau[kk] - tau[kk - 1]) / (q[rows, kk] - q[rows, kk - 1]))
            # tails in log space: log f_1 + λ_lo (y − q_1) and log f_L − λ_hi (y − q_L) never underflow
            lo = np.log(self._f_lo) + _rate_times(self._lam_lo, y - q[:, 0]) if tau[0] > 0 else -np.inf
            hi = np.log(self._f_hi) - _rate_times(self._lam_hi, y - q[:, -1]) if tau[-1] < 1 else -np.inf
        logd = np.where(k == 0, lo, logd)
        return np.where(k == L, hi, logd)

    def crps(self, y: np.ndarray) -> np.ndarray:
        """Exact CRPS = ∫(F(x) − 1{x ≥ y})² dx for the piecewise-linear CDF with exponential tails.

        The knots q_i1..q_iL and y_i split the line into pieces on which F is linear (inside) or
        exponential (tails) and the step 1{x ≥ y} is constant; each piece integrates in closed
        form: a linear piece of length ℓ from F_a to F_b against c gives ℓ[(F_a−c)² + (F_a−c)(F_b−c)
        + (F_b−c)²]/3.
        """
        y = np.broadcast_to(as_rows(y, "y"), (len(self),)).astype(float)
        tau, q = self.levels, self.values
        n, L = q.shape
        # Inner part on [q_1, q_L]: insert y clipped into [q_1, q_L] as an extra knot.
        yc = np.clip(y, q[:, 0], q[:, -1])
        knots = np.concatenate([q, yc[:, None]], axis=1)
        order = np.argsort(knots, axis=1, kind="stable")
        knots = np.take_along_axis(knots, order, axis=1)
        fk = np.concatenate([np.broadcast_to(tau, (n, L)), self.cdf(yc)[:, None]], axis=1)
        fk = np.take_along_axis(fk, order, axis=1)
        fa, fb = fk[:, :-1], fk[:, 1:]
        length = np.diff(knots, axis=1)
        # step value on each piece: 1 when the piece lies right of y
        c = (knots[:, :-1] >= y[:, None]).astype(float)
        da, db = fa - c, fb - c
        total = (length * (da * da + da * db + db * db) / 3.0).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if tau[0] > 0:
                lam = self._lam_lo
                fy = tau[0] * np.exp(_rate_times(lam, np.minimum(y - q[:, 0], 0.0)))
                right = _over_rate(tau[0] ** 2 / 2, lam)  # y ≥ q_1: ∫ F² over the tail
                left = (
                    _over_rate(fy**2 / 2, lam)
                    + (q[:, 0] - y)
                    - _over_rate(2 * (tau[0] - fy), lam)
                    + _over_rate((tau[0] ** 2 - fy**2) / 2, lam)
                )
                total = total + np.where(y >= q[:, 0], right, left)
            if tau[-1] < 1:
                lam = self._lam_hi
                g0 = 1 - tau[-1]
                gy = g0 * np.exp(-_rate_times(lam, np.maximum(y - q[:, -1], 0.0)))
                left = _over_rate(g0**2 / 2, lam)  # y ≤ q_L: ∫ (1 − F)² over the tail
                right = (
                    (y - q[:, -1])
                    - _over_rate(2 * (g0 - gy), lam)
                    + _over_rate((g0**2 - gy**2) / 2, lam)
                    + _over_rate(gy**2 / 2, lam)
                )
                total = total + np.where(y <= q[:, -1], left, right)
        if tau[0] == 0:  # no lower tail: F = 0 below q_1, so y < q_1 adds ∫_y^{q_1} 1 dx
            total = total + np.maximum(q[:, 0] - y, 0.0)
        if tau[-1] == 1:  # no upper tail: F = 1 above q_L, so y > q_L adds ∫_{q_L}^y 1 dx
            total = total + np.maximum(y - q[:, -1], 0.0)
        return total


class SampleSet(PredictiveDistribution):
    """Empirical distributions of M samples (ensemble members) per row.

    F_i is the empirical CDF of the row's samples x_i1..x_iM: ``cdf`` = #{x ≤ y}/M (right continuous) and
    ``cdf_left`` = #{x < y}/M.  The diagnostics use the randomised *rank* PIT (``pit``), which is uniform for a
    calibrated ensemble, rather than F(y).  ``mean`` and ``var`` are the sample mean and the population variance
    (ddof = 0) of the empirical distribution.  ``ppf(p)`` is the order statistic x_(⌈pM⌉) (the left-continuous inverse
    of the ECDF; x_(1) at p = 0).  An empirical distribution has no density, so ``logpdf`` uses a Gaussian kernel
    density estimate with Silverman's bandwidth h = 1.06 s M^(−1/5) per row (s the ddof=1 standard deviation), floored
    at 1% of the median bandwidth over rows so that degenerate rows (all members equal) keep a finite density.

    CRPS is exact via the sorted-sample (energy) form, O(N·M log M) time and O(N·M) memory:

        CRPS = (1/M) Σ_j |x_j − y| − (1/M²) Σ_j (2j − M − 1) x_(j)

    (``fair=True`` uses 1/(M(M − 1)) in the second term: the unbiased "fair" ensemble CRPS).

    Parameters
    ----------
    samples : array_like of shape (N, M)
        The M members of every row.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.

    Hersbach, H. (2000). Decomposition of the continuous ranked probability score for ensemble prediction
    systems. Weather and Forecasting 15(5), 559–570.

    Ferro, C. A. T. (2014). Fair scores for ensemble forecasts. Quarterly Journal of the Royal Meteorological
    Society 140(683), 1917–1923.

    Silverman, B. W. (1986). Density Estimation for Statistics and Data Analysis. Chapman & Hall.
    """

    is_discrete = True

    def __init__(self, samples: Any) -> None:
        s = np.asarray(samples, dtype=float)
        if s.ndim != 2 or s.shape[1] < 2:
            raise ValueError(f"samples must have shape (N, M) with M ≥ 2, got {s.shape}")
        self.samples = s
        self._sorted: np.ndarray | None = None

    @property
    def sorted_samples(self) -> np.ndarray:
        """Samples sorted along each row (computed once)."""
        if self._sorted is None:
            self._sorted = np.sort(self.samples, axis=1)
        return self._sorted

    def __len__(self) -> int:
        return self.samples.shape[0]

    def nan_rows(self) -> np.ndarray:
        return np.isnan(self.samples).any(axis=1)

    @property
    def n_samples(self) -> int:
        return self.samples.shape[1]

    def take(self, index: np.ndarray) -> SampleSet:
        out = SampleSet(self.samples[index])
        if self._sorted is not None:
            out._sorted = self._sorted[index]
        return out

    def mean(self) -> np.ndarray:
        return self.samples.mean(axis=1)

    def var(self) -> np.ndarray:
        return self.samples.var(axis=1)

    def cdf(self, y: np.ndarray) -> np.ndarray:
        """#{x_ij ≤ y_i}/M."""
        y = np.broadcast_to(as_rows(y, "y"), (len(self),))
        return (self.samples <= y[:, None]).mean(axis=1)

    def cdf_left(self, y: np.ndarray) -> np.ndarray:
        """#{x_ij < y_i}/M."""
        y = np.broadcast_to(as_rows(y, "y"), (len(self),))
        return (self.samples < y[:, None]).mean(axis=1)

    def pit(self, y: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """Rank PIT of the target among the M members (verification rank histogram).

        If y and the members are exchangeable draws (a calibrated ensemble), the rank
        r = #{x < y} is uniform on 0..M.  The randomised rank PIT
        u = (r + V·(1 + #{x = y}))/(M + 1), V ~ U(0, 1), is then exactly U(0, 1) (ties with members,
        e.g. zero precipitation, are spread uniformly).  Without a generator V = ½.
        Note that this differs from the empirical CDF F(y) = #{x ≤ y}/M, which is not uniform
        even for a calibrated ensemble (Anderson 1996; Hamill 2001).
        """
        y = np.broadcast_to(as_rows(y, "y"), (len(self),))
        below = (self.samples < y[:, None]).sum(axis=1)
        ties = (self.samples == y[:, None]).sum(axis=1)
        v = 0.5 if rng is None else rng.random(len(self))
        return (below + v * (1.0 + ties)) / (self.n_samples + 1.0)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One draw per row exchangeable-in-law with the members: a target of a calibrated ensemble.

        A random member plus Gaussian kernel noise (bandwidth h), shrunk about the ensemble mean so
        that the draw has the variance a new exchangeable draw has around the ensemble mean,
        E(y − x̄)² = σ²(1 + 1/M) ≈ s²(1 + 1/M) (s² the ddof=1 variance):
        y* = x̄ + c·(x_J − x̄ + h ε),  c² = s²(1 + 1/M) / (s₀² + h²),  s₀² the ddof=0 variance
        (the smoothed bootstrap with variance correction, Silverman 1986 §6.4).  Degenerate rows
        (all members equal) return the member value.
        """
        m = self.n_samples
        n = len(self)
        centre = self.mean()
        s0 = self.samples.var(axis=1)
        h = self._bandwidth()
        pick = self.samples[np.arange(n), rng.integers(0, m, n)]
        with np.errstate(invalid="ignore", divide="ignore"):
            c = np.sqrt(s0 * m / (m - 1.0) * (1.0 + 1.0 / m) / (s0 + h * h))
        c = np.where(s0 > 0, c, 0.0)
        return centre + c * (pick - centre + h * rng.standard_normal(n))

    def calibrated_draw(self, y: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, SampleSet]:
        """Swap the target with a random member: (x_J, members with x_J replaced by y).

        A calibrated ensemble is one whose target and members are exchangeable; under that
        hypothesis the swapped pair has exactly the joint law of (y, members), so metrics of the
        swapped data are draws of what a perfectly calibrated ensemble would score (a permutation
        reference, exact for every metric, including the finite-M effects such as the
        (M − 1)/(M + 1) coverage of [x_(1), x_(M)]).
        """
        n, m = self.samples.shape
        y = np.broadcast_to(as_rows(y, "y"), (n,))
        rows = np.arange(n)
        j = rng.integers(0, m, n)
        swapped = self.samples.copy()
        y_star = swapped[rows, j].copy()
        swapped[rows, j] = y
        return y_star, SampleSet(swapped)

    def _bandwidth(self) -> np.ndarray:
        """Silverman's h_i = 1.06 s_i M^(−1/5), floored at 1% of the median positive h over rows
        (a degenerate row, all members equal, would otherwise get a zero-width kernel)."""
        h = 1.06 * self.samples.std(axis=1, ddof=1) * self.n_samples ** (-0.2)
        positive = h[h > 0]
        floor = 0.01 * float(np.median(positive)) if positive.size else 1e-12
        return np.maximum(h, max(floor, 1e-300))

    def ppf(self, p: np.ndarray | float) -> np.ndarray:
        """x_(⌈pM⌉), the smallest sample whose ECDF reaches p."""
        pp, two_d = self._broadcast_p(p)
        m = self.n_samples
        idx = np.clip(np.ceil(pp * m - 1e-12).astype(int) - 1, 0, m - 1)
        out = np.take_along_axis(self.sorted_samples, idx, axis=1)
        return out if two_d else out[:, 0]

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """log of a Gaussian KDE of the row's samples (Silverman bandwidth), log-sum-exp."""
        y = np.broadcast_to(as_rows(y, "y"), (len(self),))
        m = self.n_samples
        h = self._bandwidth()
        z = (y[:, None] - self.samples) / h[:, None]
        return special.logsumexp(-0.5 * z * z, axis=1) - np.log(m * h) - 0.5 * LOG_2PI

    def crps(self, y: np.ndarray, fair: bool = False) -> np.ndarray:
        """Exact ensemble CRPS (energy form with sorted samples); see the class docstring."""
        y = np.broadcast_to(as_rows(y, "y"), (len(self),))
        x = self.sorted_samples
        m = self.n_samples
        term1 = np.abs(x - y[:, None]).mean(axis=1)
        coef = 2.0 * np.arange(1, m + 1) - m - 1.0
        spread = (x * coef).sum(axis=1)
        denom = m * (m - 1.0) if fair else m * float(m)
        return term1 - spread / denom
