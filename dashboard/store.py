"""The one bounded store of the dashboard: values kept in this server process's memory, bounded in bytes and time.

Pure Python (no Streamlit import).  Every byte the dashboard keeps between reruns lives in one of its instances:

* the store of each browser session's loaded data across a page refresh or a new tab (``dashboard.state.data_store()``,
  :data:`STORE_MAX_BYTES`), keyed by an unguessable token (:meth:`BoundedStore.new_token`: 16 random bytes from
  :mod:`secrets`, URL-safe Base64) which only the session that created it puts into its own address; a request
  without the token cannot reach the entry (``tokens_only=True``: a key that is not of the token's form is never
  stored nor looked up);
* the parsed uploads shared by all sessions (``dashboard.state.UPLOADS``), keyed by (content hash, file name,
  mapping, options);
* the shared caches of :mod:`dashboard.cache`: diagnoses and lab runs (``RESULTS``), figures (``FIGURES``) and the
  bins-free stages of regression diagnoses (``STAGES``).

Every entry is charged its size from one function, :func:`approx_nbytes`.  An entry idle for longer than
``max_idle_seconds`` (no :meth:`~BoundedStore.get` or :meth:`~BoundedStore.put`) expires; when the entries together
exceed ``max_bytes`` the least recently used ones are evicted first; a value larger than the whole budget is not
kept at all.  So the store never holds more than ``max_bytes`` (as measured by :func:`approx_nbytes`).  Values are
returned as stored (not copied): they must never be mutated.  Everything lives in this server process's memory: a
restart forgets it.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd

#: Byte budget of the data store of loaded data, all sessions together (LRU eviction beyond it).
STORE_MAX_BYTES = 2 * 1024**3

#: What a token looks like (``secrets.token_urlsafe(16)`` gives 22 characters); anything else is never looked up.
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{22}")
_OBJECT_SAMPLE = 1000  # elements of an object array sized by approx_nbytes (the rest are taken to be alike)


@dataclasses.dataclass
class _Entry:
    value: Any
    nbytes: int
    last_used: float


class BoundedStore:
    """Key → value, at most ``max_bytes`` in all (least recently used evicted first; sizes from
    :func:`approx_nbytes` unless given) and expiring after ``max_idle_seconds`` without a :meth:`get` or
    :meth:`put`.  Thread-safe (sessions run in their own threads).

    ``max_bytes`` may be a callable read on every :meth:`put` (e.g. a limit from the Streamlit config);
    ``tokens_only`` keeps and looks up only keys of the form of :meth:`new_token`; ``clock`` (seconds, monotonic)
    is injectable for tests.
    """

    def __init__(self, *, max_bytes: int | Callable[[], int], max_idle_seconds: float, tokens_only: bool = False,
                 clock: Callable[[], float] = time.monotonic):
        if (not callable(max_bytes) and max_bytes <= 0) or max_idle_seconds <= 0:
            raise ValueError("max_bytes and max_idle_seconds must be positive")
        self._max_bytes = max_bytes
        self.max_idle_seconds = float(max_idle_seconds)
        self.tokens_only = bool(tokens_only)
        self._clock = clock
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()  # least recently used first
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def max_bytes(self) -> int:
        """The bound in bytes (a callable bound is read on every use)."""
        return int(self._max_bytes() if callable(self._max_bytes) else self._max_bytes)

    @staticmethod
    def new_token() -> str:
        """A fresh unguessable token: 128 random bits (``secrets.token_urlsafe(16)``, 22 URL-safe characters)."""
        return secrets.token_urlsafe(16)

    @staticmethod
    def is_token(text: object) -> bool:
        """Whether ``text`` has the form of a token (22 URL-safe characters)."""
        return isinstance(text, str) and TOKEN_PATTERN.fullmatch(text) is not None

    def _valid(self, key: object) -> bool:
        return self.is_token(key) if self.tokens_only else isinstance(key, Hashable)

    def put(self, key: Hashable, value: Any, *, nbytes: int | None = None) -> bool:
        """Keep ``value`` (``nbytes`` bytes, default :func:`approx_nbytes` of it) under ``key``, replacing what was
        there; evict the least recently used other entries while the total exceeds ``max_bytes``.  Returns False
        (and keeps nothing under ``key``) when the value alone exceeds ``max_bytes`` or ``key`` is not valid."""
        if not self._valid(key):
            return False
        size = approx_nbytes(value) if nbytes is None else int(nbytes)
        bound = self.max_bytes
        with self._lock:
            now = self._clock()
            self._expire(now)
            self._remove(key)
            if size > bound:
                return False
            self._entries[key] = _Entry(value, size, now)
            self._bytes += size
            while self._bytes > bound:  # the new entry is the most recent: others go first
                self._remove(next(iter(self._entries)))
            return True

    def get(self, key: Hashable) -> Any | None:
        """The value under ``key`` (and it counts as used now), or None if unknown, expired or evicted."""
        if not self._valid(key):
            return None
        with self._lock:
            now = self._clock()
            self._expire(now)
            entry = self._entries.get(key)
            if entry is None:
                return None
            entry.last_used = now
            self._entries.move_to_end(key)
            return entry.value

    def discard(self, key: Hashable) -> None:
        """Forget ``key``'s entry (no error if there is none)."""
        with self._lock:
            self._remove(key)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def expire(self) -> None:
        """Drop the entries idle for longer than ``max_idle_seconds`` now (every :meth:`get` and :meth:`put` does
        this too)."""
        with self._lock:
            self._expire(self._clock())

    @property
    def total_bytes(self) -> int:
        """Sum of the sizes of the entries kept (expired ones included until the next call that expires)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` has an unexpired entry (does not count as a use)."""
        with self._lock:
            entry = self._entries.get(key) if self._valid(key) else None
            return entry is not None and self._clock() - entry.last_used <= self.max_idle_seconds

    # -- under the lock ---------------------------------------------------------------------------------------
    def _remove(self, key: Hashable) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry.nbytes

    def _expire(self, now: float) -> None:
        while self._entries:  # oldest use first: stop at the first entry still fresh
            key, entry = next(iter(self._entries.items()))
            if now - entry.last_used <= self.max_idle_seconds:
                break
            self._remove(key)


def approx_nbytes(obj: Any, *, _seen: set[int] | None = None) -> int:
    """Memory held by ``obj``, roughly: NumPy buffers (object arrays: pointers plus their elements, sized on an
    even sample of 1,000 — a few objects repeated count once), pandas objects (``memory_usage(deep=True)``),
    strings and bytes, recursing into containers, dataclasses and instance ``__dict__``; each object counted
    once.  The one size function of :class:`BoundedStore`."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen or obj is None:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        base = obj if obj.base is None or not isinstance(obj.base, np.ndarray) else obj.base
        if id(base) in seen and base is not obj:
            return 0
        seen.add(id(base))
        if base.dtype == object and base.size:  # pointers + the elements, sized on an even sample of them
            flat = base.reshape(-1)
            sample = flat[:: max(1, flat.size // _OBJECT_SAMPLE)][:_OBJECT_SAMPLE]
            distinct = {id(x): x for x in sample}
            if len(distinct) * 10 <= len(sample):  # a few objects repeated (labels such as "cal", "test")
                return int(base.nbytes + sum(sys.getsizeof(x) for x in distinct.values()))
            per_item = sum(sys.getsizeof(x) for x in sample) / len(sample)
            return int(base.nbytes + per_item * flat.size)
        return int(base.nbytes)
    if isinstance(obj, pd.DataFrame):
        return _frame_nbytes(obj)
    if isinstance(obj, pd.Series | pd.Index):
        usage = obj.memory_usage(deep=True)
        return int(usage.sum() if hasattr(usage, "sum") else usage)
    if isinstance(obj, str | bytes | bytearray | int | float | bool | complex):
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(approx_nbytes(k, _seen=seen) + approx_nbytes(v, _seen=seen)
                                        for k, v in obj.items())
    if isinstance(obj, list | tuple | set | frozenset):
        return sys.getsizeof(obj) + sum(approx_nbytes(v, _seen=seen) for v in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sys.getsizeof(obj) + sum(approx_nbytes(getattr(obj, f.name, None), _seen=seen)
                                        for f in dataclasses.fields(obj))
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return sys.getsizeof(obj) + approx_nbytes(vars(obj), _seen=seen)
    return sys.getsizeof(obj)


def _frame_nbytes(frame: pd.DataFrame) -> int:
    """``frame.memory_usage(deep=True).sum()``, summed over the frame's blocks instead of one Series per column
    (the same number: a block's ``nbytes``, plus its objects' sizes for object blocks, plus the index's deep usage;
    ~0.3 ms → 3 µs per small frame, and a lab run or a diagnosis holds dozens of them)."""
    try:
        total = frame.index.memory_usage(deep=True)
        for block in frame._mgr.blocks:  # noqa: SLF001 (pandas' block manager: the frame's arrays without copies)
            values = block.values
            if isinstance(values, np.ndarray):
                total += values.nbytes
                if values.dtype == object:
                    total += pd._libs.lib.memory_usage_of_objects(values.ravel())  # noqa: SLF001
            elif hasattr(values, "memory_usage"):
                total += values.memory_usage(deep=True)
            else:
                total += values.nbytes
        return int(total)
    except (AttributeError, TypeError):  # another pandas layout: its own (slower) sum
        return int(frame.memory_usage(deep=True).sum())
