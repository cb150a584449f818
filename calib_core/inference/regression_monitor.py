"""Anytime-valid calibration monitor of regression forecasts: bets on the PIT with a predictable histogram.

Under probabilistic calibration the PIT u = F(y) is uniform, so the *cell* of the PIT in a fixed partition of [0, 1]
into cells of null masses π_1, …, π_K has law π.  That is exact, whatever the forecast type, when the cells are
those the forecast states:

* **quantile sets**: the cells between consecutive stated levels, (τ_k, τ_{k+1}], π_k = τ_{k+1} − τ_k — the cell is
  read off the stated quantiles (q_{τ_k} < y ≤ q_{τ_{k+1}}), never from an interpolated law;
* **ensembles** of M members: the randomised verification rank, M + 1 cells of mass 1/(M + 1);
* **other distributions** (Gaussians …): the PIT in ``bins`` equal cells.

A target tied with members or stated quantiles belongs to a range of cells [a_i, b_i].  For ensembles its
randomised rank is uniform over the range (Czado, Gneiting & Held 2009), so the bet is averaged over it (exact); a
quantile set states no law inside an atom, so the row pays the smallest bet of its range, which is at most the bet
on the unknown randomised cell (the factor's mean stays ≤ 1).  Fine cells are
merged into at most ``bins`` contiguous groups of about equal mass (the groups are fixed in advance, so their null
masses stay exact).

**The bet** (Arnold, Henzi & Ziegel 2023): at step t, strategy m = (W, γ) estimates the cell law from the outcomes
of the W steps up to t − h only (h the lag) with a Dirichlet–multinomial posterior mean,
q̂_g = (a π_g + n_g)/(a + n) (a = number of groups: one pseudo-row spread by π), and bets the density ratio
sharpened by γ:

    g^m_t(cell) = (q̂/π)^γ / Σ_g π_g (q̂_g/π_g)^γ,   Σ_g π_g g^m_t(g) = 1,

so each row's factor f_i = Σ_{k ∈ [a_i, b_i]} π_k g(k) / Σ_{k ∈ [a_i, b_i]} π_k has mean 1 under calibration.  The
step's factor is the average over its rows (valid under any dependence within a time, e.g. a date effect shared by
all locations), and the e-process is the mixture over strategies, with h interleaved sequences for lag h
(:mod:`calib_core.base.eprocess`).  Sharpening (γ > 1) pays because a step averages many rows: the average of f is
close to E_q f, which a sharper bet makes larger; the mixture over γ ∈ {1, 2, 4} and windows W ∈ {8, 4} keeps the
bets that work.  Short windows let the bet follow a change instead of being anchored by months of calibrated past.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..base.eprocess import MonitorResult, combine_eprocess, monitor_result, time_steps
from ..base.eprocess_inputs import model_rows, monitor_time, resolve_lag
from ..base.predictions import InputError, PredictionSet
from ..base.regression import QuantileSet, SampleSet
from ..metrics.regression_stated import pit_cells

__all__ = ["pit_monitor", "cell_monitor", "histogram_bets", "cell_counts", "multinomial_change_score",
           "prediction_cells",
           "DEFAULT_WINDOWS", "DEFAULT_POWERS"]

#: Windows (in steps) of the histograms the strategies learn from
DEFAULT_WINDOWS = (8, 4)
#: Sharpening exponents γ of the bets
DEFAULT_POWERS = (1.0, 2.0, 4.0)



def _groups(masses: np.ndarray, bins: int) -> np.ndarray:
    """Contiguous groups of about equal null mass, at most ``bins`` of them: group of each fine cell."""
    pi = np.asarray(masses, dtype=float)
    mid = np.cumsum(pi) - pi / 2.0
    raw = np.minimum(np.floor(mid * max(int(bins), 1)).astype(np.int64), max(int(bins), 1) - 1)
    return np.unique(raw, return_inverse=True)[1].ravel()


def cell_counts(step: np.ndarray, lo: np.ndarray, hi: np.ndarray, masses: np.ndarray, n_steps: int, *,
                bins: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of PIT cells per step, in at most ``bins`` contiguous groups of about equal null mass.

    N_tg = Σ_{i at t} Σ_{k ∈ [lo_i, hi_i], group(k) = g} π_k / Σ_{k ∈ [lo_i, hi_i]} π_k: a row tied over several
    cells is spread over them in proportion to their null mass.

    Parameters
    ----------
    step : ndarray of int of shape (N,)
        Each row's step 0..T−1.
    lo, hi : ndarray of int of shape (N,)
        The range of fine cells of each row.
    masses : ndarray of shape (K,)
        Null masses of the fine cells.
    n_steps : int
        T.
    bins : int, default 10
        At most this many groups.

    Returns
    -------
    counts : ndarray of shape (T, G)
        N_tg.
    group_masses : ndarray of shape (G,)
        Null mass of each group.
    group : ndarray of int of shape (K,)
        Group of each fine cell.

    References
    ----------
    .. [1] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    .. [2] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.

    Examples
    --------
    >>> c, pi, g = cell_counts(np.array([0, 0]), np.array([0, 1]), np.array([0, 2]), np.full(3, 1 / 3), 1)
    >>> np.round(c, 3).tolist(), g.tolist()
    ([[1.0, 0.5, 0.5]], [0, 1, 2])
    """
    pi_fine = np.asarray(masses, dtype=float)
    group = _groups(pi_fine, bins)
    n_groups = int(group.max()) + 1
    pi = np.bincount(group, weights=pi_fine, minlength=n_groups)
    step = np.asarray(step, dtype=np.int64)
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    t_n = int(n_steps)
    width = hi - lo + 1
    rep = np.repeat(np.arange(lo.size), width)
    cells = lo[rep] + (np.arange(rep.size) - np.repeat(np.cumsum(width) - width, width))
    cum_fine = np.concatenate([[0.0], np.cumsum(pi_fine)])
    share = pi_fine[cells] / (cum_fine[hi + 1] - cum_fine[lo])[rep]
    counts = np.bincount(step[rep] * n_groups + group[cells], weights=share,
                         minlength=t_n * n_groups).reshape(t_n, n_groups)
    return counts, pi, group


def multinomial_change_score(counts: np.ndarray, masses: np.ndarray, end: int) -> np.ndarray:
    """Log evidence of the best cell law in hindsight on the steps s … t* against the null masses, for s ≤ t*.

    ℓ(s) = Σ_g N_g(s) log(N_g(s)/(N(s) π_g)), N_g(s) = Σ_{u=s}^{t*} N_ug: the log generalised likelihood ratio
    of "the cells after s follow some law q" against "they follow π"; its argmax is the maximum likelihood
    estimate of the start of a change (Hinkley 1970).

    Parameters
    ----------
    counts : ndarray of shape (T, G)
        Cell counts per step (:func:`cell_counts`).
    masses : ndarray of shape (G,)
        Null masses π_g.
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
    >>> c = np.array([[1.0, 1.0], [0.0, 2.0], [0.0, 2.0]])
    >>> int(np.argmax(multinomial_change_score(c, np.array([0.5, 0.5]), 2)))
    1
    """
    part = np.asarray(counts, dtype=float)[: int(end) + 1]
    tail = np.cumsum(part[::-1], axis=0)[::-1]  # N_g(s)
    total = tail.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(tail > 0, tail * np.log(tail / (total * np.asarray(masses, dtype=float))), 0.0)
    return terms.sum(axis=1)


def histogram_bets(step: np.ndarray, lo: np.ndarray, hi: np.ndarray, masses: np.ndarray, n_steps: int, *,
                   lag: int = 1, bins: int = 10, windows=DEFAULT_WINDOWS, powers=DEFAULT_POWERS,
                   prior: float | None = None, ties: str = "average") -> tuple[np.ndarray, np.ndarray]:
    """Log betting factors of the histogram strategies: per strategy m = (W, γ) and step t, log F^m_t.

    F^m_t = (1/n_t) Σ_{i at t} Σ_{k ∈ [lo_i, hi_i]} π_k g^m_t(k) / Σ_{k ∈ [lo_i, hi_i]} π_k, with g^m_t the sharpened
    Dirichlet–multinomial density ratio learned from steps t − h − W + 1 … t − h (module docstring); with
    ``ties="min"`` a tied row pays min_{k ∈ [lo_i, hi_i]} g^m_t(k) instead.

    Parameters
    ----------
    step : ndarray of int of shape (N,)
        Each row's step 0..T−1.
    lo, hi : ndarray of int of shape (N,)
        The range of fine cells of each row (lo = hi without ties).
    masses : ndarray of shape (K,)
        Null masses π_k of the fine cells (sum 1).
    n_steps : int
        T.
    lag : int, default 1
        h: the bet of step t uses steps ≤ t − h.
    bins : int, default 10
        At most this many groups of cells.
    windows : sequence of int or None, default (8, 4)
        Histogram windows in steps (None: every earlier step).
    powers : sequence of float, default (1, 2, 4)
        Sharpening exponents γ.
    prior : float, optional
        Dirichlet pseudo-rows a (default: the number of groups).
    ties : {"average", "min"}, default "average"
        A row tied over several cells: "average" when its randomised cell is uniform over them in proportion to
        their mass (ensemble ranks: exact); "min" when only the range is known (a target equal to stated
        quantiles: the smallest bet of the range is at most the bet on the unknown randomised cell, so the
        factor's mean stays ≤ 1).

    Returns
    -------
    log_factors : ndarray of shape (M, T)
        log F^m_t, M = len(windows) · len(powers).
    floors : ndarray of shape (M, T + h − 1)
        The smallest factor each strategy can pay at each step (for the lag correction).

    References
    ----------
    .. [1] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [2] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663.
    .. [3] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [4] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [5] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.

    Examples
    --------
    >>> lf, _ = histogram_bets(np.array([0, 1, 1]), np.array([0, 1, 1]), np.array([0, 1, 1]),
    ...                        np.array([0.5, 0.5]), 2, windows=(None,), powers=(1.0,))
    >>> np.round(np.exp(lf), 3).tolist()  # step 0 bets uniform; step 1 has learnt that cell 0 came up
    [[1.0, 0.667]]
    """
    pi_fine = np.asarray(masses, dtype=float)
    counts, pi, group = cell_counts(step, lo, hi, pi_fine, n_steps, bins=bins)
    n_groups = pi.size
    step = np.asarray(step, dtype=np.int64)
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    h = int(lag)
    t_n = int(n_steps)
    cum_fine = np.concatenate([[0.0], np.cumsum(pi_fine)])
    if ties not in ("average", "min"):
        raise ValueError(f"ties must be 'average' or 'min', got {ties!r}")
    tied = hi > lo
    if ties == "min" and tied.any():
        width = (hi - lo + 1)[tied]
        rep_t = np.repeat(np.flatnonzero(tied), width)
        starts = np.cumsum(width) - width
        cells_t = lo[rep_t] + (np.arange(rep_t.size) - np.repeat(starts, width))
    cum = np.concatenate([np.zeros((1, n_groups)), np.cumsum(counts, axis=0)])  # cum[k] = Σ_{s<k}
    states = np.arange(t_n + h - 1)
    top = np.clip(states - h + 1, 0, t_n)
    a = float(n_groups if prior is None else prior)
    n_rows = np.bincount(step, minlength=t_n).astype(float)
    out, floors = [], []
    for w in windows:
        bottom = np.zeros_like(top) if w is None else np.clip(top - int(w), 0, t_n)
        cnt = cum[top] - cum[bottom]
        q = (a * pi + cnt) / (a + cnt.sum(axis=1, keepdims=True))
        for gamma in powers:
            r = (q / pi) ** float(gamma)
            g = r / (r * pi).sum(axis=1, keepdims=True)  # (states, groups), Σ π g = 1
            floors.append(g.min(axis=1))
            pg = np.concatenate([np.zeros((g.shape[0], 1)), np.cumsum(pi_fine * g[:, group], axis=1)], axis=1)
            f = (pg[step, hi + 1] - pg[step, lo]) / (cum_fine[hi + 1] - cum_fine[lo])
            if ties == "min" and tied.any():
                f[tied] = np.minimum.reduceat(g[step[rep_t], group[cells_t]], starts)
            with np.errstate(divide="ignore"):
                out.append(np.log(np.bincount(step, weights=f, minlength=t_n) / np.maximum(n_rows, 1.0)))
    return np.array(out).reshape(-1, t_n), np.array(floors).reshape(-1, t_n + h - 1)


def prediction_cells(y: np.ndarray, dist: Any, *, bins: int = 10,
                     seed: int | None = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The PIT cell range of every row and the cells' null masses, by forecast type (module docstring).

    Quantile sets: lo = #{interior q_τ < y}, hi = #{interior q_τ ≤ y}, π = Δτ between 0, the interior levels and 1;
    ensembles: lo = #{x < y}, hi = #{x ≤ y}, π = 1/(M + 1); other distributions: lo = hi = ⌊bins · u⌋ with u the
    (randomised, for distributions with atoms) PIT.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    dist : PredictiveDistribution
        The forecasts.
    bins : int, default 10
        Cells of the PIT for distributions that state no cells.
    seed : int or None, default 0
        Seed of the randomised PIT (distributions with atoms other than ensembles).

    Returns
    -------
    lo, hi : ndarray of int64 of shape (N,)
        Cell range of each row.
    masses : ndarray of shape (K,)
        Null masses of the cells.

    References
    ----------
    .. [1] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [2] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663.
    .. [3] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [4] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [5] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.

    Examples
    --------
    >>> from calib_core.base.regression import QuantileSet
    >>> qs = QuantileSet([0.25, 0.5, 0.75], [[-1.0, 0.0, 1.0]] * 2)
    >>> lo, hi, pi = prediction_cells(np.array([0.5, 1.0]), qs)
    >>> lo.tolist(), hi.tolist(), pi.tolist()
    ([2, 2], [2, 3], [0.25, 0.25, 0.25, 0.25])
    """
    y = np.asarray(y, dtype=float)
    if isinstance(dist, QuantileSet):
        edges, interior = pit_cells(dist.levels)
        q = dist.values[:, interior]
        lo = np.count_nonzero(q < y[:, None], axis=1)
        hi = np.count_nonzero(q <= y[:, None], axis=1)
        return lo.astype(np.int64), hi.astype(np.int64), np.diff(edges)
    if isinstance(dist, SampleSet):
        m = dist.n_samples
        lo = np.count_nonzero(dist.samples < y[:, None], axis=1)
        hi = np.count_nonzero(dist.samples <= y[:, None], axis=1)
        return lo.astype(np.int64), hi.astype(np.int64), np.full(m + 1, 1.0 / (m + 1))
    rng = np.random.default_rng(seed) if getattr(dist, "is_discrete", False) else None
    u = np.clip(np.asarray(dist.pit(y, rng), dtype=float), 0.0, 1.0)
    cell = np.minimum(np.floor(u * bins).astype(np.int64), int(bins) - 1)
    return cell, cell.copy(), np.full(int(bins), 1.0 / int(bins))


def cell_monitor(cells: np.ndarray, masses: np.ndarray, time: Any, *, upper: np.ndarray | None = None,
                 model: Any = None, alpha: float = 0.05, lag: int = 1, bins: int = 10, windows=DEFAULT_WINDOWS,
                 powers=DEFAULT_POWERS, prior: float | None = None, ties: str = "average") -> MonitorResult:
    """The calibration monitor on PIT cells of known null masses (arrays-first form of :func:`pit_monitor`).

    Per model, e_t = (1/(hM)) Σ_{j,m} ∏_{s ≤ t, s ≡ j (mod h)} F^m_s with the histogram factors of
    :func:`histogram_bets`; alarm at the first t with e^guar_t ≥ 1/α, P(alarm) ≤ α under calibration.

    Parameters
    ----------
    cells : ndarray of int of shape (N,)
        Each row's cell 0..K−1 (the first of its range when ``upper`` is given).
    masses : ndarray of shape (K,)
        Null masses π_k (positive, sum 1): the probability of each cell under calibration.
    time : array-like of shape (N,)
        Time of each row; rows with the same time are one step.
    upper : ndarray of int of shape (N,), optional
        Last cell of each row's range (ties); default ``cells``.
    model : array-like of shape (N,), optional
        Model of each row: one monitor per model.
    alpha : float, default 0.05
        Level; the alarm line is 1/α.
    lag : int, default 1
        h: outcomes known h steps after the forecast.
    bins, windows, powers, prior, ties
        The bets (:func:`histogram_bets`).

    Returns
    -------
    MonitorResult
        Path, alarm, change point and sentence per model.

    References
    ----------
    .. [1] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [2] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663.
    .. [3] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [4] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [5] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> week = np.repeat(np.arange(20), 50)
    >>> cells = rng.integers(0, 4, week.size)
    >>> cells[week >= 10] = 3  # from week 10 every target falls in the top quarter
    >>> r = cell_monitor(cells, np.full(4, 0.25), week)
    >>> r.alarm_time, r.change_point
    (13, 10)
    """
    lo = np.asarray(cells, dtype=np.int64)
    hi = lo if upper is None else np.asarray(upper, dtype=np.int64)
    pi = np.asarray(masses, dtype=float)
    if pi.ndim != 1 or np.any(pi <= 0) or abs(pi.sum() - 1.0) > 1e-6:
        raise ValueError("masses must be positive and sum to 1")
    if lo.size and (lo.min() < 0 or hi.max() >= pi.size or np.any(hi < lo)):
        raise ValueError(f"cells must lie in 0..{pi.size - 1} with upper >= cells")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    t_all = np.asarray(time)
    if t_all.shape != lo.shape:
        raise ValueError(f"time must have one value per row ({lo.size}), got shape {t_all.shape}")
    groups = model_rows(model, lo.size)
    h = resolve_lag(lag, None)
    parts = []
    for name, rows in groups:
        step, labels = time_steps(t_all[rows])
        lf, fl = histogram_bets(step, lo[rows], hi[rows], pi, labels.size, lag=h, bins=bins, windows=windows,
                                powers=powers, prior=prior, ties=ties)
        log_e, log_g = combine_eprocess(lf, fl, h)
        counts, group_pi, _ = cell_counts(step, lo[rows], hi[rows], pi, labels.size, bins=bins)
        parts.append(dict(model=str(name), labels=labels, n=np.bincount(step, minlength=labels.size),
                          log_e=log_e, log_guaranteed=log_g,
                          change_score=partial(multinomial_change_score, counts, group_pi)))
    method = (f"PIT cells bet on by histograms of the last {', '.join(str(w) for w in windows)} steps "
              f"(sharpened by {', '.join(f'{g:g}' for g in powers)}), rows of a time averaged, lag {h}")
    return monitor_result(parts, alpha=alpha, lag=h, method=method)


def pit_monitor(data: PredictionSet | np.ndarray, time: Any = None, *, model: Any = None, alpha: float = 0.05,
                lag: int | str = "auto", bins: int = 10, windows=DEFAULT_WINDOWS, powers=DEFAULT_POWERS,
                prior: float | None = None, seed: int | None = 0) -> MonitorResult:
    """Anytime-valid calibration monitor of regression forecasts over time (Arnold, Henzi & Ziegel 2023).

    e_t = (1/(hM)) Σ_{j,m} ∏_{s ≤ t, s ≡ j (mod h)} (1/n_s) Σ_{i at s} f^m_i, with f^m_i the betting factor of
    strategy m (a sharpened Dirichlet–multinomial histogram of earlier PIT cells, :func:`histogram_bets`) at row
    i's PIT cell.  Under calibration (targets drawn from the forecasts) P(∃ t: e^guar_t ≥ 1/α) ≤ α (Ville 1939),
    however often the path is looked at.

    Parameters
    ----------
    data : PredictionSet or ndarray
        A regression prediction set (quantile sets: the cells between stated levels; ensembles: the randomised
        rank; other distributions: the PIT in ``bins`` cells), or PIT values u ∈ [0, 1] of shape (N,).
    time : array-like, str or None, default None
        Time of each row (arrays: required); for a set, a column name or None (:func:`monitor_time`).
    model : array-like, optional
        Model of each row for arrays (a set uses its model column).
    alpha : float, default 0.05
        Level; the alarm line is 1/α.
    lag : int or "auto", default "auto"
        h, steps between a forecast and its outcome; "auto": 1 + the largest hub horizon, else 1.
    bins : int, default 10
        Cells of the PIT, and at most this many groups of stated cells.
    windows, powers, prior
        The bets (:func:`histogram_bets`).
    seed : int or None, default 0
        Seed of the randomised PIT of distributions with atoms.

    Returns
    -------
    MonitorResult
        ``path`` (model, time, n, factor, e_value, log10_e, e_guaranteed, alarm), ``alarm_time``,
        ``change_point``, ``threshold`` = 1/α, ``sentence``.

    Raises
    ------
    InputError
        A set without targets, forecasts or a time.

    References
    ----------
    .. [1] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [2] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663.
    .. [3] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [4] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [5] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.

    Examples
    --------
    >>> from scipy.stats import norm
    >>> rng = np.random.default_rng(1)
    >>> week = np.repeat(np.arange(52), 50)
    >>> y = rng.standard_normal(week.size) + 0.8 * (week >= 30)  # the forecasts N(0, 1) go biased at week 30
    >>> r = pit_monitor(norm.cdf(y), week)
    >>> r.alarm_time, r.change_point
    (35, 30)
    >>> pit_monitor(norm.cdf(rng.standard_normal(week.size)), week).sentence
    'No alarm: after 52 time steps the evidence against calibration is e = 1.03, below the alarm line 20.'
    """
    common = dict(alpha=alpha, bins=bins, windows=windows, powers=powers, prior=prior)
    if not isinstance(data, PredictionSet):
        if time is None:
            raise ValueError("time is required with PIT values: one time per row")
        u = np.asarray(data, dtype=float)
        if np.any(~np.isfinite(u)) or np.any((u < 0) | (u > 1)):
            raise ValueError("PIT values must be finite and in [0, 1]")
        cell = np.minimum(np.floor(u * bins).astype(np.int64), int(bins) - 1)
        return cell_monitor(cell, np.full(int(bins), 1.0 / int(bins)), time, model=model,
                            lag=resolve_lag(lag, None), **common)
    pset = data
    if pset.task != "regression":
        raise InputError(f"{pset.source}: pit_monitor needs regression forecasts; this file holds "
                         f"{pset.task} predictions (use probability_monitor).", source=pset.source)
    if pset.dist is None or pset.y is None:
        raise InputError(f"{pset.source}: the monitor needs predictive distributions (a mean and a spread, "
                         "quantiles or members) and targets; this file has point predictions only.",
                         source=pset.source, hint="add a std, quantile or member columns.")
    t_all = monitor_time(pset, time)
    lo, hi, masses = prediction_cells(pset.y, pset.dist, bins=bins, seed=seed)
    return cell_monitor(lo, masses, t_all, upper=hi, model=pset.model, lag=resolve_lag(lag, pset),
                        ties="min" if isinstance(pset.dist, QuantileSet) else "average", **common)
