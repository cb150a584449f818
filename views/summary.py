"""Page tables of a loaded summary: what the dashboard draws when the loaded data is a
mergeable :class:`~calib_core.base.mergeable.Summary` instead of rows.

A summary — written by ``python -m calib_core report … --save-summary FILE`` or made on the Data page from a
Parquet data set on the server (:func:`summarize_data_set`) — holds no rows, only per-bin counts and exact sums
(:mod:`calib_core.scale.summary`).  Everything here is a function of those bins, so its cost does not grow with the
number of rows summarised:

* :func:`read_summary` opens a summary file (versioned zip of JSON + ``.npy``, no pickle) with a message for a wrong
  or newer format;
* the full report is :func:`calib_core.scale.summary.report` (same metric, verdict and diagram tables as
  ``cc.diagnose``), :func:`exactness_table` says per metric whether its number is exact, carries a stated bound
  or needs the rows, and :func:`add_exactness` puts that into a display metric table;
* a σ-bin selection (regression) redraws the conditional quantile curve, PIT histogram and interval table from
  the per-σ-bin coarse PIT histograms and sums (:func:`selection_tables`) and recomputes the metrics that are sums
  over σ-bins, exactly (:func:`selection_metrics`); a confidence-bin selection (classification) gives the
  selected bins' counts, confidence, accuracy with its exact interval and gap (:func:`selection_tables`);
* :data:`NOT_FROM_SUMMARY` names what needs the rows (row tables, per-row breakdowns, the z histogram and Q-Q plot
  of a selection), so the pages say so instead of failing.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from calib_core.base import significance as sig
from calib_core.base.mergeable import FORMAT, Summary, exact_fraction
from calib_core.base.predictions import ALL, InputError
from calib_core.base.regression import norm_ppf
from calib_core.base.report import Report, inference_metric_rows
from calib_core.inference.regression import metric_kind
from calib_core.plots import metric_display_table
from calib_core.scale.classification import classification_diagrams_from_part
from calib_core.scale.distributed import (
    IN_PROCESS,
    ParquetSummary,
    SliceParquetSummary,
    slice_summary_parquet,
    summarize_parquet,
)
from calib_core.scale.regression import regression_bounds, regression_diagrams_from_part
from calib_core.scale.summary import report as summary_report

from .data_dirs import resolve_data_files

__all__ = [
    "NOT_FROM_SUMMARY",
    "EXACTNESS_CAPTION",
    "read_summary",
    "summarize_data_set",
    "summary_report",
    "summary_facts",
    "summary_groups",
    "summary_of_group",
    "dropped_rows",
    "exactness_table",
    "add_exactness",
    "selected_rows",
    "has_positive_class",
    "metrics_with_exactness",
    "selection_tables",
    "selection_metrics",
]

#: What a page cannot draw from a summary, in the page's words.
NOT_FROM_SUMMARY = {
    "rows": "The rows themselves are not in a summary (it keeps per-bin counts and sums): open the data set as a "
            "file to list rows.",
    "z_selection": "The z histogram and the Q-Q plot are kept for all rows only (one fine z histogram per model), so "
                   "they do not follow a σ-bin selection.",
    "per_class_selection": "The per-class breakdown of selected bins needs the predicted class of every row: a "
                           "summary keeps per-bin counts and sums only.",
    "regression_selection_metrics": "Metrics that need the fine PIT or z histogram of the selected rows (KS, "
                                    "miscalibration area, quantile calibration error, reliability score) are kept "
                                    "for all rows only, and ENCE of the selection would re-bin its rows.",
    "recalibrate": "Recalibration fits a map on rows: a summary holds none.",
}

EXACTNESS_CAPTION = (
    "Drawn from a summary. **exact**: kept as exact sums and rounded once — the same number as the in-memory "
    "diagnosis of the same rows. **bound [a, b]**: read off a fine histogram; the in-memory value lies in [a, b] "
    "(KS within about one fine PIT-bin width, 1/2000; miscalibration area and reliability score within their "
    "fine-bin brackets). **exact for the summary's bins**: the summary's σ- or confidence-bin edges came from a "
    "sample, so ENCE/ECE are exact for those bins, not the data's own equal-count bins. **needs the rows**: not "
    "available from a summary. Intervals are bootstrap intervals on row blocks hashed from the row ids (coverage "
    "and accuracy: exact Clopper–Pearson)."
)


# ---------------------------------------------------------------------------------------------------------------
# opening
# ---------------------------------------------------------------------------------------------------------------
def read_summary(data: bytes, *, source: str, max_bytes: int = 2**31, limit_hint: str | None = None) -> Summary:
    """A summary file's bytes → :class:`Summary` (``Summary.from_bytes``: zip of ``header.json`` + ``.npy``, no
    pickle, every field and array checked against the file's schema, :mod:`calib_core.base.mergeable_validate`,
    before anything in it reaches a page); ``InputError`` naming the file, the part, what was found and what is
    read, for anything else — a Parquet or text file gets its own words; ``limit_hint`` says how to raise
    ``max_bytes`` (what the archive may expand to)."""
    head = bytes(data[:4])
    if head != b"PK\x03\x04":
        what = "a Parquet file" if head == b"PAR1" else "not a summary file"
        raise InputError(
            f"{what}: a summary file is a zip archive written by --save-summary",
            source=source,
            hint="write one with: python -m calib_core report 'data/*.parquet' --save-summary "
                 "run.summary (or report FILE --save-summary run.summary); to diagnose a data file, upload it "
                 "above or open it by path",
        )
    return Summary.from_bytes(bytes(data), max_bytes=max_bytes, source=source, limit_hint=limit_hint)


def summarize_data_set(
    text: str,
    allowed: Sequence[Path],
    *,
    scheduler: Any = IN_PROCESS,
    n_bins: int = 15,
    task: str | None = None,
    **options: Any,
) -> ParquetSummary:
    """The summary of the Parquet files a user named (path, directory or glob), only under the ``allowed``
    directories (:func:`views.data_dirs.resolve_data_files`), by ``distributed.summarize_parquet`` on the
    configured engine (the dashboard passes the embedded engine, :class:`calib_core.scale.embedded.EmbeddedEngine`,
    when no cluster is configured; :data:`~calib_core.scale.distributed.IN_PROCESS` by default here: one partition at
    a time in this process — either way memory stays a few partitions' working set whatever the size)."""
    files = resolve_data_files(text, allowed)
    try:
        result = summarize_parquet(files, scheduler=scheduler, n_bins=n_bins, task=task, **options)
    except InputError:
        raise
    except ValueError as exc:  # e.g. ensembles, not yet summarised from Parquet
        raise InputError(str(exc), source=text, hint="open a summary file made by the CLI instead") from None
    result.summary.source = text
    return result


def slices_of_data_set(text: str, allowed: Sequence[Path], *, scheduler: Any = IN_PROCESS, n_bins: int = 5,
                       task: str | None = None) -> SliceParquetSummary:
    """The slice explorer's summary (:func:`calib_core.scale.distributed.slice_summary_parquet`) of the Parquet files a
    user named, only under the ``allowed`` directories, on the configured engine: what the explorer page ranks
    when the loaded data is a Parquet data set."""
    files = resolve_data_files(text, allowed)
    try:
        return slice_summary_parquet(files, scheduler=scheduler, n_bins=n_bins, task=task)
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(str(exc), source=text, hint="check the data set's columns") from None


# ---------------------------------------------------------------------------------------------------------------
# what the Data page shows
# ---------------------------------------------------------------------------------------------------------------
def summary_facts(summary: Summary) -> pd.DataFrame:
    """property / value rows of a loaded summary (task, layout, rows, models, groups, bins, format)."""
    spec = summary.spec
    groups = sorted({g for _, g in summary.parts if g != ALL})
    dropped = sum(int(d["count"]) for d in summary.dropped.values())
    bins = (f"{spec.n_bins} equal-count σ-bins" if spec.task == "regression" else
            f"{spec.n_bins} {'equal-width' if spec.strategy == 'uniform' else 'equal-mass'} confidence bins")
    rows = [("task", spec.task), ("layout", spec.layout), ("rows summarised", f"{summary.n_rows:,}"),
            ("rows dropped", f"{dropped:,}"), ("models", ", ".join(map(str, summary.models)) or "–"),
            ("groups", ", ".join(groups) if groups else "–"), ("bins", bins),
            ("bin edges", "the data's own (exact first pass)" if spec.edges_exact else "from a sample"),
            ("format", f"{FORMAT} version {spec.version}")]
    return pd.DataFrame(rows, columns=["property", "value"])


def summary_groups(summary: Summary) -> list[str]:
    """The groups a page can show: :data:`~calib_core.base.predictions.ALL` (all rows) first, then every group of the
    summary's parts in sorted order (a summary is keyed per (model, group); ``by_group=False`` gives ALL only)."""
    return [ALL, *sorted({str(g) for _, g in summary.parts if g != ALL})]


def summary_of_group(summary: Summary, group: str) -> Summary:
    """The summary of one group's rows as a summary of all rows: its parts ``(model, group)`` keyed
    ``(model, ALL)`` and the spec's σ / confidence edges of that group moved to ``(model, ALL)`` (a group's own
    first-pass edges stay its own; a group without them falls back to the all-rows edges it was binned with, as
    :meth:`SummarySpec.sigma_edges_for` does).  Then :func:`calib_core.scale.summary.report`, :func:`selection_tables`
    and :func:`selection_metrics` of it are those of the group — each group is the in-memory diagnosis of its
    rows, as the row pages' group filter gives — at the cost of the group's bins only.  ``ALL`` returns
    ``summary`` itself; an unknown group raises ``KeyError``."""
    if group == ALL:
        return summary
    parts = {(m, ALL): arrays for (m, g), arrays in summary.parts.items() if g == group}
    if not parts:
        raise KeyError(f"the summary has no group {group!r}")
    spec = summary.spec
    sigma = []
    for model, _ in parts:
        found = spec.sigma_edges_for(model, group)
        if found is not None:
            sigma.append((model, ALL, tuple(float(v) for v in found[0]), tuple(int(i) for i in found[1])))
    conf = []
    for model, _ in parts:
        edges = spec.conf_edges_for(model, group)
        if edges is not None:
            conf.append((model, ALL, tuple(float(v) for v in edges)))
    own = {m for m, _ in parts if spec.own_edges(m, group)}
    # edges a group only borrowed (from its model's all-rows pass) are not its own: keep saying so
    exact = spec.edges_exact and len(own) == len(parts)
    new_spec = dataclasses.replace(spec, sigma_edges=tuple(sigma) if spec.sigma_edges else (),
                                   conf_edges=tuple(conf) if spec.conf_edges else (), edges_exact=exact)
    n_rows = sum(int(np.asarray(a["n"]).sum()) for a in parts.values() if "n" in a)
    models = tuple(m for m in summary.models if (str(m), ALL) in parts) or tuple(m for m, _ in parts)
    return Summary(new_spec, parts, n_rows, summary.dropped, f"{summary.source} — group {group}", models)


def dropped_rows(summary: Summary) -> pd.DataFrame:
    """reason, count, first rows (data-set row numbers) of the rows dropped while summarising."""
    rows = [{"reason": r, "count": int(d["count"]),
             "first rows": ", ".join(map(str, d["first"])) + (" …" if int(d["count"]) > len(d["first"]) else "")}
            for r, d in sorted(summary.dropped.items(), key=lambda kv: (-int(kv[1]["count"]), kv[0]))]
    return pd.DataFrame(rows, columns=["reason", "count", "first rows"])


# ---------------------------------------------------------------------------------------------------------------
# exact or bounded
# ---------------------------------------------------------------------------------------------------------------
def exactness_table(summary: Summary, report: Report, group: str = ALL) -> pd.DataFrame:
    """Per (model, metric) of ``report`` (a report of ``summary``): ``exactness`` — "exact", "bound [a, b]" (the
    interval the in-memory value lies in, from ``regression.summary.regression_bounds``), "exact for the
    summary's bins" or "needs the rows"; columns model, metric, label, exactness."""
    kinds = report.options.get("exactness", {})
    labels = metric_display_table(report.metrics, group=group)
    records = []
    for model, key, label in zip(labels["model"], labels["metric"], labels["label"]):
        kind = kinds.get(key, "exact")
        text = ("needs the rows" if str(kind).startswith("not available") else
                {"exact for the spec's bins": "exact for the summary's bins"}.get(kind, kind))
        if kind == "bound":
            part = summary.parts.get((str(model), group))
            bounds = regression_bounds(part, summary.spec) if part is not None else {}
            if key in bounds:
                lo, hi = bounds[key]
                text = f"bound [{lo:.4g}, {hi:.4g}]"
        records.append({"model": model, "metric": key, "label": label, "exactness": text})
    return pd.DataFrame(records, columns=["model", "metric", "label", "exactness"])


def add_exactness(table: pd.DataFrame, exactness: pd.DataFrame | None, *,
                  column: str = "from the summary") -> pd.DataFrame:
    """A display metric table (``views.metric_table`` / ``selection_vs_all``: metric labels, an optional model
    column) with ``column`` from :func:`exactness_table` inserted after the value; metrics it does not list (all of
    them for ``None``: the metrics of a selection, :func:`selection_metrics`) are "exact" (sums over bins)."""
    out = table.copy()
    if exactness is None:
        values = ["exact"] * len(out)
    elif "model" in out.columns:
        found = {(str(m), lab): t for m, lab, t in zip(exactness["model"], exactness["label"], exactness["exactness"])}
        values = [found.get((str(m), lab), "exact") for m, lab in zip(out["model"], out["metric"])]
    else:
        found = dict(zip(exactness["label"], exactness["exactness"]))
        values = [found.get(lab, "exact") for lab in out["metric"]]
    after = "selection" if "selection" in out.columns else "value"
    out.insert(list(out.columns).index(after) + 1, column, values)
    return out


def metrics_with_exactness(summary: Summary, report: Report, *, column: str = "from_summary") -> pd.DataFrame:
    """``report.metrics`` (a report of ``summary``) with ``column`` — the :func:`exactness_table` text of every
    (model, group, metric) row: "exact", "bound [a, b]", "exact for the summary's bins" or "needs the rows" — for
    the metric CSV of a page drawn from a summary."""
    out = report.metrics.copy()
    texts: dict[tuple[str, str, str], str] = {}
    for group in pd.unique(out["group"]):
        ex = exactness_table(summary, report, group=str(group))
        texts.update({(str(m), str(group), str(k)): t for m, k, t in zip(ex["model"], ex["metric"], ex["exactness"])})
    out[column] = [texts.get((str(m), str(g), str(k)), "exact")
                   for m, g, k in zip(out["model"], out["group"], out["metric"])]
    return out


# ---------------------------------------------------------------------------------------------------------------
# selections
# ---------------------------------------------------------------------------------------------------------------
def _part(summary: Summary, model: str, group: str) -> dict[str, np.ndarray] | None:
    return summary.parts.get((str(model), group))


def _bins(selection: Mapping[str, Iterable[int]], model: str, n_bins: int) -> np.ndarray:
    b = np.unique(np.asarray(list(selection.get(model, ())), dtype=np.int64))
    return b[(b >= 0) & (b < n_bins)]


#: The arrays of a classification part behind each reliability target: (rows per bin, events per bin, exact Σf).
_TARGET_ARRAYS = {"top_label": ("n", "hit", "x:conf"), "positive": ("pos_n", "pos_hit", "x:pos_p")}


def has_positive_class(summary: Summary) -> bool:
    """Whether a classification summary keeps the positive-class bins of a binary set (P(y = 1) against y = 1)."""
    return summary.spec.task == "classification" and any("pos_n" in part for part in summary.parts.values())


def selected_rows(summary: Summary, selection: Mapping[str, Iterable[int]], group: str = ALL, *,
                  target: str = "top_label") -> int:
    """Rows in the selected bins, all models together (a sum of bin counts); ``target="positive"``: the bins of
    the positive-class probability (binary classification)."""
    count_name = _TARGET_ARRAYS[target][0] if summary.spec.task == "classification" else "n"
    total = 0
    for model in selection:
        part = _part(summary, model, group)
        if part is not None and count_name in part:
            total += int(part[count_name][_bins(selection, model, summary.spec.n_bins)].sum())
    return total


def _selected_bins_table(part: dict, summary: Summary, model: str, group: str, bins: np.ndarray,
                         level: float, target: str = "top_label") -> pd.DataFrame:
    count_name, hit_name, sum_name = _TARGET_ARRAYS[target]
    table = "reliability_positive" if target == "positive" else "reliability"
    rel = classification_diagrams_from_part(part, summary.spec, model=model, group=group)[table]
    rel = rel.iloc[bins]
    count = part[count_name][bins].astype(np.int64)
    hits = part[hit_name][bins].astype(np.int64)
    ci = [sig.clopper_pearson(int(h), int(c), level) if c else (np.nan, np.nan) for h, c in zip(hits, count)]
    ranges = [f"({a:.3f}, {b:.3f}]" for a, b in zip(rel["lower"], rel["upper"])]
    what, rate = ("P(y = 1)", "frequency of y = 1") if target == "positive" else ("confidence", "accuracy")
    out = pd.DataFrame({"bin": pd.array(bins + 1, dtype="Int64"), f"{what} range": ranges,
                        "rows": count, f"mean {what}": rel["confidence"].to_numpy(),
                        rate: rel["accuracy"].to_numpy(),
                        f"{rate} {level:.0%} CI": [f"[{a:.4f}, {b:.4f}]" for a, b in ci],
                        "gap": rel["gap"].to_numpy()})
    n = int(count.sum())
    if len(bins) > 1 and n:
        conf = float(sum(exact_fraction(v) for v in part[sum_name][bins]) / n)
        k = int(hits.sum())
        lo, hi = sig.clopper_pearson(k, n, level)
        out.loc[len(out)] = [pd.NA, "all selected bins", n, conf, k / n, f"[{lo:.4f}, {hi:.4f}]", conf - k / n]
    return out


def selection_tables(
    summary: Summary,
    selection: Mapping[str, Iterable[int]],
    *,
    group: str = ALL,
    level: float = 0.95,
    target: str = "top_label",
) -> dict[str, dict[str, pd.DataFrame]]:
    """The linked views of a bin selection ({model: bin indices, 0-based}), from the summary alone:
    {table name: {model: table}} for the models with a selection.

    Regression (σ-bins): ``calibration_curve``, ``pit_histogram`` and ``intervals`` of the selected rows
    (``regression.summary.regression_diagrams_from_part`` with ``sigma_bins``: the curve is exact at its levels,
    the PIT histogram exact on the curve grid); classification (confidence bins): ``selected_bins`` — per selected
    bin its rows, mean confidence, accuracy with its exact Clopper–Pearson interval and gap, and their total
    (``target="positive"``, binary sets: the bins of P(y = 1), its mean and the frequency of y = 1).
    O(bins × levels) per model: independent of the number of rows summarised."""
    spec = summary.spec
    out: dict[str, dict[str, pd.DataFrame]] = {}
    for model in selection:
        part = _part(summary, model, group)
        bins = _bins(selection, model, spec.n_bins)
        count_name = _TARGET_ARRAYS[target][0] if spec.task == "classification" else "n"
        if part is None or count_name not in part or not bins.size or int(part[count_name][bins].sum()) == 0:
            continue
        if spec.task == "regression":
            if "curve" not in part:
                continue
            tables = regression_diagrams_from_part(part, spec, sigma_bins=bins)
            for name in ("calibration_curve", "pit_histogram", "intervals"):
                if name in tables:
                    out.setdefault(name, {})[model] = tables[name]
        else:
            out.setdefault("selected_bins", {})[model] = _selected_bins_table(part, summary, model, group, bins,
                                                                             level, target)
    return out


def _exact_total(part: dict, name: str, bins: np.ndarray) -> Any:
    nf = part.get(f"nf:{name}")
    if nf is not None and np.asarray(nf)[bins].any():
        pos, neg, nan = np.asarray(nf)[bins].reshape(-1, 3).sum(axis=0)
        return float("nan") if nan or (pos and neg) else float("inf") if pos else float("-inf")
    return exact_fraction(sum(int(v) for v in part[f"x:{name}"][bins]))


def _regression_selection_values(part: dict, summary: Summary, bins: np.ndarray) -> dict[str, float]:
    spec = summary.spec
    n = int(part["n"][bins].sum())
    nz = int(part["nz"][bins].sum())

    def mean(name: str) -> float:
        return float(_exact_total(part, name, bins) / n)

    out = {"nll": mean("nll"), "crps": mean("crps"), "rmse": float(np.sqrt(mean("sq_err"))), "mae": mean("abs_err"),
           "sharpness": float(np.sqrt(mean("var")))}
    lev = np.asarray(spec.levels, dtype=float)
    ce = np.asarray(spec.curve_edges, dtype=float)
    counts = part["curve"][bins].sum(axis=0)
    observed = np.cumsum(counts)[: ce.size][np.searchsorted(ce, lev)] / n
    out["calibration_rmse"] = float(np.sqrt(np.mean((observed - lev) ** 2)))
    if nz:
        s1, s2, s3, s4 = (_exact_total(part, k, bins) for k in ("z", "z2", "z3", "z4"))
        if all(not isinstance(s, float) for s in (s1, s2, s3, s4)):
            m = s1 / nz
            m2 = s2 / nz - m * m
            m3 = s3 / nz - 3 * m * s2 / nz + 2 * m ** 3
            m4 = s4 / nz - 4 * m * s3 / nz + 6 * m * m * s2 / nz - 3 * m ** 4
            out["z_mean"] = float(m)
            out["z_std"] = float(np.sqrt(float(m2)))
            if m2 > 0:
                out["z_skewness"] = float(m3 / m2) / float(np.sqrt(float(m2)))
                out["z_excess_kurtosis"] = float(m4 / (m2 * m2) - 3)
    s_sigma = _exact_total(part, "sigma", bins)
    for c in spec.coverages:
        tag = f"{100 * c:g}"
        out[f"coverage_{tag}"] = int(part[f"in:{tag}"][bins].sum()) / n
        if f"x:pen_{tag}" in part:
            k = float(norm_ppf(0.5 + c / 2.0))
            width = 2.0 * k * float(s_sigma / n)
            out[f"width_{tag}"] = width
            out[f"interval_score_{tag}"] = width + (2.0 / (1.0 - c)) * mean(f"pen_{tag}")
        else:
            out[f"width_{tag}"] = mean(f"width_{tag}")
            out[f"interval_score_{tag}"] = mean(f"score_{tag}")
    return out


@functools.lru_cache(maxsize=8)
def _block_weights(n_blocks: int, n_resamples: int, seed: int) -> np.ndarray:
    """Multinomial block weights of the selection bootstrap (the same for every selection: drawn once)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 16]))
    w = sig.block_bootstrap_weights(n_blocks, n_resamples, rng)
    w.setflags(write=False)
    return w


def _selection_bootstrap(part: dict, bins: np.ndarray, n_resamples: int, level: float,
                         seed: int) -> dict[str, tuple[float, float]]:
    """Percentile intervals of RMSE and sharpness (RMV) of the selected σ-bins from the per-block, per-bin
    (count, Σσ², Σε²) sums (blocks hashed from row ids; bin membership fixed)."""
    blk = part["blk_bins"][:, bins, :]  # G × b × 3
    reps = np.einsum("rg,gbq->rbq", _block_weights(blk.shape[0], n_resamples, seed), blk)
    cnt, sv, se = reps[..., 0], reps[..., 1], reps[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        n = cnt.sum(axis=1)
        stats_ = {"rmse": np.sqrt(se.sum(axis=1) / n), "sharpness": np.sqrt(sv.sum(axis=1) / n)}
    names = list(stats_)
    lo, hi = sig.percentile_interval(np.stack([stats_[k] for k in names], 1), level)
    return {k: (float(a), float(b)) for k, a, b in zip(names, lo, hi)}


def selection_metrics(
    summary: Summary,
    selection: Mapping[str, Iterable[int]],
    *,
    group: str = ALL,
    level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Metric rows (``Report.metrics`` columns) of the rows in the selected σ-bins of each model, exactly from the
    per-σ-bin sums: NLL, CRPS, RMSE, MAE, sharpness, calibration RMSE at the curve levels, the z moments, and
    coverage / width / interval score at every level — each equal to ``cc.diagnose`` of those rows — with
    Clopper–Pearson intervals for the coverages (exact) and block-bootstrap percentile intervals for RMSE and
    sharpness.  The metrics
    that need the fine PIT or z histogram of the selection are not given (:data:`NOT_FROM_SUMMARY`).  Regression
    only (an empty frame otherwise)."""
    spec = summary.spec
    frames = []
    if spec.task != "regression":
        return pd.DataFrame()
    for model in selection:
        part = _part(summary, model, group)
        bins = _bins(selection, model, spec.n_bins)
        if part is None or "curve" not in part or not bins.size:
            continue
        n = int(part["n"][bins].sum())
        if n < 2:
            continue
        values = _regression_selection_values(part, summary, bins)
        rec: dict[str, dict[str, Any]] = {}
        if n_resamples > 0:
            for k, (lo, hi) in _selection_bootstrap(part, bins, n_resamples, level, seed).items():
                rec[k] = {"ci_low": lo, "ci_high": hi, "interval": "percentile, block bootstrap (row-id blocks)"}
        for c in spec.coverages:
            tag = f"{100 * c:g}"
            lo, hi = sig.clopper_pearson(int(part[f"in:{tag}"][bins].sum()), n, level)
            rec[f"coverage_{tag}"] = {"ci_low": lo, "ci_high": hi, "interval": "Clopper–Pearson (exact)"}
        inf = pd.DataFrame.from_dict(rec, orient="index") if rec else None
        frames.append(inference_metric_rows(str(model), group, values, inf,
                                            kinds={k: metric_kind(k) for k in values}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

