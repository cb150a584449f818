"""Lab 7 — ACCRUE on toy data: true versus estimated σ(x) (Camporeale & Carè, §5.1, Figs. 4–7 and Table 1).

Data: the toy sets G, Y, W (1-D) and 5D of :mod:`calib_core.data.toy`, y ~ N(f(x), σ(x)²), with the exact
mean f(x) as the point prediction (the paper does the same for 5D), so only σ(x) is estimated from the errors
ε = y − f(x).  Four estimates of σ(x), fitted on the same rows:

* **ACCRUE** — σ(x) minimising β·mean CRPS + (1 − β)·RS, β from eq. 12 (:class:`~calib_core.regression.
  calibrators.ACCRUE`; polynomial Algorithm 1 on the 1-D sets, the one-hidden-layer network on 5D);
* **CRPS only** — the same model and optimiser with β = 1 (:class:`CRPSOnlySigma`), the paper's "CRPS" column;
* **k-means σ** — the RMS error of each of k clusters of x (:class:`~calib_core.calibrators.regression.
  KMeansSigma`), the paper's "KM" baseline;
* **constant σ** — one σ for every x (:class:`~calib_core.calibrators.regression.ConstantSigma`), for scale.

They are compared on fresh test rows: the median relative σ error median |σ̂(x) − σ(x)|/σ(x) (the lab's headline
number), the mean CRPS, the reliability score RS (ACCRUE eq. 8) and the largest deviation of the PIT's ECDF from
the diagonal (the paper's "Cal. err.").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ..base.regression import Gaussian
from ..calibrators import regression as rcal
from ..data.toy import TOY_SETS, make_toy, toy_domain, toy_sigma
from ..metrics import regression as rm
from ..plots import labs_other
from .regression import ks_sentence

__all__ = ["TOY_SETS", "CRPSOnlySigma", "AccrueLabResult", "accrue_findings", "run_accrue"]

METHODS = ("ACCRUE", "CRPS only", "k-means σ", "constant σ")


class CRPSOnlySigma(rcal.ACCRUE):
    """σ(x) minimising the mean CRPS alone: ACCRUE's models and optimiser with the weight β = 1.

    β·mean CRPS + (1 − β)·RS with β = 1 (Camporeale & Carè, Table 1 "CRPS": "the variance is estimated by minimizing
    CRPS only").  The CRPS is a proper score, so with enough data it too recovers σ(x); ACCRUE's reliability term
    matters where the fit is data- or model-limited.

    Parameters
    ----------
    model, feature, max_degree, tol, rs_min, n_hidden, alpha, n_restarts, max_iter, random_state
        As :class:`~calib_core.calibrators.regression.ACCRUE`.

    Attributes
    ----------
    beta_ : float
        1.  The other fitted attributes as :class:`~calib_core.calibrators.regression.ACCRUE`.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    .. [2] Gneiting, T., & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       Journal of the American Statistical Association, 102(477), 359–378.
    """

    def _fit_polynomial(self, eps: np.ndarray, x: np.ndarray, s0: float) -> None:
        self.beta_ = 1.0
        super()._fit_polynomial(eps, x, s0)

    def _fit_mlp(self, eps: np.ndarray, X: np.ndarray, s0: float) -> None:
        self.beta_ = 1.0
        super()._fit_mlp(eps, X, s0)


@dataclass(frozen=True)
class AccrueLabResult:
    """Outcome of :func:`run_accrue`.

    Attributes
    ----------
    toy : str
        The toy set (G, Y, W or 5D).
    n : int
        Training rows.
    metrics : DataFrame
        One row per method — ``median_rel_sigma_error``, ``crps``, ``reliability_score``, ``calibration_error``
        (max |ECDF(PIT) − p|) on the test rows.
    curves : DataFrame
        For 1-D sets x on a grid with ``true`` and one column per method; for 5D, test points with ``true`` and the
        methods.
    errors : DataFrame
        The relative σ errors (σ̂ − σ)/σ per test row and method (for the error histogram).
    beta : float
        ACCRUE's weight β (eq. 12).
    degree : int or None
        Where Algorithm 1 stopped for ACCRUE (None for the network on 5D).
    options : dict
        The run's options (seed, n_clusters, model, n_test).
    crps_degree : int or None
        Where Algorithm 1 stopped for CRPS only.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    """

    toy: str
    n: int
    metrics: pd.DataFrame
    curves: pd.DataFrame
    errors: pd.DataFrame
    beta: float
    degree: int | None
    options: dict = field(default_factory=dict)
    crps_degree: int | None = None

    @property
    def one_dimensional(self) -> bool:
        """True for G, Y and W."""
        return self.toy != "5D"

    def median_errors(self) -> dict[str, float]:
        """Median relative σ error per method."""
        return dict(zip(self.metrics["method"], self.metrics["median_rel_sigma_error"].astype(float)))

    def figures(self) -> dict:
        """σ(x) figure (``calib_core.plots.labs_other.sigma_recovery_figure``) and the relative-error histogram."""
        return {
            "sigma": labs_other.sigma_recovery_figure(self.curves, list(METHODS), one_dimensional=self.one_dimensional),
            "errors": labs_other.error_histogram_figure(self.errors, list(METHODS)),
        }


def run_accrue(
    toy: str = "Y",
    n: int = 2000,
    *,
    seed: int = 0,
    n_clusters: int = 5,
    n_test: int = 5000,
    model: Literal["auto", "polynomial", "mlp"] = "auto",
    n_grid: int = 200,
) -> AccrueLabResult:
    """Fit ACCRUE, CRPS-only, k-means and constant σ on a toy set and compare them on fresh rows (ACCRUE §5.1).

    Parameters
    ----------
    toy : {"G", "Y", "W", "5D"}, default "Y"
        The toy set (:mod:`calib_core.data.toy`).
    n : int, default 2000
        Training rows.
    seed : int, default 0
        Seed of the data and the fits.
    n_clusters : int, default 5
        k of the k-means σ.
    n_test : int, default 5000
        Fresh test rows.
    model : {"auto", "polynomial", "mlp"}, default "auto"
        ``"auto"``: polynomial (Algorithm 1) on 1-D sets, network on 5D.
    n_grid : int, default 200
        Grid points of the σ(x) curves (1-D sets).

    Returns
    -------
    AccrueLabResult
        Metrics, curves and errors of the four methods.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    """
    key = toy.upper()
    if key not in TOY_SETS:
        raise ValueError(f"toy must be one of {TOY_SETS}")
    if n < 20:
        raise ValueError("need at least 20 rows")
    kind = ("mlp" if key == "5D" else "polynomial") if model == "auto" else model
    mlp_options = {"n_restarts": 1} if kind == "mlp" else {}
    train = make_toy(key, n, np.random.default_rng([seed, 0]))
    test = make_toy(key, n_test, np.random.default_rng([seed, 1]))
    estimators = {
        "ACCRUE": rcal.ACCRUE(model=kind, **mlp_options),
        "CRPS only": CRPSOnlySigma(model=kind, **mlp_options),
        "k-means σ": rcal.KMeansSigma(n_clusters=int(n_clusters)),
        "constant σ": rcal.ConstantSigma(),
    }
    sigma_test: dict[str, np.ndarray] = {}
    for name, est in estimators.items():
        est.fit(train.f, train.y, features=train.x)
        sigma_test[name] = est.transform(test.f, features=test.x).std()
    rows, errors = [], {}
    for name in METHODS:
        s = sigma_test[name]
        dist = Gaussian(test.f, s)
        rel = (s - test.sigma) / test.sigma
        errors[name] = rel
        rows.append(
            {
                "method": name,
                "median_rel_sigma_error": float(np.median(np.abs(rel))),
                "crps": rm.crps(test.y, dist),
                "reliability_score": rm.reliability_score(test.y, dist),
                "calibration_error": rm.max_calibration_deviation(test.y, dist),
            }
        )
    lo, hi, d = toy_domain(key)
    if d == 1:
        x = np.linspace(lo, hi, n_grid)
        X = x[:, None]
        curves = pd.DataFrame({"x": x, "true": toy_sigma(key, X)})
        for name, est in estimators.items():
            curves[name] = est.transform(np.zeros(n_grid), features=X).std()
    else:
        k = min(500, n_test)  # a scatter of 500 test points per method keeps the figure small
        curves = pd.DataFrame({"true": test.sigma[:k], **{m: sigma_test[m][:k] for m in METHODS}})
    accrue = estimators["ACCRUE"]
    return AccrueLabResult(
        toy=key,
        n=int(n),
        metrics=pd.DataFrame(rows),
        curves=curves,
        errors=pd.DataFrame(errors),
        beta=float(accrue.beta_),
        degree=int(accrue.degree_) if kind == "polynomial" else None,
        options={"seed": seed, "n_clusters": n_clusters, "model": kind, "n_test": n_test},
        crps_degree=int(estimators["CRPS only"].degree_) if kind == "polynomial" else None,
    )


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def accrue_findings(result: AccrueLabResult) -> list[str]:
    """What lab 7's numbers say, each sentence computed from :attr:`AccrueLabResult.metrics` (nothing fixed).

    The median relative σ error median |σ̂ − σ|/σ of the four methods and the best; ACCRUE against CRPS only (whether
    the reliability term helps, with the polynomial degrees Algorithm 1 stopped at); whether both miss σ(x) by more
    than 10% at half the test points; k-means against a constant σ (within 10% of it: the clusters of x do not see
    σ(x)); and the PIT's KS distance of every method against the DKW bound at the test N
    (:func:`~calib_core.labs.regression.ks_sentence`) — a σ can be marginally calibrated and still wrong at every x.

    Parameters
    ----------
    result : AccrueLabResult
        A run of :func:`run_accrue`.

    Returns
    -------
    list of str
        One sentence per finding, plain text.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    .. [2] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """
    e = result.median_errors()
    n_test = int(result.options.get("n_test", len(result.errors)))
    best = min(e, key=e.get)
    out = ["Median relative σ error on the test rows: " + ", ".join(f"{m} {_pct(v)}" for m, v in e.items())
           + f": {best} recovers σ(x) best."]
    a, c = e["ACCRUE"], e["CRPS only"]
    if _pct(a) == _pct(c):
        verdict = "the reliability term makes no difference at this precision"
    elif a < c:
        verdict = "the reliability term helps"
    else:
        verdict = "the reliability term does not help here; the CRPS alone does better"
    degrees = ""
    if result.degree is not None and result.crps_degree is not None:
        same = "the same degree" if result.degree == result.crps_degree else "different degrees"
        degrees = (f" Algorithm 1 stopped at polynomial degree {result.degree} for ACCRUE and {result.crps_degree} "
                   f"for CRPS only ({same}).")
    out.append(f"ACCRUE {_pct(a)} against CRPS only {_pct(c)}: {verdict}.{degrees}")
    if min(a, c) > 0.10:
        out.append(f"Both miss σ(x) by more than 10% at half the test points: the "
                   f"{'polynomial' if result.one_dimensional else 'network'} struggles with either cost here.")
    k = result.options.get("n_clusters")
    km, const = e["k-means σ"], e["constant σ"]
    if km >= 0.9 * const:
        kmv = "no real improvement on a constant σ: the clusters of x do not see how σ(x) varies"
    else:
        kmv = f"an error {const / km:.1f}× smaller than a constant σ's, with a staircase of {k} steps"
    out.append(f"k-means with k = {k}: {_pct(km)} against {_pct(const)} for a constant σ, {kmv}.")
    m = result.metrics.set_index("method")
    bound = float(np.sqrt(np.log(2.0 / 0.01) / (2.0 * n_test)))
    out.append(ks_sentence({name: float(m.loc[name, "calibration_error"]) for name in METHODS}, bound, n_test)
               .replace("KS distance", "Calibration error (the PIT's KS distance)"))
    return out
