"""Comparison tables of an evaluation (``cc.evaluate``'s result): calibrators side by side, pure pandas.

Each metric is shown with its mean ± std over trials, the direction the metric registry gives it (lower, higher or
closest to a target value) and the best calibrator per metric marked (Kuleshov et al. 2018 and Guo et al. 2017 rank
calibrators the same way, on held-out rows).  The CLI, the HTML export and the Recalibrate page all read these.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..calibrators.registry import KINDS, direction_text, metric, metric_label
from .nonfinite_notes import notes_by_metric

__all__ = ["comparison_table", "comparison_summary", "comparison_columns", "slice_comparison_columns"]


def _direction(key: str, task: str | None = None) -> str | float | None:
    """The registry's direction of a metric key (None for keys outside the registry, e.g. custom metrics)."""
    try:
        return metric(key, task).direction
    except KeyError:
        return None


def _kind(key: str, task: str | None) -> str:
    try:
        return metric(key, task).kind
    except KeyError:
        return KINDS[-1]


def comparison_summary(result: Any, order: list[str] | None = None) -> pd.DataFrame:
    """One row per (model, calibrator, metric) of an evaluation (``cc.evaluate``'s result), ready to plot.

    Columns: ``model, calibrator, metric`` (key), ``label`` (registry label), ``kind`` (the registry's: calibration
    statistic, proper score, descriptive), ``better`` (:func:`calib_core.calibrators.registry.direction_text`),
    ``target`` (the
    target value of a metric whose direction is a value, e.g. 0.9 for the 90% coverage; NaN otherwise), ``mean``,
    ``std`` (over trials, ddof = 1), ``n_trials`` and ``best``.  Rows are ordered by kind (in
    :data:`calib_core.calibrators.registry.KINDS` order), then the result's metric order, model order and ``order``
    (default:
    the result's calibrator order).

    ``best`` marks, per model and metric, the calibrators whose mean scores best under the registry's direction:
    the lowest, the highest, or the smallest |mean − target|; infinite scores never win; no row is marked for
    metrics without a direction or when more than half of the calibrators (and at least 2) tie — e.g. the RMSE
    of σ-only maps, which leave the mean alone.

    Parameters
    ----------
    result : EvaluationResult
        ``cc.evaluate``'s result.
    order : list of str, optional
        Calibrator order (default: the result's).

    Returns
    -------
    DataFrame
        The columns above, one row per (model, calibrator, metric) of the calibrators in ``order``.
    """
    order = list(result.calibrators) if order is None else list(order)
    task = getattr(result, "task", None)
    s = result.summary
    s = s[s["calibrator"].isin(order)].copy()
    s["metric"] = s["metric"].astype(object)  # an empty summary (too few rows for any trial) has a float column
    keys = list(pd.unique(s["metric"]))
    info = pd.DataFrame(
        {
            "metric": pd.Series(keys, dtype=object),
            "label": [metric_label(k, task) for k in keys],
            "kind": [_kind(k, task) for k in keys],
            "direction": [_direction(k, task) for k in keys],
        }
    )
    info["better"] = [direction_text(d) for d in info["direction"]]
    info["target"] = [float(d) if isinstance(d, float) else np.nan for d in info["direction"]]
    info["_kind_order"] = info["kind"].map({k: i for i, k in enumerate(KINDS)})
    info["_metric_order"] = np.arange(len(info))
    out = s.merge(info, on="metric", how="left")
    out["_model_order"] = out["model"].map({m: i for i, m in enumerate(pd.unique(s["model"]))})
    out["_cal_order"] = out["calibrator"].map({c: i for i, c in enumerate(order)})
    mean = out["mean"].to_numpy(dtype=float)
    rule = out["direction"].to_numpy(dtype=object)
    lower = np.array([r == "lower" for r in rule])
    higher = np.array([r == "higher" for r in rule])
    target = out["target"].to_numpy(dtype=float)
    score = np.where(lower, mean, np.where(higher, -mean, np.abs(mean - target)))
    score = np.where(np.isfinite(score), score, np.inf)  # NaN (no direction, failed) and ±inf never win
    out["_score"] = score
    groups = out.groupby(["model", "metric"], sort=False)["_score"]
    low = groups.transform("min").to_numpy(dtype=float)
    size = groups.transform("size").to_numpy()
    winner = np.isfinite(score) & (score == low)
    n_winners = pd.Series(winner).groupby([out["model"], out["metric"]], sort=False).transform("sum").to_numpy()
    out["best"] = winner & (n_winners <= np.maximum(1, size // 2))
    out = out.sort_values(["_kind_order", "_metric_order", "_model_order", "_cal_order"], kind="stable")
    columns = ["model", "calibrator", "metric", "label", "kind", "better", "target", "mean", "std", "n_trials", "best",
               "note"]  # note: only where some mean is inf or NaN (evaluation.nonfinite_notes)
    return out[[c for c in columns if c in out.columns]].reset_index(drop=True)


def comparison_columns(
    summary: pd.DataFrame, metrics: list[str] | None = None, *, digits: int = 3
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The comparison as a narrow table: one row per calibrator (and model), one column per chosen metric.

    ``summary``: :func:`comparison_summary`'s table; ``metrics``: the metric keys to show, in this order (default:
    all).  Cells hold "mean ± std" (``digits`` significant digits; the mean alone for one trial, "inf" for an
    infinite mean); column headers are the registry labels with the direction (↓ lower is better, ↑ higher,
    → 0.9 closest to 0.9).  When some mean is inf or NaN a last ``note`` column names, per calibrator row, the rows
    behind it (:mod:`calib_core.evaluation.nonfinite_notes`).

    Parameters
    ----------
    summary : DataFrame
        :func:`comparison_summary`'s table.
    metrics : list of str, optional
        The metric keys to show, in this order (default: all).
    digits : int, default 3
        Significant digits.

    Returns
    -------
    table : DataFrame
        Columns (model with several models), calibrator, then one per metric.
    best : DataFrame of bool
        The same shape, marking the best cells (``comparison_summary``'s ``best``), for highlighting.
    """
    keys = list(pd.unique(summary["metric"])) if metrics is None else [k for k in metrics
                                                                         if k in set(summary["metric"])]
    s = summary[summary["metric"].isin(keys)]
    mean = s["mean"].to_numpy(dtype=float)
    std = s["std"].to_numpy(dtype=float)
    text = [f"{m:.{digits}g}" if not np.isfinite(sd) else f"{m:.{digits}g} ± {sd:.{digits}g}"
            for m, sd in zip(mean, std)]
    s = s.assign(text=text)
    rows = s[["model", "calibrator"]].drop_duplicates()
    index = pd.MultiIndex.from_frame(rows)
    text_wide = s.pivot(index=["model", "calibrator"], columns="metric", values="text").reindex(index=index,
                                                                                                   columns=keys)
    best_wide = s.pivot(index=["model", "calibrator"], columns="metric", values="best").reindex(index=index,
                                                                                                   columns=keys)
    labels = s.drop_duplicates("metric").set_index("metric")
    arrows = {"lower": " ↓", "higher": " ↑", "": ""}
    names = [labels.loc[k, "label"] + arrows.get(labels.loc[k, "better"], " → " + labels.loc[k, "better"][2:])
             for k in keys]
    multi = rows["model"].nunique() > 1
    front = {"model": rows["model"].to_numpy()} if multi else {}
    table = pd.DataFrame({**front, "calibrator": rows["calibrator"].to_numpy()})
    best = pd.DataFrame({**{k: False for k in front}, "calibrator": False}, index=table.index)
    for key, name in zip(keys, names):
        table[name] = text_wide[key].fillna("–").to_numpy()
        best[name] = best_wide[key].fillna(False).to_numpy(dtype=bool)
    notes = notes_by_metric(s, dict(zip(labels.index, labels["label"])))
    if notes:  # the rows behind an inf / NaN mean, per calibrator row
        table["note"] = [notes.get((m, c), "") for m, c in rows[["model", "calibrator"]].itertuples(index=False)]
        best["note"] = False
    return table, best


def comparison_table(result: Any, order: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Display table of an evaluation (``cc.evaluate``'s result): metrics as rows, one column per calibrator
    ("model · calibrator" with several models) holding "mean ± std", and a "better" column (the registry's
    direction); plus the boolean frame of the best cell per metric (for highlighting).

    The best cell of a metric is the lowest, the highest or the closest to the target value as the registry says;
    no cell is marked for metrics without a direction, or when most columns tie (e.g. RMSE under σ-only maps).
    When some mean is inf or NaN a last ``note`` column names, per metric row, the rows behind it.

    Parameters
    ----------
    result : EvaluationResult
        ``cc.evaluate``'s result.
    order : list of str, optional
        Calibrator column order (default: the result's).

    Returns
    -------
    table : DataFrame
        Columns metric, better, then one per calibrator.
    best : DataFrame of bool
        The same shape, marking the best cell per metric.
    """
    order = list(result.calibrators) if order is None else list(order)
    task = getattr(result, "task", None)
    s = result.summary
    models = list(pd.unique(s["model"]))
    multi = len(models) > 1
    metrics = list(pd.unique(s["metric"]))
    text = result.formatted(digits=3)  # index (model, calibrator), columns metrics
    cols = [(m, c) for m in models for c in order if (m, c) in text.index]
    if not cols:  # no trial could run (too few rows): an empty table; the result's messages say why
        empty = pd.DataFrame({"metric": pd.Series(dtype=object), "better": pd.Series(dtype=object)})
        return empty, empty.astype(bool)
    names = [f"{m} · {c}" if multi else c for m, c in cols]
    body = pd.DataFrame({name: [text.loc[mc, k] for k in metrics] for name, mc in zip(names, cols)})
    marks = comparison_summary(result, order).pivot(index="metric", columns=["model", "calibrator"], values="best")
    marks = marks.reindex(index=metrics, columns=pd.MultiIndex.from_tuples(cols)).fillna(False)
    best = pd.DataFrame(marks.to_numpy(dtype=bool), index=body.index, columns=names)
    body.insert(0, "better", [direction_text(_direction(k, task)) for k in metrics])
    body.insert(0, "metric", [metric_label(k, task) for k in metrics])
    best.insert(0, "better", False)
    best.insert(0, "metric", False)
    if "note" in s.columns and s["note"].astype(bool).any():  # the rows behind an inf / NaN mean, per metric row
        by_metric = s[s["note"].astype(bool)].groupby("metric", sort=False)
        text = {k: "; ".join(f"{m} · {c}: {n}" if multi else f"{c}: {n}" for m, c, n in
                             g[["model", "calibrator", "note"]].itertuples(index=False)) for k, g in by_metric}
        body["note"] = [text.get(k, "") for k in metrics]
        best["note"] = False
    return body, best


def slice_comparison_columns(
    table: pd.DataFrame, metric_key: str, *, task: str, model: str | None = None, digits: int = 3
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One metric of ``cc.slice_comparison``'s table as slices × calibrators: columns ``slice``, ``test rows``, then
    one per calibrator (in the table's order, the uncalibrated baseline first when present); cells are the
    metric on that slice's held-out rows (``digits`` significant digits).  Returns (table, best): ``best`` marks,
    per slice, the cell best by the registry's direction (lowest, highest or closest to the target value; none for
    a metric without a direction).

    Parameters
    ----------
    table : DataFrame
        ``cc.slice_comparison``'s table.
    metric_key : str
        The metric shown.
    task : {"regression", "classification"}
        The task (for the registry's direction).
    model : str, optional
        Keep one model's rows.
    digits : int, default 3
        Significant digits.

    Returns
    -------
    table : DataFrame
        Columns slice, test rows, then one per calibrator.
    best : DataFrame of bool
        The same shape, marking the best cell per slice.
    """
    t = table if model is None else table[table["model"] == model]
    t = t[["slice", "calibrator", "n_test", metric_key]]
    cals = list(pd.unique(t["calibrator"]))
    slices = list(pd.unique(t["slice"]))
    wide = t.pivot(index="slice", columns="calibrator", values=metric_key).reindex(index=slices, columns=cals)
    n = t.drop_duplicates("slice").set_index("slice")["n_test"].reindex(slices)
    values = wide.to_numpy(dtype=float)
    direction = _direction(metric_key, task)
    best_arr = np.zeros_like(values, dtype=bool)
    if direction is not None and values.size:
        with np.errstate(invalid="ignore"):
            score = (values if direction == "lower" else -values if direction == "higher"
                     else np.abs(values - float(direction)))
        score = np.where(np.isfinite(score), score, np.inf)
        low = score.min(axis=1, keepdims=True)
        best_arr = np.isfinite(low) & (score == low)
    out = pd.DataFrame({"slice": slices, "test rows": n.to_numpy(dtype=np.int64)})
    best = pd.DataFrame({"slice": False, "test rows": False}, index=out.index)
    for j, c in enumerate(cals):
        out[c] = [f"{v:.{digits}g}" if np.isfinite(v) else ("–" if np.isnan(v) else str(v)) for v in values[:, j]]
        best[c] = best_arr[:, j]
    return out, best
