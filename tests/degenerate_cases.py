"""Hostile prediction files, generated (never committed): 1-, 2- and 3-row files of every layout, one-class files,
and each numeric role at ±1e300, ±inf, NaN (and 1e308, 1e-300) in one row of an otherwise fine 50-row file.

``CASES`` maps a case name to a function returning ``(frame, task)``; ``DEFAULT`` is the representative subset the
default test run exercises (the whole matrix is marked ``slow``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

N = 50
HOSTILE_ROW = 3  # 0-based: the file's data row 4


def regression_frame(kind: str, n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    y = mean + std * rng.normal(size=n)
    if kind == "gaussian":
        return pd.DataFrame({"y": y, "mean": mean, "std": std})
    if kind == "quantile":
        return pd.DataFrame({"y": y, "q_0.1": mean - 1.28 * std, "q_0.5": mean, "q_0.9": mean + 1.28 * std})
    if kind == "ensemble":
        return pd.DataFrame({"y": y, **{f"member_{i}": mean + std * rng.normal(size=n) for i in range(5)}})
    if kind == "point":
        return pd.DataFrame({"y": y, "y_pred": mean})
    raise ValueError(kind)


def classification_frame(kind: str, n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    if kind == "binary":
        p = rng.uniform(0.05, 0.95, n)
        return pd.DataFrame({"y": (rng.uniform(size=n) < p).astype(int), "prob_0": 1 - p, "prob_1": p})
    if kind == "kclass":
        p = rng.dirichlet(np.ones(3), n)
        return pd.DataFrame({"y": np.arange(n) % 3, **{f"prob_{k}": p[:, k] for k in range(3)}})
    if kind == "logits":
        z = rng.normal(size=(n, 3))
        return pd.DataFrame({"y": np.arange(n) % 3, **{f"logit_{k}": z[:, k] for k in range(3)}})
    raise ValueError(kind)


def _tiny(task: str, kind: str, n: int) -> Callable[[], tuple[pd.DataFrame, str]]:
    build = regression_frame if task == "regression" else classification_frame
    return lambda: (build(kind, n), task)


def _one_class(which: str) -> Callable[[], tuple[pd.DataFrame, str]]:
    def make() -> tuple[pd.DataFrame, str]:
        f = classification_frame("binary", N)
        if which == "p0":  # every label 0 and P(y = 1) = 0
            f["y"], f["prob_1"], f["prob_0"] = 0, 0.0, 1.0
        elif which == "p1":
            f["y"], f["prob_1"], f["prob_0"] = 1, 1.0, 0.0
        else:  # one class, ordinary probabilities
            f["y"] = 1
        return f, "classification"
    return make


def _hostile(base: str, column: str, value: float) -> Callable[[], tuple[pd.DataFrame, str]]:
    def make() -> tuple[pd.DataFrame, str]:
        if base in ("gaussian", "quantile", "ensemble", "point"):
            f, task = regression_frame(base, N), "regression"
        else:
            f, task = classification_frame(base, N), "classification"
        if column == "age":
            f["age"] = np.random.default_rng(7).normal(40, 10, N)
        f[column] = f[column].astype(float)
        f.loc[HOSTILE_ROW, column] = value
        return f, task
    return make


VALUES = {"+1e300": 1e300, "-1e300": -1e300, "+inf": np.inf, "-inf": -np.inf, "nan": np.nan, "+1e308": 1e308,
          "1e-300": 1e-300}
ROLES = {  # role → (base layout, column)
    "y": ("gaussian", "y"), "mean": ("gaussian", "mean"), "std": ("gaussian", "std"),
    "quantile": ("quantile", "q_0.5"), "member": ("ensemble", "member_0"), "point": ("point", "y_pred"),
    "prob": ("binary", "prob_1"), "logit": ("logits", "logit_0"), "feature": ("gaussian", "age"),
}

CASES: dict[str, Callable[[], tuple[pd.DataFrame, str]]] = {}
for _n in (1, 2, 3):
    for _k in ("gaussian", "quantile", "ensemble", "point"):
        CASES[f"{_k}-{_n}row"] = _tiny("regression", _k, _n)
    for _k in ("binary", "kclass", "logits"):
        CASES[f"{_k}-{_n}row"] = _tiny("classification", _k, _n)
for _w in ("p0", "p1", "mixed"):
    CASES[f"oneclass-{_w}"] = _one_class(_w)
for _role, (_base, _col) in ROLES.items():
    for _vn, _v in VALUES.items():
        CASES[f"{_role}={_vn}"] = _hostile(_base, _col, _v)

DEFAULT = ["gaussian-2row", "binary-2row", "kclass-3row", "oneclass-p0", "std=+1e300", "mean=+1e300",
           "member=+1e300", "logit=+1e308", "feature=+inf", "y=nan"]
"""The representative subset of the default run."""
