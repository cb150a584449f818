"""dashboard.cache: the shared result and figure caches are bounded in bytes, compute a key once under concurrency,
and give private copies of results (the server's memory is bounded)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from dashboard import cache
from dashboard.store import BoundedStore


@pytest.fixture
def small_store():
    return BoundedStore(max_bytes=10_000, max_idle_seconds=3600)


def test_concurrent_misses_of_one_key_compute_once(small_store):
    calls = []

    def compute():
        calls.append(1)
        time.sleep(0.2)
        return np.arange(10)

    out = []
    threads = [threading.Thread(target=lambda: out.append(cache.memoized(small_store, "k", compute, copied=True)))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(out) == 8
    assert all(np.array_equal(x, np.arange(10)) for x in out)


def test_a_computation_may_memoize_other_keys_whatever_their_hashes(small_store):
    """A computation that itself calls ``memoized`` (the slice background's diagnosis does) finishes for any pair of
    keys: with locks striped by hash % 64, keys 1 and 65 (hash(n) = n) shared a lock and the session hung for ever
    (seen as a CI test that never returned, the second time for string keys under another PYTHONHASHSEED)."""
    done = []

    def outer(k: int) -> None:
        inner = k + 64 * (1 + k % 3)
        done.append(cache.memoized(small_store, k, lambda: cache.memoized(small_store, inner, lambda: inner,
                                                                            copied=False) + 1, copied=False))

    threads = [threading.Thread(target=outer, args=(k,), daemon=True) for k in range(1, 9)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "a nested memoized call deadlocked"
    assert sorted(done) == sorted(k + 64 * (1 + k % 3) + 1 for k in range(1, 9))
    # the per-key locks are dropped once nobody needs them (this store's: the server's background prefetch may hold
    # the lock of a key of its own meanwhile)
    assert not [k for k in cache._KEY_LOCKS if k[0] == id(small_store)]  # noqa: SLF001


def test_copied_hits_are_private_copies_and_shared_values_are_the_object(small_store):
    first = cache.memoized(small_store, "p", lambda: {"a": [1, 2]}, copied=True)
    hit = cache.memoized(small_store, "p", lambda: pytest.fail("recomputed"), copied=True)
    hit["a"].append(3)  # a caller mutating its copy does not change what the next caller gets
    assert cache.memoized(small_store, "p", lambda: None, copied=True) == {"a": [1, 2]} == first
    obj = object()
    assert cache.memoized(small_store, "o", lambda: obj, copied=False, nbytes=lambda v: 10) is obj
    assert cache.memoized(small_store, "o", lambda: pytest.fail("rebuilt"), copied=False) is obj


def test_results_beyond_the_budget_evict_the_least_recently_used(small_store):
    for i in range(6):  # 6 arrays of 2.4 kB into 10 kB
        cache.memoized(small_store, ("r", i), lambda i=i: np.full(300, float(i)), copied=True)
    assert small_store.total_bytes <= 10_000 and len(small_store) < 6
    assert ("r", 5) in small_store and ("r", 0) not in small_store
    big = cache.memoized(small_store, "big", lambda: np.zeros(5_000), copied=True)  # 40 kB: returned, not kept
    assert big.shape == (5_000,) and "big" not in small_store and small_store.total_bytes <= 10_000


def test_cached_keys_on_the_arguments_and_diagnoses_and_figures_use_the_bounded_stores():
    cache.clear_caches()
    calls = []

    def run(*, n: int, seed: int = 0) -> np.ndarray:
        calls.append((n, seed))
        return np.random.default_rng(seed).normal(size=n)

    f = cache.cached(run)
    a, b, c = f(n=5), f(n=5), f(n=5, seed=1)
    assert calls == [(5, 0), (5, 1)] and np.array_equal(a, b) and not np.array_equal(a, c)
    assert cache.RESULTS.total_bytes > 0
    fig = cache.figure("key", lambda: {"data": [1, 2, 3]})
    assert cache.figure("key", lambda: pytest.fail("rebuilt")) is fig and len(cache.FIGURES) == 1
    cache.clear_caches()
    assert len(cache.RESULTS) == len(cache.FIGURES) == 0


def test_memory_bound_names_every_cache_in_bytes():
    from dashboard.state import STORE_MAX_BYTES

    bound = cache.memory_bound(upload_limit_mb=500)
    assert bound["total"] == sum(v for k, v in bound.items() if k != "total")
    assert bound["total"] == (STORE_MAX_BYTES + (500 << 20) + cache.RESULT_CACHE_BYTES + cache.FIGURE_CACHE_BYTES
                              + cache.STAGE_CACHE_BYTES)
    assert cache.RESULTS.max_bytes == cache.RESULT_CACHE_BYTES and cache.FIGURES.max_bytes == cache.FIGURE_CACHE_BYTES
    assert cache.STAGES.max_bytes == cache.STAGE_CACHE_BYTES
