"""``cc.diagnose`` on regression PredictionSets: the Report's structure, CIs, perfect-calibration
reference values, breakdowns by group and model, and the diagram tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from pandas.testing import assert_frame_equal

import calib_core as cc
from calib_core.base.report import METRIC_COLUMNS, VERDICT_COLUMNS
from calib_core.metrics import regression as rm

ALL = cc.ALL
SCHEMAS = {
    "calibration_curve": ["level", "observed", "band_low", "band_high"],
    "levi_bins": ["bin", "count", "sigma_low", "sigma_high", "rmv", "rmse", "rmse_low", "rmse_high"],
    "pit_histogram": ["left", "right", "count", "density"],
    "z_histogram": ["left", "right", "count", "density", "normal_density", "outside"],
    "qq": ["theoretical", "observed"],
    "intervals": ["coverage", "observed", "mean_width", "interval_score"],
}
# metrics whose value does not depend on y: no sampling variation under simulated targets
Y_FREE = {"sharpness", "cv"} | {f"width_{c}" for c in ("50", "80", "90", "95", "99")}
CALIBRATION_METRICS = [
    "calibration_rmse",
    "quantile_calibration_error",
    "miscalibration_area",
    "max_calibration_deviation",
    "reliability_score",
    "ence",
]


def gaussian_set(n=1500, seed=0, noise=1.0, groups=None, models=None) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n) * 2
    sigma = rng.uniform(0.3, 3.0, n)
    y = mu + noise * sigma * rng.standard_normal(n)
    group = None if groups is None else np.asarray(groups)[rng.integers(0, len(groups), n)]
    model = None if models is None else np.asarray(models)[rng.integers(0, len(models), n)]
    return cc.PredictionSet(
        task="regression", source="simulated.csv", layout="gaussian", y=y, dist=cc.Gaussian(mu, sigma),
        group=group, model=model,
    )


@pytest.fixture(scope="module")
def calibrated_report() -> cc.Report:
    return cc.diagnose(gaussian_set(2000, seed=1), n_resamples=200, n_simulations=60, seed=0)


# =============================================================================================
# Structure
# =============================================================================================


def test_report_structure(calibrated_report):
    rep = calibrated_report
    assert isinstance(rep, cc.Report)
    assert rep.task == "regression" and rep.n_rows == 2000 and rep.source == "simulated.csv"
    assert list(rep.metrics.columns) == METRIC_COLUMNS
    assert set(rep.metrics["model"]) == {"model"} and set(rep.metrics["group"]) == {ALL}
    names = list(rep.metrics["metric"])
    assert len(names) == len(set(names))
    expected = set(rm.summary_statistics(rm.RegressionRows(np.zeros(3), cc.Gaussian(np.zeros(3), np.ones(3)))))
    assert set(names) == expected
    for must in ("nll", "crps", "rmse", "mae", "sharpness", "ence", "cv", "calibration_rmse",
                 "quantile_calibration_error", "miscalibration_area", "max_calibration_deviation",
                 "reliability_score", "pit_entropy", "spearman_sigma_abs_error", "coverage_90"):
        assert must in expected
    assert list(rep.diagrams) == [("model", ALL)]
    for name, cols in SCHEMAS.items():
        assert list(rep.diagrams[("model", ALL)][name].columns) == cols, name
    assert rep.options["n_resamples"] == 200 and rep.options["seed"] == 0
    # accessors
    assert rep.value("ence") == pytest.approx(float(rep.table().loc["ence", "value"]))
    assert rep.wide().shape == (1, len(expected))


def test_values_equal_the_metric_functions(calibrated_report):
    pset = gaussian_set(2000, seed=1)
    y, dist = pset.y, pset.dist
    t = calibrated_report.table()
    assert t.loc["nll", "value"] == pytest.approx(rm.nll(y, dist), rel=1e-12)
    assert t.loc["crps", "value"] == pytest.approx(rm.crps(y, dist), rel=1e-12)
    assert t.loc["ence", "value"] == pytest.approx(rm.ence(y, dist), rel=1e-12)
    assert t.loc["cv", "value"] == pytest.approx(rm.cv(None, dist), rel=1e-12)
    assert t.loc["calibration_rmse", "value"] == pytest.approx(rm.calibration_rmse(y, dist), rel=1e-12)
    assert t.loc["quantile_calibration_error", "value"] == pytest.approx(rm.quantile_calibration_error(y, dist))
    assert t.loc["miscalibration_area", "value"] == pytest.approx(rm.miscalibration_area(y, dist), rel=1e-12)
    assert t.loc["max_calibration_deviation", "value"] == pytest.approx(rm.max_calibration_deviation(y, dist))
    assert t.loc["reliability_score", "value"] == pytest.approx(rm.reliability_score(y, dist), rel=1e-12)
    assert t.loc["pit_entropy", "value"] == pytest.approx(rm.pit_entropy(y, dist), rel=1e-12)
    assert t.loc["coverage_90", "value"] == pytest.approx(rm.interval_coverage(y, dist, coverage=0.9), abs=1e-15)


# the intervals are for the population value (BCa / basic / exact / KS band, said in ``interval``);
# statistics with no cheap resampling form (PIT entropy, reliability score) have none and say so; nor has the
# rank histogram's χ² of an ensemble (a test statistic: its population value grows with N)
NO_INTERVAL = {"pit_entropy", "reliability_score", "rank_chi2", "pit_chi2"}  # pit_chi2 too: a test statistic


def test_every_scalar_has_a_finite_ci_around_its_value(calibrated_report):
    t = calibrated_report.table()
    for name, row in t.iterrows():
        lo, hi, v = row["ci_low"], row["ci_high"], row["value"]
        if name in NO_INTERVAL:
            assert np.isnan(lo) and np.isnan(hi) and row["interval"] == "", name
            continue
        assert np.isfinite(lo) and np.isfinite(hi) and row["interval"], name
        assert lo <= hi, name
        if name in ("sharpness", "cv") or name.startswith("width_"):
            assert lo <= v + 1e-12 and v - 1e-12 <= hi, name
        # a biased plug-in (ENCE, ECE-like) may sit outside its interval, and the table says why
        slack = 0.5 * (hi - lo) + 1e-12
        assert lo - slack <= v <= hi + slack or row["note"], (name, lo, v, hi)


def test_perfect_values_close_to_the_data_for_calibrated_predictions(calibrated_report):
    t = calibrated_report.table()
    tested = t["kind"] == "calibration statistic"
    scores = t["kind"] == "proper score"
    assert np.all(np.isfinite(t.loc[tested | scores, "perfect"]))
    assert np.all(t.loc[tested, "p_value"].between(0, 1))
    assert set(t.loc[tested, "family"]) == {"primary", "secondary"}
    assert t.loc[~tested, "p_value"].isna().all() and not t.loc[~tested, "flag"].any()
    # perfectly calibrated data: no test of the primary family rejects, and no statistic is far from its reference
    assert not t.loc[t["family"] == "primary", "flag"].any(), t[t["family"] == "primary"]
    assert (t.loc[tested, "p_value"] > 0.001).all(), t.loc[tested, ["value", "perfect", "p_value"]]
    v = calibrated_report.verdict()
    assert v["verdict"] == "calibrated" and v["p_value"] > 0.05 and v["n_tests"] == 5
    for name in ("coverage_90", "nll", "crps", "z_std"):
        assert t.loc[name, "value"] == pytest.approx(t.loc[name, "perfect"], rel=0.05), name
    for name in Y_FREE:  # descriptive: no reference, no test
        assert np.isnan(t.loc[name, "perfect"]) and t.loc[name, "kind"] == "descriptive"


def test_miscalibrated_predictions_fall_outside_the_perfect_range():
    rep = cc.diagnose(gaussian_set(2000, seed=2, noise=2.0), n_resamples=200, n_simulations=1000, seed=0)
    t = rep.table()
    for name in CALIBRATION_METRICS:
        assert t.loc[name, "value"] > t.loc[name, "perfect"], name
        assert t.loc[name, "p_value"] < 0.01, name
        assert t.loc[name, "ci_low"] > t.loc[name, "perfect"] or name in NO_INTERVAL, name
    assert t.loc["coverage_90", "value"] < t.loc["coverage_90", "perfect"]
    assert t.loc["coverage_90", "ci_high"] < 0.9 and t.loc["coverage_90", "p_value"] < 1e-6
    v = rep.verdict()
    assert v["verdict"] == "miscalibrated" and "over-confident" in v["direction"] and v["p_value"] < 1e-6


def test_seeded_reproducibility_and_seed_matters():
    pset = gaussian_set(500, seed=3, groups=["a", "b"])
    a = cc.diagnose(pset, n_resamples=40, n_simulations=20, seed=5)
    b = cc.diagnose(pset, n_resamples=40, n_simulations=20, seed=5)
    assert_frame_equal(a.metrics, b.metrics)
    for key in a.diagrams:
        for name in a.diagrams[key]:
            assert_frame_equal(a.diagrams[key][name], b.diagrams[key][name])
    c = cc.diagnose(pset, n_resamples=40, n_simulations=20, seed=6)
    assert_allclose(c.metrics["value"], a.metrics["value"])  # Gaussian: values do not depend on the seed
    assert not np.allclose(c.metrics["ci_low"], a.metrics["ci_low"], equal_nan=True)
    assert not np.allclose(c.metrics["perfect"], a.metrics["perfect"], equal_nan=True)


def test_ci_and_reference_switches():
    pset = gaussian_set(300, seed=4)
    base = cc.diagnose(pset, n_resamples=20, n_simulations=10)
    no_ci = cc.diagnose(pset, n_resamples=0, n_simulations=10)
    assert no_ci.metrics[["ci_low", "ci_high"]].isna().all().all()
    tested = base.metrics["kind"] == "calibration statistic"
    assert no_ci.metrics.loc[tested, ["perfect", "p_value"]].notna().all().all()
    assert_allclose(no_ci.metrics["value"], base.metrics["value"])
    exact = base.metrics["p_mc_se"] == 0  # exact tests do not depend on the bootstrap's random stream
    assert_allclose(no_ci.metrics.loc[exact, "p_value"], base.metrics.loc[exact, "p_value"])
    assert no_ci.verdict()["verdict"] == base.verdict()["verdict"] != "not tested"
    no_ref = cc.diagnose(pset, n_resamples=20, n_simulations=0)
    assert no_ref.metrics[["perfect", "perfect_low", "perfect_high", "p_value", "adjusted_p"]].isna().all().all()
    assert not no_ref.metrics["flag"].any() and no_ref.verdict()["verdict"] == "not tested"
    assert_allclose(no_ref.metrics["ci_low"], base.metrics["ci_low"])
    neither = cc.diagnose(pset, n_resamples=0, n_simulations=0, diagrams=False)
    assert neither.diagrams == {}
    off = ["ci_low", "ci_high", "perfect", "perfect_low", "perfect_high", "p_value"]
    assert neither.metrics[off].isna().all().all()
    assert_allclose(neither.metrics["value"], base.metrics["value"])
    # the Levi-bin bootstrap intervals follow the switch too
    levi = no_ci.diagrams[("model", ALL)]["levi_bins"]
    assert levi[["rmse_low", "rmse_high"]].isna().all().all()


# =============================================================================================
# Breakdowns
# =============================================================================================


def test_group_and_model_breakdowns():
    pset = gaussian_set(1200, seed=5, groups=["north", "south", "east"], models=["m1", "m2"])
    rep = cc.diagnose(pset, n_resamples=10, n_simulations=5)
    keys = set(zip(rep.metrics["model"], rep.metrics["group"]))
    expected = {(m, g) for m in ("m1", "m2") for g in (ALL, "north", "south", "east")}
    assert keys == expected
    assert set(rep.diagrams) == expected
    assert rep.models == ["m1", "m2"] or set(rep.models) == {"m1", "m2"}
    for model in ("m1", "m2"):
        mmask = pset.model == model
        for group in (ALL, "north", "south", "east"):
            mask = mmask if group == ALL else mmask & (pset.group == group)
            y, dist = pset.y[mask], pset.dist.take(mask)
            t = rep.table(model, group)
            assert t.loc["rmse", "value"] == pytest.approx(rm.rmse(y, dist), rel=1e-12)
            assert t.loc["ence", "value"] == pytest.approx(rm.ence(y, dist), rel=1e-12)
            assert t.loc["max_calibration_deviation", "value"] == pytest.approx(
                rm.max_calibration_deviation(y, dist), rel=1e-12
            )
            levi = rep.diagrams[(model, group)]["levi_bins"]
            assert levi["count"].sum() == mask.sum()
    wide = rep.wide()
    assert wide.shape[0] == len(expected)
    no_groups = cc.diagnose(pset, n_resamples=0, n_simulations=0, by_group=False)
    assert set(zip(no_groups.metrics["model"], no_groups.metrics["group"])) == {("m1", ALL), ("m2", ALL)}


def test_tiny_group_is_noted_not_crashing():
    pset = gaussian_set(200, seed=6)
    group = np.array(["big"] * 199 + ["lonely"])
    pset.group = group
    rep = cc.diagnose(pset, n_resamples=5, n_simulations=5)
    assert ("model", "big") in rep.diagrams and ("model", "lonely") not in rep.diagrams
    assert any("lonely" in note for note in rep.options["notes"])


def test_point_only_set_reports_rmse_and_mae():
    rng = np.random.default_rng(7)
    n = 400
    point = rng.normal(size=n)
    y = point + rng.normal(size=n) * 0.5
    pset = cc.PredictionSet(task="regression", layout="point", y=y, point=point, dist=None)
    rep = cc.diagnose(pset, n_resamples=100, n_simulations=10)
    t = rep.table()
    assert set(t.index) == {"rmse", "mae"}
    assert t.loc["rmse", "value"] == pytest.approx(np.sqrt(np.mean((y - point) ** 2)), rel=1e-12)
    assert t.loc["mae", "value"] == pytest.approx(np.mean(np.abs(y - point)), rel=1e-12)
    assert np.all(t["ci_low"] < t["value"]) and np.all(t["value"] < t["ci_high"])
    assert t[["perfect", "perfect_low", "perfect_high"]].isna().all().all()  # nothing to simulate from
    assert rep.diagrams == {}


@pytest.mark.parametrize("kind", ["quantile", "sample"])
def test_other_distributions_diagnose(kind):
    rng = np.random.default_rng(8)
    n = 400
    mu, sigma = rng.normal(size=n), rng.uniform(0.5, 2, n)
    y = mu + sigma * rng.standard_normal(n)
    if kind == "quantile":
        levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
        dist = cc.QuantileSet(levels, mu[:, None] + sigma[:, None] * np.array([-1.645, -0.674, 0, 0.674, 1.645]))
    else:
        dist = cc.SampleSet(mu[:, None] + sigma[:, None] * rng.standard_normal((n, 200)))
    pset = cc.PredictionSet(task="regression", layout=kind, y=y, dist=dist)
    rep = cc.diagnose(pset, n_resamples=30, n_simulations=10, seed=1)
    t = rep.table()
    assert np.all(np.isfinite(t["value"]))
    has_interval = ~t.index.isin(list(NO_INTERVAL))
    assert np.all(np.isfinite(t.loc[has_interval, ["ci_low", "ci_high"]].to_numpy()))
    assert np.all(np.isfinite(t.loc[t["p_value"].notna() | (t["kind"] == "proper score"), "perfect"]))
    assert t.loc[(t["kind"] == "calibration statistic") & t["p_value"].isna(), "note"].str.len().gt(0).all()
    assert rep.verdict()["verdict"] in ("calibrated", "miscalibrated")
    assert t.loc["crps", "value"] == pytest.approx(rm.crps(y, dist), rel=1e-12)
    assert t.loc["ence", "value"] == pytest.approx(rm.ence(y, dist), rel=1e-12)
    tables = rep.diagrams[("model", ALL)]
    assert tables["pit_histogram"]["count"].sum() == n
    assert tables["levi_bins"]["count"].sum() == n
    # an ensemble's intervals table adds the finite-M expected coverage (200 members: [x_(j), x_(k)] covers
    # (k − j)/201 under exchangeability)
    expected = tables["intervals"].pop("expected") if kind == "sample" else None
    assert_frame_equal(tables["intervals"], rm.interval_table(y, dist))
    if kind == "sample":
        np.testing.assert_allclose(expected, [100 / 201, 160 / 201, 180 / 201, 190 / 201, 198 / 201])


# =============================================================================================
# Diagram tables
# =============================================================================================


@pytest.mark.parametrize("binning", ["count", "width"])
@pytest.mark.parametrize("n_bins", [15, 7])
def test_levi_bins_table_and_ence_share_one_binning(binning, n_bins):
    pset = gaussian_set(1000, seed=9, noise=1.3)
    rep = cc.diagnose(pset, n_bins=n_bins, binning=binning, n_resamples=50, n_simulations=0)
    levi = rep.diagrams[("model", ALL)]["levi_bins"]
    assert list(levi.columns) == SCHEMAS["levi_bins"]
    assert levi["count"].sum() == 1000 and np.all(levi["count"] > 0)
    if binning == "count":
        assert len(levi) == n_bins and levi["count"].max() - levi["count"].min() <= 1
    # σ ranges are ordered and disjoint, RMV within the bin's σ range
    assert np.all(levi["sigma_low"] <= levi["sigma_high"])
    assert np.all(levi["sigma_high"].to_numpy()[:-1] <= levi["sigma_low"].to_numpy()[1:])
    assert np.all((levi["rmv"] >= levi["sigma_low"] - 1e-12) & (levi["rmv"] <= levi["sigma_high"] + 1e-12))
    # ENCE recomputed from the table equals the metric (one binning engine)
    ence_from_table = float(np.mean(np.abs(levi["rmv"] - levi["rmse"]) / levi["rmv"]))
    assert ence_from_table == pytest.approx(rep.value("ence"), rel=1e-12)
    assert ence_from_table == pytest.approx(rm.ence(pset.y, pset.dist, n_bins=n_bins, binning=binning), rel=1e-12)
    # per-bin RMSE and RMV equal a direct computation over the rows with σ in the bin's range
    s, e2 = pset.dist.std(), (pset.y - pset.dist.mean()) ** 2
    for _, row in levi.iterrows():
        sel = (s >= row["sigma_low"]) & (s <= row["sigma_high"])
        assert sel.sum() == row["count"]
        assert row["rmse"] == pytest.approx(np.sqrt(e2[sel].mean()), rel=1e-12)
        assert row["rmv"] == pytest.approx(np.sqrt((s[sel] ** 2).mean()), rel=1e-12)
    # bootstrap 90% intervals bracket the bin RMSE
    assert np.all(levi["rmse_low"] <= levi["rmse"]) and np.all(levi["rmse"] <= levi["rmse_high"])


def test_histograms_curve_qq_and_intervals_tables():
    pset = gaussian_set(1234, seed=10, noise=1.2)
    rep = cc.diagnose(pset, pit_bins=25, n_resamples=0, n_simulations=0)
    d = rep.diagrams[("model", ALL)]
    n = 1234
    y, dist = pset.y, pset.dist
    u = rm.pit(y, dist)
    z = (y - dist.mean()) / dist.std()

    pit = d["pit_histogram"]
    assert len(pit) == 25 and pit["count"].sum() == n
    assert_allclose(pit["left"].iloc[0], 0.0) and assert_allclose(pit["right"].iloc[-1], 1.0)
    assert_allclose(pit["count"], np.histogram(u, bins=np.linspace(0, 1, 26))[0])
    assert_allclose((pit["density"] * (pit["right"] - pit["left"])).sum(), 1.0)

    zh = d["z_histogram"]
    assert zh["count"].sum() == n
    edges = np.append(zh["left"].to_numpy(), zh["right"].iloc[-1])
    assert_allclose(zh["count"], np.histogram(np.clip(z, edges[0], edges[-1]), bins=edges)[0])
    centres = 0.5 * (zh["left"] + zh["right"])
    assert_allclose(zh["normal_density"], np.exp(-0.5 * centres**2) / np.sqrt(2 * np.pi))

    cur = d["calibration_curve"]
    assert_allclose(cur["level"], np.linspace(0, 1, 101))
    assert_allclose(cur["observed"], rm.calibration_curve(y, dist)[1])
    assert np.all(cur["band_low"] <= cur["band_high"])
    inner = cur.iloc[1:-1]
    assert np.all(inner["band_low"] < inner["level"]) and np.all(inner["level"] < inner["band_high"])
    # the band is Binomial(N, p)/N quantiles at the adjusted level γ < 5% for which the whole curve stays inside 95%
    # of the time (simultaneous; tests/base/test_ecdf_bands.py checks that coverage by simulation)
    from scipy import stats

    gamma = cur.attrs["gamma"]
    assert cur.attrs["band"] == "simultaneous" and 0 < gamma < 0.05
    assert_allclose(cur["band_high"], stats.binom.ppf(1 - gamma / 2, n, cur["level"]) / n)
    assert_allclose(cur["band_low"], stats.binom.ppf(gamma / 2, n, cur["level"]) / n)
    assert np.all(cur["band_high"] >= stats.binom.ppf(0.975, n, cur["level"]) / n)  # wider than the pointwise band

    qq = d["qq"]
    assert 2 <= len(qq) <= 512
    assert np.all(np.diff(qq["theoretical"]) > 0) and np.all(np.diff(qq["observed"]) >= 0)
    assert qq["observed"].iloc[0] == pytest.approx(z.min()) and qq["observed"].iloc[-1] == pytest.approx(z.max())

    assert_frame_equal(d["intervals"], rm.interval_table(y, dist))


def test_report_dataframe_types():
    rep = cc.diagnose(gaussian_set(100, seed=11), n_resamples=5, n_simulations=5)
    assert isinstance(rep.metrics, pd.DataFrame)
    for col in METRIC_COLUMNS[3:]:
        text = col in ("kind", "family", "interval", "test", "note")
        if text:
            assert pd.api.types.is_string_dtype(rep.metrics[col]), col
        else:
            assert rep.metrics[col].dtype == (bool if col == "flag" else float), col
    assert list(rep.verdicts.columns) == VERDICT_COLUMNS


def test_calibrated_ensemble_is_not_rejected():
    rng = np.random.default_rng(0)
    n, m = 4000, 20
    mu, s = rng.normal(size=n) * 2, rng.uniform(0.5, 2.0, n)
    x = mu[:, None] + s[:, None] * rng.standard_normal((n, m))
    y = mu + s * rng.standard_normal(n)  # exchangeable with the members: a calibrated ensemble
    pset = cc.PredictionSet(task="regression", layout="sample", y=y, dist=cc.SampleSet(x))
    rep = cc.diagnose(pset, n_resamples=0, n_simulations=1000, diagrams=False)
    t = rep.table()
    # exact: the 90% interval [x_(1), x_(19)] of a calibrated 20-member ensemble covers 18/21
    assert t.loc["coverage_90", "value"] == pytest.approx(18 / 21, abs=0.015)
    assert t.loc["coverage_90", "perfect"] == pytest.approx(18 / 21, abs=1e-9)  # the finite-M reference
    # the exchangeability null: no test of the calibrated ensemble rejects, the headline says calibrated
    for name in ("coverage_90", "ence", "max_calibration_deviation", "calibration_rmse", "z_std"):
        assert t.loc[name, "p_value"] > 0.01, (name, t.loc[name].to_dict())
    assert rep.verdict()["verdict"] == "calibrated", rep.verdict()["sentence"]


def test_zero_sigma_rows_are_left_out_of_z_statistics_only():
    """Degenerate ensemble rows (all members equal, σ = 0) have no finite z: z-based statistics use the
    other rows; PIT-based ones keep every row; ENCE leaves out a bin whose σ are all 0."""
    rng = np.random.default_rng(12)
    n, m = 300, 10
    x = rng.standard_normal((n, m))
    y = rng.standard_normal(n)
    x[:20] = 0.0
    y[:10] = 0.0  # z = 0/0 on ten rows, ±inf on ten more
    dist = cc.SampleSet(x)
    rows = rm.RegressionRows(y, dist)
    assert rows.n_z_excluded == 20
    ok = slice(20, None)
    z = (y[ok] - dist.mean()[ok]) / dist.std()[ok]
    s = rm.standardized_residual_stats(y, dist)
    assert s["z_mean"] == pytest.approx(z.mean(), rel=1e-12)
    assert s["z_std"] == pytest.approx(z.std(), rel=1e-12)
    assert rm.reliability_score(y, dist) == pytest.approx(
        rm.reliability_score(y[ok], cc.Gaussian(dist.mean()[ok], dist.std()[ok])), rel=1e-12
    )
    rep = cc.diagnose(cc.PredictionSet(task="regression", y=y, dist=dist), n_resamples=20, n_simulations=5)
    t = rep.table()
    assert np.all(np.isfinite(t["value"]))
    d = rep.diagrams[("model", ALL)]
    assert d["z_histogram"]["count"].sum() == n - 20
    assert len(d["qq"]) <= n - 20
    assert d["pit_histogram"]["count"].sum() == n
    levi = d["levi_bins"]
    assert levi["count"].sum() == n and levi["rmv"].iloc[0] == 0.0
    pos = levi[levi["rmv"] > 0]
    assert float(np.mean(np.abs(pos["rmv"] - pos["rmse"]) / pos["rmv"])) == pytest.approx(t.loc["ence", "value"])
