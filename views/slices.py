"""What the slice explorer page shows, without Streamlit: one call per task into the slice engine, the ranked table
as displayed, the funnel tables and the sentences (``pages/slices.py`` stays thin)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from calib_core.base.predictions import PredictionSet
from calib_core.base.protocol import EvaluationResult, model_rows
from calib_core.base.regression import SampleSet
from calib_core.data.nonfinite_cells import nonfinite_cell_notes
from calib_core.metrics.classification import event_rows
from calib_core.slices import classification as cslices
from calib_core.slices import regression as rslices
from calib_core.slices.candidates import (
    ALPHA,
    SliceSet,
    available_slice_columns,
    candidate_slices,
    restrict_slices,
)

__all__ = ["explore_slices", "no_bin_notes", "funnel_statistics", "funnel_tables", "slice_display_table",
           "search_sentence",
           "SlicesBeforeAfter", "slices_before_after", "before_after_table", "before_after_display",
           "before_after_funnel",
           "before_after_sentence", "DISPLAY_ROWS"]

DISPLAY_ROWS = 500
"""Rows of the ranked list shown (the worst first)."""


def explore_slices(pset: PredictionSet, *, columns: Sequence[str] | None = None, n_bins: int = 5,
                   min_size: int = 100, pairs: bool = True, target: str = "auto",
                   seed: int = 0) -> tuple[pd.DataFrame, SliceSet]:
    """``(ranking, slices)`` of :func:`calib_core.slices.regression.slice_ranking` or
    :func:`calib_core.slices.classification.slice_ranking`, by the task of ``pset``."""
    options: dict[str, Any] = {"columns": columns, "n_bins": int(n_bins), "min_size": int(min_size),
                               "pairs": bool(pairs), "seed": int(seed)}
    if pset.task == "classification":
        return cslices.slice_ranking(pset, target=target, **options)
    return rslices.slice_ranking(pset, **options)


def no_bin_notes(pset: PredictionSet, columns: Sequence[str]) -> list[str]:
    """Per chosen numeric column with empty, NaN or ±inf cells: how many, which rows (as the file numbers them), and
    that those rows are in no slice of that column (:func:`calib_core.data.nonfinite_cells.nonfinite_cell_notes`)."""
    return nonfinite_cell_notes(pset.slice_columns, pset.row_number, only=list(columns))


def funnel_statistics(task: str) -> tuple[str, ...]:
    """The statistics a funnel plot of ``task`` can show."""
    return cslices.FUNNEL_STATISTICS if task == "classification" else rslices.FUNNEL_STATISTICS


def funnel_tables(pset: PredictionSet, ranking: pd.DataFrame, statistic: str, *,
                  target: str = "auto") -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(points, limits)`` of the funnel plot of ``statistic`` (classification: the base rate is the mean
    probability of all rows)."""
    if pset.task == "classification":
        f, _ = cslices.slice_events(pset, target=target)
        return cslices.funnel_table(ranking, statistic, base_rate=float(np.mean(f)))
    return rslices.funnel_table(ranking, statistic)


def slice_display_table(ranking: pd.DataFrame, task: str, *, rows: int = DISPLAY_ROWS) -> pd.DataFrame:
    """The ranked list as shown: rank, slice, n, the statistics, evidence (−log₁₀ of the slice's combined p, a
    finite number however small p is, to one decimal: 5321.4 is p ≈ 10⁻⁵³²¹), effect (the deciding test's
    deviation in per-row null standard deviations: the tie-break), adjusted p and the verdict, naming the test that
    drives it (``miscalibrated (std z)``), of the worst ``rows`` slices."""
    stats_cols = (["ECE", "calibration ratio"] if task == "classification"
                  else ["PIT χ²", "coverage 90%", "mean z", "std z", "ENCE"])
    extra = ["effect"] if "effect" in ranking.columns else []
    out = ranking.head(rows)[["rank", "slice", "n", *stats_cols, "evidence", *extra, "adjusted p"]].copy()
    out["evidence"] = out["evidence"].astype(float).round(1) + 0.0
    head = ranking.head(rows)
    out["verdict"] = np.where(head["flagged"], "miscalibrated (" + head["worst"].astype(str) + ")", "no evidence")
    return out.reset_index(drop=True)


def search_sentence(ranking: pd.DataFrame, sset: SliceSet, pset: PredictionSet, *, alpha: float = ALPHA) -> str:
    """One sentence: slices searched, from which columns, how many flagged and by which adjustment."""
    flagged = int(ranking["flagged"].sum()) if len(ranking) else 0
    n_cols = len(sset.columns)
    n_pairs = sum(len(t) == 2 for t in sset.terms)
    avail = len(available_slice_columns(pset))
    pairs = f", {n_pairs} pair{'s' if n_pairs > 1 else ''}" if n_pairs else ""
    text = (f"{sset.n_slices:,} slices searched ({n_cols} of {avail} columns{pairs}); {flagged} flagged at "
            f"family-wise {alpha:.0%} (each slice's tests combined by Bonferroni, Holm across the slices).")
    return text


# --------------------------------------------------------------------------------------------------------------
# the worst slices before and after a recalibration
# --------------------------------------------------------------------------------------------------------------
@dataclass
class SlicesBeforeAfter:
    """The slices of the held-out rows of a recalibration ranked under every calibrator.

    ``rankings``: calibrator name → ranking (as :func:`explore_slices`'s, over the same slices ``slices``), the
    uncalibrated baseline first; ``slices``: the :class:`~calib_core.slices.candidates.SliceSet` of the held-out rows;
    ``rows``: their positions in the prediction set; ``n_cal``: calibration rows of the same trial; ``baseline``:
    the name of the uncalibrated predictions; ``split``: how the rows were split, in words; ``skipped``: calibrators
    left out, with the reason; ``task``; ``base_rates`` (classification): the mean probability of the held-out rows
    under each calibrator (the funnel's limits).
    """

    rankings: dict[str, pd.DataFrame]
    slices: SliceSet
    rows: np.ndarray
    n_cal: int
    baseline: str
    split: str
    task: str
    skipped: dict[str, str] = field(default_factory=dict)
    base_rates: dict[str, float] = field(default_factory=dict)

    @property
    def after(self) -> list[str]:
        """The calibrators (every ranking but the baseline's)."""
        return [c for c in self.rankings if c != self.baseline]


def slices_before_after(pset: PredictionSet, result: EvaluationResult, *, baseline: str = "uncalibrated",
                        slices: SliceSet | None = None, columns: Sequence[str] | None = None, n_bins: int = 5,
                        min_size: int = 100, pairs: bool = True, target: str = "auto",
                        seed: int = 0) -> SlicesBeforeAfter:
    """Every slice of the held-out rows of a recalibration, ranked before (``baseline``: the uncalibrated
    predictions) and after each calibrator of ``result`` (``cc.evaluate(..., diagrams=True)``), by the same tests
    and the same multiplicity adjustment as the explorer.

    Rows: the test rows of the evaluation's first trial, never the rows a calibrator was fitted on.  Slices: those
    of ``slices`` (the explorer's :class:`~calib_core.slices.candidates.SliceSet` of all rows of ``pset``; default
    :func:`~calib_core.slices.candidates.candidate_slices` with ``columns``, ``n_bins``, ``min_size``, ``pairs``)
    restricted to
    the held-out rows by :func:`~calib_core.slices.candidates.restrict_slices` — the same names and bin edges, each
    slice with
    at least ``min_size`` held-out rows — so every ranking searches the same S slices.  Per calibrator and per row,
    regression: the PIT u_i = F_i(y_i) and σ_i of the calibrated distribution
    (:func:`calib_core.slices.regression.row_statistics`) ranked by
    :func:`~calib_core.slices.regression.rank_row_statistics` (PIT decile, 90% coverage, mean z, std z, ENCE tests);
    classification: the event probability f_i and outcome y_i of the calibrated probabilities (``target``,
    :func:`calib_core.metrics.classification.event_rows`) ranked by
    :func:`~calib_core.slices.classification.rank_events` (ECE, calibration ratio).  Each ranking: Bonferroni over
    a slice's tests, Holm over the S slices (:func:`calib_core.slices.candidates.rank_slices`).  A calibrator without
    predictions for every model's held-out rows is left out (``skipped``).
    """
    if not result.calibrated:
        raise ValueError("the recalibration holds no calibrated predictions: run it with diagrams=True")
    first = {s["model"]: s for s in result.splits if s["trial"] == 0}
    models = [m for m in result.calibrated if m in first and first[m]["test"].size]
    if not models:
        raise ValueError("the recalibration has no held-out rows")
    rows = np.sort(np.concatenate([np.asarray(first[m]["test"], dtype=np.int64) for m in models]))
    n_cal = int(sum(np.asarray(first[m]["cal"]).size for m in models))
    if slices is None:
        slices = candidate_slices(pset, columns=columns, n_bins=n_bins, min_size=min_size, pairs=pairs)
    if slices.n_rows != pset.n_rows:
        raise ValueError(f"the slices index {slices.n_rows} rows, the prediction set has {pset.n_rows}")
    held = restrict_slices(slices, rows, min_size=min_size)
    names = [baseline] + [c for c in result.calibrators if c != baseline]
    regression = pset.task == "regression"
    if not regression and target == "auto":
        target = "positive" if pset.probs is not None and pset.probs.shape[1] == 2 else "top_label"
    rankings: dict[str, pd.DataFrame] = {}
    skipped: dict[str, str] = {}
    base_rates: dict[str, float] = {}
    for name in names:
        missing = [m for m in models if name not in result.calibrated[m]]
        if missing:
            skipped[name] = f"no predictions for model {', '.join(map(str, missing))}"
            continue
        a, b = np.empty(rows.size), np.empty(rows.size)
        ensemble = False
        for k, m in enumerate(models):
            mrows = model_rows(pset, m)
            test = np.asarray(first[m]["test"], dtype=np.int64)
            rel = np.searchsorted(mrows, test)  # the test rows inside the model's rows
            at = np.searchsorted(rows, test)  # … and inside the held-out rows
            pred = result.calibrated[m][name]
            if regression:
                ensemble |= isinstance(pred, SampleSet)
                a[at], b[at] = rslices.row_statistics(np.asarray(pset.y)[test], pred.take(rel), seed=seed + k)
            else:
                a[at], b[at] = event_rows(np.asarray(pset.labels)[test], np.asarray(pred)[rel], target)
        if regression:
            rankings[name] = rslices.rank_row_statistics(a, b, held, ence_tested=not ensemble, seed=seed)
        else:
            rankings[name] = cslices.rank_events(a, b, held, seed=seed)
            base_rates[name] = float(np.mean(a)) if a.size else 0.5
    if baseline not in rankings:
        raise ValueError(f"the recalibration has no '{baseline}' predictions to compare with")
    return SlicesBeforeAfter(rankings, held, rows, n_cal, baseline, result.split_description(), pset.task,
                             skipped, base_rates)


def before_after_table(ba: SlicesBeforeAfter, after: str, *, order: str = "before",
                       rows: int = DISPLAY_ROWS) -> pd.DataFrame:
    """The worst ``rows`` slices of the held-out rows, before (uncalibrated) and after the calibrator ``after``,
    side by side: ``slice``, ``n`` (held-out rows), ``rank before`` / ``rank after``, ``test`` (the test with the
    smallest p-value before — with ``order="after"``, after) and that test's statistic ``before → after``,
    ``evidence`` (−log₁₀ of the slice's Bonferroni-combined p) and Holm-``adjusted p`` before and after, and the
    ``verdict`` after.  Worst first by the ranking ``order`` ("before" or "after")."""
    if order not in ("before", "after"):
        raise ValueError(f"order must be 'before' or 'after', not {order!r}")
    b = ba.rankings[ba.baseline].set_index("index")
    a = ba.rankings[after].set_index("index")
    lead = b if order == "before" else a
    idx = lead.index.to_numpy()[:rows]
    b, a = b.loc[idx], a.loc[idx]
    test = lead.loc[idx, "worst"].astype(str).to_numpy()
    value_b = np.array([b[t].iat[i] for i, t in enumerate(test)], dtype=float) if idx.size else np.empty(0)
    value_a = np.array([a[t].iat[i] for i, t in enumerate(test)], dtype=float) if idx.size else np.empty(0)
    out = pd.DataFrame({
        "rank before": b["rank"].to_numpy(), "rank after": a["rank"].to_numpy(),
        "slice": b["slice"].to_numpy(), "n": b["n"].to_numpy(), "test": test,
        "before → after": [_minus(f"{x:.3g} → {y:.3g}") for x, y in zip(value_b, value_a, strict=True)],
        "evidence before": b["evidence"].to_numpy() + 0.0, "evidence after": a["evidence"].to_numpy() + 0.0,
        "adjusted p before": b["adjusted p"].to_numpy(), "adjusted p after": a["adjusted p"].to_numpy(),
        "verdict after": np.where(a["flagged"].to_numpy(), "miscalibrated (" + a["worst"].astype(str) + ")",
                                  np.where(b["flagged"].to_numpy(), "no longer flagged", "no evidence")),
    })
    return out.reset_index(drop=True)


def _minus(text: str) -> str:
    """Negative numbers with the minus sign (a cell starting with '-' reads as a formula to a spreadsheet)."""
    return text.replace("-", "−").replace("e−", "e-")


def before_after_display(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`before_after_table` as shown (narrow enough for the page): ``rank``, ``evidence`` and ``adjusted p``
    each as one text column ``before → after``, beside ``slice``, ``n``, ``test``, ``statistic`` (the test's
    statistic before → after) and ``verdict after``."""
    def pair(a: pd.Series, b: pd.Series, fmt: str) -> list[str]:
        return [_minus(f"{x:{fmt}} → {y:{fmt}}") for x, y in zip(a.to_numpy(dtype=float), b.to_numpy(dtype=float),
                                                         strict=True)]

    return pd.DataFrame({
        "rank": [f"{int(x)} → {int(y)}" for x, y in zip(table["rank before"], table["rank after"], strict=True)],
        "slice": table["slice"], "n": table["n"], "test": table["test"], "statistic": table["before → after"],
        "evidence": pair(table["evidence before"], table["evidence after"], ",.1f"),
        "adjusted p": pair(table["adjusted p before"], table["adjusted p after"], ".2g"),
        "verdict after": table["verdict after"],
    })


def before_after_funnel(ba: SlicesBeforeAfter, after: str, statistic: str) -> tuple[pd.DataFrame, pd.DataFrame,
                                                                                     pd.DataFrame]:
    """``(before, after, limits)`` of the before/after funnel plot of ``statistic``: the points of every held-out
    slice under the uncalibrated predictions and under ``after`` (:func:`funnel_tables`' columns; same slices, same
    ``index``), and the limits (the same for both in regression; classification: the calibration ratio's limits at
    the calibrator's base rate)."""
    before_r, after_r = ba.rankings[ba.baseline], ba.rankings[after]
    if ba.task == "classification":
        before, _ = cslices.funnel_table(before_r, statistic, base_rate=ba.base_rates[ba.baseline])
        pts, limits = cslices.funnel_table(after_r, statistic, base_rate=ba.base_rates[after])
    else:
        before, _ = rslices.funnel_table(before_r, statistic)
        pts, limits = rslices.funnel_table(after_r, statistic)
    return before, pts, limits


def before_after_sentence(ba: SlicesBeforeAfter, after: str, *, min_size: int, alpha: float = ALPHA) -> str:
    """Which rows are judged and what changed, in one paragraph."""
    S = ba.slices.n_slices
    k_before = int(ba.rankings[ba.baseline]["flagged"].sum())
    k_after = int(ba.rankings[after]["flagged"].sum())
    return (f"Judged on the {ba.rows.size:,} held-out (test) rows of the Recalibrate comparison's first trial "
            f"({ba.split}); every calibrator was fitted on the other {ba.n_cal:,} rows only. The slices are those of "
            f"the list above (numeric bins cut on all rows) with at least {min_size:,} held-out rows: {S:,} slices, "
            f"each ranking Holm-adjusted over them at family-wise {alpha:.0%}. Flagged: {k_before} before "
            f"(uncalibrated), {k_after} after {after}.")
