"""Command line of Calibration Lab: the report CLI.

``calibration-report FILE --out report.html [options]`` (also ``python -m calib_core report FILE ...``, SPEC §8)
    Writes the same self-contained HTML report as the dashboard's "report" download
    (``calib_core.export.report_html`` of ``cc.diagnose``), without a browser — e.g. in CI::

        calibration-report preds.csv --out report.html --n-bins 15 --binning count --resamples 200 --seed 0 \\
            --columns y=target,mean=mu,std=sigma --metrics-csv metrics.csv

    ``--columns`` maps roles to the file's column names (``role=column`` pairs separated by commas; a list for
    ``samples``/``probs``/``logits``/``features`` with ``|`` between names, e.g. ``samples=m1|m2|m3``; quantile columns
    as ``q0.05=lo``; ``role=`` leaves a role unused).  Bad input (unreadable file, missing columns, …) prints the
    loader's message — file, column, rows, what to do — and exits with code 2, never with a traceback; an unexpected
    internal error exits with code 1 (``--traceback`` shows it).

The dashboard's launcher, ``calibration-lab``, is ``launcher.py`` next to ``app.py`` (it runs Streamlit, which this
package never imports).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import diagnose, load_predictions
from .export import report_html, to_csv_bytes
from .predictions import InputError

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2

_LIST_ROLES = {"samples", "probs", "logits", "features", "quantiles"}


class _Parser(argparse.ArgumentParser):
    """argparse with exit code 2 and a one-line hint (argparse's own behaviour, made explicit)."""

    def error(self, message: str) -> None:  # pragma: no cover - exercised through the subprocess tests
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def parse_columns(specs: Sequence[str] | None) -> dict[str, Any] | None:
    """``["y=target,mean=mu", "samples=a|b"]`` → ``{"y": "target", "mean": "mu", "samples": ["a", "b"]}``.

    ``q0.05=lo`` becomes ``{"quantiles": {"0.05": "lo"}}``; ``role=`` maps the role to None (not used).
    Raises ``ValueError`` for a pair without ``=``.
    """
    if not specs:
        return None
    out: dict[str, Any] = {}
    for spec in specs:
        for pair in filter(None, (p.strip() for p in spec.split(","))):
            if "=" not in pair:
                raise ValueError(f"--columns expects role=column pairs, got {pair!r}")
            role, _, name = (s.strip() for s in pair.partition("="))
            if not role:
                raise ValueError(f"--columns: empty role in {pair!r}")
            if role.lower().startswith("q") and _is_level(role[1:]):
                out.setdefault("quantiles", {})[role[1:]] = name or None
            elif role in _LIST_ROLES and "|" in name:
                out[role] = [n.strip() for n in name.split("|") if n.strip()]
            else:
                out[role] = name or None
    return out


def _is_level(text: str) -> bool:
    try:
        return 0.0 < float(text) < 1.0
    except ValueError:
        return False


_REPORT_DESCRIPTION = "Diagnose FILE (CSV, TSV or Parquet; SPEC §1 layouts) and write a self-contained HTML report."


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m calib_core`` argument parser (one sub-command: ``report``)."""
    parser = _Parser(prog="python -m calib_core", description="Calibration Lab from the command line.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    rep = sub.add_parser(
        "report",
        help="diagnose a prediction file and write a self-contained HTML report",
        description=_REPORT_DESCRIPTION,
    )
    add_report_arguments(rep)
    return parser


def build_report_parser(prog: str = "calibration-report") -> argparse.ArgumentParser:
    """The ``calibration-report`` argument parser: the ``report`` sub-command's arguments at the top level."""
    parser = _Parser(prog=prog, description=_REPORT_DESCRIPTION)
    add_report_arguments(parser)
    parser.set_defaults(command="report")
    return parser


def add_report_arguments(rep: argparse.ArgumentParser) -> None:
    """The options of the report: FILE, --out, --columns, binning, resampling, …"""
    rep.add_argument("file", metavar="FILE", help="prediction file (CSV, TSV, Parquet)")
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
    rep.add_argument("--resamples", type=int, default=200, help="bootstrap resamples for the CIs (0: none)")
    rep.add_argument("--simulations", type=int, default=50,
                     help="perfect-calibration simulations for the reference values (0: none)")
    rep.add_argument("--level", type=float, default=0.95, help="CI level (default 0.95)")
    rep.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the simulations")
    rep.add_argument("--no-groups", action="store_true", help="do not diagnose each value of the group column")
    rep.add_argument("--renormalize", action="store_true",
                     help="classification: renormalise probability rows that do not sum to 1")
    rep.add_argument("--metrics-csv", default=None, help="also write the metric table as CSV")
    rep.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    rep.add_argument("--traceback", action="store_true", help="show the traceback of an internal error")


def _report(args: argparse.Namespace) -> int:
    if args.n_bins < 1:
        raise ValueError("--n-bins must be at least 1")
    if args.resamples < 0 or args.simulations < 0:
        raise ValueError("--resamples and --simulations must be ≥ 0")
    if not 0.0 < args.level < 1.0:
        raise ValueError("--level must lie strictly between 0 and 1")
    columns = parse_columns(args.columns)
    path = Path(args.file)
    if not path.is_file():
        raise InputError(
            "no such file" if not path.exists() else "not a regular file",
            source=str(path),
            hint="check the path (relative paths are relative to the current directory)",
        )
    pset = load_predictions(path, task=args.task, columns=columns, renormalize=args.renormalize)
    options: dict[str, Any] = {
        "n_bins": args.n_bins,
        "n_resamples": args.resamples,
        "n_simulations": args.simulations,
        "level": args.level,
        "seed": args.seed,
        "by_group": not args.no_groups,
    }
    if pset.task == "regression":
        options.update(binning=args.binning, pit_bins=args.pit_bins)
    else:
        options.update(strategy=args.strategy)
    report = diagnose(pset, **options)
    title = args.title or f"Calibration report: {path.name}"
    text = report_html(report, title=title, prediction_set=pset)
    out = Path(args.out)
    out.write_text(text, encoding="utf-8")
    if args.metrics_csv:
        Path(args.metrics_csv).write_bytes(to_csv_bytes(report.metrics))
    if not args.quiet:
        dropped = f", {pset.dropped.total:,} dropped" if pset.dropped.total else ""
        print(
            f"wrote {out} ({len(text) / 1e6:.1f} MB): {pset.task}, {pset.n_rows:,} rows{dropped}, "
            f"{len(report.models)} model(s), {report.metrics['metric'].nunique()} metrics"
        )
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m calib_core``: returns the exit code (0 ok, 2 bad input or arguments, 1 internal error)."""
    return _run(build_parser(), argv)


def report_main(argv: Sequence[str] | None = None) -> int:
    """``calibration-report FILE --out report.html``: the same exit codes as :func:`main`."""
    return _run(build_report_parser(), argv)


def _run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    args = parser.parse_args(argv)
    try:
        if args.command == "report":
            return _report(args)
        parser.error(f"unknown command {args.command!r}")  # pragma: no cover - argparse rejects it first
    except InputError as exc:
        text = str(exc)
        if "columns=" in text:
            text += " On the command line: --columns y=<column>,mean=<column>,std=<column> (see --help)."
        print(f"error: {text}", file=sys.stderr)
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
