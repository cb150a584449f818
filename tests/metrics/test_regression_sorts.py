"""The compiled packed argsort of σ and |ε| against NumPy's stable argsort and ``argsort_details``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core.base.binning import argsort_details
from calib_core.metrics.regression_sorts import packed_argsort


def _check(x, absolute):
    got = packed_argsort(x, absolute=absolute)
    v = np.abs(x) if absolute else x
    np.testing.assert_array_equal(got.order, np.argsort(v, kind="stable"))
    assert got.distinct == argsort_details(v).distinct
    assert got.sorted_values is None


@pytest.mark.parametrize("absolute", [False, True])
@pytest.mark.parametrize("case", ["spread", "near", "ties", "long_ties", "zeros", "nan", "inf", "tiny"])
def test_packed_argsort_is_the_stable_argsort(case, absolute):
    rng = np.random.default_rng(len(case))
    n = 50_000
    x = rng.uniform(0.1, 1.0, n) * rng.choice([-1.0, 1.0], n)
    if case == "near":  # neighbours within a few ulps: runs that share their value bits
        x = 1.0 + rng.integers(-3000, 3000, n) * np.spacing(1.0)
    elif case == "ties":
        x = np.round(x, 3)
    elif case == "long_ties":  # runs longer than 64 rows: handed to argsort_details
        x = np.round(x, 1)
    elif case == "zeros":
        x[::7] = 0.0
        x[::11] = -0.0
    elif case == "nan":
        x[5] = np.nan
    elif case == "inf":
        x[[3, 9]] = np.inf
        x[4] = -np.inf
    elif case == "tiny":
        x = x * 1e-310
    _check(x, absolute)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 1.0 + 2**-52, 1.0 - 2**-53, 2.5, -2.5, 1e-300, np.inf]),
                min_size=0, max_size=300), st.booleans())
def test_packed_argsort_with_ties_and_signed_zeros(values, absolute):
    _check(np.array(values, dtype=float), absolute)


@pytest.mark.parametrize("absolute", [False, True])
@pytest.mark.parametrize("case", ["spread", "near", "ties", "long_ties"])
def test_ranks_are_the_inverse_of_the_order(case, absolute):
    from calib_core.metrics.regression_sorts import packed_argsort_ranks

    rng = np.random.default_rng(3)
    x = rng.standard_normal(20_000)
    if case == "near":
        x = 1.0 + rng.integers(-500, 500, x.size) * np.spacing(1.0)
    elif case == "ties":
        x = np.round(x, 3)
    elif case == "long_ties":
        x = np.round(x, 1)
    result, rank = packed_argsort_ranks(x, absolute=absolute)
    np.testing.assert_array_equal(result.order, np.argsort(np.abs(x) if absolute else x, kind="stable"))
    np.testing.assert_array_equal(rank[result.order], np.arange(x.size))


@pytest.mark.parametrize("n", [1, 2, 7, 15, 16, 1001, 50_003])
@pytest.mark.parametrize("n_bins", [1, 3, 15, 40])
def test_bins_from_ranks_equal_equal_count_bins(n, n_bins):
    from calib_core.base.binning import equal_count_bins, stable_argsort
    from calib_core.metrics.regression_sorts import equal_count_bins_from_ranks, rank_d2

    rng = np.random.default_rng(n * n_bins)
    s = np.round(rng.uniform(0.1, 2.0, n), 2)
    order = stable_argsort(s)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    np.testing.assert_array_equal(equal_count_bins_from_ranks(rank, n_bins), equal_count_bins(s, n_bins, order=order))
    other = rng.permutation(n)
    assert rank_d2(rank, other) == float(np.dot((rank - other).astype(float), (rank - other).astype(float)))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 3_000_000), st.integers(1, 5000))
def test_bins_from_ranks_are_the_integer_floor_at_every_position(n, n_bins):
    # the bins come from a float quotient put right by integer comparisons: equal to ⌊p·B/N⌋ at the positions where
    # an error would show (each bin's first and last position, the ends), for N up to 3e6 and B up to 5000 (> N too)
    from calib_core.metrics.regression_sorts import equal_count_bins_from_ranks

    k = np.arange(n_bins + 1, dtype=np.int64)
    starts = (k * n + n_bins - 1) // n_bins  # first position of every bin (⌈kN/B⌉)
    probe = np.unique(np.clip(np.concatenate([starts - 1, starts, starts + 1, [0, n - 1]]), 0, n - 1))
    rank = np.zeros(n, dtype=np.int64)
    rank[: probe.size] = probe
    got = equal_count_bins_from_ranks(rank, n_bins)[: probe.size]
    np.testing.assert_array_equal(got, (probe * n_bins) // n)
