"""The engine options of the command line: ``--engine memory|embedded|dask`` and what each engine needs.

``report`` reads FILE into memory (``memory``), or summarises a Parquet data set past memory in this process
(``embedded``: :mod:`calib_core.scale.embedded`, a thread pool with bounded memory) or on a Dask cluster (``dask``:
a new ``LocalCluster`` or the running one at ``--scheduler``).  Without ``--engine``:

* ``--scheduler`` names a cluster → ``dask``;
* FILE is a glob (quoted, so that the shell does not expand it) or a directory whose Parquet files lie directly in it
  and are not forecast-hub files (no ``output_type`` column), and neither ``--truth`` nor ``--output-type`` is
  given → ``embedded``;
* anything else (one file, a summary file, a forecast hub) → ``memory`` (a summary file is opened as such).

* :func:`add_engine_arguments` — the options;
* :func:`resolve_engine` — the engine of a command line.
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path

__all__ = ["ENGINES", "add_engine_arguments", "resolve_engine"]

ENGINES = ("memory", "embedded", "dask")
"""The values of ``--engine``."""

_HUB_COLUMNS = ("output_type", "output_type_id")


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--engine``, ``--threads``, ``--scheduler``, ``--workers``, ``--memory-limit`` and
    ``--rows-per-partition``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser (or sub-parser) to add them to.
    """
    parser.add_argument("--engine", choices=ENGINES, default=None,
                        help="memory: read FILE into memory; embedded: summarise a Parquet data set (glob, directory "
                        "or file) in this process with bounded memory; dask: summarise it on Dask (default: dask "
                        "with --scheduler, embedded for a glob or a directory of Parquet files, else memory)")
    parser.add_argument("--threads", type=int, default=None,
                        help="--engine embedded: threads (default: the CPUs, at most 4; memory is about threads x "
                        "one partition)")
    parser.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                        help="--engine dask: address of a running Dask scheduler (default: a new local cluster)")
    parser.add_argument("--workers", type=int, default=2, help="--engine dask: local worker processes (default 2)")
    parser.add_argument("--memory-limit", default="2GiB",
                        help="--engine dask: memory per local worker (default 2GiB)")
    parser.add_argument("--rows-per-partition", type=int, default=None,
                        help="--engine embedded/dask: rows per partition, whole row groups (default: about 6e8 "
                        "bytes / (230 bytes x columns), e.g. 869,565 rows of y, mean, std)")


def _looks_like_a_data_set(text: str) -> bool:
    """A glob that is not itself a path, or a directory with Parquet files directly in it that are not hub files."""
    path = Path(text)
    if glob.has_magic(text) and not path.exists():
        return True
    if not path.is_dir():
        return False
    files = sorted(p for p in path.glob("*.parquet") if p.is_file())
    if not files:
        return False
    try:
        import pyarrow.parquet as pq

        names = set(pq.read_schema(files[0]).names)
    except Exception:  # noqa: BLE001 - unreadable: the data-set reader names the file and says why
        return True
    return not set(_HUB_COLUMNS) <= names


def resolve_engine(args: argparse.Namespace) -> str:
    """The engine of a ``report`` command line (module docstring).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (``engine``, ``scheduler``, ``file`` — a list or a string —, ``truth``, ``output_type``).

    Returns
    -------
    str
        ``"memory"``, ``"embedded"`` or ``"dask"``.

    Raises
    ------
    ValueError
        If ``--scheduler`` is given with ``--engine memory`` or ``embedded``, or ``--threads`` < 1.

    Examples
    --------
    >>> resolve_engine(argparse.Namespace(engine=None, scheduler=None, file=["data/*.parquet"], truth=None,
    ...                                   output_type=None, threads=None))
    'embedded'
    >>> resolve_engine(argparse.Namespace(engine=None, scheduler="tcp://h:8786", file=["data/*.parquet"],
    ...                                   truth=None, output_type=None, threads=None))
    'dask'
    """
    threads = getattr(args, "threads", None)
    if threads is not None and threads < 1:
        raise ValueError(f"--threads must be at least 1, got {threads}")
    if args.engine is not None:
        if args.scheduler is not None and args.engine != "dask":
            raise ValueError(f"--scheduler names a Dask cluster: use it with --engine dask (or without --engine), "
                             f"not --engine {args.engine}")
        return str(args.engine)
    if args.scheduler is not None:
        return "dask"
    files = [args.file] if isinstance(args.file, str) else list(args.file)
    hub = getattr(args, "truth", None) is not None or getattr(args, "output_type", None) is not None
    if len(files) == 1 and not hub and _looks_like_a_data_set(str(files[0])):
        return "embedded"
    return "memory"
