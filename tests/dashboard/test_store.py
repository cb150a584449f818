"""dashboard.store: the one bounded store (loaded data under unguessable tokens, parsed uploads) — byte budget (LRU),
idle expiry, one size function."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from calib_core.data import examples
from dashboard.store import BoundedStore, approx_nbytes


class Clock:
    """A settable monotonic clock (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _store(max_bytes: int = 100, idle: float = 60.0) -> tuple[BoundedStore, Clock]:
    clock = Clock()
    return BoundedStore(max_bytes=max_bytes, max_idle_seconds=idle, tokens_only=True, clock=clock), clock


def test_tokens_are_unguessable_and_malformed_ones_are_never_looked_up():
    tokens = {BoundedStore.new_token() for _ in range(2000)}
    assert len(tokens) == 2000  # 128 random bits each: a collision here would mean a broken generator
    assert all(BoundedStore.is_token(t) and len(t) == 22 for t in tokens)
    store, _ = _store()
    assert not store.put("short", 1, nbytes=1) and len(store) == 0
    for bad in ("", "x" * 21, "x" * 23, "a/b" + "c" * 19, None, 5):
        assert store.get(bad) is None


def test_a_value_is_found_only_under_its_own_token():
    store, _ = _store()
    a, b = BoundedStore.new_token(), BoundedStore.new_token()
    assert store.put(a, "data of a", nbytes=10)
    assert store.get(a) == "data of a"
    assert store.get(b) is None and b not in store
    assert store.put(a, "new data of a", nbytes=30)  # replaced, not added
    assert store.get(a) == "new data of a" and len(store) == 1 and store.total_bytes == 30


def test_least_recently_used_entries_are_evicted_beyond_the_byte_budget():
    store, clock = _store(max_bytes=100)
    t = [BoundedStore.new_token() for _ in range(4)]
    for i in range(3):
        clock.now += 1
        assert store.put(t[i], i, nbytes=30)
    clock.now += 1
    assert store.get(t[0]) == 0  # t[0] used again: t[1] is now the least recently used
    assert store.put(t[3], 3, nbytes=30)  # 120 > 100: one entry must go
    assert t[1] not in store and [store.get(x) for x in (t[0], t[2], t[3])] == [0, 2, 3]
    assert store.total_bytes == 90
    assert store.put(t[1], "big", nbytes=100)  # takes the whole budget: everything else is evicted
    assert len(store) == 1 and store.total_bytes == 100
    assert not store.put(t[2], "too big", nbytes=101)  # larger than the budget: not kept, old value gone too
    assert t[2] not in store and store.get(t[1]) == "big"


def test_entries_expire_after_the_idle_time_and_use_extends_them():
    store, clock = _store(idle=60.0)
    a, b = BoundedStore.new_token(), BoundedStore.new_token()
    store.put(a, "a", nbytes=1)
    store.put(b, "b", nbytes=1)
    clock.now += 59.0
    assert store.get(a) == "a"  # used: a's idle time restarts
    clock.now += 2.0  # b idle for 61 s, a for 2 s
    assert b not in store and store.get(b) is None
    assert store.get(a) == "a" and store.total_bytes == 1
    clock.now += 60.5
    assert store.get(a) is None and len(store) == 0 and store.total_bytes == 0


def test_concurrent_puts_keep_the_byte_count_exact():
    store = BoundedStore(max_bytes=10_000, max_idle_seconds=3600, tokens_only=True)
    tokens = [BoundedStore.new_token() for _ in range(400)]

    def work(part: list[str]) -> None:
        for token in part:
            store.put(token, token, nbytes=37)
            store.get(token)

    threads = [threading.Thread(target=work, args=(tokens[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.total_bytes == 37 * len(store) <= 10_000
    assert len(store) == 10_000 // 37


def test_approx_nbytes_counts_arrays_frames_and_shared_buffers_once():
    x = np.zeros(10_000)
    assert approx_nbytes(x) == x.nbytes
    assert approx_nbytes({"a": x, "b": x[:10]}) < x.nbytes + 1000  # a view of x adds nothing
    frame = pd.DataFrame({"v": np.arange(1000.0), "s": ["label"] * 1000})
    assert approx_nbytes(frame) == frame.memory_usage(deep=True).sum()
    words = np.array(["abc"] * 1000, dtype=object)
    assert approx_nbytes(words) > words.nbytes  # the strings themselves count
    pset = examples.levi_synthetic(n=10_000)  # 20,000 rows: two models
    floats = approx_nbytes(pset.y) + approx_nbytes(pset.dist)
    assert floats >= 3 * 20_000 * 8  # y, mean, std of every row
    assert floats <= approx_nbytes(pset) <= 40 * 20_000 * 8


def test_approx_nbytes_of_a_frame_is_its_deep_memory_usage_for_every_column_kind():
    """A frame's size is summed over its blocks (a redraw's CPU): the same number as
    ``memory_usage(deep=True).sum()`` for numbers, text (object and string dtypes), categories, dates, booleans,
    nullable integers, a MultiIndex, a frame without columns and one whose text cells are shared."""
    rng = np.random.default_rng(0)
    frames = [
        pd.DataFrame({"a": rng.random(50), "b": ["x"] * 50, "c": pd.Categorical(["u", "v"] * 25),
                      "d": pd.date_range("2020-01-01", periods=50), "e": [True, False] * 25,
                      "f": np.array(["q", None] * 25, dtype=object), "g": pd.array([1, None] * 25, dtype="Int64")}),
        pd.DataFrame({"s": pd.Series(["é", "a longer text"] * 10, dtype="string"), "n": np.arange(20)}),
        pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]}, index=pd.MultiIndex.from_product([["a", "b"], [1, 2]])),
        pd.DataFrame(index=pd.RangeIndex(7)),
        pd.DataFrame(),
        examples.levi_frame(n=300),
    ]
    for frame in frames:
        assert approx_nbytes(frame) == frame.memory_usage(deep=True).sum()


def test_invalid_bounds_are_refused():
    with pytest.raises(ValueError):
        BoundedStore(max_bytes=0, max_idle_seconds=1)
    with pytest.raises(ValueError):
        BoundedStore(max_bytes=1, max_idle_seconds=0)


def test_any_hashable_key_without_tokens_only_and_sizes_from_approx_nbytes():
    """The parsed-uploads use: tuple keys, sizes measured by the one size function, a bound read on every put."""
    limit = [1000]
    clock = Clock()
    cache = BoundedStore(max_bytes=lambda: limit[0], max_idle_seconds=3600, clock=clock)
    a, b, c = np.zeros(50), np.zeros(60), np.zeros(200)  # 400, 480, 1600 bytes
    assert 880 <= approx_nbytes([a, a, (b,)]) < 880 + 200  # each array counted once (plus the containers)
    assert cache.put(("a", "f.csv"), a) and cache.put(("b", "f.csv"), b)
    assert cache.total_bytes == 880 and cache.get(("a", "f.csv")) is a  # the object itself, not a copy
    assert cache.put(("a2", "f.csv"), np.ones(50))  # over 1000: the least recently used ("b") goes
    assert cache.get(("b", "f.csv")) is None and cache.get(("a", "f.csv")) is a and cache.total_bytes == 800
    assert not cache.put("c", c)  # larger than the bound: not kept, nothing evicted for it
    assert cache.get("c") is None and len(cache) == 2
    limit[0] = 500  # the bound is read again on the next put
    assert cache.put("d", np.zeros(10)) and cache.total_bytes <= 500 and len(cache) == 2
    clock.now += 3601
    cache.expire()
    assert len(cache) == 0 and cache.total_bytes == 0
    assert not cache.put(["unhashable"], 1)
    cache.put("e", 1, nbytes=7)
    cache.clear()
    assert len(cache) == 0 and cache.total_bytes == 0
