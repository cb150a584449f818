"""The deterministic core of CORP for binary events: pooled distinct forecasts, PAV fits, the score decomposition
MCB − DSC + UNC and the Murphy diagram (Dimitriadis, Gneiting & Jordan 2021, "Stable reliability diagrams for
probabilistic classifiers", PNAS 118, e2016191118; Ehm, Gneiting, Jordan & Krüger 2016, JRSS B 78, 505–562).

Forecasts x ∈ [0, 1] of binary events y ∈ {0, 1} are pooled on their distinct values u (count n_u, events h_u; one
sort).  The CORP curve is the isotonic (PAV) regression of y on x (:func:`pav`; :func:`pav_batch` fits R resamples in
one call); :func:`decompose` splits the mean Brier or log score as S̄_X = MCB − DSC + UNC; :func:`murphy_table` gives
the mean elementary scores over thresholds θ; :func:`binary_events` picks the event of a file.  The bands, the MCB
test and the intervals are in :mod:`calib_core.diagrams.classification_corp`, which re-exports these names.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy import special
from scipy.optimize import isotonic_regression

from ..metrics.classification import Target, top_label

__all__ = [
    "MURPHY_COLUMNS",
    "SCORES",
    "CorpTarget",
    "Distinct",
    "binary_events",
    "decompose",
    "distinct",
    "murphy_table",
    "pav",
    "pav_batch",
]


#: The binary event of a CORP diagram (the same choice as the metrics' ``target``).
CorpTarget = Target
Score = Literal["brier", "log"]

#: The two proper scores of the decomposition.
SCORES: tuple[Score, ...] = ("brier", "log")

#: Columns of :func:`murphy_table`.
MURPHY_COLUMNS = ["theta", "score"]


# =============================================================================================
# PAV
# =============================================================================================


class Distinct(NamedTuple):
    """The rows reduced to their distinct forecast values (sorted).

    Attributes
    ----------
    value : ndarray of shape (u,)
        The distinct forecast values u, increasing.
    count : ndarray of shape (u,)
        n_u = #{x_i = u}.
    events : ndarray of shape (u,)
        h_u = #{x_i = u, y_i = 1}.

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.
    """

    value: np.ndarray
    count: np.ndarray
    events: np.ndarray


def distinct(x: np.ndarray, y: np.ndarray) -> Distinct:
    """Pool equal forecast values: (u sorted, n_u = #{x_i = u}, h_u = #{x_i = u, y_i = 1}).

    One sort of N integer keys: a non-negative float64's bit pattern orders like its value, so
    key = (bits(x) << 1) | y sorts by x with the outcome in the lowest bit (bits(1.0) < 2⁶², no overflow).
    O(N log N), about twice as fast as an argsort of the rows.

    Parameters
    ----------
    x : ndarray of shape (n,)
        Forecasts in [0, 1].
    y : ndarray of shape (n,)
        Binary outcomes.

    Returns
    -------
    Distinct
        The pooled values.

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.
    """
    x = np.asarray(x, dtype=float) + 0.0  # −0.0 → +0.0 (its sign bit would sort it last)
    if x.size == 0:
        return Distinct(x, np.zeros(0), np.zeros(0))
    key = (x.view(np.uint64) << np.uint64(1)) | (np.asarray(y) == 1).astype(np.uint64)
    key.sort()
    bits = key >> np.uint64(1)
    starts = np.flatnonzero(np.r_[True, bits[1:] != bits[:-1]])
    value = bits[starts].view(np.float64)
    count = np.diff(np.r_[starts, key.size]).astype(float)
    events = np.add.reduceat((key & np.uint64(1)).astype(np.float64), starts)
    return Distinct(value, count, events)


def pav(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CORP curve: isotonic (PAV) regression of the outcomes y on the forecasts x, ties in x pooled.

    The fit x̂(u) is the weighted PAV of the means h_u/n_u with weights n_u; it minimises Σ_i (f(x_i) − y_i)² (and
    every other Bregman loss) over non-decreasing f and equals scikit-learn's ``IsotonicRegression`` at the data.

    Parameters
    ----------
    x : ndarray of shape (n,)
        Forecasts in [0, 1].
    y : ndarray of shape (n,)
        Binary outcomes.

    Returns
    -------
    u : ndarray
        The distinct forecast values.
    fitted : ndarray
        The non-decreasing fitted event frequency at each.
    count : ndarray
        n_u.

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.

    Ayer, M., Brunk, H. D., Ewing, G. M., Reid, W. T. & Silverman, E. (1955). An empirical distribution function
    for sampling with incomplete information. Annals of Mathematical Statistics 26(4), 641–647.
    """
    d = distinct(x, y)
    if d.value.size == 0:
        return d.value, d.value.copy(), d.count
    fit = isotonic_regression(d.events / d.count, weights=d.count, increasing=True).x
    return d.value, np.clip(fit, 0.0, 1.0), d.count


def pav_batch(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted PAV of every row of ``values`` (R × U, entries in [0, 1]) in one call of the PAV routine.

    Row r is offset by 2r and the rows are concatenated: every value of row r + 1 exceeds every value of row r, so
    no pooled block ever spans two rows and the concatenated fit is the R separate fits (rounding error below
    R · 2⁻⁵¹ absolute, from the offsets).

    Parameters
    ----------
    values : ndarray of shape (r, u)
        Values in [0, 1].
    weights : ndarray of shape (r, u)
        Their weights; entries with weight 0 are left out of their row's fit.

    Returns
    -------
    ndarray of shape (r, u)
        The fits (NaN where the weight is 0).

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.

    Ayer, M., Brunk, H. D., Ewing, G. M., Reid, W. T. & Silverman, E. (1955). An empirical distribution function
    for sampling with incomplete information. Annals of Mathematical Statistics 26(4), 641–647.
    """
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    r, u = v.shape
    keep = w > 0
    offset = np.broadcast_to(2.0 * np.arange(r, dtype=float)[:, None], (r, u))
    fit = isotonic_regression(v[keep] + offset[keep], weights=w[keep], increasing=True).x
    out = np.full((r, u), np.nan)
    out[keep] = fit - offset[keep]
    return np.clip(out, 0.0, 1.0)


def fill_gaps(fit: np.ndarray, x: np.ndarray) -> np.ndarray:
    """NaN entries of each row of ``fit`` (R × U) by linear interpolation in ``x`` between the row's neighbouring
    finite entries; constant beyond its first/last finite entry (vectorised, no loop over rows)."""
    ok = np.isfinite(fit)
    if ok.all():
        return fit
    r, u = fit.shape
    idx = np.arange(u)
    prev = np.maximum.accumulate(np.where(ok, idx, -1), axis=1)
    nxt = np.minimum.accumulate(np.where(ok, idx, u)[:, ::-1], axis=1)[:, ::-1]
    has_prev, has_next = prev >= 0, nxt < u
    p = np.where(has_prev, prev, np.where(has_next, nxt, 0))
    q = np.where(has_next, nxt, p)
    rows = np.arange(r)[:, None]
    fp, fq = fit[rows, p], fit[rows, q]
    xp, xq = x[p], x[q]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(q > p, (x[None, :] - xp) / (xq - xp), 0.0)
    return np.where(ok, fit, fp + t * (fq - fp))


# =============================================================================================
# scores and the decomposition
# =============================================================================================


def score_sums(f: np.ndarray, n1: np.ndarray, n0: np.ndarray, score: Score) -> np.ndarray:
    """Σ over cells of n1·S(f, 1) + n0·S(f, 0) along the last axis (0·∞ = 0: a cell without events of a kind
    adds nothing, so a forecast of 0 scores ∞ only where an event happened)."""
    f = np.asarray(f, dtype=float)
    if score == "brier":
        return (n1 * (1.0 - f) ** 2 + n0 * f**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = np.where(n1 > 0, n1 * np.log(f), 0.0)
        neg = np.where(n0 > 0, n0 * np.log1p(-f), 0.0)
    return -(pos + neg).sum(axis=-1)


def climatology_score(ybar: np.ndarray | float, score: Score) -> np.ndarray:
    """S̄_R = the score of the climatology ȳ: ȳ(1 − ȳ) (Brier), −ȳ log ȳ − (1 − ȳ) log(1 − ȳ) (log)."""
    ybar = np.asarray(ybar, dtype=float)
    if score == "brier":
        return ybar * (1.0 - ybar)
    return -(special.xlogy(ybar, ybar) + special.xlogy(1.0 - ybar, 1.0 - ybar))


def row_scores(x: np.ndarray, y: np.ndarray, score: Score) -> np.ndarray:
    if score == "brier":
        return (x - y) ** 2
    with np.errstate(divide="ignore"):
        return -(special.xlogy(y, x) + special.xlogy(1.0 - y, 1.0 - x))


def decompose_distinct(d: Distinct, fit: np.ndarray, score: Score) -> dict[str, float]:
    """The decomposition from the distinct values and their PAV fit (see :func:`decompose`)."""
    n = float(d.count.sum())
    n0 = d.count - d.events
    s_x = float(score_sums(d.value, d.events, n0, score)) / n
    s_c = float(score_sums(fit, d.events, n0, score)) / n
    s_r = float(climatology_score(d.events.sum() / n, score))
    return {"score": s_x, "mcb": s_x - s_c, "dsc": s_r - s_c, "unc": s_r, "recalibrated": s_c}


def decompose(x: np.ndarray, y: np.ndarray, *, score: Score = "brier") -> dict[str, float]:
    """CORP score decomposition S̄_X = MCB − DSC + UNC (Dimitriadis et al. 2021, eq. 4) of forecasts x of events y.

    S̄_X = mean S(x_i, y_i); S̄_C = mean S(x̂_i, y_i) with x̂ the PAV fit (:func:`pav`); UNC = S̄_R = S(ȳ) of the
    climatology; MCB = S̄_X − S̄_C, DSC = S̄_R − S̄_C.  All sums run over the distinct forecast values (one sort).

    Parameters
    ----------
    x : ndarray of shape (n,)
        Forecasts in [0, 1].
    y : ndarray of shape (n,)
        Binary outcomes.
    score : {"brier", "log"}, default "brier"
        ``"brier"`` (x − y)² or ``"log"`` −y log x − (1 − y) log(1 − x) (0 log 0 = 0).

    Returns
    -------
    dict of str to float
        ``score``, ``mcb``, ``dsc``, ``unc`` and ``recalibrated`` (= S̄_C).

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.

    Murphy, A. H. (1973). A new vector partition of the probability score. Journal of Applied Meteorology
    12(4), 595–600.
    """
    d = distinct(x, y)
    if d.value.size == 0:
        raise ValueError("no rows: the decomposition needs at least one forecast")
    fit = np.clip(isotonic_regression(d.events / d.count, weights=d.count).x, 0.0, 1.0)
    return decompose_distinct(d, fit, score)


# =============================================================================================
# Murphy diagram
# =============================================================================================


def murphy_table(x: np.ndarray, y: np.ndarray, *, thetas: np.ndarray | int = 201) -> pd.DataFrame:
    """Murphy diagram of probability forecasts x of binary events y: the mean elementary score at every θ.

    S̄_θ = [θ · #{x_i > θ, y_i = 0} + (1 − θ) · #{x_i ≤ θ, y_i = 1}] / N; ∫₀¹ S̄_θ dθ = Brier/2 (S̄_θ is piecewise
    linear with kinks at the forecast values).  O(N log N + T log N).

    Parameters
    ----------
    x : ndarray of shape (n,)
        Forecasts in [0, 1].
    y : ndarray of shape (n,)
        Binary outcomes.
    thetas : ndarray or int, default 201
        The thresholds θ, or the number of equally spaced θ in [0, 1].

    Returns
    -------
    pandas.DataFrame
        Columns :data:`MURPHY_COLUMNS`.

    References
    ----------
    Ehm, W., Gneiting, T., Jordan, A. & Krüger, F. (2016). Of quantiles and expectiles: consistent scoring
    functions, Choquet representations and forecast rankings. Journal of the Royal Statistical Society B 78(3),
    505–562.
    """
    return murphy_of_distinct(distinct(x, y), thetas)


def murphy_of_distinct(d: Distinct, thetas: np.ndarray | int) -> pd.DataFrame:
    th = np.linspace(0.0, 1.0, int(thetas)) if np.ndim(thetas) == 0 else np.asarray(thetas, dtype=float)
    n = float(d.count.sum())
    cum_n = np.r_[0.0, np.cumsum(d.count)]
    cum_h = np.r_[0.0, np.cumsum(d.events)]
    k = np.searchsorted(d.value, th, side="right")  # values ≤ θ: the first k distinct values
    hits_le = cum_h[k]
    zeros_gt = (n - cum_h[-1]) - (cum_n[k] - cum_h[k])
    return pd.DataFrame({"theta": th, "score": (th * zeros_gt + (1.0 - th) * hits_le) / n})


def binary_events(
    labels: np.ndarray | None, probs: np.ndarray | None, *, target: CorpTarget = "top_label",
    confidence: np.ndarray | None = None, predicted: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of the binary event a CORP diagram is about.

    ``"positive"`` (K = 2): x = p_i1, y = 1[label = 1]; ``"top_label"``: x = max_k p_ik, y = 1[arg-max = label] (or
    the given ``confidence`` and ``predicted`` class of a top-label-only file).

    Parameters
    ----------
    labels : ndarray of shape (n,) or None
        Labels.
    probs : ndarray of shape (n, k) or None
        Probabilities (None: a top-label-only file).
    target : {"top_label", "positive"}, default "top_label"
        The event.
    confidence : ndarray of shape (n,) or None, default None
        Confidences of a top-label-only file.
    predicted : ndarray of shape (n,) or None, default None
        Predicted classes of a top-label-only file.

    Returns
    -------
    x : ndarray of shape (n,)
        Forecasts.
    y : ndarray of shape (n,)
        Outcomes, 0 or 1.

    References
    ----------
    Dimitriadis, T., Gneiting, T. & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
    classifiers. PNAS 118(8), e2016191118.

    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    if probs is None:
        if confidence is None or predicted is None:
            raise ValueError("binary_events needs probs, or confidence and predicted")
        return np.asarray(confidence, dtype=float), (np.asarray(predicted) == np.asarray(labels)).astype(float)
    p = np.asarray(probs, dtype=float)
    if target == "positive":
        if p.shape[1] != 2:
            raise ValueError(f"the positive class needs binary predictions (K = 2), got K = {p.shape[1]}")
        return p[:, 1].copy(), (np.asarray(labels) == 1).astype(float)
    pred, conf = top_label(p)
    return conf, (pred == np.asarray(labels)).astype(float)
