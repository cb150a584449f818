"""Sharpness √(mean σ²) is scale-free: exact to rounding for any finite σ (σ² used to overflow at σ ≈ 1e170 and
underflow at σ ≈ 1e-170); the bootstrap replicates of the diagnosis take the same route."""

from __future__ import annotations

from decimal import Decimal, getcontext

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.base.regression import Gaussian
from calib_core.metrics import regression as rm
from calib_core.metrics.regression_rows import RegressionRows, root_mean_square


def _exact_rms(s: np.ndarray) -> float:
    getcontext().prec = 60
    total = sum((Decimal(float(v)) ** 2 for v in s), Decimal(0))
    return float((total / Decimal(s.size)).sqrt())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False), min_size=1,
                max_size=30))
def test_root_mean_square_equals_the_exact_value_for_any_finite_sigma(values):
    s = np.asarray(values, dtype=float)
    assert root_mean_square(s) == pytest.approx(_exact_rms(s), rel=1e-13)


@pytest.mark.parametrize("scale", [1e-170, 1e-160, 1.0, 1e160, 1e170, 1e300, 1e-300])
def test_sharpness_at_every_magnitude(scale):
    rng = np.random.default_rng(3)
    s = rng.uniform(0.5, 1.5, 40)
    dist = Gaussian(np.zeros(40), s * scale)
    want = _exact_rms(s * scale)
    assert rm.sharpness(None, dist) == pytest.approx(want, rel=1e-13)
    with np.errstate(all="ignore"):
        stats = rm.summary_statistics(RegressionRows(np.zeros(40), dist))
        plain = rm.summary_statistics(RegressionRows(np.zeros(40), Gaussian(np.zeros(40), s)))
    assert stats["sharpness"] == pytest.approx(want, rel=1e-13)
    assert stats["cv"] == pytest.approx(plain["cv"], rel=1e-12)


def test_sharpness_unchanged_bit_for_bit_in_the_ordinary_range():
    rng = np.random.default_rng(4)
    s = rng.uniform(1e-3, 1e3, 500)
    assert root_mean_square(s) == float(np.sqrt(np.mean(s * s)))


def test_diagnosis_interval_of_sharpness_scales_with_sigma():
    rng = np.random.default_rng(0)
    n = 120
    mean, std = rng.normal(size=n), rng.uniform(0.5, 1.5, n)
    y = mean + std * rng.normal(size=n)
    values = {}
    for scale in (1.0, 2.0**100, 1e-170, 1e170):
        frame = pd.DataFrame({"y": y * scale, "mean": mean * scale, "std": std * scale})
        ps = cc.load_predictions(frame.to_csv(index=False).encode(), source="scaled.csv")
        with np.errstate(all="ignore"):
            m = cc.diagnose(ps, n_resamples=40, n_simulations=0).metrics.set_index("metric")
        values[scale] = m.loc["sharpness", ["value", "ci_low", "ci_high"]].to_numpy(float) / scale
    # a power of two changes no rounding: the same numbers bit for bit
    np.testing.assert_array_equal(values[2.0**100], values[1.0])
    for scale in (1e-170, 1e170):  # no over- or underflow: the value to rounding, a finite interval around it
        assert values[scale][0] == pytest.approx(values[1.0][0], rel=1e-12)
        assert values[scale][1] < values[scale][0] < values[scale][2]
        np.testing.assert_allclose(values[scale][1:], values[1.0][1:], rtol=0.01)
