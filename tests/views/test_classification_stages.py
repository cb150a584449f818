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
