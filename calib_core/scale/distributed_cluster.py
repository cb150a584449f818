"""Running on a cluster: a Dask client (:class:`open_client`), one pass over the partitions as a tree of merges on
the workers (:func:`run_tree`), the failures it names (:class:`PartitionError`) and the peak memory of the processes.

Dask and distributed are an optional extra (``pip install "calibration-lab[dask]"``); they are imported only
inside the functions that run on a cluster, so ``import calib_core`` never needs them.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from ..base.predictions import InputError
from .distributed_partitions import Partition

__all__ = [
    "IN_PROCESS",
    "PartitionError",
    "open_client",
    "process_peak_mb",
    "run_tree",
    "task_cpu_seconds",
    "worker_peak_mb",
]

IN_PROCESS = "in-process"
"""``scheduler=IN_PROCESS``: no cluster — the partitions are read and summarised one after the other in this
process (memory: one partition's working set), and Dask need not be installed (the dashboard's default engine)."""

_FAN_IN = 8


class PartitionError(RuntimeError):
    """Partitions that failed twice (an exception twice, or two workers that died running them).

    The message names every failed partition and says what to do.

    Parameters
    ----------
    failures : sequence of (str, str)
        (partition name, error text) of every failed partition.

    Attributes
    ----------
    failures : list of (str, str)
        The same.

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """

    def __init__(self, failures: Sequence[tuple[str, str]]) -> None:
        self.failures = list(failures)
        lines = "; ".join(f"{name}: {err}" for name, err in self.failures[:10])
        more = f" (and {len(self.failures) - 10} more)" if len(self.failures) > 10 else ""
        super().__init__(
            f"{len(self.failures)} partition(s) failed twice and were not summarised — {lines}{more}. "
            "What to do: fix or remove the file(s) named (a corrupt file fails on every read), or give the workers "
            "more memory if they died; the result is never computed without them."
        )


LOCAL_WORKER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "500ms",
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": 128 << 20,
    "distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_": 32 << 20,
}
"""Dask settings of the workers of a new ``LocalCluster``.  Timers: a worker's timers cost CPU per second of wall
time, not per row — the statistical profiler (a stack sample every 10 ms), the event loop's 20 ms tick, the 0.5 s
system monitor and the 0.1 s memory monitor took 3.5 % of a core on an idle worker, 0.4 % with these settings; on
a loaded machine, where a partition's wall time is many times its CPU time, that was half of the workers' CPU (the
memory monitor still enforces the memory limit, twice a second).  Memory: Dask starts its workers with
``MALLOC_TRIM_THRESHOLD_=65536``, which also freezes glibc's mmap threshold at 128 KiB, so every array of a
partition (8 MB per column of 10⁶ rows) is a fresh ``mmap`` whose pages fault in one by one and go back to the
system when freed — 45 % of a partition's CPU time; arrays up to 32 MiB come from the heap instead and up to
128 MiB of freed memory is kept for the next partition (the worker's memory stays bounded: a partition's working
set plus that reserve)."""

class open_client:  # noqa: N801 - used as a context manager, like a function
    """``with open_client(scheduler, n_workers=2) as client``: a Dask client for the pipelines.

    A ``distributed.Client`` of an existing cluster (``scheduler`` an address such as ``tcp://10.0.0.5:8786``, or a
    ``Client``, used as it is and not closed) or of a new ``LocalCluster`` of ``n_workers`` single-threaded worker
    processes with ``memory_limit`` each (closed on exit), or None for :data:`IN_PROCESS` (everything runs in this
    process, :func:`run_tree` with no client).  The local scheduler runs with
    ``distributed.scheduler.allowed-failures = 1`` (a task that was on two workers that died is reported, not tried
    a third time) and ``worker-saturation = 1.0`` (a worker holds only the tasks it runs, so a worker that dies puts
    only those under suspicion).

    Parameters
    ----------
    scheduler : str, Client or None, default None
        None (a new ``LocalCluster``), :data:`IN_PROCESS`, a scheduler address or a ``Client``.
    n_workers : int, default 2
        Worker processes of a new ``LocalCluster``.
    memory_limit : str or int, default "2GiB"
        Memory limit of each new worker.
    threads_per_worker : int, default 1
        Threads of each new worker.

    Raises
    ------
    InputError
        On entry, if the scheduler at the address cannot be reached.

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """

    def __init__(self, scheduler: Any = None, *, n_workers: int = 2, memory_limit: str | int = "2GiB",
                 threads_per_worker: int = 1) -> None:
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.memory_limit = memory_limit
        self.threads_per_worker = threads_per_worker
        self._own: list[Any] = []

    def __enter__(self) -> Any:
        if isinstance(self.scheduler, str) and self.scheduler == IN_PROCESS:
            return None
        if hasattr(self.scheduler, "run_tree"):  # an in-process engine (scale.embedded): its own threads, no Dask
            return self.scheduler
        import dask
        from distributed import Client, LocalCluster

        if self.scheduler is not None and not isinstance(self.scheduler, str):
            return self.scheduler  # a Client
        if isinstance(self.scheduler, str):
            try:
                client = Client(self.scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise InputError(f"cannot reach the Dask scheduler ({exc})", source=self.scheduler,
                                 hint="check the address (tcp://HOST:PORT) and that the scheduler runs") from None
            self._own = [client]
            return client
        with dask.config.set({"distributed.scheduler.allowed-failures": 1,
                              "distributed.scheduler.worker-saturation": 1.0, **LOCAL_WORKER_CONFIG}):
            cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=self.threads_per_worker,
                                   processes=True, memory_limit=self.memory_limit, dashboard_address=None,
                                   silence_logs=50)
            client = Client(cluster)
        self._own = [client, cluster]
        client.run(_warm_up)  # the engine's imports are part of starting a worker, not of its first partition
        return client

    def __exit__(self, *exc: Any) -> None:
        for obj in self._own:
            obj.close()
        self._own = []


def run_tree(client: Any, leaf: Callable[[Partition], Any], parts: Sequence[Partition],
             combine: Callable[..., Any], *, stage: str) -> Any:
    """``combine`` of ``leaf(p)`` over all partitions, merged in a tree on the workers.

    One task per partition (``retries=1``), merged by ``combine`` tasks of fan-in 8 on the workers as the partitions
    finish.  Only as many partition tasks are in flight as the cluster has threads, so a worker that dies had only
    the tasks it was running: those are the partitions Dask puts under suspicion and runs again elsewhere.  Every
    partition is run even when some fail.  ``leaf`` and ``combine`` are sent to the workers, so they must be
    importable module-level functions (or closures over them).

    Parameters
    ----------
    client : distributed.Client or None
        The cluster; None runs everything in this process (errors propagate as they are).
    leaf : callable
        ``leaf(partition)`` → a mergeable value.
    parts : sequence of Partition
        The partitions.
    combine : callable
        ``combine(*values)`` → their merge (associative).
    stage : str
        Names the tasks (``calib-<stage>-…``).

    Returns
    -------
    object
        The root's value.

    Raises
    ------
    PartitionError
        Naming every partition that failed twice, with its error (an exception raised twice, or ``KilledWorker``
        when the workers running it died).

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """
    if hasattr(client, "run_tree"):  # an in-process engine (scale.embedded): the same tree on its thread pool
        return client.run_tree(leaf, parts, combine, stage=stage)
    if client is None:  # in this process, one partition after the other (tests, debugging)
        level = [leaf(p) for p in parts]
        while len(level) > 1:
            level = [combine(*level[i:i + _FAN_IN]) for i in range(0, len(level), _FAN_IN)]
        return level[0]
    import uuid

    from distributed import as_completed

    token = uuid.uuid4().hex[:8]
    todo = iter(parts)
    of_key: dict[str, Partition] = {}
    queue = as_completed()
    n_merges = 0

    def submit_leaf() -> None:
        part = next(todo, None)
        if part is not None:
            fut = client.submit(partial(_timed_call, leaf), part, key=f"calib-{stage}-{part.index}-{token}", retries=1,
                                pure=False)
            of_key[fut.key] = part
            queue.add(fut)

    for _ in range(max(1, sum(client.nthreads().values()))):
        submit_leaf()
    ready: list[Any] = []
    failed: list[tuple[str, str]] = []
    running = len(parts)  # partitions not yet finished (merges are tracked through ``ready``)
    for fut in queue:
        part = of_key.get(fut.key)
        if part is not None:
            running -= 1
            submit_leaf()
            if fut.status != "finished":
                failed.append((part.name, _error_text(fut)))
                continue
        elif fut.status != "finished":
            fut.result()  # a merge failed: its error as it is
        ready.append(fut)
        if failed:
            ready = []  # no result will be given: stop merging, keep running the partitions to name every failure
            continue
        if len(ready) >= _FAN_IN or (running == 0 and len(ready) > 1 and queue.count() == 0):
            n_merges += 1
            group, ready = ready[:_FAN_IN], ready[_FAN_IN:]
            queue.add(client.submit(partial(_timed_call, combine), *group,
                                    key=f"calib-{stage}-merge-{n_merges}-{token}", retries=1, pure=False))
    if failed:
        raise PartitionError(failed)
    assert len(ready) == 1, len(ready)
    return ready[0].result()


_TASK_CPU = [0.0]  # CPU seconds of this process's threads inside run_tree's tasks

def _warm_up() -> None:
    """Import what a partition task needs (pandas, pyarrow's Parquet reader, the summariser) when a worker starts."""
    importlib.import_module("pandas")
    importlib.import_module("pyarrow.parquet")
    importlib.import_module("calib_core.scale.distributed")  # by name: this module is imported by it
    importlib.import_module("calib_core.scale.summary")


def _timed_call(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, its thread CPU time added to :func:`task_cpu_seconds`."""
    t = time.thread_time()
    try:
        return fn(*args)
    finally:
        _TASK_CPU[0] += time.thread_time() - t


def task_cpu_seconds() -> float:
    """CPU seconds this process spent inside the tasks of :func:`run_tree` (partitions and merges), for
    ``client.run(task_cpu_seconds)``: beside the worker process's whole CPU time it shows what Dask itself costs.

    Returns
    -------
    float
        Thread CPU seconds (``time.thread_time``) summed over the tasks run in this process so far.

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """
    return _TASK_CPU[0]

def process_peak_mb() -> float:
    """This process's peak resident memory in MB since it started: ``VmHWM`` of ``/proc/self/status`` (Linux).

    Not ``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries that peak across ``fork`` + ``exec`` (``exec_mmap`` keeps
    the larger of the old and new maxima), so a Dask worker process spawned by a client holding 3.6 GB reports
    3.6 GB before it has read a row — which is what the classification benchmark at 10⁸ rows reported "per worker"
    (its client had just run DuckDB over 2·10⁸ rows).  ``VmHWM`` is the high-water mark of the memory map that
    ``exec`` created.  Elsewhere (no ``/proc``) ``ru_maxrss`` is returned, an upper bound.

    Returns
    -------
    float
        Peak resident memory in MB.

    References
    ----------
    .. [1] The Linux man-pages project. proc(5): /proc/pid/status, field VmHWM (peak resident set size).
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    divisor = 1024.0 * 1024.0 if os.uname().sysname == "Darwin" else 1024.0  # bytes on macOS, kB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / divisor


def worker_peak_mb(client: Any) -> dict[str, float]:
    """Worker address → that worker process's peak resident memory in MB.

    :func:`process_peak_mb`, run on each worker; a worker restarted by its nanny starts a new peak.

    Parameters
    ----------
    client : distributed.Client
        The cluster.

    Returns
    -------
    dict of str to float
        Peak resident memory of every worker.

    References
    ----------
    .. [1] The Linux man-pages project. proc(5): /proc/pid/status, field VmHWM (peak resident set size).
    .. [2] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """
    return {str(k): float(v) for k, v in client.run(process_peak_mb).items()}


def _error_text(future: Any) -> str:
    try:
        exc = future.exception()
    except Exception as err:  # noqa: BLE001 - a cancelled future has no exception to show
        return f"{type(err).__name__}: {err}"
    if type(exc).__name__ == "KilledWorker":
        return "the workers running it died twice (KilledWorker: out of memory or a crash in a native library?)"
    return f"{type(exc).__name__}: {str(exc)[:300]}"
