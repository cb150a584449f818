"""Percentile intervals of no replicates at all: NaN ends, never NumPy's IndexError (a one-class file whose
probabilities are all 0 or 1 gives the smooth ECE no null draws)."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.base.significance import percentile_interval


def test_no_replicates_give_nan_ends():
    lo, hi = percentile_interval(np.zeros(0))
    assert lo.shape == hi.shape == (1,) and np.isnan(lo).all() and np.isnan(hi).all()
    lo, hi = percentile_interval(np.zeros((0, 3)), level=0.9)
    assert lo.shape == (3,) and np.isnan(hi).all()


def test_replicates_unchanged():
    x = np.arange(101.0)
    lo, hi = percentile_interval(x, level=0.9)
    assert (float(lo[0]), float(hi[0])) == pytest.approx((5.0, 95.0), abs=1e-12)
