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
