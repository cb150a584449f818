"""The base of the regression recalibrators: the estimator interface and the checks of its inputs.

Every regression calibrator (:mod:`calib_core.calibrators.regression`) is a :class:`RegressionCalibrator`:
``fit(dist, y, *, features=None)`` on calibration rows, ``transform(dist, *, features=None)`` on any rows, returning
a :class:`~calib_core.base.regression.PredictiveDistribution`.  :func:`as_distribution` reads a 1-D array of point
predictions as ``Gaussian(mean, 1)``; :func:`check_targets`, :func:`check_features` and :func:`mean_and_std` are
the checks every ``fit`` and ``transform`` share.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..base.regression import Gaussian, PredictiveDistribution

__all__ = ["as_distribution", "RegressionCalibrator"]


def as_distribution(dist: PredictiveDistribution | np.ndarray) -> PredictiveDistribution:
    """A predictive distribution, or an array of point predictions read as ``Gaussian(mean, 1)``.

    Point predictions carry no uncertainty: read as the means with σ ≡ 1, the calibrators that estimate σ from
    scratch (:class:`~calib_core.calibrators.regression.ConstantSigma`, ``KMeansSigma``, ``ACCRUE``) use only the
    means, and the σ-rescaling ones treat σ ≡ 1 (STD scaling then gives a constant σ equal to the calibration
    RMSE, the constant-σ baseline of Camporeale & Carè 2021, Table 1).

    Parameters
    ----------
    dist : PredictiveDistribution or array_like of shape (n,)
        Predictive distributions, or point predictions.

    Returns
    -------
    PredictiveDistribution
        ``dist`` itself, or ``Gaussian(dist, 1)``.

    Raises
    ------
    ValueError
        Point predictions that are not one-dimensional.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic models",
           International Journal for Uncertainty Quantification 11(4), 81–94, 2021.

    Examples
    --------
    >>> d = as_distribution(np.array([1.0, 2.0]))
    >>> d.mean(), d.std()
    (array([1., 2.]), array([1., 1.]))
    """
    if isinstance(dist, PredictiveDistribution):
        return dist
    arr = np.asarray(dist, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"point predictions must be one-dimensional, got shape {arr.shape}")
    return Gaussian(arr, np.ones_like(arr))


def check_targets(y: Any, n: int) -> np.ndarray:
    """The targets as a finite float array of shape (n,) (a distribution passed as y is refused)."""
    if isinstance(y, PredictiveDistribution):
        raise TypeError(
            "regression calibrators take fit(dist, y, *, features=None): predictions first, targets second "
            "(the order of scikit-learn's fit(X, y)); got a predictive distribution as y"
        )
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or inf")
    return y


def check_features(features: Any, n: int | None = None, required: bool = False, who: str = "") -> np.ndarray | None:
    """The features as a finite (n, d) float array (None when absent and not ``required``)."""
    if features is None:
        if required:
            raise ValueError(f"{who} needs the feature matrix (features=..., the x* columns)")
        return None
    arr = np.asarray(features, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"features must be 2-D (rows × features), got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"features has {arr.shape[0]} rows but the predictions have {n}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("features contains NaN or inf")
    return arr


def mean_and_std(dist: PredictiveDistribution) -> tuple[np.ndarray, np.ndarray]:
    """(μ, σ) of every row; σ must be positive."""
    mu = np.asarray(dist.mean(), dtype=float)
    sigma = np.asarray(dist.std(), dtype=float)
    if np.any(~(sigma > 0)):
        raise ValueError("the predictive standard deviations must be positive")
    return mu, sigma


class RegressionCalibrator(BaseEstimator):
    """Base class of the regression recalibrators: ``fit(dist, y, *, features=None)``, ``transform(dist, *,
    features=None)``, ``fit_transform``.

    The scikit-learn order ``fit(X, y)``: the model's predictions ``dist`` play the role of X (inputs first),
    the targets ``y`` come second.  ``features`` are optional per-row covariates (the ``x*`` columns, an
    (N, d) array or DataFrame) read only by the calibrators with ``uses_features = True`` (``KMeansSigma``,
    ``ACCRUE``), which raise without them; the others ignore them.  Hyper-parameters are set in ``__init__``
    only, fitted attributes end with an underscore, and ``sklearn.base.clone`` works.  Recalibration is fitted on
    held-out calibration rows and applied to new rows (Kuleshov et al. 2018, Algorithm 1).

    Attributes
    ----------
    uses_features : bool
        Whether ``fit`` and ``transform`` read ``features`` (class attribute).
    n_calibration_ : int
        Number of calibration rows (set by ``fit`` in every subclass).

    References
    ----------
    .. [1] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
           regression", Proc. 35th International Conference on Machine Learning (ICML), PMLR 80, 2796–2804, 2018.
    .. [2] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019.
    """

    uses_features: bool = False

    def fit(
        self, dist: PredictiveDistribution | np.ndarray, y: np.ndarray, *, features: Any = None
    ) -> RegressionCalibrator:
        """Fit on calibration rows: predictions ``dist`` (N rows or point array), targets y (N,), features."""
        raise NotImplementedError  # pragma: no cover

    def transform(self, dist: PredictiveDistribution | np.ndarray, *, features: Any = None) -> PredictiveDistribution:
        """The recalibrated predictive distribution of the rows of ``dist`` (``features`` when used)."""
        raise NotImplementedError  # pragma: no cover

    def fit_transform(
        self, dist: PredictiveDistribution | np.ndarray, y: np.ndarray, *, features: Any = None
    ) -> PredictiveDistribution:
        """``fit(dist, y, features=features)`` then ``transform(dist, features=features)`` on the same rows."""
        return self.fit(dist, y, features=features).transform(dist, features=features)

    def _check_fitted(self, attr: str) -> None:
        """Raise ``sklearn.exceptions.NotFittedError`` unless the fitted attribute ``attr`` exists."""
        check_is_fitted(self, attr)
