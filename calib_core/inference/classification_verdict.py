"""Classification families, table and headline: which statistic is what, the rows of the result table and the
verdict in words.

The primary family (:data:`PRIMARY_FAMILY`: ECE and the top-bin gap) is decided by Holm at family-wise ``alpha`` and
gives the headline; the :data:`SECONDARY` statistics get Benjamini–Hochberg flags
(:func:`calib_core.inference.result.adjust_families`).  :func:`result_records` writes one row per statistic in the
Report's columns with a note for the reader, :func:`headline` the verdict, its direction and its sentence.
"""

from __future__ import annotations

import numpy as np

from ..base.report import CALIBRATED, CALIBRATION_STATISTIC, DESCRIPTIVE, MISCALIBRATED, PROPER_SCORE
from ..base.significance import format_p
from .classification_cells import percentile_bounds
from .classification_clinical import CLINICAL_KINDS, CLINICAL_REFERENCE, CLINICAL_TESTED, clinical_note
from .result import interval_test_note

__all__ = ["PRIMARY_FAMILY", "SECONDARY", "metric_kind", "result_records", "headline"]


#: The pre-declared primary family (Holm at family-wise alpha → the headline verdict).
PRIMARY_FAMILY = ("ece", "top_bin_gap")


#: The secondary statistics (Benjamini–Hochberg at false-discovery rate alpha), in table order.
SECONDARY = ("mce", "confidence_gap", "classwise_ece", "ece_positive", "mce_positive", "smooth_ece",
             "smooth_ece_positive", "calibration_ratio", "calibration_ratio_positive", "tce", "tce_positive",
             *CLINICAL_TESTED)


_KIND = {
    "ece": CALIBRATION_STATISTIC,
    "top_bin_gap": CALIBRATION_STATISTIC,
    "mce": CALIBRATION_STATISTIC,
    "confidence_gap": CALIBRATION_STATISTIC,
    "classwise_ece": CALIBRATION_STATISTIC,
    "ece_positive": CALIBRATION_STATISTIC,
    "mce_positive": CALIBRATION_STATISTIC,
    "smooth_ece": CALIBRATION_STATISTIC,
    "smooth_ece_positive": CALIBRATION_STATISTIC,
    "calibration_ratio": CALIBRATION_STATISTIC,
    "calibration_ratio_positive": CALIBRATION_STATISTIC,
    "tce": CALIBRATION_STATISTIC,
    "tce_positive": CALIBRATION_STATISTIC,
    "nll": PROPER_SCORE,
    "brier": PROPER_SCORE,
    "accuracy": DESCRIPTIVE,
    "mean_confidence": DESCRIPTIVE,
    **CLINICAL_KINDS,
}


def metric_kind(name: str) -> str:
    """What a classification statistic of the inference table is: a calibration statistic (tested), a proper score
    (NLL, Brier: a reference, no test) or descriptive (accuracy, mean confidence).

    Parameters
    ----------
    name : str
        A statistic's key (a registry metric or the inference layer's own ``top_bin_gap``, ``confidence_gap``).

    Returns
    -------
    str
        One of :data:`calib_core.base.report.KINDS` (the metric registry's word for registry metrics).

    References
    ----------
    .. [1] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.
    """
    return _KIND[name]


def result_records(order, *, primary, secondary, obs, deb, null, ref, pvals, adjusted, ci, smoothed, level,
                   alpha) -> list[dict]:
    """One table record per statistic (:data:`~calib_core.inference.result.RESULT_COLUMNS`), in ``order``.

    ``perfect`` is the mean of the statistic's null draws (its central ``level`` range in ``perfect_low``,
    ``perfect_high``), the exact expectation of a proper score
    (:func:`~calib_core.inference.classification_nulls.score_references`) or, for accuracy, the mean confidence;
    ``note`` says what a reader should know about the row (e.g. a plug-in above its interval).

    Parameters
    ----------
    order : sequence of str
        The statistics, in table order.
    primary, secondary : sequence of str
        The tested statistics of each family.
    obs, deb : dict of str to float
        Plug-in values and debiased estimates.
    null : dict of str to ndarray
        Null draws per statistic.
    ref : dict of str to (float, float, float)
        Exact references (expectation, low, high) of the proper scores.
    pvals : dict of str to (float, float, str)
        (p-value, Monte-Carlo s.e., test) per tested statistic.
    adjusted : dict of str to (float, bool)
        (adjusted p-value, flag) per tested statistic (:func:`~calib_core.inference.result.adjust_families`).
    ci : dict of str to (float, float, str)
        (low, high, how) per statistic with an interval.
    smoothed : dict of str to dict
        The smooth ECE results (their notes).
    level : float
        Two-sided level of the null ranges.
    alpha : float
        Level of TCE's per-bin tests (in its note).

    Returns
    -------
    list of dict
        One record per statistic, keys ``metric`` and :data:`~calib_core.inference.result.RESULT_COLUMNS`.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.
    .. [2] Kumar, A., Liang, P. & Ma, T. (2019). Verified uncertainty calibration. *NeurIPS*.
    """
    records = []
    for name in order:
        kind = _KIND[name]
        family = "primary" if name in primary else "secondary" if name in secondary else ""
        lo, hi, how = ci.get(name, (np.nan, np.nan, ""))
        if name in null and np.size(null[name]):  # no draws (e.g. every probability 0 or 1): no null range
            nd = null[name]
            nm = float(np.nanmean(nd)) if np.isfinite(nd).any() else np.nan  # all-NaN draws: no mean, no warning
            nlo, nhi = percentile_bounds(nd, level)
        elif name in ref:
            nm, nlo, nhi = ref[name]
        elif name == "accuracy":
            nm, nlo, nhi = obs["mean_confidence"], np.nan, np.nan
        else:
            nm = nlo = nhi = np.nan
        p, se, pm = pvals.get(name, (np.nan, np.nan, ""))
        adj, flag = adjusted.get(name, (np.nan, False))
        v = obs.get(name, np.nan)
        d = deb.get(name, np.nan)
        rec = {
            "metric": name, "value": v, "ci_low": lo, "ci_high": hi, "perfect": nm, "perfect_low": nlo,
            "perfect_high": nhi, "perfect_se": np.nan, "kind": kind, "family": family,
            "debiased": max(d, 0.0) if np.isfinite(d) else d, "interval": how, "p_value": p, "p_mc_se": se,
            "test": pm, "adjusted_p": adj, "flag": flag, "note": _note(name, kind, v, hi, nm, deb, smoothed, alpha),
        }
        extra = []
        if np.isfinite(d) and d < 0:
            extra.append(f"debiased estimate {d:.3g} clipped at 0: the plug-in is no larger than the noise a perfectly "
                         f"calibrated model shows ({nm:.3g} on average at this N)")
        if not np.isfinite(p) and pm.startswith("not tested"):  # no valid test here: say why, never a wrong p
            extra.append(pm)
        if kind == CALIBRATION_STATISTIC:  # interval and test of the same statistic agree, or say why not
            reference = CLINICAL_REFERENCE.get(name, 1.0 if name.startswith("calibration_ratio") else 0.0)
            extra.append(interval_test_note(rec, level, reference))
        rec["note"] = "; ".join(x for x in (rec["note"], *extra) if x)
        records.append(rec)
    return records


def _note(name: str, kind: str, value: float, ci_high: float, perfect: float, deb: dict, smoothed: dict,
          alpha: float) -> str:
    """What a reader should know about one row of the table."""
    if name in deb and np.isfinite(ci_high) and value > ci_high:
        return (
            f"plug-in above its interval: the plug-in is biased upward by noise (a perfectly calibrated model "
            f"scores {perfect:.3g} on average at this N); the interval is for the population value, around the "
            f"debiased estimate {deb[name]:.3g}"
        )
    if name in smoothed:
        return smoothed[name]["note"]
    if clinical_note(name):
        return clinical_note(name)
    if name in ("tce", "tce_positive"):
        return (
            "percent of rows whose bin's exact binomial test rejects their prediction (10 equal-mass bins, "
            f"level {alpha:g}); no interval: TCE has no N-free population value (it tends to 100 % as N grows "
            "for any spread of predictions), compare it with the perfectly calibrated value at this N"
        )
    if name.startswith("calibration_ratio"):
        return "Σ predicted / Σ observed events: > 1 over-predicts; its test is the overall gap's"
    if name in ("mce", "mce_positive"):
        return (
            "interval for the largest |accuracy − confidence| over the bins these rows fill (simultaneous exact "
            "intervals per bin): a bin of a few rows makes it wide, and bins no row falls in are not covered"
        )
    if name in ("classwise_ece", "ece_positive"):
        return (
            "interval: plug-in ± the summed per-cell error (triangle inequality; conservative): with a few rows "
            "per cell no debiased estimate is reliable, so the interval is wide rather than wrong"
        )
    if name == "accuracy":
        return "descriptive (its value under perfect calibration is the mean confidence, shown as perfect)"
    if kind == PROPER_SCORE:
        return "proper score: perfect is its exact expectation under perfect calibration (a reference, not a test)"
    return ""


def headline(obs, pvals, primary, adjusted, alpha, n_top, top_confidence) -> tuple[str, str, str]:
    """The headline: Holm's decision over the primary family, its direction and its sentence.

    The direction is the sign of accuracy − mean confidence (over-confident when accuracy is lower) when the
    overall gap is itself significant at ``alpha``, else the sign of a rejecting top-bin gap, else "" (the
    sentence then says "no single direction").

    Parameters
    ----------
    obs : dict of str to float
        Plug-in values (``accuracy``, ``mean_confidence``, ``ece``, ``top_bin_gap``).
    pvals : dict of str to (float, float, str)
        (p-value, Monte-Carlo s.e., test) per tested statistic.
    primary : sequence of str
        The primary family's tested statistics.
    adjusted : dict of str to (float, bool)
        (Holm-adjusted p-value, rejected) per primary statistic.
    alpha : float
        Family-wise level.
    n_top : float
        Rows of the top region.
    top_confidence : float
        Mean confidence of the top region.

    Returns
    -------
    (str, str, str)
        Verdict ("calibrated" or "miscalibrated"), direction and sentence.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    """
    acc, mconf = obs["accuracy"], obs["mean_confidence"]
    rejected = [m for m in primary if adjusted[m][1]]
    verdict = MISCALIBRATED if rejected else CALIBRATED
    direction = ""
    if rejected:
        if pvals["confidence_gap"][0] < alpha:
            direction = "over-confident" if acc < mconf else "under-confident"
        elif "top_bin_gap" in rejected:
            direction = "over-confident" if obs["top_bin_gap"] > 0 else "under-confident"
    sentence = _sentence(verdict, direction, acc, mconf, obs, pvals, rejected, len(primary), alpha, n_top,
                         top_confidence)
    return verdict, direction, sentence


def _fmt_p(p: float, method: str) -> str:
    text = format_p(p)
    return text.replace("p =", "p ≤") if method.startswith("Bernstein") else text


def _sentence(verdict, direction, acc, mconf, obs, pvals, rejected, n_primary, alpha, n_top, top_conf) -> str:
    fam = f"{n_primary} test{'s' if n_primary != 1 else ''}, family-wise {alpha:.0%}"
    if verdict != MISCALIBRATED:
        return f"No evidence of miscalibration at this N ({fam})."
    lead = {"over-confident": "Over-confident", "under-confident": "Under-confident"}.get(direction, "Miscalibrated")
    main = "ece" if "ece" in rejected else rejected[0]
    p, se, how = pvals[main]
    if main == "ece":
        what = f"ECE {obs['ece']:.3g}, {_fmt_p(p, how)}"
    else:
        acc_top = top_conf - obs["top_bin_gap"]
        what = f"top-bin confidence {top_conf:.3g} vs accuracy {acc_top:.3g} over {int(n_top)} rows, {_fmt_p(p, how)}"
    tail = "" if direction else " (no single direction: over- and under-confident in different bins)"
    return f"{lead}: accuracy {acc:.3g} vs mean confidence {mconf:.3g} ({what}; {fam}){tail}."
