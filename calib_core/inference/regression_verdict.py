"""Regression families, kinds and words: which statistic is what, which ones decide the headline, and the
verdict in words.

:data:`PRIMARY` (PIT uniformity, mean z, std z, 90% coverage, ENCE; a quantile set's family, of its stated levels
only, is :func:`primary_family`) is decided by Holm at family-wise ``alpha``, every other calibration
statistic gets a Benjamini–Hochberg flag (:func:`calib_core.inference.result.adjust_families`); :func:`decide` turns
the per-metric records into the :class:`~calib_core.inference.result.InferenceResult` with its direction and
sentence.  The verdict is Holm's; each direction word is named only by a member that carries one (location: mean z,
the share below the median; spread: std z, coverage, the ensemble-range coverage) and passes its own Bonferroni
bound α/max(m, 5), so a named direction is wrong in at most α/5 = 1% of the detections (measured with unbiased
Gaussian forecasts whose σ alone is wrong, 2,000 data sets of N = 3,000 per case: a bias named in 0.6–1.35% of the
detections; with Holm's step-down, as before, 4.3–5.2%).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import significance as sig
from ..base.regression import PredictiveDistribution, QuantileSet, SampleSet
from ..base.report import CALIBRATION_STATISTIC, DESCRIPTIVE, PROPER_SCORE
from ..metrics.regression import DEFAULT_COVERAGES
from .result import CALIBRATED, MISCALIBRATED, InferenceResult, adjust_families

__all__ = ["PRIMARY", "QUANTILE_PRIMARY", "PRIMARY_ENSEMBLE", "primary_family", "primary_family_of_levels",
           "given_coverage_key", "metric_kind", "empty_record", "decide", "named_directions",
           "direction_bound", "DIRECTION_MIN_MEMBERS"]


#: The pre-declared primary family (Holm at family-wise 5%): one headline verdict per (model, group).  Quantile sets
#: (of their stated levels only) and ensembles have their own (:func:`primary_family`).  Directions: mean z names a
#: location, std z and the coverage a spread, PIT uniformity and ENCE none (each only past its Bonferroni bound,
#: :func:`decide`); ``below_median`` (the share of targets below the forecast median, valid whatever σ) is secondary
#: for Gaussians.
PRIMARY = ("max_calibration_deviation", "z_mean", "z_std", "coverage_90", "ence")


#: The primary family of an ensemble (SampleSet), judged as an ensemble: the rank histogram (shape), the share of
#: targets below the median (location), the coverage of the member range (spread, expectation (M − 1)/(M + 1)),
#: std z and ENCE (these two only when the spread is not degenerate: they have no p-value otherwise and drop out).
PRIMARY_ENSEMBLE = ("rank_chi2", "below_median", "range_coverage", "z_std", "ence")


_PROPER = ("nll", "crps", "wis")


_DESCRIPTIVE = ("rmse", "mae", "sharpness", "cv", "spearman_sigma_abs_error", "wis_dispersion", "wis_overprediction",
                "wis_underprediction")


def primary_family(dist: PredictiveDistribution | None, coverages=DEFAULT_COVERAGES) -> tuple[str, ...]:
    """The primary family for predictions ``dist``: :data:`PRIMARY`, except for a :class:`QuantileSet`, which is
    judged only at what it states (:func:`primary_family_of_levels`): the PIT histogram over the cells between the
    stated levels (``pit_chi2``), the coverage of every stated level (``max_level_deviation``), the share of
    targets below the median (``below_median``, location) and the coverage of the widest central interval whose
    ends are both stated (spread; 9 levels 0.1 … 0.9: ``coverage_80``).  Everything that needs the law the tool
    interpolates between the stated quantiles is descriptive for quantile sets.  An ensemble (:class:`SampleSet`) is
    judged as an ensemble, :data:`PRIMARY_ENSEMBLE`: rank histogram, share below the median, member-range coverage,
    std z and ENCE (Hamill 2001; Czado, Gneiting & Held 2009).

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
    .. [4] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    .. [5] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly
       Weather Review* 129(3), 550–560.
    .. [6] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    """
    if isinstance(dist, SampleSet):
        return PRIMARY_ENSEMBLE
    if not isinstance(dist, QuantileSet):
        return PRIMARY
    return primary_family_of_levels(dist.levels, coverages)


#: The primary family of a quantile set before its coverage member (:func:`primary_family_of_levels`)
QUANTILE_PRIMARY = ("pit_chi2", "max_level_deviation", "below_median")


def primary_family_of_levels(levels: np.ndarray, coverages=DEFAULT_COVERAGES) -> tuple[str, ...]:
    """:func:`primary_family` of a quantile set from its stated levels τ alone (what a mergeable summary keeps):
    ``pit_chi2``, ``max_level_deviation``, ``below_median`` and the coverage of the widest central interval of
    ``coverages`` whose ends are both in τ (none when no central interval is stated).

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
    .. [2] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    """
    key = given_coverage_key(levels, coverages)
    return QUANTILE_PRIMARY + ((key,) if key is not None else ())


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
    "below_median": "share below the median",
    "pit_chi2": "PIT histogram over the stated levels (χ²)",
    "max_level_deviation": "coverage of the stated levels",
    "rank_chi2": "rank histogram (χ²)",
    "range_coverage": "ensemble-range coverage",
}

#: Members that name a location ("biased low / high"), a spread ("over- / under-confident"); every other member
#: (PIT uniformity, the χ² histograms, the stated levels' coverage, ENCE) names none by itself
LOCATION_MEMBERS = ("z_mean", "below_median")
SPREAD_MEMBERS = ("z_std", "range_coverage")  # and every coverage_<c>


def _nice(name: str) -> str:
    """A statistic's name in a sentence ("90% coverage", "mean z", …)."""
    if name.startswith("coverage_"):
        return f"{name.split('_', 1)[1]}% coverage"
    return _NICE.get(name, name)


def _direction_of(name: str, row: dict[str, Any]) -> str:
    """The direction a location or spread member's point value names against its reference ("" for the others).

    mean z above its reference: the targets lie above the forecasts ("biased low"); the share below the median
    above ½: the forecasts lie above the targets ("biased high"); std z above its reference or a coverage below its
    own: "over-confident", the reverse "under-confident".
    """
    v, ref = row["value"], row["perfect"]
    if not (np.isfinite(v) and np.isfinite(ref)) or v == ref:
        return ""
    if name == "z_mean":
        return "biased low" if v > ref else "biased high"
    if name == "below_median":
        return "biased high" if v > ref else "biased low"
    if name == "z_std":
        return "over-confident" if v > ref else "under-confident"
    if name.startswith("coverage_") or name == "range_coverage":
        return "over-confident" if v < ref else "under-confident"
    return ""


#: A direction's Bonferroni bound counts the family as at least this many members (the Gaussian family's size), so a
#: named direction is a level-α/5 claim (1% at α = 5%) whatever the size of a layout's family.
DIRECTION_MIN_MEMBERS = 5


def direction_bound(alpha: float, m: int) -> float:
    """The level at which a primary member may name a direction: α / max(m, 5).

    Bonferroni over the family of m members, counted as at least :data:`DIRECTION_MIN_MEMBERS` = 5, so a direction
    word ("biased high", "over-confident") is wrong in at most α/5 = 1% of the detections where it is absent, also
    for the smaller families of quantile sets (4 members) and ensembles (3 to 5).

    Parameters
    ----------
    alpha : float
        The family-wise level of the verdict.
    m : int
        The primary members with a p-value.

    Returns
    -------
    float
        The bound on a member's raw p-value.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    """
    return float(alpha) / max(int(m), DIRECTION_MIN_MEMBERS)


def named_directions(rec: dict[str, dict[str, Any]], prim: list[str], bound: float) -> tuple[str, list[str]]:
    """The direction words named by the primary members whose raw p-value passes the Bonferroni ``bound``
    (α / family size), and the Holm-rejected direction members left unnamed because they do not.

    Location members (mean z; the share below the median) name "biased low" / "biased high", spread members (std z,
    coverage, the ensemble-range coverage) "over-confident" / "under-confident"; contradicting locations name none,
    contradicting spreads become "mis-shaped".  Each named word is then a level-``bound`` claim of its own, so it is
    wrong in at most ``bound`` of the detections where that direction is absent.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (``value``, ``perfect``, ``p_value``, ``flag``).
    prim : list of str
        The primary members with a p-value.
    bound : float
        The Bonferroni bound (:func:`direction_bound`).

    Returns
    -------
    direction : str
        The named words joined by " and " ("" when none passes its bound).
    unnamed : list of str
        Holm-rejected members that carry a direction but miss the bound.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [2] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    """
    named: list[str] = []
    unnamed: list[str] = []
    location: set[str] = set()
    for k in prim:
        d = _direction_of(k, rec[k])
        if not d:
            continue
        if rec[k]["p_value"] > bound:
            if rec[k]["flag"]:
                unnamed.append(k)
            continue
        if d.startswith("biased"):
            location.add(d)
        elif d not in named:
            named.append(d)
    if "over-confident" in named and "under-confident" in named:
        named = ["mis-shaped"]
    if len(location) == 1:
        named.insert(0, location.pop())
    return " and ".join(named), unnamed


def decide(rec: dict[str, dict[str, Any]], n: int, layout: str, alpha: float,
           options: dict[str, Any]) -> InferenceResult:
    """The result of one regression inference: Holm over the primary family, Benjamini–Hochberg over the secondary,
    the verdict, its direction and its sentence.

    Verdict: any primary rejection (Holm at family-wise ``alpha``) makes it "miscalibrated".  Direction: named only
    by a member that carries one and whose *raw* p-value passes the Bonferroni bound α/max(m, 5) (m the members with
    a p-value; :func:`direction_bound`), so that each word is a level-α/5 claim of its own (with Holm's step-down
    alone, a mean z at p = 0.03 beside a rejected std z would name a bias that, when σ alone is wrong, is not there
    in up to 5% of the detections; with the bound, in at most α/5 = 1%):

    * location (mean z; the share below the median): mean z > reference or share below the median < ½: "biased
      low"; the reverse "biased high"; two members that disagree name no location;
    * spread (std z, coverage_<c>, the ensemble-range coverage): std z above its reference or coverage below its
      own: "over-confident", the reverse "under-confident", both: "mis-shaped";
    * shape (PIT uniformity, the χ² histograms, the stated levels' coverage, ENCE): none.

    With no word passing its bound the direction is "" and the sentence starts "Miscalibrated"; a Holm-rejected
    direction member short of its bound is said to be so.  The sentence leads with the rejected statistic of
    smallest p-value.

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
    .. [3] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [4] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
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
        bound = direction_bound(alpha, len(prim))
        direction, unnamed = named_directions(rec, prim, bound)
        order = {"z_std": 1, "z_mean": 2, "max_calibration_deviation": 3, "ence": 4}
        lead = min(rejected, key=lambda k: (rec[k]["p_value"], 0 if k.startswith("coverage_") else order.get(k, 9)))
        head = direction or "miscalibrated"
        sentence = f"{head[:1].upper()}{head[1:]}: {_evidence(lead, rec[lead])}"
        others = [_nice(k) for k in rejected if k != lead]
        if others:
            sentence += f"; also rejected: {', '.join(others)}"
        if unnamed:
            sentence += (f"; not named as a direction: {', '.join(_nice(k) for k in unnamed)} (p above the "
                         f"Bonferroni bound {100 * alpha:g}%/{max(len(prim), DIRECTION_MIN_MEMBERS)})")
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
    """The evidence of one rejected statistic in words: its value, reference and p-value."""
    v, ref, p = row["value"], row["perfect"], sig.format_p(row["p_value"])
    if name.startswith("coverage_"):
        tag = name.split("_", 1)[1]
        return f"the {tag}% intervals cover {100 * v:.1f}% of targets (expected {100 * ref:.1f}%, {p})"
    if name == "range_coverage":
        return (f"the ensemble's range [lowest, highest member] covers {100 * v:.1f}% of targets (expected "
                f"{100 * ref:.1f}%, {p})")
    if name == "below_median":
        return f"{100 * v:.1f}% of targets lie below the forecast median (expected 50%, {p})"
    if name == "z_std":
        return f"the standardised errors have standard deviation {v:.3g} (expected {ref:.3g}, {p})"
    if name == "z_mean":
        return f"the mean standardised error is {v:+.3g} (expected {_signed(ref)}, {p})"
    if name == "max_calibration_deviation":
        return f"the PIT values are not uniform (KS distance {v:.3g}, expected about {ref:.3g}, {p})"
    if name == "pit_chi2":
        return f"the PIT histogram over the stated levels is not flat (χ² {v:.3g}, expected about {ref:.3g}, {p})"
    if name == "rank_chi2":
        return f"the rank histogram is not flat (χ² {v:.3g}, expected about {ref:.3g}, {p})"
    if name == "max_level_deviation":
        return (f"the share of targets below a stated quantile misses its level by up to {100 * v:.1f} points "
                f"({p})")
    if name == "ence":
        return f"ENCE {v:.3g} is above its value under perfect calibration ({ref:.3g}, {p})"
    return f"{_nice(name)} = {v:.3g} ({p})"
