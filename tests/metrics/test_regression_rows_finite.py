"""Which rows have a finite z, and how many overflow in z², against the plain mask-based reference."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.metrics import regression_rows as rr

_VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1e-300, 1e300]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_VALUES, _VALUES, st.one_of(st.floats(0.0, 1e308), st.sampled_from([0.0, 1e-300]))),
                min_size=0, max_size=12))
def test_finite_z_and_square_overflow_match_the_mask(rows):
    y, mean, sigma = (np.array([r[i] for r in rows], dtype=float) for i in range(3))
    with np.errstate(all="ignore"):
        r = rr.RegressionRows(y, cc.Gaussian(mean, sigma) if len(rows) else cc.Gaussian(np.zeros(0), np.ones(0)))
        finite = np.isfinite(r.z)
        counts = rr.undefined_z_counts(r)
    if finite.all():
        assert r.z_ok is None and r.n_z_excluded == 0
        assert r.z_range == ((float(r.z.min()), float(r.z.max())) if r.n else (0.0, 0.0))
    else:
        assert r.z_range is None
        np.testing.assert_array_equal(r.z_ok, finite)
        assert r.n_z_excluded == int((~finite).sum())
    expected = int(np.count_nonzero(np.abs(r.z[finite]) > np.sqrt(np.finfo(float).max)))
    assert counts.get("z_square_overflow", 0) == expected


def test_detached_rows_keep_the_range():
    r = rr.RegressionRows(np.array([0.0, 2.0]), cc.Gaussian(np.zeros(2), np.ones(2)))
    assert r.z_range == (0.0, 2.0)
    assert r.detached(keep=()).z_range == (0.0, 2.0)
