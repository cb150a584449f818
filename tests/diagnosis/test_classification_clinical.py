"""The clinical set in ``cc.diagnose``: rows of a binary file, the per-class table of a multi-class file, the
prevalence option (Bayes' rule on the odds, its notes and its errors), bad input (0/1 probabilities, one class,
separation) as notes never tracebacks, and the command line's ``--prevalence``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special

import calib_core as cc
from calib_core.base.predictions import InputError, PredictionSet
from calib_core.diagnosis.classification_clinical import PER_CLASS_TABLE
from calib_core.metrics.classification_clinical import adjust_prevalence, logistic_recalibration

KEYS = ["calibration_in_the_large", "calibration_slope", "cox_intercept", "spiegelhalter_z", "hosmer_lemeshow", "ici",
        "e50", "e90"]
FAST = dict(n_resamples=100, n_simulations=200, smooth=False, tce=False)


def _binary(n=600, seed=0, p=None, y=None):
    rng = np.random.default_rng(seed)
    if p is None:
        p = special.expit(rng.normal(-1, 1, n))
    if y is None:
        y = (rng.random(p.size) < p).astype(int)
    return PredictionSet("classification", labels=np.asarray(y), probs=np.column_stack([1 - p, p]),
                         classes=["0", "1"])


def _rows(report):
    m = report.metrics
    return m[m.metric.isin(KEYS)].set_index("metric")


def test_binary_report_has_the_clinical_rows_with_intervals_and_tests():
    rep = cc.diagnose(_binary(), **FAST)
    rows = _rows(rep)
    assert list(rows.index) == [k for k in rep.metrics.metric if k in KEYS] and set(rows.index) == set(KEYS)
    for key in ("calibration_in_the_large", "calibration_slope", "spiegelhalter_z", "hosmer_lemeshow", "ici"):
        assert rows.loc[key, "family"] == "secondary" and np.isfinite(rows.loc[key, "p_value"])
    # Z and HL are test statistics with no N-free population value: a p-value and no interval (as TCE)
    for key in KEYS:
        has_interval = key not in ("spiegelhalter_z", "hosmer_lemeshow")
        assert np.isfinite(rows.loc[key, "ci_low"]) == has_interval, key
        assert np.isfinite(rows.loc[key, "ci_high"]) == has_interval, key
    assert rep.options["prevalence"] is None and rep.options["prevalence_adjustment"] == "none"


def test_multiclass_report_has_means_and_a_per_class_table():
    rng = np.random.default_rng(1)
    probs = rng.dirichlet([2, 2, 2], 500)
    labels = np.array([rng.choice(3, p=q) for q in probs])
    rep = cc.diagnose(PredictionSet("classification", labels=labels, probs=probs, classes=["a", "b", "c"]), **FAST)
    rows = _rows(rep)
    assert set(rows.index) == set(KEYS) and (rows["kind"] == "descriptive").all()
    assert rows["p_value"].isna().all()
    table = next(iter(rep.diagrams.values()))[PER_CLASS_TABLE]
    assert sorted(table["class"].unique()) == [0, 1, 2] and set(table["metric"]) == set(KEYS)
    slope = table[table.metric == "calibration_slope"]
    assert np.isclose(slope["value"].mean(), rows.loc["calibration_slope", "value"])
    assert "descriptive" in table.attrs["semantics"]
    tests = table[table.metric.isin(["spiegelhalter_z", "hosmer_lemeshow"])]  # test statistics: p-values only
    assert tests["ci_low"].isna().all() and tests["ci_high"].isna().all() and tests["p_value"].notna().all()
    probs[:5, 0] = 0.0
    probs[:5] /= probs[:5].sum(axis=1, keepdims=True)
    rep = cc.diagnose(PredictionSet("classification", labels=labels, probs=probs, classes=["a", "b", "c"]), **FAST)
    clip_notes = [note for note in rep.options["notes"] if "clipped" in note]
    assert len(clip_notes) == 1 and "class 0: 5" in clip_notes[0]


def test_prevalence_option_re_expresses_the_probabilities():
    rng = np.random.default_rng(4)
    n = 4000
    y = (rng.random(n) < 0.5).astype(int)
    score = rng.normal(np.where(y == 1, 1.0, -1.0), 1.0)
    p_pop = adjust_prevalence(special.expit(2 * score), from_prevalence=0.5, to_prevalence=0.1)  # made for 10 %
    pset = _binary(p=p_pop, y=y)
    plain = _rows(cc.diagnose(pset, **FAST))
    adjusted_report = cc.diagnose(pset, prevalence=0.1, **FAST)
    adjusted = _rows(adjusted_report)
    assert plain.loc["calibration_in_the_large", "p_value"] < 1e-6  # read at the file's 50 %: far off
    fit = logistic_recalibration(adjust_prevalence(p_pop, from_prevalence=0.1, to_prevalence=y.mean()), y)
    assert adjusted.loc["calibration_slope", "value"] == pytest.approx(fit.slope)
    assert abs(adjusted.loc["calibration_in_the_large", "value"]) < 0.15
    assert adjusted_report.options["prevalence"] == 0.1
    assert "Bayes' rule on the odds" in adjusted_report.options["prevalence_adjustment"]
    assert any("prevalence adjustment" in note for note in adjusted_report.options["notes"])


@pytest.mark.parametrize("bad", [0.0, 1.0, -1, "x"])
def test_prevalence_out_of_range_is_an_input_error(bad):
    with pytest.raises(InputError, match="prevalence"):
        cc.diagnose(_binary(), prevalence=bad, **FAST)


def test_prevalence_needs_a_binary_file_with_both_classes():
    rng = np.random.default_rng(1)
    probs = rng.dirichlet([2, 2, 2], 60)
    with pytest.raises(InputError, match="binary"):
        cc.diagnose(PredictionSet("classification", labels=np.zeros(60, int), probs=probs, classes=["a", "b", "c"]),
                    prevalence=0.2, **FAST)
    with pytest.raises(InputError, match="only positive|no positive"):
        cc.diagnose(_binary(p=np.linspace(0.1, 0.9, 30), y=np.zeros(30, int)), prevalence=0.2, **FAST)


def test_zero_and_one_probabilities_are_clipped_and_counted():
    rng = np.random.default_rng(2)
    p = special.expit(rng.normal(-1, 1.5, 500))
    p[:7] = 0.0
    p[7:9] = 1.0
    y = (rng.random(500) < np.clip(p, 0.02, 0.98)).astype(int)
    rep = cc.diagnose(_binary(p=p, y=y), **FAST)
    assert any("9 probabilities of 0 or 1" in note for note in rep.options["notes"])
    assert np.isfinite(_rows(rep).loc["calibration_slope", "value"])


def test_one_class_gives_nan_and_a_note_never_a_traceback():
    p = np.linspace(0.05, 0.6, 80)
    rep = cc.diagnose(_binary(p=p, y=np.zeros(80, int)), **FAST)
    rows = _rows(rep)
    assert rows["value"].isna().all()
    assert any("one class only" in note for note in rep.options["notes"])


def test_perfect_separation_reports_firths_estimate_with_a_note():
    p = np.linspace(0.02, 0.98, 120)
    rep = cc.diagnose(_binary(p=p, y=(p > 0.5).astype(int)), **FAST)
    slope = _rows(rep).loc["calibration_slope"]
    assert np.isfinite(slope["value"]) and np.isnan(slope["ci_low"])
    assert any("perfect separation" in note and "Firth" in note for note in rep.options["notes"])


def test_command_line_prevalence(tmp_path, capsys):
    from calib_core.cli import main
    rng = np.random.default_rng(0)
    p = special.expit(rng.normal(-1, 1, 300))
    frame = pd.DataFrame({"label": (rng.random(300) < p).astype(int), "prob_0": 1 - p, "prob_1": p})
    path = tmp_path / "risk.csv"
    frame.to_csv(path, index=False)
    csv = tmp_path / "m.csv"
    code = main(["report", str(path), "--out", str(tmp_path / "r.html"), "--resamples", "50", "--simulations", "100",
                 "--prevalence", "0.2", "--metrics-csv", str(csv)])
    assert code == 0
    assert "prevalence adjustment" in capsys.readouterr().out
    assert {"calibration_slope", "ici", "hosmer_lemeshow"} <= set(pd.read_csv(csv)["metric"])
    code = main(["report", str(path), "--out", str(tmp_path / "r2.html"), "--prevalence", "2"])
    assert code != 0
    assert "--prevalence" in capsys.readouterr().err
