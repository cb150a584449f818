"""dashboard.cache.prefetch: summaries prepared in a background thread land in the cache the page reads, each key is
computed once whichever asks first (the page waits for a running job), and the values are those the page computes."""

from __future__ import annotations

import threading
import time

import numpy as np

from calib_core.base.regression import Gaussian
from calib_core.metrics.regression_decomposition import quantile_reliability
from dashboard import cache


def _join(run):
    if run is not None:
        assert run.done.wait(timeout=120)


def test_prefetch_fills_the_cache_once_and_the_page_reads_it():
    calls = []

    def job(i):
        def compute():
            calls.append(i)
            return {"value": i}
        return (("prefetch-test", i, id(calls)), compute)

    jobs = [job(i) for i in range(3)]
    run = cache.prefetch(("prefetch-test", id(calls)), jobs)
    _join(run)
    assert sorted(calls) == [0, 1, 2]
    assert run.finished is not None and run.cpu_seconds() >= 0.0
    for key, compute in jobs:  # the page's read: a hit, nothing computed again
        assert cache.prefetched_result(key, compute) == {"value": key[1]}
    assert sorted(calls) == [0, 1, 2]
    assert cache.prefetch(("prefetch-test", id(calls)), jobs) is None  # all cached: no thread


def test_a_request_for_a_key_being_prefetched_waits_for_it():
    calls, started = [], threading.Event()

    def slow():
        calls.append(1)
        started.set()
        time.sleep(0.3)
        return np.arange(5)

    key = ("prefetch-test-slow", id(calls))
    run = cache.prefetch(("prefetch-test-slow", id(calls)), [(key, slow)])
    assert started.wait(10)
    value = cache.prefetched_result(key, slow)  # waits for the thread's computation
    _join(run)
    assert calls == [1]
    assert value.tolist() == [0, 1, 2, 3, 4]


def test_jobs_given_while_a_prefetch_runs_join_its_queue():
    gate, calls = threading.Event(), []

    def first():
        gate.wait(10)
        calls.append("first")
        return 1

    def second():
        calls.append("second")
        return 2

    name = ("prefetch-test-queue", id(calls))
    run = cache.prefetch(name, [((name, 1), first)])
    again = cache.prefetch(name, [((name, 1), first), ((name, 2), second)])  # one thread per name
    gate.set()
    _join(run)
    assert again is run
    assert calls == ["first", "second"]


def test_the_prefetched_band_is_the_band_the_page_computes():
    rng = np.random.default_rng(3)
    mu, sd = rng.normal(size=3_000), rng.uniform(0.5, 2.0, 3_000)
    y = mu + 1.3 * sd * rng.standard_normal(3_000)
    dist = Gaussian(mu, sd)
    name = ("prefetch-test-band", id(dist))
    jobs = [((name, tau), lambda tau=tau: quantile_reliability(y, dist, tau=tau)) for tau in (0.05, 0.5, 0.95)]
    _join(cache.prefetch(name, jobs))
    for (key, compute), tau in zip(jobs, (0.05, 0.5, 0.95)):
        got, direct = cache.prefetched_result(key, compute), quantile_reliability(y, dist, tau=tau)
        assert got.bands.equals(direct.bands) and got.curve.equals(direct.curve)
        assert got.decomposition == direct.decomposition


def test_idle_time_jobs_wait_for_an_idle_process_and_give_way_to_jobs_asked_for_now(monkeypatch):
    # "idle" read as at most 2% of a core: a spinning thread gets more than that even on a loaded machine (at a
    # quarter of a core, the default, a test machine busy with other processes could make the spinning process
    # look idle)
    monkeypatch.setattr(cache, "PREFETCH_IDLE_SHARE", 0.02)
    order, stop = [], threading.Event()

    def spin():  # the process busy (a session running a page)
        while not stop.is_set():
            sum(range(1000))

    def job(label):
        def compute():
            order.append(label)
            return label
        return compute

    busy = threading.Thread(target=spin, daemon=True)
    busy.start()
    try:
        name = ("prefetch-test-idle", id(order))
        run = cache.prefetch(name, [((name, "idle"), job("idle"))], when_idle=True)
        time.sleep(4 * cache.PREFETCH_IDLE_WINDOW)
        assert order == []  # the process is busy: the idle-time job waits
        cache.prefetch(name, [((name, "now"), job("now"))])
        deadline = time.monotonic() + 30
        while order != ["now"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert order == ["now"]  # asked for now: computed at once
    finally:
        stop.set()
        busy.join()
    _join(run)
    assert order == ["now", "idle"]  # then, the process idle, the idle-time job
