"""Inference for the ranked probability score of ordinal forecasts: the metric-table row of ``rps``.

RPS is a proper score (kind "proper score"): like NLL and Brier it gets no test and no verdict, but

* an interval: the percentile bootstrap of the mean over random row blocks (multinomial re-weighting of the
  blocks' sums, the same block bootstrap as the other classification means);
* a reference: its exact expectation when every category is drawn from its own forecast (Y ~ p),
  E RPS = (1/N) Σ_i Σ_k P_ik(1 − P_ik), with the ± z·sd range of the mean from the exact per-row variances
  (:func:`~calib_core.metrics.classification_ordinal.rps_expectation`) — what a perfectly calibrated forecaster
  with the same forecasts scores at this N.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from ..base.clustering import Clustering, cluster_design
from ..base.report import PROPER_SCORE, inference_metric_rows
from ..base.significance import block_bootstrap_weights, block_ids
from ..metrics.classification_ordinal import rps_expectation, rps_rows
from .classification_cells import percentile_bounds

__all__ = ["ordinal_metric_rows"]


def ordinal_metric_rows(
    probs: np.ndarray,
    labels: np.ndarray,
    *,
    model: str,
    group: str,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
    n_blocks: int = 500,
    clustering: Clustering | None = None,
) -> pd.DataFrame:
    """The metric-table row of the mean ranked probability score ``rps`` of one (model, group), with its
    percentile block-bootstrap interval and its value under perfect calibration.

    RPS = (1/N) Σ_i Σ_{k=1}^{K−1} (P_ik − 1{y_i ≤ k})²; reference E RPS = (1/N) Σ_i Σ_k P_ik(1 − P_ik) ± z·sqrt(Σ_i
    Var RPS_i)/N, z = Φ⁻¹((1 + level)/2).

    Parameters
    ----------
    probs : ndarray of shape (N, K)
        Probabilities of the K ordered categories.
    labels : ndarray of shape (N,)
        Observed category codes 0 … K − 1.
    model, group : str
        The (model, group) of the row.
    n_resamples : int, default 1000
        Bootstrap replicates (0: no interval).
    level : float, default 0.95
        Two-sided level of the interval and of the reference range.
    seed : int or None, default 0
        Seeds the bootstrap.
    n_blocks : int, default 500
        Random row blocks of the bootstrap.
    clustering : Clustering, optional
        Dependent rows: the bootstrap resamples whole clusters (or moving blocks of consecutive clusters;
        :func:`~calib_core.base.clustering.cluster_design`) instead of random row blocks.

    Returns
    -------
    pandas.DataFrame
        One row, the columns of :data:`calib_core.base.report.METRIC_COLUMNS`.

    References
    ----------
    .. [1] E. S. Epstein, "A scoring system for probability forecasts of ranked categories", Journal of Applied
           Meteorology 8(6), 985–987, 1969.
    .. [2] A. H. Murphy, "A note on the ranked probability score", Journal of Applied Meteorology 10(1), 155–156,
           1971.
    .. [3] B. Efron and R. J. Tibshirani, An Introduction to the Bootstrap, Chapman & Hall, 1993.

    Examples
    --------
    >>> p = np.tile([0.2, 0.5, 0.3], (200, 1))
    >>> y = np.random.default_rng(1).choice(3, size=200, p=[0.2, 0.5, 0.3])
    >>> row = ordinal_metric_rows(p, y, model="m", group="all", n_resamples=200)
    >>> row["metric"].tolist(), round(float(row["perfect"].iloc[0]), 3)
    (['rps'], 0.37)
    """
    r = rps_rows(probs, labels)
    n = r.size
    value = float(r.mean()) if n else float("nan")
    mean, var = rps_expectation(probs)
    z = float(special.ndtri(0.5 + level / 2.0))
    ref = float(mean.mean()) if n else float("nan")
    half = z * float(np.sqrt(var.sum())) / n if n else float("nan")
    record = {"perfect": ref, "perfect_low": ref - half, "perfect_high": ref + half, "kind": PROPER_SCORE,
              "note": "ranked probability score (ordered categories): the sum of the Brier scores of the events "
                      "Y ≤ k over the thresholds; reference: its expectation with categories drawn from the forecasts"}
    if n_resamples > 0 and n > 1:
        if clustering is not None:
            design = cluster_design(clustering, int(n_resamples), (0 if seed is None else int(seed), 0x0DD1))
            block, n_b, w = design.ids, design.n_blocks, design.weights
        else:
            rng = np.random.default_rng(None if seed is None else [int(seed), 0x0DD1])
            block, n_b = block_ids(n, n_blocks, rng)
        sums = np.bincount(block, weights=r, minlength=n_b)
        counts = np.bincount(block, minlength=n_b).astype(float)
        if clustering is None:
            w = block_bootstrap_weights(n_b, int(n_resamples), rng)
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = (w @ sums) / (w @ counts)
        record["ci_low"], record["ci_high"] = percentile_bounds(boot, level)
        record["interval"] = "percentile bootstrap" if clustering is None else "percentile cluster bootstrap"
    inf = pd.DataFrame([record], index=pd.Index(["rps"]))
    return inference_metric_rows(model, group, {"rps": value}, inf)
