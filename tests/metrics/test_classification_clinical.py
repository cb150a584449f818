"""The clinical calibration set: the logistic recalibration fit (statsmodels' Logit and GLM with offset to 1e-6),
degenerate data (0/1 probabilities, one class, separation, one distinct prediction), the formulas, invariances
(hypothesis) and the prevalence adjustment."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from calib_core.calibrators import registry as reg
from calib_core.metrics import classification_clinical as cl
from calib_core.metrics.classification_clinical_fit import clipped_logit
from tests.peers import require_peer


def _data(n, seed, slope=1.0, shift=0.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(-1.0, 1.2, n)
    p = special.expit(x)
    y = (rng.random(n) < special.expit(shift + slope * x)).astype(float)
    return p, y


@pytest.mark.parametrize("n, seed, slope, shift", [(300, 1, 1.0, 0.0), (4000, 2, 0.7, 0.0), (2000, 3, 1.3, -0.4)])
def test_recalibration_matches_statsmodels_logit_and_offset_glm(n, seed, slope, shift):
    sm = require_peer("statsmodels.api")
    p, y = _data(n, seed, slope, shift)
    p[:3] = [0.0, 1.0, 0.0]  # clipped
    x, clipped = clipped_logit(p)
    assert clipped == 3
    ref = sm.Logit(y, sm.add_constant(x)).fit(disp=0, tol=1e-12)
    fit = cl.logistic_recalibration(p, y)
    assert fit.n_clipped == 3 and not fit.separated and fit.converged
    np.testing.assert_allclose([fit.intercept, fit.slope], ref.params, atol=1e-6)
    np.testing.assert_allclose([fit.intercept_se, fit.slope_se], ref.bse, atol=1e-6)
    glm = sm.GLM(y, np.ones((n, 1)), offset=x, family=sm.families.Binomial()).fit(tol=1e-12)
    citl = cl.logistic_recalibration(p, y, fix_slope=True)
    assert abs(citl.intercept - glm.params[0]) < 1e-6 and abs(citl.intercept_se - glm.bse[0]) < 1e-6
    assert citl.slope == 1.0 and np.isnan(citl.slope_se)


def test_weights_equal_duplicated_rows_in_every_statistic():
    p, y = _data(400, 5, 0.8)
    w = np.random.default_rng(2).integers(0, 4, p.size).astype(float)
    rep = np.repeat(np.arange(p.size), w.astype(int))
    a, b = cl.logistic_recalibration(p, y, w), cl.logistic_recalibration(p[rep], y[rep])
    np.testing.assert_allclose([a.intercept, a.slope, a.intercept_se, a.slope_se],
                               [b.intercept, b.slope, b.intercept_se, b.slope_se], atol=1e-8)
    assert abs(cl.spiegelhalter_z_of(p, y, w) - cl.spiegelhalter_z_of(p[rep], y[rep])) < 1e-10
    groups = cl.hosmer_lemeshow_groups(p[rep])
    g_rows = np.empty(p.size, dtype=np.intp)
    g_rows[rep] = groups
    keep = w > 0
    assert abs(cl.hosmer_lemeshow_of(p[keep], y[keep], w[keep], groups=g_rows[keep])[0]
               - cl.hosmer_lemeshow_of(p[rep], y[rep], groups=groups)[0]) < 1e-8
    ea, eb = cl.calibration_errors_of(p, y, w, delta=0), cl.calibration_errors_of(p[rep], y[rep], delta=0)
    assert abs(ea["ici"] - eb["ici"]) < 1e-10


@given(st.integers(0, 10_000))
@settings(max_examples=20, deadline=None)
def test_row_order_does_not_matter(seed):
    p, y = _data(150, seed)
    perm = np.random.default_rng(seed).permutation(p.size)
    labels = y.astype(int)
    probs = np.column_stack([1 - p, p])
    for fn in (cl.calibration_in_the_large, cl.calibration_slope, cl.spiegelhalter_z, cl.hosmer_lemeshow, cl.ici):
        assert abs(fn(labels, probs) - fn(labels[perm], probs[perm])) < 1e-9


@given(st.integers(0, 10_000))
@settings(max_examples=20, deadline=None)
def test_swapping_the_classes_mirrors_the_fit_and_keeps_z(seed):
    p, y = _data(200, seed)
    a = cl.logistic_recalibration(p, y)
    b = cl.logistic_recalibration(1 - p, 1 - y)  # logit(1 − p) = −logit p: a ↦ −a, b unchanged
    assert abs(a.slope - b.slope) < 1e-7 and abs(a.intercept + b.intercept) < 1e-7
    # (y − p)(1 − 2p) is unchanged by y ↦ 1 − y, p ↦ 1 − p: Z is the same for either class
    assert abs(cl.spiegelhalter_z_of(p, y) - cl.spiegelhalter_z_of(1 - p, 1 - y)) < 1e-9


@given(st.integers(0, 10_000))
@settings(max_examples=20, deadline=None)
def test_probabilities_recalibrated_to_themselves_give_slope_one_and_citl_zero(seed):
    # the expected outcome given p is p itself (fractional outcomes: the limit of many rows per p): the score
    # Σ (p − expit(a + b logit p)) (1, logit p) vanishes at (0, 1), so the fit is exactly calibrated
    p = np.random.default_rng(seed).uniform(0.01, 0.99, 100)
    fit = cl.logistic_recalibration(p, p)
    assert abs(fit.slope - 1) < 1e-8 and abs(fit.intercept) < 1e-8
    assert abs(cl.logistic_recalibration(p, p, fix_slope=True).intercept) < 1e-8
    assert abs(cl.spiegelhalter_z_of(p, p)) < 1e-9


def test_known_miscalibration_is_recovered_in_large_samples():
    p, y = _data(200_000, 9, slope=0.7, shift=0.5)
    fit = cl.logistic_recalibration(p, y)
    assert abs(fit.slope - 0.7) < 4 * fit.slope_se and abs(fit.intercept - 0.5) < 4 * fit.intercept_se


def test_one_class_is_nan_with_a_reason_never_an_error():
    p = np.linspace(0.1, 0.9, 50)
    for y in (np.zeros(50), np.ones(50)):
        fit = cl.logistic_recalibration(p, y)
        assert np.isnan(fit.slope) and "one class only" in fit.reason
        assert np.isnan(cl.logistic_recalibration(p, y, fix_slope=True).intercept)
    labels, probs = np.zeros(50, int), np.column_stack([1 - p, p])
    assert np.isnan(cl.calibration_slope(labels, probs))


def test_perfect_separation_gives_firths_finite_estimate():
    p = np.linspace(0.01, 0.99, 60)
    y = (p > 0.5).astype(float)
    fit = cl.logistic_recalibration(p, y)
    assert fit.separated and "separation" in fit.reason
    assert np.isfinite(fit.slope) and fit.slope > 1 and np.isfinite(fit.slope_se)
    # quasi-complete (ties at the boundary) is separation too
    y2 = (p >= p[30]).astype(float)
    assert cl.logistic_recalibration(p, y2).separated


def test_one_distinct_prediction_has_no_slope_but_has_citl():
    p, y = np.full(40, 0.3), np.r_[np.ones(10), np.zeros(30)]
    fit = cl.logistic_recalibration(p, y)
    assert np.isnan(fit.slope) and "not identifiable" in fit.reason
    citl = cl.logistic_recalibration(p, y, fix_slope=True).intercept
    assert abs(citl - (special.logit(0.25) - special.logit(0.3))) < 1e-8


def test_spiegelhalter_and_hosmer_lemeshow_formulas():
    p = np.array([0.1, 0.2, 0.3, 0.6, 0.7, 0.9])
    y = np.array([0, 0, 1, 1, 0, 1.0])
    z = np.sum((y - p) * (1 - 2 * p)) / np.sqrt(np.sum((1 - 2 * p) ** 2 * p * (1 - p)))
    assert abs(cl.spiegelhalter_z_of(p, y) - z) < 1e-12
    g = cl.hosmer_lemeshow_groups(p, 2)
    assert g.tolist() == [0, 0, 0, 1, 1, 1]
    o, e, n = np.array([1, 2.0]), np.array([0.6, 2.2]), np.array([3, 3.0])
    assert abs(cl.hosmer_lemeshow_of(p, y, n_groups=2)[0] - np.sum((o - e) ** 2 / (e * (1 - e / n)))) < 1e-12
    assert np.isnan(cl.spiegelhalter_z_of([0.5, 0.5], [0, 1]))  # denominator 0: NaN, not inf


def test_hosmer_lemeshow_keeps_ties_together_and_drops_empty_groups():
    p = np.r_[np.full(50, 0.2), np.linspace(0.3, 0.9, 50)]
    g = cl.hosmer_lemeshow_groups(p)
    assert np.unique(g[:50]).size == 1
    y = (np.random.default_rng(0).random(100) < p).astype(float)
    stat, n_groups = cl.hosmer_lemeshow_of(p, y)
    assert n_groups == np.unique(g).size < 10 and np.isfinite(stat)


def test_ici_e50_e90_definitions():
    p, y = _data(800, 4, slope=0.6)
    curve = cl.loess_smooth(p, y) if hasattr(cl, "loess_smooth") else None
    from calib_core.metrics.classification_loess import loess_smooth
    d = np.abs(loess_smooth(p, y) - p)
    out = cl.calibration_errors_of(p, y)
    assert curve is None or np.allclose(curve, loess_smooth(p, y))
    assert abs(out["ici"] - d.mean()) < 1e-12
    assert abs(out["e50"] - np.median(d)) < 1e-12 and abs(out["e90"] - np.quantile(d, 0.9)) < 1e-12
    assert out["e50"] <= out["e90"]


def test_adjust_prevalence_round_trip_and_bayes_rule():
    p = np.array([0.0, 0.01, 0.3, 0.5, 0.99, 1.0])
    q = cl.adjust_prevalence(p, from_prevalence=0.5, to_prevalence=0.05)
    assert q[0] == 0.0 and q[-1] == 1.0
    odds = lambda v: v / (1 - v)  # noqa: E731
    np.testing.assert_allclose(odds(q[1:-1]), odds(p[1:-1]) * odds(0.05) / odds(0.5), rtol=1e-12)
    back = cl.adjust_prevalence(q, from_prevalence=0.05, to_prevalence=0.5)
    np.testing.assert_allclose(back, p, atol=1e-12)
    two = cl.adjust_prevalence(np.column_stack([1 - p, p]), from_prevalence=0.5, to_prevalence=0.05)
    np.testing.assert_allclose(two[:, 1], q) and np.testing.assert_allclose(two.sum(axis=1), 1.0)
    for bad in (0.0, 1.0, -0.2, float("nan")):
        with pytest.raises(ValueError, match="prevalence"):
            cl.adjust_prevalence(p, from_prevalence=bad, to_prevalence=0.1)


def test_prior_shift_of_a_calibrated_model_stays_calibrated():
    # a model calibrated at prevalence π, re-expressed at π′, is calibrated on data drawn at π′ (label shift)
    rng = np.random.default_rng(11)
    n = 200_000
    y = (rng.random(n) < 0.5).astype(float)
    score = rng.normal(np.where(y == 1, 1.0, -1.0), 1.0)
    p_half = special.expit(2.0 * score)  # exact posterior at prevalence 0.5 (equal-variance normals)
    keep = (y == 1) & (rng.random(n) < 0.1) | (y == 0)  # subsample positives: prevalence 1/11
    pi2 = 0.05 / 0.55
    q = cl.adjust_prevalence(p_half[keep], from_prevalence=0.5, to_prevalence=pi2)
    fit = cl.logistic_recalibration(q, y[keep])
    assert abs(fit.slope - 1) < 4 * fit.slope_se and abs(fit.intercept) < 4 * fit.intercept_se


def test_registry_entries():
    for key, kind, direction in (("calibration_in_the_large", "calibration statistic", 0.0),
                                 ("calibration_slope", "calibration statistic", 1.0),
                                 ("cox_intercept", "descriptive", None),
                                 ("spiegelhalter_z", "calibration statistic", 0.0),
                                 ("hosmer_lemeshow", "calibration statistic", "lower"),
                                 ("ici", "calibration statistic", "lower"), ("e50", "descriptive", "lower"),
                                 ("e90", "descriptive", "lower")):
        m = reg.metric(key)
        assert (m.task, m.kind, m.direction) == ("classification", kind, direction)
    p, y = _data(300, 8)
    labels, probs = y.astype(int), np.column_stack([1 - p, p])
    assert reg.metric("calibration_slope")(labels, probs) == pytest.approx(cl.logistic_recalibration(p, y).slope)
    assert reg.metric("ici")(labels, probs, span=0.5) == pytest.approx(
        cl.calibration_errors_of(p, y, span=0.5)["ici"])


def test_multiclass_registry_values_are_means_over_classes():
    rng = np.random.default_rng(3)
    probs = rng.dirichlet([2, 2, 2], 600)
    labels = np.array([rng.choice(3, p=q) for q in probs])
    per = [cl.logistic_recalibration(probs[:, k], (labels == k).astype(float)).slope for k in range(3)]
    assert cl.calibration_slope(labels, probs) == pytest.approx(np.mean(per))
