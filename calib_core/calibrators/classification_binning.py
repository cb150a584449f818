"""Binning calibrators, one-vs-rest: histogram binning (Zadrozny & Elkan 2001), isotonic regression (Zadrozny &
Elkan 2002) and Bayesian binning into quantiles (Naeini et al. 2015).

Each fits a 1-D map per class on (p_ik, 1[y_i = k]) — only the positive class when K = 2, returning [1 − q, q] —
and renormalises the calibrated vector to sum to 1 (an all-zero row becomes uniform, never NaN).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

from ..base.binning import bins_from_edges
from ..metrics.classification import confidence_bins
from .classification_base import ClassificationCalibrator, InputKind, probs_from, renormalise

__all__ = ["HistogramBinning", "IsotonicCalibration", "BBQ"]


class _OneVsRest(ClassificationCalibrator):
    """Fit a 1-D map per class on (p_k, 1[y = k]) — only the positive class when K = 2 — then renormalise."""

    def _columns(self) -> list[int]:
        return [1] if self.n_classes_ == 2 else list(range(self.n_classes_))

    def fit(self, X: np.ndarray, y: np.ndarray):
        """Fit one 1-D map per class on (p_ik, 1[y_i = k]) (only class 1 when K = 2)."""
        A, y = self._fit_input(X, y)
        P = probs_from(A, self.input_kind_)
        cols = self._columns()
        # one transposing copy: contiguous class columns
        PT = np.ascontiguousarray((P if len(cols) == P.shape[1] else P[:, cols]).T, dtype=float)
        self.maps_ = [self._fit_column(PT[j], y == c) for j, c in enumerate(cols)]
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Calibrated probabilities: per-class maps, renormalised (binary: [1 − q, q])."""
        A = self._predict_input(X)
        P = probs_from(A, self.input_kind_)
        if self.n_classes_ == 2:
            q = np.clip(self._apply_column(self.maps_[0], P[:, 1].astype(float)), 0.0, 1.0)
            return np.column_stack([1.0 - q, q])
        Q = np.column_stack([self._apply_column(m, P[:, c].astype(float)) for c, m in enumerate(self.maps_)])
        return renormalise(np.clip(Q, 0.0, None))


class HistogramBinning(_OneVsRest):
    """Histogram binning (Zadrozny & Elkan 2001; Guo et al. 2017 eq. 7): θ_m = frequency of the positive class in
    bin m, q = θ_{bin(p)}.

    Bins are equal-width on [0, 1] (``strategy="uniform"``) or equal-mass (``"quantile"``: edges at the quantiles
    of the calibration scores), closed on the right, (a_m, a_{m+1}] as Guo writes them, through
    ``calib_core.base.binning`` — the same edges and the same convention in ``fit`` and ``predict_proba``.  An empty
    bin gets its midpoint.  Multi-class: one-vs-rest, renormalised.

    Parameters
    ----------
    input : {"auto", "logits", "probs"}, default "auto"
        What X holds (:mod:`calib_core.calibrators.classification`; ``"auto"`` decides once, in ``fit``).
    n_bins : int, default 15
        Number of bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.

    Attributes
    ----------
    maps_ : list of tuple of ndarray
        Per calibrated class (only class 1 when K = 2) a tuple (edges, θ).
    input_kind_ : {"logits", "probs"}
        What X was read as.
    n_classes_ : int
        K.

    References
    ----------
    .. [1] B. Zadrozny and C. Elkan, "Obtaining calibrated probability estimates from decision trees and naive
           Bayesian classifiers", Proc. 18th International Conference on Machine Learning (ICML), 609–616, 2001.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc.
           34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> from calib_core.base.classification import softmax
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(200, 3))  # logits of 3 classes
    >>> y = (rng.random((200, 1)) > softmax(z / 2, axis=1).cumsum(axis=1)).sum(axis=1)  # drawn from softmax(z/2)
    >>> cal = cc.HistogramBinning(n_bins=5).fit(z, y)
    >>> cal.maps_[0][1].round(3)  # frequency of class 0 in each of 5 bins of its probability
    array([0.132, 0.35 , 0.556, 0.444, 0.872])
    """

    def __init__(self, *, input: InputKind = "auto", n_bins: int = 15, strategy: str = "uniform") -> None:
        self.input = input
        self.n_bins = n_bins
        self.strategy = strategy

    def _fit_column(self, p: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        idx, edges = confidence_bins(p, self.n_bins, self.strategy, "right")
        count = np.bincount(idx, minlength=self.n_bins).astype(float)
        pos = np.bincount(idx, weights=hit.astype(float), minlength=self.n_bins)
        mid = 0.5 * (edges[:-1] + edges[1:])
        theta = np.where(count > 0, pos / np.maximum(count, 1.0), mid)
        return edges, theta

    def _apply_column(self, m: tuple[np.ndarray, np.ndarray], p: np.ndarray) -> np.ndarray:
        edges, theta = m
        return theta[bins_from_edges(p, edges, "right")]


def _unique_counts(p: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct sorted values of p with their counts and positive counts — sorts only, no argsort.

    The smaller of the positive / negative subsets is sorted and its distinct values located in the distinct
    values of p (every one of them occurs there exactly), so only a few searches are needed.
    """
    xs = np.sort(p)
    new = np.empty(xs.size, dtype=bool)
    new[:1] = True
    np.not_equal(xs[1:], xs[:-1], out=new[1:])
    x_u = xs[new]
    counts = np.diff(np.append(np.flatnonzero(new), xs.size)).astype(float)
    n_hit = int(np.count_nonzero(hit))
    use_pos = n_hit <= hit.size - n_hit
    sub = np.sort(p[hit] if use_pos else p[~hit])
    sub_new = np.empty(sub.size, dtype=bool)
    sub_new[:1] = True
    np.not_equal(sub[1:], sub[:-1], out=sub_new[1:])
    sub_counts = np.diff(np.append(np.flatnonzero(sub_new), sub.size)).astype(float)
    where = np.searchsorted(x_u, sub[sub_new])
    sub_per_u = np.zeros(x_u.size)
    sub_per_u[where] = sub_counts
    n_pos = sub_per_u if use_pos else counts - sub_per_u
    return x_u, counts, n_pos


class IsotonicCalibration(_OneVsRest):
    """Isotonic regression calibration (Zadrozny & Elkan 2002; Guo et al. 2017 §4.1): the non-decreasing f
    minimising Σ_i (f(p_i) − 1[y_i = k])², one-vs-rest, renormalised (all-zero rows → uniform, never NaN).

    Solved by the pool-adjacent-violators algorithm (``scipy.optimize.isotonic_regression``) on the distinct
    values (ties pooled with their counts as weights).  ``interpolation="linear"`` predicts like scikit-learn's
    ``IsotonicRegression(out_of_bounds="clip")`` (and netcal): linear between the first and last value of
    consecutive blocks, constant outside the calibration range; ``"step"`` gives the piecewise-constant f of
    Guo's description (value of the block whose range contains p, the lower block in a gap).

    Parameters
    ----------
    input : {"auto", "logits", "probs"}, default "auto"
        What X holds (:mod:`calib_core.calibrators.classification`; ``"auto"`` decides once, in ``fit``).
    interpolation : {"linear", "step"}, default "linear"
        Between the blocks' thresholds.

    Attributes
    ----------
    maps_ : list of tuple of ndarray
        Per calibrated class (only class 1 when K = 2) a tuple (x thresholds, f values).
    input_kind_ : {"logits", "probs"}
        What X was read as.
    n_classes_ : int
        K.

    References
    ----------
    .. [1] B. Zadrozny and C. Elkan, "Transforming classifier scores into accurate multiclass probability
           estimates", Proc. 8th ACM SIGKDD International Conference on Knowledge Discovery and Data Mining,
           694–699, 2002.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc.
           34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> from calib_core.base.classification import softmax
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(200, 3))  # logits of 3 classes
    >>> y = (rng.random((200, 1)) > softmax(z / 2, axis=1).cumsum(axis=1)).sum(axis=1)  # drawn from softmax(z/2)
    >>> cal = cc.IsotonicCalibration().fit(z, y)
    >>> cal.predict_proba(z[:2]).round(3)
    array([[0.305, 0.16 , 0.535],
           [0.362, 0.186, 0.452]])
    """

    def __init__(self, *, input: InputKind = "auto", interpolation: str = "linear") -> None:
        self.input = input
        self.interpolation = interpolation

    def _fit_column(self, p: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.interpolation not in ("linear", "step"):
            raise ValueError(f"interpolation must be 'linear' or 'step', not {self.interpolation!r}")
        x_u, counts, n_pos = _unique_counts(p, hit)
        res = optimize.isotonic_regression(n_pos / counts, weights=counts, increasing=True)
        f = res.x
        # keep only the first and last point of every constant block (scikit-learn's threshold points)
        keep = np.ones(f.size, dtype=bool)
        if f.size > 2:
            same_prev = f[1:-1] == f[:-2]
            same_next = f[1:-1] == f[2:]
            keep[1:-1] = ~(same_prev & same_next)
        return x_u[keep], f[keep]

    def _apply_column(self, m: tuple[np.ndarray, np.ndarray], p: np.ndarray) -> np.ndarray:
        x, f = m
        if self.interpolation == "linear":
            return np.interp(p, x, f)
        return f[np.clip(np.searchsorted(x, p, side="right") - 1, 0, f.size - 1)]


class BBQ(_OneVsRest):
    """Bayesian Binning into Quantiles (Naeini, Cooper & Hauskrecht 2015, AAAI; Guo et al. 2017 §4.1).

    Binning models M_B with B equal-frequency bins of the calibration scores, B = ⌊N^{1/3}/C⌋ … ⌈C·N^{1/3}⌉
    (C = ``c``, 10 in the paper; at most N/5 bins), each scored by its marginal likelihood with Beta priors
    (BDeu, equivalent sample size N' = ``prior_strength`` = 2):

        log P(D | M_B) = Σ_b [ lnΓ(N'/B) − lnΓ(n_b + N'/B)
                               + lnΓ(m_b + α_b) − lnΓ(α_b) + lnΓ(n_b − m_b + β_b) − lnΓ(β_b) ],

    α_b = (N'/B)·p̄_b, β_b = (N'/B)·(1 − p̄_b), p̄_b the bin's midpoint (outer edges 0 and 1, clipped to [1e-9,
    1 − 1e-9]), n_b rows and m_b positives in bin b.  With a uniform prior over models the prediction is the
    evidence-weighted average Σ_B P(M_B | D)·(m_b + α_b)/(n_b + N'/B) of the bins containing p.

    Bins are (a, b] on the sorted scores (edges = numpy.quantile of the calibration scores, computed on the sorted
    array).  Fast: one sort per class; every model's counts come from ``searchsorted`` on the sorted scores, all
    models are scored in one vectorised pass, and the averaged map (a sum of step functions) is stored as its
    sorted jumps, so prediction is one ``searchsorted``.  Multi-class: one-vs-rest, renormalised.

    Parameters
    ----------
    input : {"auto", "logits", "probs"}, default "auto"
        What X holds (:mod:`calib_core.calibrators.classification`; ``"auto"`` decides once, in ``fit``).
    c : float, default 10.0
        C of the range of the number of bins.
    prior_strength : float, default 2.0
        The equivalent sample size N' of the Beta priors.

    Attributes
    ----------
    maps_ : list of tuple of ndarray
        Per calibrated class (only class 1 when K = 2) a tuple (jump positions, cumulative values).
    n_models_ : int
        Number of binning models averaged.
    bins_range_ : tuple of int
        (B_min, B_max).
    model_weights_ : ndarray of shape (n_models_,)
        Posterior of each B (last class).
    input_kind_ : {"logits", "probs"}
        What X was read as.
    n_classes_ : int
        K.

    References
    ----------
    .. [1] M. P. Naeini, G. F. Cooper and M. Hauskrecht, "Obtaining well calibrated probabilities using Bayesian
           binning", Proc. 29th AAAI Conference on Artificial Intelligence, 2901–2907, 2015.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc.
           34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> from calib_core.base.classification import softmax
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(200, 3))  # logits of 3 classes
    >>> y = (rng.random((200, 1)) > softmax(z / 2, axis=1).cumsum(axis=1)).sum(axis=1)  # drawn from softmax(z/2)
    >>> cal = cc.BBQ().fit(z, y)
    >>> cal.bins_range_
    (1, 40)
    >>> cal.predict_proba(z[:2]).round(3)
    array([[0.233, 0.194, 0.572],
           [0.317, 0.246, 0.437]])
    """

    def __init__(self, *, input: InputKind = "auto", c: float = 10.0, prior_strength: float = 2.0) -> None:
        self.input = input
        self.c = c
        self.prior_strength = prior_strength

    def _fit_column(self, p: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = p.size
        xs = np.sort(p)
        pos = np.sort(p[hit])
        root = n ** (1.0 / 3.0)
        b_min = int(max(1, np.floor(root / self.c)))
        b_max = int(max(b_min, min(np.ceil(n / 5.0), np.ceil(root * self.c))))
        Bs = np.arange(b_min, b_max + 1)
        # all models at once: model j has Bs[j] bins and Bs[j] + 1 edges
        n_edges = Bs + 1
        model_of_edge = np.repeat(np.arange(Bs.size), n_edges)
        first = np.concatenate([[0], np.cumsum(n_edges)[:-1]])
        k_of_edge = np.arange(model_of_edge.size) - first[model_of_edge]
        q = k_of_edge / Bs[model_of_edge]
        h = q * (n - 1)  # numpy.quantile's linear interpolation on the sorted scores
        lo = np.floor(h).astype(np.int64)
        hi = np.minimum(lo + 1, n - 1)
        t = h - lo
        diff = xs[hi] - xs[lo]
        edges = np.where(t >= 0.5, xs[hi] - diff * (1.0 - t), xs[lo] + diff * t)
        # counts in (e_b, e_{b+1}]: rows ≤ e_{b+1} minus rows ≤ e_b; the first bin also takes values ≤ e_0
        le_all = np.searchsorted(xs, edges, side="right")
        le_pos = np.searchsorted(pos, edges, side="right")
        is_first = k_of_edge == 0
        is_last = k_of_edge == n_edges[model_of_edge] - 1
        le_all = np.where(is_first, 0, np.where(is_last, n, le_all))
        le_pos = np.where(is_first, 0, np.where(is_last, pos.size, le_pos))
        bin_sel = ~is_first  # one entry per bin: its upper edge
        nb = (le_all - np.roll(le_all, 1))[bin_sel].astype(float)
        mb = (le_pos - np.roll(le_pos, 1))[bin_sel].astype(float)
        model_of_bin = model_of_edge[bin_sel]
        lower = np.where(is_first, 0.0, edges)
        upper = np.where(is_last, 1.0, edges)
        mid = 0.5 * (np.roll(lower, 1) + upper)[bin_sel]
        mid = np.clip(mid, 1e-9, 1.0 - 1e-9)
        a0 = self.prior_strength / Bs[model_of_bin]
        alpha = a0 * mid
        beta = a0 * (1.0 - mid)
        ll = (
            special.gammaln(a0)
            - special.gammaln(nb + a0)
            + special.gammaln(mb + alpha)
            - special.gammaln(alpha)
            + special.gammaln(nb - mb + beta)
            - special.gammaln(beta)
        )
        score = np.bincount(model_of_bin, weights=ll, minlength=Bs.size)
        w = np.exp(score - score.max())
        w /= w.sum()
        theta = (mb + alpha) / (nb + a0)
        # averaged map = Σ_j w_j θ_j(bin of p): base value + jumps of w_j (θ_jb − θ_j,b−1) at every inner edge
        bin_first = first[model_of_bin] - model_of_bin  # index of the model's first bin in the bin arrays
        b_of_bin = np.arange(theta.size) - bin_first
        base = float(np.sum(w[model_of_bin[b_of_bin == 0]] * theta[b_of_bin == 0]))
        inner = b_of_bin > 0
        jump = w[model_of_bin[inner]] * (theta[inner] - theta[np.flatnonzero(inner) - 1])
        at = edges[~is_first & ~is_last]  # inner edges, in the same (model, bin) order as `inner`
        order = np.argsort(at, kind="stable")
        self.n_models_ = int(Bs.size)
        self.bins_range_ = (b_min, b_max)
        self.model_weights_ = w
        return at[order], base + np.concatenate([[0.0], np.cumsum(jump[order])])

    def _apply_column(self, m: tuple[np.ndarray, np.ndarray], p: np.ndarray) -> np.ndarray:
        at, value = m
        # p lies in bin b of a model iff it exceeds that model's b-th inner edge (bins are (a, b])
        return value[np.searchsorted(at, p, side="left")]
