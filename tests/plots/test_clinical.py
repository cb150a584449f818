"""The smoothed calibration figure is built from its diagram table: diagonal, histogram, band and curve."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.diagrams.classification_clinical import smoothed_calibration_table
from calib_core.plots.clinical import SMOOTHED_AXES, smoothed_calibration_figure


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    p = rng.beta(2, 5, 1500)
    y = (rng.random(1500) < p**1.3).astype(int)
    return smoothed_calibration_table(y, p, n_grid=51, n_resamples=100)


def roles(fig) -> list[str]:
    return [(d.meta or {}).get("role", "") for d in fig.data]


def test_one_model_diagonal_histogram_band_curve(table):
    fig = smoothed_calibration_figure(table)
    assert roles(fig) == ["reference", "histogram", "band", "band", "curve"]
    curve = fig.data[-1]
    np.testing.assert_allclose(curve.y, table["observed"])
    np.testing.assert_allclose(curve.x, table["predicted"])
    upper, lower = fig.data[2], fig.data[3]
    np.testing.assert_allclose(upper.y, table["upper"])
    np.testing.assert_allclose(lower.y, table["lower"])
    assert lower.fill == "tonexty" and "95% bootstrap band" in lower.name
    hist = fig.data[1]
    assert hist.yaxis == "y2" and float(np.sum(hist.y)) == pytest.approx(1.0)
    assert fig.layout.xaxis.title.text == SMOOTHED_AXES["positive"][0]
    lo, hi = fig.layout.yaxis.range
    assert lo <= min(0.0, table["lower"].min()) and hi >= max(1.0, table["upper"].max())
    assert fig.layout.yaxis2.range[1] == pytest.approx(4 * table["share"].max())


def test_several_models_names_escaped_and_no_band(table):
    bare = table.copy()
    bare[["lower", "upper"]] = np.nan
    fig = smoothed_calibration_figure({"<b>A</b>": table, "B & C": bare}, histogram=False,
                                      colors={"B & C": "#123456"})
    assert roles(fig) == ["reference", "band", "band", "curve", "curve"]
    names = [d.name for d in fig.data if (d.meta or {}).get("role") == "curve"]
    assert names[0].startswith("&lt;b&gt;A&lt;/b&gt;: loess") and names[1].startswith("B &amp; C")
    assert fig.data[-1].line.color == "#123456"
    assert fig.layout.showlegend


def test_axis_titles_follow_the_event(table):
    top = table.copy()
    top.attrs = dict(table.attrs, target="top_label")
    assert "confidence" in smoothed_calibration_figure(top).layout.xaxis.title.text
    assert "class" in smoothed_calibration_figure(table, target="class").layout.xaxis.title.text
    with pytest.raises(ValueError, match="lacks column"):
        smoothed_calibration_figure(table.drop(columns="share"))
