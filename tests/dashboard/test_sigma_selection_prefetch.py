"""dashboard.selection's σ-bin selection diagnoses: what the idle-time prefetch prepares is exactly what a click
computes itself (the same function, arguments and seed), a click on a bin being prepared waits for it (computed
once), and the bins are prepared farthest from the diagonal first."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

import calib_core
import calib_core as cc
import dashboard.selection
from calib_core.data import examples
from dashboard import cache
from dashboard.selection import click_order, prefetch_sigma_selections, sigma_selection, sigma_selection_job
from views.selection import rows_in_bins, sigma_bins

OPTIONS = {"n_bins": 6, "binning": "count", "n_resamples": 100, "n_simulations": 100, "seed": 0,
           "diagrams": ["calibration_curve", "pit_histogram", "z_histogram"]}


@pytest.fixture(autouse=True)
def _prefetch_small_rows(monkeypatch):
    monkeypatch.setattr(dashboard.selection, "SIGMA_PREFETCH_MIN_ROWS", 0)  # the page prepares from 50,000 rows


def _rows():
    return examples.levi_synthetic(n=1_200)  # two models (true σ, random σ)


def _levi_tables(pset, n_bins=6, binning="count"):
    report = cc.diagnose(pset, by_group=False, n_bins=n_bins, binning=binning, n_resamples=50, n_simulations=50,
                         seed=0, diagrams=["levi_bins"])
    return {m: report.diagrams[(m, cc.ALL)]["levi_bins"] for m in report.models}


def _assert_same_report(a: cc.Report, b: cc.Report) -> None:
    pd.testing.assert_frame_equal(a.metrics, b.metrics, check_exact=True)
    pd.testing.assert_frame_equal(a.verdicts, b.verdicts, check_exact=True)
    assert a.diagrams.keys() == b.diagrams.keys()
    for k in a.diagrams:
        assert a.diagrams[k].keys() == b.diagrams[k].keys()
        for name in a.diagrams[k]:
            pd.testing.assert_frame_equal(a.diagrams[k][name], b.diagrams[k][name], check_exact=True)
    assert a.n_rows == b.n_rows


def _join(run):
    if run is not None:
        assert run.done.wait(timeout=300)


def test_every_prefetched_bin_is_the_clicks_direct_diagnosis():
    cache.clear_caches()
    pset = _rows()
    base_key = f"sigma-prefetch-test|{id(pset)}"
    tables = _levi_tables(pset)
    _join(prefetch_sigma_selections(pset, base_key, tables, 6, "count", OPTIONS))
    row_bins = sigma_bins(pset.dist.std(), 6, "count", group=pset.model)
    for model, b in click_order(tables):
        key, compute = sigma_selection_job(pset, base_key, {model: (b,)}, 6, "count", OPTIONS)
        assert ("prefetched", key) in cache.RESULTS  # prepared: the click reads it
        prepared = sigma_selection(pset, base_key, {model: [b]}, 6, "count", OPTIONS)
        assert prepared is cache.RESULTS.get(("prefetched", key))
        # what the page computed on a click before: the rows of the bin, then cc.diagnose of them
        mask = rows_in_bins(row_bins, {model: (b,)}, group=pset.model)
        direct = cc.diagnose(pset.take(mask), by_group=False, **OPTIONS)
        assert np.array_equal(prepared.mask, mask) and prepared.n_rows == int(mask.sum())
        assert prepared.key == f"{base_key}|sel={[(model, (b,))]}"
        _assert_same_report(prepared.report, direct)
        _assert_same_report(prepared.report, compute().report)  # and the job's own computation again


def test_a_click_on_a_bin_being_prepared_waits_for_it(monkeypatch):
    cache.clear_caches()
    pset = _rows()
    base_key = f"sigma-prefetch-wait|{id(pset)}"
    tables = _levi_tables(pset)
    model = next(iter(tables))
    one_bin = {model: tables[model].iloc[[2]]}  # one job: bin 2 of the first model
    real, threads = calib_core.diagnose, []
    started, release = threading.Event(), threading.Event()

    def slow(*args, **kwargs):
        threads.append(threading.current_thread().name)
        started.set()
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(calib_core, "diagnose", slow)
    run = prefetch_sigma_selections(pset, base_key, one_bin, 6, "count", OPTIONS)
    assert started.wait(120)  # the prefetch is diagnosing bin 2
    timer = threading.Timer(0.3, release.set)
    timer.start()
    clicked = sigma_selection(pset, base_key, {model: (2,)}, 6, "count", OPTIONS)  # waits for the prefetch
    _join(run)
    timer.join()
    assert threads == ["calibration-lab-prefetch"]  # computed once, by the prefetch
    key, _ = sigma_selection_job(pset, base_key, {model: (2,)}, 6, "count", OPTIONS)
    assert clicked is cache.RESULTS.get(("prefetched", key))
    monkeypatch.setattr(calib_core, "diagnose", real)
    mask = rows_in_bins(sigma_bins(pset.dist.std(), 6, "count", group=pset.model), {model: (2,)}, group=pset.model)
    _assert_same_report(clicked.report, cc.diagnose(pset.take(mask), by_group=False, **OPTIONS))


def test_a_click_before_the_prefetch_reaches_its_bin_computes_it_once(monkeypatch):
    cache.clear_caches()
    pset = _rows()
    base_key = f"sigma-prefetch-first|{id(pset)}"
    model = "true sigma" if "true sigma" in pset.models() else pset.models()[0]
    calls = []
    real = calib_core.diagnose
    monkeypatch.setattr(calib_core, "diagnose", lambda *a, **k: calls.append(1) or real(*a, **k))
    clicked = sigma_selection(pset, base_key, {model: (1,)}, 6, "count", OPTIONS)  # no prefetch yet: computed now
    tables = {model: _levi_tables(pset)[model].iloc[[1]]}
    calls.clear()
    assert prefetch_sigma_selections(pset, base_key, tables, 6, "count", OPTIONS) is None  # cached: nothing queued
    assert calls == []
    assert sigma_selection(pset, base_key, {model: (1,)}, 6, "count", OPTIONS) is clicked


def test_fewer_than_two_rows_have_no_diagnosis():
    pset = _rows()
    chosen = sigma_selection(pset, f"sigma-prefetch-empty|{id(pset)}", {"no such model": (0,)}, 6, "count",
                             OPTIONS)
    assert chosen.n_rows == 0 and chosen.report is None


def test_click_order_is_the_ence_terms_largest_first_across_models():
    a = pd.DataFrame({"bin": [0, 1, 2], "rmv": [1.0, 1.0, 1.0], "rmse": [1.05, 1.5, np.nan]})
    b = pd.DataFrame({"bin": [0, 1], "rmv": [2.0, 2.0], "rmse": [3.2, 2.1]})
    assert click_order({"a": a, "b": b}) == [("b", 0), ("a", 1), ("a", 0), ("b", 1), ("a", 2)]
    assert click_order({}) == []


def test_small_data_and_a_left_view_queue_nothing(monkeypatch):
    cache.clear_caches()
    pset = _rows()
    tables = _levi_tables(pset)
    monkeypatch.setattr(dashboard.selection, "SIGMA_PREFETCH_MIN_ROWS", pset.n_rows + 1)
    assert prefetch_sigma_selections(pset, f"sigma-prefetch-small|{id(pset)}", tables, 6, "count", OPTIONS) is None
    monkeypatch.setattr(dashboard.selection, "SIGMA_PREFETCH_MIN_ROWS", 0)
    gate = threading.Event()
    blocker = cache.prefetch(("sigma-prefetch-blocker", id(gate)), [(("sigma-prefetch-blocker", id(gate)),
                                                                      lambda: gate.wait(30))])
    base_key = f"sigma-prefetch-left|{id(pset)}"
    run = prefetch_sigma_selections(pset, base_key, tables, 6, "count", OPTIONS)  # queued behind the blocker
    assert run is not None and len(run.jobs) == 12
    name = dashboard.selection.sigma_prefetch_name(base_key, 6, "count")
    assert cache.cancel_prefetch(name) == 12  # the user moved to other bins: dropped
    assert run.done.is_set() and not run.jobs
    gate.set()
    _join(blocker)
    for model, b in click_order(tables):  # nothing was computed; a click computes its bin itself
        key, _ = sigma_selection_job(pset, base_key, {model: (b,)}, 6, "count", OPTIONS)
        assert ("prefetched", key) not in cache.RESULTS
