"""diagnose_classification: metric table with CIs and perfect-calibration values, by model and group,
reliability / per-class / positive-class tables, top-label-only and binary files, dispatch from cc.diagnose."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.report import METRIC_COLUMNS
from calib_core.data.classification import parse_classification_frame
from calib_core.diagnosis.classification import diagnose_classification
from calib_core.diagrams import classification as cd
from calib_core.metrics import classification as cm

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"


def _frame(n: int = 3000, k: int = 4, seed: int = 0, sharpen: float = 1.0) -> pd.DataFrame:
    """prob_* columns; labels drawn from softmax(sharpen·z): sharpen = 1 is perfectly calibrated."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2
    p = cm.softmax(z)
    y = cm.simulate_labels(cm.softmax(sharpen * z), rng)
    df = pd.DataFrame({f"prob_{j}": p[:, j] for j in range(k)})
    df.insert(0, "label", y)
    return df


def test_metric_table_values_cis_and_perfect_reference():
    df = _frame(sharpen=0.4)  # labels much noisier than the probabilities: over-confident
    ps = parse_classification_frame(df, "over.csv")
    rep = diagnose_classification(ps, n_resamples=100, n_simulations=30)
    assert rep.task == "classification" and list(rep.metrics.columns) == METRIC_COLUMNS
    t = rep.table()
    # the point metrics, plus the inference layer's primary / direction statistics
    assert set(t.index) == {"ece", "mce", "accuracy", "mean_confidence", "nll", "brier", "classwise_ece",
                            "top_bin_gap", "confidence_gap",
                            "smooth_ece", "calibration_ratio", "tce",  # statistics
                            # the clinical set (K > 2: means over the one-vs-rest classes, descriptive)
                            "calibration_in_the_large", "calibration_slope", "cox_intercept", "spiegelhalter_z",
                            "hosmer_lemeshow", "ici", "e50", "e90"}
    p, y = ps.probs, ps.labels
    assert t.loc["ece", "value"] == pytest.approx(cm.ece(y, p))
    assert t.loc["mce", "value"] == pytest.approx(cm.mce(y, p))
    assert t.loc["nll", "value"] == pytest.approx(cm.nll(y, p))
    assert t.loc["brier", "value"] == pytest.approx(cm.brier(y, p))
    assert t.loc["classwise_ece", "value"] == pytest.approx(cm.classwise_ece(y, p))
    no_interval = ["tce"]  # TCE has no N-free population value: no interval by design
    # K > 2: the clinical rows are means over the one-vs-rest classes, descriptive, with their intervals per class in
    # the "clinical_per_class" table
    no_interval += ["calibration_in_the_large", "calibration_slope", "cox_intercept", "spiegelhalter_z",
                    "hosmer_lemeshow", "ici", "e50", "e90"]
    assert t.loc[no_interval, ["ci_low", "ci_high"]].isna().all().all()
    t = t.drop(index=no_interval)
    assert (t["ci_low"] <= t["ci_high"]).all()
    inside = (t["ci_low"] <= t["value"] + 1e-12) & (t["value"] <= t["ci_high"] + 1e-12)
    assert (inside | (t["note"].str.len() > 0)).all(), t[~inside]  # outside only with a reason (biased plug-in)
    # a perfectly calibrated forecaster with these predictions has a small ECE; this one is far outside that range
    assert t.loc["ece", "value"] > t.loc["ece", "perfect_high"] > t.loc["ece", "perfect"] > 0
    assert t.loc["ece", "p_value"] < 0.01 and t.loc["ece", "family"] == "primary" and t.loc["ece", "flag"]
    assert t.loc["accuracy", "perfect"] == pytest.approx(t.loc["mean_confidence", "value"], abs=0.01)
    v = rep.verdict()
    assert v["verdict"] == "miscalibrated" and v["direction"] == "over-confident" and v["n_tests"] == 2
    # reproducible
    again = diagnose_classification(ps, n_resamples=100, n_simulations=30)
    pd.testing.assert_frame_equal(rep.metrics, again.metrics)


def test_calibrated_labels_fall_inside_the_perfect_range():
    ps = parse_classification_frame(_frame(n=4000, sharpen=1.0, seed=3), "cal.csv")
    rep = diagnose_classification(ps, n_resamples=0, n_simulations=1000)
    t = rep.table()
    assert np.isnan(t.loc["ece", "ci_low"])  # CIs switched off
    for m in ("ece", "nll", "brier"):
        assert t.loc[m, "perfect_low"] <= t.loc[m, "value"] <= t.loc[m, "perfect_high"], m
    assert t.loc["ece", "p_value"] > 0.05 and rep.verdict()["verdict"] == "calibrated"


def test_by_model_and_group_with_diagram_tables():
    a, b = _frame(n=1200, seed=1), _frame(n=900, seed=2, sharpen=0.5)
    a["model"], b["model"] = "net_a", "net_b"
    df = pd.concat([a, b], ignore_index=True)
    df["group"] = np.where(np.arange(len(df)) % 3 == 0, "night", "day")
    rep = cc.diagnose(parse_classification_frame(df, "two.csv"), n_resamples=20, n_simulations=5, binning="count")
    assert rep.models == ["net_a", "net_b"]
    assert set(rep.groups) == {cc.ALL, "night", "day"}
    assert rep.options["ignored_options"] == ["binning"]
    assert set(rep.diagrams) == {(m, g) for m in ("net_a", "net_b") for g in (cc.ALL, "night", "day")}
    sel = (df["model"] == "net_b") & (df["group"] == "night")
    y, p = df.loc[sel, "label"].to_numpy(), df.loc[sel, [f"prob_{j}" for j in range(4)]].to_numpy()
    assert rep.value("ece", "net_b", "night") == pytest.approx(cm.ece(y, p))
    d = rep.diagrams[("net_b", "night")]
    # K > 2: the loess calibration curve with its band (top label) and the clinical set per class (one-vs-rest)
    # join the diagram tables
    assert set(d) == {"reliability", "per_class", "smooth_reliability", "smoothed_calibration", "clinical_per_class"}
    assert list(d["reliability"].columns) == cd.RELIABILITY_COLUMNS
    assert d["reliability"]["count"].sum() == sel.sum()
    assert list(d["per_class"].columns[:2]) == ["class", "class_name"] and len(d["per_class"]) == 4 * 15
    filled = d["reliability"][d["reliability"]["count"] > 0]
    assert (filled["fraction"] * filled["gap"].abs()).sum() == pytest.approx(rep.value("ece", "net_b", "night"))


def test_binary_file_reports_both_semantics():
    rng = np.random.default_rng(4)
    p = rng.random(2000)
    y = (rng.random(2000) < p**1.5).astype(int)
    ps = cc.load_predictions(pd.DataFrame({"label": y, "prob": p}).to_csv(index=False).encode(), source="b.csv")
    rep = cc.diagnose(ps, n_resamples=20, n_simulations=10)
    t = rep.table()
    assert t.loc["ece_positive", "value"] == pytest.approx(cm.ece(y, p, target="positive"))
    assert t.loc["ece", "value"] == pytest.approx(cm.ece(y, p))
    d = rep.diagrams[("model", cc.ALL)]
    assert "positive class" in d["reliability_positive"].attrs["semantics"]
    assert "top-label" in d["reliability"].attrs["semantics"]
    assert any("binary file" in n for n in rep.options["notes"])


def test_top_label_only_file():
    rng = np.random.default_rng(5)
    conf = rng.uniform(0.3, 1.0, 3000)
    correct = rng.random(3000) < conf**2
    pred = rng.integers(0, 10, 3000)
    label = np.where(correct, pred, (pred + 1) % 10)
    text = pd.DataFrame({"true_label": label, "pred_label": pred, "confidence": conf}).to_csv(index=False)
    ps = cc.load_predictions(text.encode(), source="top.csv")
    rep = cc.diagnose(ps, n_resamples=30, n_simulations=20)
    t = rep.table()
    assert set(t.index) == {"ece", "mce", "accuracy", "mean_confidence", "top_bin_gap", "confidence_gap",
                            "smooth_ece", "calibration_ratio", "tce"}
    assert t.loc["ece", "value"] == pytest.approx(
        cm.ClassificationRows.from_top_label(conf, correct).statistics()["ece"]
    )
    assert t.loc["ece", "value"] > t.loc["ece", "perfect_high"]
    # + the loess calibration curve of the confidences (a top-label file's one event)
    assert set(rep.diagrams[("model", cc.ALL)]) == {"reliability", "smooth_reliability", "smoothed_calibration"}
    assert rep.options["top_label_only"] and any("top-label-only" in n for n in rep.options["notes"])


@pytest.mark.skipif(not (REAL / "netcal_cifar_probs").is_dir(), reason="real data folder missing")
def test_real_densenet_report():
    ps = cc.load_predictions(REAL / "netcal_cifar_probs" / "densenet-bc-100-cifar-100.npz")
    rep = cc.diagnose(ps, n_resamples=50, n_simulations=10)
    t = rep.table()
    assert t.loc["ece", "value"] == pytest.approx(0.14215, abs=5e-6)
    assert t.loc["ece", "ci_low"] > 0.12 and t.loc["ece", "perfect_high"] < 0.02
    assert len(rep.diagrams[("model", cc.ALL)]["per_class"]) == 100 * 15
