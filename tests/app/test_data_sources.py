"""The data the dashboard offers without an upload: template files (calib_core.data.templates) and the built-in
classification examples (calib_core.data.examples.digits_example / breast_cancer_example)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.calibrators.classification import TemperatureScaling
from calib_core.data import examples, templates
from calib_core.metrics import classification as cm


# ------------------------------------------------------------------------------------------- templates
@pytest.mark.parametrize("name", list(templates.TEMPLATES))
def test_every_template_loads_into_its_layout(name):
    t = templates.TEMPLATES[name]
    data = templates.template_csv(name)
    assert data.decode("utf-8").splitlines()[0].startswith(("y,", "label,"))
    pset = cc.load_predictions(data, source=t.file_name)
    assert (pset.task, pset.layout) == (t.task, t.layout)
    assert pset.n_rows == pset.n_read == 40 and pset.dropped.total == 0
    assert set(pset.split) == {"cal", "test"}
    report = cc.diagnose(pset, n_resamples=0, n_simulations=0)
    assert not report.metrics.empty and np.isfinite(report.metrics["value"]).any()


def test_templates_are_seeded_and_sized():
    a = templates.template_frame("samples", n_rows=12, seed=3)
    pd.testing.assert_frame_equal(a, templates.template_frame("samples", n_rows=12, seed=3))
    assert len(a) == 12 and not a.equals(templates.template_frame("samples", n_rows=12, seed=4))
    assert templates.template_names("classification") == ["probs", "logits", "binary_prob", "binary_logit",
                                                          "top_label"]
    with pytest.raises(KeyError, match="unknown template"):
        templates.template_frame("nope")
    with pytest.raises(ValueError):
        templates.template_frame("probs", n_rows=2)


def test_templates_are_calibrated_by_construction():
    """Large template draws come from the stated model, so they diagnose as calibrated (a sanity anchor)."""
    reg = cc.load_predictions(templates.template_frame("gaussian_std", n_rows=20_000).to_csv(index=False).encode())
    r = cc.diagnose(reg, n_resamples=0, n_simulations=0)
    assert abs(r.value("z_std") - 1) < 0.03 and r.value("ence") < 0.05
    cls = cc.load_predictions(templates.template_frame("probs", n_rows=20_000).to_csv(index=False).encode())
    assert cc.diagnose(cls, n_resamples=0, n_simulations=0).value("ece") < 0.02
    multi = cc.load_predictions(templates.template_csv("multi_model", n_rows=4000))
    m = cc.diagnose(multi, n_resamples=0, n_simulations=0)
    assert m.value("z_std", "over-confident") == pytest.approx(2 * m.value("z_std", "calibrated"), rel=0.05)
    assert set(multi.group) == {"small x", "large x"}


# ------------------------------------------------------------------------------------------- examples
@pytest.fixture(scope="module")
def digits() -> cc.PredictionSet:
    return examples.digits_example()


def test_digits_example_structure(digits):
    assert digits.task == "classification" and digits.layout == "logits"
    assert digits.n_rows == digits.n_read == 1797 - 500
    assert digits.classes == [str(k) for k in range(10)] and set(np.unique(digits.labels)) == set(range(10))
    np.testing.assert_allclose(digits.probs, cm.softmax(digits.logits))
    assert set(digits.split) == {"cal", "test"} and abs((digits.split == "cal").mean() - 0.5) < 0.01
    again = examples.digits_example()
    np.testing.assert_array_equal(again.logits, digits.logits)  # seeded: bit-identical


def test_digits_example_is_over_confident_and_temperature_fixes_it(digits):
    r = cc.diagnose(digits, n_resamples=50, n_simulations=20, seed=0)
    t = r.table()
    assert t.loc["accuracy", "value"] > 0.9
    assert t.loc["mean_confidence", "value"] > t.loc["accuracy", "value"] + 0.03
    assert t.loc["ece", "value"] > t.loc["ece", "perfect_high"]  # beyond noise
    cal, test = digits.split == "cal", digits.split == "test"
    ts = TemperatureScaling().fit(digits.logits[cal], digits.labels[cal])
    assert ts.temperature_ > 2
    before = cm.ece(digits.labels[test], digits.probs[test])
    after = cm.ece(digits.labels[test], ts.predict_proba(digits.logits[test]))
    assert after < 0.6 * before


def test_breast_cancer_example_is_binary_with_a_named_positive_class():
    b = examples.breast_cancer_example()
    assert b.layout == "binary_logit" and b.classes == ["benign", "malignant"]
    np.testing.assert_array_equal(b.logits[:, 0], 0.0)
    assert 0.25 < b.labels.mean() < 0.5  # 212 of 569 tumours are malignant
    r = cc.diagnose(b, n_resamples=0, n_simulations=0)
    assert {"ece_positive", "mce_positive"} <= set(r.metrics["metric"])
    assert r.value("accuracy") > 0.9 and r.value("mean_confidence") > r.value("accuracy")


@pytest.mark.parametrize("make_frame, make_set", [
    (examples.digits_frame, examples.digits_example),
    (examples.breast_cancer_frame, examples.breast_cancer_example),
])
def test_example_frames_round_trip_through_the_loader(make_frame, make_set):
    frame = make_frame()
    buf = io.BytesIO()
    frame.to_csv(buf, index=False)
    loaded = cc.load_predictions(buf.getvalue(), source="example.csv")
    direct = make_set()
    assert loaded.layout == direct.layout and loaded.classes == direct.classes
    np.testing.assert_array_equal(loaded.labels, direct.labels)
    np.testing.assert_allclose(loaded.probs, direct.probs, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(loaded.split, direct.split)


def test_example_argument_checks():
    with pytest.raises(ValueError):
        examples.digits_example(cal_fraction=1.0)
    with pytest.raises(ValueError):
        examples.breast_cancer_example(n_train=5)
