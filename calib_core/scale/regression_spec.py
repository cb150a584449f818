"""The spec of a regression summary: the grids every chunk is summarised on (fine PIT edges, curve and QCE levels,
fine z bins, coverage levels, bootstrap blocks) and the data's equal-count σ edges, with an ensemble's kernel floor
(what a part holds: :mod:`calib_core.scale.regression`, which re-exports these names).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.mergeable import SummarySpec, as_ids, equal_count_edges
from ..base.predictions import PredictionSet, iter_subsets
from ..base.regression import Gaussian, PredictiveDistribution, QuantileSet, SampleSet
from ..metrics.regression import DEFAULT_COVERAGES, DEFAULT_LEVELS

__all__ = ["default_pit_edges", "regression_spec", "spec_for_regression", "silverman_bandwidths"]


def default_pit_edges(fine_bins: int = 2000, levels: np.ndarray = DEFAULT_LEVELS, n_qce_levels: int = 100,
                      pit_bins: int = 20) -> np.ndarray:
    """Fine PIT edges on [0, 1], the bins of a summary's PIT histogram.

    ``fine_bins`` equal widths united with the curve levels, the QCE levels j/M and the PIT-diagram edges (the very
    float values the in-memory metrics compare with), and the geometric tail edges 2⁻ʲ and 1 − 2⁻ʲ, j = 12 … 40
    (exact binary fractions: a forecaster whose tails are too light piles PITs within 10⁻⁸ of 0 and 1, and the PIT
    entropy's spacings there are resolved on a log scale).

    Parameters
    ----------
    fine_bins : int, default 2000
        Number of equal-width fine bins.
    levels : ndarray of shape (L,), default DEFAULT_LEVELS
        The calibration-curve levels.
    n_qce_levels : int, default 100
        M of the quantile calibration error's levels j/M.
    pit_bins : int, default 20
        Bins of the PIT histogram diagram.

    Returns
    -------
    ndarray
        The sorted distinct edges, 0 and 1 included.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [2] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    """
    tails = 2.0 ** -np.arange(12, 41)
    return np.unique(np.concatenate([np.linspace(0.0, 1.0, fine_bins + 1), np.asarray(levels, dtype=float),
                                     np.arange(1, n_qce_levels + 1) / n_qce_levels,
                                     np.linspace(0.0, 1.0, pit_bins + 1), tails, 1.0 - tails]))


def regression_spec(
    *,
    layout: str,
    sigma_edges: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] | None = None,
    n_bins: int = 15,
    levels: np.ndarray = DEFAULT_LEVELS,
    n_qce_levels: int = 100,
    coverages: tuple[float, ...] = DEFAULT_COVERAGES,
    fine_pit_bins: int = 2000,
    pit_bins: int = 20,
    z_limit: float = 10.0,
    z_bins: int = 4000,
    n_blocks: int = 256,
    seed: int = 0,
    kde_floor: float = 0.0,
    quantile_levels: np.ndarray | None = None,
) -> SummarySpec:
    """A regression :class:`~calib_core.base.mergeable.SummarySpec` (defaults: the in-memory ``cc.diagnose`` grids).

    Parameters
    ----------
    layout : {"gaussian", "quantile", "sample", "point"}
        The predictive distributions' layout.
    sigma_edges : dict of (str, str) to (ndarray, ndarray), optional
        (model, group) → the inner equal-count σ edges (values, row ids), e.g. from
        :func:`calib_core.base.mergeable.equal_count_edges` over each subset (the first pass).
    n_bins : int, default 15
        B, the Levi σ-bins.
    levels : ndarray, default DEFAULT_LEVELS
        The calibration-curve levels.
    n_qce_levels : int, default 100
        M of the quantile calibration error's levels j/M.
    coverages : tuple of float, default DEFAULT_COVERAGES
        Central-interval levels of the coverage, width and interval-score metrics.
    fine_pit_bins : int, default 2000
        Fine PIT bins of width 1/``fine_pit_bins`` (the KS bound is about one width).
    pit_bins : int, default 20
        Bins of the PIT histogram diagram.
    z_limit : float, default 10.0
        The fine z histogram spans [−``z_limit``, ``z_limit``].
    z_bins : int, default 4000
        Bins of the fine z histogram.
    n_blocks : int, default 256
        G, the bootstrap blocks the rows are hashed into.
    seed : int, default 0
        Seed of the hashes (bootstrap blocks, an ensemble's PIT randomisation).
    kde_floor : float, default 0.0
        Floor of an ensemble's kernel bandwidth (the in-memory whole-data floor).
    quantile_levels : ndarray, optional
        The stated levels of a quantile set (they choose its primary coverage test).

    Returns
    -------
    SummarySpec
        The frozen spec (task ``"regression"``).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    """
    lev = np.asarray(levels, dtype=float)
    edges = tuple((m, g, tuple(float(v) for v in np.asarray(e[0], dtype=float)),
                   tuple(int(i) for i in np.asarray(e[1], dtype=np.int64)))
                  for (m, g), e in sorted((sigma_edges or {}).items()))
    return SummarySpec(
        task="regression", layout=layout, levels=tuple(lev.tolist()),
        qce_levels=tuple((np.arange(1, n_qce_levels + 1) / n_qce_levels).tolist()),
        pit_edges=tuple(default_pit_edges(fine_pit_bins, lev, n_qce_levels, pit_bins).tolist()),
        curve_edges=tuple(lev.tolist()), pit_bins=int(pit_bins),
        z_edges=tuple(np.linspace(-z_limit, z_limit, z_bins + 1).tolist()),
        coverages=tuple(float(c) for c in coverages),
        n_bins=int(n_bins), sigma_edges=edges, n_blocks=int(n_blocks), seed=int(seed), kde_floor=float(kde_floor),
        quantile_levels=() if quantile_levels is None else tuple(float(v) for v in np.asarray(quantile_levels)),
    )


def _layout_of(dist: PredictiveDistribution | None) -> str:
    if isinstance(dist, Gaussian):
        return "gaussian"
    if isinstance(dist, QuantileSet):
        return "quantile"
    if isinstance(dist, SampleSet):
        return "sample"
    return "point" if dist is None else type(dist).__name__


def spec_for_regression(pset: PredictionSet, *, row_ids: np.ndarray | None = None, by_group: bool = True,
                        **options: Any) -> SummarySpec:
    """The spec of an in-memory regression set (or a sample standing for the data).

    Exact equal-count σ edges of every (model, group) and, for ensembles, the kernel floor the in-memory NLL uses
    (1% of the median positive Silverman bandwidth over all rows); a quantile set's stated levels.

    Parameters
    ----------
    pset : PredictionSet
        The regression rows.
    row_ids : ndarray of shape (n,) of int64, optional
        Global row ids, which break ties of σ (default: the set's ``row_number``).
    by_group : bool, default True
        Cut edges per (model, group) as well as per model over all groups.
    **options
        Passed to :func:`regression_spec`.

    Returns
    -------
    SummarySpec
        The spec of the data's own σ-bins.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Silverman, B. W. (1986). Density Estimation for Statistics and Data Analysis, §3.4.2. Chapman & Hall.
    """
    ids = row_ids_of(pset, row_ids)
    n_bins = int(options.get("n_bins", 15))
    edges: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    if pset.dist is not None:
        sigma = np.asarray(pset.dist.std(), dtype=float)
        for model, group, mask in iter_subsets(pset, by_group):
            edges[(model, group)] = equal_count_edges(sigma[mask], ids[mask], n_bins)
    if isinstance(pset.dist, QuantileSet) and "quantile_levels" not in options:
        options["quantile_levels"] = pset.dist.levels
    if isinstance(pset.dist, SampleSet) and "kde_floor" not in options:
        h = silverman_bandwidths(pset.dist.samples)
        positive = h[h > 0]
        options["kde_floor"] = 0.01 * float(np.median(positive)) if positive.size else 1e-12
    return regression_spec(layout=_layout_of(pset.dist), sigma_edges=edges, **options)


def row_ids_of(pset: PredictionSet, row_ids: np.ndarray | None) -> np.ndarray:
    """The global row ids of a chunk: ``row_ids`` when given, else the set's ``row_number``, else 0 … n − 1.

    Parameters
    ----------
    pset : PredictionSet
        The chunk.
    row_ids : ndarray or None
        Its global ids, if known.

    Returns
    -------
    ndarray of shape (n,) of int64
        The ids.
    """
    if row_ids is not None:
        return np.asarray(row_ids, dtype=np.int64)
    if pset.row_number is not None:
        return np.asarray(pset.row_number, dtype=np.int64)
    return as_ids(None, pset.n_rows)


def silverman_bandwidths(samples: np.ndarray) -> np.ndarray:
    """Silverman's rule-of-thumb bandwidths of every row's ensemble, unfloored.

    h_i = 1.06·s_i·M^(−1/5) of every row's M members (s_i with ddof = 1): the bandwidths of ``SampleSet``'s kernel
    density, whose floor is 1% of their median positive value.

    Parameters
    ----------
    samples : ndarray of shape (n, M)
        The ensemble members of every row.

    Returns
    -------
    ndarray of shape (n,)
        The bandwidths h_i.

    References
    ----------
    .. [1] Silverman, B. W. (1986). Density Estimation for Statistics and Data Analysis, §3.4.2. Chapman & Hall.
    """
    return 1.06 * samples.std(axis=1, ddof=1) * samples.shape[1] ** (-0.2)
