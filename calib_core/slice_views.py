"""What the slice explorer page shows, without Streamlit: one call per task into the slice engine, the ranked table
as displayed, the funnel tables and the sentences (``pages/slices.py`` stays thin)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .classification import slices as cslices
from .predictions import PredictionSet
from .regression import slices as rslices
from .slices import ALPHA, SliceSet, available_slice_columns

__all__ = ["explore_slices", "funnel_statistics", "funnel_tables", "slice_display_table", "search_sentence",
           "DISPLAY_ROWS"]

DISPLAY_ROWS = 500
"""Rows of the ranked list shown (the worst first)."""


def explore_slices(pset: PredictionSet, *, columns: Sequence[str] | None = None, n_bins: int = 5,
                   min_size: int = 100, pairs: bool = True, target: str = "auto",
                   seed: int = 0) -> tuple[pd.DataFrame, SliceSet]:
    """``(ranking, slices)`` of :func:`calib_core.regression.slices.slice_ranking` or
    :func:`calib_core.classification.slices.slice_ranking`, by the task of ``pset``."""
    options: dict[str, Any] = {"columns": columns, "n_bins": int(n_bins), "min_size": int(min_size),
                               "pairs": bool(pairs), "seed": int(seed)}
    if pset.task == "classification":
        return cslices.slice_ranking(pset, target=target, **options)
    return rslices.slice_ranking(pset, **options)


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
    """The ranked list as shown: rank, slice, n, the statistics, evidence, adjusted p and the verdict, naming the
    test that drives it (``miscalibrated (std z)``), of the worst ``rows`` slices."""
    stats_cols = (["ECE", "calibration ratio"] if task == "classification"
                  else ["PIT χ²", "coverage 90%", "mean z", "std z", "ENCE"])
    out = ranking.head(rows)[["rank", "slice", "n", *stats_cols, "evidence", "adjusted p"]].copy()
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
