"""CORP reliability diagrams, the MCB − DSC + UNC score decomposition and Murphy diagrams for binary events
(classification side).

A probability forecast x ∈ [0, 1] of a binary event y ∈ {0, 1}: for a binary file either the positive class
(x = P(y = 1), event y = 1) or, for any K, the top label (x = confidence max_k p_k, event "the arg-max is the
label").

CORP (Dimitriadis, Gneiting & Jordan 2021, "Stable reliability diagrams for probabilistic classifiers", PNAS 118,
e2016191118): the reliability curve is the **isotonic (PAV) regression** x̂ = PAV(y | x) of the outcomes on the
forecasts — Consistent (a calibrated forecast's curve tends to the diagonal), Optimally binned (PAV picks the bins,
no tuning), Reproducible and based on the PAV algorithm.  Equal forecasts are pooled first (one point per distinct
value, weight = its count), so the curve is a function of x.

Score decomposition (Dimitriadis et al. 2021, eq. 4; Murphy 1973): with S̄_X the mean score of the forecasts,
S̄_C that of the PAV-recalibrated forecasts x̂ and S̄_R that of the climatology ȳ,

    S̄_X = MCB − DSC + UNC,   MCB = S̄_X − S̄_C ≥ 0,   DSC = S̄_R − S̄_C ≥ 0,   UNC = S̄_R,

exactly (an identity of the three means).  MCB ≥ 0 and DSC ≥ 0 because the PAV fit minimises every proper score
among non-decreasing functions of x, a class holding both x itself and the constant ȳ.  Scores: Brier
S(x, y) = (x − y)² (of the binary event: half the two-class Brier of ``metrics.brier``; UNC = ȳ(1 − ȳ)) and the log
score S(x, y) = −y log x − (1 − y) log(1 − x) (0 log 0 = 0; UNC = the entropy of ȳ).

Uncertainty (bands at ``band_level``, 90% as in the paper; the table's intervals at ``level``):

* **consistency band** (under H0, calibration): outcomes redrawn as y* ~ Bernoulli(x_i), PAV recomputed, the
  pointwise (1 ± band_level)/2 quantiles at every forecast value (the paper's resampling band).  Where the
  CORP curve leaves it, the forecast is miscalibrated at that x beyond what chance produces at this N.
* **confidence band**: pairs (x_i, y_i) resampled with replacement, PAV recomputed, pointwise quantiles (the
  paper's bootstrap band), the uncertainty of the curve itself.  A resample with no row at some forecast value
  takes the linear interpolation of its fit between the neighbouring values (constant beyond the ends).
* **MCB test**: MCB's law under H0 from the same null draws, p = (1 + #{MCB* ≥ MCB})/(1 + R).
* **intervals** (two-sided ``level``) from the same bootstrap resamples as the confidence band: basic bootstrap
  [2θ̂ − q_hi, 2θ̂ − q_lo] for S̄_X, DSC and UNC.  MCB is biased upward (PAV fits noise, so a perfectly calibrated
  forecaster still gets MCB > 0; the bootstrap of PAV is biased further, Kosorok 2008), so its interval is centred
  on the debiased MCB − E_H0[MCB] (the null draws' mean, column ``mcb_null_mean``) with the bootstrap's spread
  around its own mean, [θ̃ − (q_hi − m*), θ̃ + (m* − q_lo)], clipped at 0 and reaching down to 0 when the MCB test
  does not reject at 1 − ``level``.  Measured coverage of the population MCB (Brier, seeded, 60–80 data sets per
  cell, over-confident and under-confident logit scaling, N = 1,000–5,000): 0.93–1.00; the basic interval gave
  0.53–0.77 and the percentile one 0.00.

Speed.  Everything is computed from the distinct forecast values u with their counts n_u and
event counts h_u (one sort, O(N log N)).  Null draws are h*_u ~ Binomial(n_u, u) and bootstrap draws are
multinomial counts of the 2U (value, outcome) cells — both *exact in law* on distinct values.  All R resamples are
fitted by ONE call of the PAV routine: resample r's values are offset by 2r, so no violation can cross two
resamples and the concatenated fit is the R separate fits (rounding error below R · 2⁻⁵¹ absolute).  When there
are more than ``max_groups`` distinct values the resampling runs on a **grid**: consecutive distinct values are
merged into groups that span less than δ = 1/``grid`` in x and hold at most about N/``grid`` rows (or one distinct
value); a group's rows are resampled as if their forecast were the group's mean forecast (every forecast moves by
less than δ; the null count's mean is exact and its variance exceeds the exact Poisson-binomial one by
Σ(x_i − x̄_g)² < n_g δ²).  The test then compares the grid's own MCB with its null draws, and the bootstrap
intervals are shifted by (exact − grid) plug-in.  The CORP curve and the decomposition themselves are always
exact.

The pooling, the PAV fits, the decomposition and the Murphy diagram are in
:mod:`calib_core.diagrams.classification_pav` (re-exported here); this module adds the bands, the MCB test, the
intervals, prediction sets and the MCB–DSC plane.

Murphy diagram (Ehm, Gneiting, Jordan & Krüger 2016, JRSS B 78, 505–562, §3): the mean elementary score
S̄_θ = [θ · #{x_i > θ, y_i = 0} + (1 − θ) · #{x_i ≤ θ, y_i = 1}] / N over thresholds θ ∈ [0, 1] (the expense of a
user who acts when x > θ, with cost–loss ratio θ); ∫₀¹ S̄_θ dθ = Brier / 2.  A forecast whose curve lies below
another's everywhere is better for every user (every proper score).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import isotonic_regression

from ..base.predictions import PredictionSet, iter_subsets
from ..base.protocol import EvaluationResult, model_rows
from ..base.significance import monte_carlo_p
from .classification_pav import (
    MURPHY_COLUMNS,
    SCORES,
    CorpTarget,
    Distinct,
    Score,
    binary_events,
    climatology_score,
    decompose,
    decompose_distinct,
    distinct,
    fill_gaps,
    murphy_of_distinct,
    murphy_table,
    pav,
    pav_batch,
    row_scores,
    score_sums,
)

__all__ = [
    "BAND_COLUMNS",
    "CURVE_COLUMNS",
    "DECOMPOSITION_COLUMNS",
    "MURPHY_COLUMNS",
    "PLANE_COLUMNS",
    "SCORES",
    "Corp",
    "CorpTarget",
    "Distinct",
    "binary_events",
    "corp",
    "corp_of",
    "decompose",
    "mcb_dsc_points",
    "distinct",
    "murphy_table",
    "pav",
    "pav_batch",
    "PLANE_METRICS",
    "plane_terms",
]


#: Columns of :attr:`Corp.curve` (the CORP curve: both ends of every PAV block).
CURVE_COLUMNS = ["forecast", "recalibrated", "count"]
#: Columns of :attr:`Corp.bands` (one row per distinct forecast value, or per grid group).
BAND_COLUMNS = ["forecast", "count", "consistency_low", "consistency_high", "confidence_low", "confidence_high"]
#: Columns of :attr:`Corp.decomposition` (one row per score).
DECOMPOSITION_COLUMNS = [
    "score", "value", "value_low", "value_high", "mcb", "mcb_low", "mcb_high", "mcb_null_mean", "mcb_p_value",
    "dsc", "dsc_low", "dsc_high", "unc", "unc_low", "unc_high", "note",
]

_SEMANTICS = {
    "top_label": "top-label: x = confidence max_k p_k, event = the arg-max is the label",
    "positive": "positive class (binary): x = predicted P(y = 1), event = y = 1",
}


# =============================================================================================
# grid and resampling
# =============================================================================================


def _groups(d: Distinct, max_groups: int, grid: int) -> np.ndarray:
    """Group id of every distinct value: the identity when U ≤ ``max_groups``; otherwise a new group starts where
    the value's 1/``grid`` cell of [0, 1] or its N/``grid`` cell of the cumulative count changes (so a group spans
    less than 1/grid in x, and its rows before its last distinct value are at most N/grid)."""
    u = d.value.size
    if u <= max_groups:
        return np.arange(u)
    before = np.cumsum(d.count) - d.count
    key_count = np.floor(before * grid / d.count.sum())
    key_x = np.minimum(np.floor(d.value * grid), grid - 1)
    new = np.r_[True, (np.diff(key_count) != 0) | (np.diff(key_x) != 0)]
    return np.cumsum(new) - 1


@dataclass
class Corp:
    """CORP reliability of one forecast (see the module docstring).

    Attributes
    ----------
    curve : pandas.DataFrame
        :data:`CURVE_COLUMNS` — both ends of every PAV block (the exact step curve, small at any N).
    bands : pandas.DataFrame
        :data:`BAND_COLUMNS` — the consistency and confidence bands at every distinct forecast value (or grid group:
        ``attrs["grid"]``).
    decomposition : pandas.DataFrame
        :data:`DECOMPOSITION_COLUMNS`, one row per score.
    murphy : pandas.DataFrame
        :data:`MURPHY_COLUMNS` at 201 thresholds (:func:`murphy_table`).
    n : int
        Rows.
    target : str
        The binary event.
    info : dict
        Levels, draws, grid.

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.

    Ehm, W., Gneiting, T., Jordan, A. & Krüger, F. (2016). Of quantiles and expectiles: consistent scoring
    functions, Choquet representations and forecast rankings. Journal of the Royal Statistical Society B 78(3),
    505–562.
    """

    curve: pd.DataFrame
    bands: pd.DataFrame
    decomposition: pd.DataFrame
    murphy: pd.DataFrame
    n: int
    target: str
    info: dict = field(default_factory=dict)


def _curve_table(u: np.ndarray, fit: np.ndarray, count: np.ndarray) -> pd.DataFrame:
    """Both ends of every block of equal fitted value (the step curve without its interior points)."""
    if u.size == 0:
        return pd.DataFrame({c: np.zeros(0) for c in CURVE_COLUMNS})
    new = np.r_[True, fit[1:] != fit[:-1]]
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], u.size] - 1
    block_n = np.add.reduceat(count, starts)
    pos = np.sort(np.unique(np.r_[starts, ends]))
    block_of = np.cumsum(new) - 1
    return pd.DataFrame({"forecast": u[pos], "recalibrated": fit[pos], "count": block_n[block_of[pos]]})


def corp(
    x: np.ndarray,
    y: np.ndarray,
    *,
    target: CorpTarget = "positive",
    n_resamples: int = 1000,
    n_boot: int = 200,
    band_level: float = 0.90,
    level: float = 0.95,
    max_groups: int = 1000,
    grid: int = 500,
    seed: int | None = 0,
) -> Corp:
    """CORP reliability diagram with consistency and confidence bands, and the Brier and log score decompositions.

    With bootstrap intervals and the MCB test (module docstring).

    Parameters
    ----------
    x : ndarray of shape (n,)
        Forecasts in [0, 1].
    y : ndarray of shape (n,)
        Binary outcomes (0/1).
    target : {"positive", "top_label"}, default "positive"
        What x and y are (``"positive"``: P(y = 1) and y; ``"top_label"``: confidence and correctness), for the
        table's ``attrs["semantics"]``.
    n_resamples : int, default 1000
        Null draws y* ~ Bernoulli(x) for the consistency band and the MCB test (0: none).
    n_boot : int, default 200
        Bootstrap resamples of the rows for the confidence band and the intervals (0: none).
    band_level : float, default 0.90
        Pointwise level of both bands (0.90: the paper's 5–95%).
    level : float, default 0.95
        Two-sided level of the decomposition's intervals.
    max_groups : int, default 1000
        Resample on the distinct values while there are at most this many.
    grid : int, default 500
        Else on the grid of groups spanning < 1/``grid`` in x (module docstring).
    seed : int or None, default 0
        Seeds both resamplings.

    Returns
    -------
    Corp
        Curve, bands, decomposition and Murphy diagram.

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.

    Ehm, W., Gneiting, T., Jordan, A. & Krüger, F. (2016). Of quantiles and expectiles: consistent scoring
    functions, Choquet representations and forecast rankings. Journal of the Royal Statistical Society B 78(3),
    505–562.

    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Kosorok, M. R. (2008). Bootstrapping the Grenander estimator. In Beyond Parametrics in Interdisciplinary
    Research, IMS Collections 1, 282–292.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"forecasts and outcomes must be 1-D arrays of one length, got {x.shape} and {y.shape}")
    if x.size == 0:
        raise ValueError("no rows: CORP needs at least one forecast")
    if not np.all(np.isfinite(x)) or x.min() < 0 or x.max() > 1:
        bad = np.flatnonzero(~np.isfinite(x) | (x < 0) | (x > 1))
        raise ValueError(f"forecasts must be probabilities in [0, 1]; rows {bad[:5].tolist()} are not")
    if not np.all((y == 0) | (y == 1)):
        bad = np.flatnonzero((y != 0) & (y != 1))
        raise ValueError(f"outcomes must be 0 or 1; rows {bad[:5].tolist()} are not")
    rng = np.random.default_rng(seed)
    n = x.size
    d = distinct(x, y)
    fit = np.clip(isotonic_regression(d.events / d.count, weights=d.count).x, 0.0, 1.0)
    exact = {s: decompose_distinct(d, fit, s) for s in SCORES}

    # grid groups (the identity on distinct values while U <= max_groups)
    gid = _groups(d, max_groups, grid)
    n_g = np.bincount(gid, weights=d.count)
    h_g = np.bincount(gid, weights=d.events)
    xbar = np.bincount(gid, weights=d.value * d.count) / n_g
    on_grid = gid.size > 0 and gid[-1] + 1 < d.value.size
    sums = {}  # per group: Σ S(x_i, 1), Σ S(x_i, 0) over all rows, and over the rows with y = 1 / y = 0
    for s in SCORES:
        s1, s0 = row_scores(d.value, np.ones_like(d.value), s), row_scores(d.value, np.zeros_like(d.value), s)
        with np.errstate(invalid="ignore"):
            sums[s] = (np.bincount(gid, weights=_mul(d.count, s1)), np.bincount(gid, weights=_mul(d.count, s0)),
                       np.bincount(gid, weights=_mul(d.events, s1)),
                       np.bincount(gid, weights=_mul(d.count - d.events, s0)))
    grid_fit = np.clip(isotonic_regression(h_g / n_g, weights=n_g).x, 0.0, 1.0)
    grid_mcb = {s: (sums[s][2].sum() + sums[s][3].sum() - score_sums(grid_fit, h_g, n_g - h_g, s)) / n
                for s in SCORES}

    lo_q, hi_q = (1.0 - band_level) / 2.0, (1.0 + band_level) / 2.0
    cons_lo = cons_hi = conf_lo = conf_hi = np.full(n_g.size, np.nan)
    null_mcb: dict[str, np.ndarray] = {}
    if n_resamples > 0:
        h_star = rng.binomial(n_g.astype(np.int64), np.clip(xbar, 0.0, 1.0), size=(int(n_resamples), n_g.size))
        h_star = h_star.astype(float)
        f_star = pav_batch(h_star / n_g, np.broadcast_to(n_g, h_star.shape))
        cons_lo, cons_hi = np.quantile(f_star, [lo_q, hi_q], axis=0)
        for s in SCORES:
            mean1, mean0 = sums[s][0] / n_g, sums[s][1] / n_g
            with np.errstate(invalid="ignore"):
                s_x = (_mul(h_star, mean1) + _mul(n_g - h_star, mean0)).sum(axis=1)
            null_mcb[s] = (s_x - score_sums(f_star, h_star, n_g - h_star, s)) / n
    boot: dict[str, np.ndarray] = {}
    if n_boot > 0:
        cells = np.r_[n_g - h_g, h_g] / n
        c = rng.multinomial(n, cells / cells.sum(), size=int(n_boot)).astype(float)
        c0, c1 = c[:, : n_g.size], c[:, n_g.size:]
        w = c0 + c1
        with np.errstate(invalid="ignore", divide="ignore"):
            f_b = pav_batch(np.where(w > 0, c1 / w, 0.0), w)
        conf_lo, conf_hi = np.quantile(fill_gaps(f_b, xbar), [lo_q, hi_q], axis=0)
        ybar = c1.sum(axis=1) / n
        f_b0 = np.where(w > 0, f_b, 0.0)
        for s in SCORES:
            with np.errstate(invalid="ignore", divide="ignore"):
                per1 = np.where(h_g > 0, sums[s][2] / np.where(h_g > 0, h_g, 1.0), 0.0)
                per0 = np.where(n_g - h_g > 0, sums[s][3] / np.where(n_g - h_g > 0, n_g - h_g, 1.0), 0.0)
                s_x = (_mul(c1, per1) + _mul(c0, per0)).sum(axis=1) / n
            s_c = score_sums(f_b0, c1, c0, s) / n
            s_r = climatology_score(ybar, s)
            boot[s] = np.column_stack([s_x, s_x - s_c, s_r - s_c, s_r])

    bands = pd.DataFrame({"forecast": xbar, "count": n_g, "consistency_low": cons_lo, "consistency_high": cons_hi,
                          "confidence_low": conf_lo, "confidence_high": conf_hi})
    rows = []
    for s in SCORES:
        e = exact[s]
        plug = np.array([e["score"], e["mcb"], e["dsc"], e["unc"]])
        ivals = np.full((4, 2), np.nan)
        note = []
        p = null_mean = np.nan
        if s in null_mcb and np.isfinite(grid_mcb[s]) and np.all(np.isfinite(null_mcb[s])):
            p = monte_carlo_p(float(grid_mcb[s]), null_mcb[s], alternative="greater").p
            null_mean = float(null_mcb[s].mean()) + (e["mcb"] - float(grid_mcb[s]))
        if s in boot:
            shift = np.zeros(4)
            if on_grid:  # the replicates are of the grid statistics: intervals moved by the exact − grid plug-in
                grid_s = (sums[s][2].sum() + sums[s][3].sum()) / n
                grid_plug = np.array([grid_s, grid_mcb[s], e["unc"] - (grid_s - grid_mcb[s]), e["unc"]])
                shift = plug - grid_plug
                note.append("intervals from the grid, shifted by the exact − grid plug-in")
            b = np.where(np.isfinite(boot[s]), boot[s], np.nan)
            with np.errstate(invalid="ignore"):
                q = np.nanquantile(b, [(1 - level) / 2, (1 + level) / 2], axis=0)
                m_star = np.nanmean(b, axis=0)
            centre = plug - shift
            ivals = np.column_stack([2 * centre - q[1], 2 * centre - q[0]]) + shift[:, None]  # basic intervals
            if np.isfinite(null_mean):  # MCB: centred on MCB − its null mean, the bootstrap's spread around it
                debiased = e["mcb"] - null_mean
                ivals[1] = [debiased - (q[1, 1] - m_star[1]), debiased + (m_star[1] - q[0, 1])]
            ivals[1:, 0] = np.maximum(ivals[1:, 0], 0.0)  # MCB, DSC, UNC are ≥ 0
            ivals[1:, 1] = np.maximum(ivals[1:, 1], 0.0)
            if np.isfinite(p) and p > 1.0 - level:
                ivals[1, 0] = 0.0
            if np.isfinite(plug[1]) and plug[1] > ivals[1, 1]:
                note.append("MCB lies above its interval: most of it is PAV's upward bias at this N (null mean)")
        if not np.isfinite(e["score"]):
            note.append("infinite: a forecast of 0 or 1 missed")
        rows.append({"score": s, "value": e["score"], "value_low": ivals[0, 0], "value_high": ivals[0, 1],
                     "mcb": e["mcb"], "mcb_low": ivals[1, 0], "mcb_high": ivals[1, 1], "mcb_null_mean": null_mean,
                     "mcb_p_value": p, "dsc": e["dsc"], "dsc_low": ivals[2, 0], "dsc_high": ivals[2, 1],
                     "unc": e["unc"], "unc_low": ivals[3, 0], "unc_high": ivals[3, 1], "note": "; ".join(note)})
    decomposition = pd.DataFrame(rows, columns=DECOMPOSITION_COLUMNS)
    info = {"semantics": _SEMANTICS[target], "band_level": band_level, "level": level, "n_resamples": n_resamples,
            "n_boot": n_boot, "grid": bool(on_grid), "grid_width": 1.0 / grid if on_grid else 0.0,
            "n_distinct": int(d.value.size), "n_groups": int(n_g.size)}
    curve = _curve_table(d.value, fit, d.count)
    murphy = murphy_of_distinct(d, 201)
    for t in (curve, bands, decomposition, murphy):
        t.attrs.update(info)
    return Corp(curve=curve, bands=bands, decomposition=decomposition, murphy=murphy, n=n, target=target, info=info)


def _mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a · b with 0 · ∞ = 0 (a count of zero rows contributes nothing, even where the score is infinite)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(a == 0, 0.0, a * b)


# =============================================================================================
# prediction sets
# =============================================================================================


def corp_of(
    pset: PredictionSet, *, target: CorpTarget = "top_label", models: list[str] | None = None,
    **options,
) -> dict[str, Corp]:
    """:func:`corp` of every model of a classification PredictionSet (all groups together), keyed by model.

    Parameters
    ----------
    pset : PredictionSet
        A classification prediction set.
    target : {"top_label", "positive"}, default "top_label"
        The event (top-label-only files always use ``"top_label"``).
    models : list of str or None, default None
        Models to include; None: all.
    **options
        Passed to :func:`corp` (``n_resamples``, ``n_boot``, ``band_level``, ``level``, ``seed``, …).

    Returns
    -------
    dict of str to Corp
        Model → diagram.

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.
    """
    if pset.task != "classification":
        raise ValueError("CORP diagrams need a classification PredictionSet")
    out: dict[str, Corp] = {}
    for model, _, mask in iter_subsets(pset, by_group=False):
        if models is not None and model not in models:
            continue
        if not mask.any():
            continue
        if pset.top_label_only:
            x, y = binary_events(pset.labels[mask], None, confidence=pset.confidence[mask],
                                 predicted=pset.point[mask])
            tgt: CorpTarget = "top_label"
        else:
            x, y = binary_events(pset.labels[mask], pset.probs[mask], target=target)
            tgt = target
        out[model] = corp(x, y, target=tgt, **options)
    return out


#: Columns of :func:`mcb_dsc_points`.
PLANE_COLUMNS = ["model", "calibrator", "mcb", "dsc", "unc", "score", "n_test", "target", "n_trials", "mcb_std",
                 "dsc_std"]
#: The per-trial metrics ``cc.evaluate(..., diagrams=True)`` records for the plane (Brier decomposition terms;
#: registry entries of ``calib_core.calibrators.registry.DECOMPOSITION_TERMS``).
PLANE_METRICS = ("mcb_brier", "dsc_brier", "unc_brier")


def _plane_target(n_classes: int, target: CorpTarget | None) -> CorpTarget:
    return target or ("positive" if n_classes == 2 else "top_label")


def plane_terms(labels: np.ndarray, probs: np.ndarray, *, target: CorpTarget | None = None) -> dict[str, float]:
    """MCB, DSC and UNC of the Brier score of the binary event (:func:`decompose`) of one set of probabilities.

    Keyed as :data:`PLANE_METRICS`: what the evaluation records on every trial's test rows for the MCB–DSC plane.

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels.
    probs : ndarray of shape (n, k)
        Probabilities.
    target : {"positive", "top_label"} or None, default None
        The event; None: the positive class for K = 2, else the top label.

    Returns
    -------
    dict of str to float
        ``mcb_brier``, ``dsc_brier``, ``unc_brier``.

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.

    Dimitriadis, T., Gneiting, T., Jordan, A. I. & Vogel, P. (2024). Evaluating probabilistic classifiers: the
    triptych. International Journal of Forecasting 40(3), 1101–1122.
    """
    p = np.asarray(probs, dtype=float)
    x, y = binary_events(labels, p, target=_plane_target(p.shape[1], target))
    d = decompose(np.clip(x, 0.0, 1.0), y, score="brier")
    return {"mcb_brier": d["mcb"], "dsc_brier": d["dsc"], "unc_brier": d["unc"]}


def mcb_dsc_points(
    pset: PredictionSet, result: EvaluationResult, *, score: Score = "brier", target: CorpTarget | None = None
) -> pd.DataFrame:
    """The points of the MCB–DSC plane of a Recalibrate run.

    For every model and every calibrator (the uncalibrated predictions included) the CORP decomposition
    (:func:`decompose`) of its calibrated probabilities on test rows.  Brier score with the default event: the
    **mean over every trial** of the terms the evaluation recorded on each trial's test rows (:data:`PLANE_METRICS`,
    from ``cc.evaluate(..., diagrams=True)``), with their standard deviations over trials (``mcb_std``, ``dsc_std``;
    NaN for one trial); score = MCB − DSC + UNC of the means (the identity holds for means).  Otherwise (the log
    score, another ``target``, or a result without those metrics) the decomposition of the first trial's test rows
    (``result.calibrated``), ``n_trials`` = 1.

    Parameters
    ----------
    pset : PredictionSet
        A classification prediction set.
    result : EvaluationResult
        The evaluation.
    score : {"brier", "log"}, default "brier"
        The score decomposed.
    target : {"positive", "top_label"} or None, default None
        The binary event — default the positive class for K = 2, else the top label (whose event, "the arg-max is
        right", changes with a calibrator that moves the arg-max, so UNC can differ between points).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`PLANE_COLUMNS`.

    References
    ----------
    Dimitriadis, T., Gneiting, T., Jordan, A. I. & Vogel, P. (2024). Evaluating probabilistic classifiers: the
    triptych. International Journal of Forecasting 40(3), 1101–1122.

    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.
    """
    if pset.task != "classification":
        raise ValueError("the MCB–DSC plane needs a classification PredictionSet")
    first = {s["model"]: s for s in result.splits if s["trial"] == 0}
    n_classes = int(pset.probs.shape[1]) if pset.probs is not None else 2
    default_target = _plane_target(n_classes, None)
    summary = result.summary
    recorded = summary[summary["metric"].isin(PLANE_METRICS)] if not summary.empty else summary
    use_trials = score == "brier" and (target is None or target == default_target) and not recorded.empty
    rows = []
    if use_trials:
        wide = recorded.pivot_table(index=["model", "calibrator"], columns="metric", values=["mean", "std", "n_trials"],
                                    sort=False, dropna=False)
        n_test = {m: float(np.mean([s["test"].size for s in result.splits if s["model"] == m]))
                  for m in {s["model"] for s in result.splits}}
        for (model, cal), r in wide.iterrows():
            mcb, dsc, unc = (float(r[("mean", k)]) for k in PLANE_METRICS)
            rows.append({"model": model, "calibrator": cal, "mcb": mcb, "dsc": dsc, "unc": unc,
                         "score": mcb - dsc + unc, "n_test": int(round(n_test.get(model, 0))),
                         "target": default_target, "n_trials": int(r[("n_trials", "mcb_brier")]),
                         "mcb_std": float(r[("std", "mcb_brier")]), "dsc_std": float(r[("std", "dsc_brier")])})
        return pd.DataFrame(rows, columns=PLANE_COLUMNS)
    for model, by_cal in result.calibrated.items():
        split = first.get(model)
        if split is None or not by_cal:
            continue
        idx = model_rows(pset, model)
        test_rel = np.flatnonzero(np.isin(idx, split["test"]))
        labels = pset.labels[idx][test_rel]
        for cal, probs in by_cal.items():
            p = np.asarray(probs, dtype=float)[test_rel]
            tgt: CorpTarget = _plane_target(p.shape[1], target)
            x, y = binary_events(labels, p, target=tgt)
            d = decompose(np.clip(x, 0.0, 1.0), y, score=score)
            rows.append({"model": model, "calibrator": cal, "mcb": d["mcb"], "dsc": d["dsc"], "unc": d["unc"],
                         "score": d["score"], "n_test": int(test_rel.size), "target": tgt, "n_trials": 1,
                         "mcb_std": np.nan, "dsc_std": np.nan})
    return pd.DataFrame(rows, columns=PLANE_COLUMNS)
