"""The Compare models page's view-model: what it can compare, its option decisions and its table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calib_core.base.predictions import PredictionSet
from calib_core.base.regression import Gaussian
from tests.compare_fake import fake_comparison
from tests.hub_synthetic import synthetic_hub
from views import compare as cv


def _gaussian(models=("a", "b")) -> PredictionSet:
    n = 4 * len(models)
    return PredictionSet(task="regression", layout="gaussian", y=np.zeros(n),
                         dist=Gaussian(np.zeros(n), np.ones(n)), model=np.repeat(np.array(models), 4))


def test_default_baseline_is_a_model_named_like_one_else_the_first():
    assert cv.default_baseline(["UMass-ar", "UMass-gbq", "simple_hub-baseline"]) == "simple_hub-baseline"
    assert cv.default_baseline(["x", "FluSight-baseline"]) == "FluSight-baseline"
    assert cv.default_baseline(["x", "seasonal_naive", "baseline"]) == "seasonal_naive"  # the first match
    assert cv.default_baseline(["team1-calibrated", "team2-narrow"]) == "team1-calibrated"
    assert cv.default_baseline(["baselines-are-not", "naiveish"]) == "baselines-are-not"  # whole words only


def test_score_choices_follow_the_layout():
    assert cv.score_choices(synthetic_hub(n_locations=2, n_dates=2)) == ["wis"]
    assert cv.score_choices(_gaussian()) == ["crps", "log"]
    probs = PredictionSet(task="classification", labels=np.array([0, 1]), probs=np.array([[0.5, 0.5], [0.2, 0.8]]))
    assert cv.score_choices(probs) == ["brier", "log"]
    point = PredictionSet(task="regression", y=np.zeros(2), point=np.zeros(2), model=np.array(["a", "b"]))
    assert cv.score_choices(point) == []
    assert [cv.score_label(s) for s in ("wis", "crps", "log", "brier")] == ["WIS", "CRPS", "log score",
                                                                              "Brier score"]


def test_empty_state_says_why_and_how():
    assert "No data loaded" in cv.empty_state(None) and "Data" in cv.empty_state(None)
    one = _gaussian(("only",))
    assert "one model" in cv.empty_state(one)
    assert "one model" in cv.empty_state(PredictionSet(task="regression", y=np.zeros(2),
                                                       dist=Gaussian(np.zeros(2), np.ones(2))))
    point = PredictionSet(task="regression", y=np.zeros(2), point=np.zeros(2), model=np.array(["a", "b"]))
    assert "point predictions" in cv.empty_state(point)
    assert cv.empty_state(_gaussian()) is None
    assert cv.empty_state(synthetic_hub(n_locations=2, n_dates=2)) is None


def test_resample_choices_auto_means_the_reference_date():
    hub = synthetic_hub(n_locations=2, n_dates=2)
    choices = cv.cluster_choices(hub)
    assert choices[:2] == ["auto", "none"]
    assert {"reference_date", "location", "horizon", "target_end_date"} <= set(choices)
    assert "model" not in choices and len(choices) == len(set(choices))
    assert cv.auto_cluster_column(hub) == "reference_date"
    assert cv.cluster_label("auto", hub) == "auto (reference_date)"
    assert cv.cluster_label("none", hub) == "independent rows"
    assert cv.cluster_label("location", hub) == "location"
    plain = _gaussian()
    assert cv.cluster_choices(plain) == ["auto", "none"]
    assert cv.cluster_label("auto", plain) == "auto (independent rows)"
    timed = _gaussian()
    timed.time = np.arange(8)
    assert cv.cluster_choices(timed) == ["auto", "none", "time"]
    assert [cv.block_label(b) for b in cv.BLOCK_CHOICES][:3] == ["whole clusters", "moving blocks (automatic length)",
                                                                "moving blocks of 2"]
    assert [cv.block_value(b) for b in cv.BLOCK_CHOICES] == [None, "auto", 2, 4, 8]


def test_display_table_formats_and_sorts_by_relative_score():
    comp = fake_comparison()
    t = cv.display_table(comp)
    assert t["model"].tolist() == ["good", "same", "base", "bad"]
    assert t["relative WIS"].tolist() == ["0.800", "0.970", "1.00", "1.30"]
    assert t["95% interval"].tolist() == ["0.720–0.880", "0.873–1.07", "–", "1.17–1.43"]
    assert t["p (Holm)"].tolist() == ["0.003", "0.6", "–", "0.01"]
    assert t["vs baseline"].tolist() == ["better", "not distinguishable", "baseline", "worse"]
    assert t["in MCS"].tolist() == ["yes", "yes", "yes", "no"]
    assert t["units"].tolist() == [96] * 4
    np.testing.assert_allclose(t["mean WIS"], [8, 9.7, 10, 13])
    assert cv.model_order(comp) == ["good", "same", "base", "bad"]


def test_a_tiny_p_value_and_other_scores():
    comp = fake_comparison(models=("a", "b"), relative=(1.0, 0.5), p_holm=(np.nan, 1e-7), score="crps")
    t = cv.display_table(comp)
    assert t.loc[t["model"] == "b", "p (Holm)"].item() == "< 1e-4"
    assert "relative CRPS" in t.columns and "mean CRPS" in t.columns


def test_without_relative_scores_the_models_are_ordered_by_mean_score():
    comp = fake_comparison(models=("a", "b", "c"), relative=(1.0, 0.5, 2.0), p_holm=(np.nan, 0.01, 0.01), score="log")
    comp.table["mean_score"] = [-0.9, -1.5, -0.2]  # log scores below zero: no ratios
    comp.table[["relative_score", "relative_lo", "relative_hi"]] = np.nan
    assert not cv.has_relative_scores(comp)
    assert cv.model_order(comp) == ["b", "a", "c"]
    t = cv.display_table(comp)
    assert t["model"].tolist() == ["b", "a", "c"] and set(t["relative log score"]) == {"–"}
    assert t["vs baseline"].tolist() == ["better", "baseline", "worse"]  # the sign of the tested difference
    assert cv.has_relative_scores(fake_comparison())


def test_sentences_and_notes_come_from_the_core():
    comp = fake_comparison()
    assert cv.sentences(comp) == comp.sentences
    by_model = type(comp)(comp.table, comp.pairwise, comp.baseline, sentences={"bad": "B.", "good": "G."})
    assert cv.sentences(by_model) == ["G.", "B."]  # in the table's order, best first
    assert cv.notes(comp) == ["3 forecast units not forecast by every model were left out."]


def test_download_table_states_baseline_score_level_and_resampling():
    comp = fake_comparison()
    d = cv.download_table(comp)
    assert {"model", "relative_score", "p_holm", "in_mcs", "verdict", "baseline", "score", "alpha",
            "resampled"} <= set(d.columns)
    assert set(d["baseline"]) == {"base"} and set(d["alpha"]) == {0.05}
    assert set(d["resampled"]) == {"whole reference_date clusters resampled (12 clusters)"}


def test_download_csv_neutralises_formulas_in_model_names():
    from calib_core.data.writing import to_csv_bytes

    comp = fake_comparison(models=("=HYPERLINK(\"x\")", "b"), relative=(1.0, 0.9), p_holm=(np.nan, 0.2))
    text = to_csv_bytes(cv.download_table(comp)).decode()
    assert "'=HYPERLINK" in text


@pytest.mark.parametrize("task, page, key", [("regression", "pages/regression.py", "reg_models"),
                                             ("classification", "pages/classification.py", "cls_models")])
def test_a_model_opens_on_its_diagnosis_page(task, page, key):
    pset = PredictionSet(task=task)
    assert cv.diagnosis_page(pset) == (page, key)


def test_views_do_not_mutate_the_comparison():
    comp = fake_comparison()
    before = comp.table.copy()
    cv.display_table(comp)
    cv.download_table(comp)
    pd.testing.assert_frame_equal(comp.table, before)
