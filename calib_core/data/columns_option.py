"""The column mapping in command-line words: the ``--columns`` option's text and the loader's hints.

The loader takes a ``columns=`` mapping (role → column name) and words its hints in Python
(``pass columns={'std': '<name>'}``); on the command line the same mapping is written as ``--columns role=name``
pairs.  This module translates both ways:

* :func:`parse_columns` — ``--columns y=target,mean=mu,samples=a|b,q0.05=lo,std=`` → the loader's mapping;
* :func:`cli_message` — a loader message whose ``columns={...}`` hints become ``--columns role=column`` options
  (and ``task='classification'`` becomes ``--task classification``, ``crossing='drop'`` ``--crossing drop``,
  ``layout='gaussian'`` ``--layout gaussian``, ``layout=None`` ``--layout auto``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["LIST_ROLES", "cli_message", "parse_columns"]

#: Roles that take a list of columns (``|``-separated on the command line).
LIST_ROLES = {"samples", "probs", "logits", "features", "quantiles", "classes", "model_columns"}


def parse_columns(specs: Sequence[str] | None) -> dict[str, Any] | None:
    """The ``--columns`` option as a ``columns=`` mapping.

    ``q0.05=lo`` becomes ``{"quantiles": {"0.05": "lo"}}``; ``role=`` maps the role to None (not used); a list role
    (``samples``, ``probs``, ``logits``, ``features``, ``quantiles``, ``classes``, ``model_columns``) takes
    ``|``-separated names.

    Parameters
    ----------
    specs : sequence of str or None
        The option's values (it is repeatable), each of comma-separated ``role=column`` pairs.

    Returns
    -------
    dict or None
        The mapping, or None when no ``--columns`` was given.

    Raises
    ------
    ValueError
        A pair without ``=`` or with an empty role.

    Examples
    --------
    >>> from calib_core.data.columns_option import parse_columns
    >>> parse_columns(["y=target,mean=mu", "samples=a|b", "q0.05=lo", "std="])
    {'y': 'target', 'mean': 'mu', 'samples': ['a', 'b'], 'quantiles': {'0.05': 'lo'}, 'std': None}
    """
    if not specs:
        return None
    out: dict[str, Any] = {}
    for spec in specs:
        for pair in filter(None, (p.strip() for p in spec.split(","))):
            if "=" not in pair:
                raise ValueError(f"--columns expects role=column pairs, got {pair!r}")
            role, _, name = (s.strip() for s in pair.partition("="))
            if not role:
                raise ValueError(f"--columns: empty role in {pair!r}")
            if role.lower().startswith("q") and _is_level(role[1:]):
                out.setdefault("quantiles", {})[role[1:]] = name or None
            elif role in LIST_ROLES and "|" in name:
                out[role] = [n.strip() for n in name.split("|") if n.strip()]
            else:
                out[role] = name or None
    return out


def _is_level(text: str) -> bool:
    try:
        return 0.0 < float(text) < 1.0
    except ValueError:
        return False


_PY_COLUMNS = re.compile(r"columns=(\{(?:[^{}]|\{[^{}]*\})*\})")
_PY_OPTION = re.compile(r"\b(crossing|layout)=(?:'([\w-]+)'|None)")
_CLASSIFICATION_ROLES = {"label", "probs", "logits", "positive", "classes", "pred_label", "model_columns"}


def _cli_columns(mapping: dict[Any, Any], more: bool) -> str:
    """``{'label': '<name>'}`` → ``--columns label=<name>`` (the command-line form of a ``columns=`` mapping)."""
    pairs = []
    for role, value in mapping.items():
        if role == "quantiles" and isinstance(value, dict):
            pairs += [f"q{lvl}={col}" for lvl, col in value.items()]
        elif role == "quantiles" or value is Ellipsis:
            pairs.append("q<level>=<column>,…" if role == "quantiles" else f"{role}=<value>")
        elif value is None:
            pairs.append(f"{role}=")
        elif isinstance(value, (list, tuple)):
            names = ["<column>|<column>|…" if v is Ellipsis else str(v) for v in value]
            pairs.append(f"{role}={'|'.join(names)}")
        else:
            pairs.append(f"{role}={'<column>' if value == '<name>' else value}")
    return "--columns " + ",".join(pairs) + (",…" if more else "")


def cli_message(text: str, task: str | None = None) -> str:
    """A loader message in command-line words.

    Each Python-API hint ``columns={...}`` becomes the equivalent ``--columns role=column`` option, and
    ``crossing='…'`` / ``layout='…'`` (``layout=None``) the options ``--crossing …`` / ``--layout …`` (``auto``); a
    hint that cannot be translated gets the task's generic example (regression: y, mean, std; classification: label
    and probability columns).

    Parameters
    ----------
    text : str
        The message of an ``InputError``.
    task : str, optional
        The ``--task`` given, which chooses the generic example.

    Returns
    -------
    str
        The message with its hints in command-line words.

    Examples
    --------
    >>> from calib_core.data.columns_option import cli_message
    >>> cli_message("pass columns={'std': '<name>'} to choose one")
    'pass --columns std=<column> to choose one'
    >>> cli_message("To use another, pass layout='gaussian'.")
    'To use another, pass --layout gaussian.'
    """
    roles: set[str] = set()
    untranslated = False

    def translate(match: re.Match) -> str:
        nonlocal untranslated
        literal = match.group(1)
        more = bool(re.search(r",\s*(\.\.\.|…)\s*\}$", literal))
        literal = re.sub(r",\s*(\.\.\.|…)\s*\}$", "}", literal)
        try:
            mapping = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            mapping = None
        if not isinstance(mapping, dict):
            untranslated = True
            roles.update(re.findall(r"'(\w+)'\s*:", literal))
            return match.group(0)
        roles.update(str(k) for k in mapping)
        return _cli_columns(mapping, more)

    out = _PY_COLUMNS.sub(translate, text).replace("task='classification'", "--task classification")
    out = _PY_OPTION.sub(lambda m: f"--{m.group(1)} {m.group(2) or 'auto'}", out)
    if untranslated or ("columns=" in out and "--columns" not in out):
        classification = task == "classification" or (task is None and bool(roles & _CLASSIFICATION_ROLES))
        example = ("--columns label=<column>,probs=<column>|<column>|…" if classification
                   else "--columns y=<column>,mean=<column>,std=<column>")
        out += f" On the command line: {example} (see --help)."
    return out
