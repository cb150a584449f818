"""The Forecast hub page without Streamlit: which rows the filters and the linked selection keep, the tables shown
and the sentences composed from them.

The per-row scores (:func:`calib_core.diagnosis.regression_hub.forecast_rows`) are computed once per data set; every
control of the page only builds a boolean row mask here and regroups them (``forecast_scores`` /
``forecast_heatmap`` with ``mask=``).

Linked selection (the page's ``dashboard.LinkedSelection``): the selectable charts name their points ``cell`` (a
heatmap cell, code :func:`cell_codes`), ``horizon`` (the horizon) and ``date`` (days since 1970-01-01 of the
target end date).  Every view is restricted by the selections of the *other* charts (a chart keeps showing all of
its own points, the selected ones marked), and the table and the WIS bars by all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from calib_core.base.predictions import PredictionSet
from calib_core.base.regression import QuantileSet
from calib_core.diagnosis.regression_hub import ForecastRows, forecast_heatmap
from calib_core.plots.hub import day_codes

__all__ = ["HubFilters", "is_hub", "empty_state", "filter_choices", "row_mask", "cell_codes", "model_table",
           "describe_hub_selection", "HEATMAP_CHOICES", "heatmap_center", "heatmap_columns", "interval_choices",
           "selection_label", "NAMES", "heatmap_table", "describe_filters"]

#: Names of the selectable charts' points (``meta["name"]``).
NAMES = ("cell", "horizon", "date")
#: Values the heatmap offers (label → score column), the first two when the data state them.
HEATMAP_CHOICES = {
    "coverage of the 50% interval": "coverage_50",
    "coverage of the 90% interval": "coverage_90",
    "PIT departure": "pit_departure",
    "WIS relative to the location's mean": "wis_relative",
    "bias": "bias",
    "share below the median": "below_median",
}


def is_hub(pset: PredictionSet | None) -> bool:
    """Whether the page can show these data: regression quantile forecasts with task IDs (``units``).

    Parameters
    ----------
    pset : PredictionSet or None
        The loaded data.

    Returns
    -------
    bool
        True for a hub's quantile forecasts.
    """
    return (pset is not None and pset.task == "regression" and isinstance(pset.dist, QuantileSet)
            and pset.units is not None and len(pset.units) == pset.n_rows)


def empty_state(pset: PredictionSet | None) -> str:
    """What the page says when the loaded data are not a hub's quantile forecasts (Markdown, no text from files).

    Parameters
    ----------
    pset : PredictionSet or None
        The loaded data.

    Returns
    -------
    str
        The explanation and how to load a hub.
    """
    how = ("On the **Data** page, give the hub's forecast files (hubverse `model-output/<model>/<round>-<model>.csv` "
           "or `.parquet`, or legacy COVID-19 / FluSight `<date>-<model>.csv`) and its **truth file** (target data: "
           "a time series or oracle output). Each forecast unit (model × location × date × horizon) is joined to its "
           "observed value; units without one are counted and named there.")
    if pset is None:
        return "No data loaded yet. " + how
    if pset.task != "regression" or not isinstance(pset.dist, QuantileSet):
        return ("This page scores a forecast hub's **quantile** forecasts; the loaded data are "
                f"{pset.task} predictions ({pset.layout or 'no'} layout). " + how)
    return ("The loaded quantile forecasts have no task IDs (location, horizon, reference and target dates): they "
            "were not read as a forecast hub. Diagnose them on the Regression page, or load a hub. " + how)


@dataclass(frozen=True)
class HubFilters:
    """The page's filters (``None``: no restriction).

    Attributes
    ----------
    models : tuple of str or None
        Models kept.
    horizons : (int, int) or None
        Inclusive horizon range.
    dates : (Timestamp, Timestamp) or None
        Inclusive target-end-date range.
    locations : tuple of str or None
        Locations kept (empty or None: all).
    """

    models: tuple[str, ...] | None = None
    horizons: tuple[int, int] | None = None
    dates: tuple[pd.Timestamp, pd.Timestamp] | None = None
    locations: tuple[str, ...] | None = None


def filter_choices(rows: ForecastRows) -> dict[str, list]:
    """The values each filter offers: models, horizons, target end dates and locations present in the data.

    Parameters
    ----------
    rows : ForecastRows
        Per-row scores.

    Returns
    -------
    dict of str to list
        ``models``, ``horizons``, ``dates``, ``locations`` (sorted; empty when the data lack the column).
    """
    def values(name: str) -> list:
        return list(rows.vocab[name]) if name in rows.vocab else []

    return {"models": [str(m) for m in values("model")], "horizons": [int(h) for h in values("horizon")],
            "dates": [pd.Timestamp(d) for d in values("target_end_date")],
            "locations": [str(x) for x in values("location")]}


def _in(rows: ForecastRows, name: str, keep: Iterable) -> np.ndarray:
    """Rows whose ``name`` is one of ``keep`` (through the integer codes: one ``np.isin`` on small ints)."""
    wanted = pd.Index(rows.vocab[name]).get_indexer(pd.Index(list(keep)))
    return np.isin(rows.codes[name], wanted[wanted >= 0])


def _between(rows: ForecastRows, name: str, lo, hi) -> np.ndarray:
    vocab = rows.vocab[name]
    return ((vocab >= lo) & (vocab <= hi))[rows.codes[name]]


def cell_codes(rows: ForecastRows, row_dim: str, column_dim: str) -> np.ndarray:
    """The heatmap cell of every row: code(row value) × #column values + code(column value).

    Parameters
    ----------
    rows : ForecastRows
        Per-row scores.
    row_dim, column_dim : str
        The heatmap's row and column grouping columns.

    Returns
    -------
    ndarray of int64 of shape (N,)
        Cell codes, stable for the data and the two columns (the ``customdata`` of the heatmap's cells).
    """
    return rows.codes[row_dim] * int(rows.vocab[column_dim].size) + rows.codes[column_dim]


def heatmap_table(rows: ForecastRows, value: str, row_dim: str, column_dim: str,
                  mask: np.ndarray | None = None) -> pd.DataFrame | None:
    """The heatmap's table (``forecast_heatmap``) with the ``cell`` code of each cell (:func:`cell_codes`); None
    when ``value`` is the coverage of an interval the data do not state.

    Parameters
    ----------
    rows : ForecastRows
        Per-row scores.
    value : str
        The score of a cell.
    row_dim, column_dim : str
        The heatmap's row and column grouping columns.
    mask : ndarray of bool, optional
        The rows kept.

    Returns
    -------
    pandas.DataFrame or None
        ``row``, ``column``, ``value``, ``n``, ``row_code``, ``column_code``, ``cell``.
    """
    if value.startswith("coverage_") and value not in rows.coverages:
        return None
    table = forecast_heatmap(rows, value, row_dim, column_dim, mask)
    table["cell"] = table["row_code"] * int(rows.vocab[column_dim].size) + table["column_code"]
    return table


def row_mask(
    rows: ForecastRows,
    filters: HubFilters,
    selection: Mapping[str, Sequence[int]] | None = None,
    *,
    cells: np.ndarray | None = None,
    skip: str | None = None,
) -> np.ndarray:
    """The rows the filters and the linked selection keep.

    Parameters
    ----------
    rows : ForecastRows
        Per-row scores.
    filters : HubFilters
        The filters.
    selection : mapping of str to sequence of int, optional
        The stored selection: ``cell`` codes, ``horizon`` values, ``date`` day codes.
    cells : ndarray of int64, optional
        :func:`cell_codes` of the heatmap's current dimensions (needed for a ``cell`` selection).
    skip : str, optional
        A selection name left out (the chart's own: it keeps showing all of its points).

    Returns
    -------
    ndarray of bool of shape (N,)
        The kept rows.
    """
    keep = np.ones(rows.n_rows, dtype=bool)
    if filters.models:
        keep &= _in(rows, "model", filters.models)
    if filters.horizons is not None and "horizon" in rows.codes:
        keep &= _between(rows, "horizon", *filters.horizons)
    if filters.dates is not None and "target_end_date" in rows.codes:
        lo, hi = (np.datetime64(pd.Timestamp(d), "ns") for d in filters.dates)
        keep &= _between(rows, "target_end_date", lo, hi)
    if filters.locations and "location" in rows.codes:
        keep &= _in(rows, "location", filters.locations)
    for name, chosen in (selection or {}).items():
        if name == skip or not len(chosen):
            continue
        chosen = np.asarray(list(chosen), dtype=np.int64)
        if name == "cell" and cells is not None:
            keep &= np.isin(cells, chosen)
        elif name == "horizon" and "horizon" in rows.codes:
            keep &= np.isin(rows.vocab["horizon"].astype(np.int64), chosen)[rows.codes["horizon"]]
        elif name == "date" and "target_end_date" in rows.codes:
            keep &= np.isin(day_codes(rows.vocab["target_end_date"]), chosen)[rows.codes["target_end_date"]]
    return keep


def interval_choices(rows: ForecastRows) -> list[str]:
    """The ``coverage_<c>`` columns of the stated central intervals, narrowest first.

    Parameters
    ----------
    rows : ForecastRows
        Per-row scores.

    Returns
    -------
    list of str
        E.g. ``["coverage_10", …, "coverage_98"]``.
    """
    return list(rows.coverages)


def heatmap_columns(rows: ForecastRows) -> dict[str, str]:
    """The heatmap's row and column choices present in the data (label → column).

    Parameters
    ----------
    rows : ForecastRows
        Per-row scores.

    Returns
    -------
    dict of str to str
        Among location, target end date, reference date, horizon, model.
    """
    wanted = {"location": "location", "target end date": "target_end_date", "reference date": "reference_date",
              "horizon": "horizon", "model": "model"}
    return {label: col for label, col in wanted.items() if col in rows.codes}


def heatmap_center(value: str) -> float | None:
    """The centre of the heatmap's diverging colour scale: the nominal coverage, ½, 1 or 0; None: sequential.

    Parameters
    ----------
    value : str
        The score shown.

    Returns
    -------
    float or None
        The value a calibrated forecaster has.
    """
    if value.startswith("coverage_"):
        return float(value.split("_", 1)[1]) / 100
    return {"below_median": 0.5, "wis_relative": 1.0, "bias": 0.0}.get(value)


def model_table(scores: pd.DataFrame, intervals: Sequence[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """The per-model table: forecasts, WIS and its parts, the coverage of each interval, the share below the
    median, the bias and the PIT departure — with a help text per column (what calibrated looks like).

    Parameters
    ----------
    scores : pandas.DataFrame
        ``forecast_scores(..., by=("model",))``.
    intervals : sequence of str
        The ``coverage_<c>`` columns shown.

    Returns
    -------
    table : pandas.DataFrame
        Display table (numbers, unformatted).
    helps : dict of str to str
        Column → its help.
    """
    out = pd.DataFrame({"model": scores["model"].astype(str), "forecasts": scores["n"],
                        "WIS": scores["wis"], "dispersion": scores["wis_dispersion"],
                        "overprediction": scores["wis_overprediction"],
                        "underprediction": scores["wis_underprediction"]})
    helps = {"forecasts": "Forecast units scored (model × location × date × horizon …)",
             "WIS": "Mean weighted interval score (Bracher et al. 2021), lower is better; = dispersion + "
                    "overprediction + underprediction",
             "dispersion": "The WIS's width part: how wide the stated intervals are",
             "overprediction": "The WIS's penalty for targets below the intervals (forecasts too high)",
             "underprediction": "The WIS's penalty for targets above the intervals (forecasts too low)"}
    for c in intervals:
        label = c.split("_", 1)[1]
        out[f"coverage {label}%"] = scores[c]
        helps[f"coverage {label}%"] = (f"Share of targets inside the stated central {label}% interval (ends "
                                      f"included); calibrated: {float(label) / 100:g}")
    out["below median"] = scores["below_median"]
    out["bias"] = scores["bias"]
    out["PIT departure"] = scores["pit_departure"]
    helps |= {"below median": "Share of targets below the stated median (ties count half); calibrated: 0.5, "
                              "above: forecasts too high",
              "bias": "Quantile bias (Funk et al. 2019) in [−1, 1]; calibrated: 0, > 0: forecasts too high",
              "PIT departure": "Largest distance of a stated level's coverage P(y ≤ q_τ) from τ; calibrated: 0 "
                               "(up to noise)"}
    return out, helps


def describe_hub_selection(selection: Mapping[str, Sequence[int]], heatmap: pd.DataFrame | None, n_rows: int,
                           row_dim: str = "location", column_dim: str = "target_end_date") -> str:
    """"Selection: location 01 × 2024-01-06 (+2 cells); horizon 1, 2; target end dates 2024-01-06 – 2024-02-03 ·
    1,234 forecasts" (plain text; values from files are the caller's to escape).

    Parameters
    ----------
    selection : mapping of str to sequence of int
        The stored selection.
    heatmap : pandas.DataFrame or None
        The heatmap table with its ``cell`` codes (to name the cells).
    n_rows : int
        Forecasts kept.
    row_dim, column_dim : str
        The heatmap's dimensions.

    Returns
    -------
    str
        The sentence ("" when nothing is selected).
    """
    parts = []
    cells = list(selection.get("cell", ()))
    if cells:
        named = heatmap[heatmap["cell"].isin(cells)] if heatmap is not None and "cell" in heatmap else None
        if named is not None and len(named):
            first = named.iloc[0]
            col = first["column"]
            col = pd.Timestamp(col).strftime("%Y-%m-%d") if isinstance(col, pd.Timestamp | np.datetime64) else col
            more = f" (+{len(cells) - 1} cell{'s' if len(cells) > 2 else ''})" if len(cells) > 1 else ""
            parts.append(f"{row_dim.replace('_', ' ')} {first['row']} × {column_dim.replace('_', ' ')} {col}{more}")
        else:
            parts.append(f"{len(cells)} heatmap cell{'s' if len(cells) > 1 else ''}")
    horizons = sorted(int(h) for h in selection.get("horizon", ()))
    if horizons:
        parts.append(f"horizon{'s' if len(horizons) > 1 else ''} {', '.join(map(str, horizons))}")
    days = sorted(int(d) for d in selection.get("date", ()))
    if days:
        lo, hi = (pd.Timestamp(np.datetime64(d, "D")).strftime("%Y-%m-%d") for d in (days[0], days[-1]))
        parts.append(f"target end date{'s' if lo != hi else ''} {lo}" + (f" – {hi}" if lo != hi else ""))
    if not parts:
        return ""
    return f"Selection: {'; '.join(parts)} · {n_rows:,} forecast{'s' if n_rows != 1 else ''}"


def describe_filters(filters: HubFilters, choices: Mapping[str, list]) -> str:
    """The filters that restrict the rows, in words ("" when none does): "models a, b; horizons 1–2; …".

    Parameters
    ----------
    filters : HubFilters
        The filters.
    choices : mapping of str to list
        :func:`filter_choices` (what "all" is).

    Returns
    -------
    str
        The description (plain text; values from files are the caller's to escape).
    """
    parts = []
    if filters.models and set(filters.models) != set(choices.get("models", ())):
        parts.append(f"model{'s' if len(filters.models) > 1 else ''} {', '.join(filters.models)}")
    horizons = choices.get("horizons") or []
    if filters.horizons and horizons and tuple(filters.horizons) != (horizons[0], horizons[-1]):
        lo, hi = filters.horizons
        parts.append(f"horizon {lo}" if lo == hi else f"horizons {lo}–{hi}")
    dates = choices.get("dates") or []
    if filters.dates and dates and tuple(filters.dates) != (dates[0], dates[-1]):
        lo, hi = (pd.Timestamp(d).strftime("%Y-%m-%d") for d in filters.dates)
        parts.append(f"target end dates {lo} – {hi}")
    if filters.locations:
        parts.append(f"location{'s' if len(filters.locations) > 1 else ''} {', '.join(filters.locations)}")
    return "; ".join(parts)


def selection_label(selection_text: str, filters_text: str = "") -> str:
    """The name of the Forecast hub's rows as a slice of the Regression page: its filters and its selection.

    Parameters
    ----------
    selection_text : str
        :func:`describe_hub_selection` ("" without a selection).
    filters_text : str, default ""
        :func:`describe_filters`.

    Returns
    -------
    str
        "Forecast hub: …" ("Forecast hub: all forecasts" when nothing restricts them).
    """
    selected = selection_text.removeprefix("Selection: ").split(" · ")[0]
    return "Forecast hub: " + ("; ".join(t for t in (filters_text, selected) if t) or "all forecasts")
