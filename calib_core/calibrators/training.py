"""Quantile-regularised training of a small heteroscedastic regression model (Utpala & Rai 2020, §4).

Quantile regularization (Utpala & Rai, "Quantile Regularization", QR §4) is a *training* method, not a
post-hoc map: a model that predicts a Gaussian N(μ(x), σ(x)²) is fitted by minimising

    L(θ) = NLL(θ) − λ · H(u(θ)) + α/(2n) · Σ W²,

    NLL = (1/n) Σ_i [ ½ log(2π) + log σ_i + ½ z_i² ],   z_i = (y_i − μ_i)/σ_i,   u_i = Φ(z_i),

where H is the sample-spacing (Vasicek / Learned-Miller) entropy estimate of the PIT values (QR eq. 6)

    H(u) = 1/(n − k) Σ_{i=1}^{n−k} log( (n + 1)/k · (u_(i+k) − u_(i)) ),   k = round(√n),

and u_(1) ≤ … ≤ u_(n) are the sorted PIT values.  KL(PIT ‖ Uniform) = −H (QR claim 4), so maximising H
pushes the training PIT towards uniformity, i.e. towards quantile calibration.

The paper relaxes the sort with NeuralSort.  Here the gradient is taken *exactly* instead: the sort
permutation π is piecewise constant in θ, so wherever the PIT values are distinct H is differentiable and

    ∂H/∂u_(j) = 1/(n − k) · [ 1{j > k}/(u_(j) − u_(j−k)) − 1{j ≤ n − k}/(u_(j+k) − u_(j)) ],

which flows back to row π(j).  The chain continues through u = Φ(z) (∂u/∂z = φ(z)), z = (y − μ)e^{−s}
(s = log σ; ∂z/∂μ = −1/σ, ∂z/∂s = −z) and the network by back-propagation.  Every gradient is analytic;
the optimiser is full-batch L-BFGS (``scipy.optimize.minimize(jac=True)``).

The model is a one-hidden-layer tanh MLP with two linear heads (μ and log σ) on standardised inputs and a
standardised target (``hidden_layer_size=0`` gives the linear heteroscedastic model μ = Xa + b,
log σ = Xc + d).  ``HeteroscedasticMLP(lam=0)`` is plain Gaussian maximum-likelihood training.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize, special
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ..base.regression import Gaussian

__all__ = [
    "spacing_entropy_and_grad",
    "heteroscedastic_objective",
    "HeteroscedasticMLP",
]


_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
#: Spacings below this are treated as ties: their log is taken at the floor and they pass no gradient.
_MIN_SPACING = 1e-300


def _default_k(n: int) -> int:
    return int(min(max(1, round(np.sqrt(n))), n - 1))


def spacing_entropy_and_grad(u: np.ndarray, k: int | None = None) -> tuple[float, np.ndarray]:
    """Sample-spacing entropy H(u) of QR eq. 6 and its exact gradient ∂H/∂u.

    H(u) = 1/(n − k) Σ_{i=1}^{n−k} log((n + 1)/k · (u_(i+k) − u_(i))), k = round(√n) by default
    (Learned-Miller & Fisher 2003, eq. 8; Utpala & Rai, QR eq. 6).  The sort permutation π is locally
    constant, so with g_i = 1/((n − k)(u_(i+k) − u_(i)))

        ∂H/∂u_(j) = Σ_{i : i + k = j} g_i − Σ_{i : i = j} g_i,

    scattered back to the unsorted rows through π.  Tied values (spacing 0, e.g. PIT values that
    saturate at 0 or 1 in floating point) contribute log(1e-300) and no gradient.

    Parameters
    ----------
    u : array of shape (n,), n ≥ 2
        PIT values (any reals; the estimator only uses their order and spacings).
    k : int, optional
        Spacing; default round(√n), clipped to 1..n−1.

    Returns
    -------
    H : float
        The entropy estimate (≤ about 0 for values in [0, 1]; −H estimates KL(PIT ‖ U(0, 1))).
    grad : array of shape (n,)
        ∂H/∂u_i.

    References
    ----------
    .. [1] S. Utpala and P. Rai, "Quantile regularization: towards implicit calibration of regression models",
           arXiv:2002.12860, 2020.
    .. [2] E. G. Learned-Miller and J. W. Fisher III, "ICA using spacings estimates of entropy", Journal of
           Machine Learning Research 4, 1271–1295, 2003.
    .. [3] O. Vasicek, "A test for normality based on sample entropy", Journal of the Royal Statistical Society,
           Series B 38(1), 54–59, 1976.

    Examples
    --------
    >>> h, grad = spacing_entropy_and_grad(np.linspace(0.05, 0.95, 10))
    >>> round(h, 4)
    0.0953
    """
    u = np.asarray(u, dtype=float).ravel()
    n = u.size
    if n < 2:
        raise ValueError("the spacing entropy needs at least two values")
    k = _default_k(n) if k is None else int(k)
    if not 1 <= k <= n - 1:
        raise ValueError(f"k must be in 1..n-1 = 1..{n - 1}, got {k}")
    order = np.argsort(u, kind="stable")
    us = u[order]
    d = us[k:] - us[:-k]
    ok = d > _MIN_SPACING
    d_safe = np.where(ok, d, _MIN_SPACING)
    m = n - k
    h = float(np.mean(np.log((n + 1.0) / k * d_safe)))
    g = np.where(ok, 1.0 / (m * d_safe), 0.0)
    grad_sorted = np.zeros(n)
    grad_sorted[k:] += g
    grad_sorted[:-k] -= g
    grad = np.empty(n)
    grad[order] = grad_sorted
    return h, grad


# ----------------------------------------------------------------------------------------------
# parameter packing
# ----------------------------------------------------------------------------------------------
def _shapes(n_features: int, n_hidden: int) -> list[tuple[int, ...]]:
    if n_hidden == 0:
        return [(n_features, 2), (2,)]
    return [(n_features, n_hidden), (n_hidden,), (n_hidden, 2), (2,)]


def _unpack(theta: np.ndarray, n_features: int, n_hidden: int) -> list[np.ndarray]:
    out, start = [], 0
    for shape in _shapes(n_features, n_hidden):
        size = int(np.prod(shape))
        out.append(theta[start : start + size].reshape(shape))
        start += size
    if start != theta.size:
        raise ValueError(f"theta has {theta.size} entries, the architecture needs {start}")
    return out


def _forward(params: list[np.ndarray], X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Network output (n, 2) = [μ, log σ] and the hidden activations (None for the linear model)."""
    if len(params) == 2:
        W, b = params
        return X @ W + b, None
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    return h @ W2 + b2, h


def heteroscedastic_objective(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    n_hidden: int,
    lam: float = 0.0,
    alpha: float = 0.0,
    k: int | None = None,
) -> tuple[float, np.ndarray]:
    """Loss NLL − λ·H(PIT) + α/(2n)·ΣW² of the heteroscedastic model and its analytic gradient.

    Model (QR §4, eq. 7 with the Gaussian NLL as the architecture loss): o = net_θ(x) ∈ ℝ², μ = o₁,
    s = log σ = o₂; ``net`` is a tanh MLP with ``n_hidden`` units (or linear when ``n_hidden = 0``).

        NLL = (1/n) Σ [½ log 2π + s_i + ½ z_i²],  z_i = (y_i − μ_i) e^{−s_i},  u_i = Φ(z_i),
        ∂NLL/∂μ_i = −z_i/(n σ_i),   ∂NLL/∂s_i = (1 − z_i²)/n,
        ∂H/∂μ_i = −∂H/∂u_i · φ(z_i)/σ_i,   ∂H/∂s_i = −∂H/∂u_i · φ(z_i) z_i,

    with ∂H/∂u from :func:`spacing_entropy_and_grad` (exact through the sort), then ordinary
    back-propagation (tanh' = 1 − tanh²).  The L2 penalty covers the weight matrices, not the biases
    (as scikit-learn's ``MLPRegressor``).  No finite differences anywhere.

    Parameters
    ----------
    theta : ndarray
        Flat parameter vector (W1, b1, W2, b2) or (W, b) in C order.
    X : ndarray of shape (n, d)
        Inputs (already standardised by the caller).
    y : ndarray of shape (n,)
        Target (standardised).
    n_hidden : int
        Hidden units (0: the linear model).
    lam : float, default 0.0
        QR weight λ ≥ 0.
    alpha : float, default 0.0
        L2 weight α ≥ 0.
    k : int or None, default None
        Spacing of the entropy estimator (None: round(√n)).

    Returns
    -------
    loss : float
        The objective.
    grad : ndarray of the shape of ``theta``
        Its gradient.

    References
    ----------
    .. [1] S. Utpala and P. Rai, "Quantile regularization: towards implicit calibration of regression models",
           arXiv:2002.12860, 2020.
    .. [2] D. A. Nix and A. S. Weigend, "Estimating the mean and variance of the target probability
           distribution", Proc. IEEE International Conference on Neural Networks (ICNN'94), 55–60, 1994.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = X.shape
    params = _unpack(np.asarray(theta, dtype=float), d, n_hidden)
    out, h = _forward(params, X)
    mu, s = out[:, 0], out[:, 1]
    inv_sigma = np.exp(-s)
    z = (y - mu) * inv_sigma
    loss = float(_HALF_LOG_2PI + np.mean(s + 0.5 * z * z))
    d_mu = -z * inv_sigma / n
    d_s = (1.0 - z * z) / n
    if lam != 0.0:
        u = 0.5 * special.erfc(-z / np.sqrt(2.0))
        ent, dh_du = spacing_entropy_and_grad(u, k)
        loss -= lam * ent
        dh_dz = dh_du * np.exp(-0.5 * z * z) * _INV_SQRT_2PI
        d_mu = d_mu + lam * dh_dz * inv_sigma  # −λ · ∂H/∂z · ∂z/∂μ, ∂z/∂μ = −1/σ
        d_s = d_s + lam * dh_dz * z  # −λ · ∂H/∂z · ∂z/∂s, ∂z/∂s = −z
    d_out = np.stack([d_mu, d_s], axis=1)
    weights = params[0::2]  # W1, W2 (or W)
    if alpha != 0.0:
        loss += 0.5 * alpha / n * float(sum(np.sum(W * W) for W in weights))
    if h is None:
        W, _ = params
        grads = [X.T @ d_out, d_out.sum(axis=0)]
    else:
        W1, _, W2, _ = params
        d_h = (d_out @ W2.T) * (1.0 - h * h)
        grads = [X.T @ d_h, d_h.sum(axis=0), h.T @ d_out, d_out.sum(axis=0)]
    if alpha != 0.0:
        grads[0] = grads[0] + alpha / n * params[0]
        if h is not None:
            grads[2] = grads[2] + alpha / n * params[2]
    return loss, np.concatenate([g.ravel() for g in grads])


class HeteroscedasticMLP(RegressorMixin, BaseEstimator):
    """Gaussian heteroscedastic regressor (μ(x), log σ(x)) with optional quantile regularization.

    Minimises NLL − λ·H(PIT) + α/(2n)ΣW² (QR eq. 7 with the spacing entropy of QR eq. 6; see
    :func:`heteroscedastic_objective`) by full-batch L-BFGS with analytic gradients.  Inputs are
    standardised with the training mean/std (constant columns are left centred), the target with its
    training mean/std; predictions are mapped back to the original units.  ``fit`` runs with one BLAS
    thread (threadpoolctl): the matrix products are thin and threading only adds overhead.

    Parameters
    ----------
    hidden_layer_size : int, default 50
        Units of the single tanh hidden layer; 0 gives the linear heteroscedastic model.
    lam : float, default 0.0
        QR weight λ ≥ 0 (0 = plain Gaussian maximum likelihood).
    alpha : float, default 1.0
        L2 penalty on the weight matrices, scaled as α/(2n)·ΣW² (scikit-learn's ``MLPRegressor``).
    k : int or None, default None
        Spacing of the entropy estimator; None = round(√n) on the training rows.
    max_iter : int, default 300
        L-BFGS iterations on the full objective (the model is small; this doubles as early stopping).
    warmup_iter : int, default 100
        L-BFGS iterations on the mean alone before the full objective: the log σ head is held at
        0 (σ ≡ 1 in standardised units, so the loss is ½·MSE + const) and λ = 0.  Without it the
        NLL can explain large early errors with large σ instead of fitting μ (slow mean learning of
        heteroscedastic NLL training); 0 disables it.
    tol : float, default 1e-7
        L-BFGS ``gtol``/``ftol``.
    random_state : int or None, default 0
        Seed of the Glorot-uniform initialisation.

    Attributes
    ----------
    coefs_ : list of ndarray
        Fitted parameters [W1, b1, W2, b2] (or [W, b]) in standardised units.
    x_mean_, x_scale_, y_mean_, y_scale_ : standardisation constants.
    n_features_in_ : int
    loss_ : float
        Final training objective (standardised units).
    train_entropy_ : float
        Spacing entropy of the training PIT at the optimum.
    n_iter_ : int
        L-BFGS iterations used (warm-up + main).
    converged_ : bool
        scipy's success flag.

    References
    ----------
    .. [1] S. Utpala and P. Rai, "Quantile regularization: towards implicit calibration of regression models",
           arXiv:2002.12860, 2020.
    .. [2] D. A. Nix and A. S. Weigend, "Estimating the mean and variance of the target probability
           distribution", Proc. IEEE International Conference on Neural Networks (ICNN'94), 55–60, 1994.
    """

    def __init__(
        self,
        *,
        hidden_layer_size: int = 50,
        lam: float = 0.0,
        alpha: float = 1.0,
        k: int | None = None,
        max_iter: int = 300,
        warmup_iter: int = 100,
        tol: float = 1e-7,
        random_state: int | None = 0,
    ) -> None:
        self.hidden_layer_size = hidden_layer_size
        self.lam = lam
        self.alpha = alpha
        self.k = k
        self.max_iter = max_iter
        self.warmup_iter = warmup_iter
        self.tol = tol
        self.random_state = random_state

    # -- helpers -----------------------------------------------------------------------------
    def _init_theta(self, n_features: int, rng: np.random.Generator) -> np.ndarray:
        """Glorot-uniform weights (bound √(6/(fan_in + fan_out))), zero biases."""
        parts = []
        for shape in _shapes(n_features, int(self.hidden_layer_size)):
            if len(shape) == 2:
                bound = np.sqrt(6.0 / (shape[0] + shape[1]))
                parts.append(rng.uniform(-bound, bound, size=shape).ravel())
            else:
                parts.append(np.zeros(shape))
        return np.concatenate(parts)

    def _standardise(self, X: Any) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[:, None]
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the model was fitted with {self.n_features_in_}")
        return (X - self.x_mean_) / self.x_scale_

    # -- scikit-learn API ----------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> HeteroscedasticMLP:
        """Fit μ(x) and log σ(x) by L-BFGS on NLL − λ·H(PIT) + α/(2n)ΣW² (analytic gradient)."""
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[:, None]
        y = np.asarray(y, dtype=float).ravel()
        if X.shape[0] != y.size:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.size}")
        if y.size < 3:
            raise ValueError("need at least 3 training rows")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise ValueError("X and y must be finite")
        if self.lam < 0 or self.alpha < 0 or self.hidden_layer_size < 0:
            raise ValueError("lam, alpha and hidden_layer_size must be ≥ 0")
        self.n_features_in_ = X.shape[1]
        self.x_mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        self.x_scale_ = np.where(scale > 0, scale, 1.0)
        self.y_mean_ = float(y.mean())
        self.y_scale_ = float(y.std()) if y.std() > 0 else 1.0
        Xs = (X - self.x_mean_) / self.x_scale_
        ys = (y - self.y_mean_) / self.y_scale_
        rng = np.random.default_rng(self.random_state)
        n_hidden = int(self.hidden_layer_size)
        theta = self._init_theta(self.n_features_in_, rng)
        opts = {"gtol": self.tol, "ftol": self.tol, "maxcor": 20}
        self.n_iter_ = 0
        # One BLAS thread: the products are thin (n×d by d×H); multi-threaded BLAS was measured 3–10×
        # slower per objective evaluation on a busy 2-core machine.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"), threadpool_limits(1, user_api="blas"):
            if self.warmup_iter > 0:
                # Stage 1: mean only.  The log σ head (last output column and bias) is frozen at 0;
                # its gradient entries are zeroed, so L-BFGS never moves them.
                frozen = np.zeros(theta.size, dtype=bool)
                parts = _unpack(np.arange(theta.size, dtype=float), self.n_features_in_, n_hidden)
                frozen[parts[-2][:, 1].astype(int)] = True
                frozen[parts[-1][1].astype(int)] = True
                theta[frozen] = 0.0

                def warm(t: np.ndarray) -> tuple[float, np.ndarray]:
                    f, g = heteroscedastic_objective(t, Xs, ys, n_hidden, 0.0, float(self.alpha))
                    g[frozen] = 0.0
                    return f, g

                res = optimize.minimize(
                    warm, theta, jac=True, method="L-BFGS-B", options={**opts, "maxiter": int(self.warmup_iter)}
                )
                theta = res.x
                self.n_iter_ += int(res.nit)
            args = (Xs, ys, n_hidden, float(self.lam), float(self.alpha), self.k)
            res = optimize.minimize(
                heteroscedastic_objective,
                theta,
                args=args,
                jac=True,
                method="L-BFGS-B",
                options={**opts, "maxiter": int(self.max_iter)},
            )
        self.coefs_ = [p.copy() for p in _unpack(res.x, self.n_features_in_, int(self.hidden_layer_size))]
        self.loss_ = float(res.fun)
        self.n_iter_ += int(res.nit)
        self.converged_ = bool(res.success)
        out, _ = _forward(self.coefs_, Xs)
        z = (ys - out[:, 0]) * np.exp(-out[:, 1])
        self.train_entropy_ = spacing_entropy_and_grad(0.5 * special.erfc(-z / np.sqrt(2.0)), self.k)[0]
        return self

    def predict_params(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """(μ(x), σ(x)) in the target's original units."""
        check_is_fitted(self, "coefs_")
        out, _ = _forward(self.coefs_, self._standardise(X))
        mu = self.y_mean_ + self.y_scale_ * out[:, 0]
        sigma = self.y_scale_ * np.exp(np.clip(out[:, 1], -700.0, 700.0))
        return mu, sigma

    def predict(self, X: Any) -> np.ndarray:
        """Predictive mean μ(x)."""
        return self.predict_params(X)[0]

    def predict_dist(self, X: Any) -> Gaussian:
        """Predictive distribution N(μ(x), σ(x)²) as a :class:`calib_core.Gaussian`."""
        mu, sigma = self.predict_params(X)
        return Gaussian(mu, sigma)
