"""Calibrator comparison on held-out rows: the engine behind the dashboard's Recalibrate page.

``compare_calibrators`` runs the evaluation protocol (``cc.evaluate`` for regression,
``evaluate_classification`` for classification: every calibrator cloned, fitted on calibration rows,
scored on test rows, ``repeats`` random splits → mean ± std) and, for the first split, the before/after
diagram tables on the test rows and the calibrated predictions of every row.  ``comparison_table`` turns
the result into the display table (metrics as rows, "mean ± std" per calibrator, best cells flagged),
``calibrated_frame`` into a downloadable table.  No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from . import export
from .classification.diagrams import reliability_of
from .classification.evaluate import calibrator_input, evaluate_classification
from .classification.metrics import ClassificationRows
from .predictions import PredictionSet
from .protocol import EvaluationResult, split_rows, summarise
from .registry import direction_text, metric, metric_label
from .regression.diagrams import regression_diagrams
from .regression.evaluate import evaluate_regression
from .regression.metrics import RegressionRows

__all__ = [
    "BASELINE",
    "split_labels",
    "has_split_column",
    "compare_calibrators",
    "comparison_table",
    "calibrated_frame",
]

#: Name of the "no calibrator" entry in a comparison.
BASELINE = "uncalibrated"
#: Bootstrap resamples for the Levi RMSE intervals of the before/after diagrams.
DIAGRAM_RESAMPLES = 100


def split_labels(pset: PredictionSet, trial: int, seed: int, test_fraction: float) -> np.ndarray:
    """Per-row 'cal'/'test' labels of random trial ``trial``: exactly ``cc.evaluate``'s own split (per model)."""
    labels = np.empty(pset.n_rows, dtype=object)
    for model in pset.models():
        rows = np.arange(pset.n_rows) if pset.model is None else np.flatnonzero(pset.model == model)
        cal_pos, test_pos = split_rows(rows.size, None, "random", trial, seed, test_fraction)
        labels[rows[cal_pos]] = "cal"
        labels[rows[test_pos]] = "test"
    return labels.astype(str)


def has_split_column(pset: PredictionSet) -> bool:
    """True when the set has a `split` column with both "cal" and "test" rows."""
    if pset.split is None:
        return False
    lab = np.char.lower(np.asarray(pset.split).astype(str))
    return bool(np.any(lab == "cal") and np.any(lab == "test"))


def compare_calibrators(
    pset: PredictionSet,
    chosen: Mapping[str, Any],
    settings: Mapping[str, Any],
    progress: Callable[[float, str], None],
) -> dict[str, Any]:
    """Evaluate every calibrator (mean ± std over trials) and compute the before/after diagrams of trial 1.

    ``chosen`` maps display names to unfitted calibrators (the uncalibrated baseline is added);
    ``settings`` holds ``split`` ("split column" or random), ``repeats``, ``seed``, ``test_fraction``,
    ``n_bins`` and ``strategy``; ``progress(fraction, text)`` is called as work completes.  Returns a dict
    with the ``EvaluationResult`` (``result``), the diagram tables of the first split's test rows per
    model and calibrator (``diagrams``), the calibrated predictions of every row (``calibrated``), the
    first split's labels (``labels0``), the calibrator order, messages and the number of trials.
    """
    cals: dict[str, Any] = {BASELINE: None, **chosen}
    if pset.task == "regression" and pset.dist is None:
        cals.pop(BASELINE)  # point predictions have no uncertainty to show "before"
    use_column = settings["split"] == "split column"
    n_trials = 1 if use_column else int(settings["repeats"])
    models = pset.models()
    total = n_trials * len(cals) + len(models) * len(cals)
    done = 0

    def trial_split(t: int) -> np.ndarray:
        if use_column:
            return np.char.lower(np.asarray(pset.split).astype(str))
        return split_labels(pset, t, settings["seed"], settings["test_fraction"])

    if pset.task == "regression":
        longs, timing, splits, messages = [], [], [], []
        for t in range(n_trials):
            labels = trial_split(t)
            for name, cal in cals.items():
                res = evaluate_regression(pset, {name: cal}, split=labels, repeats=1)
                longs.append(res.long.assign(trial=t))
                timing.append(res.fit_seconds.assign(trial=t))
                messages += [m for m in res.messages if m not in messages]
                done += 1
                progress(done / total, f"{name} · trial {t + 1}/{n_trials}")
            splits += [{**s, "trial": t} for s in res.splits]
        long = pd.concat(longs, ignore_index=True)
        result = EvaluationResult(
            long=long, summary=summarise(long), splits=splits,
            fit_seconds=pd.concat(timing, ignore_index=True), messages=messages,
        )
    elif use_column:
        result = evaluate_classification(
            pset, cals, split="column", seed=settings["seed"], n_bins=settings["n_bins"],
            strategy=settings["strategy"], progress=lambda d, tot, text: progress(d / total, text),
        )
    else:
        result = evaluate_classification(
            pset, cals, split="random", repeats=n_trials, seed=settings["seed"],
            test_fraction=settings["test_fraction"], n_bins=settings["n_bins"], strategy=settings["strategy"],
            progress=lambda d, tot, text: progress(d / total, text),
        )
    done = n_trials * len(cals)

    # before/after diagrams on the test rows of trial 1; calibrated predictions of every row for the downloads
    labels0 = trial_split(0)
    diagrams: dict[str, dict[str, dict[str, pd.DataFrame]]] = {}
    calibrated: dict[str, dict[str, Any]] = {}
    messages = list(result.messages)
    if pset.task == "classification":
        scores, kind = calibrator_input(pset)
    for model in models:
        rows = np.arange(pset.n_rows) if pset.model is None else np.flatnonzero(pset.model == model)
        cal_rows, test_rows = rows[labels0[rows] == "cal"], rows[labels0[rows] == "test"]
        diagrams[model], calibrated[model] = {}, {}
        if cal_rows.size == 0 or test_rows.size == 0:
            done += len(cals)
            continue
        test_in_rows = np.isin(rows, test_rows)
        sub = pset.take(rows)
        for name, cal in cals.items():
            try:
                if pset.task == "regression":
                    base = sub.dist if sub.dist is not None else sub.point
                    if cal is None:
                        dist = sub.dist
                    else:
                        fitset = pset.take(cal_rows)
                        est = clone(cal).fit(fitset.dist if fitset.dist is not None else fitset.point, fitset.y,
                                             features=fitset.features)
                        dist = est.transform(base, features=sub.features)
                    test_rows_rel = np.flatnonzero(test_in_rows)
                    rr = RegressionRows(sub.y[test_rows_rel], dist.take(test_rows_rel), pit_seed=settings["seed"])
                    diagrams[model][name] = regression_diagrams(
                        rr, n_resamples=DIAGRAM_RESAMPLES, seed=settings["seed"]
                    )
                    calibrated[model][name] = dist
                else:
                    if cal is None:
                        probs = sub.probs
                    else:
                        est = clone(cal)
                        if est.get_params(deep=False).get("input") == "auto":
                            est.set_params(input=kind)
                        est.fit(scores[cal_rows], pset.labels[cal_rows])
                        probs = est.predict_proba(scores[rows])
                    crow = ClassificationRows(
                        sub.labels[test_in_rows], probs[test_in_rows],
                        n_bins=settings["n_bins"], strategy=settings["strategy"],
                    )
                    diagrams[model][name] = {"reliability": reliability_of(crow)}
                    calibrated[model][name] = probs
            except Exception as exc:  # noqa: BLE001 - shown to the user; the other calibrators go on
                text = f"{name} (model {model}): diagrams skipped: {exc}"
                if text not in messages:
                    messages.append(text)
            done += 1
            progress(min(done / total, 1.0), f"diagrams · {name}")
    return {
        "result": result,
        "diagrams": diagrams,
        "calibrated": calibrated,
        "labels0": labels0,
        "calibrators": list(cals),
        "messages": messages,
        "n_trials": n_trials,
    }


def _direction(key: str) -> str | float | None:
    """The registry's direction of a metric key (None for keys outside the registry, e.g. custom metrics)."""
    try:
        return metric(key).direction
    except KeyError:
        return None


def comparison_table(result: EvaluationResult, order: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Metrics as rows, one column per calibrator ("model · calibrator" with several models) holding
    "mean ± std"; plus the boolean frame of the best cell per metric (for highlighting)."""
    s = result.summary
    models = list(pd.unique(s["model"]))
    multi = len(models) > 1
    metrics = list(pd.unique(s["metric"]))
    text = result.formatted(digits=3)  # index (model, calibrator), columns metrics
    mean = result.wide("mean")
    cols = [(m, c) for m in models for c in order if (m, c) in text.index]
    names = [f"{m} · {c}" if multi else c for m, c in cols]
    body = pd.DataFrame({name: [text.loc[mc, k] for k in metrics] for name, mc in zip(names, cols)})
    best = pd.DataFrame(False, index=body.index, columns=names)
    for i, k in enumerate(metrics):
        rule = _direction(k)
        for m in models:
            sel = [(j, name) for j, ((mm, _), name) in enumerate(zip(cols, names)) if mm == m]
            vals = np.array([mean.loc[cols[j], k] if k in mean.columns else np.nan for j, _ in sel], dtype=float)
            if not sel or not np.isfinite(vals).any() or rule is None:
                continue
            score = vals if rule == "lower" else (-vals if rule == "higher" else np.abs(vals - float(rule)))
            score = np.where(np.isfinite(score), score, np.inf)
            winners = np.flatnonzero(score == score.min())
            if winners.size > max(1, len(sel) // 2):  # a tie of most columns (e.g. RMSE under σ-only maps)
                continue
            for w in winners:
                best.loc[i, sel[w][1]] = True
    body.insert(0, "better", [direction_text(_direction(k)) for k in metrics])
    body.insert(0, "metric", [metric_label(k) for k in metrics])
    best.insert(0, "better", False)
    best.insert(0, "metric", False)
    return body, best


def calibrated_frame(pset: PredictionSet, stored: dict[str, Any], name: str) -> pd.DataFrame:
    """Calibrated predictions of every row (each model's calibrator fitted on its trial-1 calibration rows);
    ``split`` says which rows were used for fitting (cal) and which were held out (test)."""
    parts = []
    for model, by_cal in stored["calibrated"].items():
        if name not in by_cal:
            continue
        rows = np.arange(pset.n_rows) if pset.model is None else np.flatnonzero(pset.model == model)
        sub = pset.take(rows)
        sub.split = stored["labels0"][rows]
        if pset.task == "regression":
            parts.append(export.calibrated_predictions_frame(sub, by_cal[name], calibrator=name))
        else:
            parts.append(export.calibrated_probabilities_frame(sub, by_cal[name], calibrator=name))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
