"""The Compare models page without Streamlit: whether the loaded data can be compared, the page's option decisions
(baseline, score, what to resample by) and the tables shown, from a ``ModelComparison`` of ``cc.compare_models``.

The comparison itself (relative scores, intervals, Diebold–Mariano tests with Holm's correction, the model
confidence set, the one-sentence-per-model texts and the notes) is the core's; this module only decides and formats.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from calib_core.base.clustering import cluster_choices as core_cluster_choices
from calib_core.base.predictions import PredictionSet
from calib_core.base.regression import Gaussian, QuantileSet, SampleSet
from calib_core.plots.compare import verdicts
from views.clustering import auto_column as auto_cluster_column  # one rule for every page

__all__ = ["ALPHA", "SCORE_LABELS", "empty_state", "score_choices", "default_baseline",
           "cluster_choices", "auto_cluster_column", "cluster_label", "display_table", "sentences", "notes",
           "download_table", "model_order", "has_relative_scores", "diagnosis_page", "score_label", "BLOCK_CHOICES",
           "block_label", "block_value"]

#: The level of every test and interval of the page (stated on the page, not a control).
ALPHA = 0.05
#: Words of the scores (all negatively oriented: lower is better).
SCORE_LABELS = {"wis": "WIS", "crps": "CRPS", "log": "log score", "brier": "Brier score"}
#: Columns "auto" resamples by, in this order, when the data's task IDs hold one (the date a round is made on).
#: "Blocks" choices: whole clusters drawn independently, or moving blocks of consecutive clusters (auto or k).
BLOCK_CHOICES = ("whole", "auto", 2, 4, 8)
_BASELINE_WORDS = ("baseline", "naive")
_NONE = "none"


def score_label(score: str) -> str:
    """The words of a score key (``"wis"`` → ``"WIS"``).

    Parameters
    ----------
    score : str
        A score key.

    Returns
    -------
    str
        Its label (the key itself when unknown).
    """
    return SCORE_LABELS.get(str(score), str(score))


def score_choices(pset: PredictionSet) -> list[str]:
    """The scores the loaded layout can be compared on, the default first.

    Quantile sets: the weighted interval score; Gaussians and ensembles: CRPS, then the log score; classification:
    the Brier score, then the log score; point predictions: none.

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.

    Returns
    -------
    list of str
        Score keys (``[]``: nothing to compare).
    """
    if pset.task == "classification":
        return ["brier", "log"]
    if isinstance(pset.dist, QuantileSet):
        return ["wis"]
    if isinstance(pset.dist, Gaussian | SampleSet):
        return ["crps", "log"]
    return []


def empty_state(pset: PredictionSet | None) -> str | None:
    """Why the page cannot compare the loaded data and how to fix it (Markdown, no text from files), or None.

    Parameters
    ----------
    pset : PredictionSet or None
        The loaded data.

    Returns
    -------
    str or None
        The explanation, or None when there is something to compare.
    """
    how = ("Comparing needs **two or more models** forecasting the same units: a hub's forecast files (one folder or "
           "file name per model) with its truth file, or one file with a `model` column, loaded on the **Data** "
           "page. The built-in example hub has 4 models.")
    if pset is None:
        return "No data loaded yet. " + how
    n_models = len(pset.models()) if pset.model is not None else 1
    if n_models < 2:
        return f"The loaded data hold one model: there is nothing to compare it with. {how}"
    if not score_choices(pset):
        return ("The loaded data are point predictions (no σ, quantiles or samples): no proper score of a forecast "
                f"distribution can be computed. {how}")
    return None


def default_baseline(models: Sequence[str]) -> str:
    """The baseline a page starts with: the first model named like a baseline, else the first model.

    A name is a baseline's when one of its words (split at anything but letters and digits) is ``baseline`` or
    ``naive``: ``baseline``, ``FluSight-baseline``, ``simple_hub-baseline``, ``naive``, ``seasonal-naive``.

    Parameters
    ----------
    models : sequence of str
        The models, in order.

    Returns
    -------
    str
        The default baseline.

    Examples
    --------
    >>> default_baseline(["UMass-ar", "simple_hub-baseline"])
    'simple_hub-baseline'
    >>> default_baseline(["a", "b"])
    'a'
    """
    for m in models:
        words = set(re.split(r"[^0-9a-z]+", str(m).lower()))
        if words & set(_BASELINE_WORDS):
            return str(m)
    return str(models[0])


def cluster_choices(pset: PredictionSet) -> list[str]:
    """The "Resample by" options: ``"auto"``, ``"none"`` (independent rows), then the core's choices
    (:func:`calib_core.base.clustering.cluster_choices`: the task-ID columns, hub dates first, the other columns of the
    file, ``"time"`` and ``"group"`` when the data have them).

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.

    Returns
    -------
    list of str
        Option values (column names are the file's).
    """
    return ["auto", _NONE] + [c for c in core_cluster_choices(pset) if c not in ("auto", _NONE, "model")]


def cluster_label(choice: str, pset: PredictionSet) -> str:
    """The text of a "Resample by" option.

    Parameters
    ----------
    choice : str
        An option of :func:`cluster_choices`.
    pset : PredictionSet
        The loaded data.

    Returns
    -------
    str
        ``"auto (reference_date)"``, ``"independent rows"`` or the column's name.
    """
    if choice == "auto":
        column = auto_cluster_column(pset)
        return f"auto ({column})" if column else "auto (independent rows)"
    if choice == _NONE:
        return "independent rows"
    return str(choice)


def block_label(block: Any) -> str:
    """The text of a "Blocks" option (:data:`BLOCK_CHOICES`).

    Parameters
    ----------
    block : "whole", "auto" or int
        Whole clusters, moving blocks of an automatic length, or of ``block`` consecutive clusters.

    Returns
    -------
    str
        The option's text.
    """
    if block in (None, "whole"):
        return "whole clusters"
    if block == "auto":
        return "moving blocks (automatic length)"
    return f"moving blocks of {int(block)}"


def block_value(block: Any) -> int | str | None:
    """The ``block_length`` of ``cc.compare_models`` for a "Blocks" option (``"whole"``: None).

    Parameters
    ----------
    block : "whole", "auto" or int
        An option of :data:`BLOCK_CHOICES`.

    Returns
    -------
    int, "auto" or None
        The block length.
    """
    return None if block in (None, "whole") else block


def _table(comparison: Any) -> pd.DataFrame:
    return comparison.table.reset_index(drop=True)


def model_order(comparison: Any) -> list[str]:
    """The models from the best relative score to the worst (the skill plot's order, top to bottom; by mean score
    where relative scores are missing).

    Parameters
    ----------
    comparison : ModelComparison
        The result of ``cc.compare_models``.

    Returns
    -------
    list of str
        The models.
    """
    t = _table(comparison)
    return [str(m) for m in t["model"].to_numpy()[_order(t)]]


def _order(t: pd.DataFrame) -> np.ndarray:
    """Rows by relative score, then mean score (relative scores are missing where a mean score is not positive),
    then name."""
    return np.lexsort((t["model"].astype(str).to_numpy(), t["mean_score"].to_numpy(float),
                       np.nan_to_num(t["relative_score"].to_numpy(float), nan=np.inf)))


def has_relative_scores(comparison: Any) -> bool:
    """Whether the comparison has relative scores to draw (a score with a non-positive mean, the log score of sharp
    forecasts, has none: the models are then compared by the difference of their means).

    Parameters
    ----------
    comparison : ModelComparison
        The result of ``cc.compare_models``.

    Returns
    -------
    bool
        True when some model other than the baseline has a finite relative score.
    """
    t = _table(comparison)
    others = (t["model"].astype(str) != str(comparison.baseline)).to_numpy()
    return bool(np.isfinite(t["relative_score"].to_numpy(float)[others]).any())


def _ratio(x: float) -> str:
    return "–" if not np.isfinite(x) else f"{x:#.3g}"  # 3 significant digits, trailing zeros kept: 1.20


def _p(p: float) -> str:
    if not np.isfinite(p):
        return "–"
    return f"{p:.2g}" if p >= 1e-4 else "< 1e-4"


def display_table(comparison: Any, alpha: float = ALPHA) -> pd.DataFrame:
    """The page's table: one row per model, best relative score first.

    Columns: ``model``, ``units`` (common forecast units scored), ``mean <score>``, ``relative <score>``
    (θ_i / θ_baseline, 3 significant digits), ``95% interval`` ("lo–hi"), ``p (Holm)`` (the Diebold–Mariano test
    against the baseline, Holm-adjusted over the models), ``vs baseline`` (the verdict at ``alpha``), ``in MCS``
    ("yes" / "no": in the model confidence set at 1 − alpha) and ``MCS p``.

    Parameters
    ----------
    comparison : ModelComparison
        The result of ``cc.compare_models``.
    alpha : float, default ALPHA
        The level of the verdicts and of the interval's label.

    Returns
    -------
    pandas.DataFrame
        The display table (text columns formatted; ``units`` and the mean score numbers).
    """
    t = _table(comparison)
    t = t.iloc[_order(t)].reset_index(drop=True)
    label = score_label(comparison.score)
    lo, hi = t["relative_lo"].to_numpy(float), t["relative_hi"].to_numpy(float)
    is_base = (t["model"].astype(str) == str(comparison.baseline)).to_numpy()
    interval = np.where(np.isfinite(lo) & np.isfinite(hi) & ~is_base,
                        pd.Series(lo).map(_ratio).to_numpy(object) + "–" + pd.Series(hi).map(_ratio).to_numpy(object),
                        "–")
    verdict = pd.Series(verdicts(t, comparison.baseline, alpha)).replace(
        {"better than the baseline": "better", "worse than the baseline": "worse"})
    return pd.DataFrame({
        "model": t["model"].astype(str),
        "units": t["n_units"].to_numpy(np.int64),
        f"mean {label}": t["mean_score"].to_numpy(float),
        f"relative {label}": t["relative_score"].map(_ratio),
        f"{1 - alpha:.0%} interval": interval,
        "p (Holm)": t["p_holm"].map(_p),
        "vs baseline": verdict,
        "in MCS": np.where(t["in_mcs"].to_numpy(bool), "yes", "no"),
        "MCS p": t["mcs_p"].map(_p) if "mcs_p" in t else "–",
    })


def sentences(comparison: Any) -> list[str]:
    """The core's one sentence per model (plain text that names models: escape it before Markdown), in the table's
    model order when they are given per model.

    Parameters
    ----------
    comparison : ModelComparison
        The result of ``cc.compare_models``.

    Returns
    -------
    list of str
        The sentences.
    """
    given = comparison.sentences
    if isinstance(given, Mapping):
        return [str(given[m]) for m in model_order(comparison) if m in given]
    return [str(s) for s in given]


def notes(comparison: Any) -> list[str]:
    """The core's notes (units not shared by every model, few clusters …; plain text that may name models).

    Parameters
    ----------
    comparison : ModelComparison
        The result of ``cc.compare_models``.

    Returns
    -------
    list of str
        The notes.
    """
    return [str(n) for n in (getattr(comparison, "notes", None) or [])]


def download_table(comparison: Any, *, alpha: float = ALPHA, resample: str = "") -> pd.DataFrame:
    """The CSV download: the core's table with the baseline, the score, the level and what was resampled in every
    row (written with :func:`calib_core.data.writing.to_csv_bytes`, which neutralises formulas).

    Parameters
    ----------
    comparison : ModelComparison
        The result of ``cc.compare_models``.
    alpha : float, default ALPHA
        The level.
    resample : str, default ""
        What the intervals and tests resampled (``comparison.clustering`` when empty).

    Returns
    -------
    pandas.DataFrame
        The table with ``verdict``, ``baseline``, ``score``, ``alpha`` and ``resampled`` columns.
    """
    t = _table(comparison)
    return t.assign(verdict=verdicts(t, comparison.baseline, alpha), baseline=str(comparison.baseline),
                    score=str(comparison.score), alpha=alpha,
                    resampled=resample or str(getattr(comparison, "clustering", "") or "independent rows"))


def diagnosis_page(pset: PredictionSet) -> tuple[str, str]:
    """The diagnosis page of a model of the loaded data and the session key of its "Models" control.

    Parameters
    ----------
    pset : PredictionSet
        The loaded data.

    Returns
    -------
    page : str
        ``"pages/regression.py"`` or ``"pages/classification.py"``.
    key : str
        ``"reg_models"`` or ``"cls_models"``.
    """
    if pset.task == "classification":
        return "pages/classification.py", "cls_models"
    return "pages/regression.py", "reg_models"
