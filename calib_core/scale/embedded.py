"""An embedded engine for Parquet data sets past memory: the Dask pipelines' passes on a thread pool of this process.

:func:`calib_core.scale.distributed.summarize_parquet` and
:func:`~calib_core.scale.distributed.slice_summary_parquet` make every pass over the data as
``run_tree(client, leaf, partitions, combine)``: plan the partitions from the Parquet footers, read and parse each
with the reader of ``cc.load_predictions`` (pyarrow, page checksums verified, invalid rows counted per reason),
reduce it to a mergeable summary, merge.  :class:`EmbeddedEngine` is a "client" that runs such a pass in this
process — no cluster, no Dask — on ``threads`` threads (pyarrow's decoding and NumPy's array passes release the
GIL), so the exact equal-count σ edges (radix select), the summaries and the slice sketches are computed by the
same leaf and merge functions as on Dask:

* **Bounded memory.** At most ``window`` (default 2 × threads) partitions are between submitted and merged: ``threads``
  being read and summarised, the others finished and waiting for their turn in the merge; a partition is at most
  ``rows_per_partition`` rows of whole row groups, or a slice of a row group larger than the partition budget
  (:func:`~calib_core.scale.distributed_partitions.plan_partitions`), so the working set is about
  threads × one partition's, whatever the size of the data set.
* **Exact merging, the same tree.** Finished partitions are merged in partition order in a tree of fan-in 8 —
  the tree of the serial ``scheduler=IN_PROCESS`` run, built as results arrive (a level's group is merged once its 8
  members are in) — so the merged summary is bit for bit the serial one, whatever the threads and the order in
  which the partitions finish; its exact sums and counts are also those of the Dask path and of ``cc.diagnose``
  (``docs/large-data.md``).
* **Failures named.** A partition whose leaf raises is run again once (Dask's ``retries=1``); one that fails twice
  is named — file, row groups, rows — with its error in a
  :class:`~calib_core.scale.distributed_cluster.PartitionError` after every other partition has been run (so every
  failure is named); nothing is merged once a partition has failed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from .distributed import ParquetSummary, SliceParquetSummary, slice_summary_parquet, summarize_parquet
from .distributed_cluster import PartitionError
from .distributed_partitions import DEFAULT_ROWS_PER_PARTITION

__all__ = [
    "EMBEDDED",
    "MAX_DEFAULT_THREADS",
    "EmbeddedEngine",
    "default_threads",
    "slice_summary_parquet_embedded",
    "summarize_parquet_embedded",
]

EMBEDDED = "embedded"
"""The engine's name (the CLI's ``--engine embedded``)."""

MAX_DEFAULT_THREADS = 4
"""Most threads :func:`default_threads` gives: memory is threads × one partition's working set."""

_FAN_IN = 8  # the merge tree's fan-in, as run_tree's


def default_threads() -> int:
    """Threads of the engine by default: the CPUs this process may run on, at most :data:`MAX_DEFAULT_THREADS`.

    min(|sched_getaffinity(0)| (else ``os.cpu_count()``), 4), at least 1.

    Returns
    -------
    int
        The thread count.

    References
    ----------
    .. [1] Gray, J., & Reuter, A. (1993). Transaction Processing: Concepts and Techniques. Morgan Kaufmann
       (bounded-buffer producer–consumer pipelines).
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_DEFAULT_THREADS, cpus))


class EmbeddedEngine:
    """The in-process engine: pass it as ``scheduler=`` to ``summarize_parquet`` / ``slice_summary_parquet``.

    ``run_tree(leaf, parts, combine, stage=...)`` computes combine(leaf(p) for p in parts) on ``threads`` threads of
    this process, in the merge tree of the serial run (fan-in 8, partitions in order), holding at most ``window``
    partitions between submission and merge (module docstring).  ``stats`` counts what it did: leaves run, retries,
    the most partitions in flight and the most finished ones waiting for the merge.

    Parameters
    ----------
    threads : int, optional
        Threads (default :func:`default_threads`).
    window : int, optional
        Partitions submitted and not yet merged, at most (default 2 × threads; at least ``threads``).

    Attributes
    ----------
    threads : int
        The threads.
    window : int
        The window.
    stats : dict of str to int
        ``leaves``, ``retries``, ``max_in_flight``, ``max_waiting`` (over every pass run).

    Raises
    ------
    ValueError
        If ``threads`` < 1.

    Examples
    --------
    >>> eng = EmbeddedEngine(threads=2)
    >>> eng.run_tree(lambda p: p * p, list(range(10)), lambda *v: sum(v), stage="demo")
    285
    >>> eng.stats["max_in_flight"] <= eng.window
    True

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    .. [2] Raasveldt, M., & Mühleisen, H. (2019). DuckDB: an embeddable analytical database. Proceedings of the 2019
       International Conference on Management of Data (SIGMOD), 1981–1984.
    """

    def __init__(self, threads: int | None = None, *, window: int | None = None) -> None:
        self.threads = default_threads() if threads is None else int(threads)
        if self.threads < 1:
            raise ValueError(f"threads must be at least 1, got {self.threads}")
        self.window = max(self.threads, 2 * self.threads if window is None else int(window))
        self.stats: dict[str, int] = {"leaves": 0, "retries": 0, "max_in_flight": 0, "max_waiting": 0}

    def describe(self) -> str:
        """E.g. ``the embedded engine (this process, 2 threads)``.

        Returns
        -------
        str
            Where a pass runs, in messages.
        """
        return f"the embedded engine (this process, {self.threads} thread{'s' if self.threads != 1 else ''})"

    def scheduler_info(self) -> dict[str, Any]:
        """What ``distributed.Client.scheduler_info`` gives, for the pipelines' description of the cluster.

        Returns
        -------
        dict
            ``address`` and one ``workers`` entry (this process) with its ``nthreads``.
        """
        return {"address": "embedded engine", "workers": {"this process": {"nthreads": self.threads}}}

    def run_tree(self, leaf: Callable[[Any], Any], parts: Sequence[Any], combine: Callable[..., Any], *,
                 stage: str) -> Any:
        """``combine`` of ``leaf(p)`` over all partitions, on the pool, in the serial run's merge tree.

        The tree: the partitions' values in order, merged 8 at a time into the next level (the last group of a
        level may be smaller; a level of one value is the root) — ``run_tree(None, …)``'s tree, built as the
        values arrive.

        Parameters
        ----------
        leaf : callable
            ``leaf(partition)`` → a mergeable value (run on the pool's threads).
        parts : sequence of Partition
            The partitions (anything with a ``name`` is named in failures).
        combine : callable
            ``combine(*values)`` → their merge (run in this thread).
        stage : str
            Names the pool's threads (``calib-<stage>``).

        Returns
        -------
        object
            The root's value.

        Raises
        ------
        PartitionError
            Naming every partition whose leaf raised twice, with its error.
        ValueError
            If there is no partition.

        References
        ----------
        .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling.
           Proceedings of the 14th Python in Science Conference (SciPy 2015), 130–136.
        """
        parts = list(parts)
        if not parts:
            raise ValueError("no partition to run")
        levels: list[list[Any]] = []
        failed: list[tuple[int, str]] = []

        def push(value: Any, k: int = 0) -> None:
            while True:
                if len(levels) <= k:
                    levels.append([])
                levels[k].append(value)
                if len(levels[k]) < _FAN_IN:
                    return
                group, levels[k] = levels[k], []
                value, k = combine(*group), k + 1

        done: dict[int, Any] = {}
        tried: dict[int, int] = {}
        pending: dict[Future, int] = {}
        next_submit = next_merge = 0
        pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix=f"calib-{stage}")
        try:
            while next_merge < len(parts):
                while next_submit < len(parts) and next_submit - next_merge < self.window:
                    pending[pool.submit(leaf, parts[next_submit])] = next_submit
                    tried[next_submit] = 1
                    next_submit += 1
                self.stats["max_in_flight"] = max(self.stats["max_in_flight"], next_submit - next_merge)
                finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in finished:
                    i = pending.pop(fut)
                    exc = fut.exception()
                    if exc is None:
                        self.stats["leaves"] += 1
                        done[i] = None if failed else fut.result()
                    elif tried[i] < 2:  # run once more, as Dask's retries=1
                        self.stats["retries"] += 1
                        tried[i] += 1
                        pending[pool.submit(leaf, parts[i])] = i
                    else:
                        failed.append((i, f"{type(exc).__name__}: {str(exc)[:300]}"))
                        done[i] = None
                self.stats["max_waiting"] = max(self.stats["max_waiting"], len(done))
                while next_merge in done:  # in partition order, so the tree is the serial one
                    value = done.pop(next_merge)
                    next_merge += 1
                    if failed:
                        levels.clear()  # no result will be given: keep running the partitions to name every failure
                    else:
                        push(value)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if failed:
            raise PartitionError([(str(getattr(parts[i], "name", i)), err) for i, err in sorted(failed)])
        k = 0
        while True:  # the last, partial groups: merged level by level as the serial tree merges them
            rest = levels[k]
            if len(rest) == 1 and k == len(levels) - 1:
                return rest[0]
            levels[k] = []
            if rest:
                push(combine(*rest), k + 1)
            k += 1


def summarize_parquet_embedded(
    paths_or_glob: Any,
    *,
    threads: int | None = None,
    rows_per_partition: int | None = DEFAULT_ROWS_PER_PARTITION,
    columns: Mapping[str, Any] | None = None,
    task: str | None = None,
    **options: Any,
) -> ParquetSummary:
    """The mergeable calibration summary of a Parquet data set, computed in this process on ``threads`` threads.

    ``summarize_parquet(paths_or_glob, scheduler=EmbeddedEngine(threads), …)``: the same plan, head, exact
    equal-count σ edges (radix select over (σ, row number): typically two passes), summaries (a third pass) and drop
    counts as on Dask, on a thread pool with bounded memory (:class:`EmbeddedEngine`).  Σ over partitions of the
    per-partition sums; the merged sums are exact, so the report equals the in-memory ``cc.diagnose`` where
    ``docs/large-data.md`` says "exact".

    Parameters
    ----------
    paths_or_glob : str, path-like or iterable of them
        A file, a directory, a glob or a list of them.
    threads : int, optional
        Threads (default :func:`default_threads`).
    rows_per_partition : int or None, default DEFAULT_ROWS_PER_PARTITION
        Rows of a partition (whole row groups; None: as many as keep a partition's working set near 600 MB).
    columns : mapping, optional
        The column mapping, as for ``cc.load_predictions``.
    task : {"regression", "classification"}, optional
        The task (default: detected from the first rows).
    **options
        The other options of ``summarize_parquet`` (``n_bins``, ``pit_bins``, ``strategy``, ``seed``, ``by_group``,
        ``spec``, ``layout``, ``crossing``, ``renormalize``, spec options).

    Returns
    -------
    ParquetSummary
        As ``summarize_parquet``; ``cluster`` says "the embedded engine (this process, T threads)".

    Raises
    ------
    InputError
        For bad input (unreadable or disagreeing files, a wrong mapping, fewer than two valid rows).
    PartitionError
        When partitions failed twice (each named: file, row groups, rows).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Raasveldt, M., & Mühleisen, H. (2019). DuckDB: an embeddable analytical database. Proceedings of the 2019
       International Conference on Management of Data (SIGMOD), 1981–1984.
    .. [3] Knuth, D. E. (1998). The Art of Computer Programming, Vol. 3: Sorting and Searching, 2nd ed., §5.2.5
       (radix sorting). Addison-Wesley.
    """
    engine = EmbeddedEngine(threads)
    t0 = time.perf_counter()
    result = summarize_parquet(paths_or_glob, scheduler=engine, rows_per_partition=rows_per_partition,
                               columns=columns, task=task, **options)
    result.cluster = engine.describe()
    result.seconds["total"] = time.perf_counter() - t0
    return result


def slice_summary_parquet_embedded(
    paths_or_glob: Any,
    *,
    threads: int | None = None,
    **options: Any,
) -> SliceParquetSummary:
    """The slice explorer's summary of a Parquet data set, computed in this process on ``threads`` threads.

    ``slice_summary_parquet(paths_or_glob, scheduler=EmbeddedEngine(threads), …)``: the hashed-sample sketch pass,
    then the per-cell sums of every slice column and pair, merged exactly (counts) or by TwoSum (float sums), in the
    serial run's merge tree.

    Parameters
    ----------
    paths_or_glob : str, path-like or iterable of them
        A file, a directory, a glob or a list of them.
    threads : int, optional
        Threads (default :func:`default_threads`).
    **options
        The other options of ``slice_summary_parquet`` (``columns``, ``task``, ``n_bins``, ``sample_rows``,
        ``target``, ``seed``, ``rows_per_partition``).

    Returns
    -------
    SliceParquetSummary
        As ``slice_summary_parquet``.

    Raises
    ------
    InputError
        For bad input, or when no row is valid.
    PartitionError
        When partitions failed twice.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Raasveldt, M., & Mühleisen, H. (2019). DuckDB: an embeddable analytical database. Proceedings of the 2019
       International Conference on Management of Data (SIGMOD), 1981–1984.
    """
    engine = EmbeddedEngine(threads)
    result = slice_summary_parquet(paths_or_glob, scheduler=engine, **options)
    result.cluster = engine.describe()
    return result

