"""Binary and ads-style summaries: the calibration ratio Σp/Σy with its interval, and TCE, the
test-based calibration error (Matsubara, Tax, Mudd & Guy 2023, "TCE: A test-based approach to measuring
calibration error", UAI).

Rows (f_i, y_i): top-label (f = confidence max_k p_k, y = 1[ŷ = label]) or the positive class of a binary set
(f = P(y = 1), y = 1[y = 1]).

Calibration ratio
-----------------
R = Σ_i f_i / Σ_i y_i, expected over observed events (the "calibration" of ads click-through models): 1 when the
predictions are right on average, > 1 when they over-predict (top-label: mean confidence / accuracy > 1 is
over-confidence).  It is blind to miscalibration that cancels across probabilities (use ECE / smooth ECE for
that) and infinite when no event occurred.

*Interval* (:func:`ratio_interval`): delta method on the log scale for a ratio of two means of the same rows,
log R̂ ± z·se with se² = (1/N)·var_i(f_i/f̄ − y_i/ȳ) (sample variance, ddof = 1), mapped back by exp — positive
and asymmetric like the ratio itself.  Its coverage of the population ratio E f / E y is measured by seeded
simulation in ``tests/metrics/test_classification_ratio.py`` (balanced and ads-like 2 % prevalence; README).

*Test*: under perfect calibration Σ y_i is a Poisson-binomial count with mean Σ f_i, so R = 1 + (Σf − Σy)/Σy is a
monotone function of the overall gap Σ(f − y): its p-value is that of the gap (the inference layer's null draws of
the per-bin deviations summed over the bins), and the perfect-calibration value is the null mean of Σf/Σy*.

TCE
---
Rows are cut into M *adaptive* (equal-mass) bins of f (default M = 10; ``strategy="uniform"`` for equal width).
In bin b with n_b rows of which k_b are events, each row's prediction f_i is tested with the exact two-sided
binomial test of k_b events in n_b trials against f_i; TCE = 100 × (number of rows whose test rejects at
``alpha``) / N, a percentage in [0, 100].  The equal-tailed test (twice the smaller tail, the test the
Clopper–Pearson interval inverts) rejects f_i exactly when f_i lies outside the bin's Clopper–Pearson interval at
level 1 − α, so TCE = 100 · Σ_b #{i ∈ b: f_i ∉ CP_b} / N — two inverse incomplete beta evaluations per bin and
one comparison per row.  Conventions (switchable for comparisons): the paper's code uses SciPy's ``binomtest``,
whose two-sided p-value sums the outcomes no more likely than the observed one (``test="minlike"`` here, per row
with a distinct f: slow, for checks), and its default bins are PAV-based with size constraints (not implemented:
equal-mass bins are its ``strategy="quantile"``).

TCE does not estimate an N-free population quantity: with the bins fixed and N growing every CP interval shrinks
onto its bin's frequency, and TCE tends to the share of rows whose f differs from it — about 100 % for any spread
of f.  So it gets a test (p-value from labels drawn from the predictions, bins fixed: they depend on f only) and
its perfect-calibration value at this N, but no interval.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Literal

import numpy as np
from scipy import special, stats

from ..base.binning import bins_from_edges
from .classification import confidence_bins, event_rows
from .classification_kernels import bin_event_sums, sorted_quantile_edges

__all__ = [
    "calibration_ratio",
    "ratio_of",
    "ratio_interval",
    "tce",
    "tce_of",
    "tce_null",
    "TCEBins",
    "ratio_values",
]

Target = Literal["top_label", "positive"]



# --------------------------------------------------------------------------------------------------
# calibration ratio
# --------------------------------------------------------------------------------------------------
def ratio_of(f: np.ndarray, y: np.ndarray) -> float:
    """Σf / Σy, the calibration ratio of probabilities f and outcomes y.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities of the event.
    y : ndarray of shape (n,)
        Outcomes, 0 or 1.

    Returns
    -------
    float
        The ratio (inf when Σy = 0 < Σf, NaN for no rows or 0/0).

    References
    ----------
    McMahan, H. B. et al. (2013). Ad click prediction: a view from the trenches. KDD, 1222–1230.
    """
    sf, sy = float(np.sum(f, dtype=float)), float(np.sum(y, dtype=float))
    if sy > 0:
        return sf / sy
    return float("inf") if sf > 0 else float("nan")


def ratio_interval(f: np.ndarray, y: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Delta-method interval of Σf/Σy on the log scale: R̂·exp(∓z·se), se² = var(f/f̄ − y/ȳ, ddof=1)/N.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities of the event.
    y : ndarray of shape (n,)
        Outcomes, 0 or 1.
    level : float, default 0.95
        Two-sided level.

    Returns
    -------
    low, high : float
        The interval (positive and asymmetric like the ratio).

    References
    ----------
    Oehlert, G. W. (1992). A note on the delta method. The American Statistician 46(1), 27–29.

    McMahan, H. B. et al. (2013). Ad click prediction: a view from the trenches. KDD, 1222–1230.
    """
    n = f.shape[0]
    fbar, ybar = float(np.mean(f)) if n else 0.0, float(np.mean(y)) if n else 0.0
    if n < 2 or fbar <= 0 or ybar <= 0:
        return float("nan"), float("nan")
    d = f / fbar - y / ybar
    se = math.sqrt(float(np.var(d, ddof=1)) / n)
    z = float(special.ndtri(0.5 + level / 2.0))
    r = fbar / ybar
    return r * math.exp(-z * se), r * math.exp(z * se)


def calibration_ratio(
    labels: np.ndarray, probs: np.ndarray, *, target: Target = "top_label", weights: np.ndarray | None = None
) -> float:
    """Calibration ratio Σ_i f_i / Σ_i y_i: expected over observed events (1 = right on average, > 1 over-predicts).

    Top-label (Σ confidence / number correct = mean confidence / accuracy) or, for a binary set with
    ``target="positive"``, Σ P(y = 1) / number of positives.

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k)
        Probabilities.
    target : {"top_label", "positive"}, default "top_label"
        The event.
    weights : ndarray of shape (n,) or None, default None
        Row weights.

    Returns
    -------
    float
        The ratio.

    References
    ----------
    McMahan, H. B. et al. (2013). Ad click prediction: a view from the trenches. KDD, 1222–1230.

    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    f, y = event_rows(labels, probs, target)
    if weights is not None:
        w = np.asarray(weights, dtype=float)
        return ratio_of(w * f, w * y)
    return ratio_of(f, y)


# --------------------------------------------------------------------------------------------------
# TCE
# --------------------------------------------------------------------------------------------------
class TCEBins:
    """Rows (f, y) sorted by f and cut into M bins (equal-mass by default).

    Per bin: the row range in sorted order, n_b and k_b; :meth:`share_rejected` gives TCE / 100 for any per-bin event
    counts (observed or simulated).

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities of the event.
    y : ndarray of shape (n,)
        Outcomes, 0 or 1.
    n_bins : int, default 10
        M.
    strategy : {"quantile", "uniform"}, default "quantile"
        Equal-mass or equal-width bins.

    References
    ----------
    Matsubara, T., Tax, N., Mudd, R. & Guy, I. (2023). TCE: a test-based approach to measuring calibration
    error. UAI, PMLR 216, 1390–1400.

    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of
    the binomial. Biometrika 26(4), 404–413.
    """

    def __init__(self, f: np.ndarray, y: np.ndarray, *, n_bins: int = 10, strategy: str = "quantile") -> None:
        if n_bins < 1:
            raise ValueError("n_bins must be at least 1")
        self.f_sorted = np.sort(f)  # the values only (a SIMD sort, no argsort): bins are ranges of it
        self.n = f.shape[0]
        self.n_bins = n_bins
        self._f = f
        edges = None
        if strategy == "quantile" and self.n and not np.isnan(self.f_sorted[-1]):
            # np.quantile's edges from the sorted values, then count and Σy per bin in one compiled pass (bit for
            # bit confidence_bins + bincount); the row bins only when asked for (the null draws' sub-bins)
            edges = sorted_quantile_edges(self.f_sorted, n_bins)
        if edges is not None and not np.isnan(edges).any():
            self.edges = edges
            self.count, self.events = bin_event_sums(f, y, edges)
        else:
            idx, self.edges = confidence_bins(f, n_bins, strategy)  # type: ignore[arg-type]
            self.count = np.bincount(idx, minlength=n_bins).astype(np.int64)
            self.events = np.bincount(idx, weights=y, minlength=n_bins)
            self.idx = idx
        # bins are contiguous in f order (edges are increasing): the row range of each bin in sorted order
        self.start = np.concatenate([[0], np.cumsum(self.count)[:-1]])
        self.stop = self.start + self.count

    @cached_property
    def idx(self) -> np.ndarray:
        """The bin of every row (in the rows' order; ``confidence_bins``'s for equal-mass bins)."""
        return bins_from_edges(np.asarray(self._f, dtype=float), self.edges, "right")

    def limits(self, events: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """Clopper–Pearson interval (level 1 − α) of every bin (last axis) for event counts ``events``."""
        n = self.count.astype(float)
        k = np.clip(np.round(events), 0, n)
        a = alpha / 2.0
        with np.errstate(all="ignore"):
            lo = np.where(k > 0, special.betaincinv(np.maximum(k, 1e-300), n - k + 1, a), 0.0)
            hi = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1e-300), 1.0 - a), 1.0)
        return lo, hi

    def share_rejected(self, events: np.ndarray, alpha: float) -> np.ndarray:
        """Share of rows whose f lies outside their bin's CP interval, for counts ``events`` (..., M)."""
        lo, hi = self.limits(events, alpha)
        # rows of bin b with f < lo_b: searchsorted within the bin's slice of the sorted f
        below = np.clip(np.searchsorted(self.f_sorted, lo, side="left"), self.start, self.stop) - self.start
        above = self.stop - np.clip(np.searchsorted(self.f_sorted, hi, side="right"), self.start, self.stop)
        return (below + above).sum(axis=-1) / max(self.n, 1)


def tce_of(
    f: np.ndarray,
    y: np.ndarray,
    *,
    n_bins: int = 10,
    strategy: str = "quantile",
    alpha: float = 0.05,
    test: Literal["central", "minlike"] = "central",
) -> float:
    """TCE of probabilities ``f`` against outcomes ``y`` ∈ {0, 1}, in percent.

    100 × the share of rows whose prediction an exact two-sided binomial test of their bin's events rejects at
    ``alpha`` (module docstring).  ``test="central"``: twice the smaller tail = outside the Clopper–Pearson interval,
    vectorised; ``"minlike"``: SciPy ``binomtest``'s two-sided p-value, the paper's code, one test per distinct f.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities of the event.
    y : ndarray of shape (n,)
        Outcomes, 0 or 1.
    n_bins : int, default 10
        M.
    strategy : {"quantile", "uniform"}, default "quantile"
        Equal-mass or equal-width bins.
    alpha : float, default 0.05
        Level of each test.
    test : {"central", "minlike"}, default "central"
        The two-sided binomial test.

    Returns
    -------
    float
        TCE in [0, 100].

    References
    ----------
    Matsubara, T., Tax, N., Mudd, R. & Guy, I. (2023). TCE: a test-based approach to measuring calibration
    error. UAI, PMLR 216, 1390–1400.

    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of
    the binomial. Biometrika 26(4), 404–413.
    """
    f = np.asarray(f, dtype=float)
    y = np.asarray(y, dtype=float)
    if f.size == 0:
        return float("nan")
    bins = TCEBins(f, y, n_bins=n_bins, strategy=strategy)
    if test == "central":
        return 100.0 * float(bins.share_rejected(bins.events, alpha))
    if test != "minlike":
        raise ValueError(f"test must be 'central' or 'minlike', not {test!r}")
    rejected = 0
    for b in np.nonzero(bins.count)[0]:  # a loop over bins and their distinct predictions (a check, not the path)
        vals, mult = np.unique(bins.f_sorted[bins.start[b]:bins.stop[b]], return_counts=True)
        k, n = int(round(bins.events[b])), int(bins.count[b])
        p = np.array([stats.binomtest(k, n, float(v)).pvalue for v in vals])
        rejected += int(mult[p <= alpha].sum())
    return 100.0 * rejected / f.size


def tce(
    labels: np.ndarray,
    probs: np.ndarray,
    *,
    target: Target = "top_label",
    n_bins: int = 10,
    strategy: str = "quantile",
    alpha: float = 0.05,
) -> float:
    """TCE in percent: top-label (confidence against correctness) or, on a binary set, P(y = 1) against y.

    ``n_bins`` adaptive (equal-mass) bins, rows rejected by the exact binomial test of their bin at ``alpha`` (see
    :func:`tce_of`).

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k)
        Probabilities.
    target : {"top_label", "positive"}, default "top_label"
        The event.
    n_bins : int, default 10
        M.
    strategy : {"quantile", "uniform"}, default "quantile"
        Equal-mass or equal-width bins.
    alpha : float, default 0.05
        Level of each test.

    Returns
    -------
    float
        TCE in [0, 100].

    References
    ----------
    Matsubara, T., Tax, N., Mudd, R. & Guy, I. (2023). TCE: a test-based approach to measuring calibration
    error. UAI, PMLR 216, 1390–1400.
    """
    f, y = event_rows(labels, probs, target)
    return tce_of(f, y, n_bins=n_bins, strategy=strategy, alpha=alpha)


def tce_null(
    f: np.ndarray,
    y: np.ndarray,
    *,
    n_draws: int = 1000,
    n_bins: int = 10,
    strategy: str = "quantile",
    alpha: float = 0.05,
    exact_budget: int = 2_000_000,
    n_sub: int = 32,
    rng: np.random.Generator | None = None,
) -> tuple[float, np.ndarray, str]:
    """The observed TCE and ``n_draws`` TCE values under perfect calibration.

    Labels y*_i ~ Bernoulli(f_i); the bins depend on f only and stay fixed.  Exact row draws while N·n_draws ≤
    ``exact_budget``; above, each bin's event count is the sum of Binomial(n_g, mean f over g) over ``n_sub``
    equal-width sub-bins g of the bin (exact mean; the variance within 0.1 % of the Poisson-binomial's for sub-bins
    this narrow).

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities of the event.
    y : ndarray of shape (n,)
        Outcomes, 0 or 1.
    n_draws : int, default 1000
        Null draws.
    n_bins : int, default 10
        M.
    strategy : {"quantile", "uniform"}, default "quantile"
        Equal-mass or equal-width bins.
    alpha : float, default 0.05
        Level of each test.
    exact_budget : int, default 2000000
        Largest N·n_draws drawn row by row.
    n_sub : int, default 32
        Sub-bins per bin above the budget.
    rng : numpy.random.Generator or None, default None
        Random numbers (None: seeded 0).

    Returns
    -------
    observed : float
        The TCE of the data.
    null : ndarray of shape (n_draws,)
        TCE values under perfect calibration.
    how : str
        How the draws were made.

    References
    ----------
    Matsubara, T., Tax, N., Mudd, R. & Guy, I. (2023). TCE: a test-based approach to measuring calibration
    error. UAI, PMLR 216, 1390–1400.

    Bröcker, J. & Smith, L. A. (2007). Increasing the reliability of reliability diagrams. Weather and
    Forecasting 22(3), 651–661.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    f = np.asarray(f, dtype=float)
    y = np.asarray(y, dtype=float)
    bins = TCEBins(f, y, n_bins=n_bins, strategy=strategy)
    observed = 100.0 * float(bins.share_rejected(bins.events, alpha))
    n = f.shape[0]
    m = bins.n_bins
    if n * n_draws <= exact_budget:
        fs = bins.f_sorted
        counts = np.empty((n_draws, m))
        nonempty = np.nonzero(bins.count > 0)[0]
        chunk = max(1, 1_000_000 // max(n, 1))
        for a in range(0, n_draws, chunk):
            b = min(n_draws, a + chunk)
            hits = (rng.random((b - a, n)) < fs).astype(float)
            counts[a:b] = 0.0
            counts[a:b, nonempty] = np.add.reduceat(hits, bins.start[nonempty], axis=1)
        how = f"exact: {n_draws} draws of y*_i ~ Bernoulli(f_i) row by row"
    else:
        # per bin: normal with the exact Poisson-binomial mean Σf and variance Σf(1 − f), rounded, where the bin
        # expects ≥ 30 events and ≥ 30 non-events; else Binomial(n_g, mean f over g) summed over n_sub sub-bins
        mean = np.bincount(bins.idx, weights=f, minlength=m)
        var = np.bincount(bins.idx, weights=f * (1.0 - f), minlength=m)
        cnt = bins.count.astype(float)
        big = (mean >= 30) & (cnt - mean >= 30)
        counts = np.clip(np.round(mean + np.sqrt(var) * rng.standard_normal((n_draws, m))), 0, cnt)
        small = np.nonzero(~big & (cnt > 0))[0]
        parts = 0
        if small.size:
            lo = bins.edges[bins.idx]
            width = bins.edges[bins.idx + 1] - lo
            with np.errstate(invalid="ignore", divide="ignore"):
                pos = np.where(width > 0, (f - lo) / width, 0.0)
            g = bins.idx * n_sub + np.clip((pos * n_sub).astype(np.int64), 0, n_sub - 1)
            n_g = np.bincount(g, minlength=m * n_sub)
            s_g = np.bincount(g, weights=f, minlength=m * n_sub)
            keep = np.nonzero((n_g > 0) & np.isin(np.arange(m * n_sub) // n_sub, small))[0]
            p_g = np.clip(s_g[keep] / n_g[keep], 0.0, 1.0)
            draws = rng.binomial(n_g[keep], p_g, size=(n_draws, keep.size)).astype(float)
            owner = np.zeros((keep.size, m))
            owner[np.arange(keep.size), keep // n_sub] = 1.0
            counts[:, small] = (draws @ owner)[:, small]
            parts = keep.size
        how = (f"{n_draws} draws per bin: normal with the exact mean and variance ({int(big.sum())} bins), "
               f"binomials in {parts} sub-bins ({small.size} bins with < 30 expected events or non-events)")
    null = 100.0 * bins.share_rejected(counts, alpha)
    return observed, null, how


def ratio_values(rows, *, tce: bool = True, alpha: float = 0.05) -> dict[str, float]:
    """Point estimates of prepared :class:`~calib_core.metrics.classification.ClassificationRows`.

    ``calibration_ratio`` (top label), ``tce`` (when asked) and, for binary full-probability rows, their
    ``_positive`` versions.

    Parameters
    ----------
    rows : ClassificationRows
        The rows.
    tce : bool, default True
        Include TCE.
    alpha : float, default 0.05
        Level of TCE's tests.

    Returns
    -------
    dict of str to float
        Name → value.

    References
    ----------
    Matsubara, T., Tax, N., Mudd, R. & Guy, I. (2023). TCE: a test-based approach to measuring calibration
    error. UAI, PMLR 216, 1390–1400.

    McMahan, H. B. et al. (2013). Ad click prediction: a view from the trenches. KDD, 1222–1230.
    """
    out: dict[str, float] = {}
    sets = [("", rows.confidence, rows.correct)]
    if rows.is_binary and not rows.top_label_only:
        sets.append(("_positive", rows.probs[:, 1].astype(float), (rows.labels == 1).astype(float)))
    for suffix, f, y in sets:
        out["calibration_ratio" + suffix] = ratio_of(f, y)
        if tce:
            out["tce" + suffix] = tce_of(np.clip(f, 0.0, 1.0), y, alpha=alpha)
    return out
