"""Linear maps of the logits: vector and matrix scaling (Guo et al. 2017, eq. 8) and Platt scaling (Platt 1999).

:class:`VectorScaling` (q = softmax(w ⊙ z + b)) and :class:`MatrixScaling` (q = softmax(W z + b)) minimise the mean
NLL (:func:`linear_scaling_loss`, with its exact gradient) by L-BFGS-B; :class:`PlattScaling` fits σ(a z + b) on the
positive-class logit of a binary problem by Newton's method.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize, special
from threadpoolctl import threadpool_limits

from ..base.classification import softmax
from .classification_base import ClassificationCalibrator, InputKind, as_float_array, logits_from, nll_and_softmax

__all__ = ["VectorScaling", "MatrixScaling", "PlattScaling", "linear_scaling_loss"]


def linear_scaling_loss(
    theta: np.ndarray, z: np.ndarray, y: np.ndarray, diagonal: bool, l2: float = 0.0
) -> tuple[float, np.ndarray]:
    """Objective and exact gradient of vector (``diagonal``) / matrix scaling (Guo et al. 2017 eq. 8).

    θ = (W, b) with W the K diagonal entries or the K×K matrix (row-major); s = W z + b (diagonal: w ⊙ z + b);
    L = mean_i [logsumexp(s_i) − s_iy] + l2·(‖W − I‖² + ‖b‖²).  With G = (softmax(s) − onehot(y))/N:
    ∂L/∂W = Gᵀz (diagonal: Σ_i G_ik z_ik), ∂L/∂b = Σ_i G_i, plus 2·l2·(W − I, b).

    Parameters
    ----------
    theta : ndarray of shape (K + K,) or (K² + K,)
        (W, b), W row-major.
    z : ndarray of shape (N, K)
        The logits.
    y : ndarray of shape (N,)
        The labels, integers 0..K − 1.
    diagonal : bool
        Vector scaling (W diagonal) rather than matrix scaling.
    l2 : float, default 0.0
        The penalty weight.

    Returns
    -------
    loss : float
        L.
    grad : ndarray of shape theta.shape
        ∂L/∂θ.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc.
           34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330, 2017.

    Examples
    --------
    >>> z, y = np.array([[2.0, 0.0], [0.0, 1.0]]), np.array([0, 1])
    >>> loss, grad = linear_scaling_loss(np.array([1.0, 1.0, 0.0, 0.0]), z, y, diagonal=True)
    >>> round(loss, 4)
    0.2201
    """
    n, k = z.shape
    n_w = k if diagonal else k * k
    W, b = theta[:n_w], theta[n_w:]
    s = (z * W if diagonal else z @ W.reshape(k, k).T) + b
    val, p = nll_and_softmax(s, y)
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


class _LinearLogitScaling(ClassificationCalibrator):
    """Shared L-BFGS-B fit of q = softmax(W z + b) with analytic gradient and optional L2 towards (I, 0)."""

    _diagonal = True

    def fit(self, X: np.ndarray, y: np.ndarray):
        """Minimise :func:`linear_scaling_loss` with scipy's L-BFGS-B and its exact gradient, from (W, b) = (I, 0)."""
        A, y = self._fit_input(X, y)
        z = logits_from(A, self.input_kind_, self.eps)
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
        z = logits_from(A, self.input_kind_, self.eps)
        s = z * self.coef_ if self._diagonal else z @ self.coef_.T
        return softmax(s + self.intercept_)


class VectorScaling(_LinearLogitScaling):
    """Vector scaling (Guo et al. 2017 §4.2): q = softmax(w ⊙ z + b), w, b ∈ R^K (diagonal matrix scaling).

    Fitted by L-BFGS-B on the mean NLL with its analytic gradient (float64).  ``coef_`` = w, ``intercept_`` = b
    (b is defined up to a common shift; the probabilities are not).  ``l2`` penalises ‖w − 1‖² + ‖b‖².
    netcal 1.4's ``LogisticCalibration`` on multi-class probabilities is the same model on log p.

    Parameters
    ----------
    input : {"auto", "logits", "probs"}, default "auto"
        What X holds (:mod:`calib_core.calibrators.classification`; ``"auto"`` decides once, in ``fit``).
    eps : float, default 1e-12
        Clip for log p when the input is probabilities.
    l2 : float, default 0.0
        The L2 penalty towards the uncalibrated map.
    tol : float, default 1e-9
        L-BFGS-B's gradient tolerance.
    max_iter : int, default 1000
        L-BFGS-B's iterations.

    Attributes
    ----------
    coef_ : ndarray of shape (K,)
        w.
    intercept_ : ndarray of shape (K,)
        b.
    n_iter_ : int
        L-BFGS-B iterations used.
    converged_ : bool
        Whether L-BFGS-B reported success.
    loss_ : float
        Mean NLL + L2 penalty at the solution.
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
    >>> cal = cc.VectorScaling().fit(z, y)
    >>> cal.coef_.round(3)  # every class's logits shrunk by about one half
    array([0.494, 0.412, 0.552])
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
    with hundreds of classes).

    Parameters
    ----------
    input : {"auto", "logits", "probs"}, default "auto"
        What X holds (:mod:`calib_core.calibrators.classification`; ``"auto"`` decides once, in ``fit``).
    eps : float, default 1e-12
        Clip for log p when the input is probabilities.
    l2 : float, default 0.0
        The L2 penalty towards the uncalibrated map.
    tol : float, default 1e-9
        L-BFGS-B's gradient tolerance.
    max_iter : int, default 1000
        L-BFGS-B's iterations.

    Attributes
    ----------
    coef_ : ndarray of shape (K, K)
        W (row k produces class k's logit).
    intercept_ : ndarray of shape (K,)
        b.
    n_iter_ : int
        L-BFGS-B iterations used.
    converged_ : bool
        Whether L-BFGS-B reported success.
    loss_ : float
        Mean NLL + L2 penalty at the solution.
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
    >>> cal = cc.MatrixScaling().fit(z, y)
    >>> cal.coef_.diagonal().round(3)
    array([0.676, 0.602, 0.698])
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


class PlattScaling(ClassificationCalibrator):
    """Platt scaling (Platt 1999; Guo et al. 2017 §4.1) for a binary problem: q = σ(a z + b) on the positive-class
    logit z (1-D input; for (N, 2) input z = z_1 − z_0, or log(p_1/p_0) for probabilities).

    a, b minimise the mean binary NLL, solved by Newton's method with the exact 2×2 Hessian (scipy ``trust-exact``).
    ``prior_correction=True`` uses Platt's smoothed targets t₊ = (N₊ + 1)/(N₊ + 2), t₋ = 1/(N₋ + 2) instead of
    0/1 labels (what scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` does).  Multi-class input raises
    ``ValueError``: use temperature/vector scaling, or calibrate the top-label confidence as a binary problem.

    Parameters
    ----------
    input : {"auto", "logits", "probs"}, default "auto"
        What X holds (:mod:`calib_core.calibrators.classification`; ``"auto"`` decides once, in ``fit``).
    eps : float, default 1e-12
        Clip of the probabilities when the input is probabilities.
    prior_correction : bool, default False
        Platt's smoothed targets instead of 0/1 labels.

    Attributes
    ----------
    coef_ : float
        a.
    intercept_ : float
        b.
    converged_ : bool
        Whether Newton's method reported success.
    input_kind_ : {"logits", "probs"}
        What X was read as.
    n_classes_ : int
        K.

    References
    ----------
    .. [1] J. C. Platt, "Probabilistic outputs for support vector machines and comparisons to regularized
           likelihood methods", in *Advances in Large Margin Classifiers*, A. J. Smola, P. Bartlett, B. Schölkopf
           and D. Schuurmans (eds.), MIT Press, 61–74, 1999.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc.
           34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(1)
    >>> z = 3 * rng.normal(size=200)  # the positive class's logit
    >>> y = (rng.random(200) < 1 / (1 + np.exp(-z / 2))).astype(int)  # drawn from σ(z/2)
    >>> cal = cc.PlattScaling().fit(z, y)
    >>> round(cal.coef_, 3), round(cal.intercept_, 3)
    (0.467, 0.142)
    """

    def __init__(self, *, input: InputKind = "auto", eps: float = 1e-12, prior_correction: bool = False) -> None:
        self.input = input
        self.eps = eps
        self.prior_correction = prior_correction

    def _score(self, A: np.ndarray) -> np.ndarray:
        z = logits_from(A, self.input_kind_, self.eps)
        return z[:, 1] - z[:, 0]

    def fit(self, X: np.ndarray, y: np.ndarray) -> PlattScaling:
        """Fit (a, b) on binary labels (0/1)."""
        A = as_float_array(X)
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
