"""Inference for the clinical calibration set of a binary risk model (positive class): a test per calibration
statistic, an interval per statistic, the value under perfect calibration.

Rows (p_i, y_i), p = P(y = 1); H0 (perfect calibration): y_i ~ Bernoulli(p_i) independently given the predictions —
the null of every classification test (:mod:`calib_core.inference.classification`).

Tests (all two-sided unless said; they join the secondary family of the verdict: Benjamini–Hochberg flags at
false-discovery rate α, with the other secondary statistics):

* calibration_in_the_large: Wald z = â / se(â) of the slope-fixed fit (se from the inverse information), N(0, 1);
* calibration_slope: Wald z = (b̂ − 1) / se(b̂) of the two-parameter fit, N(0, 1);
* spiegelhalter_z: Z itself, N(0, 1) (Spiegelhalter 1986);
* hosmer_lemeshow: χ² with g degrees of freedom, g the non-empty groups.  The textbook g − 2 is for a model fitted
  on the same rows; here the predictions are given (external validation), and each group's term has mean
  Σp(1 − p)/(n p̄(1 − p̄)) ≤ 1 under H0, so χ²_g (slightly conservative) is the reference — with g − 2 the test
  raised about 11 % false alarms at 5 % (measured, ``tests/inference/test_classification_clinical.py``);
* ici: Monte-Carlo p-value against null draws of the ICI (labels drawn from the predictions, the curve re-smoothed).
  Rows are summarised in G = min(N, 1000) cells of consecutive sorted p (cell means of p and y, weight n_c; G = N:
  the rows themselves) and the ICI of the cells is what the null draws and the bootstrap recompute; null events
  per cell ~ Binomial(n_c, p̄_c) (row by row when the cells are rows; the binomial's variance is at least the exact
  Poisson-binomial one: slightly conservative).  ``n_ici`` (≤ 200) null draws and bootstrap replicates (a loess fit
  each).

Intervals (two-sided ``level``), from the bootstrap weights of the classification inference (multinomial
re-weighting of random row blocks, or of whole clusters under a clustering — so every interval is cluster-aware):

* intercepts and slope: the estimating-function (one-step Newton) bootstrap, θ* = θ̂ + I*(θ̂)⁻¹ U*(θ̂), with U* and I*
  the re-weighted per-block sums of the score and information contributions at θ̂ (Hu & Kalbfleisch 2000; first-
  order equivalent to refitting, at the cost of one matrix product); percentile interval;
* Spiegelhalter's Z and the Hosmer–Lemeshow H: no interval (as TCE).  They are test statistics: they grow like √N
  resp. N when miscalibrated and have no N-free population value, so a bootstrap interval would only describe the
  statistic at this N (an HL of 11.7 came with [8, 40]), which reads as an uncertainty it is not.  Each is reported
  with its p-value and its perfect-calibration value (0 with ±z for Z; g with the χ²_g quantiles for H);
* ICI, E50, E90: basic bootstrap interval [θ̂ − (q_hi − θ̂_c), θ̂ − (q_lo − θ̂_c)] (θ̂_c the cells' value, q the
  replicates' quantiles; a distance's plug-in is biased upward and the basic interval subtracts that), clipped at
  0 and extended up to the plug-in value when the bias correction moved it wholly below; ICI's is extended to 0
  when its test does not reject at 1 − ``level`` (as the ECE's).

Clustered rows: CITL, slope and Z are tested by the centred cluster (or moving-block) bootstrap of their replicates
(Hall & Wilson 1991); HL and ICI are not tested (p NaN, the reason in the table) — their null draws assume
independent rows.

Degenerate rows: one class only — every statistic of the set NaN (the logistic fits have no finite estimate) with
the reason; perfect separation — Firth's estimate with the reason, no intervals for the fit; probabilities of exactly
0 or 1 — clipped to [1e-7, 1 − 1e-7] for the logistic fits and HL, counted in the notes.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from ..base.clustering import Clustering, centred_bootstrap_p
from ..base.report import CALIBRATION_STATISTIC, DESCRIPTIVE
from ..base.significance import monte_carlo_p
from ..metrics.classification_clinical import (
    HL_GROUPS,
    calibration_errors_of,
    hosmer_lemeshow_groups,
    hosmer_lemeshow_of,
)
from ..metrics.classification_clinical_batch import recalibration_columns
from ..metrics.classification_clinical_column import column_hl_and_errors
from ..metrics.classification_clinical_fit import DEFAULT_EPS, LogisticRecalibration, clipped_logit
from ..metrics.classification_clinical_moments import FUSED_FROM, column_sums
from ..metrics.classification_loess import DEFAULT_SPAN, LoessDesign
from .classification_cells import percentile_bounds

__all__ = ["CLINICAL_TESTED", "CLINICAL_DESCRIPTIVE", "CLINICAL_KINDS", "CLINICAL_REFERENCE", "clinical_values",
           "clinical_values_columns", "ClinicalColumn", "clinical_inference", "clinical_note", "clipped_note"]

#: The tested statistics (secondary family), in table order.
CLINICAL_TESTED = ("calibration_in_the_large", "calibration_slope", "spiegelhalter_z", "hosmer_lemeshow", "ici")
#: Statistics with an interval and no test.
CLINICAL_DESCRIPTIVE = ("cox_intercept", "e50", "e90")
#: Kind of every statistic of the set.
CLINICAL_KINDS = {**dict.fromkeys(CLINICAL_TESTED, CALIBRATION_STATISTIC),
                  **dict.fromkeys(CLINICAL_DESCRIPTIVE, DESCRIPTIVE)}
#: The population value under perfect calibration (what a test's interval is compared with).
CLINICAL_REFERENCE = {"calibration_in_the_large": 0.0, "calibration_slope": 1.0, "spiegelhalter_z": float("nan"),
                      "hosmer_lemeshow": float("nan"), "ici": 0.0}
#: Cells of the ICI's null draws and bootstrap; loess fits per null draw set and per bootstrap set.
ICI_CELLS = 1000
ICI_DRAWS = 200

_NOTES = {
    "calibration_in_the_large": "logistic recalibration with the slope fixed at 1 (logit p an offset): 0 = right on "
                                "average, > 0 under-estimated risk",
    "calibration_slope": "slope of logit P(y = 1) on logit p: < 1 predictions too extreme (over-fitting), > 1 too "
                         "moderate",
    "cox_intercept": "intercept of the two-parameter fit (read with the slope; not calibration-in-the-large)",
    "spiegelhalter_z": "N(0, 1) under perfect calibration; no interval: a test statistic with no N-free "
                       "population value (grows like √N when miscalibrated) — read its p-value",
    "hosmer_lemeshow": "deciles of risk; χ² with g df (predictions fixed before these data); depends on the number "
                       "of groups and on where the cut points fall — read it with ICI and the slope; no interval: a "
                       "test statistic with no N-free population value (grows like N when miscalibrated)",
    "ici": "mean |loess curve − p| (local linear, span 0.75); perfect = the value noise alone gives at this N",
    "e50": "median |loess curve − p|",
    "e90": "90th percentile of |loess curve − p|",
}


def clinical_note(name: str) -> str:
    """What a reader should know about one statistic of the clinical set ("" for other statistics).

    Parameters
    ----------
    name : str
        A metric key.

    Returns
    -------
    str
        The note.

    References
    ----------
    Van Calster, B., McLernon, D. J., van Smeden, M., Wynants, L. & Steyerberg, E. W. (2019). Calibration: the
    Achilles heel of predictive analytics. BMC Medicine 17, 230.
    """
    return _NOTES.get(name, "")


def clinical_values(f: np.ndarray, y: np.ndarray, *, eps: float = DEFAULT_EPS) -> tuple[dict[str, float], list[str]]:
    """Point values of the clinical set for one binary event (p = f, outcome y), and the notes on the data.

    CITL a (logit P = a + logit p̃), slope b and Cox intercept (logit P = a + b logit p̃), Z = Σ (y − p)(1 − 2p) /
    √Σ (1 − 2p)² p(1 − p), H = Σ_g (O_g − E_g)² / (E_g (1 − E_g/n_g)), ICI / E50 / E90 of |loess(p) − p|.  The result
    is remembered for the last few (f, y) (keyed by their bytes), so the diagnosis's table and its inference fit
    the same rows once.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities of the event.
    y : ndarray of shape (n,)
        Outcomes 0/1.
    eps : float
        Clipping of p before the logit.

    Returns
    -------
    values : dict of str to float
        ``calibration_in_the_large``, ``calibration_slope``, ``cox_intercept``, ``spiegelhalter_z``,
        ``hosmer_lemeshow``, ``ici``, ``e50``, ``e90``.
    notes : list of str
        Clipped probabilities, one class only, separation.

    References
    ----------
    Van Calster, B., Nieboer, D., Vergouwe, Y., De Cock, B., Pencina, M. J. & Steyerberg, E. W. (2016). A
    calibration hierarchy for risk models was defined: from utopia to empirical data. Journal of Clinical
    Epidemiology 74, 167–176.
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    """
    col = _remembered(np.asarray(f, dtype=float).ravel(), np.asarray(y, dtype=float).ravel(), float(eps))
    return dict(col.values), list(col.notes)


@dataclass(frozen=True)
class ClinicalColumn:
    """The clinical set of one binary event: values, notes, the two logistic fits and HL's non-empty groups.

    Attributes
    ----------
    values : dict of str to float
        As :func:`clinical_values`.
    notes : tuple of str
        As :func:`clinical_values`.
    citl, cox : LogisticRecalibration
        The slope-fixed and the two-parameter fits.
    hl_groups : int
        Non-empty Hosmer–Lemeshow groups (the χ² degrees of freedom).

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    """

    values: dict
    notes: tuple
    citl: LogisticRecalibration
    cox: LogisticRecalibration
    hl_groups: int


def clinical_values_columns(probs: np.ndarray, outcomes: np.ndarray | None, *, eps: float = DEFAULT_EPS,
                            labels: np.ndarray | None = None) -> list[ClinicalColumn]:
    """The clinical set of every column of (n × K) probabilities and outcomes (the one-vs-rest events of a K-class
    file): the logistic fits batched over the columns
    (:func:`~calib_core.metrics.classification_clinical_batch.recalibration_columns`), Z as column sums, HL and the
    loess ICI per column.

    Z_k = Σ_i (y_ik − p_ik)(1 − 2p_ik) / √Σ_i (1 − 2p_ik)² p_ik (1 − p_ik); the others as :func:`clinical_values`.

    Parameters
    ----------
    probs : ndarray of shape (n, K)
        Probabilities of each column's event.
    outcomes : ndarray of shape (n, K), or None
        Outcomes 0/1 (None with ``labels``).
    eps : float
        Clipping of p before the logit.
    labels : ndarray of int, shape (n,), optional
        With ``outcomes=None``: the class of each row, the outcome of column k being 1[label = k] (no (n × K)
        outcome array is made at large N).

    Returns
    -------
    list of ClinicalColumn
        One per column.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    Spiegelhalter, D. J. (1986). Probabilistic prediction in patient management and clinical trials. Statistics
    in Medicine 5(5), 421–433.
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    """
    p = np.asarray(probs, dtype=float)
    if outcomes is None and p.shape[0] < FUSED_FROM:
        outcomes = (np.asarray(labels)[:, None] == np.arange(p.shape[1])).astype(float)
    y = None if outcomes is None else np.asarray(outcomes, dtype=float)
    if p.shape[0] >= FUSED_FROM:  # large N: one compiled pass for the fits' moments, Z's sums and the ranges
        pt = np.empty((p.shape[1], p.shape[0])) if p.shape[1] > 1 else None  # pᵀ, filled by the pass
        sums = column_sums(p, y, eps=eps, labels=None if y is not None else labels, transposed=pt)
        citl, cox = recalibration_columns(p, y, eps=eps, sums=sums, labels=labels)
        num, den = sums.z_num, sums.z_den
        one_class = (sums.events <= 0) | (sums.events >= p.shape[0])
    else:
        citl, cox = recalibration_columns(p, y, eps=eps)
        c = 1.0 - 2.0 * p
        den = (c * c * p * (1.0 - p)).sum(axis=0)
        num = ((y - p) * c).sum(axis=0)
        one_class = None
        pt = None
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(den > 0, num / np.sqrt(np.where(den > 0, den, 1.0)), np.nan)
    out = []
    if pt is None:
        pt = np.ascontiguousarray(p.T) if p.shape[1] > 1 else p.T
    yt = None if y is None else (np.ascontiguousarray(y.T) if p.shape[1] > 1 else y.T)
    lab = None if yt is not None else np.ascontiguousarray(labels)
    work = np.empty(p.shape[0]) if lab is not None and p.shape[0] >= FUSED_FROM else None  # reused per column
    for k in range(p.shape[1]):  # loop over the events (classes), never rows; contiguous columns
        f, fit1, fit2 = pt[k], citl[k], cox[k]
        # large N, integer labels: HL and the loess errors in three fused passes over the column (the same values)
        fused = column_hl_and_errors(f, lab, k, eps=eps, n_groups=HL_GROUPS, span=DEFAULT_SPAN, work=work) \
            if lab is not None and lab.dtype.kind in "iu" and one_class is not None and not one_class[k] else None
        yk = None if fused is not None and fused[1] is not None else ((lab == k).astype(float) if yt is None
                                                                      else yt[k])
        notes = [clipped_note(fit2.n_clipped, eps)] if fit2.n_clipped else []
        if fused is None and (yk.size == 0 or (one_class[k] if one_class is not None else yk.min() == yk.max())):
            notes.append("one class only: calibration-in-the-large, slope, Cox intercept, Spiegelhalter's Z, "
                         "Hosmer–Lemeshow and ICI need events and non-events; shown as NaN")
            out.append(ClinicalColumn(dict.fromkeys((*CLINICAL_TESTED, *CLINICAL_DESCRIPTIVE), float("nan")),
                                      tuple(notes), fit1, fit2, 0))
            continue
        if fit2.reason:
            notes.append("calibration slope: " + fit2.reason)
        hl, g = hosmer_lemeshow_of(f, yk, eps=eps) if fused is None else fused[0]
        values = {"calibration_in_the_large": fit1.intercept, "calibration_slope": fit2.slope,
                  "cox_intercept": fit2.intercept, "spiegelhalter_z": float(z[k]), "hosmer_lemeshow": hl}
        values.update(calibration_errors_of(f, yk) if yk is not None else fused[1])
        out.append(ClinicalColumn(values, tuple(notes), fit1, fit2, g))
    return out


_MEMO: OrderedDict = OrderedDict()
_MEMO_LOCK = threading.Lock()
_MEMO_SIZE = 4


def _remembered(f: np.ndarray, y: np.ndarray, eps: float) -> ClinicalColumn:
    """:func:`clinical_values_columns` of one event, remembered for the last few (f, y, ε)."""
    digest = hashlib.blake2b(digest_size=16)
    for a in (f, y):
        digest.update(np.ascontiguousarray(a, dtype=float).view(np.uint8))
    key = (f.size, y.size, eps, digest.hexdigest())
    with _MEMO_LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    col = clinical_values_columns(f[:, None], y[:, None], eps=eps)[0]
    with _MEMO_LOCK:
        _MEMO[key] = col
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return col


def clipped_note(n_clipped: int, eps: float = DEFAULT_EPS, where: str = "") -> str:
    """The note on probabilities clipped before the logit: how many, to what, for which statistics.

    Parameters
    ----------
    n_clipped : int
        Probabilities outside [ε, 1 − ε].
    eps : float
        ε.
    where : str
        Appended in brackets (e.g. the per-class counts).

    Returns
    -------
    str
        The note.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    """
    s = "y" if n_clipped == 1 else "ies"
    return (f"{n_clipped} probabilit{s} of 0 or 1 (or within {eps:g} of them) clipped to [{eps:g}, 1 − {eps:g}] for "
            f"the logistic recalibration and Hosmer–Lemeshow (a logit of ±∞ has no fit){where}")


def _normal_p(z: float) -> float:
    return float(2.0 * special.ndtr(-abs(z))) if np.isfinite(z) else float("nan")


def clinical_inference(f: np.ndarray, y: np.ndarray, *, block: np.ndarray, n_blocks: int, weights: np.ndarray,
                       level: float, n_null: int, rng: np.random.Generator, clustering: Clustering | None = None,
                       eps: float = DEFAULT_EPS) -> dict:
    """Tests, intervals and perfect-calibration values of the clinical set of one binary event (module docstring).

    Parameters
    ----------
    f : ndarray of shape (n,)
        P(y = 1).
    y : ndarray of shape (n,)
        Outcomes 0/1.
    block : ndarray of int, shape (n,)
        Bootstrap block (or cluster) of each row.
    n_blocks : int
        Number of blocks.
    weights : ndarray of shape (R, n_blocks)
        Bootstrap weights of the blocks.
    level : float
        Two-sided level.
    n_null : int
        Null draws requested (the ICI uses at most 200).
    rng : numpy.random.Generator
        Random stream of the null draws.
    clustering : Clustering, optional
        Clustered rows: centred cluster-bootstrap tests, HL and ICI untested.
    eps : float
        Clipping of p.

    Returns
    -------
    dict
        ``obs`` (values), ``pvals`` ((p, Monte-Carlo s.e., test) per tested statistic), ``ci`` ((low, high, how)),
        ``null`` (null draws of ICI, E50, E90), ``ref`` ((perfect, low, high) of the others), ``notes``.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    Spiegelhalter, D. J. (1986). Probabilistic prediction in patient management and clinical trials. Statistics
    in Medicine 5(5), 421–433.
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
    Communications in Statistics – Theory and Methods 9(10), 1043–1069.
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    Hu, F. & Kalbfleisch, J. D. (2000). The estimating function bootstrap. Canadian Journal of Statistics 28(3),
    449–481.
    Hall, P. & Wilson, S. R. (1991). Two guidelines for bootstrap hypothesis testing. Biometrics 47(2), 757–762.
    """
    f = np.asarray(f, dtype=float)
    y = np.asarray(y, dtype=float)
    col = _remembered(f.ravel(), y.ravel(), float(eps))
    obs, notes = dict(col.values), list(col.notes)
    out = {"obs": obs, "pvals": {}, "ci": {}, "null": {}, "ref": {}, "notes": notes}
    if not np.isfinite(obs["ici"]):  # one class: nothing to test
        for key in CLINICAL_TESTED:
            out["pvals"][key] = (float("nan"), float("nan"), "not tested: one class only")
        return out
    z = float(special.ndtri(0.5 + level / 2.0))
    x, _ = clipped_logit(f, eps)
    fit1, fit2 = col.citl, col.cox
    w = np.asarray(weights, dtype=float)
    reps = _fit_replicates(x, y, block, n_blocks, w, fit1, fit2)
    pv, ci, ref = out["pvals"], out["ci"], out["ref"]
    # -- tests ---------------------------------------------------------------------------------------------------
    z_citl = fit1.intercept / fit1.intercept_se
    z_slope = (fit2.slope - 1.0) / fit2.slope_se
    pv["calibration_in_the_large"] = (_normal_p(z_citl), 0.0, f"Wald z test of a = 0 (z = {z_citl:.3g})")
    sep = " (Firth's estimate: perfect separation)" if fit2.separated else ""
    pv["calibration_slope"] = (_normal_p(z_slope), 0.0, f"Wald z test of b = 1 (z = {z_slope:.3g}){sep}")
    pv["spiegelhalter_z"] = (_normal_p(obs["spiegelhalter_z"]), 0.0, "normal (Spiegelhalter's Z ~ N(0, 1))")
    groups = hosmer_lemeshow_groups(f, HL_GROUPS, eps)
    hl, g = hosmer_lemeshow_of(f, y, eps=eps, groups=groups)
    pv["hosmer_lemeshow"] = (float(stats.chi2.sf(hl, g)) if g > 0 else float("nan"), 0.0,
                             f"χ² with {g} df (deciles of risk of predictions fixed before these data)")
    # -- intervals of the fits, Z and HL --------------------------------------------------------------------------
    how_fit = "estimating-function bootstrap (one Newton step per replicate), percentile"
    if fit2.separated:
        ci["calibration_slope"] = ci["cox_intercept"] = (float("nan"), float("nan"),
                                                         "no interval: perfect separation")
    else:
        ci["calibration_slope"] = (*percentile_bounds(reps["slope"], level), how_fit)
        ci["cox_intercept"] = (*percentile_bounds(reps["cox_intercept"], level), how_fit)
    ci["calibration_in_the_large"] = (*percentile_bounds(reps["citl"], level), how_fit)
    u = (y - f) * (1.0 - 2.0 * f)
    v = (1.0 - 2.0 * f) ** 2 * f * (1.0 - f)
    su = w @ np.bincount(block, weights=u, minlength=n_blocks)
    sv = w @ np.bincount(block, weights=v, minlength=n_blocks)
    with np.errstate(divide="ignore", invalid="ignore"):
        z_rep = np.where(sv > 0, su / np.sqrt(sv), np.nan)
    for key in ("spiegelhalter_z", "hosmer_lemeshow"):  # test statistics: no N-free value, so no interval
        ci[key] = (float("nan"), float("nan"), "no interval: a test statistic (grows with N when miscalibrated)")
    ref["calibration_in_the_large"] = (0.0, -z * fit1.intercept_se, z * fit1.intercept_se)
    ref["calibration_slope"] = (1.0, 1.0 - z * fit2.slope_se, 1.0 + z * fit2.slope_se)
    ref["spiegelhalter_z"] = (0.0, -z, z)
    ref["hosmer_lemeshow"] = (float(g), *(float(q) for q in stats.chi2.ppf([0.5 - level / 2, 0.5 + level / 2], g)))
    # -- ICI, E50, E90: cells, null draws, bootstrap ---------------------------------------------------------------
    cells = _Cells.of(f, y, block, n_blocks)
    observed_cells = {k: float(v[0]) for k, v in _errors(
        np.abs(LoessDesign(cells.f, cells.n).smooth(cells.y[:, None], cells.n) - cells.f[:, None]),
        cells.n[:, None]).items()}
    null = cells.null(min(int(n_null), ICI_DRAWS), rng)
    out["null"].update(null)
    p_mc, se, _ = monte_carlo_p(observed_cells["ici"], null["ici"], "greater")
    pv["ici"] = (p_mc, se, f"Monte Carlo ({null['ici'].size} null draws of the re-smoothed curve"
                           f"{'' if cells.exact else f', {cells.n.size} cells'})")
    boot = cells.bootstrap(w[:ICI_DRAWS])
    for key in ("ici", "e50", "e90"):
        lo_q, hi_q = percentile_bounds(boot[key], level)
        lo = max(0.0, obs[key] - (hi_q - observed_cells[key]))
        hi = max(0.0, obs[key] - (lo_q - observed_cells[key]))
        how = f"basic bootstrap ({boot[key].size} re-smoothed replicates), clipped at 0"
        if hi < obs[key]:  # the bias correction moved the whole interval below the plug-in value: hold it
            hi, how = obs[key], how + ", extended up to the value"
        if key == "ici" and pv["ici"][0] > 1.0 - level:
            lo, how = 0.0, how + ", extended to 0 (test not significant)"
        ci[key] = (lo, hi, how)
    if clustering is not None:
        kind = "cluster" if clustering.block_length is None else "moving-block"
        for key, stat, rep, null_value in (("calibration_in_the_large", fit1.intercept, reps["citl"], 0.0),
                                           ("calibration_slope", fit2.slope, reps["slope"], 1.0),
                                           ("spiegelhalter_z", obs["spiegelhalter_z"], z_rep, 0.0)):
            finite = rep[np.isfinite(rep)]
            p = float(centred_bootstrap_p(stat, finite, null_value)) if finite.size else float("nan")
            pv[key] = (p, math.sqrt(p * (1 - p) / max(finite.size, 1)),
                       f"centred {kind} bootstrap ({finite.size} replicates)")
        for key in ("hosmer_lemeshow", "ici"):
            pv[key] = (float("nan"), float("nan"),
                       "not tested: clustered rows (its null draws assume independent rows)")
    return out


def _fit_replicates(x, y, block, n_blocks, w, fit1, fit2) -> dict[str, np.ndarray]:
    """One-step Newton replicates of the CITL fit and of the two-parameter fit from re-weighted block sums."""
    out = {}
    mu1 = special.expit(fit1.intercept + x)
    s1 = w @ np.bincount(block, weights=y - mu1, minlength=n_blocks)
    h1 = w @ np.bincount(block, weights=mu1 * (1 - mu1), minlength=n_blocks)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["citl"] = np.where(h1 > 0, fit1.intercept + s1 / h1, np.nan)
    if not np.isfinite(fit2.slope):
        out["slope"] = out["cox_intercept"] = np.full(w.shape[0], np.nan)
        return out
    mu2 = special.expit(fit2.intercept + fit2.slope * x)
    r, v = y - mu2, mu2 * (1 - mu2)
    sums = [w @ np.bincount(block, weights=a, minlength=n_blocks) for a in (r, r * x, v, v * x, v * x * x)]
    g0, g1, h00, h01, h11 = sums
    det = h00 * h11 - h01 * h01
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = det > 0
        da = np.where(ok, (h11 * g0 - h01 * g1) / det, np.nan)
        db = np.where(ok, (h00 * g1 - h01 * g0) / det, np.nan)
    out["cox_intercept"] = fit2.intercept + da
    out["slope"] = fit2.slope + db
    return out


class _Cells:
    """Rows summarised in cells of consecutive sorted p (the rows themselves when N ≤ ICI_CELLS)."""

    def __init__(self, f, y, n, cell, rows_f, block, n_blocks, exact):
        self.f, self.y, self.n, self.cell, self.rows_f = f, y, n, cell, rows_f
        self.block, self.n_blocks, self.exact = block, n_blocks, exact
        self.rows_y = None

    @classmethod
    def of(cls, f, y, block, n_blocks) -> _Cells:
        n = f.size
        order = np.argsort(f, kind="stable")
        cell = np.empty(n, dtype=np.intp)
        g = min(n, ICI_CELLS)
        cell[order] = np.arange(n) * g // n
        cnt = np.bincount(cell, minlength=g).astype(float)
        fm = np.bincount(cell, weights=f, minlength=g) / cnt
        ym = np.bincount(cell, weights=y, minlength=g) / cnt
        obj = cls(fm, ym, cnt, cell, f, block, n_blocks, g == n)
        obj.rows_y = y
        return obj

    def null(self, draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """ICI, E50, E90 of ``draws`` null data sets (events per cell ~ Binomial(n_c, mean p)): the loess is linear in
        the outcomes, so all draws are smoothed by one product with the kernel matrix."""
        p = np.clip(self.f, 0.0, 1.0)
        events = rng.binomial(self.n.astype(np.int64)[:, None], p[:, None], size=(p.size, draws))
        curves = LoessDesign(self.f, self.n).smooth(events / self.n[:, None], self.n)
        return _errors(np.abs(curves - self.f[:, None]), np.broadcast_to(self.n[:, None], curves.shape))

    def bootstrap(self, w: np.ndarray) -> dict[str, np.ndarray]:
        """ICI, E50, E90 of bootstrap replicates: cell counts and event sums re-weighted by block, the cells' positions
        and the data's loess bandwidths held fixed (:class:`~calib_core.metrics.classification_loess.LoessDesign`)."""
        g = self.f.size
        key = self.block * g + self.cell
        cnt, sy = (np.bincount(key, weights=a, minlength=self.n_blocks * g).reshape(self.n_blocks, g).T @ w.T
                   for a in (np.ones_like(self.rows_f), self.rows_y))
        with np.errstate(divide="ignore", invalid="ignore"):
            yr = np.where(cnt > 0, sy / np.where(cnt > 0, cnt, 1.0), 0.0)
        curves = LoessDesign(self.f, self.n).smooth(yr, cnt)
        return _errors(np.abs(curves - self.f[:, None]), cnt)


def _errors(d: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """ICI, E50, E90 per column of distances d (cells × R) with weights w."""
    ici = (w * d).sum(axis=0) / w.sum(axis=0)
    order = np.argsort(d, axis=0, kind="stable")
    ds = np.take_along_axis(d, order, axis=0)
    ws = np.take_along_axis(np.asarray(w, dtype=float), order, axis=0)
    cum = np.cumsum(ws, axis=0)
    pos = (cum - ws / 2.0) / cum[-1]
    out = {"ici": ici}
    for key, q in (("e50", 0.5), ("e90", 0.9)):
        out[key] = np.array([np.interp(q, pos[:, r], ds[:, r]) for r in range(d.shape[1])])  # loop over draws
    return out
