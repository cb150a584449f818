"""The Classification page's redraw helpers give what the plain builders give."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

import calib_core as cc
from calib_core import plots
from dashboard import classification_redraw


def _per_class(n_bins: int, strategy: str, k: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    z = rng.normal(size=(400, k))
    p = np.exp(2 * z) / np.exp(2 * z).sum(1, keepdims=True)
    labels = (z + rng.gumbel(size=z.shape)).argmax(1)
    pset = cc.PredictionSet(task="classification", labels=labels, probs=p)
    report = cc.diagnose(pset, by_group=False, n_bins=n_bins, strategy=strategy, n_resamples=0, n_simulations=0,
                         smooth=False)
    return report.diagrams[(report.models[0], cc.ALL)]["per_class"]


@pytest.mark.parametrize("names", [None, ["ant", "bee", "=cat", "dog"]])
def test_a_patched_per_class_figure_is_the_built_one(names):
    from dashboard import redraw_cache as rc

    classification_redraw._SKELETONS.clear()
    codes = [2, 0, 3]
    for n_bins, strategy in ((15, "uniform"), (7, "uniform"), (12, "quantile")):  # the first builds, the others patch
        table = _per_class(n_bins, strategy)
        fig = classification_redraw.per_class_figure(table, class_names=names, color="#e45756", classes=codes)
        built = plots.per_class_reliability_figure(table, class_names=names, color="#e45756", classes=codes)
        assert json.loads(pio.to_json(fig)) == json.loads(pio.to_json(built))
        assert pio.to_json(fig, validate=False) == pio.to_json(built, validate=False)  # byte for byte
        assert pio.to_json(rc.prepared_figure(fig).to_dict(), validate=False) == \
            pio.to_json(rc.prepared_figure(built).to_dict(), validate=False)  # what the chart is sent
    assert len(classification_redraw._SKELETONS) == 1


@pytest.mark.parametrize("k", [3, 15, 25])
def test_per_class_views_from_one_summary_equal_the_views(k):
    """The class options, default classes and summary table made from one per-class summary equal
    ``views.per_class_choice`` and ``views.per_class_table`` (wide up to 12 classes, long above; the worst 20)."""
    from dashboard.classification_redraw import _per_class_views
    from dashboard.display import csv_safe
    from views import pages as views_pages

    rng = np.random.default_rng(k)
    n = 600
    logits = 2.0 * rng.normal(size=(n, k))
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    labels = rng.integers(0, k, n)
    pset = cc.PredictionSet(task="classification", labels=labels, probs=p)
    report = cc.diagnose(pset, n_resamples=0, n_simulations=0, by_group=False)
    per_class = next(iter(report.diagrams.values()))["per_class"]
    names = [f"c{i}" for i in range(k)]
    for classes in (None, names):
        options, worst, table = _per_class_views(per_class, classes)
        want_options, want_worst = views_pages.per_class_choice(per_class, classes)
        assert options == want_options and worst == want_worst
        pd.testing.assert_frame_equal(table, csv_safe(views_pages.per_class_table(per_class, classes)))


def _reliability_table(rng: np.random.Generator, n_bins: int, empty: bool = False) -> pd.DataFrame:
    count = np.zeros(n_bins) if empty else rng.integers(0, 40, n_bins).astype(float)
    conf = np.where(count > 0, rng.random(n_bins), np.nan)
    acc = np.where(count > 0, rng.random(n_bins), np.nan)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return pd.DataFrame({"bin": np.arange(n_bins), "lower": edges[:-1], "upper": edges[1:], "count": count,
                         "fraction": count / max(count.sum(), 1.0), "confidence": conf, "accuracy": acc,
                         "gap": conf - acc})


@pytest.mark.parametrize("kind", ["reliability", "histogram"])
@pytest.mark.parametrize("models", [1, 3])
@pytest.mark.parametrize("target", ["top_label", "positive"])
def test_a_patched_linked_figure_is_the_built_one(kind, models, target):
    """Reliability diagrams and confidence histograms patched from a skeleton send the JSON of a fresh build, byte
    for byte (other bins counts, empty tables, the log axis), and their selections mark the same bins."""
    from dashboard import redraw_cache as rc

    classification_redraw._LINKED.clear()
    rng = np.random.default_rng(models)
    colors = plots.model_colors([f"m{i}" for i in range(models)])
    for trial, n_bins in enumerate((15, 7, 22, 1, 15)):  # the first builds, the others patch
        tables = {f"m{i}": _reliability_table(rng, n_bins, empty=trial == 3) for i in range(models)}
        for log_axis in ((False, True) if kind == "histogram" else (False,)):
            fig = classification_redraw.linked_figure(kind, tables, colors=colors, target=target, log_y=log_axis)
            if kind == "reliability":
                built = plots.reliability_figure(tables, colors=colors, target=target)
            else:
                built = plots.confidence_histogram_figure(tables, colors=colors, target=target)
                if log_axis:
                    classification_redraw.log_axis(built)
            assert pio.to_json(fig, validate=False) == pio.to_json(built, validate=False), (trial, log_axis)
            assert pio.to_json(rc.prepared_figure(fig).to_dict(), validate=False) == \
                pio.to_json(rc.prepared_figure(built).to_dict(), validate=False)
            drawn = {"m0": [0, 2]}
            marked = rc.marked_figure(fig, drawn, layout_meta={"selection_epoch": 3}).to_dict()
            want = plots.mark_selected(built.update_layout(meta={"selection_epoch": 3}), drawn).to_dict()
            assert json.loads(pio.to_json(marked, validate=False)) == json.loads(pio.to_json(want, validate=False))
    assert len(classification_redraw._LINKED) == (2 if kind == "histogram" else 1)


def test_tree_copy_copies_a_figure_tree_as_deepcopy_does():
    """The figure-tree copy has deepcopy's JSON and shares no container with its source; arrays are copied, or
    shared when asked (the wire dict: Plotly's base64 conversion replaces them, never writes into them)."""
    import copy

    fig = plots.reliability_figure({"m": _reliability_table(np.random.default_rng(0), 5, empty=False)},
                                   colors={"m": "#123456"}, target="top_label")
    tree = {"data": list(fig._data), "layout": dict(fig._layout), "t": (1, [2.5, None]), "s": np.float64(0.5)}
    for arrays in (True, False):
        copied = classification_redraw._tree_copy(tree, arrays)
        assert pio.to_json(copied, validate=False) == pio.to_json(copy.deepcopy(tree), validate=False)
        assert copied["data"][1] is not tree["data"][1] and copied["t"][1] is not tree["t"][1]
        x = tree["data"][1]["x"]
        assert isinstance(x, np.ndarray) and (copied["data"][1]["x"] is x) == (not arrays)
        copied["data"][1]["marker"]["color"] = "changed"
        assert tree["data"][1]["marker"].get("color") != "changed"


def test_wired_copy_is_plotlys_base64_conversion_of_the_tree_copy():
    """The one-pass wire copy equals ``convert_to_base64`` of the array-sharing tree copy (the two calls it
    replaces): arrays that are dict values as typed-array dicts, arrays in lists and under ``range`` left alone,
    NumPy scalars, tuples, pandas objects; the source is never changed."""
    import copy

    from _plotly_utils.utils import convert_to_base64

    fig = plots.reliability_figure({"m": _reliability_table(np.random.default_rng(0), 5, empty=False)},
                                   colors={"m": "#123456"}, target="top_label")
    tree = {"data": list(fig._data), "layout": dict(fig._layout), "t": (1, [2.5, None], {"a": np.arange(3)}),
            "s": np.float64(0.5), "i": np.int64(3), "range": np.array([0.0, 1.0]), "series": pd.Series([1.0, 2.0]),
            "lists": [np.arange(2), [np.ones(2)], {"y": np.ones((2, 2)), "b": True}], "empty": np.zeros(0),
            "text": np.array(["a", "b"], dtype=object), "ints": np.array([1, 300, 70000])}
    before = pio.to_json(copy.deepcopy(tree), validate=False)
    for obj in (tree, tree["data"], tree["layout"]):
        want = classification_redraw._tree_copy(obj, arrays=False)
        convert_to_base64(want)
        got = classification_redraw._wired_item(obj)
        assert pio.to_json({"v": got}, validate=False) == pio.to_json({"v": want}, validate=False)
        assert repr(got) == repr(want)
    assert pio.to_json(tree, validate=False) == before


def test_typed_arrays_and_skipped_keys_are_plotlys():
    """The typed-array dict of every array kind is Plotly's ``to_typed_array_spec``'s; the keys left alone are its
    ``is_skipped_key``'s."""
    from _plotly_utils.utils import is_skipped_key, to_typed_array_spec

    for key in ("geojson", "layer", "layers", "range", "x", "y", "template", "customdata", "ranges"):
        assert (key in classification_redraw._SKIPPED_KEYS) == is_skipped_key(key)
    arrays = [np.arange(5, dtype=np.int64), np.array([-129, 5]), np.array([0, 70000]), np.array([0, 2**40]),
              np.array([0, 300], dtype=np.int32), np.linspace(0, 1, 7), np.ones((3, 2)), np.ones((3, 2)).T,
              np.arange(4.0)[::2], np.zeros(0), np.array(3.0), np.arange(3, dtype=np.float32),
              np.arange(3, dtype=">f8"), np.array([True, False]), np.array(["a", "b"]),
              np.array([1, None], dtype=object), np.arange(3, dtype=np.uint64), np.array([np.nan, np.inf, -0.0])]
    for a in arrays:
        got, want = classification_redraw._typed_array(a), to_typed_array_spec(a)
        assert pio.to_json({"v": got}, validate=False) == pio.to_json({"v": want}, validate=False), a
        assert type(got) is type(want)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_the_other_binning_prepared_in_idle_time_is_the_diagnosis_the_page_reads(strategy):
    from dashboard import cache

    rng = np.random.default_rng(11)
    probs = rng.dirichlet(np.ones(4), 1_500)
    labels = (probs.cumsum(axis=1) < rng.random((1_500, 1))).sum(axis=1).clip(0, 3)
    pset = cc.PredictionSet(task="classification", labels=labels, probs=probs, layout="probs")
    key = f"prefetch-other-binning-test|{strategy}"
    options = {"n_bins": 12, "strategy": strategy, "n_resamples": 100, "n_simulations": 100, "seed": 0}
    cache.diagnose_cached(key, pset, staged=True, **options)  # the page's diagnosis (its bins-free stages kept)
    run = classification_redraw.prefetch_other_binning(key, pset, options)
    assert run is not None and run.done.wait(timeout=120)
    other = {**options, "strategy": "quantile" if strategy == "uniform" else "uniform"}
    entry = ("diagnosis", key, json.dumps(other, sort_keys=True))
    assert entry in cache.RESULTS  # the entry diagnose_cached reads: the switch is a hit
    got = cache.diagnose_cached(key, pset, staged=True, **other)
    want = cc.diagnose(pset, by_group=False, **other)
    pd.testing.assert_frame_equal(got.metrics, want.metrics, check_exact=True)
    assert classification_redraw.prefetch_other_binning(key, pset, options) is None  # cached: nothing asked for


def test_the_column_summary_is_the_group_by_summary_bit_for_bit():
    """``_column_summary`` (per-class sums by ``np.add.reduceat`` over the class runs) equals
    ``plots.per_class_summary`` (pandas's group-by) bit for bit on class-major tables of any runs, and leaves the
    other tables (classes out of order, NaN counts, integer counts) to it."""
    from hypothesis import given, settings
    from hypothesis import strategies as hs

    from dashboard.classification_redraw import _column_summary

    @settings(max_examples=200, deadline=None)
    @given(hs.integers(1, 25), hs.integers(0, 2**32 - 1), hs.booleans(), hs.sampled_from([1.0, 1e-3, 1e3]))
    def check(k, seed, named, scale):
        rng = np.random.default_rng(seed)
        sizes = rng.integers(1, 32, size=k)
        n = int(sizes.sum())
        count = rng.integers(0, 5000, size=n) * (rng.random(n) < 0.8) * scale
        table = pd.DataFrame({"class": np.repeat(np.sort(rng.choice(100, k, replace=False)), sizes),
                              "bin": np.arange(n), "count": count,
                              "confidence": np.where(count > 0, rng.random(n), np.nan),
                              "accuracy": np.where(count > 0, rng.random(n), np.nan)})
        names = [f"c{i}" for i in range(60)] if named else None
        with np.errstate(invalid="ignore"):
            fast, plain = _column_summary(table, names), plots.per_class_summary(table, names)
        pd.testing.assert_frame_equal(fast, plain, check_exact=True)

    check()
    table = _per_class(15, "uniform")
    pd.testing.assert_frame_equal(_column_summary(table, None), plots.per_class_summary(table, None),
                                  check_exact=True)
    assert _column_summary(table.iloc[::-1], None) is None  # classes decreasing
    assert _column_summary(table.assign(count=table["count"].astype(np.int64)), None) is None
    assert _column_summary(table.assign(count=np.where(table.index == 0, np.nan, table["count"])), None) is None
