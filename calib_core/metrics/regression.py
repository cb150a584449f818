"""Regression calibration diagnostics.

Every public function takes ``(y, dist, ...)`` — the targets and a
:class:`calib_core.base.regression.PredictiveDistribution` — and returns a plain ``float``.
Notation: ε = y − μ, z = ε/σ, PIT u = F(y), N rows.

All of them are thin wrappers around :class:`RegressionRows`, which computes the per-row
quantities and the sort orders once, and around weighted implementations (``_stat_*``) that
also serve the bootstrap: a bootstrap replicate is a vector of multinomial count weights w
(Σw = N), so a resampled metric costs O(N) on the pre-sorted data instead of a new sort.

Papers: Kuleshov et al. 2018 (quantile calibration), Levi et al. 2019 (ENCE, Cv, RMSE-vs-RMV),
Utpala & Rai 2020 "Quantile regularization" (QR; l2 calibration error eq. 8, sample-spacing PIT
entropy eq. 6), Zelikman et al. "CRUDE" (calibration RMSE over 100 levels, sharpness),
Camporeale & Carè "ACCRUE" (CRPS eq. 5, reliability score eq. 8).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any, Literal

import numpy as np
from scipy import special

from ..base.binning import (
    bin_sums,
    equal_count_bins,
    equal_width_bins,
    reject_nan,
    stable_argsort,
    stable_argsort_futures,
)
from ..base.regression import LOG_2PI, Gaussian, PredictiveDistribution, norm_cdf, norm_pdf, norm_ppf

__all__ = [
    "RegressionRows",
    "DEFAULT_LEVELS",
    "DEFAULT_COVERAGES",
    "observed_proportions",
    "pit",
    "nll",
    "zero_density_rows",
    "zero_density_note",
    "crps",
    "sharpness",
    "rmse",
    "mae",
    "ence",
    "cv",
    "calibration_curve",
    "calibration_rmse",
    "quantile_calibration_error",
    "miscalibration_area",
    "max_calibration_deviation",
    "reliability_score",
    "pit_entropy",
    "interval_coverage",
    "interval_table",
    "standardized_residual_stats",
    "zms",
    "mean_log_z2",
    "spearman_sigma_error",
    "summary_statistics",
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

    Attributes: ``y``, ``mean`` (μ), ``sigma`` (σ), ``eps`` (ε = y − μ), ``z`` (ε/σ) and ``u``
    (the PIT F(y); randomised between F(y−) and F(y) for distributions with atoms, seeded by
    ``pit_seed``, see :func:`pit`).  Sorted arrays and sort orders are computed lazily.
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
        finite = np.isfinite(self.z)
        #: rows with a finite z (σ > 0); z-based statistics use these only (None: all rows)
        self.z_ok: np.ndarray | None = None if finite.all() else finite
        self.n_z_excluded = int(self.n - finite.sum())
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
        if self._gaussian:  # ½log(2π) + log σ + z²/2, reusing z
            return 0.5 * LOG_2PI + np.log(self.sigma) + 0.5 * self.z * self.z
        return -np.asarray(self.dist.logpdf(self.y), dtype=float)

    @cached_property
    def crps(self) -> np.ndarray:
        if self._gaussian:  # σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π], reusing u = Φ(z) and φ(z)
            return self.sigma * (self.z * (2.0 * self.u - 1.0) + 2.0 * self.phi - 1.0 / np.sqrt(np.pi))
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

    def compute_orders(self, meanwhile: Callable[[], Any] | None = None) -> Any:
        """Sort z, σ and |ε| (and u unless Gaussian) and cache the orders and sorted values: every
        metric of :func:`summary_statistics` needs them.  The sorts run concurrently in a thread pool
        (:func:`calib_core.base.binning.stable_argsort_futures`); ``meanwhile()``, if given, runs in this
        thread while they do, and its result is returned."""
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

    def ence(self, *, n_bins: int = 15, binning: Binning = "count") -> float:
        """ENCE (Levi et al. 2019, eq. 8) of these rows: mean over the non-empty σ-bins of |RMV_j − RMSE_j| / RMV_j,
        scale-free; the value :func:`summary_statistics` gives with these bins."""
        return _stat_ence(self, None, n_bins, binning)

    def detached(self, keep: Iterable[str] | None = None) -> RegressionRows:
        """A RegressionRows sharing this one's arrays (y, dist, μ, σ, ε, z and the cached quantities named in
        ``keep``; None: all of them) but not its caches: what it computes later (other sorts, bins, weights'
        sums) stays its own, so a stored copy does not grow and two threads using copies do not share a cache.
        A cached quantity not kept is recomputed on first use (same values)."""
        own = ("y", "dist", "n", "mean", "sigma", "eps", "z", "z_ok", "n_z_excluded", "_gaussian", "_pit_options")
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
        return out

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

    def sigma_bins(self, n_bins: int, binning: Binning, weights: np.ndarray | None = None) -> np.ndarray:
        """Bin index of every row for the Levi σ-bins (shared by ENCE and the diagram)."""
        if binning not in ("count", "width"):
            raise ValueError(f"binning must be 'count' or 'width', got {binning!r}")
        if binning == "count" and weights is not None:
            return equal_count_bins(self.sigma, n_bins, weights, order=self.sigma_order)
        # unweighted count bins and (fixed-edge) width bins depend on the data only: cache them
        key = (binning, n_bins)
        cache = self.__dict__.setdefault("_bin_cache", {})
        if key not in cache:
            if binning == "count":
                cache[key] = equal_count_bins(self.sigma, n_bins, order=self.sigma_order)
            else:
                cache[key] = equal_width_bins(self.sigma, n_bins, closed="left")[0]
        return cache[key]


def _pit(
    y: np.ndarray, dist: PredictiveDistribution, seed: int | None, randomize: bool | None
) -> np.ndarray:
    if randomize is None:
        randomize = dist.is_discrete
    rng = np.random.default_rng(seed) if randomize else None
    return np.asarray(dist.pit(y, rng), dtype=float)


_DIST_PARAMETERS = "the predictive distribution (its mean, std, quantiles or members)"


def _reject_nan(y: np.ndarray | None, dist: PredictiveDistribution) -> None:
    """The NaN policy of every public regression metric (:func:`calib_core.base.binning.reject_nan`)."""
    if y is not None:
        reject_nan(np.asarray(y, dtype=float), "y")
    reject_nan(dist.nan_rows(), _DIST_PARAMETERS)


def _rows(y, dist, **kw) -> RegressionRows:
    """The rows of a public metric call, after the NaN policy."""
    if isinstance(y, RegressionRows):
        return y
    if isinstance(dist, PredictiveDistribution):
        _reject_nan(y, dist)
    return RegressionRows(y, dist, **kw)


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Σ a_i b_i without BLAS (whose thread pool oversubscribes small cores under load)."""
    return float(np.einsum("i,i->", a, b))


def _wmean(x: np.ndarray, w: np.ndarray | None) -> float:
    if w is None:
        return float(np.mean(x))
    return _dot(x, w) / float(w.sum())


# =============================================================================================
# Weighted statistics (w=None: the data; w = multinomial counts: a bootstrap replicate)
# =============================================================================================


def observed_proportions(r: RegressionRows, w: np.ndarray | None, levels: np.ndarray, prop_type: PropType):
    """Observed proportions p̂_j of a calibration curve at ``levels`` (row weights ``w``; None = the data)."""
    levels = np.asarray(levels, dtype=float)
    if prop_type == "quantile":
        if w is None:
            return np.searchsorted(r.u_sorted, levels, side="right") / r.n
        cw = r.cum_weights(w, r.u_order, "u")
        k = np.searchsorted(r.u_sorted, levels, side="right")
        return np.where(k > 0, cw[np.maximum(k - 1, 0)], 0.0) / cw[-1]
    if prop_type == "interval":
        # centred interval of coverage p contains y  ⇔  |2u − 1| ≤ p
        d = np.abs(2.0 * r.u - 1.0)
        if w is None:
            return np.searchsorted(np.sort(d), levels, side="right") / r.n
        order = np.argsort(d, kind="stable")
        cw = np.cumsum(w[order])
        k = np.searchsorted(d[order], levels, side="right")
        return np.where(k > 0, cw[np.maximum(k - 1, 0)], 0.0) / cw[-1]
    raise ValueError(f"prop_type must be 'quantile' or 'interval', got {prop_type!r}")


def _ecdf_steps(r: RegressionRows, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Sorted PIT values and the weighted ECDF just after each of them (normalised to 1)."""
    if w is None:
        return r.u_sorted, np.arange(1, r.n + 1) / r.n
    cw = r.cum_weights(w, r.u_order, "u")
    return r.u_sorted, cw / cw[-1]


def _ecdf_gaps(r: RegressionRows) -> np.ndarray | None:
    """d_j = j/N − u_(j), j = 1 … N: the ECDF just after each sorted PIT value minus the value
    (unweighted data, cached); ``None`` if a PIT value lies outside [0, 1] (then the general path clips)."""
    cache = r.__dict__
    if "_ecdf_gaps" not in cache:
        u = r.u_sorted
        ok = u.shape[0] > 0 and u[0] >= 0.0 and u[-1] <= 1.0
        cache["_ecdf_gaps"] = np.arange(1, r.n + 1) / r.n - u if ok else None
    return cache["_ecdf_gaps"]


def _stat_max_deviation(r: RegressionRows, w: np.ndarray | None) -> float:
    """sup_p |ECDF(u)(p) − p| (exact: the supremum is attained at a jump).

    Just after u_(j) the gap is d_j = j/N − u_(j); just before it, u_(j) − (j − 1)/N = 1/N − d_j.
    """
    d = _ecdf_gaps(r) if w is None else None
    if d is not None:
        return float(max(d.max(), 1.0 / r.n - d.min(), 0.0))
    u, after = _ecdf_steps(r, w)
    before = np.concatenate([[0.0], after[:-1]])
    return float(max(np.max(after - u), np.max(u - before), 0.0))


def _stat_area(r: RegressionRows, w: np.ndarray | None) -> float:
    """∫₀¹ |ECDF(u)(p) − p| dp, exactly.

    On the gap [a, b] between consecutive sorted PIT values the ECDF is a constant c, and
    ∫_a^b |c − p| dp = ½[(c − a)|c − a| − (c − b)|c − b|]  (an antiderivative of |c − p| is
    −½(c − p)|c − p|).  Unweighted, with g(x) = x|x| and d_j = j/N − u_(j), the gaps telescope to
    ½ Σ_j [g(d_j) − g(d_j − 1/N)] (the end gaps [0, u_(1)] and [u_(N), 1] included).
    """
    d = _ecdf_gaps(r) if w is None else None
    if d is not None:
        e = d - 1.0 / r.n
        return float(0.5 * (_dot(d, np.abs(d)) - _dot(e, np.abs(e))))
    u, after = _ecdf_steps(r, w)
    n = u.shape[0]
    edges = np.empty(n + 2)
    edges[0], edges[-1] = 0.0, 1.0
    np.clip(u, 0.0, 1.0, out=edges[1:-1])
    c = np.empty(n + 1)
    c[0] = 0.0
    c[1:] = after
    da = c - edges[:-1]
    db = c - edges[1:]
    return float(0.5 * (_dot(da, np.abs(da)) - _dot(db, np.abs(db))))


def _stat_reliability_score(r: RegressionRows, w: np.ndarray | None) -> float:
    """ACCRUE eq. 8 with weights (energy-distance form, exact)."""
    z = r.z_finite
    if z.shape[0] == 0:  # no row with a finite z (σ = 0, or y − mean or z overflowing): RS is undefined
        return float("nan")
    if w is None:
        # Only Σ η_(i)(2i − 1) needs the order; the other terms are sums over rows:
        # erf(η) = 2Φ(z) − 1 and exp(−η²) = √(2π) φ(z) for η = z/√2.
        n = z.shape[0]
        eta_sorted = r.z_sorted / np.sqrt(2.0)
        i = np.arange(1, n + 1, dtype=float)
        s_erf = _dot(z, 2.0 * r.u if r._gaussian else 2.0 * norm_cdf(z)) / np.sqrt(2.0)
        s_exp = np.sqrt(2.0 * np.pi) * (r.phi.sum() if r._gaussian else norm_pdf(z).sum())
        s_rank = _dot(eta_sorted, 2.0 * i - 1.0)
        return float(s_erf / n - s_rank / n**2 + s_exp / (np.sqrt(np.pi) * n) - 0.5 * np.sqrt(2.0 / np.pi))
    w = r.z_weights(w)
    eta = r.z_sorted / np.sqrt(2.0)
    ws = w[r.z_order]
    if not ws.sum() > 0:  # a replicate that drew none of the rows with a finite z
        return float("nan")
    ws = ws / ws.sum()
    before = np.cumsum(ws) - ws
    e_abs = eta * special.erf(eta) + np.exp(-eta * eta) / np.sqrt(np.pi)  # E|η − X|, X ~ N(0, ½)
    half_pair = ws * eta * (2.0 * before + ws - 1.0)  # ½ Σ_ij w_i w_j |η_i − η_j| per i
    return float(np.sum(ws * e_abs) - np.sum(half_pair) - 0.5 * np.sqrt(2.0 / np.pi))


def _stat_pit_entropy(r: RegressionRows, w: np.ndarray | None) -> float:
    """Sample-spacing entropy (QR eq. 6).  With weights: on the distinct resampled rows."""
    u = r.u_sorted if w is None else r.u_sorted[w[r.u_order] > 0]
    n = u.shape[0]
    if n < 2:  # QR eq. 6 needs one spacing: n = 2, k = 1 is defined
        return float("nan")
    k = max(1, int(round(np.sqrt(n))))
    if k >= n:
        k = n - 1
    spacing = u[k:] - u[:-k]
    with np.errstate(divide="ignore"):
        return float(np.mean(np.log((n + 1) / k * spacing)))


#: σ beyond these bounds would over- or underflow in σ² (|log10 σ| ≈ 154): ENCE and Cv rescale first
_SQUARE_SAFE = (1e-100, 1e100)


def _power_of_two(x: np.ndarray) -> np.ndarray:
    """2^e with e the binary exponent of x (x ≠ 0 finite; 1 elsewhere): dividing by it is exact."""
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x) & (x != 0)
    return np.where(ok, np.ldexp(1.0, np.frexp(np.where(ok, x, 1.0))[1]), 1.0)


def _needs_rescaling(sigma: np.ndarray) -> bool:
    positive = sigma[np.isfinite(sigma) & (sigma > 0)]
    return bool(positive.size) and bool(positive.max() > _SQUARE_SAFE[1] or positive.min() < _SQUARE_SAFE[0])


def _stat_ence(r: RegressionRows, w: np.ndarray | None, n_bins: int, binning: Binning) -> float:
    """ENCE = mean over non-empty bins of |RMV_j − RMSE_j| / RMV_j (Levi eq. 8).

    Scale-free at any magnitude: when some σ² would over- or underflow, σ and ε of each bin are first divided by
    the power of two of the bin's largest σ (exact, and the ratio RMSE_j/RMV_j does not change)."""
    b = r.sigma_bins(n_bins, binning, w)
    if _needs_rescaling(r.sigma):
        top = np.zeros(n_bins)
        np.maximum.at(top, b, np.where(np.isfinite(r.sigma), np.abs(r.sigma), 0.0))
        scale = _power_of_two(top)[b]
        var, sq_err = (r.sigma / scale) ** 2, (r.eps / scale) ** 2
    else:
        var, sq_err = r.var, r.sq_err
    cnt, s_var, s_err = bin_sums(b, n_bins, var, sq_err, weights=w)
    ok = (cnt > 0) & (s_var > 0)  # a bin whose σ are all 0 has no RMV to normalise by: left out
    if not ok.any():  # every σ is 0 (or no row): no bin to average
        return float("nan")
    rmv = np.sqrt(s_var[ok] / cnt[ok])
    rmse_ = np.sqrt(s_err[ok] / cnt[ok])
    return float(np.mean(np.abs(rmv - rmse_) / rmv))


def _scale_free_cv(s: np.ndarray, w: np.ndarray | None = None) -> float:
    """Cv = std(σ, ddof=1)/mean(σ) (Levi eq. 9), with σ divided by the power of two of its largest value first
    when σ² could over- or underflow (exact; Cv is scale-free)."""
    if _needs_rescaling(s):
        s = s / _power_of_two(np.max(np.abs(s[np.isfinite(s)])) if np.isfinite(s).any() else 1.0)
    if w is None:
        if s.size < 2 or not np.mean(s) > 0:  # one row, or every σ = 0: no spread to compare with
            return float("nan")
        return float(np.std(s, ddof=1) / np.mean(s))
    tot = w.sum()
    if tot <= 1:
        return float("nan")
    m = _dot(w, s) / tot
    if not m > 0:
        return float("nan")
    v = _dot(w, (s - m) ** 2) / (tot - 1.0)
    return float(np.sqrt(v) / m)


def _stat_cv(r: RegressionRows, w: np.ndarray | None) -> float:
    """Cv = std(σ, ddof=1)/mean(σ) (Levi eq. 9)."""
    return _scale_free_cv(r.sigma, w)


def _stat_intervals(r: RegressionRows, w: np.ndarray | None, coverages) -> dict[str, float]:
    """Coverage, mean width and mean interval score of the central intervals."""
    if w is None and r._gaussian:  # the metric table and the interval diagram share it
        cache = r.__dict__.setdefault("_gaussian_interval_cache", {})
        key = tuple(coverages)
        if key not in cache:
            cache[key] = _gaussian_intervals(r, coverages)
        return dict(cache[key])
    out: dict[str, float] = {}
    bounds = r.__dict__.setdefault("_interval_cache", {})
    for c in coverages:
        if c not in bounds:
            alpha = 1.0 - c
            if r._gaussian:  # [μ − kσ, μ + kσ], k = Φ⁻¹((1 + c)/2): everything from |z| and σ
                k = float(norm_ppf(0.5 + c / 2.0))
                inside = (r.abs_z <= k).astype(float)
                width = (2.0 * k) * r.sigma
                score = width + _interval_penalty(r.sigma * np.maximum(r.abs_z - k, 0.0), alpha)
            else:
                lo, hi = r.dist.interval(c)
                inside = ((r.y >= lo) & (r.y <= hi)).astype(float)
                width = hi - lo
                score = width + _interval_penalty(np.maximum(lo - r.y, 0) + np.maximum(r.y - hi, 0), alpha)
            bounds[c] = (inside, width, score)
        inside, width, score = bounds[c]
        tag = f"{100 * c:g}"
        out[f"coverage_{tag}"] = _wmean(inside, w)
        out[f"width_{tag}"] = _wmean(width, w)
        out[f"interval_score_{tag}"] = _wmean(score, w)
    return out


def _interval_penalty(excess: np.ndarray, alpha: float) -> np.ndarray:
    """(2/α)·excess of the interval score; at α = 0 (the whole support, c = 1) infinite where a target lies
    outside and 0 elsewhere (no 0·∞)."""
    if alpha > 0:
        return (2.0 / alpha) * excess
    return np.where(excess > 0, np.inf, 0.0)


def _check_coverages(coverages) -> None:
    bad = [c for c in np.atleast_1d(np.asarray(coverages, dtype=float)) if not 0.0 < c <= 1.0]
    if bad:
        raise ValueError(f"coverage must be in (0, 1], got {bad[0]:g}")


def _gaussian_intervals(r: RegressionRows, coverages) -> dict[str, float]:
    """Unweighted Gaussian case without per-row temporaries for every level.

    coverage = #{|z| ≤ k}/N from the sorted z; width = 2k·mean σ; the interval-score penalty
    (2/α)·mean σ(|z| − k)₊ only involves the rows outside, which shrink as k grows.
    """
    out: dict[str, float] = {}
    n = r.n
    mean_sigma = float(r.sigma.mean())
    zs = r.z_sorted
    tmp = np.empty(n)
    for c in coverages:
        k = float(norm_ppf(0.5 + c / 2.0))
        np.subtract(r.abs_z, k, out=tmp)
        np.maximum(tmp, 0.0, out=tmp)
        penalty = _dot(r.sigma, tmp) / n
        inside = (np.searchsorted(zs, k, side="right") - np.searchsorted(zs, -k, side="left")) / n
        tag = f"{100 * c:g}"
        out[f"coverage_{tag}"] = float(inside)
        out[f"width_{tag}"] = 2.0 * k * mean_sigma
        out[f"interval_score_{tag}"] = 2.0 * k * mean_sigma + float(_interval_penalty(np.float64(penalty), 1.0 - c))
    keys = [f"{kind}_{100 * c:g}" for c in coverages for kind in ("coverage", "width", "interval_score")]
    return {key: out[key] for key in keys}


def _stat_z_moments(r: RegressionRows, w: np.ndarray | None) -> dict[str, float]:
    z, w = r.z_finite, r.z_weights(w)
    if z.shape[0] == 0 or (w is not None and not w.sum() > 0):  # no finite z: undefined
        return dict.fromkeys(("z_mean", "z_std", "z_skewness", "z_excess_kurtosis"), float("nan"))
    m = _wmean(z, w)
    d = z - m
    d2 = d * d
    m2 = _wmean(d2, w)
    m3 = _wmean(d2 * d, w)
    m4 = _wmean(d2 * d2, w)
    return {
        "z_mean": m,
        "z_std": float(np.sqrt(m2)),
        "z_skewness": float(m3 / m2**1.5) if m2 > 0 else float("nan"),
        "z_excess_kurtosis": float(m4 / m2**2 - 3.0) if m2 > 0 else float("nan"),
    }


def _log_z2(r: RegressionRows) -> tuple[np.ndarray, np.ndarray | None]:
    """log z² = 2 log|z| over ``z_finite`` (no underflow of z²), and the mask of the rows where it is finite (None:
    all; z = 0 exactly, e.g. a target equal to the predicted mean in rounded data, gives −∞ and is left out)."""
    cache = r.__dict__
    if "_log_z2" not in cache:
        with np.errstate(divide="ignore"):
            lz = 2.0 * np.log(np.abs(r.z_finite))
        ok = np.isfinite(lz)
        cache["_log_z2"] = (lz, None) if ok.all() else (lz[ok], ok)
    return cache["_log_z2"]


def _stat_zms(r: RegressionRows, w: np.ndarray | None) -> dict[str, float]:
    """ZMS = mean z² and mean log z² over the rows with a finite z (the latter also without z = 0)."""
    z, wz = r.z_finite, r.z_weights(w)
    lz, ok = _log_z2(r)
    wl = wz if (wz is None or ok is None) else wz[ok]
    return {
        "zms": _wmean(z * z, wz) if z.size else float("nan"),
        "mean_log_z2": _wmean(lz, wl) if lz.size else float("nan"),
    }


def _stat_spearman(r: RegressionRows, w: np.ndarray | None) -> float:
    """Spearman ρ(σ, |ε|): Pearson correlation of the (tie-averaged) ranks.

    With count weights the ranks are those of the resample itself: a row drawn w_i times in a tie
    group starting after cumulative weight W_< gets rank W_< + (W_group + 1)/2, as ``np.repeat``
    of the rows would give.  The sort orders are computed once.
    """
    cache = r.__dict__.setdefault("_rank_cache", {})
    if "groups" not in cache:
        known, distinct = r._sorted_by_order, r._distinct
        cache["groups"] = tuple(
            _TieGroups(values, getattr(r, name), known.get(name), distinct.get(name, False))
            for values, name in ((r.sigma, "sigma_order"), (np.abs(r.eps), "abs_eps_order"))
        )
    ga, gb = cache["groups"]
    if w is None and ga.no_ties and gb.no_ties and r.n > 1:
        # ranks are permutations of 1..N: ρ = 1 − 6 Σ dᵢ² / (N(N² − 1)), d = rank difference (exact integers)
        d = (ga.group_of_row - gb.group_of_row).astype(float)
        n = float(r.n)
        return float(1.0 - 6.0 * _dot(d, d) / (n * (n * n - 1.0)))
    a, b = ga.ranks(w), gb.ranks(w)
    ma, mb = _wmean(a, w), _wmean(b, w)
    da, db = a - ma, b - mb
    den = np.sqrt(_wmean(da * da, w) * _wmean(db * db, w))
    return float(_wmean(da * db, w) / den) if den > 0 else float("nan")


class _TieGroups:
    """Runs of equal values in sorted order, for tie-averaged ranks of the data or of a resample.

    Without ties (the usual case for continuous predictions) every run is one row: the ranks are the
    inverse permutation of the sort order and no run bookkeeping is built.
    """

    def __init__(
        self, x: np.ndarray, order: np.ndarray, x_sorted: np.ndarray | None = None, distinct: bool = False
    ) -> None:
        n = x.shape[0]
        self.order = order
        if distinct:  # known from the sort: no value twice
            self.no_ties = True
        else:
            xs = x[order] if x_sorted is None else x_sorted
            new_run = np.empty(n, dtype=bool)
            new_run[:1] = True
            np.not_equal(xs[1:], xs[:-1], out=new_run[1:])
            self.no_ties = bool(new_run.all())
        index_type = np.int32 if n < 2**31 else np.int64
        self.group_of_row = np.empty(n, dtype=index_type)
        if self.no_ties:  # group = position in the sorted order
            self.group_of_row[order] = np.arange(n, dtype=index_type)
            return
        self.starts = np.flatnonzero(new_run)
        self.ends = np.append(self.starts[1:], n)
        self.group_of_row[order] = np.cumsum(new_run, dtype=index_type) - 1

    def ranks(self, w: np.ndarray | None = None) -> np.ndarray:
        """Ranks 1..N with ties averaged (``scipy.stats.rankdata``); with count weights, the ranks
        of the resample: a tie group after cumulative weight W_< with weight W_g gets W_< + (W_g + 1)/2."""
        if self.no_ties:
            if w is None:
                return self.group_of_row + 1.0
            ws = w[self.order]
            before = np.cumsum(ws) - ws
            return (before + (ws + 1.0) / 2.0)[self.group_of_row]
        if w is None:
            before = self.starts.astype(float)
            size = (self.ends - self.starts).astype(float)
            return (before + (size + 1.0) / 2.0)[self.group_of_row]
        cw = np.concatenate([[0.0], np.cumsum(w[self.order])])
        before = cw[self.starts]
        size = cw[self.ends] - before
        return (before + (size + 1.0) / 2.0)[self.group_of_row]


#: Why a row has no usable z = (y − μ)/σ: keys of :func:`undefined_z_counts`, in the order notes name them.
Z_CAUSES = ("zero_spread", "overflow", "z_overflow", "no_finite_z", "z_square_overflow")
#: |z| above this squares to ∞ (√ of the largest double).
_Z_SQUARE_MAX = float(np.sqrt(np.finfo(float).max))


def undefined_z_counts(rows: RegressionRows) -> dict[str, int]:
    """How many rows of ``rows`` have no usable standardised error z = (y − μ)/σ, by cause (:data:`Z_CAUSES`);
    causes with no row are left out, so ``{}`` means every z is finite and squares to a finite number.

    * ``zero_spread`` — σ = 0 (an ensemble whose members are all equal, a quantile set whose quantiles are all
      equal): z is ±∞ or 0/0, and the statistics of z leave the row out (``RegressionRows.z_ok``);
    * ``overflow`` — ε = y − μ, μ or σ is not finite although y and the prediction are (e.g. y = 1e308 and
      μ = −1e308: ε overflows the largest double, about 1.8e308);
    * ``z_overflow`` — ε and σ > 0 are finite but ε/σ overflows (σ = 1e-300 with |ε| > 1.8e8);
    * ``z_square_overflow`` — z is finite but z² is not (|z| > 1.34e154, e.g. σ = 1e-300 with |ε| ≈ 1): z is
      used, but the second and higher moments of z, the NLL of a Gaussian and the like are infinite.

    (``no_finite_z`` — no finite z for a cause not known — is what a summary, which keeps only the count of rows
    with a finite z, can say: ``calib_core.scale.regression.undefined_z_of_part``.)

    Vectorised over rows (comparisons only)."""
    sigma, eps, mean = rows.sigma, rows.eps, rows.mean
    out: dict[str, int] = {}
    if rows.z_ok is not None:
        bad = ~rows.z_ok
        finite = np.isfinite(eps) & np.isfinite(sigma) & np.isfinite(mean)
        out["zero_spread"] = int(np.count_nonzero(bad & finite & (sigma == 0)))
        out["overflow"] = int(np.count_nonzero(bad & ~finite))
        out["z_overflow"] = int(np.count_nonzero(bad & finite & (sigma != 0)))
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
    """The reason, in words, why some or all of ``n`` rows have no usable z (``counts`` from
    :func:`undefined_z_counts`; ``layout`` "sample", "quantile" or "gaussian" names the predictions): e.g. "all 37
    ensembles have zero spread (every member equal), so z = (y − mean)/σ is undefined" or "3 of 100 rows: y − mean
    overflows …".  "" when ``counts`` is empty.  The caller adds which subset and which metrics it affects."""
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


def summary_statistics(
    rows: RegressionRows,
    weights: np.ndarray | None = None,
    *,
    n_bins: int = 15,
    binning: Binning = "count",
    levels: np.ndarray = DEFAULT_LEVELS,
    n_qce_levels: int = 100,
    coverages=DEFAULT_COVERAGES,
) -> dict[str, float]:
    """Every regression calibration scalar for one (y, dist) pair, as ``{name: value}`` (weights: bootstrap)."""
    r, w = rows, weights

    def order_free() -> dict[str, float]:  # statistics that need no sort: computed while the sorts run
        free = {
            "nll": _wmean(r.neg_logpdf, w),
            "crps": _wmean(r.crps, w),
            "rmse": float(np.sqrt(_wmean(r.sq_err, w))),
            "mae": _wmean(np.abs(r.eps), w),
            "sharpness": float(np.sqrt(_wmean(r.var, w))),
            "cv": _stat_cv(r, w),
        }
        free.update(_stat_z_moments(r, w))
        free.update(_stat_zms(r, w))
        return free

    free = r.compute_orders(meanwhile=order_free)
    curve = observed_proportions(r, w, levels, "quantile")
    qce_levels = np.arange(1, n_qce_levels + 1) / n_qce_levels
    qce_curve = observed_proportions(r, w, qce_levels, "quantile")
    out = {
        "nll": free["nll"],
        "crps": free["crps"],
        "rmse": free["rmse"],
        "mae": free["mae"],
        "sharpness": free["sharpness"],
        "ence": _stat_ence(r, w, n_bins, binning),
        "cv": free["cv"],
        "calibration_rmse": float(np.sqrt(np.mean((curve - levels) ** 2))),
        "quantile_calibration_error": float(np.mean((qce_curve - qce_levels) ** 2)),
        "miscalibration_area": _stat_area(r, w),
        "max_calibration_deviation": _stat_max_deviation(r, w),
        "reliability_score": _stat_reliability_score(r, w),
        "pit_entropy": _stat_pit_entropy(r, w),
        "spearman_sigma_abs_error": _stat_spearman(r, w),
    }
    out.update({k: free[k] for k in ("z_mean", "z_std", "z_skewness", "z_excess_kurtosis", "zms", "mean_log_z2")})
    out.update(_stat_intervals(r, w, coverages))
    return out


# =============================================================================================
# Public scalar functions: all (y, dist) first, return floats
# =============================================================================================


def pit(
    y: np.ndarray, dist: PredictiveDistribution, *, randomize: bool | None = None, seed: int | None = 0
) -> np.ndarray:
    """Probability integral transform u_i = F_i(y_i) (Kuleshov et al. 2018; QR §2).

    Delegates to ``dist.pit``.  For distributions with atoms (``dist.is_discrete``) the PIT is
    randomised by default (seeded): u = F(y−) + V·(F(y) − F(y−)) (Czado, Gneiting & Held 2009),
    and for ensembles (``SampleSet``) the randomised rank PIT (r + V(1 + ties))/(M + 1), both
    uniform under calibration.  ``randomize=False`` uses V = ½ for ensembles and F(y) otherwise.
    """
    _reject_nan(y, dist)
    return _pit(np.asarray(y, dtype=float), dist, seed, randomize)


def nll(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean negative log-likelihood −mean log f_i(y_i); Gaussian: ½log(2πσ²) + ε²/(2σ²)."""
    return _wmean(_rows(y, dist).neg_logpdf, None)


def zero_density_rows(y: np.ndarray, dist: PredictiveDistribution) -> np.ndarray:
    """Boolean mask of the rows whose target has predictive density 0, f_i(y_i) = 0 (log f = −∞): one such row
    makes the mean NLL −mean log f_i(y_i) infinite."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logf = np.asarray(dist.logpdf(np.asarray(y, dtype=float)), dtype=float)
    return np.isneginf(logf)


def zero_density_note(
    y: np.ndarray, dist: PredictiveDistribution, *, row_numbers: np.ndarray | None = None, what: str = "rows"
) -> str:
    """Why the NLL is infinite, in one paragraph ("" when every target has a positive density).

    Names how many of the ``what`` (and which: ``row_numbers``, 1-based, else positions from 1) have
    f_i(y_i) = 0 and, for a recalibrated distribution with a truncated support (Kuleshov's isotonic map R is flat
    at 0 below its first knot and at 1 above the largest calibration PIT a*: G = R∘F has density
    g = R'(F(y))·f(y) = 0 outside [F⁻¹(lower), F⁻¹(a*)], Utpala & Rai, "Quantile regularization", §3 and
    appendix B.2), says where the support ends and on which side the targets fell.  The NLL ignores no row, so it
    is ∞; CRPS and the calibration metrics stay finite.
    """
    zero = zero_density_rows(y, dist)
    k = int(zero.sum())
    if k == 0:
        return ""
    idx = np.flatnonzero(zero)
    numbers = (np.asarray(row_numbers)[idx] if row_numbers is not None else idx + 1).tolist()
    shown = ", ".join(f"{int(r):,}" for r in numbers[:8]) + (" …" if k > 8 else "")
    text = (f"NLL = ∞: {k:,} of {zero.size:,} {what} ({shown}) have a target where the predictive density is 0, "
            "and one such row makes the mean of −log f(y) infinite.")
    support = getattr(dist, "support", None)
    if callable(support) and hasattr(dist, "truncation_u"):
        lo, hi = (np.asarray(a, dtype=float) for a in support())
        yy = np.asarray(y, dtype=float)
        above = int((zero & (yy >= hi)).sum())
        below = k - above
        parts = []
        if above:
            parts.append(f"every PIT above a* = {float(dist.truncation_u):.4g} to 1, so there is no mass above "
                         f"F⁻¹(a*) — {above:,} of these targets lie there")
        if below:
            parts.append(f"every PIT below {float(dist.lower_truncation_u):.4g} to 0, so there is no mass below "
                         f"its quantile — {below:,} of these targets lie there")
        if parts:
            text += (" Isotonic recalibration (Kuleshov et al. 2018) is flat at its ends: its map R sends "
                     + "; and ".join(parts) + ". The recalibrated distribution has a truncated support (Utpala & "
                     "Rai, \"Quantile regularization\", §3): the calibration rows had no PIT that far out. CRPS "
                     "and the calibration metrics stay finite; more calibration rows or a calibrator with full "
                     "support (STD scaling) avoid it.")
    return text


def crps(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean CRPS; Gaussian closed form σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π] (ACCRUE eq. 5), exact otherwise."""
    return _wmean(_rows(y, dist).crps, None)


def sharpness(y: np.ndarray | None, dist: PredictiveDistribution) -> float:
    """Sharpness = sqrt(mean σ²) (CRUDE §4; uncertainty-toolbox). ``y`` is ignored."""
    _reject_nan(None, dist)
    s = np.asarray(dist.std(), dtype=float)
    return float(np.sqrt(np.mean(s * s)))


def rmse(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Root mean squared error of the predictive mean, sqrt(mean ε²)."""
    _reject_nan(y, dist)
    return float(np.sqrt(np.mean((np.asarray(y, float) - dist.mean()) ** 2)))


def mae(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean absolute error of the predictive mean, mean |ε|."""
    _reject_nan(y, dist)
    return float(np.mean(np.abs(np.asarray(y, float) - dist.mean())))


def ence(y: np.ndarray, dist: PredictiveDistribution, *, n_bins: int = 15, binning: Binning = "count") -> float:
    """Expected normalised calibration error (Levi et al. 2019, eq. 8).

    Rows are grouped into B bins by predicted σ; per bin RMV_j = sqrt(mean σ²) and
    RMSE_j = sqrt(mean ε²); ENCE = (1/B') Σ_j |RMV_j − RMSE_j| / RMV_j over the B' non-empty bins.

    Bins whose σ are all 0 (possible for degenerate ensembles) are left out of the mean.
    ``binning="count"`` (default, Levi): equal-count bins on the sorted σ (sizes differ by ≤ 1).
    ``binning="width"``: B equal-width bins between min σ and max σ, [a, b) with the last bin
    closed — netcal 1.4's convention (use ``n_bins=10`` to reproduce its default).
    """
    return _stat_ence(_rows(y, dist), None, n_bins, binning)


def cv(y: np.ndarray | None, dist: PredictiveDistribution) -> float:
    """Coefficient of variation of the predicted σ (Levi et al. 2019, eq. 9).

    C_v = sqrt(Σ_t (σ_t − μ_σ)² / (T − 1)) / μ_σ with μ_σ = mean σ, i.e. std(σ, ddof=1) / mean(σ).
    Scale invariant; 0 for a constant σ.  C_v depends on the predictions only: ``y`` is taken first
    like every other regression metric (``(y, dist)``) and may be ``None``; it is ignored.
    """
    if isinstance(y, PredictiveDistribution):
        raise TypeError("cv takes (y, dist) like every regression metric (y may be None): cv(None, dist)")
    _reject_nan(None, dist)
    return _scale_free_cv(np.asarray(dist.std(), dtype=float))


def calibration_curve(
    y: np.ndarray,
    dist: PredictiveDistribution,
    *,
    levels: np.ndarray = DEFAULT_LEVELS,
    prop_type: PropType = "quantile",
) -> tuple[np.ndarray, np.ndarray]:
    """Kuleshov quantile-calibration curve: (expected p_j, observed p̂_j).

    ``prop_type="quantile"`` (default): p̂_j = mean(u_i ≤ p_j), u the PIT.
    ``prop_type="interval"`` (uncertainty-toolbox's default): p̂_j = fraction of targets inside the
    centred interval of coverage p_j, i.e. mean(|2u − 1| ≤ p_j).
    """
    levels = np.asarray(levels, dtype=float)
    return levels, observed_proportions(_rows(y, dist), None, levels, prop_type)


def calibration_rmse(
    y: np.ndarray,
    dist: PredictiveDistribution,
    *,
    levels: np.ndarray = DEFAULT_LEVELS,
    prop_type: PropType = "quantile",
) -> float:
    """Calibration RMSE = sqrt(mean_j (p̂_j − p_j)²) over the level grid (CRUDE §4).

    With ``levels=np.linspace(0, 1, 100), prop_type="interval"`` this is uncertainty-toolbox's
    ``root_mean_squared_calibration_error``.
    """
    p, ph = calibration_curve(y, dist, levels=levels, prop_type=prop_type)
    return float(np.sqrt(np.mean((ph - p) ** 2)))


def mean_absolute_calibration_error(
    y: np.ndarray,
    dist: PredictiveDistribution,
    *,
    levels: np.ndarray = DEFAULT_LEVELS,
    prop_type: PropType = "quantile",
) -> float:
    """Mean absolute calibration error: mean_j |p̂_j − p_j| over the level grid, p̂_j as in
    :func:`calibration_curve` (Chung et al. 2021, Uncertainty Toolbox's MACE with its levels)."""
    p, ph = calibration_curve(y, dist, levels=levels, prop_type=prop_type)
    return float(np.mean(np.abs(ph - p)))


def quantile_calibration_error(y: np.ndarray, dist: PredictiveDistribution, *, n_levels: int = 100) -> float:
    """l2 quantile calibration error (QR eq. 8): (1/M) Σ_{j=1}^{M} (p̂_j − p_j)², p_j = j/M."""
    levels = np.arange(1, n_levels + 1) / n_levels
    p, ph = calibration_curve(y, dist, levels=levels, prop_type="quantile")
    return float(np.mean((ph - p) ** 2))


def miscalibration_area(
    y: np.ndarray,
    dist: PredictiveDistribution,
    *,
    levels: np.ndarray | None = None,
    prop_type: PropType = "quantile",
) -> float:
    """Miscalibration area between the calibration curve and the diagonal (Chung et al. 2021, Uncertainty
    Toolbox; the curve of Kuleshov et al. 2018).

    ``levels=None`` (default): the exact area ∫₀¹ |ECDF_u(p) − p| dp of the PIT ECDF (no grid).
    With a grid of levels: the area between the piecewise-linear curve through (p_j, p̂_j) and the
    diagonal, splitting segments where they cross (uncertainty-toolbox's polygon area with
    ``levels=np.linspace(0, 1, 100), prop_type="interval"``).
    """
    if levels is None:
        if prop_type != "quantile":
            raise ValueError("the exact (grid-free) area is defined for prop_type='quantile'")
        return _stat_area(_rows(y, dist), None)
    p, ph = calibration_curve(y, dist, levels=levels, prop_type=prop_type)
    return _area_between_polyline_and_diagonal(p, ph)


def _area_between_polyline_and_diagonal(p: np.ndarray, ph: np.ndarray) -> float:
    d0, d1 = ph[:-1] - p[:-1], ph[1:] - p[1:]
    dx = np.diff(p)
    same = d0 * d1 >= 0
    area_same = 0.5 * dx * (np.abs(d0) + np.abs(d1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(d0) / (np.abs(d0) + np.abs(d1))
    area_cross = 0.5 * dx * (t * np.abs(d0) + (1 - t) * np.abs(d1))
    return float(np.sum(np.where(same, area_same, np.nan_to_num(area_cross))))


def max_calibration_deviation(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """sup_p |ECDF(u)(p) − p| computed exactly without binning (the KS statistic of the PIT).

    ACCRUE's "calibration error"; equals ``scipy.stats.kstest(u, "uniform").statistic``.
    """
    return _stat_max_deviation(_rows(y, dist), None)


def reliability_score(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Reliability score RS (ACCRUE eq. 8) of the standardised errors.

    With η_i = ε_i/(√2 σ_i) sorted ascending,
    RS = Σ_i [η_i/N (erf η_i + 1) − η_i/N² (2i − 1) + exp(−η_i²)/(√π N)] − ½√(2/π)
       = ∫ (Φ(η) − C(η))² dη,  Φ(η) = ½(1 + erf η) and C the empirical CDF of η.
    For non-Gaussian distributions it is computed on z = (y − mean)/std, i.e. against a Gaussian
    reference of the same mean and variance.
    """
    return _stat_reliability_score(_rows(y, dist), None)


def pit_entropy(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Sample-spacing entropy of the PIT (QR eq. 6), k = round(√n):

    H = 1/(n−k) Σ_{i=1}^{n−k} log((n+1)/k · (u_(i+k) − u_(i))).  H ≤ 0, → 0 for uniform PIT;
    KL(PIT ‖ U(0,1)) ≈ −H.
    """
    return _stat_pit_entropy(_rows(y, dist), None)


def interval_coverage(y: np.ndarray, dist: PredictiveDistribution, *, coverage: float = 0.9) -> float:
    """Observed coverage (PICP) of the central prediction interval of nominal coverage c = 1 − α
    (Gneiting & Raftery 2007, §6.2): mean_i 1[F_i⁻¹((1−c)/2) ≤ y_i ≤ F_i⁻¹((1+c)/2)]; c for a calibrated model.
    0 < c ≤ 1; c = 1 is the whole support (1.0 for a Gaussian, as uncertainty-toolbox returns)."""
    _check_coverages(coverage)
    return _stat_intervals(_rows(y, dist), None, [coverage])[f"coverage_{100 * coverage:g}"]


def interval_table(y: np.ndarray, dist: PredictiveDistribution, *, coverages=DEFAULT_COVERAGES):
    """Per nominal coverage c: observed coverage, mean width and interval score.

    Interval score (Gneiting & Raftery 2007, α = 1 − c):
    (u − l) + (2/α)(l − y)₊ + (2/α)(y − u)₊.
    """
    import pandas as pd

    _check_coverages(coverages)
    s = _stat_intervals(_rows(y, dist), None, coverages)
    return pd.DataFrame(
        {
            "coverage": list(coverages),
            "observed": [s[f"coverage_{100 * c:g}"] for c in coverages],
            "mean_width": [s[f"width_{100 * c:g}"] for c in coverages],
            "interval_score": [s[f"interval_score_{100 * c:g}"] for c in coverages],
        }
    )


def standardized_residual_stats(y: np.ndarray, dist: PredictiveDistribution) -> dict[str, float]:
    """Mean, std (ddof=0), skewness and excess kurtosis of z = (y − μ)/σ (N(0,1): 0, 1, 0, 0)."""
    return _stat_z_moments(_rows(y, dist), None)


def zms(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean squared z-score ZMS = (1/N) Σ_i z_i², z = (y − μ)/σ (Pernot 2023, "Calibration in machine learning
    uncertainty quantification: beyond consistency to target adaptivity", APL Mach. Learn.; Pernot 2024, arXiv
    2402.10043).

    1 for a calibrated variance (E z² = 1 whatever the error law), > 1 when σ is too small on average.  Unlike
    the calibration error MSE − mean σ², it is a mean of ratios, so a few very large σ or errors (heavy-tailed
    uncertainty and error distributions) move it much less; its scale behaviour is exact: σ → cσ gives ZMS/c².
    Rows with σ = 0 are left out (as for every z statistic)."""
    return _stat_zms(_rows(y, dist), None)["zms"]


#: E log χ²₁ = ψ(½) + log 2 = −(γ + log 2) ≈ −1.2704: mean log z² of a calibrated Gaussian forecaster
LOG_CHI2_1_MEAN = float(special.digamma(0.5) + np.log(2.0))
#: Var log χ²₁ = ψ′(½) = π²/2
LOG_CHI2_1_VAR = float(np.pi**2 / 2.0)


def mean_log_z2(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean log squared z-score (1/N′) Σ_i log z_i² over the N′ rows with a finite, non-zero z — the log-based,
    heavy-tail-robust variant of ZMS.

    ZMS averages z², whose law under heavy tails has few finite moments (Pernot 2024, arXiv 2402.10043:
    "Negative impact of heavy-tailed uncertainty and error distributions on the reliability of calibration
    statistics"); log z² has every moment whenever z has a density bounded near 0, so its mean and interval stay
    reliable.  The price is a reference that depends on the error law: under calibrated Gaussian z it is
    E log χ²₁ = ψ(½) + log 2 = −(γ + log 2) ≈ −1.2704 (:data:`LOG_CHI2_1_MEAN`, variance π²/2), and lower for
    heavier-tailed unit-variance laws (Student-t₅ scaled to variance 1: ≈ −1.57).  σ → cσ shifts it by −2 log c
    exactly; it is a log-scale average: exp(mean log z² + 1.2704) is a geometric ZMS, 1 when calibrated and Gaussian."""
    return _stat_zms(_rows(y, dist), None)["mean_log_z2"]


def spearman_sigma_error(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Spearman rank correlation of σ with |ε| (informativeness of the uncertainty)."""
    return _stat_spearman(_rows(y, dist), None)
