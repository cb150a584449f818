"""Slice statistics from mergeable summaries: the slice explorer over data sets too large for memory.

:func:`calib_core.slices.regression.slice_ranking` (and its classification mirror) needs the rows.  Every statistic
it ranks a slice by is, however, a function of a few sums over the slice's rows (``ranking_from_sums``), and a slice
is one level of a slice column or the intersection of two levels of two columns.  So a chunk of rows is reduced to a
:class:`SliceSummary` — per slice column and per pair of columns, for every (level[, level]) cell, the sums those
statistics need — and summaries of chunks are added (:meth:`SliceSummary.merge`: associative and commutative).
:func:`~calib_core.scale.slices_ranking.summary_ranking` then applies the explorer's minimum size and pair rules to
the merged cells and calls the same ``ranking_from_sums``: on the same bins, the ranking from a summary is the
in-memory ranking (``tests/scale/test_slices.py``, with random chunk boundaries).

Sums kept per cell (V values):

* regression — per σ-bin b of ENCE (fixed edges, :attr:`SliceSpec.sigma_edges`): rows, Σz, Σz², Σσ², Σ(σz)², Σσ⁴ (6
  per bin), and rows per (PIT decile, PIT ∈ [0.05, 0.95]) (20): the PIT-decile counts, the coverage counter, n, Σz,
  Σz² and ENCE's per-bin sums of :mod:`calib_core.slices.regression`; z = Φ⁻¹(PIT).
* classification — per equal-width probability bin (10): rows, Σf, Σy, Σf(1 − f).

Counts are integers held exactly in float64 (below 2⁵³); each float sum is a pair (hi, lo) merged by Knuth's TwoSum,
so merging adds no rounding error of its own (a merged sum is the exact sum of the chunks' float sums to about 2⁻¹⁰⁶
relative); a chunk's own sums are NumPy float sums (error ≤ (n_chunk − 1)·ε·Σ|x|), the ranking's statistics therefore
agree with the in-memory ones to ~1e-12 relative, and the integer-based tests (PIT deciles, coverage) exactly.

Bins.  Numeric slice columns are cut at the quantiles k/n_bins of the column and ENCE's σ-bins at the quintiles of σ,
all over every row; categorical columns need their full list of levels.
:func:`~calib_core.scale.slices_spec.slice_spec` takes them from rows in memory (``np.quantile``: the in-memory
explorer's own edges).  Over distributed data a first pass builds a
:class:`~calib_core.scale.slices_sketch.SliceSketch` per chunk (merged the same way): the distinct levels of every
text column, whether a numeric column has more than 12 distinct values (the in-memory rule for numeric vs
categorical), and a Bernoulli sample of the rows chosen by a hash of the row id (so independent of the chunking) at
rate m/N; the edges are the sample's quantiles.  Rank error (Dvoretzky–Kiefer–Wolfowitz, Massart 1990): with m
sampled rows, every edge of a column lies within ε = √(ln(2/δ)/(2m)) of its target rank fraction, simultaneously,
with probability 1 − δ — ε = 0.0036 at m = 200,000, δ = 0.01 (:attr:`SliceSpec.rank_error`); with N ≤ m every row is
taken and the edges are exact.

Cost per chunk of n rows and F slice columns: the columns are grouped into blocks whose codes have at most
:data:`BLOCK_CELLS` combinations; one ``np.bincount`` per sum and per *pair of blocks* (not per pair of columns: 7
blocks of 3 columns instead of 190 column pairs for F = 20) gives the joint table of two blocks, and one-hot
projections (matrix products on the small tables) give every column pair inside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..base.mergeable import hash_uniform
from ..base.predictions import PredictionSet
from ..base.regression import SampleSet
from ..slices import classification as cls_slices
from ..slices import regression as reg_slices
from .regression import ensemble_pit
from .slices_spec import (
    MISSING,
    PIT_BINS,
    PROB_BINS,
    SAMPLE_ROWS,
    SliceSpec,
    column_codes,
    column_values,
    compact_codes,
    describe_spec,
    slice_spec,
)

__all__ = ["SliceSpec", "SliceSummary", "slice_spec", "summarize_slices", "column_codes", "merge_all",
           "describe_spec", "BLOCK_CELLS", "SAMPLE_ROWS", "MISSING"]

BLOCK_CELLS = 128
"""Largest number of code combinations of a block of slice columns."""
_EPS = 1e-12


def _row_values(pset: PredictionSet, task: str, *, target: str, seed: int,
                row_ids: np.ndarray | None) -> tuple[np.ndarray, ...]:
    if task == "regression":
        u, sigma = reg_slices.slice_row_statistics(pset, seed=seed)
        if isinstance(pset.dist, SampleSet) and row_ids is not None:  # V from the row id: chunk-independent
            u = ensemble_pit(np.asarray(pset.y, float), pset.dist, row_ids, seed)
        elif getattr(pset.dist, "is_discrete", False) and row_ids is not None:
            hi = np.asarray(pset.dist.cdf(pset.y), float)
            lo = np.asarray(pset.dist.cdf_left(pset.y), float)
            u = lo + hash_uniform(row_ids, seed, 2) * (hi - lo)
        return u, sigma
    return cls_slices.slice_events(pset, target=target)


# ---------------------------------------------------------------------------------------------------------------
# the summary
# ---------------------------------------------------------------------------------------------------------------
def _two_sum(a_hi: np.ndarray, a_lo: np.ndarray, b_hi: np.ndarray, b_lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a_hi + b_hi
    bb = s - a_hi
    err = (a_hi - (s - bb)) + (b_hi - bb)
    return s, a_lo + b_lo + err


@dataclass
class SliceSummary:
    """Per-cell sums of a chunk or of merged chunks.

    Attributes
    ----------
    spec : SliceSpec
        The bins.
    n_rows : int
        Rows summarised.
    singles : list of ndarray of shape (radix_i, V)
        Sums per level of every column.
    pairs : dict of (int, int) to ndarray of shape (radix_i, radix_j, V)
        Sums per cell of every pair of columns i < j.
    singles_lo, pairs_lo : as ``singles``, ``pairs``
        Their compensation terms (the value is hi + lo).

    References
    ----------
    .. [1] Knuth, D. E. (1997). The Art of Computer Programming, Vol. 2: Seminumerical Algorithms, 3rd ed.,
       §4.2.2. Addison-Wesley.
    .. [2] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    """

    spec: SliceSpec
    n_rows: int
    singles: list[np.ndarray]
    pairs: dict[tuple[int, int], np.ndarray]
    singles_lo: list[np.ndarray]
    pairs_lo: dict[tuple[int, int], np.ndarray]

    def merge(self, other: SliceSummary) -> SliceSummary:
        """The summary of both chunks' rows.

        Cell-wise TwoSum: associative and commutative up to the ~2⁻¹⁰⁶ relative error of the compensated sum.

        Parameters
        ----------
        other : SliceSummary
            A summary with the same spec.

        Returns
        -------
        SliceSummary
            The merge.

        Raises
        ------
        ValueError
            If the specs' columns or levels differ.
        """
        if other.spec.columns != self.spec.columns or other.spec.levels != self.spec.levels:
            raise ValueError("slice summaries with different specs cannot be merged")
        singles, singles_lo = zip(*(_two_sum(a, al, b, bl) for a, al, b, bl in zip(
            self.singles, self.singles_lo, other.singles, other.singles_lo, strict=True))) if self.singles else ((), ())
        pairs, pairs_lo = {}, {}
        for k in self.pairs:
            pairs[k], pairs_lo[k] = _two_sum(self.pairs[k], self.pairs_lo[k], other.pairs[k], other.pairs_lo[k])
        return SliceSummary(self.spec, self.n_rows + other.n_rows, list(singles), pairs, list(singles_lo), pairs_lo)

    def single(self, i: int) -> np.ndarray:
        """Sums of column i's cells.

        Parameters
        ----------
        i : int
            A column index.

        Returns
        -------
        ndarray of shape (radix_i, V)
            hi + lo.
        """
        return self.singles[i] + self.singles_lo[i]

    def pair(self, i: int, j: int) -> np.ndarray:
        """Sums of the cells of the pair (i, j), either order.

        Parameters
        ----------
        i, j : int
            Two column indices.

        Returns
        -------
        ndarray of shape (radix_i, radix_j, V)
            hi + lo.
        """
        if i < j:
            return self.pairs[(i, j)] + self.pairs_lo[(i, j)]
        return np.swapaxes(self.pairs[(j, i)] + self.pairs_lo[(j, i)], 0, 1)


def merge_all(summaries: Sequence[SliceSummary]) -> SliceSummary:
    """Merge a sequence of slice summaries (pairwise, in order).

    Parameters
    ----------
    summaries : sequence of SliceSummary
        At least one summary, all with the same spec.

    Returns
    -------
    SliceSummary
        The summary of all their rows.

    References
    ----------
    .. [1] Knuth, D. E. (1997). The Art of Computer Programming, Vol. 2: Seminumerical Algorithms, 3rd ed.,
       §4.2.2. Addison-Wesley.
    """
    out = summaries[0]
    for s in summaries[1:]:
        out = out.merge(s)
    return out


def _blocks(radices: Sequence[int]) -> list[list[int]]:
    out: list[list[int]] = []
    prod = BLOCK_CELLS + 1
    for i, r in enumerate(radices):
        if out and prod * r <= BLOCK_CELLS:
            out[-1].append(i)
            prod *= r
        else:
            out.append([i])
            prod = r
    return out


def _inner(u_or_f: np.ndarray, other: np.ndarray, spec: SliceSpec) -> tuple[list, np.ndarray, int, np.ndarray, int]:
    """Per row: (weights of the sums keyed by the inner bin, inner bin, its count, second key's state, its count)."""
    if spec.task == "regression":
        u, sigma = u_or_f, other
        z = special.ndtri(np.clip(u, _EPS, 1.0 - _EPS))
        covered = ((u >= 0.05) & (u <= 0.95)).astype(np.int64)
        dec = np.minimum((u * PIT_BINS).astype(np.int64), PIT_BINS - 1)
        finite = np.isfinite(sigma) & (sigma > 0)
        s_bin = np.searchsorted(np.asarray(spec.sigma_edges, float), sigma, side="right")
        s2 = np.where(finite, sigma, 0.0) ** 2
        weights = [None, z, z * z, s2, s2 * z * z, s2 * s2]
        return weights, s_bin, len(spec.sigma_edges) + 1, dec * 2 + covered, 2 * PIT_BINS
    f, y = u_or_f, other
    b = np.minimum((f * PROB_BINS).astype(np.int64), PROB_BINS - 1)
    return [None, f, y, f * (1.0 - f)], b, PROB_BINS, np.empty(0, np.int64), 0


def _cell_sums(ca: np.ndarray, scale: int, k_inner: np.ndarray, k_state: np.ndarray | None, n_cells: int,
               weights: list, n_inner: int, n_state: int, buf: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out`` (n_cells, V) ← per cell and inner bin the sums of ``weights`` (None: rows), then per cell the rows
    per state, by one ``np.bincount`` per sum.  The keys are ca·scale·n_inner + ``k_inner`` and
    ca·scale·n_state + ``k_state``, with the second block's part (cb·n_inner + inner bin, cb·n_state + state)
    precomputed once per block, built in the preallocated int64 ``buf``."""
    size = n_cells * n_inner
    W = len(weights)
    view = out[:, :n_inner * W].reshape(n_cells, n_inner, W)
    np.multiply(ca, scale * n_inner, out=buf, dtype=np.int64)
    buf += k_inner
    for j, w in enumerate(weights):
        view[:, :, j] = np.bincount(buf, weights=w, minlength=size).reshape(n_cells, n_inner)
    if n_state:
        np.multiply(ca, scale * n_state, out=buf, dtype=np.int64)
        buf += k_state
        out[:, n_inner * W:] = np.bincount(buf, minlength=n_cells * n_state).reshape(n_cells, n_state)
    return out


def _projector(radices: Sequence[int]) -> np.ndarray:
    """(Π r, Σ r) one-hot: block code → the positions of its columns' codes."""
    n_codes = int(np.prod(radices))
    codes = np.unravel_index(np.arange(n_codes), tuple(radices))
    out = np.zeros((n_codes, int(sum(radices))))
    off = 0
    for c, r in zip(codes, radices, strict=True):
        out[np.arange(n_codes), off + c] = 1.0
        off += r
    return out


def summarize_slices(pset: PredictionSet, spec: SliceSpec, *, row_ids: np.ndarray | None = None) -> SliceSummary:
    """The :class:`SliceSummary` of a chunk of rows.

    Cost: O(n) per sum and per pair of column blocks (module docstring).

    Parameters
    ----------
    pset : PredictionSet
        The chunk.
    spec : SliceSpec
        The bins every chunk shares.
    row_ids : ndarray of shape (n,) of int64, optional
        The rows' global ids (default ``pset.row_number``): they randomise the PIT of ensembles and distributions
        with atoms by a hash of the id, so a row gives the same numbers whichever chunk it is in.

    Returns
    -------
    SliceSummary
        Per cell the sums of the module docstring.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Czado, C., Gneiting, T., & Held, L. (2009). Predictive model assessment for count data. Biometrics,
       65(4), 1254–1261.
    """
    n = pset.n_rows
    ids = np.asarray(pset.row_number if row_ids is None else row_ids, dtype=np.int64)
    a, b = _row_values(pset, spec.task, target=spec.target, seed=spec.seed, row_ids=ids)
    weights, inner, n_inner, state, n_state = _inner(np.asarray(a, float), np.asarray(b, float), spec)
    F = len(spec.columns)
    radices = [spec.radix(i) for i in range(F)]
    V = spec.n_values
    codes = [compact_codes(column_values(pset, name), spec, i) for i, name in enumerate(spec.columns)]
    singles = [np.zeros((r, V)) for r in radices]
    pairs = {(i, j): np.zeros((radices[i], radices[j], V)) for i in range(F) for j in range(i + 1, F)}
    blocks = _blocks(radices)
    bcode, bsize, proj, offs = [], [], [], []
    for blk in blocks:
        r = [radices[i] for i in blk]
        code = codes[blk[0]]  # small integers: the keys are built in int64 buffers
        if len(blk) > 1:
            code = code.astype(np.int32 if int(np.prod(r)) < 2 ** 31 else np.int64)
        for i in blk[1:]:
            code *= radices[i]
            code += codes[i]
        bcode.append(code)
        bsize.append(int(np.prod(r)))
        proj.append(_projector(r))
        offs.append(np.concatenate([[0], np.cumsum(r)]))

    def within(bi: int, table: np.ndarray) -> None:  # table (cells of block bi, V): its singles and inner pairs
        P = proj[bi]
        blk = blocks[bi]
        for x, i in enumerate(blk):
            Pi = P[:, offs[bi][x]:offs[bi][x + 1]]
            singles[i] += Pi.T @ table
            for y in range(x + 1, len(blk)):
                Pj = P[:, offs[bi][y]:offs[bi][y + 1]]
                both = (Pi[:, :, None] * Pj[:, None, :]).reshape(P.shape[0], -1)  # (cells, p·q) one-hot
                pairs[(i, blk[y])] += (both.T @ table).reshape(Pi.shape[1], Pj.shape[1], -1)

    # one key buffer and one table reused by every pair of blocks (fewer page faults than fresh arrays per pair)
    buf = np.empty(n, dtype=np.int64)
    most = max(bsize) ** 2 if len(blocks) > 1 else bsize[0]
    store = np.empty(most * V)

    k_bufs = np.empty(n, dtype=np.int64), np.empty(n if n_state else 0, dtype=np.int64)

    def second(bi: int) -> tuple[np.ndarray, np.ndarray | None]:  # a block's part of the keys
        k_inner = np.multiply(bcode[bi], n_inner, out=k_bufs[0], dtype=np.int64)
        k_inner += inner
        if not n_state:
            return k_inner, None
        k_state = np.multiply(bcode[bi], n_state, out=k_bufs[1], dtype=np.int64)
        k_state += state
        return k_inner, k_state

    if len(blocks) == 1:
        within(0, _cell_sums(np.zeros(1, dtype=np.int64), 0, *second(0), bsize[0], weights, n_inner, n_state, buf,
                             store[:bsize[0] * V].reshape(bsize[0], V)))
    done = set()
    for bb in range(1, len(blocks)):
        k_inner, k_state = second(bb)
        for ba in range(bb):
            ra, rb = bsize[ba], bsize[bb]
            table = _cell_sums(bcode[ba], rb, k_inner, k_state, ra * rb, weights, n_inner, n_state, buf,
                               store[:ra * rb * V].reshape(ra * rb, V))
            t3 = table.reshape(ra, rb, V)
            for bi, marg in ((ba, t3.sum(axis=1)), (bb, t3.sum(axis=0))):
                if bi not in done:
                    within(bi, marg)
                    done.add(bi)
            # cross pairs: project block a's codes onto its columns, then block b's
            U = (proj[ba].T @ table.reshape(ra, rb * V)).reshape(-1, rb, V)  # (Σr_a, rb, V)
            W = np.tensordot(U, proj[bb], axes=([1], [0])).transpose(0, 2, 1)  # (Σr_a, Σr_b, V)
            for x, i in enumerate(blocks[ba]):
                for y, j in enumerate(blocks[bb]):
                    pairs[(i, j)] += W[offs[ba][x]:offs[ba][x + 1], offs[bb][y]:offs[bb][y + 1]]
    return SliceSummary(spec, n, singles, pairs, [np.zeros_like(s) for s in singles],
                        {k: np.zeros_like(v) for k, v in pairs.items()})
