"""Temperature scaling (Guo et al. 2017, eq. 9): one temperature for every row, or one per slice.

:class:`TemperatureScaling` fits T > 0 minimising the NLL of softmax(z/T) from the cumulants of the
label-relative logits (a 4th-order Taylor step on the derivative of the convex NLL in β = 1/T);
:class:`GroupTemperatureScaling` fits one T per slice of a group or feature column, the global T where a slice has
too few calibration rows or no finite optimum.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ..base.classification import softmax
from ..base.groupwise import GROUP, SliceFit, as_labels
from .classification_base import ClassificationCalibrator, InputKind, logits_from

__all__ = ["TemperatureScaling", "GroupTemperatureScaling"]


_EXP_SAFE = 700.0


def _cumulant_sums(d: np.ndarray, beta: float, chunk: int, d_max: float | None = None) -> tuple[np.ndarray, int]:
    """Σ_i κ_j,i(β) for j = 1..5 over the rows of d, κ_j,i the j-th cumulant of d_i· under softmax(β d_i·).

    d = z − z_y (label-relative logits, so the label's entry is 0 and Σ_k exp(β d_ik) ≥ 1).  Processed in row
    chunks that stay in cache; per chunk: e = exp(β d), μ = Σ e d / Σ e, central moments Σ e (d − μ)^j / Σ e.
    ``d_max`` (= d.max()) tells whether exp(β d) can overflow; if so rows are shifted by their maximum (the
    cumulants of order ≥ 2 are shift-invariant, the mean is shifted back).
    """
    n, k = d.shape
    ones = np.ones(k)
    tot = np.zeros(5)
    if d_max is None:
        d_max = float(d.max()) if d.size else 0.0
    safe = beta * d_max <= _EXP_SAFE
    m = min(chunk, n)
    e_buf, t_buf, c_buf = np.empty((m, k)), np.empty((m, k)), np.empty((m, k))
    for start in range(0, n, chunk):  # loop over row blocks, vectorised within
        dc = d[start : start + chunk]
        r = dc.shape[0]
        e, t, c = e_buf[:r], t_buf[:r], c_buf[:r]
        shift = None
        if not safe:
            shift = dc.max(axis=1)
            dc = dc - shift[:, None]
        np.multiply(dc, beta, out=e)
        np.exp(e, out=e)
        s0 = e @ ones
        np.multiply(e, dc, out=t)
        mu = (t @ ones) / s0
        np.subtract(dc, mu[:, None], out=c)
        np.multiply(e, c, out=t)
        t *= c
        m2 = (t @ ones) / s0
        t *= c
        m3 = (t @ ones) / s0
        t *= c
        m4 = (t @ ones) / s0
        t *= c
        m5 = (t @ ones) / s0
        k1 = mu if shift is None else mu + shift
        tot += (k1.sum(), m2.sum(), m3.sum(), (m4 - 3.0 * m2 * m2).sum(), (m5 - 10.0 * m3 * m2).sum())
    return tot, n


def _taylor_root(G: np.ndarray, beta: float) -> tuple[float, float]:
    """Root Δ of the gradient's Taylor polynomial Σ_j G_j Δ^j / j! (G_j = mean κ_{j+1}) near the Newton step.

    Returns (Δ, estimated error of β + Δ): the omitted terms estimated from the decay ratio ρ of the included
    ones, (t₃ρ² + t₄ρ)/(1 − ρ)/G₁ with t_j = |G_j Δ^j / j!| (infinite when the terms do not decay).
    Falls back to the Newton step −G_0/G_1 when the polynomial iteration leaves the trust region.
    """
    g0, g1 = G[0], G[1]
    newton = -g0 / g1
    fact = np.array([1.0, 1.0, 2.0, 6.0, 24.0])
    coef = G / fact
    delta = newton
    radius = 0.5 * beta
    if abs(newton) <= radius:
        for _ in range(30):  # Newton on the scalar polynomial
            powers = delta ** np.arange(5)
            val = coef @ powers
            der = coef[1:] @ (np.arange(1, 5) * powers[:4])
            if der <= 0:
                delta = newton
                break
            step = val / der
            delta -= step
            if abs(step) <= 1e-15 * max(abs(delta), beta) or abs(delta) > radius:
                break
        if abs(delta) > radius or not np.isfinite(delta):
            delta = newton
    # remainder estimate from the geometric decay of the terms t_j = |G_j Δ^j / j!| (j = 1..4)
    t = np.abs(coef[1:] * delta ** np.arange(1, 5))
    if t[0] == 0.0:
        return float(delta), 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = float(np.nanmax(np.where(t[:-1] > 0, t[1:] / t[:-1], 0.0)))
    if not rho < 1.0:
        return float(delta), float("inf")
    err = (t[2] * rho * rho + t[3] * rho) / (1.0 - rho) / g1
    return float(delta), float(err)


class TemperatureScaling(ClassificationCalibrator):
    """Temperature scaling (Guo et al. 2017 eq. 9): q_i = softmax(z_i / T), T > 0 minimising the NLL.

    The NLL L(β) = mean_i [log Σ_k exp(β d_ik)] with β = 1/T and d_ik = z_ik − z_iy is convex in β; its derivative
    is L'(β) = mean_i E_{softmax(β d_i)}[d_i] and the j-th derivative is the mean (j+1)-th cumulant of d_i under
    the tempered softmax.  The fit solves L'(β) = 0: from one pass over the data it takes the first five cumulants
    and steps to the root of the 4th-order Taylor polynomial of L' (a Newton step when far away), inside a
    bracket kept from the sign of L' (bisection if a step leaves it).  It starts from the solution on random
    subsets of 2¹² and 2¹⁶ rows (warm start only: the answer is the full-data optimum) and stops when the
    estimated error of β is below ``tol``·β.  Exact analytic derivatives, float64, no finite differences.

    Parameters
    ----------
    input : {"auto", "logits", "probs"}, default "auto"
        What X holds (:mod:`calib_core.calibrators.classification`; ``"auto"`` decides once, in ``fit``).
        Probabilities use logits = log p.
    eps : float, default 1e-12
        Clip for log p when the input is probabilities.
    tol : float, default 1e-10
        Relative tolerance on β = 1/T.
    max_iter : int, default 50
        Maximum full-data passes.
    random_state : int or None, default 0
        Seed of the warm-start subsets (the result does not depend on it beyond ``tol``).

    Attributes
    ----------
    temperature_ : float
        T (divides the logits; netcal 1.4 and scikit-learn store 1/T).
    n_iter_ : int
        Full-data passes used.
    input_kind_ : {"logits", "probs"}
        What X was read as.
    n_classes_ : int
        K.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc.
           34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> from calib_core.base.classification import softmax
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(200, 3))  # logits of 3 classes
    >>> y = (rng.random((200, 1)) > softmax(z / 2, axis=1).cumsum(axis=1)).sum(axis=1)  # drawn from softmax(z/2)
    >>> cal = cc.TemperatureScaling().fit(z, y)
    >>> round(cal.temperature_, 3)
    2.072
    >>> cal.predict_proba(z[:2]).round(3)
    array([[0.264, 0.181, 0.555],
           [0.351, 0.139, 0.51 ]])
    """

    def __init__(
        self,
        *,
        input: InputKind = "auto",
        eps: float = 1e-12,
        tol: float = 1e-10,
        max_iter: int = 50,
        random_state: int | None = 0,
    ) -> None:
        self.input = input
        self.eps = eps
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    _CHUNK = 8192
    _BETA_MIN = 1e-8
    _BETA_MAX = 1e8

    def _solve(self, d: np.ndarray, beta: float, tol: float, max_iter: int) -> tuple[float, int, str]:
        lo, hi = 0.0, np.inf
        d_max = float(d.max())
        for it in range(1, max_iter + 1):
            tot, n = _cumulant_sums(d, beta, self._CHUNK, d_max)
            G = tot / n
            if G[0] < 0:
                lo = beta
            else:
                hi = beta
            if G[1] <= 1e-300:  # all probability on one class per row: the loss is flat in β here
                new = beta * 4.0 if G[0] < 0 else beta / 4.0
                err = np.inf
            else:
                delta, err = _taylor_root(G, beta)
                if abs(delta) > 0.05 * beta:  # far from the root: the series is not trusted for the error
                    err = np.inf
                new = beta + delta
            if not (lo < new < hi):
                new = np.sqrt(lo * hi) if (lo > 0 and np.isfinite(hi)) else (beta * 4.0 if np.isinf(hi) else beta / 4.0)
                err = np.inf
            # the estimated error of the new iterate (Taylor truncation) is below tol·β
            converged = err <= tol * new
            beta = float(new)
            if converged:
                return beta, it, "converged"
            if beta >= self._BETA_MAX or beta <= self._BETA_MIN:
                return float(np.clip(beta, self._BETA_MIN, self._BETA_MAX)), it, "bound"
        return beta, max_iter, "max_iter"

    def fit(self, X: np.ndarray, y: np.ndarray) -> TemperatureScaling:
        """Fit T on calibration logits/probabilities ``X`` (N, K) and integer labels ``y``."""
        A, y = self._fit_input(X, y)
        z = logits_from(A, self.input_kind_, self.eps)
        n = z.shape[0]
        if n == 0:
            raise ValueError("no rows to fit on")
        d = z - z[np.arange(n), y][:, None]
        # limits: L'(0+) = mean_i mean_k d_ik ≥ 0 → optimum at β ≤ 0; L'(∞) = mean_i max_k d_ik = 0 → β = ∞
        # max_k d_ik ≥ 0 (d_iy = 0), so mean_i max_k d_ik > 0 ⇔ max d > 0 (some row is misclassified)
        any_wrong = float(d.max()) > 0
        if d.mean() >= 0 and any_wrong:
            warnings.warn(
                "temperature scaling: the logits are not better than uniform (NLL decreases as T → ∞); "
                f"T is capped at {1 / self._BETA_MIN:g}",
                UserWarning,
                stacklevel=2,
            )
            self.temperature_ = 1.0 / self._BETA_MIN
            self.n_iter_ = 0
            return self
        if not any_wrong:
            warnings.warn(
                "temperature scaling: every calibration row is classified correctly, the NLL decreases as T → 0; "
                f"T is capped at {1 / self._BETA_MAX:g}",
                UserWarning,
                stacklevel=2,
            )
            self.temperature_ = 1.0 / self._BETA_MAX
            self.n_iter_ = 0
            return self
        beta = 1.0
        rng = np.random.default_rng(self.random_state)
        for size in (4096, 65536):  # warm start on random subsets (4·size ≤ N)
            if 4 * size <= n:
                sub = d[rng.choice(n, size, replace=False)]
                if sub.max() > 0:
                    beta, _, _ = self._solve(sub, beta, 1e-6, 20)
                    beta = float(np.clip(beta, 1e-3, 1e3))
        with threadpool_limits(limits=1, user_api="blas"):
            beta, it, status = self._solve(d, beta, self.tol, self.max_iter)
        if status == "max_iter":
            warnings.warn("temperature scaling did not converge within max_iter passes", UserWarning, stacklevel=2)
        self.temperature_ = 1.0 / beta
        self.n_iter_ = it
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """softmax(z / T) (float64)."""
        A = self._predict_input(X)
        z = logits_from(A, self.input_kind_, self.eps)
        return softmax(z / self.temperature_)


class GroupTemperatureScaling(ClassificationCalibrator):
    """Slice-wise temperature scaling: q_i = softmax(z_i / T_g) for the rows of slice g (Guo et al. 2017 eq. 9 per
    slice).

    T_g minimises the NLL of the calibration rows of slice g (:class:`TemperatureScaling` on those rows: the convex
    problem in β = 1/T solved from its cumulants).  A slice unseen at fit time, with fewer than ``min_rows``
    calibration rows, or whose own fit is degenerate (every calibration row of the slice classified correctly, or
    logits no better than uniform: the NLL has no finite minimiser and :class:`TemperatureScaling` would cap T) gets
    the global T fitted on every calibration row.  With one slice it is :class:`TemperatureScaling`.

    Parameters
    ----------
    by : str, default "group"
        The column ``cc.evaluate`` takes the slices from (``"group"`` or a feature column).
    min_rows : int, default 30
        Fewest calibration rows of a slice fitted on its own.
    input, eps, tol, max_iter, random_state :
        As :class:`TemperatureScaling`.

    Attributes
    ----------
    temperature_ : ndarray of shape (n_slices,)
        T_g per slice of ``slices_.levels`` (the global T where a slice is not fitted on its own).
    global_temperature_ : float
        The global T.
    slices_ : calib_core.base.groupwise.SliceFit
        The slices seen at fit time (its ``failed`` marks the degenerate slices).
    input_kind_ : {"logits", "probs"}
        What X was read as.
    n_classes_ : int
        K.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc.
           34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330, 2017.
    .. [2] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005, §4.5.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> from calib_core.base.classification import softmax
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(200, 3))  # logits of 3 classes
    >>> y = (rng.random((200, 1)) > softmax(z / 2, axis=1).cumsum(axis=1)).sum(axis=1)  # drawn from softmax(z/2)
    >>> from calib_core.calibrators.classification import GroupTemperatureScaling
    >>> g = np.where(np.arange(200) < 100, "a", "b")
    >>> cal = GroupTemperatureScaling().fit(z, y, groups=g)
    >>> cal.temperature_.round(3), round(cal.global_temperature_, 3)
    (array([1.839, 2.309]), 2.072)
    """

    uses_groups = True

    def __init__(
        self,
        *,
        by: str = GROUP,
        min_rows: int = 30,
        input: InputKind = "auto",
        eps: float = 1e-12,
        tol: float = 1e-10,
        max_iter: int = 50,
        random_state: int | None = 0,
    ) -> None:
        self.by = by
        self.min_rows = min_rows
        self.input = input
        self.eps = eps
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _one(self) -> TemperatureScaling:
        return TemperatureScaling(input="logits", eps=self.eps, tol=self.tol, max_iter=self.max_iter,
                                  random_state=self.random_state)

    def fit(self, X: np.ndarray, y: np.ndarray, *, groups=None) -> GroupTemperatureScaling:
        """T_g on the calibration rows of every slice with at least ``min_rows`` rows, and the global T."""
        A, y = self._fit_input(X, y)
        labels = as_labels(groups, A.shape[0], who="GroupTemperatureScaling")
        sf, codes = SliceFit.of(labels, self.min_rows)
        z = logits_from(A, self.input_kind_, self.eps)
        self.global_temperature_ = float(self._one().fit(z, y).temperature_)
        temps = np.full(sf.levels.size, self.global_temperature_)
        failed = np.zeros(sf.levels.size, dtype=bool)
        order = np.argsort(codes, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(sf.counts)])
        for k in np.flatnonzero(sf.own):  # one fit per slice (a loop over slices, vectorised within)
            rows = order[bounds[k]:bounds[k + 1]]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t = self._one().fit(z[rows], y[rows])
            if t.n_iter_ == 0 and caught:  # capped: no finite NLL minimiser on this slice
                failed[k] = True
            else:
                temps[k] = t.temperature_
        self.slices_ = sf.with_failed(failed)
        self.temperature_ = np.where(self.slices_.own, temps, self.global_temperature_)
        return self

    def note(self, groups) -> str | None:
        """Words counting the rows of ``groups`` that use the global T; None when there are none."""
        check_is_fitted(self, "temperature_")
        return self.slices_.note(np.asarray(groups).astype(str), who="temperature scaling per slice")

    def predict(self, X: np.ndarray, *, groups=None) -> np.ndarray:
        """Class with the highest calibrated probability."""
        return self.predict_proba(X, groups=groups).argmax(axis=1)

    def predict_proba(self, X: np.ndarray, *, groups=None) -> np.ndarray:
        """softmax(z_i / T_g), g the slice of row i (float64)."""
        A = self._predict_input(X)
        z = logits_from(A, self.input_kind_, self.eps)
        c = self.slices_.own_codes(as_labels(groups, z.shape[0], who="GroupTemperatureScaling"))
        t = np.where(c >= 0, self.temperature_[np.maximum(c, 0)], self.global_temperature_)
        return softmax(z / t[:, None])
