"""Caches of the dashboard, keyed on small explicit tokens, bounded in bytes and shared by all sessions.

Three :class:`dashboard.store.BoundedStore` instances (the store of loaded data and of parsed uploads are in
:mod:`dashboard.state`):

* :data:`RESULTS` — diagnoses (:func:`diagnose_cached`) and other computed results (:func:`cached`: the labs' runs,
  Home's example): every hit is a private deep copy, as with ``st.cache_data`` (nothing is pickled); at most
  :data:`RESULT_CACHE_BYTES`;
* :data:`FIGURES` — Plotly figures (:func:`figure`), shared as objects (never mutated); at most
  :data:`FIGURE_CACHE_BYTES`;
* :data:`STAGES` — the bins-free parts of regression diagnoses (:func:`diagnose_cached` with ``staged=True``),
  shared, never mutated; at most :data:`STAGE_CACHE_BYTES`.

Keys are explicit: the data token and the options, never the data itself (Streamlit hashes only a sample of large
arrays and frames, so hashing the data would give stale hits).  One computation per key at a time: a session that
asks for a value another session is computing waits for it instead of computing it again (30 students opening the
same lab at once compute its default run once).  Entries idle for :data:`CACHE_IDLE_SECONDS` expire; beyond the
byte budget the least recently used go first.  :func:`memory_bound` states what all the server's caches can hold.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import copy
import gc
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.io as pio
import streamlit as st

import calib_core as cc
from calib_core import plots
from calib_core.calibrators.registry import metric_keys
from calib_core.data import examples
from calib_core.diagrams.classification_corp import corp_of
from calib_core.inference import classification_subbins
from calib_core.inference.regression import warm_up
from calib_core.metrics import classification_smooth_draws, regression_decomposition_kernels, regression_kernels
from calib_core.metrics.classification_loess_binned import binned_calibration_errors
from views import pages as views
from views.classification_stages import BINS_OPTIONS as CLASSIFICATION_BINS_OPTIONS
from views.classification_stages import diagnose_classification_staged
from views.selection import with_selected

from .store import STORE_MAX_BYTES, BoundedStore, approx_nbytes

RESULT_CACHE_BYTES = 256 * 2**20  #: byte budget of :data:`RESULTS` (diagnoses and lab runs)
STAGE_CACHE_BYTES = 256 * 2**20  #: byte budget of :data:`STAGES` (bins-free parts of regression diagnoses)
FIGURE_CACHE_BYTES = 256 * 2**20  #: byte budget of :data:`FIGURES` (shared Plotly figures)
CACHE_IDLE_SECONDS = 3600.0  #: a cached result or figure not used for this long is dropped

#: Results shared by all sessions (diagnoses, lab runs, Home's example); every hit is a deep copy.
RESULTS = BoundedStore(max_bytes=RESULT_CACHE_BYTES, max_idle_seconds=CACHE_IDLE_SECONDS)
#: Plotly figures shared by all sessions.
FIGURES = BoundedStore(max_bytes=FIGURE_CACHE_BYTES, max_idle_seconds=CACHE_IDLE_SECONDS)
#: The bins-free part of each regression diagnosis (``diagnose_regression(..., stages=…)``): a change of the σ-bins
#: count or binning redoes only ENCE, the Levi table and the verdicts (about 6 MB per 1e5-row subset; shared, never
#: mutated: the diagnosis works on copies of a stage's rows); and of each classification diagnosis
#: (:func:`classification_staged`: the clinical set, smooth ECE, smoothed curve; about 20 kB per subset), plus the
#: Classification page's row bins of a bin click (``dashboard.classification_redraw.selected_rows``, ~3 MB at 1e5).
STAGES = BoundedStore(max_bytes=STAGE_CACHE_BYTES, max_idle_seconds=CACHE_IDLE_SECONDS)
#: Options of a diagnosis that its bins-free stage does not depend on (the σ-bins)
_BINS_OPTIONS = ("n_bins", "binning")
# One computation per (store, key) at a time: a lock per key being computed, dropped when nobody holds or waits for
# it.  Per key, not striped by hash: a computation may itself call :func:`memoized` for another key (the slice
# background's diagnosis, a figure of a cached result), and two keys sharing a stripe then deadlocked the session.
# Keys never depend on each other in a cycle, so per-key locks cannot deadlock.
_KEY_LOCKS: dict[tuple[int, Hashable], list] = {}
_KEY_LOCKS_GUARD = threading.Lock()


@contextlib.contextmanager
def _computing(store: BoundedStore, key: Hashable):
    """Hold the lock of (``store``, ``key``) while its value is computed; other threads computing it wait."""
    ident = (id(store), key)
    with _KEY_LOCKS_GUARD:
        entry = _KEY_LOCKS.setdefault(ident, [threading.Lock(), 0])
        entry[1] += 1
    try:
        with entry[0]:
            yield
    finally:
        with _KEY_LOCKS_GUARD:
            entry[1] -= 1
            if entry[1] == 0:
                del _KEY_LOCKS[ident]


def memoized(store: BoundedStore, key: Hashable, compute: Callable[[], Any], *, copied: bool,
             spinner: str | None = None, nbytes: Callable[[Any], int] | None = None) -> Any:
    """The value cached in ``store`` under ``key``, computed by ``compute()`` (under ``st.spinner(spinner)``, the
    calling page's own words) on a miss; its size is ``nbytes(value)`` (default :func:`dashboard.store.approx_nbytes`).
    ``copied``: the store keeps its own deep copy and every hit returns a new one (callers may do what they like
    with it); otherwise the object itself is shared and must never be mutated.  Concurrent misses of one key compute
    once; the others wait.  A value larger than the store's budget is returned but not kept."""
    def hit() -> Any:
        value = store.get(key)
        return copy.deepcopy(value) if copied and value is not None else value

    value = hit()
    if value is not None:
        return value
    with _computing(store, key):
        value = hit()
        if value is not None:
            return value
        with st.spinner(spinner) if spinner else contextlib.nullcontext():
            value = compute()
        kept = copy.deepcopy(value) if copied else value
        store.put(key, kept, nbytes=(nbytes or approx_nbytes)(kept))
    return value


def corp_cached(key: str, pset: cc.PredictionSet, **options: Any) -> dict[str, Any]:
    """``calib_core.diagrams.classification_corp.corp_of`` of the chosen rows, cached in :data:`RESULTS` on an
    explicit key and
    the options (the CORP reliability diagram, its bands, the score decomposition and the Murphy
    diagram); every hit is a private deep copy."""
    options_json = json.dumps(options, sort_keys=True)
    return memoized(RESULTS, ("corp", key, options_json), lambda: corp_of(pset, **options), copied=True,
                    spinner="CORP: PAV curves, bands and score decompositions…")


def diagnosis_entry(key: str, options: Mapping[str, Any]) -> tuple[str, str, str]:
    """The :data:`RESULTS` key of :func:`diagnose_cached`'s diagnosis of rows ``key`` with ``options`` (serialised
    with sorted keys: equal options, the same entry), for code that fills or reads that entry without a spinner."""
    return ("diagnosis", key, json.dumps(options, sort_keys=True))


def diagnose_cached(key: str, pset: cc.PredictionSet, *, staged: bool = False, **options: Any) -> cc.Report:
    """``cc.diagnose(pset, by_group=False, **options)`` cached in :data:`RESULTS` on an explicit ``key`` (data token
    + filters + selection) and the options (serialised with sorted keys, so equal options hit the same entry).

    ``staged`` (regression rows a page diagnoses again with other σ-bins): the bins-free part of the diagnosis is
    kept in :data:`STAGES` under ``key`` and the other options, so that a new ``n_bins`` or ``binning`` recomputes
    only ENCE, the Levi table and the verdicts (identical numbers; 40 instead of 100 ms of CPU at 1e5 rows)."""
    def compute() -> cc.Report:
        if staged and pset.task == "classification":  # bins-free part kept in STAGES (views.classification_stages)
            return classification_staged(key, pset, options)
        if not staged or pset.task != "regression":
            return cc.diagnose(pset, by_group=False, **options)
        free = {k: v for k, v in options.items() if k not in _BINS_OPTIONS}
        stage_key = ("stages", key, json.dumps(free, sort_keys=True))
        kept = STAGES.get(stage_key)
        stages = dict(kept) if kept is not None else {}  # the stored mapping itself is never changed
        report = cc.diagnose(pset, by_group=False, stages=stages, **options)
        if stages and (kept is None or any(kept.get(k) is not v for k, v in stages.items())):
            STAGES.put(stage_key, stages, nbytes=approx_nbytes(stages))
        return report

    return memoized(RESULTS, diagnosis_entry(key, options), compute, copied=True,
                    spinner="Diagnosing (tests, intervals and verdicts)…")


def classification_staged(key: str, pset: cc.PredictionSet, options: Mapping[str, Any]) -> cc.Report:
    """``cc.diagnose(pset, by_group=False, **options)`` of classification rows with the part the confidence bins do
    not change (clinical set, smooth ECE, ratio and TCE, smoothed calibration curve, RPS) kept in :data:`STAGES`
    under ``key`` and the other options (:func:`views.classification_stages.diagnose_classification_staged`):
    a new bins count or binning recomputes only ECE, MCE, class-wise ECE, the reliability tables and the inference
    (identical numbers).  Not cached itself: :func:`diagnose_cached` keeps the report."""
    free = {k: v for k, v in options.items() if k not in CLASSIFICATION_BINS_OPTIONS}
    stage_key = ("classification_stages", key, json.dumps(free, sort_keys=True))
    kept = STAGES.get(stage_key)
    stages = dict(kept) if kept is not None else {}  # the stored mapping itself is never changed
    report = diagnose_classification_staged(pset, stages, by_group=False, **options)
    if stages and (kept is None or any(kept.get(k) is not v for k, v in stages.items())):
        STAGES.put(stage_key, stages, nbytes=approx_nbytes(stages))
    return report


def _figure_nbytes(fig: Any) -> int:
    """What a Plotly figure holds: its trace and layout dicts (the trace objects are views of them), sized by
    :func:`_plain_nbytes` (the figure's dicts hold only plain values and arrays)."""
    import sys

    data, layout = getattr(fig, "_data", None), getattr(fig, "_layout", None)
    if data is None:
        return approx_nbytes(fig)
    if type(layout) is not dict or type(layout.get("template")) is not dict:
        return _plain_nbytes([data, layout])
    # a shared template dict (``calib_core.plots``' plain builders) is sized once per template object
    return (sys.getsizeof([data, layout]) + _plain_nbytes(data) + sys.getsizeof(layout)
            + sum(_plain_nbytes(k) + (_template_nbytes(v) if k == "template" else _plain_nbytes(v))
                  for k, v in layout.items()))


_TEMPLATE_SIZES: dict[int, tuple[dict, int]] = {}  # id(template dict) → (template dict, its _plain_nbytes)


def _template_nbytes(template: dict) -> int:
    """:func:`_plain_nbytes` of a shared template dict (never changed), computed once per template object."""
    known = _TEMPLATE_SIZES.get(id(template))
    if known is None or known[0] is not template:
        known = (template, _plain_nbytes(template))
        _TEMPLATE_SIZES[id(template)] = known
    return known[1]


_SIZE_OF = {str: lambda v: 49 + len(v), float: lambda v: 24, int: lambda v: 28, bool: lambda v: 28,
            type(None): lambda v: 0}


def _plain_nbytes(obj: Any) -> int:
    """:func:`dashboard.store.approx_nbytes` of a tree of dicts, lists and tuples of plain values and NumPy arrays
    (a figure's dicts), without its general dispatch: containers as ``sys.getsizeof`` counts them, strings
    49 + length bytes, numbers their object size, arrays their buffer; anything else through ``approx_nbytes``.
    Shared objects are counted once per reference (a figure's dicts share none that matter)."""
    import sys

    kind = type(obj)
    if kind is dict:
        return sys.getsizeof(obj) + sum(_plain_nbytes(k) + _plain_nbytes(v) for k, v in obj.items())
    if kind is list or kind is tuple:
        return sys.getsizeof(obj) + sum(_plain_nbytes(v) for v in obj)
    size = _SIZE_OF.get(kind)
    if size is not None:
        return size(obj)
    if kind is np.ndarray and obj.dtype != object:
        return int(obj.nbytes)
    return approx_nbytes(obj)


def _digest_values(h: Any, values: np.ndarray) -> None:
    """Feed an array of one column to ``h``: numbers, booleans and dates by their bytes (with the dtype), anything
    else (text, objects) by the ``repr`` of its items (distinct values have distinct reprs)."""
    if values.dtype != object and values.dtype.kind in "biufcmM":
        h.update(str(values.dtype).encode())
        h.update(np.ascontiguousarray(values).tobytes())
    else:
        h.update(repr(values.tolist()).encode())


def _digest_into(h: Any, part: Any) -> None:
    """Feed ``part`` to the hash ``h``: a DataFrame by its columns, dtypes, shape, index and the values of each
    column (:func:`_digest_values`: their bytes, not ``pd.util.hash_pandas_object``'s per-row hashing), a mapping or
    sequence item by item, anything else by its ``repr``."""
    if isinstance(part, pd.DataFrame):
        h.update(repr(("frame", list(part.columns), [str(d) for d in part.dtypes], part.shape)).encode())
        index = part.index
        if isinstance(index, pd.RangeIndex):
            h.update(repr(("range", index.start, index.stop, index.step)).encode())
        else:
            h.update(repr(("index", str(index.dtype), index.nlevels)).encode())
            _digest_values(h, np.asarray(index.to_numpy()))
        for _, column in part.items():
            _digest_values(h, np.asarray(column.to_numpy()))
    elif isinstance(part, Mapping):
        h.update(f"mapping{len(part)}".encode())
        for key in sorted(part, key=repr):
            h.update(repr(key).encode())
            _digest_into(h, part[key])
    elif isinstance(part, (list, tuple, set, frozenset)):
        items = sorted(part, key=repr) if isinstance(part, (set, frozenset)) else part
        h.update(f"{type(part).__name__}{len(part)}".encode())
        for item in items:
            _digest_into(h, item)
    else:
        h.update(repr(part).encode())


def content_key(*parts: Any) -> str:
    """A digest (BLAKE2b, 128 bits) of ``parts``: small objects a figure or a table is drawn from (diagram tables,
    colours, dashes, flags).  Keying a figure on what it is drawn from, not on the controls of the page, lets a
    control that does not change it (the σ-bins count leaves the PIT histogram alone) reuse it; a difference
    anywhere (a value, a dtype, the index, a column name) is another key."""
    h = hashlib.blake2b(digest_size=16)
    _digest_into(h, parts)
    return h.hexdigest()


def result_cached(key: Hashable, compute: Callable[[], Any], *, spinner: str | None = None) -> Any:
    """``compute()`` cached in :data:`RESULTS` on an explicit ``key`` that must determine it (data token, filters,
    the options it depends on — and no other); every hit is a private deep copy."""
    return memoized(RESULTS, ("result", key), compute, copied=True, spinner=spinner)


def figure(key: str, build: Callable[[], Any]) -> Any:
    """A Plotly figure built once per ``key`` and shared through :data:`FIGURES`: building a figure costs
    20–60 ms of Plotly validation, which would dominate a redraw.  ``key`` must determine the figure
    completely (data token, filters, options, selection drawn, epoch); the returned figure is never mutated.
    """
    return memoized(FIGURES, ("figure", key), build, copied=False, nbytes=_figure_nbytes)


def prefetched_result(key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()`` cached in :data:`RESULTS` on ``key`` and shared, not copied (never mutate it): the entry a
    :func:`prefetch` job fills.  A request that finds the job computing it waits for it (one computation per key),
    one that finds it not yet started computes it itself and the job then finds it cached."""
    return memoized(RESULTS, ("prefetched", key), compute, copied=False)


#: An idle-time job (:func:`prefetch` with ``when_idle``) starts only after a window of this many seconds in which
#: the whole process used at most :data:`PREFETCH_IDLE_SHARE` of one core (no session running a page); it is
#: dropped after :data:`PREFETCH_PATIENCE` seconds without such a window.
PREFETCH_IDLE_WINDOW = 0.25
PREFETCH_IDLE_SHARE = 0.25  #: see :data:`PREFETCH_IDLE_WINDOW`
PREFETCH_PATIENCE = 60.0  #: see :data:`PREFETCH_IDLE_WINDOW`


class Prefetch:
    """The background jobs of one data set (:func:`prefetch`): ``[key, compute, when_idle]`` in order, when they
    were asked for and ended (``done``), and the CPU time the worker spent on them (for benchmarks)."""

    def __init__(self, name: Hashable) -> None:
        self.name = name
        self.jobs: collections.deque[list] = collections.deque()
        self.taken: set[Hashable] = set()
        self.started = time.monotonic()
        self.finished: float | None = None
        self.done = threading.Event()
        self._cpu = 0.0  # CPU seconds of its finished jobs
        self._job_cpu0: float | None = None  # the worker's CPU clock when its current job began

    def cpu_seconds(self) -> float:
        """CPU time the worker has spent on these jobs so far (the current one included)."""
        with _PREFETCH_GUARD:
            running = 0.0
            if self._job_cpu0 is not None and _WORKER[0] is not None:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    running = time.clock_gettime(time.pthread_getcpuclockid(_WORKER[0].ident)) - self._job_cpu0
            return self._cpu + running


def _next_job() -> tuple[Prefetch, list] | None:
    """(its prefetch, the job) to run next, under the guard: the first job asked for now of the oldest data set
    that has one, else the first idle-time job; None when none is left."""
    runs = list(_PREFETCHES.values())
    for urgent in (True, False):
        for run in runs:
            job = next((j for j in run.jobs if not j[2]), None) if urgent else (run.jobs[0] if run.jobs else None)
            if job is not None:
                run.jobs.remove(job)
                run.taken.add(job[0])
                return run, job
    return None


def _urgent_waiting() -> bool:
    with _PREFETCH_GUARD:
        return any(not j[2] for run in _PREFETCHES.values() for j in run.jobs)


def _idle_window() -> bool | None:
    """Wait for a window in which the process was idle (True); None when a job asked for now arrived; False after
    :data:`PREFETCH_PATIENCE` seconds or at exit."""
    deadline = time.monotonic() + PREFETCH_PATIENCE
    while time.monotonic() < deadline and not _PREFETCH_STOP.is_set():
        if _urgent_waiting():
            return None
        p0, w0 = time.process_time(), time.monotonic()
        if _PREFETCH_STOP.wait(PREFETCH_IDLE_WINDOW):
            return False
        if time.process_time() - p0 <= PREFETCH_IDLE_SHARE * (time.monotonic() - w0):
            return True
    return False


def _finish(run: Prefetch) -> None:
    """Under the guard: a prefetch with no job left has ended."""
    if not run.jobs and _PREFETCHES.get(run.name) is run:
        del _PREFETCHES[run.name]
        run.finished = time.monotonic()
        run.done.set()


def _prefetch_worker() -> None:
    """The one background thread of the process: at the lowest scheduling priority (``nice`` 19 for this thread:
    the sessions' own runs go first), one job at a time through :func:`prefetched_result`."""
    with contextlib.suppress(OSError, AttributeError):  # Linux: a thread's id is a process id for setpriority
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    while not _PREFETCH_STOP.is_set():
        with _PREFETCH_READY:
            picked = _next_job()
            if picked is None:
                _PREFETCH_READY.wait()
                continue
        run, (key, compute, when_idle) = picked
        idle = _idle_window() if when_idle else True
        with _PREFETCH_GUARD:
            if idle is None:  # a job asked for now goes first; this one back at the head of its queue
                run.taken.discard(key)
                run.jobs.appendleft([key, compute, when_idle])
                continue
            run._job_cpu0 = time.thread_time()
        try:
            if idle:
                with contextlib.suppress(Exception):  # a failure is the page's to show when it asks
                    prefetched_result(key, compute)
        finally:
            with _PREFETCH_GUARD:
                run._cpu += time.thread_time() - run._job_cpu0
                run._job_cpu0 = None
                _finish(run)


_PREFETCH_GUARD = threading.Lock()
_PREFETCH_READY = threading.Condition(_PREFETCH_GUARD)
_PREFETCHES: dict[Hashable, Prefetch] = {}  # the prefetches with jobs left, per name, oldest first
_PREFETCH_STOP = threading.Event()
_WORKER: list[threading.Thread | None] = [None]
#: The latest prefetches, running or ended (benchmarks read their CPU time and when they ran).
PREFETCH_LOG: collections.deque[Prefetch] = collections.deque(maxlen=256)


def prefetch(name: Hashable, jobs: Sequence[tuple[Hashable, Callable[[], Any]]], *,
             when_idle: bool = False) -> Prefetch | None:
    """Compute ``prefetched_result(key, compute)`` for each job (key, compute) not cached yet, in order, in the
    process's one background daemon thread at the lowest priority, one job at a time; ``name`` (a data set) groups
    the jobs: those given while its earlier ones wait join its queue.  ``when_idle``: only in the server's idle time
    (:data:`PREFETCH_IDLE_WINDOW`), after every job asked for without it.  For summaries a user will probably ask
    for after some think time (the CORP band of every level of a control), computed by code that releases the GIL
    (compiled kernels), so the sessions' own runs lose little.  The values are those the page computes itself (the
    same function on the same key), so it does not matter which path computed them; a page asking for a key being
    computed waits for it, one asking for a key not yet started computes it (the prefetch then finds it cached).
    Returns the data set's prefetch (None: all cached).  At exit the thread stops after its current job (it is
    joined, so it is never torn down inside compiled code)."""
    with _PREFETCH_READY:
        run = _PREFETCHES.get(name)
        queued = {} if run is None else {j[0]: j for j in run.jobs}
        fresh = []
        for key, compute in jobs:
            if key in queued:
                queued[key][2] = queued[key][2] and when_idle  # asked for now: no longer waits for idle time
            elif (run is None or key not in run.taken) and ("prefetched", key) not in RESULTS:
                fresh.append([key, compute, when_idle])
        if _PREFETCH_STOP.is_set() or (not fresh and run is None):
            return run
        if run is None:
            run = _PREFETCHES[name] = Prefetch(name)
            PREFETCH_LOG.append(run)
        run.jobs.extend(fresh)
        if _WORKER[0] is None:
            _WORKER[0] = threading.Thread(target=_prefetch_worker, name="calibration-lab-prefetch", daemon=True)
            _WORKER[0].start()
        _PREFETCH_READY.notify()
    return run


def cancel_prefetch(name: Hashable) -> int:
    """Drop the jobs of the prefetch ``name`` (:func:`prefetch`) that have not started (a running one ends as
    usual and keeps its value): summaries of a view its user has left (other rows or bins), so that those of
    the view now shown are not queued behind them.  A page asking for a dropped key computes it itself.

    Parameters
    ----------
    name : hashable
        The prefetch's name.

    Returns
    -------
    int
        Jobs dropped.

    Examples
    --------
    >>> cancel_prefetch(("no such prefetch",))
    0
    """
    with _PREFETCH_READY:
        run = _PREFETCHES.get(name)
        if run is None:
            return 0
        dropped = len(run.jobs)
        run.jobs.clear()
        _finish(run)  # ended (a job being computed ends as usual; its value is kept)
        return dropped


@atexit.register
def _stop_prefetches() -> None:
    """At exit: no new job, and wait for the running one."""
    _PREFETCH_STOP.set()
    with _PREFETCH_READY:
        _PREFETCH_READY.notify_all()
    worker = _WORKER[0]
    if worker is not None and worker.is_alive():
        worker.join(timeout=10.0)


def cached(function: Callable[..., Any], *, max_entries: int | None = None,
           spinner: str = "Computing…") -> Callable[..., Any]:
    """``function`` with its results cached in :data:`RESULTS` (every hit is a private deep copy), keyed on the
    function and the ``repr`` of its arguments (numbers, strings, tuples: the labs' slider values).  The bound is
    :data:`RESULT_CACHE_BYTES` for all functions together; ``max_entries`` is accepted for older callers and not
    used."""
    del max_entries
    name = f"{function.__module__}.{function.__qualname__}"

    def call(*args: Any, **kwargs: Any) -> Any:
        key = ("cached", name, repr(args), repr(sorted(kwargs.items())))
        return memoized(RESULTS, key, lambda: function(*args, **kwargs), copied=True, spinner=spinner)

    return call


def clear_caches() -> None:
    """Empty :data:`RESULTS`, :data:`FIGURES` and :data:`STAGES` (tests)."""
    RESULTS.clear()
    FIGURES.clear()
    STAGES.clear()


def memory_bound(*, upload_limit_mb: int) -> dict[str, int]:
    """What the server's caches hold at most, in bytes, by cache (all sessions together; what stays after every
    session has expired): the store of loaded data (:data:`dashboard.state.STORE_MAX_BYTES`), the parsed uploads
    (the upload limit), :data:`RESULTS`, :data:`FIGURES` and :data:`STAGES`.  Sizes are those of
    :func:`dashboard.store.approx_nbytes`.  Not in it: the built-in examples (six fixed data
    sets, built once), the core's null tables and bootstrap designs (fixed-size ``lru_cache``s;
    ``calib_core.base.significance_intervals.DESIGN_MEMO`` designs of about 9 MB each at 1e5 rows) and each open
    session's own state (its upload's bytes and widgets, dropped when the session expires)."""
    bound = {
        "loaded data (dashboard.state.data_store)": STORE_MAX_BYTES,
        "parsed uploads (dashboard.state.UPLOADS)": int(upload_limit_mb) << 20,
        "diagnoses and lab runs (dashboard.cache.RESULTS)": RESULT_CACHE_BYTES,
        "figures (dashboard.cache.FIGURES)": FIGURE_CACHE_BYTES,
        "bins-free diagnosis stages (dashboard.cache.STAGES)": STAGE_CACHE_BYTES,
    }
    bound["total"] = sum(bound.values())
    return bound


def warm_up_pages() -> None:
    """The first-use work of the two diagnosis pages, done once per process on small data so that a user's first
    diagnosis does not pay it: the code paths of a diagnosis above 2,000 rows with the pages' default options
    (1,000 bootstrap replicates, 2,000 null draws), Plotly's lazily imported figure, trace and validator classes,
    its template and JSON encoding (every figure builder the pages call), and the metric and per-class tables.
    Pure computation (no Streamlit element, no session state): safe in a background thread, about 0.5 s of CPU.
    """
    reg = cc.diagnose(examples.levi_synthetic(n=2_500), by_group=False)  # 2 models × 2,500 rows: N > 2,000 paths
    shown = list(views.diagram_tables(reg, "levi_bins"))
    colors = plots.model_colors(shown)
    figs = [plots.mark_selected(plots.levi_figure(views.diagram_tables(reg, "levi_bins"), colors=colors), {})]
    curve, dashes, curve_colors = with_selected(views.diagram_tables(reg, "calibration_curve", shown), None, colors)
    figs.append(plots.calibration_curve_figure(curve, colors=curve_colors, dashes=dashes, bands=None))
    pit, pit_dashes, _ = with_selected(views.diagram_tables(reg, "pit_histogram", shown), None, colors)
    figs.append(plots.pit_histogram_figure(pit, colors=curve_colors, dashes=pit_dashes))
    z, z_dashes, _ = with_selected(views.diagram_tables(reg, "z_histogram", shown), None, colors)
    figs.append(plots.z_histogram_figure(z, colors=curve_colors, dashes=z_dashes))
    figs.append(plots.intervals_figure(views.diagram_tables(reg, "intervals", shown), colors=colors))
    figs.append(plots.qq_figure(views.diagram_tables(reg, "qq", shown), colors=colors))
    views.metric_table(reg.metrics, 0.95)

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.full(10, 0.3), size=3_000)
    labels = (probs.cumsum(axis=1) < rng.random((3_000, 1))).sum(axis=1).clip(0, 9)
    cls = cc.diagnose(cc.PredictionSet(task="classification", labels=labels, probs=probs, layout="probs"),
                      by_group=False)
    model = cls.models[0]
    rel = {model: cls.diagrams[(model, cc.ALL)]["reliability"]}
    colors = plots.model_colors([model])
    figs.append(plots.mark_selected(plots.reliability_figure(rel, colors=colors, target="top_label"), {}))
    figs.append(plots.mark_selected(plots.confidence_histogram_figure(rel, colors=colors, target="top_label"), {}))
    per_class = cls.diagrams[(model, cc.ALL)]["per_class"]
    figs.append(plots.per_class_reliability_figure(per_class, class_names=None, color=colors[model]))
    views.metric_table(cls.metrics, 0.95, keys=metric_keys("classification"))
    views.per_class_table(per_class, None)
    for fig in figs:  # what st.plotly_chart does with a figure
        pio.to_json(fig.to_dict(), validate=False)


def warm_up_kernels() -> None:
    """Load the compiled kernels of the point diagnoses (Numba: compiled once and cached on disk beside their modules,
    then loaded in ~0.1 s each) on a few rows, so that a user's first large diagnosis does not wait for them: the
    Gaussian point kernels (:func:`calib_core.metrics.regression_kernels.warm_up`), the CORP band's and the smooth
    ECE null's draws, the binned null's and the re-binning's passes
    (:mod:`calib_core.inference.classification_subbins`), and the binned loess of the clinical set
    (:func:`calib_core.metrics.classification_loess_binned.binned_calibration_errors`)."""
    regression_kernels.warm_up()
    regression_decomposition_kernels.warm_up()  # the CORP band's null draws
    classification_smooth_draws.warm_up()  # the smooth ECE null's small-cell binomial draws
    classification_subbins.warm_up()  # the binned null's sub-bin sums and the re-binning's passes
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 500)
    binned_calibration_errors(p, (rng.random(500) < p).astype(np.float64))


def warm_up_server() -> None:
    """Everything a server process does once, ahead of its first diagnosis: one BLAS thread per computation
    (:func:`one_blas_thread`), the core's N-only null tables
    (:func:`calib_core.inference.regression.warm_up`, read by the first diagnosis, so built first), the compiled
    kernels (:func:`warm_up_kernels`), then :func:`warm_up_pages`, then the labs' modules; finally the heap is
    frozen (:func:`freeze_heap`)."""
    one_blas_thread()
    warm_up()
    warm_up_kernels()
    warm_up_pages()
    from calib_core.labs import (  # noqa: F401 (imported to be frozen with the rest)
        accrue,
        cauchy,
        isotonic,
        marginal,
        nlpd,
        quantile_reg,
        random_sigma,
        temperature,
        three_names,
    )

    freeze_heap()


def one_blas_thread() -> Any:
    """Limit the BLAS libraries loaded in this process (NumPy's and SciPy's OpenBLAS) to one thread each, for every
    thread of the server (``threadpoolctl``; returns its limiter, whose ``restore_original_limits()`` undoes it;
    None when threadpoolctl is missing).  The products a redraw computes are small (1,000 bootstrap replicates ×
    256–1,000 blocks × 2 × the σ-bins): a second BLAS thread saved ~6 ms of a σ-bins change's 35 but spent ~15 ms
    more CPU spinning and synchronising (40–44 ms of process CPU against 35.5 with one thread, bench/page_cpu.py);
    a server's cores are better spent on its other sessions' runs."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover (installed with scikit-learn)
        return None
    return threadpool_limits(limits=1, user_api="blas")


def freeze_heap() -> None:
    """``gc.collect()`` then ``gc.freeze()``: the objects of the imported libraries and the warm-up (about 200,000)
    move to the permanent generation, which no later collection scans.  Python's generational collector then
    scans only what was made since: the shared caches' entries and the sessions' objects.  (Streamlit's
    ``runner.postScriptGC``, a full collection after every page run, is switched off in ``.streamlit/config.toml``:
    with ten sessions' results cached it cost 85–120 ms of CPU per run even after this freeze.)  Objects frozen are
    never collected (a garbage cycle among them would stay): they are modules, functions and caches that live as
    long as the process anyway."""
    gc.collect()
    gc.freeze()


@st.cache_resource(show_spinner=False)
def warm_up_core() -> threading.Thread:
    """Once per server process: :func:`warm_up_server` in a background thread (about 1 s of CPU), so that the
    first diagnosis a user asks for pays neither the null tables nor the first use of Plotly and the tables.
    Returns the thread; ``join()`` it to wait.  Not a daemon: a process that ends right after starting (an AppTest
    run, a short-lived server) waits the ~1 s for it instead of tearing the interpreter down while the thread is in
    native code (which aborted such a process with "terminate called without an active exception")."""
    thread = threading.Thread(target=warm_up_server, name="calibration-lab-warm-up", daemon=False)
    thread.start()
    return thread
