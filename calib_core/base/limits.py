"""Caps on every size a user sets (bins, resamples, draws, classes …), checked before anything is allocated.

A size typed into a command-line option or a page control becomes an array: ``--n-bins 100000`` asks for
``n_bins × n_resamples`` bin statistics, ``--resamples 10**9`` for a billion resamples.  Each such size has one cap in
:data:`CAPS`, with the reason for its value, and :func:`check_size` refuses a larger (or too small) request with an
``InputError`` in the words of the caller (the option ``--n-bins`` on the command line, the control "Confidence bins"
on a page) before any memory is taken.  :func:`check_options` checks the keyword options of ``cc.diagnose`` /
``cc.evaluate`` against the same table.

The caps are far above what a diagnosis needs (15 bins and 1,000 resamples are the defaults) and below what
exhausts a machine's memory: the binding products are bins × resamples (bootstrap bin statistics, 8 bytes each)
and classes × rows.

References
----------
.. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993 (ch. 19: a few
   thousand resamples suffice for percentile intervals).
.. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", ICML 2017
   (15 confidence bins).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .predictions import InputError

__all__ = ["CAPS", "CLI_OPTIONS", "MAX_CELLS", "MAX_NAME_CHARS", "Cap", "cap_of", "check_options", "check_size"]


@dataclass(frozen=True)
class Cap:
    """One user-set size: its smallest and largest accepted value and why.

    Attributes
    ----------
    what : str
        The size in words ("confidence bins or σ-bins").
    low, high : int
        The accepted range (inclusive).
    reason : str
        Why the cap is where it is.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.
    """

    what: str
    low: int
    high: int
    reason: str


MAX_NAME_CHARS = 1_000
"""The longest column name read (characters): a longer header cell is data read as a name (a file without a header
line), and every message quotes names."""

CAPS: dict[str, Cap] = {
    "n_bins": Cap("confidence bins or σ-bins", 1, 1_000,
                  "each bin needs rows to estimate its rate; beyond 1,000 bins most are empty at any file size the "
                  "dashboard reads, and bins × resamples statistics are kept in memory"),
    "pit_bins": Cap("PIT histogram bins", 2, 1_000, "a histogram of more than 1,000 bins is noise at any file size"),
    "slice_bins": Cap("bins of a numeric slice column", 2, 100,
                      "every bin is a candidate slice tested (and adjusted for) once; 100 bins is a percentile grid"),
    "n_resamples": Cap("bootstrap resamples", 0, 100_000,
                       "a few thousand resamples give percentile intervals to Monte-Carlo error below 1 %; 100,000 "
                       "resamples × bins statistics is the memory ceiling"),
    "n_simulations": Cap("simulations under perfect calibration", 0, 100_000,
                         "p-values to ±0.001 need about 100,000 simulations; more only costs time and memory"),
    "n_draws": Cap("random draws", 1, 100_000, "draws are kept per row; 100,000 is far beyond any tail estimate"),
    "repeats": Cap("random splits", 1, 1_000, "the mean over 1,000 splits is exact to the third digit; each split "
                   "refits every calibrator"),
    "n_classes": Cap("classes", 2, 10_000, "one probability column per class: 10,000 is the column limit of a file"),
    "n_grid": Cap("points of a curve's grid", 2, 10_001, "a curve drawn at more than 10,001 points is not finer on a "
                  "screen"),
    "workers": Cap("worker processes", 1, 256, "each worker is a process with its own memory"),
}
"""Every user-set size: the name used by ``cc.diagnose`` / ``cc.evaluate`` → its :class:`Cap`."""


MAX_CELLS = 10_000_000
"""The most bins × resamples (or bins × simulations) statistics one request may ask for (80 MB of float64)."""

CLI_OPTIONS = {"n_bins": "--n-bins", "pit_bins": "--pit-bins", "n_resamples": "--resamples",
               "n_simulations": "--simulations", "repeats": "--repeats", "workers": "--workers"}
"""The command line's words for the capped sizes (option name → ``--option``), for :func:`check_options`."""


def cap_of(name: str) -> Cap:
    """The cap of a size by its option name (``"n_bins"``, ``"n_resamples"`` …).

    Parameters
    ----------
    name : str
        A key of :data:`CAPS`.

    Returns
    -------
    Cap
        Its range and reason.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.

    Examples
    --------
    >>> from calib_core.base.limits import cap_of
    >>> cap_of("n_bins").high
    1000
    """
    return CAPS[name]


def check_size(name: str, value: Any, *, control: str | None = None, source: str | None = None) -> int:
    """Refuse a requested size outside its cap, before anything of that size is allocated.

    ``low ≤ value ≤ high`` with (low, high) from :data:`CAPS`; the message names the size by ``control`` (the
    caller's words: ``"--n-bins"``, ``"Confidence bins"``), says the value, the range and the reason.

    Parameters
    ----------
    name : str
        A key of :data:`CAPS`.
    value : int-like
        The requested size.
    control : str, optional
        How the caller names it (default: the option name ``name``).
    source : str, optional
        The file the request is about, for the message.

    Returns
    -------
    int
        The value as an int.

    Raises
    ------
    InputError
        Not a whole number, or outside the range.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.

    Examples
    --------
    >>> from calib_core.base.limits import check_size
    >>> check_size("n_bins", 15, control="--n-bins")
    15
    >>> try:
    ...     check_size("n_bins", 100_000, control="--n-bins")
    ... except Exception as err:
    ...     print(str(err).split(" (")[0])
    --n-bins is 100,000, above the cap of 1,000 confidence bins or σ-bins
    """
    cap = CAPS[name]
    label = control or name
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{label} must be a whole number of {cap.what}, got {value!r}", source=source,
                         hint=f"give a whole number from {cap.low:,} to {cap.high:,}") from None
    if not math.isfinite(number) or number != int(number):
        raise InputError(f"{label} must be a whole number of {cap.what}, got {value!r}", source=source,
                         hint=f"give a whole number from {cap.low:,} to {cap.high:,}")
    number_int = int(number)
    if number_int > cap.high:
        raise InputError(f"{label} is {number_int:,}, above the cap of {cap.high:,} {cap.what} ({cap.reason})",
                         source=source, hint=f"give {label} a value from {cap.low:,} to {cap.high:,}")
    if number_int < cap.low:
        raise InputError(f"{label} is {number_int:,}, below the least of {cap.low:,} {cap.what}", source=source,
                         hint=f"give {label} a value from {cap.low:,} to {cap.high:,}")
    return number_int


def check_options(options: Mapping[str, Any], *, controls: Mapping[str, str] | None = None,
                  source: str | None = None) -> None:
    """Check every capped size among keyword options (``n_bins``, ``n_resamples`` …; others are left alone).

    Each size within its cap (:func:`check_size`), and bins × resamples ≤ :data:`MAX_CELLS` (likewise bins ×
    simulations): the bootstrap and the simulations keep one statistic per bin and draw.

    Parameters
    ----------
    options : mapping
        Keyword options of ``cc.diagnose`` / ``cc.evaluate``.
    controls : mapping, optional
        Option name → the caller's name for it (e.g. ``{"n_bins": "--n-bins"}``).
    source : str, optional
        The file, for the message.

    Returns
    -------
    None
        Nothing; an out-of-range size raises.

    Raises
    ------
    InputError
        The first size outside its cap (:func:`check_size`).

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.

    Examples
    --------
    >>> from calib_core.base.limits import check_options
    >>> check_options({"n_bins": 15, "n_resamples": 0, "seed": 3})
    """
    controls = controls or {}
    sizes = {}
    for name, value in options.items():
        if name in CAPS and value is not None and not isinstance(value, (str, bool)):
            sizes[name] = check_size(name, value, control=controls.get(name, name), source=source)
    for bins in ("n_bins", "pit_bins"):
        for draws in ("n_resamples", "n_simulations"):
            if sizes.get(bins, 0) * sizes.get(draws, 0) > MAX_CELLS:
                b, d = controls.get(bins, bins), controls.get(draws, draws)
                raise InputError(
                    f"{b} = {sizes[bins]:,} with {d} = {sizes[draws]:,} asks for {sizes[bins] * sizes[draws]:,} bin "
                    f"statistics, above the cap of {MAX_CELLS:,} (each is kept in memory)",
                    source=source, hint=f"lower {b} or {d} (their product at most {MAX_CELLS:,})")
