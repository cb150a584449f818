"""Command line of Calibration Lab: the report CLI, the calibrator comparison, the registries.

``calibration-report FILE --out report.html [options]`` (also ``python -m calib_core report FILE ...``)
    Writes the same self-contained HTML report as the dashboard's "report" download
    (``calib_core.export.report_html`` of ``cc.diagnose``), without a browser — e.g. in CI::

        calibration-report preds.csv --out report.html --n-bins 15 --binning count --resamples 1000 --seed 0 \\
            --columns y=target,mean=mu,std=sigma --metrics-csv metrics.csv

    ``--columns`` maps roles to the file's column names (``role=column`` pairs separated by commas; a list for
    ``samples``/``probs``/``logits``/``features`` with ``|`` between names, e.g. ``samples=m1|m2|m3``; quantile columns
    as ``q0.05=lo``; ``role=`` leaves a role unused).  Bad input (unreadable file, missing columns, …) prints the
    loader's message — file, column, rows, what to do — and exits with code 2, never with a traceback; an unexpected
    internal error exits with code 1 (``--traceback`` shows it).  Options are checked first, each message naming
    the option (``--pit-bins must be at least 2, got 0``); the loader's hints are given in command-line words
    (``--columns label=<column>``).  No input is ever overwritten: an output path equal to an input file is
    refused, and so is an existing file that is not what this command writes there (not HTML for ``--out``,
    another header for a CSV output) unless ``--force`` is given.  NumPy's numerical warnings (overflow, invalid
    values from extreme rows) become one note in the report and on stdout instead of a flood on stderr.
    With ``--engine embedded`` or ``dask``, partitions that failed twice are named and the exit code is 3.

    Regression files: ``--crossing rearrange`` (default) sorts each row whose quantiles decrease with the level (the
    rearrangement of Chernozhukov, Fernández-Val & Galichon 2010, which never increases the quantile loss) and
    ``--crossing drop`` drops those rows; ``--layout gaussian|quantile|sample|point`` chooses the layout of a file
    that has several (default ``auto``: the one that keeps the most rows).  What was done is printed as a note.

``python -m calib_core report HUB_FOLDER_OR_FILES… --truth TRUTH_FILE [--output-type quantile] --out report.html``
    A forecast hub (hubverse or legacy COVID-19 / FluSight format, detected from the columns): a hub folder, its
    model-output folder, one model's folder or forecast files, scored against ``--truth``
    (``calib_core.data.loading_options``); the same report, plus the scores by model (WIS and its parts, coverage).
    Intervals and tests resample whole forecast dates (``--cluster auto``, the default), another column's values
    (``--cluster location``), moving blocks of them (``--block-length K|auto``) or rows (``--cluster none``).

``python -m calib_core report 'data/*.parquet' [--engine embedded|dask] [--scheduler tcp://HOST:PORT] --out r.html``
    A Parquet data set of any size (a glob, a directory or one file; quote the glob) is summarised — by default
    (a glob or a directory, no ``--scheduler``) in this process by the embedded engine
    (``calib_core.scale.embedded``: ``--threads`` threads, memory about threads × one partition), with ``--engine
    dask`` on Dask (``calib_core.scale.distributed.summarize_parquet``: a new ``LocalCluster`` of ``--workers``
    processes with ``--memory-limit`` each, or the running cluster at ``--scheduler``; needs the ``dask`` extra,
    ``pip install "calibration-lab[dask]"``) — and the report is drawn from the merged summary
    (``calib_core.scale.summary.report``; which numbers are exact and which carry a bound is stated in the report).
    ``--save-summary FILE`` also writes the summary (a versioned zip of JSON and ``.npy`` arrays, no pickle; with the
    memory engine it summarises the file in memory); ``report SUMMARY_FILE --out report.html`` opens a saved
    summary.  The options: :mod:`calib_core.data.engine_option`.

``python -m calib_core evaluate FILE --calibrators "std scaling" CRUDE --repeats 20 [--out comparison.html]``
    The Recalibrate page without a browser: ``cc.evaluate`` (every calibrator fitted on calibration rows, scored on
    held-out test rows; the split column, or ``--repeats`` random splits) prints the comparison table (mean ± std
    over trials, best cell per metric marked ``*``) and optionally writes the page's HTML report (``--out``) and
    the summary / per-trial tables as CSV.  Calibrator names are those of the calibrator registry (default: the
    registry's default choice for the task, as on the page).

``python -m calib_core metrics [--task T]`` / ``python -m calib_core calibrators [--task T]``
    Print the metric registry (key, label, kind, better direction) and the calibrator registry (name, class,
    inputs, parameters with their defaults).

The dashboard's launcher, ``calibration-lab``, is ``launcher.py`` next to ``app.py`` (it runs Streamlit, which this
package never imports).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from . import diagnose, evaluate, load_predictions
from .base.limits import CLI_OPTIONS
from .base.limits import check_options as check_sizes
from .base.mergeable_read import summary_file_bytes
from .base.predictions import InputError, PredictionSet
from .base.report import ALL
from .calibrators.registry import (
    TASKS,
    available_calibrators,
    calibrator_help_table,
    calibrators,
    direction_text,
    metrics,
)
from .data.bytes import DEFAULT_MAX_BYTES
from .data.cli_warnings import numerical_warnings
from .data.cluster_option import add_cluster_arguments, cluster_request
from .data.columns_option import cli_message, parse_columns
from .data.engine_option import add_engine_arguments, resolve_engine
from .data.loading_options import (
    add_hub_arguments,
    add_loading_arguments,
    by_model_table,
    hub_cli_message,
    hub_request,
    load_lines,
)
from .data.prevalence_option import add_prevalence_argument, prevalence_request
from .data.writing import check_outputs, check_summary_output, is_summary_file, write_outputs
from .diagnosis.regression_hub import hub_score_tables
from .evaluation.tables import comparison_table
from .export import clustering_statement, evaluation_report_html, metrics_with_verdicts, report_html, to_csv_bytes
from .scale.distributed import PartitionError, summarize_parquet
from .scale.embedded import summarize_parquet_embedded

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_PARTITIONS_FAILED = 3

class _Parser(argparse.ArgumentParser):
    """argparse with exit code 2 and a one-line hint (argparse's own behaviour, made explicit)."""

    def error(self, message: str) -> None:  # pragma: no cover - exercised through the subprocess tests
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


_REPORT_DESCRIPTION = (
    "Diagnose FILE (CSV, TSV or Parquet, in any layout the loader reads) and write a self-contained HTML report. "
    "FILE may be a Parquet data set (a quoted glob or a directory; one file with --engine embedded or dask), "
    "summarised in this process (default) or on Dask (--engine dask); FILE may also be a summary file "
    "written by --save-summary, or a forecast hub: its folder or its forecast files, scored against --truth FILE."
)


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m calib_core`` argument parser.

    Returns
    -------
    argparse.ArgumentParser
        Sub-commands ``report``, ``evaluate``, ``metrics`` and ``calibrators``.
    """
    parser = _Parser(prog="python -m calib_core", description="Calibration Lab from the command line.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    rep = sub.add_parser(
        "report",
        help="diagnose a prediction file and write a self-contained HTML report",
        description=_REPORT_DESCRIPTION,
    )
    add_report_arguments(rep)
    ev = sub.add_parser(
        "evaluate",
        help="compare calibrators on held-out rows (the Recalibrate page without a browser)",
        description="Fit calibrators on calibration rows of FILE and score them on held-out test rows.",
    )
    add_evaluate_arguments(ev)
    for name, what in (("metrics", "metric"), ("calibrators", "calibrator")):
        lst = sub.add_parser(name, help=f"list the {what} registry", description=f"List the {what} registry.")
        lst.add_argument("--task", choices=TASKS, default=None, help="one task only")
    return parser


def build_report_parser(prog: str = "calibration-report") -> argparse.ArgumentParser:
    """The ``calibration-report`` argument parser: the ``report`` sub-command's arguments at the top level.

    Parameters
    ----------
    prog : str, default "calibration-report"
        The program name shown in usage and errors.

    Returns
    -------
    argparse.ArgumentParser
        The parser (its ``command`` is always ``"report"``).
    """
    parser = _Parser(prog=prog, description=_REPORT_DESCRIPTION)
    add_report_arguments(parser)
    parser.set_defaults(command="report")
    return parser


def add_report_arguments(rep: argparse.ArgumentParser) -> None:
    """Add the options of the report: FILE, --out, --columns, binning, resampling, the Dask engine, …

    Parameters
    ----------
    rep : argparse.ArgumentParser
        The parser (or sub-parser) to add them to.
    """
    rep.add_argument("file", metavar="FILE", nargs="+",
                     help="prediction file (CSV, TSV, Parquet), a Parquet data set (quoted glob or directory), a "
                     "summary file written by --save-summary, or a forecast hub's folder or files (with --truth)")
    rep.add_argument("--out", "-o", required=True, help="output HTML file")
    rep.add_argument("--title", default=None, help="report title (default: 'Calibration report: FILE')")
    rep.add_argument("--task", choices=("regression", "classification"), default=None,
                     help="task (default: detected from the columns)")
    rep.add_argument("--columns", action="append", default=None, metavar="ROLE=COL[,ROLE=COL…]",
                     help="map roles to column names, e.g. y=target,mean=mu,std=sigma (repeatable)")
    rep.add_argument("--n-bins", type=int, default=15, help="σ-bins (regression) or confidence bins (default 15)")
    rep.add_argument("--binning", choices=("count", "width"), default="count",
                     help="regression σ-bins: equal-count (Levi) or equal-width (netcal) (default count)")
    rep.add_argument("--strategy", choices=("uniform", "quantile"), default="uniform",
                     help="classification confidence bins: equal-width (Guo) or equal-mass (default uniform)")
    rep.add_argument("--pit-bins", type=int, default=20, help="PIT histogram bins (default 20)")
    rep.add_argument("--resamples", type=int, default=1000,
                     help="bootstrap replicates for the intervals (0: none; default 1000)")
    rep.add_argument("--simulations", type=int, default=2000,
                     help="null draws for the simulated p-values and reference values (0: no tests and no verdict; "
                     "default 2000)")
    rep.add_argument("--level", type=float, default=0.95, help="CI level (default 0.95)")
    rep.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the simulations")
    rep.add_argument("--no-groups", action="store_true", help="do not diagnose each value of the group column")
    rep.add_argument("--renormalize", action="store_true",
                     help="classification: renormalise probability rows that do not sum to 1")
    add_loading_arguments(rep)
    add_hub_arguments(rep)
    add_cluster_arguments(rep)
    add_prevalence_argument(rep)
    rep.add_argument("--metrics-csv", default=None, help="also write the metric table as CSV")
    rep.add_argument("--max-size-mb", type=int, default=DEFAULT_MAX_BYTES >> 20, metavar="MB",
                     help="largest file, decompressed file or decoded Parquet accepted, in MB (default "
                     f"{DEFAULT_MAX_BYTES >> 20:,})")
    rep.add_argument("--force", action="store_true",
                     help="overwrite an existing output file that this command did not write (never an input)")
    add_engine_arguments(rep)
    rep.add_argument("--save-summary", default=None, metavar="SUMMARY_FILE",
                     help="also write the mergeable summary (versioned zip of JSON and .npy, no pickle)")
    rep.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    rep.add_argument("--traceback", action="store_true", help="show the traceback of an internal error")


def _loading(args: argparse.Namespace) -> dict[str, Any]:
    """``crossing`` and ``layout`` for ``load_predictions`` from ``--crossing`` / ``--layout``."""
    return {"crossing": args.crossing, "layout": None if args.layout == "auto" else args.layout}


def add_evaluate_arguments(ev: argparse.ArgumentParser) -> None:
    """Add the options of the comparison: FILE, --calibrators, the split, the outputs.

    Parameters
    ----------
    ev : argparse.ArgumentParser
        The sub-parser to add them to.
    """
    names = sorted({e.name for e in calibrators()})
    ev.add_argument("file", metavar="FILE", help="prediction file (CSV, TSV, Parquet)")
    ev.add_argument("--calibrators", "-c", nargs="+", default=None, metavar="NAME",
                    help="calibrators of the registry (see `calibrators`; default: the page's default choice): "
                    + ", ".join(names))
    ev.add_argument("--no-baseline", action="store_true", help="leave out the uncalibrated predictions")
    ev.add_argument("--split", choices=("auto", "column", "random"), default="auto",
                    help="the split column, random splits, or auto: the column when it has cal and test rows")
    ev.add_argument("--repeats", type=int, default=20, help="random splits (default 20, CRUDE's protocol)")
    ev.add_argument("--seed", type=int, default=0, help="seed of the random splits (default 0)")
    ev.add_argument("--test-fraction", type=float, default=0.5, help="share of held-out rows (default 0.5)")
    ev.add_argument("--task", choices=TASKS, default=None, help="task (default: detected from the columns)")
    ev.add_argument("--columns", action="append", default=None, metavar="ROLE=COL[,ROLE=COL…]",
                    help="map roles to column names, e.g. y=target,mean=mu,std=sigma (repeatable)")
    ev.add_argument("--n-bins", type=int, default=15, help="classification confidence bins (default 15)")
    ev.add_argument("--strategy", choices=("uniform", "quantile"), default="uniform",
                    help="classification confidence bins: equal-width (Guo) or equal-mass (default uniform)")
    ev.add_argument("--renormalize", action="store_true",
                    help="classification: renormalise probability rows that do not sum to 1")
    add_loading_arguments(ev)
    ev.add_argument("--out", "-o", default=None, help="also write the HTML report (table and before/after diagrams)")
    ev.add_argument("--summary-csv", default=None, help="also write the summary (mean, std per metric) as CSV")
    ev.add_argument("--trials-csv", default=None, help="also write every trial's values as CSV")
    ev.add_argument("--max-size-mb", type=int, default=DEFAULT_MAX_BYTES >> 20, metavar="MB",
                    help="largest file, decompressed file or decoded Parquet accepted, in MB (default "
                    f"{DEFAULT_MAX_BYTES >> 20:,})")
    ev.add_argument("--force", action="store_true",
                    help="overwrite an existing output file that this command did not write (never an input)")
    ev.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    ev.add_argument("--traceback", action="store_true", help="show the traceback of an internal error")


# ------------------------------------------------------------------------------------------------------------------
# option validation, numerical warnings
# ------------------------------------------------------------------------------------------------------------------
def _size_limit(args: argparse.Namespace) -> dict[str, Any]:
    """``max_bytes`` and its hint for ``load_predictions`` from ``--max-size-mb``."""
    return {"max_bytes": args.max_size_mb << 20,
            "limit_hint": f"pass a larger --max-size-mb (now {args.max_size_mb:,})"}


def _check_options(args: argparse.Namespace, checks: Sequence[tuple[str, Callable[[Any], bool], str]]) -> None:
    """Raise ``ValueError`` naming the option (``--pit-bins must be at least 1, got 0``) for the first option
    whose value fails its check; ``checks`` are (dest, predicate, requirement) triples."""
    for dest, ok, requirement in checks:
        value = getattr(args, dest)
        if not ok(value):
            raise ValueError(f"--{dest.replace('_', '-')} must be {requirement}, got {value!r}")


_AT_LEAST_1 = (lambda v: v >= 1, "at least 1")
_AT_LEAST_2 = (lambda v: v >= 2, "at least 2")
_NON_NEGATIVE = (lambda v: v >= 0, "at least 0")
_OPEN_UNIT = (lambda v: 0.0 < v < 1.0, "strictly between 0 and 1")


def _opt(dest: str, rule: tuple[Callable[[Any], bool], str]) -> tuple[str, Callable[[Any], bool], str]:
    return dest, rule[0], rule[1]


BASELINE = "uncalibrated"


def _chosen(pset: PredictionSet, names: Sequence[str] | None, baseline: bool) -> dict[str, Any]:
    """The calibrators to compare, by registry name (checked against what the set offers)."""
    n_classes = 0 if pset.probs is None else int(pset.probs.shape[1])
    offered = {
        e.name: e
        for e in available_calibrators(
            pset.task,
            point_only=pset.task == "regression" and pset.dist is None,
            has_features=pset.features is not None and pset.features.shape[1] > 0,
            n_classes=n_classes,
        )
    }
    if names is None:
        names = [n for n, e in offered.items() if e.default] or list(offered)[:1]
    out: dict[str, Any] = {}
    if baseline and not (pset.task == "regression" and pset.dist is None):
        out[BASELINE] = None
    for name in names:
        if name not in offered:
            known = {e.name for e in calibrators(pset.task)}
            why = "cannot run on this file" if name in known else f"is not a {pset.task} calibrator of the registry"
            raise ValueError(f"calibrator {name!r} {why} (offered: {', '.join(offered)})")
        out[name] = offered[name].make()
    return out


def _evaluate(args: argparse.Namespace) -> int:
    _check_options(args, [_opt("repeats", _AT_LEAST_1), _opt("seed", _NON_NEGATIVE), _opt("max_size_mb", _AT_LEAST_1),
                          _opt("test_fraction", _OPEN_UNIT), _opt("n_bins", _AT_LEAST_1)])
    check_sizes({"repeats": args.repeats, "n_bins": args.n_bins}, controls=CLI_OPTIONS)
    path = _existing(args.file)
    outputs = [("--out", args.out), ("--summary-csv", args.summary_csv), ("--trials-csv", args.trials_csv)]
    check_outputs([path], [(option, name, None if option == "--out" else b"") for option, name in outputs],
                   force=True)  # identity only: the content checks run with the content, below
    check_outputs([path], [("--out", args.out, None)], args.force)
    pset = load_predictions(path, task=args.task, columns=parse_columns(args.columns), renormalize=args.renormalize,
                            **_size_limit(args), **_loading(args))
    cals = _chosen(pset, args.calibrators, not args.no_baseline)
    options: dict[str, Any] = {}
    if pset.task == "classification":
        options.update(n_bins=args.n_bins, strategy=args.strategy)
    notes: list[str] = []
    with numerical_warnings(notes):
        result = evaluate(
            pset, cals, split=None if args.split == "auto" else args.split, repeats=args.repeats, seed=args.seed,
            test_fraction=args.test_fraction, diagrams=args.out is not None, **options,
        )
    if result.summary.empty:  # no trial could run (e.g. too few rows): an input problem, said as the notes say it
        raise InputError("no calibrator could be fitted and scored on held-out rows: " + "; ".join(result.messages),
                         source=path.name, hint="evaluate a file with more rows (at least 2 calibration and 2 test "
                         "rows per model at the chosen --test-fraction), or run `report` to diagnose it as it is")
    table, best = comparison_table(result)
    marked = table.copy()
    for col in best.columns[2:]:
        marked[col] = [f"{v} *" if b else str(v) for v, b in zip(table[col], best[col])]
    if notes:
        result.messages.extend(notes)
    write_outputs([path], [
        ("--out", args.out, evaluation_report_html(pset, result, title=f"Recalibration comparison: {path.name}")
         .encode("utf-8") if args.out else b""),
        ("--summary-csv", args.summary_csv, to_csv_bytes(result.summary) if args.summary_csv else b""),
        ("--trials-csv", args.trials_csv, to_csv_bytes(result.long) if args.trials_csv else b""),
    ], args.force)
    if not args.quiet:
        print(f"{pset.task}, {pset.n_rows:,} rows; held-out rows: {result.split_description()}")
        for line in load_lines(pset):
            print(line)
        for m in result.messages:
            print(f"note: {m}")
        print(marked.to_string(index=False))
        if args.out:
            print(f"wrote {args.out}")
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    if args.command == "metrics":
        rows = [
            {"key": m.key, "task": m.task, "kind": m.kind, "better": direction_text(m.direction), "label": m.label}
            for m in metrics(args.task)
        ]
        frame = pd.DataFrame(rows)
    else:
        frame = calibrator_help_table(args.task)[["calibrator", "task", "class", "inputs", "parameters"]]
    with pd.option_context("display.max_colwidth", 200, "display.width", 200):
        print(frame.to_string(index=False))
    return EXIT_OK


def _existing(file: str) -> Path:
    path = Path(file)
    if not path.is_file():
        raise InputError(
            "no such file" if not path.exists() else "not a regular file",
            source=str(path),
            hint="check the path (relative paths are relative to the current directory)",
        )
    return path


def _report(args: argparse.Namespace) -> int:
    _check_options(args, [_opt("n_bins", _AT_LEAST_1), _opt("pit_bins", _AT_LEAST_2), _opt("max_size_mb", _AT_LEAST_1),
                          _opt("resamples", _NON_NEGATIVE), _opt("simulations", _NON_NEGATIVE),
                          _opt("level", _OPEN_UNIT), _opt("seed", _NON_NEGATIVE)])
    check_sizes({"n_bins": args.n_bins, "pit_bins": args.pit_bins, "n_resamples": args.resamples,
                 "n_simulations": args.simulations, "workers": args.workers}, controls=CLI_OPTIONS)
    columns = parse_columns(args.columns)
    args.engine = resolve_engine(args)
    summarised = args.engine in ("embedded", "dask")
    hub = None if summarised else hub_request(args.file, args.truth, args.output_type)
    if hub is None and len(args.file) > 1:
        raise ValueError(f"--engine {args.engine} reads one Parquet data set (a quoted glob or a directory); several "
                         "forecast files are a forecast hub, read with --engine memory and --truth")
    args.file = args.file[0]
    if hub is None and (summarised or _summary_input(Path(args.file))):
        return _report_from_summary(args, columns)
    if hub is None and any(ch in args.file for ch in "*?[") and not Path(args.file).exists():
        raise InputError("looks like a glob; a data set of several Parquet files is summarised by --engine embedded "
                         "(the default for a glob)", source=args.file,
                         hint=f"python -m calib_core report '{args.file}' --out ... (without --engine memory)")
    inputs = [_existing(args.file)] if hub is None else hub.inputs
    check_outputs(inputs, [("--out", args.out, None), ("--metrics-csv", args.metrics_csv, b"")], force=True)
    check_outputs(inputs, [("--out", args.out, None)], args.force)
    check_summary_output(inputs, args.save_summary, _outputs(args), args.force)
    keywords = {} if hub is None else {"truth": hub.truth, "output_type": hub.output_type}
    pset = load_predictions(inputs[0] if hub is None else hub.forecasts, task=args.task, columns=columns,
                            renormalize=args.renormalize, **_size_limit(args), **_loading(args), **keywords)
    options: dict[str, Any] = {
        "n_bins": args.n_bins,
        "n_resamples": args.resamples,
        "n_simulations": args.simulations,
        "level": args.level,
        "seed": args.seed,
        "by_group": not args.no_groups,
        **cluster_request(pset, args.cluster, args.block_length),
        **prevalence_request(pset, args.prevalence),
    }
    if pset.task == "regression":
        options.update(binning=args.binning, pit_bins=args.pit_bins)
    else:
        options.update(strategy=args.strategy)
    notes: list[str] = []
    with numerical_warnings(notes):
        report = diagnose(pset, **options)
    title = args.title or f"Calibration report: {inputs[0].name if hub is None else hub.name}"
    tables = None
    if hub is not None:  # quantile forecasts: the Forecast hub page's tables; else the report's metrics by model
        quantiles = pset.task == "regression" and pset.layout == "quantile" and pset.units is not None
        tables = hub_score_tables(pset) if quantiles else {"Scores by model": by_model_table(report.metrics)}
    with numerical_warnings(notes):
        text = report_html(report, title=title, prediction_set=pset, notes=notes, tables=tables)
    out = Path(args.out)
    metrics_csv = (to_csv_bytes(metrics_with_verdicts(report.metrics, report.verdicts, report.options))
                   if args.metrics_csv else b"")
    write_outputs(inputs, [("--out", args.out, text.encode("utf-8")), ("--metrics-csv", args.metrics_csv,
                                                                        metrics_csv)], args.force)
    if args.save_summary:
        from .scale.summary import spec_for, summarize

        spec_options = {"n_bins": args.n_bins, "seed": args.seed}
        spec_options.update({"pit_bins": args.pit_bins} if pset.task == "regression" else {"strategy": args.strategy})
        spec = spec_for(pset, by_group=not args.no_groups, **spec_options)
        _write_summary(args.save_summary, summarize(pset, spec=spec, by_group=not args.no_groups))
    if not args.quiet:
        dropped = f", {pset.dropped.total:,} dropped" if pset.dropped.total else ""
        print(
            f"wrote {out} ({len(text) / 1e6:.1f} MB): {pset.task}, {pset.n_rows:,} rows{dropped}, "
            f"{len(report.models)} model(s), {report.metrics['metric'].nunique()} metrics"
        )
        if report.options.get("clustering"):
            print(clustering_statement(report.options))
        for line in load_lines(pset, reader_messages=hub is not None):
            print(line)
        for _, row in report.verdicts.iterrows():
            where = "" if row["group"] == ALL else f", group {row['group']}"
            print(f"  {row['model']}{where}: {row['sentence']}")
        for note in [*report.options.get("notes", []), *notes]:  # the diagnosis's (e.g. a degenerate group), then ours
            print(f"note: {note}")
        if tables:
            print(f"scores by model:\n{tables['Scores by model'].to_string(index=False, float_format='{:.4g}'.format)}")
    return EXIT_OK


def _outputs(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """The report's other outputs, which ``--save-summary`` may not name."""
    return [("--out", args.out), ("--metrics-csv", args.metrics_csv)]


def _summary_input(path: Path) -> bool:
    """A zip with header.json, or any ``*.summary`` file (a damaged one is refused as a summary, not read as data)."""
    return is_summary_file(path) or (path.suffix.lower() == ".summary" and path.is_file())


def _write_summary(name: str, summary: Any) -> None:
    """Write a summary file (checked before the work by :func:`check_summary_output`)."""
    Path(name).write_bytes(summary.to_bytes())


def _report_from_summary(args: argparse.Namespace, columns: dict[str, Any] | None) -> int:
    """``report --engine embedded|dask`` (summarise a Parquet data set in this process or on Dask) or
    ``report SUMMARY_FILE``."""
    from .scale.summary import Summary, report

    path = Path(args.file)
    notes: list[str] = []
    result = None
    if _summary_input(path):
        inputs = [path]
    else:
        from .scale.distributed_partitions import expand_paths

        inputs = [Path(p) for p in expand_paths(args.file)]
    check_outputs(inputs, [("--out", args.out, None), ("--metrics-csv", args.metrics_csv, b"")], force=True)
    check_outputs(inputs, [("--out", args.out, None)], args.force)
    check_summary_output(inputs, args.save_summary, _outputs(args), args.force)
    if _summary_input(path):  # checked against the file's schema (base.mergeable_validate): InputError, exit 2
        limit = _size_limit(args)  # --max-size-mb: the file and what it expands to
        summary = Summary.from_bytes(summary_file_bytes(path, *limit.values()), source=str(path), **limit)
        notes.append(f"Drawn from the summary file {path.name} ({summary.n_rows:,} rows summarised).")
    else:
        import importlib.util

        dask = args.engine == "dask"
        if dask and importlib.util.find_spec("distributed") is None:  # pragma: no cover - the extra is in CI
            raise ValueError("--engine dask needs the dask extra: pip install 'calibration-lab[dask]' (or leave "
                             "--engine out: the embedded engine needs no cluster)")
        if args.binning != "count":
            raise ValueError(f"--binning width is not available with --engine {args.engine} (summaries use "
                             "equal-count σ-bins)")
        if args.cluster.strip().lower() not in ("auto", "none") or args.block_length is not None:
            raise ValueError(f"--cluster and --block-length are not available with --engine {args.engine} "
                             "(summaries resample independent rows)")
        _check_options(args, [_opt("workers", _AT_LEAST_1)])
        if args.rows_per_partition is not None:
            _check_options(args, [_opt("rows_per_partition", _AT_LEAST_1)])
        common = {"columns": columns, "task": args.task, "renormalize": args.renormalize, **_loading(args),
                  "rows_per_partition": args.rows_per_partition, "by_group": not args.no_groups,
                  "n_bins": args.n_bins, "pit_bins": args.pit_bins, "strategy": args.strategy, "seed": args.seed}
        if dask:
            result = summarize_parquet(args.file, scheduler=args.scheduler, n_workers=args.workers,
                                       memory_limit=args.memory_limit, **common)
        else:
            result = summarize_parquet_embedded(args.file, threads=args.threads, **common)
        summary = result.summary
        notes.append(
            f"Summarised {'on Dask (' + result.cluster + ')' if dask else 'by ' + result.cluster}: "
            f"{len(result.files):,} file(s), {len(result.partitions):,} partitions, {result.n_read:,} rows read, "
            f"{result.passes} pass(es) over the data, {result.seconds['total']:.1f} s."
        )
        notes += result.messages
    with numerical_warnings(notes):
        rep = report(summary, level=args.level, n_resamples=args.resamples, n_simulations=args.simulations,
                     seed=args.seed)
    if result is not None:
        rep.dropped = result.dropped_table()
    exact = rep.options.get("exactness", {})
    bounded = sorted(k for k, v in exact.items() if v == "bound")
    missing = sorted(k for k, v in exact.items() if v == "not available")
    if bounded:
        notes.append(f"From the summary with a stated bound (see each row's note): {', '.join(bounded)}.")
    if missing:
        notes.append(f"Not available from a summary (they need the sorted rows): {', '.join(missing)}.")
    title = args.title or f"Calibration report: {args.file}"
    with numerical_warnings(notes):
        text = report_html(rep, title=title, notes=notes)
    out = Path(args.out)
    metrics_csv = to_csv_bytes(metrics_with_verdicts(rep.metrics, rep.verdicts)) if args.metrics_csv else b""
    write_outputs(inputs, [("--out", args.out, text.encode("utf-8")), ("--metrics-csv", args.metrics_csv,
                                                                        metrics_csv)], args.force)
    if args.save_summary:
        _write_summary(args.save_summary, summary)
    if not args.quiet:
        dropped = f", {result.n_dropped:,} dropped" if result is not None and result.n_dropped else ""
        print(f"wrote {out} ({len(text) / 1e6:.1f} MB): {summary.spec.task}, {summary.n_rows:,} rows{dropped}, "
              f"{len(rep.models)} model(s), {rep.metrics['metric'].nunique()} metrics")
        for note in notes[:1]:
            print(f"  {note}")
        for _, row in rep.verdicts.iterrows():
            where = "" if row["group"] == ALL else f", group {row['group']}"
            print(f"  {row['model']}{where}: {row['sentence']}")
        if args.save_summary:
            print(f"wrote {args.save_summary}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m calib_core``: run a sub-command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 ok, 2 bad input or arguments, 1 internal error, 3 partitions that failed twice (embedded or
        Dask engine).
    """
    return _run(build_parser(), argv)


def report_main(argv: Sequence[str] | None = None) -> int:
    """``calibration-report FILE --out report.html``: the report command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The same exit codes as :func:`main`.
    """
    return _run(build_report_parser(), argv)


def _run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    args = parser.parse_args(argv)
    try:
        if args.command == "report":
            return _report(args)
        if args.command == "evaluate":
            return _evaluate(args)
        if args.command in ("metrics", "calibrators"):
            return _list(args)
        parser.error(f"unknown command {args.command!r}")  # pragma: no cover - argparse rejects it first
    except PartitionError as exc:  # --engine embedded/dask: partitions that failed twice, each named
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_PARTITIONS_FAILED
    except InputError as exc:
        print(f"error: {cli_message(hub_cli_message(str(exc)), getattr(args, 'task', None))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (ValueError, OSError) as exc:  # bad options, unwritable output, too few rows to diagnose, …
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 - a message, never a traceback (unless asked for)
        if getattr(args, "traceback", False):
            raise
        print(
            f"internal error: {type(exc).__name__}: {exc}\n(run again with --traceback and please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    return EXIT_OK  # pragma: no cover
