"""The Data page's reading options of regression files and the loader's notices, without Streamlit.

Two controls under *Upload a prediction file*: **Crossing quantiles** — rows whose quantiles decrease with the level
are sorted per row (the rearrangement of Chernozhukov, Fernández-Val & Galichon 2010, the default) or dropped — and
**Layout** — which uncertainty layout a file with several is read in (auto: the one that keeps the most rows).
Their values are the keywords of :func:`calib_core.load_predictions` (``crossing=``, ``layout=``); the labels here
are the words the loader's Data-page messages use (``calib_core.data.regression_layout``).

Forecast hubs (*Forecast hub* on the Data page): forecast files plus a truth file, read by ``cc.load_predictions(
forecasts, truth=..., output_type=...)``.  Here: the **Output type** control (:data:`OUTPUT_TYPE_LABELS`,
:func:`output_type_option`), a hub folder and its truth file on the server under the allowed directories
(:func:`resolve_hub_folder`, :func:`resolve_truth_file`, :func:`hub_truth_file`) and what was read
(:func:`hub_facts`).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from calib_core.base.predictions import InputError, PredictionSet, app_text
from calib_core.data.path_glob import check_path_text
from calib_core.data.regression_layout import CROSSING_MODES, LAYOUTS, LoaderNotice
from views.data_dirs import resolve_data_files

__all__ = ["CROSSING_LABELS", "HUB_SUFFIXES", "HUB_UPLOAD_TYPES", "LAYOUT_LABELS", "OUTPUT_TYPE_LABELS",
           "hub_facts", "hub_page_message", "hub_truth_file", "is_hub_set", "loader_notices", "options_token",
           "output_type_option", "reading_options", "resolve_hub_folder", "resolve_truth_file"]

#: The Crossing quantiles control: value (``crossing=``) → label.
CROSSING_LABELS = {"rearrange": "sort per row (rearrangement)", "drop": "drop those rows"}
#: The Layout control: value (``layout=``; ``"auto"`` is None) → label.
LAYOUT_LABELS = {"auto": "auto (the one that keeps the most rows)", "gaussian": "gaussian (mean, spread)",
                 "quantile": "quantile", "sample": "sample (ensemble members)", "point": "point (mean only)"}


def reading_options(crossing: Any, layout: Any) -> dict[str, Any]:
    """The ``crossing=`` / ``layout=`` keywords of ``cc.load_predictions`` from the two controls' values.

    Parameters
    ----------
    crossing : str or None
        The Crossing quantiles control's value (None or unknown: ``"rearrange"``).
    layout : str or None
        The Layout control's value (None, ``"auto"`` or unknown: automatic).

    Returns
    -------
    dict
        ``{"crossing": ..., "layout": ...}``.

    Examples
    --------
    >>> from views.loading import reading_options
    >>> reading_options(None, "auto"), reading_options("drop", "gaussian")
    ({'crossing': 'rearrange', 'layout': None}, {'crossing': 'drop', 'layout': 'gaussian'})
    """
    return {"crossing": crossing if crossing in CROSSING_MODES else "rearrange",
            "layout": layout if layout in LAYOUTS else None}


def options_token(options: dict[str, Any]) -> str:
    """The part of the loaded data's token that tells the reading options apart (``rearrange-auto`` …).

    Parameters
    ----------
    options : dict
        :func:`reading_options`' result.

    Returns
    -------
    str
        ``"<crossing>-<layout or auto>"``.
    """
    return f"{options['crossing']}-{options['layout'] or 'auto'}"


def loader_notices(pset: PredictionSet) -> list[str]:
    """The loader's notices a user must read (crossing quantiles sorted or dropped, the layout chosen among several),
    in the Data page's words; the text came partly from the file, so the page escapes it.

    Parameters
    ----------
    pset : PredictionSet
        The loaded set.

    Returns
    -------
    list of str
        One text per notice.
    """
    return [app_text(m) for m in pset.messages if isinstance(m, LoaderNotice)]


# ------------------------------------------------------------------------------------------------ forecast hubs
#: The Output type control: a hub's ``output_type`` value → label (the reader's ``output_type=``).
OUTPUT_TYPE_LABELS = {"quantile": "quantile (the default)", "median": "median (a point forecast)",
                      "mean": "mean (a point forecast)", "sample": "sample (ensemble members)",
                      "pmf": "pmf (probabilities of ordered categories)", "cdf": "cdf (probabilities at thresholds)"}
#: Files of a hub the Data page reads (uploads and server folders; ``.gz`` is a compressed CSV).
HUB_SUFFIXES = (".csv", ".parquet", ".pq", ".gz")
#: The hub uploaders' file types.
HUB_UPLOAD_TYPES = ["csv", "parquet", "pq", "gz"]
#: Files of a hub folder checked against the allowed directories before it is read (tasks.json included).
_CHECKED_SUFFIXES = (*HUB_SUFFIXES, ".json")
#: Truth files of a hubverse hub's target-data folder, in order of preference.
_TRUTH_NAMES = ("time-series", "oracle-output")


_PY_ALTERNATIVES = re.compile(r"\s*—\s*`?\btruth=`?\s*/\s*CLI --truth(?: <file>| FILE)?\s*/\s*Data page [\w ]*?file|"
                              r"`?\btruth=`?\s*/\s*CLI --truth(?: <file>| FILE)?\s*/\s*|"
                              r",? or on the command line --truth(?: <file>| FILE)?")
_PY_TRUTH = re.compile(r"`?\btruth=(?:'[^']*'|\"[^\"]*\"|<[^>]*>|\.\.\.|…)?`?")
_PY_OUTPUT_TYPE = re.compile(r"\boutput_type=(?:'([\w-]+)'|None|\.\.\.|…)")


def hub_page_message(text: str) -> str:
    """A forecast-hub loader message in the Data page's words: the Python keywords ``truth=…`` and
    ``output_type='…'`` (and the command line's ``--truth``, when listed beside them) become the page's controls,
    *Truth (target data)* and *Output type*.

    Parameters
    ----------
    text : str
        The message (``InputError.app_message()``).

    Returns
    -------
    str
        The message in the page's words (still text from a file: escape it before showing it).

    Examples
    --------
    >>> from views.loading import hub_page_message
    >>> hub_page_message("give its truth file — `truth=` / CLI --truth / Data page truth file; columns are: a")
    'give its truth file; columns are: a'
    >>> hub_page_message("not read: mean (choose with output_type=…)")
    'not read: mean (choose with Output type)'
    """
    out = _PY_ALTERNATIVES.sub("", text)
    out = _PY_TRUTH.sub("the truth file (Truth (target data))", out)
    return _PY_OUTPUT_TYPE.sub(lambda m: "Output type" + (f" {m.group(1)}" if m.group(1) else ""), out)


def output_type_option(present: Sequence[str], chosen: Any) -> str | None:
    """The ``output_type=`` keyword from the output types in the files and the Output type control.

    Parameters
    ----------
    present : sequence of str
        The output types found in the forecast files (empty: not known, e.g. a server folder).
    chosen : str or None
        The control's value.

    Returns
    -------
    str or None
        ``chosen`` when it is a known type (and present, if the types are known); else None, the reader's default
        (quantile, else the only type present).

    Examples
    --------
    >>> from views.loading import output_type_option
    >>> output_type_option(["quantile", "median"], "median"), output_type_option(["pmf"], "quantile")
    ('median', None)
    """
    if chosen not in OUTPUT_TYPE_LABELS or (present and chosen not in present):
        return None
    return str(chosen)


def is_hub_set(pset: PredictionSet) -> bool:
    """Whether a loaded set was read from a forecast hub (it has the forecast units' task IDs, ``pset.units``).

    Parameters
    ----------
    pset : PredictionSet
        The loaded set.

    Returns
    -------
    bool
        True for a hub's set.
    """
    return getattr(pset, "units", None) is not None


def _listing(values: Sequence[Any], limit: int = 12) -> str:
    """Distinct values as text, in their order, cut after ``limit`` (``a, b, … (30 in all)``)."""
    text = [str(v) for v in values]
    more = f", … ({len(text):,} in all)" if len(text) > limit else ""
    return ", ".join(text[:limit]) + more


def _dates(column: pd.Series) -> list[str]:
    values = pd.to_datetime(column, errors="coerce").dropna().drop_duplicates().sort_values()
    return [v.strftime("%Y-%m-%d") for v in values]


def hub_facts(pset: PredictionSet) -> pd.DataFrame:
    """What a forecast hub's loading read: models, rounds, forecast units, task IDs, levels, units without truth,
    rows dropped — a what/value table (text from the files: shown as a table, never as Markdown).

    Parameters
    ----------
    pset : PredictionSet
        A set read from a hub (:func:`is_hub_set`).

    Returns
    -------
    pandas.DataFrame
        Columns ``what`` and ``value`` (text).
    """
    units = pset.units if pset.units is not None else pd.DataFrame(index=range(pset.n_rows))
    facts: dict[str, str] = {"models": _listing(pset.models())}
    if "reference_date" in units:
        rounds = _dates(units["reference_date"])
        facts["rounds (reference dates)"] = f"{len(rounds):,}: {_listing(rounds, 8)}"
    facts["forecast units read"] = f"{pset.n_read:,}"
    facts["forecast units kept"] = f"{pset.n_rows:,} (one row per model and forecast unit)"
    if "horizon" in units:
        horizons = np.sort(pd.unique(units["horizon"].dropna()))
        facts["horizons"] = f"{len(horizons):,}: {_listing(horizons, 30)}"
    for column in ("location", "target", "age_group"):
        if column in units:
            found = pd.unique(units[column].astype(str))
            facts[f"{column}s" if column != "age_group" else "age groups"] = f"{len(found):,}: {_listing(found)}"
    if "target_end_date" in units:
        ends = _dates(units["target_end_date"])
        if ends:
            facts["target end dates"] = f"{ends[0]} … {ends[-1]}"
    levels = getattr(pset.dist, "levels", None)
    if levels is not None:
        facts["quantile levels"] = f"{len(levels)}: " + ", ".join(f"{float(v):g}" for v in np.asarray(levels))
    if pset.classes is not None:
        facts["categories"] = _listing(pset.classes, 20)
    no_truth = sum(rows.size for reason, rows in pset.dropped.reasons.items() if "truth" in reason.lower())
    facts["units without truth"] = f"{no_truth:,}"
    facts["rows dropped (all reasons)"] = f"{pset.dropped.total:,}"
    return pd.DataFrame({"what": list(facts), "value": list(facts.values())})


def _refusal(what: str, text: str, allowed: Sequence[Path]) -> InputError:
    return InputError(f"{what}. Hub folders can be opened only under {', '.join(str(p) for p in allowed)}",
                      source=text, hint=f"give a folder under it, e.g. {allowed[0] / 'my-hub'} or a relative one "
                      f"such as my-hub (relative to {allowed[0]})")


def _checked_path(text: str, allowed: Sequence[Path]) -> Path:
    """A user's path resolved (relative to the first allowed directory) and inside an allowed directory."""
    if not allowed:
        resolve_data_files(text, allowed)  # raises the message of a server that allows nothing
    text = (text or "").strip()
    if not text:
        raise _refusal("no folder given", text, allowed)
    check_path_text(text, what="folder")
    if ".." in Path(text).parts:
        raise _refusal("a path may not contain '..'", text, allowed)
    path = Path(os.path.expanduser(text))
    path = Path(os.path.realpath(path if path.is_absolute() else allowed[0] / path))
    if not any(path == d or d in path.parents for d in allowed):
        raise _refusal("this path is outside the allowed directories", text, allowed)
    return path


def resolve_hub_folder(text: str, allowed: Sequence[Path]) -> Path:
    """A hub folder on the server (hub root, its model-output folder or one model's folder) under the allowed
    directories (:func:`views.data_dirs.allowed_dirs`), by the rules of :func:`views.data_dirs.resolve_data_files`:
    relative to the first allowed directory, no ``..``, and every forecast, truth or config file in it inside an
    allowed directory once links are resolved.

    Parameters
    ----------
    text : str
        What the user typed.
    allowed : sequence of Path
        The allowed directories.

    Returns
    -------
    Path
        The resolved folder.

    Raises
    ------
    InputError
        Nothing allowed, outside, ``..``, not a folder, a link that leads out, no forecast file in it.
    """
    folder = _checked_path(text, allowed)
    if not folder.is_dir():
        raise InputError("no such folder" if not folder.exists() else "not a folder", source=text,
                         hint=f"give the hub's folder (the one holding model-output/); relative paths start at "
                         f"{allowed[0]}")
    found: list[str] = []
    for suffix in _CHECKED_SUFFIXES:  # every file the reader may open: each must resolve inside (links included)
        try:
            found += resolve_data_files(os.path.join(glob.escape(str(folder)), "**", f"*{suffix}"), allowed,
                                        suffixes=(suffix,))
        except InputError as err:
            if "matches no" not in err.message:
                raise
    if not any(f.lower().endswith(HUB_SUFFIXES) for f in found):
        raise InputError("holds no forecast file (.csv, .parquet or .gz)", source=text,
                         hint="give the hub's folder (the one holding model-output/<model>/<round>-<model>.csv)")
    return folder


def resolve_truth_file(text: str, allowed: Sequence[Path]) -> Path:
    """One truth file on the server (``.csv``, ``.parquet``, ``.gz``) under the allowed directories.

    Parameters
    ----------
    text : str
        What the user typed (a path; a glob must match one file).
    allowed : sequence of Path
        The allowed directories.

    Returns
    -------
    Path
        The resolved file.

    Raises
    ------
    InputError
        As :func:`views.data_dirs.resolve_data_files`, or a glob matching several files.
    """
    files = resolve_data_files(text, allowed, suffixes=HUB_SUFFIXES)
    if len(files) > 1:
        raise InputError(f"matches {len(files)} files; the truth is one file", source=text,
                         hint="give the path of the truth file (e.g. target-data/time-series.csv)")
    return Path(files[0])


def hub_truth_file(folder: Path) -> Path | None:
    """The truth file of a hub folder's ``target-data`` (hubverse): ``time-series``, else ``oracle-output``, else
    the only table there; None when there is none or several others (the user then names it).

    Parameters
    ----------
    folder : Path
        The hub folder (:func:`resolve_hub_folder`; its parent is tried too, for a model-output folder).

    Returns
    -------
    Path or None
        The truth file.
    """
    for root in (folder, folder.parent):
        target = root / "target-data"
        if not target.is_dir():
            continue
        tables = sorted(p for p in target.iterdir() if p.is_file() and p.name.lower().endswith(HUB_SUFFIXES))
        for name in _TRUTH_NAMES:
            named = [p for p in tables if p.name.lower().split(".")[0] == name]
            if named:
                return named[0]
        return tables[0] if len(tables) == 1 else None
    return None
