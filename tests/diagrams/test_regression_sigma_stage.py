"""The staged re-bin's pieces equal what the fresh diagnosis computes, bit for bit: equal-width σ-bins from the σ
order are the rows' own bin integers, and the Levi table from a design drawn once is ``levi_bins_table``'s."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.base.binning import equal_width_bins
from calib_core.diagrams.regression import levi_bins_table
from calib_core.diagrams.regression_sigma_stage import (
    bins_from_bounds,
    levi_design,
    levi_table_from_design,
    prime_sigma_bins,
)
from calib_core.metrics.regression import RegressionRows


def _rows(n: int, seed: int, ties: bool, spread: float, zeros: int = 0) -> RegressionRows:
    rng = np.random.default_rng(seed)
    sigma = rng.lognormal(0.0, spread, n)
    if ties:  # few distinct σ: runs of equal σ fall on the edges
        sigma = np.round(sigma, 1) + 0.1
    sigma[:zeros] = 0.0
    mean = rng.standard_normal(n)
    y = mean + 1.3 * np.maximum(sigma, 0.1) * rng.standard_t(3, n)
    with np.errstate(all="ignore"):
        return RegressionRows(y, cc.Gaussian(mean, sigma))


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 2_000), nb=st.integers(1, 60), seed=st.integers(0, 2**31), ties=st.booleans(),
       spread=st.sampled_from([0.0, 0.3, 2.0]), zeros=st.integers(0, 5))
def test_width_bins_from_the_sigma_order_are_the_rows_own(n, nb, seed, ties, spread, zeros):
    rows = _rows(n, seed, ties, spread, min(zeros, n))
    primed = rows.detached()
    prime_sigma_bins(primed, nb, "width")
    expected = equal_width_bins(rows.sigma, nb, closed="left")[0]
    np.testing.assert_array_equal(primed.sigma_bins(nb, "width"), expected)
    # and every sum read from them: bit for bit
    for a, b in zip(primed.sigma_bin_sums(nb, "width"), rows.sigma_bin_sums(nb, "width")):
        np.testing.assert_array_equal(a, b)
    assert np.array_equal(primed.ence(n_bins=nb, binning="width"), rows.ence(n_bins=nb, binning="width"),
                          equal_nan=True)


def test_count_bins_and_non_finite_sigma_are_left_to_the_rows():
    rows = _rows(50, 1, False, 0.5)
    prime_sigma_bins(rows, 5, "count")
    assert ("count", 5) not in rows.__dict__.get("_bin_cache", {})
    with np.errstate(all="ignore"):
        inf = RegressionRows(np.zeros(3), cc.Gaussian(np.zeros(3), np.array([1.0, np.inf, 2.0])))
    prime_sigma_bins(inf, 2, "width")
    assert ("width", 2) not in inf.__dict__.get("_bin_cache", {})


def test_bins_from_bounds():
    order = np.array([3, 1, 0, 2])
    np.testing.assert_array_equal(bins_from_bounds(order, np.array([0, 2, 2, 4])), [2, 0, 2, 0])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 3_000), nb=st.integers(1, 40), seed=st.integers(0, 2**31), ties=st.booleans(),
       binning=st.sampled_from(["count", "width"]), boot_seed=st.integers(0, 10**6),
       n_resamples=st.sampled_from([1, 50, 1000]))
def test_levi_table_from_a_design_drawn_once_is_levi_bins_table(n, nb, seed, ties, binning, boot_seed,
                                                                  n_resamples):
    rows = _rows(n, seed, ties, 0.5)
    design = levi_design(n, n_resamples, boot_seed)
    expected = levi_bins_table(rows.detached(), n_bins=nb, binning=binning, n_resamples=n_resamples, seed=boot_seed)
    for _ in range(2):  # the design serves again (read-only, never changed)
        got = levi_table_from_design(rows.detached(), design, n_bins=nb, binning=binning)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_levi_table_at_1e5_rows_both_binnings():
    rows = _rows(100_000, 4, False, 0.5)
    design = levi_design(rows.n, 1000, 0)
    for nb, binning in ((15, "count"), (16, "width"), (50, "width")):
        primed = rows.detached()
        prime_sigma_bins(primed, nb, binning)
        pd.testing.assert_frame_equal(levi_table_from_design(primed, design, n_bins=nb, binning=binning),
                                      levi_bins_table(rows.detached(), n_bins=nb, binning=binning,
                                                      n_resamples=1000, seed=0), check_exact=True)


def test_a_design_of_other_rows_is_refused():
    import pytest

    with pytest.raises(ValueError, match="cannot serve"):
        levi_table_from_design(_rows(10, 1, False, 0.5), levi_design(11, 5, 0), n_bins=3, binning="count")
