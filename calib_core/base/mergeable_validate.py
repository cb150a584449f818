"""The schema of a summary file (``Summary.to_bytes``): every field of ``header.json`` and every array with its
bounds, checked before anything in the file is used.

A summary file is a zip archive of ``header.json`` and one ``.npy`` per array.  It arrives as an upload or from a
server directory, so it is read as hostile: :mod:`calib_core.base.mergeable_read` bounds the archive before
decoding it and calls the checks here; whatever they refuse is an ``InputError`` naming the file and the part.

Header (``header.json``, at most :data:`MAX_HEADER_BYTES`; no other keys)

==========  ====================================================================================================
field       bound
==========  ====================================================================================================
format      ``"calib-lab-summary"``;  ``version``: :data:`FORMAT_VERSION`
n_rows      whole number, 1 … 2⁶²; equal to Σ over the models of Σ_bins ``n`` of the model's all-rows part
dropped     at most 100 reasons, each ``{"count": whole number ≥ 0, "first": ≤ 10 whole numbers}``
source      text of at most :data:`MAX_NAME` characters;  ``models``: distinct texts, the models of the parts
parts       1 … :data:`MAX_PARTS` distinct (model, group) parts, each with every model's all-rows part; each lists
            ≤ :data:`MAX_ARRAYS` arrays ``{"name", "file", "exact"}`` of the schema below
spec        the :class:`~calib_core.base.mergeable.SummarySpec` fields (:data:`SPEC_FIELDS`): task and layout
            from the lists below; ``n_bins``, ``pit_bins`` 1 … :data:`MAX_BINS`; ``n_blocks`` 1 …
            :data:`MAX_BLOCKS`; ``n_classes`` 0 … :data:`MAX_CLASSES` (≥ 2 for full probabilities); level grids
            strictly increasing in [0, 1] (coverages and stated levels in (0, 1)), ≤ :data:`MAX_GRID` points;
            z edges finite and strictly increasing; σ edges ≤ n_bins − 1 finite values with as many row ids;
            confidence edges n_bins + 1 values in [0, 1], non-decreasing; ``seed`` 0 … 2⁶⁴ − 1; ``kde_floor``
            finite ≥ 0
==========  ====================================================================================================

Arrays (G = ``n_blocks``, B = ``n_bins``, K = ``n_classes``, P / C / Z = points of ``pit_edges`` / ``curve_edges``
/ ``z_edges``, Q = stated levels, V = coverages; *count*: int64 ≥ 0, *float*: float64, *exact*: exact sums
stored as B × 296 bytes, |value| < 2²²³², :func:`~calib_core.base.mergeable_exact.exact_bin_sums`)

* regression with a distribution: counts ``n``, ``nz``, ``in:<c>`` (B); ``curve`` (B, C + 1); ``pit_le`` (P + 1),
  ``pit_eq`` (P); ``z_hist`` (Z + 1); floats ``sigma_min``, ``sigma_max`` (B), ``pit_sum`` (P + 1), ``z_sum``
  (Z + 1), ``z_min``, ``z_max`` (1), ``blk`` (G, 10 + 3V), ``blk_bins`` (G, B, 3); exact sums (B) of σ, σ², …;
  optional: ``stated_lo``, ``stated_hi`` (Q), ``stated_open:<c>``, ``stated_closed:<c>`` (1), the WIS sums, the
  scaled sums ``x:var_hi``, ``x:var_lo`` (B) of (σ·2^∓600)² (:mod:`calib_core.scale.regression_sharpness`);
* point predictions: ``n`` (1), exact ``x:sq_err``, ``x:abs_err`` (1), ``blk`` (G, 3), ``blk_bins`` (G, 1, 3);
* classification: counts ``n``, ``hit`` (B), exact ``x:conf``, ``x:conf_var`` (B), ``blk`` (G, 3 | 5),
  ``blk_bins`` (G, B, 3); full probabilities add ``cw_n``, ``cw_hit`` (K, B), ``x:cw_p`` (K, B), ``x:nll``,
  ``x:brier`` (1), and for K = 2 optionally ``pos_n``, ``pos_hit``, ``x:pos_p``, ``x:pos_var`` (B);
* ``nf:<name>``: the (+inf, −inf, NaN) counts of the exact sum ``x:<name>``, its shape + (3,).

Counts hold together within a part of N = Σ n rows: ``hit ≤ n``, ``nz ≤ n``, ``in:<c> ≤ n``, Σ ``pit_le`` = N,
``curve`` row sums = ``n``, Σ ``z_hist`` = Σ ``nz``, ``pit_eq ≤ pit_le``, ``cw_hit ≤ cw_n`` with every class's
Σ ``cw_n`` = Σ ``cw_hit`` = N, the block count columns whole, non-negative and adding up to N (per bin to ``n``);
a group's parts hold at most their model's rows, and every part holds the same arrays (``nf:`` aside).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .mergeable_exact import EXACT_UNIT_BITS
from .predictions import ALL, InputError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "LIMITS",
    "MAX_ARRAYS",
    "MAX_BINS",
    "MAX_BLOCKS",
    "MAX_CLASSES",
    "MAX_DIRECTORY_BYTES",
    "MAX_ENTRIES",
    "MAX_GRID",
    "MAX_HEADER_BYTES",
    "MAX_NAME",
    "MAX_PARTS",
    "SPEC_FIELDS",
    "EXACT_BYTES",
    "EXACT_MAX_BITS",
    "summary_error",
    "part_label",
    "check_header",
    "array_schema",
    "check_part_counts",
]

#: The file format's name and version; readers refuse other versions.  Version 2: the all-rows group key is
#: ``calib_core.base.predictions.ALL`` (" (all)"), no longer "(all)", which a group of the file could be named.
FORMAT = "calib-lab-summary"
FORMAT_VERSION = 2

MAX_BINS = 10_000  #: σ-bins / confidence bins / PIT-histogram bins of a summary (the spec's n_bins, pit_bins)
MAX_GRID = 100_000  #: points of a level grid or an edge list of the spec
MAX_CLASSES = 10_000  #: classes of a classification summary
MAX_BLOCKS = 65_536  #: bootstrap blocks G
MAX_PARTS = 4_096  #: (model, group) parts
MAX_ARRAYS = 256  #: arrays per part
MAX_ENTRIES = 262_144  #: members of the zip archive (read from its end record before the directory is parsed)
MAX_DIRECTORY_BYTES = 32 << 20  #: size of the zip archive's central directory
MAX_HEADER_BYTES = 16 << 20  #: size of header.json
MAX_NAME = 1_000  #: characters of a model, group, source or reason text
MAX_ROWS = 2**62  #: rows a summary may count
EXACT_BYTES = 296  #: bytes of one serialised exact sum (two's complement, little-endian)
EXACT_MAX_BITS = 2232  #: |exact sum| < 2**2232 (sums of ≤ 2**62 float64 values in units of 2**-1138 stay < 2**2225)

#: Every cap of the reader with its reason (one table, for the docs and the limits helper).
LIMITS: dict[str, tuple[int, str]] = {
    "bins": (MAX_BINS, "n_bins and pit_bins: every per-bin array is allocated from them"),
    "grid": (MAX_GRID, "points of a level grid or an edge list (the fine PIT grid of a summary has ~2,100)"),
    "classes": (MAX_CLASSES, "classes K: the class-wise arrays are K × n_bins"),
    "blocks": (MAX_BLOCKS, "bootstrap blocks G: the block arrays are G × n_bins × 3"),
    "parts": (MAX_PARTS, "(model, group) parts: each is read and kept in memory"),
    "arrays": (MAX_ARRAYS, "arrays per part (a summary writes about 50)"),
    "entries": (MAX_ENTRIES, "zip members, from the end record, before the directory is parsed"),
    "directory_bytes": (MAX_DIRECTORY_BYTES, "the zip directory, before it is parsed"),
    "header_bytes": (MAX_HEADER_BYTES, "header.json, before it is decoded"),
    "name": (MAX_NAME, "characters of a model, group, source or reason text"),
}

_HINT = ("write the summary file again with: python -m calib_core report DATA --save-summary FILE (a summary file "
         "is read as written, not edited by hand)")
_APP_HINT = ("open the summary file as --save-summary wrote it (python -m calib_core report DATA --save-summary "
             "FILE), or summarise the Parquet data set again under Large data on this page")
_LAYOUTS = {"regression": ("gaussian", "quantile", "sample", "point"), "classification": ("probs", "top_label")}
_WIS = ("wis", "wis_dispersion", "wis_overprediction", "wis_underprediction")  # metrics.regression_wis.WIS_PARTS
_REG_EXACT = ("sigma", "var", "var_err", "var2", "sq_err", "abs_err", "nll", "crps", "z", "z2", "z3", "z4", "zu",
              "phi")
_STATED = re.compile(r"stated_(open|closed):[0-9.e+-]{1,24}")


def summary_error(message: str, source: str, *, newer: bool = False, hint: str | None = None) -> InputError:
    """The ``InputError`` of a refused summary file: the message, the file and what to do (CLI and page words).

    Parameters
    ----------
    message : str
        What is wrong, naming the part.
    source : str
        The file.
    newer : bool, default False
        The file is of another format version (then: read it with the version that wrote it).
    hint : str, optional
        What to do instead of the default (e.g. how to raise a size limit), for the CLI and the pages alike.

    Returns
    -------
    InputError
        The error to raise.

    References
    ----------
    .. [1] Miller, B. P., Fredriksen, L., & So, B. (1990). An empirical study of the reliability of UNIX
       utilities. Communications of the ACM, 33(12), 32–44.
    """
    if hint is not None:
        return InputError(message, source=source, hint=hint)
    if newer:
        hint = (f"this version of the tool reads {FORMAT!r} version {FORMAT_VERSION}: a file written by another "
                "version of Calibration Lab is read by that version (or write the summary again with this one)")
        return InputError(message, source=source, hint=hint)
    return InputError(message, source=source, hint=_HINT, app_hint=_APP_HINT)


def part_label(model: str, group: str) -> str:
    """How a message names a (model, group) part: ``the part of model 'm', all rows`` or ``…, group 'g'``.

    Parameters
    ----------
    model, group : str
        The part's key (group :data:`~calib_core.base.predictions.ALL`: all rows of the model).

    Returns
    -------
    str
        The words.

    References
    ----------
    .. [1] Miller, B. P., Fredriksen, L., & So, B. (1990). An empirical study of the reliability of UNIX
       utilities. Communications of the ACM, 33(12), 32–44.
    """
    return f"the part of model {model[:80]!r}, " + ("all rows" if group == ALL else f"group {group[:80]!r}")


def _short(v: Any) -> str:
    if type(v) is int:
        return f"{v:,}"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "…"


def _whole(v: Any, field: str, lo: int, hi: int, source: str) -> int:
    if type(v) is not int or not lo <= v <= hi:
        raise summary_error(f"header.json: {field} is {_short(v)}; it must be a whole number from {lo:,} to {hi:,}",
                            source)
    return v


def _text(v: Any, field: str, source: str) -> str:
    if not isinstance(v, str) or len(v) > MAX_NAME:
        raise summary_error(f"header.json: {field} is {_short(v)}; it must be a text of at most {MAX_NAME:,} "
                            "characters", source)
    return v


def _list(v: Any, field: str, most: int, source: str) -> list:
    if not isinstance(v, list) or len(v) > most:
        raise summary_error(f"header.json: {field} must be a list of at most {most:,} items, not {_short(v)}", source)
    return v


def _floats(v: Any, field: str, source: str, *, lo: float = -np.inf, hi: float = np.inf, open_: bool = False,
            strict: bool = True, length: int | None = None, most: int = MAX_GRID) -> tuple:
    """A list of finite numbers within [lo, hi] ((lo, hi) if ``open_``), increasing (strictly if ``strict``)."""
    items = _list(v, field, most, source)
    if any(type(x) not in (int, float) or type(x) is int and abs(x) > 2**1000 for x in items):
        raise summary_error(f"header.json: {field} must hold numbers only", source)
    a = np.asarray(items, dtype=float)
    inside = (a > lo) & (a < hi) if open_ else (a >= lo) & (a <= hi)
    d = np.diff(a)
    if not np.isfinite(a).all() or not inside.all() or ((d <= 0) if strict else (d < 0)).any():
        how = "strictly increasing" if strict else "non-decreasing"
        where = f" within {'(' if open_ else '['}{lo:g}, {hi:g}{')' if open_ else ']'}" if np.isfinite(hi) else ""
        raise summary_error(f"header.json: {field} must be finite, {how}{where}", source)
    if length is not None and a.size != length:
        raise summary_error(f"header.json: {field} has {a.size:,} values; the spec's bins need {length:,}", source)
    return tuple(items)


def _choice(v: Any, field: str, allowed: Sequence[str], source: str) -> str:
    if v not in allowed or not isinstance(v, str):
        raise summary_error(f"header.json: {field} is {_short(v)}; this tool writes {', '.join(map(repr, allowed))}",
                            source)
    return v


#: The spec's fields (``SummarySpec``) and their defaults, in order.
SPEC_FIELDS: dict[str, Any] = {
    "task": None, "layout": "", "levels": (), "qce_levels": (), "pit_edges": (), "curve_edges": (), "pit_bins": 20,
    "z_edges": (), "coverages": (), "n_bins": 15, "sigma_edges": (), "strategy": "uniform", "closed": "right",
    "conf_edges": (), "n_classes": 0, "n_blocks": 256, "seed": 0, "kde_floor": 0.0, "edges_exact": True,
    "quantile_levels": (), "version": FORMAT_VERSION,
}


def _check_spec(d: Any, source: str) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise summary_error(f"header.json: spec must be an object, not {_short(d)}", source)
    odd = sorted(set(d) - set(SPEC_FIELDS))
    if odd:
        raise summary_error(f"header.json: the spec has fields this tool does not write: {_short(odd)}", source)
    if "task" not in d:
        raise summary_error("header.json: the spec names no task", source)
    s = {**SPEC_FIELDS, **d}
    out: dict[str, Any] = {"task": _choice(s["task"], "spec.task", tuple(_LAYOUTS), source)}
    out["layout"] = _choice(s["layout"], "spec.layout", _LAYOUTS[out["task"]], source)
    for f in ("levels", "curve_edges", "pit_edges"):
        out[f] = _floats(s[f], f"spec.{f}", source, lo=0.0, hi=1.0)
    out["qce_levels"] = _floats(s["qce_levels"], "spec.qce_levels", source, lo=0.0, hi=1.0)
    out["z_edges"] = _floats(s["z_edges"], "spec.z_edges", source)
    for f in ("coverages", "quantile_levels"):
        out[f] = _floats(s[f], f"spec.{f}", source, lo=0.0, hi=1.0, open_=True)
    out["pit_bins"] = _whole(s["pit_bins"], "spec.pit_bins", 1, MAX_BINS, source)
    nb = out["n_bins"] = _whole(s["n_bins"], "spec.n_bins", 1, MAX_BINS, source)
    out["n_classes"] = _whole(s["n_classes"], "spec.n_classes", 2 if out["layout"] == "probs" else 0, MAX_CLASSES,
                              source)
    out["n_blocks"] = _whole(s["n_blocks"], "spec.n_blocks", 1, MAX_BLOCKS, source)
    out["seed"] = _whole(s["seed"], "spec.seed", 0, 2**64 - 1, source)
    out["version"] = _whole(s["version"], "spec.version", FORMAT_VERSION, FORMAT_VERSION, source)
    out["strategy"] = _choice(s["strategy"], "spec.strategy", ("uniform", "quantile"), source)
    out["closed"] = _choice(s["closed"], "spec.closed", ("right", "left"), source)
    kde = s["kde_floor"]
    if type(kde) not in (int, float) or not 0 <= kde <= 1e300:
        raise summary_error(f"header.json: spec.kde_floor is {_short(kde)}; it must be a number from 0 to 1e300",
                            source)
    out["kde_floor"] = kde
    if type(s["edges_exact"]) is not bool:
        raise summary_error(f"header.json: spec.edges_exact is {_short(s['edges_exact'])}; it must be true or false",
                            source)
    out["edges_exact"] = s["edges_exact"]
    if out["task"] == "regression" and out["layout"] != "point":
        for f in ("levels", "curve_edges", "pit_edges", "z_edges"):
            if len(out[f]) < 2:
                raise summary_error(f"header.json: spec.{f} has {len(out[f])} values; a regression summary has "
                                    "at least 2", source)
        pe, z = out["pit_edges"], np.asarray(out["z_edges"])
        grids = {*out["levels"], *out["qce_levels"], *np.linspace(0.0, 1.0, out["pit_bins"] + 1).tolist()}
        if pe[0] != 0.0 or pe[-1] != 1.0 or out["levels"] != out["curve_edges"] or not grids <= set(pe):
            raise summary_error("header.json: spec.pit_edges must run from 0 to 1 through every level, QCE level "
                                "and PIT-histogram edge, and spec.curve_edges equal spec.levels", source)
        if not np.array_equal(z, np.linspace(z[0], z[-1], z.size)):
            raise summary_error("header.json: spec.z_edges must be equally spaced", source)
    sigma = []
    for i, e in enumerate(_list(s["sigma_edges"], "spec.sigma_edges", MAX_PARTS, source)):
        where = f"spec.sigma_edges[{i}]"
        if not isinstance(e, list) or len(e) != 4:
            raise summary_error(f"header.json: {where} must be [model, group, values, row ids]", source)
        vals = _floats(e[2], where + " values", source, strict=False, most=nb - 1)
        ids = _list(e[3], where + " row ids", nb - 1, source)
        if len(ids) != len(vals) or any(type(x) is not int or not -(2**63) <= x < 2**63 for x in ids):
            raise summary_error(f"header.json: {where} needs one whole-number row id per value", source)
        sigma.append((_text(e[0], where + " model", source), _text(e[1], where + " group", source), vals, tuple(ids)))
    out["sigma_edges"] = tuple(sigma)
    conf = []
    for i, e in enumerate(_list(s["conf_edges"], "spec.conf_edges", MAX_PARTS, source)):
        where = f"spec.conf_edges[{i}]"
        if not isinstance(e, list) or len(e) != 3:
            raise summary_error(f"header.json: {where} must be [model, group, edges]", source)
        conf.append((_text(e[0], where + " model", source), _text(e[1], where + " group", source),
                     _floats(e[2], where, source, lo=0.0, hi=1.0, strict=False, length=nb + 1, most=nb + 1)))
    out["conf_edges"] = tuple(conf)
    return out


_HEADER_KEYS = ("format", "version", "spec", "n_rows", "dropped", "source", "models", "parts")


def check_header(header: Any, source: str) -> dict[str, Any]:
    """Check a decoded ``header.json`` against the schema (module docstring) before any array is read.

    The format and version are checked first (another version: a message saying which version reads it); then
    every field, with ``n_rows`` bounded to 1 … 2⁶² here and held to Σ_models Σ_bins n[model, all rows] once the
    arrays are read (:func:`check_totals`).

    Parameters
    ----------
    header : object
        ``json.loads`` of ``header.json``.
    source : str
        The file, for messages.

    Returns
    -------
    dict
        ``spec`` (field → value, lists as tuples), ``n_rows``, ``dropped``, ``source``, ``models`` (tuple) and
        ``parts``: a list of (model, group, [(name, file, exact), ...]).

    References
    ----------
    .. [1] Miller, B. P., Fredriksen, L., & So, B. (1990). An empirical study of the reliability of UNIX
       utilities. Communications of the ACM, 33(12), 32–44.
    """
    if not isinstance(header, dict):
        raise summary_error("not a calibration summary file: header.json is not an object", source)
    fmt, ver = header.get("format"), header.get("version")
    if fmt != FORMAT or ver != FORMAT_VERSION or type(ver) is not int:
        raise summary_error(f"summary format {_short(fmt)} version {_short(ver)}; this version of the tool reads "
                            f"{FORMAT!r} version {FORMAT_VERSION}", source, newer=fmt == FORMAT)
    odd = sorted(set(header) - set(_HEADER_KEYS))
    missing = [k for k in _HEADER_KEYS if k not in header and k != "source"]
    if odd or missing:
        raise summary_error(f"header.json: fields not in the format {_short(odd)}, missing {_short(missing)}", source)
    spec = _check_spec(header["spec"], source)
    n_rows = _whole(header["n_rows"], "n_rows", 1, MAX_ROWS, source)
    dropped: dict[str, dict[str, Any]] = {}
    drops = header["dropped"]
    if not isinstance(drops, dict) or len(drops) > 100:
        raise summary_error("header.json: dropped must be an object of at most 100 reasons", source)
    for reason, d in drops.items():
        _text(reason, "a dropped-rows reason", source)
        if not isinstance(d, dict) or set(d) != {"count", "first"}:
            raise summary_error(f"header.json: dropped[{_short(reason)}] must be {{count, first}}", source)
        first = _list(d["first"], f"dropped[{_short(reason)}].first", 10, source)
        for x in first:
            _whole(x, f"dropped[{_short(reason)}].first", -(2**63), 2**63 - 1, source)
        dropped[reason] = {"count": _whole(d["count"], f"dropped[{_short(reason)}].count", 0, MAX_ROWS, source),
                           "first": list(first)}
    origin = _text(header.get("source", "<summary>"), "source", source)
    models = _list(header["models"], "models", MAX_PARTS, source)
    for m in models:
        _text(m, "a model name", source)
    if len(set(models)) != len(models):
        raise summary_error("header.json: models lists a model twice", source)
    parts = []
    seen: set = set()
    for i, e in enumerate(_list(header["parts"], "parts", MAX_PARTS, source)):
        if not isinstance(e, dict) or set(e) != {"model", "group", "arrays"}:
            raise summary_error(f"header.json: parts[{i}] must be {{model, group, arrays}}", source)
        key = (_text(e["model"], f"parts[{i}].model", source), _text(e["group"], f"parts[{i}].group", source))
        if key in seen:
            raise summary_error(f"header.json: {part_label(*key)} is listed twice", source)
        seen.add(key)
        arrays, names = [], set()
        for j, a in enumerate(_list(e["arrays"], f"parts[{i}].arrays", MAX_ARRAYS, source)):
            if not isinstance(a, dict) or set(a) != {"name", "file", "exact"} or type(a["exact"]) is not bool:
                raise summary_error(f"header.json: parts[{i}].arrays[{j}] must be {{name, file, exact}}", source)
            name, file = _text(a["name"], "an array name", source), _text(a["file"], "an array file", source)
            if name in names:
                raise summary_error(f"header.json: {part_label(*key)} lists {name!r} twice", source)
            names.add(name)
            arrays.append((name, file, a["exact"]))
        parts.append((key[0], key[1], arrays))
    if not parts:
        raise summary_error("the summary holds no parts (no rows were summarised)", source)
    files = [f for _, _, arrays in parts for _, f, _ in arrays]
    if len(set(files)) != len(files):
        raise summary_error("header.json: two arrays are stored in the same member of the archive", source)
    part_models = {m for m, _, _ in parts}
    if set(models) != part_models:
        raise summary_error(f"header.json: models {_short(models)} are not the models of its parts "
                            f"{_short(sorted(part_models))}", source)
    lost = sorted(m for m in part_models if (m, ALL) not in seen)
    if lost:
        raise summary_error(f"header.json: model {lost[0]!r} has no all-rows part", source)
    return {"spec": spec, "n_rows": n_rows, "dropped": dropped, "source": origin, "models": tuple(models),
            "parts": parts}


def _tag(c: float) -> str:  # as scale.regression_values.coverage_tag
    return f"{100 * c:g}"


def array_schema(spec: Mapping[str, Any], names: Sequence[str]) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The kind and shape each array of a part must have (module docstring), for the arrays a part lists.

    Shapes follow from the spec: e.g. ``curve`` is (B, C + 1) with B = ``n_bins`` and C = ``len(curve_edges)``,
    ``blk`` is (G, 10 + 3V) for a regression distribution.  Required arrays missing, optional groups half present,
    or a name this tool does not write raise ``ValueError`` with the name.

    Parameters
    ----------
    spec : mapping
        The checked spec (:func:`check_header`).
    names : sequence of str
        The arrays a part lists.

    Returns
    -------
    dict of str to (str, tuple)
        Per name the kind (``"count"``, ``"float"`` or ``"exact"``) and the shape (an exact sum's without the
        296 bytes).

    References
    ----------
    .. [1] Miller, B. P., Fredriksen, L., & So, B. (1990). An empirical study of the reliability of UNIX
       utilities. Communications of the ACM, 33(12), 32–44.
    """
    nb, g, k = spec["n_bins"], spec["n_blocks"], spec["n_classes"]
    tags = [_tag(c) for c in spec["coverages"]]
    req: dict[str, tuple[str, tuple[int, ...]]] = {}
    groups: list[dict[str, tuple[str, tuple[int, ...]]]] = []
    if spec["task"] == "classification":
        probs = spec["layout"] == "probs"
        req = {"n": ("count", (nb,)), "hit": ("count", (nb,)), "x:conf": ("exact", (nb,)),
               "x:conf_var": ("exact", (nb,)), "blk": ("float", (g, 5 if probs else 3)),
               "blk_bins": ("float", (g, nb, 3))}
        if probs:
            req.update({"x:nll": ("exact", (1,)), "x:brier": ("exact", (1,)), "cw_n": ("count", (k, nb)),
                        "cw_hit": ("count", (k, nb)), "x:cw_p": ("exact", (k, nb))})
            if k == 2:
                groups.append({"pos_n": ("count", (nb,)), "pos_hit": ("count", (nb,)), "x:pos_p": ("exact", (nb,)),
                               "x:pos_var": ("exact", (nb,))})
    elif spec["layout"] == "point":
        req = {"n": ("count", (1,)), "x:sq_err": ("exact", (1,)), "x:abs_err": ("exact", (1,)),
               "blk": ("float", (g, 3)), "blk_bins": ("float", (g, 1, 3))}
    else:
        p, c, z = len(spec["pit_edges"]), len(spec["curve_edges"]), len(spec["z_edges"])
        req = {"n": ("count", (nb,)), "nz": ("count", (nb,)), "sigma_min": ("float", (nb,)),
               "sigma_max": ("float", (nb,)), "pit_le": ("count", (p + 1,)), "pit_eq": ("count", (p,)),
               "pit_sum": ("float", (p + 1,)), "curve": ("count", (nb, c + 1)), "z_hist": ("count", (z + 1,)),
               "z_sum": ("float", (z + 1,)), "z_min": ("float", (1,)), "z_max": ("float", (1,)),
               "blk": ("float", (g, 10 + 3 * len(tags))), "blk_bins": ("float", (g, nb, 3))}
        req.update({f"x:{n}": ("exact", (nb,)) for n in _REG_EXACT})
        req.update({f"in:{t}": ("count", (nb,)) for t in tags})
        per = ("pen",) if spec["layout"] == "gaussian" else ("width", "score")
        req.update({f"x:{w}_{t}": ("exact", (nb,)) for t in tags for w in per})
        groups.append({f"x:{n}": ("exact", (nb,)) for n in _WIS})
        groups.append({"x:var_hi": ("exact", (nb,)), "x:var_lo": ("exact", (nb,))})  # Σ(σ·2^∓600)²
        q = len(spec["quantile_levels"])
        groups.append({"stated_lo": ("count", (q,)), "stated_hi": ("count", (q,))})
    listed = set(names)
    missing = sorted(set(req) - listed)
    if missing:
        raise ValueError(f"array {missing[0]!r} is missing ({len(missing)} missing)")
    out = dict(req)
    for grp in groups:
        have = listed & set(grp)
        if have and have != set(grp):
            raise ValueError(f"array {sorted(set(grp) - have)[0]!r} is missing (it goes with {sorted(have)[0]!r})")
        out.update({n: grp[n] for n in have})
    for name in names:
        if name in out:
            continue
        if _STATED.fullmatch(name) and spec["layout"] == "quantile":
            out[name] = ("count", (1,))
        elif name.startswith("nf:") and "x:" + name[3:] in out:
            out[name] = ("count", out["x:" + name[3:]][1] + (3,))
        else:
            raise ValueError(f"{_short(name)} is not an array this tool writes in a {spec['task']} summary "
                             f"({spec['layout']})")
    return out


def _le(a: np.ndarray, b: np.ndarray, what: str) -> None:
    if (a > b).any():
        raise ValueError(f"{what}: {int(np.max(a - b)):,} more than possible")


def check_part_counts(spec: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> int:
    """Check that a part's counts hold together (module docstring) and return its rows N = Σ n.

    Counts are int64 ≥ 0 already (checked as each array is read); here ``hit ≤ n``, Σ ``pit_le`` = N, the
    ``curve`` row sums equal ``n``, Σ ``cw_n[k]`` = N for every class k, the block count columns are whole
    numbers ≥ 0 with Σ_blocks ``blk[:, 0]`` = N and Σ_blocks ``blk_bins[:, b, 0]`` = n_b.

    Parameters
    ----------
    spec : mapping
        The checked spec.
    arrays : mapping of str to ndarray
        The part's arrays (exact sums still as bytes or already as integers).

    Returns
    -------
    int
        N, the rows of the part.

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    n = arrays["n"]
    total = int(n.sum(dtype=np.int64)) if n.size else 0
    if total < 1 or total > MAX_ROWS:
        raise ValueError(f"array 'n' counts {total:,} rows; a part holds 1 to {MAX_ROWS:,}")
    blk, bins = arrays["blk"], arrays["blk_bins"]
    for what, col in (("blk[:, 0]", blk[:, 0]), ("blk_bins[:, :, 0]", bins[..., 0])):
        if not (np.isfinite(col).all() and (col >= 0).all() and (col == np.floor(col)).all()):
            raise ValueError(f"array {what} must hold whole row counts ≥ 0")
    if int(blk[:, 0].sum()) != total:
        raise ValueError(f"the blocks of 'blk' count {int(blk[:, 0].sum()):,} rows, 'n' {total:,}")
    if spec["layout"] != "point" and not np.array_equal(bins[..., 0].sum(axis=0), n.astype(float)):
        raise ValueError("the blocks of 'blk_bins' do not add up to 'n' in every bin")
    for name in ("hit", "nz", *(k for k in arrays if k.startswith("in:"))):
        if name in arrays:
            _le(arrays[name], n, f"array {name!r} counts rows beyond 'n'")
    if "pos_n" in arrays:
        _le(arrays["pos_hit"], arrays["pos_n"], "array 'pos_hit' counts rows beyond 'pos_n'")
        if int(arrays["pos_n"].sum()) != total:
            raise ValueError(f"array 'pos_n' counts {int(arrays['pos_n'].sum()):,} rows, 'n' {total:,}")
    if "cw_n" in arrays:
        _le(arrays["cw_hit"], arrays["cw_n"], "array 'cw_hit' counts rows beyond 'cw_n'")
        per_class = arrays["cw_n"].sum(axis=1)
        if (per_class != total).any() or int(arrays["cw_hit"].sum()) != total:
            raise ValueError(f"arrays 'cw_n' / 'cw_hit' do not count the part's {total:,} rows for every class")
    if "pit_le" in arrays:
        if int(arrays["pit_le"].sum()) != total:
            raise ValueError(f"array 'pit_le' counts {int(arrays['pit_le'].sum()):,} rows, 'n' {total:,}")
        _le(arrays["pit_eq"], arrays["pit_le"][:-1], "array 'pit_eq' counts rows beyond 'pit_le'")
        if not np.array_equal(arrays["curve"].sum(axis=1), n):
            raise ValueError("the rows of array 'curve' do not add up to 'n' in every bin")
        if int(arrays["z_hist"].sum()) != int(arrays["nz"].sum()):
            raise ValueError("array 'z_hist' does not count the rows of 'nz'")
    for name in ("stated_lo", "stated_hi", *(k for k in arrays if k.startswith("stated_") and ":" in k)):
        if name in arrays and (arrays[name] > total).any():
            raise ValueError(f"array {name!r} counts more than the part's {total:,} rows")
    if "sigma_min" in arrays:
        _check_floats(arrays, n, np.asarray(spec["z_edges"], dtype=float))
    _check_exact(arrays, total)
    return total


_Z_SUMS = ("x:z", "x:z2", "x:z3", "x:z4", "x:zu", "x:phi")  # sums over the rows with a finite z (counted in nz)
_NONNEGATIVE = re.compile(r"x:(sigma|var|var_hi|var_lo|var2|sq_err|abs_err|z2|z4|phi|conf|conf_var|cw_p|pos_p|pos_var|"
                          r"brier|pen_.*)")


def _check_exact(arrays: Mapping[str, np.ndarray], total: int) -> None:
    """Exact sums within what their cell's rows of finite float64 values can add up to: |Σ| < n_cell · 2¹⁰²⁴ (in
    units of 2⁻¹¹³⁸; 0 in an empty cell), and ≥ 0 for sums of non-negative values (σ, σ², squared errors, …)."""
    for name, arr in arrays.items():
        if arr.dtype != object:
            continue
        if arr.shape == (1,):
            count = np.array([total])
        elif name.startswith("x:cw_"):
            count = arrays["cw_n"]
        elif name.startswith("x:pos_"):
            count = arrays["pos_n"]
        else:
            count = arrays["nz" if name in _Z_SUMS else "n"]
        values = arr.reshape(-1).tolist()
        limits = [int(c) << (EXACT_UNIT_BITS + 1024) for c in count.reshape(-1).tolist()]
        if any(abs(v) >= lim and v for v, lim in zip(values, limits, strict=True)):
            raise ValueError(f"array {name!r} holds an exact sum beyond its rows of float64 values")
        if _NONNEGATIVE.fullmatch(name) and min(values) < 0:
            raise ValueError(f"array {name!r} holds a negative sum of non-negative values")


def _check_floats(arrays: Mapping[str, np.ndarray], n: np.ndarray, z_edges: np.ndarray) -> None:
    """The float arrays of a regression part: NaN only where a bin is empty, finite sums, σ ≥ 0, PIT sums in
    [0, count] (every u in [0, 1]), min ≤ max, the smallest / largest z in the first / last non-empty z bin."""
    lo, hi, empty = arrays["sigma_min"], arrays["sigma_max"], n == 0
    with np.errstate(invalid="ignore"):
        ok = np.where(empty, np.isnan(lo) & np.isnan(hi), np.isfinite(lo) & np.isfinite(hi) & (lo >= 0) & (lo <= hi))
    if not ok.all():
        raise ValueError("arrays 'sigma_min' / 'sigma_max' must be NaN in the empty σ-bins and 0 ≤ min ≤ max finite "
                         "in the others")
    zmin, zmax = float(arrays["z_min"][0]), float(arrays["z_max"][0])
    full = np.flatnonzero(arrays["z_hist"])
    if int(arrays["nz"].sum()) > 0 and full.size:
        bounds = np.concatenate([[-np.inf], z_edges, [np.inf]])  # z bin k: [bounds[k], bounds[k + 1]]
        z_ok = (np.isfinite(zmin) and np.isfinite(zmax) and bounds[full[0]] <= zmin <= bounds[full[0] + 1]
                and bounds[full[-1]] <= zmax <= bounds[full[-1] + 1])
    else:
        z_ok = np.isnan(zmin) and np.isnan(zmax)
    if not z_ok:
        raise ValueError("arrays 'z_min' / 'z_max' must lie in the first / last non-empty bin of 'z_hist' (NaN "
                         "without any z)")
    ps, pl, zs, zh = arrays["pit_sum"], arrays["pit_le"], arrays["z_sum"], arrays["z_hist"]
    if not (np.isfinite(ps).all() and (ps >= 0).all() and (ps <= pl).all()):
        raise ValueError("array 'pit_sum' must hold finite sums of PIT values in [0, 1] (at most 'pit_le')")
    if not (np.isfinite(zs).all() and (zs[zh == 0] == 0).all()):
        raise ValueError("array 'z_sum' must hold finite sums, 0 where 'z_hist' is")
