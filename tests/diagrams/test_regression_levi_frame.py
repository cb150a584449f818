"""The Levi σ-bin table built from the non-empty bins' columns equals the full table filtered afterwards."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.diagrams.regression import _sigma_range_by_bin, levi_bins_table
from calib_core.metrics.regression import RegressionRows


def _reference(rows: RegressionRows, n_bins: int, binning: str) -> pd.DataFrame:
    """The table as it was built before: every bin in one frame, the empty ones dropped, the index reset."""
    cnt, s_var, s_err = rows.sigma_bin_sums(n_bins, binning)
    smin, smax = _sigma_range_by_bin(rows, cnt)
    with np.errstate(invalid="ignore", divide="ignore"):
        rmv, rmse = np.sqrt(s_var / cnt), np.sqrt(s_err / cnt)
    table = pd.DataFrame({"bin": np.arange(n_bins), "count": cnt.astype(np.int64), "sigma_low": smin,
                          "sigma_high": smax, "rmv": rmv, "rmse": rmse, "rmse_low": np.full(n_bins, np.nan),
                          "rmse_high": np.full(n_bins, np.nan)})
    return table[table["count"] > 0].reset_index(drop=True)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.integers(1, 50), st.sampled_from(["count", "width"]), st.integers(0, 10**6),
       st.booleans())
def test_levi_table_equals_the_filtered_full_table(n, n_bins, binning, seed, ties):
    rng = np.random.default_rng(seed)
    sigma = rng.uniform(0.1, 2.0, n)
    if ties:  # few distinct σ: many empty width bins
        sigma = np.round(sigma, 0) + 0.5
    rows = RegressionRows(rng.standard_normal(n), cc.Gaussian(np.zeros(n), sigma))
    got = levi_bins_table(rows, n_bins=n_bins, binning=binning, n_resamples=0)
    pd.testing.assert_frame_equal(got, _reference(rows, n_bins, binning), check_exact=True)


@pytest.mark.parametrize("binning", ["count", "width"])
def test_levi_table_with_intervals_keeps_the_non_empty_bins(binning):
    rng = np.random.default_rng(3)
    sigma = np.round(rng.uniform(0.1, 2.0, 300), 0) + 0.5
    rows = RegressionRows(rng.standard_normal(300), cc.Gaussian(np.zeros(300), sigma))
    got = levi_bins_table(rows, n_bins=12, binning=binning, n_resamples=30)
    ref = _reference(rows, 12, binning)
    pd.testing.assert_frame_equal(got.drop(columns=["rmse_low", "rmse_high"]),
                                  ref.drop(columns=["rmse_low", "rmse_high"]), check_exact=True)
    assert got.index.equals(pd.RangeIndex(len(ref))) and got["rmse_low"].notna().all()
