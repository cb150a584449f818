"""Heavy-tail-robust regression statistics: ZMS and mean log z² with their tests and intervals,
and ENCE against the number of σ-bins with its perfect-calibration curve.  Exact identities, invariances
(hypothesis) and seeded simulations with binomial tolerances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

import calib_core as cc
from calib_core.base.regression import Gaussian, QuantileSet, SampleSet, norm_ppf
from calib_core.calibrators import registry as reg
from calib_core.inference.regression import infer_regression
from calib_core.metrics import regression as rm
from calib_core.metrics import regression_tails as ht
from calib_core.metrics.regression import RegressionRows, summary_statistics

TAU9 = np.arange(1, 10) / 10


def gaussian(n, rng, sigma_factor=1.0):
    mu = rng.normal(size=n)
    s = rng.uniform(0.5, 2.0, n)
    return mu + s * rng.standard_normal(n), Gaussian(mu, s * sigma_factor)


def binomial_band(rate: float, reps: int, k: float = 3.0) -> tuple[float, float]:
    sd = np.sqrt(rate * (1 - rate) / reps)
    return rate - k * sd, rate + k * sd


# ---------------------------------------------------------------------------------------------- definitions
def test_point_values_follow_their_definitions():
    rng = np.random.default_rng(0)
    y, d = gaussian(500, rng)
    z = (y - d.mean()) / d.std()
    assert rm.zms(y, d) == pytest.approx(np.mean(z * z), rel=1e-13)
    assert rm.mean_log_z2(y, d) == pytest.approx(np.mean(np.log(z * z)), rel=1e-13)
    vals = summary_statistics(RegressionRows(y, d))
    assert vals["zms"] == rm.zms(y, d) and vals["mean_log_z2"] == rm.mean_log_z2(y, d)
    assert reg.metric("zms")(y, d) == vals["zms"] and reg.metric("mean_log_z2")(y, d) == vals["mean_log_z2"]
    assert reg.metric("zms").kind == reg.CALIBRATION and reg.metric("zms").direction == 1.0
    assert reg.metric("mean_log_z2").direction == pytest.approx(-(np.euler_gamma + np.log(2.0)))


def test_zero_z_rows_are_left_out_of_the_log_variant_only():
    y = np.array([0.0, 1.0, -2.0, 0.5])
    d = Gaussian(np.zeros(4), np.ones(4))
    assert rm.zms(y, d) == pytest.approx(np.mean(y * y))
    assert rm.mean_log_z2(y, d) == pytest.approx(np.mean(np.log(y[1:] ** 2)))
    res = infer_regression(np.tile(y, 50), Gaussian(np.zeros(200), np.ones(200)), n_boot=50, n_null=50)
    assert "50 row(s) with z = 0" in res.table.loc["mean_log_z2", "note"]


def test_gaussian_reference_constants():
    assert rm.LOG_CHI2_1_MEAN == pytest.approx(-1.2703628454614782, rel=1e-14)
    x = stats.chi2(1)
    assert rm.LOG_CHI2_1_MEAN == pytest.approx(x.expect(np.log), rel=1e-6)
    assert rm.LOG_CHI2_1_VAR == pytest.approx(x.expect(lambda v: (np.log(v) - rm.LOG_CHI2_1_MEAN) ** 2), rel=1e-6)


@pytest.mark.parametrize("nu", [2.5, 3.0, 5.0, 30.0])
def test_student_moments_of_log_z2(nu):
    t = stats.t(nu, scale=np.sqrt((nu - 2) / nu))
    mean, var = ht.log_z2_moments_student(nu)
    assert mean == pytest.approx(t.expect(lambda v: np.log(v * v)), rel=1e-6)
    assert var == pytest.approx(t.expect(lambda v: (np.log(v * v) - mean) ** 2), rel=1e-5)
    big = ht.log_z2_moments_student(1e9)
    assert big[0] == pytest.approx(rm.LOG_CHI2_1_MEAN, abs=1e-8) and big[1] == pytest.approx(rm.LOG_CHI2_1_VAR)
    with pytest.raises(ValueError, match="ν > 2"):
        ht.log_z2_moments_student(2.0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(-20, 20), st.floats(0.3, 3.0))
def test_scale_behaviour_is_exact(seed, e, frac):
    """σ → cσ: ZMS → ZMS/c², mean log z² → mean log z² − 2 log c (exact for c a power of two; to rounding else)."""
    rng = np.random.default_rng(seed)
    y, d = gaussian(64, rng)
    for c in (2.0**e, frac):
        d2 = Gaussian(d.mean(), c * d.std())
        assert rm.zms(y, d2) == pytest.approx(rm.zms(y, d) / c**2, rel=1e-12)
        assert rm.mean_log_z2(y, d2) == pytest.approx(rm.mean_log_z2(y, d) - 2 * np.log(c), rel=1e-12, abs=1e-12)
    # a common scale of y, μ and σ changes nothing
    k = 2.0**e
    dk = Gaussian(k * d.mean(), k * d.std())
    assert rm.zms(k * y, dk) == pytest.approx(rm.zms(y, d), rel=1e-13)


# ---------------------------------------------------------------------------------------------- tests, exact
def test_zms_test_is_the_exact_chi2_for_gaussians():
    rng = np.random.default_rng(2)
    y, d = gaussian(400, rng, sigma_factor=0.95)
    res = infer_regression(y, d, n_boot=200, n_null=200)
    row = res.table.loc["zms"]
    z2 = ((y - d.mean()) / d.std()) ** 2
    s = z2.sum()
    p = 2 * min(stats.chi2(400).cdf(s), stats.chi2(400).sf(s))
    assert row["p_value"] == pytest.approx(p, rel=1e-10)
    assert row["perfect"] == 1.0 and row["family"] == "secondary"
    assert row["ci_low"] < row["value"] < row["ci_high"]
    lrow = res.table.loc["mean_log_z2"]
    zstat = (np.mean(np.log(z2)) - rm.LOG_CHI2_1_MEAN) / np.sqrt(rm.LOG_CHI2_1_VAR / 400)
    assert lrow["p_value"] == pytest.approx(2 * stats.norm.sf(abs(zstat)), rel=1e-10)


def test_false_alarm_rate_of_the_exact_pieces_many_data_sets():
    """20,000 calibrated Gaussian data sets at N = 50 and 200 (vectorised): both tests reject at ≈ 5%."""
    rng = np.random.default_rng(7)
    reps = 20_000
    lo, hi = binomial_band(0.05, reps, 4.0)
    for n in (50, 200):
        z = rng.standard_normal((reps, n))
        s = (z * z).sum(axis=1)
        p_zms = np.minimum(1, 2 * np.minimum(special.chdtr(n, s), special.chdtrc(n, s)))
        m = np.log(z * z).mean(axis=1)
        p_log = 2 * stats.norm.sf(np.abs(m - rm.LOG_CHI2_1_MEAN) / np.sqrt(rm.LOG_CHI2_1_VAR / n))
        assert lo < np.mean(p_zms < 0.05) < hi, n
        assert lo < np.mean(p_log < 0.05) < hi, (n, np.mean(p_log < 0.05))


@pytest.mark.parametrize("layout", ["gaussian", "quantile"])
def test_false_alarms_and_interval_coverage_through_the_pipeline(layout):
    """Calibrated forecasters (N = 300) through infer_regression: ZMS and mean log z² reject at ≈ 5%, and the
    intervals cover the population value (1; −1.2704 for Gaussians) at ≈ 95%."""
    rng = np.random.default_rng(31 if layout == "gaussian" else 32)
    reps = 160 if layout == "gaussian" else 80
    rej = {"zms": 0, "mean_log_z2": 0}
    cover = {"zms": 0, "mean_log_z2": 0}
    for i in range(reps):
        if layout == "gaussian":
            y, d = gaussian(300, rng)
        else:
            mu, s = rng.normal(size=300), rng.uniform(0.5, 2.0, 300)
            d = QuantileSet(TAU9, mu[:, None] + s[:, None] * norm_ppf(TAU9)[None, :])
            y = d.sample(rng)
        t = infer_regression(y, d, n_boot=300, n_null=100, seed=i).table
        for k in rej:
            rej[k] += t.loc[k, "p_value"] < 0.05
        cover["zms"] += t.loc["zms", "ci_low"] <= 1.0 <= t.loc["zms", "ci_high"]
        if layout == "gaussian":
            cover["mean_log_z2"] += t.loc["mean_log_z2", "ci_low"] <= rm.LOG_CHI2_1_MEAN <= t.loc["mean_log_z2",
                                                                                                    "ci_high"]
    hi = binomial_band(0.05, reps, 3.0)[1]
    assert rej["zms"] / reps < hi and rej["mean_log_z2"] / reps < hi, rej
    if layout == "gaussian":
        lo_c = binomial_band(0.95, reps, 3.0)[0]
        assert cover["zms"] / reps > lo_c and cover["mean_log_z2"] / reps > lo_c, cover


def test_power_against_over_confidence():
    rng = np.random.default_rng(5)
    y, d = gaussian(2000, rng, sigma_factor=0.85)
    t = infer_regression(y, d, n_boot=200, n_null=200).table
    assert t.loc["zms", "p_value"] < 1e-6 and t.loc["zms", "value"] > 1.2
    assert t.loc["mean_log_z2", "p_value"] < 1e-6 and t.loc["mean_log_z2", "value"] > rm.LOG_CHI2_1_MEAN


def test_ensemble_and_quantile_references():
    rng = np.random.default_rng(9)
    n = 3000
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    ens = SampleSet(mu[:, None] + s[:, None] * rng.standard_normal((n, 20)))
    y = mu + s * rng.standard_normal(n)
    t = infer_regression(y, ens, n_boot=100, n_null=100).table
    # finite-M ensembles: E z² of the exchangeability null is (M + 1)/(M − 1)·… > 1, not 1
    assert t.loc["zms", "perfect"] > 1.0 and np.isfinite(t.loc["zms", "p_value"])
    assert np.isfinite(t.loc["mean_log_z2", "perfect"]) and t.loc["mean_log_z2", "perfect_se"] > 0


# ---------------------------------------------------------------------------------------------- ENCE by bins
@pytest.mark.parametrize("binning", ["count", "width"])
def test_ence_by_bins_reproduces_ence(binning):
    rng = np.random.default_rng(3)
    y, d = gaussian(2001, rng)
    rows = RegressionRows(y, d)
    t = ht.ence_by_bins(rows, bin_counts=(1, 2, 7, 15, 50), binning=binning, n_null=200)
    for b, v in zip(t["n_bins"], t["ence"]):
        assert v == pytest.approx(rm.ence(y, d, n_bins=int(b), binning=binning), rel=1e-9), b
    assert (t["null_low"] <= t["null_mean"]).all() and (t["null_mean"] <= t["null_high"]).all()


def test_ence_null_grows_with_the_number_of_bins_and_matches_simulation():
    """Pernot: under perfect calibration ENCE grows with B.  The gamma null mean agrees with a direct simulation
    of calibrated targets (equal σ per bin makes the gamma law exact)."""
    rng = np.random.default_rng(4)
    n = 1200
    s = np.repeat([0.5, 1.0, 2.0, 4.0], n // 4)
    mu = np.zeros(n)
    y = s * rng.standard_normal(n)
    rows = RegressionRows(y, Gaussian(mu, s))
    t = ht.ence_by_bins(rows, bin_counts=(4, 8, 24, 60), n_null=4000)
    assert np.all(np.diff(t["null_mean"]) > 0)
    sims = []
    for _ in range(600):
        ys = s * rng.standard_normal(n)
        sims.append([rm.ence(ys, Gaussian(mu, s), n_bins=b) for b in (4, 8, 24, 60)])
    sims = np.array(sims)
    se = sims.std(axis=0) / np.sqrt(len(sims))
    assert np.all(np.abs(t["null_mean"].to_numpy() - sims.mean(axis=0)) < 4 * se + 0.02 * sims.mean(axis=0))


def test_ence_by_bins_p_values_are_uniform_under_the_null_and_small_under_miscalibration():
    rng = np.random.default_rng(6)
    ps = []
    for _ in range(150):
        y, d = gaussian(400, rng)
        ps.append(ht.ence_by_bins(RegressionRows(y, d), bin_counts=(10,), n_null=200)["p_value"].iloc[0])
    hi = binomial_band(0.05, 150, 3.0)[1]
    assert np.mean(np.array(ps) < 0.05) < hi
    # σ that does not track the error: far above the band at every B
    n = 4000
    s = rng.uniform(0.2, 3.0, n)
    y = rng.standard_normal(n) * 1.3
    t = ht.ence_by_bins(RegressionRows(y, Gaussian(np.zeros(n), s)), n_null=200)
    assert (t["ence"] > t["null_high"]).all() and (t["p_value"] < 0.01).all()


def test_summary_path_has_zms_exactly():
    rng = np.random.default_rng(8)
    y, d = gaussian(3000, rng)
    pset = cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=d)
    from calib_core.scale import summary as cs

    rep = cs.report(cs.summarize(pset, spec=cs.spec_for(pset)), n_resamples=100, n_simulations=100)
    t = rep.metrics.set_index("metric")
    assert t.loc["zms", "value"] == pytest.approx(rm.zms(y, d), rel=1e-13)
    z2 = ((y - d.mean()) / d.std()) ** 2
    p = 2 * min(stats.chi2(3000).cdf(z2.sum()), stats.chi2(3000).sf(z2.sum()))
    assert t.loc["zms", "p_value"] == pytest.approx(p, rel=1e-9)
    assert np.isnan(t.loc["mean_log_z2", "value"])
