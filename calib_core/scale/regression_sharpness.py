"""Sharpness of a summary at any finite σ: the sums of σ² at three fixed powers of two, the one near the largest σ
read.

Σσ² overflows as soon as one σ exceeds √(largest double) ≈ 1.34e154 and loses every row below ≈ 1.5e-154 (σ²
underflows), so a summary that keeps only Σσ² (``x:var``) cannot give √(mean σ²) there.  The summary also keeps,
per σ-bin, the exact sums of (σ·2⁻⁶⁰⁰)² (``x:var_hi``) and of (σ·2⁶⁰⁰)² (``x:var_lo``, a row whose scaled square
would overflow adds 0: it is never read beside such a row).  The scales are fixed, so the sums merge exactly like
every other exact sum (bit for bit whatever the chunking), and the reader picks the scale c from the largest σ (the
``sigma_max`` of the σ-bins, merged by max): c = 2⁻⁶⁰⁰ when max σ ≥ 2⁵⁰⁰, 2⁶⁰⁰ when max σ < 2⁻⁴⁰⁰, else 1 (``x:var``
as before, so ordinary data give the same numbers bit for bit).  Then sharpness = √(Σ(σc)²/n) / c with (σ_max·c)²
between 2⁻⁹⁵⁰ and 2⁸⁴⁸: every row that matters is a normal double, the sum is exact and rounded once, so the value
is the in-memory :func:`~calib_core.metrics.regression_rows.root_mean_square` to a few units in the last place.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["SCALE_BITS", "SCALED_NOTE", "scaled_sums_vanish", "scaled_variance_columns", "summary_cv",
           "summary_sharpness", "uses_scaled_sums"]

SCALE_BITS = 600
"""The scaled sums hold (σ·2^∓600)²."""

SCALED_NOTE = ("value from the sums of σ² at a power-of-two scale (σ beyond the range of σ²); no interval: the "
               "bootstrap's block sums of σ² over- or underflow at this scale")
"""The note of the sharpness and Cv of a summary read at a scale (their block-bootstrap intervals are left out)."""

_HI, _LO = 500, -400  # binary exponents of max σ above / below which the scaled sums are read
_LO_FINITE = 2.0 ** 511  # σ·2^600 at or above this squares to ∞: such a row adds 0 to x:var_lo


def scaled_variance_columns(sigma: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The per-row values of the scaled sums: ``var_hi`` = (σ·2⁻⁶⁰⁰)², ``var_lo`` = (σ·2⁶⁰⁰)² (0 where that square
    would overflow; ∞ / NaN where σ is).

    Parameters
    ----------
    sigma : ndarray of shape (n,)
        Predicted standard deviations.

    Returns
    -------
    list of (str, ndarray)
        ``[("var_hi", …), ("var_lo", …)]``, for the summary's exact per-bin sums.

    References
    ----------
    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Examples
    --------
    >>> [(k, v.tolist()) for k, v in scaled_variance_columns(np.array([2.0 ** 600, 2.0 ** -600]))]
    [('var_hi', [1.0, 0.0]), ('var_lo', [0.0, 1.0])]
    """
    s = np.asarray(sigma, dtype=float)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        hi = np.ldexp(s, -SCALE_BITS)
        lo = np.ldexp(s, SCALE_BITS)
        lo2 = np.where(np.abs(lo) < _LO_FINITE, lo * lo, np.where(np.isfinite(s), 0.0, s * s))
        return [("var_hi", hi * hi), ("var_lo", lo2)]



_ZERO_LO, _ZERO_HI = 2.0 ** -89, 2.0 ** 62  # σ in [2⁻⁸⁹, 2⁶²): both scaled squares are exactly 0


def scaled_sums_vanish(sigma_min: float, sigma_max: float) -> bool:
    """Whether every row of σ in [``sigma_min``, ``sigma_max``] has both scaled squares exactly 0.

    (σ·2⁻⁶⁰⁰)² < 2⁻¹⁰⁷⁶ rounds to 0 when |σ| < 2⁶², and (σ·2⁶⁰⁰)² is set to 0 (it would overflow) when
    |σ| ≥ 2⁻⁸⁹ (σ·2⁶⁰⁰ ≥ 2⁵¹¹): for σ in [2⁻⁸⁹, 2⁶²) — every σ of ordinary data — the two columns of
    :func:`scaled_variance_columns` are all zeros and their exact sums are 0, without computing them.

    Parameters
    ----------
    sigma_min, sigma_max : float
        The smallest and largest σ of the rows (NaN: not known, answered False).

    Returns
    -------
    bool
        True when both columns are zero for every row.

    References
    ----------
    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Examples
    --------
    >>> scaled_sums_vanish(1e-3, 1e3), scaled_sums_vanish(1e-30, 1.0), scaled_sums_vanish(1.0, 1e20)
    (True, False, False)
    """
    return bool(_ZERO_LO <= sigma_min and sigma_max < _ZERO_HI)

def summary_sharpness(part: dict, var_total: Fraction | float, n: int, total: callable) -> float:
    """√(mean σ²) of a summary part at the scale its largest σ needs: √(Σσ²/n) from ``x:var`` when max σ lies in
    [2⁻⁴⁰⁰, 2⁵⁰⁰), else c⁻¹·√(Σ(σc)²/n) from ``x:var_hi`` (c = 2⁻⁶⁰⁰) or ``x:var_lo`` (c = 2⁶⁰⁰).

    Parameters
    ----------
    part : dict
        The summary part (its ``sigma_max`` and, in summaries that hold them, ``x:var_hi`` / ``x:var_lo``).
    var_total : Fraction or float
        The exact Σσ² of the part (``x:var``), ±inf / NaN when non-finite values were counted.
    n : int
        The part's rows.
    total : callable
        ``total(part, name)``: the exact total of ``x:name`` over the σ-bins.

    Returns
    -------
    float
        The sharpness.

    References
    ----------
    Zelikman, E., Healy, C., Zhou, S. & Avati, A. (2020). CRUDE: calibrating regression uncertainty distributions
    empirically. arXiv:2005.12496.

    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Examples
    --------
    >>> s = np.array([3e300, 4e300])
    >>> part = {"sigma_max": np.array([4e300]), **{f"x:{k}": v for k, v in scaled_variance_columns(s)}}
    >>> f"{summary_sharpness(part, float('inf'), 2, lambda p, k: Fraction(float(p[f'x:{k}'].sum()))):.6g}"
    '3.53553e+300'
    """
    scale, key = _scale(part)
    s = var_total if key is None else total(part, key)  # ordinary σ, or a summary without the scaled sums: x:var
    if isinstance(s, Fraction) and s < 0:
        return float("nan")
    v = float(s / n) if isinstance(s, Fraction) else float(s) / n
    return math.ldexp(math.sqrt(v), -scale) if np.isfinite(v) else float(np.sqrt(v))


def _scale(part: dict) -> tuple[int, str | None]:
    """(log2 c, the scaled sum to read) from the part's largest σ; (0, None): read ``x:var`` as it is."""
    top = part.get("sigma_max")
    m = float(np.nanmax(top)) if top is not None and np.isfinite(top).any() else float("nan")
    scale = 0
    if np.isfinite(m) and m > 0:
        e = math.frexp(m)[1]
        scale = -SCALE_BITS if e > _HI else SCALE_BITS if e <= _LO else 0
    key = {-SCALE_BITS: "var_hi", SCALE_BITS: "var_lo"}.get(scale)
    if key is None or f"x:{key}" not in part:
        return 0, None
    return scale, key


def summary_cv(part: dict, n: int, total: callable) -> float | None:
    """Cv = std(σ, ddof = 1)/mean(σ) of a summary part whose largest σ needs the scaled sums: with c the scale of
    :func:`summary_sharpness`, v = (Σ(σc)² − (cΣσ)²/n)/(n − 1) and Cv = √v/(cΣσ/n) (scale-free); None when
    ``x:var`` is read as it is (the caller's exact formula then applies).

    Parameters
    ----------
    part : dict
        The summary part.
    n : int
        The part's rows.
    total : callable
        ``total(part, name)``: the exact total of ``x:name`` over the σ-bins.

    Returns
    -------
    float or None
        Cv (NaN for fewer than 2 rows, all σ zero, or non-finite sums), or None.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2022). Evaluating and calibrating uncertainty prediction in
    regression tasks. Sensors 22(15), 5540.

    Examples
    --------
    >>> s = np.array([3e300, 5e300])
    >>> part = {"sigma_max": np.array([5e300]), "x:sigma": np.array([Fraction(8e300)]),
    ...         **{f"x:{k}": np.array([Fraction(float(v.sum()))]) for k, v in scaled_variance_columns(s)}}
    >>> f"{summary_cv(part, 2, lambda p, k: p[f'x:{k}'][0]):.6f}"
    '0.353553'
    """
    scale, key = _scale(part)
    if key is None:
        return None
    s1, s2 = total(part, "sigma"), total(part, key)
    if n < 2 or not (isinstance(s1, Fraction) and isinstance(s2, Fraction)) or s1 <= 0:
        return float("nan")
    s1c = s1 * Fraction(2) ** scale
    v = (s2 - s1c * s1c / n) / (n - 1)
    return float(math.sqrt(float(v)) / float(s1c / n)) if v >= 0 else float("nan")


def uses_scaled_sums(part: dict) -> bool:
    """Whether the part's sharpness and Cv are read from the scaled sums (its largest σ is outside [2⁻⁴⁰⁰, 2⁵⁰⁰]):
    then the float block sums of σ² behind their bootstrap intervals over- or underflow.

    Parameters
    ----------
    part : dict
        The summary part.

    Returns
    -------
    bool
        True when the scaled sums are read.

    References
    ----------
    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Examples
    --------
    >>> uses_scaled_sums({"sigma_max": np.array([1e300]), "x:var_hi": np.array([0]), "x:var_lo": np.array([0])})
    True
    """
    return _scale(part)[1] is not None
