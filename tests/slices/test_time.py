"""Calibration over time: the time column (detected, mapped, robustly parsed), windows,
per-window metrics with intervals and perfect-calibration bands, and the Regression / Classification pages' "Over
time" section whose picked windows restrict every view."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core.data.timecol import parse_time
from calib_core.plots.timewindows import time_windows_figure
from calib_core.slices.time import window_codes, window_rows, window_table

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def _drifting(n: int = 12000, seed: int = 0, start: str = "2026-01-01", days: int = 84) -> pd.DataFrame:
    """Gaussian predictions, calibrated until day 56, then the noise grows ×1.6 (a calibration regression)."""
    rng = np.random.default_rng(seed)
    secs = rng.integers(0, days * 86400, n)
    t = np.datetime64(start, "s") + secs.astype("timedelta64[s]")
    mean = rng.normal(size=n)
    late = secs >= 56 * 86400
    y = mean + np.where(late, 1.6, 1.0) * rng.standard_normal(n)
    return pd.DataFrame({"timestamp": pd.to_datetime(t).strftime("%Y-%m-%dT%H:%M:%S"), "y": y, "mean": mean,
                         "std": np.ones(n)})


# ---------------------------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------------------------
def test_time_column_is_detected_and_bad_cells_are_counted_drops():
    df = _drifting(n=50)
    df.loc[[3, 10], "timestamp"] = ["not a date", "2026-13-45"]
    df.loc[20, "timestamp"] = ""
    ps = cc.load_predictions(df.to_csv(index=False).encode(), source="drift.csv")
    assert ps.time is not None and ps.time.dtype == np.dtype("datetime64[ns]")
    assert ps.n_rows == 47 and ps.n_read == 50
    reasons = {r: v.tolist() for r, v in ps.dropped.reasons.items()}
    assert reasons == {"time: not a date/time": [4, 11], "time: missing value": [21]}  # 1-based data rows
    assert any("time: not a date/time: 2 (rows 4, 11)" in m for m in ps.messages)
    assert np.all(np.diff(ps.time[:5]) != np.timedelta64(0)) and ps.take(np.arange(3)).time.shape == (3,)


def test_mixed_formats_time_zones_and_numbers():
    v, missing, bad = parse_time(pd.Series(["2026-01-02", "03/01/2026 10:00", "2026-01-02T05:00:00+02:00", None]))
    assert missing.tolist() == [False, False, False, True] and not bad.any()
    assert pd.Timestamp(v[2]) == pd.Timestamp("2026-01-02 03:00")  # converted to UTC
    v, missing, bad = parse_time(pd.Series([3.0, 1.0, np.inf, np.nan]))
    assert v.dtype == float and missing.tolist() == [False, False, False, True] and bad.tolist() == [0, 0, 1, 0]
    v, _, _ = parse_time(pd.Series(["1", "2", "30"]))  # numbers written as text: numbers
    assert v.tolist() == [1.0, 2.0, 30.0]


def test_mapped_time_column_and_a_name_that_lies():
    df = _drifting(n=40).rename(columns={"timestamp": "when"})
    ps = cc.load_predictions(df.to_csv(index=False).encode(), source="d.csv")
    assert ps.time is None  # "when" is not a time alias
    ps = cc.load_predictions(df.to_csv(index=False).encode(), source="d.csv", columns={"time": "when"})
    assert ps.time is not None and ps.n_rows == 40
    df2 = _drifting(n=40)
    df2["timestamp"] = "n/a-" + df2.index.astype(str)
    ps = cc.load_predictions(df2.to_csv(index=False).encode(), source="d.csv")
    assert ps.time is None and ps.n_rows == 40  # a detected column that is not dates is not used, rows kept
    assert any("not used as time" in m for m in ps.messages)
    with pytest.raises(cc.InputError, match="time column 'timestamp'.*rows 1, 2, 3") as err:
        cc.load_predictions(df2.to_csv(index=False).encode(), source="d.csv", columns={"time": "timestamp"})
    assert "Column mapping" in err.value.app_message()


# ---------------------------------------------------------------------------------------------------------------
# windows and statistics
# ---------------------------------------------------------------------------------------------------------------
def test_window_codes_calendar_and_equal():
    t = pd.to_datetime(["2026-01-01 10:00", "2026-01-31 23:59", "2026-02-01 00:00", "2026-03-15 00:00"]).to_numpy()
    codes, w = window_codes(t, "month")
    assert codes.tolist() == [0, 0, 1, 2] and w["label"].tolist() == ["2026-01", "2026-02", "2026-03"]
    assert (w["start"].to_numpy() <= t[[0, 2, 3]]).all() and (t[[1, 2, 3]] < w["end"].to_numpy()).all()
    codes, w = window_codes(np.array([0.0, 1.0, 2.0, 9.0, 10.0]), 5)
    assert codes.tolist() == [0, 0, 1, 2, 2] and len(w) == 3  # empty windows have no row
    with pytest.raises(ValueError, match="numbers"):
        window_codes(np.array([1.0, 2.0]), "day")
    assert window_rows(np.array([0, 1, 2, 3, 1]), (1, 3)).tolist() == [False, True, True, True, True]


def _pset(df: pd.DataFrame) -> cc.PredictionSet:
    return cc.load_predictions(df.to_csv(index=False).encode(), source="drift.csv")


def test_window_statistics_match_direct_computation():
    ps = _pset(_drifting())
    table, codes = window_table(ps, window="week")
    z = (ps.y - ps.dist.mean()) / ps.dist.std()
    for w in (0, 5, 11):
        rows = codes == w
        t = table[table["window"] == w].set_index("metric")
        assert t.loc["z_mean", "n"] == rows.sum()
        assert t.loc["z_mean", "value"] == pytest.approx(z[rows].mean(), rel=1e-12)
        assert t.loc["z_std", "value"] == pytest.approx(z[rows].std(ddof=1), rel=1e-12)
        lo, hi = ps.dist.take(rows).interval(0.9)
        cov = np.mean((ps.y[rows] >= lo) & (ps.y[rows] <= hi))
        assert t.loc["coverage_90", "value"] == pytest.approx(cov, rel=1e-12)
        assert t.loc["coverage_90", "lo"] < cov < t.loc["coverage_90", "hi"]
    # the drift: late windows (from day 56) leave the band, early ones sit in it
    cov = table[table["metric"] == "coverage_90"].sort_values("window")
    early, late = cov.iloc[:7], cov.iloc[9:]
    assert ((late["value"] < late["band_lo"]).all())
    assert ((early["value"] >= early["band_lo"]) & (early["value"] <= early["band_hi"])).mean() >= 0.7


def test_bands_hold_their_level_under_perfect_calibration():
    """Seeded simulation of calibrated Gaussian data, 200 data sets × 10 windows: each metric's value falls in its
    95% perfect-calibration band in 95% ± 3 binomial s.e. of the windows, and each 95% interval covers the true
    value (0.9, 0, 1) as often."""
    rng = np.random.default_rng(3)
    inside = {"coverage_90": [], "z_mean": [], "z_std": []}
    covers = {"coverage_90": [], "z_mean": [], "z_std": []}
    truth = {"coverage_90": 0.9, "z_mean": 0.0, "z_std": 1.0}
    for _ in range(200):
        n = 2000
        mu = rng.normal(size=n)
        sd = rng.uniform(0.5, 2, n)
        ps = cc.PredictionSet(task="regression", y=mu + sd * rng.standard_normal(n), dist=cc.Gaussian(mu, sd),
                              time=np.sort(rng.uniform(0, 1, n)))
        table, _ = window_table(ps, window=10)
        for k in inside:
            t = table[table["metric"] == k]
            inside[k] += ((t["value"] >= t["band_lo"]) & (t["value"] <= t["band_hi"])).tolist()
            covers[k] += ((t["lo"] <= truth[k]) & (truth[k] <= t["hi"])).tolist()
    m = 2000
    tol = 3 * np.sqrt(0.95 * 0.05 / m)
    for k in inside:
        # coverage is discrete: its band holds at least 95% (binomial quantiles), so test ≥ for it
        assert np.mean(inside[k]) >= 0.95 - tol, (k, np.mean(inside[k]))
        if k != "coverage_90":
            assert np.mean(inside[k]) <= 0.95 + tol, (k, np.mean(inside[k]))
        assert np.mean(covers[k]) >= 0.95 - tol - 0.01, (k, np.mean(covers[k]))


def test_classification_windows():
    rng = np.random.default_rng(1)
    n = 6000
    z = rng.normal(size=(n, 3)) * 2
    t = np.sort(rng.uniform(0, 100, n))
    temp = np.where(t > 50, 2.5, 1.0)  # the model gets over-confident in the second half
    p_true = np.exp(z / temp[:, None])
    p_true /= p_true.sum(axis=1, keepdims=True)
    labels = (np.cumsum(p_true, axis=1) < rng.random(n)[:, None]).sum(axis=1).clip(0, 2)
    probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    ps = cc.PredictionSet(task="classification", labels=labels, probs=probs, classes=["a", "b", "c"], time=t)
    table, codes = window_table(ps, window=4)
    gap = table[table["metric"] == "gap"].sort_values("window")
    assert (gap["value"].iloc[:2].abs() < gap["band_hi"].iloc[:2] * 1.5).all()
    assert (gap["value"].iloc[2:] > gap["band_hi"].iloc[2:]).all()
    conf = probs.max(axis=1)
    hit = probs.argmax(axis=1) == labels
    rows = codes == 3
    assert gap["value"].iloc[3] == pytest.approx(conf[rows].mean() - hit[rows].mean(), rel=1e-12)
    acc = table[(table["metric"] == "accuracy") & (table["window"] == 3)].iloc[0]
    assert acc["target"] == pytest.approx(conf[rows].mean(), rel=1e-12)


def test_ensemble_coverage_is_judged_against_its_finite_m_expectation():
    """8 members drawn with the target from the same law (calibrated): the "90%" interval of 8 members is
    [x_(1), x_(8)], whose coverage is 7/9 = 77.8%; the windows' target and band are that, as in the headline."""
    rng = np.random.default_rng(12)
    n, m = 8000, 8
    x = rng.normal(size=(n, 1)) + rng.standard_normal((n, m + 1))
    ps = cc.PredictionSet(task="regression", layout="sample", y=x[:, 0], dist=cc.SampleSet(x[:, 1:]),
                          time=np.sort(rng.uniform(0, 100, n)))
    table, _ = window_table(ps, window=4, coverage=0.9)
    cov = table[table["metric"] == "coverage_90"]
    np.testing.assert_allclose(cov["target"], 7 / 9)
    assert ((cov["band_lo"] <= cov["value"]) & (cov["value"] <= cov["band_hi"])).mean() >= 0.75
    assert (cov["band_hi"] < 0.85).all()  # a band around 0.9 would call this calibrated ensemble over-confident
    report = cc.diagnose(ps, n_resamples=20, n_simulations=50, diagrams=False, by_group=False)
    assert report.table().loc["coverage_90", "perfect"] == pytest.approx(7 / 9)
    fig = time_windows_figure(table, "coverage_90")
    target = [d for d in fig.data if d.meta["role"] == "target"][0]
    np.testing.assert_allclose(target.y, 7 / 9)


def test_figure_marks_windows_and_escapes_names():
    df = _drifting(n=3000)
    df["model"] = np.where(np.arange(3000) % 2 == 0, "<b>m</b>%{x}", "other")
    ps = _pset(df)
    table, _ = window_table(ps, window="week")
    fig = time_windows_figure(table, "coverage_90", picked=(2, 3))
    spec = json.loads(fig.to_json())
    windows = [d for d in spec["data"] if d["meta"]["role"] == "window"]
    assert len(windows) == 2 and {d["meta"]["name"] for d in windows} == {"<b>m</b>%{x}", "other"}
    assert "<b>m</b>" not in json.dumps([d.get("name") for d in spec["data"]])
    assert spec["layout"]["dragmode"] == "select"
    traces = [d for d in fig.data if d.meta["role"] == "window"]
    assert [int(c[0]) for c in traces[0].customdata] == sorted(set(table["window"]))
    sizes = np.asarray(traces[0].marker.size)
    assert (sizes[[2, 3]] > sizes[0]).all()  # the picked windows stand out


# ---------------------------------------------------------------------------------------------------------------
# pages
# ---------------------------------------------------------------------------------------------------------------
def _page_with(pset: cc.PredictionSet, page: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "pages" / page), default_timeout=TIMEOUT)
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = f"upload:{page}"
    at.session_state["pset_name"] = "drift.csv"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _pick(at: AppTest, prefix: str, windows: list[int]) -> AppTest:
    """What the chart's on_select would store for a box over ``windows``."""
    key = f"{prefix}_time_pick"
    ckey = at.session_state[key][0]
    at.session_state[key] = (ckey, tuple(windows))
    return at.run()


def _metric_cell(at: AppTest, label: str) -> float:
    """The value of metric ``label`` in the page's metric tables (first model)."""
    for d in at.dataframe:
        t = d.value
        if "metric" in t.columns and (t["metric"].astype(str).str.startswith(label)).any():
            row = t[t["metric"].astype(str).str.startswith(label)].iloc[0]
            return float(str(row["value"]).split()[0])
    raise AssertionError(f"no metric {label!r} in {[list(d.value.columns) for d in at.dataframe]}")


def test_regression_page_over_time_restricts_every_view():
    ps = _pset(_drifting())
    at = _page_with(ps, "regression.py")
    assert any(h.value == "Over time" for h in at.subheader)
    assert at.selectbox(key="reg_time_window").value == "week"
    assert any("No time range picked" in m.value for m in at.markdown)
    assert [c.key for c in at.get("plotly_chart") if c.key == "reg_time_chart"]
    at.selectbox(key="reg_time_window").set_value("month").run()
    at = _pick(at, "reg", [2])  # March: the drifted month
    assert not at.exception
    texts = [m.value for m in at.markdown]
    n_march = int(((ps.time >= np.datetime64("2026-03-01")) & (ps.time < np.datetime64("2026-04-01"))).sum())
    assert any(f"{n_march:,} rows" in t and "Time range 2026-03-01" in t for t in texts), texts
    # every view below is computed on those rows: the metric table's std z is March's ≈ 1.6, not the 1.2 of all
    z_std = _metric_cell(at, "std z")
    assert 1.5 < z_std < 1.7, z_std
    at.button(key="reg_time_clear").click().run()
    assert any("No time range picked" in m.value for m in at.markdown)


def test_classification_page_over_time():
    rng = np.random.default_rng(1)
    n = 3000
    z = rng.normal(size=(n, 3)) * 2
    probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    labels = probs.argmax(axis=1)
    flip = rng.random(n) < 0.3
    labels[flip] = rng.integers(0, 3, int(flip.sum()))
    t = np.datetime64("2026-01-01") + rng.integers(0, 60, n).astype("timedelta64[D]")
    ps = cc.PredictionSet(task="classification", source="c.csv", labels=labels, probs=probs, classes=["a", "b", "c"],
                          time=t.astype("datetime64[ns]"), row_number=np.arange(1, n + 1), n_read=n)
    at = _page_with(ps, "classification.py")
    assert any(h.value == "Over time" for h in at.subheader)
    at.selectbox(key="cls_time_metric").set_value("accuracy").run()
    at = _pick(at, "cls", [0, 1])
    assert any("Time range" in m.value for m in at.markdown)
    assert not at.exception


def test_pages_without_time_column_have_no_over_time_section():
    ps = _pset(_drifting(n=400).drop(columns="timestamp"))
    at = _page_with(ps, "regression.py")
    assert not any(h.value == "Over time" for h in at.subheader)


def test_a_box_over_the_chart_picks_the_windows_through_on_select():
    """The chart's selection event (points of the window trace, as plotly.js sends a box) drives the pick."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    ps = _pset(_drifting())
    at = _page_with(ps, "regression.py")
    chart = next(c for c in at.get("plotly_chart") if c.key == "reg_time_chart")
    curve = [d["meta"]["role"] for d in json.loads(chart.proto.spec)["data"]].index("window")
    # plotly.js sends a row of a 2-D customdata as a mapping {"0": …, "1": …} (seen in Chromium)
    points = [{"curve_number": curve, "point_index": i, "customdata": {str(j): v for j, v in enumerate([i, 5, 0, 1])}}
              for i in (9, 10)]
    states = at._tree.get_widget_states()
    event = {"selection": {"points": points, "point_indices": [9, 10], "box": [{"x": [0, 1], "y": [0, 1]}],
                           "lasso": []}}
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(event)))
    at._run(states)
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["reg_time_pick"][1] == (9, 10)
    assert any("(2 windows," in m.value for m in at.markdown)
