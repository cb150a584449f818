"""Golden outputs of the public surface: record them before a refactoring, prove afterwards they are bit-identical.

    python bench/golden.py record OUTDIR              # writes the canonical outputs into OUTDIR (a new or empty folder)
    python bench/golden.py compare DIR_A DIR_B        # every file bit for bit; exit code 1 on any difference

Only the stable public surface is used, so the script runs unchanged before and after modules move inside the
package: ``import calib_core as cc`` (``cc.load_predictions``, ``cc.diagnose``, ``cc.evaluate``,
``cc.slice_comparison``, the calibrator classes of ``cc.__all__``, ``cc.PredictiveDistribution``),
``calib_core.labs.LABS`` with the ``run_*`` function of every ``calib_core.labs.<key>`` module, the command line
``python -m calib_core report|evaluate ...``, and the built-in examples (``calib_core.examples``, with a fallback to
a ``calib_core.data.examples`` module should they move there).

What is recorded (all seeded; nothing random is left unseeded):

* ``examples/<name>/``: each built-in example the dashboard's Data page offers (the six entries of
  ``dashboard/state.py``'s ``EXAMPLES``, called the same way): the prediction set and ``cc.diagnose`` with its
  default options (metric table with intervals, p-values and flags; verdicts; every diagram table; options).
* ``real/<name>/``: the same for three real files read without a column mapping (a Gaussian and a quantile
  regression file, a probability-vector classification file) from ``/work/shared/data/real`` (read in place).
* ``evaluate/<name>/``: ``cc.evaluate(..., seed=0, diagrams=True)`` of a regression and a classification example
  with three calibrators and the uncalibrated baseline (tables, splits, diagram tables and the calibrated
  predictions), and ``cc.slice_comparison`` of the regression one by two feature columns.
* ``labs/<key>/``: every lab's ``run_*`` with its default arguments (every DataFrame, array, number and string of
  the result; distributions through their public methods) and, where the result draws figures, their Plotly JSON.
* ``cli/``: the CSV tables of ``python -m calib_core report FILE --metrics-csv`` for the three real files and of
  ``python -m calib_core evaluate FILE --summary-csv --trials-csv`` for one of them, plus the exit codes.
* ``environment.json``: the versions of Python and the numerical libraries (bit-identity holds for one stack).

Formats: DataFrames as Parquet (floats exact; the original column labels, dtypes and index kept in the file's
metadata; object columns stored as typed ``repr`` text), arrays as ``.npy`` (no pickle; object arrays as typed
``repr`` text in ``.object.npy``), scalars and strings as ``scalars.json`` (floats as ``repr``, exact), CSV as
written by the CLI.

Left out because they are not deterministic by nature: wall-clock timings (``EvaluationResult.fit_seconds``) and
the CLI's HTML reports (they carry the time they were made); fitted estimator objects
(``EvaluationResult.fitted``) are represented by what they produce (``calibrated``, the metric tables).

``compare`` reads every file of both folders: DataFrames must have the same columns, dtypes, index and values
(floats compared by their bit patterns, NaN equal to NaN, nulls at the same places), arrays the same dtype, shape
and bits, JSON the same keys and values, CSV the same bytes.  It prints how many files were compared, how many are
identical, and for each differing file its first differences with the largest absolute and relative difference.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_HERE = Path(__file__).resolve().parent
# This folder holds modules named like libraries (distributed.py, …): keep it off the path, put the checkout on it.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import calib_core as cc  # noqa: E402
from calib_core.labs import LABS  # noqa: E402

try:
    from calib_core.examples import breast_cancer_example, diabetes_example, digits_example, levi_synthetic
except ImportError:  # the examples may move into a data layer
    from calib_core.data.examples import (  # type: ignore[no-redef]
        breast_cancer_example,
        diabetes_example,
        digits_example,
        levi_synthetic,
    )

REAL = Path("/work/shared/data/real")

#: Built-in examples of the Data page (dashboard/state.py ``EXAMPLES``), same calls, folder name → loader.
EXAMPLES: dict[str, Callable[[], Any]] = {
    "diabetes_gaussian": lambda: diabetes_example(),
    "diabetes_quantile": lambda: diabetes_example("quantile"),
    "diabetes_sample": lambda: diabetes_example("sample"),
    "levi_synthetic": lambda: levi_synthetic(),
    "digits": lambda: digits_example(),
    "breast_cancer": lambda: breast_cancer_example(),
}

#: Real files read without a column mapping: folder name → path (Gaussian regression, quantile regression,
#: probability-vector classification).
REAL_FILES: dict[str, Path] = {
    "logp_gcn_gaussian": REAL / "rasmussen2023_logp_gcn_uq" / "logP_10k_a_LS-GCN_test.csv",
    "boston_quantiles": REAL / "torchuq_boston_gaussian_quantile" / "boston_val_predictions.csv",
    "resnet18_cifar10_probs": REAL / "torchuq_resnet18_cifar10_probs" / "resnet18_cifar10_test.npz",
}

#: Levels at which a distribution's quantile function is recorded (one row: every row of the set at each level).
PPF_LEVELS = np.array([[0.025, 0.05, 0.25, 0.5, 0.75, 0.95, 0.975]])

#: Result fields that are not deterministic (timings) or are estimator objects (see the module docstring).
SKIPPED_FIELDS = frozenset({"fit_seconds", "fitted"})

FRAME_META = b"golden_frame"


# --------------------------------------------------------------------------------------------------------- writing
def _slug(key: Any) -> str:
    """A file-name-safe name for a dict key (tuples joined with '~')."""
    text = "~".join(str(k) for k in key) if isinstance(key, tuple) else str(key)
    slug = re.sub(r"[^A-Za-z0-9_.~=-]+", "_", text).strip("_") or "_"
    return slug if slug.strip(".") else "_" + slug


def _scalar_text(value: Any) -> str:
    """``type:repr`` of a scalar (``float:0.1``; a float's ``repr`` round-trips exactly; NumPy scalars by their
    Python value, e.g. ``float64:0.1``)."""
    name = type(value).__name__
    if isinstance(value, np.generic):
        value = value.item()
    return f"{name}:{value!r}"


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | bytes | bool | int | float | complex | np.generic)


def _tagged(values: Any) -> list[str]:
    """Cells of an object column / array as typed exact text (``float:0.1``, ``str:'a'``, ``NoneType:None``)."""
    return [_scalar_text(v) if _is_scalar(v) else f"{type(v).__name__}:{v!r}" for v in values]


def save_frame(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` as Parquet with positional column names; labels, dtypes and index go to the metadata."""
    info: dict[str, Any] = {
        "columns": [repr(c) for c in frame.columns],
        "column_names": [repr(n) for n in frame.columns.names],
        "dtypes": [str(d) for d in frame.dtypes],
        "tagged": [],
    }
    data: dict[str, Any] = {}
    idx = frame.index
    if isinstance(idx, pd.RangeIndex):
        info["index"] = {"kind": "range", "start": idx.start, "stop": idx.stop, "step": idx.step,
                         "name": repr(idx.name)}
    else:
        levels = [idx.get_level_values(i) for i in range(idx.nlevels)]
        info["index"] = {"kind": type(idx).__name__, "names": [repr(n) for n in idx.names],
                         "dtypes": [str(lv.dtype) for lv in levels]}
        for i, lv in enumerate(levels):
            name = f"i{i}"
            if lv.dtype == object:
                data[name] = pd.array(_tagged(lv), dtype=object)
                info["tagged"].append(name)
            else:
                data[name] = lv.to_numpy()
    for i in range(frame.shape[1]):
        col = frame.iloc[:, i]
        name = f"c{i}"
        if col.dtype == object:
            data[name] = pd.array(_tagged(col), dtype=object)
            info["tagged"].append(name)
        else:
            data[name] = col.reset_index(drop=True)
    norm = pd.DataFrame(data, index=pd.RangeIndex(len(frame)))
    table = pa.Table.from_pandas(norm, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[FRAME_META] = json.dumps(info, ensure_ascii=False).encode("utf-8")
    pq.write_table(table.replace_schema_metadata(meta), path)


def save_array(array: np.ndarray, stem: Path) -> None:
    """``<stem>.npy`` without pickle; object arrays as typed text in ``<stem>.object.npy``."""
    if array.dtype == object:
        text = np.array(_tagged(array.ravel()), dtype=str).reshape(array.shape)
        np.save(_with(stem, ".object.npy"), text, allow_pickle=False)
    else:
        np.save(_with(stem, ".npy"), array, allow_pickle=False)


def _with(stem: Path, ext: str) -> Path:
    """``stem`` + ``ext`` (a dot in the stem, as in ``q0.05``, is kept: no ``with_suffix``)."""
    return stem.parent / (stem.name + ext)


def _meta(key: str, what: str) -> str:
    """The scalars.json key of a fact about the node ``key`` (its type, dict keys, length …)."""
    return f"{key}.__{what}__" if key else f"__{what}__"


def _is_figure(value: Any) -> bool:
    return hasattr(value, "to_plotly_json") and hasattr(value, "to_json")


class Recorder:
    """Walks a result object and writes its tables, arrays and scalars under ``root`` (one ``scalars.json``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.scalars: dict[str, Any] = {}
        self.files = 0

    def _file(self, parts: list[str]) -> Path:
        path = self.root.joinpath(*parts) if parts else self.root / "value"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def walk(self, value: Any, parts: list[str], skip: frozenset[str] = frozenset()) -> None:
        key = "/".join(parts)
        if _is_scalar(value):
            self.scalars[key] = _scalar_text(value)
        elif isinstance(value, pd.DataFrame):
            save_frame(value, _with(self._file(parts), ".parquet"))
            self.files += 1
        elif isinstance(value, pd.Series):
            self.scalars[_meta(key, "series_name")] = repr(value.name)
            save_frame(value.to_frame(name="series"), _with(self._file(parts), ".series.parquet"))
            self.files += 1
        elif isinstance(value, pd.Index):
            self.walk(value.to_frame(index=False), parts)
        elif isinstance(value, np.ndarray):
            save_array(value, self._file(parts))
            self.files += 1
        elif isinstance(value, cc.PredictiveDistribution):
            self.walk_distribution(value, parts)
        elif _is_figure(value):
            self.save_figure(value, parts)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            self.scalars[_meta(key, "type")] = type(value).__name__
            for f in dataclasses.fields(value):
                if f.name in skip:
                    continue
                self.walk(getattr(value, f.name), [*parts, f.name])
        elif isinstance(value, Mapping):
            self.scalars[_meta(key, "keys")] = [repr(k) for k in value]
            used: set[str] = set()
            for i, (k, v) in enumerate(value.items()):
                name = _slug(k)
                if name in used:
                    name = f"{name}.{i}"
                used.add(name)
                self.walk(v, [*parts, name])
        elif isinstance(value, list | tuple):
            self.scalars[_meta(key, "len")] = f"{type(value).__name__}:{len(value)}"
            for i, v in enumerate(value):
                self.walk(v, [*parts, str(i)])
        elif isinstance(value, set | frozenset):
            self.scalars[key] = f"{type(value).__name__}:{sorted(repr(v) for v in value)!r}"
        else:
            self.scalars[_meta(key, "type")] = f"not recorded: {type(value).__name__}"

    def walk_distribution(self, dist: Any, parts: list[str]) -> None:
        """A predictive distribution through its public methods: type, length, mean, std, quantiles."""
        key = "/".join(parts)
        self.scalars[_meta(key, "type")] = type(dist).__name__
        self.scalars[_meta(key, "len")] = f"int:{len(dist)}"
        calls: dict[str, Callable[[], Any]] = {"mean": dist.mean, "std": dist.std, "ppf": lambda: dist.ppf(PPF_LEVELS)}
        for name, call in calls.items():
            with np.errstate(all="ignore"):
                try:
                    out = np.asarray(call())
                except Exception as exc:  # deterministic too: recorded by type
                    self.scalars[_meta(f"{key}/{name}" if key else name, "raises")] = type(exc).__name__
                    continue
            save_array(out, self._file([*parts, name]))
            self.files += 1

    def save_figure(self, figure: Any, parts: list[str]) -> None:
        _with(self._file(parts), ".figure.json").write_text(figure.to_json(), encoding="utf-8")
        self.files += 1

    def finish(self) -> int:
        self.root.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.scalars, ensure_ascii=False, indent=1)
        (self.root / "scalars.json").write_text(text + "\n", encoding="utf-8")
        return self.files + 1


def record_object(value: Any, root: Path, skip: frozenset[str] = frozenset()) -> int:
    rec = Recorder(root)
    rec.walk(value, [], skip)
    return rec.finish()


def lab_runs() -> Iterator[tuple[str, str, Callable[[], Any]]]:
    """(lab key, function name, run_* function) of every lab, in teaching order."""
    for item in LABS:
        module = importlib.import_module(f"calib_core.labs.{item.key}")
        names = [n for n, f in inspect.getmembers(module, inspect.isfunction)
                 if n.startswith("run_") and f.__module__ == module.__name__]
        if not names:
            raise SystemExit(f"lab {item.key}: no run_* function in {module.__name__}")
        for name in names:
            yield item.key, name, getattr(module, name)


def run_cli(args: list[str]) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "calib_core", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        print(f"  CLI {' '.join(args[:2])} exited with {done.returncode}:\n{done.stderr[-2000:]}", file=sys.stderr)
    return done.returncode


def record(outdir: Path) -> int:
    """Write every golden output into ``outdir`` (which must not hold files yet)."""
    if outdir.exists() and any(outdir.iterdir()):
        raise SystemExit(f"{outdir} is not empty: record into a new folder")
    outdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    counts: dict[str, int] = {}

    def step(kind: str, name: str, build: Callable[[], int]) -> None:
        t0 = time.perf_counter()
        counts[kind] = counts.get(kind, 0) + build()
        print(f"  {kind}/{name}: {time.perf_counter() - t0:.1f} s", flush=True)

    versions = {"python": platform.python_version()}
    for module in ("numpy", "scipy", "pandas", "sklearn", "pyarrow", "plotly"):
        versions[module] = importlib.import_module(module).__version__
    (outdir / "environment.json").write_text(json.dumps(versions, indent=1) + "\n", encoding="utf-8")

    psets: dict[str, Any] = {}
    for name, load in EXAMPLES.items():
        def build(name: str = name, load: Callable[[], Any] = load) -> int:
            ps = psets[name] = load()
            return record_object(ps, outdir / "examples" / name / "pset") + record_object(
                cc.diagnose(ps), outdir / "examples" / name / "diagnose")
        step("examples", name, build)

    for name, path in REAL_FILES.items():
        def build(name: str = name, path: Path = path) -> int:
            ps = cc.load_predictions(path)
            return record_object(ps, outdir / "real" / name / "pset") + record_object(
                cc.diagnose(ps), outdir / "real" / name / "diagnose")
        step("real", name, build)

    evaluations: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
        "diabetes_gaussian": ("diabetes_gaussian", {"uncalibrated": None, "std scaling": cc.StdScaling(),
                                                    "isotonic": cc.IsotonicRecalibration(), "CRUDE": cc.CRUDE()},
                              ("x_sex", "x_bmi")),
        "digits": ("digits", {"uncalibrated": None, "temperature": cc.TemperatureScaling(),
                              "histogram binning": cc.HistogramBinning(), "isotonic": cc.IsotonicCalibration()}, ()),
    }
    for name, (example, calibrators, slices) in evaluations.items():
        def build(example: str = example, calibrators: dict[str, Any] = calibrators, slices: tuple[str, ...] = slices,
                  name: str = name) -> int:
            ps = psets[example]
            result = cc.evaluate(ps, calibrators, seed=0, diagrams=True)
            n = record_object(result, outdir / "evaluate" / name / "result", SKIPPED_FIELDS)
            for by in slices:
                n += record_object(cc.slice_comparison(ps, result, by=by), outdir / "evaluate" / name / f"slices_{by}")
            return n
        step("evaluate", name, build)

    for key, fname, run in lab_runs():
        def build(key: str = key, run: Callable[[], Any] = run) -> int:
            result = run()
            n = record_object(result, outdir / "labs" / key / "result")
            if callable(getattr(result, "figures", None)):
                n += record_object(result.figures(), outdir / "labs" / key / "figures")
            return n
        step("labs", f"{key}.{fname}", build)

    cli = outdir / "cli"
    cli.mkdir()
    codes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:  # the HTML reports are dated: not recorded
        for name, path in REAL_FILES.items():
            def build(name: str = name, path: Path = path) -> int:
                codes[f"report {name}"] = run_cli(["report", str(path), "--out", str(Path(tmp) / f"{name}.html"),
                                                   "--metrics-csv", str(cli / f"report_{name}_metrics.csv"),
                                                   "--seed", "0", "--quiet"])
                return 1
            step("cli", f"report {name}", build)
        name = "logp_gcn_gaussian"

        def build_evaluate() -> int:
            codes[f"evaluate {name}"] = run_cli(["evaluate", str(REAL_FILES[name]), "--repeats", "2", "--seed", "0",
                                                 "--summary-csv", str(cli / f"evaluate_{name}_summary.csv"),
                                                 "--trials-csv", str(cli / f"evaluate_{name}_trials.csv"), "--quiet"])
            return 2
        step("cli", f"evaluate {name}", build_evaluate)
    (cli / "exit_codes.json").write_text(json.dumps(codes, indent=1) + "\n", encoding="utf-8")
    counts["cli"] += 1

    files = sorted(p for p in outdir.rglob("*") if p.is_file())
    by_ext: dict[str, int] = {}
    for p in files:
        ext = "".join(p.suffixes[-2:]) if p.name.endswith((".object.npy", ".figure.json", ".series.parquet")) \
            else p.suffix
        by_ext[ext] = by_ext.get(ext, 0) + 1
    print(f"recorded {len(files)} files in {outdir} in {time.perf_counter() - started:.1f} s")
    print("  by section: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print("  by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(by_ext.items())))
    bad = {k: v for k, v in codes.items() if v != 0}
    if bad:
        print(f"CLI runs failed: {bad}", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------------------------------------------------- comparing
class Differences:
    """The differences found in one file: the first few described, the largest absolute / relative gap."""

    LIMIT = 5

    def __init__(self) -> None:
        self.items: list[str] = []
        self.count = 0
        self.max_abs = 0.0
        self.max_rel = 0.0

    def add(self, text: str) -> None:
        self.count += 1
        if len(self.items) < self.LIMIT:
            self.items.append(text)

    def numbers(self, a: np.ndarray, b: np.ndarray) -> None:
        """Track the largest finite absolute and relative difference of two numeric arrays."""
        with np.errstate(all="ignore"):
            a = np.asarray(a, dtype=float)
            b = np.asarray(b, dtype=float)
            d = np.abs(a - b)
            ok = np.isfinite(d)
            if ok.any():
                self.max_abs = max(self.max_abs, float(d[ok].max()))
                scale = np.maximum(np.abs(a), np.abs(b))
                rel = np.where(scale > 0, d / scale, 0.0)
                self.max_rel = max(self.max_rel, float(rel[ok].max()))


def _float_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mask of positions whose floats differ in their bits (NaN equals NaN, whatever its payload)."""
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    if a.dtype.kind == "c":
        a, b = a.view(a.real.dtype), b.view(b.real.dtype)
    ints = {2: np.uint16, 4: np.uint32, 8: np.uint64, 16: None}[a.dtype.itemsize]
    if ints is None:  # longdouble: compare values
        differ = a != b
    else:
        differ = a.view(ints) != b.view(ints)
    return differ & ~(np.isnan(a) & np.isnan(b))


def compare_arrays(a: np.ndarray, b: np.ndarray, where: str, diffs: Differences) -> None:
    if a.dtype != b.dtype or a.shape != b.shape:
        diffs.add(f"{where}: dtype/shape {a.dtype}{a.shape} vs {b.dtype}{b.shape}")
        return
    if a.dtype.kind in "fc":
        mask = _float_diff(a, b)
        if a.dtype.kind == "c":
            mask = mask.reshape(*a.shape, 2).any(axis=-1)
    else:
        mask = a != b
    mask = np.asarray(mask)
    if mask.any():
        for pos in np.argwhere(mask)[: Differences.LIMIT]:
            p = tuple(int(i) for i in pos)
            diffs.add(f"{where}[{', '.join(map(str, p))}]: {a[p].tolist()!r} vs {b[p].tolist()!r}")
        diffs.count += int(mask.sum()) - min(int(mask.sum()), Differences.LIMIT)
        if a.dtype.kind in "fiub":
            diffs.numbers(a[mask], b[mask])


def compare_parquet(path_a: Path, path_b: Path, diffs: Differences) -> None:
    ta, tb = pq.read_table(path_a), pq.read_table(path_b)
    ia = json.loads((ta.schema.metadata or {}).get(FRAME_META, b"{}"))
    ib = json.loads((tb.schema.metadata or {}).get(FRAME_META, b"{}"))
    for field in sorted(set(ia) | set(ib)):
        if ia.get(field) != ib.get(field):
            diffs.add(f"frame {field}: {ia.get(field)!r} vs {ib.get(field)!r}")
    if ta.schema.names != tb.schema.names or ta.num_rows != tb.num_rows:
        diffs.add(f"shape: {ta.num_rows} rows {ta.schema.names} vs {tb.num_rows} rows {tb.schema.names}")
        return
    for name in ta.schema.names:
        ca, cb = ta.column(name), tb.column(name)
        label = name
        if name.startswith("c") and name[1:].isdigit() and int(name[1:]) < len(ia.get("columns", [])):
            label = ia["columns"][int(name[1:])]
        if ca.type != cb.type:
            diffs.add(f"column {label}: arrow type {ca.type} vs {cb.type}")
            continue
        na = np.asarray(ca.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        nb = np.asarray(cb.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if (na != nb).any():
            diffs.add(f"column {label}: nulls at rows {np.flatnonzero(na != nb)[:5].tolist()} differ")
            continue
        if pa.types.is_floating(ca.type) or pa.types.is_integer(ca.type) or pa.types.is_boolean(ca.type):
            va = ca.to_numpy(zero_copy_only=False)
            vb = cb.to_numpy(zero_copy_only=False)
            if pa.types.is_floating(ca.type):
                va, vb = np.where(na, 0.0, va).astype(va.dtype), np.where(nb, 0.0, vb).astype(vb.dtype)
            compare_arrays(np.asarray(va), np.asarray(vb), f"column {label} row", diffs)
        else:
            la, lb = ca.to_pylist(), cb.to_pylist()
            bad = [i for i, (x, y) in enumerate(zip(la, lb)) if x != y]
            for i in bad[: Differences.LIMIT]:
                diffs.add(f"column {label} row {i}: {la[i]!r} vs {lb[i]!r}")
            diffs.count += max(0, len(bad) - Differences.LIMIT)


def _flatten_json(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {f"{prefix}.__keys__": list(value)}
        for k, v in value.items():
            out.update(_flatten_json(v, f"{prefix}/{k}"))
        return out
    if isinstance(value, list):
        out = {f"{prefix}.__len__": len(value)}
        for i, v in enumerate(value):
            out.update(_flatten_json(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value.partition(":")[0] in ("float", "float64", "float32", "int", "int64"):
        try:
            return float(value.partition(":")[2])
        except ValueError:
            return None
    return None


def compare_json(path_a: Path, path_b: Path, diffs: Differences) -> None:
    fa = _flatten_json(json.loads(path_a.read_text(encoding="utf-8")))
    fb = _flatten_json(json.loads(path_b.read_text(encoding="utf-8")))
    for key in list(fa) + [k for k in fb if k not in fa]:
        if key not in fa or key not in fb:
            diffs.add(f"{key}: only in {'B' if key not in fa else 'A'}")
            continue
        x, y = fa[key], fb[key]
        same = x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))
        if not same:
            diffs.add(f"{key}: {x!r} vs {y!r}")
            fx, fy = _as_float(x), _as_float(y)
            if fx is not None and fy is not None:
                diffs.numbers(np.array([fx]), np.array([fy]))


def compare_text(path_a: Path, path_b: Path, diffs: Differences) -> None:
    la = path_a.read_text(encoding="utf-8").splitlines()
    lb = path_b.read_text(encoding="utf-8").splitlines()
    if len(la) != len(lb):
        diffs.add(f"{len(la)} lines vs {len(lb)} lines")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x == y:
            continue
        cells_x, cells_y = x.split(","), y.split(",")
        for j, (cx, cy) in enumerate(zip(cells_x, cells_y)):
            if cx != cy:
                diffs.add(f"line {i + 1} field {j + 1}: {cx!r} vs {cy!r}")
                try:
                    diffs.numbers(np.array([float(cx)]), np.array([float(cy)]))
                except ValueError:
                    pass
        if len(cells_x) != len(cells_y):
            diffs.add(f"line {i + 1}: {len(cells_x)} fields vs {len(cells_y)}")


def compare_file(path_a: Path, path_b: Path) -> Differences:
    diffs = Differences()
    if path_a.read_bytes() == path_b.read_bytes():
        return diffs
    name = path_a.name
    try:
        if name.endswith(".parquet"):
            compare_parquet(path_a, path_b, diffs)
        elif name.endswith(".npy"):
            compare_arrays(np.load(path_a, allow_pickle=False), np.load(path_b, allow_pickle=False), "array", diffs)
        elif name.endswith(".json"):
            compare_json(path_a, path_b, diffs)
        else:
            compare_text(path_a, path_b, diffs)
    except Exception as exc:  # an unreadable file is a difference, not a crash
        diffs.add(f"could not compare: {type(exc).__name__}: {exc}")
    if diffs.count == 0 and not name.endswith((".parquet", ".npy")):
        diffs.add("bytes differ")  # text and JSON must be byte-identical (formatting included)
    return diffs


def compare(dir_a: Path, dir_b: Path) -> int:
    """Compare every file of two recordings; 0 when all are identical and none is missing."""
    for d in (dir_a, dir_b):
        if not d.is_dir():
            raise SystemExit(f"{d} is not a folder")
    files_a = {p.relative_to(dir_a) for p in dir_a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(dir_b) for p in dir_b.rglob("*") if p.is_file()}
    only_a, only_b = sorted(files_a - files_b), sorted(files_b - files_a)
    common = sorted(files_a & files_b)
    differing: list[tuple[Path, Differences]] = []
    for rel in common:
        diffs = compare_file(dir_a / rel, dir_b / rel)
        if diffs.count:
            differing.append((rel, diffs))
    print(f"compared {len(common)} files: {len(common) - len(differing)} identical, {len(differing)} differing; "
          f"{len(only_a)} only in A ({dir_a}), {len(only_b)} only in B ({dir_b})")
    for label, missing in (("only in A", only_a), ("only in B", only_b)):
        for rel in missing[:20]:
            print(f"  {label}: {rel}")
        if len(missing) > 20:
            print(f"  … and {len(missing) - 20} more {label}")
    for rel, diffs in differing:
        print(f"DIFFERS {rel}: {diffs.count} difference(s); max abs {diffs.max_abs:.6g}, max rel {diffs.max_rel:.6g}")
        for item in diffs.items:
            print(f"    {item}")
    ok = not (differing or only_a or only_b)
    print("IDENTICAL" if ok else "NOT IDENTICAL")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="write the golden outputs into OUTDIR")
    rec.add_argument("outdir", type=Path)
    cmp_ = sub.add_parser("compare", help="compare two recordings bit for bit")
    cmp_.add_argument("dir_a", type=Path)
    cmp_.add_argument("dir_b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "record":
        return record(args.outdir)
    return compare(args.dir_a, args.dir_b)


if __name__ == "__main__":
    sys.exit(main())
