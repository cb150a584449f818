"""The classification half of the mergeable summaries (:mod:`calib_core.scale.summary`), the mirror of
:mod:`calib_core.scale.regression`.

Per (model, group) a summary part holds, per confidence bin m (M bins: Guo et al.'s equal-width bins on [0, 1],
or the spec's equal-mass edges from a first pass): ``n`` (rows), ``hit`` (correct top-label predictions, an
integer count), the exact sums ``x:conf`` of the confidences and ``x:conf_var`` of c(1 − c) (the
null variance of the bin's hits); the exact sums ``x:nll`` and ``x:brier`` and the
number of correct rows; for full probability vectors the one-vs-rest counts per (class, bin) ``cw_n``, ``cw_hit``
and the exact ``x:cw_p`` (Σ p_k; Kull et al. 2019's class-wise ECE); for binary sets the positive-class bins
``pos_n``, ``pos_hit``, ``x:pos_p``; and the bootstrap-block sums ``blk`` (G × [n, correct, Σconf, ΣNLL, ΣBrier])
and ``blk_bins`` (G × M × [n, Σconf, Σhit]).

Every metric of ``ClassificationRows.statistics`` is a function of these sums: ECE = Σ_m |Σhit − Σconf|/N,
MCE = max_m |acc − conf|, accuracy, mean confidence, NLL, Brier, class-wise ECE, ECE/MCE of the positive class —
exact (the sums are exact and rounded once), for the equal-mass strategy when the spec's edges are the data's
``numpy.quantile`` edges (class-wise ECE is given for equal-width bins only).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..base.binning import bins_from_edges, equal_mass_edges, uniform_bin_index, uniform_edges
from ..base.mergeable import SummarySpec, as_ids, exact_bin_sums, exact_float, exact_fraction, hash_block
from ..base.predictions import PredictionSet, iter_subsets
from ..diagrams.classification import RELIABILITY_COLUMNS
from ..metrics.classification import ClassificationRows

__all__ = [
    "classification_spec",
    "spec_for_classification",
    "summarize_classification_rows",
    "summarize_classification",
    "classification_values",
    "classification_rows_values",
    "classification_block_statistics",
    "classification_diagrams_from_part",
]


def classification_spec(
    *,
    layout: str,
    n_classes: int,
    n_bins: int = 15,
    strategy: str = "uniform",
    closed: str = "right",
    conf_edges: dict[tuple[str, str], np.ndarray] | None = None,
    n_blocks: int = 256,
    seed: int = 0,
) -> SummarySpec:
    """A classification :class:`~calib_core.base.mergeable.SummarySpec`: the bins every chunk is summarised on.

    Parameters
    ----------
    layout : {"probs", "top_label"}
        Full probability vectors or the top label with its confidence only.
    n_classes : int
        K, the number of classes (0 for a top-label set).
    n_bins : int, default 15
        M, the number of confidence bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width bins on [0, 1] (Guo et al. 2017) or equal-mass bins cut at ``conf_edges``.
    closed : {"right", "left"}, default "right"
        Which end of a bin is closed.
    conf_edges : dict of (str, str) to ndarray of shape (M + 1,), optional
        Per (model, group) the equal-mass edges of ``strategy="quantile"``: ``binning.equal_mass_edges`` of the
        confidences.
    n_blocks : int, default 256
        G, the bootstrap blocks the rows are hashed into.
    seed : int, default 0
        Seed of the block hash.

    Returns
    -------
    SummarySpec
        The frozen spec (task ``"classification"``).

    Raises
    ------
    ValueError
        If ``strategy`` is neither ``"uniform"`` nor ``"quantile"``.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    """
    if strategy not in ("uniform", "quantile"):
        raise ValueError(f"strategy must be 'uniform' or 'quantile', not {strategy!r}")
    edges = tuple((m, g, tuple(float(v) for v in np.asarray(e, dtype=float)))
                  for (m, g), e in sorted((conf_edges or {}).items()))
    return SummarySpec(task="classification", layout=layout, n_bins=int(n_bins), strategy=strategy, closed=closed,
                       conf_edges=edges, n_classes=int(n_classes), n_blocks=int(n_blocks), seed=int(seed))


def _rows(pset: PredictionSet, mask: Any, n_bins: int = 15, closed: str = "right") -> ClassificationRows:
    """Prepared rows with equal-width bins (the equal-mass edges of a summary come from its spec)."""
    sel = (lambda a: a) if mask is None else (lambda a: None if a is None else a[mask])
    if pset.top_label_only:
        correct = sel(pset.labels) == sel(pset.point)
        return ClassificationRows.from_top_label(sel(pset.confidence), correct, n_bins=n_bins, closed=closed)
    return ClassificationRows(sel(pset.labels), sel(pset.probs), sel(pset.logits), n_bins=n_bins, closed=closed)


def classification_rows_values(pset: PredictionSet) -> np.ndarray:
    """The top-label confidence of every row: what equal-mass confidence bins are cut on.

    Parameters
    ----------
    pset : PredictionSet
        A classification set (probability vectors or top labels).

    Returns
    -------
    ndarray of shape (n,)
        c_i = max_k p_ik (or the stated confidence of a top-label set).

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    """
    return _rows(pset, None).confidence


def spec_for_classification(pset: PredictionSet, *, by_group: bool = True, **options: Any) -> SummarySpec:
    """The spec of an in-memory classification set (or a sample standing for the data).

    K, the layout and, for ``strategy="quantile"``, the equal-mass confidence edges of every (model, group) — what
    a first pass over distributed data computes.

    Parameters
    ----------
    pset : PredictionSet
        The classification rows.
    by_group : bool, default True
        Cut edges per (model, group) as well as per model over all groups.
    **options
        Passed to :func:`classification_spec` (``n_bins``, ``strategy``, ``closed``, ``n_blocks``, ``seed``).

    Returns
    -------
    SummarySpec
        The spec, with the set's own equal-mass edges for ``strategy="quantile"``.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    """
    n_bins = int(options.get("n_bins", 15))
    edges = {}
    if options.get("strategy", "uniform") == "quantile":
        for model, group, mask in iter_subsets(pset, by_group):
            edges[(model, group)] = equal_mass_edges(_rows(pset, mask).confidence, n_bins)
    k = 0 if pset.top_label_only else int(pset.probs.shape[1])
    return classification_spec(layout="top_label" if pset.top_label_only else "probs", n_classes=k,
                               conf_edges=edges, **options)


def _bins(values: np.ndarray, spec: SummarySpec, edges: np.ndarray | None) -> np.ndarray:
    if spec.strategy == "uniform" or edges is None:
        return uniform_bin_index(values, spec.n_bins, 0.0, 1.0, spec.closed)
    return bins_from_edges(values, edges, spec.closed)


def _classwise_index(p: np.ndarray, nb: int, closed: str) -> np.ndarray:
    """(N, K) flat (class, bin) index of every p_ik on M equal-width bins: ``uniform_bin_index`` only for the
    entries outside the first bin (with K classes almost all p_ik are small), the rest is bin 0."""
    n, k = p.shape
    edge1 = uniform_edges(0.0, 1.0, nb)[1]
    flat = np.broadcast_to(np.arange(k, dtype=np.int64) * nb, (n, k)).copy()
    # bin 0 is [0, e_1] for closed="right" and [0, e_1) for closed="left"; NaN goes elsewhere (uniform_bin_index)
    outside = ~(p <= edge1) if closed == "right" else ~(p < edge1)
    if outside.any():
        flat[outside] += uniform_bin_index(p[outside], nb, 0.0, 1.0, closed)
    return flat


def summarize_classification_rows(rows: ClassificationRows, row_ids: np.ndarray, spec: SummarySpec,
                                  conf_edges: np.ndarray | None) -> dict[str, np.ndarray]:
    """The summary part of one (model, group) chunk: per-bin counts and exact sums.

    Parameters
    ----------
    rows : ClassificationRows
        The chunk's prepared rows.
    row_ids : ndarray of shape (n,) of int64
        The rows' global ids (they pick each row's bootstrap block).
    spec : SummarySpec
        The bins (its ``strategy``, ``n_bins``, ``closed``, ``n_blocks`` and ``seed``).
    conf_edges : ndarray of shape (M + 1,) or None
        The subset's equal-mass edges (None: equal-width bins).

    Returns
    -------
    dict of str to ndarray
        The part: ``n``, ``hit``, the exact sums ``x:conf`` and ``x:conf_var``; for probability vectors ``x:nll``,
        ``x:brier`` and the class-wise ``cw_n``, ``cw_hit``, ``x:cw_p`` (and for two classes the positive-class bins
        ``pos_n``, ``pos_hit``, ``x:pos_p``, ``x:pos_var``); the block sums ``blk`` and ``blk_bins`` (module
        docstring).

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    """
    nb = spec.n_bins
    n = rows.n
    uniform = spec.strategy == "uniform" or conf_edges is None
    if uniform and rows.strategy == "uniform" and rows.n_bins == nb and rows.closed == spec.closed:
        b = rows.bin_index  # the rows' own equal-width bins (the same ``uniform_bin_index``)
    else:
        b = _bins(rows.confidence, spec, conf_edges)
    hit = rows.correct > 0.5
    part: dict[str, np.ndarray] = {
        "n": np.bincount(b, minlength=nb).astype(np.int64),
        "hit": np.bincount(b[hit], minlength=nb).astype(np.int64),
    }
    part["x:conf"] = exact_bin_sums(b, nb, rows.confidence)[0]
    part["x:conf_var"] = exact_bin_sums(b, nb, rows.confidence * (1.0 - rows.confidence))[0]
    zero = np.zeros(n, dtype=np.int64)
    cols = [np.ones(n), rows.correct, rows.confidence]
    if not rows.top_label_only:
        for name, v in (("nll", rows.nll_rows), ("brier", rows.brier_rows)):
            s, nf = exact_bin_sums(zero, 1, v)
            part[f"x:{name}"] = s
            if nf.any():
                part[f"nf:{name}"] = nf
            cols.append(v)
        k = rows.k
        p = rows.probs.astype(float)
        flat = _classwise_index(p, nb, spec.closed)
        part["cw_n"] = np.bincount(flat.reshape(-1), minlength=k * nb).reshape(k, nb).astype(np.int64)
        s, _ = exact_bin_sums(flat.reshape(-1), k * nb, p.reshape(-1))
        part["x:cw_p"] = s.reshape(k, nb)
        hit_idx = flat[np.arange(n), rows.labels]
        part["cw_hit"] = np.bincount(hit_idx, minlength=k * nb).reshape(k, nb).astype(np.int64)
        if k == 2:
            v = p[:, 1]
            pb = _bins(v, spec, None) if spec.strategy == "uniform" else None
            if pb is not None:
                pos = rows.labels == 1
                part["pos_n"] = np.bincount(pb, minlength=nb).astype(np.int64)
                part["pos_hit"] = np.bincount(pb[pos], minlength=nb).astype(np.int64)
                part["x:pos_p"] = exact_bin_sums(pb, nb, v)[0]
                part["x:pos_var"] = exact_bin_sums(pb, nb, v * (1.0 - v))[0]
    g = spec.n_blocks
    blk = hash_block(row_ids, spec.seed, g)
    sums = np.empty((g, len(cols)))
    for j, col in enumerate(cols):  # a handful of columns, not rows
        sums[:, j] = np.bincount(blk, weights=col, minlength=g)
    part["blk"] = sums
    kb = blk * nb + b
    bins3 = np.empty((g * nb, 3))
    bins3[:, 0] = np.bincount(kb, minlength=g * nb)
    bins3[:, 1] = np.bincount(kb, weights=rows.confidence, minlength=g * nb)
    bins3[:, 2] = np.bincount(kb, weights=rows.correct, minlength=g * nb)
    part["blk_bins"] = bins3.reshape(g, nb, 3)
    return part


def summarize_classification(
    pset: PredictionSet, *, spec: SummarySpec, row_ids: np.ndarray | None = None, by_group: bool = True
) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Summary parts of every (model, group) of a classification chunk.

    Parameters
    ----------
    pset : PredictionSet
        The chunk.
    spec : SummarySpec
        The bins every chunk shares.
    row_ids : ndarray of shape (n,) of int64, optional
        Global ids of the chunk's rows (default: the set's ``row_number``).
    by_group : bool, default True
        Also summarise each group of each model.

    Returns
    -------
    dict of (str, str) to dict
        (model, group) → the part of :func:`summarize_classification_rows`; empty subsets are left out.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    """
    if row_ids is not None:
        ids = np.asarray(row_ids, dtype=np.int64)
    elif pset.row_number is not None:
        ids = np.asarray(pset.row_number, dtype=np.int64)
    else:
        ids = as_ids(None, pset.n_rows)
    parts = {}
    for model, group, mask in iter_subsets(pset, by_group):
        if not mask.any():
            continue
        whole = bool(mask.all())
        rows = _rows(pset, None if whole else mask, spec.n_bins, spec.closed)
        parts[(str(model), str(group))] = summarize_classification_rows(
            rows, ids if whole else ids[mask], spec, spec.conf_edges_for(str(model), str(group)))
    return parts


def _errors(count: np.ndarray, s_conf: np.ndarray, s_hit: np.ndarray) -> tuple[float, float]:
    total = count.sum()
    if total <= 0:
        return float("nan"), float("nan")
    diff = np.abs(s_hit - s_conf)
    ok = count > 0
    return float(diff.sum() / total), float(np.max(diff[ok] / count[ok])) if ok.any() else float("nan")


def _exact_diff(hits: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """|Σhit − Σconf| per bin, exactly (integer hits minus the exact sum), rounded once."""
    return np.array([abs(float(int(h) - exact_fraction(s))) for h, s in zip(hits.reshape(-1), sums.reshape(-1))],
                    dtype=float).reshape(hits.shape)


def classification_values(part: dict, spec: SummarySpec) -> dict[str, float]:
    """Every scalar of ``ClassificationRows.statistics`` from a summary part, exact.

    ECE = Σ_m |Σhit_m − Σconf_m| / N (Guo et al. 2017), MCE = max_m |acc_m − conf_m|, accuracy, mean confidence,
    NLL, Brier; for probability vectors on equal-width bins the class-wise ECE (Kull et al. 2019) and, for two
    classes, ECE and MCE of the positive class.  The sums are exact and rounded once (module docstring).

    Parameters
    ----------
    part : dict of str to ndarray
        A (merged) summary part.
    spec : SummarySpec
        The spec the part was summarised with.

    Returns
    -------
    dict of str to float
        Metric name → value.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    """
    count = part["n"].astype(float)
    n = int(part["n"].sum())
    diff = _exact_diff(part["hit"], part["x:conf"])
    ok = count > 0
    out = {"ece": float(diff.sum() / n), "mce": float(np.max(diff[ok] / count[ok])) if ok.any() else float("nan"),
           "accuracy": int(part["hit"].sum()) / n,
           "mean_confidence": float(exact_fraction(sum(int(v) for v in part["x:conf"])) / n)}
    if "x:nll" in part:
        for name in ("nll", "brier"):
            nf = part.get(f"nf:{name}")
            v = exact_float(part[f"x:{name}"], nf)[0]
            out[name] = float(exact_fraction(part[f"x:{name}"][0]) / n) if np.isfinite(v) else float(v)
        if spec.strategy == "uniform":
            d = _exact_diff(part["cw_hit"], part["x:cw_p"])
            out["classwise_ece"] = float(np.mean(d.sum(axis=1) / part["cw_n"].sum(axis=1)))
        if "pos_n" in part:
            dp = _exact_diff(part["pos_hit"], part["x:pos_p"])
            cnt = part["pos_n"].astype(float)
            okp = cnt > 0
            out["ece_positive"] = float(dp.sum() / n)
            out["mce_positive"] = float(np.max(dp[okp] / cnt[okp])) if okp.any() else float("nan")
    return out


def classification_block_statistics(sums: np.ndarray, bin_sums: np.ndarray) -> dict[str, np.ndarray]:
    """Metrics of bootstrap replicate (or jackknife) sums.

    Parameters
    ----------
    sums : ndarray of shape (R, q)
        Replicate sums in the column order of ``blk`` (n, correct, Σconf[, ΣNLL, ΣBrier]).
    bin_sums : ndarray of shape (R, M, 3)
        Replicate per-bin sums (n, Σconf, Σhit).

    Returns
    -------
    dict of str to ndarray of shape (R,)
        accuracy, mean_confidence, ece, mce (and nll, brier for probability vectors) of every replicate.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        n = sums[:, 0]
        out = {"accuracy": sums[:, 1] / n, "mean_confidence": sums[:, 2] / n}
        if sums.shape[1] > 3:
            out["nll"] = sums[:, 3] / n
            out["brier"] = sums[:, 4] / n
        cnt, sc, sh = bin_sums[..., 0], bin_sums[..., 1], bin_sums[..., 2]
        d = np.abs(sh - sc)
        out["ece"] = d.sum(axis=1) / cnt.sum(axis=1)
        out["mce"] = np.nanmax(np.where(cnt > 0, d / cnt, np.nan), axis=1)
    return out


def _reliability(count: np.ndarray, s_conf: np.ndarray, s_hit: np.ndarray, edges: np.ndarray) -> pd.DataFrame:
    total = count.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.where(count > 0, s_conf / count, np.nan)
        acc = np.where(count > 0, s_hit / count, np.nan)
    nb = count.size
    return pd.DataFrame({"bin": np.arange(nb), "lower": edges[:-1].astype(float), "upper": edges[1:].astype(float),
                         "count": count, "fraction": count / total if total > 0 else np.full(nb, np.nan),
                         "confidence": conf, "accuracy": acc, "gap": conf - acc}, columns=RELIABILITY_COLUMNS)


def classification_diagrams_from_part(part: dict, spec: SummarySpec, *, model: str = "", group: str = "",
                                      classes: list | None = None) -> dict[str, pd.DataFrame]:
    """The diagram tables of ``classification.diagrams`` from a part, exact (the sums are exact).

    Parameters
    ----------
    part : dict of str to ndarray
        A (merged) summary part.
    spec : SummarySpec
        The spec the part was summarised with.
    model, group : str, default ""
        The subset, whose equal-mass edges label the bins of ``strategy="quantile"``.
    classes : list, optional
        Class names, added to the per-class table as ``class_name`` when there are K of them.

    Returns
    -------
    dict of str to DataFrame
        ``reliability`` (the reliability diagram's table), ``per_class`` (probability vectors, equal-width bins) and
        ``reliability_positive`` (two classes).

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration.
       Advances in Neural Information Processing Systems 32 (NeurIPS).
    """
    nb = spec.n_bins
    edges = spec.conf_edges_for(model, group) if spec.strategy == "quantile" else None
    edges = uniform_edges(0.0, 1.0, nb) if edges is None else edges
    count = part["n"].astype(float)
    d = {"reliability": _reliability(count, exact_float(part["x:conf"]), part["hit"].astype(float), edges)}
    if "cw_n" in part and spec.strategy == "uniform":
        k = part["cw_n"].shape[0]
        s_p = exact_float(part["x:cw_p"])
        frames = []
        for c in range(k):  # K small tables
            t = _reliability(part["cw_n"][c].astype(float), s_p[c], part["cw_hit"][c].astype(float),
                             uniform_edges(0.0, 1.0, nb))
            t.insert(0, "class", c)
            frames.append(t)
        pc = pd.concat(frames, ignore_index=True)
        if classes is not None and len(classes) == k:
            pc.insert(1, "class_name", [classes[c] for c in pc["class"]])
        d["per_class"] = pc
    if "pos_n" in part:
        d["reliability_positive"] = _reliability(part["pos_n"].astype(float), exact_float(part["x:pos_p"]),
                                                 part["pos_hit"].astype(float), uniform_edges(0.0, 1.0, nb))
    return d
