"""The fast paths of the regression point diagnostics equal the paths they replace: the Gaussian WIS in closed form
against the WIS from the 23 quantiles themselves (to 1e-12 relative on the means, to rounding per row), the bucket
table of positions against ``np.searchsorted`` (exactly), and the σ checks against their masked forms (exactly)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core.base.regression import Gaussian, norm_ppf
from calib_core.metrics import regression_wis as W
from calib_core.metrics.regression_rows import needs_rescaling


def _both(y: np.ndarray, dist: Gaussian) -> tuple[np.ndarray, np.ndarray]:
    levels = W.HUB_LEVELS
    lo, hi, med, _ = W.central_pairs(levels)
    alphas = 2.0 * levels[lo]
    with np.errstate(all="ignore"):
        slow = W._quantile_wis(y, dist, levels, lo, hi, med, alphas)
        fast = W._gaussian_wis(y, dist, levels, lo, hi, med, alphas)
        np.testing.assert_array_equal(fast[3], fast[0] + fast[1] + fast[2])
    return slow, fast[:3]


@pytest.mark.parametrize("offset", [0.0, 10.0, 1e4])
@pytest.mark.parametrize("seed", [0, 1])
def test_gaussian_wis_equals_quantile_wis(offset, seed):
    rng = np.random.default_rng(seed)
    n = 50_000
    mu = offset + rng.normal(size=n)
    sd = rng.uniform(0.01, 2.0, n)
    y = mu + 1.3 * sd * rng.standard_normal(n)
    slow, fast = _both(y, Gaussian(mu, sd))
    np.testing.assert_allclose(fast.mean(axis=1), slow.mean(axis=1), rtol=1e-12, atol=0)
    # per row: the old sums lose ~|μ|·2⁻⁵² per quantile to μ + σ z_τ
    scale = np.abs(mu) + sd + np.abs(y - mu)
    assert np.max(np.abs(fast - slow) / scale) < 1e-13
    parts = W.wis_parts(y, Gaussian(mu, sd))
    np.testing.assert_array_equal(parts.wis, parts.dispersion + parts.overprediction + parts.underprediction)


def test_gaussian_wis_edge_rows_take_the_old_path():
    mu = np.array([0.0, 1.0, 2.0, np.inf, 5.0, 0.0, 1.0])
    sd = np.array([0.0, 0.0, 1.0, 1.0, 1e300, 1.0, 2.0])
    y = np.array([1.0, 1.0, np.inf, 1.0, -1e300, 0.0, 1.0])  # σ = 0, y = μ with σ = 0, infinite y / μ, overflow
    slow, fast = _both(y, Gaussian(mu, sd))
    np.testing.assert_allclose(fast, slow, rtol=1e-13, atol=1e-300)


def test_gaussian_wis_at_the_levels_themselves():
    """Targets exactly at a quantile (z = z_τ) and just beside it: the term is 0 on either side."""
    z = np.sort(norm_ppf(W.HUB_LEVELS))
    y = np.concatenate([z, np.nextafter(z, np.inf), np.nextafter(z, -np.inf)])
    slow, fast = _both(y, Gaussian(np.zeros_like(y), np.ones_like(y)))
    np.testing.assert_allclose(fast, slow, rtol=1e-13, atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=40),
       st.lists(st.floats(-50, 50), min_size=2, max_size=30, unique=True))
def test_positions_equal_searchsorted(values, cuts):
    cut = np.sort(np.array(cuts))
    special_values = [np.inf, -np.inf, np.nan, 0.0, -0.0]
    z = np.concatenate([np.array(values), cut, np.nextafter(cut, np.inf), np.nextafter(cut, -np.inf), special_values])
    np.testing.assert_array_equal(W._positions(cut, z), np.searchsorted(cut, z, side="right"))


def test_positions_equal_searchsorted_at_the_hub_levels():
    cut = np.sort(norm_ppf(W.HUB_LEVELS))
    z = np.random.default_rng(3).standard_normal(200_000) * 2.0
    np.testing.assert_array_equal(W._positions(cut, z), np.searchsorted(cut, z, side="right"))


def _needs_rescaling_masked(sigma: np.ndarray) -> bool:
    """The former check, on the masked positive finite σ."""
    positive = sigma[np.isfinite(sigma) & (sigma > 0)]
    return bool(positive.size) and bool(positive.max() > 1e100 or positive.min() < 1e-100)


@pytest.mark.parametrize("sigma", [
    np.array([1.0, 2.0]), np.array([0.0, 1.0]), np.array([0.0, 0.0]), np.array([np.nan, 1.0]),
    np.array([np.inf, 1.0]), np.array([1e-200, 1.0]), np.array([1e200, 1.0]), np.array([0.0, 1e-200]),
    np.array([-1.0, 1.0]), np.array([np.nan, 1e200]), np.array([-np.inf, 1e-150]), np.array([1e100, 1e-100]),
])
def test_needs_rescaling_equals_the_masked_check(sigma):
    assert needs_rescaling(sigma) == _needs_rescaling_masked(sigma)


def test_normal_functions_in_one_buffer_equal_their_formulas_bit_for_bit():
    from scipy import special

    from calib_core.base.regression_distribution import norm_cdf, norm_pdf

    z = np.concatenate([np.random.default_rng(5).standard_normal(10_000) * 6, [0.0, -0.0, np.inf, -np.inf, 40.0]])
    np.testing.assert_array_equal(norm_cdf(z), 0.5 * special.erfc(-z / np.sqrt(2.0)))
    np.testing.assert_array_equal(norm_pdf(z), np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi))
    assert norm_cdf(0.3) == 0.5 * special.erfc(-0.3 / np.sqrt(2.0)) and np.ndim(norm_pdf(0.3)) == 0


def test_gaussian_row_scores_in_buffers_equal_their_formulas_bit_for_bit():
    from calib_core.metrics.regression_rows import RegressionRows

    rng = np.random.default_rng(6)
    mu, sd = rng.normal(size=5_000) * 4, rng.uniform(0.1, 3.0, 5_000)
    y = mu + sd * rng.standard_normal(5_000)
    r = RegressionRows(y, Gaussian(mu, sd))
    z, u, phi = r.z, r.u, r.phi
    np.testing.assert_array_equal(r.neg_logpdf, 0.5 * np.log(2.0 * np.pi) + np.log(sd) + 0.5 * z * z)
    np.testing.assert_array_equal(r.crps, sd * (z * (2.0 * u - 1.0) + 2.0 * phi - 1.0 / np.sqrt(np.pi)))
