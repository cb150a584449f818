"""The monitor figure: the e-value path per model on a log axis, the alarm line at 1/α, the alarm marker and the
change point; dates or numbers on x; model names from files drawn literally."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calib_core.plots import model_colors
from calib_core.plots.monitor import ALARM_COLOR, monitor_figure
from tests.plots.test_uploaded_text import HOSTILE, check


def path_table(times, models=("a", "b")) -> pd.DataFrame:
    """A MonitorResult-like path: model a drifts (e grows ×2 per step from the 4th), model b stays calibrated."""
    k = len(times)
    e_a = np.r_[np.ones(3) * [1.0, 0.8, 0.9], 0.9 * 2.0 ** np.arange(1, k - 2)]
    e_b = np.exp(np.cumsum(np.resize([-0.2, 0.15], k)))
    frames = []
    for model, e in zip(models, (e_a, e_b), strict=False):
        frames.append(pd.DataFrame({"model": model, "time": times, "n": 40, "e_value": e, "log10_e": np.log10(e),
                                    "alarm": e >= 20, "factor": np.r_[e[0], e[1:] / e[:-1]]}))
    return pd.concat(frames, ignore_index=True)


def roles(fig) -> list[tuple[str | None, str]]:
    return [((t.meta or {}).get("name"), (t.meta or {}).get("role")) for t in fig.data]


def test_paths_alarm_line_alarm_and_change_point_with_dates():
    times = pd.date_range("2026-01-03", periods=12, freq="W-SAT").to_numpy()
    path = path_table(times)
    colors = {"a": "#123456", "b": "#654321"}
    alarm = times[7]  # e_a = 0.9·2^5 = 28.8 ≥ 20 first there
    assert path.loc[(path["model"] == "a") & path["alarm"], "time"].iloc[0] == alarm
    fig = monitor_figure(path, 20.0, change_point={"a": times[2]}, alarm_time={"a": alarm}, colors=colors)
    assert roles(fig) == [(None, "one"), (None, "alarm_line"), ("a", "curve"), ("a", "alarm"), ("a", "change_point"),
                          ("b", "curve")]
    assert fig.layout.yaxis.type == "log"
    line = fig.data[1]
    assert line.name == "alarm line: 1/α = 20" and list(line.y) == [20.0, 20.0] and line.line.color == ALARM_COLOR
    assert any(a.text == "alarm line: 1/α = 20" for a in fig.layout.annotations)
    # the y range (log10 units) holds 1, the line and every e-value
    lo, hi = fig.layout.yaxis.range
    e = path["e_value"]
    assert lo < 0 < np.log10(20) < hi and lo <= np.log10(e.min()) and hi >= np.log10(e.max())
    # colours follow the page's mapping; the path is a step line (e is constant between steps)
    assert fig.data[2].line.color == "#123456" and fig.data[5].line.color == "#654321"
    assert fig.data[2].line.shape == "hv"
    star = fig.data[3]
    assert pd.Timestamp(star.x[0]) == pd.Timestamp(alarm) and star.y[0] == pytest.approx(28.8)
    assert star.name == "a: alarm (2026-02-21)"
    cp = fig.data[4]
    assert cp.line.dash == "dot" and pd.Timestamp(cp.x[0]) == pd.Timestamp(times[2]) == pd.Timestamp(cp.x[1])
    assert cp.y[0] <= 10 ** lo * 1.0001 and cp.y[1] >= 10 ** hi * 0.9999  # spans the plotting area
    assert fig.layout.xaxis.title.text == "time"
    assert "%{x|%Y-%m-%d %H:%M}" in fig.data[2].hovertemplate and "rows" in fig.data[2].hovertemplate


def test_numbers_on_x_one_model_and_a_scalar_alarm():
    times = np.arange(1.0, 13.0)
    path = path_table(times, models=("a",))
    fig = monitor_figure(path, 20.0, change_point=3.0, alarm_time=8.0, xaxis_title="week")
    assert roles(fig) == [(None, "one"), (None, "alarm_line"), ("a", "curve"), ("a", "alarm"), ("a", "change_point")]
    assert fig.data[2].name == "e-value" and fig.data[2].line.color == model_colors(["a"])["a"]
    assert fig.data[3].name == "alarm (8)" and fig.data[4].name == "change most likely began around 3"
    assert fig.layout.xaxis.title.text == "week" and fig.layout.showlegend
    assert fig.data[2].hovertemplate.startswith("%{x:.6g}")
    # no alarm, no change point: the paths and the two reference lines only
    quiet = monitor_figure(path[path["e_value"] < 5], 20.0)
    assert [r for _, r in roles(quiet)] == ["one", "alarm_line", "curve"]
    assert quiet.layout.yaxis.range[1] > np.log10(20)  # the alarm line stays in view


def test_bad_tables_are_refused():
    path = path_table(np.arange(4.0))
    with pytest.raises(ValueError, match="lacks column"):
        monitor_figure(path.drop(columns="e_value"), 20.0)
    with pytest.raises(ValueError, match="no time step"):
        monitor_figure(path.iloc[:0], 20.0)
    with pytest.raises(ValueError, match="above 1"):
        monitor_figure(path, 0.5)


def test_model_names_from_files_are_drawn_literally():
    times = pd.date_range("2026-01-03", periods=12, freq="W-SAT").to_numpy()
    path = path_table(times, models=(HOSTILE, "m2"))
    fig = monitor_figure(path, 20.0, change_point={HOSTILE: times[2]}, alarm_time={HOSTILE: times[7]},
                         xaxis_title=HOSTILE)
    check(fig)
    assert fig.data[2].meta["name"] == HOSTILE  # selections match the raw name


def test_the_guaranteed_evidence_is_drawn_when_the_monitor_has_a_lag():
    """With lag h > 1 the alarm reads e_guaranteed (≤ e_value): the line drawn is that one, so it crosses the alarm
    line where the alarm is raised."""
    times = np.arange(1.0, 13.0)
    path = path_table(times, models=("a",))
    path["e_guaranteed"] = path["e_value"] / 2
    fig = monitor_figure(path, 20.0, alarm_time=9.0)
    assert list(fig.data[2].y) == list(path["e_guaranteed"])
    assert fig.data[3].y[0] == pytest.approx(path["e_guaranteed"].iloc[8]) and fig.data[3].y[0] >= 20
