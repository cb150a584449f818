"""Task-neutral machinery of the mergeable summaries (``calib_core.scale.summary``): exact sums, row-id hashing, the
:class:`SummarySpec` and the :class:`Summary` container with its merge and its versioned, pickle-free file format.

The exact sums, the row-id hashing and the equal-count edges are in :mod:`calib_core.base.mergeable_exact`
(re-exported here).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .mergeable_exact import (
    EXACT_UNIT_BITS,
    bin_by_edges,
    equal_count_edges,
    equal_count_positions,
    exact_bin_sums,
    exact_bin_sums_columns,
    exact_float,
    exact_fraction,
    exact_value,
    hash_block,
    hash_uniform,
    ints_to_bytes,
    splitmix64,
)
from .mergeable_read import read_summary_archive
from .mergeable_validate import FORMAT, FORMAT_VERSION, SPEC_FIELDS, part_label
from .predictions import ALL, InputError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "EXACT_UNIT_BITS",
    "exact_bin_sums",
    "exact_bin_sums_columns",
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

# FORMAT and FORMAT_VERSION (the file format's name and version; readers refuse other versions) live with the
# schema of the file in calib_core.base.mergeable_validate.


# ---------------------------------------------------------------------------------------------------------------
# exact sums
# ---------------------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------------------
# row-id hashing
# ---------------------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------------------
# equal-count edges (the first pass)
# ---------------------------------------------------------------------------------------------------------------


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

    Attributes
    ----------
    task, layout : str
        Task and layout, as above.
    levels, qce_levels, pit_edges, curve_edges, z_edges, coverages, quantile_levels : tuple
        Level grids and histogram edges, as above.
    pit_bins, n_bins, n_classes, n_blocks, seed : int
        Bins, classes, bootstrap blocks and the hash seed.
    sigma_edges, conf_edges : tuple
        Per (model, group) σ-bin and confidence-bin edges.
    strategy, closed : str
        The confidence binning.
    kde_floor : float
        Smallest kernel bandwidth of an ensemble's NLL.
    edges_exact : bool
        Whether the edges are the data's own.
    version : int
        The file format version.
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


def merge_parts(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray], where: str = "") -> dict[str, np.ndarray]:
    """Merge two per-(model, group) parts name by name.

    Names ending ``_min`` / ``_max`` take the element-wise minimum / maximum (NaN = empty), every other array is
    added (int64 counts and exact sums exactly, float64 approximate sums in float).  Both parts must hold the same
    arrays, except the non-finite counters ``nf:*``, each of the same shape and kind in both (``ValueError``
    naming the array otherwise, never a broadcast).

    Parameters
    ----------
    a, b : mapping of str to ndarray
        The parts.
    where : str, default ""
        The part, for messages (e.g. ``" (model 'm', group 'g')"``).

    Returns
    -------
    dict of str to ndarray
        The merged part.
    """
    odd = {k for k in set(a) ^ set(b) if not k.startswith("nf:")}
    if odd:  # only the non-finite counters are optional (absent while a chunk has none)
        raise ValueError(f"cannot merge summaries{where}: arrays {sorted(odd)} are in one part only (different "
                         "versions or layouts)")
    for name in set(a) & set(b):
        x, y = a[name], b[name]
        if x.shape != y.shape or (x.dtype == object) != (y.dtype == object) or (x.dtype.kind in "iu") != (
                y.dtype.kind in "iu"):
            raise ValueError(f"cannot merge summaries{where}: {name!r} is {x.dtype} of shape {x.shape} in one and "
                             f"{y.dtype} of shape {y.shape} in the other (different bins, classes or levels)")
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
            out[name] = a[name] + b[name]
    return out


@dataclass
class Summary:
    """A mergeable calibration summary: per (model, group) a dict of named arrays (counts, exact sums, bin
    sums; see :mod:`calib_core.scale.regression` and :mod:`calib_core.scale.classification` for the names),
    the :class:`SummarySpec` it was built with, the number of rows, the dropped rows per reason (count and the
    first row ids) and free-form notes.

    Attributes
    ----------
    spec : SummarySpec
        What the summary depends on besides its rows.
    parts : dict of (str, str) to dict of str to ndarray
        Per (model, group) the named arrays.
    n_rows : int
        Rows summarised.
    dropped : dict of str to dict
        Per reason the count and the first row ids.
    source : str
        Where the rows came from.
    models : tuple
        The models.
    """

    spec: SummarySpec
    parts: dict[tuple[str, str], dict[str, np.ndarray]] = field(default_factory=dict)
    n_rows: int = 0
    dropped: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "<summary>"
    models: tuple = ()

    def merge(self, other: Summary) -> Summary:
        """The summary of both chunks (associative and commutative; see :func:`calib_core.scale.summary.merge`)."""
        if self.spec != other.spec:
            diff = _spec_differences(asdict(self.spec), asdict(other.spec))
            raise InputError(f"cannot merge summaries built with different specs ({'; '.join(diff)}): the bin edges, "
                             "levels, blocks and seed of both must be the same", source=_pair(self, other),
                             hint="summarise every chunk with the same spec (spec_for / spec_from_sample once, "
                                  "then summarize(chunk, spec=spec))")
        parts = {}
        for key in sorted(set(self.parts) | set(other.parts)):
            if key in self.parts and key in other.parts:
                parts[key] = merge_parts(self.parts[key], other.parts[key], f" ({part_label(*key)})")
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
                    data = ints_to_bytes(arr) if exact else np.ascontiguousarray(arr)
                    fname = f"p{i}/{name}.npy"
                    with zf.open(fname, "w") as fh:
                        np.save(fh, data, allow_pickle=False)
                    entry["arrays"].append({"name": name, "file": fname, "exact": exact})
                header["parts"].append(entry)
            zf.writestr("header.json", json.dumps(header, default=_json_default))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, *, max_bytes: int = 2**31, source: str = "<summary>",
                   limit_hint: str | None = None) -> Summary:
        """Read :meth:`to_bytes` output, checked against the file's schema before anything in it is used
        (:mod:`calib_core.base.mergeable_read`, :mod:`calib_core.base.mergeable_validate`): sizes bounded before
        decoding (``max_bytes``: what the archive may expand to), every header field and array in its bounds, the
        counts consistent with ``n_rows``; anything else raises ``InputError`` naming ``source`` and the part (a
        wrong format or version names both; ``limit_hint`` says how to raise ``max_bytes``).  Never unpickles."""
        content = read_summary_archive(data, source=source, max_bytes=max_bytes, limit_hint=limit_hint)
        return cls(SummarySpec(**content.spec), content.parts, content.n_rows, content.dropped, content.source,
                   content.models)


def _spec_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The spec fields two summaries differ in, as short texts (``"n_bins 15 vs 10"``), for a merge's message."""
    out = []
    for f in SPEC_FIELDS:
        x, y = a.get(f), b.get(f)
        if x != y:
            scalar = not isinstance(x, tuple | list) and not isinstance(y, tuple | list)
            out.append(f"{f} {x!r:.40} vs {y!r:.40}" if scalar else f"{f} (different edges or levels)")
    return out


def _pair(a: Summary, b: Summary) -> str:
    return a.source if a.source == b.source else f"{a.source} + {b.source}"


def _json_default(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"not JSON-serialisable: {type(v).__name__}")


def as_ids(row_ids: Iterable[int] | np.ndarray | None, n: int) -> np.ndarray:
    """Row ids as int64 (``None``: 0..n−1).

    Parameters
    ----------
    row_ids : iterable of int, ndarray or None
        The ids.
    n : int
        Number of rows.

    Returns
    -------
    ndarray of int64
        The ids.
    """
    return np.arange(n, dtype=np.int64) if row_ids is None else np.asarray(row_ids, dtype=np.int64)
