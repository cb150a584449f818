"""Nothing hidden silently, the pure parts: the per-class figure shows the worst classes and the
page says how many; the z histogram's clipped mass is counted and marked; an infinite NLL names its rows and cause;
a file with many models starts with a readable subset."""

from __future__ import annotations

import numpy as np
import pytest

import calib_core as cc
from calib_core import plots
from calib_core.calibrators.regression import IsotonicRecalibration
from calib_core.diagnosis.classification import diagnose_classification
from calib_core.diagrams.regression import z_histogram_table
from calib_core.metrics import regression as rm
from calib_core.metrics.regression import RegressionRows
from views import pages as views


# ------------------------------------------------------------------------------------------- per-class figure
@pytest.fixture(scope="module")
def per_class_100():
    """A 100-class classifier whose classes 60–99 are badly over-confident one-vs-rest (seeded)."""
    rng = np.random.default_rng(7)
    n, k = 20_000, 100
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), labels] += 2.0
    logits[:, 60:] += 1.5  # probability mass on classes 60–99 that their frequency does not justify
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    ps = cc.PredictionSet(task="classification", layout="probs", labels=labels, probs=p,
                          classes=[f"c{j}" for j in range(k)], row_number=np.arange(1, n + 1), n_read=n)
    rep = diagnose_classification(ps, n_resamples=0, n_simulations=0)
    return rep.diagrams[("model", cc.ALL)]["per_class"], ps.classes


def test_per_class_figure_defaults_to_the_worst_classes(per_class_100):
    table, names = per_class_100
    summary = plots.per_class_summary(table)
    worst = plots.worst_classes(table, 20)
    expected = summary.sort_values("one-vs-rest ECE", ascending=False, kind="stable")["class_code"].iloc[:20]
    assert worst == list(expected)
    assert all(c >= 60 for c in worst)  # the over-confident classes, not classes 0–19
    fig = plots.per_class_reliability_figure(table, class_names=names)
    titles = [a.text for a in fig.layout.annotations]
    assert len(titles) == 20 and titles[0].startswith(f"c{worst[0]} ·")
    eces = [float(t.rsplit("ECE ", 1)[1]) for t in titles]
    assert eces == sorted(eces, reverse=True)
    picked = plots.per_class_reliability_figure(table, class_names=names, classes=[3, 1])
    assert [a.text.split(" ·")[0] for a in picked.layout.annotations] == ["c3", "c1"]
    # few classes: all of them, in class order
    few = table[table["class"] < 5]
    assert plots.worst_classes(few, 20) == [0, 1, 2, 3, 4]


def test_per_class_choice_and_caption(per_class_100):
    table, names = per_class_100
    options, default = views.per_class_choice(table, names)
    assert list(options) == names and list(options.values()) == list(range(100))
    assert [options[d] for d in default] == plots.worst_classes(table, views.PER_CLASS_SHOWN)
    caption = views.per_class_caption(len(default), len(options), True)
    assert "Showing 20 of 100 classes" in caption and "largest one-vs-rest ECE" in caption
    assert "picked" in views.per_class_caption(3, 100, False)
    assert views.per_class_caption(10, 10, True) == ""


# ------------------------------------------------------------------------------------------- z histogram
def test_z_histogram_counts_the_clipped_mass():
    rng = np.random.default_rng(3)
    y = rng.standard_t(1.2, 4000)  # heavy tails: many |z| > 10
    rows = RegressionRows(y, cc.Gaussian(np.zeros_like(y), np.ones_like(y)))
    t = z_histogram_table(rows)
    assert t["left"].iloc[0] == -10 and t["right"].iloc[-1] == 10
    below, above = int((y < -10).sum()), int((y >= 10).sum())
    assert below > 20 and above > 20
    assert t["outside"].tolist() == [below] + [0] * (len(t) - 2) + [above]
    assert t["count"].iloc[0] >= below and t["count"].sum() == y.size  # the end bins still hold them
    fig = plots.z_histogram_figure(t)
    clipped = [d for d in fig.data if (d.meta or {}).get("role") == "clipped"]
    assert len(clipped) == 2 and sum(d.showlegend is not False for d in clipped) == 1
    width = t["right"].iloc[0] - t["left"].iloc[0]
    assert clipped[0].y[0] == pytest.approx(below / (y.size * width))
    assert clipped[0].base[0] + clipped[0].y[0] == pytest.approx(t["density"].iloc[0])
    notes = " ".join(d.text[0] for d in fig.data if (d.meta or {}).get("role") == "notes")
    assert f"{below:,} rows" in notes and f"{above:,} rows" in notes and "z < −10" in notes and "z ≥ 10" in notes
    # nothing beyond the range: no mark
    inner = RegressionRows(np.clip(rng.normal(size=2000), -3, 3), cc.Gaussian(np.zeros(2000), np.ones(2000)))
    quiet = plots.z_histogram_figure(z_histogram_table(inner))
    assert not [d for d in quiet.data if (d.meta or {}).get("role") in ("clipped", "notes")]
    assert not quiet.layout.annotations


# ------------------------------------------------------------------------------------------- infinite NLL
def test_infinite_nll_names_its_rows_and_the_truncated_support():
    rng = np.random.default_rng(11)
    n_cal, n_test = 300, 5000
    x = rng.uniform(0.1, 1.0, n_cal + n_test)
    y = rng.normal(x, x)
    d = cc.Gaussian(x, np.full_like(x, 0.6))
    iso = IsotonicRecalibration().fit(d.take(np.arange(n_cal)), y[:n_cal])
    test = iso.transform(d.take(np.arange(n_cal, n_cal + n_test)))
    yt = y[n_cal:]
    zero = rm.zero_density_rows(yt, test)
    lo, hi = test.support()
    expected = (yt >= hi) | (yt < lo)
    assert zero.sum() > 0 and np.array_equal(zero, expected)  # exactly the targets beyond the support
    assert np.isinf(rm.nll(yt, test))
    note = rm.zero_density_note(yt, test, what="test rows", row_numbers=np.arange(101, 101 + n_test))
    k = int(zero.sum())
    assert note.startswith(f"NLL = ∞: {k:,} of {n_test:,} test rows")
    first = np.flatnonzero(zero)[0] + 101
    assert f"({first:,}" in note and "truncated support" in note and "a* = " in note
    # a Gaussian has full support: no note
    assert rm.zero_density_note(yt, d.take(np.arange(n_cal, n_cal + n_test))) == ""


def test_lab1_explains_its_infinite_nll():
    from calib_core.labs.random_sigma import run_random_sigma

    result = run_random_sigma(n_test=7000, n_cal=2000, n_resamples=0)
    inf = result.metrics[np.isinf(result.metrics["nll"])]
    notes = result.zero_density_notes()
    assert len(notes) == len(inf) >= 1  # one note per infinite NLL, none for the finite ones
    for (_, row), note in zip(inf.iterrows(), notes):
        assert note.startswith(f"{row['model']}, {row['stage']}: NLL = ∞")


# ------------------------------------------------------------------------------------------- many models
def test_many_models_start_with_a_readable_subset():
    models = [f"m{i}" for i in range(200)]
    assert views.default_models(models) == models[: views.MODELS_SHOWN]
    assert views.default_models(models[:5]) == models[:5]
    note = views.models_note(8, 200, True)
    assert "Showing 8 of 200 models" in note and "first 8" in note
    assert "picked" in views.models_note(3, 200, False) and views.models_note(5, 5, True) == ""
