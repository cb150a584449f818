"""Downloadable template files: one small, valid CSV for every input layout the loader accepts.

Each template is a seeded synthetic table whose column names are the canonical ones of the prediction-file format, so a
user can see the expected shape, replace the numbers with their own and upload it.  Every template
loads with ``cc.load_predictions`` into the layout it is named after (tested), and the numbers are
calibrated by construction, so a diagnosis of a template shows what "good" looks like:

regression (target ``y``; x ~ U(0, 1), μ = 2x, σ = 0.2 + 0.3x, y ~ N(μ, σ²))
    ``gaussian_std`` (mean, std) · ``gaussian_var`` (mean, var) · ``gaussian_log_var`` (mean, log_var) ·
    ``quantiles`` (q0.05 … q0.95) · ``samples`` (sample_0 … sample_7, draws from N(μ, σ²)) ·
    ``point`` (mean only) · ``multi_model`` (long format: ``model`` and ``group`` columns, two models, one
    of them over-confident)
classification (``label`` 0..K−1, K = 3; logits z ~ N(0, 2²) per class, label ~ softmax(z))
    ``probs`` (prob_0 … prob_2) · ``logits`` (logit_0 … logit_2) · ``binary_prob`` (one ``prob`` column,
    P(label = 1)) · ``binary_logit`` (one ``logit`` column) · ``top_label`` (label, pred_label, confidence)

Optional columns shown in every template: ``split`` (cal/test), and for regression a feature ``x``.
No Streamlit here: the Data page offers :func:`template_csv` through download buttons.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..base.classification import softmax

__all__ = ["Template", "TEMPLATES", "template_names", "template_frame", "template_csv"]


@dataclass(frozen=True)
class Template:
    """A template file: its name, task, the loader's layout name and a one-line description.

    Attributes
    ----------
    name : str
        The template's name (a key of :data:`TEMPLATES`).
    task : str
        ``"regression"`` or ``"classification"``.
    layout : str
        The layout the loader reads it as (``PredictionSet.layout``).
    description : str
        One line for the download list.
    """

    name: str
    task: str
    layout: str
    description: str

    @property
    def file_name(self) -> str:
        """The download's file name, ``template_<name>.csv``."""
        return f"template_{self.name}.csv"


TEMPLATES: dict[str, Template] = {
    t.name: t
    for t in (
        Template("gaussian_std", "regression", "gaussian", "Gaussian: y, mean, std (σ > 0)"),
        Template("gaussian_var", "regression", "gaussian", "Gaussian: y, mean, var (σ² > 0)"),
        Template("gaussian_log_var", "regression", "gaussian", "Gaussian: y, mean, log_var (log σ²)"),
        Template("quantiles", "regression", "quantile", "Quantiles: y, q0.05 … q0.95 (any levels, increasing)"),
        Template("samples", "regression", "sample", "Ensemble / samples: y, sample_0 … sample_{M−1} (M ≥ 2)"),
        Template("point", "regression", "point", "Point predictions only: y, mean (σ from a calibrator later)"),
        Template(
            "multi_model", "regression", "gaussian",
            "Several models in one file (long format): model and group columns",
        ),
        Template("probs", "classification", "probs", "Probabilities: label, prob_0 … prob_{K−1} (rows sum to 1)"),
        Template("logits", "classification", "logits", "Logits: label, logit_0 … logit_{K−1}"),
        Template("binary_prob", "classification", "binary_prob", "Binary: label (0/1), prob = P(label = 1)"),
        Template("binary_logit", "classification", "binary_logit", "Binary: label (0/1), logit = log-odds of 1"),
        Template(
            "top_label", "classification", "top_label",
            "Top label only: label, pred_label, confidence (= max probability)",
        ),
    )
}


def template_names(task: str | None = None) -> list[str]:
    """Template names, all or of one task.

    Parameters
    ----------
    task : {"regression", "classification"}, optional
        The task; None for all.

    Returns
    -------
    list of str
        Keys of :data:`TEMPLATES`.
    """
    return [n for n, t in TEMPLATES.items() if task is None or t.task == task]


def _split(n: int, rng: np.random.Generator) -> np.ndarray:
    split = np.full(n, "test", dtype=object)
    split[rng.permutation(n)[: n // 2]] = "cal"
    return split


def _regression(name: str, n: int, rng: np.random.Generator) -> pd.DataFrame:
    x = rng.uniform(0.0, 1.0, n)
    mean = 2.0 * x
    std = 0.2 + 0.3 * x
    y = mean + std * rng.standard_normal(n)
    split = _split(n, rng)
    r = lambda a: np.round(a, 4)  # noqa: E731 - short, readable numbers in the file
    if name == "gaussian_std":
        cols = {"y": r(y), "mean": r(mean), "std": r(std)}
    elif name == "gaussian_var":
        cols = {"y": r(y), "mean": r(mean), "var": np.round(std**2, 6)}
    elif name == "gaussian_log_var":
        cols = {"y": r(y), "mean": r(mean), "log_var": r(np.log(std**2))}
    elif name == "quantiles":
        levels = (0.05, 0.25, 0.5, 0.75, 0.95)
        cols = {"y": r(y)} | {f"q{p:g}": r(mean + std * stats.norm.ppf(p)) for p in levels}
    elif name == "samples":
        draws = mean[:, None] + std[:, None] * rng.standard_normal((n, 8))
        cols = {"y": r(y)} | {f"sample_{j}": r(draws[:, j]) for j in range(8)}
    elif name == "point":
        cols = {"y": r(y), "mean": r(mean)}
    elif name == "multi_model":
        half = n // 2
        cols = {
            "y": r(np.r_[y[:half], y[:half]]),
            "mean": r(np.r_[mean[:half], mean[:half]]),
            "std": r(np.r_[std[:half], 0.5 * std[:half]]),  # the second model is over-confident
            "model": np.repeat(np.array(["calibrated", "over-confident"], dtype=object), half),
            "group": np.tile(np.where(x[:half] < 0.5, "small x", "large x").astype(object), 2),
        }
        x, split = np.r_[x[:half], x[:half]], np.r_[split[:half], split[:half]]
    else:  # pragma: no cover - guarded by template_frame
        raise KeyError(name)
    return pd.DataFrame(cols | {"split": split, "x": r(x)})


def _classification(name: str, n: int, rng: np.random.Generator) -> pd.DataFrame:
    k = 2 if name.startswith("binary") else 3
    logits = 2.0 * rng.standard_normal((n, k))
    logits -= logits[:, :1]  # class 0 as the reference (a binary file's logit is then z_1)
    probs = softmax(logits, axis=1)
    cum = np.cumsum(probs, axis=1)
    label = np.minimum((rng.random(n)[:, None] > cum).sum(axis=1), k - 1)  # label ~ Categorical(p): calibrated
    split = _split(n, rng)
    if name == "probs":
        p = np.round(probs, 6)
        p[:, -1] = np.round(1.0 - p[:, :-1].sum(axis=1), 6)  # rounded rows still sum to 1
        cols = {"label": label} | {f"prob_{j}": p[:, j] for j in range(k)}
    elif name == "logits":
        cols = {"label": label} | {f"logit_{j}": np.round(logits[:, j], 4) for j in range(k)}
    elif name == "binary_prob":
        cols = {"label": label, "prob": np.round(probs[:, 1], 6)}
    elif name == "binary_logit":
        cols = {"label": label, "logit": np.round(logits[:, 1], 4)}
    elif name == "top_label":
        cols = {"label": label, "pred_label": probs.argmax(axis=1), "confidence": np.round(probs.max(axis=1), 6)}
    else:  # pragma: no cover
        raise KeyError(name)
    return pd.DataFrame(cols | {"split": split})


def template_frame(name: str, n_rows: int = 40, seed: int = 0) -> pd.DataFrame:
    """The template ``name`` (see :data:`TEMPLATES`) as a DataFrame of ``n_rows`` seeded rows.

    Parameters
    ----------
    name : str
        A key of :data:`TEMPLATES`.
    n_rows : int, default 40
        Rows (at least 4).
    seed : int, default 0
        Seed of the synthetic numbers.

    Returns
    -------
    DataFrame
        The table, with the canonical column names of its layout, ``split`` and (regression) ``x``.

    Raises
    ------
    KeyError
        An unknown template.
    ValueError
        Fewer than 4 rows.

    Examples
    --------
    >>> from calib_core.data.templates import template_frame
    >>> template_frame("gaussian_std", n_rows=6).columns.tolist()
    ['y', 'mean', 'std', 'split', 'x']
    """
    if name not in TEMPLATES:
        raise KeyError(f"unknown template {name!r}; choose one of {list(TEMPLATES)}")
    if n_rows < 4:
        raise ValueError("a template needs at least 4 rows")
    rng = np.random.default_rng([seed, list(TEMPLATES).index(name)])
    t = TEMPLATES[name]
    return _regression(name, n_rows, rng) if t.task == "regression" else _classification(name, n_rows, rng)


def template_csv(name: str, n_rows: int = 40, seed: int = 0) -> bytes:
    """The template as UTF-8 CSV bytes (what the Data page's download buttons serve).

    Parameters
    ----------
    name : str
        A key of :data:`TEMPLATES`.
    n_rows : int, default 40
        Rows (at least 4).
    seed : int, default 0
        Seed of the synthetic numbers.

    Returns
    -------
    bytes
        The CSV file.
    """
    return template_frame(name, n_rows, seed).to_csv(index=False).encode("utf-8")
