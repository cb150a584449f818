"""The Classification page's redraw helpers give what the plain builders give."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

import calib_core as cc
from calib_core import plots
from dashboard import classification_redraw


def _per_class(n_bins: int, strategy: str, k: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    z = rng.normal(size=(400, k))
    p = np.exp(2 * z) / np.exp(2 * z).sum(1, keepdims=True)
    labels = (z + rng.gumbel(size=z.shape)).argmax(1)
    pset = cc.PredictionSet(task="classification", labels=labels, probs=p)
    report = cc.diagnose(pset, by_group=False, n_bins=n_bins, strategy=strategy, n_resamples=0, n_simulations=0,
                         smooth=False)
    return report.diagrams[(report.models[0], cc.ALL)]["per_class"]


@pytest.mark.parametrize("names", [None, ["ant", "bee", "=cat", "dog"]])
def test_a_patched_per_class_figure_is_the_built_one(names):
    classification_redraw._SKELETONS.clear()
    codes = [2, 0, 3]
    for n_bins, strategy in ((15, "uniform"), (7, "uniform"), (12, "quantile")):  # the first builds, the others patch
        table = _per_class(n_bins, strategy)
        fig = classification_redraw.per_class_figure(table, class_names=names, color="#e45756", classes=codes)
        built = plots.per_class_reliability_figure(table, class_names=names, color="#e45756", classes=codes)
        assert json.loads(pio.to_json(fig)) == json.loads(pio.to_json(built))
    assert len(classification_redraw._SKELETONS) == 1


@pytest.mark.parametrize("k", [3, 15, 25])
def test_per_class_views_from_one_summary_equal_the_views(k):
    """The class options, default classes and summary table made from one per-class summary equal
    ``views.per_class_choice`` and ``views.per_class_table`` (wide up to 12 classes, long above; the worst 20)."""
    from dashboard.classification_redraw import _per_class_views
    from dashboard.display import csv_safe
    from views import pages as views_pages

    rng = np.random.default_rng(k)
    n = 600
    logits = 2.0 * rng.normal(size=(n, k))
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    labels = rng.integers(0, k, n)
    pset = cc.PredictionSet(task="classification", labels=labels, probs=p)
    report = cc.diagnose(pset, n_resamples=0, n_simulations=0, by_group=False)
    per_class = next(iter(report.diagrams.values()))["per_class"]
    names = [f"c{i}" for i in range(k)]
    for classes in (None, names):
        options, worst, table = _per_class_views(per_class, classes)
        want_options, want_worst = views_pages.per_class_choice(per_class, classes)
        assert options == want_options and worst == want_worst
        pd.testing.assert_frame_equal(table, csv_safe(views_pages.per_class_table(per_class, classes)))
