"""The compiled point passes of a Gaussian forecast set against the NumPy formulas they replace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from calib_core.base.binning import bin_sums, equal_count_bins, equal_width_bins, stable_argsort
from calib_core.base.regression import Gaussian
from calib_core.metrics import regression as rm
from calib_core.metrics import regression_point
from calib_core.metrics.regression_kernels import fused_sums, pairwise_sum, rank_difference_squares, sigma_bin_sums
from calib_core.metrics.regression_rows import RegressionRows
from calib_core.metrics.regression_wis import gaussian_wis_tables, hub_wis_setup, wis_parts


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 128, 129, 1000, 4099, 20011])
def test_pairwise_sum_is_numpys_sum_bit_for_bit(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n) * np.exp(3 * rng.standard_normal(n))
    assert pairwise_sum(x) == float(np.sum(x))


@pytest.mark.parametrize("n", [3, 8, 200, 5003])
def test_fused_sums_equal_numpy_columns(n):
    rng = np.random.default_rng(7 + n)
    s = rng.uniform(0.05, 2.0, n)
    eps = 1.3 * s * rng.standard_normal(n)
    z = eps / s
    u = special.ndtr(z)
    setup = hub_wis_setup()
    sums, counts = fused_sums(eps, z, s, u, [0.67, 1.64], gaussian_wis_tables(*setup))
    phi = np.exp((-0.5 * z) * z) / np.sqrt(2.0 * np.pi)
    exact = {"nll": (np.log(s) + 0.5 * np.log(2.0 * np.pi)) + (0.5 * z) * z,
             "crps": ((((2.0 * u) - 1.0) * z + 2.0 * phi) - 1.0 / np.sqrt(np.pi)) * s,
             "sq_err": eps * eps, "abs_err": np.abs(eps), "var": s * s, "sigma": s, "z": z, "z2": z * z,
             "log_z2": 2.0 * np.log(np.abs(z)), "phi": phi}
    for key, rows in exact.items():
        assert sums[key] == float(np.sum(rows)), key
    parts = wis_parts(eps, Gaussian(np.zeros(n), s))
    for key, rows in parts.columns().items():
        assert sums[key] / n == float(np.mean(rows)), key
    for i, k in enumerate([0.67, 1.64]):
        assert sums[f"penalty_{i}"] == pytest.approx(float(np.dot(s, np.maximum(np.abs(z) - k, 0.0))), rel=1e-12)
    d = z - float(np.mean(z))
    assert sums["d2"] == float(np.sum(d * d)) and sums["d4"] == float(np.sum((d * d) * (d * d)))
    assert sums["sigma_dev2"] == float(np.sum((s - float(np.mean(s))) ** 2))
    assert counts["eps_negative"] == int((eps < 0).sum()) and counts["zero_z"] == 0


def _both(y, mean, sd, monkeypatch):
    fast = rm.summary_statistics(RegressionRows(y, Gaussian(mean, sd)))
    monkeypatch.setattr(rm, "fused_eligible", lambda r: False)
    slow = rm.summary_statistics(RegressionRows(y, Gaussian(mean, sd)))
    monkeypatch.undo()
    return fast, slow


@pytest.mark.parametrize("case", ["plain", "ties", "zero_z", "big_sigma"])
def test_summary_statistics_fused_equals_numpy_path(case, monkeypatch):
    rng = np.random.default_rng(3)
    n = 3000
    mean = rng.standard_normal(n)
    sd = rng.uniform(0.1, 1.0, n)
    y = mean + 1.2 * sd * rng.standard_normal(n)
    if case == "ties":
        sd = np.round(sd, 1)
        y = mean + np.round(y - mean, 1)
    elif case == "zero_z":
        y[:5] = mean[:5]
    elif case == "big_sigma":  # σ² overflows: the NumPy path rescales
        sd = sd * 1e160
        y = mean + 1.2 * sd * rng.standard_normal(n)
    fast, slow = _both(y, mean, sd, monkeypatch)
    assert set(fast) == set(slow)
    for key in fast:
        a, b = fast[key], slow[key]
        if key.startswith("interval_score_"):  # a pairwise sum where NumPy took a dot product
            assert a == pytest.approx(b, rel=1e-12, abs=0.0), key
        else:
            assert a == b or (np.isnan(a) and np.isnan(b)), (key, a, b)


def test_lazy_rows_for_the_inference():
    rng = np.random.default_rng(5)
    n = 500
    sd = rng.uniform(0.5, 1.0, n)
    r = RegressionRows(sd * rng.standard_normal(n), Gaussian(np.zeros(n), sd))
    rm.summary_statistics(r)
    assert isinstance(r.__dict__["_wis_parts"], regression_point.LazyWisParts)
    parts = wis_parts(r.y, r.dist)
    np.testing.assert_array_equal(r.__dict__["_wis_parts"].wis, parts.wis)
    lz, ok = r.__dict__["_log_z2"]
    np.testing.assert_array_equal(lz, 2.0 * np.log(np.abs(r.z)))
    assert ok is None


@pytest.mark.parametrize("n_bins", [1, 3, 15, 40])
@pytest.mark.parametrize("ties", [False, True])
def test_sigma_bin_sums_equal_bincount(n_bins, ties):
    rng = np.random.default_rng(n_bins)
    n = 1237
    s = rng.uniform(0.1, 2.0, n)
    if ties:
        s = np.round(s, 1)
    e = rng.standard_normal(n) * s
    order = stable_argsort(s)
    b, cnt, sv, se = sigma_bin_sums(s, e, n_bins, order=order)
    ref_b = equal_count_bins(s, n_bins, order=order)
    np.testing.assert_array_equal(b, ref_b)
    for got, ref in zip((cnt, sv, se), bin_sums(ref_b, n_bins, s * s, e * e)):
        np.testing.assert_array_equal(got, ref)
    wb = equal_width_bins(s, n_bins, closed="left")[0]
    for got, ref in zip(sigma_bin_sums(s, e, n_bins, bins=wb)[1:], bin_sums(wb, n_bins, s * s, e * e)):
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("n", [2, 3, 50, 4001])
def test_spearman_without_ties_equals_the_tie_group_path(n, monkeypatch):
    rng = np.random.default_rng(n)
    a, b = stable_argsort(rng.standard_normal(n)), stable_argsort(rng.standard_normal(n))
    ra, rb = np.empty(n), np.empty(n)
    ra[a], rb[b] = np.arange(n), np.arange(n)
    assert rank_difference_squares(a, b) == float(np.dot(ra - rb, ra - rb))
    sd = rng.uniform(0.5, 1.5, n)
    y = sd * rng.standard_normal(n)
    fast = rm.summary_statistics(RegressionRows(y, Gaussian(np.zeros(n), sd)))["spearman_sigma_abs_error"]
    monkeypatch.setattr(rm, "rank_difference_squares", lambda *a: (_ for _ in ()).throw(AssertionError))
    r = RegressionRows(y, Gaussian(np.zeros(n), sd))
    r.compute_orders()
    r._distinct.clear()  # the tie-group path
    assert rm._stat_spearman(r, None) == fast


@pytest.mark.parametrize("n", [8191, 8192, 8193, 65537, 1_000_003])
def test_pairwise_sum_is_numpys_sum_past_the_buffer_size(n):
    """np.sum of a contiguous float64 array is one pairwise call over all of it, past NumPy's 8192-value buffer."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n) * np.exp(3 * rng.standard_normal(n))
    assert pairwise_sum(x) == float(np.sum(x)) and pairwise_sum(x) / n == float(np.mean(x))


def _ulp_neighbours(points, k=40):
    return np.concatenate([p + np.arange(-k, k + 1) * np.spacing(p) for p in points])


def test_compiled_normal_cdf_is_scipys_bit_for_bit():
    from calib_core.base.regression import norm_cdf
    from calib_core.metrics.regression_kernels import norm_cdf_rows

    rng = np.random.default_rng(11)
    branch = np.sqrt(2.0) * np.array([1.0, -1.0, 8.0, -8.0, np.sqrt(7.09782712893383996732e2),
                                      -np.sqrt(7.09782712893383996732e2)])  # −z/√2 at erfc's branch points
    z = np.concatenate([rng.standard_normal(200_000) * 3, rng.uniform(-45, 45, 100_000), _ulp_neighbours(branch),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e308, -1e308]])
    got, ref = norm_cdf_rows(z), norm_cdf(z)
    assert np.array_equal(got, ref, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(ref))


@pytest.mark.parametrize("n", [1, 2, 1023, 1024, 1025, 4097])
def test_compiled_normal_cdf_blocks_match_scipy_at_every_length(n):
    # the kernel works in blocks of 1,024 rows and overwrites the tail rows of each block: lengths around the
    # block size, every block mixing both branches, the special values at the blocks' first and last rows
    from calib_core.base.regression import norm_cdf
    from calib_core.metrics.regression_kernels import norm_cdf_rows

    z = np.random.default_rng(n).standard_normal(n) * 2.5
    specials = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -40.0, 40.0, np.sqrt(2.0), -np.sqrt(2.0)])
    z[: min(n, specials.size)] = specials[: min(n, specials.size)]
    z[-1] = np.nan if n > 1 else z[-1]
    got, ref = norm_cdf_rows(z), norm_cdf(z)
    assert np.array_equal(got.view(np.int64), ref.view(np.int64))  # every bit, NaN and signs included
    z32 = z.astype(np.float32)
    assert np.array_equal(norm_cdf_rows(z32), norm_cdf(z32.astype(float)), equal_nan=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True), min_size=1, max_size=2100))
def test_compiled_normal_cdf_is_scipys_on_any_values(values):
    from calib_core.base.regression import norm_cdf
    from calib_core.metrics.regression_kernels import norm_cdf_rows

    z = np.array(values, dtype=float)
    got, ref = norm_cdf_rows(z), norm_cdf(z)
    assert np.array_equal(got, ref, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(ref))
