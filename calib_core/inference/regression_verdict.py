"""Regression families, kinds and words: which statistic is what, which ones decide the headline, and the
verdict in words.

:data:`PRIMARY` (PIT uniformity, mean z, std z, 90% coverage, ENCE; :func:`primary_family` adapts the coverage
member to a quantile set's stated levels) is decided by Holm at family-wise ``alpha``, every other calibration
statistic gets a Benjamini–Hochberg flag (:func:`calib_core.inference.result.adjust_families`); :func:`decide` turns
the per-metric records into the :class:`~calib_core.inference.result.InferenceResult` with its direction and
sentence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import significance as sig
from ..base.regression import PredictiveDistribution, QuantileSet, SampleSet
from ..base.report import CALIBRATION_STATISTIC, DESCRIPTIVE, PROPER_SCORE
from ..metrics.regression import DEFAULT_COVERAGES
from .result import CALIBRATED, MISCALIBRATED, InferenceResult, adjust_families

__all__ = ["PRIMARY", "primary_family", "primary_family_of_levels", "given_coverage_key", "metric_kind",
           "empty_record", "decide", "PRIMARY_ENSEMBLE"]


#: The pre-declared primary family (Holm at family-wise 5%): one headline verdict per (model, group).  For quantile
#: sets whose given levels do not reach the 90% interval's ends the coverage member is the widest central interval
#: actually given (:func:`primary_family`).
PRIMARY = ("max_calibration_deviation", "z_mean", "z_std", "coverage_90", "ence")


#: The primary family of an ensemble (SampleSet), judged as an ensemble: the rank histogram (shape), the share of
#: targets below the median (location), the coverage of the member range (spread, expectation (M − 1)/(M + 1)),
#: std z and ENCE (these two only when the spread is not degenerate: they have no p-value otherwise and drop out).
PRIMARY_ENSEMBLE = ("rank_chi2", "below_median", "range_coverage", "z_std", "ence")


_PROPER = ("nll", "crps")


_DESCRIPTIVE = ("rmse", "mae", "sharpness", "cv", "spearman_sigma_abs_error")


def primary_family(dist: PredictiveDistribution | None, coverages=DEFAULT_COVERAGES) -> tuple[str, ...]:
    """The primary family for predictions ``dist``: :data:`PRIMARY`, except that for a :class:`QuantileSet`
    whose given levels τ do not contain both ends 0.5 ± 0.45 of the 90% interval, ``coverage_90`` is replaced
    by the coverage of the widest central interval in ``coverages`` whose ends are both given levels (9 levels
    0.1 … 0.9: ``coverage_80``, the interval [q₀.₁, q₀.₉]).  Its count is an exact binomial test of what the
    forecaster stated; the 90% interval of such a set lies in the exponential tails the tool extrapolates.  With
    no central interval given at all, :data:`PRIMARY` is kept (and the coverage row's note says so).  An ensemble
    (:class:`SampleSet`) is judged as an ensemble, :data:`PRIMARY_ENSEMBLE`: rank histogram, share below the
    median, member-range coverage, std z and ENCE (Hamill 2001; Czado, Gneiting & Held 2009).

    Parameters
    ----------
    dist : PredictiveDistribution or None
        The predictions.
    coverages : sequence of float, default DEFAULT_COVERAGES
        The central-interval levels the metric table reports.

    Returns
    -------
    tuple of str
        The metric keys of the primary family.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [3] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [4] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly
       Weather Review* 129(3), 550–560.
    .. [5] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    """
    if isinstance(dist, SampleSet):
        return PRIMARY_ENSEMBLE
    if not isinstance(dist, QuantileSet):
        return PRIMARY
    return primary_family_of_levels(dist.levels, coverages)


def primary_family_of_levels(levels: np.ndarray, coverages=DEFAULT_COVERAGES) -> tuple[str, ...]:
    """:func:`primary_family` of a quantile set from its stated levels τ alone (what a mergeable summary keeps):
    ``coverage_90`` replaced by the widest central interval of ``coverages`` whose ends are both in τ.

    Parameters
    ----------
    levels : ndarray of shape (Q,)
        The quantile set's stated levels τ.
    coverages : sequence of float, default DEFAULT_COVERAGES
        The central-interval levels the metric table reports.

    Returns
    -------
    tuple of str
        The metric keys of the primary family.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    """
    key = given_coverage_key(levels, coverages)
    if key is None or key == "coverage_90":
        return PRIMARY
    return tuple(key if k == "coverage_90" else k for k in PRIMARY)


def given_coverage_key(tau: np.ndarray, coverages) -> str | None:
    """Key of the widest coverage c (of ``coverages``) whose interval ends 0.5 ± c/2 are both in ``tau``.

    Parameters
    ----------
    tau : ndarray of shape (Q,)
        Stated quantile levels.
    coverages : sequence of float
        Candidate central-interval levels c.

    Returns
    -------
    str or None
        ``"coverage_<100c>"`` of the widest such c, or None when no central interval is given.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    """
    tau = np.asarray(tau, dtype=float)
    given = [c for c in coverages
             if np.min(np.abs(tau - (0.5 - c / 2))) < 1e-9 and np.min(np.abs(tau - (0.5 + c / 2))) < 1e-9]
    return f"coverage_{100 * max(given):g}" if given else None


def metric_kind(name: str) -> str:
    """"calibration statistic", "proper score" or "descriptive" for a regression metric key, by its name (the
    same as the metric registry's ``kind`` for every registry metric).

    Proper scores (NLL, CRPS, interval scores) get a reference under perfect calibration and no test; descriptive
    metrics (RMSE, MAE, sharpness, Cv, widths, Spearman's ρ) an interval only; everything else is tested.

    Parameters
    ----------
    name : str
        A metric key (e.g. ``"ence"``, ``"interval_score_90"``).

    Returns
    -------
    str
        One of :data:`calib_core.base.report.KINDS`.

    References
    ----------
    .. [1] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.
    """
    if name in _PROPER or name.startswith("interval_score_"):
        return PROPER_SCORE
    if name in _DESCRIPTIVE or name.startswith("width_"):
        return DESCRIPTIVE
    return CALIBRATION_STATISTIC


def empty_record(name: str, value: float) -> dict[str, Any]:
    """The record of one statistic before any test or interval: its key, kind and value, every other column of
    :data:`~calib_core.inference.result.RESULT_COLUMNS` empty.

    Parameters
    ----------
    name : str
        Metric key.
    value : float
        Its point value.

    Returns
    -------
    dict
        ``metric`` and the result columns (NaN, "" or False).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    """
    return dict(metric=name, kind=metric_kind(name), value=value, debiased=np.nan, ci_low=np.nan, ci_high=np.nan,
                interval="", perfect=np.nan, perfect_low=np.nan, perfect_high=np.nan, perfect_se=np.nan,
                p_value=np.nan, p_mc_se=np.nan, test="", family="", adjusted_p=np.nan, flag=False, note="")


_NICE = {
    "max_calibration_deviation": "PIT uniformity (KS)",
    "z_mean": "mean z",
    "z_std": "std z",
    "ence": "ENCE",
}


def _nice(name: str) -> str:
    if name.startswith("coverage_"):
        return f"{name.split('_', 1)[1]}% coverage"
    return _NICE.get(name, name)


def _direction_of(name: str, row: dict[str, Any]) -> str:
    v, ref = row["value"], row["perfect"]
    if name == "z_mean":
        return "biased low" if v > ref else "biased high"
    if name == "z_std":
        return "over-confident" if v > ref else "under-confident"
    if name.startswith("coverage_") or name == "range_coverage":
        return "over-confident" if v < ref else "under-confident"
    return ""


def decide(rec: dict[str, dict[str, Any]], n: int, layout: str, alpha: float,
           options: dict[str, Any]) -> InferenceResult:
    """The result of one regression inference: Holm over the primary family, Benjamini–Hochberg over the secondary,
    the verdict, its direction and its sentence.

    Any primary rejection makes the verdict "miscalibrated"; its direction comes from the rejected statistics'
    signs (std z above its reference or coverage below nominal: over-confident, the reverse: under-confident;
    mean z > 0: biased low, < 0: biased high; both spreads: "mis-shaped"); when only PIT uniformity and/or ENCE
    reject, the spread is named from the point estimates of std z and the coverage when they agree, else
    "mis-shaped".  The sentence leads with the rejected statistic of smallest p-value.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (``family`` set; adjusted p-values and flags are written into them).
    n : int
        Rows.
    layout : str
        The predictive layout ("gaussian", "quantile", "sample").
    alpha : float
        Family-wise level (Holm) and false-discovery rate (Benjamini–Hochberg).
    options : dict
        The options the inference ran with.

    Returns
    -------
    InferenceResult
        The table and the headline.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [2] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1), 289–300.
    .. [3] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    """
    names = list(rec)
    prim = [k for k in names if rec[k]["family"] == "primary" and np.isfinite(rec[k]["p_value"])]
    sec = [k for k in names if rec[k]["family"] == "secondary" and np.isfinite(rec[k]["p_value"])]
    adjusted = adjust_families({k: rec[k]["p_value"] for k in prim}, {k: rec[k]["p_value"] for k in sec}, alpha)
    for k, (a, flag) in adjusted.items():
        rec[k].update(adjusted_p=a, flag=flag)
    rejected = [k for k in prim if rec[k]["flag"]]
    if not rejected:
        verdict, direction = CALIBRATED, ""
        sentence = (f"No evidence of miscalibration at this N ({len(prim)} tests, family-wise "
                    f"{100 * alpha:g}%).")
    else:
        verdict = MISCALIBRATED
        dirs = []
        for k in rejected:
            d = _direction_of(k, rec[k])
            if d and d not in dirs:
                dirs.append(d)
        if "over-confident" in dirs and "under-confident" in dirs:
            dirs = [d for d in dirs if d not in ("over-confident", "under-confident")]
            dirs.insert(0, "mis-shaped")
        if not dirs:
            # only KS and/or ENCE rejected: name the spread from the point estimates of std z and the 90%
            # coverage when they agree, else "mis-shaped"
            zs = rec.get("z_std")
            cov_key = next((k for k in prim if k.startswith("coverage_")), "coverage_90")
            cv = rec.get(cov_key)
            spread = ""
            if zs is not None and cv is not None and np.isfinite(zs["perfect"]) and np.isfinite(cv["perfect"]):
                a, b = _direction_of("z_std", zs), _direction_of("coverage_90", cv)
                spread = a if a == b else ""
            dirs.append(spread or "mis-shaped")
        direction = " and ".join(dirs)
        order = {"z_std": 1, "z_mean": 2, "max_calibration_deviation": 3, "ence": 4}
        lead = min(rejected, key=lambda k: (rec[k]["p_value"], 0 if k.startswith("coverage_") else order.get(k, 9)))
        sentence = f"{direction[:1].upper()}{direction[1:]}: {_evidence(lead, rec[lead])}"
        others = [_nice(k) for k in rejected if k != lead]
        if others:
            sentence += f"; also rejected: {', '.join(others)}"
        sentence += f" ({len(prim)} tests, Holm at family-wise {100 * alpha:g}%)."
    n_flags = sum(1 for k in sec if rec[k]["flag"])
    table = InferenceResult.table_from([rec[k] for k in names])
    return InferenceResult(
        table=table, verdict=verdict, direction=direction, sentence=sentence, n=n, layout=layout, alpha=alpha,
        n_primary=len(prim), n_secondary=len(sec), n_flags=n_flags,
        expected_chance_flags=sig.expected_chance_flags(len(sec), alpha), options=options,
    )


def _signed(x: float) -> str:
    return "0" if abs(x) < 5e-4 else f"{x:+.3g}"


def _evidence(name: str, row: dict[str, Any]) -> str:
    v, ref, p = row["value"], row["perfect"], sig.format_p(row["p_value"])
    if name.startswith("coverage_"):
        tag = name.split("_", 1)[1]
        return f"the {tag}% intervals cover {100 * v:.1f}% of targets (expected {100 * ref:.1f}%, {p})"
    if name == "z_std":
        return f"the standardised errors have standard deviation {v:.3g} (expected {ref:.3g}, {p})"
    if name == "z_mean":
        return f"the mean standardised error is {v:+.3g} (expected {_signed(ref)}, {p})"
    if name == "max_calibration_deviation":
        return f"the PIT values are not uniform (KS distance {v:.3g}, expected about {ref:.3g}, {p})"
    if name == "ence":
        return f"ENCE {v:.3g} is above its value under perfect calibration ({ref:.3g}, {p})"
    return f"{name} = {v:.3g} ({p})"
