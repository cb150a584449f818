"""The batched one-vs-rest logistic recalibration equals the scalar fit column by column (regular columns by the
batched Newton steps; one class, one distinct prediction, separation and clipped probabilities through the scalar
fit), and the loess's kernel-product path equals its gather path."""

from __future__ import annotations

import numpy as np
from scipy import special

from calib_core.metrics.classification_clinical_batch import recalibration_columns
from calib_core.metrics.classification_clinical_fit import logistic_recalibration
from calib_core.metrics.classification_loess import _Smoother

FIELDS = ("intercept", "slope", "intercept_se", "slope_se")


def _columns(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(-1.0, 1.2, (n, 6))
    p = special.expit(x)
    y = (rng.random((n, 6)) < special.expit(0.8 * x + 0.2)).astype(float)  # miscalibrated: slope 0.8
    y[:, 1] = 0.0  # one class only
    p[:, 2] = 0.3  # one distinct prediction
    y[:, 3] = (p[:, 3] > np.median(p[:, 3])).astype(float)  # perfect separation (Firth)
    p[:40, 4] = 0.0  # clipped probabilities
    p[40:60, 4] = 1.0
    return p, y


def test_batched_fits_equal_the_scalar_fits_column_by_column():
    p, y = _columns()
    citl, cox = recalibration_columns(p, y)
    for k in range(p.shape[1]):
        for fit, fix in ((citl[k], True), (cox[k], False)):
            ref = logistic_recalibration(p[:, k], y[:, k], fix_slope=fix)
            for field in FIELDS:
                a, b = getattr(fit, field), getattr(ref, field)
                assert (np.isnan(a) and np.isnan(b)) or abs(a - b) <= 1e-9 * max(1.0, abs(b)), (k, fix, field)
            assert (fit.n_clipped, fit.separated, fit.fixed_slope, fit.reason) == (
                ref.n_clipped, ref.separated, ref.fixed_slope, ref.reason), (k, fix)
    assert cox[3].separated and np.isnan(cox[1].slope) and np.isnan(cox[2].slope) and cox[4].n_clipped == 60
    assert abs(cox[0].slope - 0.8) < 4 * cox[0].slope_se  # the true slope, within the fit's own error


def test_loess_kernel_products_equal_the_gather_path():
    rng = np.random.default_rng(3)
    x = np.sort(np.round(rng.beta(0.5, 3.0, 4000), 3))  # skewed, with ties
    y = (rng.random(x.size) < x).astype(float)
    w = rng.integers(0, 4, x.size).astype(float)
    for weights, robust in ((np.ones_like(x), np.ones_like(x)), (w, rng.uniform(0.0, 1.0, x.size))):
        for degree in (0, 1):
            sm = _Smoother(x, y, weights, 0.3 * weights.sum(), degree)
            t = np.concatenate([np.linspace(0.0, x.max(), 57), x[::97]])
            h = sm.radius(t)
            left = np.searchsorted(x, t - h - 1e-12, side="left")
            right = np.searchsorted(x, t + h + 1e-12, side="right")
            gather = sm._fit_chunk(t, h, left, right, int((right - left).max()), robust)
            fast = sm.fit(t, robust)
            np.testing.assert_allclose(fast, gather, rtol=0, atol=1e-10)
