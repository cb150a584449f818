"""Anytime-valid calibration monitor of probability forecasts: test martingales of y − p (Henzi & Ziegel 2022).

A calibrated probability forecast p of an event y ∈ {0, 1} has E[y − p | forecast] = 0.  Every bet
1 + λ_i (y_i − p_i) with λ_i fixed before y_i is seen has conditional mean 1, and is nonnegative for every outcome
when −1/(1 − p_i) ≤ λ_i ≤ 1/p_i.  The monitor bets a share c ∈ (0, 1] of the largest stake the row allows, on
each side:

    "more events than forecast":  f_i = 1 + (c/p_i)(y_i − p_i) = (1 − c) + c · y_i/p_i,
    "fewer events than forecast": f_i = 1 − (c/(1 − p_i))(y_i − p_i) = (1 − c) + c · (1 − y_i)/(1 − p_i),

— the likelihood ratio of the forecast tilted towards the event (or away from it), mixed with 1 − c of no bet.
Two families of events are watched: the event itself (two classes: y = 1[label = positive class], p its
probability) and the top label (every task: y = 1[the predicted class is right], p = the confidence), whose mean
y − p is the accuracy minus the confidence: negative for over-confident forecasts even when a symmetric
over-confidence leaves the event's rate right.

The rows of one time are one step, their factors averaged (valid under any dependence within a time); the
e-process is the mixture over families, sides and shares c ∈ {0.25, 0.5, 0.9}, with h interleaved sequences for
lag h (:mod:`calib_core.base.eprocess`).  The smallest factor a strategy can pay is 1 − c (for the lag correction).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..base.eprocess import MonitorResult, combine_eprocess, monitor_result, time_steps
from ..base.eprocess_inputs import model_rows, monitor_time, resolve_lag
from ..base.predictions import InputError, PredictionSet

__all__ = ["probability_monitor", "event_bets", "monitor_events", "mean_change_score", "DEFAULT_SHARES"]

#: Shares c of the largest stake a row allows
DEFAULT_SHARES = (0.25, 0.5, 0.9)

_EPS = 1e-12


def event_bets(step: np.ndarray, outcome: np.ndarray, prob: np.ndarray, n_steps: int, *,
               shares=DEFAULT_SHARES) -> tuple[np.ndarray, np.ndarray]:
    """Log betting factors of the y − p strategies of one family: per side and share c, and step t, log F_t.

    F^{+,c}_t = (1 − c) + c · mean_{i at t} y_i/p_i,  F^{−,c}_t = (1 − c) + c · mean_{i at t} (1 − y_i)/(1 − p_i).

    Parameters
    ----------
    step : ndarray of int of shape (N,)
        Each row's step 0..T−1.
    outcome : ndarray of shape (N,)
        y_i ∈ {0, 1}.
    prob : ndarray of shape (N,)
        p_i ∈ [0, 1], the forecast probability of y_i = 1.
    n_steps : int
        T.
    shares : sequence of float, default (0.25, 0.5, 0.9)
        c ∈ (0, 1].

    Returns
    -------
    log_factors : ndarray of shape (2 · len(shares), T)
        log F for (+, c) then (−, c).
    floors : ndarray of shape (2 · len(shares),)
        1 − c: the smallest factor of each strategy.

    References
    ----------
    .. [1] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663.
    .. [2] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.

    Examples
    --------
    >>> lf, fl = event_bets(np.array([0, 0]), np.array([1, 1]), np.array([0.5, 0.5]), 1, shares=(0.5,))
    >>> np.round(np.exp(lf), 3).tolist(), fl.tolist()  # two hits at p = 0.5: bet "more events" doubles half
    ([[1.5], [0.5]], [0.5, 0.5])
    """
    step = np.asarray(step, dtype=np.int64)
    y = np.asarray(outcome, dtype=float)
    p = np.clip(np.asarray(prob, dtype=float), _EPS, 1.0 - _EPS)
    n = np.maximum(np.bincount(step, minlength=n_steps).astype(float), 1.0)
    up = np.bincount(step, weights=y / p, minlength=n_steps) / n
    down = np.bincount(step, weights=(1.0 - y) / (1.0 - p), minlength=n_steps) / n
    c = np.asarray(shares, dtype=float)[:, None]
    with np.errstate(divide="ignore"):
        lf = np.log(np.concatenate([(1 - c) + c * up[None], (1 - c) + c * down[None]]))
    return lf, np.concatenate([1 - c[:, 0], 1 - c[:, 0]])


def mean_change_score(sums: np.ndarray, variances: np.ndarray, end: int) -> np.ndarray:
    """Log evidence of the best shift of y − p in hindsight on the steps s … t*, for s ≤ t*, over families.

    ℓ(s) = max_f (Σ_{u=s}^{t*} S_fu)² / (2 Σ_{u=s}^{t*} V_fu), S_fu = Σ_{i at u} (y_i − p_i), V_fu = Σ_{i at u}
    p_i (1 − p_i): the Gaussian log likelihood ratio of a shift of the mean of y − p after s; its argmax is the
    maximum likelihood estimate of the start of a change (Hinkley 1970).

    Parameters
    ----------
    sums, variances : ndarray of shape (F, T)
        S and V per family and step.
    end : int
        t*.

    Returns
    -------
    ndarray of shape (t* + 1,)
        ℓ(s), s = 0..t*.

    References
    ----------
    .. [1] Hinkley, D. V. (1970). Inference about the change-point in a sequence of random variables.
       *Biometrika* 57(1), 1–17.

    Examples
    --------
    >>> s = np.array([[0.1, -0.1, 3.0, 3.0]])
    >>> int(np.argmax(mean_change_score(s, np.full((1, 4), 10.0), 3)))
    2
    """
    e = int(end) + 1
    tail_s = np.cumsum(np.atleast_2d(sums)[:, :e][:, ::-1], axis=1)[:, ::-1]
    tail_v = np.cumsum(np.atleast_2d(variances)[:, :e][:, ::-1], axis=1)[:, ::-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        z2 = np.where(tail_v > 0, tail_s ** 2 / (2 * tail_v), 0.0)
    return z2.max(axis=0)


def monitor_events(families: list[tuple[np.ndarray, np.ndarray]], time: Any, *, model: Any = None,
                   alpha: float = 0.05, lag: int = 1, shares=DEFAULT_SHARES, method: str = "") -> MonitorResult:
    """The calibration monitor of one or more families of (outcome, probability) pairs, per model.

    e_t = (1/(hM)) Σ_{j,m} ∏_{s ≤ t, s ≡ j (mod h)} F^m_s over the M strategies of every family
    (:func:`event_bets`); alarm at the first t with e^guar_t ≥ 1/α.

    Parameters
    ----------
    families : list of (ndarray, ndarray)
        (y, p) per family, each of shape (N,).
    time : array-like of shape (N,)
        Time of each row; rows with the same time are one step.
    model : array-like of shape (N,), optional
        Model of each row.
    alpha : float, default 0.05
        Level; the alarm line is 1/α.
    lag : int, default 1
        h, steps between a forecast and its outcome.
    shares : sequence of float, default (0.25, 0.5, 0.9)
        The bets' shares c.
    method : str, default ""
        The bets, in words.

    Returns
    -------
    MonitorResult
        Path, alarm, change point and sentence per model.

    References
    ----------
    .. [1] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663 (correction: *Biometrika* 109(4), 1181).
    .. [2] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [3] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    t_all = np.asarray(time)
    n = t_all.shape[0]
    for y, p in families:
        if np.shape(y) != (n,) or np.shape(p) != (n,):
            raise ValueError(f"outcomes and probabilities must have one value per row ({n})")
    groups = model_rows(model, n)
    h = int(lag)
    parts = []
    for name, rows in groups:
        step, labels = time_steps(t_all[rows])
        lfs, fls, sums, variances = [], [], [], []
        for y, p in families:
            yy, pp = np.asarray(y, dtype=float)[rows], np.asarray(p, dtype=float)[rows]
            lf, fl = event_bets(step, yy, pp, labels.size, shares=shares)
            lfs.append(lf)
            fls.append(fl)
            sums.append(np.bincount(step, weights=yy - pp, minlength=labels.size))
            variances.append(np.bincount(step, weights=pp * (1 - pp), minlength=labels.size))
        lf = np.concatenate(lfs)
        floors = np.repeat(np.concatenate(fls)[:, None], labels.size + h - 1, axis=1)
        log_e, log_g = combine_eprocess(lf, floors, h)
        parts.append(dict(model=str(name), labels=labels, n=np.bincount(step, minlength=labels.size),
                          log_e=log_e, log_guaranteed=log_g,
                          change_score=partial(mean_change_score, np.array(sums), np.array(variances))))
    return monitor_result(parts, alpha=alpha, lag=h, method=method)


def _families(pset: PredictionSet) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    labels = np.asarray(pset.labels)
    if pset.top_label_only or pset.probs is None:
        conf = np.asarray(pset.confidence, dtype=float)
        return [((np.asarray(pset.point) == labels).astype(float), conf)], "the top label (hit − confidence)"
    probs = np.asarray(pset.probs, dtype=float)
    pred = probs.argmax(axis=1)
    top = ((pred == labels).astype(float), probs.max(axis=1))
    if probs.shape[1] == 2:
        return [((labels == 1).astype(float), probs[:, 1]), top], "the positive class (y − p) and the top label"
    return [top], "the top label (hit − confidence)"


def probability_monitor(data: PredictionSet | np.ndarray, p: np.ndarray | None = None, time: Any = None, *,
                        model: Any = None, alpha: float = 0.05, lag: int | str = "auto",
                        shares=DEFAULT_SHARES) -> MonitorResult:
    """Anytime-valid calibration monitor of probability forecasts over time (Henzi & Ziegel 2022).

    e_t = (1/(hM)) Σ_{j,m} ∏_{s ≤ t, s ≡ j (mod h)} (1/n_s) Σ_{i at s} (1 + λ^m_i (y_i − p_i)), with the bets λ of
    :func:`event_bets` on the event and on the top label; under calibration P(∃ t: e^guar_t ≥ 1/α) ≤ α however
    often the path is looked at (Ville 1939).

    Parameters
    ----------
    data : PredictionSet or ndarray
        A classification prediction set (two classes: the positive class and the top label; more classes or
        top-label-only files: the top label), or outcomes y ∈ {0, 1} of shape (N,).
    p : ndarray of shape (N,), optional
        With outcomes: the forecast probabilities of y = 1.
    time : array-like, str or None, default None
        Time of each row (arrays: required); for a set, a column name or None (its time column, else a hub's
        ``target_end_date``).
    model : array-like, optional
        Model of each row for arrays (a set uses its model column).
    alpha : float, default 0.05
        Level; the alarm line is 1/α.
    lag : int or "auto", default "auto"
        h, steps between a forecast and its outcome; "auto": 1 + the largest hub horizon, else 1.
    shares : sequence of float, default (0.25, 0.5, 0.9)
        The bets' shares c of the largest stake.

    Returns
    -------
    MonitorResult
        ``path`` (model, time, n, factor, e_value, log10_e, e_guaranteed, alarm), ``alarm_time``,
        ``change_point``, ``threshold`` = 1/α, ``sentence``.

    Raises
    ------
    InputError
        A set that is not a classification set or has no time.

    References
    ----------
    .. [1] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663 (correction: *Biometrika* 109(4), 1181).
    .. [2] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [3] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [4] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> week = np.repeat(np.arange(52), 50)
    >>> prob = rng.uniform(0.1, 0.6, week.size)
    >>> y = (rng.random(week.size) < prob + 0.15 * (week >= 30)).astype(int)  # events 15 points likelier from week 30
    >>> r = probability_monitor(y, prob, week)
    >>> r.alarm_time, r.change_point
    (44, 30)
    """
    if not isinstance(data, PredictionSet):
        if p is None or time is None:
            raise ValueError("outcomes need their probabilities p and a time per row")
        y = np.asarray(data, dtype=float)
        prob = np.asarray(p, dtype=float)
        if y.shape != prob.shape or np.any((y != 0) & (y != 1)):
            raise ValueError("outcomes must be 0 or 1, one per probability")
        if np.any(~np.isfinite(prob)) or np.any((prob < 0) | (prob > 1)):
            raise ValueError("probabilities must be finite and in [0, 1]")
        right = prob >= 0.5
        top = ((y == right).astype(float), np.where(right, prob, 1.0 - prob))
        return monitor_events([(y, prob), top], time, model=model, alpha=alpha, lag=resolve_lag(lag, None),
                              shares=shares, method="bets on y − p of the event and of the top label")
    pset = data
    if pset.task != "classification":
        raise InputError(f"{pset.source}: probability_monitor needs classification forecasts; this file holds "
                         f"{pset.task} predictions (use pit_monitor).", source=pset.source)
    families, words = _families(pset)
    return monitor_events(families, monitor_time(pset, time), model=pset.model, alpha=alpha,
                          lag=resolve_lag(lag, pset), shares=shares, method=f"bets on y − p of {words}")
