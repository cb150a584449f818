"""``diagnose_regression``: every regression diagnostic of a PredictionSet, with CIs and perfect-calibration values.

``cc.diagnose`` (:mod:`calib_core.api`) hands regression sets here; the classification mirror is
``calib_core.classification.diagnose.diagnose_classification``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..predictions import PredictionSet, iter_subsets
from ..report import METRIC_COLUMNS, Report, metric_rows
from .diagrams import regression_diagrams
from .metrics import Binning, RegressionRows, summary_statistics

__all__ = ["diagnose_regression"]


def diagnose_regression(
    prediction_set: PredictionSet,
    *,
    n_bins: int = 15,
    binning: Binning = "count",
    pit_bins: int = 20,
    n_resamples: int = 200,
    n_simulations: int = 50,
    level: float = 0.95,
    seed: int | None = 0,
    by_group: bool = True,
    diagrams: bool = True,
) -> Report:
    """Regression diagnostics of every (model, group).

    Parameters
    ----------
    n_bins, binning : Levi σ-bins for ENCE and the reliability diagram (equal-count by default,
        ``"width"`` for netcal's equal-width convention).
    pit_bins : bins of the PIT histogram.
    n_resamples : bootstrap resamples for the CIs (0 switches CIs off).
    n_simulations : simulations of a perfectly calibrated forecaster for the reference values
        (y* ~ F_i; for ensembles the target swapped with a random member, see
        ``SampleSet.calibrated_draw``; 0 switches them off).
    level : two-sided level of the CIs and of the reference range.
    seed : seeds the bootstrap, the simulations and the randomised PIT of ensembles.
    by_group : also diagnose each value of the ``group`` column.
    diagrams : compute the diagram tables (``Report.diagrams``).
    """
    pset = prediction_set
    if pset.task != "regression":
        raise ValueError("diagnose_regression needs a regression PredictionSet")
    tables: list[pd.DataFrame] = []
    figs: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
    notes: list[str] = []
    for model, group, mask in iter_subsets(pset, by_group):
        n = int(mask.sum())
        y = pset.y if n == pset.n_rows else pset.y[mask]
        if n < 2:
            notes.append(f"model {model!r}, group {group!r}: {n} row(s), too few to diagnose")
            continue
        if pset.dist is None:  # point predictions only: accuracy, no uncertainty to judge
            point = pset.point[mask]
            err = y - point

            def point_stat(w, err=err):
                w = np.ones_like(err) if w is None else w
                return {
                    "rmse": float(np.sqrt(np.dot(w, err * err) / w.sum())),
                    "mae": float(np.dot(w, np.abs(err)) / w.sum()),
                }

            tables.append(
                metric_rows(
                    point_stat, n, None, model=model, group=group, n_resamples=n_resamples, level=level, seed=seed
                )
            )
            continue
        # the whole set needs no copy (a 1e7-row take would cost 3 arrays of 80 MB)
        dist = pset.dist if mask.all() else pset.dist.take(mask)
        rows = RegressionRows(y, dist, pit_seed=seed)

        def statistic(w, rows=rows):
            return summary_statistics(rows, w, n_bins=n_bins, binning=binning)

        def simulate(rng, dist=dist, y=y):
            y_star, dist_star = dist.calibrated_draw(y, rng)
            sim_rows = RegressionRows(y_star, dist_star, pit_seed=int(rng.integers(2**31)))
            return summary_statistics(sim_rows, None, n_bins=n_bins, binning=binning)

        tables.append(
            metric_rows(
                statistic,
                n,
                simulate,
                model=model,
                group=group,
                n_resamples=n_resamples,
                n_simulations=n_simulations,
                level=level,
                seed=seed,
            )
        )
        if diagrams:
            figs[(model, group)] = regression_diagrams(
                rows, n_bins=n_bins, binning=binning, pit_bins=pit_bins, n_resamples=n_resamples, seed=seed
            )
    metrics = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=METRIC_COLUMNS)
    return Report(
        task="regression",
        metrics=metrics,
        diagrams=figs,
        source=pset.source,
        n_rows=pset.n_rows,
        dropped=pset.dropped.summary(),
        options={
            "n_bins": n_bins,
            "binning": binning,
            "pit_bins": pit_bins,
            "n_resamples": n_resamples,
            "n_simulations": n_simulations,
            "level": level,
            "seed": seed,
            "layout": pset.layout,
            "notes": notes,
        },
    )
