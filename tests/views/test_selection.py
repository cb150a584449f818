"""Tests of views.selection: Plotly selection events → bins → row masks, without Streamlit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core import plots
from calib_core.data import examples
from calib_core.diagnosis.classification import classification_rows
from calib_core.diagrams.bin_rows import confidence_row_bins, rows_in_bins, sigma_bins
from calib_core.diagrams.classification import reliability_of
from calib_core.metrics.regression import RegressionRows
from views.selection import (
    BinSelection,
    bin_runs,
    class_breakdown,
    describe_selection,
    event_points,
    format_bins,
    is_area_selection,
    note_event,
    note_reset,
    selected_bins,
    sync_chart,
)


def event(*points: dict) -> dict:
    """A selection event as Streamlit stores it in session state."""
    return {"selection": {"points": list(points), "point_indices": [], "box": [], "lasso": []}}


META = [{"role": "reference"}, {"name": "a", "role": "bins"}, {"name": "b", "role": "bins"}, None]


class AttrState:
    """Mimics Streamlit's PlotlyState: attribute access only."""

    def __init__(self, points):
        self.selection = type("Sel", (), {"points": points})()


# ------------------------------------------------------------------------------------------- events
def test_event_points_accepts_every_shape():
    pts = [{"curve_number": 1, "customdata": 3}]
    assert event_points(None) == []
    assert event_points(event(*pts)) == pts
    assert event_points(event(*pts)["selection"]) == pts
    assert event_points(AttrState(pts)) == pts
    assert event_points({"selection": {"points": []}}) == []


def test_selected_bins_groups_by_trace_name_and_ignores_decorations():
    ev = event(
        {"curve_number": 1, "point_index": 0, "customdata": 4},
        {"curve_number": 1, "point_index": 2, "customdata": 2},
        {"curve_number": 2, "point_index": 5, "customdata": 9},
        {"curve_number": 0, "point_index": 0},  # the identity line: no bin
        {"curve_number": 3, "customdata": 1},  # a trace without meta
        {"curve_number": 7, "customdata": 1},  # unknown trace
        {"curve_number": 1, "customdata": [4, 0.5]},  # array customdata: first element is the bin
    )
    assert selected_bins(ev, META) == {"a": (2, 4), "b": (9,)}
    assert selected_bins(event(), META) == {}
    # histogram traces report bin_number instead of customdata
    assert selected_bins(event({"curve_number": 0, "bin_number": 6}), [{"name": "m", "role": "hist"}]) == {"m": (6,)}
    # roles can be restricted
    assert selected_bins(ev, META, roles=("bars",)) == {}


def test_shift_click_and_box_events_are_just_more_points():
    click = event({"curve_number": 1, "customdata": 3})
    shift = event({"curve_number": 1, "customdata": 3}, {"curve_number": 1, "customdata": 6})
    box = {"selection": {"points": [{"curve_number": 2, "customdata": b} for b in (1, 2, 3)],
                         "box": [{"x": [0, 1], "y": [0, 1]}], "lasso": []}}
    assert selected_bins(click, META) == {"a": (3,)}
    assert selected_bins(shift, META) == {"a": (3, 6)}
    assert selected_bins(box, META) == {"b": (1, 2, 3)}


def test_selection_from_a_real_levi_figure_event():
    """The trace metadata of the figure the page draws decides which model a point belongs to."""
    report = cc.diagnose(examples.levi_synthetic(n=2000), n_resamples=0, n_simulations=0)
    tables = {m: report.diagrams[(m, cc.ALL)]["levi_bins"] for m in report.models}
    fig = plots.levi_figure(tables)
    meta = [d.meta for d in fig.data]
    curve = next(i for i, m in enumerate(meta) if m and m.get("name") == "random sigma")
    cd = np.asarray(fig.data[curve].customdata)
    ev = event(*({"curve_number": curve, "point_index": int(i), "customdata": int(cd[i])} for i in (0, 3)))
    assert selected_bins(ev, meta) == {"random sigma": (int(cd[0]), int(cd[3]))}


# ------------------------------------------------------------------------------------------- bins of rows
@pytest.mark.parametrize("binning", ["count", "width"])
def test_sigma_bins_match_the_diagram_bins(binning):
    pset = examples.levi_synthetic(n=3000, seed=3)
    report = cc.diagnose(pset, n_bins=12, binning=binning, n_resamples=0, n_simulations=0)
    rb = sigma_bins(pset.dist.std(), 12, binning, group=pset.model)
    for model in pset.models():
        m = pset.model == model
        rows = RegressionRows(pset.y[m], pset.dist.take(m))
        np.testing.assert_array_equal(rb[m], rows.sigma_bins(12, binning))
        table = report.diagrams[(model, cc.ALL)]["levi_bins"]
        counts = np.bincount(rb[m], minlength=12)
        np.testing.assert_array_equal(counts[table["bin"].to_numpy()], table["count"].to_numpy())
        # selecting bins selects exactly the rows those bins count
        chosen = tuple(table["bin"].to_numpy()[[0, 2, -1]])
        mask = rows_in_bins(rb, {model: chosen}, group=pset.model)
        assert mask.sum() == table.set_index("bin").loc[list(chosen), "count"].sum()
        assert np.all(pset.model[mask] == model)


def test_sigma_bins_reject_unknown_binning():
    with pytest.raises(ValueError, match="binning"):
        sigma_bins(np.ones(3), 2, "quantile")


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_confidence_row_bins_match_the_reliability_table(strategy):
    pset = examples.digits_example()
    rows = classification_rows(pset, n_bins=10, strategy=strategy)
    rb = confidence_row_bins(pset.probs.max(axis=1), 10, strategy)
    np.testing.assert_array_equal(rb, rows.bin_index)
    table = reliability_of(rows)
    np.testing.assert_array_equal(np.bincount(rb, minlength=10), table["count"].to_numpy())


def test_selected_rows_recompute_different_metrics():
    """The whole linked-view path: event → bins → rows → cc.diagnose on those rows."""
    pset = examples.levi_synthetic(n=4000, seed=1).take(np.r_[0:4000])  # the 'true sigma' model only
    report = cc.diagnose(pset, n_resamples=0, n_simulations=0)
    fig = plots.levi_figure({"true sigma": report.diagrams[("true sigma", cc.ALL)]["levi_bins"]})
    meta = [d.meta for d in fig.data]
    curve = next(i for i, m in enumerate(meta) if m and m.get("role") == "bins")
    ev = event(*({"curve_number": curve, "customdata": b} for b in (13, 14)))
    bins = selected_bins(ev, meta)
    assert bins == {"true sigma": (13, 14)}
    rb = sigma_bins(pset.dist.std(), 15, "count", group=pset.model)
    mask = rows_in_bins(rb, bins, group=pset.model)
    assert mask.sum() == pytest.approx(4000 * 2 / 15, abs=2)
    sub = cc.diagnose(pset.take(mask), n_resamples=0, n_simulations=0)
    # the selected bins hold the largest σ: their sharpness is far above the overall one
    assert sub.value("sharpness") > 1.3 * report.value("sharpness")
    assert sub.value("ence") != report.value("ence")


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 200),
    n_groups=st.integers(1, 4),
    n_bins=st.integers(1, 9),
    seed=st.integers(0, 10_000),
)
def test_rows_in_bins_equals_a_direct_definition(n, n_groups, n_bins, seed):
    rng = np.random.default_rng(seed)
    names = np.array([f"m{i}" for i in range(n_groups)], dtype=object)
    group = names[rng.integers(0, n_groups, n)]
    row_bins = rng.integers(0, n_bins, n)
    selection = {str(g): tuple(sorted(set(rng.integers(0, n_bins + 2, 3).tolist()))) for g in names[: n_groups - 1]}
    selection["not a model"] = (0, 1)
    mask = rows_in_bins(row_bins, selection, group=group)
    expected = np.array([b in selection.get(str(g), ()) for g, b in zip(group, row_bins)], dtype=bool)
    np.testing.assert_array_equal(mask, expected)
    # without a group column every row belongs to "model"
    np.testing.assert_array_equal(rows_in_bins(row_bins, {"model": (0,)}), row_bins == 0)
    assert not rows_in_bins(row_bins, {}).any()


# ------------------------------------------------------------------------------------------- texts
@settings(max_examples=100, deadline=None)
@given(st.sets(st.integers(0, 60), max_size=25))
def test_format_bins_round_trips(bins):
    text = format_bins(bins, first=0)
    if not bins:
        assert text == "none"
        return
    back: set[int] = set()
    for part in text.split(", "):
        a, _, b = part.partition("–")
        back.update(range(int(a), int(b or a) + 1))
    assert back == bins
    assert format_bins(bins) == format_bins({b + 1 for b in bins}, first=0)  # shown from 1 by default


def test_describe_selection():
    # bin indices are 0-based in the code; texts number them from 1, as the charts' hover labels do
    assert format_bins([5, 0, 1, 2, 7, 8]) == "1–3, 6, 8–9"
    assert format_bins([5, 0, 1, 2, 7, 8], first=0) == "0–2, 5, 7–8"
    assert describe_selection({}, 0) == "No bins selected."
    assert describe_selection({"model": (3,)}, 1, "σ-bins") == "1 row selected from σ-bin 4."
    assert describe_selection({"model": (13,)}, 14, "confidence bins", n_bins=15) == (
        "14 rows selected from confidence bin 14 of 15.")
    assert describe_selection({"a": (1, 2)}, 50) == "50 rows selected from bins 2–3 (a)."
    two = describe_selection({"a": (1,), "b": (4, 6)}, 1234, n_bins=10)
    assert two == "1,234 rows selected from bin 2 of 10 (a); bins 5, 7 of 10 (b)."
    # shift-selecting σ-bins 10 and 12 (0-based 9, 11) lists two disjoint bins, not a range over bin 11
    assert describe_selection({"model": (9, 11)}, 400, "σ-bins", n_bins=15) == (
        "400 rows selected from σ-bins 10, 12 of 15.")


def test_bin_runs():
    assert bin_runs([]) == []
    assert bin_runs([12, 10, 13, 13]) == [(10, 10), (12, 13)]
    assert bin_runs(range(5)) == [(0, 4)]


def test_bin_selection_context():
    ctx = ("data", 15, "count")
    sel = BinSelection.from_event(event({"curve_number": 1, "customdata": 2}), META, ctx)
    assert sel.bins == {"a": (2,)} and not sel.empty and sel.for_name("a") == (2,) and sel.for_name("b") == ()
    assert sel.valid_for(ctx) is sel  # unrelated control change: kept
    changed = sel.valid_for(("data", 20, "count"))  # other binning: the bins mean something else
    assert changed.empty and changed.context == ("data", 20, "count")
    assert BinSelection().empty


# ------------------------------------------------------------------------------------------- breakdown
def test_class_breakdown_matches_pandas():
    rng = np.random.default_rng(0)
    n, k = 500, 4
    labels = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.7, labels, rng.integers(0, k, n))
    pred[pred == 3] = 2  # class 3 is never predicted
    conf = rng.uniform(0.3, 1.0, n)
    t = class_breakdown(labels, pred, conf, 5, ["a", "b", "c", "d", "e"])
    frame = pd.DataFrame({"pred": pred, "ok": labels == pred, "conf": conf})
    g = frame.groupby("pred").agg(n=("ok", "size"), acc=("ok", "mean"), conf=("conf", "mean"))
    assert list(t["class"]) == ["a", "b", "c", "d"]  # class "e" neither predicted nor true: left out
    got = t.set_index("class")
    for code, name in enumerate("abc"):
        assert got.loc[name, "predicted"] == g.loc[code, "n"]
        assert got.loc[name, "accuracy"] == pytest.approx(g.loc[code, "acc"])
        assert got.loc[name, "gap"] == pytest.approx(g.loc[code, "conf"] - g.loc[code, "acc"])
    assert got.loc["d", "predicted"] == 0 and np.isnan(got.loc["d", "accuracy"])
    np.testing.assert_array_equal(got["true"].to_numpy(), np.bincount(labels, minlength=5)[:4])


# ------------------------------------------------------------------------------------------- chart sync
def test_sync_keeps_the_interacting_chart_and_redraws_the_others():
    sync: dict = {}
    stored: dict = {}
    assert sync_chart(sync, "rel", "r0", stored) == {} and sync_chart(sync, "hist", "h0", stored) == {}
    # the user clicks bin 3 in "rel": "rel" keeps its figure (plotly.js shows the live selection), "hist" redraws
    note_event(sync, "rel")
    stored = {"m": (3,)}
    assert sync_chart(sync, "rel", "r0", stored) == {}
    assert sync_chart(sync, "hist", "h0", stored) == {"m": (3,)}
    # shift-click in "rel" (same widget): still unchanged, so plotly.js keeps accumulating
    stored = {"m": (3, 6)}
    assert sync_chart(sync, "rel", "r0", stored) == {}
    assert sync_chart(sync, "hist", "h0", stored) == {"m": (3, 6)}
    # an option changes the figure of "rel" anyway: the stored selection is drawn into it
    assert sync_chart(sync, "rel", "r1", stored) == {"m": (3, 6)}
    # now the user selects in "hist"
    note_event(sync, "hist")
    stored = {"m": (1,)}
    assert sync_chart(sync, "hist", "h0", stored) == {"m": (3, 6)}  # unchanged figure: no remount
    assert sync_chart(sync, "rel", "r1", stored) == {"m": (1,)}
    # "Clear": every chart is rebuilt empty and the epoch changes
    assert note_reset(sync) == 1 and sync["epoch"] == 1
    assert sync_chart(sync, "hist", "h0", {}) == {} and sync_chart(sync, "rel", "r1", {}) == {}


def test_box_and_lasso_selections_are_redrawn_in_their_own_chart():
    click = {"selection": {"points": [{"curve_number": 3, "customdata": 2}], "box": [], "lasso": []}}
    box = {"selection": {"points": [{"curve_number": 1, "customdata": 2}], "box": [{"x": [0.1, 0.4], "y": [0, 1]}],
                         "lasso": []}}
    lasso = {"selection": {"points": [], "box": [], "lasso": [{"x": [0, 1, 1], "y": [0, 0, 1]}]}}
    assert not is_area_selection(click) and is_area_selection(box) and is_area_selection(lasso)
    assert not is_area_selection(None) and not is_area_selection({})
    sync: dict = {}
    sync_chart(sync, "rel", "r0", {})
    note_event(sync, "rel", click)  # a click stays live in its chart (plotly.js accumulates shift-clicks there)
    assert sync_chart(sync, "rel", "r0", {"m": (2,)}) == {}
    # a box: plotly.js marks points by their centres, which need not stand for the bin (the reliability diagram's
    # full-height columns), so the chart is redrawn with the stored selection
    note_event(sync, "rel", box)
    assert sync_chart(sync, "rel", "r0", {"m": (2, 3)}) == {"m": (2, 3)}
