"""calib_core.inference.regression: the verdict engine, tested as statistics (seeded simulations with
binomial tolerances) and against exact references (scipy's tests, closed forms, enumerations)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import calib_core as cc
from calib_core.base.regression import Gaussian, QuantileSet, SampleSet, norm_ppf
from calib_core.data.examples import diabetes_example, levi_synthetic
from calib_core.inference import regression as inf
from calib_core.inference.regression import PRIMARY, infer_regression
from calib_core.inference.regression_nulls import EnsembleNull, QuantileNull
from calib_core.inference.result import RESULT_COLUMNS
from calib_core.metrics.regression import RegressionRows, summary_statistics

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"
ECMWF = REAL / "weather_ecmwf_ens_precip_frankfurt" / "rain_frankfurt_mm.csv"
TAU9 = np.arange(1, 10) / 10


def calibrated(layout: str, n: int, rng: np.random.Generator, *, sigma_factor: float = 1.0, shift: float = 0.0,
               members: int = 50):
    """(y, dist) with y drawn from the predicted law itself (H0), or a miscalibrated variant:
    predicted σ × sigma_factor, predicted mean + shift·σ."""
    mu = rng.normal(size=n)
    s = rng.uniform(0.5, 2.0, n)
    sp, mp = s * sigma_factor, mu + shift * s
    if layout == "gaussian":
        return mu + s * rng.standard_normal(n), Gaussian(mp, sp)
    if layout == "quantile":
        truth = QuantileSet(TAU9, mu[:, None] + s[:, None] * norm_ppf(TAU9)[None, :])
        y = truth.sample(rng)  # a draw from the interpolated law the tool evaluates
        return y, QuantileSet(TAU9, mp[:, None] + sp[:, None] * norm_ppf(TAU9)[None, :])
    if layout == "ensemble":
        y = mu + s * rng.standard_normal(n)  # exchangeable with the members when unperturbed
        return y, SampleSet(mp[:, None] + sp[:, None] * rng.standard_normal((n, members)))
    raise ValueError(layout)


def binomial_ceiling(rate: float, reps: int) -> float:
    return rate + 2.0 * np.sqrt(rate * (1 - rate) / reps)


# -- exact agreement with the point estimates and with reference tests -----------------------------
@pytest.fixture(scope="module")
def gaussian_result():
    rng = np.random.default_rng(11)
    y, d = calibrated("gaussian", 3000, rng)
    return y, d, infer_regression(y, d, seed=3)


def test_values_are_the_metric_table(gaussian_result):
    y, d, res = gaussian_result
    ref = summary_statistics(RegressionRows(y, d, pit_seed=3))
    assert list(res.table.index) == list(ref)
    np.testing.assert_array_equal(res.table["value"].to_numpy(), np.array(list(ref.values())))
    assert list(res.table.columns) == RESULT_COLUMNS


def test_kinds_families_and_flags(gaussian_result):
    _, _, res = gaussian_result
    t = res.table
    assert t.loc["nll", "kind"] == "proper score" and t.loc["sharpness", "kind"] == "descriptive"
    assert set(t.index[t["family"] == "primary"]) == set(PRIMARY)
    assert (t.loc[t["kind"] == "descriptive", "p_value"].isna()).all()  # no verdict for descriptive metrics
    assert (t.loc[t["kind"] == "proper score", "p_value"].isna()).all()
    assert t.loc[t["kind"] == "proper score", "perfect"].notna().all()  # … but a reference
    cal = t[(t["kind"] == "calibration statistic")]
    assert cal["p_value"].notna().all()
    assert res.n_primary == 5 and res.expected_chance_flags == pytest.approx(0.05 * res.n_secondary)
    assert res.verdict in ("calibrated", "miscalibrated")
    for col in ("ci_low", "ci_high"):  # every statistic except the spacing entropy / RS has an interval
        missing = set(t.index[t[col].isna()])
        assert missing <= {"pit_entropy", "reliability_score"}, missing


def test_primary_tests_match_reference_implementations(gaussian_result):
    y, d, res = gaussian_result
    t = res.table
    n = y.size
    z = (y - d.mean()) / d.std()
    u = stats.norm.cdf(z)
    assert t.loc["max_calibration_deviation", "p_value"] == pytest.approx(
        stats.kstest(u, "uniform", method="exact").pvalue, rel=1e-6)
    assert t.loc["z_mean", "p_value"] == pytest.approx(stats.ttest_1samp(z, 0.0).pvalue, rel=1e-9)
    s = n * z.var()
    assert t.loc["z_std", "p_value"] == pytest.approx(2 * min(stats.chi2.cdf(s, n - 1), stats.chi2.sf(s, n - 1)))
    k = int(np.sum(np.abs(z) <= stats.norm.ppf(0.95)))
    assert t.loc["coverage_90", "p_value"] == pytest.approx(
        min(1, 2 * min(stats.binom.cdf(k, n, 0.9), stats.binom.sf(k - 1, n, 0.9))))
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert (t.loc["coverage_90", "ci_low"], t.loc["coverage_90", "ci_high"]) == pytest.approx((ci.low, ci.high))
    assert t.loc["z_skewness", "p_value"] == pytest.approx(stats.skewtest(z).pvalue, rel=1e-6)
    assert t.loc["z_excess_kurtosis", "p_value"] == pytest.approx(stats.kurtosistest(z).pvalue, rel=1e-6)
    # Monte-Carlo p-values carry their standard error
    assert 0 < t.loc["ence", "p_mc_se"] < 0.012
    assert t.loc["ence", "p_value"] >= 1 / (1 + 2000)


def test_gaussian_references_are_expectations_under_h0():
    rng = np.random.default_rng(12)
    mu, s = rng.normal(size=400), rng.uniform(0.5, 2, 400)
    d = Gaussian(mu, s)
    res = infer_regression(mu + s * rng.standard_normal(400), d)
    sims = [summary_statistics(RegressionRows(d.sample(rng), d)) for _ in range(300)]
    for key in ("nll", "crps", "interval_score_90", "coverage_90", "z_std", "ence", "calibration_rmse",
                "miscalibration_area", "max_calibration_deviation"):
        draws = np.array([x[key] for x in sims])
        ref = res.table.loc[key, "perfect"]
        assert abs(draws.mean() - ref) < 4 * draws.std() / np.sqrt(draws.size) + 1e-12, key


def test_quantile_set_null_moments_are_exact():
    rng = np.random.default_rng(13)
    n = 200
    q = np.sort(rng.normal(size=(n, 9)), axis=1) * rng.uniform(0.5, 2, (n, 1))
    d = QuantileSet(TAU9, q)
    rows = RegressionRows(d.sample(rng), d)
    m1, m2, m3, m4 = QuantileNull(rows).z_moments()
    np.testing.assert_allclose(m2, 1.0, rtol=1e-9)
    # midpoint quadrature of E z^k = ∫₀¹ z(F⁻¹(u))^k du on a fine grid, for 20 rows
    u = (np.arange(100_000) + 0.5) / 100_000
    pick = np.arange(0, n, 10)
    sub = d.take(pick)
    z = (sub.ppf(np.broadcast_to(u, (pick.size, u.size))) - sub.mean()[:, None]) / sub.std()[:, None]
    np.testing.assert_allclose((z**3).mean(axis=1), m3[pick], rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose((z**4).mean(axis=1), m4[pick], rtol=5e-3)


def test_ensemble_enumeration_gives_finite_m_coverage():
    rng = np.random.default_rng(14)
    y, d = calibrated("ensemble", 300, rng, members=50)
    null = EnsembleNull(RegressionRows(y, d), (0.5, 0.9, 0.99))
    # continuous members: the target's rank among M + 1 is uniform, so the probability is the same for every row
    # 90%: [x_(3), x_(48)] of 50 members covers ranks 3..47 → 45/51
    np.testing.assert_allclose(null.coverage_prob(0.9), 45 / 51)
    np.testing.assert_allclose(null.coverage_prob(0.5), (38 - 13) / 51)  # [x_(13), x_(38)]
    # with ties (zero rain) the probabilities differ per row; they match the swap simulation of SampleSet
    samples = np.maximum(rng.normal(0, 1, (2000, 10)), 0.0)
    target = np.maximum(rng.normal(0, 1, 2000), 0.0)
    tied = SampleSet(samples)
    null_t = EnsembleNull(RegressionRows(target, tied), (0.8,))
    sim = []
    for _ in range(200):
        ys, ds = tied.calibrated_draw(target, rng)
        lo, hi = ds.interval(0.8)
        sim.append(np.mean((ys >= lo) & (ys <= hi)))
    assert np.mean(sim) == pytest.approx(null_t.coverage_prob(0.8).mean(), abs=3 * np.std(sim) / np.sqrt(200) + 1e-3)


# -- the headline as a statistic ------------------------------------------------------------------
FAST = [("gaussian", 1000, 200), ("quantile", 500, 100), ("ensemble", 500, 100)]
#: the default run keeps the Gaussian study; the quantile and ensemble ones run with ``pytest -m slow``
FAST_PARAMS = [pytest.param(*f, id=f[0], marks=() if f[0] == "gaussian" else pytest.mark.slow) for f in FAST]


@pytest.mark.parametrize("layout, n, reps", FAST_PARAMS)
def test_false_alarm_rate_of_the_headline(layout, n, reps):
    rng = np.random.default_rng({"gaussian": 101, "quantile": 102, "ensemble": 103}[layout])
    alarms = 0
    ks_p, cov_p = [], []
    for i in range(reps):
        y, d = calibrated(layout, n, rng)
        res = infer_regression(y, d, seed=i, n_boot=100, n_null=1000)
        alarms += res.verdict == "miscalibrated"
        # a quantile set is tested at its stated levels only: the PIT histogram between them (continuous law: χ²
        # p-values uniform up to the χ² approximation) and the widest stated interval (80% for 0.1 … 0.9)
        ks_p.append(res.p_value("pit_chi2" if layout == "quantile" else "max_calibration_deviation"))
        cov_p.append(res.p_value("coverage_80" if layout == "quantile" else "coverage_90"))
    assert alarms / reps <= binomial_ceiling(0.05, reps), f"{alarms}/{reps} false alarms"
    # KS p-values are uniform under H0 (exact law); coverage p-values are (discrete and) not anti-conservative
    assert stats.kstest(ks_p, "uniform").pvalue > 0.001
    for a in (0.05, 0.2, 0.5):
        assert np.mean(np.array(cov_p) <= a) <= binomial_ceiling(a, reps)


@pytest.mark.parametrize("layout", ["gaussian", "quantile", "ensemble"])
def test_power_against_overconfidence(layout):
    rng = np.random.default_rng(21)
    hits = 0
    for i in range(10):
        y, d = calibrated(layout, 5000, rng, sigma_factor=0.8)
        res = infer_regression(y, d, seed=i, n_boot=100, n_null=1000)
        # the direction names over-confidence every time (a spurious "biased" next to it is a Holm-controlled
        # false rejection of the true mean-z hypothesis, ≤ 5% per data set)
        hits += res.verdict == "miscalibrated" and "over-confident" in res.direction
    assert hits == 10


def test_directions_under_confident_and_biased():
    rng = np.random.default_rng(22)
    y, d = calibrated("gaussian", 5000, rng, sigma_factor=1.25)
    res = infer_regression(y, d)
    assert res.verdict == "miscalibrated" and res.direction == "under-confident"
    assert res.sentence.startswith("Under-confident: ")
    y, d = calibrated("gaussian", 5000, rng, shift=0.2)
    res = infer_regression(y, d)
    assert res.verdict == "miscalibrated" and "biased high" in res.direction  # predictions above the targets
    y, d = calibrated("gaussian", 5000, rng, shift=-0.2)
    assert "biased low" in infer_regression(y, d).direction


def test_calibrated_sentence():
    rng = np.random.default_rng(23)
    y, d = calibrated("gaussian", 2000, rng)
    res = infer_regression(y, d, seed=1)
    if res.verdict == "calibrated":
        assert res.sentence == "No evidence of miscalibration at this N (5 tests, family-wise 5%)."
        assert res.direction == ""


# -- intervals ------------------------------------------------------------------------------------
def test_intervals_contain_the_value_or_say_why():
    rng = np.random.default_rng(31)
    for layout in ("gaussian", "ensemble"):
        y, d = calibrated(layout, 2000, rng)
        t = infer_regression(y, d).table
        ok = t["ci_low"].notna()
        outside = ok & ~((t["ci_low"] <= t["value"]) & (t["value"] <= t["ci_high"]))
        assert (t.loc[outside, "note"].str.len() > 0).all(), t.loc[outside]
        assert (t.loc[ok, "ci_low"] <= t.loc[ok, "ci_high"]).all()
        # debiased ENCE = ENCE − null mean, clipped at 0 (a non-negative quantity; the note says when it is clipped)
        raw = t.loc["ence", "value"] - t.loc["ence", "perfect"]
        assert t.loc["ence", "debiased"] == pytest.approx(max(raw, 0.0))
        assert raw >= 0 or "clipped at 0" in t.loc["ence", "note"]
        assert t.loc["ence", "ci_low"] >= 0


def test_coverage_of_the_population_value_by_the_ence_and_std_intervals():
    # population values at σ × 1.2: z_std = 1/1.2, ENCE = 1 − 1/1.2 per bin (all bins equal)
    rng = np.random.default_rng(32)
    reps, hits_std, hits_ence = 60, 0, 0
    for i in range(reps):
        y, d = calibrated("gaussian", 3000, rng, sigma_factor=1.2)
        t = infer_regression(y, d, seed=i, n_boot=400).table
        hits_std += t.loc["z_std", "ci_low"] <= 1 / 1.2 <= t.loc["z_std", "ci_high"]
        hits_ence += t.loc["ence", "ci_low"] <= 1 - 1 / 1.2 <= t.loc["ence", "ci_high"]
    for hits in (hits_std, hits_ence):
        assert hits / reps >= 0.95 - 2 * np.sqrt(0.05 * 0.95 / reps)


# -- known answers --------------------------------------------------------------------------------
@pytest.mark.slow  # trains the example's models (several seconds)
def test_diabetes_example_is_over_confident():
    for layout in ("gaussian", "quantile", "sample"):
        p = diabetes_example(layout)
        res = infer_regression(p.y, p.dist)
        assert res.verdict == "miscalibrated" and res.direction.startswith("over-confident"), layout
        assert res.sentence.startswith("Over-confident: ")


def test_levi_random_sigma_is_under_confident():
    p = levi_synthetic(n=5000, seed=0)
    k = p.model == "random sigma"
    res = infer_regression(p.y[k], p.dist.take(k))
    assert res.verdict == "miscalibrated" and res.direction == "under-confident"


@pytest.mark.slow
def test_levi_true_sigma_is_calibrated_on_95_of_100_seeds():
    good = 0
    for seed in range(100):
        p = levi_synthetic(n=10_000, seed=seed)
        k = p.model == "true sigma"
        good += infer_regression(p.y[k], p.dist.take(k), seed=seed, n_boot=100).verdict == "calibrated"
    assert good >= 95


@pytest.mark.skipif(not ECMWF.is_file(), reason="real data folder not found")
def test_ecmwf_rain_ensemble_is_miscalibrated_with_direction():
    p = cc.load_predictions(ECMWF)
    res = infer_regression(p.y, p.dist)
    assert res.verdict == "miscalibrated"
    assert "over-confident" in res.direction, res.sentence
    assert res.table.loc["ence", "flag"] or res.table.loc["coverage_90", "flag"]


def test_rows_and_values_can_be_reused():
    rng = np.random.default_rng(41)
    y, d = calibrated("gaussian", 500, rng)
    rows = RegressionRows(y, d, pit_seed=0)
    values = summary_statistics(rows)
    a = infer_regression(None, rows=rows, values=values)
    b = infer_regression(y, d)
    np.testing.assert_array_equal(a.table["p_value"].to_numpy(), b.table["p_value"].to_numpy())
    with pytest.raises(ValueError):
        infer_regression(y)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("n", [2, 3, 7])
def test_tiny_sets_give_a_result_without_warnings(n):
    rng = np.random.default_rng(n)
    res = infer_regression(rng.normal(size=n), Gaussian(np.zeros(n), np.ones(n)))
    assert res.verdict in ("calibrated", "miscalibrated") and res.n == n


# -- quantile sets: the headline tests the quantiles that were given ------------------------------
def test_quantile_set_headline_tests_the_widest_given_central_interval():
    rng = np.random.default_rng(51)
    y, d = calibrated("quantile", 1500, rng)
    res = infer_regression(y, d, seed=2)
    t = res.table
    # a quantile set is judged at what it states (the family no longer holds the interpolated KS, z, ENCE)
    assert inf.primary_family(d) == ("pit_chi2", "max_level_deviation", "below_median", "coverage_80")
    assert set(t.index[t["family"] == "primary"]) == set(inf.primary_family(d)) & set(t.index)
    assert t.loc["coverage_90", "family"] == "secondary"
    assert np.isnan(t.loc["coverage_90", "p_value"]) and "not a stated level" in t.loc["coverage_90", "note"]
    # [q0.1, q0.9] is given: exact binomial test of the count against 0.8, no extrapolated tail involved
    k = int(np.sum((y >= d.values[:, 0]) & (y <= d.values[:, -1])))
    assert k == round(t.loc["coverage_80", "value"] * y.size)
    n = y.size
    assert t.loc["coverage_80", "p_value"] == pytest.approx(
        min(1, 2 * min(stats.binom.cdf(k, n, 0.8), stats.binom.sf(k - 1, n, 0.8))), rel=1e-9)
    assert t.loc["coverage_80", "note"] == ""
    # levels that contain 0.05 and 0.95: the 90% interval is the widest stated one; Gaussians keep PRIMARY
    tau = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    assert inf.primary_family(QuantileSet(tau, np.sort(rng.normal(size=(5, 5)), axis=1))) == (
        "pit_chi2", "max_level_deviation", "below_median", "coverage_90")
    assert inf.primary_family(Gaussian(np.zeros(3), np.ones(3))) == PRIMARY


def test_quantile_set_coverage_80_false_alarms_and_power():
    rng = np.random.default_rng(52)
    reps = 300
    p_null = []
    for _ in range(reps):
        y, d = calibrated("quantile", 400, rng)
        k = np.sum((y >= d.values[:, 0]) & (y <= d.values[:, -1]))
        p_null.append(min(1, 2 * min(stats.binom.cdf(k, y.size, 0.8), stats.binom.sf(k - 1, y.size, 0.8))))
    for a in (0.05, 0.2):  # exact binomial: never anti-conservative
        assert np.mean(np.array(p_null) <= a) <= binomial_ceiling(a, reps)
    hits = 0
    for i in range(10):
        y, d = calibrated("quantile", 3000, rng, sigma_factor=0.8)
        res = infer_regression(y, d, seed=i, n_boot=100, n_null=500)
        hits += bool(res.table.loc["coverage_80", "flag"])
    assert hits == 10


# -- skewness, kurtosis and the reliability score in every layout ---------------------------------
def _population_shape(layout: str, sigma_factor: float) -> tuple[float, float, float]:
    """Population (std, skewness, excess kurtosis) of z in the design of ``calibrated`` with the predicted σ ×
    ``sigma_factor``.  Gaussian: z = ε/factor.  Quantile sets: every row's z has the same standardised law (the
    quantiles are location–scale copies), so one row's exact moments are the population's.  Ensembles: pooled
    moments of 400,000 rows (their standard errors are below 1% of the intervals' half-widths)."""
    if layout == "gaussian":
        return 1.0 / sigma_factor, 0.0, 0.0
    if layout == "quantile":
        d = QuantileSet(TAU9, norm_ppf(TAU9)[None, :])
        _, m2, m3, m4 = QuantileNull(RegressionRows(np.zeros(1), d)).z_moments()
        return 1.0 / sigma_factor, float(m3[0] / m2[0] ** 1.5), float(m4[0] / m2[0] ** 2 - 3.0)
    y, d = calibrated("ensemble", 400_000, np.random.default_rng(0), sigma_factor=sigma_factor)
    z = RegressionRows(y, d).z_finite
    return float(z.std()), float(stats.skew(z)), float(stats.kurtosis(z))


@pytest.mark.parametrize("layout", ["gaussian", pytest.param("quantile", marks=pytest.mark.slow),
                                    pytest.param("ensemble", marks=pytest.mark.slow)])
def test_shape_intervals_cover_the_population_value(layout):
    """std z, skewness and kurtosis intervals (bootstrap-t) in every layout, at σ × 1.25 (under-confident)."""
    pop = dict(zip(("z_std", "z_skewness", "z_excess_kurtosis"), _population_shape(layout, 1.25)))
    rng = np.random.default_rng({"gaussian": 61, "quantile": 62, "ensemble": 63}[layout])
    reps, n = 60, 1000
    hits = dict.fromkeys(pop, 0)
    for i in range(reps):
        y, d = calibrated(layout, n, rng, sigma_factor=1.25)
        t = infer_regression(y, d, seed=i, n_boot=300, n_null=100).table
        for k, v in pop.items():
            hits[k] += t.loc[k, "ci_low"] <= v <= t.loc[k, "ci_high"]
    t = infer_regression(y, d, seed=0, n_boot=50, n_null=50).table
    assert t.loc["z_skewness", "interval"].startswith("symmetric bootstrap-t")
    assert t.loc["z_std", "interval"].endswith("on log std z")
    print(layout, {k: h / reps for k, h in hits.items()})
    for k, h in hits.items():  # binomial tolerance: as few hits has probability > 0.1% at coverage 0.95
        assert stats.binom.cdf(h, reps, 0.95) > 1e-3, (layout, k, h / reps)


def test_shape_statistics_without_a_null_say_so():
    rng = np.random.default_rng(64)
    for layout in ("quantile", "ensemble"):
        y, d = calibrated(layout, 600, rng)
        t = infer_regression(y, d, seed=1, n_boot=200, n_null=200).table
        assert np.isnan(t.loc["reliability_score", "p_value"])
        assert "no test" in t.loc["reliability_score", "note"]
        for k in ("z_skewness", "z_excess_kurtosis"):
            assert np.isfinite(t.loc[k, "ci_low"]) and t.loc[k, "ci_low"] <= t.loc[k, "ci_high"]
    y, d = calibrated("gaussian", 300, rng)
    t = infer_regression(y, d, seed=1, n_boot=200, n_null=200).table
    assert "fourth-moment" in t.loc["z_excess_kurtosis", "note"]  # N < 10,000: says that it under-covers
