"""The clustering options of the command line: ``--cluster COLUMN|none|auto`` and ``--block-length K|auto``.

``report`` resamples whole clusters of rows for its intervals and tests (``cc.diagnose(..., cluster=...,
block_length=...)``, :mod:`calib_core.base.clustering`): by default (``auto``) a forecast hub's forecast date
(``reference_date``, else ``forecast_date`` or ``origin_date``), otherwise independent rows.

* :func:`add_cluster_arguments` — the two options;
* :func:`parse_block_length` — ``--block-length``'s text as the diagnosis's ``block_length=``;
* :func:`cluster_request` — the options checked against the loaded file (an unknown column, a block length out of
  range: the loader's :class:`~calib_core.base.predictions.InputError` with its hint in command-line words) and
  returned as ``diagnose``'s keywords.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..base.clustering import resolve_clustering
from ..base.predictions import InputError, PredictionSet

__all__ = ["add_cluster_arguments", "cluster_request", "parse_block_length"]


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--cluster`` and ``--block-length``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser (or sub-parser) to add them to.
    """
    parser.add_argument("--cluster", default="auto", metavar="COLUMN|none|auto",
                        help="rows resampled together by the intervals and tests: a column's values (e.g. "
                        "reference_date, location, time), none (independent rows) or auto (default: a forecast "
                        "hub's forecast date, else independent rows)")
    parser.add_argument("--block-length", default=None, metavar="K|auto",
                        help="resample moving blocks of K consecutive values of the --cluster column (values "
                        "dependent in time, e.g. dates) instead of whole values drawn independently; auto: "
                        "round(G^(1/3)) of its G values (default: whole values)")


def parse_block_length(text: str | None) -> int | str | None:
    """``--block-length``: None (whole clusters), ``"auto"`` or a whole number of at least 1.

    Parameters
    ----------
    text : str or None
        The option's text.

    Returns
    -------
    int, "auto" or None
        ``block_length=`` of the diagnosis.

    Raises
    ------
    ValueError
        Any other text, naming the option.

    Examples
    --------
    >>> from calib_core.data.cluster_option import parse_block_length
    >>> parse_block_length("4"), parse_block_length("AUTO"), parse_block_length(None)
    (4, 'auto', None)
    """
    if text is None:
        return None
    word = str(text).strip().lower()
    if word == "auto":
        return "auto"
    if not word.isdigit() or int(word) < 1:
        raise ValueError(f"--block-length must be a whole number of at least 1 or auto, got {text!r}")
    return int(word)


def cluster_request(pset: PredictionSet, cluster: str | None, block_length: str | None) -> dict[str, Any]:
    """``--cluster`` / ``--block-length`` as ``diagnose``'s keywords, checked against the loaded file.

    Parameters
    ----------
    pset : PredictionSet
        The loaded file.
    cluster : str or None
        ``--cluster`` (``auto``, ``none`` or a column name).
    block_length : str or None
        ``--block-length``.

    Returns
    -------
    dict
        ``cluster`` (``"auto"``, None or the column) and ``block_length`` (None, an int or ``"auto"``).

    Raises
    ------
    InputError
        A column the file does not have, or a block length above the column's number of values: the message names
        the file, the column and the choices; the hint is in command-line words.
    ValueError
        A ``--block-length`` that is not a whole number or ``auto``, or one given without a column to resample by.
    """
    word = (cluster or "").strip()
    chosen: str | None = None if word.lower() in ("", "none") else "auto" if word.lower() == "auto" else word
    length = parse_block_length(block_length)
    try:
        clustering = resolve_clustering(pset, chosen, length)
    except InputError as exc:
        about_length = exc.message.startswith("block length")
        hint = ("give --block-length a whole number in that range or auto, or leave it out to resample whole values"
                if about_length else
                "give --cluster one of those columns, --cluster none for independent rows, or add the column to the "
                "file")
        raise InputError(exc.message.replace("block length", "--block-length", 1) if about_length else exc.message,
                         source=exc.source, columns=exc.columns, rows=exc.rows, hint=hint) from None
    if clustering is None and length is not None:
        why = "--cluster none" if chosen is None else "--cluster auto found no forecast date in this file"
        raise ValueError(f"--block-length needs a column to resample by ({why}): give --cluster COLUMN, e.g. "
                         "--cluster time")
    return {"cluster": chosen, "block_length": length}
