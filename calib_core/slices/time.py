"""Calibration over time: metrics per time window with their intervals and the
perfect-calibration band, and the rows of a brushed time range.

Windows (:func:`window_codes`): calendar windows of the time column — ``"hour"``, ``"day"``, ``"week"``
(Monday-based), ``"month"``, ``"quarter"``, ``"year"`` (``pandas.Period``) — or ``N`` equal spans between the first
and the last time (also for numeric time columns).  Every row gets the code of its window (one vectorised pass);
per-window sums are ``np.bincount`` over (model, window) codes, so the table costs O(N) whatever the number of
windows.  Empty windows have no row in the table.

Metrics per window (:func:`window_table`), each with an interval for its population value (``level``, default 95%)
and the band where a perfectly calibrated forecaster with the same predictions and the same window size falls
``level`` of the time:

regression (z = (y − μ)/σ, the central interval of nominal coverage c of every row's predictive distribution):

* ``coverage_<c>`` — share of targets in their interval; interval: Clopper–Pearson (as the regression inference
  layer); band: the central ``level`` range of Binomial(n, c)/n (exact).  For an ensemble the target is not c but
  the finite-M coverage of its order-statistic interval under exchangeability, averaged over the window's rows
  (:func:`~calib_core.metrics.regression_ensemble_ranks.order_interval_probability`: 7/9 = 77.8% for the "90%"
  interval [x_(1), x_(8)] of 8 members; the headline and the metric table use the same), and the band is
  Binomial(n, that mean)/n (the Poisson-binomial count has at most that spread: the band is conservative);
* ``z_mean`` — mean z; interval: t interval mean ± t_{n−1}·s/√n; band: ±z_{(1+level)/2}/√n (z has mean 0 and variance
  1 per row under perfect calibration; exact for Gaussian predictions);
* ``z_std`` — std z (ddof 1); interval: s·exp(±z·se) with se(log s) = sqrt((m₄/s⁴ − (n − 3)/(n − 1))/(4n)) (delta
  method with the window's own kurtosis); band: sqrt(χ²_{n−1} quantiles/(n − 1)) (exact for Gaussian predictions).

classification (top-label confidence c_i and hit h_i = 1[prediction correct], Guo et al. 2017):

* ``gap`` — mean confidence − accuracy (over-confidence; the signed calibration error of the window); interval:
  mean ± t·s/√n of d_i = c_i − h_i; band: ±z·sqrt(Σ c_i(1 − c_i))/n (under perfect calibration h_i ~ Bernoulli(c_i),
  so Σ d_i has mean 0 and that variance; normal approximation);
* ``accuracy`` — interval: Clopper–Pearson; band: mean confidence ± z·sqrt(Σ c_i(1 − c_i))/n.

Every row of the table also carries ``evidence`` = −log₁₀ p of the window's value against its perfect-calibration
law at the window's n, two-sided, computed in log space by the slice explorer's tails
(:mod:`calib_core.base.significance_tails`; finite however long the window): coverage exact binomial
Binomial(n, c); mean z normal (√n·z̄ ~ N(0, 1)); std z χ²_{n−1} of (n − 1)s²; gap and accuracy the exact binomial
of the hits at the window's mean confidence (conservative: a Poisson-binomial count's tails are at most the
binomial's, Hoeffding 1956).

:func:`window_rows` turns windows picked in the chart (their codes) into the row mask of the time range they span.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from ..base.predictions import PredictionSet
from ..base.regression import SampleSet
from ..base.significance_tails import (
    log_binom_cdf,
    log_binom_sf,
    log_chi2_cdf,
    log_chi2_sf,
    log_norm_two_sided,
    log_two_sided,
)
from ..data.timecol import time_kind
from ..data.timecol_units import as_unit_of, from_instants, instants, time_text
from ..metrics.classification import event_rows
from ..metrics.regression_ensemble_ranks import order_interval_probability

__all__ = [
    "CALENDAR",
    "WINDOW_METRICS",
    "WindowSpec",
    "clopper_pearson_arrays",
    "window_codes",
    "window_rows",
    "window_table",
]

#: Calendar windows and their ``pandas.Period`` frequency.
CALENDAR = {"hour": "h", "day": "D", "week": "W-SUN", "month": "M", "quarter": "Q", "year": "Y"}

#: Metrics of :func:`window_table` per task: key → (label, target value or None for a per-window target).
WINDOW_METRICS = {
    "regression": {"coverage": ("coverage", None), "z_mean": ("mean z", 0.0), "z_std": ("std z", 1.0)},
    "classification": {"gap": ("mean confidence − accuracy", 0.0), "accuracy": ("accuracy", None)},
}

WindowSpec = str | int
"""A calendar window name of :data:`CALENDAR` or a number N of equal spans."""


def window_codes(time: np.ndarray, window: WindowSpec) -> tuple[np.ndarray, pd.DataFrame]:
    """The window code of every row and the table of the windows.

    Parameters
    ----------
    time : ndarray of shape (n,)
        The time column (datetimes or numbers).
    window : str or int
        A name of :data:`CALENDAR` (datetime columns only: ``pandas.Period`` windows) or an int N ≥ 1: N equal
        spans of [min, max] (the last span closed at max).

    Returns
    -------
    codes : ndarray of shape (n,) of int64
        The window of every row.
    windows : DataFrame
        One row per non-empty window in time order: ``window`` (its code), ``start``, ``end`` (half-open
        [start, end)), ``label``.

    Raises
    ------
    ValueError
        If there is no row, a calendar window is asked of numbers, the name is unknown or N < 1.

    Examples
    --------
    >>> codes, windows = window_codes(np.array([0.0, 1.0, 2.0, 9.0, 10.0]), 5)
    >>> codes.tolist(), windows["window"].tolist()
    ([0, 0, 1, 2, 2], [0, 1, 2])

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.
    .. [2] McKinney, W. (2010). Data structures for statistical computing in Python. Proceedings of the 9th Python
       in Science Conference (SciPy 2010), 56–61.
    """
    t = np.asarray(time)
    kind = time_kind(t)
    if t.size == 0:
        raise ValueError("no rows with a time")
    if isinstance(window, str):
        if kind != "datetime":
            raise ValueError("calendar windows need dates/times; this time column holds numbers: choose N windows")
        if window not in CALENDAR:
            raise ValueError(f"window must be one of {list(CALENDAR)} or a number of windows, got {window!r}")
        # periods of the times in microseconds (exact, floored: never a wrap-around at the nanosecond range's ends)
        us, _, ok = instants(t)
        periods = pd.PeriodIndex(pd.DatetimeIndex(from_instants(us, np.zeros_like(us), ok, unit="us")).to_period(
            CALENDAR[window]))
        ordinals, codes = np.unique(periods.asi8, return_inverse=True)
        per = pd.PeriodIndex.from_ordinals(ordinals, freq=periods.freq)
        bounds = as_unit_of(np.concatenate([per.start_time.to_numpy(), (per + 1).start_time.to_numpy()]), t)
        starts, ends = bounds[:ordinals.size], bounds[ordinals.size:]
        unit = {"hour": "h", "day": "D", "week": "D", "month": "M", "quarter": None, "year": "Y"}[window]
        labels = [str(p) for p in per] if unit is None else time_text(starts, unit)
        if window == "week":
            labels = [f"week of {d}" for d in labels]
        table = pd.DataFrame({"window": np.arange(ordinals.size), "start": starts, "end": ends, "label": labels})
        return codes.astype(np.int64), table
    n_win = int(window)
    if n_win < 1:
        raise ValueError(f"the number of windows must be at least 1, got {window}")
    x = t.view(np.int64).astype(float) if kind == "datetime" else t.astype(float)
    lo, hi = float(x.min()), float(x.max())
    width = (hi - lo) / n_win if hi > lo else 1.0
    raw = np.clip(np.floor((x - lo) / width).astype(np.int64), 0, n_win - 1)
    used, codes = np.unique(raw, return_inverse=True)
    edges_lo = lo + used * width
    edges_hi = np.where(used == n_win - 1, np.nextafter(hi, np.inf), lo + (used + 1) * width)
    if kind == "datetime":
        starts, ends = _span_bounds(t, codes, edges_lo, edges_hi, used == n_win - 1)
        labels = [f"{a} – {b}" for a, b in zip(time_text(starts), time_text(ends), strict=True)]
    else:
        starts, ends = edges_lo, edges_hi
        labels = [f"{a:.4g} – {b:.4g}" for a, b in zip(starts, np.minimum(ends, hi))]
    table = pd.DataFrame({"window": np.arange(used.size), "start": starts, "end": ends, "label": labels})
    return codes.astype(np.int64), table


def _span_bounds(t: np.ndarray, codes: np.ndarray, edges_lo: np.ndarray, edges_hi: np.ndarray,
                 last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The [start, end) times of equal spans from their float edges (in the data's ticks).

    A float edge that rounds beyond int64 at the range's ends (float(2⁶³ − 1) = 2⁶³) is held inside it; a bound that
    float rounding put past a row of its window (up to half a float spacing: 128 ns today, 16 µs in the year 9999)
    is moved to that row, so every row lies in [start, end); the last span ends one tick after the last time, or at
    it when that tick would leave the unit's range."""
    i8 = t.view(np.int64)
    hi_i = int(i8.max())
    top = np.nextafter(2.0**63, -np.inf)
    first = np.iinfo(np.int64).min + 1  # the int64 minimum is NaT

    def ticks(edges: np.ndarray) -> np.ndarray:
        return np.maximum(np.round(np.minimum(edges, top)).astype(np.int64), first)

    lowest = np.full(edges_lo.size, np.iinfo(np.int64).max)
    highest = np.full(edges_lo.size, first)
    np.minimum.at(lowest, codes, i8)
    np.maximum.at(highest, codes, i8)
    after = hi_i + 1 if hi_i < np.iinfo(np.int64).max else hi_i
    starts = np.minimum(ticks(edges_lo), lowest)
    ends = np.where(last, after, np.maximum(ticks(edges_hi), np.minimum(highest, np.iinfo(np.int64).max - 1) + 1))
    return starts.view(t.dtype), ends.astype(np.int64).view(t.dtype)


def clopper_pearson_arrays(k: np.ndarray, n: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson intervals of k successes out of n, element-wise (as ``significance.clopper_pearson``).

    Parameters
    ----------
    k : ndarray
        Successes.
    n : ndarray
        Trials (broadcast with ``k``).
    level : float, default 0.95
        Confidence level.

    Returns
    -------
    lo, hi : ndarray
        The exact binomial interval of every element (lo = 0 at k = 0, hi = 1 at k = n).

    Examples
    --------
    >>> lo, hi = clopper_pearson_arrays(np.array([0, 5]), np.array([10, 10]))
    >>> [round(float(v), 4) for v in lo], [round(float(v), 4) for v in hi]
    ([0.0, 0.1871], [0.3085, 0.8129])

    References
    ----------
    .. [1] Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the
       case of the binomial. Biometrika, 26(4), 404–413.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k == 0, 0.0, special.betaincinv(np.maximum(k, 1e-300), n - k + 1, a))
        hi = np.where(k == n, 1.0, special.betaincinv(k + 1, np.maximum(n - k, 1e-300), 1.0 - a))
    return lo, hi


def _evidence(log_p: np.ndarray) -> np.ndarray:
    return -np.asarray(log_p, dtype=float) / np.log(10.0) + 0.0


def _sums(codes: np.ndarray, size: int, *values: np.ndarray) -> list[np.ndarray]:
    return [np.bincount(codes, weights=v, minlength=size) for v in values]


def _regression_rows(y: np.ndarray, dist: Any, coverage: float) -> dict[str, np.ndarray]:
    mu = np.asarray(dist.mean(), dtype=float)
    sd = np.asarray(dist.std(), dtype=float)
    lo, hi = dist.interval(coverage)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (np.asarray(y, dtype=float) - mu) / sd
    # the coverage a calibrated forecaster has per row: c, or an ensemble's finite-M exchangeability value
    expect = order_interval_probability(y, dist.samples, coverage) if isinstance(dist, SampleSet) else \
        np.full(z.shape, coverage)
    return {"z": z, "hit": ((y >= lo) & (y <= hi)).astype(float), "expect": expect}


def _regression_stats(codes, size, r, coverage, level) -> list[dict[str, np.ndarray]]:
    z, hit = r["z"], r["hit"]
    n, k, s1, se_ = _sums(codes, size, np.ones_like(z), hit, z, r["expect"])
    p_exp = np.where(n > 0, se_ / np.maximum(n, 1), coverage)  # the window's expected coverage (c unless ensemble)
    mean = s1 / np.maximum(n, 1)
    dev = z - mean[codes]
    s2, s4 = _sums(codes, size, dev**2, dev**4)
    q = stats.norm.ppf(0.5 + level / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = s2 / (n - 1)
        sd = np.sqrt(var)
        tq = stats.t.ppf(0.5 + level / 2.0, np.maximum(n - 1, 1))
        half = tq * sd / np.sqrt(n)
        m4 = s4 / n
        m2 = s2 / n
        se_log = np.sqrt(np.maximum(m4 / np.maximum(m2 * m2, 1e-300) - (n - 3) / (n - 1), 0.0) / (4.0 * n))
        chi_lo = stats.chi2.ppf(0.5 - level / 2.0, np.maximum(n - 1, 1)) / (n - 1)
        chi_hi = stats.chi2.ppf(0.5 + level / 2.0, np.maximum(n - 1, 1)) / (n - 1)
    cov = k / np.maximum(n, 1)
    cp_lo, cp_hi = clopper_pearson_arrays(k, n, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        ev_cov = _evidence(log_two_sided(log_binom_cdf(k, n, p_exp), log_binom_sf(k - 1, n, p_exp)))
        ev_mean = _evidence(log_norm_two_sided(mean * np.sqrt(n)))
        s2_pos = np.maximum(s2, 1e-300)  # s² = 0: P(χ² ≤ 10⁻³⁰⁰), finite
        ev_std = _evidence(log_two_sided(log_chi2_cdf(s2_pos, n - 1), log_chi2_sf(s2_pos, n - 1)))
    b_lo = stats.binom.ppf(0.5 - level / 2.0, n, p_exp) / np.maximum(n, 1)
    b_hi = stats.binom.ppf(0.5 + level / 2.0, n, p_exp) / np.maximum(n, 1)
    c = f"{100 * coverage:g}"
    return [
        {"metric": f"coverage_{c}", "label": f"coverage {c}%", "n": n, "value": cov, "lo": cp_lo, "hi": cp_hi,
         "band_lo": b_lo, "band_hi": b_hi, "target": p_exp, "evidence": ev_cov},
        {"metric": "z_mean", "label": "mean z", "n": n, "value": mean, "lo": mean - half, "hi": mean + half,
         "band_lo": -q / np.sqrt(n), "band_hi": q / np.sqrt(n), "target": np.zeros(size), "evidence": ev_mean},
        {"metric": "z_std", "label": "std z", "n": n, "value": sd, "lo": sd * np.exp(-q * se_log),
         "hi": sd * np.exp(q * se_log), "band_lo": np.sqrt(chi_lo), "band_hi": np.sqrt(chi_hi),
         "target": np.ones(size), "evidence": ev_std},
    ]


def _classification_stats(codes, size, conf, hit, level) -> list[dict[str, np.ndarray]]:
    d = conf - hit
    n, k, sc, sv, sd1 = _sums(codes, size, np.ones_like(conf), hit, conf, conf * (1.0 - conf), d)
    q = stats.norm.ppf(0.5 + level / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = sd1 / n
        dev = d - gap[codes]
        (s2,) = _sums(codes, size, dev * dev)
        sdd = np.sqrt(s2 / (n - 1))
        tq = stats.t.ppf(0.5 + level / 2.0, np.maximum(n - 1, 1))
        half = tq * sdd / np.sqrt(n)
        band = q * np.sqrt(sv) / n
        mconf = sc / n
        acc = k / n
    cp_lo, cp_hi = clopper_pearson_arrays(k, n, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        cbar = np.clip(np.divide(sc, n, out=np.full_like(sc, 0.5), where=n > 0), 1e-12, 1 - 1e-12)
        ev = _evidence(log_two_sided(log_binom_cdf(k, n, cbar), log_binom_sf(k - 1, n, cbar)))
    return [
        {"metric": "gap", "label": "mean confidence − accuracy", "n": n, "value": gap, "lo": gap - half,
         "hi": gap + half, "band_lo": -band, "band_hi": band, "target": np.zeros(size), "evidence": ev},
        {"metric": "accuracy", "label": "accuracy", "n": n, "value": acc, "lo": cp_lo, "hi": cp_hi,
         "band_lo": mconf - band, "band_hi": mconf + band, "target": mconf, "evidence": ev},
    ]


def window_table(
    pset: PredictionSet, *, window: WindowSpec = "week", coverage: float = 0.9, level: float = 0.95,
    target: str = "top_label",
) -> tuple[pd.DataFrame, np.ndarray]:
    """Metrics per (model, time window) with intervals and perfect-calibration bands (module docstring).

    Loops run over models only; everything per row is vectorised.

    Parameters
    ----------
    pset : PredictionSet
        Rows with a time column.
    window : str or int, default "week"
        Calendar window or number of equal spans (:func:`window_codes`).
    coverage : float, default 0.9
        Nominal coverage c of the regression interval.
    level : float, default 0.95
        Level of the intervals and of the bands.
    target : {"top_label", "positive"}, default "top_label"
        The classification event.

    Returns
    -------
    table : DataFrame
        One row per (model, window, metric): model, window, start, end, label (the window's), n, metric,
        metric_label, value, lo, hi (the ``level`` interval), band_lo, band_hi (the perfect-calibration band), target,
        evidence (−log₁₀ of the two-sided p-value against perfect calibration, module docstring; NaN for n < 2 where
        undefined).
    codes : ndarray of shape (n,) of int64
        The window of every row of ``pset`` (for :func:`window_rows`).

    Raises
    ------
    ValueError
        If ``pset`` has no time column, or holds point predictions only.

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.
    .. [2] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [3] Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the
       case of the binomial. Biometrika, 26(4), 404–413.
    .. [4] Hoeffding, W. (1956). On the distribution of the number of successes in independent trials. The Annals
       of Mathematical Statistics, 27(3), 713–721.
    .. [5] Abramowitz, M., & Stegun, I. A. (1964). Handbook of Mathematical Functions. National Bureau of Standards,
       Applied Mathematics Series 55.
    """
    if pset.time is None:
        raise ValueError("this data has no time column: map one on the Data page (Column mapping → time column)")
    codes, windows = window_codes(pset.time, window)
    size = len(windows)
    models = pset.models()
    model_of = np.zeros(pset.n_rows, dtype=np.int64) if pset.model is None else \
        pd.Categorical(pset.model, categories=models).codes.astype(np.int64)
    out = []
    if pset.task == "regression":
        if pset.dist is None:
            raise ValueError("point predictions have no interval or σ: nothing to track over time")
        r = _regression_rows(pset.y, pset.dist, coverage)
        per_row = r
    else:
        if pset.probs is None:
            conf = np.asarray(pset.confidence, dtype=float)
            hit = (np.asarray(pset.point) == np.asarray(pset.labels)).astype(float)
        else:
            conf, hit = event_rows(pset.labels, pset.probs, target)
        per_row = {"conf": conf, "hit": hit}
    for m, model in enumerate(models):
        rows = model_of == m
        c = codes[rows]
        if pset.task == "regression":
            blocks = _regression_stats(c, size, {k: v[rows] for k, v in per_row.items()}, coverage, level)
        else:
            blocks = _classification_stats(c, size, per_row["conf"][rows], per_row["hit"][rows], level)
        present = np.bincount(c, minlength=size) > 0
        for b in blocks:
            frame = windows.loc[present].copy()
            frame.insert(0, "model", model)
            frame["n"] = b["n"][present].astype(np.int64)
            frame["metric"] = b["metric"]
            frame["metric_label"] = b["label"]
            for col in ("value", "lo", "hi", "band_lo", "band_hi", "target", "evidence"):
                frame[col] = np.asarray(b[col], dtype=float)[present]
            out.append(frame)
    cols = ["model", "window", "start", "end", "label", "n", "metric", "metric_label", "value", "lo", "hi",
            "band_lo", "band_hi", "target", "evidence"]
    table = pd.concat(out, ignore_index=True)[cols] if out else pd.DataFrame(columns=cols)
    return table, codes


def window_rows(codes: np.ndarray, picked: Any) -> np.ndarray:
    """Rows whose window lies in the time range spanned by the picked windows.

    From the first to the last picked window, so a box over a gap also takes the windows inside it.

    Parameters
    ----------
    codes : ndarray of shape (n,) of int
        The window of every row (:func:`window_table`).
    picked : iterable of int
        Window codes picked in the chart.

    Returns
    -------
    ndarray of shape (n,) of bool
        The row mask (all False when nothing is picked).

    Examples
    --------
    >>> window_rows(np.array([0, 1, 2, 3, 1]), (1, 3)).tolist()
    [False, True, True, True, True]

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.
    """
    w = np.asarray(sorted({int(p) for p in picked}), dtype=np.int64)
    if w.size == 0:
        return np.zeros(np.asarray(codes).shape[0], dtype=bool)
    return (codes >= w.min()) & (codes <= w.max())
