"""Lab 9 — why temperature scaling works (Guo et al. 2017, §3–5).

An over-confident classifier — scikit-learn's bundled digits (10 classes) or breast-cancer (binary) data with a
nearly unregularised logistic regression, :func:`calib_core.data.examples.digits_example` /
:func:`~calib_core.data.examples.breast_cancer_example`, whose held-out confidence outruns its accuracy — is
recalibrated on its ``cal`` rows three ways and scored on its ``test`` rows:

* **temperature scaling** (Guo eq. 9): q = softmax(z/T), one T > 0 minimising the calibration NLL.  Dividing
  every logit of a row by the same T > 0 keeps their order, so argmax and the accuracy are unchanged — only the
  confidence moves;
* **histogram binning** (Zadrozny & Elkan 2001; Guo eq. 7) and **isotonic regression** (Zadrozny & Elkan 2002),
  one-vs-rest and renormalised: they can change the predicted class.

The ECE of Guo eq. 3 depends on the number M of equal-width bins: :func:`run_temperature` returns it for
M = 2 … 50 for every method.  Binary sets have two reliability semantics: top-label (confidence max(p, 1 − p)
against "prediction correct", Guo) and positive-class (P(y = 1) against the frequency of y = 1, scikit-learn's
``calibration_curve``); both ECEs are reported and ``target`` chooses the one the diagrams show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from ..calibrators import classification as ccal
from ..data import examples
from ..metrics import classification as cm
from ..plots import confidence_histogram_figure, reliability_figure
from ..plots.labs_other import colors_for, ece_vs_bins_figure
from .classification import score_methods

__all__ = ["DATASETS", "BIN_COUNTS", "TemperatureLabResult", "run_temperature"]

#: Built-in data sets of the lab.
DATASETS = ("digits (10 classes)", "breast cancer (binary)")
#: Numbers of bins of the ECE-versus-M curve.
BIN_COUNTS = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50)
METHODS = ("uncalibrated", "temperature scaling", "histogram binning", "isotonic")


@dataclass(frozen=True)
class TemperatureLabResult:
    """Outcome of :func:`run_temperature`.

    Attributes
    ----------
    dataset : str
        One of :data:`DATASETS`.
    target : str
        Reliability semantics (``"top_label"`` or ``"positive"``).
    n_bins : int
        M of the ECE and the reliability tables.
    n_cal, n_test : int
        Calibration and test rows.
    temperature : float
        The fitted T.
    metrics : DataFrame
        One row per method on the test rows — ``accuracy``, ``mean_confidence``, ``ece`` (at ``n_bins`` with
        ``target``), ``ece_top_label`` and, for binary sets, ``ece_positive``, ``mce``, ``nll``, ``brier`` and
        ``changed_predictions`` (test rows whose argmax differs from the uncalibrated one).
    ece_by_bins : DataFrame
        ``n_bins`` and one ECE column per method.
    reliability : dict of str to DataFrame
        Reliability tables per method (``n_bins`` bins, ``target`` semantics).
    options : dict
        The run's options.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """

    dataset: str
    target: str
    n_bins: int
    n_cal: int
    n_test: int
    temperature: float
    metrics: pd.DataFrame
    ece_by_bins: pd.DataFrame
    reliability: dict[str, pd.DataFrame]
    options: dict = field(default_factory=dict)

    def value(self, method: str, metric: str) -> float:
        """One number of the metric table."""
        return float(self.metrics.set_index("method").loc[method, metric])

    def metric_table(self) -> pd.DataFrame:
        """:attr:`metrics` under the metric registry's keys, no column twice: ``ece`` / ``mce`` top-label and
        ``ece_positive`` / ``mce_positive`` positive-class (with ``target="positive"`` the chosen ECE and MCE are
        the positive-class ones and move there; ``ece_top_label`` becomes ``ece``)."""
        if self.target == "positive":
            return self.metrics.drop(columns=["ece"]).rename(columns={"ece_top_label": "ece", "mce": "mce_positive"})
        return self.metrics.drop(columns=["ece_top_label"])

    def findings(self) -> list[str]:
        """What the numbers on screen say, one sentence each, computed from :attr:`metrics` (nothing fixed): the
        direction of the miscalibration before (mean confidence against accuracy), what T did to the ECE (and
        that not one prediction changed), the other calibrators' ECE and changed predictions, and the best ECE."""
        semantics = "positive-class" if self.target == "positive" else "top-label"
        before, scaled = self.value("uncalibrated", "ece"), self.value("temperature scaling", "ece")
        acc, conf = self.value("uncalibrated", "accuracy"), self.value("uncalibrated", "mean_confidence")
        gap = conf - acc
        lean = ("over-confident" if gap > 0 else "under-confident") if abs(gap) > 1e-12 else "exactly balanced"
        out = [f"Before: mean (top-label) confidence {conf:.4f} against accuracy {acc:.4f} on the {self.n_test} test "
               f"rows — "
               f"{lean} by {abs(gap):.4f}."]
        direction = ("T > 1 divides every logit and lowers the confidences" if self.temperature > 1 else
                     "T < 1 multiplies the logits and raises the confidences" if self.temperature < 1 else
                     "T = 1 leaves the logits as they are")
        if scaled < before:
            rel = (before - scaled) / before if before > 0 else 0.0
            verb = ("the gaps close" if rel >= 0.5 else "the gaps narrow") + \
                f": {semantics} ECE {before:.4f} → {scaled:.4f} (−{rel:.0%})"
        else:
            verb = f"the {semantics} ECE does not improve ({before:.4f} → {scaled:.4f})"
        changed = int(self.value("temperature scaling", "changed_predictions"))
        kept = "no prediction changed" if changed == 0 else f"{changed} predictions changed"
        out.append(f"T = {self.temperature:.3f}: {direction}; {verb}; {kept} (the order of a row's logits is kept).")
        others = []
        for method in METHODS[2:]:
            n_changed = int(self.value(method, "changed_predictions"))
            others.append(f"{method} reaches {self.value(method, 'ece'):.4f} "
                          f"({n_changed} prediction{'s' if n_changed != 1 else ''} changed)")
        out.append("Of the other calibrators, " + " and ".join(others) + ".")
        eces = {m: self.value(m, "ece") for m in METHODS}
        best = min(eces, key=eces.get)
        out.append(f"Lowest {semantics} ECE at M = {self.n_bins}: {best} ({eces[best]:.4f}); the ECE chart shows how "
                   f"the ranking depends on M.")
        return out

    def figures(self) -> dict:
        """Reliability diagrams before/after temperature scaling, their confidence histograms (Guo et al. Fig. 1)
        and ECE against M."""
        colors = dict(colors_for(list(METHODS)))
        t = "top_label" if self.target == "top_label" else "positive"
        return {
            "before": reliability_figure({"uncalibrated": self.reliability["uncalibrated"]}, colors=colors,
                                         target=t, title="Uncalibrated (test rows)"),
            "after": reliability_figure({"temperature scaling": self.reliability["temperature scaling"]},
                                        colors=colors, target=t,
                                        title=f"Temperature scaling, T = {self.temperature:.2f} (test rows)"),
            "histogram": confidence_histogram_figure(
                {m: self.reliability[m] for m in METHODS[:2]}, colors=colors, target=t,
                title="Confidence histogram (test rows)",
            ),
            "ece_bins": ece_vs_bins_figure(self.ece_by_bins),
        }


def _load(dataset: str, n_train: int | None, c: float, cal_fraction: float, seed: int):
    if dataset == DATASETS[0]:
        return examples.digits_example(n_train or 500, c=c, cal_fraction=cal_fraction, seed=seed)
    if dataset == DATASETS[1]:
        return examples.breast_cancer_example(n_train or 150, c=c, cal_fraction=cal_fraction, seed=seed)
    raise ValueError(f"dataset must be one of {DATASETS}")


def run_temperature(
    dataset: str = DATASETS[0],
    *,
    n_train: int | None = None,
    c: float = 1e4,
    cal_fraction: float = 0.5,
    seed: int = 0,
    n_bins: int = 15,
    target: Literal["top_label", "positive"] = "top_label",
    histogram_bins: int = 15,
) -> TemperatureLabResult:
    """Fit temperature scaling, histogram binning and isotonic regression, and score them (Guo et al. 2017 §4–5).

    Fitted on the ``cal`` rows of the over-confident example, scored on its ``test`` rows.

    Parameters
    ----------
    dataset : str, default DATASETS[0]
        One of :data:`DATASETS`.
    n_train : int, optional
        Rows of the example's logistic regression (default 500 digits / 150 tumours).
    c : float, default 1e4
        Its inverse L2 strength (weakly regularised, over-confident).
    cal_fraction : float, default 0.5
        Share of the held-out rows used for calibration.
    seed : int, default 0
        Seed of the split.
    n_bins : int, default 15
        M of the ECE and the reliability tables.
    target : {"top_label", "positive"}, default "top_label"
        ``"positive"`` needs the binary set.
    histogram_bins : int, default 15
        Bins of histogram binning.

    Returns
    -------
    TemperatureLabResult
        Metrics, ECE against M and reliability tables of every method.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Zadrozny, B., & Elkan, C. (2001). Obtaining calibrated probability estimates from decision trees and
       naive Bayesian classifiers. Proceedings of the 18th International Conference on Machine Learning (ICML),
       609–616.
    .. [3] Zadrozny, B., & Elkan, C. (2002). Transforming classifier scores into accurate multiclass probability
       estimates. Proceedings of the 8th ACM SIGKDD International Conference on Knowledge Discovery and Data
       Mining, 694–699.
    .. [4] Platt, J. (1999). Probabilistic outputs for support vector machines and comparisons to regularized
       likelihood methods. Advances in Large Margin Classifiers, 61–74. MIT Press.
    """
    pset = _load(dataset, n_train, c, cal_fraction, seed)
    binary = pset.probs.shape[1] == 2
    if target == "positive" and not binary:
        raise ValueError("positive-class reliability needs a binary data set")
    cal, test = pset.split == "cal", pset.split == "test"
    z_cal, z_test = pset.logits[cal], pset.logits[test]
    y_cal, y_test = pset.labels[cal], pset.labels[test]
    p_cal, p_test = cm.softmax(z_cal), cm.softmax(z_test)
    temp = ccal.TemperatureScaling(input="logits").fit(z_cal, y_cal)
    probs = {
        "uncalibrated": p_test,
        "temperature scaling": temp.predict_proba(z_test),
        "histogram binning": ccal.HistogramBinning(input="probs", n_bins=histogram_bins).fit(p_cal, y_cal)
        .predict_proba(p_test),
        "isotonic": ccal.IsotonicCalibration(input="probs").fit(p_cal, y_cal).predict_proba(p_test),
    }
    metrics, ece_by_bins, rel = score_methods(y_test, {m: probs[m] for m in METHODS}, n_bins=n_bins, target=target,
                                              bin_counts=BIN_COUNTS, reference="uncalibrated")
    return TemperatureLabResult(
        dataset=dataset,
        target=target,
        n_bins=int(n_bins),
        n_cal=int(cal.sum()),
        n_test=int(test.sum()),
        temperature=float(temp.temperature_),
        metrics=metrics,
        ece_by_bins=ece_by_bins,
        reliability=rel,
        options={"n_train": n_train, "c": c, "cal_fraction": cal_fraction, "seed": seed,
                 "histogram_bins": histogram_bins},
    )
