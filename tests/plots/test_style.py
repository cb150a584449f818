"""``calib_core.plots._style.set_template`` gives every figure the same JSON as ``update_layout(template=TEMPLATE)``.

The builders set the template without Plotly re-validating it for every figure (16–20 ms each, most of a redraw's
figure time).  Each figure of both tasks, the comparison and the issue-16 lenses is compared, byte for byte, with
the same figure whose template is set again the slow way; the validation of later layout updates and the
independence of the figures' templates are checked too.
"""

from __future__ import annotations

import importlib
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import calib_core as cc
from calib_core import plots
from calib_core.calibrators import regression as rcal
from calib_core.export import default_figures
from calib_core.metrics.regression_tails import ence_by_bins_tables
from calib_core.plots import classification as pcls
from calib_core.plots import regression_levi as plevi
from calib_core.plots._style import TEMPLATE, set_template

MODULES = ("_style", "regression_levi", "classification", "comparison", "heavy_tails")


def _slow(fig: go.Figure) -> go.Figure:
    """What the builders did before ``set_template``: Plotly's own validating path."""
    return fig.update_layout(template=TEMPLATE)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    n = 800
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, n)
    frame = pd.DataFrame({"y": mean + 1.2 * std * rng.normal(size=n), "mean": mean, "std": std,
                          "model": np.where(np.arange(n) % 2, "a", "b")})
    pset = cc.load_predictions(frame.to_csv(index=False).encode(), source="r.csv")
    return pset, cc.diagnose(pset, n_resamples=0, n_simulations=0)


def _tables(report, name):
    return {m: report.diagrams[(m, cc.ALL)][name] for m in report.models if (m, cc.ALL) in report.diagrams}


def _figures(pset, report) -> list[go.Figure]:
    figures = list(default_figures(report).values())
    figures += [
        plevi.levi_panels_figure(_tables(report, "levi_bins"), reference="a"),
        plots.pit_ecdf_difference_figure(_tables(report, "calibration_curve")),
        plots.ence_bins_figure(ence_by_bins_tables(pset, binning="count"), current=15),
    ]
    rng = np.random.default_rng(1)
    n = 600
    P = rng.dirichlet(np.ones(3), n)
    frame = pd.DataFrame({"label": np.array(["x", "y", "z"])[rng.integers(0, 3, n)], "prob_x": P[:, 0],
                          "prob_y": P[:, 1], "prob_z": P[:, 2]})
    cpset = cc.load_predictions(frame.to_csv(index=False).encode(), source="c.csv")
    creport = cc.diagnose(cpset, n_resamples=0, n_simulations=0)
    figures += list(default_figures(creport).values())
    figures.append(pcls.per_class_reliability_figure(creport.diagrams[(creport.models[0], cc.ALL)]["per_class"],
                                                     class_names=cpset.classes))
    result = cc.evaluate(pset, {"uncalibrated": None, "std": rcal.StdScaling()}, repeats=2, seed=0, diagrams=True)
    figures += list(plots.comparison_figures(result, "a").values())
    return figures


def test_every_figure_is_byte_identical_to_the_validated_template(regression, monkeypatch):
    fast = [fig.to_json() for fig in _figures(*regression)]
    for name in MODULES:
        monkeypatch.setattr(importlib.import_module(f"calib_core.plots.{name}"), "set_template", _slow)
    slow = [fig.to_json() for fig in _figures(*regression)]
    assert len(fast) == len(slow) >= 15
    for a, b in zip(fast, slow, strict=True):
        assert json.loads(a)["layout"]["template"]["layout"]["paper_bgcolor"] == "white"
        assert a == b


def test_set_template_keeps_validation_and_gives_each_figure_its_own_template():
    a, b = set_template(go.Figure()), set_template(go.Figure())
    with pytest.raises(ValueError, match="height"):
        a.update_layout(height=3)  # later updates are validated as usual
    a.layout.template.layout.font.color = "#ff0000"
    a.layout.template.layout.xaxis.gridcolor = "#123456"
    assert b.layout.template.layout.font.color != "#ff0000"
    assert set_template(go.Figure()).layout.template.layout.xaxis.gridcolor != "#123456"
    assert b.to_json() == _slow(go.Figure()).to_json()
