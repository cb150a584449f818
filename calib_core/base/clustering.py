"""Dependent rows: which rows are resampled together, and tests that respect it.

Forecast rows are rarely independent: forecasts made on one date share that date's surprise across locations, and
consecutive dates share slow weather or epidemic waves.  Every interval of the house resamples *blocks*
(:mod:`calib_core.base.significance_intervals`: per-block sums, a replicate is a weight vector over blocks).  A
:class:`Clustering` makes the blocks the user's clusters:

* **cluster bootstrap** (``block_length=None``): whole clusters drawn with replacement (Cameron, Gelbach & Miller
  2008; Field & Welsh 2007) — valid when clusters are independent of each other, whatever the dependence inside;
* **moving blocks** (``block_length=k``): runs of k consecutive clusters in their sorted order drawn with replacement
  (Künsch 1989; Lahiri 2003) — for clusters that are themselves dependent in time (dates with an autocorrelated
  shock).

:func:`cluster_design` returns the same :class:`~calib_core.base.significance_intervals.BlockDesign` as the
row-block design, so every statistic built on block sums gets cluster intervals unchanged.  Tests under clustering
bootstrap the *centred* statistic (Hall & Wilson 1991): :func:`centred_bootstrap_p` for a parameter with a null
value, :func:`centred_distance_p` for a distance that is 0 under the null; :func:`cluster_mean_test` is the
cluster-robust t test of a mean (CR1 variance, Student t with G − 1 degrees of freedom).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .predictions import InputError, PredictionSet
from .significance_intervals import BlockDesign, block_bootstrap_weights

__all__ = [
    "Clustering",
    "HUB_CLUSTER_COLUMNS",
    "MIN_RELIABLE_CLUSTERS",
    "MIN_TESTABLE_CLUSTERS",
    "too_few_clusters_sentence",
    "clustered_sentence",
    "resolve_clustering",
    "cluster_choices",
    "auto_block_length",
    "cluster_design",
    "moving_block_weights",
    "centred_bootstrap_p",
    "centred_distance_p",
    "cluster_mean_test",
    "cluster_bootstrap_t",
]

#: The columns a forecast hub's rows are clustered by when ``cluster="auto"`` (the first one present): every
#: forecast made on one date shares that date's information and its surprise
HUB_CLUSTER_COLUMNS = ("reference_date", "forecast_date", "origin_date")

#: Below this many clusters the cluster bootstrap and the t test with G − 1 degrees of freedom are unreliable
#: (Cameron, Gelbach & Miller 2008): results are still given, with a note
MIN_RELIABLE_CLUSTERS = 10

#: Below this many clusters there are no intervals and no tests at all: a bootstrap over 2–4 clusters has a handful
#: of distinct replicates, and calibrated forecasts over 2 clusters were called miscalibrated in 17 of 20 seeded
#: data sets (centred bootstrap p ≈ 0.005 whatever the data)
MIN_TESTABLE_CLUSTERS = 5


@dataclass(frozen=True)
class Clustering:
    """Which rows are resampled together.

    Attributes
    ----------
    column : str
        The column as the user named it (``"reference_date"``, ``"location"``, ``"time"``, …).
    codes : ndarray of int64, shape (n,)
        The cluster of every row, 0 … G − 1, clusters sorted by their value (time order for dates); a row without a
        value is a cluster of its own.
    labels : ndarray, shape (G,)
        The cluster values in code order (missing for the rows without a value).
    block_length : int or None
        None: whole clusters drawn independently (cluster bootstrap); k ≥ 1: moving blocks of k consecutive clusters.

    References
    ----------
    .. [1] Cameron, A. C., Gelbach, J. B. & Miller, D. L. (2008). Bootstrap-based improvements for inference with
       clustered errors. *The Review of Economics and Statistics* 90(3), 414–427.
    .. [2] Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. *Annals of
       Statistics* 17(3), 1217–1241.

    Examples
    --------
    >>> import numpy as np
    >>> c = Clustering("date", np.array([1, 0, 1, 2]), np.array(["a", "b", "c"]), None)
    >>> c.n_clusters, c.describe()
    (3, 'whole date clusters resampled (3 clusters)')
    >>> c.take(np.array([True, False, True, False])).codes
    array([0, 0])
    """

    column: str
    codes: np.ndarray
    labels: np.ndarray
    block_length: int | None = None

    @property
    def n_clusters(self) -> int:
        """G, the number of clusters."""
        return int(len(self.labels))

    def take(self, index: np.ndarray) -> Clustering:
        """The clustering of some rows (boolean mask or integer index): codes recoded to 0 … G′ − 1 in the same
        order, labels of the clusters present."""
        present, codes = np.unique(self.codes[index], return_inverse=True)
        return Clustering(self.column, codes.astype(np.int64), self.labels[present], self.block_length)

    def describe(self) -> str:
        """The clustering in words, for pages and reports."""
        g = self.n_clusters
        if self.block_length is None:
            return f"whole {self.column} clusters resampled ({g:,} clusters)"
        return (f"moving blocks of {self.block_length} consecutive {self.column} values resampled "
                f"({g:,} values)")


def _column_values(pset: PredictionSet, column: str) -> np.ndarray | None:
    if pset.units is not None and column in pset.units.columns:
        return pset.units[column].to_numpy()
    if pset.slice_columns is not None and column in pset.slice_columns.columns:
        return pset.slice_columns[column].to_numpy()
    special = {"time": pset.time, "group": pset.group, "model": pset.model}
    return special.get(column)


def cluster_choices(pset: PredictionSet) -> list[str]:
    """The columns rows can be clustered by: the forecast units' task IDs, the columns no role took, then
    ``time`` and ``group`` when the set has them.

    Parameters
    ----------
    pset : PredictionSet
        The predictions.

    Returns
    -------
    list of str
        Column names, hub dates first.

    References
    ----------
    .. [1] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. *Journal of
       Human Resources* 50(2), 317–372.
    """
    names: list[str] = []
    if pset.units is not None:
        names += [c for c in HUB_CLUSTER_COLUMNS if c in pset.units.columns]
        names += [c for c in pset.units.columns if c not in names and c != "model"]
    if pset.slice_columns is not None:
        names += [c for c in pset.slice_columns.columns if c not in names]
    names += [c for c, v in (("time", pset.time), ("group", pset.group)) if v is not None and c not in names]
    return names


def auto_block_length(n_clusters: int) -> int:
    """The default moving-block length for G clusters in time: round(G^{1/3}), at least 2 when G ≥ 8 (the
    order that balances the bias and the variance of block-bootstrap variance estimates, Hall, Horowitz & Jing 1995).

    Parameters
    ----------
    n_clusters : int
        G.

    Returns
    -------
    int
        k.

    References
    ----------
    .. [1] Hall, P., Horowitz, J. L. & Jing, B.-Y. (1995). On blocking rules for the bootstrap with dependent data.
       *Biometrika* 82(3), 561–574.

    Examples
    --------
    >>> auto_block_length(52), auto_block_length(8), auto_block_length(5)
    (4, 2, 2)
    """
    k = int(round(max(n_clusters, 1) ** (1.0 / 3.0)))
    return max(k, 2) if n_clusters >= 8 else max(k, 1)


def resolve_clustering(pset: PredictionSet, cluster: str | None = "auto",
                       block_length: int | str | None = None) -> Clustering | None:
    """The :class:`Clustering` the user asked for, or None for independent rows.

    ``cluster="auto"``: a forecast hub's first date column of :data:`HUB_CLUSTER_COLUMNS` (every forecast made on
    one date shares its surprise), else independent rows; ``None``, ``"none"`` or ``""``: independent rows; a column
    name: looked up in the forecast units' task IDs, then the columns no role took, then ``"time"``, ``"group"``,
    ``"model"``.  ``block_length``: None (cluster bootstrap), an int k ≥ 1 (moving blocks of k consecutive values) or
    ``"auto"`` (:func:`auto_block_length`).

    Parameters
    ----------
    pset : PredictionSet
        The predictions.
    cluster : str or None, default "auto"
        The clustering column.
    block_length : int, "auto" or None, default None
        Moving-block length.

    Returns
    -------
    Clustering or None
        None for independent rows.

    Raises
    ------
    InputError
        An unknown column (the message lists the choices) or a block length that is not a whole number from 1 to G.

    References
    ----------
    .. [1] Cameron, A. C., Gelbach, J. B. & Miller, D. L. (2008). Bootstrap-based improvements for inference with
       clustered errors. *The Review of Economics and Statistics* 90(3), 414–427.
    .. [2] Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. *Annals of
       Statistics* 17(3), 1217–1241.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from calib_core.base.predictions import PredictionSet
    >>> ps = PredictionSet("regression", y=np.zeros(4),
    ...                    slice_columns=pd.DataFrame({"site": ["b", "a", "b", "c"]}))
    >>> c = resolve_clustering(ps, "site")
    >>> c.codes.tolist(), c.labels.tolist()
    ([1, 0, 1, 2], ['a', 'b', 'c'])
    >>> resolve_clustering(ps) is None
    True
    """
    if cluster is None or (isinstance(cluster, str) and cluster.strip().lower() in ("", "none")):
        return None
    if cluster == "auto":
        if pset.units is None:
            return None
        found = [c for c in HUB_CLUSTER_COLUMNS if c in pset.units.columns]
        if not found:
            return None
        cluster = found[0]
    values = _column_values(pset, str(cluster))
    if values is None or len(values) != pset.n_rows:
        choices = cluster_choices(pset)
        listed = ", ".join(f"'{c}'" for c in choices) if choices else "none in this file"
        raise InputError(
            f"cannot resample by '{cluster}': the loaded data has no such column (columns to resample by: {listed})",
            source=pset.source, columns=[str(cluster)],
            hint="pass cluster= one of those columns, cluster=None for independent rows, or add the column to the file",
            app_hint="pick one of the listed columns under “Resample by”, or “independent rows”")
    codes, labels = _factorize(values)
    g = int(len(labels))
    if block_length is not None:
        if block_length == "auto":
            block_length = auto_block_length(g)
        ok = isinstance(block_length, int | np.integer) and not isinstance(block_length, bool)
        if not ok or not 1 <= int(block_length) <= max(g, 1):
            raise InputError(
                f"block length {block_length!r} for '{cluster}': needs a whole number from 1 to the {g:,} values of "
                f"'{cluster}'", source=pset.source, columns=[str(cluster)],
                hint="pass block_length= a whole number in that range, 'auto', or None for whole clusters",
                app_hint="set the block length to a whole number in that range")
        block_length = int(block_length)
    return Clustering(str(cluster), codes, labels, block_length)


def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes sorted by value; every missing value its own cluster after the others."""
    series = pd.Series(values)
    try:
        codes, uniques = pd.factorize(series, sort=True)
    except TypeError:  # values of mixed types: ordered by their text
        codes, uniques = pd.factorize(series.astype(str), sort=True)
    codes = np.asarray(codes, dtype=np.int64)
    labels = np.asarray(uniques, dtype=object)
    missing = codes < 0
    if missing.any():
        m = int(missing.sum())
        codes[missing] = len(labels) + np.arange(m)
        labels = np.concatenate([labels, np.full(m, None, dtype=object)])
    return codes, labels


def moving_block_weights(n_clusters: int, block_length: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, G)`` moving-block bootstrap counts: ⌈G/k⌉ runs of k consecutive clusters with starts uniform on
    0 … G − k, the last run truncated so that every replicate's counts sum to G (Künsch 1989).

    Parameters
    ----------
    n_clusters : int
        G.
    block_length : int
        k.
    n_boot : int
        Replicates B.
    rng : numpy.random.Generator
        Random numbers.

    Returns
    -------
    ndarray of shape (n_boot, n_clusters)
        The weights (float).

    References
    ----------
    .. [1] Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. *Annals of
       Statistics* 17(3), 1217–1241.

    Examples
    --------
    >>> w = moving_block_weights(10, 3, 4, np.random.default_rng(0))
    >>> w.shape, w.sum(axis=1).tolist()
    ((4, 10), [10.0, 10.0, 10.0, 10.0])
    """
    g, k = int(n_clusters), int(block_length)
    if g <= 0 or n_boot <= 0:
        return np.zeros((max(n_boot, 0), max(g, 0)))
    k = min(max(k, 1), g)
    runs = math.ceil(g / k)
    starts = rng.integers(0, g - k + 1, size=(n_boot, runs))
    picks = (starts[:, :, None] + np.arange(k)).reshape(n_boot, runs * k)[:, :g]
    picks = picks + np.arange(n_boot)[:, None] * g
    return np.bincount(picks.ravel(), minlength=n_boot * g).reshape(n_boot, g).astype(float)


def cluster_design(clustering: Clustering, n_boot: int, seed: int | tuple[int, ...] | None) -> BlockDesign:
    """The bootstrap design of a clustering: blocks = clusters, weights from the cluster bootstrap (multinomial over
    the G clusters) or the moving-block bootstrap (:func:`moving_block_weights`), and the generator after drawing.

    Parameters
    ----------
    clustering : Clustering
        The clusters.
    n_boot : int
        Replicates B.
    seed : int, tuple of int or None
        Seed (``default_rng([seed, stream])`` for a tuple; None is 0, as everywhere here).

    Returns
    -------
    BlockDesign
        ``ids`` = the cluster codes, ``n_blocks`` = G, ``weights`` (B, G), ``rng``.

    References
    ----------
    .. [1] Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. *Journal of the Royal Statistical
       Society B* 69(3), 369–390.
    .. [2] Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. *Annals of
       Statistics* 17(3), 1217–1241.

    Examples
    --------
    >>> c = Clustering("date", np.array([0, 0, 1, 2, 2]), np.array([1, 2, 3]), None)
    >>> d = cluster_design(c, 5, 0)
    >>> d.n_blocks, d.weights.shape, d.weights.sum(axis=1).tolist()
    (3, (5, 3), [3.0, 3.0, 3.0, 3.0, 3.0])
    """
    seed = 0 if seed is None else seed
    rng = np.random.default_rng(list(seed) if isinstance(seed, tuple) else int(seed))
    g = clustering.n_clusters
    if clustering.block_length is None:
        weights = block_bootstrap_weights(g, n_boot, rng)
    else:
        weights = moving_block_weights(g, clustering.block_length, n_boot, rng)
    ids = np.asarray(clustering.codes, dtype=np.intp)
    return BlockDesign(ids, g, weights, rng)


def centred_bootstrap_p(stat: Any, boot: np.ndarray, null_value: Any) -> np.ndarray | float:
    """Two-sided bootstrap test of θ = θ₀ from replicates θ*: p = (1 + #{|θ* − θ̂| ≥ |θ̂ − θ₀|}) / (1 + B), the
    replicates centred at the estimate stand in for the estimate's law around the truth (Hall & Wilson 1991); NaN
    replicates are left out.

    Parameters
    ----------
    stat : float or array of shape (q,)
        θ̂.
    boot : ndarray of shape (B,) or (B, q)
        Replicates.
    null_value : float or array of shape (q,)
        θ₀.

    Returns
    -------
    float or ndarray of shape (q,)
        p-values (NaN without a finite replicate or a finite θ̂).

    References
    ----------
    .. [1] Hall, P. & Wilson, S. R. (1991). Two guidelines for bootstrap hypothesis testing. *Biometrics* 47(2),
       757–762.

    Examples
    --------
    >>> boot = np.random.default_rng(0).normal(0.5, 0.1, size=999)
    >>> float(centred_bootstrap_p(0.5, boot, 0.0)) < 0.01, float(centred_bootstrap_p(0.5, boot, 0.45)) > 0.5
    (True, True)
    """
    boot = np.asarray(boot, dtype=float)
    scalar = boot.ndim == 1
    b2 = boot[:, None] if scalar else boot
    theta = np.atleast_1d(np.asarray(stat, dtype=float))
    dev = np.abs(theta - np.atleast_1d(np.asarray(null_value, dtype=float)))
    p = centred_distance_p(dev, np.abs(b2 - theta))
    return float(p[0]) if scalar else p


def centred_distance_p(distance_obs: Any, distance_boot: np.ndarray) -> np.ndarray | float:
    """Bootstrap p-value of a distance that is 0 under the null: the observed D = ‖m̂ − m₀‖ against the centred
    replicates D* = ‖m* − m̂‖ (same norm), p = (1 + #{D* ≥ D}) / (1 + B), NaN replicates left out (Hall & Wilson
    1991; for the Kolmogorov distance of an empirical process, Bickel & Freedman 1981).

    Parameters
    ----------
    distance_obs : float or array of shape (q,)
        D.
    distance_boot : ndarray of shape (B,) or (B, q)
        D* per replicate.

    Returns
    -------
    float or ndarray of shape (q,)
        p-values.

    References
    ----------
    .. [1] Hall, P. & Wilson, S. R. (1991). Two guidelines for bootstrap hypothesis testing. *Biometrics* 47(2),
       757–762.
    .. [2] Bickel, P. J. & Freedman, D. A. (1981). Some asymptotic theory for the bootstrap. *Annals of Statistics*
       9(6), 1196–1217.

    Examples
    --------
    >>> float(centred_distance_p(0.3, np.linspace(0.0, 0.4, 99)))
    0.26
    """
    boot = np.asarray(distance_boot, dtype=float)
    scalar = boot.ndim == 1
    b2 = boot[:, None] if scalar else boot
    d = np.atleast_1d(np.asarray(distance_obs, dtype=float))
    finite = np.isfinite(b2)
    count = ((b2 >= d) & finite).sum(axis=0)
    n = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where((n > 0) & np.isfinite(d), (1.0 + count) / (1.0 + n), np.nan)
    return float(p[0]) if scalar else p


def cluster_mean_test(x: np.ndarray, codes: np.ndarray, null_value: float = 0.0) -> tuple[float, float, float]:
    """Cluster-robust t test of E[x] = μ₀: x̄ = Σx/N, CR1 variance
    V = G/(G − 1) · Σ_g (Σ_{i∈g} (x_i − x̄))² / N², t = (x̄ − μ₀)/√V, two-sided p from Student t with G − 1 degrees of
    freedom (Cameron & Miller 2015, §3 and §4.3).

    Parameters
    ----------
    x : ndarray of shape (n,)
        Per-row values.
    codes : ndarray of int, shape (n,)
        Cluster of each row (0 … G − 1).
    null_value : float, default 0.0
        μ₀.

    Returns
    -------
    t, p, se : float
        Statistic, p-value and the standard error √V (NaN with fewer than 2 clusters or no spread).

    References
    ----------
    .. [1] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. *Journal of
       Human Resources* 50(2), 317–372.
    .. [2] Liang, K.-Y. & Zeger, S. L. (1986). Longitudinal data analysis using generalized linear models.
       *Biometrika* 73(1), 13–22.

    Examples
    --------
    >>> x = np.array([1.0, 1.2, -0.9, -1.1, 0.1, -0.1])
    >>> t, p, se = cluster_mean_test(x, np.array([0, 0, 1, 1, 2, 2]))
    >>> round(t, 3), round(p, 3)
    (0.055, 0.961)
    """
    x = np.asarray(x, dtype=float)
    codes = np.asarray(codes, dtype=np.intp)
    n = x.size
    g = int(codes.max()) + 1 if n else 0
    if n == 0 or g < 2:
        return float("nan"), float("nan"), float("nan")
    mean = float(x.mean())
    resid = np.bincount(codes, weights=x - mean, minlength=g)
    var = g / (g - 1) * float(resid @ resid) / n ** 2
    se = math.sqrt(var)
    if not se > 0:
        return float("nan"), float("nan"), se
    t = (mean - float(null_value)) / se
    return t, float(2.0 * stats.t.sf(abs(t), g - 1)), se


def cluster_bootstrap_t(x: np.ndarray, codes: np.ndarray, weights: np.ndarray, null_value: float = 0.0,
                        level: float = 0.95) -> tuple[float, float, float, float]:
    """Cluster bootstrap-t test and interval of a mean: with cluster totals T_g = Σ_{i∈g} x_i and sizes n_g, the
    estimate x̄ = ΣT/Σn and its CR1 standard error s = √(G/(G − 1) Σ_g (T_g − n_g x̄)²)/N; each replicate (weights
    w, clusters drawn w_g times) gives x̄* = Σw T/Σw n and s* from the same formula, so t* = (x̄* − x̄)/s* is one
    matrix product away; p = min(1, 2 (1 + min(#{t* ≥ t}, #{t* ≤ t}))/(1 + B)) for t = (x̄ − μ₀)/s, interval
    [x̄ − t*_{(1+level)/2} s, x̄ − t*_{(1−level)/2} s] (equal-tailed, so a skewed law of x̄ — a coverage near 1,
    a mean of squares — is followed to second order where the t test with G − 1 d.f. is not; Hall 1992,
    Cameron, Gelbach & Miller 2008).

    Parameters
    ----------
    x : ndarray of shape (n,)
        Per-row values.
    codes : ndarray of int, shape (n,)
        Cluster of each row (0 … G − 1).
    weights : ndarray of shape (B, G)
        Cluster (or moving-block) bootstrap weights (:func:`cluster_design`).
    null_value : float, default 0.0
        μ₀.
    level : float, default 0.95
        Two-sided level of the interval.

    Returns
    -------
    p, low, high, se : float
        p-value, interval and the standard error s (NaN with fewer than 2 clusters or no spread).

    References
    ----------
    .. [1] Hall, P. (1992). *The Bootstrap and Edgeworth Expansion*. Springer.
    .. [2] Cameron, A. C., Gelbach, J. B. & Miller, D. L. (2008). Bootstrap-based improvements for inference with
       clustered errors. *The Review of Economics and Statistics* 90(3), 414–427.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> codes = np.repeat(np.arange(30), 10)
    >>> x = rng.normal(size=30)[codes] + rng.normal(size=300)
    >>> w = cluster_design(Clustering("g", codes, np.arange(30), None), 999, 1).weights
    >>> p, lo, hi, se = cluster_bootstrap_t(x, codes, w)
    >>> bool(lo < x.mean() < hi), p > 0.05
    (True, True)
    """
    x = np.asarray(x, dtype=float)
    codes = np.asarray(codes, dtype=np.intp)
    weights = np.asarray(weights, dtype=float)
    g = int(weights.shape[1]) if weights.ndim == 2 else 0
    nan4 = (float("nan"),) * 4
    if x.size == 0 or g < 2:
        return nan4
    t_g = np.bincount(codes, weights=x, minlength=g)
    n_g = np.bincount(codes, minlength=g).astype(float)
    cols = np.stack([t_g, n_g, t_g * t_g, t_g * n_g, n_g * n_g], axis=1)
    tot = cols.sum(axis=0)
    rep = weights @ cols
    c = g / (g - 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = tot[0] / tot[1]
        se = math.sqrt(max(c * (tot[2] - 2 * mean * tot[3] + mean * mean * tot[4]), 0.0)) / tot[1]
        m_star = rep[:, 0] / rep[:, 1]
        var_star = c * (rep[:, 2] - 2 * m_star * rep[:, 3] + m_star * m_star * rep[:, 4])
        se_star = np.sqrt(np.maximum(var_star, 0.0)) / rep[:, 1]
        t_star = (m_star - mean) / se_star
    t_star = t_star[np.isfinite(t_star)]
    if not se > 0 or t_star.size == 0:
        return nan4
    t0 = (mean - float(null_value)) / se
    b = t_star.size
    p = min(1.0, 2.0 * (1.0 + min(int(np.count_nonzero(t_star >= t0)), int(np.count_nonzero(t_star <= t0))))
            / (1.0 + b))
    q_lo, q_hi = np.quantile(t_star, [0.5 - level / 2.0, 0.5 + level / 2.0])
    return float(p), float(mean - q_hi * se), float(mean - q_lo * se), float(se)


def too_few_clusters_sentence(clustering: Clustering) -> str:
    """The verdict sentence of a subset whose rows fall into fewer than :data:`MIN_TESTABLE_CLUSTERS` clusters: not
    tested, and why.

    Parameters
    ----------
    clustering : Clustering
        The subset's clustering.

    Returns
    -------
    str
        The sentence.

    References
    ----------
    .. [1] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. *Journal of
       Human Resources* 50(2), 317–372.

    Examples
    --------
    >>> too_few_clusters_sentence(Clustering("reference_date", np.array([0, 1, 2]), np.array([1, 2, 3])))[:60]
    'Not tested: these rows fall into only 3 reference_date clust'
    """
    g = clustering.n_clusters
    return (f"Not tested: these rows fall into only {g} {clustering.column} cluster{'s' if g != 1 else ''}, and rows "
            f"that depend on each other within a cluster need at least {MIN_TESTABLE_CLUSTERS} clusters for intervals "
            "and tests; the values are shown without them.")


def clustered_sentence(sentence: str, clustering: Clustering | None) -> str:
    """A verdict sentence that ends by naming the clustering its tests respected: "…; whole reference_date clusters
    resampled (40 clusters)."; unchanged without a clustering.

    Parameters
    ----------
    sentence : str
        The verdict's sentence.
    clustering : Clustering or None
        The clustering.

    Returns
    -------
    str
        The sentence.

    References
    ----------
    .. [1] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. *Journal of
       Human Resources* 50(2), 317–372.

    Examples
    --------
    >>> c = Clustering("date", np.array([0, 1]), np.array(["a", "b"]), None)
    >>> clustered_sentence("No evidence of miscalibration.", c)
    'No evidence of miscalibration; whole date clusters resampled (2 clusters).'
    """
    if clustering is None:
        return sentence
    return f"{sentence.rstrip().rstrip('.')}; {clustering.describe()}."
