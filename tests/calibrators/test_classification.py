"""Classification calibrators: exactness against scikit-learn / netcal / brute-force references,
float32 handling, scikit-learn conventions (clone, fitted attributes), input handling and Guo's headline."""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from calib_core.base.binning import bins_from_edges
from calib_core.calibrators import classification as ccal
from calib_core.metrics import classification as cm
from tests.peers import require_peer

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"
ALL_CALIBRATORS = [
    ccal.TemperatureScaling,
    ccal.VectorScaling,
    ccal.MatrixScaling,
    ccal.HistogramBinning,
    ccal.IsotonicCalibration,
    ccal.BBQ,
]


def _miscalibrated(seed: int, n: int, k: int, t_true: float = 1.7, scale: float = 2.0):
    """Logits z and labels y ~ softmax(z / t_true): temperature scaling's exact model, T = t_true."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * scale
    y = cm.simulate_labels(cm.softmax(z / t_true), rng)
    return z, y


class _PassThrough(ClassifierMixin, BaseEstimator):
    """A 'classifier' whose decision_function returns its input: lets CalibratedClassifierCV calibrate logits."""

    def __init__(self, n_classes: int = 2):
        self.n_classes = n_classes

    def fit(self, X, y):
        self.classes_ = np.arange(self.n_classes)
        return self

    def decision_function(self, X):
        return np.asarray(X)

    def predict(self, X):
        return np.asarray(X).argmax(1)


def sklearn_temperature(z: np.ndarray, y: np.ndarray) -> float:
    k = z.shape[1]
    clf = _PassThrough(k).fit(z[:k], np.arange(k))
    cal = CalibratedClassifierCV(FrozenEstimator(clf), method="temperature").fit(z, y)
    return 1.0 / float(cal.calibrated_classifiers_[0].calibrators[0].beta_)  # scikit-learn stores β = 1/T


def nll_gradient_in_beta(z: np.ndarray, y: np.ndarray, t: float) -> float:
    """dNLL/dβ at β = 1/T, in extended precision: mean_i E_softmax(βz_i)[z_i] − z_iy."""
    zl = z.astype(np.longdouble)
    b = np.longdouble(1.0) / np.longdouble(t)
    e = np.exp(b * (zl - zl.max(1, keepdims=True)))
    return float(np.mean((e * zl).sum(1) / e.sum(1) - zl[np.arange(len(y)), y]))


# --------------------------------------------------------------------------------------------------
# temperature scaling
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "seed,n,k,scale", [(0, 3000, 10, 2.0), (1, 20000, 10, 3.0), (2, 5000, 3, 8.0), (3, 4000, 50, 1.0)]
)
def test_temperature_equals_sklearn_and_zeroes_the_gradient(seed, n, k, scale):
    z, y = _miscalibrated(seed, n, k, scale=scale)
    ts = ccal.TemperatureScaling().fit(z, y)
    assert ts.temperature_ == pytest.approx(sklearn_temperature(z, y), rel=1e-5)
    # and it is the exact optimum: the derivative of the NLL vanishes (scikit-learn's Brent search on the loss
    # value is limited to ~sqrt(machine eps))
    assert abs(nll_gradient_in_beta(z, y, ts.temperature_)) < 1e-9


def test_temperature_recovers_the_true_temperature_and_improves_nll():
    z, y = _miscalibrated(4, 200_000, 10, t_true=2.5)
    ts = ccal.TemperatureScaling().fit(z, y)
    assert ts.temperature_ == pytest.approx(2.5, rel=0.02)
    assert ts.n_iter_ <= 3  # warm start on subsets, then one or two full passes
    assert cm.nll(y, ts.predict_proba(z)) < cm.nll(y, logits=z)
    np.testing.assert_allclose(ts.predict_proba(z), special.softmax(z / ts.temperature_, axis=1), rtol=1e-12)


def test_temperature_handles_huge_logits_without_overflow():
    z, y = _miscalibrated(5, 3000, 5, scale=2.0)
    ts_big = ccal.TemperatureScaling().fit(z * 1000.0, y)
    ts = ccal.TemperatureScaling().fit(z, y)
    assert ts_big.temperature_ == pytest.approx(1000.0 * ts.temperature_, rel=1e-8)


def test_temperature_on_float32_input_works_unlike_netcal():
    z, y = _miscalibrated(6, 5000, 10, t_true=2.0)
    p32 = cm.softmax(z).astype(np.float32)
    ours32 = ccal.TemperatureScaling().fit(p32, y)
    ours64 = ccal.TemperatureScaling().fit(p32.astype(np.float64), y)
    assert ours32.input_kind_ == "probs"
    assert ours32.temperature_ == pytest.approx(ours64.temperature_, rel=1e-12)
    assert ours32.temperature_ == pytest.approx(2.0, rel=0.1)
    q = ours32.predict_proba(p32)
    assert q.dtype == np.float64
    assert cm.ece(y, q) < cm.ece(y, p32) / 2
    netcal_scaling = require_peer("netcal.scaling")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nc = netcal_scaling.TemperatureScaling()
        nc.fit(p32, y)
        out = nc.transform(p32)
    # netcal 1.4, https://github.com/EFS-OpenSource/calibration-framework/issues/61:
    # its finite-difference optimiser never moves on float32 input
    assert float(np.ravel(nc.temperature)[0]) == pytest.approx(1.0)
    np.testing.assert_allclose(out, p32, atol=1e-5)


def test_temperature_probs_input_means_log_p():
    z, y = _miscalibrated(7, 3000, 6)
    p = cm.softmax(z)
    a = ccal.TemperatureScaling(input="probs").fit(p, y)
    b = ccal.TemperatureScaling(input="logits").fit(np.log(p), y)
    assert a.temperature_ == pytest.approx(b.temperature_, rel=1e-10)
    assert a.temperature_ == pytest.approx(ccal.TemperatureScaling().fit(z, y).temperature_, rel=1e-8)


def test_temperature_degenerate_cases_warn_and_stay_finite():
    z = np.array([[3.0, 0.0], [0.0, 3.0], [2.0, 1.0]])
    with pytest.warns(UserWarning, match="classified correctly"):
        t = ccal.TemperatureScaling().fit(z, np.array([0, 1, 0]))
    assert 0 < t.temperature_ < 1e-6
    with pytest.warns(UserWarning, match="not better than uniform"):
        t = ccal.TemperatureScaling().fit(z, np.array([1, 0, 1]))
    assert t.temperature_ > 1e6 and np.all(np.isfinite(t.predict_proba(z)))


# --------------------------------------------------------------------------------------------------
# vector / matrix scaling
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("diagonal", [True, False])
@pytest.mark.parametrize("l2", [0.0, 0.3])
def test_linear_scaling_gradient_is_exact(diagonal, l2):
    z, y = _miscalibrated(8, 200, 4)
    k = 4
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(k if diagonal else k * k) + k)
    err = optimize.check_grad(
        lambda t: ccal.linear_scaling_loss(t, z, y, diagonal, l2)[0],
        lambda t: ccal.linear_scaling_loss(t, z, y, diagonal, l2)[1],
        theta,
    )
    assert err < 1e-6


def test_vector_scaling_matches_netcal_logistic_calibration_on_float64():
    netcal_scaling = require_peer("netcal.scaling")
    rng = np.random.default_rng(9)
    n, k = 3000, 5
    z = rng.normal(size=(n, k)) * 2
    y = cm.simulate_labels(cm.softmax(z * np.linspace(0.4, 1.2, k) + rng.normal(size=k)), rng)
    p = cm.softmax(z)
    ours = ccal.VectorScaling(eps=float(np.finfo(float).eps)).fit(p, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nc = netcal_scaling.LogisticCalibration(method="mle")
        nc.fit(p, y)
        q_nc = nc.transform(p)
    q = ours.predict_proba(p)
    np.testing.assert_allclose(q, q_nc, atol=1e-3)  # netcal: finite-difference L-BFGS-B, default tolerances
    np.testing.assert_allclose(ours.coef_, np.ravel(nc.weights), atol=1e-3)
    assert cm.nll(y, q) <= cm.nll(y, q_nc) + 1e-10  # and ours is the better optimum


def test_matrix_scaling_warns_regularises_and_fits():
    z, y = _miscalibrated(10, 60, 8)
    with pytest.warns(UserWarning, match="K² \\+ K = 72 parameters but only 60"):
        ccal.MatrixScaling().fit(z, y)
    with pytest.warns(UserWarning, match="over-fitting"):
        strong = ccal.MatrixScaling(l2=1e3).fit(z, y)
    np.testing.assert_allclose(strong.coef_, np.eye(8), atol=1e-3)
    z, y = _miscalibrated(11, 4000, 4)
    ms = ccal.MatrixScaling().fit(z, y)
    vs = ccal.VectorScaling().fit(z, y)
    ts = ccal.TemperatureScaling().fit(z, y)
    nll = [cm.nll(y, c.predict_proba(z)) for c in (ms, vs, ts)]
    assert nll[0] <= nll[1] + 1e-9 <= nll[2] + 2e-9  # nested models: more parameters, lower training NLL
    # the temperature model is the truth here: vector scaling finds w ≈ 1/T
    np.testing.assert_allclose(vs.coef_, 1 / ts.temperature_, rtol=0.15)


# --------------------------------------------------------------------------------------------------
# Platt scaling
# --------------------------------------------------------------------------------------------------
def test_platt_equals_unpenalised_logistic_regression_and_sklearn_sigmoid():
    rng = np.random.default_rng(12)
    f = rng.normal(size=4000) * 3
    yb = (rng.random(4000) < special.expit(0.5 * f + 0.3)).astype(int)
    ours = ccal.PlattScaling(input="logits").fit(f, yb)
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=1000).fit(f[:, None], yb)
    assert ours.coef_ == pytest.approx(lr.coef_[0, 0], rel=1e-6)
    assert ours.intercept_ == pytest.approx(lr.intercept_[0], rel=1e-6, abs=1e-7)
    # Platt's smoothed targets = scikit-learn's CalibratedClassifierCV(method="sigmoid"), which stores −a, −b
    from sklearn.calibration import _sigmoid_calibration

    a_sk, b_sk = _sigmoid_calibration(f, yb)
    smooth = ccal.PlattScaling(input="logits", prior_correction=True).fit(f, yb)
    assert smooth.coef_ == pytest.approx(-a_sk, rel=1e-6)
    assert smooth.intercept_ == pytest.approx(-b_sk, rel=1e-6, abs=1e-7)
    # probabilities in: the logit is log(p / (1 − p)); (N, 2) input gives the same fit as 1-D
    p = special.expit(f)
    a = ccal.PlattScaling().fit(p, yb)
    b = ccal.PlattScaling().fit(np.column_stack([1 - p, p]), yb)
    assert a.input_kind_ == "probs" and a.coef_ == pytest.approx(ours.coef_, rel=1e-6)
    assert b.coef_ == pytest.approx(a.coef_, rel=1e-8)
    np.testing.assert_allclose(a.predict_proba(p)[:, 1], special.expit(a.coef_ * f + a.intercept_), rtol=1e-8)
    with pytest.raises(ValueError, match="binary"):
        ccal.PlattScaling().fit(cm.softmax(rng.normal(size=(10, 3))), rng.integers(0, 3, 10))


# --------------------------------------------------------------------------------------------------
# binning calibrators
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_histogram_binning_uses_the_same_bins_in_fit_and_predict(strategy):
    rng = np.random.default_rng(13)
    # values exactly on the edges m/15 (the (a, b] convention matters) plus random ones
    p = np.concatenate([np.arange(1, 15) / 15, rng.random(3000)])
    yb = (rng.random(p.size) < p**2).astype(int)
    hb = ccal.HistogramBinning(n_bins=15, strategy=strategy).fit(p, yb)
    edges, theta = hb.maps_[0]
    idx = bins_from_edges(p, edges, "right")
    for m in np.unique(idx):
        assert theta[m] == pytest.approx(yb[idx == m].mean())
    q = hb.predict_proba(p)[:, 1]
    np.testing.assert_array_equal(q, theta[idx])
    # on its own calibration data the positive-class ECE is exactly 0 (every group of equal q has frequency q)
    assert cm.ece(yb, q, n_bins=15, strategy=strategy, target="positive") < 1e-12


def test_isotonic_equals_sklearn_one_vs_rest():
    rng = np.random.default_rng(14)
    z, y = _miscalibrated(14, 3000, 4)
    p = np.round(cm.softmax(z), 3)  # exact ties (scikit-learn also merges values closer than 1e-15; we do not)
    iso = ccal.IsotonicCalibration(input="probs").fit(p, y)
    p_test = cm.softmax(rng.normal(size=(2000, 4)) * 2)
    q = np.column_stack(
        [IsotonicRegression(out_of_bounds="clip").fit(p[:, k], y == k).predict(p_test[:, k]) for k in range(4)]
    )
    np.testing.assert_allclose(iso.predict_proba(p_test), q / q.sum(1, keepdims=True), atol=1e-12)
    # binary: class 1 only
    pb = rng.random(2000)
    yb = (rng.random(2000) < pb**2).astype(int)
    sk_iso = IsotonicRegression(out_of_bounds="clip").fit(pb, yb)
    sk = sk_iso.predict(p_test[:, 0])
    np.testing.assert_allclose(ccal.IsotonicCalibration().fit(pb, yb).predict_proba(p_test[:, 0])[:, 1], sk, atol=1e-12)
    step = ccal.IsotonicCalibration(interpolation="step").fit(pb, yb).predict_proba(np.sort(p_test[:, 0]))[:, 1]
    assert np.all(np.diff(step) >= 0) and set(np.unique(step)) <= set(sk_iso.y_thresholds_)


@pytest.mark.parametrize("cls", [ccal.IsotonicCalibration, ccal.HistogramBinning, ccal.BBQ])
def test_one_vs_rest_all_zero_rows_become_uniform_not_nan(cls):
    # training rows put 0.7 on the label and 0.1 elsewhere: every class's map is 0 at 0.1 (no positives there)
    rng = np.random.default_rng(15)
    y = rng.integers(0, 4, 2000)
    p = np.full((2000, 4), 0.1)
    p[np.arange(2000), y] = 0.7
    cal = cls(input="probs").fit(p, y)
    q = cal.predict_proba(np.array([[0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.7]]))
    assert np.all(np.isfinite(q))
    if cls is not ccal.BBQ:  # BBQ's Beta prior never gives exactly 0
        np.testing.assert_allclose(q[0], 0.25)
    assert q[1].argmax() == 3


def _bbq_reference(p: np.ndarray, hit: np.ndarray, p_test: np.ndarray, c=10.0, strength=2.0) -> np.ndarray:
    """BBQ by the book, with loops over models and bins (Naeini et al. 2015)."""
    n = p.size
    root = n ** (1 / 3)
    b_min = int(max(1, np.floor(root / c)))
    b_max = int(max(b_min, min(np.ceil(n / 5), np.ceil(root * c))))
    scores, preds = [], []
    for B in range(b_min, b_max + 1):
        edges = np.quantile(p, np.linspace(0, 1, B + 1))
        idx = bins_from_edges(p, edges, "right")
        idx_test = bins_from_edges(p_test, edges, "right")
        lower = np.concatenate([[0.0], edges[1:-1]])
        upper = np.concatenate([edges[1:-1], [1.0]])
        score, theta = 0.0, np.zeros(B)
        a0 = strength / B
        for b in range(B):
            nb, mb = np.sum(idx == b), np.sum(hit[idx == b])
            mid = np.clip((lower[b] + upper[b]) / 2, 1e-9, 1 - 1e-9)
            al, be = a0 * mid, a0 * (1 - mid)
            score += (
                special.gammaln(a0)
                - special.gammaln(nb + a0)
                + special.gammaln(mb + al)
                - special.gammaln(al)
                + special.gammaln(nb - mb + be)
                - special.gammaln(be)
            )
            theta[b] = (mb + al) / (nb + a0)
        scores.append(score)
        preds.append(theta[idx_test])
    w = np.exp(np.array(scores) - max(scores))
    return (w[:, None] * np.array(preds)).sum(0) / w.sum()


@pytest.mark.parametrize("seed", [0, 1])
def test_bbq_equals_brute_force_reference(seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(2, 1, size=400), 2)  # ties on purpose
    hit = rng.random(400) < p**1.5
    p_test = np.concatenate([rng.random(300), p[:50], [0.0, 1.0]])
    ours = ccal.BBQ().fit(p, hit.astype(int)).predict_proba(p_test)[:, 1]
    np.testing.assert_allclose(ours, _bbq_reference(p, hit, p_test), rtol=1e-10, atol=1e-12)


def test_bbq_is_fast_and_calibrates():
    z, y = _miscalibrated(16, 100_000, 10, t_true=2.0)
    p = cm.softmax(z)
    t0 = time.perf_counter()
    bbq = ccal.BBQ().fit(p, y)
    elapsed = time.perf_counter() - t0
    assert elapsed < 5.0  # issue: BBQ fit at N = 1e5, K = 10 under 5 s
    assert bbq.n_models_ == bbq.bins_range_[1] - bbq.bins_range_[0] + 1 > 400
    q = bbq.predict_proba(p[:20000])
    assert np.all(np.isfinite(q)) and np.allclose(q.sum(1), 1)
    assert cm.ece(y[:20000], q) < cm.ece(y[:20000], p[:20000]) / 3


# --------------------------------------------------------------------------------------------------
# estimator conventions and input handling
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", ALL_CALIBRATORS + [ccal.PlattScaling])
def test_clone_and_fitted_attributes(cls):
    est = cls(input="probs")
    c = clone(est)
    assert c.get_params() == est.get_params() and not hasattr(c, "input_kind_")
    rng = np.random.default_rng(17)
    if cls is ccal.PlattScaling:
        X, y = rng.random(300), rng.integers(0, 2, 300)
    else:
        X = cm.softmax(rng.normal(size=(300, 3)) * 2)
        y = cm.simulate_labels(X, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.input_kind_ == "probs" and est.n_classes_ == (2 if cls is ccal.PlattScaling else 3)
    assert not hasattr(clone(est), "input_kind_")
    with pytest.raises(NotFittedError, match="not fitted"):
        clone(est).predict_proba(X)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), k=st.integers(2, 5), n=st.integers(20, 200), which=st.integers(0, 5))
def test_predict_proba_is_a_probability_matrix(seed, k, n, which):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * rng.uniform(0.1, 5)
    y = rng.integers(0, k, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cal = ALL_CALIBRATORS[which]().fit(z, y)
    q = cal.predict_proba(rng.normal(size=(50, k)) * 3)
    assert q.shape == (50, k) and q.dtype == np.float64
    assert np.all(np.isfinite(q)) and np.all(q >= 0) and np.all(q <= 1)
    np.testing.assert_allclose(q.sum(1), 1.0, atol=1e-12)


def test_input_kind_is_decided_once_and_never_switches():
    rng = np.random.default_rng(18)
    p = cm.softmax(rng.normal(size=(200, 3)))
    y = rng.integers(0, 3, 200)
    ts = ccal.TemperatureScaling().fit(p, y)
    assert ts.input_kind_ == "probs"
    with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
        ts.predict_proba(np.log(p))  # logits where probabilities were fitted: refused, not re-guessed
    with pytest.raises(ValueError, match="fitted on 3"):
        ts.predict_proba(p[:, :2])
    with pytest.raises(ValueError, match="cannot tell"):
        ccal.TemperatureScaling().fit(p * 0.5, y)  # in [0, 1] but rows do not sum to 1
    assert ccal.HistogramBinning(input="probs").fit(p * 0.5, y).input_kind_ == "probs"
    assert ccal.HistogramBinning().fit(np.log(p), y).input_kind_ == "logits"
    with pytest.raises(ValueError, match="0..2"):
        ccal.VectorScaling().fit(p, np.full(200, 3))
    with pytest.raises(ValueError, match="NaN"):
        ccal.BBQ().fit(np.where(p > 0.9, np.nan, p), y)


# --------------------------------------------------------------------------------------------------
# Guo et al.'s headline on real data
# --------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not (REAL / "netcal_cifar_probs").is_dir(), reason="real data folder missing")
def test_guo_headline_temperature_scaling_densenet_cifar100():
    with np.load(REAL / "netcal_cifar_probs" / "densenet-bc-100-cifar-100.npz", allow_pickle=False) as d:
        p, y = d["probs"], d["labels"]
    idx = np.random.default_rng(0).permutation(len(y))
    cal, test = idx[:5000], idx[5000:]
    before = cm.ece(y[test], p[test])
    ts = ccal.TemperatureScaling().fit(p[cal], y[cal])
    after = cm.ece(y[test], ts.predict_proba(p[test]))
    assert before > 0.13
    assert after < 0.03
    assert ts.temperature_ > 1.5  # over-confident network: T > 1 softens it
