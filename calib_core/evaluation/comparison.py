"""``cc.compare_models``: forecasting models judged against a baseline and against each other.

For every model: its mean score on the forecast units all models forecast, its relative score against the baseline
(the pairwise relative score of Cramer et al. 2022, with a cluster-bootstrap interval), a Diebold–Mariano test of
equal expected score against the baseline (Harvey–Leybourne–Newbold correction, on cluster means of the score
differences, Holm over the models) and its place in the model confidence set (Hansen, Lunde & Nason 2011).  The
statistics are in :mod:`calib_core.evaluation.comparison_tests`, the forecast units in
:mod:`calib_core.evaluation.comparison_units`, the per-row scores in ``regression_compare`` /
``classification_compare``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.clustering import MIN_RELIABLE_CLUSTERS, Clustering, cluster_design, resolve_clustering
from ..base.predictions import InputError, PredictionSet
from ..base.significance import block_design, format_p, holm_adjust
from ..diagnosis.nonfinite_units import unit_names
from .classification_compare import classification_unit_scores
from .comparison_tests import (
    PairSums,
    cluster_pair_sums,
    diebold_mariano,
    model_confidence_set,
    overlap_lag,
    relative_scores,
)
from .comparison_units import UnitMatch, UnitScores, match_units
from .regression_compare import regression_unit_scores

__all__ = ["ModelComparison", "compare_models", "TABLE_COLUMNS", "PAIRWISE_COLUMNS"]

#: The columns of :attr:`ModelComparison.table`
TABLE_COLUMNS = ["model", "n_units", "mean_score", "relative_score", "relative_lo", "relative_hi", "dm_statistic",
                 "p_value", "p_holm", "better_than_baseline", "in_mcs", "mcs_p"]
#: The columns of :attr:`ModelComparison.pairwise`
PAIRWISE_COLUMNS = ["model_a", "model_b", "ratio", "p_value"]
_INDEPENDENT_BLOCKS = 1_000  # random blocks of units for the bootstrap of independent units (exact when U ≤ this)


@dataclass(frozen=True)
class ModelComparison:
    """Models compared on the forecast units they share (the result of :func:`compare_models`).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per model (:data:`TABLE_COLUMNS`): ``model``; ``n_units`` (units the model forecast);
        ``mean_score`` (on the units every model forecast); ``relative_score`` with its interval ``relative_lo``,
        ``relative_hi``; ``dm_statistic``, ``p_value`` and ``p_holm`` (test of equal expected score against the
        baseline; NaN for the baseline); ``better_than_baseline`` (lower score, Holm-adjusted p < α); ``in_mcs`` and
        ``mcs_p`` (the model confidence set at level 1 − α).
    pairwise : pandas.DataFrame
        One row per ordered pair of distinct models (:data:`PAIRWISE_COLUMNS`): ``ratio`` = mean score of a / mean
        score of b on the units both forecast, ``p_value`` (unadjusted Diebold–Mariano test on those units).
    baseline : str
        The baseline model.
    score : str
        The score's key (``"wis"``, ``"crps"``, ``"log"``, ``"brier"``).
    score_label : str
        Its name in sentences.
    clustering : str
        How the units were resampled, in words.
    sentences : list of str
        One per model, in the order of ``table``.
    notes : list of str
        What the numbers rest on (baseline choice, units some model lacks, too few clusters …).
    alpha : float
        Level of the tests; the intervals and the confidence set are at 1 − α.
    n_common : int
        The units every model forecasts.
    lag : int
        h − 1, the HAC lag of the Diebold–Mariano tests (in clusters).
    units : str
        How forecast units were matched across models.

    References
    ----------
    .. [1] Cramer, E. Y. et al. (2022). Evaluation of individual and ensemble probabilistic forecasts of COVID-19
       mortality in the United States. *PNAS* 119(15), e2113561119.
    .. [2] Hansen, P. R., Lunde, A. & Nason, J. M. (2011). The model confidence set. *Econometrica* 79(2), 453–497.
    """

    table: pd.DataFrame
    pairwise: pd.DataFrame
    baseline: str
    score: str
    score_label: str
    clustering: str
    sentences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    alpha: float = 0.05
    n_common: int = 0
    lag: int = 0
    units: str = ""

    def __repr__(self) -> str:
        cols = ["model", "n_units", "mean_score", "relative_score", "p_holm", "in_mcs"]
        return (f"ModelComparison(score={self.score!r}, baseline={self.baseline!r}, clustering={self.clustering!r},\n"
                f"{self.table[cols].to_string(index=False)})")


def _baseline(models: list[str], baseline: str | None, pset: PredictionSet) -> tuple[int, str]:
    if baseline is None:
        named = [i for i, m in enumerate(models) if "baseline" in m.lower()]
        if len(named) == 1:
            return named[0], f"baseline: '{models[named[0]]}' (the model named baseline; pass baseline= to choose)"
        return 0, f"baseline: '{models[0]}' (the first model; pass baseline= to choose another)"
    if str(baseline) not in models:
        listed = ", ".join(f"'{m}'" for m in models)
        raise InputError(f"baseline '{baseline}' is not a model of the data (models: {listed})", source=pset.source,
                         columns=["model"], hint="pass baseline= one of those models",
                         app_hint="pick the baseline among the listed models")
    return models.index(str(baseline)), f"baseline: '{baseline}'"


def _unit_scores(pset: PredictionSet, score: str | None) -> UnitScores:
    if pset.task == "regression":
        return regression_unit_scores(pset, score)
    return classification_unit_scores(pset, score)


def _unit_clustering(pset: PredictionSet, match: UnitMatch, cluster: str | None,
                     block_length: int | str | None) -> Clustering | None:
    """The clustering of the forecast units (one code per unit), or None for independent units."""
    c = resolve_clustering(pset, cluster, block_length)
    if c is None:
        return None
    per_unit = c.codes[match.first_row]
    bad = np.flatnonzero(c.codes != per_unit[match.unit])
    if bad.size:
        raise InputError(f"cannot resample by '{c.column}': it takes different values for one forecast unit in "
                         f"different models ({np.unique(match.unit[bad]).size:,} units); models are compared unit by "
                         "unit, so the clusters must group whole units", source=pset.source, columns=[c.column],
                         hint="pass cluster= a column of the forecast units (e.g. the reference date) or None",
                         app_hint="resample by a column of the forecast units (e.g. the reference date)")
    return c.take(match.first_row)


def _lag(pset: PredictionSet, clustering: Clustering | None, match: UnitMatch, keep: np.ndarray) -> int:
    """HAC lag in clusters: later forecast dates before an earlier date's last target (0 unless clusters are dates)."""
    if clustering is None or pset.units is None:
        return 0
    labels = pd.Index(clustering.labels)
    if labels.inferred_type not in ("datetime64", "datetime", "date"):
        return 0
    codes = clustering.codes[keep]
    if "target_end_date" in pset.units.columns:
        target = pd.to_datetime(pset.units["target_end_date"].to_numpy()[match.first_row][keep])
        last = pd.Series(target).groupby(codes).max()
        return overlap_lag(pd.to_datetime(labels[last.index.to_numpy()]).to_numpy(), last.to_numpy())
    if "horizon" in pset.units.columns:
        return max(0, int(np.nanmax(pset.units["horizon"].to_numpy(dtype=float))) - 1)
    return 0


def _dm(x: np.ndarray, codes: np.ndarray | None, g: int, i: int, j: int, lag: int) -> tuple[float, float]:
    """DM-HLN of model i against model j on the units both forecast: cluster means (or units) in order."""
    both = np.isfinite(x[:, i]) & np.isfinite(x[:, j])
    d = x[both, i] - x[both, j]
    if codes is not None:
        c = codes[both]
        n = np.bincount(c, minlength=g)
        d = np.bincount(c, weights=d, minlength=g)[n > 0] / n[n > 0]
    r = diebold_mariano(d, lag)
    return float(r.statistic[0]), float(r.p_value[0])


def _sentence(model: str, row: pd.Series, base_mean: float, label: str, alpha: float, is_base: bool) -> str:
    mcs = "in the model confidence set" if row["in_mcs"] else "outside the model confidence set"
    if is_base:
        return f"model {model} is the baseline (mean {label} {row['mean_score']:.4g}; {mcs})."
    level = f"{100 * (1 - alpha):g}%"
    p = format_p(float(row["p_holm"]))
    p = p + " after Holm" if np.isfinite(row["p_holm"]) else "no test"
    if np.isfinite(row["relative_score"]):
        return (f"model {model}'s {label} is {row['relative_score']:.2f} of the baseline's ({level} interval "
                f"{row['relative_lo']:.2f}–{row['relative_hi']:.2f}; {p}; {mcs}).")
    return (f"model {model}'s mean {label} is {row['mean_score']:.4g}, the baseline's {base_mean:.4g} "
            f"({p}; {mcs}).")


def compare_models(pset: PredictionSet, baseline: str | None = None, *, score: str | None = None,
                   cluster: str | None = "auto", block_length: int | str | None = None,
                   units: str | Sequence[str] | None = None, alpha: float = 0.05, n_boot: int = 1000,
                   seed: int = 0) -> ModelComparison:
    """Compare the models of a prediction set with a baseline and with each other, by a proper score.

    Forecast units are matched across models (:func:`calib_core.evaluation.comparison_units.match_units`); every
    unit gets its score S_ui (lower is better: ``wis`` for quantile sets, ``crps`` or ``log`` for Gaussian and
    ensemble forecasts, ``brier`` or ``log`` for classification).  Then, with clusters g (``cluster``: a hub's
    reference date by default; independent units otherwise):

    * mean score L̄_i on the units every model forecasts;
    * relative score θ_i/θ_b, θ_i = (Π_j r_ij)^{1/M}, r_ij = Σ_{C_ij} S_ui / Σ_{C_ij} S_uj on the units C_ij models i
      and j share (Cramer et al. 2022; two models: the ratio of mean scores), percentile interval of the cluster
      bootstrap (whole clusters, or moving blocks with ``block_length``);
    * Diebold–Mariano test against the baseline: d_g = cluster mean of S_ui − S_ub, in cluster order, T clusters,
      S* = √((T + 1 − 2h + h(h − 1)/T)/T) · d̄/√(V̂/T) with the HAC variance V̂ of lag h − 1 (h − 1 = how many later
      forecast dates come before an earlier date's last target; 0 without dates), Student t with T − 1 degrees of
      freedom (Harvey, Leybourne & Newbold 1997); Holm over the models;
    * the model confidence set at level 1 − α (Hansen, Lunde & Nason 2011; T_max, cluster bootstrap).

    Parameters
    ----------
    pset : PredictionSet
        Predictions of two models or more (a ``model`` column), regression with a predictive distribution or
        classification with every class's probability.
    baseline : str, optional
        The baseline model (default: the one model whose name contains "baseline", else the first model).
    score : str, optional
        ``"wis"``, ``"crps"``, ``"log"`` (regression) or ``"brier"``, ``"log"`` (classification).
    cluster : str or None, default "auto"
        The column whose values are resampled together
        (:func:`calib_core.base.clustering.resolve_clustering`); None: independent units.
    block_length : int, "auto" or None, default None
        Moving blocks of that many consecutive clusters instead of whole independent clusters.
    units : str or sequence of str, optional
        The columns that name a forecast unit (default: a hub's task IDs, else matching by position).
    alpha : float, default 0.05
        Level of the tests; intervals and the confidence set at 1 − α.
    n_boot : int, default 1000
        Bootstrap replicates.
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    ModelComparison
        The table, the pairwise ratios, sentences and notes.

    Raises
    ------
    InputError
        One model only; a baseline that is not a model; units that cannot be matched; an unknown score or column.

    References
    ----------
    .. [1] Diebold, F. X. & Mariano, R. S. (1995). Comparing predictive accuracy. *Journal of Business & Economic
       Statistics* 13(3), 253–263.
    .. [2] Harvey, D., Leybourne, S. & Newbold, P. (1997). Testing the equality of prediction mean squared errors.
       *International Journal of Forecasting* 13(2), 281–291.
    .. [3] Hansen, P. R., Lunde, A. & Nason, J. M. (2011). The model confidence set. *Econometrica* 79(2), 453–497.
    .. [4] Cramer, E. Y. et al. (2022). Evaluation of individual and ensemble probabilistic forecasts of COVID-19
       mortality in the United States. *PNAS* 119(15), e2113561119.
    .. [5] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    .. [6] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.

    Examples
    --------
    >>> import calib_core as cc
    >>> from calib_core.data.hub_example import example_hub_frames
    >>> hub = example_hub_frames(n_rounds=12, seed=1)
    >>> ps = cc.load_predictions(hub.forecasts, truth=hub.truth)
    >>> res = cc.compare_models(ps, baseline="team1-calibrated", n_boot=200)
    >>> res.table["model"].tolist(), res.table["relative_score"].round(2).tolist(), res.table["in_mcs"].tolist()
    (['team1-calibrated', 'team2-narrow', 'team3-biased'], [1.0, 1.02, 1.52], [True, True, False])
    >>> res.clustering
    'whole reference_date clusters resampled (12 clusters)'
    """
    match = match_units(pset, units)
    models = match.models
    b, base_note = _baseline(models, baseline, pset)
    sc = _unit_scores(pset, score)
    x = match.matrix(sc.values)
    notes = [base_note, f"forecast units matched {match.how}: {match.n_units:,} units."] + list(match.notes)
    if sc.note:
        notes.append(sc.note.rstrip(".") + ".")
    present = np.zeros((match.n_units, len(models)), dtype=bool)
    present[match.unit, match.model_code] = True
    bad = present & ~np.isfinite(x)
    for i in np.flatnonzero(bad.any(axis=0)):
        rows = np.flatnonzero((match.model_code == i) & bad[match.unit, i])  # the set's rows of those units
        notes.append(f"model {models[i]}: {int(bad[:, i].sum()):,} units with no finite {sc.label} left out "
                     f"({unit_names(pset, rows)}: a value beyond the floating-point range?).")
    x[bad] = np.nan
    avail = np.isfinite(x)
    common = avail.all(axis=1)
    n_common = int(common.sum())
    for i in np.flatnonzero(~avail.all(axis=0)):
        lack = int((~avail[:, i]).sum())
        notes.append(f"model {models[i]} lacks {lack:,} of {match.n_units:,} units; compared on the {n_common:,} "
                     "all share (relative scores: on the units each pair shares).")
    if n_common == 0:
        raise InputError("no forecast unit is forecast by every model", source=pset.source, columns=match.columns,
                         hint="compare fewer models (select the rows of those that forecast the same units)",
                         app_hint="select models that forecast the same units")

    clustering = _unit_clustering(pset, match, cluster, block_length)
    if clustering is None:
        design = block_design(match.n_units, min(match.n_units, _INDEPENDENT_BLOCKS), n_boot, (int(seed), 29))
        codes, g, dm_codes = np.asarray(design.ids), design.n_blocks, None
        described = "independent forecast units"
    else:
        design = cluster_design(clustering, n_boot, seed)
        codes, g, dm_codes = clustering.codes, clustering.n_clusters, clustering.codes
        described = clustering.describe()
        g_common = np.unique(codes[common]).size
        if g_common < MIN_RELIABLE_CLUSTERS:
            notes.append(f"only {g_common} {clustering.column} clusters: the tests, intervals and the confidence set "
                         "are unreliable with so few clusters.")
    lag = _lag(pset, clustering, match, common)
    if lag:
        notes.append(f"Diebold–Mariano variance with lag {lag} (forecasts of the next {lag} {clustering.column} "
                     "values are made before an earlier one's targets are known).")
        if clustering is not None and clustering.block_length is None:
            notes.append(f"the intervals and the confidence set draw whole {clustering.column} clusters independently; "
                         "forecasts of neighbouring dates overlap, so moving blocks of consecutive dates suit them "
                         "better (moving blocks in time, automatic length).")

    pairs: PairSums = cluster_pair_sums(x, codes, g)
    rel = relative_scores(pairs, b, design.weights, level=1.0 - alpha)
    if not np.isfinite(rel.relative).all():
        notes.append(f"relative scores need positive mean {sc.label}s; where a mean is not positive the models are "
                     "compared by the difference of their means.")
    xc = np.where(common[:, None], x, np.nan)
    sums_c = np.stack([np.bincount(codes[common], weights=xc[common, i], minlength=g) for i in range(len(models))],
                      axis=1)
    n_c = np.bincount(codes[common], minlength=g).astype(float)
    mean = sums_c.sum(axis=0) / n_common
    stat = np.full(len(models), np.nan)
    pval = np.full(len(models), np.nan)
    for i in range(len(models)):
        if i != b:
            stat[i], pval[i] = _dm(xc, dm_codes, g, i, b, lag)
    if np.isnan(np.delete(pval, b)).any():
        notes.append("no Diebold–Mariano test for some models: too few clusters for the lag, or no differences.")
    p_holm = holm_adjust(pval)
    mcs = model_confidence_set(sums_c, n_c, design.weights, alpha)
    table = pd.DataFrame({
        "model": models,
        "n_units": avail.sum(axis=0).astype(np.int64),
        "mean_score": mean,
        "relative_score": rel.relative,
        "relative_lo": rel.low,
        "relative_hi": rel.high,
        "dm_statistic": stat,
        "p_value": pval,
        "p_holm": p_holm,
        "better_than_baseline": (p_holm < alpha) & (stat < 0),
        "in_mcs": mcs.included,
        "mcs_p": mcs.p_value,
    }, columns=TABLE_COLUMNS)
    rows = []
    for i in range(len(models)):
        for j in range(len(models)):
            if i != j:
                rows.append((models[i], models[j], rel.ratio[i, j], _dm(x, dm_codes, g, i, j, lag)[1]))
    pairwise = pd.DataFrame(rows, columns=PAIRWISE_COLUMNS)
    sentences = [_sentence(models[i], table.iloc[i], float(mean[b]), sc.label, alpha, i == b)
                 for i in range(len(models))]
    return ModelComparison(table=table, pairwise=pairwise, baseline=models[b], score=sc.key, score_label=sc.label,
                           clustering=described, sentences=sentences, notes=notes, alpha=float(alpha),
                           n_common=n_common, lag=int(lag), units=match.how)
