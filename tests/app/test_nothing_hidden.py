"""AppTest: nothing hidden silently — a 100-class file's per-class figure starts with the worst
classes and says how many it shows, a user picks others; the z histogram marks its clipped mass; lab 1's infinite
NLL names its rows and the cause; a file with many models starts with a readable subset and says so."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core import plots
from tests.app.test_labs_regression import open_lab
from tests.app.test_pages import specs

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300


def page_with(page: str, pset: cc.PredictionSet, **state) -> AppTest:
    """A diagnosis page run on ``pset`` put into the session as the Data page does."""
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=TIMEOUT)
    for key, value in {"pset": pset, "pset_token": f"test:{time.time_ns()}", "pset_name": "t.csv",
                       "pset_origin": "upload", **state}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def spec(at: AppTest, key: str) -> dict:
    return specs(at)[key]  # st.plotly_chart or dashboard.live_chart


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def test_per_class_figure_shows_the_worst_classes_and_says_how_many():
    rng = np.random.default_rng(5)
    n, k = 6000, 100
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), labels] += 2.0
    logits[:, 70:] += 1.5  # classes 70–99 over-predicted
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    names = [f"class {j}" for j in range(k)]
    pset = cc.PredictionSet(task="classification", layout="probs", labels=labels, probs=p, classes=names,
                            row_number=np.arange(1, n + 1), n_read=n)
    at = page_with("classification.py", pset, cls_resamples=0, cls_sims=0)
    picker = at.multiselect(key="cls_per_class_pick")
    assert len(picker.value) == 20 and len(picker.options) == 100
    assert all(int(v.split()[1]) >= 70 for v in picker.value)  # the over-predicted classes, not classes 0–19
    assert "Showing 20 of 100 classes" in captions(at)
    titles = [a["text"] for a in spec(at, "cls_per_class")["layout"]["annotations"]]
    assert [t.split(" ·")[0] for t in titles] == picker.value
    eces = [float(t.rsplit("ECE ", 1)[1]) for t in titles]
    assert eces == sorted(eces, reverse=True)
    # the user picks two other classes
    picker.set_value(["class 3", "class 5"]).run()
    assert not at.exception
    titles = [a["text"] for a in spec(at, "cls_per_class")["layout"]["annotations"]]
    assert [t.split(" ·")[0] for t in titles] == ["class 3", "class 5"]
    assert "Showing 2 of 100 classes (the classes picked above)" in captions(at)


def test_z_histogram_marks_the_clipped_mass():
    rng = np.random.default_rng(2)
    n = 3000
    y = rng.standard_t(1.2, n)
    pset = cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=cc.Gaussian(np.zeros(n), np.ones(n)),
                            row_number=np.arange(1, n + 1), n_read=n)
    at = page_with("regression.py", pset, reg_resamples=0, reg_sims=0)
    z = spec(at, "reg_z")
    clipped = [d for d in z["data"] if d.get("meta", {}).get("role") == "clipped"]
    assert len(clipped) == 2
    notes = " ".join(d["text"][0] for d in z["data"] if d.get("meta", {}).get("role") == "notes")
    assert f"{int((y < -10).sum()):,} rows" in notes and f"{int((y >= 10).sum()):,} rows" in notes


def test_lab1_says_why_its_nll_is_infinite():
    at = open_lab("random_sigma")
    assert not [w for w in at.warning if "NLL = ∞" in w.value] or np.isinf(
        at.session_state["lab_random_sigma"]["nll"]).any()
    at.slider(key="lab1_n_test").set_value(7000).run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = at.session_state["lab_random_sigma"]
    infinite = metrics[np.isinf(metrics["nll"])]
    warnings = [w.value for w in at.warning if "NLL = ∞" in w.value]
    assert len(infinite) >= 1 and len(warnings) == len(infinite)
    for (_, row), text in zip(infinite.iterrows(), warnings):
        assert text.startswith(f"{row['model']}, {row['stage']}: NLL = ∞") and "of 7,000 test rows" in text
        assert "truncated support" in text and "a\\* = " in text  # the asterisk shown, not read as Markdown


def test_many_models_start_with_eight_and_say_so():
    rng = np.random.default_rng(4)
    m, per = 30, 60
    n = m * per
    model = np.repeat([f"model {i:02d}" for i in range(m)], per).astype(object)
    y = rng.normal(size=n)
    pset = cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=cc.Gaussian(np.zeros(n), np.ones(n)),
                            model=model, row_number=np.arange(1, n + 1), n_read=n)
    at = page_with("regression.py", pset, reg_resamples=0, reg_sims=0)
    shown = [f"model {i:02d}" for i in range(8)]
    assert at.multiselect(key="reg_models").value == shown
    assert "Showing 8 of 30 models (the first 8 in the file)" in captions(at)
    levi = spec(at, "reg_levi_chart")
    assert [d["name"] for d in levi["data"] if d.get("meta", {}).get("role") == "bins"] == shown
    at.multiselect(key="reg_models").set_value(["model 29", "model 00"]).run()
    assert not at.exception
    levi = spec(at, "reg_levi_chart")
    assert [d["name"] for d in levi["data"] if d.get("meta", {}).get("role") == "bins"] == ["model 00", "model 29"]
    assert "Showing 2 of 30 models (those picked under Models)" in captions(at)
    assert plots.model_colors(pset.models())["model 29"] in json.dumps(levi)  # colours follow the file's order
