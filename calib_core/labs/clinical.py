"""Lab — clinical calibration: why calibration-in-the-large and the slope tell different stories, why
Hosmer–Lemeshow changes with its groups, and what recalibration does to each measure.

A simulated risk model (seeded): patients with d = 8 standard-normal predictors X and a true risk
P(y = 1 | x) = expit(β₀ + βᵀx) (β = (0.8, −0.6, 0.5, 0.4, −0.3, 0.2, 0, 0), β₀ = −1.5: about one patient in four has
the event).  Logistic regression by maximum likelihood (a tiny ridge, C = 10⁴, keeps a separated small sample
finite) is fitted twice on the development population:

* the **development model**, on ``n_dev`` patients (thousands: little over-fitting);
* the **over-fitted model**, on ``n_small`` patients (few events per predictor): its coefficients are too large in
  magnitude, so on new patients its predictions are **too extreme** — calibration slope b < 1 while the average risk
  is about right (calibration-in-the-large a ≈ 0; Steyerberg 2019, ch. 13, 15; Van Calster et al. 2016).

Both are validated on ``n_val`` new patients of the same population; the development model is also **transported**
to a hospital whose baseline risk differs (β₀ + ``shift``, the same β): its ranking and spread survive (slope ≈ 1,
the same AUC) but its average risk does not (a ≈ ``shift``: calibration-in-the-large off).

Measures (:mod:`calib_core.metrics.classification_clinical`): calibration-in-the-large a (logit P(y = 1) =
a + logit p, slope fixed at 1), the slope b of logit P(y = 1) = a′ + b logit p (Cox 1958), Spiegelhalter's Z
(Spiegelhalter 1986; p from N(0, 1)), Hosmer–Lemeshow H over g groups at the quantiles of risk (Hosmer & Lemeshow
1980; p from χ² with g degrees of freedom — predictions made before these data), ICI / E50 / E90 = mean / median /
90th percentile of |ĉ(p) − p| with ĉ the loess curve (Austin & Steyerberg 2019), the AUC (c statistic: the share of
event / non-event pairs ranked right) and the Brier score.

Hosmer–Lemeshow is computed for g = 3 … 30 on the same predictions: its p-value moves with g alone (Bertolini et al.
2000).  Recalibration (Steyerberg 2019, ch. 20): each validation set is split in two halves at random; on the first
the **intercept update** (a of the slope-1 fit: logit p′ = logit p + a), **logistic recalibration** (Platt scaling
on logit p: logit p′ = a + b logit p; Cox 1958, Platt 1999) and **isotonic regression** (Zadrozny & Elkan 2002) are
fitted, and every measure is judged on the held-out half.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from ..calibrators.classification import IsotonicCalibration, PlattScaling
from ..diagrams.classification_clinical import smoothed_calibration_of
from ..metrics.classification_clinical import (
    calibration_errors_of,
    hosmer_lemeshow_of,
    logistic_recalibration,
    spiegelhalter_z_of,
)
from ..plots.clinical import hosmer_lemeshow_groups_figure, smoothed_calibration_figure
from ..plots.labs_other import colors_for

__all__ = ["BETA", "HL_MARKED", "METHODS", "SCENARIOS", "ClinicalLabResult", "run_clinical"]

#: True coefficients of the 8 predictors and the intercept of the development population.
BETA = (0.8, -0.6, 0.5, 0.4, -0.3, 0.2, 0.0, 0.0)
BETA0 = -1.5
#: The three models judged on new patients.
SCENARIOS = ("development model", "over-fitted model", "transported model")
#: Recalibration methods (fitted on one half of the validation set, judged on the other).
METHODS = ("before", "intercept update", "logistic recalibration", "isotonic")
#: The numbers of Hosmer–Lemeshow groups the table shows (the chart shows 3 … 30).
HL_MARKED = (5, 10, 20)
HL_RANGE = tuple(range(3, 31))
ALPHA = 0.05
#: |a| below this: "about right on average"; |b − 1| below this: "about the right spread".
CITL_TOLERANCE = 0.1
SLOPE_TOLERANCE = 0.1


def _measures(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Every measure of the lab on predictions p of outcomes y (one row of the tables)."""
    citl = logistic_recalibration(p, y, fix_slope=True)
    fit = logistic_recalibration(p, y)
    z = spiegelhalter_z_of(p, y)
    hl, groups = hosmer_lemeshow_of(p, y, n_groups=10)
    errors = calibration_errors_of(p, y)
    return {
        "calibration_in_the_large": citl.intercept,
        "calibration_slope": fit.slope,
        "cox_intercept": fit.intercept,
        "spiegelhalter_z": z,
        "spiegelhalter_p": float(2 * stats.norm.sf(abs(z))),
        "hosmer_lemeshow": hl,
        "hosmer_lemeshow_p": float(stats.chi2.sf(hl, groups)),
        "ici": errors["ici"], "e50": errors["e50"], "e90": errors["e90"],
        "auc": float(roc_auc_score(y, p)) if 0 < y.sum() < y.size else float("nan"),
        "brier": float(np.mean((p - y) ** 2)),
        "mean_predicted": float(p.mean()),
        "observed_rate": float(y.mean()),
    }


def _hl_table(preds: dict[str, tuple[np.ndarray, np.ndarray]]) -> pd.DataFrame:
    rows = []
    for name, (p, y) in preds.items():
        for g in HL_RANGE:
            h, df = hosmer_lemeshow_of(p, y, n_groups=g)
            rows.append({"model": name, "groups": g, "statistic": h, "df": df, "p_value": float(stats.chi2.sf(h, df))})
    return pd.DataFrame(rows)


def _citl_phrase(a: float, mean_p: float, rate: float) -> str:
    said = f"mean predicted risk {mean_p:.3f}, observed {rate:.3f}"
    if abs(a) < CITL_TOLERANCE:
        return f"is right on average ({said})"
    return f"{'under' if a > 0 else 'over'}-estimates the average risk ({said})"


def _slope_phrase(b: float) -> str:
    if b < 1 - SLOPE_TOLERANCE:
        return "below 1: the predictions are too extreme (low risks too low, high risks too high)"
    if b > 1 + SLOPE_TOLERANCE:
        return "above 1: the predictions are too moderate (they hug the average)"
    return "close to 1: the spread of the risks is about right"


def _p(p: float) -> str:
    """"p = 0.067" or "p < 0.0001"."""
    return f"p = {p:.2g}" if p >= 1e-4 else "p < 0.0001"


def _verdict(p: float) -> str:
    return "rejects" if p < ALPHA else "does not reject"


@dataclass(frozen=True)
class ClinicalLabResult:
    """Outcome of :func:`run_clinical`.

    Attributes
    ----------
    metrics : DataFrame
        One row per model of :data:`SCENARIOS` on its validation patients: ``model`` and the measures
        (``calibration_in_the_large``, ``calibration_slope``, ``cox_intercept``, ``spiegelhalter_z``,
        ``spiegelhalter_p``, ``hosmer_lemeshow`` (g = 10), ``hosmer_lemeshow_p``, ``ici``, ``e50``, ``e90``, ``auc``,
        ``brier``, ``mean_predicted``, ``observed_rate``).
    hosmer_lemeshow : DataFrame
        ``model, groups, statistic, df, p_value`` for g = 3 … 30.
    recalibration : DataFrame
        ``model`` (over-fitted / transported), ``method`` (:data:`METHODS`) and the measures on the held-out half.
    curves : dict of str to DataFrame
        Smoothed calibration tables of the three models on their validation patients.
    recalibrated_curves : dict of tuple to DataFrame
        (model, method) → smoothed calibration table on the held-out half.
    sizes : dict
        ``n_dev``, ``n_small``, ``n_val``, ``n_test`` and ``events_small`` (events in the small sample).
    shift : float
        The new hospital's change of the baseline log-odds.
    options : dict
        The run's options.

    References
    ----------
    .. [1] Van Calster, B., Nieboer, D., Vergouwe, Y., De Cock, B., Pencina, M. J. & Steyerberg, E. W. (2016). A
       calibration hierarchy for risk models was defined: from utopia to empirical data. *Journal of Clinical
       Epidemiology* 74, 167–176.
    .. [2] Steyerberg, E. W. (2019). *Clinical Prediction Models: A Practical Approach to Development, Validation,
       and Updating* (2nd ed.). Springer.
    """

    metrics: pd.DataFrame
    hosmer_lemeshow: pd.DataFrame
    recalibration: pd.DataFrame
    curves: dict[str, pd.DataFrame]
    recalibrated_curves: dict[tuple[str, str], pd.DataFrame]
    sizes: dict[str, int]
    shift: float
    options: dict = field(default_factory=dict)

    def value(self, model: str, measure: str, method: str | None = None) -> float:
        """One number of :attr:`metrics` (``method`` None) or of :attr:`recalibration`."""
        if method is None:
            return float(self.metrics.set_index("model").loc[model, measure])
        t = self.recalibration
        return float(t[(t["model"] == model) & (t["method"] == method)][measure].iloc[0])

    def hl_p(self, model: str, groups: int) -> float:
        """Hosmer–Lemeshow p-value of ``model`` with ``groups`` groups."""
        t = self.hosmer_lemeshow
        return float(t[(t["model"] == model) & (t["groups"] == groups)]["p_value"].iloc[0])

    def hl_table(self) -> pd.DataFrame:
        """H and p at the :data:`HL_MARKED` numbers of groups, one row per model."""
        t = self.hosmer_lemeshow[self.hosmer_lemeshow["groups"].isin(HL_MARKED)]
        wide = t.pivot(index="model", columns="groups", values=["statistic", "p_value"])
        out = pd.DataFrame({"model": list(SCENARIOS)})
        for g in HL_MARKED:
            out[f"H (g = {g})"] = [float(wide.loc[m, ("statistic", g)]) for m in SCENARIOS]
            out[f"p (g = {g})"] = [float(wide.loc[m, ("p_value", g)]) for m in SCENARIOS]
        return out

    def story_findings(self) -> list[str]:
        """Calibration-in-the-large against the slope, for the over-fitted and the transported model (sentences
        computed from :attr:`metrics`)."""
        dev, over, moved = SCENARIOS
        v = self.value
        out = []
        b_over, a_over = v(over, "calibration_slope"), v(over, "calibration_in_the_large")
        citl_over = _citl_phrase(a_over, v(over, "mean_predicted"), v(over, "observed_rate"))
        out.append(
            f"Over-fitted: fitted on {self.sizes['n_small']} patients ({self.sizes['events_small']} events, "
            f"{self.sizes['events_small'] / len(BETA):.1f} per predictor), the model's calibration slope on "
            f"{self.sizes['n_val']} new patients is {b_over:.2f} (the development model's, fitted on "
            f"{self.sizes['n_dev']}: {v(dev, 'calibration_slope'):.2f}) — {_slope_phrase(b_over)}; its "
            f"calibration-in-the-large is {a_over:+.2f}: the model {citl_over}.")
        a_mv, b_mv = v(moved, "calibration_in_the_large"), v(moved, "calibration_slope")
        auc_home, auc_away = v(dev, "auc"), v(moved, "auc")
        citl_moved = _citl_phrase(a_mv, v(moved, "mean_predicted"), v(moved, "observed_rate"))
        travels = ("discrimination travels, calibration-in-the-large does not" if abs(auc_away - auc_home) < 0.02
                   else "discrimination changes too")
        out.append(
            f"Transported: at the new hospital (baseline log-odds {self.shift:+.2f}) the development model's "
            f"calibration-in-the-large is {a_mv:+.2f} — it {citl_moved} "
            f"— while its slope is {b_mv:.2f} ({_slope_phrase(b_mv).split(':')[0]}); AUC {auc_away:.3f} against "
            f"{auc_home:.3f} at home: {travels}.")
        slope_off = abs(b_over - 1) >= SLOPE_TOLERANCE
        citl_ok = abs(a_over) < CITL_TOLERANCE
        moved_citl_off = abs(a_mv) >= CITL_TOLERANCE
        moved_slope_ok = abs(b_mv - 1) < SLOPE_TOLERANCE
        if slope_off and citl_ok and moved_citl_off and moved_slope_ok:
            out.append(f"So the two numbers tell different stories: the over-fitted model is off in slope "
                       f"({b_over:.2f}) but not on average ({a_over:+.2f}); the transported one is off on average "
                       f"({a_mv:+.2f}) but not in slope ({b_mv:.2f}). Neither number alone would have caught both.")
        else:
            out.append(f"With these settings the pattern is not clean (over-fitted: slope {b_over:.2f}, "
                       f"calibration-in-the-large {a_over:+.2f}; transported: {b_mv:.2f}, {a_mv:+.2f}) — fewer "
                       f"development patients and a larger baseline shift separate the two stories.")
        return out

    def hl_findings(self) -> list[str]:
        """What Hosmer–Lemeshow says at g = 5, 10, 20 for each model, and whether its verdict depends on g."""
        out = []
        for model in SCENARIOS:
            ps = {g: self.hl_p(model, g) for g in HL_MARKED}
            t = self.hosmer_lemeshow[self.hosmer_lemeshow["model"] == model]
            decisions = {p < ALPHA for p in ps.values()}
            all_decisions = set(t["p_value"] < ALPHA)
            listed = ", ".join(f"{_p(p)} with g = {g}" for g, p in ps.items())
            span = f"H from {float(t['statistic'].min()):.1f} to {float(t['statistic'].max()):.1f}"
            if len(decisions) > 1:
                tail = f"the verdict at {ALPHA:.0%} flips with the number of groups alone"
            elif len(all_decisions) > 1:
                tail = (f"the same verdict at g = {', '.join(map(str, HL_MARKED))}, but other g between "
                        f"{HL_RANGE[0]} and {HL_RANGE[-1]} give the other one (chart; {span})")
            elif float(t["p_value"].max()) < 1e-4:
                tail = (f"it rejects at every g from {HL_RANGE[0]} to {HL_RANGE[-1]} ({span}): this "
                        "miscalibration is too large for the grouping to matter")
            else:
                tail = (f"the test {_verdict(next(iter(ps.values())))} at every g from {HL_RANGE[0]} to "
                        f"{HL_RANGE[-1]}, yet p ranges from {float(t['p_value'].min()):.2g} to "
                        f"{float(t['p_value'].max()):.2g} ({span})")
            out.append(f"Hosmer–Lemeshow, {model}: {listed} — {tail}.")
        return out

    def recalibration_findings(self, model: str) -> list[str]:
        """What each recalibration did to the measures of ``model`` on the held-out half."""
        def v(method: str, measure: str) -> float:
            return self.value(model, measure, method)

        a0, b0, i0 = v("before", "calibration_in_the_large"), v("before", "calibration_slope"), v("before", "ici")
        a1, b1 = v("intercept update", "calibration_in_the_large"), v("intercept update", "calibration_slope")
        a2, b2 = v("logistic recalibration", "calibration_in_the_large"), v("logistic recalibration",
                                                                            "calibration_slope")
        out = [f"{model.capitalize()}, recalibrated on {self.sizes['n_cal']} patients and judged on the other "
               f"{self.sizes['n_test']}: before, calibration-in-the-large {a0:+.2f}, slope {b0:.2f}, ICI {i0:.3f}."]
        slope_kept = abs(b1 - b0) < 0.05
        out.append(f"Intercept update: calibration-in-the-large {a0:+.2f} → {a1:+.2f}; the slope "
                   + (f"stays {b1:.2f} — a shift of every logit cannot make predictions less extreme or more "
                      "spread." if slope_kept else f"moves {b0:.2f} → {b1:.2f}."))
        out.append(f"Logistic recalibration: slope {b0:.2f} → {b2:.2f} and calibration-in-the-large {a0:+.2f} → "
                   f"{a2:+.2f}, ICI {i0:.3f} → {v('logistic recalibration', 'ici'):.3f}.")
        a3, b3, i3 = v("isotonic", "calibration_in_the_large"), v("isotonic", "calibration_slope"), v("isotonic", "ici")
        auc0, auc3 = v("before", "auc"), v("isotonic", "auc")
        ties = ("it ties patients within its steps, so the AUC moves" if abs(auc3 - auc0) > 1e-9
                else "the AUC is unchanged")
        out.append(f"Isotonic: calibration-in-the-large {a3:+.2f}, slope {b3:.2f}, ICI {i3:.3f}; {ties} "
                   f"({auc0:.3f} → {auc3:.3f}).")
        icis = {m: v(m, "ici") for m in METHODS}
        best = min(icis, key=icis.get)
        out.append(f"Lowest held-out ICI: {best} ({icis[best]:.3f}); Hosmer–Lemeshow (g = 10): "
                   + ", ".join(f"{m} {_p(v(m, 'hosmer_lemeshow_p'))}" for m in METHODS) + ".")
        return out

    def findings(self) -> list[str]:
        """Every sentence of the lab: the two stories, Hosmer–Lemeshow, the recalibration of both models."""
        return (self.story_findings() + self.hl_findings() + self.recalibration_findings(SCENARIOS[1])
                + self.recalibration_findings(SCENARIOS[2]))

    def figures(self) -> dict:
        """Smoothed calibration curves with their bands (over-fitted and transported, each beside the development
        model), the Hosmer–Lemeshow p-value against g, and the curves after each recalibration (one figure per
        model; no bands, four would hide each other — the ICI column says how far each is from the diagonal)."""
        colors = dict(colors_for(list(SCENARIOS)))
        dev, over, moved = SCENARIOS
        out = {
            "overfit": smoothed_calibration_figure({dev: self.curves[dev], over: self.curves[over]}, colors=colors,
                                                   title="Same population: development vs over-fitted"),
            "transport": smoothed_calibration_figure(
                {dev: self.curves[dev], moved: self.curves[moved]}, colors=colors,
                title=f"New hospital (baseline log-odds {self.shift:+.1f})"),
            "hl": hosmer_lemeshow_groups_figure(self.hosmer_lemeshow, colors=colors, marked=HL_MARKED, alpha=ALPHA),
        }
        method_colors = dict(colors_for(list(METHODS)))
        for model in (over, moved):
            out[f"recalibrated {model}"] = smoothed_calibration_figure(
                {m: self.recalibrated_curves[(model, m)] for m in METHODS}, colors=method_colors, histogram=False,
                bands=False, title=f"{model.capitalize()} recalibrated (held-out half)")
        return out


def _patients(n: int, rng: np.random.Generator, beta0: float) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((n, len(BETA)))
    return x, (rng.random(n) < expit(beta0 + x @ np.asarray(BETA))).astype(int)


def _fit(x: np.ndarray, y: np.ndarray) -> LogisticRegression:
    if y.min() == y.max():
        raise ValueError(f"the development sample of {y.size} patients has only {'events' if y[0] else 'non-events'}; "
                         "raise the number of development patients or change the seed")
    return LogisticRegression(C=1e4, max_iter=2000).fit(x, y)


def _recalibrate(p: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Fit the three methods on a random half, apply them to the other: {method: p on the held-out half}, y."""
    order = rng.permutation(p.size)
    cal, test = order[: p.size // 2], order[p.size // 2:]
    two = np.column_stack([1 - p, p])
    shift = logistic_recalibration(p[cal], y[cal], fix_slope=True).intercept
    p_test = p[test]
    logit = np.log(np.clip(p_test, 1e-7, 1 - 1e-7)) - np.log1p(-np.clip(p_test, 1e-7, 1 - 1e-7))
    out = {
        "before": p_test,
        "intercept update": expit(logit + shift),
        "logistic recalibration": PlattScaling(input="probs").fit(two[cal], y[cal]).predict_proba(two[test])[:, 1],
        "isotonic": IsotonicCalibration(input="probs").fit(two[cal], y[cal]).predict_proba(two[test])[:, 1],
    }
    return out, y[test]


def run_clinical(
    *,
    n_dev: int = 5000,
    n_small: int = 100,
    n_val: int = 2000,
    shift: float = 1.0,
    seed: int = 0,
    n_resamples: int = 200,
) -> ClinicalLabResult:
    """Develop, validate, transport and recalibrate a simulated clinical risk model (module docstring).

    Parameters
    ----------
    n_dev : int, default 5000
        Patients of the development model.
    n_small : int, default 100
        Patients of the over-fitted model (8 predictors).
    n_val : int, default 2000
        New patients of each validation set (same population; new hospital).
    shift : float, default 1.0
        Change of the baseline log-odds at the new hospital (> 0: higher risk there).
    seed : int, default 0
        Seeds the patients, the halves and the bootstrap bands.
    n_resamples : int, default 200
        Bootstrap replicates of the smoothed curves' bands.

    Returns
    -------
    ClinicalLabResult
        Measures, Hosmer–Lemeshow against g, recalibration before/after and the curves.

    References
    ----------
    .. [1] Van Calster, B., Nieboer, D., Vergouwe, Y., De Cock, B., Pencina, M. J. & Steyerberg, E. W. (2016). A
       calibration hierarchy for risk models was defined: from utopia to empirical data. *Journal of Clinical
       Epidemiology* 74, 167–176.
    .. [2] Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
       quantifying the calibration of logistic regression models. *Statistics in Medicine* 38(21), 4051–4065.
    .. [3] Steyerberg, E. W. (2019). *Clinical Prediction Models: A Practical Approach to Development, Validation,
       and Updating* (2nd ed.). Springer.
    .. [4] Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
       *Communications in Statistics – Theory and Methods* 9(10), 1043–1069.
    .. [5] Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. *Journal of the
       American Statistical Association* 74(368), 829–836.
    .. [6] Zadrozny, B. & Elkan, C. (2002). Transforming classifier scores into accurate multiclass probability
       estimates. *Proceedings of the 8th ACM SIGKDD International Conference on Knowledge Discovery and Data
       Mining*, 694–699.
    .. [7] Cox, D. R. (1958). Two further applications of a model for binary regression. *Biometrika* 45(3/4),
       562–565.
    """
    rng = np.random.default_rng(seed)
    x_dev, y_dev = _patients(int(n_dev), rng, BETA0)
    x_small, y_small = _patients(int(n_small), rng, BETA0)
    x_val, y_val = _patients(int(n_val), rng, BETA0)
    x_new, y_new = _patients(int(n_val), rng, BETA0 + float(shift))
    dev, small = _fit(x_dev, y_dev), _fit(x_small, y_small)
    dev_name, over_name, moved_name = SCENARIOS
    preds = {
        dev_name: (dev.predict_proba(x_val)[:, 1], y_val),
        over_name: (small.predict_proba(x_val)[:, 1], y_val),
        moved_name: (dev.predict_proba(x_new)[:, 1], y_new),
    }
    metrics = pd.DataFrame([{"model": m, **_measures(p, y)} for m, (p, y) in preds.items()])
    curves = {m: smoothed_calibration_of(p, y, n_resamples=n_resamples, seed=seed) for m, (p, y) in preds.items()}
    recal_rows, recal_curves = [], {}
    for model in (over_name, moved_name):
        fitted, y_test = _recalibrate(*preds[model], np.random.default_rng([seed, 1]))
        for method, p in fitted.items():
            recal_rows.append({"model": model, "method": method, **_measures(p, y_test)})
            recal_curves[(model, method)] = smoothed_calibration_of(p, y_test, n_resamples=n_resamples, seed=seed)
    return ClinicalLabResult(
        metrics=metrics,
        hosmer_lemeshow=_hl_table(preds),
        recalibration=pd.DataFrame(recal_rows),
        curves=curves,
        recalibrated_curves=recal_curves,
        sizes={"n_dev": int(n_dev), "n_small": int(n_small), "n_val": int(n_val), "n_cal": int(n_val) // 2,
               "n_test": int(n_val) - int(n_val) // 2, "events_small": int(y_small.sum())},
        shift=float(shift),
        options={"seed": int(seed), "n_resamples": int(n_resamples)},
    )
