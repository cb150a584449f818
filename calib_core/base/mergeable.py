"""Task-neutral machinery of the mergeable summaries (``calib_core.scale.summary``): exact sums, row-id hashing, the
:class:`SummarySpec` and the :class:`Summary` container with its merge and its versioned, pickle-free file format.

Exact sums
----------
A float sum depends on the order of its additions, so a sum computed chunk by chunk and merged would differ in its
last bits from the same sum computed another way.  The summaries avoid that altogether: every float sum they keep
(Σσ², Σε², ΣNLL, … per bin) is held **exactly**, as a Python integer in units of 2⁻¹¹³⁸ (every float64 is an integer
multiple of 2⁻¹⁰⁷⁴; the 64 spare bits leave room for the split below).  Adding two exact sums is integer addition,
associative and commutative, so a merged summary is bit for bit the same whatever the chunking and the merge order.
The value is rounded to float64 once, when a metric is computed (correctly rounded: ``Fraction → float``), which
is more accurate than any float summation (Demmel & Hida 2004; Shewchuk 1997; ``math.fsum`` rounds the same way).

Vectorised accumulation (:func:`exact_bin_sums`): each value x = m·2ᵉ (``np.frexp``, ½ ≤ |m| < 1) is split into
t = m·2²⁶ = t_hi + t_lo with t_hi = trunc(t), an integer with |t_hi| < 2²⁶, and t_lo = t − t_hi, a multiple of
2⁻²⁷ with |t_lo| < 1 (both exact).  Rows are grouped by (cell, e); within a group a float ``np.bincount`` of t_hi
adds integers below 2²⁶ and of t_lo multiples of 2⁻²⁷ below 1, so every partial sum is exact as long as a group
has fewer than 2²⁶ rows (blocks of 2²⁵ rows are accumulated separately).  (In the code the halves are taken from
the IEEE bits: hi = x with its lowest 27 significand bits cleared, lo = x − hi, grouped by the biased exponent.)
Each group total (Σt_hi + Σt_lo)·2^(e−26) then becomes an integer and is added to its cell.  Non-finite values
are not summed: they are counted (+inf, −inf, NaN) and a sum with any of them is ±inf or NaN, as the float sum
would be.

Row-id hashing
--------------
Everything random in a summary is a function of the row id, never of the chunk: the bootstrap block of a row is
``splitmix64(row_id ⊕ seed) mod G`` and the randomisation V of an ensemble's rank PIT is a second hash of the same
id (Steele, Lea & Flood 2014, SplitMix64).  So a row contributes the same numbers whichever chunk it is in.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .predictions import ALL

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "EXACT_UNIT_BITS",
    "exact_bin_sums",
    "exact_value",
    "exact_float",
    "exact_fraction",
    "splitmix64",
    "hash_uniform",
    "hash_block",
    "equal_count_positions",
    "equal_count_edges",
    "bin_by_edges",
    "SummarySpec",
    "Summary",
    "merge_parts",
    "as_ids",
]

#: The file format's name and version (``Summary.to_bytes``); readers refuse other versions.  Version 2: the
#: all-rows group key is ``calib_core.base.predictions.ALL`` (" (all)"), no longer "(all)", which a group of the file
#: could be named (version-1 files cannot tell the two apart).
FORMAT = "calib-lab-summary"
FORMAT_VERSION = 2
#: Exact sums are integers in units of 2**-EXACT_UNIT_BITS.
EXACT_UNIT_BITS = 1138
_BLOCK_ROWS = 1 << 25
_HI_MASK = ~((1 << 27) - 1) & 0xFFFFFFFFFFFFFFFF  # clears the lowest 27 significand bits
_WIDTH_BYTES = 296  # two's-complement width of a serialised exact sum (2,368 bits ≥ 1138 + 1024 + 64 + sign)


# ---------------------------------------------------------------------------------------------------------------
# exact sums
# ---------------------------------------------------------------------------------------------------------------
def exact_bin_sums(index: np.ndarray, n_cells: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact per-cell sums of ``values`` (cell of row i = ``index[i]`` ∈ 0..n_cells−1).

    Returns ``(sums, nonfinite)``: ``sums`` an object array of Python ints (the exact sums in units of
    2⁻¹¹³⁸, see the module docstring) and ``nonfinite`` an (n_cells, 3) int64 array counting +inf, −inf and NaN
    values, which are left out of the sums.  O(N) NumPy passes plus O(cells × exponents) Python additions.
    """
    index = np.asarray(index, dtype=np.int64)
    x = np.asarray(values, dtype=np.float64)
    sums = np.array([0] * n_cells, dtype=object)
    nonfinite = np.zeros((n_cells, 3), dtype=np.int64)
    finite = np.isfinite(x)
    if not finite.all():
        for j, mask in enumerate((x == np.inf, x == -np.inf, np.isnan(x))):
            if mask.any():
                nonfinite[:, j] = np.bincount(index[mask], minlength=n_cells)
        index, x = index[finite], x[finite]
    wide = n_cells * 2048 > 1 << 18  # many cells: group by the exponents present only
    for start in range(0, x.shape[0], _BLOCK_ROWS):
        _add_block(sums, index[start:start + _BLOCK_ROWS], n_cells, x[start:start + _BLOCK_ROWS], wide)
    return sums, nonfinite


def _add_block(sums: np.ndarray, index: np.ndarray, n_cells: int, x: np.ndarray, wide: bool) -> None:
    if x.shape[0] == 0:
        return
    bits = x.view(np.uint64)
    # biased exponent E: a group of equal E shares the grid of its halves (E = 0: zero and subnormals)
    e = bits >> np.uint64(52)
    e &= np.uint64(0x7FF)
    e_min, span = 0, 2048
    if wide:
        e_min = int(e.min())
        span = int(e.max()) - e_min + 1
        e -= np.uint64(e_min)
    key = index * span
    key += e.view(np.int64)
    hi = (bits & np.uint64(_HI_MASK)).view(np.float64)  # the top 26 significand bits: a multiple of 2^(E−1048)
    lo = x - hi  # exact: a multiple of 2^(E−1075), |lo| < 2^(E−1048)
    size = n_cells * span
    s_hi = np.bincount(key, weights=hi, minlength=size)
    s_lo = np.bincount(key, weights=lo, minlength=size)
    for k in np.flatnonzero((s_hi != 0) | (s_lo != 0)).tolist():
        cell = k // span
        total = 0
        for v in (float(s_hi[k]), float(s_lo[k])):
            if v:
                num, den = v.as_integer_ratio()  # den = 2^j, j ≤ 1074 < EXACT_UNIT_BITS
                total += num << (EXACT_UNIT_BITS - den.bit_length() + 1)
        sums[cell] += total


def exact_value(sums: Any, nonfinite: np.ndarray | None = None) -> Fraction | float:
    """The exact value of one exact sum (a :class:`~fractions.Fraction`), or ±inf / NaN if non-finite values
    were counted (``nonfinite`` = its (+inf, −inf, NaN) counts)."""
    if nonfinite is not None:
        pos, neg, nan = (int(v) for v in np.asarray(nonfinite).reshape(-1)[:3])
        if nan or (pos and neg):
            return float("nan")
        if pos:
            return float("inf")
        if neg:
            return float("-inf")
    return Fraction(int(sums), 1 << EXACT_UNIT_BITS)


def exact_fraction(sums: Any) -> Fraction:
    """The exact value of a finite exact sum."""
    return Fraction(int(sums), 1 << EXACT_UNIT_BITS)


def exact_float(sums: np.ndarray, nonfinite: np.ndarray | None = None) -> np.ndarray:
    """Exact sums rounded once to float64 (correctly rounded), element-wise; ±inf / NaN where non-finite values
    were counted."""
    s = np.asarray(sums, dtype=object)
    out = np.array([float(exact_fraction(v)) for v in s.reshape(-1)], dtype=float).reshape(s.shape)
    if nonfinite is not None:
        nf = np.asarray(nonfinite).reshape(s.shape + (3,))
        out = np.where(nf[..., 0] > 0, np.inf, out)
        out = np.where(nf[..., 1] > 0, np.where(nf[..., 0] > 0, np.nan, -np.inf), out)
        out = np.where(nf[..., 2] > 0, np.nan, out)
    return out


def _ints_to_bytes(a: np.ndarray) -> np.ndarray:
    flat = [int(v).to_bytes(_WIDTH_BYTES, "little", signed=True) for v in np.asarray(a, dtype=object).reshape(-1)]
    return np.frombuffer(b"".join(flat), dtype=np.uint8).reshape(np.shape(a) + (_WIDTH_BYTES,))


def _bytes_to_ints(b: np.ndarray) -> np.ndarray:
    shape = b.shape[:-1]
    raw = np.ascontiguousarray(b, dtype=np.uint8).reshape(-1, _WIDTH_BYTES)
    vals = [int.from_bytes(row.tobytes(), "little", signed=True) for row in raw]
    out = np.empty(len(vals), dtype=object)
    out[:] = vals
    return out.reshape(shape)


# ---------------------------------------------------------------------------------------------------------------
# row-id hashing
# ---------------------------------------------------------------------------------------------------------------
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(x: np.ndarray, stream: int = 0) -> np.ndarray:
    """SplitMix64 finaliser of ``x + (stream + 1)·γ`` (γ = 0x9E3779B97F4A7C15; Steele, Lea & Flood 2014): a
    uint64 per row id that depends on the id and the stream only (not on the chunk the row is in)."""
    z = np.asarray(x).astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z += _GOLDEN * np.uint64((stream + 1) & 0xFFFFFFFFFFFFFFFF)
        z ^= z >> np.uint64(30)
        z *= _M1
        z ^= z >> np.uint64(27)
        z *= _M2
        z ^= z >> np.uint64(31)
    return z


def hash_uniform(row_ids: np.ndarray, seed: int, stream: int) -> np.ndarray:
    """U(0, 1) numbers in [0, 1) from the row ids: the top 53 bits of ``splitmix64(id, stream)`` times 2⁻⁵³, with
    the seed mixed into the stream."""
    h = splitmix64(splitmix64(np.asarray(row_ids, dtype=np.int64).view(np.uint64), stream), int(seed) & 0xFFFFFFFF)
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def hash_block(row_ids: np.ndarray, seed: int, n_blocks: int) -> np.ndarray:
    """Bootstrap block of every row, ⌊U·G⌋ with U = :func:`hash_uniform` (stream 1): uniform on 0..G−1 and a
    function of the row id only."""
    return np.minimum((hash_uniform(row_ids, seed, 1) * n_blocks).astype(np.int64), n_blocks - 1)


# ---------------------------------------------------------------------------------------------------------------
# equal-count edges (the first pass)
# ---------------------------------------------------------------------------------------------------------------
def equal_count_positions(n: int, n_bins: int) -> np.ndarray:
    """0-based sorted positions ⌈kN/B⌉, k = 1..B−1, of the rows that open bins 1..B−1 of B equal-count bins
    (:func:`calib_core.base.binning.equal_count_bins`: row at sorted position i goes to bin ⌊iB/N⌋).  A first pass
    over distributed data needs exactly these order statistics (value and row id) of each (model, group)."""
    k = np.arange(1, n_bins, dtype=np.int64)
    return (k * n + n_bins - 1) // n_bins


def equal_count_edges(values: np.ndarray, row_ids: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Inner edges (value, row id) of B equal-count bins of ``values``, ties ordered by row id: the order
    statistics at :func:`equal_count_positions`.  :func:`bin_by_edges` with these edges reproduces
    ``binning.equal_count_bins`` exactly when the row ids increase with the row order (ties in a stable sort)."""
    values = np.asarray(values, dtype=float)
    ids = np.asarray(row_ids, dtype=np.int64)
    order = np.lexsort((ids, values))
    pos = equal_count_positions(values.shape[0], n_bins)
    pos = pos[pos < values.shape[0]]
    return values[order[pos]], ids[order[pos]]


def bin_by_edges(values: np.ndarray, row_ids: np.ndarray, edges: np.ndarray, edge_ids: np.ndarray | None) -> np.ndarray:
    """Bin of every row for inner edges (e_1 ≤ … ≤ e_{B−1}): the number of edges (e_k, id_k) ≤ (value, id) in
    lexicographic order (without ``edge_ids``: the number of e_k ≤ value).  Bins are [e_k, e_{k+1})."""
    edges = np.asarray(edges, dtype=float)
    if edge_ids is None:
        return np.searchsorted(edges, values, side="right").astype(np.int64)
    lo = np.searchsorted(edges, values, side="left")
    # a row is tied with an edge iff the first edge ≥ its value equals it (one binary search, not two)
    tied = np.flatnonzero(edges[np.minimum(lo, edges.size - 1)] == values) if edges.size else lo[:0]
    out = lo.astype(np.int64)
    if tied.size:
        eids = np.asarray(edge_ids, dtype=np.int64)
        v, ids = np.asarray(values)[tied], np.asarray(row_ids, dtype=np.int64)[tied]
        # among the tied edges (all equal to v), count those whose id ≤ the row's id: a (rows × edges) comparison
        le = (edges[None, :] == v[:, None]) & (eids[None, :] <= ids[:, None])
        out[tied] += le.sum(axis=1)
    return out


# ---------------------------------------------------------------------------------------------------------------
# the spec and the container
# ---------------------------------------------------------------------------------------------------------------
def _tuple(a: Any) -> tuple:
    return tuple(float(v) for v in np.asarray(a, dtype=float).reshape(-1))


@dataclass(frozen=True)
class SummarySpec:
    """Everything a chunk's summary depends on besides its rows: fixed bin edges, levels, the bootstrap blocks
    and the seed.  Two summaries merge only if their specs are equal.

    ``task`` "regression" or "classification"; ``layout`` the regression layout ("gaussian", "quantile",
    "sample") or the classification one ("probs", "top_label"); ``levels`` the quantile-curve grid (p_j);
    ``qce_levels`` the levels j/M of the l2 quantile calibration error; ``pit_edges`` the fine PIT histogram edges
    on [0, 1], a superset of both level grids (so the curve is exact at its levels); ``curve_edges`` the coarse
    per-σ-bin PIT histogram (the level grid); ``pit_bins`` the bins of the PIT-histogram diagram; ``z_edges`` the
    fine histogram of z = ε/σ (RS, Q-Q, z-histogram); ``coverages`` the central-interval levels; ``n_bins`` the
    Levi σ-bins (regression) or confidence bins (classification); ``sigma_edges`` per (model, group) the inner
    edges (σ value, row id) of the equal-count σ-bins — exact order statistics from a first pass
    (:func:`equal_count_edges`; ``(model, group)`` falls back to ``(model, ALL)`` then ``("*", "*")``);
    ``strategy``/``closed``/``conf_edges`` the confidence binning (``conf_edges`` per (model, group) for the
    equal-mass strategy: ``numpy.quantile`` edges of the confidences from a first pass); ``n_classes``;
    ``n_blocks`` the bootstrap blocks G (rows hashed to blocks by row id); ``seed`` the hash seed;
    ``kde_floor`` the smallest kernel bandwidth of an ensemble's NLL (``SampleSet`` floors h at 1% of the median
    bandwidth of the data it sees: a whole-data number, so a summary takes it from the first pass);
    ``quantile_levels`` the stated levels τ of a quantile set (its primary family tests the widest central interval
    they state, as ``regression.inference.primary_family``); ``edges_exact`` whether the σ / confidence edges
    are the data's own (a first pass over all rows) rather than a sample's (then ENCE and equal-mass ECE are
    those of the spec's fixed bins, not of the in-memory bins).
    """

    task: str
    layout: str = ""
    levels: tuple = ()
    qce_levels: tuple = ()
    pit_edges: tuple = ()
    curve_edges: tuple = ()
    pit_bins: int = 20
    z_edges: tuple = ()
    coverages: tuple = ()
    n_bins: int = 15
    sigma_edges: tuple = ()  # ((model, group, values tuple, ids tuple), ...)
    strategy: str = "uniform"
    closed: str = "right"
    conf_edges: tuple = ()  # ((model, group, edges tuple), ...)
    n_classes: int = 0
    n_blocks: int = 256
    seed: int = 0
    kde_floor: float = 0.0
    edges_exact: bool = True
    quantile_levels: tuple = ()
    version: int = FORMAT_VERSION

    def own_edges(self, model: str, group: str) -> bool:
        """Whether the spec has σ / confidence edges of this very (model, group) (not a fallback's)."""
        if self.task == "regression":
            return any((m, g) == (model, group) for m, g, _, _ in self.sigma_edges)
        return self.strategy == "uniform" or any((m, g) == (model, group) for m, g, _ in self.conf_edges)

    def sigma_edges_for(self, model: str, group: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Inner σ-bin edges (values, row ids) of a (model, group) (fallbacks in the class docstring)."""
        table = {(m, g): (v, i) for m, g, v, i in self.sigma_edges}
        for key in ((model, group), (model, ALL), ("*", "*")):
            if key in table:
                v, i = table[key]
                return np.asarray(v, dtype=float), np.asarray(i, dtype=np.int64)
        return None

    def conf_edges_for(self, model: str, group: str) -> np.ndarray | None:
        """Confidence-bin edges (M + 1) of a (model, group) for the equal-mass strategy."""
        table = {(m, g): e for m, g, e in self.conf_edges}
        for key in ((model, group), (model, ALL), ("*", "*")):
            if key in table:
                return np.asarray(table[key], dtype=float)
        return None

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (tuples become lists)."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SummarySpec:
        """Inverse of :meth:`to_json`."""
        def deep(v):
            return tuple(deep(x) for x in v) if isinstance(v, list) else v
        return cls(**{k: deep(v) for k, v in d.items()})


def merge_parts(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Merge two per-(model, group) parts name by name: names ending ``_min``/``_max`` take the element-wise
    minimum/maximum (NaN = empty), every other array is added (int64 counts and exact sums exactly, float64
    approximate sums in float).  Both parts must hold the same arrays, except the non-finite counters ``nf:*``."""
    odd = {k for k in set(a) ^ set(b) if not k.startswith("nf:")}
    if odd:  # only the non-finite counters are optional (absent while a chunk has none)
        raise ValueError(f"cannot merge summaries: arrays {sorted(odd)} are in one part only (different versions "
                         "or layouts)")
    out: dict[str, np.ndarray] = {}
    for name in sorted(set(a) | set(b)):
        if name not in a:
            out[name] = b[name]
        elif name not in b:
            out[name] = a[name]
        elif name.endswith("_min"):
            out[name] = np.fmin(a[name], b[name])
        elif name.endswith("_max"):
            out[name] = np.fmax(a[name], b[name])
        else:
            x, y = a[name], b[name]
            if x.shape != y.shape:
                raise ValueError(f"cannot merge summaries: {name!r} has shape {x.shape} and {y.shape}")
            out[name] = x + y
    return out


@dataclass
class Summary:
    """A mergeable calibration summary: per (model, group) a dict of named arrays (counts, exact sums, bin
    sums; see :mod:`calib_core.scale.regression` and :mod:`calib_core.scale.classification` for the names),
    the :class:`SummarySpec` it was built with, the number of rows, the dropped rows per reason (count and the
    first row ids) and free-form notes."""

    spec: SummarySpec
    parts: dict[tuple[str, str], dict[str, np.ndarray]] = field(default_factory=dict)
    n_rows: int = 0
    dropped: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "<summary>"
    models: tuple = ()

    def merge(self, other: Summary) -> Summary:
        """The summary of both chunks (associative and commutative; see :func:`calib_core.scale.summary.merge`)."""
        if self.spec != other.spec:
            raise ValueError("cannot merge summaries built with different specs (bin edges, levels, seed, …)")
        parts = {}
        for key in sorted(set(self.parts) | set(other.parts)):
            if key in self.parts and key in other.parts:
                parts[key] = merge_parts(self.parts[key], other.parts[key])
            else:
                parts[key] = dict(self.parts.get(key) or other.parts[key])
        dropped: dict[str, dict[str, Any]] = {}
        for reason in sorted(set(self.dropped) | set(other.dropped)):
            a = self.dropped.get(reason, {"count": 0, "first": []})
            b = other.dropped.get(reason, {"count": 0, "first": []})
            dropped[reason] = {"count": int(a["count"]) + int(b["count"]),
                               "first": sorted(set(a["first"]) | set(b["first"]))[:10]}
        models = tuple(sorted(set(self.models) | set(other.models)))
        source = self.source if self.source == other.source else "<merged>"
        return Summary(self.spec, parts, self.n_rows + other.n_rows, dropped, source, models)

    # -- file format ---------------------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The summary as a zip archive (no pickle): ``header.json`` — format name and version, the spec, n_rows,
        dropped rows, the (model, group) keys and each array's name, dtype and shape — and one ``.npy`` per
        array (``allow_pickle=False``).  Exact sums (Python ints) are stored as fixed-width little-endian two's
        complement bytes (296 bytes each)."""
        header: dict[str, Any] = {"format": FORMAT, "version": FORMAT_VERSION, "spec": self.spec.to_json(),
                                  "n_rows": int(self.n_rows), "dropped": self.dropped, "source": self.source,
                                  "models": list(self.models), "parts": []}
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for i, (key, arrays) in enumerate(sorted(self.parts.items())):
                entry = {"model": key[0], "group": key[1], "arrays": []}
                for name, arr in sorted(arrays.items()):
                    exact = arr.dtype == object
                    data = _ints_to_bytes(arr) if exact else np.ascontiguousarray(arr)
                    fname = f"p{i}/{name}.npy"
                    with zf.open(fname, "w") as fh:
                        np.save(fh, data, allow_pickle=False)
                    entry["arrays"].append({"name": name, "file": fname, "exact": exact})
                header["parts"].append(entry)
            zf.writestr("header.json", json.dumps(header, default=_json_default))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, *, max_bytes: int = 2**31) -> Summary:
        """Read :meth:`to_bytes` output; a wrong format or version raises ``ValueError`` naming both, and so does
        an archive that would expand to more than ``max_bytes`` (checked from its directory before anything is
        decompressed)."""
        try:
            zf = zipfile.ZipFile(io.BytesIO(data))
            expanded = sum(info.file_size for info in zf.infolist())
            if expanded > max_bytes:
                raise ValueError(f"it expands to {expanded:,} bytes, more than the limit of {max_bytes:,}")
            header = json.loads(zf.read("header.json"))
        except (zipfile.BadZipFile, KeyError, ValueError) as exc:
            raise ValueError(f"not a calibration summary file ({exc})") from None
        if header.get("format") != FORMAT or header.get("version") != FORMAT_VERSION:
            raise ValueError(f"summary format {header.get('format')!r} version {header.get('version')!r}; this "
                             f"version of the tool reads {FORMAT!r} version {FORMAT_VERSION}")
        parts: dict[tuple[str, str], dict[str, np.ndarray]] = {}
        for entry in header["parts"]:
            arrays = {}
            for a in entry["arrays"]:
                with zf.open(a["file"]) as fh:
                    arr = np.load(io.BytesIO(fh.read()), allow_pickle=False)
                arrays[a["name"]] = _bytes_to_ints(arr) if a["exact"] else arr
            parts[(entry["model"], entry["group"])] = arrays
        try:
            spec = SummarySpec.from_json(header["spec"])
        except TypeError as exc:
            raise ValueError(f"the summary's spec does not fit this version of the tool ({exc})") from None
        return cls(spec, parts, int(header["n_rows"]), header["dropped"], header.get("source", "<summary>"),
                   tuple(header.get("models", ())))


def _json_default(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"not JSON-serialisable: {type(v).__name__}")


def as_ids(row_ids: Iterable[int] | np.ndarray | None, n: int) -> np.ndarray:
    """Row ids as int64 (``None``: 0..n−1)."""
    return np.arange(n, dtype=np.int64) if row_ids is None else np.asarray(row_ids, dtype=np.int64)
