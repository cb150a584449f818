"""ACCRUE (Camporeale & Carè 2021): σ(x) from point predictions and features, minimising β·mean CRPS + (1 − β)·RS.

The calibrator :class:`ACCRUE` and its pieces: the minima :func:`crps_min` and :func:`rs_min` that weigh the two
terms (:func:`accrue_beta`, eq. 12), the cost with its exact gradient in σ (:func:`accrue_objective`, eqs. 3–11),
and the costs of the two σ(x) models in their parameters (:func:`polynomial_sigma_cost`, :func:`mlp_sigma_cost`).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from scipy import optimize, special
from threadpoolctl import threadpool_limits

from ..base.regression import Gaussian, gaussian_crps, norm_pdf
from .regression_base import RegressionCalibrator, as_distribution, check_features, check_targets

__all__ = [
    "ACCRUE",
    "CRPS_MIN_FACTOR",
    "accrue_objective",
    "polynomial_sigma_cost",
    "mlp_sigma_cost",
    "crps_min",
    "rs_min",
    "accrue_beta",
]

SQRT2 = np.sqrt(2.0)
SQRT_PI = np.sqrt(np.pi)


#: erf(√(ln 2 / 2)): CRPS_min = this · mean|ε| (ACCRUE's √ln4/2 ≈ 0.5887 is its first-order value).
CRPS_MIN_FACTOR = float(special.erf(np.sqrt(np.log(2.0) / 2.0)))


def crps_min(eps: np.ndarray) -> float:
    """Minimum over σ of the mean Gaussian CRPS for fixed errors (ACCRUE §4).

    Per row, dCRPS/dσ = √(2/π) exp(−ε²/2σ²) − 1/√π = 0 at σ² = ε²/ln 2 (eq. 4), where
    CRPS = |ε|·erf(√(ln 2/2)); hence CRPS_min = erf(√(ln 2/2))·mean|ε|.

    Parameters
    ----------
    eps : array_like of shape (n,)
        The errors ε = y − μ.

    Returns
    -------
    float
        CRPS_min.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.
    .. [2] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation", Journal
           of the American Statistical Association 102(477), 359–378, 2007.

    Examples
    --------
    >>> round(crps_min(np.array([-1.0, 0.5, 2.0])), 4)
    0.6941
    """
    return CRPS_MIN_FACTOR * float(np.mean(np.abs(np.asarray(eps, dtype=float))))


def rs_min(n: int, constant: bool = True) -> float:
    """Minimum of the reliability score for n rows (ACCRUE eq. 13).

    RS_min = 1/(√π n) Σ_{i=1}^{n} exp(−[erf⁻¹((2i − 1)/n − 1)]²) − ½√(2/π), attained when
    erf(η_(i)) = (2i − 1)/n − 1 (eq. 10).  It tends to 0 as n → ∞.  ``constant=False`` drops the
    −½√(2/π) term, as the paper's own implementation does ("RS_min ≃ 0.4").

    Parameters
    ----------
    n : int
        Number of rows.
    constant : bool, default True
        Keep the −½√(2/π) term of eq. 13.

    Returns
    -------
    float
        RS_min.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.

    Examples
    --------
    >>> round(rs_min(3), 4), round(rs_min(3, constant=False), 4)
    (0.0247, 0.4236)
    """
    i = np.arange(1, int(n) + 1, dtype=float)
    eta = special.erfinv((2.0 * i - 1.0) / n - 1.0)
    val = float(np.sum(np.exp(-eta * eta)) / (SQRT_PI * n))
    return val - 0.5 * np.sqrt(2.0 / np.pi) if constant else val


def accrue_beta(eps: np.ndarray, constant: bool = True) -> float:
    """β = RS_min/(CRPS_min + RS_min) (ACCRUE eq. 12): the weight of the CRPS in the ACCRUE cost.

    Parameters
    ----------
    eps : array_like of shape (n,)
        The errors ε = y − μ.
    constant : bool, default True
        Keep the constant term of RS_min (:func:`rs_min`).

    Returns
    -------
    float
        β in (0, 1).

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.

    Examples
    --------
    >>> round(accrue_beta(np.array([-1.0, 0.5, 2.0]), constant=False), 4)
    0.379
    """
    r = rs_min(np.asarray(eps).size, constant)
    return r / (crps_min(eps) + r)


def accrue_objective(eps: np.ndarray, sigma: np.ndarray, beta: float) -> tuple[float, np.ndarray, float, float]:
    """ACCRUE cost β·mean CRPS + (1 − β)·RS (eq. 11) and its exact gradient with respect to σ.

    CRPS_i = σ_i[z_i erf(z_i/√2) + √(2/π) exp(−z_i²/2) − 1/√π] (eq. 3), dCRPS_i/dσ_i =
    √(2/π) exp(−z_i²/2) − 1/√π (eq. 4).  RS (eq. 8) with η_i = ε_i/(√2σ_i) sorted ascending:
    dRS/dη_(i) = (erf η_(i) + 1)/N − (2i − 1)/N² (the exp terms cancel), and dη_i/dσ_i = −η_i/σ_i
    (eq. 9).  The sort permutation is piecewise constant in σ, so this is the exact gradient
    wherever the η are distinct (RS is continuous across ties).

    Parameters
    ----------
    eps : array_like of shape (n,)
        The errors ε = y − μ.
    sigma : array_like of shape (n,)
        The standard deviations σ > 0.
    beta : float
        The weight β of the CRPS.

    Returns
    -------
    cost : float
        β·mean CRPS + (1 − β)·RS.
    grad : ndarray of shape (n,)
        dcost/dσ.
    crps : float
        The mean CRPS.
    rs : float
        The reliability score.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.
    .. [2] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation", Journal
           of the American Statistical Association 102(477), 359–378, 2007.

    Examples
    --------
    >>> cost, grad, crps, rs = accrue_objective(np.array([-1.0, 0.5, 2.0]), np.ones(3), 0.5)
    >>> round(cost, 4), round(crps, 4), round(rs, 4)
    (0.4433, 0.7955, 0.0911)
    """
    eps = np.asarray(eps, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    n = eps.size
    z = eps / sigma
    crps_i = gaussian_crps(eps, 0.0, sigma)
    d_crps = (2.0 * norm_pdf(z) - 1.0 / SQRT_PI) / n
    eta = z / SQRT2
    order = np.argsort(eta, kind="stable")
    eta_s = eta[order]
    i = np.arange(1, n + 1, dtype=float)
    erf_s = special.erf(eta_s)
    rs = float(
        np.sum(eta_s / n * (erf_s + 1.0) - eta_s * (2.0 * i - 1.0) / n**2 + np.exp(-eta_s * eta_s) / (SQRT_PI * n))
        - 0.5 * np.sqrt(2.0 / np.pi)
    )
    d_eta = np.empty(n)
    d_eta[order] = (erf_s + 1.0) / n - (2.0 * i - 1.0) / n**2
    d_rs = d_eta * (-eta / sigma)
    crps_mean = float(np.mean(crps_i))
    cost = beta * crps_mean + (1.0 - beta) * rs
    return cost, beta * d_crps + (1.0 - beta) * d_rs, crps_mean, rs


def polynomial_sigma_cost(
    theta: np.ndarray, t: np.ndarray, eps: np.ndarray, beta: float, floor: float = 0.0
) -> tuple[float, np.ndarray]:
    """ACCRUE cost of σ_i = max(|p(t_i)|, floor), p = Σ_l θ_l T_l (Chebyshev), and its gradient in θ.

    dcost/dθ = Vᵀ(sign(p)·dcost/dσ) with V_il = T_l(t_i) (zero where the floor is active).

    Parameters
    ----------
    theta : ndarray of shape (degree + 1,)
        Chebyshev coefficients θ.
    t : ndarray of shape (n,)
        The feature mapped onto [−1, 1].
    eps : ndarray of shape (n,)
        The errors ε.
    beta : float
        The weight β of the CRPS.
    floor : float, default 0.0
        The smallest σ.

    Returns
    -------
    cost : float
        The ACCRUE cost (:func:`accrue_objective`).
    grad : ndarray of shape (degree + 1,)
        dcost/dθ.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.
    """
    V = np.polynomial.chebyshev.chebvander(t, theta.size - 1)
    p = V @ theta
    sig = np.maximum(np.abs(p), floor)
    c, g, _, _ = accrue_objective(eps, sig, beta)
    sgn = np.where(np.abs(p) > floor, np.sign(p), 0.0)
    return c, V.T @ (g * sgn)


def _unpack_mlp(w: np.ndarray, d: int, h: int) -> dict[str, np.ndarray]:
    return {
        "W": w[: h * d].reshape(h, d),
        "c": w[h * d : h * d + h],
        "v": w[h * d + h : h * d + 2 * h],
        "b": np.asarray(w[h * d + 2 * h]),
    }


def _mlp_forward(P: dict[str, np.ndarray], Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A = np.tanh(Xs @ P["W"].T + P["c"])
    return A @ P["v"] + P["b"], A


def mlp_sigma_cost(
    w: np.ndarray,
    Xs: np.ndarray,
    eps: np.ndarray,
    beta: float,
    n_hidden: int,
    alpha: float = 0.0,
    norm: float = 1.0,
) -> tuple[float, np.ndarray]:
    """ACCRUE cost/norm + ½α(‖W‖² + ‖v‖²) of log σ = vᵀtanh(W x + c) + b and its gradient in w.

    w packs (W (h×d) row-major, c (h), v (h), b).  Backpropagation: with g_i = σ_i·dcost/dσ_i/norm
    (the gradient in log σ_i) and A = tanh(Wx + c): ∂/∂v = Aᵀg + αv, ∂/∂b = Σg,
    ∂/∂W = [(g vᵀ) ⊙ (1 − A²)]ᵀ X + αW, ∂/∂c = column sums of (g vᵀ) ⊙ (1 − A²).

    Parameters
    ----------
    w : ndarray of shape (h·d + 2h + 1,)
        The packed weights.
    Xs : ndarray of shape (n, d)
        The standardised features.
    eps : ndarray of shape (n,)
        The errors ε.
    beta : float
        The weight β of the CRPS.
    n_hidden : int
        h, the hidden units.
    alpha : float, default 0.0
        The L2 penalty.
    norm : float, default 1.0
        The cost is divided by it (its value at a constant σ keeps the scale near 1).

    Returns
    -------
    cost : float
        cost/norm + ½α(‖W‖² + ‖v‖²).
    grad : ndarray of shape w.shape
        Its gradient in w.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.
    """
    d = Xs.shape[1]
    P = _unpack_mlp(w, d, n_hidden)
    logsig, A = _mlp_forward(P, Xs)
    sig = np.exp(logsig)
    c, g, _, _ = accrue_objective(eps, sig, beta)
    gl = g * sig / norm
    dZ = np.outer(gl, P["v"]) * (1.0 - A * A)
    grad = np.concatenate(
        [
            (dZ.T @ Xs + alpha * P["W"]).ravel(),
            dZ.sum(axis=0),
            A.T @ gl + alpha * P["v"],
            [gl.sum()],
        ]
    )
    pen = 0.5 * alpha * (np.sum(P["W"] ** 2) + np.sum(P["v"] ** 2))
    return c / norm + pen, grad


class ACCRUE(RegressionCalibrator):
    """ACCRUE (Camporeale & Carè): σ(x) minimising β·mean CRPS + (1 − β)·RS for fixed errors ε.

    β = RS_min/(CRPS_min + RS_min) (eq. 12) with CRPS_min = erf(√(ln 2/2))·mean|ε| (exact; the
    paper's √ln4/2 is its first-order value) and RS_min from eq. 13 (:func:`rs_min`):

    * ``rs_min="practical"`` (default): eq. 13 without its constant −½√(2/π), exactly as the
      paper's own implementation ("we neglect the last constant term … RS_min ≃ 0.4"), so β ≈ ½
      and accuracy and reliability are weighed comparably;
    * ``rs_min="eq13"``: eq. 13 as printed.  Then RS_min = O(1/N²) (1.1e-7 at N = 2000), β ≈ 3e-7
      and the cost is the reliability score alone in practice (slower, and less accurate on the
      toy sets: see the tests and the README).

    Works from point predictions plus features: only ε = y − dist.mean() and the ``features`` are used;
    ``transform`` returns ``Gaussian(μ, σ(x))``.

    Models of σ(x), fitted with L-BFGS on the analytic gradient of :func:`accrue_objective`
    (no finite differences):

    * ``model="polynomial"`` (Algorithm 1): σ(x) = |p(t)|, p a polynomial of degree ≤ ``max_degree``
      in one feature column (``feature``), t the feature mapped affinely onto [−1, 1] over the
      calibration range and p written in the Chebyshev basis (the same polynomial space as
      Σ θ_l x^l, better conditioned).  Start from the constant std(ε) (degree 0), then raise the
      degree p = 1, 2, … from the previous solution padded with a zero coefficient until the
      relative change of the cost is ≤ ``tol`` or the higher degree does not lower the cost (the
      previous solution is then kept).  Beyond the calibration range the feature is clipped.
    * ``model="mlp"``: log σ(x) = vᵀ tanh(W x̃ + c) + b, one hidden layer of ``n_hidden`` units on
      all standardised feature columns x̃ (backpropagated analytic gradient), with an L2 penalty
      ``alpha``·(‖W‖² + ‖v‖²)/2 on the cost normalised by its value at σ ≡ std(ε);
      ``n_restarts`` random initialisations, the one with the lowest cost is kept (the paper keeps
      the best of five networks).

    Parameters
    ----------
    model : {"polynomial", "mlp"}, default "polynomial"
        The σ(x) model.
    feature : int or str, default 0
        The feature column of the polynomial (position, or name when the features have columns).
    max_degree : int, default 10
        Highest degree of the polynomial.
    tol : float, default 1e-4
        Relative change of the cost that stops raising the degree.
    rs_min : {"practical", "eq13"}, default "practical"
        RS_min without or with eq. 13's constant term.
    n_hidden : int, default 16
        Hidden units of the network.
    alpha : float, default 1e-3
        L2 penalty of the network.
    n_restarts : int, default 3
        Random initialisations of the network.
    max_iter : int, default 500
        L-BFGS iterations per fit.
    random_state : int, default 0
        Seed of the network's initialisations.

    Attributes
    ----------
    beta_, crps_min_, rs_min_ : float
        β and the two minima it is made of.
    cost_, crps_, rs_ : float
        The cost, mean CRPS and RS at the solution, on the calibration rows.
    coef_ : ndarray
        Polynomial: the Chebyshev coefficients in t.
    degree_ : int
        Polynomial: the degree kept.
    history_ : list of (int, float)
        Polynomial: (degree, cost) of every accepted degree.
    x_range_ : tuple of float
        Polynomial: the calibration range of the feature.
    params_ : dict of ndarray
        Network: W, c, v, b.
    center_, scale_ : ndarray
        Network: the standardiser of the features.
    n_iter_ : int
        Network: L-BFGS iterations of the kept fit.
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.
    .. [2] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation", Journal
           of the American Statistical Association 102(477), 359–378, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(size=200)
    >>> y = x + (0.2 + x) * rng.standard_normal(200)  # point prediction x; the spread grows with x
    >>> cal = cc.ACCRUE().fit(x, y, features=x[:, None])
    >>> cal.degree_, cal.predict_sigma(np.array([[0.1], [0.9]])).round(3)
    (2, array([0.261, 1.184]))
    """

    uses_features = True

    def __init__(
        self,
        *,
        model: Literal["polynomial", "mlp"] = "polynomial",
        feature: int | str = 0,
        max_degree: int = 10,
        tol: float = 1e-4,
        rs_min: Literal["eq13", "practical"] = "practical",
        n_hidden: int = 16,
        alpha: float = 1e-3,
        n_restarts: int = 3,
        max_iter: int = 500,
        random_state: int = 0,
    ):
        self.model = model
        self.feature = feature
        self.max_degree = max_degree
        self.tol = tol
        self.rs_min = rs_min
        self.n_hidden = n_hidden
        self.alpha = alpha
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.random_state = random_state

    # -- feature handling --------------------------------------------------------------------
    def _column(self, features: Any) -> np.ndarray:
        if isinstance(self.feature, str):
            if not hasattr(features, "columns"):
                raise ValueError(f"feature={self.feature!r} is a column name but the features have no columns")
            return np.asarray(features[self.feature], dtype=float)
        arr = check_features(features, required=True, who="ACCRUE")
        return arr[:, int(self.feature)]

    def _t(self, x: np.ndarray) -> np.ndarray:
        lo, hi = self.x_range_
        span = hi - lo if hi > lo else 1.0
        return 2.0 * (np.clip(x, lo, hi) - lo) / span - 1.0

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, dist, y, *, features=None) -> ACCRUE:
        """Minimise β·mean CRPS + (1 − β)·RS over the σ(x) model (ACCRUE eqs. 11–13; see the class docstring)."""
        if self.rs_min not in ("eq13", "practical"):
            raise ValueError(f"rs_min must be 'eq13' or 'practical', got {self.rs_min!r}")
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        if features is None:
            raise ValueError("ACCRUE needs the feature matrix (features=..., the x* columns)")
        eps = y - np.asarray(d.mean(), dtype=float)
        n = eps.size
        self.crps_min_ = crps_min(eps)
        self.rs_min_ = rs_min(n, constant=self.rs_min == "eq13")
        self.beta_ = self.rs_min_ / (self.crps_min_ + self.rs_min_)
        s0 = float(np.std(eps))
        if not s0 > 0:
            s0 = float(np.sqrt(np.mean(eps * eps))) or 1.0
        if self.model not in ("polynomial", "mlp"):
            raise ValueError(f"model must be 'polynomial' or 'mlp', got {self.model!r}")
        # L-BFGS-B's small dense updates are much slower with a multi-threaded BLAS (contention)
        with threadpool_limits(limits=1, user_api="blas"):
            if self.model == "polynomial":
                self._fit_polynomial(eps, self._column(features), s0)
            else:
                self._fit_mlp(eps, check_features(features, n, required=True, who="ACCRUE"), s0)
        sig = self._sigma_train
        self.cost_, _, self.crps_, self.rs_ = accrue_objective(eps, sig, self.beta_)
        del self._sigma_train
        self.n_calibration_ = int(n)
        return self

    def _fit_polynomial(self, eps: np.ndarray, x: np.ndarray, s0: float) -> None:
        self.x_range_ = (float(np.min(x)), float(np.max(x)))
        t = self._t(x)
        beta = self.beta_
        floor = 1e-9 * s0

        def cost_of(theta: np.ndarray) -> tuple[float, np.ndarray]:
            """Cost and analytic gradient in θ (:func:`polynomial_sigma_cost`)."""
            return polynomial_sigma_cost(theta, t, eps, beta, floor)

        theta = np.array([s0])
        cost_old = cost_of(theta)[0]
        history = [(0, cost_old)]
        for p in range(1, int(self.max_degree) + 1):
            init = np.append(theta, 0.0)
            scale = abs(cost_old) if cost_old != 0 else 1.0
            res = optimize.minimize(
                lambda th, sc=scale: tuple(v / sc for v in cost_of(th)),
                init,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": int(self.max_iter), "ftol": 1e-13, "gtol": 1e-9},
            )
            cost_new = float(res.fun) * scale
            if not cost_new < cost_old:  # the previous solution is a local minimum for this degree
                break
            theta = res.x
            history.append((p, cost_new))
            err = abs(cost_old - cost_new)
            cost_old = cost_new
            if err <= self.tol * abs(cost_new):
                break
        self.coef_ = theta
        self.degree_ = int(theta.size - 1)
        self.history_ = history
        self._sigma_train = np.maximum(np.abs(np.polynomial.chebyshev.chebvander(t, theta.size - 1) @ theta), floor)

    # one-hidden-layer network for log σ -----------------------------------------------------
    def _fit_mlp(self, eps: np.ndarray, X: np.ndarray, s0: float) -> None:
        self.center_ = X.mean(axis=0)
        sd = X.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        Xs = (X - self.center_) / self.scale_
        n, d = Xs.shape
        h = int(self.n_hidden)
        beta = self.beta_
        norm = accrue_objective(eps, np.full(n, s0), beta)[0]
        norm = abs(norm) if norm != 0 else 1.0

        def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
            """Normalised, penalised cost and its backpropagated gradient (:func:`mlp_sigma_cost`)."""
            return mlp_sigma_cost(w, Xs, eps, beta, h, float(self.alpha), norm)

        rng = np.random.default_rng(self.random_state)
        best = None
        for _ in range(max(1, int(self.n_restarts))):
            w0 = np.concatenate(
                [
                    rng.normal(0.0, 1.0 / np.sqrt(d), size=h * d),
                    rng.normal(0.0, 0.5, size=h),
                    rng.normal(0.0, 0.01, size=h),
                    [np.log(s0)],
                ]
            )
            res = optimize.minimize(fun, w0, jac=True, method="L-BFGS-B", options={"maxiter": int(self.max_iter)})
            if best is None or res.fun < best.fun:
                best = res
        self.params_ = _unpack_mlp(best.x, d, h)
        self.n_iter_ = int(best.nit)
        self._sigma_train = np.exp(_mlp_forward(self.params_, Xs)[0])

    # -- prediction --------------------------------------------------------------------------
    def predict_sigma(self, features: Any) -> np.ndarray:
        """σ(x) for the rows of ``features`` (ACCRUE, Camporeale & Carè): |p(t)| with p the fitted Chebyshev
        polynomial (``model="polynomial"``) or exp(vᵀtanh(W x̃ + c) + b) (``model="mlp"``)."""
        self._check_fitted("beta_")
        if self.model == "polynomial":
            t = self._t(self._column(features))
            floor = 1e-9 * abs(float(self.coef_[0])) if self.coef_[0] != 0 else 1e-300
            return np.maximum(np.abs(np.polynomial.chebyshev.chebvander(t, self.coef_.size - 1) @ self.coef_), floor)
        Xa = check_features(features, required=True, who="ACCRUE")
        Xs = (Xa - self.center_) / self.scale_
        return np.exp(_mlp_forward(self.params_, Xs)[0])

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ, σ(x)) with σ(x) from :meth:`predict_sigma` (Camporeale & Carè, ACCRUE)."""
        self._check_fitted("beta_")
        d = as_distribution(dist)
        if features is None:
            raise ValueError("ACCRUE needs the feature matrix (features=..., the x* columns)")
        return Gaussian(np.asarray(d.mean(), dtype=float), self.predict_sigma(features))
