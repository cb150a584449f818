"""The clinical parts of the Classification page without Streamlit: the smoothed calibration curve's table choice and
caption, the prevalence control's default, options and statement, and the Help text of the clinical set.

The diagnosis carries the loess calibration table (``"smoothed_calibration_positive"`` for a binary file, else the
top label's ``"smoothed_calibration"``; :mod:`calib_core.diagrams.classification_clinical`) and, with
``cc.diagnose(..., prevalence=P)``, reads a binary file's probabilities as made for prevalence P
(:func:`calib_core.metrics.classification_clinical.adjust_prevalence`, Bayes' rule on the odds).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from calib_core.base.predictions import PredictionSet

from .pages import md_escape

__all__ = ["SMOOTHED_TABLES", "smoothed_table_name", "smoothed_caption", "file_prevalence", "prevalence_options",
           "prevalence_statement", "PREVALENCE_HELP", "CLINICAL_HELP"]

#: The diagnosis's smoothed calibration tables, in the order the page looks for them.
SMOOTHED_TABLES = ("smoothed_calibration_positive", "smoothed_calibration")

PREVALENCE_HELP = (
    "Read the probabilities at the prevalence where the model is used. "
    "Binary files: the share of positives in the population where the model is used (e.g. 5% when the file is an "
    "enriched 50% sample). Every probability is re-expressed at this file's share of positives by Bayes' rule on the "
    "odds before any metric or diagram, so the page shows the calibration the model has at that prevalence "
    "(Saerens, Latinne & Decaestecker 2002; assumes the predictors' distribution within each class is the same in "
    "both populations)."
)


def smoothed_table_name(tables: Mapping[str, Any]) -> str | None:
    """The smoothed calibration table a (model, ALL) diagram dict holds (positive class first), or None.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        ``Report.diagrams[(model, group)]``.

    Returns
    -------
    str or None
        The table's name.
    """
    return next((name for name in SMOOTHED_TABLES if name in tables), None)


def smoothed_caption(table: pd.DataFrame, target: str) -> str:
    """The sentence under the smoothed calibration curve, from the table's own settings.

    Parameters
    ----------
    table : DataFrame
        One model's smoothed calibration table (``attrs``: ``span``, ``band``, ``target``).
    target : str
        The page's reliability semantics (``"top_label"`` or ``"positive"``): a binary file's curve is always the
        positive class's, which the caption says when the page shows the top label.

    Returns
    -------
    str
        The caption.
    """
    attrs = table.attrs
    event = {"positive": "the predicted probability of the positive class",
             "top_label": "the confidence (the top label's probability)"}.get(attrs.get("target"), "the prediction")
    band = attrs.get("band", "none")
    # the band's description names the Resample-by column, a name from the file: escaped
    band_text = "no band (resampling switched off)" if band == "none" else f"shaded: the {md_escape(str(band))}"
    text = (f"Loess calibration curve (Cleveland 1979; local linear, span {float(attrs.get('span', 0.75)):g}): the "
            f"observed outcome smoothed against {event}, the curve behind ICI, E50 and E90 (Austin & Steyerberg "
            f"2019); {band_text}; bars: histogram of the predictions. Above the diagonal the model under-estimates "
            "the risk there, below it over-estimates.")
    if target == "top_label" and attrs.get("target") == "positive":
        text += " For a binary file it is drawn for the positive class, as clinical papers do."
    return text


def file_prevalence(pset: PredictionSet) -> float | None:
    """The share of positives (label 1) of a binary file with full probabilities, else None.

    Parameters
    ----------
    pset : PredictionSet
        A classification set.

    Returns
    -------
    float or None
        π̂ = #{y = 1} / N.
    """
    if pset.task != "classification" or pset.top_label_only or pset.probs is None or pset.probs.shape[1] != 2:
        return None
    labels = np.asarray(pset.labels)
    return float(np.mean(labels == 1)) if labels.size else None


def prevalence_options(enabled: bool, prevalence: float | None) -> dict[str, float]:
    """``{"prevalence": P}`` for ``cc.diagnose`` when the control is on and P in (0, 1), else ``{}``.

    Parameters
    ----------
    enabled : bool
        The control's checkbox.
    prevalence : float or None
        Its value.

    Returns
    -------
    dict
        The diagnosis option.
    """
    if not enabled or prevalence is None or not 0.0 < float(prevalence) < 1.0:
        return {}
    return {"prevalence": float(prevalence)}


def prevalence_statement(prevalence: float | None, file_share: float | None) -> str | None:
    """What the prevalence control did, in numbers (None when it is off).

    logit p′ = logit p + logit π̂ − logit P: a probability made for prevalence P re-expressed at the file's share of
    positives π̂ (Saerens et al. 2002).

    Parameters
    ----------
    prevalence : float or None
        P, the prevalence the probabilities are read at.
    file_share : float or None
        π̂, the file's share of positives.

    Returns
    -------
    str or None
        The statement.

    Examples
    --------
    >>> prevalence_statement(0.05, 0.5)[:60]
    'Probabilities read as made for a prevalence of 5% and re-exp'
    """
    if prevalence is None or file_share is None:
        return None
    p, pi = float(prevalence), float(file_share)
    if not (0 < p < 1 and 0 < pi < 1):
        return None
    shift = np.log(pi / (1 - pi)) - np.log(p / (1 - p))
    example = 1.0 / (1.0 + np.exp(-shift))  # what a prediction of 50% becomes
    return (f"Probabilities read as made for a prevalence of {100 * p:.3g}% and re-expressed at this file's share "
            f"of positives, {100 * pi:.3g}%, by Bayes' rule on the odds (every logit moves by {shift:+.3f}; a "
            f"prediction of 50% becomes {100 * example:.3g}%) before every metric and diagram: the page shows the "
            "calibration the model has at that prevalence.")


CLINICAL_HELP = r"""
#### The clinical calibration set (binary risk models)
For a binary file the positive class, P(y = 1) against 1[y = 1]; for K > 2 classes each class one-vs-rest (the metric
table shows the mean over the classes). Van Calster et al. (2016, *J Clin Epidemiol* 74, 167–176) order calibration
in levels — *mean* (right on average), *weak* (right intercept and slope), *moderate* (the calibration curve on the
diagonal) — and these measures follow them.

* **Calibration-in-the-large (CITL)** — a of logit P(y = 1) = a + logit p (the slope fixed at 1; Cox 1958,
  *Biometrika* 45, 562–565). 0 = right on average; a > 0 the model under-estimates the risk (a model moved to a
  hospital with a higher baseline risk), a < 0 over-estimates it. Test: Wald z of a = 0.
* **Calibration slope** — b of logit P(y = 1) = a′ + b · logit p (Cox 1958). 1 = the spread of the risks is right;
  b < 1 the predictions are too extreme (low risks too low, high risks too high: the signature of a model
  over-fitted on a small sample; Steyerberg 2019, *Clinical Prediction Models*, 2nd ed., Springer, ch. 15), b > 1
  too moderate. The **Cox intercept** a′ belongs to this fit and is not CITL.
* **Spiegelhalter's Z** (Spiegelhalter 1986, *Stat Med* 5, 421–433) — Z = Σ (y − p)(1 − 2p) / √(Σ (1 − 2p)² p(1 − p)),
  N(0, 1) when calibrated; grows like √N when not, so compare it only across data sets of one size.
* **Hosmer–Lemeshow H** (Hosmer & Lemeshow 1980, *Commun Stat Theory Methods* 9, 1043–1069) — the rows cut into g
  groups at the quantiles of risk (deciles, g = 10), H = Σ_g (O_g − E_g)² / (E_g (1 − E_g/n_g)), p from χ² with g
  degrees of freedom for predictions made before these data (g − 2 for a model fitted on them). **Its verdict
  depends on the number of groups and on where the cut points fall**: the same predictions can pass with 10 groups
  and fail with 8 or 12 (Bertolini et al. 2000); with many rows it rejects tiny, harmless miscalibration, with few
  it misses large ones. Read it with the calibration curve and ICI, never alone (the clinical lab shows its p-value
  for g = 3 … 30).
* **ICI, E50, E90** (Austin & Steyerberg 2019, *Stat Med* 38, 4051–4065) — with ĉ the loess calibration curve
  (Cleveland 1979, *JASA* 74, 829–836: local linear, span 0.75), ICI = mean |ĉ(p_i) − p_i| over the rows (the
  distance of the curve from the diagonal, weighted by where the predictions are), E50 its median, E90 its 90th
  percentile: the calibration error of the typical and of the worst-served patients, in probability units.

**Smoothed calibration curve** (Classification page, HTML report): the loess curve ĉ with a 95% pointwise band
from 200 bootstrap resamples of the rows (whole clusters with *Resample by*; the bandwidth of the data is kept), the
diagonal and the histogram of the predictions. Where the band leaves the diagonal, the miscalibration there is
more than chance; at the ends of the range the smooth is pulled towards the middle and rests on few rows.

**Recalibration** (Steyerberg 2019, ch. 20): an *intercept update* (logit p′ = logit p + a) fixes CITL only;
*logistic recalibration* (logit p′ = a + b logit p, Platt scaling on logit p) fixes intercept and slope; *isotonic
regression* (Zadrozny & Elkan 2002, *KDD*, 694–699) the whole curve, as steps. Judge each on rows it was not fitted
on (Recalibrate page; the clinical lab).

**Prevalence** (Classification page, binary files): probabilities made for a population of prevalence P are read at
the file's share of positives π̂ by Bayes' rule on the odds, odds′ = odds · [π̂/(1 − π̂)] / [P/(1 − P)] (Saerens,
Latinne & Decaestecker 2002, *Neural Comput* 14, 21–41), before every metric: use it when the file's prevalence is
not the one where the model is used (an enriched case–control sample).
"""
