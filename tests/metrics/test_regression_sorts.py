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
