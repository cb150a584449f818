"""loess_smooth (Cleveland 1979): statsmodels' lowess reproduced to 1e-6 (rows, ``delta``, robustness iterations,
``xvals``), weights (duplicated rows, zero weights), exact polynomials, degenerate neighbourhoods."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core.metrics.classification_loess import loess_smooth
from tests.peers import require_peer


def _data(n, seed, ties=True):
    rng = np.random.default_rng(seed)
    f = rng.beta(2, 3, n)
    if ties:
        f[: n // 5] = np.round(f[: n // 5], 2)
    y = (rng.random(n) < f).astype(float)
    return f, y


@pytest.mark.parametrize("n, seed", [(12, 1), (200, 2), (3000, 3)])
@pytest.mark.parametrize("span", [0.3, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("delta", [0.0, 0.001, 0.05])
def test_matches_statsmodels_lowess_at_the_rows(n, seed, span, delta):
    lowess = require_peer("statsmodels.nonparametric.smoothers_lowess").lowess
    f, y = _data(n, seed)
    ours = loess_smooth(f, y, span=span, delta=delta)
    theirs = lowess(y, f, frac=span, it=0, delta=delta, return_sorted=False)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
    assert np.allclose(loess_smooth(f, y, None, span=span, delta=delta), ours, rtol=0, atol=0)


@pytest.mark.parametrize("it", [1, 3])
def test_matches_statsmodels_with_robustness_iterations(it):
    lowess = require_peer("statsmodels.nonparametric.smoothers_lowess").lowess
    rng = np.random.default_rng(7)
    f = rng.random(400)
    y = np.sin(6 * f) + rng.standard_t(2, 400) * 0.3
    np.testing.assert_allclose(loess_smooth(f, y, span=0.4, delta=0.01, iterations=it),
                               lowess(y, f, frac=0.4, it=it, delta=0.01, return_sorted=False), rtol=0, atol=1e-6)
    at = np.linspace(0.05, 0.95, 19)
    np.testing.assert_allclose(loess_smooth(f, y, span=0.4, delta=0.0, iterations=it, at=at),
                               lowess(y, f, frac=0.4, it=it, xvals=at), rtol=0, atol=1e-6)


def test_matches_statsmodels_at_given_points_in_any_order():
    lowess = require_peer("statsmodels.nonparametric.smoothers_lowess").lowess
    f, y = _data(500, 11)
    at = np.random.default_rng(3).uniform(-0.2, 1.2, 41)  # unsorted, some outside the data's range
    np.testing.assert_allclose(loess_smooth(f, y, span=0.5, at=at), lowess(y, f, frac=0.5, it=0, xvals=at),
                               rtol=0, atol=1e-6)


def test_integer_weights_equal_duplicated_rows():
    f, y = _data(300, 5)
    w = np.random.default_rng(1).integers(0, 4, f.size).astype(float)
    rep = np.repeat(np.arange(f.size), w.astype(int))
    for delta in (0.0, 0.01):
        weighted = loess_smooth(f, y, w, span=0.6, delta=delta)
        duplicated = loess_smooth(f[rep], y[rep], span=0.6, delta=delta)
        # the duplicated data's fit at each duplicated row equals the weighted fit at that row
        np.testing.assert_allclose(weighted[rep], duplicated, rtol=0, atol=1e-10)
    at = np.linspace(0, 1, 21)
    np.testing.assert_allclose(loess_smooth(f, y, w, span=0.6, at=at), loess_smooth(f[rep], y[rep], span=0.6, at=at),
                               rtol=0, atol=1e-10)


@given(st.integers(0, 10_000), st.sampled_from([0, 1, 2]), st.floats(0.2, 1.0))
@settings(max_examples=25, deadline=None)
def test_polynomials_of_the_degree_are_reproduced(seed, degree, span):
    rng = np.random.default_rng(seed)
    f = rng.random(60)
    coef = rng.normal(size=3)
    y = sum(coef[p] * f ** p for p in range(degree + 1))
    np.testing.assert_allclose(loess_smooth(f, y, span=span, degree=degree, delta=0), y, rtol=0, atol=1e-6)


@given(st.integers(0, 10_000))
@settings(max_examples=25, deadline=None)
def test_row_order_does_not_matter_and_values_stay_in_range(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 80))
    f = np.round(rng.random(n), int(rng.integers(1, 4)))
    y = (rng.random(n) < 0.5).astype(float)
    w = rng.random(n) + 0.1
    perm = rng.permutation(n)
    base = loess_smooth(f, y, w, span=0.8, degree=0)
    np.testing.assert_allclose(loess_smooth(f[perm], y[perm], w[perm], span=0.8, degree=0), base[perm], atol=1e-12)
    assert np.all((base >= -1e-12) & (base <= 1 + 1e-12))  # a local mean of 0/1 stays in [0, 1]


def test_degenerate_neighbourhoods_are_local_means_never_infinite():
    f = np.array([0.2] * 8 + [0.9, 0.95])  # 80 % of the rows tied: radius 0 at 0.2 with span 0.5
    y = np.array([1, 0, 0, 1, 0, 0, 0, 1, 1, 0], float)
    out = loess_smooth(f, y, span=0.5, delta=0)
    assert np.allclose(out[:8], 3 / 8)
    assert np.all(np.isfinite(out))
    assert np.isnan(loess_smooth(f, y, np.zeros(10))).all()
    assert loess_smooth([0.3], [1.0]).tolist() == [1.0]
    assert loess_smooth(np.array([]), np.array([])).size == 0
    at = loess_smooth(f, y, at=[np.nan, 0.5])
    assert np.isnan(at[0]) and np.isfinite(at[1])


def test_zero_weight_rows_are_fitted_but_do_not_count():
    f, y = _data(200, 9)
    w = np.ones(200)
    w[::3] = 0.0
    keep = w > 0
    full = loess_smooth(f, y, w, span=0.5, delta=0)
    np.testing.assert_allclose(full[keep], loess_smooth(f[keep], y[keep], span=0.5, delta=0), atol=1e-10)
    assert np.all(np.isfinite(full))


@pytest.mark.parametrize("bad", [dict(span=0.0), dict(span=1.5), dict(degree=3), dict(delta=-1.0),
                                 dict(iterations=-1)])
def test_bad_settings_raise_value_errors(bad):
    with pytest.raises(ValueError):
        loess_smooth([0.1, 0.2, 0.3], [0, 1, 1], **bad)


def test_non_finite_rows_raise():
    with pytest.raises(ValueError, match="finite"):
        loess_smooth([0.1, np.nan], [0, 1])
