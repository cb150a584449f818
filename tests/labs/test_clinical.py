"""The clinical lab's claims on seeded simulations (patients drawn from the TRUE risk model), and its sentences
computed from the numbers (they change when the numbers do)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from calib_core.labs.clinical import HL_MARKED, METHODS, SCENARIOS, run_clinical

DEV, OVER, MOVED = SCENARIOS


@pytest.fixture(scope="module")
def result():
    return run_clinical(n_resamples=50)


@pytest.mark.slow
def test_two_stories_slope_for_overfitting_intercept_for_transport():
    """Over 5 seeds (fresh patients each): the model over-fitted on 100 patients (≈ 3 events per predictor) has a
    slope well below 1 with a calibration-in-the-large near 0 (measured over 12 seeds: slopes 0.44–0.78, CITL
    −0.55…+0.12); the transported one is off by about the shift on average and keeps slope ≈ 1 and its AUC (the
    whole-population slope is drawn from the TRUE model; the validation patients too)."""
    runs = [run_clinical(seed=seed, n_dev=2000, shift=1.0, n_resamples=0) for seed in range(5)]
    slopes = np.array([r.value(OVER, "calibration_slope") for r in runs])
    citl = np.array([r.value(OVER, "calibration_in_the_large") for r in runs])
    assert np.median(slopes) < 0.8 and slopes.max() < 1.0
    assert np.median(np.abs(citl)) < 0.3
    for r in runs:
        assert 0.7 < r.value(MOVED, "calibration_in_the_large") < 1.3
        # slopes of 2,000 new patients scatter by about ±0.1 around the development model's own (measured 0.78–1.23
        # over these seeds; the true model itself gets 1.10 on seed 0's new hospital)
        assert abs(r.value(MOVED, "calibration_slope") - 1) < 0.3
        assert abs(r.value(MOVED, "auc") - r.value(DEV, "auc")) < 0.04
        # the development model on new patients of its own population: calibrated within noise
        assert abs(r.value(DEV, "calibration_in_the_large")) < 0.25 and abs(r.value(DEV, "calibration_slope") - 1) < 0.3
    slopes_moved = np.array([r.value(MOVED, "calibration_slope") for r in runs])
    assert abs(np.median(slopes_moved) - 1) < 0.15 and np.median(slopes) < np.median(slopes_moved) - 0.2


def test_two_stories_on_the_default_seed(result):
    assert result.value(OVER, "calibration_slope") < 0.8 < result.value(MOVED, "calibration_slope")
    assert abs(result.value(OVER, "calibration_in_the_large")) < 0.1 < result.value(MOVED, "calibration_in_the_large")


def test_shift_sign_sets_the_direction():
    r = run_clinical(seed=0, shift=-1.5, n_resamples=0)
    assert r.value(MOVED, "calibration_in_the_large") < -1.0
    assert r.value(MOVED, "observed_rate") < r.value(MOVED, "mean_predicted")
    assert "over-estimates the average risk" in r.story_findings()[1]


def test_hosmer_lemeshow_for_every_number_of_groups(result):
    t = result.hosmer_lemeshow
    assert set(t["groups"]) == set(range(3, 31)) and set(t["model"]) == set(SCENARIOS)
    assert ((t["p_value"] >= 0) & (t["p_value"] <= 1)).all()
    dev = t[t["model"] == DEV]
    assert dev["p_value"].max() - dev["p_value"].min() > 0.1  # same predictions, p moves with g alone
    wide = result.hl_table()
    assert list(wide["model"]) == list(SCENARIOS)
    for g in HL_MARKED:
        assert wide.loc[0, f"p (g = {g})"] == pytest.approx(result.hl_p(DEV, g))


def test_recalibration_judged_on_held_out_patients(result):
    rec = result.recalibration
    assert set(rec["method"]) == set(METHODS) and set(rec["model"]) == {OVER, MOVED}
    for model in (OVER, MOVED):
        before = result.value(model, "calibration_slope", "before")
        # a shift of every logit leaves the two-parameter fit's slope where it was
        assert result.value(model, "calibration_slope", "intercept update") == pytest.approx(before, abs=1e-6)
        # logistic recalibration with b > 0 keeps the ranking: the AUC is the same number
        assert result.value(model, "auc", "logistic recalibration") == pytest.approx(
            result.value(model, "auc", "before"), abs=1e-12)
    # the transported model: an intercept update fixes its average
    assert abs(result.value(MOVED, "calibration_in_the_large", "intercept update")) < 0.2
    assert abs(result.value(MOVED, "calibration_in_the_large", "before")) > 0.7
    # the over-fitted model: only a slope can make its predictions less extreme
    assert result.value(OVER, "ici", "logistic recalibration") < result.value(OVER, "ici", "before")
    assert result.sizes["n_cal"] + result.sizes["n_test"] == result.sizes["n_val"]


def _with(result, model, **values):
    m = result.metrics.copy()
    for key, v in values.items():
        m.loc[m["model"] == model, key] = v
    return dataclasses.replace(result, metrics=m)


def test_story_sentences_follow_the_numbers(result):
    base = result.story_findings()
    assert "0.46" in base[0] or f"{result.value(OVER, 'calibration_slope'):.2f}" in base[0]
    assert "below 1" in base[0] and "different stories" in base[2]
    moderate = _with(result, OVER, calibration_slope=1.3).story_findings()
    assert "above 1" in moderate[0] and "1.30" in moderate[0] and "off in slope (1.30)" in moderate[2]
    shifted = _with(result, OVER, calibration_in_the_large=-0.6).story_findings()
    assert "over-estimates the average risk" in shifted[0] and "-0.60" in shifted[0] and "not clean" in shifted[2]
    lost = _with(result, MOVED, auc=result.value(DEV, "auc") - 0.1).story_findings()
    assert "discrimination changes too" in lost[1]


def test_hosmer_lemeshow_sentences_follow_the_numbers(result):
    t = result.hosmer_lemeshow.copy()
    pick = (t["model"] == DEV) & t["groups"].isin(HL_MARKED)
    t.loc[pick, "p_value"] = [0.01, 0.2, 0.3]
    flips = dataclasses.replace(result, hosmer_lemeshow=t).hl_findings()[0]
    assert "flips with the number of groups" in flips and "p = 0.01 with g = 5" in flips
    t.loc[t["model"] == DEV, "p_value"] = 0.5
    same = dataclasses.replace(result, hosmer_lemeshow=t).hl_findings()[0]
    assert "does not reject at every g" in same
    assert "too large for the grouping to matter" in result.hl_findings()[2]


def test_recalibration_sentences_follow_the_numbers(result):
    text = " ".join(result.recalibration_findings(MOVED))
    a0 = result.value(MOVED, "calibration_in_the_large", "before")
    assert f"{a0:+.2f} →" in text and "the slope stays" in text
    rec = result.recalibration.copy()
    rec.loc[(rec["model"] == MOVED) & (rec["method"] == "isotonic"), "ici"] = 0.0001
    best = dataclasses.replace(result, recalibration=rec).recalibration_findings(MOVED)[-1]
    assert best.startswith("Lowest held-out ICI: isotonic (0.000)")
    assert len(result.findings()) == 3 + 3 + 2 * 5


def test_figures_are_built_from_the_tables(result):
    figs = result.figures()
    assert set(figs) == {"overfit", "transport", "hl", f"recalibrated {OVER}", f"recalibrated {MOVED}"}
    curves = [d for d in figs["overfit"].data if (d.meta or {}).get("role") == "curve"]
    np.testing.assert_allclose(curves[1].y, result.curves[OVER]["observed"])
    marked = [d for d in figs["hl"].data if (d.meta or {}).get("role") == "marked"]
    assert [list(d.x) for d in marked] == [list(HL_MARKED)] * 3
    assert "+1.0" in figs["transport"].layout.title.text


def test_too_small_a_sample_is_said():
    with pytest.raises(ValueError, match="only non-events"):
        run_clinical(n_small=1, seed=0, n_resamples=0)
