"""Classification inference with clustered rows: the tests hold their level when rows share a date's surprise.

Data: per date d a shock s_d ~ N(0, τ²) shifts the logit of every row's TRUE probability, q_i = σ(ℓ_i + s_d), and
labels are drawn from q; the forecast states the marginal probability p_i = E_s σ(ℓ_i + s) (Gauss–Hermite
quadrature, exact to machine precision), so it is calibrated — P(y = 1 | p) = p — but rows of one date are
dependent.  Tests that assume independent rows reject it far more often than 5 %; the cluster-aware ones may not.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import special

from calib_core.base.clustering import Clustering
from calib_core.inference.classification import infer_classification
from calib_core.inference.classification_cluster import NOT_TESTABLE, NOT_TESTABLE_MAX, centred_l1
from calib_core.inference.classification_nulls import _merged_clustering

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(60)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def shocked(rng: np.random.Generator, n_dates: int = 40, per_date: int = 50, tau: float = 1.0,
            over: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, probs, date codes): labels from the true q_i = σ(ℓ_i + s_d), forecast the marginal E_s σ(ℓ_i + s)
    (``over`` > 1 makes it over-confident: σ(over · logit p))."""
    n = n_dates * per_date
    codes = np.repeat(np.arange(n_dates), per_date)
    ell = rng.normal(1.0, 0.5, n)
    q = special.expit(ell + rng.normal(0.0, tau, n_dates)[codes])
    p = (special.expit(ell[:, None] + tau * _NODES[None, :]) * _WEIGHTS).sum(axis=1)
    if over != 1.0:
        p = special.expit(over * special.logit(p))
    y = (rng.random(n) < q).astype(np.int64)
    return y, np.column_stack([1.0 - p, p]), codes


def _alarm_rates(reps: int, seed0: int, **sim) -> tuple[float, float]:
    """Share of data sets whose headline says "miscalibrated": independent rows, then clustered by date."""
    alarms = np.zeros(2)
    for r in range(reps):
        y, p, codes = shocked(np.random.default_rng(seed0 + r), **sim)
        clustering = Clustering("date", codes, np.arange(codes.max() + 1), None)
        for j, cl in enumerate((None, clustering)):
            res = infer_classification(labels=y, probs=p, clustering=cl, n_null=200, n_boot=400, smooth=False,
                                       tce=False, classwise=False, seed=r)
            alarms[j] += res.verdict == "miscalibrated"
    return alarms[0] / reps, alarms[1] / reps


def test_marginal_forecast_is_calibrated():
    """The simulation's forecast is the marginal law: mean label minus mean forecast is noise (date-clustered s.e.)."""
    y, p, codes = shocked(np.random.default_rng(3), n_dates=400, per_date=50)
    d = np.bincount(codes, weights=y - p[:, 1]) / 50.0
    assert abs(d.mean()) < 4.0 * d.std(ddof=1) / math.sqrt(d.size)


def test_false_alarms_fast():
    """Strong date shocks (τ = 2, 80 rows a date): independent-rows verdicts alarm most of the time, clustered ones
    rarely (measured over 60 data sets: 0.68 and 0.05).  Binomial tolerance: P(≤ 3 of 10 | 0.68) = 0.016,
    P(≥ 4 of 10 | 0.05) = 0.001."""
    iid, clustered = _alarm_rates(10, 500, n_dates=30, per_date=80, tau=2.0)
    assert iid >= 0.4
    assert clustered <= 0.3


@pytest.mark.slow
def test_false_alarms_family_wise():
    """40 dates × 50 rows, τ = 1, 200 data sets: the clustered headline's family-wise false alarms ≤ 5 % + 2 MC
    s.e.; the independent-rows headline's far above (measured 0.36 vs 0.06 at this design)."""
    reps = 200
    iid, clustered = _alarm_rates(reps, 0)
    assert clustered <= 0.05 + 2.0 * math.sqrt(0.05 * 0.95 / reps)
    assert iid >= 0.2


@pytest.mark.slow
def test_power_against_over_confidence():
    """An over-confident forecast (logit × 1.6) on the same clustered data is detected most of the time."""
    _, clustered = _alarm_rates(60, 10_000, over=1.6)
    assert clustered >= 0.6


def _clustered(n_dates: int = 40, per_date: int = 50, block_length: int | None = None, seed: int = 1):
    y, p, codes = shocked(np.random.default_rng(seed), n_dates=n_dates, per_date=per_date)
    return y, p, Clustering("reference_date", codes, np.arange(n_dates), block_length)


@pytest.mark.parametrize("block_length", [None, 3])
def test_every_test_cluster_aware_or_nan(block_length):
    """Every p-value under a clustering is a cluster-aware test (named so), or NaN with the reason in its row."""
    y, p, cl = _clustered(block_length=block_length)
    res = infer_classification(labels=y, probs=p, clustering=cl, n_null=200, n_boot=300)
    tested = res.table[res.table["kind"] == "calibration statistic"]
    for name, row in tested.iterrows():
        if name in ("tce", "tce_positive", "mce", "mce_positive"):
            why = NOT_TESTABLE if name.startswith("tce") else NOT_TESTABLE_MAX
            assert np.isnan(row["p_value"]) and row["test"] == why and why in row["note"]
        elif name in ("hosmer_lemeshow", "ici"):  # the clinical set: their null draws assume independent rows
            assert np.isnan(row["p_value"]) and row["test"].startswith("not tested") and row["test"] in row["note"]
        else:
            assert np.isfinite(row["p_value"]), name
            assert "cluster" in row["test"] or "moving-block" in row["test"], (name, row["test"])
            assert "Monte Carlo" not in row["test"] and "Bernstein" not in row["test"]
    assert res.sentence.endswith(f"; {cl.describe()}.")
    assert res.options["clustering"] == cl.describe() and res.options["n_clusters"] == 40
    if block_length is not None:
        assert "moving-block" in tested.loc["confidence_gap", "test"]
    else:
        assert "39 df" in tested.loc["confidence_gap", "test"]


def test_no_clustering_is_unchanged():
    """clustering=None is the independent-rows inference, to the last bit."""
    y, p, _ = _clustered(n_dates=10, per_date=40)
    a = infer_classification(labels=y, probs=p, n_null=200, n_boot=200)
    b = infer_classification(labels=y, probs=p, n_null=200, n_boot=200, clustering=None)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.sentence == b.sentence and "cluster" not in a.options


def test_distance_intervals_agree_with_tests():
    """Distances' intervals are plug-in ± the quantile of the centred replicates: 0 is excluded exactly when the
    centred test rejects at 1 − level (up to the replicate grid)."""
    y, p, cl = _clustered()
    res = infer_classification(labels=y, probs=p, clustering=cl, n_null=200, n_boot=999, smooth=False, tce=False)
    for name in ("ece", "ece_positive", "classwise_ece"):
        row = res.table.loc[name]
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
        if row["p_value"] < 0.04:
            assert row["ci_low"] > 0.0, name
        if row["p_value"] > 0.06:
            assert row["ci_low"] == 0.0, name


def test_centred_distances():
    """The centred distance: 0 for a replicate equal to the data; each cell's sum scaled by the replicate's rows."""
    count = np.array([4.0, 6.0])
    dev = np.array([1.0, -2.0])
    same = [count[None, :], np.array([[2.0, 4.0]]), np.array([[3.0, 2.0]])]
    assert centred_l1(same, dev, 10.0).tolist() == [0.0]
    other = [np.array([[8.0, 2.0]]), np.array([[4.0, 1.0]]), np.array([[4.0, 1.0]])]  # μ* = (0, 0)
    assert centred_l1(other, dev, 10.0)[0] == pytest.approx(0.1 + 0.2)


def test_merged_clusters_stay_whole():
    """Class-wise ECE merges many clusters into runs of consecutive clusters, never splitting one."""
    codes = np.repeat(np.arange(1000), 3)
    merged = _merged_clustering(Clustering("d", codes, np.arange(1000), 8), 50)
    assert merged.n_clusters == 50 and merged.block_length == 1
    assert np.all(np.diff(merged.codes) >= 0) and set(merged.codes.tolist()) == set(range(50))
    first = merged.codes[::3]  # each original cluster's merged code
    assert np.array_equal(np.repeat(first, 3), merged.codes)
    assert np.bincount(first).tolist() == [20] * 50


def test_many_clusters_classwise_runs():
    """K = 10, 600 clusters: class-wise ECE's merged cluster design runs and gives a cluster-aware p-value."""
    rng = np.random.default_rng(4)
    n, k = 3000, 10
    logits = rng.normal(size=(n, k)) * 2.0
    p = special.softmax(logits, axis=1)
    y = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1).clip(0, k - 1)
    codes = np.repeat(np.arange(600), 5)
    res = infer_classification(labels=y, probs=p, n_null=2000, n_boot=300, smooth=False, tce=False,
                               clustering=Clustering("d", codes, np.arange(600), None))
    row = res.table.loc["classwise_ece"]
    assert np.isfinite(row["p_value"]) and "cluster" in row["test"]
