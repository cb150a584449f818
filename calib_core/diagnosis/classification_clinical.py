"""The clinical calibration set in ``cc.diagnose``: its point values per (model, group), the per-class table of
multi-class files, and the prevalence option.

* Binary files (K = 2): the set of the positive class, P(y = 1) against 1[y = 1], in the metric table; its tests
  and intervals come from :mod:`calib_core.inference.classification_clinical` (tests in the secondary family).
* K > 2 classes (the logistic fits of all classes batched in one Newton iteration,
  :func:`~calib_core.metrics.classification_clinical_batch.recalibration_columns`; one loess per class): each class
  one-vs-rest in the diagram table ``"clinical_per_class"`` (columns ``class, metric,
  value, ci_low, ci_high, p_value``: Wald intervals of the fits, none for Z and HL (test statistics with no
  N-free population value: their p-values only), ICI / E50 / E90 values only (a bootstrap of K loess curves would
  cost K times the binary one), unadjusted p-values that are
  **descriptive** — they are not in the verdict's families), and in the metric table the mean over the classes
  of each statistic, descriptive (no test, no interval: a mean of per-class slopes is a summary, not an estimand
  of one fit).
* ``prevalence=P`` (binary files): the probabilities are read as made for a population of prevalence P (the one
  where the model is used, e.g. 5 % when the file is an enriched 50 % sample).  Every probability is re-expressed
  at the file's own prevalence π̂ (its share of positives) by Bayes' rule on the odds (Saerens et al. 2002),
  odds′ = odds · [π̂/(1 − π̂)] / [P/(1 − P)], before any metric is computed: under a prior shift (the laws of the
  features given the class unchanged), a model calibrated at P becomes calibrated on the file, so every metric then
  measures the calibration the model has at prevalence P (averaged over this file's case mix).  This is calzone's
  ``apply_prevalence_adjustment(P, y, p)`` (it searches P by minimum cross-entropy; here the user states it).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy import special, stats

from ..base.predictions import InputError, PredictionSet
from ..base.report import DESCRIPTIVE
from ..inference.classification_clinical import (
    CLINICAL_DESCRIPTIVE,
    CLINICAL_TESTED,
    ClinicalColumn,
    clinical_values,
    clinical_values_columns,
    clipped_note,
)
from ..metrics.classification import ClassificationRows
from ..metrics.classification_clinical import adjust_prevalence
from ..metrics.classification_clinical_fit import DEFAULT_EPS

__all__ = ["clinical_table_values", "apply_prevalence", "PER_CLASS_TABLE"]

#: The diagram key of the per-class table (K > 2).
PER_CLASS_TABLE = "clinical_per_class"
_KEYS = (*CLINICAL_TESTED, *CLINICAL_DESCRIPTIVE)


def clinical_table_values(rows: ClassificationRows, *, level: float = 0.95
                          ) -> tuple[dict[str, float], list[str], pd.DataFrame | None, dict[str, str]]:
    """Point values of the clinical set for the metric table, the notes, the per-class table (K > 2) and the kinds
    of rows that get no inference (the K > 2 means).

    Parameters
    ----------
    rows : ClassificationRows
        Full-probability rows (top-label-only rows get nothing).
    level : float
        Two-sided level of the per-class Wald intervals.

    Returns
    -------
    values : dict of str to float
        Metric key → value (binary: positive class; K > 2: the mean over classes).
    notes : list of str
        Clipped probabilities, one class, separation (per class for K > 2).
    per_class : DataFrame or None
        K > 2: one row per class and statistic.
    kinds : dict of str to str
        Kinds of the K > 2 rows (descriptive).

    References
    ----------
    Van Calster, B., McLernon, D. J., van Smeden, M., Wynants, L. & Steyerberg, E. W. (2019). Calibration: the
    Achilles heel of predictive analytics. BMC Medicine 17, 230.
    """
    if rows.top_label_only or rows.probs is None:
        return {}, [], None, {}
    labels = np.asarray(rows.labels)
    if rows.k == 2:
        values, notes = clinical_values(rows.probs[:, 1], (labels == 1).astype(float))
        return values, notes, None, {}
    z = float(special.ndtri(0.5 + level / 2.0))
    records, notes, per, clipped = [], [], {key: [] for key in _KEYS}, {}
    probs = np.asarray(rows.probs, dtype=float)
    columns = clinical_values_columns(probs, None, labels=labels)
    for k, col in enumerate(columns):  # one-vs-rest events, fitted together (batched Newton over the classes)
        clipped[k] = col.cox.n_clipped
        notes.extend(f"class {k}: {text}" for text in col.notes if "clipped" not in text)
        for key in _KEYS:
            per[key].append(col.values[key])
        records.extend(_class_records(k, col, z))
    if any(clipped.values()):  # one note for all classes
        counts = ", ".join(f"class {k}: {c}" for k, c in clipped.items() if c)
        notes.insert(0, "one-vs-rest: " + clipped_note(sum(clipped.values()), DEFAULT_EPS, f" ({counts})"))
    values = {key: float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")
              for key, v in ((key, np.asarray(per[key], dtype=float)) for key in _KEYS)}
    table = pd.DataFrame.from_records(records, columns=["class", "metric", "value", "ci_low", "ci_high", "p_value",
                                                        "test"])
    table.attrs["semantics"] = ("clinical calibration set per class (one-vs-rest: p_k against 1[y = k]); Wald "
                                f"{level:.0%} intervals of the logistic fits (none for Z and HL: test statistics); "
                                "p-values unadjusted and descriptive "
                                "(not in the verdict's families)")
    return values, notes, table, dict.fromkeys(_KEYS, DESCRIPTIVE)


def _class_records(k: int, col: ClinicalColumn, z: float) -> list[dict]:
    """The per-class rows: Wald intervals of the fits and unadjusted p-values where the statistic has them (Z and
    HL: a p-value, no interval — test statistics with no N-free population value)."""
    nan = float("nan")
    vals = col.values
    out = {key: (nan, nan, nan, "") for key in _KEYS}
    if np.isfinite(vals["ici"]):
        fit1, fit2 = col.citl, col.cox
        a, sa = fit1.intercept, fit1.intercept_se
        out["calibration_in_the_large"] = (a - z * sa, a + z * sa, float(2 * special.ndtr(-abs(a / sa))),
                                           "Wald z of a = 0")
        b, sb = fit2.slope, fit2.slope_se
        out["calibration_slope"] = (b - z * sb, b + z * sb, float(2 * special.ndtr(-abs((b - 1) / sb))),
                                    "Wald z of b = 1")
        c, sc = fit2.intercept, fit2.intercept_se
        out["cox_intercept"] = (c - z * sc, c + z * sc, nan, "")
        out["spiegelhalter_z"] = (nan, nan, float(2 * special.ndtr(-abs(vals["spiegelhalter_z"]))), "normal")
        g = col.hl_groups
        out["hosmer_lemeshow"] = (nan, nan, float(stats.chi2.sf(vals["hosmer_lemeshow"], g)), f"χ² with {g} df")
    return [{"class": k, "metric": key, "value": vals[key], "ci_low": lo, "ci_high": hi, "p_value": p, "test": t}
            for key, (lo, hi, p, t) in out.items()]


def apply_prevalence(pset: PredictionSet, prevalence: float | None) -> tuple[PredictionSet, str | None]:
    """The prediction set with its probabilities re-expressed for the prevalence option (module docstring).

    p′ = adjust_prevalence(p, from_prevalence=P, to_prevalence=π̂), π̂ the file's share of positives; logits shifted
    by logit π̂ − logit P on the positive class.

    Parameters
    ----------
    pset : PredictionSet
        A binary classification set with full probabilities.
    prevalence : float or None
        P, strictly between 0 and 1 (None: unchanged).

    Returns
    -------
    PredictionSet
        The adjusted set (the same object when ``prevalence`` is None).
    str or None
        The note saying what was done.

    Raises
    ------
    InputError
        A prevalence out of (0, 1), a multi-class or top-label-only file, or a file with one class only.

    References
    ----------
    Saerens, M., Latinne, P. & Decaestecker, C. (2002). Adjusting the outputs of a classifier to new a priori
    probabilities: a simple procedure. Neural Computation 14(1), 21–41.
    """
    if prevalence is None:
        return pset, None
    try:
        p_target = float(prevalence)
    except (TypeError, ValueError):
        p_target = float("nan")
    if not 0.0 < p_target < 1.0:
        raise InputError(f"the prevalence must be a share strictly between 0 and 1 (e.g. 0.05 for 5 %), got "
                         f"{prevalence!r}", hint="give --prevalence (prevalence=) a number between 0 and 1",
                         app_hint="give the prevalence as a number between 0 and 1")
    if pset.task != "classification" or pset.top_label_only or pset.probs is None or pset.probs.shape[1] != 2:
        raise InputError("the prevalence adjustment needs a binary file with the probability of the positive class; "
                         "this file is not one", hint="leave out --prevalence (prevalence=None) for this file",
                         app_hint="leave the prevalence empty for this file")
    labels = np.asarray(pset.labels)
    pi_hat = float(np.mean(labels == 1)) if labels.size else float("nan")
    if not 0.0 < pi_hat < 1.0:
        raise InputError("the prevalence adjustment re-expresses the probabilities at the file's share of positives, "
                         f"but the label column has {'no' if pi_hat == 0 else 'only'} positive labels (class 1)",
                         columns=["label"], hint="leave out --prevalence (prevalence=None) for this file",
                         app_hint="leave the prevalence empty for this file")
    probs = adjust_prevalence(pset.probs, from_prevalence=p_target, to_prevalence=pi_hat)
    logits = None
    if pset.logits is not None:
        shift = float(special.logit(pi_hat) - special.logit(p_target))
        logits = np.array(pset.logits, dtype=float, copy=True)
        logits[:, 1] += shift
    adjusted = dataclasses.replace(pset, probs=probs, logits=logits)
    note = (f"prevalence adjustment: probabilities read as made for prevalence {p_target:g} and re-expressed at this "
            f"file's prevalence {pi_hat:.4g} by Bayes' rule on the odds (odds × [{pi_hat:.4g}/(1 − {pi_hat:.4g})] / "
            f"[{p_target:g}/(1 − {p_target:g})], Saerens et al. 2002) before every metric: the metrics measure the "
            f"calibration the model has at prevalence {p_target:g}, over this file's case mix")
    return adjusted, note
