"""ENCE's interval replicates: one product of the bootstrap weights with the per-(block, bin) sums side by side gives
the numbers of the two products it replaces (to rounding: BLAS may order a dot product differently for other
shapes), and the test's record follows them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.base import significance as sig
from calib_core.inference.regression_ence import _ence_from_bin_sums, ence_test
from calib_core.metrics.regression import RegressionRows


@settings(max_examples=40, deadline=None)
@given(r=st.integers(1, 300), g=st.integers(1, 400), nb=st.integers(1, 60), seed=st.integers(0, 2**31))
def test_one_product_equals_two_products_to_rounding(r, g, nb, seed):
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(g, np.full(g, 1.0 / g), size=r).astype(float)
    bs_var = rng.gamma(2.0, 1.0, size=(g, nb)) * (rng.random((g, nb)) < 0.9)
    bs_sq = rng.standard_cauchy((g, nb)) ** 2
    both = weights @ np.hstack([bs_var, bs_sq])
    np.testing.assert_allclose(both[:, :nb], weights @ bs_var, rtol=1e-12, atol=0)
    np.testing.assert_allclose(both[:, nb:], weights @ bs_sq, rtol=1e-12, atol=0)


def _reference_interval(r, ids, g, weights, nb, binning, level):
    """The replicates and their percentile ends as ENCE's test computed them with two products."""
    b = r.sigma_bins(nb, binning)
    idx = ids * nb + b
    bs_var = np.bincount(idx, weights=r.var, minlength=g * nb).reshape(g, nb)
    bs_sq = np.bincount(idx, weights=r.sq_err, minlength=g * nb).reshape(g, nb)
    return _ence_from_bin_sums(weights @ bs_var, weights @ bs_sq)


def test_ence_test_record_matches_the_two_product_replicates():
    rng = np.random.default_rng(3)
    n = 4_000
    sigma = rng.uniform(0.2, 2.0, n)
    y = 1.4 * sigma * rng.standard_normal(n)  # σ too small: the test rejects, the interval is not clipped to 0
    rows = RegressionRows(y, cc.Gaussian(np.zeros(n), sigma))
    ids, g, weights, _ = sig.block_design(n, 200, 500, (0, 12))
    for nb, binning in ((15, "count"), (16, "width"), (7, "count")):
        value = rows.ence(n_bins=nb, binning=binning)
        rec: dict = {}
        ence_test(rec, value, rows, (0.0, 1.0, 0.0, 3.0), None, ids, g, weights, nb, binning, 500,
                  np.random.default_rng(1), 0.95)
        rep = _reference_interval(rows, ids, g, weights, nb, binning, 0.95)
        lo, hi = sig.basic_interval(value, rep, 0.95)
        q_lo, q_hi = np.nanquantile(rep, [0.025, 0.975])
        assert rec["p_value"] < 0.01  # rejected: the lower end is not set to 0
        np.testing.assert_allclose(rec["ci_low"], max(0.0, min(float(lo[0]), float(q_lo))), rtol=1e-12)
        np.testing.assert_allclose(rec["ci_high"], max(0.0, float(hi[0]), float(q_hi)), rtol=1e-12)
