"""Where are the probabilities miscalibrated? Every candidate slice tested and ranked by evidence.

:func:`slice_ranking` computes, for every slice of :func:`calib_core.slices.candidates.candidate_slices`, two
statistics of the binary event of :func:`calib_core.metrics.classification.event_rows` (top-label confidence f and
correctness y, or the positive-class probability and label of a binary file), from per-slice sums (no loop over
rows):

=================  ============================================================  ==================================
statistic          value                                                         null law (H0: y_i ~ Bernoulli(f_i))
=================  ============================================================  ==================================
ECE                Σ_b |Σ_{i∈b} (y_i − f_i)| / n over 10 equal-width bins of f   its bins tested exactly: per bin
                   (Guo et al. 2017)                                             Σy ~ Binomial(n_b, f̄_b), two-
                                                                                 sided, Bonferroni over the bins
                                                                                 used (conservative, Hoeffding)
calibration ratio  Σ f / Σ y (1 = calibrated; > 1 over-confident)                Σy ~ Binomial(n, f̄), exact two-
                                                                                 sided (conservative: a Poisson-
                                                                                 binomial sum's tails are at most
                                                                                 the binomial's, Hoeffding 1956)
=================  ============================================================  ==================================

The two p-values of a slice are combined by Bonferroni and the slices are ranked and Holm-adjusted by
:func:`calib_core.slices.candidates.rank_slices`.  Both tests are exact binomial tails computed in log space
(:mod:`calib_core.base.significance_tails`), so the evidence −log₁₀ p stays finite at any n; ECE's bins used to be
judged by a simulated null whose p-value cannot fall below 1/(draws + 1), which tied every clearly over-confident
slice at the same evidence (≈ 2.3) and left the order to chance.  Ties in evidence are broken by ``effect``, the
deciding test's deviation in per-row null standard deviations: ECE/√(mean f(1 − f)) and |ȳ − f̄|/√(f̄(1 − f̄)).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..base.predictions import InputError, PredictionSet
from ..base.significance_tails import log_binom_cdf, log_binom_sf, log_two_sided
from ..metrics.classification import event_rows
from .candidates import (
    ALPHA,
    DEFAULT_BINS,
    DEFAULT_MIN_SIZE,
    SliceSet,
    candidate_slices,
    rank_slices,
    slice_binned_sums,
)

__all__ = ["slice_ranking", "rank_events", "slice_events", "ranking_from_sums", "funnel_table", "TESTS",
           "FUNNEL_STATISTICS"]

TESTS = ("ECE", "calibration ratio")
"""The tests of each slice, in the order of the ranking's ``worst`` column."""
FUNNEL_STATISTICS = ("calibration ratio",)
"""Statistics a funnel plot can show."""
_BINS = 10


def slice_events(pset: PredictionSet, *, target: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Per row the probability f_i and the event y_i ∈ {0, 1} the statistics look at.

    ``target="auto"`` is the positive class of a binary file and the top label otherwise (:func:`event_rows`);
    top-label-only files give their confidence and whether the predicted class is right.

    Parameters
    ----------
    pset : PredictionSet
        A classification set.
    target : {"auto", "positive", "top_label"}, default "auto"
        The event.

    Returns
    -------
    f, y : ndarray of shape (n,)
        Probabilities and events.

    Raises
    ------
    InputError
        If ``pset`` is not a classification set with probabilities.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """
    if pset.task != "classification" or pset.labels is None:
        raise InputError("the slice explorer's classification statistics need a classification file",
                         source=pset.source, hint="load a file with labels and probabilities")
    if pset.probs is None:
        if pset.confidence is None or pset.point is None:
            raise InputError("no probabilities in this file", source=pset.source,
                             hint="load a file with probability columns")
        return np.asarray(pset.confidence, float), (np.asarray(pset.point) == np.asarray(pset.labels)).astype(float)
    if target == "auto":
        target = "positive" if pset.probs.shape[1] == 2 else "top_label"
    return event_rows(pset.labels, pset.probs, target)


def slice_ranking(pset: PredictionSet, *, columns: Sequence[str] | None = None, n_bins: int = DEFAULT_BINS,
                  min_size: int = DEFAULT_MIN_SIZE, pairs: bool = True, n_null: int = 200, seed: int = 0,
                  alpha: float = ALPHA, target: str = "auto",
                  slices: SliceSet | None = None) -> tuple[pd.DataFrame, SliceSet]:
    """Every candidate slice of a classification set with its statistics, tests, evidence and adjusted p.

    Parameters
    ----------
    pset : PredictionSet
        A classification set.
    columns : sequence of str, optional
        Slice columns (default all); see :func:`calib_core.slices.candidates.candidate_slices`.
    n_bins : int, default DEFAULT_BINS
        Quantile bins of a numeric column.
    min_size : int, default DEFAULT_MIN_SIZE
        Smallest slice.
    pairs : bool, default True
        Also the intersections of two columns' levels.
    n_null : int, default 200
        Unused (ECE's bins are tested exactly; kept for the regression explorer's signature).
    seed : int, default 0
        Unused, as ``n_null``.
    alpha : float, default ALPHA
        Family-wise level of the flags.
    target : {"auto", "positive", "top_label"}, default "auto"
        The event (:func:`slice_events`).
    slices : SliceSet, optional
        Ready slices of ``pset``.

    Returns
    -------
    ranking : DataFrame
        One row per slice, worst first: ``rank``, ``slice``, ``n``, ``ECE``, ``calibration ratio``, ``p ECE``,
        ``p ratio``, ``evidence``, ``effect``, ``p``, ``adjusted p``, ``flagged``, ``worst``, ``index`` (as in
        :func:`calib_core.slices.regression.slice_ranking`).
    slices : SliceSet
        The slices searched.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    .. [3] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [4] Hébert-Johnson, Ú., Kim, M. P., Reingold, O., & Rothblum, G. N. (2018). Multicalibration: calibration
       for the (computationally-identifiable) masses. Proceedings of the 35th International Conference on Machine
       Learning (ICML), PMLR 80, 1939–1948.
    """
    f, y = slice_events(pset, target=target)
    sset = slices if slices is not None else candidate_slices(pset, columns=columns, n_bins=n_bins,
                                                              min_size=min_size, pairs=pairs)
    return rank_events(f, y, sset, n_null=n_null, seed=seed, alpha=alpha), sset


def rank_events(f: np.ndarray, y: np.ndarray, sset: SliceSet, *, n_null: int = 200, seed: int = 0,
                alpha: float = ALPHA) -> pd.DataFrame:
    """The ranking of :func:`slice_ranking` from per-row probabilities and events.

    ``f`` and ``y`` ∈ {0, 1} (:func:`slice_events`) of the ``sset.n_rows`` rows the slices ``sset`` index — e.g.
    held-out rows under a calibrator's probabilities (``views.slices.slices_before_after``): the per-slice sums, then
    :func:`ranking_from_sums`.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities.
    y : ndarray of shape (n,)
        Events.
    sset : SliceSet
        The slices of those n rows.
    n_null : int, default 200
        Unused (ECE's bins are tested exactly; kept for the regression explorer's signature).
    seed : int, default 0
        Unused, as ``n_null``.
    alpha : float, default ALPHA
        Family-wise level of the flags.

    Returns
    -------
    DataFrame
        The ranking (columns as :func:`slice_ranking`).

    Raises
    ------
    ValueError
        If ``f`` or ``y`` does not have the slices' rows.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    """
    f = np.asarray(f, dtype=float)
    y = np.asarray(y, dtype=float)
    if f.shape != (sset.n_rows,) or y.shape != (sset.n_rows,):
        raise ValueError(f"f and y must have the slices' {sset.n_rows} rows, got {f.shape} and {y.shape}")
    b = np.minimum((f * _BINS).astype(np.int64), _BINS - 1)
    sums = slice_binned_sums(sset, np.column_stack([np.ones_like(f), f, y, f * (1.0 - f)]), b, _BINS)  # (S, B, 4)
    return ranking_from_sums(sset.label, sset.size, sums, n_null=n_null, seed=seed, alpha=alpha)


def ranking_from_sums(labels: Sequence[str], sizes: np.ndarray, sums: np.ndarray, *, n_null: int = 200,
                      seed: int = 0, alpha: float = ALPHA) -> pd.DataFrame:
    """The ranking of :func:`slice_ranking` from the per-slice sums alone.

    In-memory rows and mergeable summaries give the same table.  Statistics and tests: module table.

    Parameters
    ----------
    labels : sequence of str
        The slices' names.
    sizes : ndarray of shape (S,)
        Their rows.
    sums : ndarray of shape (S, 10, 4)
        Per equal-width probability bin (rows, Σf, Σy, Σf(1 − f)).
    n_null : int, default 200
        Unused (ECE's bins are tested exactly); kept so both tasks' ``ranking_from_sums`` take the same options.
    seed : int, default 0
        Unused, as ``n_null``.
    alpha : float, default ALPHA
        Family-wise level of the flags.

    Returns
    -------
    DataFrame
        One row per slice, worst first: ``rank``, ``slice``, ``n``, ``ECE``, ``calibration ratio``, ``p ECE``,
        ``p ratio``, ``evidence``, ``effect``, ``p``, ``adjusted p``, ``flagged``, ``worst``, ``index`` (as in
        :func:`calib_core.slices.regression.slice_ranking`).

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Hoeffding, W. (1956). On the distribution of the number of successes in independent trials. The Annals
       of Mathematical Statistics, 27(3), 713–721.
    .. [3] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    """
    S = len(labels)
    n = sums[:, :, 0].sum(axis=1)
    sf, sy = sums[:, :, 1].sum(axis=1), sums[:, :, 2].sum(axis=1)
    ece = np.abs(sums[:, :, 2] - sums[:, :, 1]).sum(axis=1) / n
    # ECE's bins tested exactly: per bin Σy ~ Binomial(n_b, f̄_b) two-sided, Bonferroni over the bins used
    cnt, sf_b, sy_b = sums[:, :, 0], sums[:, :, 1], sums[:, :, 2]
    used = cnt > 0
    fbar_b = np.clip(np.divide(sf_b, cnt, out=np.full_like(sf_b, 0.5), where=used), 1e-12, 1 - 1e-12)
    k_b = np.rint(sy_b)
    log_bins = np.where(used, log_two_sided(log_binom_cdf(k_b, cnt, fbar_b), log_binom_sf(k_b - 1, cnt, fbar_b)), 0.0)
    log_ece = np.minimum(0.0, np.log(np.maximum(used.sum(axis=1), 1)) + log_bins.min(axis=1, initial=0.0))
    fbar = np.clip(sf / n, 1e-12, 1 - 1e-12)
    log_ratio = log_two_sided(log_binom_cdf(sy, n, fbar), log_binom_sf(sy - 1, n, fbar))
    log_p = np.column_stack([log_ece, log_ratio]) if S else np.empty((0, len(TESTS)))
    # effect sizes in units of the per-row null standard deviation √(f̄(1 − f̄)) (module docstring)
    unit = np.sqrt(np.maximum(sums[:, :, 3].sum(axis=1), 1e-300) / n)
    effect = np.column_stack([ece / unit, np.abs(sy - sf) / n / np.sqrt(fbar * (1.0 - fbar))]) if S \
        else np.empty((0, len(TESTS)))
    p = np.exp(log_p)
    table = pd.DataFrame({
        "slice": list(labels), "n": np.asarray(sizes), "ECE": ece,
        "calibration ratio": np.divide(sf, sy, out=np.full_like(sf, np.inf), where=sy > 0),
        "p ECE": p[:, 0], "p ratio": p[:, 1], "index": np.arange(S),
    })
    ranked = rank_slices(table, p, log_p, alpha=alpha, effect=effect)
    ranked.insert(ranked.columns.get_loc("flagged") + 1, "worst",
                  [TESTS[i] for i in ranked.pop("_worst").to_numpy()])
    return ranked


def funnel_table(ranking: pd.DataFrame, statistic: str = "calibration ratio", *, base_rate: float,
                 alpha: float = ALPHA, n_points: int = 120) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The funnel plot of the calibration ratio Σf/Σy: ``(points, limits)``.

    As :func:`calib_core.slices.regression.funnel_table`.  Limits at n: with f̄ = ``base_rate`` (the mean probability
    of all rows) and Σy ~ Binomial(n, f̄), the ratio n·f̄/Σy at the Σy quantiles α/2 and 1 − α/2 (95% and the
    Bonferroni level α/(2·S) of the S slices searched); ``expected`` = 1.

    Parameters
    ----------
    ranking : DataFrame
        A ranking of :func:`slice_ranking`.
    statistic : {"calibration ratio"}, default "calibration ratio"
        The statistic.
    base_rate : float
        f̄, the mean probability of all rows.
    alpha : float, default ALPHA
        Family-wise level of the adjusted limits.
    n_points : int, default 120
        Points of the log grid of n.

    Returns
    -------
    points : DataFrame
        slice, n, value, flagged, rank, index of every ranked slice.
    limits : DataFrame
        ``n``, ``lower 95%``, ``upper 95%``, ``lower adjusted``, ``upper adjusted``, ``expected``.

    Raises
    ------
    ValueError
        If ``statistic`` is not one of :data:`FUNNEL_STATISTICS`.

    References
    ----------
    .. [1] Spiegelhalter, D. J. (2005). Funnel plots for comparing institutional performance. Statistics in
       Medicine, 24(8), 1185–1202.
    """
    if statistic not in FUNNEL_STATISTICS:
        raise ValueError(f"statistic must be one of {FUNNEL_STATISTICS}, not {statistic!r}")
    points = ranking[["slice", "n", statistic, "flagged", "rank", "index"]].rename(columns={statistic: "value"})
    S = max(len(ranking), 1)
    lo_n = max(float(ranking["n"].min()) if len(ranking) else 2.0, 2.0)
    hi_n = max(float(ranking["n"].max()) if len(ranking) else 10.0, lo_n * 1.01)
    grid = np.unique(np.round(np.geomspace(lo_n, hi_n, n_points)))
    fbar = float(np.clip(base_rate, 1e-9, 1 - 1e-9))
    out = {"n": grid}
    for name, a in (("95%", 0.05), ("adjusted", alpha / (len(TESTS) * S))):
        k_lo = np.maximum(stats.binom.ppf(a / 2.0, grid, fbar), 0.5)
        k_hi = stats.binom.ppf(1.0 - a / 2.0, grid, fbar)
        out[f"lower {name}"], out[f"upper {name}"] = grid * fbar / k_hi, grid * fbar / k_lo
    out["expected"] = np.ones_like(grid)
    return points.reset_index(drop=True), pd.DataFrame(out)
