"""The regression half of the mergeable summaries (:mod:`calib_core.scale.summary`): what a chunk of rows contributes.

The spec is built in :mod:`calib_core.scale.regression_spec`, the metrics computed back from the merged sums in
:mod:`calib_core.scale.regression_values` and the diagram tables in :mod:`calib_core.scale.regression_diagrams`; their
names are re-exported here (``cc.regression.summary``).

Per (model, group) a summary part holds, per Levi σ-bin b (B bins, equal-count edges from the spec):

* ``n`` (rows), ``nz`` (rows with a finite z = ε/σ), ``sigma_min``/``sigma_max``;
* exact sums (``x:<name>``, Python ints, :mod:`calib_core.base.mergeable`) of σ, σ² (the rounded product, as the
  in-memory metrics use it) and its rounding error (``var_err``: σ² = var + var_err exactly, Dekker's product), σ⁴
  (``var2``, the Gaussian ENCE null's variance),
  ε², |ε|, NLL, CRPS, z, z², z³, z⁴ (the powers as rounded products), z·Φ(z) and φ(z) (the reliability score's
  sums), and per interval level c the width and the interval score (or, for Gaussians, the penalty σ(|z| − k)₊);
  non-finite values of each are counted in ``nf:<name>``;
* ``in:<c>`` the rows inside the central interval of level c;
* quantile sets: ``stated_lo`` / ``stated_hi`` and ``stated_open:<c>`` / ``stated_closed:<c>``, the counts at the
  stated levels (:mod:`calib_core.scale.regression_stated`);
* ``curve`` the PIT histogram per σ-bin on the quantile-curve grid (so a σ-bin selection redraws the conditional
  quantile curve exactly at its levels and the conditional PIT histogram);

and for the whole part: ``pit_le`` the fine PIT histogram (bin k counts e_{k−1} < u ≤ e_k, plus u ≤ e_0 and
u > e_K), ``pit_eq`` the PIT values exactly on each edge, ``pit_sum`` Σu per fine bin (float); ``z_hist``/``z_sum``
the same for z on ``z_edges`` with ``z_min``/``z_max``; ``blk`` the per-bootstrap-block sums (float, G × q) of the
smooth metrics and ``blk_bins`` the per-block, per-σ-bin count, Σσ², Σε² (ENCE intervals).

Ensembles (``SampleSet``): the randomised rank PIT draws V from a hash of the row id (not from a generator in row
order), so it does not depend on the chunking; the in-memory ``cc.diagnose`` draws V in row order, so PIT-based
numbers of an ensemble agree in law, not value, with it (tests compare them at the same V).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..base.binning import uniform_bin_index
from ..base.mergeable import (
    SummarySpec,
    bin_by_edges,
    exact_bin_sums_columns,
    hash_block,
    hash_uniform,
)
from ..base.predictions import PredictionSet, iter_subsets
from ..base.regression import (
    LOG_2PI,
    Gaussian,
    PredictiveDistribution,
    SampleSet,
    norm_cdf,
    norm_pdf,
    norm_ppf,
)
from ..metrics.regression import RegressionRows
from ..metrics.regression_wis import wis_parts
from .regression_diagrams import regression_diagrams_from_part
from .regression_kernels import gaussian_part
from .regression_sharpness import scaled_sums_vanish, scaled_variance_columns
from .regression_spec import (
    default_pit_edges,
    regression_spec,
    row_ids_of,
    silverman_bandwidths,
    spec_for_regression,
)
from .regression_stated import stated_part
from .regression_values import (
    BOUNDED_METRICS,
    EXACT_METRICS,
    UNAVAILABLE_METRICS,
    block_statistics,
    coverage_tag,
    point_block_statistics,
    regression_bounds,
    regression_values,
    undefined_z_of_part,
)

__all__ = [
    "default_pit_edges",
    "regression_spec",
    "spec_for_regression",
    "ensemble_pit",
    "ensemble_logpdf",
    "silverman_bandwidths",
    "summarize_regression_rows",
    "summarize_regression",
    "regression_values",
    "undefined_z_of_part",
    "regression_bounds",
    "regression_diagrams_from_part",
    "block_statistics",
    "point_block_statistics",
    "summarize_point_rows",
    "EXACT_METRICS",
    "BOUNDED_METRICS",
    "UNAVAILABLE_METRICS",
]


_silverman = silverman_bandwidths

COMPILED_SUMMARISER = True
"""Gaussian parts by the compiled summariser (:func:`~calib_core.scale.regression_kernels.gaussian_part`); False: the
NumPy passes (the reference the tests compare it with)."""


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's exact product: a·b = p + e with p = fl(a·b) (Veltkamp splitting; |a|, |b| < 2⁹⁹⁶)."""
    p = a * b
    c = 134217729.0 * a
    ah = c - (c - a)
    al = a - ah
    c = 134217729.0 * b
    bh = c - (c - b)
    bl = b - bh
    with np.errstate(invalid="ignore"):
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.where(np.isfinite(p), e, 0.0)


def _cells(index: np.ndarray, n: int, names_values: list[tuple[str, np.ndarray]], part: dict) -> None:
    """Exact per-cell sums of several columns on the same cells (the cell keys computed once)."""
    found = exact_bin_sums_columns(index, n, [v for _, v in names_values])
    for (name, _), (s, nf) in zip(names_values, found, strict=True):
        part[f"x:{name}"] = s
        if nf.any():
            part[f"nf:{name}"] = nf


def _wis_columns(y: np.ndarray, dist) -> list[tuple[str, np.ndarray]]:
    """(key, per-row values) of the WIS and its parts (:func:`~calib_core.metrics.regression_wis.wis_parts`); none
    when a quantile set states neither a median nor a central pair."""
    try:
        return list(wis_parts(y, dist).columns().items())
    except ValueError:
        return []


def _hist(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin k (0..K+1) of every value: #{edges < value} — bin k ≥ 1 is (e_{k−1}, e_k], 0 is ≤ e_0, K+1 is > e_K."""
    return np.searchsorted(edges, values, side="left")


_UNIT_CELLS = 1 << 14  # cells of the lookup table of _unit_hist (a power of two: u·2¹⁴ is exact)


def _unit_hist(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """:func:`_hist` for values in [0, 1) and sorted edges on [0, 1] (the fine PIT edges), without a binary search.

    With G = 2¹⁴ cells, the cell j = ⌊u·G⌋ of u is exact (G is a power of two), so j/G ≤ u < (j + 1)/G; the
    count starts at #{e < j/G} (a table of G + 1 entries) and adds the edges inside the cell below u, one
    vectorised comparison per edge the fullest cell holds (one or two for the default 2,000 fine bins).  The same
    integers as ``searchsorted(edges, u, "left")``; values in the end cells, outside [0, 1) or NaN take the binary
    search."""
    v = np.asarray(values, dtype=float)
    g = _UNIT_CELLS
    starts = np.searchsorted(edges, np.arange(g + 1) / g, side="left")
    # the end cells hold the geometric tail edges (many per cell): their few values take the binary search
    depth = int(np.max(np.diff(starts[1:-1]))) if starts.size > 3 else 0
    inside = (v >= 1.0 / g) & (v < 1.0 - 1.0 / g)
    j = np.where(inside, v, 0.0) * g
    k = starts[j.astype(np.int64)]
    last = edges.size - 1
    for _ in range(depth):
        k += (edges[np.minimum(k, last)] < v) & (k <= last)
    if not inside.all():
        out = ~inside
        k[out] = np.searchsorted(edges, v[out], side="left")
    return k


def _uniform_hist(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """:func:`_hist` for equal-width edges in O(1) per value (``binning.uniform_bin_index`` and two end checks)."""
    k = uniform_bin_index(values, edges.size - 1, float(edges[0]), float(edges[-1]), "right", edges=edges) + 1
    k[values <= edges[0]] = 0
    k[values > edges[-1]] = edges.size
    return k


def summarize_regression_rows(
    y: np.ndarray,
    dist: PredictiveDistribution,
    row_ids: np.ndarray,
    spec: SummarySpec,
    sigma_edges: tuple[np.ndarray, np.ndarray] | None,
) -> dict[str, np.ndarray]:
    """The summary part of one (model, group) chunk of rows with a predictive distribution.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The rows' Gaussian, quantile-set or ensemble predictions.
    row_ids : ndarray of shape (n,) of int64
        The rows' global ids (bootstrap blocks, ties of σ, an ensemble's PIT randomisation).
    spec : SummarySpec
        The grids every chunk shares.
    sigma_edges : (ndarray, ndarray) or None
        The subset's inner equal-count σ edges (values, row ids); None: a single σ-bin.

    Returns
    -------
    dict of str to ndarray
        The part: per σ-bin counts and exact sums, the fine PIT and z histograms and the bootstrap-block sums
        (module docstring).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Gneiting, T., & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       Journal of the American Statistical Association, 102(477), 359–378.
    .. [4] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    """
    if COMPILED_SUMMARISER and type(dist) is Gaussian:  # the compiled loop, the same bits (regression_kernels)
        found = gaussian_part(y, dist, row_ids, spec, sigma_edges)
        if found is not None:
            return found
    y = np.asarray(y, dtype=float)
    ids = np.asarray(row_ids, dtype=np.int64)
    n = y.shape[0]
    r = RegressionRows(y, dist, pit_seed=None)
    gaussian = isinstance(dist, Gaussian)
    r._gaussian = gaussian  # per-row formulas by layout, not by whether this chunk happens to have σ = 0 rows
    if isinstance(dist, SampleSet):
        r.__dict__["u"] = ensemble_pit(y, dist, ids, spec.seed)
        r.__dict__["neg_logpdf"] = -ensemble_logpdf(y, dist, spec.kde_floor)
    nb = spec.n_bins
    if sigma_edges is None:
        b = np.zeros(n, dtype=np.int64)
    else:
        b = bin_by_edges(r.sigma, ids, sigma_edges[0], sigma_edges[1])
    part: dict[str, np.ndarray] = {"n": np.bincount(b, minlength=nb).astype(np.int64)}
    smin = np.full(nb, np.inf)
    smax = np.full(nb, -np.inf)
    np.minimum.at(smin, b, r.sigma)  # ufunc.at: O(N) without a sort
    np.maximum.at(smax, b, r.sigma)
    empty = part["n"] == 0
    smin[empty] = np.nan
    smax[empty] = np.nan
    part["sigma_min"], part["sigma_max"] = smin, smax
    var, var_err = _two_product(r.sigma, r.sigma)
    z = r.z
    zok = np.isfinite(z)
    every = bool(zok.all())  # every z finite (the usual case): views, not copies, and counts by complement
    zsel = slice(None) if every else zok
    zb = b[zsel]
    zf = z[zsel]
    z2 = zf * zf
    part["nz"] = np.bincount(zb, minlength=nb).astype(np.int64)
    u = r.u
    uz = (u if gaussian else norm_cdf(z))[zsel]
    phi = (r.phi if gaussian else norm_pdf(z))[zsel]
    abs_err = np.abs(r.eps)
    # Σσ² at 2^∓600 (sharpness at any σ): both columns are all zeros when σ lies in [2⁻⁸⁹, 2⁶²), the usual case
    vanish = not empty.all() and scaled_sums_vanish(float(np.nanmin(smin)), float(np.nanmax(smax)))
    scaled = [] if vanish else scaled_variance_columns(r.sigma)
    _cells(b, nb, [("sigma", r.sigma), ("var", var), ("var_err", var_err), ("var2", var * var), ("sq_err", r.sq_err),
                   ("abs_err", abs_err), ("nll", r.neg_logpdf), ("crps", r.crps), *scaled], part)
    if vanish:
        part["x:var_hi"] = np.array([0] * nb, dtype=object)
        part["x:var_lo"] = np.array([0] * nb, dtype=object)
    _cells(zb, nb, [("z", zf), ("z2", z2), ("z3", z2 * zf), ("z4", z2 * z2),
                    ("zu", zf * uz), ("phi", phi)], part)
    g = spec.n_blocks
    blk = hash_block(ids, spec.seed, g)
    # block columns: n, Σσ, Σσ², Σε², Σ|ε|, ΣNLL, ΣCRPS, n_z, Σz, Σz², then (inside, width, score) per level
    base_cols = [None, r.sigma, var, r.sq_err, abs_err, r.neg_logpdf, r.crps]
    blk_sums = np.empty((g, len(base_cols) + 3 + 3 * len(spec.coverages)))
    for j, col in enumerate(base_cols):  # loop over the columns, not rows
        blk_sums[:, j] = np.bincount(blk, weights=col, minlength=g)
    blk_z = blk[zsel]
    blk_sums[:, 7] = blk_sums[:, 0] if every else np.bincount(blk_z, minlength=g)
    blk_sums[:, 8] = np.bincount(blk_z, weights=zf, minlength=g)
    blk_sums[:, 9] = np.bincount(blk_z, weights=z2, minlength=g)
    base_cols += [None, None, None]
    abs_z = np.abs(z)
    for i, c in enumerate(spec.coverages):
        tag = coverage_tag(c)
        alpha = 1.0 - c
        j = len(base_cols) + 3 * i
        if gaussian:  # width = 2kσ and score = width + (2/α)σ(|z| − k)₊: only the rows outside carry a penalty
            k = float(norm_ppf(0.5 + c / 2.0))
            out = np.flatnonzero(abs_z > k) if every else np.flatnonzero(zok & (abs_z > k))
            pen = r.sigma[out] * (abs_z[out] - k)
            b_out, blk_out = b[out], blk[out]
            _cells(b_out, nb, [(f"pen_{tag}", pen)], part)
            blk_sums[:, j + 1] = 2.0 * k * blk_sums[:, 1]
            blk_sums[:, j + 2] = blk_sums[:, j + 1] + (2.0 / alpha) * np.bincount(blk_out, weights=pen, minlength=g)
            if every:  # inside = every row not outside: the counts by complement (the same integers)
                part[f"in:{tag}"] = part["n"] - np.bincount(b_out, minlength=nb)
                blk_sums[:, j] = blk_sums[:, 0] - np.bincount(blk_out, minlength=g)
                continue
            inside = zok & (abs_z <= k)
        else:
            lo, hi = dist.interval(c)
            inside = (y >= lo) & (y <= hi)
            width = hi - lo
            score = width + (2.0 / alpha) * (np.maximum(lo - y, 0) + np.maximum(y - hi, 0))
            _cells(b, nb, [(f"width_{tag}", width), (f"score_{tag}", score)], part)
            blk_sums[:, j + 1] = np.bincount(blk, weights=width, minlength=g)
            blk_sums[:, j + 2] = np.bincount(blk, weights=score, minlength=g)
        part[f"in:{tag}"] = np.bincount(b[inside], minlength=nb).astype(np.int64)
        blk_sums[:, j] = np.bincount(blk[inside], minlength=g)
    part.update(stated_part(y, dist, spec.coverages))  # quantile sets: counts at the stated levels
    _cells(b, nb, _wis_columns(y, dist), part)  # the WIS and its parts (exact sums)
    # PIT: fine histogram (exact counts at the edges, values on the edges, Σu per bin) and the per-σ-bin curve
    pe = np.asarray(spec.pit_edges, dtype=float)
    k_le = _unit_hist(u, pe)
    part["pit_le"] = np.bincount(k_le, minlength=pe.size + 1).astype(np.int64)
    on_edge = pe[np.minimum(k_le, pe.size - 1)] == u  # k_le = #{e < u}: u sits on e_k exactly when e_k == u
    part["pit_eq"] = np.bincount(k_le[on_edge], minlength=pe.size).astype(np.int64)[: pe.size]
    part["pit_sum"] = np.bincount(k_le, weights=u, minlength=pe.size + 1)
    ce = np.asarray(spec.curve_edges, dtype=float)
    # the curve grid is a subset of the fine edges: fine bin k (e_{k−1}, e_k] lies in curve bin #{c < e_k}
    to_curve = np.append(np.searchsorted(ce, pe, side="left"), ce.size + 1)
    part["curve"] = np.bincount(b * (ce.size + 1) + to_curve[k_le], minlength=nb * (ce.size + 1)).reshape(
        nb, ce.size + 1).astype(np.int64)
    ze = np.asarray(spec.z_edges, dtype=float)
    kz = _uniform_hist(zf, ze)
    part["z_hist"] = np.bincount(kz, minlength=ze.size + 1).astype(np.int64)
    part["z_sum"] = np.bincount(kz, weights=zf, minlength=ze.size + 1)
    part["z_min"] = np.array([zf.min() if zf.size else np.nan])
    part["z_max"] = np.array([zf.max() if zf.size else np.nan])
    part["blk"] = blk_sums
    kb = blk * nb + b
    bins3 = np.empty((g * nb, 3))
    bins3[:, 0] = np.bincount(kb, minlength=g * nb)
    bins3[:, 1] = np.bincount(kb, weights=var, minlength=g * nb)
    bins3[:, 2] = np.bincount(kb, weights=r.sq_err, minlength=g * nb)
    part["blk_bins"] = bins3.reshape(g, nb, 3)
    return part


def summarize_point_rows(err: np.ndarray, row_ids: np.ndarray, spec: SummarySpec) -> dict[str, np.ndarray]:
    """The part of point predictions: the count, exact Σε² and Σ|ε|, and the block sums.

    Parameters
    ----------
    err : ndarray of shape (n,)
        Errors ε = y − ŷ.
    row_ids : ndarray of shape (n,) of int64
        Global row ids (they pick each row's bootstrap block).
    spec : SummarySpec
        Gives ``n_blocks`` and ``seed``.

    Returns
    -------
    dict of str to ndarray
        ``n``, ``x:sq_err``, ``x:abs_err``, ``blk`` (G × [n, Σε², Σ|ε|]) and an empty ``blk_bins``.

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    zero = np.zeros(err.shape[0], dtype=np.int64)
    part: dict[str, np.ndarray] = {"n": np.array([err.shape[0]], dtype=np.int64)}
    _cells(zero, 1, [("sq_err", err * err), ("abs_err", np.abs(err))], part)
    blk = hash_block(row_ids, spec.seed, spec.n_blocks)
    sums = np.empty((spec.n_blocks, 3))
    for j, col in enumerate((np.ones(err.shape[0]), err * err, np.abs(err))):
        sums[:, j] = np.bincount(blk, weights=col, minlength=spec.n_blocks)
    part["blk"] = sums
    part["blk_bins"] = np.zeros((spec.n_blocks, 1, 3))
    return part


def ensemble_pit(y: np.ndarray, dist: SampleSet, row_ids: np.ndarray, seed: int) -> np.ndarray:
    """Randomised rank PIT of an ensemble with the randomisation hashed from the row id.

    u = (r + V·(1 + t)) / (M + 1), with r the members below y and t those equal to it, as ``SampleSet.pit``, but V
    from :func:`calib_core.base.mergeable.hash_uniform` of the row id (stream 2) instead of a generator in row order,
    so a row's PIT does not depend on the chunking.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : SampleSet
        The ensembles (M members per row).
    row_ids : ndarray of shape (n,) of int64
        Global row ids.
    seed : int
        Seed of the hash.

    Returns
    -------
    ndarray of shape (n,)
        The PIT values in [0, 1].

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.
    """
    below = (dist.samples < y[:, None]).sum(axis=1)
    ties = (dist.samples == y[:, None]).sum(axis=1)
    v = hash_uniform(row_ids, seed, 2)
    return (below + v * (1.0 + ties)) / (dist.n_samples + 1.0)


def ensemble_logpdf(y: np.ndarray, dist: SampleSet, floor: float) -> np.ndarray:
    """``SampleSet.logpdf`` (Gaussian kernel density, Silverman bandwidth) with the bandwidth floor given.

    The in-memory floor, 1% of the median bandwidth, is a whole-data number: the spec carries it.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : SampleSet
        The ensembles.
    floor : float
        The bandwidth floor (bandwidths below it are raised to it).

    Returns
    -------
    ndarray of shape (n,)
        log p_i(y_i) of every row's kernel density.

    References
    ----------
    .. [1] Silverman, B. W. (1986). Density Estimation for Statistics and Data Analysis, §3.4.2. Chapman & Hall.
    """
    m = dist.n_samples
    h = np.maximum(_silverman(dist.samples), max(floor, 1e-300))
    zz = (y[:, None] - dist.samples) / h[:, None]
    return special.logsumexp(-0.5 * zz * zz, axis=1) - np.log(m * h) - 0.5 * LOG_2PI


def summarize_regression(
    pset: PredictionSet, *, spec: SummarySpec, row_ids: np.ndarray | None = None, by_group: bool = True
) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Summary parts of every (model, group) of a regression chunk.

    Point predictions (no distribution) get the accuracy part of :func:`summarize_point_rows` (RMSE, MAE, as
    ``cc.diagnose`` reports them).

    Parameters
    ----------
    pset : PredictionSet
        The chunk.
    spec : SummarySpec
        The grids every chunk shares.
    row_ids : ndarray of shape (n,) of int64, optional
        Global ids of the chunk's rows (default: the set's ``row_number``).
    by_group : bool, default True
        Also summarise each group of each model.

    Returns
    -------
    dict of (str, str) to dict
        (model, group) → its part; empty subsets are left out.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    """
    ids = row_ids_of(pset, row_ids)
    parts = {}
    for model, group, mask in iter_subsets(pset, by_group):
        if not mask.any():
            continue
        whole = bool(mask.all())
        if pset.dist is None:  # point predictions: accuracy only (RMSE, MAE), as cc.diagnose reports them
            err = pset.y[mask] - pset.point[mask]
            parts[(str(model), str(group))] = summarize_point_rows(err, ids[mask], spec)
            continue
        y = pset.y if whole else pset.y[mask]
        dist = pset.dist if whole else pset.dist.take(mask)
        parts[(str(model), str(group))] = summarize_regression_rows(
            y, dist, ids if whole else ids[mask], spec, spec.sigma_edges_for(str(model), str(group)))
    return parts
