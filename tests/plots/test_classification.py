"""Tests of the classification figures and the selection helpers of calib_core.plots."""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import calib_core as cc
from calib_core import plots
from calib_core.base.predictions import PredictionSet
from calib_core.data import examples
from calib_core.plots import classification as pc


@pytest.fixture(scope="module")
def digits_report() -> cc.Report:
    return cc.diagnose(examples.digits_example(), n_resamples=0, n_simulations=0)


@pytest.fixture(scope="module")
def cancer_report() -> cc.Report:
    return cc.diagnose(examples.breast_cancer_example(), n_resamples=0, n_simulations=0)


def roles(fig) -> list[str]:
    return [(d.meta or {}).get("role", "") for d in fig.data]


# ------------------------------------------------------------------------------------------- Wilson
def test_wilson_interval_known_values_and_edges():
    lo, hi = pc.wilson_interval(np.array([0, 5, 10, 0]), np.array([10, 10, 10, 0]), level=0.95)
    z2 = stats.norm.ppf(0.975) ** 2
    assert lo[0] == 0 and hi[0] == pytest.approx(z2 / (10 + z2))  # k = 0: [0, z²/(n + z²)]
    assert lo[2] == pytest.approx(10 / (10 + z2)) and hi[2] == pytest.approx(1.0)  # k = n: mirror image
    assert lo[1] < 0.5 < hi[1] and hi[1] - 0.5 == pytest.approx(0.5 - lo[1])  # symmetric at p̂ = ½
    assert np.isnan(lo[3]) and np.isnan(hi[3])  # empty bin


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 400), p=st.floats(0.01, 0.99), seed=st.integers(0, 1000))
def test_wilson_interval_covers_about_its_level(n, p, seed):
    """Coverage is near the nominal level (Wilson is close to exact for n·p ≳ 5).

    The coverage is the exact binomial sum Σ_k P(K = k) 1[lo_k ≤ p ≤ hi_k] over all n + 1 outcomes, not a
    Monte-Carlo share of draws: the exact minimum over n ≤ 400, n·min(p, 1 − p) ≥ 10 is 0.854 (n = 24,
    p ≈ 0.583), so a 4,000-draw estimate (s.e. ≈ 0.006) could fall below 0.85 by chance."""
    k = np.random.default_rng(seed).binomial(n, p, size=4000)
    lo, hi = pc.wilson_interval(k, np.full(k.size, n), level=0.90)
    assert np.all((lo <= k / n + 1e-12) & (k / n <= hi + 1e-12))
    if n * min(p, 1 - p) >= 10:
        outcomes = np.arange(n + 1)
        lo_all, hi_all = pc.wilson_interval(outcomes, np.full(n + 1, n), level=0.90)
        covered = (lo_all <= p) & (p <= hi_all)
        assert 0.85 < stats.binom.pmf(outcomes, n, p)[covered].sum() < 0.95


# ------------------------------------------------------------------------------------------- reliability
def test_reliability_figure_single_model(digits_report):
    t = digits_report.diagrams[("model", cc.ALL)]["reliability"]
    fig = plots.reliability_figure(t)
    assert roles(fig) == ["reference", "bars", "gap", "column"]
    assert fig.layout.template.layout.paper_bgcolor == "white"
    bars, gap, column = fig.data[1], fig.data[2], fig.data[3]
    ok = t[t["count"] > 0]
    np.testing.assert_array_equal(np.asarray(bars.customdata), ok["bin"].to_numpy())
    np.testing.assert_allclose(np.asarray(bars.y), ok["accuracy"])
    np.testing.assert_allclose(np.asarray(bars.x), (ok["lower"] + ok["upper"]) / 2)
    # the gap bar spans accuracy ↔ mean confidence
    np.testing.assert_allclose(np.asarray(gap.base, dtype=float), np.minimum(ok["accuracy"], ok["confidence"]))
    top = np.asarray(gap.base, dtype=float) + np.asarray(gap.y, dtype=float)
    np.testing.assert_allclose(top, np.maximum(ok["accuracy"], ok["confidence"]))
    # over-confident digits model: its fullest bin (high confidence) is red
    assert gap.marker.line.color[-1] == pc.GAP_COLOR
    # error bars are the Wilson interval, hover shows counts and the interval
    lo, hi = pc.wilson_interval(ok["accuracy"] * ok["count"], ok["count"], 0.90)
    np.testing.assert_allclose(np.asarray(bars.error_y.array), hi - ok["accuracy"], atol=1e-12)
    assert f"n = {int(ok['count'].iloc[-1]):,}" in bars.text[-1] and "90% CI" in bars.text[-1]
    assert bars.selectedpoints is None
    # one clickable column per bin takes hover and selections for the bar and its gap together
    np.testing.assert_array_equal(np.asarray(column.customdata), ok["bin"].to_numpy())
    np.testing.assert_allclose(np.asarray(column.width, dtype=float), ok["upper"] - ok["lower"])
    assert list(column.text) == list(bars.text) and bars.hoverinfo == gap.hoverinfo == "skip"
    assert bars.unselected.marker.opacity == gap.unselected.marker.opacity == 1.0  # never dimmed on their own
    assert column.marker.color == pc.COLUMN_CLEAR and column.unselected.marker.color == pc.COLUMN_VEIL
    marked = plots.mark_selected(plots.reliability_figure(t), {"model": [int(ok["bin"].iloc[-1])]})
    assert list(marked.data[3].selectedpoints) == [len(ok) - 1]


def test_reliability_figure_several_models_one_colour_each(digits_report, cancer_report):
    tables = {
        "digits": digits_report.diagrams[("model", cc.ALL)]["reliability"],
        "cancer": cancer_report.diagrams[("model", cc.ALL)]["reliability"],
    }
    fig = plots.reliability_figure(tables, colors={"cancer": "#123456"}, selected={"cancer": [14]})
    lines = [d for d in fig.data if (d.meta or {}).get("role") == "bins"]
    assert [d.name for d in lines] == ["digits", "cancer"]
    assert lines[0].line.color != lines[1].line.color and lines[1].line.color == "#123456"
    # x = mean confidence of the bin, y = accuracy (a reliability curve)
    ok = tables["cancer"][tables["cancer"]["count"] > 0]
    np.testing.assert_allclose(np.asarray(lines[1].x), ok["confidence"])
    # the selection marks bin 14 of "cancer" and nothing of "digits"
    assert list(lines[0].selectedpoints) == []
    assert [int(np.asarray(lines[1].customdata)[i]) for i in list(lines[1].selectedpoints)] == [14]


def test_positive_class_axes(cancer_report):
    t = cancer_report.diagrams[("model", cc.ALL)]["reliability_positive"]
    fig = plots.reliability_figure(t, target="positive")
    assert "positive class" in fig.layout.xaxis.title.text and "positive class" in fig.layout.yaxis.title.text
    hist = plots.confidence_histogram_figure(t, target="positive")
    assert any("avg. predicted probability" in d.name for d in hist.data)
    assert "Predicted-probability histogram" in hist.layout.title.text  # not 'Confidence': bins of p(y = 1)
    top = plots.confidence_histogram_figure(cancer_report.diagrams[("model", cc.ALL)]["reliability"])
    assert "Confidence histogram" in top.layout.title.text


def test_confidence_histogram_lines_equal_the_report_metrics(digits_report):
    t = digits_report.diagrams[("model", cc.ALL)]["reliability"]
    fig = plots.confidence_histogram_figure(t, selected={"model": [13, 14]})
    bars = fig.data[0]
    assert bars.meta["role"] == "hist"
    assert np.asarray(bars.y).sum() == pytest.approx(100.0)
    np.testing.assert_array_equal(np.asarray(bars.customdata), t["bin"].to_numpy())
    assert sorted(np.asarray(bars.customdata)[list(bars.selectedpoints)].tolist()) == [13, 14]
    conf_line = next(d for d in fig.data if (d.meta or {}).get("role") == "conf_line")
    acc_line = next(d for d in fig.data if (d.meta or {}).get("role") == "acc_line")
    assert conf_line.x[0] == pytest.approx(digits_report.value("mean_confidence"), abs=1e-12)
    assert acc_line.x[0] == pytest.approx(digits_report.value("accuracy"), abs=1e-12)
    assert conf_line.x[0] > acc_line.x[0]  # over-confident


def test_confidence_histogram_several_models_grouped(digits_report, cancer_report):
    tables = {
        "digits": digits_report.diagrams[("model", cc.ALL)]["reliability"],
        "cancer": cancer_report.diagrams[("model", cc.ALL)]["reliability"],
    }
    fig = plots.confidence_histogram_figure(tables)
    assert fig.layout.barmode == "group"
    hist = [d for d in fig.data if d.meta["role"] == "hist"]
    assert [d.name for d in hist] == ["digits", "cancer"] and hist[0].marker.line.color != hist[1].marker.line.color
    assert sum(1 for d in fig.data if d.meta["role"] in ("conf_line", "acc_line")) == 4


def test_per_class_figure_and_summary(digits_report):
    per_class = digits_report.diagrams[("model", cc.ALL)]["per_class"]
    fig = plots.per_class_reliability_figure(per_class, class_names=[f"digit {k}" for k in range(10)])
    assert sum(1 for d in fig.data if (d.meta or {}).get("role") == "class") == 10
    titles = [a.text for a in fig.layout.annotations]
    assert len(titles) == 10 and titles[3].startswith("digit 3 · ECE ")
    summary = plots.per_class_summary(per_class)
    assert list(summary["class_code"]) == list(range(10))
    # the mean one-vs-rest ECE is the Report's class-wise ECE (same bins, same rows)
    assert summary["one-vs-rest ECE"].mean() == pytest.approx(digits_report.value("classwise_ece"), rel=1e-12)
    # frequencies of the classes sum to 1; mean predicted probabilities too
    assert summary["frequency"].sum() == pytest.approx(1.0)
    assert summary["mean predicted probability"].sum() == pytest.approx(1.0)
    few = plots.per_class_reliability_figure(per_class, max_classes=4)
    assert sum(1 for d in few.data if (d.meta or {}).get("role") == "class") == 4
    with pytest.raises(ValueError, match="lacks column"):
        plots.per_class_reliability_figure(per_class.drop(columns="accuracy"))


def test_reliability_figure_missing_column_is_named(digits_report):
    t = digits_report.diagrams[("model", cc.ALL)]["reliability"]
    with pytest.raises(ValueError, match="gap"):
        plots.reliability_figure(t.drop(columns="gap"))


# ------------------------------------------------------------------------------------------- selection marks
def test_mark_selected_and_figure_token():
    report = cc.diagnose(examples.levi_synthetic(n=1500), n_resamples=0, n_simulations=0)
    tables = {m: report.diagrams[(m, cc.ALL)]["levi_bins"] for m in report.models}
    fig = plots.levi_figure(tables)
    token = plots.figure_token(fig)
    assert token == plots.figure_token(plots.levi_figure(tables))  # deterministic
    plots.mark_selected(fig, {"random sigma": (2, 5)})
    bins_traces = [d for d in fig.data if d.meta.get("role") == "bins"]
    assert list(bins_traces[0].selectedpoints) == []  # 'true sigma': nothing selected, dimmed
    cd = np.asarray(bins_traces[1].customdata)
    assert sorted(cd[list(bins_traces[1].selectedpoints)].tolist()) == [2, 5]
    assert plots.figure_token(fig) != token  # a marked figure is a different widget for Streamlit
    plots.mark_selected(fig, {})
    assert all(d.selectedpoints is None for d in bins_traces) and plots.figure_token(fig) == token
    # the builder's own selected= gives the same marks
    direct = plots.levi_figure(tables, selected={"random sigma": (2, 5)})
    assert sorted(np.asarray(direct.data[2].customdata)[list(direct.data[2].selectedpoints)].tolist()) == [2, 5]


def test_overlay_styles_for_selections():
    report = cc.diagnose(examples.diabetes_example(), n_resamples=0, n_simulations=0)
    d = report.diagrams[("model", cc.ALL)]
    curves = {"model": d["calibration_curve"], "model · selected": d["calibration_curve"]}
    fig = plots.calibration_curve_figure(curves, dashes={"model · selected": "dash"}, bands={"model · selected"})
    assert [r for r in roles(fig)] == ["reference", "curve", "band_low", "band_high", "curve"]
    assert fig.data[1].line.dash == "solid" and fig.data[4].line.dash == "dash"
    pit = plots.pit_histogram_figure({"a": d["pit_histogram"], "b": d["pit_histogram"]}, dashes={"b": "dot"})
    assert [t.line.dash for t in pit.data if t.meta.get("role") == "steps"] == ["solid", "dot"]
    z = plots.z_histogram_figure({"a": d["z_histogram"], "b": d["z_histogram"]}, dashes={"b": "dash"})
    assert [t.line.dash for t in z.data if t.meta.get("role") == "steps"] == ["solid", "dash"]


# ------------------------------------------------------------------------------------------- payload
@pytest.mark.slow
def test_figure_payload_stays_small_at_a_million_rows():
    """Figures are built from diagram tables: the JSON sent to the browser is O(bins), < 1 MB at N = 10⁶."""
    rng = np.random.default_rng(0)
    n = 1_000_000
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    reg = PredictionSet(task="regression", y=mu + 1.3 * sd * rng.normal(size=n), dist=cc.Gaussian(mu, sd),
                        point=mu, row_number=np.arange(1, n + 1), n_read=n)
    d = cc.diagnose(reg, n_resamples=0, n_simulations=0).diagrams[("model", cc.ALL)]
    sizes = {
        "levi": len(pio.to_json(plots.levi_figure(d["levi_bins"]))),
        "kuleshov": len(pio.to_json(plots.calibration_curve_figure(d["calibration_curve"]))),
        "pit": len(pio.to_json(plots.pit_histogram_figure(d["pit_histogram"]))),
        "z": len(pio.to_json(plots.z_histogram_figure(d["z_histogram"]))),
        "qq": len(pio.to_json(plots.qq_figure(d["qq"]))),
    }
    logits = 2.0 * rng.normal(size=(n, 3))
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    labels = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    cls = PredictionSet(task="classification", labels=labels, probs=p, logits=logits,
                        row_number=np.arange(1, n + 1), n_read=n)
    c = cc.diagnose(cls, n_resamples=0, n_simulations=0).diagrams[("model", cc.ALL)]
    sizes["reliability"] = len(pio.to_json(plots.reliability_figure(c["reliability"])))
    sizes["histogram"] = len(pio.to_json(plots.confidence_histogram_figure(c["reliability"])))
    sizes["per_class"] = len(pio.to_json(plots.per_class_reliability_figure(c["per_class"])))
    assert max(sizes.values()) < 100_000, sizes  # ~10–25 kB each; the 1 MB budget is met 40× over
    assert json.loads(pio.to_json(plots.reliability_figure(c["reliability"])))["data"][1]["meta"]["role"] == "bars"
