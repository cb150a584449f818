"""Tests of the Plotly figure builders (calib_core.plots) on small synthetic diagram tables."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core import plots
from calib_core.base.regression import SampleSet
from calib_core.base.report import ALL, METRIC_COLUMNS
from calib_core.diagrams.regression import rank_histogram_table
from calib_core.metrics.regression import RegressionRows
from calib_core.plots import regression as pr

# --------------------------------------------------------------------------- synthetic tables


def calib_table(observed_shift: float = 0.0, n_levels: int = 101) -> pd.DataFrame:
    level = np.linspace(0.0, 1.0, n_levels)
    half = 1.96 * np.sqrt(level * (1 - level) / 500)
    return pd.DataFrame(
        {
            "level": level,
            "observed": np.clip(level + observed_shift * np.sin(np.pi * level), 0, 1),
            "band_low": np.clip(level - half, 0, 1),
            "band_high": np.clip(level + half, 0, 1),
        }
    )


def levi_table(n_bins: int = 15, scale: float = 1.3, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    edges = np.sort(rng.uniform(0.1, 2.0, n_bins + 1))
    rmv = 0.5 * (edges[:-1] + edges[1:])
    rmse = scale * rmv * rng.uniform(0.9, 1.1, n_bins)
    return pd.DataFrame(
        {
            "bin": np.arange(n_bins),
            "count": rng.integers(60, 70, n_bins),
            "sigma_low": edges[:-1],
            "sigma_high": edges[1:],
            "rmv": rmv,
            "rmse": rmse,
            "rmse_low": rmse * 0.85,
            "rmse_high": rmse * 1.2,
        }
    )


def hist_table(lo: float, hi: float, n_bins: int, seed: int = 0, normal: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    edges = np.linspace(lo, hi, n_bins + 1)
    count = rng.integers(0, 50, n_bins)
    t = pd.DataFrame(
        {"left": edges[:-1], "right": edges[1:], "count": count, "density": count / (count.sum() * np.diff(edges))}
    )
    if normal:
        c = 0.5 * (edges[:-1] + edges[1:])
        t["normal_density"] = np.exp(-0.5 * c**2) / np.sqrt(2 * np.pi)
    return t


def qq_table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    from scipy import stats

    p = (np.arange(n) + 0.5) / n
    z = np.sort(np.random.default_rng(seed).standard_normal(n) * 1.5)
    return pd.DataFrame({"theoretical": stats.norm.ppf(p), "observed": z})


def intervals_table(factor: float = 0.8) -> pd.DataFrame:
    cov = np.array([0.5, 0.8, 0.9, 0.95, 0.99])
    return pd.DataFrame(
        {"coverage": cov, "observed": cov * factor, "mean_width": 2 * cov, "interval_score": 3 + cov}
    )


def by_meta(fig: go.Figure, role: str) -> list:
    return [t for t in fig.data if (t.meta or {}).get("role") == role]


def payload(fig: go.Figure) -> int:
    return len(fig.to_json())


# --------------------------------------------------------------------------- common properties

BUILDERS = [
    (plots.calibration_curve_figure, lambda: calib_table(0.1)),
    (plots.levi_figure, levi_table),
    (plots.pit_histogram_figure, lambda: hist_table(0, 1, 20)),
    (plots.z_histogram_figure, lambda: hist_table(-4, 4, 40, normal=True)),
    (plots.qq_figure, qq_table),
    (plots.intervals_figure, intervals_table),
]


@pytest.mark.parametrize("builder,make", BUILDERS, ids=[b.__name__ for b, _ in BUILDERS])
def test_explicit_template_survives_streamlit_import(builder, make):
    import streamlit  # noqa: F401  (sets plotly.io.templates.default = "streamlit")

    assert pio.templates.default == "streamlit"
    fig = builder(make())
    assert isinstance(fig, go.Figure)
    assert fig.layout.template == pio.templates["plotly_white"]
    spec = json.loads(fig.to_json())
    assert "#000001" not in json.dumps(spec["layout"]["template"])  # Streamlit's placeholder colours


@pytest.mark.parametrize("builder,make", BUILDERS, ids=[b.__name__ for b, _ in BUILDERS])
def test_one_colour_per_model_and_custom_colours(builder, make):
    tables = {"alpha": make(), "beta": make(), "gamma": make()}
    fig = builder(tables)
    names = [t.meta["name"] for t in fig.data if t.meta and "name" in t.meta]
    assert set(names) == set(tables)
    colours = {}
    for t in fig.data:
        if t.meta and t.meta.get("role") in ("curve", "bins", "steps", "points"):
            colours[t.meta["name"]] = t.line.color if t.mode and "lines" in t.mode else t.marker.color
    assert colours == plots.model_colors(list(tables))
    assert len(set(colours.values())) == 3
    fig2 = builder(tables, colors={"beta": "#123456"})
    main = [t for t in fig2.data if t.meta and t.meta.get("name") == "beta" and t.meta["role"] != "band_low"]
    used = {getattr(t.line, "color", None) for t in main} | {getattr(t.marker, "color", None) for t in main}
    assert "#123456" in used
    assert fig2.layout.showlegend


@pytest.mark.parametrize("builder,make", BUILDERS, ids=[b.__name__ for b, _ in BUILDERS])
def test_missing_column_is_named(builder, make):
    table = make()
    bad = table.drop(columns=table.columns[1])
    with pytest.raises(ValueError, match=str(table.columns[1])):
        builder(bad)
    with pytest.raises(ValueError, match="no diagram table"):
        builder({})


@pytest.mark.parametrize("builder,make", BUILDERS, ids=[b.__name__ for b, _ in BUILDERS])
def test_payload_is_small(builder, make):
    # the figures draw O(bins) tables; even with the inlined template they stay a few tens of kB
    assert payload(builder(make())) < 40_000


# --------------------------------------------------------------------------- calibration curve


def test_calibration_curve_traces():
    t = calib_table(0.15)
    fig = plots.calibration_curve_figure(t, title="K")
    ref = by_meta(fig, "reference")
    assert len(ref) == 1 and list(ref[0].x) == [0.0, 1.0] and list(ref[0].y) == [0.0, 1.0]
    (lo,) = by_meta(fig, "band_low")
    (hi,) = by_meta(fig, "band_high")
    (curve,) = by_meta(fig, "curve")
    # the band is a ribbon: the upper edge fills down to the lower edge trace, which comes right before it
    assert hi.fill == "tonexty" and fig.data.index(hi) == fig.data.index(lo) + 1
    np.testing.assert_allclose(lo.y, t["band_low"])
    np.testing.assert_allclose(hi.y, t["band_high"])
    np.testing.assert_allclose(curve.x, t["level"])
    np.testing.assert_allclose(curve.y, t["observed"])
    np.testing.assert_allclose(np.asarray(curve.customdata), t[["band_low", "band_high"]].to_numpy())
    assert "95% band" in curve.hovertemplate
    assert fig.layout.title.text == "K"
    assert tuple(fig.layout.xaxis.range) == (0, 1) and tuple(fig.layout.yaxis.range) == (0, 1)
    assert fig.layout.yaxis.scaleanchor == "x"


# --------------------------------------------------------------------------- Levi


def test_levi_figure_error_bars_customdata_hover():
    t = levi_table(12, scale=1.5)
    fig = plots.levi_figure(t)
    (pts,) = by_meta(fig, "bins")
    np.testing.assert_allclose(pts.x, t["rmv"])
    np.testing.assert_allclose(pts.y, t["rmse"])
    np.testing.assert_array_equal(np.asarray(pts.customdata), t["bin"].to_numpy())
    assert np.asarray(pts.customdata).dtype.kind == "i"
    np.testing.assert_allclose(pts.error_y.array, t["rmse_high"] - t["rmse"])
    np.testing.assert_allclose(pts.error_y.arrayminus, t["rmse"] - t["rmse_low"])
    assert pts.error_y.symmetric is False
    for text, count, b in zip(pts.text, t["count"], t["bin"]):
        assert f"n = {count:,}" in text and text.startswith(f"bin {b + 1}:")  # numbered from 1
    (ref,) = by_meta(fig, "reference")
    lo, top = ref.x
    assert ref.x == ref.y
    values = t[["rmv", "rmse", "rmse_low", "rmse_high"]].to_numpy()
    assert lo <= values.min() and top >= values.max()
    assert tuple(fig.layout.xaxis.range) == tuple(fig.layout.yaxis.range) == (lo, top)
    # the bin index survives the JSON round trip the browser sees (selections read customdata)
    spec = json.loads(fig.to_json())
    trace = next(d for d in spec["data"] if d.get("meta", {}).get("role") == "bins")
    cd = trace["customdata"]
    decoded = (
        np.frombuffer(__import__("base64").b64decode(cd["bdata"]), dtype=cd["dtype"]) if isinstance(cd, dict) else cd
    )
    np.testing.assert_array_equal(decoded, t["bin"].to_numpy())


def test_levi_multi_model_curve_numbers_identify_models():
    fig = plots.levi_figure({"a": levi_table(seed=1), "b": levi_table(seed=2)})
    roles = [(t.meta or {}).get("role") for t in fig.data]
    assert roles == ["reference", "bins", "bins"]
    assert [fig.data[i].meta["name"] for i in (1, 2)] == ["a", "b"]


def test_levi_axes_zoom_to_data_far_from_zero():
    t = levi_table(10)
    t[["rmv", "rmse", "rmse_low", "rmse_high", "sigma_low", "sigma_high"]] += 100.0
    fig = plots.levi_figure(t)
    lo, top = by_meta(fig, "reference")[0].x
    assert 90 < lo < t["rmse_low"].min() and top > t["rmse_high"].max()
    near = plots.levi_figure(levi_table(10))
    assert by_meta(near, "reference")[0].x[0] == 0.0  # data near the origin: axes start at 0


def _share_of_axis(fig: go.Figure, values: np.ndarray) -> float:
    """Width of ``values`` as a share of the x-axis range (in the axis's own units: log10 for a log axis)."""
    lo, hi = fig.layout.xaxis.range
    v = np.log10(values) if fig.layout.xaxis.type == "log" else values
    return float((v.max() - v.min()) / (hi - lo))


def test_levi_log_axes_spread_bins_a_far_bin_squeezes():
    # 14 bins between RMV 0.1 and 2 and one bin at 50 (the QM9 case): on linear axes the 14 use < 3% of the
    # width, on log axes more than 30%; the identity line still spans the shared range of both axes
    t = levi_table(15)
    t.loc[14, ["rmv", "rmse", "rmse_low", "rmse_high", "sigma_low", "sigma_high"]] = [50, 55, 45, 65, 40, 60]
    close = t["rmv"].to_numpy()[:14]
    linear = plots.levi_figure(t)
    log = plots.levi_figure(t, log_axes=True)
    assert linear.layout.xaxis.type in (None, "linear") and _share_of_axis(linear, close) < 0.03
    assert log.layout.xaxis.type == log.layout.yaxis.type == "log"
    assert _share_of_axis(log, close) > 0.3
    lo, hi = by_meta(log, "reference")[0].x
    assert tuple(log.layout.xaxis.range) == tuple(log.layout.yaxis.range)
    np.testing.assert_allclose(np.log10([lo, hi]), log.layout.xaxis.range)
    values = t[["rmv", "rmse", "rmse_low", "rmse_high"]].to_numpy()
    assert lo < values.min() and hi > values.max()
    assert log.layout.yaxis.scaleanchor == "x"  # RMSE = RMV stays the 45° diagonal


def test_levi_log_axes_ignore_zero_and_nan():
    t = levi_table(6)
    t.loc[0, "rmse_low"] = 0.0  # an interval reaching 0 has no logarithm
    t.loc[1, ["rmse_low", "rmse_high"]] = np.nan
    lo, hi = plots.levi_figure(t, log_axes=True).layout.xaxis.range
    positive = t[["rmv", "rmse", "rmse_low", "rmse_high"]].to_numpy().ravel()
    positive = positive[np.isfinite(positive) & (positive > 0)]
    assert np.isfinite([lo, hi]).all() and lo < np.log10(positive.min()) and hi > np.log10(positive.max())


@pytest.mark.parametrize("builder,make", BUILDERS, ids=[b.__name__ for b, _ in BUILDERS])
def test_titles_sit_below_the_toolbar(builder, make):
    """Plotly's toolbar shows in the top-right corner of the figure on hover: the title sits on the plotting
    area (paper coordinates) and the top margin leaves the toolbar its own strip above it."""
    from calib_core.plots._style import MODEBAR_HEIGHT, TITLE_LINE

    fig = builder(make(), title="A long title that runs under the toolbar of a half-width chart")
    title = fig.layout.title
    assert title.yref == "paper" and title.y == 1 and title.yanchor == "bottom"
    assert fig.layout.margin.t >= MODEBAR_HEIGHT + TITLE_LINE + title.pad.b
    untitled = builder(make(), title=None)
    assert untitled.layout.margin.t >= MODEBAR_HEIGHT  # nor does it cover the data


def test_levi_handles_nan_interval():
    t = levi_table(5)
    t.loc[2, ["rmse_low", "rmse_high"]] = np.nan  # e.g. CIs switched off
    fig = plots.levi_figure(t)
    assert np.isfinite(by_meta(fig, "reference")[0].x[1])


# --------------------------------------------------------------------------- histograms


def test_pit_histogram_single_is_bars_with_uniform_reference():
    t = hist_table(0, 1, 20)
    fig = plots.pit_histogram_figure(t)
    (bars,) = by_meta(fig, "bars")
    assert isinstance(bars, go.Bar)
    np.testing.assert_allclose(bars.x, (t["left"] + t["right"]) / 2)
    np.testing.assert_allclose(bars.width, t["right"] - t["left"])
    np.testing.assert_allclose(bars.y, t["density"])
    np.testing.assert_array_equal(np.asarray(bars.customdata), np.arange(20))
    assert all(f"n = {c:,}" in s for s, c in zip(bars.text, t["count"]))
    (ref,) = by_meta(fig, "reference")
    assert list(ref.y) == [1.0, 1.0] and list(ref.x) == [0.0, 1.0]


def test_pit_histogram_overlay_is_step_lines():
    fig = plots.pit_histogram_figure({"a": hist_table(0, 1, 10, 1), "b": hist_table(0, 1, 10, 2)})
    steps = by_meta(fig, "steps")
    assert len(steps) == 2 and not by_meta(fig, "bars")
    for s in steps:
        assert s.line.shape == "hv" and len(s.x) == 11 and s.x[0] == 0.0 and s.x[-1] == 1.0


def test_z_histogram_normal_reference_is_a_density():
    t = hist_table(-5, 5, 40, normal=True)
    fig = plots.z_histogram_figure(t)
    (ref,) = by_meta(fig, "reference")
    assert ref.x[0] == -5 and ref.x[-1] == 5
    assert np.trapezoid(ref.y, ref.x) == pytest.approx(1.0, abs=1e-3)
    (bars,) = by_meta(fig, "bars")
    assert "N(0,1)" in bars.text[0]


def test_histogram_with_infinite_outer_edges():
    t = hist_table(-4, 4, 8, normal=True)
    t.loc[0, "left"] = -np.inf
    t.loc[7, "right"] = np.inf
    fig = plots.z_histogram_figure(t)
    (bars,) = by_meta(fig, "bars")
    assert np.all(np.isfinite(bars.x)) and np.all(np.isfinite(bars.width))
    np.testing.assert_allclose(bars.width, 1.0)


# --------------------------------------------------------------------------- Q-Q and intervals


def test_qq_figure_identity_and_webgl_switch():
    t = qq_table(300)
    fig = plots.qq_figure(t)
    (ref,) = by_meta(fig, "reference")
    (pts,) = by_meta(fig, "points")
    assert isinstance(pts, go.Scatter)
    both = np.concatenate([t["theoretical"], t["observed"]])
    assert ref.x[0] == pytest.approx(both.min()) and ref.x[1] == pytest.approx(both.max())
    big = plots.qq_figure(qq_table(3000))
    assert isinstance(by_meta(big, "points")[0], go.Scattergl)


def test_intervals_figure_customdata_and_axes():
    t = intervals_table(0.7)
    fig = plots.intervals_figure(t)
    (pts,) = by_meta(fig, "points")
    np.testing.assert_allclose(pts.x, t["coverage"])
    np.testing.assert_allclose(pts.y, t["observed"])
    np.testing.assert_allclose(np.asarray(pts.customdata), t[["mean_width", "interval_score"]].to_numpy())
    lo = fig.layout.xaxis.range[0]
    assert lo <= t["observed"].min() and fig.layout.xaxis.range[1] == 1.0


# --------------------------------------------------------------------------- property test


@settings(max_examples=40, deadline=None)
@given(
    n_bins=st.integers(1, 40),
    n_models=st.integers(1, 4),
    seed=st.integers(0, 10_000),
)
def test_levi_and_histogram_builders_any_shape(n_bins, n_models, seed):
    tables = {f"m{i}": levi_table(n_bins, seed=seed + i) for i in range(n_models)}
    fig = plots.levi_figure(tables)
    pts = by_meta(fig, "bins")
    assert len(pts) == n_models
    for p, t in zip(pts, tables.values()):
        assert len(p.x) == len(p.y) == len(p.customdata) == len(p.text) == n_bins
        np.testing.assert_array_equal(np.asarray(p.customdata), np.arange(n_bins))
        np.testing.assert_allclose(p.y, t["rmse"])
    hists = {f"m{i}": hist_table(0, 1, n_bins, seed=seed + i) for i in range(n_models)}
    fig = plots.pit_histogram_figure(hists)
    traces = by_meta(fig, "bars" if n_models == 1 else "steps")
    assert len(traces) == n_models
    assert payload(fig) < 40_000


# --------------------------------------------------------------------------- display table


def test_metric_display_table_verdicts_and_labels():
    # model, group, metric, value, CI, perfect (mean, low, high) + kind, family, p-value, its s.e., flag
    def row(model, group, metric, value, kind, family="", p=np.nan, se=np.nan, flag=False):
        rec = dict.fromkeys(METRIC_COLUMNS, np.nan)
        rec.update(model=model, group=group, metric=metric, value=value, ci_low=value - 0.1, ci_high=value + 0.1,
                   kind=kind, family=family, interval="", test="", note="", p_value=p, p_mc_se=se, flag=flag)
        return rec

    rows = [
        row("m", ALL, "ence", 0.5, "calibration statistic", "primary", 1e-8, 0.0, True),  # rejected by Holm
        row("m", ALL, "nll", 1.0, "proper score"),  # a reference, no test
        row("m", ALL, "sharpness", 2.0, "descriptive"),  # no verdict at all
        row("m", ALL, "coverage_90", 0.8, "calibration statistic", "primary", 0.2, 0.0, False),  # not significant
        row("m", ALL, "calibration_rmse", 0.1, "calibration statistic", "secondary", 0.01, 0.002, True),  # BH flag
        row("m", "g1", "ence", 0.2, "calibration statistic", "primary", 0.5),
        row("other", ALL, "ence", 0.1, "calibration statistic", "primary", 0.5),
    ]
    metrics = pd.DataFrame(rows, columns=METRIC_COLUMNS)
    t = plots.metric_display_table(metrics, model="m")
    assert list(t["metric"]) == ["ence", "nll", "sharpness", "coverage_90", "calibration_rmse"]
    assert list(t["verdict"]) == ["rejected (Holm)", "", "", "not significant", "flagged (BH)"]
    assert list(t["p_text"]) == ["< 1e-6", "–", "–", "0.20", "0.01 ± 0.002"]
    # table cells: the Monte-Carlo s.e. only where p ± 2 s.e. reaches across 5%
    assert plots.p_value_cell(0.01, 0.002) == "0.01"
    assert plots.p_value_cell(0.049, 0.005) == "0.049 ± 0.005"
    assert plots.p_value_cell(1 / 2001, 1 / 2001) == "5.0e-4"  # the Monte-Carlo floor: far from 5%
    assert plots.p_value_cell(float("nan"), float("nan")) == "–" and plots.p_value_cell(1e-8, 0.0) == "< 1e-6"
    assert list(t["label"]) == ["ENCE (Levi)", "NLL", "sharpness √mean σ²", "coverage 90%", "calibration RMSE"]
    assert len(plots.metric_display_table(metrics, model=None)) == 6
    assert len(plots.metric_display_table(metrics, model="m", group=None)) == 6
    assert plots.metric_label("interval_score_95") == "interval score 95%"
    assert plots.metric_label("unknown_metric") == "unknown_metric"


def test_model_colors_cycle():
    names = [f"m{i}" for i in range(12)]
    c = plots.model_colors(names)
    assert c["m0"] == pr.PALETTE[0] and c["m10"] == pr.PALETTE[0] and c["m9"] == pr.PALETTE[9]


# --------------------------------------------------------------------------- end to end with cc.diagnose


def test_figures_from_diagnose_do_not_grow_with_n():
    import calib_core as cc
    from calib_core.data import examples

    if not hasattr(cc, "diagnose"):
        pytest.skip("cc.diagnose not available yet")
    sizes = {}
    for n in (400, 40_000):
        report = cc.diagnose(examples.levi_synthetic(n, seed=1), n_resamples=10, n_simulations=0)
        colors = plots.model_colors(report.models)
        figs = {}
        for name, builder in [
            ("calibration_curve", plots.calibration_curve_figure),
            ("levi_bins", plots.levi_figure),
            ("pit_histogram", plots.pit_histogram_figure),
            ("z_histogram", plots.z_histogram_figure),
            ("qq", plots.qq_figure),
            ("intervals", plots.intervals_figure),
        ]:
            figs[name] = builder({m: report.diagrams[(m, ALL)][name] for m in report.models}, colors=colors)
        sizes[n] = {k: payload(f) for k, f in figs.items()}
        assert len(by_meta(figs["levi_bins"], "bins")) == 2
    for name in sizes[400]:
        # at 100x the rows the JSON may only change by a little (number formatting, Q-Q points capped)
        assert sizes[40_000][name] < 1.5 * sizes[400][name] + 5_000, (name, sizes)
        assert sizes[40_000][name] < 60_000


def test_rank_histogram_figure_draws_count_over_expected_with_the_calibrated_range():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((900, 9))
    table = rank_histogram_table(RegressionRows(x[:, 0], SampleSet(x[:, 1:])))
    fig = plots.rank_histogram_figure(table)
    bars = [t for t in fig.data if t.meta.get("role") == "histogram"]
    assert len(bars) == 1 and bars[0].type == "bar"
    np.testing.assert_allclose(bars[0].y, table["count"] / 100.0)
    two = plots.rank_histogram_figure({"a": table, "b": table})
    assert [t.type for t in two.data if t.meta.get("role") == "histogram"] == ["scatter", "scatter"]
