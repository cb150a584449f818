"""Every table row's interval holds its own point value, debiased values of non-negative statistics are never
negative, and a test and its interval agree (p < 1 − level exactly when the reference lies outside the interval) or
the row's note says why they can differ — over random data sets of both tasks (heavy tails, wrong σ, shifts,
quantile sets, ensembles, temperature-miscalibrated classifiers)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from calib_core.base.regression import Gaussian, QuantileSet, SampleSet
from calib_core.inference.classification import infer_classification
from calib_core.inference.regression import DISTANCES, infer_regression
from calib_core.inference.result import interval_test_note

LEVEL = 0.95
TAU9 = np.arange(1, 10) / 10


def _problems(table, task: str) -> list[tuple]:
    out = []
    for k, row in table.iterrows():
        lo, hi, v = row["ci_low"], row["ci_high"], row["value"]
        has_ci = np.isfinite(lo) and np.isfinite(hi)
        if has_ci and np.isfinite(v) and not lo - 1e-12 <= v <= hi + 1e-12:
            out.append((k, "value outside its interval", v, lo, hi))
        if np.isfinite(row["debiased"]) and row["debiased"] < 0:
            out.append((k, "negative debiased value", row["debiased"]))
        if row["kind"] == "calibration statistic" and has_ci and np.isfinite(row["p_value"]):
            if task == "classification":
                ref = 1.0 if k.startswith("calibration_ratio") else 0.0
            else:
                ref = 0.0 if k in DISTANCES else row["perfect"]
            if (row["p_value"] < 1 - LEVEL) != (not lo <= ref <= hi) and not row["note"]:
                out.append((k, "test and interval disagree without a note", row["p_value"], lo, hi, ref))
    return out


def _regression_set(rng: np.random.Generator):
    n = int(rng.choice([60, 300, 2000]))
    mu, s = rng.normal(size=n), np.exp(0.5 * rng.normal(size=n))
    df = int(rng.choice([3, 5, 1000]))
    y = mu + s * rng.standard_t(df, size=n) * np.sqrt((df - 2) / df)
    sf, shift = float(rng.choice([0.7, 1.0, 1.3])), float(rng.choice([0.0, 0.15]))
    layout = rng.choice(["gaussian", "quantile", "sample"])
    if layout == "gaussian":
        return y, Gaussian(mu + shift * s, s * sf)
    if layout == "quantile":
        return y, QuantileSet(TAU9, (mu + shift * s)[:, None] + (sf * s)[:, None] * stats.norm.ppf(TAU9)[None, :])
    return y, SampleSet((mu + shift * s)[:, None] + (sf * s)[:, None] * rng.normal(size=(n, 10)))


def _classification_set(rng: np.random.Generator):
    n, k = int(rng.choice([100, 500, 3000])), int(rng.choice([2, 4]))
    logits = 2.0 * rng.normal(size=(n, k))
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    t = float(rng.choice([0.7, 1.0, 1.5]))
    q = np.exp(t * logits)
    return labels, q / q.sum(axis=1, keepdims=True)


def _scan(seed: int, sets: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    found = []
    for i in range(sets):
        y, d = _regression_set(rng)
        found += _problems(infer_regression(y, d, seed=i, n_boot=200, n_null=200, level=LEVEL).table, "regression")
        labels, probs = _classification_set(rng)
        table = infer_classification(labels=labels, probs=probs, seed=i, n_boot=200, n_null=200, level=LEVEL).table
        found += _problems(table, "classification")
    return found


def test_intervals_hold_their_values_and_agree_with_their_tests():
    assert _scan(0, 3) == []


@pytest.mark.slow
def test_intervals_hold_their_values_and_agree_with_their_tests_on_many_sets():
    assert _scan(1, 40) == []


def test_the_agreement_note():
    row = dict(value=0.39, ci_low=-0.1, ci_high=0.87, p_value=1e-9, test="t", interval="i")
    assert "rejects" in interval_test_note(row, LEVEL, 0.0)
    assert interval_test_note(dict(row, p_value=0.3), LEVEL, 0.0) == ""
    assert "excludes the reference" in interval_test_note(dict(row, ci_low=0.1, p_value=0.3), LEVEL, 0.0)
    assert "value outside" in interval_test_note(dict(row, value=0.9, p_value=0.3), LEVEL, 0.0)


def test_skewness_of_heavy_tailed_symmetric_errors_is_not_flagged():
    """Student-t₄ errors with the right σ: the skewness is 0; D'Agostino's Gaussian-null test alone rejects it (the
    heavy tails inflate the statistic's spread), the studentised test that its interval inverts does not."""
    rng = np.random.default_rng(5)
    alarms, reps = 0, 30
    for i in range(reps):
        n = 3000
        mu, s = rng.normal(size=n), np.exp(0.3 * rng.normal(size=n))
        y = mu + s * rng.standard_t(4, size=n) / np.sqrt(2.0)
        t = infer_regression(y, Gaussian(mu, s), seed=i, n_boot=300, n_null=100).table
        alarms += t.loc["z_skewness", "p_value"] <= 0.05
        assert t.loc["z_excess_kurtosis", "p_value"] <= 0.05  # the tails are what is wrong
    assert alarms / reps <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps) + 0.05  # bootstrap-t at N = 3,000 (slightly liberal)
