"""The smoothed calibration figure is built from its diagram table: diagonal, histogram, band and curve."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calib_core.diagrams.classification_clinical import smoothed_calibration_table
from calib_core.plots.clinical import (
    P_FLOOR,
    SMOOTHED_AXES,
    hosmer_lemeshow_groups_figure,
    smoothed_calibration_figure,
)


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
    assert names == ["&lt;b&gt;A&lt;/b&gt;", "B &amp; C"]  # several models: one legend entry each
    assert [d.showlegend for d in fig.data] == [False, False, False, None, None]
    assert fig.data[-1].line.color == "#123456"
    assert fig.layout.showlegend
    plain = smoothed_calibration_figure({"m": table}, bands=False)
    assert roles(plain) == ["reference", "histogram", "curve"] and plain.data[-1].name == "loess (span 0.75)"


def test_long_legends_get_room_below_the_axis():
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 300)
    t = smoothed_calibration_table((rng.random(300) < p).astype(int), p, n_grid=11, n_resamples=0)
    short = smoothed_calibration_figure({"a": t, "b": t})
    long = smoothed_calibration_figure({f"a rather long model name number {i}": t for i in range(6)})
    assert long.layout.height > short.layout.height and long.layout.margin.b > short.layout.margin.b


def test_hosmer_lemeshow_groups_figure():
    frame = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "groups": [5, 10, 15, 20] * 2,
                          "statistic": [3.0, 9.0, 14.0, 25.0, 80.0, 90.0, 99.0, 120.0], "df": [5, 10, 15, 20] * 2,
                          "p_value": [0.7, 0.53, 0.52, 0.2, 1e-15, 1e-16, 1e-16, 1e-17]})
    fig = hosmer_lemeshow_groups_figure(frame, marked=(5, 10, 20))
    assert roles(fig) == ["level", "line", "marked", "line", "marked"]
    lines = [d for d in fig.data if (d.meta or {}).get("role") == "line"]
    assert min(lines[1].y) == P_FLOOR  # drawn at the floor …
    assert list(lines[1].customdata[:, 2]) == [1e-15, 1e-16, 1e-16, 1e-17]  # … the hover gives the value
    assert list(fig.data[2].text) == ["0.7", "0.53", "0.2"] and list(fig.data[2].x) == [5, 10, 20]
    assert list(fig.data[4].text) == ["", "", ""]  # at the floor: no labels to overlap
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.ticktext[-1] == f"≤ {P_FLOOR:g}"
    with pytest.raises(ValueError, match="lacks column"):
        hosmer_lemeshow_groups_figure(frame.drop(columns="df"))


def test_axis_titles_follow_the_event(table):
    top = table.copy()
    top.attrs = dict(table.attrs, target="top_label")
    assert "confidence" in smoothed_calibration_figure(top).layout.xaxis.title.text
    assert "class" in smoothed_calibration_figure(table, target="class").layout.xaxis.title.text
    with pytest.raises(ValueError, match="lacks column"):
        smoothed_calibration_figure(table.drop(columns="share"))
