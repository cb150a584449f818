"""One scikit-learn-like API for every calibrator of both tasks.

Every calibrator class exported by ``calib_core.calibrators.regression`` and
``calib_core.calibrators.classification``: hyper-parameters keyword-only, ``sklearn.exceptions.NotFittedError``
from every method that needs a fit when called before ``fit``, ``sklearn.base.clone`` gives an unfitted copy
with the same parameters (before and after a fit), and ``check_is_fitted`` passes after ``fit``.  The other
estimators of the package (``training.HeteroscedasticMLP``, the isotonic lab's Bayesian linear regression) take
keyword-only hyper-parameters too.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import calib_core as cc
from calib_core.calibrators import classification as ccal
from calib_core.calibrators import regression as rcal
from calib_core.calibrators.training import HeteroscedasticMLP
from calib_core.labs.isotonic import BayesianLinearRegression

ABSTRACT = {rcal.RegressionCalibrator, rcal.SliceWiseCalibrator}


def _exported(module) -> list[type]:
    out = []
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator) and obj not in ABSTRACT:
            out.append(obj)
    return out


REGRESSION = _exported(rcal)
CLASSIFICATION = _exported(ccal)


def test_every_calibrator_is_covered():
    names = {c.__name__ for c in REGRESSION}
    assert names == {
        "StdScaling",
        "GaussianShiftScale",
        "IsotonicRecalibration",
        "CRUDE",
        "SplitConformal",
        "SigmaBinning",
        "SigmaIsotonic",
        "ConstantSigma",
        "KMeansSigma",
        "ACCRUE",
        "GroupStdScaling",
        "MondrianConformal",
    }
    assert {c.__name__ for c in CLASSIFICATION} == {
        "TemperatureScaling",
        "GroupTemperatureScaling",
        "VectorScaling",
        "MatrixScaling",
        "PlattScaling",
        "HistogramBinning",
        "IsotonicCalibration",
        "BBQ",
    }


def _regression_data(n: int = 200, seed: int = 3):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n) * 3
    sigma = rng.uniform(0.5, 2.0, n)
    y = mu + 1.5 * sigma * rng.standard_normal(n)
    return cc.Gaussian(mu, sigma), y, rng.uniform(size=(n, 2))


def _classification_data(cls: type, n: int = 300, seed: int = 3):
    rng = np.random.default_rng(seed)
    if cls is ccal.PlattScaling:
        return rng.normal(size=n) * 2, rng.integers(0, 2, n)
    logits = rng.normal(size=(n, 3)) * 2
    return logits, rng.integers(0, 3, n)


def _slices(cls: type, n: int) -> dict:
    """``groups=`` for the slice-wise calibrators (two slices, both above their min_rows), nothing for the others."""
    return {"groups": np.where(np.arange(n) % 2 == 0, "a", "b")} if getattr(cls, "uses_groups", False) else {}


def _small(cls: type) -> BaseEstimator:
    """An instance cheap enough to fit in a unit test (keyword arguments only)."""
    if cls is rcal.ACCRUE:
        return cls(max_degree=2)
    if cls is rcal.KMeansSigma:
        return cls(n_clusters=2, n_init=1)
    if cls is rcal.SigmaBinning:
        return cls(n_bins=5)
    return cls()


@pytest.mark.parametrize(
    "cls", REGRESSION + CLASSIFICATION + [HeteroscedasticMLP, BayesianLinearRegression], ids=lambda c: c.__name__
)
def test_hyper_parameters_are_keyword_only(cls):
    if cls.__init__ is object.__init__:  # no hyper-parameters at all
        assert cls._get_param_names() == []
        return
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params), params
    if params:
        with pytest.raises(TypeError):
            cls(params[0].default)


@pytest.mark.parametrize("cls", REGRESSION, ids=lambda c: c.__name__)
def test_regression_not_fitted_and_clone(cls):
    dist, y, X = _regression_data()
    est = _small(cls)
    with pytest.raises(NotFittedError, match="not fitted"):
        est.transform(dist, features=X)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    c = clone(est)
    assert type(c) is cls and c.get_params() == est.get_params()
    g = _slices(cls, len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = est.fit(dist, y, features=X, **g).transform(dist, features=X, **g)
    check_is_fitted(est)
    assert len(out) == len(y)
    fitted_clone = clone(est)
    assert fitted_clone.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        fitted_clone.transform(dist, features=X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = fitted_clone.fit(dist, y, features=X, **g).transform(dist, features=X, **g)
    np.testing.assert_allclose(again.mean(), out.mean())
    np.testing.assert_allclose(again.std(), out.std())


@pytest.mark.parametrize(
    ("cls", "method"),
    [
        (rcal.IsotonicRecalibration, "recalibration_map"),
        (rcal.SplitConformal, "score_quantiles"),
        (rcal.SigmaBinning, "bin_index"),
        (rcal.ACCRUE, "predict_sigma"),
    ],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_regression_helper_methods_not_fitted(cls, method):
    arg = {"recalibration_map": np.array([0.5]), "score_quantiles": 0.9, "bin_index": np.array([1.0])}
    with pytest.raises(NotFittedError):
        getattr(cls(), method)(arg.get(method, np.zeros((3, 2))))


@pytest.mark.parametrize("cls", CLASSIFICATION, ids=lambda c: c.__name__)
def test_classification_not_fitted_and_clone(cls):
    X, y = _classification_data(cls)
    est = _small(cls)
    for method in ("predict_proba", "predict"):
        with pytest.raises(NotFittedError, match="not fitted"):
            getattr(est, method)(X)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    c = clone(est)
    assert type(c) is cls and c.get_params() == est.get_params()
    g = _slices(cls, len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proba = est.fit(X, y, **g).predict_proba(X, **g)
    check_is_fitted(est)
    assert proba.shape == (len(y), 2 if cls is ccal.PlattScaling else 3)
    fitted_clone = clone(est)
    assert fitted_clone.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        fitted_clone.predict_proba(X, **g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(fitted_clone.fit(X, y, **g).predict_proba(X, **g), proba)


def test_regression_calibrators_take_predictions_first():
    """fit(dist, y, *, features=None) like scikit-learn's fit(X, y); the old (y, dist) order is refused."""
    dist, y, X = _regression_data()
    with pytest.raises(TypeError, match="fit\\(dist, y"):
        rcal.StdScaling().fit(y, dist)
    with pytest.raises(TypeError):
        rcal.KMeansSigma().fit(dist, y, X)  # features are keyword-only
    with pytest.raises(TypeError):
        rcal.StdScaling().fit(dist, y).transform(dist, X)
    a = rcal.KMeansSigma(n_clusters=2, n_init=1).fit_transform(dist, y, features=X)
    b = rcal.KMeansSigma(n_clusters=2, n_init=1).fit(dist, y, features=X).transform(dist, features=X)
    np.testing.assert_array_equal(a.std(), b.std())
