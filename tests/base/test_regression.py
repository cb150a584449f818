"""Tests of the vectorised predictive distributions: Gaussian, QuantileSet, SampleSet.

Every closed form is checked against an independent computation: scipy.stats for the Gaussian,
numerical integration (scipy.integrate.quad) of the density / CDF for the QuantileSet, and the
brute-force O(M²) energy form and a quadrature of ∫(F − 1{x ≥ y})² for the SampleSet.  Peer
libraries (properscoring, scoringrules) are in ``tests/metrics/test_regression_crosscheck.py``.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, stats

import calib_core as cc
from calib_core.base.regression import gaussian_crps, norm_cdf, norm_pdf, norm_ppf

QUAD = {"epsabs": 1e-13, "epsrel": 1e-12, "limit": 200}
HYP = settings(max_examples=40, deadline=None, derandomize=True)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _gaussian(n: int = 50, seed: int = 0) -> cc.Gaussian:
    rng = _rng(seed)
    return cc.Gaussian(rng.normal(size=n), rng.uniform(0.2, 3.0, n))


def _quantile_set(n: int = 6, seed: int = 0, levels=(0.05, 0.25, 0.5, 0.75, 0.95)) -> cc.QuantileSet:
    """Rows with unequal segment widths (skewed) so that the tails differ on the two sides."""
    rng = _rng(seed)
    levels = np.asarray(levels, dtype=float)
    start = rng.normal(size=(n, 1))
    steps = rng.uniform(0.1, 2.0, size=(n, levels.size - 1))
    values = np.concatenate([start, start + np.cumsum(steps, axis=1)], axis=1)
    return cc.QuantileSet(levels, values)


def _sample_set(n: int = 40, m: int = 15, seed: int = 0) -> cc.SampleSet:
    rng = _rng(seed)
    return cc.SampleSet(rng.normal(size=(n, 1)) + rng.uniform(0.5, 2, (n, 1)) * rng.standard_normal((n, m)))


def _row(dist: cc.PredictiveDistribution, i: int) -> cc.PredictiveDistribution:
    return dist.take(np.array([i]))


def _scalar(fun):
    return lambda x: float(fun(np.array([x], dtype=float))[0])


# =============================================================================================
# Shapes, vectorisation, take()
# =============================================================================================


@pytest.mark.parametrize("make", [_gaussian, _quantile_set, _sample_set])
def test_vectorised_shapes(make):
    dist = make()
    n = len(dist)
    y = _rng(1).normal(size=n)
    for arr in (dist.mean(), dist.var(), dist.std(), dist.cdf(y), dist.cdf_left(y), dist.logpdf(y), dist.crps(y)):
        assert arr.shape == (n,)
        assert np.all(np.isfinite(arr))
    assert dist.ppf(0.3).shape == (n,)
    assert dist.ppf(np.full(n, 0.3)).shape == (n,)
    assert dist.ppf(np.array([[0.1, 0.5, 0.9]])).shape == (n, 3)
    assert dist.ppf(np.tile([0.1, 0.5, 0.9], (n, 1))).shape == (n, 3)
    # the 2-D form agrees column by column with the 1-D form
    two_d = dist.ppf(np.array([[0.1, 0.5, 0.9]]))
    for j, p in enumerate([0.1, 0.5, 0.9]):
        assert_allclose(two_d[:, j], dist.ppf(p), rtol=0, atol=0)
    lo, hi = dist.interval(0.8)
    assert lo.shape == hi.shape == (n,) and np.all(lo <= hi)
    assert dist.sample(_rng(2)).shape == (n,)
    assert_allclose(dist.std(), np.sqrt(dist.var()))


@pytest.mark.parametrize("make", [_gaussian, _quantile_set, _sample_set])
def test_vectorised_equals_row_by_row(make):
    dist = make()
    y = _rng(3).normal(size=len(dist)) * 2
    full = {k: getattr(dist, k)(y) for k in ("cdf", "logpdf", "crps")}
    for i in range(0, len(dist), max(1, len(dist) // 5)):
        row = _row(dist, i)
        for k, v in full.items():
            assert_allclose(getattr(row, k)(y[i : i + 1]), v[i : i + 1], rtol=1e-13, atol=1e-15)
        assert_allclose(row.mean(), dist.mean()[i : i + 1], rtol=1e-13)
        assert_allclose(row.ppf(0.37), dist.ppf(0.37)[i : i + 1], rtol=1e-13)


@pytest.mark.parametrize("make", [_gaussian, _quantile_set, _sample_set])
def test_take_slicing(make):
    dist = make()
    n = len(dist)
    y = _rng(4).normal(size=n)
    idx = np.array([3, 0, 0, n - 1])
    mask = np.zeros(n, dtype=bool)
    mask[[1, 4, 5]] = True
    for index, ref in ((idx, idx), (mask, np.flatnonzero(mask))):
        sub = dist.take(index)
        assert type(sub) is type(dist)
        assert len(sub) == len(ref)
        assert_array_equal(sub.mean(), dist.mean()[ref])
        assert_array_equal(sub.var(), dist.var()[ref])
        assert_array_equal(sub.cdf(y[ref]), dist.cdf(y)[ref])
        assert_array_equal(sub.crps(y[ref]), dist.crps(y)[ref])
        assert_array_equal(sub.ppf(0.8), dist.ppf(0.8)[ref])


def test_sampleset_take_keeps_sorted_cache_consistent():
    dist = _sample_set()
    _ = dist.sorted_samples  # fill the cache, then slice
    sub = dist.take(np.array([5, 2]))
    assert_array_equal(sub.sorted_samples, np.sort(dist.samples[[5, 2]], axis=1))


# =============================================================================================
# Gaussian
# =============================================================================================


def test_gaussian_against_scipy():
    dist = _gaussian(200)
    mu, sd = dist.mean(), dist.std()
    y = _rng(5).normal(size=200) * 3
    ref = stats.norm(mu, sd)
    assert_allclose(dist.cdf(y), ref.cdf(y), rtol=1e-12, atol=1e-300)
    assert_allclose(dist.logpdf(y), ref.logpdf(y), rtol=1e-12)
    assert_allclose(dist.ppf(0.9), ref.ppf(0.9), rtol=1e-12)
    assert_allclose(dist.var(), sd**2)
    lo, hi = dist.interval(0.9)
    assert_allclose(lo, ref.ppf(0.05), rtol=1e-12)
    assert_allclose(hi, ref.ppf(0.95), rtol=1e-12)


def test_norm_helpers():
    z = np.linspace(-30, 8, 400)
    assert_allclose(norm_cdf(z), stats.norm.cdf(z), rtol=1e-12, atol=0)  # lower tail accurate too
    assert_allclose(norm_pdf(z), stats.norm.pdf(z), rtol=1e-12, atol=0)
    p = np.linspace(1e-9, 1 - 1e-9, 301)
    assert_allclose(norm_ppf(p), stats.norm.ppf(p), rtol=1e-12)
    assert norm_ppf(0.0) == -np.inf and norm_ppf(1.0) == np.inf


@HYP
@given(
    mu=st.floats(-1e3, 1e3),
    sigma=st.floats(1e-3, 1e3),
    z=st.lists(st.floats(-5.0, 5.0), min_size=1, max_size=20),
)
def test_gaussian_ppf_cdf_round_trip(mu, sigma, z):
    z = np.asarray(z)
    dist = cc.Gaussian(np.full(z.size, mu), np.full(z.size, sigma))
    y = mu + sigma * z
    assert_allclose(dist.ppf(dist.cdf(y)), y, rtol=1e-9, atol=1e-9 * sigma)
    p = norm_cdf(z)
    # μ + σΦ⁻¹(p) − μ loses |μ|/σ · machine-epsilon of z to cancellation
    assert_allclose(dist.cdf(dist.ppf(p)), p, rtol=1e-12, atol=1e-15 * (1 + abs(mu) / sigma))


def test_gaussian_crps_equals_quadrature():
    dist = _gaussian(6, seed=7)
    ys = np.array([-4.0, -0.3, 0.0, 0.4, 2.5, 9.0])
    got = dist.crps(ys)
    for i, y in enumerate(ys):
        row = _row(dist, i)
        f = _scalar(row.cdf)
        ref = integrate.quad(lambda x: f(x) ** 2, -np.inf, y, **QUAD)[0]
        ref += integrate.quad(lambda x: (f(x) - 1.0) ** 2, y, np.inf, **QUAD)[0]
        assert got[i] == pytest.approx(ref, rel=1e-9)
    assert_allclose(gaussian_crps(ys, dist.mean(), dist.std()), got)


# =============================================================================================
# QuantileSet
# =============================================================================================


def test_quantileset_hits_given_quantiles_exactly():
    dist = _quantile_set(20)
    tau, q = dist.levels, dist.values
    for j in range(tau.size):
        assert_allclose(dist.cdf(q[:, j]), tau[j], rtol=0, atol=1e-15)
        assert_allclose(dist.ppf(tau[j]), q[:, j], rtol=1e-15, atol=1e-15)
    assert_allclose(dist.ppf(tau[None, :]), q, rtol=1e-15, atol=1e-15)


def test_quantileset_linear_between_quantiles():
    dist = _quantile_set(10)
    tau, q = dist.levels, dist.values
    for t in (0.1, 0.5, 0.9):
        y = (1 - t) * q[:, 1] + t * q[:, 2]
        assert_allclose(dist.cdf(y), (1 - t) * tau[1] + t * tau[2], rtol=1e-13)


def test_quantileset_exponential_tails_are_continuous():
    dist = _quantile_set(10)
    tau, q = dist.levels, dist.values
    for j, side in ((0, -1.0), (-1, 1.0)):
        knot = q[:, j]
        for h in (1e-6, 1e-9):
            assert_allclose(dist.cdf(knot + side * h), tau[j], atol=1e-5 * h / 1e-6)
        # the density is continuous at the outermost quantiles: tail density = segment density
        inner = dist.logpdf(knot - side * 1e-9)
        outer = dist.logpdf(knot + side * 1e-9)
        assert_allclose(outer, inner, rtol=1e-6)
    # the tails decay exponentially with the documented rate λ_lo = f_1/τ_1
    f1 = (tau[1] - tau[0]) / (q[:, 1] - q[:, 0])
    lam = f1 / tau[0]
    d = 1.7
    assert_allclose(dist.cdf(q[:, 0] - d), tau[0] * np.exp(-lam * d), rtol=1e-12)
    fl = (tau[-1] - tau[-2]) / (q[:, -1] - q[:, -2])
    lam_hi = fl / (1 - tau[-1])
    # (1 − F is formed as 1 − (1 − g): compare F itself, to machine precision)
    assert_allclose(dist.cdf(q[:, -1] + d), 1 - (1 - tau[-1]) * np.exp(-lam_hi * d), rtol=0, atol=2e-16)


def _quad_pieces(fun, knots, lo=-np.inf, hi=np.inf) -> float:
    """∫ fun over (lo, hi) split at the knots (integrand smooth on every piece)."""
    pts = np.concatenate([[lo], np.unique(knots), [hi]])
    return sum(integrate.quad(fun, a, b, **QUAD)[0] for a, b in zip(pts[:-1], pts[1:]) if b > a)


@pytest.mark.parametrize(
    "levels",
    [(0.05, 0.25, 0.5, 0.75, 0.95), (0.1, 0.9), (0.0, 0.3, 0.6, 1.0), (0.0, 0.5, 0.8), (0.2, 0.5, 1.0)],
    ids=["5-levels", "2-levels", "no-tails", "no-lower-tail", "no-upper-tail"],
)
def test_quantileset_moments_and_density_equal_quadrature(levels):
    dist = _quantile_set(4, seed=11, levels=levels)
    lo = -np.inf if levels[0] > 0 else None
    hi = np.inf if levels[-1] < 1 else None
    for i in range(len(dist)):
        row = _row(dist, i)
        knots = row.values[0]
        a = knots[0] if lo is None else lo
        b = knots[-1] if hi is None else hi
        pdf = lambda x, row=row: float(np.exp(row.logpdf(np.array([x]))[0]))
        mass = _quad_pieces(pdf, knots, a, b)
        m1 = _quad_pieces(lambda x: x * pdf(x), knots, a, b)
        m2 = _quad_pieces(lambda x: x * x * pdf(x), knots, a, b)
        assert mass == pytest.approx(1.0, rel=1e-9)
        assert row.mean()[0] == pytest.approx(m1, rel=1e-9, abs=1e-12)
        assert row.var()[0] == pytest.approx(m2 - m1 * m1, rel=1e-9)
        # and the mean as ∫₀¹ F⁻¹(p) dp (quadrature on the quantile function)
        ppf = lambda p, row=row: float(row.ppf(p)[0])
        taus = np.concatenate([[0.0], row.levels, [1.0]])
        m1_ppf = _quad_pieces(ppf, taus[1:-1], 0.0, 1.0)
        assert row.mean()[0] == pytest.approx(m1_ppf, rel=1e-8, abs=1e-10)


def _crps_quad(row: cc.QuantileSet, y: float) -> float:
    f = _scalar(row.cdf)
    return _quad_pieces(lambda x: (f(x) - (x >= y)) ** 2, np.append(row.values[0], y))


def _test_points(q: np.ndarray, inside_only: bool = False) -> list[float]:
    inside = [q[0], 0.5 * (q[0] + q[1]), q[len(q) // 2], q[-1]]
    if inside_only:
        return inside
    return [q[0] - 3.0, q[0] - 0.01, *inside, q[-1] + 0.2, q[-1] + 5]  # below, knots, inside, above


@pytest.mark.parametrize("levels", [(0.05, 0.25, 0.5, 0.75, 0.95), (0.1, 0.9)], ids=["5-levels", "2-levels"])
def test_quantileset_crps_equals_quadrature(levels):
    dist = _quantile_set(3, seed=12, levels=levels)
    for i in range(len(dist)):
        row = _row(dist, i)
        for y in _test_points(row.values[0]):
            assert row.crps(np.array([y]))[0] == pytest.approx(_crps_quad(row, y), rel=1e-9, abs=1e-13), (i, y)


@pytest.mark.parametrize("levels", [(0.0, 0.4, 1.0), (0.0, 0.5, 0.9), (0.2, 0.6, 1.0)])
def test_quantileset_crps_truncated_support_inside(levels):
    dist = _quantile_set(3, seed=12, levels=levels)
    for i in range(len(dist)):
        row = _row(dist, i)
        for y in _test_points(row.values[0], inside_only=True):
            assert row.crps(np.array([y]))[0] == pytest.approx(_crps_quad(row, y), rel=1e-9, abs=1e-13), (i, y)


def test_quantileset_crps_outside_truncated_support():
    """Regression test (a bug fixed in 3c5c3ff): the distance to a truncated support counts."""
    dist = cc.QuantileSet([0.0, 0.5, 1.0], [[0.0, 1.0, 2.0]])  # uniform on [0, 2]
    # outside the support: E|X − y| − ½E|X − X'| = (distance + E|X − edge|) − ½·(2/3) for U(0, 2)
    assert dist.crps(np.array([-3.0]))[0] == pytest.approx(3.0 + 1.0 - 1.0 / 3.0, rel=1e-12)
    assert dist.crps(np.array([5.0]))[0] == pytest.approx(3.0 + 1.0 - 1.0 / 3.0, rel=1e-12)
    for levels in ((0.0, 0.4, 1.0), (0.0, 0.5, 0.9), (0.2, 0.6, 1.0)):
        qs = _quantile_set(3, seed=12, levels=levels)
        for i in range(len(qs)):
            row = _row(qs, i)
            for y in _test_points(row.values[0]):
                assert row.crps(np.array([y]))[0] == pytest.approx(_crps_quad(row, y), rel=1e-9, abs=1e-13)


def test_quantileset_logpdf_far_tails_finite_and_silent():
    """Regression test (a bug fixed in 3c5c3ff): tail log-density in log space, no warnings."""
    import warnings

    dist = cc.QuantileSet([0.05, 0.5, 0.95], [[0.0, 1.0, 2.0]])
    lam_lo = (0.45 / 1.0) / 0.05
    lam_hi = (0.45 / 1.0) / 0.05
    y = np.array([-800.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo = dist.logpdf(y)[0]
        hi = dist.logpdf(np.array([100.0]))[0]
    assert lo == pytest.approx(np.log(0.45) - lam_lo * 800.0, rel=1e-12)
    assert hi == pytest.approx(np.log(0.45) - lam_hi * 98.0, rel=1e-12)


def test_quantileset_tied_quantiles_are_atoms():
    levels = np.array([0.1, 0.3, 0.6, 0.9])
    dist = cc.QuantileSet(levels, np.array([[0.0, 1.0, 1.0, 2.0]]))  # atom of mass 0.3 at 1
    assert dist.cdf(np.array([1.0]))[0] == pytest.approx(0.6)
    assert dist.cdf(np.array([1.0 - 1e-12]))[0] == pytest.approx(0.3, abs=1e-9)
    assert dist.ppf(0.45)[0] == 1.0
    f = _scalar(dist.cdf)
    for y in (-1.0, 0.5, 1.0, 1.5, 4.0):
        ref = _quad_pieces(lambda x, y=y: (f(x) - (x >= y)) ** 2, np.array([0.0, 1.0, 2.0, y]))
        assert dist.crps(np.array([y]))[0] == pytest.approx(ref, rel=1e-9)
    # mean = ∫ x dF including the atom
    pdf = lambda x: float(np.exp(dist.logpdf(np.array([x]))[0]))
    m1 = _quad_pieces(lambda x: x * pdf(x), np.array([0.0, 1.0, 2.0])) + 0.3 * 1.0
    assert dist.mean()[0] == pytest.approx(m1, rel=1e-9)


def test_quantileset_tied_outer_quantiles():
    dist = cc.QuantileSet([0.1, 0.5, 0.9], [[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    # row A: 0.1·e^{4x} below 0, linear 0.1 → 0.5 on [0, 1], then an atom of 0.5 at 1 (segment + collapsed tail)
    f_a = lambda x: 0.1 * np.exp(4 * x) if x < 0 else (0.1 + 0.4 * x if x < 1 else 1.0)
    assert_allclose(dist.cdf(np.array([1.0, 1.0])), [1.0, 1.0])
    assert_allclose(dist.cdf(np.array([0.5, 0.5])), [0.3, 0.0])
    for y in (-0.5, 0.5, 1.0, 2.0):
        ref_a = _quad_pieces(lambda x, y=y: (f_a(x) - (x >= y)) ** 2, np.array([0.0, 1.0, y]))
        got = dist.crps(np.array([y, y]))
        assert got[0] == pytest.approx(ref_a, rel=1e-9)
        assert got[1] == pytest.approx(abs(y - 1.0), abs=1e-12)  # point mass at 1
    assert np.isfinite(dist.logpdf(np.array([0.5, 0.5]))[0])
    assert_allclose(dist.mean(), [0.1 * (0 - 0.25) + 0.4 * 0.5 + 0.5 * 1.0, 1.0])


def test_quantileset_rejects_bad_input():
    with pytest.raises(ValueError):
        cc.QuantileSet([0.5], [[1.0]])
    with pytest.raises(ValueError):
        cc.QuantileSet([0.5, 0.1], [[1.0, 2.0]])
    with pytest.raises(ValueError):
        cc.QuantileSet([0.1, 0.5], [[2.0, 1.0]])
    with pytest.raises(ValueError):
        cc.QuantileSet([0.1, 0.5, 0.9], [[1.0, 2.0]])


@st.composite
def quantile_rows(draw):
    n_levels = draw(st.integers(2, 7))
    gaps = draw(st.lists(st.floats(0.02, 1.0), min_size=n_levels + 1, max_size=n_levels + 1))
    cum = np.cumsum(gaps)
    levels = cum[:-1] / cum[-1]
    n = draw(st.integers(1, 5))
    start = draw(st.lists(st.floats(-100, 100), min_size=n, max_size=n))
    steps = draw(st.lists(st.floats(1e-2, 50.0), min_size=n * (n_levels - 1), max_size=n * (n_levels - 1)))
    steps = np.asarray(steps).reshape(n, n_levels - 1)
    values = np.concatenate([np.asarray(start)[:, None], np.asarray(start)[:, None] + np.cumsum(steps, axis=1)], 1)
    return levels, values


@HYP
@given(quantile_rows(), st.lists(st.floats(1e-6, 1 - 1e-6), min_size=1, max_size=8))
def test_quantileset_properties(data, ps):
    levels, values = data
    dist = cc.QuantileSet(levels, values)
    n = len(dist)
    # knots are hit exactly, both ways
    assert_allclose(dist.cdf(values[:, 0]), levels[0], atol=1e-15)
    assert_allclose(dist.ppf(levels[None, :]), values, rtol=1e-12, atol=1e-12)
    # cdf ∘ ppf and ppf ∘ cdf round trips, monotone cdf
    p = np.tile(np.sort(ps), (n, 1))
    y = dist.ppf(p)
    assert np.all(np.diff(y, axis=1) >= 0)
    for j in range(p.shape[1]):
        assert_allclose(dist.cdf(y[:, j]), p[:, j], rtol=1e-9, atol=1e-12)
        scale = values[:, -1] - values[:, 0]
        assert_allclose(dist.ppf(dist.cdf(y[:, j])), y[:, j], rtol=1e-8, atol=1e-8 * float(scale.max()))
    # scores are finite and CRPS ≥ 0 and minimal near the median in a loose sense
    for j in range(p.shape[1]):
        c = dist.crps(y[:, j])
        assert np.all(np.isfinite(c)) and np.all(c >= -1e-12)
    assert np.all(dist.var() > 0)


# =============================================================================================
# SampleSet
# =============================================================================================


def test_sampleset_cdf_ppf_moments():
    x = np.array([[3.0, 1.0, 2.0, 2.0], [0.0, -1.0, 5.0, 4.0]])
    dist = cc.SampleSet(x)
    assert_array_equal(dist.cdf(np.array([2.0, 4.5])), [0.75, 0.75])
    assert_array_equal(dist.cdf_left(np.array([2.0, 4.5])), [0.25, 0.75])
    assert_array_equal(dist.mean(), x.mean(axis=1))
    assert_array_equal(dist.var(), x.var(axis=1))  # population variance (ddof = 0)
    # ppf = x_(⌈pM⌉), x_(1) at p = 0
    assert_array_equal(dist.ppf(0.0), [1.0, -1.0])
    assert_array_equal(dist.ppf(0.25), [1.0, -1.0])
    assert_array_equal(dist.ppf(0.26), [2.0, 0.0])
    assert_array_equal(dist.ppf(0.5), [2.0, 0.0])
    assert_array_equal(dist.ppf(1.0), [3.0, 5.0])


@HYP
@given(st.integers(2, 30), st.integers(1, 6), st.integers(0, 2**31 - 1), st.booleans())
def test_sampleset_ppf_cdf_galois(m, n, seed, ties):
    rng = _rng(seed)
    x = rng.normal(size=(n, m))
    if ties:
        x = np.round(x, 1)
    dist = cc.SampleSet(x)
    p = rng.uniform(0, 1, size=(n, 7))
    q = dist.ppf(p)
    # left-continuous inverse of the ECDF: F(q) ≥ p and F(q−) < p
    for j in range(p.shape[1]):
        assert np.all(dist.cdf(q[:, j]) >= p[:, j] - 1e-12)
        assert np.all(dist.cdf_left(q[:, j]) < p[:, j] + 1e-12)


def _crps_brute_force(x: np.ndarray, y: np.ndarray, fair: bool = False) -> np.ndarray:
    m = x.shape[1]
    term1 = np.abs(x - y[:, None]).mean(axis=1)
    pair = np.abs(x[:, :, None] - x[:, None, :]).sum(axis=(1, 2))
    return term1 - pair / (2 * m * (m - 1) if fair else 2 * m * m)


@HYP
@given(st.integers(2, 25), st.integers(1, 8), st.integers(0, 2**31 - 1), st.booleans())
def test_sampleset_crps_equals_brute_force(m, n, seed, ties):
    rng = _rng(seed)
    x = rng.normal(size=(n, m)) * rng.uniform(0.1, 10)
    if ties:
        x = np.round(x)
    y = rng.normal(size=n) * 3
    if ties:
        y[0] = x[0, 0]  # observation on a member
    dist = cc.SampleSet(x)
    assert_allclose(dist.crps(y), _crps_brute_force(x, y), rtol=1e-9, atol=1e-12)
    assert_allclose(dist.crps(y, fair=True), _crps_brute_force(x, y, fair=True), rtol=1e-9, atol=1e-12)


def test_sampleset_crps_equals_integral_of_ecdf():
    dist = _sample_set(4, 9, seed=13)
    x = dist.samples
    for i in range(len(dist)):
        knots = np.sort(x[i])
        for y in (knots[0] - 1.0, knots[3], 0.5 * (knots[4] + knots[5]), knots[-1] + 2):
            # F is a step function: integrate it exactly piece by piece (F constant between knots)
            pts = np.unique(np.append(knots, y))
            mids = 0.5 * (pts[:-1] + pts[1:])
            f = (knots[None, :] <= mids[:, None]).mean(axis=1)
            ind = (mids >= y).astype(float)
            ref = np.sum(np.diff(pts) * (f - ind) ** 2)
            assert dist.take(np.array([i])).crps(np.array([y]))[0] == pytest.approx(ref, rel=1e-12)


def test_sampleset_crps_large_no_quadratic_memory():
    n, m = 20_000, 200
    rng = _rng(14)
    dist = cc.SampleSet(rng.normal(size=(n, m)))
    y = rng.normal(size=n)
    tracemalloc.start()
    t0 = time.perf_counter()
    out = dist.crps(y)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert out.shape == (n,) and np.all(np.isfinite(out))
    # N·M² doubles would be 6.4 GB; the sorted form needs a few N·M arrays (32 MB each)
    assert peak < 12 * n * m * 8, f"peak {peak / 1e6:.0f} MB"
    assert elapsed < 10.0
    # spot check a few rows against the brute force
    idx = np.array([0, 777, n - 1])
    assert_allclose(out[idx], _crps_brute_force(dist.samples[idx], y[idx]), rtol=1e-9)


def test_sampleset_logpdf_is_silverman_kde():
    dist = _sample_set(5, 30, seed=15)
    y = _rng(16).normal(size=5)
    m = dist.n_samples
    for i in range(len(dist)):
        # gaussian_kde's bandwidth is factor · std(ddof=1): factor = 1.06 M^(−1/5) gives Silverman's h
        kde = stats.gaussian_kde(dist.samples[i], bw_method=1.06 * m ** (-0.2))
        assert dist.logpdf(y)[i] == pytest.approx(np.log(kde(y[i])[0]), rel=1e-10)


def test_sampleset_rejects_bad_shape():
    with pytest.raises(ValueError):
        cc.SampleSet(np.ones((5, 1)))
    with pytest.raises(ValueError):
        cc.SampleSet(np.ones(5))


@pytest.mark.parametrize("make", [_gaussian, _quantile_set])
def test_sample_draws_follow_the_distribution(make):
    """y* = F⁻¹(U): the PIT of draws is uniform (KS test at a generous level), for the Report's simulations."""
    dist = make(40, seed=17)
    rng = _rng(18)
    draws = np.concatenate([dist.sample(rng) for _ in range(100)])
    tiled = dist.take(np.tile(np.arange(len(dist)), 100))
    assert stats.kstest(tiled.cdf(draws), "uniform").pvalue > 1e-3


def _silverman(samples: np.ndarray) -> np.ndarray:
    return 1.06 * samples.std(axis=1, ddof=1) * samples.shape[1] ** (-0.2)


def test_sampleset_draws_follow_the_smoothed_ensemble():
    """SampleSet.sample draws a random member plus N(0, h²) kernel noise: the KDE that logpdf uses."""
    dist = _sample_set(40, 15, seed=17)
    h = _silverman(dist.samples)
    rng = _rng(18)
    draws = np.concatenate([dist.sample(rng) for _ in range(100)])
    rows = np.tile(np.arange(len(dist)), 100)
    kde_cdf = stats.norm.cdf((draws[:, None] - dist.samples[rows]) / h[rows, None]).mean(axis=1)
    assert stats.kstest(kde_cdf, "uniform").pvalue > 1e-3
    assert np.all(np.isin(draws, dist.samples) == False)  # noqa: E712 (no ties with members)


def test_sampleset_degenerate_rows_keep_a_finite_density():
    x = _rng(20).normal(size=(6, 12))
    x[2] = 3.0  # all members equal
    dist = cc.SampleSet(x)
    h = _silverman(x)
    floor = 0.01 * np.median(h[h > 0])
    lp = dist.logpdf(np.array([0.0, 0.0, 3.0, 0.0, 0.0, 0.0]))
    assert np.all(np.isfinite(lp))
    assert lp[2] == pytest.approx(-np.log(floor) - 0.5 * np.log(2 * np.pi), rel=1e-12)
    assert np.all(np.isfinite(dist.sample(_rng(21))))


def test_sampleset_rank_pit():
    """u = (#{x < y} + V·(1 + #{x = y}))/(M + 1), V ~ U(0, 1); V = ½ without a generator."""
    x = np.array([[0.0, 1.0, 1.0, 2.0], [5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0]])
    dist = cc.SampleSet(x)
    y = np.array([1.0, 9.0, 0.0])
    assert_allclose(dist.pit(y), [(1 + 0.5 * 3) / 5, (4 + 0.5) / 5, 0.5 / 5])
    v = _rng(22).random(3)
    assert_allclose(dist.pit(y, _rng(22)), [(1 + v[0] * 3) / 5, (4 + v[1]) / 5, v[2] / 5])
    # exchangeable target and members: the rank PIT is exactly uniform, ties included
    n, m = 20_000, 7
    rng = _rng(23)
    pool = np.round(rng.standard_normal((n, m + 1)), 1)  # heavy ties
    u = cc.SampleSet(pool[:, :m]).pit(pool[:, m], rng)
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    # continuous distributions: pit = cdf
    g = _gaussian(10)
    yy = _rng(24).normal(size=10)
    assert_array_equal(g.pit(yy, _rng(0)), g.cdf(yy))
