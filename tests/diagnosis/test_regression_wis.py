"""The WIS rows and the stated central intervals in cc.diagnose's metric table: kinds, intervals, the WIS reference
under perfect calibration, and a quantile set's extra stated intervals kept out of every test family."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import calib_core as cc
from calib_core.calibrators import registry as reg
from calib_core.inference.regression_verdict import primary_family
from calib_core.metrics.regression_wis import HUB_LEVELS, WIS_PARTS, gaussian_expected_wis, wis_parts


def gaussian(n: int, seed: int, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    mu, sd = rng.normal(size=n) * 2, rng.uniform(0.5, 2.0, n)
    return mu + scale * sd * rng.standard_normal(n), mu, sd  # y from the TRUE law when scale = 1


def test_gaussian_report_has_the_wis_rows_with_exact_reference_and_bca_intervals():
    y, mu, sd = gaussian(1_500, 0)
    pset = cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=cc.Gaussian(mu, sd))
    t = cc.diagnose(pset, n_resamples=300, n_simulations=200, diagrams=False).table()
    p = wis_parts(y, cc.Gaussian(mu, sd))
    for key, arr in p.columns().items():
        assert t.loc[key, "value"] == pytest.approx(float(arr.mean()), rel=1e-12)
        assert t.loc[key, "ci_low"] <= t.loc[key, "value"] <= t.loc[key, "ci_high"]
        assert t.loc[key, "interval"].startswith("BCa")
        assert t.loc[key, "kind"] == (reg.PROPER if key == "wis" else reg.DESCRIPTIVE) == reg.metric(key).kind
        assert not np.isfinite(t.loc[key, "p_value"]) and t.loc[key, "family"] == ""
    assert t.loc["wis", "perfect"] == pytest.approx(float(gaussian_expected_wis(sd.mean())), rel=1e-12)
    assert sum(t.loc[k, "value"] for k in WIS_PARTS[1:]) == pytest.approx(t.loc["wis", "value"], rel=1e-12)
    # calibrated forecasts: the exact expectation lies inside the WIS interval (N = 1,500, one draw)
    assert t.loc["wis", "ci_low"] <= t.loc["wis", "perfect"] <= t.loc["wis", "ci_high"]


def test_quantile_set_reports_every_stated_interval_and_keeps_its_families():
    y, mu, sd = gaussian(2_000, 1, scale=1.3)  # over-confident: the coverages fall short
    q = mu[:, None] + sd[:, None] * special.ndtri(HUB_LEVELS)[None, :]
    dist = cc.QuantileSet(HUB_LEVELS, q)
    rep = cc.diagnose(cc.PredictionSet(task="regression", layout="quantile", y=y, dist=dist), n_resamples=200,
                      n_simulations=200, diagrams=False)
    t = rep.table()
    extra = [f"coverage_{c}" for c in (10, 20, 30, 40, 60, 70, 98)]
    for key in extra:
        c = float(key.split("_")[1]) / 100
        j = int(np.argmin(np.abs(HUB_LEVELS - (0.5 - c / 2))))
        inside = (q[:, j] <= y) & (y <= q[:, -1 - j])
        assert t.loc[key, "value"] == pytest.approx(inside.mean(), abs=1e-15)
        assert t.loc[key, "kind"] == reg.DESCRIPTIVE and t.loc[key, "family"] == ""
        assert not np.isfinite(t.loc[key, "p_value"]) and "exact binomial p" in t.loc[key, "note"]
        assert t.loc[key, "ci_low"] <= t.loc[key, "value"] <= t.loc[key, "ci_high"]
        assert t.loc[key, "perfect"] == pytest.approx(c)
    # the report's own levels keep their tests and families: the widest stated one (95%) primary, the others BH
    assert set(t.index[t["family"] == "primary"]) == set(primary_family(dist))
    assert "coverage_95" in primary_family(dist)
    for key in ("coverage_50", "coverage_80", "coverage_90"):
        assert t.loc[key, "family"] == "secondary" and np.isfinite(t.loc[key, "p_value"])
    assert t.loc["coverage_98", "value"] < 0.98 and t.loc["wis", "value"] > t.loc["wis", "perfect"]


@pytest.mark.slow
def test_wis_interval_covers_the_population_value_under_the_true_law():
    """BCa block-bootstrap interval of the mean WIS against its population value E WIS = mean_i σ_i Σφ(z_τ)/(K + ½)
    (targets from the true Gaussian): 200 data sets of N = 400, coverage within 3 binomial s.e. of 95% (measured
    0.95)."""
    import warnings

    from calib_core.inference.regression import infer_regression

    rng = np.random.default_rng(11)
    hits, reps = 0, 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            n = 400
            mu, sd = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
            y = mu + sd * rng.standard_normal(n)
            row = infer_regression(y, cc.Gaussian(mu, sd), n_null=10, n_boot=400, seed=r).table.loc["wis"]
            hits += row["ci_low"] <= float(gaussian_expected_wis(sd).mean()) <= row["ci_high"]
    assert abs(hits / reps - 0.95) < 3 * np.sqrt(0.95 * 0.05 / reps)
