"""Ensembles judged as ensembles (calib_core.inference.regression_ensemble): the rank histogram's χ² test, the
member-range coverage test, no z test where the exchangeability null is carried by a few rows, and the ensemble
primary family — false alarms and power by seeded simulation with targets and members drawn from the TRUE law."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import calib_core as cc
from calib_core.base.regression import SampleSet
from calib_core.inference.regression import infer_regression, primary_family
from calib_core.inference.regression_ensemble import (
    MIN_EFFECTIVE_ROWS,
    degenerate_spread,
    effective_rows,
    ensemble_tests,
)
from calib_core.inference.regression_nulls import EnsembleNull
from calib_core.inference.regression_verdict import PRIMARY_ENSEMBLE, empty_record
from calib_core.metrics.regression import RegressionRows
from calib_core.metrics.regression_ensemble_ranks import ensemble_statistics

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"
ECMWF = REAL / "weather_ecmwf_ens_precip_frankfurt" / "rain_frankfurt_mm.csv"
needs_real = pytest.mark.skipif(not ECMWF.exists(), reason="real data sets not available")

LAWS = ("gauss", "t3", "rain")


def exchangeable(kind: str, n: int, m: int, rng: np.random.Generator, spread: float = 1.0):
    """Target and M members per row from each row's TRUE law: Gaussian, Student-t₃ (heavy tails), or rain (an atom
    at 0 with a per-row dry probability, gamma amounts rounded to 0.1 mm: ties).  ``spread`` < 1 shrinks the
    members about their row's centre (an over-confident ensemble); 1: exchangeable, calibrated."""
    loc = rng.normal(size=(n, 1)) * 3
    sc = np.exp(rng.normal(size=(n, 1)) * 0.5)
    shape = (n, m + 1)
    if kind == "rain":
        wet = rng.random(shape) >= rng.uniform(0.2, 0.9, (n, 1))
        amt = rng.gamma(0.7, 2.0, shape) * sc
        centre = amt[:, 1:].mean(axis=1, keepdims=True)
        amt[:, 1:] = centre + spread * (amt[:, 1:] - centre)
        x = np.where(wet, np.round(amt, 1), 0.0)
    else:
        e = rng.standard_normal(shape) if kind == "gauss" else rng.standard_t(3, shape)
        e[:, 1:] *= spread
        x = loc + sc * e
    return x[:, 0], SampleSet(x[:, 1:])


def exact_family_rejects(y: np.ndarray, d: SampleSet, seed: int) -> bool:
    """Holm at 5% over the two exact members (rank χ², member range) — what the headline adds to the z members."""
    rows = RegressionRows(y, d, pit_seed=seed)
    values = ensemble_statistics(rows)
    rec = {k: empty_record(k, v) for k, v in values.items()}
    ensemble_tests(rec, values, rows, (0.0, 1.0, 0.0, 3.0), 400, 0.95, seed)
    return min(rec[k]["p_value"] for k in rec) <= 0.05 / 2  # Holm over two: some rejection iff min p ≤ α/2


def test_primary_family_of_an_ensemble():
    assert primary_family(SampleSet(np.zeros((3, 4)))) == PRIMARY_ENSEMBLE
    assert PRIMARY_ENSEMBLE == ("rank_chi2", "below_median", "range_coverage", "z_std", "ence")


@pytest.mark.parametrize("kind", LAWS)
def test_exact_members_hold_their_level_for_exchangeable_ensembles(kind):
    """The rank χ² (χ²_M or the exact multinomial law) and the member-range binomial test, Holm at 5%: false alarms
    at most 5% (exact binomial tolerance), N = 200 (expected count 3.9 per rank at M = 51: Monte Carlo) and 8
    members."""
    rng = np.random.default_rng([31, len(kind)])
    reps = 300
    hits = 0
    for i in range(reps):
        m = (8, 51)[i % 2]
        y, d = exchangeable(kind, 200, m, rng)
        hits += exact_family_rejects(y, d, i)
    assert stats.binom.sf(hits - 1, reps, 0.05) > 1e-3, hits / reps


def test_effective_rows():
    assert effective_rows(np.ones(100)) == pytest.approx(100)
    assert effective_rows(np.r_[np.ones(100), 1e8]) == pytest.approx(1.0, abs=1e-4)
    assert effective_rows(np.array([np.nan, 0.0])) == 0.0


def test_degenerate_spread_withholds_every_z_test_with_a_note():
    rng = np.random.default_rng(3)
    n, m = 600, 20
    y, d = exchangeable("gauss", n, m, rng)
    x = d.samples.copy()
    x[:5] = 1.0 + 1e-6 * rng.standard_normal((5, m))  # five rows of a tiny spread, their target far off
    y[:5] = 30.0
    rows = RegressionRows(y, SampleSet(x))
    withheld = degenerate_spread(EnsembleNull(rows, ()).z_moments(), n)
    assert {"z_std", "zms", "ence", "mean_log_z2", "z_mean"} <= set(withheld)
    res = infer_regression(y, SampleSet(x), n_boot=20, n_null=200)
    t = res.table
    for k in ("z_std", "zms", "ence", "mean_log_z2", "z_mean"):
        assert np.isnan(t.loc[k, "p_value"]) and np.isnan(t.loc[k, "perfect"]), k
        assert t.loc[k, "note"].startswith("no test: degenerate ensemble spread"), k
    assert np.isfinite(t.loc["rank_chi2", "p_value"]) and np.isfinite(t.loc["range_coverage", "p_value"])


def test_a_regular_ensemble_keeps_its_z_tests():
    rng = np.random.default_rng(4)
    y, d = exchangeable("gauss", 2_000, 20, rng)
    null = EnsembleNull(RegressionRows(y, d), ())
    assert effective_rows(null.z_moments()[3] - null.z_moments()[1] ** 2) > MIN_EFFECTIVE_ROWS
    t = infer_regression(y, d, n_boot=20, n_null=200).table
    assert np.isfinite(t.loc[["z_std", "ence", "rank_chi2", "range_coverage"], "p_value"]).all()
    assert t.loc["range_coverage", "perfect"] == pytest.approx(19 / 21)
    assert t.loc["rank_chi2", "perfect"] == 20


def test_rank_test_uses_the_exact_multinomial_law_for_small_expected_counts():
    rng = np.random.default_rng(5)
    y, d = exchangeable("gauss", 100, 51, rng)  # 100/52 ≈ 1.9 expected per rank
    t = infer_regression(y, d, n_boot=10, n_null=300).table
    assert t.loc["rank_chi2", "test"].startswith("Monte Carlo") and t.loc["rank_chi2", "p_mc_se"] > 0
    y, d = exchangeable("gauss", 1_000, 8, rng)
    assert infer_regression(y, d, n_boot=10, n_null=300).table.loc["rank_chi2", "test"].startswith("χ² law")


@pytest.mark.parametrize("kind", LAWS)
def test_power_for_a_spread_too_small(kind):
    """Members with 0.8 of the true spread, N = 3,000, 8 members: the headline rejects."""
    rng = np.random.default_rng([6, len(kind)])
    y, d = exchangeable(kind, 3_000, 8, rng, spread=0.8)
    res = infer_regression(y, d, n_boot=20, n_null=300)
    assert res.verdict == "miscalibrated", res.sentence
    assert res.table.loc["range_coverage", "value"] < res.table.loc["range_coverage", "perfect"]


def test_rank_histogram_diagram_for_ensembles_only():
    rng = np.random.default_rng(7)
    y, d = exchangeable("gauss", 500, 8, rng)
    rep = cc.diagnose(cc.PredictionSet(task="regression", layout="sample", y=y, dist=d), n_resamples=20,
                      n_simulations=50)
    tab = rep.diagrams[("model", cc.ALL)]["rank_histogram"]
    assert list(tab.columns) == ["rank", "count", "expected", "band_low", "band_high"]
    assert tab["count"].sum() == 500 and len(tab) == 9
    np.testing.assert_allclose(tab["expected"], 500 / 9)
    assert (tab["band_low"] < tab["expected"]).all() and (tab["expected"] < tab["band_high"]).all()
    g = cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=cc.Gaussian(d.mean(), d.std()))
    assert "rank_histogram" not in cc.diagnose(g, n_resamples=20, n_simulations=50).diagrams[("model", cc.ALL)]


@needs_real
def test_ecmwf_rain_ensemble_is_headlined_miscalibrated_with_its_low_rank_excess():
    pset = cc.load_predictions(ECMWF)
    rep = cc.diagnose(pset, by_group=False)
    t = rep.table()
    v = rep.verdict()
    assert v["verdict"] == "miscalibrated"
    assert t.loc["rank_chi2", "flag"] and t.loc["range_coverage", "flag"]
    assert t.loc["range_coverage", "perfect"] == pytest.approx(50 / 52)
    for k in ("z_mean", "z_std", "zms", "ence"):  # near-zero spreads: no reference of 1e6, no p-value
        assert np.isnan(t.loc[k, "p_value"]) and "degenerate ensemble spread" in t.loc[k, "note"], k
    hist = rep.diagrams[("model", cc.ALL)]["rank_histogram"]
    assert hist["count"].iloc[0] > hist["band_high"].iloc[0]  # 43% of the targets below every member
    assert hist["count"].iloc[0] / hist["count"].sum() > 0.3


def _family_false_alarms(kind: str, n: int, m: int, reps: int) -> tuple[int, int]:
    rng = np.random.default_rng([41, n, m, len(kind)])
    hits = 0
    for i in range(reps):
        y, d = exchangeable(kind, n, m, rng)
        hits += infer_regression(y, d, n_boot=20, n_blocks=100, n_null=400, seed=i).verdict == "miscalibrated"
    return hits, reps


@pytest.mark.slow
@pytest.mark.parametrize("kind", LAWS)
@pytest.mark.parametrize("m", [8, 20, 51])
@pytest.mark.parametrize("n", [200, 3_000])
def test_family_wise_false_alarms_of_the_ensemble_headline(kind, m, n):
    """The whole primary family as infer_regression decides it: at most 5% false alarms (+2 Monte Carlo s.e.)."""
    hits, reps = _family_false_alarms(kind, n, m, 150 if n <= 200 else 80)
    assert hits / reps <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps), (hits, reps)
