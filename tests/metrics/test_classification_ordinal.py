"""The ranked probability score of ordinal forecasts (calib_core.metrics.classification_ordinal): against references
computed differently (Brier scores of the cumulative events, a triangular matrix, scoringrules), its properties
(hypothesis) and its expectation under calibration (exact, and by simulation from the true law)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import calib_core as cc
from calib_core.calibrators import registry as reg
from calib_core.metrics.classification_ordinal import (
    cumulative_events,
    rps,
    rps_expectation,
    rps_of_labels,
    rps_outcomes,
    rps_rows,
    threshold_names,
)


def _forecasts(n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), size=n)
    y = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)  # Y ~ p (the true law)
    return p, np.minimum(y, k - 1)


def _brier_sum(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Σ_k Brier of "Y ≤ k" via a lower-triangular matrix (no cumsum): P = p Lᵀ, O = onehot Lᵀ."""
    k = p.shape[1]
    tri = np.tril(np.ones((k, k)))
    onehot = np.eye(k)[y]
    return ((p @ tri.T - onehot @ tri.T)[:, :-1] ** 2).sum(axis=1)


@pytest.mark.parametrize("k", [2, 3, 5, 11])
def test_rps_is_the_sum_of_the_threshold_briers(k):
    p, y = _forecasts(400, k, seed=k)
    np.testing.assert_allclose(rps_rows(p, y), _brier_sum(p, y), rtol=1e-12, atol=1e-14)
    assert rps(p, y) == pytest.approx(_brier_sum(p, y).mean(), rel=1e-12)
    assert rps(p, y, normalise=True) == pytest.approx(_brier_sum(p, y).mean() / (k - 1), rel=1e-12)


def test_rps_matches_scoringrules():
    sr = pytest.importorskip("scoringrules")
    for k in (2, 4, 7):
        p, y = _forecasts(300, k, seed=10 + k)
        theirs = np.asarray(sr.rps_score(y + 1, p), dtype=float)  # scoringrules: categories 1 … K
        np.testing.assert_allclose(rps_rows(p, y), theirs, rtol=1e-10, atol=1e-12)


def test_epstein_worked_example_and_weights():
    p = np.array([[0.1, 0.2, 0.3, 0.4]])
    assert rps_rows(p, np.array([2]))[0] == pytest.approx(0.26)
    p2, y2 = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]]), np.array([0, 0])
    assert rps(p2, y2, weights=np.array([3.0, 1.0])) == pytest.approx((3 * 0.1 + 1.3) / 4)
    assert np.isnan(rps(np.zeros((0, 3)), np.zeros(0, dtype=int)))


def test_outcome_table_matches_the_rows():
    p, _ = _forecasts(50, 6, seed=3)
    table = rps_outcomes(p)
    for j in range(6):
        np.testing.assert_allclose(table[:, j], rps_rows(p, np.full(50, j)), atol=1e-13)
    np.testing.assert_allclose(rps_outcomes(p, normalise=True), table / 5)


def test_expectation_under_calibration_exact_and_simulated():
    p, _ = _forecasts(200, 5, seed=4)
    mean, var = rps_expectation(p)
    cum, _ = cumulative_events(p, np.zeros(200, dtype=int))
    np.testing.assert_allclose(mean, (cum * (1 - cum)).sum(axis=1), atol=1e-13)  # Σ_k P_k(1 − P_k)
    # labels drawn from the TRUE law (the forecasts): the mean RPS over 2000 draws per row matches E and Var
    rng = np.random.default_rng(5)
    u = rng.random((2000, 200, 1))
    y = (u > np.cumsum(p, axis=1)[None]).sum(axis=2)
    scores = rps_outcomes(p)[np.arange(200)[None, :], y]
    se = np.sqrt(var / 2000)
    z = (scores.mean(axis=0) - mean) / np.where(se > 0, se, 1.0)
    assert np.mean(np.abs(z) > 3.29) <= 0.02  # 0.1% two-sided per row; a few of 200 at most
    # the variances: summed over the rows (each row's sample variance is noisy; the sum's relative s.e. is ~1%)
    assert scores.var(axis=0).sum() == pytest.approx(var.sum(), rel=0.05)


def test_argument_checks():
    p, y = _forecasts(10, 3)
    with pytest.raises(ValueError, match="probs first"):
        rps(y, p)
    with pytest.raises(ValueError, match="category codes"):
        rps(p, y + 3)
    with pytest.raises(ValueError, match="shape"):
        rps(p, y[:5])
    assert threshold_names(["a", "b", "c"], 3) == ["≤ a", "≤ b"]
    assert threshold_names(None, 3) == ["≤ 0", "≤ 1"]


# ----------------------------------------------------------------------------------------------- properties
@st.composite
def ordinal_forecasts(draw, max_k: int = 8):
    k = draw(st.integers(2, max_k))
    n = draw(st.integers(1, 20))
    w = draw(arrays(np.float64, (n, k), elements=st.floats(0.0, 1.0, allow_nan=False)))
    w = w + 1e-9
    p = w / w.sum(axis=1, keepdims=True)
    y = draw(arrays(np.int64, n, elements=st.integers(0, k - 1)))
    return p, y


@settings(max_examples=60, deadline=None)
@given(ordinal_forecasts())
def test_rps_properties(case):
    p, y = case
    r = rps_rows(p, y)
    k = p.shape[1]
    assert np.all(r >= 0) and np.all(r <= k - 1 + 1e-9)
    assert np.all(r > 0)  # every category has some mass: never all of it on the truth, so never 0
    # an empty category appended at the end (or put first, with the labels moved) changes nothing
    np.testing.assert_allclose(rps_rows(np.column_stack([p, np.zeros(len(y))]), y), r, atol=1e-12)
    np.testing.assert_allclose(rps_rows(np.column_stack([np.zeros(len(y)), p]), y + 1), r, atol=1e-12)
    # all mass on the truth scores 0; all mass on any other category scores > 0
    onehot = np.eye(k)[y]
    assert np.all(rps_rows(onehot, y) == 0)
    other = np.eye(k)[(y + 1) % k]
    assert np.all(rps_rows(other, y) > 0)
    # the expected score is smallest for the true law (strict propriety, against the onehot of the mode)
    mean, _ = rps_expectation(p)
    mode = np.eye(k)[p.argmax(axis=1)]
    assert np.all(mean <= np.einsum("ij,ij->i", p, rps_outcomes(mode)) + 1e-12)


@settings(max_examples=40, deadline=None)
@given(ordinal_forecasts(max_k=2))
def test_two_categories_is_the_binary_brier(case):
    p, y = case
    np.testing.assert_allclose(rps_rows(p, y), (p[:, 1] - (y == 1)) ** 2, atol=1e-12)
    np.testing.assert_allclose(rps_rows(p, y), 0.5 * ((p - np.eye(2)[y]) ** 2).sum(axis=1), atol=1e-12)


# ----------------------------------------------------------------------------------------------- registry, report
def _ordinal_set(n: int = 300, k: int = 4, seed: int = 0) -> cc.PredictionSet:
    p, y = _forecasts(n, k, seed)
    return cc.PredictionSet(task="classification", labels=y, probs=p, classes=[f"c{j}" for j in range(k)],
                            ordinal=True)


def test_registry_entry_and_report_row():
    m = reg.metric("rps", "classification")
    assert m.kind == reg.PROPER and m.direction == "lower"
    pset = _ordinal_set()
    assert m(pset.labels, pset.probs) == pytest.approx(rps(pset.probs, pset.labels))
    assert rps_of_labels(pset.labels, pset.probs, normalise=True) == pytest.approx(rps(pset.probs, pset.labels) / 3)
    report = cc.diagnose(pset, n_resamples=200, n_simulations=200)
    row = report.table().loc["rps"]
    assert row["value"] == pytest.approx(rps(pset.probs, pset.labels))
    assert row["ci_low"] < row["value"] < row["ci_high"]
    assert row["perfect_low"] < row["perfect"] < row["perfect_high"]
    assert row["kind"] == reg.PROPER
    # not an ordinal set: no RPS row (the categories have no order)
    plain = cc.PredictionSet(task="classification", labels=pset.labels, probs=pset.probs)
    assert "rps" not in set(cc.diagnose(plain, n_resamples=0, n_simulations=0).metrics["metric"])


def test_rps_interval_covers_the_population_value():
    """Percentile block-bootstrap interval of the mean RPS: coverage of the population mean by seeded simulation
    (a fixed forecast law, labels drawn from a shifted true law; the population value computed exactly)."""
    from calib_core.inference.classification_ordinal import ordinal_metric_rows

    k, n, reps = 4, 200, 60
    base = np.array([0.1, 0.4, 0.3, 0.2])
    true = np.array([0.05, 0.25, 0.4, 0.3])
    population = float(true @ rps_outcomes(base[None])[0])
    rng = np.random.default_rng(11)
    hits = 0
    for r in range(reps):
        y = rng.choice(k, size=n, p=true)
        row = ordinal_metric_rows(np.tile(base, (n, 1)), y, model="m", group="all", n_resamples=300, seed=r)
        hits += int(row["ci_low"].iloc[0] <= population <= row["ci_high"].iloc[0])
    # 95% nominal: P(Binomial(60, 0.95) ≤ 52) ≈ 0.03; the percentile bootstrap at N = 200 is close to nominal
    assert hits >= 52, hits
