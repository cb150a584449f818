"""The σ-bin tables from the sorted σ equal those of the rows' own bins (RegressionRows.sigma_bin_sums, the Levi
table's σ ranges, ENCE) to 1e-12 relative, at every bin count and both binnings, ties included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.diagrams.regression import _sigma_range_by_bin, levi_bins_table
from calib_core.diagrams.regression_sigma_prefix import (
    ence_from_prefix,
    sigma_bin_bounds,
    sigma_bin_table,
    sigma_prefix,
)
from calib_core.metrics.regression import RegressionRows


def _rows(n: int, seed: int, ties: bool, spread: float) -> RegressionRows:
    rng = np.random.default_rng(seed)
    sigma = rng.lognormal(0.0, spread, n)
    if ties:  # few distinct σ: runs of equal σ straddle the bin boundaries
        sigma = np.round(sigma, 1) + 0.1
    mean = rng.standard_normal(n)
    y = mean + 1.3 * sigma * rng.standard_t(3, n)  # heavy-tailed errors: a bin's Σε² far from its neighbours'
    return RegressionRows(y, cc.Gaussian(mean, sigma))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3_000), nb=st.integers(1, 60), seed=st.integers(0, 2**31), ties=st.booleans(),
       spread=st.sampled_from([0.0, 0.3, 2.0]), binning=st.sampled_from(["count", "width"]))
def test_tables_equal_the_rows_bins(n, nb, seed, ties, spread, binning):
    rows = _rows(n, seed, ties, spread)
    prefix = sigma_prefix(rows)
    cnt, s_var, s_sq, lo, hi = sigma_bin_table(prefix, nb, binning)
    ref_cnt, ref_var, ref_sq = rows.sigma_bin_sums(nb, binning)
    np.testing.assert_array_equal(cnt, ref_cnt)
    np.testing.assert_allclose(s_var, ref_var, rtol=1e-12, atol=0)
    np.testing.assert_allclose(s_sq, ref_sq, rtol=1e-12, atol=0)
    ref_lo, ref_hi = _sigma_range_by_bin(rows, ref_cnt)
    np.testing.assert_array_equal(lo, ref_lo)
    np.testing.assert_array_equal(hi, ref_hi)
    # the boundaries are those of the rows' own bin index, read in σ order
    b_sorted = rows.sigma_bins(nb, binning)[rows.sigma_order]
    np.testing.assert_array_equal(np.repeat(np.arange(nb), np.diff(sigma_bin_bounds(prefix, nb, binning))), b_sorted)
    value, ref = ence_from_prefix(prefix, nb, binning), rows.ence(n_bins=nb, binning=binning)
    assert (np.isnan(value) and np.isnan(ref)) or abs(value - ref) <= 1e-12 * abs(ref)


def test_levi_table_columns_at_1e5_rows():
    rows = _rows(100_000, 7, False, 0.5)
    prefix = sigma_prefix(rows)
    for nb, binning in ((15, "count"), (16, "count"), (16, "width"), (50, "width")):
        table = levi_bins_table(rows, n_bins=nb, binning=binning, n_resamples=0)
        cnt, s_var, s_sq, lo, hi = sigma_bin_table(prefix, nb, binning)
        full = cnt > 0
        np.testing.assert_array_equal(table["count"], cnt[full])
        np.testing.assert_allclose(table["rmv"], np.sqrt(s_var[full] / cnt[full]), rtol=1e-12)
        np.testing.assert_allclose(table["rmse"], np.sqrt(s_sq[full] / cnt[full]), rtol=1e-12)
        np.testing.assert_array_equal(table["sigma_low"], lo[full])
        np.testing.assert_array_equal(table["sigma_high"], hi[full])
