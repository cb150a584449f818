"""The smooth ECE's test, null and interval on their own random stream, memoised on the rows.

:func:`calib_core.metrics.classification_smooth.smooth_inference` (Błasiok & Nakkiran 2023) depends on the rows and
its options only — not on the confidence bins or the other statistics' draws — so it runs on a random stream of its
own and its result is kept: a change of the bins (the Classification page's slider) reuses it.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections import OrderedDict

import numpy as np

from ..base.clustering import Clustering, cluster_design
from ..base.significance import block_ids
from ..metrics.classification_smooth import SmoothECE, smooth_inference

__all__ = ["SMOOTH_MEMO_ENTRIES", "smooth_inference_of"]


#: How many smooth-ECE inference results :func:`smooth_inference_of` keeps (each a few kB: 200 null draws).
SMOOTH_MEMO_ENTRIES = 32
_SMOOTH_MEMO: OrderedDict = OrderedDict()
_SMOOTH_LOCK = threading.Lock()


def _digest(*arrays: np.ndarray) -> str:
    """BLAKE2b (128 bits) of the arrays' dtypes, shapes and bytes."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def smooth_inference_of(
    values: np.ndarray,
    outcomes: np.ndarray,
    *,
    estimate: SmoothECE | None,
    n_blocks: int,
    n_boot: int,
    n_null: int,
    level: float,
    exact_budget: int,
    seed: int | None,
    stream: str,
    clustering: Clustering | None = None,
) -> dict:
    """:func:`calib_core.metrics.classification_smooth.smooth_inference` of (``values``, ``outcomes``) on its own random
    stream (``SeedSequence`` of ``seed`` and ``stream``) with its own random row blocks
    (:func:`calib_core.base.significance.block_ids`, ``n_blocks``): its test, null and interval depend on the rows and
    these options only — not on the confidence bins or the other statistics' draws — so a change of the bins reuses
    them.  With a ``seed``, the last :data:`SMOOTH_MEMO_ENTRIES` results are kept, keyed on a digest of the rows
    and the options (every hit is a private copy); ``seed=None`` draws afresh every time.

    Parameters
    ----------
    values : ndarray of shape (N,)
        Predicted probabilities f_i of the event (top-label confidence, or P(y = 1)), in [0, 1].
    outcomes : ndarray of shape (N,)
        Observed events y_i (0/1).
    estimate : SmoothECE or None
        The point estimate if the caller has it (its value and bandwidth are reused), else computed.
    n_blocks : int
        Random row blocks of the bootstrap.
    n_boot : int
        Bootstrap replicates.
    n_null : int
        Null draws.
    level : float
        Two-sided level of the interval.
    exact_budget : int
        Largest N · ``n_null`` drawn row by row.
    seed : int or None
        Seeds the stream (with ``stream``); None: fresh entropy, no memo.
    stream : str
        Names the stream (e.g. ``"smooth_ece"``, ``"smooth_ece_positive"``).
    clustering : Clustering, optional
        Dependent rows: the bootstrap resamples whole clusters (or moving blocks,
        :func:`~calib_core.base.clustering.cluster_design`) and the test is the centred cluster bootstrap of the
        smoothed residual curve (``centred_test``); None: random row blocks and the null draws' test.

    Returns
    -------
    dict
        :func:`~calib_core.metrics.classification_smooth.smooth_inference`'s result: ``value``, ``p_value``,
        ``p_mc_se``, ``p_method``, ``null``, ``ci_low``, ``ci_high``, ``interval``, ``note`` ….

    References
    ----------
    .. [1] Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
       *arXiv:2309.12236*.
    """
    f = np.asarray(values, dtype=float)
    y = np.asarray(outcomes)
    key = None
    if seed is not None:
        est = (float(estimate.value), float(estimate.sigma)) if estimate is not None else None
        key = (_digest(f, y), est, int(n_blocks), int(n_boot), int(n_null), float(level), int(exact_budget),
               int(seed), stream)
        if clustering is not None:
            key += (_digest(clustering.codes), clustering.block_length)
        with _SMOOTH_LOCK:
            if key in _SMOOTH_MEMO:
                _SMOOTH_MEMO.move_to_end(key)
                return copy.deepcopy(_SMOOTH_MEMO[key])
    entropy = [0 if seed is None else int(seed), 0x5E0, *stream.encode()]
    rng = np.random.default_rng(np.random.SeedSequence(entropy) if seed is not None else None)
    if clustering is not None:
        design = cluster_design(clustering, n_boot, (0 if seed is None else int(seed), 0x5E0C))
        out = smooth_inference(f, y, estimate=estimate, block=design.ids, n_blocks=design.n_blocks,
                               boot_weights=design.weights, n_boot=n_boot, n_null=n_null, level=level,
                               exact_budget=exact_budget, rng=rng, centred_test=True)
    else:
        block, _ = block_ids(f.shape[0], n_blocks, rng)
        out = smooth_inference(f, y, estimate=estimate, block=block, n_boot=n_boot, n_null=n_null, level=level,
                               exact_budget=exact_budget, rng=rng)
    if key is not None:
        with _SMOOTH_LOCK:
            _SMOOTH_MEMO[key] = copy.deepcopy(out)
            while len(_SMOOTH_MEMO) > SMOOTH_MEMO_ENTRIES:
                _SMOOTH_MEMO.popitem(last=False)
    return out
