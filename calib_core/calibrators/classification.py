"""Post-hoc classification calibrators (Guo et al. 2017 §4, Naeini et al. 2015, Zadrozny & Elkan 2001/2002,
Platt 1999).

All are scikit-learn-style estimators (parameters in ``__init__`` only, fitted attributes with a trailing
underscore, ``sklearn.base.clone`` works): ``.fit(X, labels)`` then ``.predict_proba(X)`` → (N, K) float64
probabilities (a binary problem always returns the two columns [P(y = 0), P(y = 1)]) and ``.predict(X)`` → argmax.

Input: logits or probabilities
------------------------------
``X`` is (N, K) logits or probabilities, or a 1-D array for a binary problem (the positive class's logit or
probability).  Every calibrator has ``input="auto" | "logits" | "probs"``:

* ``"probs"``: X holds probabilities.  The scaling methods work on logits = log p (clipped at ``eps``;
  for a 1-D binary probability p the logit log(p/(1 − p))); the binning methods use p directly.
* ``"logits"``: X holds logits.  The binning methods use softmax(X) (1-D: the sigmoid).
* ``"auto"`` (default): decided once, in ``fit``, and stored in ``input_kind_``: a 2-D X is probabilities when
  every entry is in [0, 1] and every row sums to 1 (±1e-3), logits when some entry is outside [0, 1]; a 2-D X in
  [0, 1] whose rows do not sum to 1 is ambiguous and raises ``ValueError`` (say what it is).  A 1-D X is read as
  probabilities when it lies in [0, 1], else as logits.  ``predict_proba`` never re-guesses: it uses
  ``input_kind_`` and raises if probabilities are expected but X leaves [0, 1].  There is no silent switch.

Multi-class binning methods (histogram binning, isotonic, BBQ) are one-vs-rest: class k is calibrated on
(p_ik, 1[y_i = k]) and the calibrated vector is renormalised to sum to 1 (Zadrozny & Elkan 2002; Guo §4.2); a row
whose calibrated scores are all 0 gets the uniform vector 1/K (scikit-learn's convention), never NaN.  For K = 2
they calibrate P(y = 1) only and return [1 − q, q] (Guo §4.1's binary setting).

All optimisation is in float64 (float32 input is converted first — netcal 1.4's temperature scaling silently does
nothing on float32 input,
https://github.com/EFS-OpenSource/calibration-framework/issues/61) with analytic gradients; there are no finite
differences.

Slice-wise: :class:`GroupTemperatureScaling` fits one temperature per slice (``fit(X, labels, *, groups=...)``,
``predict_proba(X, *, groups=...)``; ``uses_groups = True``), the global temperature for a slice unseen at fit time,
with fewer than ``min_rows`` calibration rows or whose own fit is degenerate.

The classes live in topic modules and are all importable from here: ``classification_base`` (the base class and the
reading of X), ``classification_temperature`` (temperature scaling, per slice too), ``classification_scaling``
(vector, matrix and Platt scaling) and ``classification_binning`` (histogram binning, isotonic, BBQ).
"""

from __future__ import annotations

from .classification_base import InputKind
from .classification_binning import BBQ, HistogramBinning, IsotonicCalibration
from .classification_scaling import MatrixScaling, PlattScaling, VectorScaling, linear_scaling_loss
from .classification_temperature import GroupTemperatureScaling, TemperatureScaling

__all__ = [
    "InputKind",
    "TemperatureScaling",
    "GroupTemperatureScaling",
    "VectorScaling",
    "MatrixScaling",
    "PlattScaling",
    "HistogramBinning",
    "IsotonicCalibration",
    "BBQ",
    "linear_scaling_loss",
]
