"""The terms of the score decompositions S = MCB − DSC + UNC, described like the metrics.

The CORP lenses (Dimitriadis, Gneiting & Jordan 2021: the Brier and log scores of a binary event) and the quantile
score at a level τ (Gneiting et al. 2023) decompose into miscalibration (MCB), discrimination (DSC) and uncertainty
(UNC).  They are not report metrics (``cc.diagnose`` does not compute them; the CORP views and their tables do), so
they are kept out of :data:`~calib_core.calibrators.registry_metrics.METRICS` and listed here with the same fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..diagrams import classification_corp as ccorp
from ..metrics import regression_decomposition as rdec
from .registry_metrics import CALIBRATION, DESCRIPTIVE, TASKS, Metric, check_task, direction_text, make_metric

__all__ = ["DECOMPOSITION_TERMS", "decomposition_term", "decomposition_terms", "decomposition_help_table"]


_R, _C = TASKS

_CORP = "Dimitriadis, Gneiting & Jordan 2021, Stable reliability diagrams for probabilistic classifiers (PNAS), eq. 4"
_QCORP = ("Gneiting, Wolffram, Resin, Kraus, Bracher, Dimitriadis, Hagenmeyer, Jordan, Lerch, Phipps & Schienle 2023, "
          "Model diagnostics and forecast evaluation for quantiles (Annu. Rev. Stat. Appl. 10), §4")
_SCORE_TEXT = {"brier": ("Brier", "S(x, y) = (x − y)²"), "log": ("log", "S(x, y) = −y log x − (1 − y) log(1 − x)")}


def _corp_term(score: str, term: str) -> Callable[..., float]:
    def value(labels: Any, probs: Any, *, target: str = "top_label") -> float:
        x, y = ccorp.binary_events(labels, probs, target=target)  # type: ignore[arg-type]
        return float(ccorp.decompose(np.clip(x, 0.0, 1.0), y, score=score)[term])  # type: ignore[arg-type]

    value.__name__ = value.__qualname__ = f"{term}_{score}"
    return value


def _quantile_term(term: str) -> Callable[..., float]:
    def value(y: Any, dist: Any, *, tau: float = 0.5) -> float:
        return float(rdec.quantile_score_decomposition(y, dist, levels=[tau], n_boot=0)[term].iloc[0])

    value.__name__ = value.__qualname__ = f"{term}_qs"
    return value


def _decomposition_terms() -> tuple[Metric, ...]:
    out = []
    for score, (name, formula) in _SCORE_TEXT.items():
        base = (f"binary event x ∈ [0, 1], y ∈ {{0, 1}} (top label: confidence and correctness; positive class: "
                f"P(y = 1) and 1[y = 1]); {formula}; x̂ = PAV(y | x) (CORP curve), ȳ the base rate")
        out += [
            make_metric(f"mcb_{score}", _C, f"MCB ({name})", CALIBRATION, "lower",
                    f"MCB = S̄(x) − S̄(x̂) ≥ 0; {base}", _CORP,
                    "Miscalibration: what the isotonic recalibration would save. Compare it with the MCB a calibrated "
                    "forecaster gets at this N (PAV fits noise); its test redraws labels from the forecasts.",
                    _corp_term(score, "mcb")),
            make_metric(f"dsc_{score}", _C, f"DSC ({name})", DESCRIPTIVE, "higher",
                    f"DSC = S̄(ȳ) − S̄(x̂) ≥ 0; {base}", _CORP,
                    "Discrimination: what the forecast's ordering is worth over the base rate once recalibrated.",
                    _corp_term(score, "dsc")),
            make_metric(f"unc_{score}", _C, f"UNC ({name})", DESCRIPTIVE, None,
                    f"UNC = S̄(ȳ) (Brier: ȳ(1 − ȳ); log: the entropy of ȳ); S̄(x) = MCB − DSC + UNC; {base}", _CORP,
                    "Uncertainty: the difficulty of the events, the same for every forecaster of them.",
                    _corp_term(score, "unc")),
        ]
    qbase = ("QS_τ(x, y) = (1{y ≤ x} − τ)(x − y), x = F⁻¹(τ) the predicted τ-quantile; x̂ = the isotonic τ-quantile "
             "regression of y on x; r = the marginal τ-quantile of y")
    out += [
        make_metric("mcb_qs", _R, "MCB (quantile score)", CALIBRATION, "lower", f"MCB = Q̄S(x) − Q̄S(x̂) ≥ 0; {qbase}",
                _QCORP, "Miscalibration of the predicted τ-quantile: what an increasing recalibration would save "
                "(read it as a share of the score; a calibrated forecaster's is PAV's overfit alone).",
                _quantile_term("mcb")),
        make_metric("dsc_qs", _R, "DSC (quantile score)", DESCRIPTIVE, "higher", f"DSC = Q̄S(r) − Q̄S(x̂) ≥ 0; {qbase}",
                _QCORP, "Discrimination: what the forecast's ordering of the targets is worth at level τ.",
                _quantile_term("dsc")),
        make_metric("unc_qs", _R, "UNC (quantile score)", DESCRIPTIVE, None,
                f"UNC = Q̄S(r); Q̄S(x) = MCB − DSC + UNC; {qbase}", _QCORP,
                "Uncertainty: the quantile score of the constant marginal quantile.", _quantile_term("unc")),
    ]
    return tuple(out)


#: The terms of the score decompositions (CORP: Brier and log scores of a binary event; the quantile score at a
#: level τ), described like the metrics; not in :data:`METRICS` (no report computes them).
DECOMPOSITION_TERMS: tuple[Metric, ...] = _decomposition_terms()


def decomposition_terms(task: str | None = None) -> list[Metric]:
    """The decomposition terms of ``task`` (all when None), in registry order.

    Parameters
    ----------
    task : {"regression", "classification"} or None, default None
        The task.

    Returns
    -------
    list of Metric
        The terms.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability diagrams for probabilistic
           classifiers", Proceedings of the National Academy of Sciences 118(8), e2016191118, 2021.
    .. [2] T. Gneiting, D. Wolffram, J. Resin, K. Kraus, J. Bracher, T. Dimitriadis, V. Hagenmeyer, A. I. Jordan,
           S. Lerch, K. Phipps and M. Schienle, "Model diagnostics and forecast evaluation for quantiles", Annual
           Review of Statistics and Its Application 10, 597–621, 2023.

    Examples
    --------
    >>> [m.key for m in decomposition_terms("regression")]
    ['mcb_qs', 'dsc_qs', 'unc_qs']
    """
    check_task(task)
    return [m for m in DECOMPOSITION_TERMS if task is None or m.task == task]


def decomposition_term(key: str, task: str | None = None) -> Metric:
    """The entry of a decomposition term (``"mcb_brier"``, ``"dsc_qs"``, …).

    Parameters
    ----------
    key : str
        The term's key.
    task : {"regression", "classification"} or None, default None
        Look in one task only.

    Returns
    -------
    Metric
        The term's entry.

    Raises
    ------
    KeyError
        An unknown key.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability diagrams for probabilistic
           classifiers", Proceedings of the National Academy of Sciences 118(8), e2016191118, 2021.
    .. [2] T. Gneiting, D. Wolffram, J. Resin, K. Kraus, J. Bracher, T. Dimitriadis, V. Hagenmeyer, A. I. Jordan,
           S. Lerch, K. Phipps and M. Schienle, "Model diagnostics and forecast evaluation for quantiles", Annual
           Review of Statistics and Its Application 10, 597–621, 2023.

    Examples
    --------
    >>> decomposition_term("mcb_brier").label
    'MCB (Brier)'
    """
    for m in decomposition_terms(task):
        if m.key == key:
            return m
    raise KeyError(f"unknown decomposition term {key!r}")


def decomposition_help_table() -> pd.DataFrame:
    """One row per decomposition term: term, task, kind, better, formula, paper, how to read it.

    Returns
    -------
    DataFrame
        The Help page's table of the terms.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability diagrams for probabilistic
           classifiers", Proceedings of the National Academy of Sciences 118(8), e2016191118, 2021.
    .. [2] T. Gneiting, D. Wolffram, J. Resin, K. Kraus, J. Bracher, T. Dimitriadis, V. Hagenmeyer, A. I. Jordan,
           S. Lerch, K. Phipps and M. Schienle, "Model diagnostics and forecast evaluation for quantiles", Annual
           Review of Statistics and Its Application 10, 597–621, 2023.
    """
    return pd.DataFrame(
        [{"term": m.label, "task": m.task, "kind": m.kind, "better": direction_text(m.direction), "formula": m.formula,
          "paper": m.paper, "how to read it": m.reading} for m in DECOMPOSITION_TERMS],
        columns=["term", "task", "kind", "better", "formula", "paper", "how to read it"])
