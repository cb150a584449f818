"""NumPy's runtime warnings of a command-line run collected into one note of the report (the command line's
``report`` and ``evaluate``): extreme rows give inf/NaN statistics, and the report says so once instead of a
screenful of warnings on stderr."""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["numerical_warnings"]


@contextmanager
def numerical_warnings(notes: list[str]) -> Iterator[None]:
    """Collect NumPy's RuntimeWarnings (overflow, invalid value, divide by zero, …) of the block into one note
    instead of a screenful of stderr: extreme rows give inf/NaN statistics, and the report says so.

    Other warnings are re-issued unchanged.

    Parameters
    ----------
    notes : list of str
        The run's notes; one sentence is appended when NumPy warned (the four most common messages, counted).

    Yields
    ------
    None
        The block whose warnings are collected.

    Examples
    --------
    >>> import numpy as np
    >>> notes = []
    >>> with numerical_warnings(notes):
    ...     _ = np.array([1.0]) / 0.0
    >>> notes[0].startswith("NumPy reported 1 numerical warnings")
    True
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        yield
    counts = Counter(str(w.message) for w in caught if issubclass(w.category, RuntimeWarning))
    others = [w for w in caught if not issubclass(w.category, RuntimeWarning)]
    for w in others:  # not ours to hide
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if counts:
        kinds = "; ".join(f"{m} ({n}×)" for m, n in counts.most_common(4))
        notes.append(
            f"NumPy reported {sum(counts.values()):,} numerical warnings while computing ({kinds}): some rows have "
            "extreme values (e.g. a spread near 0, overflowing errors), so statistics involving them may be "
            "inf or NaN."
        )
