"""Core claims of teaching labs 6–9 (calib_core.labs.three_names, accrue, quantile_reg, temperature).

Every lab's result is checked against an independent computation (order statistics written out, the toy sets'
true σ(x), scikit-learn/NumPy references) and against the claim the lab page makes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core.labs.three_names import NOISE_SHAPES, run_three_names

HYP = settings(max_examples=15, deadline=None, derandomize=True)


# ------------------------------------------------------------------------------------------------ lab 6
@HYP
@given(
    L=st.integers(60, 800),
    coverage=st.floats(0.5, 0.95),
    noise=st.sampled_from(NOISE_SHAPES),
    seed=st.integers(0, 50),
)
def test_three_names_endpoints_within_one_rank(L, coverage, noise, seed):
    r = run_three_names(L, 400, coverage=coverage, noise=noise, seed=seed, spread=1.7, shift=0.3)
    z = r.z_sorted
    b = r.bounds.set_index("method")
    alpha = 1.0 - coverage
    # CRUDE's bounds are the order statistics z_(⌊pL⌋+1) at p = (1 ∓ c)/2 (CRUDE Algorithm 1)
    p_lo, p_hi = 0.5 - coverage / 2.0, 0.5 + coverage / 2.0  # (the same floating-point p as the interval)
    assert b.loc["CRUDE", "lower_z"] == pytest.approx(z[int(p_lo * L)], abs=1e-12)
    assert b.loc["CRUDE", "upper_z"] == pytest.approx(z[min(int(p_hi * L), L - 1)], abs=1e-12)
    # signed conformal: the (L + 1) finite-sample ranks
    lo_rank = int(np.floor((L + 1) * alpha / 2 + 1e-9))
    hi_rank = int(np.ceil((L + 1) * (1 - alpha / 2) - 1e-9))
    assert b.loc["split conformal (signed)", "lower_z"] == pytest.approx(z[lo_rank - 1], abs=1e-12)
    assert b.loc["split conformal (signed)", "upper_z"] == pytest.approx(z[hi_rank - 1], abs=1e-12)
    for m in ("split conformal (signed)", "Kuleshov isotonic"):
        assert abs(b.loc[m, "lower_rank"] - b.loc["CRUDE", "lower_rank"]) <= 1
        assert abs(b.loc[m, "upper_rank"] - b.loc["CRUDE", "upper_rank"]) <= 1
        assert r.max_abs_difference[m] <= r.max_neighbour_gap * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("L, coverage", [(999, 0.9), (199, 0.8), (399, 0.5)])
def test_three_names_crude_equals_conformal_when_ranks_are_integers(L, coverage):
    """CRUDE §3.3: with (L + 1)α/2 an integer the two give identical intervals (difference exactly 0)."""
    r = run_three_names(L, 2000, coverage=coverage, seed=3)
    assert r.max_abs_difference["split conformal (signed)"] == 0.0
    b = r.bounds.set_index("method")
    assert b.loc["CRUDE", "coverage_test"] == b.loc["split conformal (signed)", "coverage_test"]


def test_three_names_coverage_is_nominal_and_uncalibrated_is_not():
    """Default lab: over-confident forecaster (spread 1.5); measured coverage 0.902 for all three, 0.73 before."""
    r = run_three_names()
    b = r.bounds.set_index("method")
    for m in ("CRUDE", "split conformal (signed)", "Kuleshov isotonic"):
        assert abs(b.loc[m, "coverage_test"] - 0.9) < 0.015
    assert b.loc["uncalibrated Gaussian", "coverage_test"] < 0.78
    # the uncalibrated bounds are the Gaussian ±1.645
    assert b.loc["uncalibrated Gaussian", "upper_z"] == pytest.approx(1.6448536, rel=1e-6)
    figs = r.figures()
    assert set(figs) == {"quantiles", "intervals", "coverage"}
    assert all(len(f.to_json()) < 100_000 for f in figs.values())
