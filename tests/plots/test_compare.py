"""Figures of the Compare models page: the skill plot and the pairwise ratio matrix."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from calib_core.plots import compare as pc
from calib_core.plots._style import plain
from tests.compare_fake import fake_comparison
from tests.plots.test_uploaded_text import HOSTILE, check


def _points(fig):
    """model (as drawn) → (x, legend name of its verdict, customdata)."""
    return {y: (x, t.name, c) for t in fig.data for x, y, c in zip(t.x, t.y, t.customdata)}


def test_skill_plot_points_intervals_and_colours():
    comp = fake_comparison()
    fig = pc.skill_figure(comp.table, comp.baseline, score="WIS")
    points = _points(fig)
    assert points["good"][:2] == (0.8, "better")
    assert points["bad"][:2] == (1.3, "worse")
    assert points["same"][:2] == (0.97, "not distinguishable")
    assert points["base"][:2] == (1.0, "baseline")
    assert {m: int(c) for m, (_, _, c) in points.items()} == {"base": 0, "good": 1, "bad": 2, "same": 3}
    better = next(t for t in fig.data if t.name == "better")
    np.testing.assert_allclose([better.error_x.array[0], better.error_x.arrayminus[0]], [0.08, 0.08])
    assert {t.marker.color for t in fig.data} == set(pc.VERDICT_COLORS.values())
    assert fig.layout.xaxis.type == "log"
    lo, hi = fig.layout.xaxis.range
    assert 10 ** lo < 0.72 and 10 ** hi > 1.43  # every interval inside the axis
    assert 1 in fig.layout.xaxis.tickvals
    line = fig.layout.shapes[0]
    assert (line.x0, line.x1, line.xref) == (1, 1, "x")
    # best on top: the category axis lists the models by relative score and is reversed
    assert list(fig.layout.yaxis.categoryarray) == ["good", "same", "base", "bad"]
    assert fig.layout.yaxis.autorange == "reversed"
    assert all(t.meta == {"name": "model", "role": "bins"} for t in fig.data)


def test_verdicts_need_the_holm_p_below_alpha():
    comp = fake_comparison()
    assert pc.verdicts(comp.table, "base", alpha=0.005).tolist() == [
        "baseline", "better than the baseline", "not distinguishable", "not distinguishable"]


def test_pairwise_matrix_fills_both_directions_and_the_heatmap_prints_ratios():
    comp = fake_comparison()
    ratio, p, models = pc.pairwise_matrix(comp.pairwise, ["good", "same", "base", "bad"])
    assert models == ["good", "same", "base", "bad"]
    np.testing.assert_allclose(ratio * ratio.T, 1)
    np.testing.assert_allclose(np.diag(ratio), 1)
    assert ratio[0, 3] == 0.8 / 1.3 and np.isnan(p[0, 0]) and p[0, 3] == p[3, 0]
    fig = pc.pairwise_figure(comp.pairwise, models, score="WIS")
    heat = fig.data[0]
    np.testing.assert_allclose(heat.z, np.log10(ratio))
    assert heat.zmid == 0 and heat.zmin == -heat.zmax
    assert heat.text[0][3] == "0.615" and heat.text[3][0] == "1.62"
    assert "p = " in heat.hovertext[0][3] and "p = " not in heat.hovertext[0][0]
    assert heat.texttemplate == "%{text}"
    assert fig.layout.yaxis.autorange == "reversed"


def test_names_from_files_are_drawn_literally():
    comp = fake_comparison(models=(HOSTILE, "b", "c&d"), relative=(1.0, 0.9, 1.2), p_holm=(np.nan, 0.01, 0.3))
    skill = pc.skill_figure(comp.table, HOSTILE, score="WIS")
    pairs = pc.pairwise_figure(comp.pairwise, score="WIS")
    check(skill)
    check(pairs)
    assert plain(HOSTILE) in list(skill.layout.yaxis.categoryarray)
    assert "c&amp;d" in list(pairs.data[0].x)


def test_two_models_and_missing_intervals():
    comp = fake_comparison(models=("a", "b"), relative=(1.0, 1.0), p_holm=(np.nan, np.nan))
    fig = pc.skill_figure(comp.table.drop(columns=["relative_lo", "relative_hi"]), "a")
    assert [t.name for t in fig.data] == ["not distinguishable", "baseline"]
    pairs = pc.pairwise_figure(comp.pairwise)
    assert pairs.data[0].zmax > 0  # equal models: a colour scale that still has a width


def test_every_figure_is_valid_plotly():
    comp = fake_comparison()
    for fig in (pc.skill_figure(comp.table, comp.baseline), pc.pairwise_figure(comp.pairwise)):
        go.Figure(fig.to_plotly_json())
        fig.to_json()
