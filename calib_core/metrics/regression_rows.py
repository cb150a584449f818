"""The rows of a regression diagnosis: :class:`RegressionRows`, the PIT and the NaN policy.

Every regression metric takes ``(y, dist)`` — the targets and a
:class:`calib_core.base.regression.PredictiveDistribution` — and starts from the per-row quantities computed here
once: μ, σ, ε = y − μ, z = ε/σ, the PIT u = F(y), the sort orders and the σ-bins of Levi et al. (2019).  The
weighted implementations of the statistics (``stat_*``) take row weights w as well: a bootstrap replicate is a
vector of multinomial count weights (Σw = N), so a resampled metric costs O(N) on the pre-sorted data instead of a
new sort.

Also here: the ENCE of the σ-bins (:meth:`RegressionRows.ence`, Levi et al. 2019, eq. 8) and why a row has no
usable z (:func:`undefined_z_counts`, :func:`undefined_z_note`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any, Literal

import numpy as np

from ..base.binning import (
    background,
    bin_sums,
    equal_count_bins,
    equal_width_bins,
    reject_nan,
    stable_argsort,
    stable_argsort_futures,
)
from ..base.regression import LOG_2PI, Gaussian, PredictiveDistribution, norm_cdf, norm_pdf
from .regression_kernels import sigma_bin_sums
from .regression_sorts import equal_count_bins_from_ranks, packed_argsort_ranks

__all__ = [
    "RegressionRows",
    "DEFAULT_LEVELS",
    "DEFAULT_COVERAGES",
    "pit",
    "Z_CAUSES",
    "undefined_z_counts",
    "undefined_z_note",
]


#: Quantile-calibration grid p = 0, 0.01, …, 1.
DEFAULT_LEVELS = np.linspace(0.0, 1.0, 101)

#: Central interval coverages.
DEFAULT_COVERAGES = (0.5, 0.8, 0.9, 0.95, 0.99)

Binning = Literal["count", "width"]

PropType = Literal["quantile", "interval"]


class RegressionRows:
    """Per-row quantities of (y, dist), computed once and shared by every metric.

    The PIT ``u`` is randomised between F(y−) and F(y) for distributions with atoms (seeded by ``pit_seed``, see
    :func:`pit`).  Sorted arrays and sort orders are computed lazily (:meth:`compute_orders` sorts them together);
    the σ-bins of Levi et al. (2019) are cached per (binning, number of bins).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    pit_seed : int or None, default 0
        Seed of the randomised PIT.
    randomize_pit : bool or None, default None
        Randomise the PIT; None: when ``dist.is_discrete``.

    Attributes
    ----------
    y, mean, sigma : ndarray of shape (n,)
        Targets, predictive means μ and standard deviations σ.
    eps, z : ndarray of shape (n,)
        Errors ε = y − μ and standardised errors z = ε/σ.
    u : ndarray of shape (n,)
        PIT values F(y) (computed on first use).
    z_ok : ndarray of bool or None
        Rows with a finite z (σ > 0; None: all rows); the statistics of z use these only.
    n_z_excluded : int
        Number of rows without a finite z.
    z_range : tuple of float or None
        (min z, max z) when every z is finite; None otherwise.

    References
    ----------
    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.

    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """

    def __init__(
        self,
        y: np.ndarray,
        dist: PredictiveDistribution,
        *,
        pit_seed: int | None = 0,
        randomize_pit: bool | None = None,
    ) -> None:
        y = np.asarray(y, dtype=float)
        if y.ndim != 1 or y.shape[0] != len(dist):
            raise ValueError(f"y has shape {y.shape} but the distribution has {len(dist)} rows")
        self.y = y
        self.dist = dist
        self.n = y.shape[0]
        self.mean = np.asarray(dist.mean(), dtype=float)
        self.sigma = np.asarray(dist.std(), dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):  # rows without a usable z: see undefined_z_counts
            self.eps = y - self.mean
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            self.z = self.eps / self.sigma
        # every z finite ⇔ min z and max z finite (a NaN propagates into both): two reductions, no mask
        z_range = (float(self.z.min()), float(self.z.max())) if self.n else (0.0, 0.0)
        every = bool(np.isfinite(z_range[0]) and np.isfinite(z_range[1]))
        finite = None if every else np.isfinite(self.z)
        #: rows with a finite z (σ > 0); z-based statistics use these only (None: all rows)
        self.z_ok: np.ndarray | None = finite
        self.n_z_excluded = 0 if finite is None else int(self.n - np.count_nonzero(finite))
        #: (min z, max z) when every z is finite (None otherwise)
        self.z_range: tuple[float, float] | None = z_range if every else None
        self._gaussian = isinstance(dist, Gaussian) and self.z_ok is None
        self._pit_options = (pit_seed, randomize_pit)

    @cached_property
    def u(self) -> np.ndarray:
        """PIT values F(y) (Φ(z) for a Gaussian; see :func:`pit`), computed on first use."""
        if self._gaussian:
            return norm_cdf(self.z)
        return _pit(self.y, self.dist, *self._pit_options)

    # -- per-row scores ----------------------------------------------------------------------
    @cached_property
    def phi(self) -> np.ndarray:
        """Standard normal density φ(z) (shared by the Gaussian NLL, CRPS and RS)."""
        return norm_pdf(self.z)

    @cached_property
    def neg_logpdf(self) -> np.ndarray:
        if self._gaussian:  # ½log(2π) + log σ + z²/2, reusing z (the same steps in two buffers)
            out = np.log(self.sigma)
            out += 0.5 * LOG_2PI
            half = np.multiply(0.5, self.z)
            half *= self.z
            out += half
            return out
        return -np.asarray(self.dist.logpdf(self.y), dtype=float)

    @cached_property
    def crps(self) -> np.ndarray:
        if self._gaussian:  # σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π], reusing u = Φ(z) and φ(z) (the same steps, 2 buffers)
            out = np.multiply(2.0, self.u)
            out -= 1.0
            out *= self.z
            two_phi = np.multiply(2.0, self.phi)
            out += two_phi
            out -= 1.0 / np.sqrt(np.pi)
            out *= self.sigma
            return out
        return np.asarray(self.dist.crps(self.y), dtype=float)

    @cached_property
    def var(self) -> np.ndarray:
        return self.sigma * self.sigma

    @cached_property
    def sq_err(self) -> np.ndarray:
        return self.eps * self.eps

    @cached_property
    def abs_z(self) -> np.ndarray:
        return np.abs(self.z)

    # -- sorts -------------------------------------------------------------------------------
    @cached_property
    def z_finite(self) -> np.ndarray:
        """z over the rows with σ > 0 (all rows unless some σ = 0)."""
        return self.z if self.z_ok is None else self.z[self.z_ok]

    def z_weights(self, w: np.ndarray | None) -> np.ndarray | None:
        """Weights restricted to the rows of ``z_finite``."""
        return w if (w is None or self.z_ok is None) else w[self.z_ok]

    @cached_property
    def _sorted_by_order(self) -> dict[str, np.ndarray]:
        """Sorted values that came with an order from :meth:`compute_orders` (no second gather)."""
        return {}

    @cached_property
    def z_order(self) -> np.ndarray:
        """Stable argsort of ``z_finite`` (:func:`calib_core.base.binning.stable_argsort`)."""
        return stable_argsort(self.z_finite)

    @cached_property
    def u_order(self) -> np.ndarray:
        """Order of the PIT values (equals the order of z for a Gaussian: one sort serves both)."""
        return self.z_order if self._gaussian else stable_argsort(self.u)

    @cached_property
    def sigma_order(self) -> np.ndarray:
        """Stable argsort of σ (Levi's equal-count bins and the Spearman ranks share it)."""
        return stable_argsort(self.sigma)

    @cached_property
    def abs_eps_order(self) -> np.ndarray:
        """Stable argsort of |ε| (the Spearman ranks)."""
        return stable_argsort(np.abs(self.eps))

    def compute_orders(self, meanwhile: Callable[[], Any] | None = None, *, z_order: bool = True) -> Any:
        """Sort z, σ and |ε| (and u unless Gaussian) and cache the orders and sorted values: every
        metric of :func:`summary_statistics` needs them.  The sorts run concurrently in a thread pool
        (:func:`calib_core.base.binning.stable_argsort_futures`); ``meanwhile()``, if given, runs in this
        thread while they do, and its result is returned.  ``z_order=False`` (Gaussian rows, unweighted
        statistics): z and u = Φ(z) are only sorted (``np.sort``, no order: :meth:`sort_values_only`)."""
        if not z_order and self._gaussian:
            return self.sort_values_only(meanwhile)
        wanted = ("z_order", "sigma_order", "abs_eps_order") + (() if self._gaussian else ("u_order",))
        names = [k for k in wanted if k not in self.__dict__]
        sources = {"z_order": lambda: self.z_finite, "sigma_order": lambda: self.sigma,
                   "abs_eps_order": lambda: np.abs(self.eps), "u_order": lambda: self.u}
        arrays = {k: sources[k]() for k in names}
        # sorted values are kept for z and u (the PIT statistics read them); σ and |ε| need only their order
        # and whether they have ties (Spearman), which the packed sort tells without gathering the values
        wants_sorted = [k in ("z_order", "u_order") for k in names]
        futures = stable_argsort_futures(*(arrays[k] for k in names), sorted_values=wants_sorted) if names else []
        result = meanwhile() if meanwhile is not None else None
        for name, future in zip(names, futures):
            found = future.result()
            self.__dict__[name] = found.order
            if found.sorted_values is not None:
                self._sorted_by_order[name] = found.sorted_values
            self._distinct[name] = found.distinct
        return result

    def sort_values_only(self, meanwhile: Callable[[], Any] | None = None) -> Any:
        """Gaussian rows: argsort σ and |ε| (the σ-bins, Spearman; compiled key packing, with every row's position:
        :func:`~calib_core.metrics.regression_sorts.packed_argsort_ranks`) but only sort z and u = Φ(z) — the
        unweighted statistics read their sorted values, not their order.  ``np.sort`` gives the values of the stable
        order but for the signs of zeros (−0.0 = 0.0): a run of zeros is put in row order, as the stable sort has it.
        u_sorted = sort(Φ(z)) is what :attr:`u_sorted` gives (Φ(z) gathered in z's order, or sorted where Φ
        dips).  The orders of z and u stay lazy (the bootstrap computes them when it needs them)."""
        names = [k for k in ("sigma_order", "abs_eps_order") if k not in self.__dict__]
        sources = {"sigma_order": (self.sigma, False), "abs_eps_order": (self.eps, True)}  # |ε| taken while packing
        futures = [background(_packed_argsort_ranks, *sources[k], size=self.n) for k in names]
        z_sorted = background(np.sort, self.z_finite, size=self.n) if "z_sorted" not in self.__dict__ else None
        u = self.u
        u_sorted = background(np.sort, u, size=self.n) if "u_sorted" not in self.__dict__ else None
        result = meanwhile() if meanwhile is not None else None
        for name, future in zip(names, futures):
            found, rank = future.result()
            self.__dict__[name] = found.order
            self._distinct[name] = found.distinct
            self._ranks[name] = rank
        if z_sorted is not None:
            zs = z_sorted.result()
            a, b = np.searchsorted(zs, 0.0, side="left"), np.searchsorted(zs, 0.0, side="right")
            if b > a:  # zeros: in row order (±0.0 compare equal; the stable sort keeps their rows' order)
                zf = self.z_finite
                zs[a:b] = zf[zf == 0.0]
            self.__dict__["z_sorted"] = zs
        if u_sorted is not None:
            self.__dict__["u_sorted"] = u_sorted.result()
        return result

    def ence(self, *, n_bins: int = 15, binning: Binning = "count") -> float:
        """ENCE (Levi et al. 2019, eq. 8) of these rows: mean over the non-empty σ-bins of |RMV_j − RMSE_j| / RMV_j,
        scale-free; the value :func:`summary_statistics` gives with these bins."""
        return stat_ence(self, None, n_bins, binning)

    def detached(self, keep: Iterable[str] | None = None) -> RegressionRows:
        """A RegressionRows sharing this one's arrays (y, dist, μ, σ, ε, z and the cached quantities named in
        ``keep``; None: all of them) but not its caches: what it computes later (other sorts, bins, weights'
        sums) stays its own, so a stored copy does not grow and two threads using copies do not share a cache.
        A cached quantity not kept is recomputed on first use (same values)."""
        own = ("y", "dist", "n", "mean", "sigma", "eps", "z", "z_ok", "n_z_excluded", "z_range", "_gaussian",
               "_pit_options")
        out = object.__new__(RegressionRows)
        names = set(own) | (set(self.__dict__) if keep is None else set(keep))
        for name in names & set(self.__dict__):
            value = self.__dict__[name]
            out.__dict__[name] = dict(value) if isinstance(value, dict) else value
        out.__dict__.pop("_bin_cache", None)
        out.__dict__.pop("_cw_cache", None)
        if "_sorted_by_order" in self.__dict__:  # sorted values that came with a kept order
            out.__dict__["_sorted_by_order"] = {k: v for k, v in self._sorted_by_order.items() if k in names}
        if "_distinct" in self.__dict__:
            out.__dict__["_distinct"] = {k: v for k, v in self._distinct.items() if k in names}
        if "_ranks" in self.__dict__:
            out.__dict__["_ranks"] = {k: v for k, v in self._ranks.items() if k in names}
        return out

    @cached_property
    def _ranks(self) -> dict[str, np.ndarray]:
        """Order name → row's position in it (from :meth:`sort_values_only`; absent: not computed)."""
        return {}

    @cached_property
    def _distinct(self) -> dict[str, bool]:
        """Order name → no two values equal (from :meth:`compute_orders`; absent: unknown)."""
        return {}

    @cached_property
    def z_sorted(self) -> np.ndarray:
        """``z_finite`` sorted."""
        known = self._sorted_by_order.get("z_order")
        return known if known is not None else self.z_finite[self.z_order]

    @cached_property
    def u_sorted(self) -> np.ndarray:
        """The PIT values sorted.  For a Gaussian u = Φ(z) is gathered in z's order; Φ is checked to
        be non-decreasing there (a rounding-level dip would fall back to a sort)."""
        known = self._sorted_by_order.get("u_order")
        if known is not None:
            return known
        us = self.u[self.u_order]
        if self._gaussian and (us[1:] < us[:-1]).any():
            us = np.sort(self.u)
        return us

    @cached_property
    def sigma_sorted(self) -> np.ndarray:
        """σ sorted."""
        known = self._sorted_by_order.get("sigma_order")
        return known if known is not None else self.sigma[self.sigma_order]

    def cum_weights(self, w: np.ndarray, order: np.ndarray, key: str) -> np.ndarray:
        """cumsum(w[order]), computed once per weight vector (the bootstrap reuses it across metrics)."""
        cache = self.__dict__.get("_cw_cache")
        if cache is None or cache[0] is not w:
            cache = (w, {})
            self.__dict__["_cw_cache"] = cache
        if key not in cache[1]:
            cache[1][key] = np.cumsum(w[order])
        return cache[1][key]

    def sigma_bin_sums(self, n_bins: int, binning: Binning) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per σ-bin row count, Σσ² and Σε² of the data (:func:`~calib_core.base.binning.bin_sums`), computed once
        for ENCE and the Levi table."""
        cache = self.__dict__.setdefault("_bin_cache", {})
        key = ("sums", binning, n_bins)
        if key not in cache:  # one compiled pass (regression_kernels.sigma_bin_sums): bins and sums together
            bins_key = (binning, n_bins)
            if bins_key in cache or binning != "count" or n_bins < 1:
                b = self.sigma_bins(n_bins, binning)
                cache[key] = sigma_bin_sums(self.sigma, self.eps, n_bins, bins=b)[1:]
            elif "sigma_order" in self._ranks:  # bins read row by row from the sorted positions
                b = equal_count_bins_from_ranks(self._ranks["sigma_order"], n_bins)
                cache[bins_key] = b
                cache[key] = sigma_bin_sums(self.sigma, self.eps, n_bins, bins=b)[1:]
            else:
                b, *sums = sigma_bin_sums(self.sigma, self.eps, n_bins, order=self.sigma_order)
                cache[bins_key] = b
                cache[key] = tuple(sums)
        return cache[key]

    def sigma_bins(self, n_bins: int, binning: Binning, weights: np.ndarray | None = None) -> np.ndarray:
        """Bin index of every row for the Levi σ-bins (shared by ENCE and the diagram)."""
        if binning not in ("count", "width"):
            raise ValueError(f"binning must be 'count' or 'width', got {binning!r}")
        if binning == "count" and weights is not None:
            return equal_count_bins(self.sigma, n_bins, weights, order=self.sigma_order)
        # unweighted count bins and (fixed-edge) width bins depend on the data only: cache them
        key = (binning, n_bins)
        cache = self.__dict__.setdefault("_bin_cache", {})
        if key not in cache and binning == "count" and n_bins >= 1:  # the bins come with their sums
            self.sigma_bin_sums(n_bins, binning)
        if key not in cache:
            if binning == "count":
                cache[key] = equal_count_bins(self.sigma, n_bins, order=self.sigma_order)
            else:
                cache[key] = equal_width_bins(self.sigma, n_bins, closed="left")[0]
        return cache[key]


def _packed_argsort_ranks(values: np.ndarray, absolute: bool):
    return packed_argsort_ranks(values, absolute=absolute)


def _pit(
    y: np.ndarray, dist: PredictiveDistribution, seed: int | None, randomize: bool | None
) -> np.ndarray:
    if randomize is None:
        randomize = dist.is_discrete
    rng = np.random.default_rng(seed) if randomize else None
    return np.asarray(dist.pit(y, rng), dtype=float)


_DIST_PARAMETERS = "the predictive distribution (its mean, std, quantiles or members)"


def reject_nan_inputs(y: np.ndarray | None, dist: PredictiveDistribution) -> None:
    """The NaN policy of every public regression metric (:func:`calib_core.base.binning.reject_nan`)."""
    if y is not None:
        reject_nan(np.asarray(y, dtype=float), "y")
    reject_nan(dist.nan_rows(), _DIST_PARAMETERS)


def metric_rows(y, dist, **kw) -> RegressionRows:
    """The rows of a public metric call, after the NaN policy."""
    if isinstance(y, RegressionRows):
        return y
    if isinstance(dist, PredictiveDistribution):
        reject_nan_inputs(y, dist)
    return RegressionRows(y, dist, **kw)


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """Σ a_i b_i without BLAS (whose thread pool oversubscribes small cores under load)."""
    return float(np.einsum("i,i->", a, b))


def wmean(x: np.ndarray, w: np.ndarray | None) -> float:
    if w is None:
        return float(np.mean(x))
    return dot(x, w) / float(w.sum())


#: σ beyond these bounds would over- or underflow in σ² (|log10 σ| ≈ 154): ENCE and Cv rescale first
_SQUARE_SAFE = (1e-100, 1e100)


def power_of_two(x: np.ndarray) -> np.ndarray:
    """2^(e−1) ≤ |x| < 2^e with e the binary exponent of x (x ≠ 0 finite; 1 elsewhere): dividing by it is exact,
    and it is finite even for |x| ≥ 2^1023 (2^e would be inf there, and x / inf = 0)."""
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x) & (x != 0)
    return np.where(ok, np.ldexp(1.0, np.frexp(np.where(ok, x, 1.0))[1] - 1), 1.0)


def needs_rescaling(sigma: np.ndarray) -> bool:
    if sigma.size:  # two reductions decide it when every σ is finite and positive (the usual case)
        lo, hi = float(sigma.min()), float(sigma.max())
        if 0.0 < lo and hi < np.inf:
            return hi > _SQUARE_SAFE[1] or lo < _SQUARE_SAFE[0]
    positive = sigma[np.isfinite(sigma) & (sigma > 0)]
    return bool(positive.size) and bool(positive.max() > _SQUARE_SAFE[1] or positive.min() < _SQUARE_SAFE[0])


def sigma_unit(sigma: np.ndarray) -> float:
    """The power of two σ is divided by before squaring: 2^e of the largest finite |σ| when σ² could over- or
    underflow (:func:`needs_rescaling`), else 1 (σ² computed as it is, bit for bit the unscaled numbers)."""
    sigma = np.asarray(sigma, dtype=float)
    if not needs_rescaling(sigma):
        return 1.0
    return float(power_of_two(np.max(np.abs(sigma[np.isfinite(sigma)]))))


def root_mean_square(sigma: np.ndarray, w: np.ndarray | None = None) -> float:
    """Sharpness √(Σ w σ² / Σ w) (CRUDE §4), scale-free: c·√(mean (σ/c)²) with c = :func:`sigma_unit` (σ/c exact),
    so σ = 1e±170 neither overflows nor underflows in σ²; c = 1 for σ in [1e-100, 1e100]."""
    c = sigma_unit(sigma)
    s = np.asarray(sigma, dtype=float) if c == 1.0 else np.asarray(sigma, dtype=float) / c
    return float(c * np.sqrt(wmean(s * s, w)))


def stat_ence(r: RegressionRows, w: np.ndarray | None, n_bins: int, binning: Binning) -> float:
    """ENCE = mean over non-empty bins of |RMV_j − RMSE_j| / RMV_j (Levi eq. 8).

    Scale-free at any magnitude: when some σ² would over- or underflow, σ and ε of each bin are first divided by
    the power of two of the bin's largest σ (exact, and the ratio RMSE_j/RMV_j does not change)."""
    b = r.sigma_bins(n_bins, binning, w)
    if needs_rescaling(r.sigma):
        top = np.zeros(n_bins)
        np.maximum.at(top, b, np.where(np.isfinite(r.sigma), np.abs(r.sigma), 0.0))
        scale = power_of_two(top)[b]
        var, sq_err = (r.sigma / scale) ** 2, (r.eps / scale) ** 2
        cnt, s_var, s_err = bin_sums(b, n_bins, var, sq_err, weights=w)
    elif w is None:
        cnt, s_var, s_err = r.sigma_bin_sums(n_bins, binning)
    else:
        cnt, s_var, s_err = bin_sums(b, n_bins, r.var, r.sq_err, weights=w)
    ok = (cnt > 0) & (s_var > 0)  # a bin whose σ are all 0 has no RMV to normalise by: left out
    if not ok.any():  # every σ is 0 (or no row): no bin to average
        return float("nan")
    rmv = np.sqrt(s_var[ok] / cnt[ok])
    rmse_ = np.sqrt(s_err[ok] / cnt[ok])
    return float(np.mean(np.abs(rmv - rmse_) / rmv))


#: Why a row has no usable z = (y − μ)/σ: keys of :func:`undefined_z_counts`, in the order notes name them.
Z_CAUSES = ("zero_spread", "overflow", "z_overflow", "no_finite_z", "z_square_overflow")

#: |z| above this squares to ∞ (√ of the largest double).
_Z_SQUARE_MAX = float(np.sqrt(np.finfo(float).max))


def undefined_z_counts(rows: RegressionRows) -> dict[str, int]:
    """How many rows have no usable standardised error z = (y − μ)/σ, by cause (:data:`Z_CAUSES`).

    Causes with no row are left out, so ``{}`` means every z is finite and squares to a finite number.

    * ``zero_spread`` — σ = 0 (an ensemble whose members are all equal, a quantile set whose quantiles are all
      equal): z is ±∞ or 0/0, and the statistics of z leave the row out (``RegressionRows.z_ok``);
    * ``overflow`` — ε = y − μ, μ or σ is not finite although y and the prediction are (e.g. y = 1e308 and
      μ = −1e308: ε overflows the largest double, about 1.8e308);
    * ``z_overflow`` — ε and σ > 0 are finite but ε/σ overflows (σ = 1e-300 with |ε| > 1.8e8);
    * ``z_square_overflow`` — z is finite but z² is not (|z| > 1.34e154, e.g. σ = 1e-300 with |ε| ≈ 1): z is
      used, but the second and higher moments of z, the NLL of a Gaussian and the like are infinite.

    (``no_finite_z`` — no finite z for a cause not known — is what a summary, which keeps only the count of rows
    with a finite z, can say: ``calib_core.scale.regression.undefined_z_of_part``.)  Vectorised over rows
    (comparisons only).

    Parameters
    ----------
    rows : RegressionRows
        The rows.

    Returns
    -------
    dict of str to int
        Cause → number of rows, causes with no row left out.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659.

    IEEE (2019). IEEE Standard for Floating-Point Arithmetic, IEEE 754-2019.
    """
    sigma, eps, mean = rows.sigma, rows.eps, rows.mean
    out: dict[str, int] = {}
    if rows.z_ok is not None:
        bad = ~rows.z_ok
        finite = np.isfinite(eps) & np.isfinite(sigma) & np.isfinite(mean)
        out["zero_spread"] = int(np.count_nonzero(bad & finite & (sigma == 0)))
        out["overflow"] = int(np.count_nonzero(bad & ~finite))
        out["z_overflow"] = int(np.count_nonzero(bad & finite & (sigma != 0)))
    z_range = rows.__dict__.get("z_range")
    if z_range is not None and -_Z_SQUARE_MAX <= z_range[0] and z_range[1] <= _Z_SQUARE_MAX:
        out["z_square_overflow"] = 0  # every |z| within range: no row to count
    else:
        out["z_square_overflow"] = int(np.count_nonzero(np.abs(rows.z_finite) > _Z_SQUARE_MAX))
    return {k: out[k] for k in Z_CAUSES if out.get(k, 0)}


def _spread_words(layout: str) -> tuple[str, str]:
    """(what one row's prediction is called, what zero spread means for it) in a layout's words."""
    if layout == "sample":
        return "ensembles", "have zero spread (every member equal)"
    if layout == "quantile":
        return "quantile sets", "have all quantiles equal (zero spread)"
    return "predictive distributions", "have σ = 0"


def undefined_z_note(counts: dict[str, int], n: int, *, layout: str = "") -> str:
    """The reason, in words, why some or all of ``n`` rows have no usable z.

    E.g. "all 37 ensembles have zero spread (every member equal), so z = (y − mean)/σ is undefined" or "3 of 100
    rows: y − mean overflows …".  The caller adds which subset and which metrics it affects.

    Parameters
    ----------
    counts : dict of str to int
        Rows per cause, from :func:`undefined_z_counts`.
    n : int
        Number of rows.
    layout : str, default ""
        ``"sample"``, ``"quantile"`` or ``"gaussian"``: names the predictions (ensembles, quantile sets, …).

    Returns
    -------
    str
        The sentence; ``""`` when ``counts`` is empty.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659.
    """
    what, zero = _spread_words(layout)
    k_bad = sum(counts.get(c, 0) for c in ("zero_spread", "overflow", "z_overflow", "no_finite_z"))
    parts = []
    for cause in Z_CAUSES:
        k = counts.get(cause, 0)
        if not k:
            continue
        share = f"all {k:,}" if k == n else f"{k:,} of {n:,}"
        if cause == "zero_spread":
            parts.append(f"{share} {what} {zero}")
        elif cause == "overflow":
            parts.append(f"{share} rows have y − mean (or the predicted mean or σ) beyond the floating-point range "
                         "(±1.8e308)")
        elif cause == "z_overflow":
            parts.append(f"{share} rows have a σ so small that z = (y − mean)/σ overflows")
        elif cause == "no_finite_z":
            parts.append(f"{share} rows have no finite z = (y − mean)/σ (σ = 0, or y − mean or z beyond the "
                         "floating-point range)")
        else:
            parts.append(f"{share} rows have |z| = |y − mean|/σ above 1.3e154 (a tiny σ), so z² overflows")
    if not parts:
        return ""
    text = "; ".join(parts)
    said = set(counts) <= {"no_finite_z", "z_square_overflow"}  # the words already say z is undefined there
    if k_bad == n:
        return text + ("" if said else ", so z = (y − mean)/σ is undefined on every row")
    if k_bad:
        return text + (": the" if said else ": z = (y − mean)/σ is undefined there, and the") + \
            f" statistics of z use the other {n - k_bad:,} rows"
    return text


def pit(
    y: np.ndarray, dist: PredictiveDistribution, *, randomize: bool | None = None, seed: int | None = 0
) -> np.ndarray:
    """Probability integral transform u_i = F_i(y_i).

    Delegates to ``dist.pit``.  For distributions with atoms (``dist.is_discrete``) the PIT is randomised by default
    (seeded): u = F(y−) + V·(F(y) − F(y−)), V ~ U(0, 1) (Czado, Gneiting & Held 2009), and for ensembles
    (``SampleSet``) the randomised rank PIT (r + V(1 + ties))/(M + 1), both uniform under calibration.
    ``randomize=False`` uses V = ½ for ensembles and F(y) otherwise.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    randomize : bool or None, default None
        Randomise at atoms; None: when ``dist.is_discrete``.
    seed : int or None, default 0
        Seed of V.

    Returns
    -------
    ndarray of shape (n,)
        The PIT values in [0, 1].

    References
    ----------
    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.

    Utpala, S. & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression models.
    arXiv:2002.12860, §2.

    Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. Biometrics 65(4),
    1254–1261.
    """
    reject_nan_inputs(y, dist)
    return _pit(np.asarray(y, dtype=float), dist, seed, randomize)
