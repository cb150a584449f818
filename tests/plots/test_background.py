"""The whole data drawn faintly behind a slice: ``calib_core.plots.with_background`` on real
diagram tables of a slice and of all rows — faint traces first, grey, one legend entry, not hoverable or
selectable, only the data traces of the background (no second reference line or band), bars as step outlines at
the background's own bin edges, axis ranges widened to hold both."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from calib_core import plots
from calib_core.base.regression import Gaussian
from calib_core.diagrams.classification import classification_diagrams
from calib_core.diagrams.regression import regression_diagrams
from calib_core.metrics.classification import ClassificationRows
from calib_core.metrics.regression import RegressionRows
from calib_core.plots import corp as corp_plots
from calib_core.plots.background import FAINT_NAME, faint_traces
from views.selection import selected_bins, trace_meta


@pytest.fixture(scope="module")
def tables():
    """Diagram tables of a slice (σ 40% too small, 600 rows) and of all rows (6,000)."""
    rng = np.random.default_rng(0)
    n = 6000
    mu, sigma = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
    part = np.arange(n) < 600
    y = mu + np.where(part, 1.4, 1.0) * sigma * rng.normal(size=n)
    whole = regression_diagrams(RegressionRows(y, Gaussian(mu, sigma)), n_resamples=50, seed=0)
    piece = regression_diagrams(RegressionRows(y[part], Gaussian(mu[part], sigma[part])), n_resamples=50, seed=0)
    return piece, whole


BUILDERS = [("calibration_curve", plots.calibration_curve_figure), ("levi_bins", plots.levi_figure),
            ("pit_histogram", plots.pit_histogram_figure), ("z_histogram", plots.z_histogram_figure),
            ("qq", plots.qq_figure), ("intervals", plots.intervals_figure)]


@pytest.mark.parametrize(("name", "build"), BUILDERS)
def test_faint_traces_first_grey_one_legend_entry_not_selectable(tables, name, build):
    piece, whole = tables
    alone = build({"model": piece[name]})
    fig = plots.with_background(build, {"model": piece[name]}, {"model": whole[name]})
    behind = build({"model": whole[name]})
    data_roles = [t for t in behind.data if (t.meta or {}).get("role") in ("curve", "bins", "bars", "points")]
    k = len(fig.data) - len(alone.data)
    assert k == len(data_roles) >= 1  # only the data traces of all rows; references and bands are not repeated
    bars = name in ("pit_histogram", "z_histogram")  # bar outlines go over the slice's bars, the rest under
    faint, rest = (fig.data[-k:], fig.data[:-k]) if bars else (fig.data[:k], fig.data[k:])
    assert go.Figure(data=rest).to_json() == go.Figure(data=alone.data).to_json()  # the slice, unchanged
    assert [t.showlegend for t in faint] == [True] + [False] * (k - 1) and faint[0].name == FAINT_NAME
    for t in faint:
        assert t.meta["role"] == "faint" and t.hoverinfo == "skip" and t.customdata is None
        assert ("110,110,110" if bars else "140,140,140") in (t.line.color or "")
    # a click or box over the faint traces selects nothing; the slice's own bins still count
    event = {"selection": {"points": [{"curve_number": i, "customdata": 2} for i in range(len(fig.data))]}}
    chosen = selected_bins(event, trace_meta(fig))
    assert chosen == selected_bins({"selection": {"points": [{"curve_number": i, "customdata": 2}
                                                             for i in range(len(alone.data))]}}, trace_meta(alone))
    # no background: the figure alone
    assert plots.with_background(build, {"model": piece[name]}, None).to_json() == alone.to_json()
    assert plots.with_background(build, {"model": piece[name]}, {}).to_json() == alone.to_json()


def test_histogram_bars_become_step_outlines_at_the_background_edges(tables):
    piece, whole = tables
    fig = plots.with_background(plots.pit_histogram_figure, {"m": piece["pit_histogram"]},
                                {"m": whole["pit_histogram"]})
    step = fig.data[-1]
    t = whole["pit_histogram"]
    np.testing.assert_allclose(step.x, np.r_[t["left"], t["right"].iloc[-1]])
    np.testing.assert_allclose(step.y, np.r_[t["density"], t["density"].iloc[-1]])
    assert step.line.shape == "hv" and step.meta["role"] == "faint" and step.showlegend


def test_axis_ranges_hold_both(tables):
    piece, whole = tables
    for build, name in ((plots.z_histogram_figure, "z_histogram"), (plots.levi_figure, "levi_bins")):
        a, b = build({"m": piece[name]}), build({"m": whole[name]})
        fig = plots.with_background(build, {"m": piece[name]}, {"m": whole[name]})
        for axis in ("xaxis", "yaxis"):
            ra, rb, rf = a.layout[axis].range, b.layout[axis].range, fig.layout[axis].range
            if ra is None:
                continue
            assert rf[0] == min(ra[0], rb[0]) and rf[1] == max(ra[1], rb[1])


def test_classification_figures_and_subplots():
    rng = np.random.default_rng(1)
    n = 4000
    f = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < f).astype(int)
    probs = np.column_stack([1 - f, f])
    whole = classification_diagrams(ClassificationRows(y, probs))
    part = np.arange(n) < 500
    piece = classification_diagrams(ClassificationRows(y[part], probs[part]))
    for build in (plots.reliability_figure, plots.confidence_histogram_figure):
        fig = plots.with_background(build, {"m": piece["reliability"], "n": piece["reliability"]},
                                    {"m": whole["reliability"], "n": whole["reliability"]})
        faint = [t for t in fig.data if (t.meta or {}).get("role") == "faint"]
        assert len(faint) >= 2 and sum(bool(t.showlegend) for t in faint) == 1
        assert not any((t.meta or {}).get("name") is None for t in faint)
    per_class = plots.with_background(plots.per_class_reliability_figure, piece["per_class"], whole["per_class"])
    faint = [t for t in per_class.data if (t.meta or {}).get("role") == "faint"]
    alone = plots.per_class_reliability_figure(whole["per_class"])
    axes = [(t.xaxis, t.yaxis) for t in alone.data if (t.meta or {}).get("role") == "class"]
    assert [(t.xaxis, t.yaxis) for t in faint] == axes  # each class panel gets its own faint curve
    murphy = corp_plots.murphy_figure({"m": pd.DataFrame({"theta": [0, 0.5, 1], "score": [0, 0.1, 0]})})
    assert len(faint_traces(murphy)) == 1
