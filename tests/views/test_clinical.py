"""The Classification page's clinical parts without Streamlit: the smoothed curve's table and caption, the prevalence
control's option and statement."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logit

import calib_core as cc
from calib_core.data import examples
from views import clinical as vc


@pytest.fixture(scope="module")
def cancer():
    return examples.breast_cancer_example()


def test_smoothed_table_and_caption(cancer):
    report = cc.diagnose(cancer, n_resamples=30, n_simulations=0)
    tables = report.diagrams[(report.models[0], cc.ALL)]
    assert vc.smoothed_table_name(tables) == "smoothed_calibration_positive"
    assert vc.smoothed_table_name({"smoothed_calibration": 1}) == "smoothed_calibration"
    assert vc.smoothed_table_name({}) is None
    table = tables["smoothed_calibration_positive"]
    caption = vc.smoothed_caption(table, "positive")
    assert "span 0.75" in caption and "95% pointwise percentile band, 30 bootstrap replicates" in caption
    assert "positive class, as clinical papers do" not in caption
    assert "as clinical papers do" in vc.smoothed_caption(table, "top_label")
    bare = cc.diagnose(cancer, n_resamples=0, n_simulations=0).diagrams[(report.models[0], cc.ALL)]
    assert "no band" in vc.smoothed_caption(bare["smoothed_calibration_positive"], "positive")


def test_prevalence_option_and_statement(cancer):
    share = vc.file_prevalence(cancer)
    assert share == pytest.approx(np.mean(cancer.labels == 1))
    assert vc.file_prevalence(examples.digits_example()) is None  # not binary: no control
    assert vc.prevalence_options(False, 0.1) == {} and vc.prevalence_options(True, 1.0) == {}
    assert vc.prevalence_options(True, 0.1) == {"prevalence": 0.1}
    text = vc.prevalence_statement(0.1, share)
    shift = logit(share) - logit(0.1)
    assert f"{shift:+.3f}" in text and f"{100 * expit(shift):.3g}%" in text and "10%" in text
    assert vc.prevalence_statement(0.2, share) != text  # the numbers make the sentence
    assert vc.prevalence_statement(None, share) is None
    # the diagnosis reads the same shift: a prediction of p becomes expit(logit p + shift)
    report = cc.diagnose(cancer, n_resamples=0, n_simulations=0, prevalence=0.1)
    assert report.options["prevalence"] == 0.1


def test_help_names_every_clinical_metric_and_the_groups_problem():
    for words in ("Calibration-in-the-large", "Calibration slope", "Spiegelhalter", "Hosmer–Lemeshow",
                  "depends on the number of groups", "ICI, E50, E90", "Austin & Steyerberg 2019",
                  "Van Calster et al. (2016", "Steyerberg 2019", "Hosmer & Lemeshow 1980", "Cleveland 1979",
                  "Zadrozny & Elkan 2002", "Saerens"):
        assert words in vc.CLINICAL_HELP, words
