"""The compiled null draws of the CORP quantile reliability band take NumPy's random numbers in NumPy's order: the
same histogram of splits bit for bit, the generator left in the same state (hypothesis over probabilities at 0, 1,
in the tails, in the middle, groups from 1 row, binomial by inversion and by BTPE, normal cells); the grid's
quantiles without partitions equal ``np.quantile`` bit for bit; the diagram's bands are those of the NumPy code
(recorded before the kernel)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core.base.regression import Gaussian, QuantileSet
from calib_core.metrics.regression_decomposition import quantile_reliability
from calib_core.metrics.regression_decomposition_kernels import (
    band_split_counts,
    band_split_counts_numpy,
    rows_cdf,
    sorted_quantile,
)

_P = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 1e-300, 1.0 - 1e-16, 0.02, 0.98]),
               st.floats(0.0, 1.0), st.floats(0.0, 0.05), st.floats(0.95, 1.0))


@settings(max_examples=30, deadline=None)
@given(data=st.data(), groups=st.integers(1, 12), grid=st.integers(1, 70), r=st.integers(1, 9),
       tau=st.sampled_from([0.05, 0.25, 0.5, 0.75, 0.95, 0.3]), normal_above=st.sampled_from([0.0, 5.0, 25.0, 1e9]),
       seed=st.integers(0, 2**32 - 1))
def test_compiled_band_draws_equal_numpy_bit_for_bit(data, groups, grid, r, tau, normal_above, seed):
    p_bar = np.array(data.draw(st.lists(_P, min_size=groups * grid, max_size=groups * grid))).reshape(groups, grid)
    n_g = np.array(data.draw(st.lists(st.sampled_from([1, 2, 7, 40, 90, 200, 1000, 5000]), min_size=groups,
                                       max_size=groups)), dtype=float)
    a_rng, b_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    a = band_split_counts(a_rng, p_bar, n_g, tau, normal_above, r)
    b = band_split_counts_numpy(b_rng, p_bar, n_g, tau, normal_above, r)
    assert np.array_equal(a, b)
    assert a_rng.integers(2**62) == b_rng.integers(2**62)  # the same random numbers were taken


def test_compiled_band_draws_at_the_page_size_equal_numpy():
    """R = 200, G = 100, C = 256 with groups of 1,000 rows (the 1e5-row page): normal and binomial blocks."""
    rng = np.random.default_rng(1)
    c = np.linspace(-3.0, 3.0, 256)
    p_bar = Gaussian(np.linspace(-1.0, 1.0, 100), np.full(100, 0.5)).cdf(np.broadcast_to(c, (100, 256)))
    n_g = np.full(100, 1000.0) + rng.integers(0, 3, 100)
    for tau in (0.05, 0.95):
        a = band_split_counts(np.random.default_rng(7), p_bar, n_g, tau, 25.0, 200)
        assert np.array_equal(a, band_split_counts_numpy(np.random.default_rng(7), p_bar, n_g, tau, 25.0, 200))


@pytest.mark.parametrize("p", [np.nan, -0.5, 1.5])
def test_probabilities_outside_the_unit_interval_take_the_numpy_path(p):
    p_bar, n_g = np.array([[p, 0.3]]), np.array([30.0])
    try:
        expected = band_split_counts_numpy(np.random.default_rng(0), p_bar, n_g, 0.5, 25.0, 3)
    except ValueError as error:  # NumPy refuses such a binomial p: so does the compiled path
        with pytest.raises(ValueError, match=str(error)[:10]):
            band_split_counts(np.random.default_rng(0), p_bar, n_g, 0.5, 25.0, 3)
    else:
        assert np.array_equal(band_split_counts(np.random.default_rng(0), p_bar, n_g, 0.5, 25.0, 3), expected)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=60),
       q=st.lists(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0, 0.5])), min_size=1, max_size=20))
def test_sorted_quantile_equals_numpy_quantile_bit_for_bit(values, q):
    v, q = np.array(values), np.array(q)
    s = np.sort(v)
    assert np.array_equal(sorted_quantile(s.__getitem__, v.size, q), np.quantile(v, q))
    distinct, inverse = np.unique(v, return_inverse=True)  # the targets' path: distinct values, cumulative counts
    cum = np.cumsum(np.bincount(inverse))
    got = sorted_quantile(lambda i: distinct[np.searchsorted(cum, i, side="right")], v.size, q)
    assert np.array_equal(got, np.quantile(v, q))


def test_rows_cdf_of_a_gaussian_is_the_repeated_rows_cdf():
    rng = np.random.default_rng(2)
    d = Gaussian(rng.normal(size=50), 0.1 + rng.random(50))
    rows, c = rng.integers(0, 50, 17), np.sort(rng.normal(size=9))
    ref = d.take(np.repeat(rows, c.size)).cdf(np.tile(c, rows.size)).reshape(rows.size, c.size)
    assert np.array_equal(rows_cdf(d, rows, c), ref)
    qs = QuantileSet(np.array([0.1, 0.5, 0.9]), np.sort(rng.normal(size=(50, 3)), 1))
    ref = qs.take(np.repeat(rows, c.size)).cdf(np.tile(c, rows.size)).reshape(rows.size, c.size)
    assert np.array_equal(rows_cdf(qs, rows, c), ref)


def _case(n, seed):
    rng = np.random.default_rng(seed)
    mu, sigma = rng.normal(size=n), 0.5 + rng.random(n)
    return mu + 1.4 * sigma * rng.standard_normal(n), Gaussian(mu, sigma)


@pytest.mark.parametrize("n, seed, tau, low, high", [
    (400, 1, 0.5, "-0x1.30189fbcc50d9p+5", "0x1.df0477c84c98cp+4"),
    (5000, 2, 0.95, "0x1.1c1c71c3b5712p+7", "0x1.74d8fe30b3556p+7"),
    (20000, 3, 0.05, "-0x1.654a279a3bf0ap+7", "-0x1.2be5574bd9506p+7"),
    (9000, 4, 0.25, "-0x1.3bdff00010a96p+6", "-0x1.9f9c09e13397bp+5"),
])
def test_consistency_band_is_the_one_of_the_numpy_draws(n, seed, tau, low, high):
    """Sums of the band's ends as the NumPy implementation computed them (recorded before the kernel; exact)."""
    y, d = _case(n, seed)
    bands = quantile_reliability(y, d, tau=tau).bands
    assert float(bands["consistency_low"].sum()) == float.fromhex(low)
    assert float(bands["consistency_high"].sum()) == float.fromhex(high)


def _isotonic_numpy(x, y, tau):
    """The isotonic τ-quantile fit through the NumPy threshold recursion (the code before the compiled sweep)."""
    from calib_core.base.binning import stable_argsort
    from calib_core.metrics.regression_isotonic_quantile import _threshold_partition

    order = stable_argsort(x)
    values, inverse = np.unique(y, return_inverse=True)
    starts, lo, _ = _threshold_partition(x[order], inverse[order], values.size, tau)
    out = np.empty(x.size)
    out[order] = np.repeat(values[lo], np.diff(np.append(starts, x.size)))
    return out


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n=st.integers(1, 300), x_levels=st.integers(1, 40), y_levels=st.integers(1, 400),
       tau=st.one_of(st.sampled_from([0.05, 0.25, 0.5, 0.75, 0.95]), st.floats(0.001, 0.999)),
       seed=st.integers(0, 2**32 - 1))
def test_compiled_isotonic_quantile_fit_equals_the_numpy_recursion(data, n, x_levels, y_levels, tau, seed):
    """Ties in x and y, few and many segments (more than 64 per pass: NumPy's reduceat branch)."""
    from calib_core.metrics.regression_isotonic_quantile import isotonic_quantile_regression

    rng = np.random.default_rng(seed)
    x = rng.integers(0, x_levels, n).astype(float) + (rng.random(n) if data.draw(st.booleans()) else 0.0)
    y = rng.integers(0, y_levels, n) * 0.1 + 0.3 * x
    assert np.array_equal(isotonic_quantile_regression(x, y, tau), _isotonic_numpy(x, y, tau))


def test_compiled_isotonic_quantile_fit_equals_the_numpy_recursion_at_1e5_rows():
    rng = np.random.default_rng(3)
    x = rng.normal(size=100_000)
    y = x + rng.standard_t(3, size=x.size)
    from calib_core.metrics.regression_isotonic_quantile import isotonic_quantile_regression

    for tau in (0.05, 0.5):
        assert np.array_equal(isotonic_quantile_regression(x, y, tau), _isotonic_numpy(x, y, tau))
