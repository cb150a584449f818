"""The metric registry's entries of the clinical calibration set of binary risk models (calibration-in-the-large,
slope, Cox intercept, Spiegelhalter's Z, Hosmer–Lemeshow, ICI / E50 / E90), as argument tuples of
:func:`~calib_core.calibrators.registry_metrics.make_metric` (which builds them into
:data:`~calib_core.calibrators.registry_metrics.METRICS`; kept here so that module stays one concept long).
Formulas and conventions: :mod:`calib_core.metrics.classification_clinical`.
"""

from __future__ import annotations

from typing import Any

from ..base.report import CALIBRATION_STATISTIC, DESCRIPTIVE
from ..metrics import classification_clinical as cl

__all__ = ["CLINICAL_ENTRIES"]

_VC16 = ("Van Calster et al. 2016, A calibration hierarchy for risk models was defined (J Clin Epidemiol); "
         "Cox 1958 (Biometrika)")
_AUSTIN = ("Austin & Steyerberg 2019, The Integrated Calibration Index (ICI) and related metrics (Stat Med); "
           "Cleveland 1979 (loess, JASA)")
_ROWS = ("binary files: P(y = 1) against 1[y = 1]; K > 2: the mean over classes of the one-vs-rest values (per class "
         "in the per-class table)")
_SMOOTHER = "ĉ = loess of y on p (local linear, span 0.75, delta 1 % of the range of p, no robustness iterations)"

#: (key, label, kind, direction, formula, paper, reading, fn, fixed options) of each entry
CLINICAL_ENTRIES: tuple[tuple[Any, ...], ...] = (
    ("calibration_in_the_large", "calibration-in-the-large (CITL)", CALIBRATION_STATISTIC, 0.0,
     "a of logit P(y = 1) = a + logit p̃ (slope fixed at 1, weighted maximum likelihood; p̃ = p clipped to "
     "[1e-7, 1 − 1e-7]); " + _ROWS, _VC16,
     "0 = right on average (mean calibration); > 0 the model under-estimates the risk, < 0 over-estimates it. "
     "Test: Wald z of a = 0.", cl.calibration_in_the_large, {}),
    ("calibration_slope", "calibration slope", CALIBRATION_STATISTIC, 1.0,
     "b of logit P(y = 1) = a + b · logit p̃ (weighted maximum likelihood; Firth's estimate under perfect "
     "separation); " + _ROWS, _VC16 + "; Van Calster et al. 2019, Calibration: the Achilles heel of predictive "
     "analytics (BMC Med)",
     "1 = calibrated; < 1 predictions too extreme (the over-fitted model's signature), > 1 too moderate. "
     "Test: Wald z of b = 1.", cl.calibration_slope, {}),
    ("cox_intercept", "Cox intercept", DESCRIPTIVE, None,
     "a of logit P(y = 1) = a + b · logit p̃ (the two-parameter fit; calzone's name)", "Cox 1958 (Biometrika)",
     "Read with the slope: the intercept at slope b, not calibration-in-the-large (which fixes b = 1).",
     cl.cox_intercept, {}),
    ("spiegelhalter_z", "Spiegelhalter's Z", CALIBRATION_STATISTIC, 0.0,
     "Z = Σ (y − p)(1 − 2p) / √(Σ (1 − 2p)² p (1 − p)); N(0, 1) under perfect calibration; " + _ROWS,
     "Spiegelhalter 1986, Probabilistic prediction in patient management and clinical trials (Stat Med)",
     "≈ 0 when calibrated (|Z| > 1.96 rejects at 5%); grows like √N when miscalibrated, so compare across data "
     "sets of one size only.", cl.spiegelhalter_z, {}),
    ("hosmer_lemeshow", "Hosmer–Lemeshow H", CALIBRATION_STATISTIC, "lower",
     "H = Σ_g (O_g − E_g)² / (E_g (1 − E_g/n_g)) over the deciles of risk of p; test χ² with g degrees of freedom "
     "(predictions fixed before these data; g − 2 for a model fitted on them); " + _ROWS,
     "Hosmer & Lemeshow 1980, Goodness of fit tests for the multiple logistic regression model (Commun Stat)",
     "≈ g (10) when calibrated. Depends on the number of groups and where the cut points fall (Bertolini et al. "
     "2000): read it with the smooth measures; grows with N when miscalibrated.", cl.hosmer_lemeshow, {}),
    ("ici", "ICI (integrated calibration index)", CALIBRATION_STATISTIC, "lower",
     "ICI = Σ_i |ĉ(p_i) − p_i| / N, " + _SMOOTHER + "; " + _ROWS, _AUSTIN,
     "Mean distance between the smoothed calibration curve and the diagonal, weighted by the predictions' "
     "density: 0 = calibrated (noise gives a small positive value: compare with the perfect-calibration value).",
     cl.ici, {}),
    ("e50", "E50 (median calibration error)", DESCRIPTIVE, "lower",
     "E50 = median_i |ĉ(p_i) − p_i|, " + _SMOOTHER, _AUSTIN,
     "Half of the predictions are within E50 of the smoothed observed risk.", cl.e50, {}),
    ("e90", "E90 (90th percentile calibration error)", DESCRIPTIVE, "lower",
     "E90 = 90th percentile_i |ĉ(p_i) − p_i|, " + _SMOOTHER, _AUSTIN,
     "90 % of the predictions are within E90 of the smoothed observed risk.", cl.e90, {}),
)
