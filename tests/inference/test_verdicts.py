"""Known answers of the headline verdicts through ``cc.diagnose``.

* Levi et al.'s §4.1 "true sigma" forecaster is calibrated by construction: its headline is "calibrated"
  (a few seeds here; 100 seeds in the slow test, at least 95 of them, since the headline's family-wise error is 5%);
* the ECMWF rain ensemble (Frankfurt), the over-confident diabetes example and DenseNet-BC-100 on CIFAR-100 are
  "miscalibrated", with the direction named;
* DenseNet-BC-100 after temperature scaling on a random calibration half: the test half's verdict is reported
  with its p-value (whatever it is).

The real sets are read in place from ../shared/data/real (skipped when absent).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.calibrators import classification as ccal
from calib_core.data import examples

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"real data folder {REAL} not found")
TRUE_SIGMA = "true sigma"


def _levi_verdict(seed: int) -> dict:
    pset = examples.levi_synthetic(seed=seed)
    report = cc.diagnose(pset.take(pset.model == TRUE_SIGMA), seed=seed, diagrams=False, by_group=False)
    return report.verdict(TRUE_SIGMA)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_levi_true_sigma_is_calibrated(seed):
    v = _levi_verdict(seed)
    assert v["verdict"] == "calibrated", v["sentence"]
    assert v["sentence"].startswith("No evidence of miscalibration")
    assert v["p_value"] > 0.05 and v["n_tests"] == 5


def test_levi_random_sigma_is_miscalibrated_under_confident():
    pset = examples.levi_synthetic(seed=0)
    report = cc.diagnose(pset, diagrams=False)
    v = report.verdict("random sigma")
    assert v["verdict"] == "miscalibrated" and "under-confident" in v["direction"], v
    assert v["p_value"] < 1e-6


@pytest.mark.slow
def test_levi_true_sigma_calibrated_on_95_of_100_seeds():
    verdicts = [_levi_verdict(seed)["verdict"] for seed in range(100)]
    assert verdicts.count("calibrated") >= 95, verdicts.count("calibrated")


def test_diabetes_example_is_over_confident():
    report = cc.diagnose(examples.diabetes_example("gaussian"), diagrams=False)
    v = report.verdict()
    print(v["sentence"])
    assert v["verdict"] == "miscalibrated" and "over-confident" in v["direction"], v


@needs_real
def test_ecmwf_rain_ensemble_is_miscalibrated_with_a_direction():
    pset = cc.load_predictions(REAL / "weather_ecmwf_ens_precip_frankfurt" / "rain_frankfurt_mm.csv")
    report = cc.diagnose(pset, diagrams=False)
    v = report.verdict()
    print(v["sentence"])
    assert v["verdict"] == "miscalibrated", v
    assert v["direction"] and v["direction"] != "mis-shaped", v
    assert v["p_value"] < 1e-3


def _densenet() -> tuple[np.ndarray, np.ndarray]:
    with np.load(REAL / "netcal_cifar_probs" / "densenet-bc-100-cifar-100.npz", allow_pickle=False) as d:
        return d["probs"].astype(float), d["labels"].astype(int)


def _classification_set(probs, labels) -> cc.PredictionSet:
    return cc.PredictionSet(task="classification", layout="probs", labels=labels, probs=probs,
                            source="densenet-bc-100-cifar-100.npz")


@needs_real
def test_densenet_cifar100_is_over_confident_and_temperature_scaling_verdict_is_reported():
    probs, labels = _densenet()
    report = cc.diagnose(_classification_set(probs, labels), diagrams=False)
    v = report.verdict()
    print("uncalibrated:", v["sentence"])
    assert v["verdict"] == "miscalibrated" and v["direction"] == "over-confident", v
    assert v["p_value"] < 1e-6
    # temperature scaling fitted on a random calibration half, judged on the other half
    perm = np.random.default_rng(0).permutation(labels.size)
    cal, test = perm[: labels.size // 2], perm[labels.size // 2:]
    ts = ccal.TemperatureScaling(input="probs").fit(probs[cal], labels[cal])
    after = cc.diagnose(_classification_set(ts.predict_proba(probs[test]), labels[test]), diagrams=False)
    w = after.verdict()
    print(f"after temperature scaling (T = {ts.temperature_:.3f}), test half: {w['verdict']}, "
          f"p = {w['p_value']:.3g}: {w['sentence']}")
    assert w["verdict"] in ("calibrated", "miscalibrated") and 0 < w["p_value"] <= 1
    assert after.value("ece") < report.value("ece") / 3


def test_regression_metric_kinds_agree_with_the_registry():
    from calib_core.calibrators import registry
    from calib_core.inference import regression as inference

    assert (inference.CALIBRATION_STATISTIC, inference.PROPER_SCORE, inference.DESCRIPTIVE) == registry.KINDS
    for m in registry.metrics("regression"):
        assert inference.metric_kind(m.key) == m.kind, m.key
    report = cc.diagnose(examples.levi_synthetic(n=400), diagrams=False, n_resamples=50, n_simulations=100)
    for key, kind in zip(report.metrics["metric"], report.metrics["kind"]):
        assert kind == registry.metric(key, "regression").kind, key


def test_warm_up_builds_the_n_only_null_tables_the_first_diagnosis_reads():
    """regression.inference.warm_up (run by the dashboard at server start) fills the cache that a diagnosis above
    2,000 rows reads: after it, diagnosing 5,000 rows builds no new N-only table."""
    from calib_core.inference import regression_nulls as ri

    ri._built_n_only_table.cache_clear()
    ri.warm_up()
    built = ri._built_n_only_table.cache_info().currsize
    assert built == 2
    cc.diagnose(examples.levi_synthetic(n=2_500), by_group=False, n_resamples=50, n_simulations=200)
    info = ri._built_n_only_table.cache_info()
    assert info.currsize == built and info.hits >= 1


def test_a_diagnosis_during_the_warm_up_waits_for_its_tables_instead_of_building_them_again():
    """The first diagnosis can start while the server-start thread is still building the N-only tables: it waits
    for them (one lock), so each table is built once (two cache misses in all) and the numbers are the same."""
    import threading

    from calib_core.inference import regression_nulls as ri

    pset = examples.levi_synthetic(n=2_500)
    opts = {"by_group": False, "n_resamples": 50, "n_simulations": 200, "diagrams": False}
    ri._built_n_only_table.cache_clear()
    thread = threading.Thread(target=ri.warm_up)
    thread.start()
    during = cc.diagnose(pset, **opts)
    thread.join()
    info = ri._built_n_only_table.cache_info()
    assert info.misses == 2 and info.currsize == 2
    after = cc.diagnose(pset, **opts)
    pd.testing.assert_frame_equal(during.metrics, after.metrics)
