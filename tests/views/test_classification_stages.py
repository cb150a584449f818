"""The staged classification diagnosis (bins-free part kept, binned part redone) equals ``cc.diagnose`` exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from views.classification_stages import diagnose_classification_staged


def _set(k: int, n: int = 500, seed: int = 0, **extra) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    z = 1.2 * rng.normal(size=(n, k))
    labels = (z + rng.gumbel(size=(n, k))).argmax(1)
    logits = 2.5 * z
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return cc.PredictionSet(task="classification", labels=labels, probs=p, logits=logits, **extra)


def _top_label_set() -> cc.PredictionSet:
    rng = np.random.default_rng(5)
    conf = rng.uniform(0.3, 1.0, 500)
    correct = rng.random(500) < conf**2
    pred = rng.integers(0, 10, 500)
    label = np.where(correct, pred, (pred + 1) % 10)
    text = pd.DataFrame({"true_label": label, "pred_label": pred, "confidence": conf}).to_csv(index=False)
    return cc.load_predictions(text.encode(), source="top.csv")


def assert_same_report(a: cc.Report, b: cc.Report) -> None:
    """Every metric, verdict, diagram table and option equal (NaN equal to NaN), bit for bit."""
    pd.testing.assert_frame_equal(a.metrics, b.metrics, check_exact=True)
    pd.testing.assert_frame_equal(a.verdicts, b.verdicts, check_exact=True)
    assert a.diagrams.keys() == b.diagrams.keys()
    for key, tables in a.diagrams.items():
        assert list(tables) == list(b.diagrams[key]), key
        for name, table in tables.items():
            other = b.diagrams[key][name]
            if isinstance(table, pd.DataFrame):
                pd.testing.assert_frame_equal(table, other, check_exact=True)
                assert table.attrs.keys() == other.attrs.keys()
            else:
                assert repr(table) == repr(other), name
    assert a.options == b.options


OPTIONS = {"n_resamples": 30, "n_simulations": 20}


@pytest.mark.parametrize("make", [lambda: _set(10), lambda: _set(2), _top_label_set,
                                  lambda: _set(3, model=np.where(np.arange(500) % 2 == 0, "a", "b"),
                                               ordinal=True)],
                         ids=["K=10", "binary", "top-label-only", "ordinal, two models"])
def test_staged_equals_diagnose_for_every_bins_choice(make):
    pset = make()
    stages: dict = {}
    for n_bins, strategy in ((15, "uniform"), (16, "quantile")):
        options = dict(OPTIONS, n_bins=n_bins, strategy=strategy)
        staged = diagnose_classification_staged(pset, stages, by_group=False, **options)
        assert_same_report(staged, cc.diagnose(pset, by_group=False, **options))
    assert stages  # the bins-free part was kept, and reused for the other bins


def test_staged_equals_diagnose_with_prevalence_and_groups():
    pset = _set(2, n=300, group=np.where(np.arange(300) % 3 == 0, "x", "y"))
    options = dict(OPTIONS, n_bins=12, prevalence=0.3, tce=False)
    stages: dict = {}
    first = diagnose_classification_staged(pset, stages, **options)
    assert_same_report(first, cc.diagnose(pset, **options))
    assert_same_report(diagnose_classification_staged(pset, stages, **dict(options, n_bins=20)),
                       cc.diagnose(pset, **dict(options, n_bins=20)))


def test_a_kept_stage_is_not_recomputed(monkeypatch):
    import views.classification_stages as staged_module

    calls = []
    real = staged_module.clinical_table_values
    monkeypatch.setattr(staged_module, "clinical_table_values", lambda *a, **k: calls.append(1) or real(*a, **k))
    pset, stages = _set(4), {}
    for n_bins in (10, 11, 12):
        diagnose_classification_staged(pset, stages, by_group=False, n_bins=n_bins, **OPTIONS)
    assert len(calls) == 1


def test_the_staged_diagnosis_knows_every_option_of_the_core_one():
    """A new option of ``diagnose_classification`` must be taken over here too (else it would read as ignored)."""
    import inspect

    from calib_core.diagnosis.classification import diagnose_classification
    from views import classification_stages

    core = {name: p.default for name, p in inspect.signature(diagnose_classification).parameters.items()
            if p.kind is not inspect.Parameter.VAR_KEYWORD and name != "pset"}
    assert core == classification_stages._DEFAULTS


@pytest.mark.parametrize("closed", ["right", "left"])
def test_rebinned_rows_equal_fresh_rows(closed):
    """Rows re-binned from a stage's rows equal freshly built rows: bins, edges, every statistic, bit for bit."""
    from calib_core.metrics.classification import ClassificationRows
    from views.classification_stages import rebinned

    pset = _set(4, n=800, seed=3)
    base = ClassificationRows(pset.labels, pset.probs, pset.logits, n_bins=15, closed=closed)
    base.statistics()  # bin-free caches (NLL, Brier rows) filled, as after a diagnosis
    for n_bins, strategy in ((16, "quantile"), (7, "uniform"), (15, "uniform")):
        new = rebinned(base, n_bins, strategy)
        fresh = ClassificationRows(pset.labels, pset.probs, pset.logits, n_bins=n_bins, strategy=strategy,
                                   closed=closed)
        np.testing.assert_array_equal(new.bin_index, fresh.bin_index)
        np.testing.assert_array_equal(new.edges, fresh.edges)
        assert new.statistics() == fresh.statistics()
        np.testing.assert_array_equal(new.classwise_cells, fresh.classwise_cells)
        assert "_classwise" not in base.__dict__ or new is base or new._classwise is not base._classwise


@pytest.mark.parametrize("closed", ["right", "left"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_equal_width_class_sums_from_the_stage_entries_equal_fresh_rows(closed, dtype):
    """Equal-width rows re-binned from the stage's kept class-wise entries (those outside the first of the finest
    bins) equal fresh rows: the entries outside each class's first bin, the per-class counts and sums, every
    statistic, bit for bit; probabilities on the bin edges (k/M) and a count finer than those kept included."""
    from calib_core.metrics.classification import ClassificationRows
    from views.classification_stages import FINEST_WIDTH, rebinned

    pset = _set(4, n=900, seed=7)
    probs = pset.probs.astype(dtype)
    probs[:40] = np.array([1 / 15, 1 / 30, 2 / 15, 1 - 1 / 5], dtype=dtype)  # on edges of several counts
    base = rebinned(ClassificationRows(pset.labels, probs, n_bins=15, closed=closed), 15, "quantile")
    for n_bins in (16, 5, FINEST_WIDTH, 29, FINEST_WIDTH + 1, 15):
        new = rebinned(base, n_bins, "uniform")
        fresh = ClassificationRows(pset.labels, probs, n_bins=n_bins, closed=closed)
        assert ("_classwise_sparse" in new.__dict__) == (n_bins <= FINEST_WIDTH)
        for mine, theirs in zip(new.classwise_outside_first, fresh.classwise_outside_first):
            assert mine.dtype == theirs.dtype
            np.testing.assert_array_equal(mine, theirs)
        for mine, theirs in zip(new._classwise_unweighted, fresh._count_conf(None)):
            np.testing.assert_array_equal(mine, theirs)
        assert new.statistics() == fresh.statistics()


@pytest.mark.parametrize("closed", ["right", "left"])
@pytest.mark.parametrize("k", [2, 5])
def test_equal_mass_bins_from_the_stage_sorts_equal_fresh_rows(closed, k):
    """Equal-mass rows re-binned from the stage's kept sorts (top label and every class) equal fresh rows: the
    class-wise cells, edges and orders, the positive-class view, weighted (bootstrap) sums, bit for bit; ties
    included (rounded probabilities)."""
    from calib_core.metrics.classification import ClassificationRows
    from views.classification_stages import rebinned

    pset = _set(k, n=700, seed=k)
    probs = np.round(pset.probs, 2)  # many ties
    probs /= probs.sum(1, keepdims=True)
    base = ClassificationRows(pset.labels, probs, n_bins=15, closed=closed)
    weights = np.random.default_rng(1).multinomial(700, np.full(700, 1 / 700)).astype(float)
    for n_bins in (16, 3, 16, 1, 30):
        new = rebinned(base, n_bins, "quantile")
        fresh = ClassificationRows(pset.labels, probs, n_bins=n_bins, strategy="quantile", closed=closed)
        assert "_classwise" in new.__dict__  # from the stage's sorts
        for mine, theirs in zip(new._classwise, fresh._classwise):
            np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))
        if k == 2:
            for mine, theirs in zip(new._pos, fresh._pos):
                np.testing.assert_array_equal(mine, theirs)
        np.testing.assert_array_equal(new.bin_index, fresh.bin_index)
        np.testing.assert_array_equal(new._order, fresh._order)
        assert new.statistics() == fresh.statistics()
        assert new.statistics(weights) == fresh.statistics(weights)
        for mine, theirs in zip(new.classwise_sums(weights), fresh.classwise_sums(weights)):
            np.testing.assert_array_equal(mine, theirs)


def test_sorted_quantile_bins_equal_confidence_bins_on_random_values():
    from calib_core.metrics.classification import confidence_bins
    from views.classification_stages import sorted_quantile_bins

    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 100, 1000):
        for values in (rng.random(n), np.round(rng.random(n), 1), np.full(n, 0.5), rng.beta(0.1, 0.1, n)):
            order = np.argsort(values, kind="stable")
            for n_bins in (1, 2, 7, 15, 40):
                for closed in ("right", "left"):
                    got = sorted_quantile_bins(values[order], order, n_bins, closed)
                    want = confidence_bins(values, n_bins, "quantile", closed)
                    if got is not None:
                        np.testing.assert_array_equal(got[0], want[0])
                        np.testing.assert_array_equal(got[1], want[1])


def test_stable_orders_equal_numpys_stable_sort():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays

    from views.classification_stages import stable_orders

    values = st.sampled_from([0.0, -0.0, 0.1, 0.5, 1.0, np.nan, 1e-300, 0.25])

    @settings(max_examples=200, deadline=None)
    @given(arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 40)), elements=values))
    def check(x):
        np.testing.assert_array_equal(stable_orders(x), np.argsort(x, axis=1, kind="stable"))

    check()
    rng = np.random.default_rng(3)
    x = rng.random((4, 5000))
    x[1] = np.round(x[1], 2)
    np.testing.assert_array_equal(stable_orders(x), np.argsort(x, axis=1, kind="stable"))


def test_stable_sorted_values_equal_the_stable_sorts_gather_bit_for_bit():
    """The sorted values kept with the stable orders are those of the stable sort's gather, bit for bit: −0 and +0
    in one run of ties, NaN, ±inf, tiny and huge values, n = 1, float32 input."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays

    from views.classification_stages import stable_sorted

    def check_one(x):
        orders, ordered = stable_sorted(x)
        want = np.argsort(x, axis=1, kind="stable")
        np.testing.assert_array_equal(orders, want)
        gathered = np.take_along_axis(x, want, axis=1)
        assert ordered.dtype == x.dtype
        np.testing.assert_array_equal(ordered.view(f"u{x.itemsize}"), gathered.view(f"u{x.itemsize}"))

    values = st.sampled_from([0.0, -0.0, 0.1, 0.5, 1.0, np.nan, -np.nan, np.inf, -np.inf, 5e-324, 1e308, 0.25])

    @settings(max_examples=300, deadline=None)
    @given(arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 40)), elements=values))
    def check(x):
        check_one(x)
        check_one(x.astype(np.float32))

    check()
    rng = np.random.default_rng(5)
    x = rng.random((3, 3000))
    x[1] = np.round(x[1], 2)
    x[2, ::7] = -0.0
    x[2, ::5] = 0.0
    check_one(x)
    check_one(np.array([[0.3]]))


def test_sorted_quantile_bins_equal_confidence_bins_bit_for_bit():
    """Bins and edges read off the sorted values equal ``confidence_bins(…, "quantile")`` bit for bit (edges compared
    as bits: −0 and +0 apart): ties, ±0, ±inf, tiny and huge values, n = 1, values from float32."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays

    from calib_core.metrics.classification import confidence_bins
    from views.classification_stages import sorted_quantile_bins, stable_sorted

    values = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 0.5, 5e-324, 1e-300, 1e300, np.inf, -np.inf, 0.1]),
                       st.floats(0.0, 1.0, width=32))

    @settings(max_examples=400, deadline=None)
    @given(arrays(np.float64, st.integers(1, 60), elements=values), st.integers(1, 40),
           st.sampled_from(["right", "left"]))
    def check(v, n_bins, closed):
        orders, ordered = stable_sorted(v[None, :])
        with np.errstate(invalid="ignore"):  # ±inf: inf − inf in the interpolation
            got = sorted_quantile_bins(ordered[0], orders[0], n_bins, closed)
            want = confidence_bins(v, n_bins, "quantile", closed)
        if got is not None:
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1].view(np.uint64), np.asarray(want[1], dtype=float).view(np.uint64))

    check()
