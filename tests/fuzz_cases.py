"""Hypothesis strategies that draw bad prediction files, shared by
``tests/data/test_reading_fuzz.py`` and ``tests/app/test_data_fuzz.py``.

Every strategy draws a :class:`Case`: the bytes of a CSV / TSV / Parquet file (in some text encoding) with one kind
of defect, and what the loader must make of it — either a successful load that keeps exactly ``kept`` (1-based data
row numbers) out of ``n_read`` rows, or an ``InputError`` whose message contains every string of ``words`` (the
file name and "What to do" are required of every message).  ``expect="any"`` (binary garbage) accepts either
outcome but still no other exception.  ``CATEGORIES`` maps category → strategy; ``COUNTS`` counts the cases checked.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

import calib_core as cc
from calib_core.data.columns import MAX_COLUMNS

COUNTS: Counter[str] = Counter()
"""Cases checked per category (filled by :func:`check_load`; read by the totals test)."""

PANDAS_NA = {"", "#n/a", "#n/a n/a", "#na", "-1.#ind", "-1.#qnan", "-nan", "1.#ind", "1.#qnan", "<na>", "n/a", "na",
             "null", "nan", "none"}


@dataclass
class Case:
    """One generated file and the outcome the loader must produce."""

    category: str
    name: str
    data: bytes
    expect: str  # "load" | "error" | "any"
    words: tuple[str, ...] = ()
    kept: np.ndarray | None = None
    n_read: int | None = None
    load_kwargs: dict[str, Any] = field(default_factory=dict)
    drop_words: tuple[str, ...] = ()  # every drop reason must contain one of these
    note: str = ""
    app_words: tuple[str, ...] | None = None  # words of the message as the Data page shows it, if they differ

    def __repr__(self) -> str:  # hypothesis prints failing examples: keep it readable
        head = self.data[:160]
        return (f"Case({self.category}, {self.name}, expect={self.expect}, words={self.words}, "
                f"kwargs={self.load_kwargs}, note={self.note!r}, {len(self.data)} bytes: {head!r})")


def rows_outcome(category: str, name: str, data: bytes, keep: np.ndarray, reason_words: tuple[str, ...],
                 note: str = "", **kw: Any) -> Case:
    """Rows failing a check are dropped and counted; fewer than 2 left → InputError naming counts."""
    keep = np.asarray(keep, dtype=bool)
    n = keep.size
    kept = np.flatnonzero(keep) + 1
    if kept.size >= 2:
        return Case(category, name, data, "load", kept=kept, n_read=n, drop_words=reason_words, note=note, **kw)
    return Case(category, name, data, "error", words=(f"only {kept.size} of {n} row(s) are valid", "at least 2"),
                note=note, **kw)


# ------------------------------------------------------------------------------------------------ serialising
FORMATS = ("csv", "tsv", "parquet")
EXT = {"csv": ".csv", "tsv": ".tsv", "parquet": ".parquet"}


def to_bytes(frame: pd.DataFrame, fmt: str, *, na_rep: str = "", encoding: str = "utf-8") -> bytes:
    """CSV / TSV text (pandas' writer, ``na_rep`` for NaN) or Parquet; mixed object columns become strings."""
    if fmt == "parquet":
        frame = frame.copy()
        for c in frame.columns:
            if frame[c].dtype == object:
                frame[c] = [None if (isinstance(v, float) and np.isnan(v)) else str(v) for v in frame[c]]
        arrays = [pa.array(frame[c].tolist()) if frame[c].dtype == object else pa.array(frame[c].to_numpy())
                  for c in frame.columns]
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_arrays(arrays, names=[str(c) for c in frame.columns]), buf)
        return buf.getvalue()
    sep = "\t" if fmt == "tsv" else ","
    return frame.to_csv(index=False, sep=sep, na_rep=na_rep).encode(encoding)


@st.composite
def file_format(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(FORMATS))


def _name(draw: st.DrawFn, stem: str, fmt: str) -> str:
    return f"{stem}_{draw(st.integers(0, 999))}{EXT[fmt]}"


# ------------------------------------------------------------------------------------------------ valid bases
Y_NAMES = ("y", "y_true", "target", "obs", "Y_True")
MEAN_NAMES = ("mean", "y_pred", "mu", "prediction", "Mean")
STD_NAMES = ("std", "sigma", "uncertainty", "SD")
LABEL_NAMES = ("label", "true_label", "class", "y_true")
SCORE_PREFIX = ("prob_", "proba_", "probability_")


@st.composite
def regression_frame(draw: st.DrawFn, min_rows: int = 2, max_rows: int = 30) -> tuple[pd.DataFrame, dict[str, str]]:
    """A valid Gaussian (y, mean, std) table, sometimes with a split and a feature column."""
    n = draw(st.integers(min_rows, max_rows))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    names = {"y": draw(st.sampled_from(Y_NAMES)), "mean": draw(st.sampled_from(MEAN_NAMES)),
             "std": draw(st.sampled_from(STD_NAMES))}
    scale = draw(st.sampled_from([1e-6, 1.0, 1e4]))
    mean = rng.normal(size=n) * scale
    std = rng.uniform(0.1, 3.0, n) * scale
    frame = pd.DataFrame({names["y"]: mean + std * rng.normal(size=n), names["mean"]: mean, names["std"]: std})
    if draw(st.booleans()):
        frame["split"] = np.where(np.arange(n) % 2 == 0, "cal", "test")
    if draw(st.booleans()):
        frame["x1"] = rng.uniform(size=n)
    return frame, names


@st.composite
def classification_frame(draw: st.DrawFn, min_rows: int = 2, max_rows: int = 30, min_k: int = 2,
                         max_k: int = 6) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A valid label + prob_0 … prob_{K−1} table (rows rounded to 8 decimals, sums within the tolerance)."""
    n = draw(st.integers(min_rows, max_rows))
    k = draw(st.integers(min_k, max_k))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    label = draw(st.sampled_from(LABEL_NAMES))
    prefix = draw(st.sampled_from(SCORE_PREFIX))
    p = np.round(rng.dirichlet(np.ones(k), size=n), 8)
    frame = pd.DataFrame({label: rng.integers(0, k, n)})
    for j in range(k):
        frame[f"{prefix}{j}"] = p[:, j]
    return frame, {"label": label, "scores": [f"{prefix}{j}" for j in range(k)], "k": k}


def _frame(draw: st.DrawFn, task: str | None, min_rows: int = 2, max_rows: int = 30) -> st.SearchStrategy:
    """The regression or classification base strategy (``task`` None: drawn)."""
    task = task or draw(st.sampled_from(TASKS))
    return regression_frame(min_rows, max_rows) if task == "regression" else classification_frame(min_rows, max_rows)


# ------------------------------------------------------------------------------------------------ categories
TASKS = ("regression", "classification")
VARIANTS: dict[str, tuple[str, ...]] = {
    "missing_column": ("reg_y", "reg_mean", "reg_std", "cls_label", "cls_scores"),
    "duplicate_columns": TASKS,
    "text_in_numeric": TASKS,
    "nan_inf": FORMATS + ("parquet_strings",),
    "sigma_nonpositive": ("std", "var"),
    "quantiles_out_of_order": FORMATS,
    "probabilities_out_of_range": ("multiclass", "binary"),
    "probabilities_not_summing_to_one": ("refused", "renormalize"),
    "labels_out_of_range": ("out_of_range", "one_based"),
    "k_mismatch": ("dropped_column", "logits", "classes_mapping"),
    "empty_file": ("nothing", "whitespace", "bom", "utf16_bom", "comments", "header_only", "parquet_no_rows",
                   "parquet_no_columns", "gzip_empty"),
    "one_row": TASKS,
    "fewer_rows_than_bins": TASKS,
    "wrong_delimiter": ("unsupported", "data_differs", "decimal_comma"),
    "encoding": ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig", "latin-1", "cp1252"),
    "binary_garbage": ("random", "truncated_parquet", "truncated_gzip", "corrupted_parquet", "corrupted_gzip",
                       "csv_with_garbage"),
    "huge_column_count": FORMATS,
    "parquet_pandas_metadata": TASKS,
    "npz_archives": ("object_array", "ragged", "three_d", "valid", "corrupted"),
}
"""Sub-kinds of each category; the loader test runs each one with its own example budget."""
@st.composite
def missing_column(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    variant = variant or draw(st.sampled_from(VARIANTS["missing_column"]))
    if variant.startswith("reg_"):
        frame, names = draw(regression_frame())
        role = variant[4:]
        frame = frame.drop(columns=[names[role]])
        name = _name(draw, f"missing_{role}", fmt)
        if role == "std":  # no uncertainty: a valid point-prediction file
            return Case("missing_column", name, to_bytes(frame, fmt), "load", kept=np.arange(1, len(frame) + 1),
                        n_read=len(frame), note="point layout")
        words = ("no target column" if role == "y" else "no prediction column",
                 *(f"{c}" for c in frame.columns), "columns are:")
        return Case("missing_column", name, to_bytes(frame, fmt), "error", words=words)
    frame, info = draw(classification_frame())
    if variant == "cls_label":
        frame = frame.drop(columns=[info["label"]])
        what = "no label column found"
    else:
        frame = frame.drop(columns=info["scores"])
        frame["fold"] = "test"  # something besides the label
        what = "found"  # regression 'no prediction/target column found' (nothing says it is classification)
    name = _name(draw, "missing_cls", fmt)
    return Case("missing_column", name, to_bytes(frame, fmt), "error",
                words=(what, "columns are:", *map(str, frame.columns)))


@st.composite
def duplicate_columns(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    frame, _ = draw(_frame(draw, variant))
    cols = [str(c) for c in frame.columns]
    i = draw(st.integers(0, len(cols) - 1))
    dup = draw(st.sampled_from([cols[i], cols[i].upper(), cols[i].lower(), f" {cols[i]}", cols[i].title()]))
    j = draw(st.integers(0, len(cols)))
    arrays = [frame[c].to_numpy() for c in cols]
    arrays.insert(j, frame[cols[i]].to_numpy()[::-1].copy())
    names = cols[:j] + [dup] + cols[j:]
    if fmt == "parquet":
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_arrays([pa.array(a) for a in arrays], names=names), buf)
        data = buf.getvalue()
    else:
        wide = pd.DataFrame(dict(zip(range(len(names)), arrays)))
        wide.columns = names
        data = to_bytes(wide, fmt)
    return Case("duplicate_columns", _name(draw, "dup", fmt), data, "error",
                words=("duplicate column names", repr(cols[i])))


_TEXT_ALPHABET = "abcdefxyzQWéσ?!@$%&*()[]{}/:~^"


def _is_text(s: str) -> bool:
    if s.strip().lower() in PANDAS_NA or s != s.strip():
        return False
    try:
        float(s)
    except ValueError:
        return True
    return False


TEXT_CELL = st.text(alphabet=_TEXT_ALPHABET, min_size=1, max_size=10).filter(_is_text)


@st.composite
def text_in_numeric(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    if (variant or draw(st.sampled_from(TASKS))) == "regression":
        frame, names = draw(regression_frame())
        col = names[draw(st.sampled_from(["y", "mean", "std"]))]
    else:
        frame, info = draw(classification_frame())
        col = draw(st.sampled_from(info["scores"]))
    n = len(frame)
    rows = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=min(n, 5))))
    tokens = [draw(TEXT_CELL) for _ in rows]
    values = frame[col].astype(object).to_numpy().copy()
    for r, t in zip(rows, tokens):
        values[r] = t
    frame[col] = values
    first = f"row {rows[0] + 1}: {tokens[0][:20]!r}"
    return Case("text_in_numeric", _name(draw, "text", fmt), to_bytes(frame, fmt), "error",
                words=(f"column {col!r}", "non-numeric", f"in {len(rows)} row(s)", first))


@st.composite
def nan_inf(draw: st.DrawFn, variant: str | None = None) -> Case:
    """Missing / ±inf cells in used columns: those rows are dropped and counted."""
    fmt = variant or draw(st.sampled_from(VARIANTS["nan_inf"]))
    regression = draw(st.booleans())
    if regression:
        frame, names = draw(regression_frame())
        cols = list(names.values())
    else:
        frame, info = draw(classification_frame())
        cols = [info["label"], *info["scores"]]
    n = len(frame)
    cells = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(cols),
                                    st.sampled_from([np.nan, np.inf, -np.inf])), min_size=1, max_size=2 * n))
    frame = frame.astype({c: float for c in cols})
    bad = np.zeros(n, dtype=bool)
    for r, c, v in cells:
        if not regression and c == cols[0]:
            v = np.nan  # an infinite class label is not a missing value but an unknown class
        frame.loc[r, c] = v
        bad[r] = True
    na_rep = draw(st.sampled_from(["", "nan", "NaN", "NA", "null", "N/A"]))
    if fmt == "parquet_strings":  # numbers stored as text (some exporters do this), NA spelled out
        strings = frame.copy()
        for c in cols if regression else cols[1:]:  # class labels stay numbers
            strings[c] = [na_rep if np.isnan(v) else repr(float(v)) for v in frame[c]]
        data, fmt = to_bytes(strings, "parquet"), "parquet"
    else:
        data = to_bytes(frame, fmt, na_rep=na_rep)
    words = ("missing value", "infinite value", "σ < 0")
    return rows_outcome("nan_inf", _name(draw, "nan", fmt), data, ~bad, words, note=f"na_rep={na_rep!r}")


@st.composite
def sigma_nonpositive(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    frame, names = draw(regression_frame())
    kind = variant or draw(st.sampled_from(VARIANTS["sigma_nonpositive"]))
    col = names["std"]
    if kind == "var":
        frame = frame.rename(columns={col: "variance"})
        col = "variance"
        frame[col] = frame[col] ** 2
    n = len(frame)
    rows = draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n))
    values = frame[col].to_numpy().copy()
    for r in rows:
        values[r] = draw(st.sampled_from([0.0, -0.0, -1e-12, -1.0, -1e6]))
    frame[col] = values
    keep = values > 0
    what = "σ" if kind == "std" else "variance"
    case = rows_outcome("sigma_nonpositive", _name(draw, "sigma", fmt), to_bytes(frame, fmt), keep,
                        (f"{col}: {what} = 0", f"{col}: {what} < 0"))
    if case.expect == "error":  # the count of each reason is named
        zero, neg = int((values == 0).sum()), int((values < 0).sum())
        case.words += tuple(f"{col}: {what} {op} 0: {c}" for op, c in (("=", zero), ("<", neg)) if c)
    return case


LEVELS = (0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975)


def _quantile_name(level: float, style: int) -> str:
    pct = level * 100
    return [f"q{level:g}", f"quantile_{level:g}", f"q{pct:g}" if pct >= 1 else f"q{level:g}"][style]


@st.composite
def quantiles_out_of_order(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = variant or draw(file_format())
    n = draw(st.integers(2, 30))
    levels = sorted(draw(st.sets(st.sampled_from(LEVELS), min_size=2, max_size=5)))
    style = draw(st.integers(0, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    center = rng.normal(size=n)
    offsets = np.sort(rng.uniform(0.01, 1.0, (n, len(levels))), axis=1).cumsum(axis=1)
    q = center[:, None] + offsets
    crossing = np.zeros(n, dtype=bool)
    crossing[list(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n)))] = True
    q[crossing] = q[crossing][:, ::-1]
    names = [_quantile_name(lev, style) for lev in levels]
    frame = pd.DataFrame({"y_true": center + rng.normal(size=n)})
    order = draw(st.permutations(range(len(levels))))  # file column order need not follow the levels
    for j in order:
        frame[names[j]] = q[:, j]
    name = _name(draw, "quant", fmt)
    if not draw(st.booleans()):  # the default, crossing="rearrange": every row kept, the crossing ones sorted
        return rows_outcome("quantiles_out_of_order", name, to_bytes(frame, fmt), np.ones(n, dtype=bool), ("crossing",),
                            note="rearranged")
    drop = {"crossing": "drop"}  # crossing rows dropped and counted; all crossing → InputError
    if crossing.all():
        return Case("quantiles_out_of_order", name, to_bytes(frame, fmt), "error", load_kwargs=drop,
                    words=("decrease with the level", f"rows {np.flatnonzero(crossing)[0] + 1}"))
    return rows_outcome("quantiles_out_of_order", name, to_bytes(frame, fmt), ~crossing, ("crossing",),
                        load_kwargs=drop)


@st.composite
def probabilities_out_of_range(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    frame, info = draw(classification_frame())
    binary = (variant or draw(st.sampled_from(VARIANTS["probabilities_out_of_range"]))) == "binary"
    scores = info["scores"]
    if binary:  # one column: P(positive), labels 0/1
        frame = pd.DataFrame({info["label"]: frame[info["label"]] % 2, "prob": frame[scores[0]]})
        scores = ["prob"]
    n = len(frame)
    rows = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n)))
    for r in rows:
        c = draw(st.sampled_from(scores))
        frame.loc[r, c] = draw(st.one_of(st.floats(-5, -1e-3), st.floats(1.001, 5)))
    name = _name(draw, "prange", fmt)
    bad = np.zeros(n, dtype=bool)
    bad[rows] = True
    if len(rows) > 0.5 * n:
        return Case("probabilities_out_of_range", name, to_bytes(frame, fmt), "error",
                    words=("outside [0, 1]", *scores[:20], f"{len(rows)} of {n} rows"))
    return rows_outcome("probabilities_out_of_range", name, to_bytes(frame, fmt), ~bad, ("outside [0, 1]",))


@st.composite
def probabilities_not_summing_to_one(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    frame, info = draw(classification_frame())
    n = len(frame)
    rows = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n)))
    factor = draw(st.floats(0.05, 0.9))
    frame.loc[rows, info["scores"]] = frame.loc[rows, info["scores"]] * factor
    name = _name(draw, "psum", fmt)
    data = to_bytes(frame, fmt)
    variant = variant or draw(st.sampled_from(VARIANTS["probabilities_not_summing_to_one"]))
    if variant == "renormalize":  # the explicit opt-in divides rows by their sums
        return Case("probabilities_not_summing_to_one", name, data, "load", kept=np.arange(1, n + 1), n_read=n,
                    load_kwargs={"renormalize": True}, note="renormalize=True")
    return Case("probabilities_not_summing_to_one", name, data, "error",
                words=(f"{len(rows)} row(s)", "do not sum to 1", f"rows {rows[0] + 1}", "renormalize=True"),
                app_words=(f"{len(rows)} row(s)", "do not sum to 1", f"rows {rows[0] + 1}",
                           "tick 'Renormalise probability rows that do not sum to 1'"))


@st.composite
def labels_out_of_range(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    frame, info = draw(classification_frame())
    k, label = info["k"], info["label"]
    n = len(frame)
    labels = frame[label].to_numpy().copy()
    if (variant or draw(st.sampled_from(VARIANTS["labels_out_of_range"]))) == "one_based":
        labels = labels + 1
        labels[draw(st.integers(0, n - 1))] = k
        extra = ("1-based",)
    else:
        rows = draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n))
        for r in rows:
            labels[r] = draw(st.one_of(st.integers(k, k + 100), st.integers(-100, -1)))
        extra = ()
    frame[label] = labels
    first = int(np.flatnonzero((labels < 0) | (labels >= k))[0]) + 1
    return Case("labels_out_of_range", _name(draw, "labels", fmt), to_bytes(frame, fmt), "error",
                words=(f"column {label!r}", "not among the", f"{k} classes", f"rows {first}", *extra))


@st.composite
def k_mismatch(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    frame, info = draw(classification_frame(min_k=3))
    k, label, scores = info["k"], info["label"], info["scores"]
    variant = variant or draw(st.sampled_from(VARIANTS["k_mismatch"]))
    name = _name(draw, "kmis", fmt)
    if variant == "classes_mapping":
        classes = [f"c{j}" for j in range(k + draw(st.sampled_from([-1, 1, 2])))]
        return Case("k_mismatch", name, to_bytes(frame, fmt), "error", load_kwargs={"columns": {"classes": classes}},
                    words=(f"lists {len(classes)} names but there are {k}",))
    frame.loc[draw(st.integers(0, len(frame) - 1)), label] = k - 1  # the class whose column goes missing
    first = int(np.flatnonzero(frame[label].to_numpy() == k - 1)[0]) + 1
    p = frame[scores[:-1]].to_numpy()
    p = p / np.where(p.sum(axis=1, keepdims=True) > 0, p.sum(axis=1, keepdims=True), 1.0)
    p[p.sum(axis=1) == 0] = 1.0 / (k - 1)
    frame = frame.drop(columns=scores)
    stem = "logit_" if variant == "logits" else "prob_"
    for j in range(k - 1):
        frame[f"{stem}{j}"] = np.log(p[:, j] + 1e-9) if variant == "logits" else p[:, j]
    return Case("k_mismatch", name, to_bytes(frame, fmt), "error",
                words=(f"column {label!r}", f"not among the {k - 1} classes", ("K mismatch", "1-based"),
                       f"rows {first}"))


@st.composite
def empty_file(draw: st.DrawFn, variant: str | None = None) -> Case:
    variant = variant or draw(st.sampled_from(VARIANTS["empty_file"]))
    header = draw(st.sampled_from(["y_true,mean,std", "label,prob_0,prob_1", "y\tmean\tstd"]))
    ws = draw(st.text(alphabet=" \t\r\n", max_size=20))
    if variant == "nothing":
        data, words = b"", ("is empty",)
    elif variant == "whitespace":
        data, words = (ws + " ").encode(), ("is empty",)
    elif variant == "bom":
        data, words = b"\xef\xbb\xbf" + ws.encode(), ("is empty",)
    elif variant == "utf16_bom":
        data, words = (("\ufeff" + ws).encode("utf-16-le")), ("is empty",)
    elif variant == "comments":
        data = "".join(f"# {draw(st.text(alphabet='abc xyz', max_size=10))}\n" for _ in range(draw(st.integers(1, 4))))
        data, words = (data + ws).encode(), ("only comment lines",)
    elif variant == "header_only":
        data, words = (header + draw(st.sampled_from(["", "\n", "\r\n", "\n\n"]))).encode(), ("no data rows",)
    elif variant == "parquet_no_rows":
        buf = io.BytesIO()
        pd.DataFrame({c: pd.Series([], dtype=float) for c in header.replace("\t", ",").split(",")}).to_parquet(buf)
        data, words = buf.getvalue(), ("no data rows",)
    elif variant == "parquet_no_columns":
        buf = io.BytesIO()
        pq.write_table(pa.table({}), buf)
        data, words = buf.getvalue(), ("has no columns",)
    else:
        import gzip

        data, words = gzip.compress(ws.encode()), ("is empty",)
    return Case("empty_file", f"empty_{variant}.{'parquet' if 'parquet' in variant else 'csv'}", data, "error",
                words=words)


@st.composite
def one_row(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    frame, _ = draw(_frame(draw, variant, 1, 1))
    return Case("one_row", _name(draw, "one", fmt), to_bytes(frame, fmt), "error",
                words=("the file has 1 data row(s)", "at least 2"))  # nothing dropped: said as the file's size


@st.composite
def fewer_rows_than_bins(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = draw(file_format())
    frame, _ = draw(_frame(draw, variant, 2, 9))
    n = len(frame)
    return Case("fewer_rows_than_bins", _name(draw, "few", fmt), to_bytes(frame, fmt), "load",
                kept=np.arange(1, n + 1), n_read=n, note="diagnose with the default bins")


@st.composite
def wrong_delimiter(draw: st.DrawFn, variant: str | None = None) -> Case:
    frame, _ = draw(_frame(draw, None, 2, 20))
    variant = variant or draw(st.sampled_from(VARIANTS["wrong_delimiter"]))
    name = _name(draw, f"delim_{variant}", "csv")
    if variant == "unsupported":
        sep = draw(st.sampled_from([":", "^", "~", "/", "!"]))
        text = frame.to_csv(index=False, sep=sep)
        return Case("wrong_delimiter", name, text.encode(), "error", words=("everything is in one column",))
    if variant == "data_differs":  # header written with one delimiter, the data rows with another
        hsep, dsep = draw(st.sampled_from([(",", ";"), (",", "|"), ("\t", ","), (";", ","), (",", "\t")]))
        lines = frame.to_csv(index=False, sep=dsep).splitlines()
        text = hsep.join(map(str, frame.columns)) + "\n" + "\n".join(lines[1:]) + "\n"
        return Case("wrong_delimiter", name, text.encode(), "error", words=("mixed delimiters",))
    num = frame.select_dtypes("float")
    text = ",".join(map(str, num.columns)) + "\n" + "\n".join(
        ",".join(f"{v:.3f}".replace(".", ",") for v in row) for row in num.to_numpy()) + "\n"
    return Case("wrong_delimiter", name, text.encode(), "error",
                words=("fields but the header has", "decimal comma"))


NON_ASCII = {"latin-1": ["Zürich", "Genève", "Ærøskøbing", "São Paulo", "naïve", "Málaga"],
             "cp1252": ["€ zone", "œuvre", "Zürich", "«quoted»"],
             "utf": ["Zürich", "Σ-group", "東京", "Ærø", "€ zone"]}


@st.composite
def encodings(draw: st.DrawFn, variant: str | None = None) -> Case:
    """Valid files in UTF-16/32 (with and without BOM), UTF-8 with BOM, Latin-1 and Windows-1252."""
    enc = variant or draw(st.sampled_from(VARIANTS["encoding"]))
    frame, _ = draw(_frame(draw, None))
    words = NON_ASCII["utf" if enc.startswith("utf") else enc]
    frame["group"] = [words[i % len(words)] for i in draw(st.lists(st.integers(0, 50), min_size=len(frame),
                                                                     max_size=len(frame)))]
    sep = draw(st.sampled_from([",", "\t", ";"]))
    text = frame.to_csv(index=False, sep=sep)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    n = len(frame)
    case = Case("encoding", f"enc_{enc}_{draw(st.integers(0, 999))}.csv", text.encode(enc), "load",
                kept=np.arange(1, n + 1), n_read=n, note=enc)
    case.expected_group = frame["group"].tolist()  # type: ignore[attr-defined]
    return case


MAGICS = (b"", b"PAR1", b"PK\x03\x04", b"\x1f\x8b\x08\x00", b"\x80\x04\x95", b"\x93NUMPY",
          b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf", b"\x00\x00\xfe\xff")


@st.composite
def binary_garbage(draw: st.DrawFn, variant: str | None = None) -> Case:
    """Random bytes behind file-type magic numbers, truncated Parquet/gzip, garbage inside a valid CSV."""
    variant = variant or draw(st.sampled_from(VARIANTS["binary_garbage"]))
    junk = draw(st.binary(min_size=1, max_size=1500))
    if variant == "random":
        data = draw(st.sampled_from(MAGICS)) + junk
    else:
        frame, _ = draw(_frame(draw, None))
        if variant == "truncated_parquet":
            full = to_bytes(frame, "parquet")
            data = full[: draw(st.integers(4, len(full) - 1))]
        elif variant == "truncated_gzip":
            import gzip

            full = gzip.compress(to_bytes(frame, "csv"))
            data = full[: draw(st.integers(2, len(full) - 1))]
        elif variant in ("corrupted_parquet", "corrupted_gzip"):
            import gzip

            full = bytearray(to_bytes(frame, "parquet") if variant == "corrupted_parquet"
                             else gzip.compress(to_bytes(frame, "csv")))
            for _ in range(draw(st.integers(1, 6))):  # flip bytes behind the magic number
                full[draw(st.integers(4, len(full) - 1))] = draw(st.integers(0, 255))
            data = bytes(full)
        else:
            text = to_bytes(frame, "csv")
            at = draw(st.integers(0, len(text)))
            data = text[:at] + junk + text[at:]
    return Case("binary_garbage", f"garbage_{variant}_{draw(st.integers(0, 999))}.csv", data, "any", note=variant)


@st.composite
def huge_column_count(draw: st.DrawFn, variant: str | None = None) -> Case:
    fmt = variant or draw(file_format())
    extra = draw(st.integers(MAX_COLUMNS - 3, MAX_COLUMNS + 40))
    names = ["y_true", "mean", "std"] + [f"c{i}" for i in range(extra)]
    n_cols = len(names)
    if fmt == "parquet":
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_arrays([pa.array([1.0, 2.0])] * n_cols, names=names), buf)
        data = buf.getvalue()
    else:
        sep = "\t" if fmt == "tsv" else ","
        data = (sep.join(names) + "\n" + (sep.join(["1.5"] * n_cols) + "\n") * 2).encode()
    name = _name(draw, "wide", fmt)
    if n_cols <= MAX_COLUMNS:
        return Case("huge_column_count", name, data, "load", kept=np.array([1, 2]), n_read=2, note=f"{n_cols} columns")
    return Case("huge_column_count", name, data, "error",
                words=(f"has {n_cols:,} columns", f"more than the limit of {MAX_COLUMNS:,}"))


@st.composite
def npz_archives(draw: st.DrawFn, variant: str | None = None) -> Case:
    """.npz archives (read with allow_pickle=False): object arrays, ragged lengths, 3-D only, and valid ones."""
    variant = variant or draw(st.sampled_from(VARIANTS["npz_archives"]))
    frame, info = draw(classification_frame())
    n = len(frame)
    probs = frame[info["scores"]].to_numpy()
    labels = frame[info["label"]].to_numpy().astype(np.int64)
    arrays: dict[str, np.ndarray]
    if variant == "object_array":
        arrays, words = {"probs": probs.astype(object), "labels": labels}, ("could not be read without pickle",)
    elif variant == "ragged":
        cut = draw(st.integers(0, n - 1))
        arrays, words = {"probs": probs, "labels": labels[:cut]}, ("different lengths", "'labels'")
    elif variant == "three_d":
        arrays, words = {"probs": probs[:, :, None]}, ("no 1-D or 2-D arrays",)
    else:
        arrays, words = {"probs": probs, "labels": labels}, ()
    buf = io.BytesIO()
    (np.savez_compressed if variant == "corrupted" else np.savez)(buf, **arrays)
    name = f"npz_{variant}_{draw(st.integers(0, 999))}.npz"
    if variant == "corrupted":  # deflate streams, .npy headers and zip directory with flipped bytes or cut short
        data = bytearray(buf.getvalue())
        for _ in range(draw(st.integers(1, 6))):
            data[draw(st.integers(4, len(data) - 1))] = draw(st.integers(0, 255))
        data = data[: draw(st.integers(len(data) // 2, len(data)))]
        return Case("npz_archives", name, bytes(data), "any", note="corrupted")
    if variant == "valid":
        return Case("npz_archives", name, buf.getvalue(), "load", kept=np.arange(1, n + 1), n_read=n)
    return Case("npz_archives", name, buf.getvalue(), "error", words=words)


_META_KEYS = ("columns", "index_columns", "column_indexes", "name", "field_name", "pandas_type", "numpy_type",
              "metadata", "kind", "start", "stop", "step", "encoding", "pandas_version", "attributes")
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["y_true", "std", "range", "float64", "object",
                                                                     "categorical", "datetimetz", "nope", ""]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(_META_KEYS), inner, max_size=5),
    max_leaves=12,
)


@st.composite
def parquet_pandas_metadata(draw: st.DrawFn, variant: str | None = None) -> Case:
    """Parquet whose 'pandas' schema metadata is malformed (hand-made or hostile): the columns still load."""
    import json

    frame, _ = draw(_frame(draw, variant))
    variant = variant or "json"
    if draw(st.integers(0, 4)) == 0:
        meta = draw(st.binary(max_size=40))  # not even JSON
    else:
        meta = json.dumps(draw(JSON_VALUES)).encode()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({b"pandas": meta})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    n = len(frame)
    return Case("parquet_pandas_metadata", f"meta_{draw(st.integers(0, 999))}.parquet", buf.getvalue(), "load",
                kept=np.arange(1, n + 1), n_read=n, note=meta[:60].decode("latin-1"))


STRATEGIES = {
    "missing_column": missing_column,
    "duplicate_columns": duplicate_columns,
    "text_in_numeric": text_in_numeric,
    "nan_inf": nan_inf,
    "sigma_nonpositive": sigma_nonpositive,
    "quantiles_out_of_order": quantiles_out_of_order,
    "probabilities_out_of_range": probabilities_out_of_range,
    "probabilities_not_summing_to_one": probabilities_not_summing_to_one,
    "labels_out_of_range": labels_out_of_range,
    "k_mismatch": k_mismatch,
    "empty_file": empty_file,
    "one_row": one_row,
    "fewer_rows_than_bins": fewer_rows_than_bins,
    "wrong_delimiter": wrong_delimiter,
    "encoding": encodings,
    "binary_garbage": binary_garbage,
    "huge_column_count": huge_column_count,
    "parquet_pandas_metadata": parquet_pandas_metadata,
    "npz_archives": npz_archives,
}


CATEGORIES = {name: make() for name, make in STRATEGIES.items()}
"""Category → strategy drawing its variants too (used by the app test)."""


def strategy(category: str, variant: str | None = None) -> st.SearchStrategy[Case]:
    """The cases of one category (and one variant of it)."""
    return STRATEGIES[category](variant)


# ------------------------------------------------------------------------------------------------ checking
#: Python API words a message shown in the browser must not use (it names the page's controls instead).
PYTHON_WORDS = ("columns=", "columns[", "task=", "renormalize=", "max_bytes")


def check_error_message(case: Case, message: str, *, app: bool = False) -> None:
    """Every message names the file and says what to do; category words name the problem.  ``app``: the message as
    the Data page shows it (``InputError.app_message``): ``case.app_words`` if given, and no Python arguments."""
    assert message.startswith(f"{case.name}:"), (message, case)
    assert "What to do:" in message, (message, case)
    assert "unexpected problem" not in message, (message, case)  # the loader's safety net is not an answer
    if app:
        assert not any(w in message for w in PYTHON_WORDS), (message, case)
    words = case.app_words if app and case.app_words is not None else case.words
    for word in words:  # a tuple lists alternatives
        alternatives = word if isinstance(word, tuple) else (word,)
        assert any(w in message for w in alternatives), (word, message, case)


def check_prediction_set(case: Case, ps: cc.PredictionSet) -> None:
    """Drop accounting: kept + dropped == rows read; row numbers are exactly the expected kept rows."""
    assert ps.n_read == ps.n_rows + ps.dropped.total, case
    assert len(ps.row_number) == ps.n_rows and ps.source == case.name
    dropped = np.unique(np.concatenate([np.asarray(v) for v in ps.dropped.reasons.values()])) \
        if ps.dropped.reasons else np.empty(0, dtype=np.int64)
    assert np.intersect1d(dropped, ps.row_number).size == 0
    np.testing.assert_array_equal(np.union1d(dropped, ps.row_number), np.arange(1, ps.n_read + 1))
    if case.n_read is not None:
        assert ps.n_read == case.n_read, (ps.n_read, case)
    if case.kept is not None:
        np.testing.assert_array_equal(ps.row_number, case.kept, err_msg=repr(case))
    for reason in ps.dropped.reasons:
        assert not case.drop_words or any(w in reason for w in case.drop_words), (reason, case)
        assert f"{reason}: {len(ps.dropped.reasons[reason])} (rows" in " ".join(ps.messages), (reason, ps.messages)


def check_load(case: Case) -> str:
    """Run ``cc.load_predictions`` on the case and check the outcome; returns "loaded" or "error"."""
    COUNTS[case.category] += 1
    try:
        ps = cc.load_predictions(case.data, source=case.name, **case.load_kwargs)
    except cc.InputError as err:
        assert case.expect in ("error", "any"), (str(err), case)
        check_error_message(case, str(err))
        return "error"
    assert case.expect in ("load", "any"), (ps.messages, case)
    check_prediction_set(case, ps)
    return "loaded"
