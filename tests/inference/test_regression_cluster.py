"""Regression inference under a clustering: which test every statistic gets, what is withheld, and the pieces
(cumulative counts per cluster, one-cluster subsets, ENCE's studentised distance)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from calib_core.base.clustering import Clustering
from calib_core.base.predictions import PredictionSet
from calib_core.base.regression import Gaussian, QuantileSet, SampleSet
from calib_core.base.report import CALIBRATION_STATISTIC
from calib_core.diagnosis.regression import diagnose_regression
from calib_core.inference.regression import infer_regression
from calib_core.inference.regression_cluster import NO_CLUSTER_TEST, ONE_CLUSTER, cumulative_by_cluster

TAU23 = np.unique(np.round(np.r_[0.01, 0.025, np.arange(1, 20) / 20, 0.975, 0.99], 4))


def _dated(layout: str, seed: int = 0, dates: int = 20, per_date: int = 30, scale: float = 1.0):
    """Calibrated forecasts (marginal sd 1) whose errors share a date effect, rows in random order."""
    rng = np.random.default_rng(seed)
    n = dates * per_date
    date = rng.permutation(np.repeat(np.arange(dates), per_date))
    y = np.sqrt(0.5) * rng.normal(size=dates)[date] + np.sqrt(0.5) * rng.normal(size=n)
    if layout == "gaussian":
        dist = Gaussian(np.zeros(n), np.full(n, scale))
    elif layout == "quantile":
        dist = QuantileSet(TAU23, np.tile(scale * stats.norm.ppf(TAU23), (n, 1)))
    else:
        dist = SampleSet(scale * rng.normal(size=(n, 20)))
    return y, dist, date


@pytest.mark.parametrize("layout", ["gaussian", "quantile", "sample"])
def test_every_p_value_under_clustering_comes_from_a_cluster_aware_test_or_is_withheld(layout):
    y, dist, date = _dated(layout)
    clustering = Clustering("date", date.astype(np.int64), np.arange(20), None)
    res = infer_regression(y, dist, n_boot=200, n_null=200, clustering=clustering)
    t = res.table.reset_index()
    stat = t[t["kind"] == CALIBRATION_STATISTIC]
    tested = stat[np.isfinite(stat["p_value"].to_numpy(dtype=float))]
    assert len(tested) >= 4
    assert tested["test"].str.contains("cluster").all(), tested[["metric", "test"]]
    # the two with no cluster-aware form say so instead of keeping an independent-rows p-value
    for k in ("pit_entropy", "reliability_score"):
        if k in set(stat["metric"]) and layout == "gaussian":
            row = stat[stat["metric"] == k].iloc[0]
            assert np.isnan(row["p_value"]) and NO_CLUSTER_TEST in row["note"]
    # intervals of means and coverages resample the clusters
    iv = t.set_index("metric")["interval"]
    assert "cluster" in iv["coverage_90"] or "cluster" in iv.get("coverage_80", "")
    assert "block bootstrap" not in " ".join(iv.astype(str))


def test_without_a_clustering_nothing_changes_and_a_clustering_widens_the_mean_interval():
    y, dist, date = _dated("gaussian", seed=3)
    plain = infer_regression(y, dist, n_boot=200, n_null=200).table
    again = infer_regression(y, dist, n_boot=200, n_null=200, clustering=None).table
    pd.testing.assert_frame_equal(plain, again)
    clustered = infer_regression(y, dist, n_boot=200, n_null=200,
                                 clustering=Clustering("date", date.astype(np.int64), np.arange(20), None))
    c = clustered.table
    assert (c.loc["z_mean", "ci_high"] - c.loc["z_mean", "ci_low"]) > 2 * (
        plain.loc["z_mean", "ci_high"] - plain.loc["z_mean", "ci_low"])


def test_one_cluster_gives_no_test_and_no_interval():
    y, dist, _ = _dated("gaussian", dates=4, per_date=25)
    one = Clustering("date", np.zeros(y.size, dtype=np.int64), np.array([0]), None)
    t = infer_regression(y, dist, n_boot=50, n_null=50, clustering=one).table.reset_index()
    stat = t[t["kind"] == CALIBRATION_STATISTIC]
    assert stat["p_value"].isna().all() and stat["ci_low"].isna().all()
    assert stat["note"].str.contains(ONE_CLUSTER, regex=False).any()


def test_cumulative_counts_per_cluster_match_a_direct_count():
    rng = np.random.default_rng(1)
    u, codes = rng.random(500), rng.integers(0, 7, 500)
    grid = np.array([0.1, 0.5, 0.9])
    c = cumulative_by_cluster(u, codes, 7, grid)
    direct = np.array([[np.sum((codes == g) & (u <= t)) for t in grid] for g in range(7)])
    np.testing.assert_array_equal(c, direct)


def test_ence_under_clustering_is_studentised_and_centred_at_the_null():
    y, dist, date = _dated("sample", seed=5, dates=30, per_date=40)
    clustering = Clustering("date", date.astype(np.int64), np.arange(30), None)
    row = infer_regression(y, dist, n_boot=300, n_null=200, clustering=clustering).table.loc["ence"]
    assert "studentised" in row["test"] and row["p_value"] > 0.01  # a calibrated ensemble
    assert row["ci_low"] <= row["value"] <= row["ci_high"]


def test_a_hub_is_clustered_by_reference_date_by_default():
    y, dist, date = _dated("gaussian", seed=2, dates=12, per_date=20)
    units = pd.DataFrame({"reference_date": pd.Timestamp("2024-01-06") + pd.to_timedelta(7 * date, "D"),
                          "location": np.arange(y.size) % 20})
    ps = PredictionSet("regression", y=y, dist=dist, units=units)
    rep = diagnose_regression(ps, n_resamples=100, n_simulations=100, diagrams=False)
    o = rep.options
    assert (o["cluster"], o["block_length"], o["n_clusters"]) == ("reference_date", None, 12)
    assert o["clustering"] == "whole reference_date clusters resampled (12 clusters)"
    sentence = rep.verdicts.iloc[0]["sentence"]
    assert sentence.endswith("; whole reference_date clusters resampled (12 clusters).")
    moving = diagnose_regression(ps, n_resamples=100, n_simulations=100, diagrams=False, block_length="auto")
    assert moving.options["block_length"] == 2 and "moving blocks" in moving.options["clustering"]
    plain = diagnose_regression(ps, n_resamples=100, n_simulations=100, diagrams=False, cluster=None)
    assert plain.options["clustering"] == "independent rows" and "clusters:" not in plain.verdicts.iloc[0]["sentence"]
