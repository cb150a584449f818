"""The first pass of the slice explorer over distributed data: per chunk a mergeable :class:`SliceSketch` — the distinct
levels of every text column, whether a numeric column has more than 12 distinct values (the in-memory rule for
numeric vs categorical), and a Bernoulli sample of the rows chosen by a hash of the row id (so independent of the
chunking) at rate m/N — from which :func:`spec_from_sketch` builds the
:class:`~calib_core.scale.slices_spec.SliceSpec` of the second pass (edges: the sample's quantiles, with the rank
error of the Dvoretzky–Kiefer–Wolfowitz inequality, :mod:`calib_core.scale.slices_spec`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.mergeable import hash_uniform
from ..base.predictions import PredictionSet
from ..base.regression import SampleSet
from ..data.columns import SLICE_CATEGORICAL_MAX
from ..slices import regression as reg_slices
from ..slices.candidates import DEFAULT_BINS
from .slices_spec import SliceSpec, column_values, distinct_text, numeric_edges, numeric_levels

__all__ = ["SliceSketch", "sketch_slices", "spec_from_sketch"]

_SAMPLE_STREAM = 3  # hash stream of the sample (the calibration summaries use 1 and 2)


@dataclass
class SliceSketch:
    """What the first pass over a chunk finds, mergeable.

    Attributes
    ----------
    task : str
        The task.
    columns : list of str
        The candidate columns in order.
    text_levels : dict of str to set of str
        Per column its distinct text levels.
    few_values : dict of str to (set of float or None)
        Per numeric-typed column its distinct values while there are at most 12 (None beyond).
    sample : dict of str to ndarray
        The hashed sample: values per numeric column (and σ for regression).
    n_rows : int
        Rows seen.
    ence_tested : bool
        False for ensembles.
    rate : float
        The sampling rate m/N.
    nonfinite : dict of str to bool
        Per numeric column whether some value is missing or non-finite.

    References
    ----------
    .. [1] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    .. [2] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    """

    task: str
    columns: list[str]
    text_levels: dict[str, set[str]]
    few_values: dict[str, set[float] | None]
    sample: dict[str, np.ndarray]
    n_rows: int
    ence_tested: bool
    rate: float
    nonfinite: dict[str, bool] = field(default_factory=dict)

    def merge(self, other: SliceSketch) -> SliceSketch:
        """Union of levels and samples (order-free).

        Parameters
        ----------
        other : SliceSketch
            Another chunk's sketch.

        Returns
        -------
        SliceSketch
            The sketch of both.
        """
        cols = self.columns + [c for c in other.columns if c not in self.columns]
        text = {c: self.text_levels.get(c, set()) | other.text_levels.get(c, set())
                for c in set(self.text_levels) | set(other.text_levels)}
        few: dict[str, set[float] | None] = {}
        for c in set(self.few_values) | set(other.few_values):
            a, b = self.few_values.get(c, set()), other.few_values.get(c, set())
            u = None if a is None or b is None else a | b
            few[c] = None if u is None or len(u) > SLICE_CATEGORICAL_MAX else u
        sample = {k: np.concatenate([self.sample.get(k, np.empty(0)), other.sample.get(k, np.empty(0))])
                  for k in set(self.sample) | set(other.sample)}
        nonfinite = {c: self.nonfinite.get(c, False) or other.nonfinite.get(c, False)
                     for c in set(self.nonfinite) | set(other.nonfinite)}
        return SliceSketch(self.task, cols, text, few, sample, self.n_rows + other.n_rows,
                           self.ence_tested and other.ence_tested, self.rate, nonfinite)


def sketch_slices(pset: PredictionSet, *, rate: float, row_ids: np.ndarray | None = None, seed: int = 0,
                  target: str = "auto") -> SliceSketch:
    """The first-pass :class:`SliceSketch` of a chunk.

    Rows enter the sample when ``hash_uniform(row id) < rate`` (so a row's membership does not depend on the
    chunking).

    Parameters
    ----------
    pset : PredictionSet
        The chunk.
    rate : float
        The sampling rate m/N.
    row_ids : ndarray of shape (n,) of int64, optional
        Global row ids (default ``pset.row_number``).
    seed : int, default 0
        Seed of the hash.
    target : str, default "auto"
        The classification event (unused by the sketch).

    Returns
    -------
    SliceSketch
        The chunk's sketch.

    References
    ----------
    .. [1] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """
    ids = np.asarray(pset.row_number if row_ids is None else row_ids, dtype=np.int64)
    take = np.flatnonzero(hash_uniform(ids, seed, _SAMPLE_STREAM) < rate)
    names: list[str] = []
    for name in ("group", "model"):
        if getattr(pset, name) is not None and (pset.slice_columns is None or name not in pset.slice_columns.columns):
            names.append(name)
    if pset.slice_columns is not None:
        names += [str(c) for c in pset.slice_columns.columns if str(c) not in names]
    text, few, sample, nonfinite = {}, {}, {}, {}
    for name in names:
        values = column_values(pset, name)
        numeric = pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype) \
            and name not in ("group", "model")
        if numeric:
            head = pd.unique(values.iloc[:1000].dropna())
            distinct = head if head.size > SLICE_CATEGORICAL_MAX else pd.unique(values.dropna())
            few[name] = set(map(float, distinct)) if distinct.size <= SLICE_CATEGORICAL_MAX else None
            text[name] = distinct_text(values) if few[name] is not None else set()
            x = values.to_numpy(dtype=float) if values.dtype == np.float64 else \
                pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
            sample[name] = x[take]
            nonfinite[name] = not bool(np.isfinite(x).all())
        else:
            text[name] = distinct_text(values)
    ence = True
    if pset.task == "regression":
        if pset.dist is None or pset.y is None:
            reg_slices.slice_row_statistics(pset, seed=seed)  # raises: the explorer needs distributions
        sample["\0sigma"] = np.asarray(pset.dist.std(), float)[take]  # σ of slice_row_statistics, without the PIT
        ence = not isinstance(pset.dist, SampleSet)
    return SliceSketch(pset.task, names, text, few, sample, pset.n_rows, ence, rate, nonfinite)


def spec_from_sketch(sketch: SliceSketch, *, n_bins: int = DEFAULT_BINS, target: str = "auto", seed: int = 0,
                     delta: float = 0.01) -> SliceSpec:
    """The :class:`~calib_core.scale.slices_spec.SliceSpec` from a merged first pass.

    A numeric-typed column with more than 12 distinct values is numeric (edges: quantiles of the sample), any other
    column categorical (every level); group/model only when they have two levels or more (as in memory).
    ``rank_error`` = √(ln(2/δ)/(2m)) (Dvoretzky–Kiefer–Wolfowitz with Massart's constant) for a sample of m < N rows,
    with m the smallest number of finite sampled values any edge comes from; 0 when every row was taken.

    Parameters
    ----------
    sketch : SliceSketch
        The merged sketch.
    n_bins : int, default DEFAULT_BINS
        Quantile bins of a numeric column.
    target : str, default "auto"
        The classification event.
    seed : int, default 0
        Seed of the PIT randomisation.
    delta : float, default 0.01
        The rank error holds for every edge at once with probability 1 − δ.

    Returns
    -------
    SliceSpec
        The spec of the second pass.

    References
    ----------
    .. [1] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    names, kinds, edges, levels, none = [], [], [], [], []
    for name in sketch.columns:
        if name in ("group", "model") and len(sketch.text_levels.get(name, ())) < 2:
            continue
        if name in sketch.few_values and sketch.few_values[name] is None:
            e = numeric_edges(sketch.sample[name], n_bins)
            kinds.append("numeric")
            edges.append(e.tolist() if e.size >= 2 else [])
            levels.append(numeric_levels(e) if e.size >= 2 else [])
            none.append(bool(e.size < 2 or sketch.nonfinite.get(name, False)))
        else:
            kinds.append("categorical")
            edges.append(None)
            levels.append(sorted(sketch.text_levels.get(name, set())))
            none.append(False)
        names.append(name)
    sigma_edges: list[float] = []
    if sketch.task == "regression":
        sigma_edges = reg_slices.sigma_bin_edges(sketch.sample["\0sigma"]).tolist()
    # the smallest sample any edge comes from: a column's missing values (and σ's non-finite ones) shrink its own
    m = min([int(np.isfinite(sketch.sample[c]).sum()) for c, k in zip(names, kinds, strict=True) if k == "numeric"]
            + ([int(np.isfinite(sketch.sample["\0sigma"]).sum())] if sketch.task == "regression" else []),
            default=0)
    exact = sketch.rate >= 1.0
    err = 0.0 if exact else math.sqrt(math.log(2.0 / delta) / (2.0 * max(m, 1)))
    return SliceSpec(sketch.task, names, kinds, edges, levels, none, sigma_edges, sketch.ence_tested, target, seed,
                     n_bins, err)
