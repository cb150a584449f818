"""The reading options of the command line and what it says about a file it read.

* :func:`add_loading_arguments` — ``--crossing`` and ``--layout`` (regression files: ``crossing=``, ``layout=``);
* :func:`load_lines` — the lines the command line prints about the loading (rows dropped, the loader's notices in
  command-line words, the reader's notes).

Forecast hubs, ``report <hub folder or files…> --truth FILE [--output-type T]``: the loader reads a hub as
``load_predictions(forecasts, truth=..., output_type=...)``; on the command line the forecasts are the positional
arguments (a hub folder, its model-output folder, one model's folder, or forecast files), the truth is
``--truth FILE`` and the output type ``--output-type``:

* :func:`add_hub_arguments` — the two options;
* :func:`hub_request` — the positional arguments and options as the loader's arguments (:class:`HubRequest`),
  every path checked first, with every file that will be read listed so that no output may overwrite one;
* :func:`hub_cli_message` — a loader message whose ``truth=`` / ``output_type='…'`` hints become ``--truth`` /
  ``--output-type …``;
* :func:`by_model_table` — the report's metric table as one row per model (the hub report's scores by model).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..base.predictions import ALL, InputError, PredictionSet, ReadingNote
from .columns_option import cli_message
from .regression_layout import CROSSING_MODES, LAYOUTS, LoaderNotice

__all__ = ["HUB_SCORES", "OUTPUT_TYPES", "HubRequest", "add_hub_arguments", "add_loading_arguments", "by_model_table",
           "hub_cli_message", "hub_request", "load_lines"]

#: The hubverse output types (the loader's ``output_type=``).
OUTPUT_TYPES = ("quantile", "median", "mean", "sample", "pmf", "cdf")
#: The scores of a forecast hub's by-model table (metric keys starting with these, in this order): the WIS and its
#: parts, the coverage of the stated intervals, the share below the median, the stated-level tests' statistics.
HUB_SCORES = ("wis", "coverage_", "below_median", "bias", "pit_chi2", "max_level_deviation")
#: Files of a hub folder the loader may read (listed so that no output overwrites one).
_READ_SUFFIXES = (".csv", ".parquet", ".pq", ".gz", ".json")


def add_loading_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the regression reading options: ``--crossing`` and ``--layout`` (``cc.load_predictions``' keywords).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser (or sub-parser) to add them to.
    """
    parser.add_argument("--crossing", choices=CROSSING_MODES, default="rearrange",
                        help="regression: rows whose quantiles decrease with the level are sorted per row "
                        "(rearrange, the default; never increases the quantile loss) or dropped (drop)")
    parser.add_argument("--layout", choices=("auto", *LAYOUTS), default="auto",
                        help="regression: the layout to read when the file has several (e.g. mean/std and quantile "
                        "columns); auto: the one that keeps the most rows (default)")


def load_lines(pset: PredictionSet, *, reader_messages: bool = False) -> list[str]:
    """What the CLI says about the loading of a file.

    One line per drop reason (count and first rows), the loader's notices (crossing quantiles sorted per row or
    dropped, the layout chosen among several and how to choose another, in command-line words) and the reader's
    notes on its text (an unbalanced quote's lines, lines that were not UTF-8), so that no row is lost or changed
    without the user reading why; with ``reader_messages`` also every other loader message (a forecast hub: the
    files, models and rounds read, the output type, how the truth was joined), in command-line words.

    Parameters
    ----------
    pset : PredictionSet
        The loaded file.
    reader_messages : bool, default False
        Also the loader's other messages.

    Returns
    -------
    list of str
        The lines to print.
    """
    lines = [f"dropped {rows.size:,} row(s): {reason} (rows {', '.join(map(str, rows[:10].tolist()))}"
             f"{', …' if rows.size > 10 else ''})" for reason, rows in pset.dropped.reasons.items()]
    notices = [f"note: {cli_message(str(m))}" for m in pset.messages if isinstance(m, LoaderNotice)]
    others = [f"read: {hub_cli_message(cli_message(str(m)))}" for m in pset.messages
              if reader_messages and not isinstance(m, LoaderNotice | ReadingNote)]
    return others + lines + notices + [f"note: {m}" for m in pset.messages if isinstance(m, ReadingNote)]


@dataclass
class HubRequest:
    """The loader's arguments of ``report <forecasts…> --truth FILE``.

    Attributes
    ----------
    forecasts : str or list of str
        One path (a file or folder) or several files.
    truth : str or None
        The truth file.
    output_type : str or None
        The output type to read (None: quantile, else the only one present).
    inputs : list of Path
        Every file that will be read (forecast files, files in the folders, the truth).
    name : str
        The name of what is read, for the report's title.
    """

    forecasts: str | list[str]
    truth: str | None
    output_type: str | None
    inputs: list[Path] = field(default_factory=list)
    name: str = ""


def add_hub_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--truth FILE`` and ``--output-type`` (forecast hubs).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser (or sub-parser) to add them to.
    """
    parser.add_argument("--truth", default=None, metavar="FILE",
                        help="forecast hubs: the truth file (hubverse time series or oracle output, or a legacy "
                        "truth file with date, location, value) that the forecasts are scored against (default for a "
                        "hub folder: the one file of its target-data folder)")
    parser.add_argument("--output-type", choices=OUTPUT_TYPES, default=None,
                        help="forecast hubs: the output type to read when the files hold several (default quantile, "
                        "else the only one present)")


def _missing(path: Path, what: str) -> InputError:
    return InputError("no such file or folder" if not path.exists() else f"not a {what}", source=str(path),
                      hint="check the path (relative paths are relative to the current directory)")


def hub_request(files: Sequence[str], truth: str | None, output_type: str | None) -> HubRequest | None:
    """The report's positional arguments and hub options as the loader's arguments.

    A hub is read when ``--truth`` or ``--output-type`` is given, when there are several positional arguments or
    when the one given is a folder; a single file without them is read as before (a hub file then gets the
    loader's message asking for ``--truth``).

    Parameters
    ----------
    files : sequence of str
        The positional arguments (at least one).
    truth : str or None
        ``--truth``.
    output_type : str or None
        ``--output-type``.

    Returns
    -------
    HubRequest or None
        None for a single prediction file read the usual way.

    Raises
    ------
    InputError
        A path that does not exist (or a truth that is not a file), naming it.

    Examples
    --------
    >>> from calib_core.data.loading_options import hub_request
    >>> hub_request(["preds.csv"], None, None) is None
    True
    """
    paths = [Path(f) for f in files]
    if len(paths) == 1 and truth is None and output_type is None and not paths[0].is_dir():
        return None
    inputs: list[Path] = []
    for path in paths:
        if path.is_dir():
            inputs += sorted(p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(_READ_SUFFIXES))
        elif path.is_file():
            inputs.append(path)
        else:
            raise _missing(path, "file or folder")
    if truth is not None:
        if not Path(truth).is_file():
            raise _missing(Path(truth), "file")
        inputs.append(Path(truth))
    name = paths[0].resolve().name if len(paths) == 1 else f"{len(paths)} forecast files"
    return HubRequest(forecasts=str(paths[0]) if len(paths) == 1 else [str(p) for p in paths], truth=truth,
                      output_type=output_type, inputs=inputs, name=name)


_TRUTH_KEYWORD = re.compile(r"`?\btruth=(?:'[^']*'|\"[^\"]*\"|<[^>]*>|\.\.\.|…)?`?")
_OUTPUT_TYPE_KEYWORD = re.compile(r"\boutput_type=(?:'([\w-]+)'|None|\.\.\.|…)")
#: Other wordings listed beside the Python one (``truth= / CLI --truth / Data page truth file``): said once.
_ALTERNATIVES = re.compile(r"\s*/\s*CLI --truth(?: <file>| FILE)?|\s*/\s*Data page [\w ]*?file|"
                           r",? or on the command line --truth(?: <file>| FILE)?")


def hub_cli_message(text: str) -> str:
    """A loader message in command-line words: ``truth=...`` becomes ``--truth FILE`` and ``output_type='x'``
    ``--output-type x`` (the other wordings a message lists beside them — the command line's, the Data page's — are
    then said once).

    Parameters
    ----------
    text : str
        The message of an ``InputError``.

    Returns
    -------
    str
        The message with its hub hints in command-line words.

    Examples
    --------
    >>> from calib_core.data.loading_options import hub_cli_message
    >>> hub_cli_message("give the truth file (truth='target.csv') or pass output_type='median'")
    'give the truth file (--truth FILE) or pass --output-type median'
    >>> hub_cli_message("give its truth file — `truth=` / CLI --truth / Data page truth file")
    'give its truth file — --truth FILE'
    """
    out = _TRUTH_KEYWORD.sub("--truth FILE", text)
    out = _ALTERNATIVES.sub("", out)
    return _OUTPUT_TYPE_KEYWORD.sub(lambda m: f"--output-type {m.group(1) or '…'}", out)


def by_model_table(metrics: pd.DataFrame, group: str = ALL, keep: Sequence[str] | None = HUB_SCORES) -> pd.DataFrame:
    """The report's long metric table as one row per model (the metrics of the whole set, ``group``), the forecast
    hub's scores first (:data:`HUB_SCORES`).

    Parameters
    ----------
    metrics : pandas.DataFrame
        A Report's ``metrics`` (columns ``model``, ``group``, ``metric``, ``value``).
    group : str, default ALL
        The group whose rows are shown (``ALL``: the whole set).
    keep : sequence of str or None, default HUB_SCORES
        The metrics shown: those whose key starts with one of these, in this order (None, or none of them in the
        table: every metric).

    Returns
    -------
    pandas.DataFrame
        ``model`` then one column per metric, in the table's order.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.base.predictions import ALL
    >>> from calib_core.data.loading_options import by_model_table
    >>> long = pd.DataFrame({"model": ["a", "a", "b", "b"], "group": ALL, "metric": ["wis", "bias"] * 2,
    ...                      "value": [1.0, 0.1, 2.0, -0.2]})
    >>> by_model_table(long).to_dict("list")
    {'model': ['a', 'b'], 'wis': [1.0, 2.0], 'bias': [0.1, -0.2]}
    """
    rows = metrics[metrics["group"] == group] if "group" in metrics else metrics
    order = list(pd.unique(rows["metric"]))
    if keep is not None:
        kept = list(dict.fromkeys(m for prefix in keep for m in order if m.startswith(prefix)))
        order = kept or order  # none of them (e.g. point forecasts): every metric
    models = list(pd.unique(rows["model"]))
    wide = rows.pivot_table(index="model", columns="metric", values="value", aggfunc="first", sort=False)
    wide = wide.reindex(index=models, columns=order)
    wide.columns.name = None
    return wide.reset_index()
