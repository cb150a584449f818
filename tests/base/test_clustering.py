"""Clusterings: resolution from a prediction set, cluster and moving-block designs, centred bootstrap tests and the
cluster-robust t test (sizes by seeded simulation with a binomial tolerance)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from calib_core.base.clustering import (
    Clustering,
    auto_block_length,
    centred_bootstrap_p,
    centred_distance_p,
    cluster_bootstrap_t,
    cluster_choices,
    cluster_design,
    cluster_mean_test,
    moving_block_weights,
    resolve_clustering,
)
from calib_core.base.predictions import InputError, PredictionSet


def _pset(n=6, **extra):
    return PredictionSet("regression", y=np.zeros(n), **extra)


def test_resolve_by_slice_column_sorts_clusters_and_keeps_missing_rows_apart():
    ps = _pset(5, slice_columns=pd.DataFrame({"site": ["b", None, "a", "b", None]}))
    c = resolve_clustering(ps, "site")
    assert c.codes.tolist() == [1, 2, 0, 1, 3]
    assert c.labels[:2].tolist() == ["a", "b"] and c.n_clusters == 4
    assert c.describe() == "whole site clusters resampled (4 clusters)"


def test_auto_is_the_hub_reference_date_and_independent_rows_otherwise():
    units = pd.DataFrame({"location": ["01", "02", "01", "02"],
                          "reference_date": pd.to_datetime(["2022-01-08", "2022-01-08", "2022-01-01", "2022-01-01"])})
    c = resolve_clustering(_pset(4, units=units))
    assert c.column == "reference_date" and c.codes.tolist() == [1, 1, 0, 0]
    assert resolve_clustering(_pset(4)) is None
    assert resolve_clustering(_pset(4, units=units), None) is None
    assert resolve_clustering(_pset(4, units=units), "none") is None
    assert cluster_choices(_pset(4, units=units))[:2] == ["reference_date", "location"]


def test_unknown_column_and_bad_block_length_are_said():
    ps = _pset(4, slice_columns=pd.DataFrame({"site": list("abab")}))
    with pytest.raises(InputError, match="'region'.*'site'"):
        resolve_clustering(ps, "region")
    with pytest.raises(InputError, match="whole number from 1 to the 2"):
        resolve_clustering(ps, "site", block_length=3)
    assert resolve_clustering(ps, "site", block_length="auto").block_length == 1  # G = 2
    assert auto_block_length(27) == 3 and auto_block_length(200) == 6


def test_take_recodes_in_order():
    c = Clustering("d", np.array([2, 0, 2, 1]), np.array(["x", "y", "z"]))
    sub = c.take(np.array([0, 2, 3]))
    assert sub.codes.tolist() == [1, 1, 0] and sub.labels.tolist() == ["y", "z"]


@settings(max_examples=40, deadline=None)
@given(g=st.integers(1, 40), k=st.integers(1, 40), b=st.integers(1, 20), seed=st.integers(0, 10))
def test_moving_block_weights_sum_to_g_and_come_in_runs(g, k, b, seed):
    w = moving_block_weights(g, k, b, np.random.default_rng(seed))
    assert w.shape == (b, g) and np.all(w.sum(axis=1) == g) and np.all(w >= 0)


def test_moving_blocks_keep_neighbours_together():
    w = moving_block_weights(50, 10, 2000, np.random.default_rng(1))
    # neighbours share a block far more often than clusters 25 apart
    near = np.corrcoef(w[:, 20], w[:, 21])[0, 1]
    far = np.corrcoef(w[:, 20], w[:, 45])[0, 1]
    assert near > 0.5 and abs(far) < near / 2
    assert abs(w.mean() - 1.0) < 1e-12


def test_cluster_design_is_seeded_and_clusters_are_the_blocks():
    c = Clustering("d", np.array([0, 0, 1, 1, 2]), np.array([1, 2, 3]))
    a, b = cluster_design(c, 50, (3, 12)), cluster_design(c, 50, (3, 12))
    assert np.array_equal(a.weights, b.weights) and a.n_blocks == 3 and a.ids.tolist() == [0, 0, 1, 1, 2]
    assert np.all(a.weights.sum(axis=1) == 3)


def test_centred_p_values():
    rng = np.random.default_rng(0)
    boot = rng.normal(0.0, 1.0, size=(4999, 2))
    p = centred_bootstrap_p(np.array([0.0, 0.0]), boot, np.array([1.96, 0.0]))
    assert abs(p[0] - 0.05) < 0.01 and p[1] == 1.0
    assert np.isnan(centred_distance_p(0.1, np.full(10, np.nan)))


@pytest.mark.parametrize("g", [10, 30])
def test_cluster_mean_test_holds_its_level_with_a_shared_cluster_shock(g):
    """Rows of a cluster share a shock as large as the noise: the cluster-robust t test rejects about 5% of true
    nulls (binomial tolerance), the i.i.d. t test far more."""
    rng = np.random.default_rng(2)
    reps, m = 2000, 20
    codes = np.repeat(np.arange(g), m)
    x = rng.normal(size=(reps, g))[:, codes] + rng.normal(size=(reps, g * m))
    p = np.array([cluster_mean_test(row, codes)[1] for row in x])
    rate = float((p < 0.05).mean())
    assert abs(rate - 0.05) < 3 * np.sqrt(0.05 * 0.95 / reps) + 0.005
    naive = stats.ttest_1samp(x, 0.0, axis=1).pvalue
    assert (naive < 0.05).mean() > 0.5


def test_cluster_bootstrap_t_holds_its_size_for_a_skewed_clustered_mean_where_iid_fails():
    # cluster means of a chi-square-like quantity (a coverage near 1, a mean of squares): 30 clusters of 20 rows
    # sharing half their variance; the truth is the population mean (1), 150 data sets
    reps, g, m = 150, 30, 20
    codes = np.repeat(np.arange(g), m)
    design = cluster_design(Clustering("c", codes, np.arange(g), None), 400, 3)
    rej_boot = rej_iid = cover = 0
    for i in range(reps):
        rng = np.random.default_rng([41, i])
        e = np.sqrt(0.5) * rng.normal(size=g)[codes] + np.sqrt(0.5) * rng.normal(size=g * m)
        x = e * e  # E x = 1, skewed cluster totals
        p, lo, hi, se = cluster_bootstrap_t(x, codes, design.weights, 1.0)
        rej_boot += p < 0.05
        cover += lo <= 1.0 <= hi
        rej_iid += stats.ttest_1samp(x, 1.0).pvalue < 0.05
    # binomial tolerance: P(Bin(150, 0.05) >= 16) < 0.01; the i.i.d. t test is far above
    assert rej_boot <= 15, rej_boot
    assert rej_iid / reps > 0.3
    assert cover >= stats.binom.ppf(0.001, reps, 0.95) - 1, cover


def test_cluster_bootstrap_t_is_nan_with_one_cluster():
    w = np.ones((10, 1))
    assert np.isnan(cluster_bootstrap_t(np.arange(5.0), np.zeros(5, dtype=int), w)[0])
