"""Properties of the regression diagnostics (``calib_core.metrics.regression``).

Each metric is checked against a direct, independent computation of its defining formula
(scipy.stats, numerical integration, the papers' equations written out) and against the
behaviour it must have: invariances, endpoints, ≈ 0 for simulated calibrated data and larger for
over-confident predictions.  The weighted forms (used by the bootstrap) are checked against the
unweighted metric on explicitly repeated rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import integrate, special, stats

import calib_core as cc
from calib_core.metrics import regression as rm

HYP = settings(max_examples=30, deadline=None, derandomize=True)
LEVELS5 = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
Z5 = stats.norm.ppf(LEVELS5)


def make_data(n: int = 400, seed: int = 0, kind: str = "gaussian", noise: float = 1.0, m: int = 30):
    """(y, dist): heteroscedastic predictions; targets with noise·σ spread (1 = calibrated Gaussian)."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n) * 2
    sigma = rng.uniform(0.3, 3.0, n)
    y = mu + noise * sigma * rng.standard_normal(n)
    if kind == "gaussian":
        dist = cc.Gaussian(mu, sigma)
    elif kind == "quantile":
        dist = cc.QuantileSet(LEVELS5, mu[:, None] + sigma[:, None] * Z5)
    elif kind == "sample":
        dist = cc.SampleSet(mu[:, None] + sigma[:, None] * rng.standard_normal((n, m)))
    else:
        raise ValueError(kind)
    return y, dist


KINDS = ["gaussian", "quantile", "sample"]


# =============================================================================================
# Per-row scores and simple summaries
# =============================================================================================


@pytest.mark.parametrize("kind", KINDS)
def test_scores_are_means_of_the_distribution_methods(kind):
    y, dist = make_data(200, seed=1, kind=kind)
    eps = y - dist.mean()
    assert rm.nll(y, dist) == pytest.approx(-np.mean(dist.logpdf(y)), rel=1e-12)
    assert rm.crps(y, dist) == pytest.approx(np.mean(dist.crps(y)), rel=1e-12)
    assert rm.rmse(y, dist) == pytest.approx(np.sqrt(np.mean(eps**2)), rel=1e-12)
    assert rm.mae(y, dist) == pytest.approx(np.mean(np.abs(eps)), rel=1e-12)
    assert rm.sharpness(y, dist) == pytest.approx(np.sqrt(np.mean(dist.var())), rel=1e-12)


def test_gaussian_nll_and_crps_formulas():
    y, dist = make_data(300, seed=2)
    mu, s = dist.mean(), dist.std()
    z = (y - mu) / s
    nll = np.mean(0.5 * np.log(2 * np.pi * s**2) + (y - mu) ** 2 / (2 * s**2))
    crps = np.mean(s * (z * (2 * stats.norm.cdf(z) - 1) + 2 * stats.norm.pdf(z) - 1 / np.sqrt(np.pi)))
    assert rm.nll(y, dist) == pytest.approx(nll, rel=1e-12)
    assert rm.crps(y, dist) == pytest.approx(crps, rel=1e-12)
    # the shared-row fast path in summary_statistics gives the same numbers
    stats_ = rm.summary_statistics(rm.RegressionRows(y, dist))
    assert stats_["nll"] == pytest.approx(nll, rel=1e-12)
    assert stats_["crps"] == pytest.approx(crps, rel=1e-12)


def test_pit_gaussian_and_randomised_rank_pit_of_ensembles():
    y, dist = make_data(300, seed=3)
    assert_allclose(rm.pit(y, dist), stats.norm.cdf(y, dist.mean(), dist.std()), rtol=1e-12)
    y, ens = make_data(300, seed=3, kind="sample", m=5)
    y = np.round(y)  # make ties with rounded members likely
    x = np.round(ens.samples)
    ens = cc.SampleSet(x)
    below = (x < y[:, None]).sum(axis=1)
    ties = (x == y[:, None]).sum(axis=1)
    u = rm.pit(y, ens, seed=7)
    assert np.any(ties > 0)
    assert np.all((u >= below / 6) & (u <= (below + 1 + ties) / 6))
    v = np.random.default_rng(7).random(300)
    assert_allclose(u, (below + v * (1 + ties)) / 6)
    assert_allclose(rm.pit(y, ens, seed=7), u)  # seeded
    assert_allclose(rm.pit(y, ens, randomize=False), (below + 0.5 * (1 + ties)) / 6)
    # the rows' PIT in RegressionRows is the same (pit_seed = seed)
    assert_allclose(rm.RegressionRows(y, ens, pit_seed=7).u, u)


def test_standardized_residual_stats_against_scipy():
    y, dist = make_data(500, seed=4, noise=1.3)
    z = (y - dist.mean()) / dist.std()
    s = rm.standardized_residual_stats(y, dist)
    assert s["z_mean"] == pytest.approx(np.mean(z), rel=1e-12)
    assert s["z_std"] == pytest.approx(np.std(z), rel=1e-12)
    assert s["z_skewness"] == pytest.approx(stats.skew(z), rel=1e-10)
    assert s["z_excess_kurtosis"] == pytest.approx(stats.kurtosis(z), rel=1e-10)


# =============================================================================================
# Levi: Cv and ENCE
# =============================================================================================


def test_cv_definition_scale_invariance_and_constant_sigma():
    y, dist = make_data(300, seed=5)
    s = dist.std()
    cv = rm.cv(None, dist)
    assert cv == pytest.approx(np.std(s, ddof=1) / np.mean(s), rel=1e-12)
    assert rm.cv(None, cc.Gaussian(dist.mean() * 3, s * 7.5)) == pytest.approx(cv, rel=1e-12)
    assert rm.cv(y, dist) == pytest.approx(cv, rel=1e-12)  # y is ignored
    assert rm.cv(None, cc.Gaussian(dist.mean(), np.full(300, 0.37))) == pytest.approx(0.0, abs=1e-15)
    assert rm.summary_statistics(rm.RegressionRows(y, dist))["cv"] == pytest.approx(cv, rel=1e-12)


@pytest.mark.parametrize("binning", ["count", "width"])
@pytest.mark.parametrize("k", [1e-3, 0.5, 17.0])
def test_ence_is_scale_and_shift_invariant(binning, k):
    y, dist = make_data(600, seed=6, noise=1.4)
    mu, s = dist.mean(), dist.std()
    base = rm.ence(y, dist, n_bins=12, binning=binning)
    shift = 123.0
    scaled = cc.Gaussian(mu * k + shift, s * k)
    y_scaled = (y - mu) * k + mu * k + shift
    assert rm.ence(y_scaled, scaled, n_bins=12, binning=binning) == pytest.approx(base, rel=1e-9)


def test_ence_equals_direct_levi_formula():
    """n divisible by B: the equal-count bins are the B consecutive blocks of σ-sorted rows."""
    n, b = 15 * 40, 15
    y, dist = make_data(n, seed=7, noise=1.2)
    s, eps = dist.std(), y - dist.mean()
    order = np.argsort(s)
    s_b, e_b = s[order].reshape(b, -1), eps[order].reshape(b, -1)
    rmv = np.sqrt(np.mean(s_b**2, axis=1))
    rmse = np.sqrt(np.mean(e_b**2, axis=1))
    assert rm.ence(y, dist) == pytest.approx(np.mean(np.abs(rmv - rmse) / rmv), rel=1e-12)


def test_ence_width_binning_direct():
    y, dist = make_data(500, seed=8, noise=0.8)
    s, eps = dist.std(), y - dist.mean()
    edges = np.linspace(s.min(), s.max(), 11)
    idx = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, 9)  # [a, b), last bin closed
    vals = []
    for j in range(10):
        sel = idx == j
        if sel.any():
            rmv = np.sqrt(np.mean(s[sel] ** 2))
            vals.append(abs(rmv - np.sqrt(np.mean(eps[sel] ** 2))) / rmv)
    assert rm.ence(y, dist, n_bins=10, binning="width") == pytest.approx(np.mean(vals), rel=1e-12)
    with pytest.raises(ValueError):
        rm.ence(y, dist, binning="quantile")


@HYP
@given(st.integers(1, 500), st.integers(1, 40), st.integers(0, 2**31 - 1), st.booleans())
def test_ence_equal_count_bin_sizes_differ_by_at_most_one(n, n_bins, seed, ties):
    rng = np.random.default_rng(seed)
    sigma = rng.uniform(0.5, 2.0, n)
    if ties:
        sigma = np.round(sigma, 1)
    rows = rm.RegressionRows(rng.normal(size=n), cc.Gaussian(np.zeros(n), sigma))
    b = rows.sigma_bins(n_bins, "count")
    counts = np.bincount(b, minlength=n_bins)
    assert counts.sum() == n
    nonempty = counts[counts > 0]
    assert nonempty.max() - nonempty.min() <= 1
    assert nonempty.size == min(n, n_bins)
    # bins follow σ: a larger σ never sits in a lower bin (tied σ may straddle a boundary)
    order = np.lexsort((b, sigma))
    assert np.all(np.diff(b[order]) >= 0)


# =============================================================================================
# Quantile calibration: curve, RMSE, l2 error (QR eq. 8), area, KS
# =============================================================================================


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("prop_type", ["quantile", "interval"])
def test_calibration_curve_monotone_with_endpoints(kind, prop_type):
    y, dist = make_data(300, seed=9, kind=kind, noise=1.5)
    p, ph = rm.calibration_curve(y, dist, prop_type=prop_type)
    assert_allclose(p, np.linspace(0, 1, 101))
    assert np.all(np.diff(ph) >= 0)
    assert ph[-1] == 1.0
    assert ph[0] == 0.0  # the (randomised rank) PIT has no atoms at 0 or ½
    assert np.all((ph >= 0) & (ph <= 1))


def test_calibration_curve_direct_gaussian():
    y, dist = make_data(300, seed=10, noise=0.7)
    z = (y - dist.mean()) / dist.std()
    levels = np.linspace(0.0, 1.0, 37)
    _, ph = rm.calibration_curve(y, dist, levels=levels)
    assert_allclose(ph, [np.mean(stats.norm.cdf(z) <= p) for p in levels])
    _, ph_int = rm.calibration_curve(y, dist, levels=levels, prop_type="interval")
    assert_allclose(ph_int, [np.mean(np.abs(z) <= stats.norm.ppf(0.5 + p / 2)) for p in levels])


def test_calibration_rmse_and_mace_definitions():
    y, dist = make_data(300, seed=11, noise=1.4)
    p, ph = rm.calibration_curve(y, dist)
    assert rm.calibration_rmse(y, dist) == pytest.approx(np.sqrt(np.mean((ph - p) ** 2)), rel=1e-12)
    assert rm.mean_absolute_calibration_error(y, dist) == pytest.approx(np.mean(np.abs(ph - p)), rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_l2_quantile_calibration_error_equals_qr_eq8(kind):
    """CE = (1/M) Σ_{j=1}^{M} ((1/N) Σ_n 1[F_n(y_n) ≤ p_j] − p_j)², p_j = j/M (Utpala & Rai eq. 8)."""
    y, dist = make_data(257, seed=12, kind=kind, noise=1.3)
    u = rm.pit(y, dist)
    for m in (100, 10, 7):
        p = np.arange(1, m + 1) / m
        direct = np.mean([(np.mean(u <= pj) - pj) ** 2 for pj in p])
        assert rm.quantile_calibration_error(y, dist, n_levels=m) == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_max_calibration_deviation_is_ks_statistic(kind):
    y, dist = make_data(333, seed=13, kind=kind, noise=1.2)
    u = rm.pit(y, dist)  # same default seed as RegressionRows: the same randomised PIT for ensembles
    assert rm.max_calibration_deviation(y, dist) == pytest.approx(stats.kstest(u, "uniform").statistic, rel=1e-12)


def test_max_calibration_deviation_with_tied_pit_values():
    y = np.zeros(10)
    dist = cc.QuantileSet([0.0, 0.5, 1.0], np.tile([-1.0, 0.0, 1.0], (10, 1)))
    dist = dist.take(np.arange(10))
    y[:6] = 0.0  # u = 0.5 for six rows
    y[6:] = np.array([-0.8, -0.2, 0.3, 0.9])
    u = rm.pit(y, dist)
    assert rm.max_calibration_deviation(y, dist) == pytest.approx(stats.kstest(u, "uniform").statistic, rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_exact_miscalibration_area_equals_grid_integration(kind):
    y, dist = make_data(211, seed=14, kind=kind, noise=1.6)
    u = np.sort(rm.pit(y, dist))
    grid = np.linspace(0.0, 1.0, 2_000_001)
    ecdf = np.searchsorted(u, grid, side="right") / u.size
    numeric = integrate.trapezoid(np.abs(ecdf - grid), grid)
    assert rm.miscalibration_area(y, dist) == pytest.approx(numeric, abs=2e-6)


def test_exact_area_equals_piecewise_quadrature():
    y, dist = make_data(60, seed=15, noise=0.6)
    u = np.sort(rm.pit(y, dist))
    pts = np.concatenate([[0.0], u, [1.0]])
    total = 0.0
    for k in range(pts.size - 1):  # ECDF = k/N on [u_(k), u_(k+1))
        total += integrate.quad(lambda p, c=k / u.size: abs(c - p), pts[k], pts[k + 1], epsabs=1e-15)[0]
    assert rm.miscalibration_area(y, dist) == pytest.approx(total, rel=1e-10)


def test_grid_area_is_polygon_area():
    """With a level grid, the area between the polyline (p_j, p̂_j) and the diagonal (crossings split)."""
    y, dist = make_data(150, seed=16, noise=1.1)
    levels = np.linspace(0, 1, 100)
    p, ph = rm.calibration_curve(y, dist, levels=levels)
    d = ph - p
    fine = np.linspace(0, 1, 400_001)
    numeric = integrate.trapezoid(np.abs(np.interp(fine, p, d)), fine)
    assert rm.miscalibration_area(y, dist, levels=levels) == pytest.approx(numeric, abs=1e-7)
    with pytest.raises(ValueError):
        rm.miscalibration_area(y, dist, prop_type="interval")


def test_reliability_score_equals_integral_accrue_eq8():
    """RS = ∫ (Φ(η) − C(η))² dη, Φ(η) = ½(1 + erf η), C the ECDF of η = ε/(√2σ) (ACCRUE eq. 6/8)."""
    for seed, noise in ((17, 1.0), (18, 0.5), (19, 2.5)):
        y, dist = make_data(40, seed=seed, noise=noise)
        eta = np.sort((y - dist.mean()) / (np.sqrt(2) * dist.std()))
        n = eta.size
        phi = lambda e: 0.5 * (1 + special.erf(e))
        opts = {"epsabs": 1e-14, "epsrel": 1e-13, "limit": 200}
        total = integrate.quad(lambda e: phi(e) ** 2, -np.inf, eta[0], **opts)[0]
        for k in range(1, n):
            total += integrate.quad(lambda e, c=k / n: (phi(e) - c) ** 2, eta[k - 1], eta[k], **opts)[0]
        total += integrate.quad(lambda e: (phi(e) - 1) ** 2, eta[-1], np.inf, **opts)[0]
        assert rm.reliability_score(y, dist) == pytest.approx(total, rel=1e-9)
        # the closed form of the reliability score (Camporeale & Carè 2021, ACCRUE eq. 8, with √π·N)
        i = np.arange(1, n + 1)
        terms = eta / n * (special.erf(eta) + 1) - eta / n**2 * (2 * i - 1) + np.exp(-(eta**2)) / (np.sqrt(np.pi) * n)
        closed = np.sum(terms)
        assert rm.reliability_score(y, dist) == pytest.approx(closed - 0.5 * np.sqrt(2 / np.pi), rel=1e-10)


def test_reliability_score_non_gaussian_uses_z_of_mean_and_std():
    y, dist = make_data(80, seed=20, kind="quantile")
    ref = rm.reliability_score(y, cc.Gaussian(dist.mean(), dist.std()))
    assert rm.reliability_score(y, dist) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_pit_entropy_equals_qr_eq6(kind):
    """H = 1/(n−k) Σ_{i=1}^{n−k} log((n+1)/k · (u_(i+k) − u_(i))), k = round(√n) (Utpala & Rai eq. 6)."""
    for n in (50, 401):
        y, dist = make_data(n, seed=21, kind=kind, noise=1.0, m=400)  # many members: no tied PIT values
        u = np.sort(rm.pit(y, dist))
        k = int(round(np.sqrt(n)))
        direct = sum(np.log((n + 1) / k * (u[i + k] - u[i])) for i in range(n - k)) / (n - k)
        assert np.isfinite(direct)
        assert rm.pit_entropy(y, dist) == pytest.approx(direct, rel=1e-12)


def test_exchangeable_ensemble_pit_is_uniform():
    """Regression test (a bug fixed in 3c5c3ff: rank PIT)."""
    rng = np.random.default_rng(0)
    n, m = 20_000, 10
    dist = cc.SampleSet(rng.standard_normal((n, m)))
    y = rng.standard_normal(n)  # exchangeable with the members: rank uniform on 0..M
    u = rm.pit(y, dist)
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    assert rm.max_calibration_deviation(y, dist) < 0.02
    assert np.isfinite(rm.pit_entropy(y, dist)) and abs(rm.pit_entropy(y, dist)) < 0.05


def test_pit_entropy_near_zero_for_uniform_and_negative_otherwise():
    y, dist = make_data(4000, seed=22)
    y_bad, dist_bad = make_data(4000, seed=22, noise=0.3)
    h, h_bad = rm.pit_entropy(y, dist), rm.pit_entropy(y_bad, dist_bad)
    assert abs(h) < 0.05
    assert h_bad < h - 0.3


def test_spearman_against_scipy_with_ties():
    rng = np.random.default_rng(23)
    n = 500
    sigma = np.round(rng.uniform(0.5, 2.0, n), 1)  # many ties
    mu = rng.normal(size=n)
    y = mu + np.round(sigma * rng.standard_normal(n), 1)  # ties in |ε| too
    dist = cc.Gaussian(mu, sigma)
    ref = stats.spearmanr(sigma, np.abs(y - mu)).statistic
    assert rm.spearman_sigma_error(y, dist) == pytest.approx(ref, rel=1e-12)
    y2, d2 = make_data(300, seed=24)
    ref2 = stats.spearmanr(d2.std(), np.abs(y2 - d2.mean())).statistic
    assert rm.spearman_sigma_error(y2, d2) == pytest.approx(ref2, rel=1e-12)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(2, 3000), st.integers(0, 2**31 - 1), st.floats(-1.0, 1.0))
def test_spearman_without_ties_equals_scipy(n, seed, coupling):
    # the no-ties path uses ρ = 1 − 6Σd²/(N(N²−1)); scipy ranks and correlates
    rng = np.random.default_rng(seed)
    sigma = rng.uniform(0.5, 2.0, n)
    mu = rng.normal(size=n)
    y = mu + (1.0 + coupling * (sigma - 1.25)) * rng.standard_normal(n)
    dist = cc.Gaussian(mu, sigma)
    ref = stats.spearmanr(sigma, np.abs(y - mu)).statistic
    assert rm.spearman_sigma_error(y, dist) == pytest.approx(ref, rel=1e-9, abs=1e-12)


# =============================================================================================
# Intervals
# =============================================================================================


def _sample_interval(samples: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Order statistics x_(⌈pM⌉) for p = (1 ∓ c)/2 (ranks rounded to kill float noise like 0.95·20)."""
    x = np.sort(samples, axis=1)
    m = x.shape[1]
    lo_rank = max(int(np.ceil(round((1 - c) / 2 * m, 9))), 1)
    hi_rank = max(int(np.ceil(round((1 + c) / 2 * m, 9))), 1)
    return x[:, lo_rank - 1], x[:, hi_rank - 1]


def _interval_score(y, lo, hi, c):
    a = 1 - c
    return np.mean((hi - lo) + 2 / a * np.maximum(lo - y, 0) + 2 / a * np.maximum(y - hi, 0))


@pytest.mark.parametrize("kind", KINDS)
def test_interval_coverage_width_and_score_direct(kind):
    y, dist = make_data(300, seed=25, kind=kind, noise=1.3, m=40)
    for c in (0.5, 0.9, 0.8, 0.95, 0.99):
        if kind == "gaussian":
            lo, hi = stats.norm.interval(c, dist.mean(), dist.std())
        elif kind == "quantile":
            if c not in (0.5, 0.9):
                continue  # between given levels the interpolation itself is tested in test_distributions
            j = {0.5: (1, 3), 0.9: (0, 4)}[c]
            lo, hi = dist.values[:, j[0]], dist.values[:, j[1]]
        else:
            lo, hi = _sample_interval(dist.samples, c)
        inside = np.mean((y >= lo) & (y <= hi))
        assert rm.interval_coverage(y, dist, coverage=c) == pytest.approx(inside, abs=1e-12)
        table = rm.interval_table(y, dist, coverages=(c,))
        assert table["observed"].iloc[0] == pytest.approx(inside, abs=1e-12)
        assert table["mean_width"].iloc[0] == pytest.approx(np.mean(hi - lo), rel=1e-10)
        assert table["interval_score"].iloc[0] == pytest.approx(_interval_score(y, lo, hi, c), rel=1e-10)


def test_interval_table_schema_and_default_levels():
    y, dist = make_data(100, seed=26)
    t = rm.interval_table(y, dist)
    assert list(t.columns) == ["coverage", "observed", "mean_width", "interval_score"]
    assert_allclose(t["coverage"], [0.5, 0.8, 0.9, 0.95, 0.99])
    assert np.all(np.diff(t["observed"]) >= 0) and np.all(np.diff(t["mean_width"]) > 0)


@pytest.mark.parametrize("kind", KINDS)
def test_interval_table_keeps_the_given_order_of_coverages(kind):
    """The Gaussian fast path walks the coverages sorted; the table must come back in the caller's order."""
    y, dist = make_data(300, seed=33, kind=kind, noise=1.4)
    cov = (0.9, 0.5, 0.99, 0.5)
    t = rm.interval_table(y, dist, coverages=cov)
    assert_allclose(t["coverage"], cov)
    for i, c in enumerate(cov):
        assert_allclose(t.iloc[i].to_numpy(), rm.interval_table(y, dist, coverages=(c,)).iloc[0].to_numpy())


# =============================================================================================
# Calibrated vs miscalibrated
# =============================================================================================


@pytest.mark.parametrize("kind", KINDS)
def test_calibration_metrics_small_when_calibrated_larger_when_overconfident(kind):
    n = 4000
    good = make_data(n, seed=27, kind=kind, noise=1.0, m=50)
    bad = make_data(n, seed=27, kind=kind, noise=2.0, m=50)  # σ too small by 2×
    if kind == "quantile":
        # the QuantileSet's exponential tails are not Gaussian: simulate targets from the QuantileSet itself
        good = (good[1].sample(np.random.default_rng(0)), good[1])
        bad = (good[1].mean() + 2.0 * (good[0] - good[1].mean()), good[1])
    # kind == "sample": targets y = μ + σ·N(0, 1) are exchangeable with the members, so the randomised
    # PIT is exactly uniform (Czado et al. 2009); make_data already draws them that way
    thresholds = {
        "calibration_rmse": 0.03,
        "quantile_calibration_error": 1e-3,
        "miscalibration_area": 0.03,
        "max_calibration_deviation": 0.04,
    }
    funcs = {
        "calibration_rmse": rm.calibration_rmse,
        "quantile_calibration_error": rm.quantile_calibration_error,
        "miscalibration_area": rm.miscalibration_area,
        "max_calibration_deviation": rm.max_calibration_deviation,
    }
    for name, f in funcs.items():
        g, b = f(*good), f(*bad)
        assert g < thresholds[name], (name, g)
        assert b > 3 * g and b > thresholds[name], (name, g, b)
    if kind == "gaussian":
        assert rm.ence(*good) < 0.1 and rm.ence(*bad) > 0.6
        assert rm.reliability_score(*good) < 0.01 and rm.reliability_score(*bad) > 0.03


# =============================================================================================
# Weighted statistics = unweighted on repeated rows (the bootstrap's contract)
# =============================================================================================

EXCEPTIONS = {"pit_entropy", "ence"}  # documented: distinct rows / bin boundaries


def _repeated_pair(kind: str, seed: int, n: int, max_w: int):
    y, dist = make_data(n, seed=seed, kind=kind, noise=1.3, m=12)
    rng = np.random.default_rng(seed + 1)
    w = rng.integers(0, max_w + 1, n).astype(float)
    w[0] = max(w[0], 1.0)
    idx = np.repeat(np.arange(n), w.astype(int))
    # deterministic PIT (F(y)) so that both sides see the same PIT values for ensembles
    rows = rm.RegressionRows(y, dist, randomize_pit=False)
    rows_rep = rm.RegressionRows(y[idx], dist.take(idx), randomize_pit=False)
    return rows, rows_rep, w


@HYP
@given(st.sampled_from(KINDS), st.integers(0, 10_000), st.integers(5, 120), st.integers(1, 4))
def test_weighted_statistics_equal_repeated_rows(kind, seed, n, max_w):
    rows, rows_rep, w = _repeated_pair(kind, seed, n, max_w)
    a = rm.summary_statistics(rows, w)
    b = rm.summary_statistics(rows_rep, None)
    assert a.keys() == b.keys()
    for key in a.keys() - EXCEPTIONS:
        if np.isnan(b[key]):
            assert np.isnan(a[key]), key
            continue
        assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-12), (key, a[key], b[key])


@pytest.mark.parametrize("kind", KINDS)
def test_unit_weights_equal_no_weights_for_every_metric(kind):
    y, dist = make_data(157, seed=28, kind=kind)
    rows = rm.RegressionRows(y, dist)
    a = rm.summary_statistics(rows, np.ones(157))
    b = rm.summary_statistics(rows, None)
    for key in b:
        assert a[key] == pytest.approx(b[key], rel=1e-10, abs=1e-13), key


@pytest.mark.parametrize("binning", ["count", "width"])
def test_weighted_ence_close_to_repeated_rows(binning):
    """Bin boundaries of weighted equal-count bins may cut a repeated row differently: close, not equal."""
    for n, tol in ((300, 0.03), (3000, 1e-3)):
        y, dist = make_data(n, seed=29, noise=1.2)
        rows = rm.RegressionRows(y, dist)
        for w in (np.ones(n), np.random.default_rng(30).integers(1, 3, n).astype(float)):
            idx = np.repeat(np.arange(n), w.astype(int))
            a = rm.summary_statistics(rows, w, binning=binning)["ence"]
            b = rm.ence(y[idx], dist.take(idx), binning=binning)
            if binning == "width" or np.all(w == 1):
                assert a == pytest.approx(b, rel=1e-12)
            else:
                assert a == pytest.approx(b, abs=tol)


def test_weighted_spearman_equals_repeated_rows():
    """Regression test (a bug fixed in 3c5c3ff): the bootstrap re-ranks the resample."""
    for kind in KINDS:
        rows, rows_rep, w = _repeated_pair(kind, 31, 200, 3)
        a = rm.summary_statistics(rows, w)["spearman_sigma_abs_error"]
        b = stats.spearmanr(rows_rep.sigma, np.abs(rows_rep.eps)).statistic
        assert a == pytest.approx(b, rel=1e-9)


def test_weighted_pit_entropy_uses_distinct_resampled_rows():
    """Documented exception: the bootstrap entropy is the entropy of the distinct rows drawn."""
    rows, _, w = _repeated_pair("gaussian", 32, 200, 3)
    keep = w > 0
    sub = rm.RegressionRows(rows.y[keep], rows.dist.take(keep))
    assert rm.summary_statistics(rows, w)["pit_entropy"] == pytest.approx(rm.pit_entropy(sub, None), rel=1e-12)
