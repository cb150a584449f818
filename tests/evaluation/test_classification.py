"""evaluate_classification: the held-out protocol of cc.evaluate for classification calibrators."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

import calib_core as cc
from calib_core.base.predictions import PredictionSet
from calib_core.base.protocol import split_rows
from calib_core.calibrators import classification as ccal
from calib_core.evaluation.classification import evaluate_classification
from calib_core.metrics.classification import ClassificationRows


def make_set(n: int = 1200, k: int = 4, seed: int = 0, *, logits: bool = True, models: bool = False,
             split: bool = False) -> PredictionSet:
    rng = np.random.default_rng(seed)
    z_true = rng.normal(size=(n, k))
    labels = (z_true + rng.gumbel(size=(n, k))).argmax(1)
    z = 3.0 * z_true  # over-confident
    probs = np.exp(z - z.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    return PredictionSet(
        task="classification", labels=labels, probs=probs, logits=z if logits else None,
        model=np.where(np.arange(n) % 3 == 0, "b", "a") if models else None,
        split=np.where(np.arange(n) % 4 == 0, "cal", "test") if split else None,
    )


class Spy(BaseEstimator):
    """Records the rows (first logit, unique per row) it was fitted on; returns the input probabilities."""

    fitted: list[np.ndarray] = []

    def __init__(self, input: str = "auto") -> None:
        self.input = input

    def fit(self, X, y):
        Spy.fitted.append(np.asarray(X)[:, 0].copy())
        self.kind_ = self.input
        return self

    def predict_proba(self, X):
        X = np.asarray(X)
        e = np.exp(X - X.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)


class Broken(BaseEstimator):
    def fit(self, X, y):
        raise RuntimeError("cannot fit")


def test_no_calibrator_ever_sees_a_test_row():
    ps = make_set(models=True)
    Spy.fitted = []
    res = evaluate_classification(ps, {"spy": Spy()}, repeats=3, seed=5)
    assert len(Spy.fitted) == len(res.splits) == 2 * 3
    first = ps.logits[:, 0]
    for fitted, sp in zip(Spy.fitted, res.splits):
        np.testing.assert_array_equal(np.sort(fitted), np.sort(first[sp["cal"]]))
        assert not np.intersect1d(sp["cal"], sp["test"]).size
        model_rows = np.flatnonzero(ps.model == sp["model"])
        assert set(sp["cal"]) | set(sp["test"]) == set(model_rows)
    # the splits are cc.evaluate's: trial t of model m is split_rows(n_m, …, t, seed, 0.5)
    sp = res.splits[1]
    rows = np.flatnonzero(ps.model == sp["model"])
    cal_pos, test_pos = split_rows(rows.size, None, "random", sp["trial"], 5, 0.5)
    np.testing.assert_array_equal(sp["cal"], rows[cal_pos])
    np.testing.assert_array_equal(sp["test"], rows[test_pos])


def test_uncalibrated_metrics_equal_classification_rows_on_test_rows():
    ps = make_set()
    res = evaluate_classification(ps, {"none": None}, repeats=2, n_bins=10, strategy="quantile")
    for sp in res.splits:
        t = sp["test"]
        ref = ClassificationRows(ps.labels[t], ps.probs[t], ps.logits[t], n_bins=10, strategy="quantile").statistics()
        got = res.long[res.long["trial"] == sp["trial"]].set_index("metric")["value"]
        for m in ("ece", "mce", "nll", "brier", "accuracy", "classwise_ece"):
            assert got[m] == pytest.approx(ref[m], rel=1e-12)
        assert "ece_positive" not in got.index  # binary-only metrics are skipped for K = 4
    s = res.summary.set_index("metric")
    vals = res.long[res.long["metric"] == "ece"]["value"].to_numpy()
    assert s.loc["ece", "mean"] == pytest.approx(vals.mean()) and s.loc["ece", "std"] == pytest.approx(vals.std(ddof=1))


def test_temperature_scaling_fixes_overconfidence_on_held_out_rows():
    ps = make_set(n=3000)
    res = evaluate_classification(ps, {"none": None, "T": ccal.TemperatureScaling()}, repeats=3)
    wide = res.wide("mean").loc["model"]
    assert wide.loc["T", "ece"] < 0.4 * wide.loc["none", "ece"]
    assert wide.loc["T", "nll"] < wide.loc["none", "nll"]
    assert wide.loc["T", "accuracy"] == pytest.approx(wide.loc["none", "accuracy"])  # T > 0 keeps the argmax


def test_seeds_reproduce_and_differ():
    ps = make_set()
    a = evaluate_classification(ps, {"T": ccal.TemperatureScaling()}, repeats=2, seed=1)
    b = evaluate_classification(ps, {"T": ccal.TemperatureScaling()}, repeats=2, seed=1)
    c = evaluate_classification(ps, {"T": ccal.TemperatureScaling()}, repeats=2, seed=2)
    pd.testing.assert_frame_equal(a.long, b.long)
    assert not np.allclose(a.long["value"], c.long["value"])


def test_split_column_gives_one_trial_and_a_message():
    ps = make_set(split=True)
    res = evaluate_classification(ps, {"none": None}, repeats=5)
    assert res.long["trial"].unique().tolist() == [0]
    assert any("repeats=5 gives one trial" in m for m in res.messages)
    assert res.long["n_cal"].iloc[0] == 300 and res.long["n_test"].iloc[0] == 900
    rnd = evaluate_classification(ps, {"none": None}, split="random", repeats=2, test_fraction=0.25)
    assert rnd.long["n_test"].iloc[0] == 300


def test_probabilities_only_and_input_kind():
    ps = make_set(logits=False)
    Spy.fitted = []
    res = evaluate_classification(ps, {"spy": Spy(), "iso": ccal.IsotonicCalibration()}, repeats=1)
    assert res.long["calibrator"].unique().tolist() == ["spy", "iso"]
    # the spy saw probabilities (input set to "probs"), rows of the calibration split
    np.testing.assert_array_equal(np.sort(Spy.fitted[0]), np.sort(ps.probs[res.splits[0]["cal"], 0]))


def test_progress_failures_and_bad_input():
    ps = make_set(models=True)
    calls: list[tuple[int, int, str]] = []
    res = evaluate_classification(ps, {"none": None, "broken": Broken(), "T": ccal.TemperatureScaling()}, repeats=2,
                                  progress=lambda d, t, s: calls.append((d, t, s)))
    assert [c[0] for c in calls] == list(range(1, 13)) and {c[1] for c in calls} == {12}
    assert any("calibrator 'broken' failed: cannot fit" in m for m in res.messages)
    assert set(res.summary["calibrator"]) == {"none", "T"}
    with pytest.raises(KeyError, match="unknown metric"):
        evaluate_classification(ps, {"none": None}, metrics=["ence"])
    top = PredictionSet(task="classification", labels=ps.labels, confidence=ps.probs.max(1),
                        point=ps.probs.argmax(1), top_label_only=True)
    with pytest.raises(ValueError, match="top-label confidence only"):
        evaluate_classification(top, {"none": None})
    with pytest.raises(ValueError, match="classification prediction sets"):
        evaluate_classification(PredictionSet(task="regression", y=np.zeros(3)), {"none": None})


def test_binary_platt_and_positive_class_metrics():
    rng = np.random.default_rng(3)
    n = 2000
    z = 2.0 * rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-z / 2))).astype(int)
    logits = np.column_stack([np.zeros(n), z])
    probs = np.column_stack([1 / (1 + np.exp(z)), 1 / (1 + np.exp(-z))])
    ps = PredictionSet(task="classification", labels=y, probs=probs, logits=logits)
    res = evaluate_classification(ps, {"none": None, "Platt": ccal.PlattScaling()}, repeats=2)
    wide = res.wide("mean").loc["model"]
    assert {"ece_positive", "mce_positive"} <= set(wide.columns)
    assert wide.loc["Platt", "ece_positive"] < wide.loc["none", "ece_positive"]


def test_cc_evaluate_dispatches_classification_sets():
    """cc.evaluate on a classification set is evaluate_classification with the same arguments (options included)."""
    ps = make_set(models=True)
    cals = {"none": None, "T": ccal.TemperatureScaling()}
    ref = evaluate_classification(ps, cals, repeats=2, seed=3, n_bins=10, strategy="quantile")
    res = cc.evaluate(ps, cals, repeats=2, seed=3, n_bins=10, strategy="quantile")
    pd.testing.assert_frame_equal(res.long, ref.long)
    pd.testing.assert_frame_equal(res.summary, ref.summary)
