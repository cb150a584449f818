"""Forecasting models judged against each other: the task-neutral statistics of ``cc.compare_models``.

Everything here works on a matrix of per-unit scores (lower is better) and integer cluster codes; nothing knows
about tasks, files or score names.

* :func:`cluster_pair_sums` — per cluster g and every pair (i, j) of models, the sum of model i's scores over the
  units of g that both i and j forecast, and their count: the sufficient statistics of every mean, ratio and
  bootstrap replicate below (a replicate is one matrix product with cluster weights).
* :func:`diebold_mariano` — the Diebold–Mariano test with the small-sample correction of Harvey, Leybourne &
  Newbold (1997) on a series of score differences (cluster means in cluster order), HAC variance of lag h − 1,
  Student t with T − 1 degrees of freedom.
* :func:`relative_scores` — the pairwise relative score of Cramer et al. (2022): θ_i = the geometric mean over
  models j of (mean S_i / mean S_j on the units i and j share), relative to the baseline, with cluster-bootstrap
  percentile intervals.
* :func:`model_confidence_set` — the model confidence set of Hansen, Lunde & Nason (2011), T_max statistic,
  cluster (or moving-block) bootstrap.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..base.significance import percentile_interval

__all__ = ["PairSums", "cluster_pair_sums", "DieboldMarianoResult", "diebold_mariano", "RelativeScores",
           "relative_scores", "ConfidenceSet", "model_confidence_set", "overlap_lag"]


@dataclass(frozen=True)
class PairSums:
    """Per-cluster sums of every model's scores on the units it shares with every other model.

    Attributes
    ----------
    sums : ndarray of shape (G, M, M)
        ``sums[g, i, j]`` = Σ S_ui over the units u of cluster g that models i and j both forecast
        (``sums[g, i, i]``: all of model i's units in g).
    counts : ndarray of shape (G, M, M)
        The number of those units (symmetric in i, j).

    References
    ----------
    .. [1] Cramer, E. Y. et al. (2022). Evaluation of individual and ensemble probabilistic forecasts of COVID-19
       mortality in the United States. *PNAS* 119(15), e2113561119.
    """

    sums: np.ndarray
    counts: np.ndarray

    @property
    def n_clusters(self) -> int:
        """G."""
        return int(self.sums.shape[0])

    def means(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Mean S_i on the units i and j share, per pair: Σ_g w_g sums[g,i,j] / Σ_g w_g counts[g,i,j].

        ``weights`` None: the data (M, M); (B, G): one (M, M) matrix per bootstrap replicate (B, M, M).
        """
        g, m, _ = self.sums.shape
        if weights is None:
            s, n = self.sums.sum(axis=0), self.counts.sum(axis=0)
        else:
            s = (weights @ self.sums.reshape(g, m * m)).reshape(-1, m, m)
            n = (weights @ self.counts.reshape(g, m * m)).reshape(-1, m, m)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, s / np.where(n > 0, n, 1.0), np.nan)


def cluster_pair_sums(scores: np.ndarray, codes: np.ndarray, n_clusters: int) -> PairSums:
    """Per cluster the sums of every model's scores on the units it shares with every other model.

    sums[g, i, j] = Σ_u 1[c_u = g] · S_ui · a_ui · a_uj and counts[g, i, j] = Σ_u 1[c_u = g] · a_ui · a_uj, with
    a_ui = 1 when model i forecast unit u (its score is finite).  One ``np.bincount`` per model j.

    Parameters
    ----------
    scores : ndarray of shape (U, M)
        The score of every forecast unit (rows) by every model (columns); NaN where a model has no forecast.
    codes : ndarray of int of shape (U,)
        The cluster of every unit, 0 … G − 1.
    n_clusters : int
        G.

    Returns
    -------
    PairSums
        The sums and counts.

    References
    ----------
    .. [1] Cramer, E. Y. et al. (2022). Evaluation of individual and ensemble probabilistic forecasts of COVID-19
       mortality in the United States. *PNAS* 119(15), e2113561119.

    Examples
    --------
    >>> s = np.array([[1.0, 2.0], [3.0, np.nan], [5.0, 4.0]])
    >>> p = cluster_pair_sums(s, np.array([0, 0, 1]), 2)
    >>> p.means().tolist()   # model 0 on all its units: 3.0; on the units it shares with model 1: 3.0
    [[3.0, 3.0], [3.0, 3.0]]
    >>> p.counts.sum(axis=0).tolist()
    [[3.0, 2.0], [2.0, 2.0]]
    """
    x = np.asarray(scores, dtype=float)
    u, m = x.shape
    g = int(n_clusters)
    avail = np.isfinite(x)
    xz = np.where(avail, x, 0.0)
    af = avail.astype(float)
    idx = (np.asarray(codes, dtype=np.int64)[:, None] * m + np.arange(m)[None, :]).ravel()
    sums = np.empty((g, m, m))
    counts = np.empty((g, m, m))
    for j in range(m):  # a loop over models, each one bincount over all units
        sums[:, :, j] = np.bincount(idx, weights=(xz * af[:, [j]]).ravel(), minlength=g * m).reshape(g, m)
        counts[:, :, j] = np.bincount(idx, weights=(af * af[:, [j]]).ravel(), minlength=g * m).reshape(g, m)
    return PairSums(sums=sums, counts=counts)


def overlap_lag(labels: np.ndarray, last_target: np.ndarray) -> int:
    """The HAC lag of a series of forecast dates: how many later dates fall before an earlier date's last target.

    L = max_t #{s > t : label_s < last_target_t}.  h-step forecasts made every step (targets t + 1 … t + h) give
    L = h − 1, the lag of Diebold & Mariano (1995): the errors of forecasts whose targets are still unobserved when
    the next forecast is made share surprises.

    Parameters
    ----------
    labels : array_like of shape (T,)
        The cluster values (forecast dates), increasing.
    last_target : array_like of shape (T,)
        The latest target date of each cluster's forecasts.

    Returns
    -------
    int
        L ≥ 0.

    References
    ----------
    .. [1] Diebold, F. X. & Mariano, R. S. (1995). Comparing predictive accuracy. *Journal of Business & Economic
       Statistics* 13(3), 253–263.

    Examples
    --------
    >>> overlap_lag(np.arange(10), np.arange(10) + 3)   # 3-step-ahead forecasts every step
    2
    """
    lab = np.asarray(labels)
    last = np.asarray(last_target)
    if lab.size == 0:
        return 0
    later_before = np.searchsorted(lab, last, side="left") - (np.arange(lab.size) + 1)
    return int(max(0, later_before.max()))


@dataclass(frozen=True)
class DieboldMarianoResult:
    """The Diebold–Mariano test with the Harvey–Leybourne–Newbold correction (one value per series).

    Attributes
    ----------
    statistic : ndarray
        S* = √((T + 1 − 2h + h(h − 1)/T)/T) · d̄ / √(V̂/T); negative: the first model scores lower (better).
    p_value : ndarray
        Two-sided, Student t with T − 1 degrees of freedom.
    mean : ndarray
        d̄.
    variance : ndarray
        V̂ = γ̂_0 + 2 Σ_{k=1}^{h−1} w_k γ̂_k (the long-run variance of d).
    df : ndarray
        T − 1.
    lag : int
        h − 1.
    kernel : ndarray of str
        ``"rectangular"`` (w_k = 1, as Diebold & Mariano), or ``"bartlett"`` (w_k = 1 − k/h, Newey & West 1987)
        where the rectangular V̂ was not positive.

    References
    ----------
    .. [1] Diebold, F. X. & Mariano, R. S. (1995). Comparing predictive accuracy. *Journal of Business & Economic
       Statistics* 13(3), 253–263.
    .. [2] Harvey, D., Leybourne, S. & Newbold, P. (1997). Testing the equality of prediction mean squared errors.
       *International Journal of Forecasting* 13(2), 281–291.
    """

    statistic: np.ndarray
    p_value: np.ndarray
    mean: np.ndarray
    variance: np.ndarray
    df: np.ndarray
    lag: int
    kernel: np.ndarray


def diebold_mariano(d: np.ndarray, lag: int = 0) -> DieboldMarianoResult:
    """Diebold–Mariano test of equal expected score, with the Harvey–Leybourne–Newbold small-sample correction.

    For a series d_1 … d_T of score differences (model minus baseline; T cluster means in cluster order):
    d̄ = (1/T) Σ d_t, γ̂_k = (1/T) Σ_{t>k} (d_t − d̄)(d_{t−k} − d̄), V̂ = γ̂_0 + 2 Σ_{k=1}^{h−1} γ̂_k (HAC, lag h − 1),
    DM = d̄ / √(V̂/T), and the HLN statistic S* = √((T + 1 − 2h + h(h − 1)/T)/T) · DM, referred to Student's t with
    T − 1 degrees of freedom (two-sided).  Where the rectangular V̂ ≤ 0 the Bartlett weights 1 − k/h of Newey &
    West (1987) are used instead (always ≥ 0).  NaN when T < 2, h ≥ T, V̂ = 0 or the correction is not positive.

    Parameters
    ----------
    d : array_like of shape (T,) or (T, M)
        One series, or M series side by side (no NaN).
    lag : int, default 0
        h − 1 (0: independent terms).

    Returns
    -------
    DieboldMarianoResult
        Statistic, p-value, mean, long-run variance, degrees of freedom, lag and kernel per series.

    References
    ----------
    .. [1] Diebold, F. X. & Mariano, R. S. (1995). Comparing predictive accuracy. *Journal of Business & Economic
       Statistics* 13(3), 253–263.
    .. [2] Harvey, D., Leybourne, S. & Newbold, P. (1997). Testing the equality of prediction mean squared errors.
       *International Journal of Forecasting* 13(2), 281–291.
    .. [3] Newey, W. K. & West, K. D. (1987). A simple, positive semi-definite, heteroskedasticity and
       autocorrelation consistent covariance matrix. *Econometrica* 55(3), 703–708.

    Examples
    --------
    >>> r = diebold_mariano(np.array([1.0, 2.0, 3.0, 4.0]), lag=1)
    >>> round(float(r.statistic[0]), 4), r.df.tolist()
    (2.2361, [3])
    """
    x = np.asarray(d, dtype=float)
    one = x.ndim == 1
    x = x[:, None] if one else x
    t, m = x.shape
    h = int(lag) + 1
    mean = x.mean(axis=0) if t else np.full(m, np.nan)
    c = x - mean
    gam = np.array([(c[k:] * c[: t - k]).sum(axis=0) / max(t, 1) for k in range(min(h, max(t, 1)))])
    rect = gam[0] + 2.0 * gam[1:].sum(axis=0)
    w = 1.0 - np.arange(1, gam.shape[0]) / h
    bart = gam[0] + 2.0 * (w[:, None] * gam[1:]).sum(axis=0)
    use_bart = rect <= 0
    var = np.where(use_bart, bart, rect)
    corr = (t + 1 - 2 * h + h * (h - 1) / t) / t if t else np.nan
    ok = (t >= 2) & (h < t) & (var > 0) & (corr > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.where(ok, np.sqrt(max(corr, 0.0)) * mean / np.sqrt(np.where(var > 0, var, 1.0) / t), np.nan)
    p = np.where(ok, 2.0 * stats.t.sf(np.abs(stat), max(t - 1, 1)), np.nan)
    kernel = np.where(use_bart, "bartlett", "rectangular")
    return DieboldMarianoResult(statistic=stat, p_value=p, mean=mean, variance=var, df=np.full(m, t - 1),
                                lag=h - 1, kernel=kernel)


@dataclass(frozen=True)
class RelativeScores:
    """Pairwise relative scores and every model's skill relative to the baseline (Cramer et al. 2022).

    Attributes
    ----------
    ratio : ndarray of shape (M, M)
        r_ij = mean S_i / mean S_j on the units i and j share (NaN when they share none, or a mean is not positive).
    relative : ndarray of shape (M,)
        θ_i / θ_b with θ_i = exp(mean_j log r_ij) over the models j with a ratio; the baseline's is 1.
    low, high : ndarray of shape (M,)
        Percentile bootstrap interval of ``relative``.
    boot : ndarray of shape (B, M)
        The bootstrap replicates of ``relative``.

    References
    ----------
    .. [1] Cramer, E. Y. et al. (2022). Evaluation of individual and ensemble probabilistic forecasts of COVID-19
       mortality in the United States. *PNAS* 119(15), e2113561119.
    """

    ratio: np.ndarray
    relative: np.ndarray
    low: np.ndarray
    high: np.ndarray
    boot: np.ndarray


def _relative(means: np.ndarray, baseline: int) -> tuple[np.ndarray, np.ndarray]:
    """(ratio, relative) from pair means of shape (..., M, M)."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a model with no ratio: NaN, without "mean of empty slice"
        pos = (means > 0) & (np.swapaxes(means, -1, -2) > 0)
        ratio = np.where(pos, means / np.where(pos, np.swapaxes(means, -1, -2), 1.0), np.nan)
        log_theta = np.nanmean(np.log(ratio), axis=-1)
        rel = np.exp(log_theta - log_theta[..., [baseline]])
    return ratio, rel


def relative_scores(pairs: PairSums, baseline: int, weights: np.ndarray | None = None,
                    level: float = 0.95) -> RelativeScores:
    """The pairwise relative score of every model against a baseline, with a cluster-bootstrap interval.

    r_ij = (Σ_{u ∈ C_ij} S_ui) / (Σ_{u ∈ C_ij} S_uj) on the units C_ij that models i and j both forecast;
    θ_i = (Π_j r_ij)^{1/M} (the geometric mean over the M models, r_ii = 1); relative_i = θ_i / θ_b.  With two
    models, or when every model forecasts every unit, relative_i = mean S_i / mean S_b.  Each bootstrap replicate
    redraws the clusters (``weights`` of :func:`calib_core.base.clustering.cluster_design`) and recomputes every
    r_ij; the interval is the percentile interval of the replicates.

    Parameters
    ----------
    pairs : PairSums
        From :func:`cluster_pair_sums`.
    baseline : int
        The baseline's column.
    weights : ndarray of shape (B, G), optional
        Bootstrap weights of the clusters (None: no interval, NaN ends).
    level : float, default 0.95
        Level of the interval.

    Returns
    -------
    RelativeScores
        Pairwise ratios, relative scores and their intervals.

    References
    ----------
    .. [1] Cramer, E. Y. et al. (2022). Evaluation of individual and ensemble probabilistic forecasts of COVID-19
       mortality in the United States. *PNAS* 119(15), e2113561119.
    .. [2] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> s = np.array([[2.0, 4.0, 1.0], [2.0, 4.0, np.nan]])      # model 2 forecasts only the first unit
    >>> r = relative_scores(cluster_pair_sums(s, np.array([0, 1]), 2), baseline=1)
    >>> r.relative.round(4).tolist()                              # θ = (1·½·2)^⅓, (2·1·4)^⅓, (½·¼·1)^⅓
    [0.5, 1.0, 0.25]
    """
    ratio, rel = _relative(pairs.means(), baseline)
    m = rel.shape[0]
    if weights is None:
        boot = np.full((0, m), np.nan)
        low = high = np.full(m, np.nan)
    else:
        _, boot = _relative(pairs.means(weights), baseline)
        low, high = percentile_interval(boot, level)
    return RelativeScores(ratio=ratio, relative=rel, low=np.asarray(low), high=np.asarray(high), boot=boot)


@dataclass(frozen=True)
class ConfidenceSet:
    """The model confidence set (Hansen, Lunde & Nason 2011).

    Attributes
    ----------
    included : ndarray of bool of shape (M,)
        In the set at level 1 − α (MCS p-value > α).
    p_value : ndarray of shape (M,)
        The MCS p-value of every model: p_{e_j} = max_{i ≤ j} P_i over the elimination steps up to its own (1 for
        the last model standing).
    order : ndarray of int
        The models in the order they were eliminated (the last one survives every test).

    References
    ----------
    .. [1] Hansen, P. R., Lunde, A. & Nason, J. M. (2011). The model confidence set. *Econometrica* 79(2), 453–497.
    """

    included: np.ndarray
    p_value: np.ndarray
    order: np.ndarray


def model_confidence_set(sums: np.ndarray, counts: np.ndarray, weights: np.ndarray,
                         alpha: float = 0.05) -> ConfidenceSet:
    """The model confidence set of Hansen, Lunde & Nason (2011) with the T_max statistic and a cluster bootstrap.

    Mean scores L̄_i = Σ_g s_gi / Σ_g n_g on the units every model forecasts; for the models M still in the set,
    d̄_i· = L̄_i − (1/|M|) Σ_{j ∈ M} L̄_j, t_i· = d̄_i· / √var̂(d̄_i·) and T_max = max_i t_i·.  Each replicate b
    redraws the clusters (weights w_b): ζ*_bi = L̄*_bi − L̄_i, d̄*_bi· = ζ*_bi − mean_{j∈M} ζ*_bj,
    var̂(d̄_i·) = mean_b (d̄*_bi·)², T*_b = max_i d̄*_bi· / √var̂(d̄_i·).  The p-value of the step is
    P = (1 + #{T*_b ≥ T_max}) / (1 + B); the model with the largest t_i· is eliminated; the MCS p-value of a model
    is the largest step p-value up to its elimination; the set at level 1 − α holds the models with MCS p > α.

    Parameters
    ----------
    sums : ndarray of shape (G, M)
        Per cluster the sum of each model's scores (over the units every model forecasts).
    counts : ndarray of shape (G,)
        Units per cluster.
    weights : ndarray of shape (B, G)
        Bootstrap weights of the clusters.
    alpha : float, default 0.05
        1 − the confidence level of the set.

    Returns
    -------
    ConfidenceSet
        Membership, MCS p-values and the elimination order.

    References
    ----------
    .. [1] Hansen, P. R., Lunde, A. & Nason, J. M. (2011). The model confidence set. *Econometrica* 79(2), 453–497.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = np.column_stack([rng.normal(1.0, 0.1, 50), rng.normal(1.5, 0.1, 50), rng.normal(1.01, 0.1, 50)])
    >>> w = rng.multinomial(50, np.full(50, 1 / 50), size=500).astype(float)
    >>> model_confidence_set(s, np.ones(50), w).included.tolist()
    [True, False, True]
    """
    s = np.asarray(sums, dtype=float)
    n = np.asarray(counts, dtype=float)
    w = np.asarray(weights, dtype=float)
    m = s.shape[1]
    mean = s.sum(axis=0) / n.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        zeta = (w @ s) / (w @ n)[:, None] - mean  # (B, M)
    zeta = zeta[np.isfinite(zeta).all(axis=1)]
    b = zeta.shape[0]
    alive = np.ones(m, dtype=bool)
    step_p = np.ones(m)
    order = []
    while alive.sum() > 1:
        idx = np.flatnonzero(alive)
        dbar = mean[idx] - mean[idx].mean()
        dstar = zeta[:, idx] - zeta[:, idx].mean(axis=1, keepdims=True)
        sd = np.sqrt((dstar**2).mean(axis=0))
        with np.errstate(invalid="ignore", divide="ignore"):
            # no spread: identical models tie (t = 0, the equivalence holds), a constant gap is decisive (±inf)
            flat = np.where(dbar > 0, np.inf, np.where(dbar < 0, -np.inf, 0.0))
            t = np.where(sd > 0, dbar / np.where(sd > 0, sd, 1.0), flat)
            tstar = np.where(sd > 0, dstar / np.where(sd > 0, sd, 1.0), 0.0).max(axis=1)
        tmax = float(np.max(t))
        p = (1.0 + float((tstar >= tmax).sum())) / (1.0 + b)
        worst = idx[int(np.argmax(t))]
        step_p[worst] = p
        order.append(worst)
        alive[worst] = False
    order.append(int(np.flatnonzero(alive)[0]))
    order_arr = np.asarray(order, dtype=np.int64)
    mcs_p = np.empty(m)
    mcs_p[order_arr] = np.maximum.accumulate(step_p[order_arr])
    return ConfidenceSet(included=mcs_p > alpha, p_value=mcs_p, order=order_arr)
