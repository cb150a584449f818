"""The regression labs' claims (labs 1–5), checked on the lab functions themselves.

Every lab function is seeded; the tolerances are stated multiples of the sampling noise at the sizes used
(so the tests can fail when the demonstration stops holding) and a few claims are checked over several seeds
with hypothesis.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from calib_core.base.regression import Gaussian
from calib_core.labs import lab
from calib_core.labs.cauchy import CAUCHY, HONEST, Cauchy, conditional_coverage, run_cauchy
from calib_core.labs.isotonic import AFTER, BEFORE, BayesianLinearRegression, isotonic_findings, run_isotonic
from calib_core.labs.marginal import IDEAL, MARGINAL, run_marginal
from calib_core.labs.nlpd import CALIBRATED, EQUAL_NLPD, equal_nlpd_sigma, nlpd_per_row, run_nlpd
from calib_core.labs.random_sigma import LEARNED, RANDOM, fit_learned_sigma, run_random_sigma
from calib_core.labs.regression import binned_coverage_table

SEEDS = settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def dkw(n: int, alpha: float = 0.01) -> float:
    """Dvoretzky–Kiefer–Wolfowitz: P(sup|ECDF − F| > ε) ≤ α for ε = sqrt(ln(2/α)/(2n))."""
    return float(np.sqrt(np.log(2.0 / alpha) / (2.0 * n)))


# ============================================================================================ shared pieces
def test_binned_coverage_of_a_calibrated_forecaster_is_within_its_band():
    rng = np.random.default_rng(5)
    n = 5000
    s = rng.uniform(0.5, 2.0, n)
    y = rng.normal(0.0, s)
    t = binned_coverage_table(s, y, Gaussian(np.zeros(n), s), coverage=0.8, n_bins=10)
    assert t["count"].sum() == n and (t["count"] == n // 10).all()
    assert np.all(np.diff(t["key_mean"]) > 0) and np.all(t["key_low"] <= t["key_high"])
    # 500 rows per bin: s.e. of a coverage 0.018; the 95% band is ±0.035, so all 10 inside happens ~60% of the
    # time — check the weaker, safe statement: every bin within 4 s.e., the mean within 3 s.e. of 0.8
    assert np.all(np.abs(t["observed"] - 0.8) < 4 * np.sqrt(0.16 / 500))
    assert abs(t["observed"].mean() - 0.8) < 3 * np.sqrt(0.16 / n)
    # and an over-confident one (σ halved) covers far less in every bin
    t2 = binned_coverage_table(s, y, Gaussian(np.zeros(n), s / 2), coverage=0.8, n_bins=10)
    assert (t2["observed"] < t2["band_low"]).all()


# ============================================================================================ lab 1
@pytest.fixture(scope="module")
def lab1():
    return run_random_sigma(n_test=4000, n_cal=2000, seed=0)


def test_lab1_learned_sigma_fit_recovers_sigma_equal_x():
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 1.0, 20000)
    a, b = fit_learned_sigma(x, np.abs(rng.normal(0.0, x)))
    # E|ε| = x·√(2/π): intercept ≈ 0, slope ≈ 0.798 (s.e. of the slope ≈ 0.006 at n = 20,000)
    assert abs(a) < 0.02 and b == pytest.approx(np.sqrt(2 / np.pi), abs=0.03)


def test_lab1_random_sigma_looks_calibrated_after_isotonic(lab1):
    """Levi Fig. 2c: both curves on the diagonal after Kuleshov's recalibration.

    A perfectly calibrated forecaster has calibration RMSE ≈ sqrt(mean p(1−p)/N) ≈ 0.006 at N = 4000 test rows; the
    map fitted on 2000 rows adds ≈ 0.009; 0.03 is > 2× their sum.
    """
    assert lab1.value(RANDOM, "raw", "calibration_rmse") > 0.15  # σ ~ U[1, 10] against a true σ ≤ 1
    assert lab1.value(RANDOM, "isotonic", "calibration_rmse") < 0.03
    assert lab1.value(LEARNED, "isotonic", "calibration_rmse") < 0.03
    assert lab1.value(RANDOM, "isotonic", "max_calibration_deviation") < dkw(4000) + dkw(2000)


def test_lab1_levi_diagram_and_ence_tell_them_apart(lab1):
    """With σ independent of |ε| each σ-bin has the same RMSE while RMV spans s·[1, 10]: ENCE ≈ 0.5 analytically
    (noise ≈ 0.03 with 15 bins of 267 rows); the learned σ tracks the error (per-bin relative noise ≈ 0.04)."""
    for stage in ("STD scaling", "isotonic"):
        assert lab1.value(RANDOM, stage, "ence") > 0.35
        assert lab1.value(LEARNED, stage, "ence") < 0.15
    # the Levi diagram itself: random σ's RMSE is flat (max/min over bins ≈ 1) while its RMV grows ~10×
    levi = lab1.tables[(RANDOM, "isotonic")]["levi_bins"]
    assert levi["rmv"].iloc[-1] / levi["rmv"].iloc[0] > 4
    assert levi["rmse"].max() / levi["rmse"].min() < 1.6
    learned = lab1.tables[(LEARNED, "isotonic")]["levi_bins"]
    assert np.all(np.abs(learned["rmse"] / learned["rmv"] - 1) < 0.25)
    # rank correlation of σ with |ε| (s.e. 1/√4000 ≈ 0.016)
    assert abs(lab1.value(RANDOM, "raw", "spearman_sigma_abs_error")) < 0.06
    assert lab1.value(LEARNED, "raw", "spearman_sigma_abs_error") > 0.3


def test_lab1_cv_is_the_spread_of_sigma_not_its_information(lab1):
    """Cv (Levi eq. 9) is scale invariant: U[1, 10] and σ ∝ x, x ~ U[0.1, 1], both have Cv = (9/√12)/5.5 ≈ 0.47 —
    Cv measures the spread of σ, not whether σ tracks the error (it flags a constant σ, see lab 3)."""
    expected = (9 / np.sqrt(12)) / 5.5
    assert lab1.value(RANDOM, "raw", "cv") == pytest.approx(expected, abs=0.03)
    assert lab1.value(LEARNED, "raw", "cv") == pytest.approx(expected, abs=0.06)


def test_lab1_conditional_curve_of_low_sigma_bins_is_off_the_diagonal(lab1):
    """Within the smallest-σ bins the recalibrated random σ is over-confident: far more than 10% of targets fall
    below the 10% quantile (calibration conditional on σ fails), while the learned σ stays inside its band."""
    rand = lab1.conditional_curve(RANDOM, "isotonic", (0, 1, 2)).set_index("level")
    assert rand.loc[0.1, "observed"] > rand.loc[0.1, "band_high"] + 0.05
    learned = lab1.conditional_curve(LEARNED, "isotonic", (0, 1, 2)).set_index("level")
    inside = (learned["observed"] >= learned["band_low"] - 0.02) & (learned["observed"] <= learned["band_high"] + 0.02)
    assert inside.mean() > 0.9
    assert lab1.conditional_curve(RANDOM, "isotonic", ()) is None


@SEEDS
@given(seed=st.integers(0, 10_000))
def test_lab1_claim_holds_for_any_seed(seed):
    r = run_random_sigma(n_test=3000, n_cal=1500, seed=seed, n_resamples=0)
    assert r.value(RANDOM, "isotonic", "calibration_rmse") < 0.035
    assert r.value(RANDOM, "isotonic", "ence") > 0.3
    assert r.value(LEARNED, "isotonic", "ence") < 0.2


def test_lab1_registry_entry():
    assert lab("random_sigma").reference.startswith("Levi")


# ============================================================================================ lab 2
def test_lab2_cauchy_distribution_matches_scipy():
    rng = np.random.default_rng(3)
    loc, scale, y = rng.normal(size=50), rng.uniform(0.1, 3, 50), rng.normal(size=50) * 3
    d = Cauchy(loc, scale)
    assert np.allclose(d.cdf(y), stats.cauchy.cdf(y, loc, scale))
    assert np.allclose(d.logpdf(y), stats.cauchy.logpdf(y, loc, scale))
    assert np.allclose(d.ppf(0.9), stats.cauchy.ppf(0.9, loc, scale))
    assert np.allclose(d.cdf(d.ppf(np.full(50, 0.3))), 0.3)
    assert np.all(np.isinf(d.var())) and np.all(np.isinf(d.crps(y)))
    assert len(d.take(np.arange(5))) == 5


def test_lab2_cauchy_is_quantile_calibrated_but_useless():
    """Levi §2: the PIT is exactly uniform (KS within the DKW bound for both forecasters), the scale has no rank
    information (Spearman s.e. 1/√N ≈ 0.014), but the γ-binned coverage runs from ≈ 0 to ≈ 1 and follows the
    exact 2Φ(γ·tan(πc/2)) − 1; N(0, 1) covers the nominal share in every bin (500 rows: s.e. 0.022)."""
    r = run_cauchy(n=5000, seed=0, n_bins=10, coverage=0.5)
    for m in (CAUCHY, HONEST):
        assert r.value(m, "max_calibration_deviation") < r.dkw_bound
        assert r.value(m, "calibration_rmse") < 0.02
        assert r.value(m, "coverage") == pytest.approx(0.5, abs=3 * np.sqrt(0.25 / 5000))
    assert abs(r.value(CAUCHY, "spearman_scale_abs_y")) < 0.05
    assert r.value(CAUCHY, "min_bin_coverage") < 0.15 and r.value(CAUCHY, "max_bin_coverage") > 0.9
    assert r.value(HONEST, "min_bin_coverage") > 0.5 - 4 * 0.0224
    assert r.value(HONEST, "max_bin_coverage") < 0.5 + 4 * 0.0224
    t = r.tables[CAUCHY]["coverage_by_scale"]
    exact = conditional_coverage(t["key_mean"], 0.5)
    # the curve is concave over most of the range, so the value at the bin mean is a little above the bin's
    # average; 0.05 covers that and 4 s.e. of a 500-row proportion is 0.09 — use the sum
    assert np.max(np.abs(t["observed"] - exact)) < 0.14
    assert np.all(np.diff(t["observed"]) > -0.05)  # coverage grows with γ
    assert r.value(CAUCHY, "nll") > r.value(HONEST, "nll") + 0.3  # the proper score is not fooled


def test_lab2_selected_small_scale_bins_are_over_confident():
    """Given a small γ the Cauchy's intervals are far too narrow: its PIT within the lowest γ-bins piles up at 0 and 1
    (P(u < 0.05) = P(|y| > γ·tan(0.45π)), large for γ < 0.25) while N(0, 1)'s PIT on the same rows is uniform."""
    r = run_cauchy(n=5000, seed=0, n_bins=10)
    pit = r.selected_pit((0, 1))
    cauchy, honest = pit[CAUCHY]["density"].to_numpy(), pit[HONEST]["density"].to_numpy()
    assert pit[CAUCHY]["count"].sum() == 1000
    assert cauchy[0] > 3 and cauchy[-1] > 3 and np.median(cauchy) < 0.6
    assert np.all(np.abs(honest - 1) < 0.6)
    assert r.selected_pit(()) is None


@SEEDS
@given(seed=st.integers(0, 10_000), coverage=st.sampled_from([0.3, 0.5, 0.8]))
def test_lab2_claim_holds_for_any_seed_and_level(seed, coverage):
    r = run_cauchy(n=4000, seed=seed, n_bins=8, coverage=coverage)
    assert r.value(CAUCHY, "max_calibration_deviation") < r.dkw_bound
    assert r.value(CAUCHY, "max_bin_coverage") - r.value(CAUCHY, "min_bin_coverage") > 0.5
    assert r.value(HONEST, "max_bin_coverage") - r.value(HONEST, "min_bin_coverage") < 0.2


# ============================================================================================ lab 3
def test_lab3_marginal_forecaster_is_calibrated_but_not_sharp():
    """QR claim 5: both pass the quantile-calibration test (KS below the DKW bound); sharpness is √401 against 1
    exactly; the marginal's Levi bins all sit at RMV = √401; CRPS ≈ 20× larger (CRPS of N(0, s²) at its own draws
    is s/√π); the marginal's coverage given x collapses at the extremes and is 100% near x = 0."""
    r = run_marginal(n=5000, seed=0)
    assert r.marginal_sigma == pytest.approx(np.sqrt(401.0))
    for m in (IDEAL, MARGINAL):
        assert r.value(m, "max_calibration_deviation") < r.dkw_bound
        assert r.value(m, "calibration_rmse") < 0.02
        assert r.value(m, "cv") == 0.0
        assert r.value(m, "ence") < 0.1  # both constant σ, both on the diagonal: ENCE does not see it
    assert r.value(MARGINAL, "sharpness") == pytest.approx(np.sqrt(401.0))
    assert r.value(IDEAL, "sharpness") == pytest.approx(1.0)
    assert r.value(MARGINAL, "crps") / r.value(IDEAL, "crps") == pytest.approx(np.sqrt(401.0), rel=0.1)
    assert r.value(MARGINAL, "nll") - r.value(IDEAL, "nll") == pytest.approx(np.log(np.sqrt(401.0)), abs=0.1)
    levi = r.tables[MARGINAL]["levi_bins"]
    assert np.allclose(levi["rmv"], np.sqrt(401.0))
    cov = r.tables[MARGINAL]["coverage_by_x"].set_index("bin")["observed"]
    assert cov.iloc[0] < 0.5 and cov.iloc[-1] < 0.5 and cov.iloc[len(cov) // 2] > 0.99
    assert r.value(IDEAL, "min_bin_coverage") > 0.9 - 4 * np.sqrt(0.09 / 333)


def test_lab3_marginal_pit_given_extreme_x_is_degenerate():
    r = run_marginal(n=5000, seed=0, n_bins=15)
    low, high = r.selected_pit((0,)), r.selected_pit((14,))
    # lowest x-bin: y ≈ 5x ≪ 0, F_marginal(y) ≈ Φ(5x/20) small; highest: close to 1
    assert low[MARGINAL]["density"].iloc[0] > 10 and (low[MARGINAL]["density"].iloc[5:] == 0).all()
    assert high[MARGINAL]["density"].iloc[-1] > 10 and (high[MARGINAL]["density"].iloc[:-5] == 0).all()
    assert low[IDEAL]["density"].max() < 3 and high[IDEAL]["density"].max() < 3


@SEEDS
@given(seed=st.integers(0, 10_000), slope=st.floats(0.5, 8.0), x_std=st.floats(0.5, 6.0))
def test_lab3_marginal_is_calibrated_for_any_parameters(seed, slope, x_std):
    r = run_marginal(n=3000, seed=seed, slope=slope, x_std=x_std, n_resamples=0)
    assert r.value(MARGINAL, "max_calibration_deviation") < r.dkw_bound
    assert r.value(MARGINAL, "sharpness") / r.value(IDEAL, "sharpness") == pytest.approx(
        np.sqrt(slope**2 * x_std**2 + 1.0))


# ============================================================================================ lab 4
def test_lab4_bayesian_linear_regression_closed_form():
    rng = np.random.default_rng(2)
    x = rng.uniform(-4, 4, 256)
    y = 3 * x + rng.standard_normal(256)
    # a vanishing prior gives least squares; the predictive variance is 1/β + φᵀS_Nφ with S_N = (αI + βΦᵀΦ)⁻¹
    ols = np.linalg.lstsq(np.column_stack([np.ones(256), x]), y, rcond=None)[0]
    blr = BayesianLinearRegression(alpha=1e-10, beta=1.0).fit(x, y)
    assert np.allclose(blr.mean_, ols, atol=1e-6)
    blr = BayesianLinearRegression(alpha=2.0, beta=4.0).fit(x, y)
    phi = np.column_stack([np.ones(256), x])
    s_n = np.linalg.inv(2.0 * np.eye(2) + 4.0 * phi.T @ phi)
    assert np.allclose(blr.mean_, 4.0 * s_n @ phi.T @ y)
    pred = blr.predict(np.array([-2.0, 0.5]))
    f = np.array([[1, -2.0], [1, 0.5]])
    assert np.allclose(pred.var(), 0.25 + np.einsum("ij,jk,ik->i", f, s_n, f))
    assert np.allclose(pred.mean(), f @ blr.mean_)
    # a strong prior shrinks the weights towards 0
    assert abs(BayesianLinearRegression(alpha=1e6).fit(x, y).mean_[1]) < 0.01


def test_lab4_isotonic_truncates_spikes_and_shifts():
    """QR §3 with its own sizes (256 training, 32 calibration points).

    * truncation: R reaches 1 at the largest calibration PIT c_(m), so the test targets above F⁻¹(c_(m)) get zero
      density — their share is ≈ 1 − c_(m) (binomial s.e. ≤ 0.005 at 2,000 test rows, plus the BLR's own small
      miscalibration) — and the test NLL is infinite;
    * spikes: the slopes of R are 1/(m·spacing) of the calibration PITs — far above 1;
    * mean: E[Y_iso] = μ − δσ (claim 3), checked against an independent numerical integral of the density.
    """
    r = run_isotonic(seed=0)
    n = r.numbers
    assert n["truncation_u"] == pytest.approx(r.calibration_pairs["u"].max())
    assert n["truncation_u"] < 1.0 and np.isfinite(n["truncation_point"])
    assert n["zero_density_share"] == pytest.approx(1 - n["truncation_u"], abs=0.02)
    assert n["zero_density_share"] > 0 and n["nll_after"] == np.inf and np.isfinite(n["nll_after_finite_rows"])
    assert n["spike_ratio"] > 5
    d = r.density
    y, g, f = d["y"].to_numpy(), d[AFTER].to_numpy(), d[BEFORE].to_numpy()
    assert np.all(g[y > n["truncation_point"] + 1e-9] == 0)  # the support ends at y_trun
    ratio = g[f > 1e-3] / f[f > 1e-3]
    assert ratio.max() / max(ratio[ratio > 0].min(), 1e-12) > 3  # piecewise rescaled: jumps, not a smooth density
    assert np.trapezoid(g, y) == pytest.approx(1.0, abs=2e-3)
    numeric_mean = np.trapezoid(y * g, y)
    assert n["mean_after"] == pytest.approx(numeric_mean, abs=2e-3 * n["sigma_star"])
    assert n["mean_shift"] == pytest.approx(-n["delta"] * n["sigma_star"], abs=1e-9)
    assert abs(n["mean_shift"]) > 0.01


def test_lab4_endpoint_removes_the_truncation_only():
    r = run_isotonic(seed=0, add_endpoint=True)
    n = r.numbers
    assert n["truncation_u"] == 1.0 and n["truncation_point"] == np.inf
    assert n["zero_density_share"] == 0.0 and np.isfinite(n["nll_after"])
    assert r.calibration_pairs["target"].max() == pytest.approx(32 / 33)  # targets i/(m + 1)
    assert n["spike_ratio"] > 5 and abs(n["mean_shift"]) > 0.01  # spikes and mean shift remain


@SEEDS
@given(seed=st.integers(0, 10_000), endpoint=st.booleans())
def test_lab4_side_effects_for_any_seed(seed, endpoint):
    n = run_isotonic(seed=seed, add_endpoint=endpoint, n_test=1000, grid_points=200).numbers
    if endpoint:
        assert n["truncation_u"] == 1.0 and n["zero_density_share"] == 0.0
    else:
        assert n["truncation_u"] < 1.0
        assert n["zero_density_share"] == pytest.approx(1 - n["truncation_u"], abs=0.03)
    assert n["spike_ratio"] > 5  # P(min spacing of 32 uniforms > 1/160) ≈ 6e-4
    assert n["mean_shift"] == pytest.approx(-n["delta"] * n["sigma_star"], abs=1e-9)


# ============================================================================================ lab 5
@settings(max_examples=200, deadline=None)
@given(eps=st.floats(-30, 30).filter(lambda e: abs(e) > 1e-6), sigma=st.floats(1e-3, 30))
def test_lab5_equal_nlpd_sigma_solves_eq5(eps, sigma):
    """σ̃ is on the same NLPD contour (ACCRUE eq. 5) and on the other side of the minimum σ² = ε²."""
    assume((eps / sigma) ** 2 < 1300)  # beyond |z| ≈ 36 the other root exceeds the float range (σ̃ = +inf)
    st_ = float(equal_nlpd_sigma(np.array([eps]), np.array([sigma]))[0])
    a, b = nlpd_per_row(eps, sigma), nlpd_per_row(eps, st_)
    assert b == pytest.approx(a, rel=1e-7, abs=1e-7)
    w = (eps / sigma) ** 2
    if abs(w - 1) > 1e-3:
        assert (st_ - abs(eps)) * (sigma - abs(eps)) <= 0  # opposite sides of |ε|
        assert abs(st_ - sigma) > 1e-9 * sigma


def test_lab5_equal_nlpd_sigma_edge_cases():
    s = equal_nlpd_sigma(np.array([0.0, 2.0, 1.0]), np.array([1.5, 2.0, 3.0]))
    assert s[0] == 1.5 and s[1] == pytest.approx(2.0)  # ε = 0: no second root; σ = |ε|: the double root
    assert s[2] < 1.0
    far = equal_nlpd_sigma(np.array([1.0, 1.0]), np.array([1 / 32, 1e-4]))  # |z| = 32: w·e^(−w) underflows
    assert np.isfinite(far[0]) and nlpd_per_row(1.0, far[0]) == pytest.approx(nlpd_per_row(1.0, 1 / 32), rel=1e-9)
    assert far[1] == np.inf  # |z| = 10⁴: the other root is beyond the float range


def test_lab5_same_nlpd_different_reliability_and_falling_nlpd():
    """ACCRUE Fig. 2 at its own size (N = 1000).

    Left: the twin's mean NLPD equals the calibrated one to rounding (per-row equality), its RS is > 20× larger and
    its reliability diagram's largest gap > 0.1 (the calibrated one stays below the DKW bound 0.051).
    Right: mean NLPD strictly decreasing along the sequence (each row's is), RS and the diagram's gap increasing;
    the calibrated model's NLPD in the paper's convention is ≈ 0.455 = E log σ + ½ (s.e. ≈ 0.022 at N = 1000).
    """
    r = run_nlpd(n=1000, seed=0, steps=6, t_max=0.9)
    assert r.value(EQUAL_NLPD, "nlpd") == pytest.approx(r.value(CALIBRATED, "nlpd"), abs=1e-8)
    assert r.value(EQUAL_NLPD, "reliability") > 20 * r.value(CALIBRATED, "reliability")
    assert r.value(EQUAL_NLPD, "max_calibration_deviation") > 0.1
    assert r.value(CALIBRATED, "max_calibration_deviation") < dkw(1000)
    e_log_sigma = 1.5 * np.log(1.5) - 0.5 * np.log(0.5) - 1.0
    assert r.value(CALIBRATED, "nlpd_paper") == pytest.approx(e_log_sigma + 0.5, abs=3 * 0.0224)
    seq = r.metrics.set_index("model").loc[list(r.sequence)]
    assert len(seq) == 6 and seq["t"].is_monotonic_increasing
    assert np.all(np.diff(seq["nlpd"]) < 0)
    assert np.all(np.diff(seq["reliability"]) > 0)
    assert np.all(np.diff(seq["max_calibration_deviation"]) > 0)
    assert seq["nlpd_paper"].iloc[-1] < 0.1  # the paper's cyan line: NLPD 0.07
    curve = r.curves[EQUAL_NLPD].set_index("level")["observed"]
    assert abs(curve.loc[0.25] - 0.25) > 0.1  # the twin's reliability diagram is far off the diagonal


@SEEDS
@given(seed=st.integers(0, 10_000))
def test_lab5_claim_holds_for_any_seed(seed):
    r = run_nlpd(n=2000, seed=seed, steps=5, t_max=0.8)
    assert r.value(EQUAL_NLPD, "nlpd") == pytest.approx(r.value(CALIBRATED, "nlpd"), abs=1e-8)
    assert r.value(EQUAL_NLPD, "reliability") > 10 * r.value(CALIBRATED, "reliability")
    seq = r.metrics.set_index("model").loc[list(r.sequence)]
    assert np.all(np.diff(seq["nlpd"]) < 0) and np.all(np.diff(seq["reliability"]) > 0)


# ---------------------------------------------------------------------- lab 4: the text says what the numbers say
def test_lab4_base_model_is_fixed_when_m_or_the_test_size_moves():
    base = run_isotonic(n_cal=32)
    for kw in (dict(n_cal=72), dict(n_cal=512), dict(n_test=5000)):
        other = run_isotonic(**kw)
        assert other.posterior_mean == base.posterior_mean
        assert other.numbers["mean_before"] == base.numbers["mean_before"]


@pytest.mark.parametrize("kw", [dict(n_cal=32), dict(n_cal=512, add_endpoint=True), dict(n_cal=128, assumed_noise=0.5),
                                dict(n_cal=8, seed=3)])
def test_lab4_findings_are_computed_from_the_numbers(kw):
    result = run_isotonic(**kw)
    n = result.numbers
    text = " ".join(isotonic_findings(result, n_cal=kw["n_cal"], well_specified=kw.get("assumed_noise", 1.0) == 1.0))
    worse = n["calibration_rmse_after"] > n["calibration_rmse_before"]
    assert ("makes it worse" in text) == worse and ("makes it better" in text) == (not worse)
    assert f"{n['calibration_rmse_before']:.4f}" in text and f"{n['calibration_rmse_after']:.4f}" in text
    assert ("no truncation" in text) == (n["truncation_u"] == 1.0)
    assert ("NLL is ∞" in text) == (n["zero_density_share"] > 0)
    if n["zero_density_share"] > 0:
        assert f"{n['zero_density_share']:.1%}" in text
    assert f"{n['mean_shift']:+.3f}" in text


# ---------------------------------------------------------------------- labs 2 and 3: computed findings
@pytest.mark.parametrize("kw", [dict(), dict(n=500, coverage=0.9, seed=3), dict(n=2000, coverage=0.2, seed=7)])
def test_lab2_findings_are_computed_from_the_numbers(kw):
    from calib_core.labs.cauchy import CAUCHY, HONEST, cauchy_findings, run_cauchy

    r = run_cauchy(**kw)
    m = r.metrics.set_index("model")
    text = " ".join(cauchy_findings(r))
    ks = m["max_calibration_deviation"]
    assert ("both below it" in text) == bool((ks <= r.dkw_bound).all())
    assert f"{ks[CAUCHY]:.4f}" in text and f"{r.dkw_bound:.4f}" in text
    rho = m.loc[CAUCHY, "spearman_scale_abs_y"]
    assert ("carries no information" in text) == (abs(rho) <= 2 / np.sqrt(r.n - 1))
    best = CAUCHY if m.loc[CAUCHY, "nll"] < m.loc[HONEST, "nll"] else HONEST
    assert f"prefers {best}" in text
    assert f"covers {m.loc[CAUCHY, 'min_bin_coverage']:.0%}–{m.loc[CAUCHY, 'max_bin_coverage']:.0%}" in text


@pytest.mark.parametrize("kw", [dict(), dict(slope=0.0), dict(slope=1.0, noise=3.0, n=800, seed=2)])
def test_lab3_findings_are_computed_from_the_numbers(kw):
    from calib_core.labs.marginal import IDEAL, MARGINAL, marginal_findings, run_marginal

    r = run_marginal(**kw)
    m = r.metrics.set_index("model")
    text = " ".join(marginal_findings(r))
    assert ("both below it" in text) == bool((m["max_calibration_deviation"] <= r.dkw_bound).all())
    ratio = m.loc[MARGINAL, "sharpness"] / m.loc[IDEAL, "sharpness"]
    assert f"{ratio:.1f}× wider" in text
    spread_i = m.loc[IDEAL, "max_bin_coverage"] - m.loc[IDEAL, "min_bin_coverage"]
    spread_m = m.loc[MARGINAL, "max_bin_coverage"] - m.loc[MARGINAL, "min_bin_coverage"]
    assert ("it ignores x" in text) == (spread_m > 2 * spread_i)
    if kw.get("slope") == 0.0:  # the two forecasters coincide
        assert "a tie" in text
    else:
        assert "both prefer the ideal forecaster" in text


# ---------------------------------------------------------------------- labs 1 and 5: computed findings
@pytest.mark.parametrize("kw", [dict(), dict(n_test=1000, n_cal=400, sigma_low=0.1, sigma_high=0.5, seed=4)])
def test_lab1_findings_are_computed_from_the_numbers(kw):
    from calib_core.labs.random_sigma import LEARNED, RANDOM, STAGES, random_sigma_findings, run_random_sigma

    r = run_random_sigma(**kw)
    n = r.y_test.size
    for stage in STAGES:
        m = r.metrics[r.metrics["stage"] == stage].set_index("model")
        text = " ".join(random_sigma_findings(r, stage))
        bound = np.sqrt(np.log(200) / (2 * n))
        assert ("both below it" in text) == bool((m["max_calibration_deviation"] <= bound).all())
        assert ("ENCE tells them apart" in text) == (m.loc[RANDOM, "ence"] > 2 * m.loc[LEARNED, "ence"])
        assert f"Cv {m.loc[RANDOM, 'cv']:.2f} (random)" in text
        rho = m.loc[RANDOM, "spearman_sigma_abs_error"]
        assert ("random σ (carries no information" in text) == (abs(rho) <= 2 / np.sqrt(n - 1))


@pytest.mark.parametrize("kw", [dict(), dict(steps=2, t_max=0.1), dict(n=200, seed=5)])
def test_lab5_findings_are_computed_from_the_numbers(kw):
    from calib_core.labs.nlpd import nlpd_findings

    r = run_nlpd(**kw)
    m = r.metrics.set_index("model")
    text = " ".join(nlpd_findings(r))
    assert f"NLPD {m.loc[CALIBRATED, 'nlpd']:.6f} and {m.loc[EQUAL_NLPD, 'nlpd']:.6f} (the same)" in text
    seq = m.loc[list(r.sequence)]
    falls = bool(np.all(np.diff(seq["nlpd"]) < 0))
    rises = bool(np.all(np.diff(seq["reliability"]) > 0))
    assert ("the NLPD falls at every step" in text) == falls
    assert ("RS rises at every step" in text) == rises
    assert ("opposite directions" in text) == (falls and rises)
