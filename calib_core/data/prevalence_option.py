"""The prevalence option of the command line: ``--prevalence P`` (binary files).

``report`` passes it to ``cc.diagnose(..., prevalence=P)``: the probabilities are read as made for a population of
prevalence P and re-expressed at the file's own prevalence by Bayes' rule on the odds before every metric
(:mod:`calib_core.diagnosis.classification_clinical`).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..base.predictions import InputError, PredictionSet

__all__ = ["add_prevalence_argument", "prevalence_request"]


def add_prevalence_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--prevalence``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser (or sub-parser) to add it to.
    """
    parser.add_argument("--prevalence", default=None, metavar="P",
                        help="binary files: the prevalence (share of positives, e.g. 0.05) where the model is used; "
                        "the probabilities are re-expressed at the file's own prevalence by Bayes' rule on the odds "
                        "before every metric, so the report measures the calibration at prevalence P (default: none)")


def prevalence_request(pset: PredictionSet, text: str | None) -> dict[str, Any]:
    """``--prevalence`` as ``diagnose``'s keyword, checked against the loaded file.

    Parameters
    ----------
    pset : PredictionSet
        The loaded file.
    text : str or None
        The option's text.

    Returns
    -------
    dict
        ``{"prevalence": P}`` (empty without the option).

    Raises
    ------
    InputError
        Not a number strictly between 0 and 1, or not a binary file with probabilities.

    Examples
    --------
    >>> prevalence_request(None, None)
    {}
    """
    if text is None or not str(text).strip():
        return {}
    try:
        value = float(str(text).strip().rstrip("%")) / (100.0 if str(text).strip().endswith("%") else 1.0)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:
        raise InputError(f"--prevalence must be a share strictly between 0 and 1, got {text!r}",
                         hint="give --prevalence a number such as 0.05 (or 5%)")
    if pset.task != "classification" or pset.top_label_only or pset.probs is None or pset.probs.shape[1] != 2:
        raise InputError("--prevalence applies to binary files with the probability of the positive class; this "
                         "file is not one", source=None, hint="leave out --prevalence for this file")
    return {"prevalence": value}
