"""The "Resample by" control of the diagnosis pages without Streamlit: its choices and labels, the diagnosis options
they give, the sentence under the metric table, and the Forecast hub page's per-model verdicts.

Intervals and tests resample rows in clusters (:mod:`calib_core.base.clustering`; ``cc.diagnose(..., cluster=...,
block_length=...)``): ``auto`` is a forecast hub's forecast date (``reference_date``, else ``forecast_date`` or
``origin_date``) and independent rows otherwise; a column resamples its values whole; a time-like column may instead
be resampled in moving blocks of consecutive values (Künsch 1989), whose length defaults to ``auto_block_length(G)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from calib_core.base.clustering import (
    HUB_CLUSTER_COLUMNS,
    auto_block_length,
    cluster_choices,
    resolve_clustering,
)
from calib_core.base.predictions import InputError, PredictionSet
from calib_core.export import clustering_statement

__all__ = ["AUTO", "INDEPENDENT", "auto_column", "auto_meaning", "resample_choices", "resample_label",
           "chosen_column", "is_time_like", "n_values", "default_block_length", "cluster_options",
           "metric_table_statement", "hub_verdict_table", "with_verdict_column", "names_clustering"]

#: The control's first choice: the clustering ``cc.diagnose`` picks itself.
AUTO = "auto"
#: The control's choice of independent rows (``cluster=None``).
INDEPENDENT = "independent rows"
#: Columns whose values are times even when the file stores them as text.
_TIME_NAMES = (*HUB_CLUSTER_COLUMNS, "target_end_date", "time", "date")


def auto_column(pset: PredictionSet) -> str | None:
    """The column ``cluster="auto"`` resamples: a forecast hub's first forecast-date column, else None.

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.

    Returns
    -------
    str or None
        ``reference_date``, ``forecast_date``, ``origin_date`` or None (independent rows).
    """
    if pset.units is None:
        return None
    return next((c for c in HUB_CLUSTER_COLUMNS if c in pset.units.columns), None)


def auto_meaning(pset: PredictionSet) -> str:
    """What ``auto`` means for these data, in words: "reference_date (forecast date)" or "independent rows".

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.

    Returns
    -------
    str
        The words (the column name comes from the file: the caller escapes it for Markdown).

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.base.predictions import PredictionSet
    >>> auto_meaning(PredictionSet("regression", y=np.zeros(3)))
    'independent rows'
    """
    column = auto_column(pset)
    return INDEPENDENT if column is None else f"{column} (forecast date)"


def resample_choices(pset: PredictionSet) -> list[str]:
    """The control's choices: :data:`AUTO`, :data:`INDEPENDENT`, then every column rows can be clustered by
    (``calib_core.base.clustering.cluster_choices``).

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.

    Returns
    -------
    list of str
        The choices (the control shows them through :func:`resample_label`).
    """
    return [AUTO, INDEPENDENT, *[c for c in cluster_choices(pset) if c not in (AUTO, INDEPENDENT)]]


def resample_label(choice: str, pset: PredictionSet) -> str:
    """How the control shows a choice: "auto (reference_date (forecast date))", "independent rows", a column name.

    Parameters
    ----------
    choice : str
        One of :func:`resample_choices`.
    pset : PredictionSet
        The loaded data.

    Returns
    -------
    str
        The label.
    """
    return f"auto ({auto_meaning(pset)})" if choice == AUTO else str(choice)


def chosen_column(pset: PredictionSet, choice: str) -> str | None:
    """The column a choice resamples (``auto`` resolved), None for independent rows.

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.
    choice : str
        One of :func:`resample_choices`.

    Returns
    -------
    str or None
        The column.
    """
    if choice == AUTO:
        return auto_column(pset)
    return None if choice == INDEPENDENT else choice


def _values(pset: PredictionSet, column: str) -> Any:
    for frame in (pset.units, pset.slice_columns):
        if frame is not None and column in frame.columns:
            return frame[column]
    return {"time": pset.time, "group": pset.group, "model": pset.model}.get(column)


def is_time_like(pset: PredictionSet, column: str | None) -> bool:
    """Whether a column's values are times (moving blocks of consecutive values make sense): dates, the ``time``
    column, or a hub's date columns.

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.
    column : str or None
        The column (None: independent rows, never).

    Returns
    -------
    bool
        True for a time-like column.
    """
    if column is None:
        return False
    if column in _TIME_NAMES:
        return True
    values = _values(pset, column)
    return values is not None and (pd.api.types.is_datetime64_any_dtype(np.asarray(values))
                                   or pd.api.types.is_datetime64_any_dtype(values))


def n_values(pset: PredictionSet, column: str) -> int:
    """G, the number of values (clusters) of a column.

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.
    column : str
        The column.

    Returns
    -------
    int
        G (0 when the data lack the column).
    """
    try:
        clustering = resolve_clustering(pset, column)
    except InputError:
        return 0
    return 0 if clustering is None else clustering.n_clusters


def default_block_length(pset: PredictionSet, column: str) -> int:
    """The block length the control starts with: ``auto_block_length(G)`` of the column's G values.

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.
    column : str
        The time-like column.

    Returns
    -------
    int
        k ≥ 1.
    """
    return auto_block_length(max(n_values(pset, column), 1))


def cluster_options(choice: str, moving: bool = False, block_length: int | None = None) -> dict[str, Any]:
    """The diagnosis options of the control's state (what ``cc.diagnose`` and the cache keys get).

    Parameters
    ----------
    choice : str
        :data:`AUTO`, :data:`INDEPENDENT` or a column.
    moving : bool, default False
        Moving blocks of consecutive values instead of whole values.
    block_length : int, optional
        k (with ``moving``).

    Returns
    -------
    dict
        ``cluster`` (``"auto"``, None or the column) and ``block_length`` (None or k).

    Examples
    --------
    >>> cluster_options("auto"), cluster_options("independent rows", True, 3)
    ({'cluster': 'auto', 'block_length': None}, {'cluster': None, 'block_length': None})
    >>> cluster_options("reference_date", True, 3)
    {'cluster': 'reference_date', 'block_length': 3}
    """
    cluster = None if choice == INDEPENDENT else choice
    length = int(block_length) if moving and block_length and cluster is not None else None
    return {"cluster": cluster, "block_length": length}


def metric_table_statement(options: Mapping[str, Any]) -> str:
    """The sentence under a metric table: "Intervals and tests: whole reference_date clusters resampled (12
    clusters)" / "Intervals and tests: rows treated as independent" ("" when the report does not say).

    Parameters
    ----------
    options : mapping
        ``Report.options``.

    Returns
    -------
    str
        Plain text (a column name from the file: the caller escapes it for Markdown).
    """
    return clustering_statement(options)


def names_clustering(sentence: str, options: Mapping[str, Any]) -> str:
    """A verdict sentence that names the clustering: the core's sentence when it already does ("…; whole …
    clusters resampled …"), else the sentence followed by the clustering.

    Parameters
    ----------
    sentence : str
        ``Report.verdicts["sentence"]``.
    options : mapping
        ``Report.options``.

    Returns
    -------
    str
        The sentence.

    Examples
    --------
    >>> names_clustering("Calibrated.", {"clustering": "whole reference_date clusters resampled (12 clusters)"})
    'Calibrated; whole reference_date clusters resampled (12 clusters).'
    """
    described = str(options.get("clustering") or "")
    if not described or described in sentence:
        return sentence
    if described == INDEPENDENT:
        return f"{sentence} (rows treated as independent)"
    return f"{sentence.rstrip().rstrip('.')}; {described}."


def hub_verdict_table(verdicts: pd.DataFrame, options: Mapping[str, Any]) -> pd.DataFrame:
    """The Forecast hub page's verdict of each model: "calibrated", "miscalibrated" or "not tested" (short, for the
    model table), the direction ("over-confident", "biased high", …) and the sentence naming the clustering
    (:func:`names_clustering`), which says both.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        ``Report.verdicts`` of the hub's kept rows (one row per model, the whole rows' group).
    options : mapping
        ``Report.options``.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``verdict`` (short words), ``direction``, ``sentence``, ``outcome`` (the verdict code for the
        page's icons).
    """
    columns = ["model", "verdict", "direction", "sentence", "outcome"]
    if verdicts.empty:
        return pd.DataFrame(columns=columns)
    outcome = verdicts["verdict"].astype(str).to_numpy()
    words = np.where(np.isin(outcome, ["calibrated", "miscalibrated"]), outcome, "not tested")
    return pd.DataFrame({"model": verdicts["model"].astype(str).to_numpy(), "verdict": words,
                         "direction": verdicts["direction"].fillna("").astype(str).to_numpy(),
                         "sentence": [names_clustering(str(s), options) for s in verdicts["sentence"]],
                         "outcome": outcome})[columns]


def with_verdict_column(table: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """The per-model table with a ``verdict`` column after ``model`` (empty for a model without a verdict).

    Parameters
    ----------
    table : pandas.DataFrame
        ``views.hub.model_table``'s table.
    verdicts : pandas.DataFrame
        :func:`hub_verdict_table`.

    Returns
    -------
    pandas.DataFrame
        A new table.
    """
    out = table.copy()
    words = dict(zip(verdicts["model"].astype(str), verdicts["verdict"]))
    out.insert(1, "verdict", [words.get(str(m), "") for m in out["model"]])
    return out
