"""Post-hoc classification calibrators (Guo et al. 2017 §4, Naeini et al. 2015, Zadrozny & Elkan 2001/2002,
Platt 1999).

All are scikit-learn-style estimators (parameters in ``__init__`` only, fitted attributes with a trailing
underscore, ``sklearn.base.clone`` works): ``.fit(X, labels)`` then ``.predict_proba(X)`` → (N, K) float64
probabilities (a binary problem always returns the two columns [P(y = 0), P(y = 1)]) and ``.predict(X)`` → argmax.

Input: logits or probabilities
------------------------------
``X`` is (N, K) logits or probabilities, or a 1-D array for a binary problem (the positive class's logit or
probability).  Every calibrator has ``input="auto" | "logits" | "probs"``:

* ``"probs"``: X holds probabilities.  The scaling methods work on logits = log p (clipped at ``eps``;
  for a 1-D binary probability p the logit log(p/(1 − p))); the binning methods use p directly.
* ``"logits"``: X holds logits.  The binning methods use softmax(X) (1-D: the sigmoid).
* ``"auto"`` (default): decided once, in ``fit``, and stored in ``input_kind_``: a 2-D X is probabilities when
  every entry is in [0, 1] and every row sums to 1 (±1e-3), logits when some entry is outside [0, 1]; a 2-D X in
  [0, 1] whose rows do not sum to 1 is ambiguous and raises ``ValueError`` (say what it is).  A 1-D X is read as
  probabilities when it lies in [0, 1], else as logits.  ``predict_proba`` never re-guesses: it uses
  ``input_kind_`` and raises if probabilities are expected but X leaves [0, 1].  There is no silent switch.

Multi-class binning methods (histogram binning, isotonic, BBQ) are one-vs-rest: class k is calibrated on
(p_ik, 1[y_i = k]) and the calibrated vector is renormalised to sum to 1 (Zadrozny & Elkan 2002; Guo §4.2); a row
whose calibrated scores are all 0 gets the uniform vector 1/K (scikit-learn's convention), never NaN.  For K = 2
they calibrate P(y = 1) only and return [1 − q, q] (Guo §4.1's binary setting).

All optimisation is in float64 (float32 input is converted first — netcal 1.4's temperature scaling silently does
nothing on float32 input,
https://github.com/EFS-OpenSource/calibration-framework/issues/61) with analytic gradients; there are no finite
differences.

Slice-wise: :class:`GroupTemperatureScaling` fits one temperature per slice (``fit(X, labels, *, groups=...)``,
``predict_proba(X, *, groups=...)``; ``uses_groups = True``), the global temperature for a slice unseen at fit time,
with fewer than ``min_rows`` calibration rows or whose own fit is degenerate.
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
from scipy import optimize, special
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ..base.binning import bins_from_edges
from ..base.classification import softmax
from ..base.groupwise import GROUP, SliceFit, as_labels
from ..metrics.classification import confidence_bins

__all__ = [
    "InputKind",
    "TemperatureScaling",
    "GroupTemperatureScaling",
    "VectorScaling",
    "MatrixScaling",
    "PlattScaling",
    "HistogramBinning",
    "IsotonicCalibration",
    "BBQ",
    "linear_scaling_loss",
]

InputKind = Literal["auto", "logits", "probs"]

_ROW_SUM_TOL = 1e-3


# --------------------------------------------------------------------------------------------------
# input handling shared by every calibrator
# --------------------------------------------------------------------------------------------------
def _as_float_array(X: np.ndarray) -> np.ndarray:
    a = np.asarray(X)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"X must be numeric; got dtype {a.dtype}")
    a = a.astype(float, copy=False)
    if a.ndim not in (1, 2):
        raise ValueError(f"X must be 1-D (binary) or 2-D (N, K); got shape {a.shape}")
    if a.ndim == 2 and a.shape[1] < 2:
        if a.shape[1] == 1:
            a = a[:, 0]
        else:
            raise ValueError("X has no columns")
    if not np.all(np.isfinite(a)):
        raise ValueError("X contains NaN or infinite values")
    return a


def _detect_kind(X: np.ndarray, requested: str) -> str:
    if requested in ("logits", "probs"):
        if requested == "probs" and (X.min() < 0 or X.max() > 1):
            raise ValueError("input='probs' but X has values outside [0, 1]")
        return requested
    if requested != "auto":
        raise ValueError(f"input must be 'auto', 'logits' or 'probs', not {requested!r}")
    in_unit = X.size > 0 and X.min() >= 0.0 and X.max() <= 1.0
    if X.ndim == 1:
        return "probs" if in_unit else "logits"
    if not in_unit:
        return "logits"
    if np.all(np.abs(np.einsum("ij->i", X) - 1.0) <= _ROW_SUM_TOL):
        return "probs"
    raise ValueError(
        "input='auto' cannot tell what X is: every value is in [0, 1] but rows do not sum to 1. "
        "Pass input='probs' (e.g. independent per-class scores) or input='logits'."
    )


def _labels(y: np.ndarray, n: int, k: int) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"labels must be 1-D of length {n}; got shape {y.shape}")
    if y.dtype.kind == "b":
        y = y.astype(np.int64)
    if y.dtype.kind == "f" and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    if y.dtype.kind not in "iu":
        raise ValueError("labels must be integers 0..K−1")
    y = y.astype(np.int64, copy=False)
    if n and (y.min() < 0 or y.max() >= k):
        raise ValueError(f"labels must lie in 0..{k - 1}; found {y.min()}..{y.max()}")
    return y


def _logits_from(X: np.ndarray, kind: str, eps: float) -> np.ndarray:
    """(N, K) logits: X itself, or log p (clipped at eps); 1-D binary → [0, z] with z the positive-class logit."""
    if X.ndim == 1:
        if kind == "logits":
            z = X
        else:
            p = np.clip(X, eps, 1.0 - eps)
            z = np.log(p) - np.log1p(-p)
        return np.column_stack([np.zeros_like(z), z])
    if kind == "logits":
        return X
    return np.log(np.maximum(X, eps))


def _probs_from(X: np.ndarray, kind: str) -> np.ndarray:
    """(N, K) probabilities: X itself, softmax(X) or, for 1-D input, [1 − q, q] with q = p or sigmoid(z)."""
    if X.ndim == 1:
        q = X if kind == "probs" else special.expit(X)
        return np.column_stack([1.0 - q, q])
    if kind == "probs":
        return X
    return softmax(X, axis=1)


def _nll_and_softmax(z: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean −log softmax(z)_y (log-sum-exp with the max shift) and softmax(z)."""
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    s = e.sum(axis=1)
    lse = m[:, 0] + np.log(s)
    nll = float(np.mean(lse - z[np.arange(z.shape[0]), y]))
    return nll, e / s[:, None]


def _renormalise(q: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row becomes uniform 1/K (never NaN)."""
    s = q.sum(axis=1, keepdims=True)
    out = np.full_like(q, 1.0 / q.shape[1])
    np.divide(q, s, out=out, where=s > 0)
    return out


class _Calibrator(BaseEstimator):
    """Shared input handling: ``input`` kind decided in fit, K checked in predict."""

    def _fit_input(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        A = _as_float_array(X)
        kind = _detect_kind(A, self.input)
        k = 2 if A.ndim == 1 else A.shape[1]
        self.input_kind_ = kind
        self.n_classes_ = k
        self.binary_1d_ = A.ndim == 1
        return A, _labels(y, A.shape[0], k)

    def _predict_input(self, X: np.ndarray) -> np.ndarray:
        check_is_fitted(self, "input_kind_")
        A = _as_float_array(X)
        k = 2 if A.ndim == 1 else A.shape[1]
        if k != self.n_classes_:
            raise ValueError(f"X has {k} classes but the calibrator was fitted on {self.n_classes_}")
        if self.input_kind_ == "probs" and (A.min() < 0 or A.max() > 1):
            raise ValueError("the calibrator was fitted on probabilities but X has values outside [0, 1]")
        return A

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class with the highest calibrated probability."""
        return self.predict_proba(X).argmax(axis=1)


# --------------------------------------------------------------------------------------------------
# temperature scaling
# --------------------------------------------------------------------------------------------------
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


class TemperatureScaling(_Calibrator):
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
    input : "auto" | "logits" | "probs" — see the module docstring (probabilities use logits = log p).
    eps : clip for log p when the input is probabilities.
    tol : relative tolerance on β = 1/T.
    max_iter : maximum full-data passes.
    random_state : seed of the warm-start subsets (the result does not depend on it beyond ``tol``).

    Attributes
    ----------
    temperature_ : T (divides the logits; netcal 1.4 and scikit-learn store 1/T).
    n_iter_ : full-data passes used.
    input_kind_, n_classes_.
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
        z = _logits_from(A, self.input_kind_, self.eps)
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
        z = _logits_from(A, self.input_kind_, self.eps)
        return softmax(z / self.temperature_)


class GroupTemperatureScaling(_Calibrator):
    """Slice-wise temperature scaling: q_i = softmax(z_i / T_g) for the rows of slice g (Guo et al. 2017 eq. 9 per
    slice).

    T_g minimises the NLL of the calibration rows of slice g (:class:`TemperatureScaling` on those rows: the convex
    problem in β = 1/T solved from its cumulants).  A slice unseen at fit time, with fewer than ``min_rows``
    calibration rows, or whose own fit is degenerate (every calibration row of the slice classified correctly, or
    logits no better than uniform: the NLL has no finite minimiser and :class:`TemperatureScaling` would cap T) gets
    the global T fitted on every calibration row.  With one slice it is :class:`TemperatureScaling`.

    Parameters
    ----------
    by : the column ``cc.evaluate`` takes the slices from (``"group"`` or a feature column).
    min_rows : fewest calibration rows of a slice fitted on its own.
    input, eps, tol, max_iter, random_state : as :class:`TemperatureScaling`.

    Attributes
    ----------
    temperature_ : T_g per slice of ``slices_.levels`` (the global T where a slice is not fitted on its own).
    global_temperature_ : the global T.
    slices_ : :class:`~calib_core.base.groupwise.SliceFit` (its ``failed`` marks the degenerate slices).
    input_kind_, n_classes_.
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
        z = _logits_from(A, self.input_kind_, self.eps)
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
        z = _logits_from(A, self.input_kind_, self.eps)
        c = self.slices_.own_codes(as_labels(groups, z.shape[0], who="GroupTemperatureScaling"))
        t = np.where(c >= 0, self.temperature_[np.maximum(c, 0)], self.global_temperature_)
        return softmax(z / t[:, None])


# --------------------------------------------------------------------------------------------------
# vector / matrix scaling
# --------------------------------------------------------------------------------------------------
def linear_scaling_loss(
    theta: np.ndarray, z: np.ndarray, y: np.ndarray, diagonal: bool, l2: float = 0.0
) -> tuple[float, np.ndarray]:
    """Objective and exact gradient of vector (``diagonal``) / matrix scaling (Guo et al. 2017 eq. 8).

    θ = (W, b) with W the K diagonal entries or the K×K matrix (row-major); s = W z + b (diagonal: w ⊙ z + b);
    L = mean_i [logsumexp(s_i) − s_iy] + l2·(‖W − I‖² + ‖b‖²).  With G = (softmax(s) − onehot(y))/N:
    ∂L/∂W = Gᵀz (diagonal: Σ_i G_ik z_ik), ∂L/∂b = Σ_i G_i, plus 2·l2·(W − I, b).
    """
    n, k = z.shape
    n_w = k if diagonal else k * k
    W, b = theta[:n_w], theta[n_w:]
    s = (z * W if diagonal else z @ W.reshape(k, k).T) + b
    val, p = _nll_and_softmax(s, y)
    p[np.arange(n), y] -= 1.0
    p /= n
    gW = np.einsum("ik,ik->k", p, z) if diagonal else (p.T @ z).ravel()
    grad = np.concatenate([gW, p.sum(axis=0)])
    if l2 > 0:
        dev = W - (np.ones(k) if diagonal else np.eye(k).ravel())
        val += l2 * (dev @ dev + b @ b)
        grad[:n_w] += 2.0 * l2 * dev
        grad[n_w:] += 2.0 * l2 * b
    return val, grad


class _LinearLogitScaling(_Calibrator):
    """Shared L-BFGS-B fit of q = softmax(W z + b) with analytic gradient and optional L2 towards (I, 0)."""

    _diagonal = True

    def fit(self, X: np.ndarray, y: np.ndarray):
        """Minimise :func:`linear_scaling_loss` with scipy's L-BFGS-B and its exact gradient, from (W, b) = (I, 0)."""
        A, y = self._fit_input(X, y)
        z = _logits_from(A, self.input_kind_, self.eps)
        n, k = z.shape
        if not self._diagonal and k * k + k > n:
            warnings.warn(
                f"matrix scaling has K² + K = {k * k + k} parameters but only {n} calibration rows: "
                "expect over-fitting (use l2 > 0, vector or temperature scaling)",
                UserWarning,
                stacklevel=2,
            )
        eye = np.ones(k) if self._diagonal else np.eye(k).ravel()
        # single-threaded BLAS: these (N, K) products are small, and OpenBLAS threads only add contention
        with threadpool_limits(limits=1, user_api="blas"):
            res = optimize.minimize(
                linear_scaling_loss,
                np.concatenate([eye, np.zeros(k)]),
                args=(z, y, self._diagonal, float(self.l2)),
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": 1e-15},
            )
        n_w = eye.size
        self.coef_ = res.x[:n_w].copy() if self._diagonal else res.x[:n_w].reshape(k, k).copy()
        self.intercept_ = res.x[n_w:].copy()
        self.n_iter_ = int(res.nit)
        self.converged_ = bool(res.success)
        self.loss_ = float(res.fun)  # mean NLL + L2 penalty at the solution
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """softmax(W z + b) (float64)."""
        A = self._predict_input(X)
        z = _logits_from(A, self.input_kind_, self.eps)
        s = z * self.coef_ if self._diagonal else z @ self.coef_.T
        return softmax(s + self.intercept_)


class VectorScaling(_LinearLogitScaling):
    """Vector scaling (Guo et al. 2017 §4.2): q = softmax(w ⊙ z + b), w, b ∈ R^K (diagonal matrix scaling).

    Fitted by L-BFGS-B on the mean NLL with its analytic gradient (float64).  ``coef_`` = w, ``intercept_`` = b
    (b is defined up to a common shift; the probabilities are not).  ``l2`` penalises ‖w − 1‖² + ‖b‖².
    netcal 1.4's ``LogisticCalibration`` on multi-class probabilities is the same model on log p.
    """

    _diagonal = True

    def __init__(
        self, *, input: InputKind = "auto", eps: float = 1e-12, l2: float = 0.0, tol: float = 1e-9, max_iter: int = 1000
    ) -> None:
        self.input = input
        self.eps = eps
        self.l2 = l2
        self.tol = tol
        self.max_iter = max_iter


class MatrixScaling(_LinearLogitScaling):
    """Matrix scaling (Guo et al. 2017 eq. 8): q = softmax(W z + b), W ∈ R^{K×K}, b ∈ R^K.

    Mean NLL + ``l2``·(‖W − I‖²_F + ‖b‖²) (the penalty shrinks towards the uncalibrated map), L-BFGS-B with the
    analytic gradient.  Warns when K² + K parameters exceed the calibration rows (Guo: matrix scaling over-fits
    with hundreds of classes).  ``coef_`` = W (row k produces class k's logit), ``intercept_`` = b.
    """

    _diagonal = False

    def __init__(
        self, *, input: InputKind = "auto", eps: float = 1e-12, l2: float = 0.0, tol: float = 1e-9, max_iter: int = 1000
    ) -> None:
        self.input = input
        self.eps = eps
        self.l2 = l2
        self.tol = tol
        self.max_iter = max_iter


# --------------------------------------------------------------------------------------------------
# Platt scaling
# --------------------------------------------------------------------------------------------------
class PlattScaling(_Calibrator):
    """Platt scaling (Platt 1999; Guo et al. 2017 §4.1) for a binary problem: q = σ(a z + b) on the positive-class
    logit z (1-D input; for (N, 2) input z = z_1 − z_0, or log(p_1/p_0) for probabilities).

    a, b minimise the mean binary NLL, solved by Newton's method with the exact 2×2 Hessian (scipy ``trust-exact``).
    ``prior_correction=True`` uses Platt's smoothed targets t₊ = (N₊ + 1)/(N₊ + 2), t₋ = 1/(N₋ + 2) instead of
    0/1 labels (what scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` does).  Multi-class input raises
    ``ValueError``: use temperature/vector scaling, or calibrate the top-label confidence as a binary problem.

    Attributes: ``coef_`` (a), ``intercept_`` (b), ``input_kind_``, ``n_classes_`` (= 2).
    """

    def __init__(self, *, input: InputKind = "auto", eps: float = 1e-12, prior_correction: bool = False) -> None:
        self.input = input
        self.eps = eps
        self.prior_correction = prior_correction

    def _score(self, A: np.ndarray) -> np.ndarray:
        z = _logits_from(A, self.input_kind_, self.eps)
        return z[:, 1] - z[:, 0]

    def fit(self, X: np.ndarray, y: np.ndarray) -> PlattScaling:
        """Fit (a, b) on binary labels (0/1)."""
        A = _as_float_array(X)
        if A.ndim == 2 and A.shape[1] != 2:
            raise ValueError(
                f"Platt scaling is binary but X has {A.shape[1]} classes; use TemperatureScaling or VectorScaling, "
                "or pass the top-label confidence as a 1-D array with labels = (prediction == label)"
            )
        A, y = self._fit_input(X, y)
        f = self._score(A)
        t = y.astype(float)
        if self.prior_correction:
            n_pos = t.sum()
            n_neg = t.size - n_pos
            t = np.where(y == 1, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
        n = f.size

        def fun(theta):
            s = theta[0] * f + theta[1]
            # mean [log(1 + e^s) − t s]
            return float(np.mean(np.logaddexp(0.0, s) - t * s))

        def jac(theta):
            s = theta[0] * f + theta[1]
            r = special.expit(s) - t
            return np.array([r @ f, r.sum()]) / n

        def hess(theta):
            s = theta[0] * f + theta[1]
            w = special.expit(s)
            w = w * (1.0 - w)
            return np.array([[w @ (f * f), w @ f], [w @ f, w.sum()]]) / n

        res = optimize.minimize(
            fun, np.array([1.0, 0.0]), jac=jac, hess=hess, method="trust-exact", options={"gtol": 1e-12}
        )
        self.coef_ = float(res.x[0])
        self.intercept_ = float(res.x[1])
        self.converged_ = bool(res.success)
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """[1 − σ(a z + b), σ(a z + b)]."""
        A = self._predict_input(X)
        q = special.expit(self.coef_ * self._score(A) + self.intercept_)
        return np.column_stack([1.0 - q, q])


# --------------------------------------------------------------------------------------------------
# one-vs-rest binning calibrators
# --------------------------------------------------------------------------------------------------
class _OneVsRest(_Calibrator):
    """Fit a 1-D map per class on (p_k, 1[y = k]) — only the positive class when K = 2 — then renormalise."""

    def _columns(self) -> list[int]:
        return [1] if self.n_classes_ == 2 else list(range(self.n_classes_))

    def fit(self, X: np.ndarray, y: np.ndarray):
        """Fit one 1-D map per class on (p_ik, 1[y_i = k]) (only class 1 when K = 2)."""
        A, y = self._fit_input(X, y)
        P = _probs_from(A, self.input_kind_)
        cols = self._columns()
        # one transposing copy: contiguous class columns
        PT = np.ascontiguousarray((P if len(cols) == P.shape[1] else P[:, cols]).T, dtype=float)
        self.maps_ = [self._fit_column(PT[j], y == c) for j, c in enumerate(cols)]
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Calibrated probabilities: per-class maps, renormalised (binary: [1 − q, q])."""
        A = self._predict_input(X)
        P = _probs_from(A, self.input_kind_)
        if self.n_classes_ == 2:
            q = np.clip(self._apply_column(self.maps_[0], P[:, 1].astype(float)), 0.0, 1.0)
            return np.column_stack([1.0 - q, q])
        Q = np.column_stack([self._apply_column(m, P[:, c].astype(float)) for c, m in enumerate(self.maps_)])
        return _renormalise(np.clip(Q, 0.0, None))


class HistogramBinning(_OneVsRest):
    """Histogram binning (Zadrozny & Elkan 2001; Guo et al. 2017 eq. 7): θ_m = frequency of the positive class in
    bin m, q = θ_{bin(p)}.

    Bins are equal-width on [0, 1] (``strategy="uniform"``) or equal-mass (``"quantile"``: edges at the quantiles
    of the calibration scores), closed on the right, (a_m, a_{m+1}] as Guo writes them, through
    ``calib_core.base.binning`` — the same edges and the same convention in ``fit`` and ``predict_proba``.  An empty
    bin gets its midpoint.  Multi-class: one-vs-rest, renormalised.

    Attributes: ``maps_`` — per calibrated class (only class 1 when K = 2) a tuple (edges, θ).
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

    Attributes: ``maps_`` — per calibrated class (only class 1 when K = 2) a tuple (x thresholds, f values).
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

    Attributes: ``maps_`` — per calibrated class (only class 1 when K = 2) a tuple (jump positions, cumulative
    values); ``n_models_``, ``bins_range_`` (B_min, B_max), ``model_weights_`` (posterior of each B, last class).
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
