"""Per-threshold reliability of ordinal forecasts: one binary reliability diagram per cumulative event "Y ≤ k".

A forecast p over K ordered categories states, for every threshold k = 1 … K − 1, the probability
P_k = Σ_{j≤k} p_j of the binary event O_k = 1{Y ≤ k}.  The forecast is calibrated for ordinal use when every one
of these K − 1 binary forecasts is calibrated: P(Y ≤ k | P_k = x) = x.  The ranked probability score is the sum of
their Brier scores (:mod:`calib_core.metrics.classification_ordinal`), so this table says which thresholds its
miscalibration comes from.

For every threshold the project's binary machinery is reused unchanged:

* binned reliability (Guo et al. 2017 Fig. 1 on the positive class): ``n_bins`` bins of P_k, the mean forecast
  (``confidence``) against the observed frequency of Y ≤ k (``accuracy``), and the ECE of the event
  Σ_m |B_m|/N · |gap_m| (:func:`~calib_core.diagrams.classification.reliability_table`, ``target="positive"``);
* CORP (Dimitriadis, Gneiting & Jordan 2021): the PAV curve, its consistency band and the Brier decomposition of
  the event, whose MCB is tested against its law under calibration — outcomes redrawn O*_k ~ Bernoulli(P_k), PAV
  refitted (:func:`~calib_core.diagrams.classification_corp.corp`), p = (1 + #{MCB* ≥ MCB})/(1 + R).

The K − 1 tests share the rows, so they are dependent; Holm's step-down adjustment (valid under any dependence)
holds the family-wise error over the thresholds at ``alpha``: ``adjusted_p`` ≤ ``alpha`` flags a threshold.

Dependent rows (``clustering``, e.g. a forecast hub's reference dates): the MCB null redraws outcomes independently
row by row, so it would reject a calibrated forecaster whose rows share a date's surprise; each threshold is then
tested by its binned ECE instead, against the centred cluster bootstrap (Hall & Wilson 1991): with
μ̂_m = Σ_{i∈m}(O_i − P_i)/N per bin, D = Σ_m |μ̂_m| (= ECE_k) against D* = Σ_m |μ*_m − μ̂_m| over whole clusters (or
moving blocks) re-drawn, p = (1 + #{D* ≥ D})/(1 + R); ``mcb_null_mean`` stays the independent-rows reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.clustering import Clustering, centred_distance_p, cluster_design
from ..base.significance import holm_adjust
from ..metrics.classification import Strategy, confidence_bins
from ..metrics.classification_ordinal import cumulative_events, threshold_names
from .classification import RELIABILITY_COLUMNS, reliability_table
from .classification_corp import corp

__all__ = ["THRESHOLD_SUMMARY_COLUMNS", "ThresholdReliability", "threshold_reliability"]

#: Columns of :attr:`ThresholdReliability.summary` (one row per threshold).
THRESHOLD_SUMMARY_COLUMNS = ["threshold", "event", "n", "mean_forecast", "frequency", "brier", "ece", "mcb",
                             "mcb_null_mean", "p_value", "adjusted_p", "flag"]

_SEMANTICS = ("ordinal threshold k: x = predicted P(Y ≤ k) = Σ_{j≤k} p_j, y = observed frequency of Y ≤ k "
              "(one binary reliability diagram per threshold)")


@dataclass
class ThresholdReliability:
    """The per-threshold reliability of one set of ordinal forecasts (see the module docstring).

    Attributes
    ----------
    summary : pandas.DataFrame
        :data:`THRESHOLD_SUMMARY_COLUMNS`: per threshold its event name (``"≤ <class>"``), rows, mean forecast,
        observed frequency, Brier score of the event (the thresholds' Briers sum to the RPS), binned ECE, CORP MCB
        (Brier), MCB's mean under calibration, the MCB test's p-value, Holm-adjusted over the thresholds, and
        ``flag`` (adjusted p ≤ ``alpha``).
    bins : pandas.DataFrame
        ``threshold``, ``event`` + the reliability columns (``confidence`` = mean P_k in the bin, ``accuracy`` =
        frequency of Y ≤ k); (K − 1)·M rows.
    curves : pandas.DataFrame
        ``threshold``, ``event``, ``forecast``, ``recalibrated``, ``count``: the CORP (PAV) step curves.
    bands : pandas.DataFrame
        ``threshold``, ``event``, ``forecast``, ``consistency_low``, ``consistency_high``: where a calibrated
        forecaster's CORP curve falls (``band_level``) — NaN without null draws.
    info : dict
        Options: ``alpha``, ``n_bins``, ``n_resamples``, ``band_level``, ``semantics``.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability diagrams for probabilistic
           classifiers", PNAS 118(8), e2016191118, 2021.
    .. [2] S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian Journal of Statistics
           6(2), 65–70, 1979.
    """

    summary: pd.DataFrame
    bins: pd.DataFrame
    curves: pd.DataFrame
    bands: pd.DataFrame
    info: dict = field(default_factory=dict)


def _seed(seed: int | None, k: int) -> int | None:
    """An independent stream per threshold (None stays unseeded)."""
    return None if seed is None else int(np.random.SeedSequence([int(seed), k]).generate_state(1)[0])


def threshold_reliability(
    probs: np.ndarray,
    labels: np.ndarray,
    *,
    classes: list | None = None,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
    n_resamples: int = 1000,
    band_level: float = 0.90,
    alpha: float = 0.05,
    seed: int | None = 0,
    clustering: Clustering | None = None,
) -> ThresholdReliability:
    """Reliability of the cumulative forecasts P(Y ≤ k) = Σ_{j≤k} p_j against 1{Y ≤ k} for every threshold
    k = 1 … K − 1: binned reliability and ECE, the CORP curve, its Brier MCB and the MCB test, Holm over the
    thresholds.

    ECE_k = Σ_m |B_m|/N · |mean_{B_m} P_k − freq_{B_m}(Y ≤ k)|; MCB_k = mean (P_k − O_k)² − mean (P̂_k − O_k)², P̂_k
    the PAV fit of O_k on P_k; p_k = (1 + #{MCB*_k ≥ MCB_k})/(1 + R) with O* ~ Bernoulli(P_k); adjusted p = Holm.

    Parameters
    ----------
    probs : ndarray of shape (N, K)
        Probabilities of the K ordered categories (in their order).
    labels : ndarray of shape (N,)
        Observed category codes 0 … K − 1.
    classes : list, optional
        The K class names (the events are named ``"≤ <class>"``).
    n_bins : int, default 15
        Bins of the binned reliability diagrams.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.
    n_resamples : int, default 1000
        Null draws of the MCB test and the consistency band (0: no test; p-values NaN).
    band_level : float, default 0.90
        Pointwise level of the consistency band.
    alpha : float, default 0.05
        Family-wise level over the thresholds (Holm).
    seed : int or None, default 0
        Seeds the null draws (one stream per threshold).
    clustering : Clustering, optional
        Dependent rows (one code per row): the thresholds are tested by the centred cluster bootstrap of their
        binned ECE (module docstring; ``n_resamples`` replicates, one design shared by the thresholds).

    Returns
    -------
    ThresholdReliability
        Summary, bins, CORP curves and bands (see the class).

    References
    ----------
    .. [1] E. S. Epstein, "A scoring system for probability forecasts of ranked categories", Journal of Applied
           Meteorology 8(6), 985–987, 1969.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017.
    .. [3] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability diagrams for probabilistic
           classifiers", PNAS 118(8), e2016191118, 2021.
    .. [4] S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian Journal of Statistics
           6(2), 65–70, 1979.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet(np.ones(3), size=500)
    >>> y = (rng.random(500)[:, None] > p.cumsum(axis=1)).sum(axis=1)  # drawn from the forecasts
    >>> t = threshold_reliability(p, y, classes=["low", "mid", "high"], n_resamples=200)
    >>> t.summary["event"].tolist(), bool(t.summary["flag"].any())
    (['≤ low', '≤ mid'], False)
    """
    forecast, outcome = cumulative_events(probs, labels)
    names = threshold_names(classes, forecast.shape[1] + 1)
    n = forecast.shape[0]
    if n == 0:
        raise ValueError("no rows: per-threshold reliability needs at least one forecast")
    design = None
    if clustering is not None and n_resamples > 0:
        design = cluster_design(clustering, int(n_resamples), (0 if seed is None else int(seed), 0x0DD2))
    records, bins, curves, bands = [], [], [], []
    for k, name in enumerate(names):  # K − 1 thresholds (a loop over events, not rows)
        x, o = forecast[:, k], outcome[:, k]
        rel = reliability_table(o.astype(np.int64), np.column_stack([1.0 - x, x]), n_bins=n_bins,
                                strategy=strategy, target="positive")
        gap = rel["gap"].to_numpy(dtype=float)
        ece = float(np.nansum(rel["fraction"].to_numpy(dtype=float) * np.abs(gap)))
        rel.insert(0, "event", name)
        rel.insert(0, "threshold", k)
        bins.append(rel)
        c = corp(x, o, target="positive", n_resamples=int(n_resamples), n_boot=0, band_level=band_level,
                 seed=_seed(seed, k))
        dec = c.decomposition.set_index("score").loc["brier"]
        curves.append(c.curve.assign(threshold=k, event=name))
        bands.append(c.bands[["forecast", "consistency_low", "consistency_high"]].assign(threshold=k, event=name))
        records.append({"threshold": k, "event": name, "n": n, "mean_forecast": float(x.mean()),
                        "frequency": float(o.mean()), "brier": float(np.mean((x - o) ** 2)), "ece": ece,
                        "mcb": float(dec["mcb"]), "mcb_null_mean": float(dec["mcb_null_mean"]),
                        "p_value": float(dec["mcb_p_value"]) if design is None else
                        _cluster_ece_p(x, o, n_bins, strategy, design)})
    summary = pd.DataFrame.from_records(records)
    summary["adjusted_p"] = holm_adjust(summary["p_value"].to_numpy(dtype=float))
    summary["flag"] = np.isfinite(summary["adjusted_p"]) & (summary["adjusted_p"] <= alpha)
    summary = summary[THRESHOLD_SUMMARY_COLUMNS]
    lead = ["threshold", "event"]
    info = {"alpha": alpha, "n_bins": n_bins, "strategy": strategy, "n_resamples": int(n_resamples),
            "band_level": band_level, "semantics": _SEMANTICS, "test": "CORP MCB (Brier) against O* ~ Bernoulli(P_k); "
            "Holm over the thresholds"}
    if design is not None:
        info["test"] = (f"binned ECE of the event against its centred bootstrap ({clustering.describe()}); Holm over "
                        f"the thresholds")
        info["clustering"] = clustering.describe()
    out = ThresholdReliability(
        summary=summary,
        bins=pd.concat(bins, ignore_index=True)[[*lead, *RELIABILITY_COLUMNS]],
        curves=pd.concat(curves, ignore_index=True)[[*lead, "forecast", "recalibrated", "count"]],
        bands=pd.concat(bands, ignore_index=True)[[*lead, "forecast", "consistency_low", "consistency_high"]],
        info=info,
    )
    for t in (out.summary, out.bins, out.curves, out.bands):
        t.attrs.update(info)
    return out


def _cluster_ece_p(x: np.ndarray, o: np.ndarray, n_bins: int, strategy: Strategy, design) -> float:
    """p-value of the binned ECE of one event under a cluster design: D = Σ_m |μ̂_m| against the centred
    D* = Σ_m |μ*_m − μ̂_m|, μ_m = Σ_{i∈m}(O_i − P_i)/N."""
    idx, _ = confidence_bins(x, n_bins, strategy)
    key = design.ids * n_bins + idx
    size = design.n_blocks * n_bins
    sums = [np.bincount(key, weights=w, minlength=size).reshape(design.n_blocks, n_bins)
            for w in (np.ones_like(x), o - x)]
    n = float(x.shape[0])
    mu = sums[1].sum(axis=0) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        d_boot = np.abs((design.weights @ sums[1]) / (design.weights @ sums[0]).sum(axis=1, keepdims=True)
                        - mu).sum(axis=1)
    return float(centred_distance_p(float(np.abs(mu).sum()), d_boot))
