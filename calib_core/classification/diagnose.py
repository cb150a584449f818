"""``diagnose_classification``: every classification diagnostic of a PredictionSet (SPEC §5), by model and group.

Metric table (``Report.metrics``; one row per model × group × metric, with a bootstrap CI and the value under
perfect calibration — labels simulated from the predicted probabilities, y* ~ Categorical(p_i); for top-label-only
files correct* ~ Bernoulli(confidence)):

* ``ece``, ``mce`` — top-label confidence ECE / MCE (Guo et al. 2017 eq. 3, 5) with ``n_bins`` bins of the chosen
  ``strategy`` (equal-width ((m−1)/M, m/M] by default, or equal-mass);
* ``accuracy``, ``mean_confidence``;
* ``nll`` (from logits via log-sum-exp when the file has logits), ``brier`` (Σ_k, in [0, 2]) and ``classwise_ece``
  (one-vs-rest, averaged over classes) — full probability vectors only;
* binary files (K = 2) also get ``ece_positive`` / ``mce_positive``: the same bins on P(y = 1) against the frequency
  of y = 1 (netcal's / scikit-learn's binary convention).

Diagrams (``Report.diagrams[(model, group)]``), all from ``calib_core.binning`` through
:class:`~calib_core.classification.metrics.ClassificationRows` and
:mod:`calib_core.classification.diagrams` (so bars and numbers agree):

* ``"reliability"`` — per bin: ``bin, lower, upper, count, fraction, confidence, accuracy, gap`` (top-label; Guo
  Fig. 1/4: accuracy bars with the gap to the diagonal, and the confidence histogram from ``fraction``);
* ``"per_class"`` — the same columns plus ``class`` (one-vs-rest reliability of every class; K·M rows);
* ``"reliability_positive"`` (binary only) — positive-class reliability: x = predicted P(y = 1), y = observed
  frequency of y = 1.  Every table's ``attrs["semantics"]`` says what it shows.

Row selection: all rows of the file (the ``split`` column matters for calibrators, not for diagnostics).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..predictions import PredictionSet, iter_subsets
from ..report import METRIC_COLUMNS, Report, metric_rows
from .diagrams import classification_diagrams
from .metrics import ClassificationRows, Strategy

__all__ = ["diagnose_classification", "classification_rows"]


def classification_rows(
    pset: PredictionSet, mask: Any = None, n_bins: int = 15, strategy: Strategy = "uniform"
) -> ClassificationRows:
    """The prepared :class:`ClassificationRows` of a classification PredictionSet (optionally some rows)."""
    if pset.task != "classification":
        raise ValueError("classification_rows needs a classification PredictionSet")
    sel = (lambda a: a) if mask is None else (lambda a: None if a is None else a[mask])
    if pset.top_label_only:
        correct = sel(pset.labels) == sel(pset.point)
        return ClassificationRows.from_top_label(sel(pset.confidence), correct, n_bins=n_bins, strategy=strategy)
    return ClassificationRows(sel(pset.labels), sel(pset.probs), sel(pset.logits), n_bins=n_bins, strategy=strategy)


def diagnose_classification(
    pset: PredictionSet,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
    n_resamples: int = 200,
    n_simulations: int = 50,
    level: float = 0.95,
    seed: int | None = 0,
    *,
    by_group: bool = True,
    diagrams: bool = True,
    classwise: bool = True,
    **ignored: Any,
) -> Report:
    """Classification diagnostics of every (model, group): metric table with CIs and perfect-calibration values,
    and the reliability tables (see the module docstring).

    Parameters
    ----------
    n_bins, strategy : confidence bins for ECE/MCE and the reliability tables (``"uniform"`` = Guo's 15 equal-width
        bins, ``"quantile"`` = equal-mass).
    n_resamples : bootstrap resamples (multinomial row weights) for the CIs; 0 switches CIs off.
    n_simulations : perfectly calibrated label draws for the reference values; 0 switches them off.
    level : two-sided level of the CIs and of the reference range.
    seed : seeds the bootstrap and the simulations.
    by_group : also diagnose each value of the ``group`` column.
    diagrams : compute the diagram tables.
    classwise : compute class-wise ECE and the per-class tables (O(N·K) per bootstrap replicate).
    ignored : regression-only options passed through ``cc.diagnose`` (e.g. ``binning``, ``pit_bins``) are
        accepted and listed in ``Report.options["ignored_options"]``.
    """
    if pset.task != "classification":
        raise ValueError("diagnose_classification needs a classification PredictionSet")
    tables: list[pd.DataFrame] = []
    figs: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
    notes: list[str] = []
    if pset.top_label_only:
        notes.append(
            "top-label-only file: accuracy, ECE, MCE and the top-label reliability diagram only (no NLL, Brier, "
            "class-wise ECE or per-class reliability without the full probability vectors)."
        )
    binary = not pset.top_label_only and pset.probs is not None and pset.probs.shape[1] == 2
    if binary:
        notes.append(
            "binary file: 'ece'/'mce' and the 'reliability' table are top-label (confidence = max(p, 1 − p), Guo et "
            "al.); 'ece_positive'/'mce_positive' and 'reliability_positive' use P(y = 1) against the frequency of "
            "y = 1 (netcal / scikit-learn's binary convention)."
        )
    for model, group, mask in iter_subsets(pset, by_group):
        n = int(mask.sum())
        if n < 2:
            notes.append(f"model {model!r}, group {group!r}: {n} row(s), too few to diagnose")
            continue
        if n < n_bins:
            notes.append(f"model {model!r}, group {group!r}: {n} rows for {n_bins} bins — most bins are empty")
        rows = classification_rows(pset, mask, n_bins, strategy)
        use_cw = classwise and not rows.top_label_only

        def statistic(w, rows=rows, use_cw=use_cw):
            return rows.statistics(w, classwise=use_cw)

        def simulate(rng, rows=rows, use_cw=use_cw):
            return rows.simulate(rng, classwise=use_cw)

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
            figs[(model, group)] = classification_diagrams(rows, per_class=use_cw, classes=pset.classes)
    metrics = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=METRIC_COLUMNS)
    return Report(
        task="classification",
        metrics=metrics,
        diagrams=figs,
        source=pset.source,
        n_rows=pset.n_rows,
        dropped=pset.dropped.summary(),
        options={
            "n_bins": n_bins,
            "strategy": strategy,
            "n_resamples": n_resamples,
            "n_simulations": n_simulations,
            "level": level,
            "seed": seed,
            "layout": pset.layout,
            "top_label_only": pset.top_label_only,
            "classes": pset.classes,
            "notes": notes,
            "ignored_options": sorted(ignored),
        },
    )
