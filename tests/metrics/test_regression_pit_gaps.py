"""The area and largest deviation of the PIT ECDF from one gap array, against the plain formulas bit for bit."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.metrics import regression_curves as rc
from calib_core.metrics import regression_rows as rr
from calib_core.metrics.regression import _stat_reliability_score, summary_statistics


def _plain(u_sorted: np.ndarray) -> tuple[float, float]:
    n = u_sorted.shape[0]
    d = np.arange(1, n + 1, dtype=float)
    d /= n
    d -= u_sorted
    e = d - 1.0 / n
    area = float(0.5 * (np.einsum("i,i->", d, np.abs(d)) - np.einsum("i,i->", e, np.abs(e))))
    return area, float(max(d.max(), 1.0 / n - d.min(), 0.0))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(-6.0, 6.0), min_size=1, max_size=300), st.integers(0, 2**31))
def test_area_and_deviation_match_the_plain_formulas(z, seed):
    rng = np.random.default_rng(seed)
    sigma = rng.uniform(0.5, 2.0, len(z))
    y = np.asarray(z) * sigma
    r = rr.RegressionRows(y, cc.Gaussian(np.zeros(len(z)), sigma))
    area, largest = _plain(r.u_sorted)
    assert rc.stat_area(r, None) == area
    assert rc.stat_max_deviation(r, None) == largest
    fresh = rr.RegressionRows(y, cc.Gaussian(np.zeros(len(z)), sigma))  # the other order of the two calls
    assert rc.stat_max_deviation(fresh, None) == largest and rc.stat_area(fresh, None) == area


def test_reliability_score_same_with_the_shared_buffer():
    rng = np.random.default_rng(3)
    mean, sigma = rng.normal(size=5000), rng.uniform(0.5, 2.0, 5000)
    y = mean + 1.3 * sigma * rng.normal(size=5000)
    r = rr.RegressionRows(y, cc.Gaussian(mean, sigma))
    summary_statistics(r)  # the compiled pass's sums are on the rows now
    assert "_fused" in r.__dict__
    z = r.z
    n = z.shape[0]
    weights = np.arange(1, n + 1, dtype=float) * 2.0 - 1.0
    plain = float(np.einsum("i,i->", z, 2.0 * r.u) / np.sqrt(2.0) / n
                  - np.einsum("i,i->", np.sort(z) / np.sqrt(2.0), weights) / n**2
                  + np.sqrt(2.0 * np.pi) * r.__dict__["_fused"]["sums"]["phi"] / (np.sqrt(np.pi) * n)
                  - 0.5 * np.sqrt(2.0 / np.pi))
    assert _stat_reliability_score(r, None) == plain
