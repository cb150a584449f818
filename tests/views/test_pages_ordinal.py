"""The view-model of the Classification page's "Per threshold" section (ordered classes)."""

from __future__ import annotations

import numpy as np
import pytest

import calib_core as cc
from calib_core.metrics.classification_ordinal import rps
from views import pages as views


def _set(ordinal: bool = True, n: int = 300) -> cc.PredictionSet:
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.full(3, 1.5), size=n)
    y = np.minimum((rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1), 2)
    model = np.where(np.arange(n) % 2 == 0, "a", "b")
    return cc.PredictionSet(task="classification", labels=y, probs=p, classes=["lo", "mid", "hi"], model=model,
                            ordinal=ordinal)


def test_threshold_views_per_model():
    pset = _set()
    res = views.threshold_reliabilities(pset, ["a", "b"], n_resamples=100)
    assert list(res) == ["a", "b"]
    table = views.threshold_table(res)
    assert table["model"].tolist() == ["a", "a", "b", "b"]
    assert table["threshold"].tolist() == ["≤ lo", "≤ mid"] * 2
    a = pset.model == "a"
    assert table[table["model"] == "a"]["Brier"].sum() == pytest.approx(rps(pset.probs[a], pset.labels[a]))
    assert set(table["verdict"]) <= {"consistent", "miscalibrated"}
    one = views.threshold_table({"a": res["a"]})
    assert "model" not in one.columns and len(one) == 2
    untested = views.threshold_table(views.threshold_reliabilities(pset, ["a"], n_resamples=0))
    assert set(untested["verdict"]) == {"not tested"}


def test_no_thresholds_without_ordered_classes():
    assert views.threshold_reliabilities(_set(ordinal=False), ["a", "b"]) == {}
