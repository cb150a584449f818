"""What the dashboard pages show, computed without Streamlit: display tables, option decisions, texts.

The pages (``pages/*.py``) lay out widgets and charts; every table they build from numbers, every choice
they offer that depends on the data, and every sentence they compose from numbers comes from here, so it
is tested like the rest of the core.  No Streamlit import.

* data: :func:`n_classes`, :func:`is_binary`, :func:`filter_choices`, :data:`DEFAULT_RESAMPLES`, :func:`subset`,
  :func:`looks_like_classification`, :func:`column_mapping`, :func:`mapping_form_values`, :func:`loader_messages`,
  :func:`data_facts`, :func:`preview_rows`, :func:`data_caption`, :func:`download_name`;
* metrics and diagrams: :func:`format_number`, :func:`metric_table`, :func:`selection_vs_all`,
  :func:`metric_groups`, :func:`metric_tests`,
  :func:`diagram_tables`, :func:`diagnose_example`;
* regression page: :func:`sigma_ranges`, :func:`sigma_bin_rows`, :func:`regression_rows`;
* classification page: :func:`row_bin_values`, :func:`confidence_bin_rows`, :func:`reliability_semantics`,
  :func:`classification_rows`, :func:`class_breakdowns`, :func:`per_class_table`; ordinal sets:
  :func:`threshold_reliabilities`, :func:`threshold_table`;
* recalibrate page: :data:`COMPARISON_METRICS`, :func:`comparison_metrics`;
* labs: :func:`quantity_table`;
* text from files: :func:`md_escape` — the one escaping path of every string that came from a file.
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from calib_core import plots
from calib_core.api import diagnose
from calib_core.base.predictions import PredictionSet, app_text
from calib_core.base.report import ALL, Report
from calib_core.calibrators import registry
from calib_core.data import examples
from calib_core.diagnosis.tables import VERDICT_TEXT, statistic_label
from calib_core.diagrams.bin_rows import confidence_row_bins, rows_in_bins, sigma_bins
from calib_core.diagrams.classification_ordinal import ThresholdReliability, threshold_reliability

from .selection import bin_runs, class_breakdown

__all__ = [
    "md_escape",
    "ALL_ROWS_LABEL",
    "group_label",
    "n_classes",
    "is_binary",
    "filter_choices",
    "RESAMPLE_CHOICES",
    "NULL_DRAW_CHOICES",
    "DEFAULT_RESAMPLES",
    "DEFAULT_NULL_DRAWS",
    "verdict_lines",
    "subset",
    "MODELS_SHOWN",
    "default_models",
    "models_note",
    "looks_like_classification",
    "column_mapping",
    "mapping_form_values",
    "positive_choices",
    "positive_mapping",
    "loader_messages",
    "data_facts",
    "preview_rows",
    "data_caption",
    "download_name",
    "format_number",
    "metric_table",
    "selection_vs_all",
    "KIND_HEADINGS",
    "metric_groups",
    "metric_group_rows",
    "metric_tests",
    "diagram_tables",
    "diagnose_example",
    "sigma_ranges",
    "sigma_bin_rows",
    "regression_rows",
    "row_bin_values",
    "confidence_bin_rows",
    "reliability_semantics",
    "classification_rows",
    "class_breakdowns",
    "per_class_table",
    "threshold_reliabilities",
    "threshold_table",
    "per_class_choice",
    "per_class_caption",
    "PER_CLASS_SHOWN",
    "quantity_table",
    "COMPARISON_METRICS",
    "comparison_metrics",
]

SPREAD_KINDS = ("std", "var", "log_var", "log_std", "u95")  #: regression spread columns of the mapping form


# ------------------------------------------------------------------------------------------------ data
def n_classes(pset: PredictionSet) -> int:
    """Number of classes of a set's probability vectors (0 without them: regression, top-label files)."""
    return 0 if pset.probs is None else int(pset.probs.shape[1])


def is_binary(pset: PredictionSet) -> bool:
    """True for a classification set with a full probability vector of exactly two classes.

    (A top-label file — predicted class and confidence only — is never binary in this sense: neither the
    positive-class reliability nor the binary-only calibrators can use it.)
    """
    return (not pset.top_label_only) and n_classes(pset) == 2


def filter_choices(pset: PredictionSet) -> tuple[list[str], list[str], list[str]]:
    """(models, groups, row splits) offered by the filter controls.

    Groups start with :data:`calib_core.ALL` (shown as :func:`group_label` says); splits with ``"all"`` followed
    by ``"cal"`` / ``"test"`` when the ``split`` column has such rows.  Worked out once per set (a loaded set is
    never changed; comparing 1e5 split labels cost ~2.5 ms on every rerun of a page) and returned as new lists.
    """
    key = id(pset)
    known = _FILTER_CHOICES.get(key)
    if known is None or known[0]() is not pset:
        models = pset.models()
        groups = [ALL] + ([str(g) for g in pd.unique(pset.group)] if pset.group is not None else [])
        splits = ["all"] + [s for s in ("cal", "test") if pset.split is not None and (pset.split == s).any()]
        known = (weakref.ref(pset, lambda ref, key=key: _forget_choices(key, ref)), (models, groups, splits))
        _FILTER_CHOICES[key] = known
    models, groups, splits = known[1]
    return list(models), list(groups), list(splits)


_FILTER_CHOICES: dict[int, tuple[weakref.ref, tuple[list[str], list[str], list[str]]]] = {}  # id(set) → choices


def _forget_choices(key: int, ref: weakref.ref) -> None:
    """Drop the choices of a set that no longer exists (unless its id is already another set's)."""
    known = _FILTER_CHOICES.get(key)
    if known is not None and known[0] is ref:
        _FILTER_CHOICES.pop(key, None)


#: How the group selector shows :data:`calib_core.ALL` (every row of the chosen models).
ALL_ROWS_LABEL = "(all rows)"


def group_label(group: str) -> str:
    """The group selector's text of a group key: :data:`calib_core.ALL` reads ``"(all rows)"``; a group of the
    file reads as its name, with " — a group of the file" added when the name looks like the all-rows entry
    (``(all)``, ``(all rows)``, ``all``), so that the two never look alike."""
    if group == ALL:
        return ALL_ROWS_LABEL
    text = str(group)
    if text.strip().strip("()").strip().lower() in ("all", "all rows"):
        return f"{text} — a group of the file"
    return text


#: Choices of the diagnosis pages for the bootstrap replicates (intervals) and the null draws (p-values) and the
#: defaults — the same at every N: the inference layer works on per-block and per-bin sums, so its cost hardly
#: grows with these counts or with N (no lowering for large files).
RESAMPLE_CHOICES = (0, 200, 500, 1000, 2000)
NULL_DRAW_CHOICES = (0, 1000, 2000, 5000)
DEFAULT_RESAMPLES = 1000
DEFAULT_NULL_DRAWS = 2000


#: Models diagnosed and drawn at first when a file has more (each is one colour, one legend entry, one diagnosis).
MODELS_SHOWN = 8


def default_models(models: Sequence[str], shown: int = MODELS_SHOWN) -> list[str]:
    """The models a page starts with: all of them up to ``shown``, else the first ``shown`` in file order."""
    return list(models[:shown])


def models_note(n_chosen: int, n_models: int, default: bool) -> str:
    """The caption under the filter controls when not every model is shown ("" when all are)."""
    if n_chosen >= n_models:
        return ""
    which = f"the first {n_chosen} in the file" if default else "those picked under Models"
    return (f"Showing {n_chosen} of {n_models} models ({which}); pick others under Models. Each model shown is "
            "diagnosed and drawn in its own colour.")


def subset(pset: PredictionSet, rows: str, models: Iterable[str], group: str) -> PredictionSet:
    """The rows of ``pset`` in the chosen split (``"all"``), models and group (:data:`ALL`); vectorised masks.

    The last choice of each set is kept (a loaded set is never changed, as :func:`filter_choices` relies on), so a
    rerun on the same rows gets the same object back instead of cutting them out again (~3 ms at 1e5 rows)."""
    models = tuple(models)
    key, choice = id(pset), (rows, models, group)
    known = _SUBSETS.get(key)
    if known is not None and known[0]() is pset and known[1] == choice:
        return pset if known[2] is None else known[2]
    sub = _subset(pset, rows, models, group)
    _SUBSETS[key] = (weakref.ref(pset, lambda ref, key=key: _forget_subset(key, ref)), choice,
                     None if sub is pset else sub)  # never the set itself: it would never be freed
    return sub


#: id(set) → (set, last choice, its rows; None: the set itself)
_SUBSETS: dict[int, tuple[weakref.ref, tuple, PredictionSet | None]] = {}


def _forget_subset(key: int, ref: weakref.ref) -> None:
    """Drop the kept rows of a set that no longer exists (unless its id is already another set's)."""
    known = _SUBSETS.get(key)
    if known is not None and known[0] is ref:
        _SUBSETS.pop(key, None)


def _subset(pset: PredictionSet, rows: str, models: tuple, group: str) -> PredictionSet:
    """:func:`subset` computed."""
    mask = np.ones(pset.n_rows, dtype=bool)
    if rows != "all" and pset.split is not None:
        mask &= pset.split == rows
    if pset.model is not None:
        mask &= np.isin(pset.model, list(models))
    if group != ALL and pset.group is not None:
        mask &= pset.group.astype(str) == group
    return pset if mask.all() else pset.take(mask)


def looks_like_classification(names: Iterable[str]) -> bool:
    """Guess of the task from column names: ``prob*`` / ``logit*`` columns or a ``label`` column."""
    low = [str(n).lower() for n in names]
    return any(n.startswith(("prob", "logit")) for n in low) or "label" in low


def column_mapping(task: str, choices: Mapping[str, Any], none: str = "—") -> dict[str, object]:
    """The ``columns=`` mapping of :func:`calib_core.load_predictions` from the choices of the mapping form.

    ``choices`` holds the form's values (``none`` = nothing chosen): regression ``y``, ``mean``, ``kind`` (one
    of :data:`SPREAD_KINDS`, ``"quantiles"``, ``"samples"`` or a point-only label), ``spread``, ``multi`` (the
    quantile / sample columns), ``levels`` (comma-separated quantile levels, blank = from the names);
    classification ``label``, ``score_kind`` (``"probs"`` / ``"logits"``), ``scores``, ``models`` (several
    forecasters' probability columns of one binary event: ``model_columns``, one model each), ``positive`` (the
    positive class of a binary file; blank: detected); both: ``split``, ``group``, ``model``, ``time``.
    """
    mapping: dict[str, object] = {}
    if task == "regression":
        kind = choices.get("kind")
        if kind in SPREAD_KINDS:
            if choices.get("spread", none) != none:
                mapping[kind] = choices["spread"]
        elif kind in ("quantiles", "samples"):
            cols = list(choices.get("multi") or [])
            if kind == "quantiles":
                parts = [x.strip() for x in str(choices.get("levels") or "").split(",") if x.strip()]
                mapping["quantiles"] = dict(zip(parts, cols)) if parts else cols
            else:
                mapping["samples"] = cols
        else:
            mapping["samples"] = None
            mapping["quantiles"] = None
        for role in ("y", "mean"):
            if choices.get(role, none) != none:
                mapping[role] = choices[role]
    else:
        if choices.get("label", none) != none:
            mapping["label"] = choices["label"]
        models = list(choices.get("models") or [])
        scores = list(choices.get("scores") or [])
        if len(models) > 1:  # several forecasters of one binary event: one model per column
            mapping["model_columns"] = models
        elif models:
            scores = scores or models
        if scores:
            mapping[choices.get("score_kind", "probs")] = scores if len(scores) > 1 else scores[0]
        if str(choices.get("positive") or "").strip():
            mapping["positive"] = str(choices["positive"]).strip()
    for role in ("split", "group", "model", "time"):
        if choices.get(role, none) != none:
            mapping[role] = choices[role]
    return mapping


def mapping_form_values(guess: Mapping[str, Any], none: str = "—") -> dict[str, Any]:
    """The mapping form's starting values from what detection guessed (:func:`calib_core.data.detect.guess_columns`).

    Keys are the form's fields, the inverse of :func:`column_mapping`: ``task``, regression ``y``, ``mean``,
    ``kind`` (the spread role, ``"quantiles"``, ``"samples"`` or ``"none (point only)"``),
    ``spread``, ``multi``, ``levels`` (blank: read from the names); classification ``label``, ``score_kind``,
    ``scores``, ``models``, ``positive``; both ``split``, ``group``, ``model``, ``time``.  Roles detection could
    not fill are ``none`` (or empty lists).
    """
    task = str(guess.get("task", "regression"))
    out: dict[str, Any] = {
        "task": task, "y": guess.get("y") or none, "mean": guess.get("mean") or none,
        "kind": "std", "spread": none, "multi": [], "levels": "", "label": guess.get("label") or none,
        "score_kind": "logits" if "logits" in guess else "probs",
        "scores": list(guess.get("logits") or guess.get("probs") or []),
        "models": list(guess.get("model_columns") or []), "positive": "",
    }
    for kind in ("samples", "quantiles"):
        if guess.get(kind):
            out["kind"], out["multi"] = kind, list(guess[kind])
    for kind in SPREAD_KINDS:
        if guess.get(kind):
            out["kind"], out["spread"] = kind, guess[kind]
    if task == "regression" and out["y"] != none and out["mean"] != none and out["spread"] == none \
            and not out["multi"]:
        out["kind"] = "none (point only)"
    for role in ("split", "group", "model", "time"):
        out[role] = guess.get(role) or none
    return out


def positive_choices(pset: PredictionSet) -> list[str] | None:
    """The Data page's Positive class choices of a one-column binary set (its two classes, the positive one last),
    else None.

    A file with one probability (or logit) column per model holds the probability of one class — the second of
    ``classes`` — which the loader chose and stated; the page lets the user say it is the other one
    (``columns={'positive': …}``).  Files with a column per class need no such choice.
    """
    if pset.task != "classification" or not is_binary(pset) or not pset.classes or \
            pset.layout not in ("binary_prob", "binary_logit"):
        return None
    return [str(c) for c in pset.classes]


def positive_mapping(mapping: Mapping[str, Any] | None, positive: str) -> dict[str, Any]:
    """The column mapping that loads the same file with another positive class (the mapping used, plus
    ``positive``)."""
    return {**dict(mapping or {}), "positive": str(positive)}


def loader_messages(pset: PredictionSet) -> list[str]:
    """The loader's messages about a set in the dashboard's words (a message naming ``columns={...}`` for the
    Python API has a Data-page wording, :class:`calib_core.base.predictions.Message`)."""
    return [app_text(m) for m in pset.messages]


def data_facts(pset: PredictionSet) -> pd.DataFrame:
    """Property/value table of a loaded set: task, layout, source, split counts, groups, models, classes,
    features (long lists cut: 12 groups / features, 20 classes)."""
    facts = {"task": pset.task, "layout": pset.layout, "source": pset.source}
    if pset.split is not None:
        counts = pd.Series(pset.split).value_counts()
        facts["split"] = ", ".join(f"{k}: {v:,}" for k, v in counts.items())
    if pset.group is not None:
        facts["groups"] = ", ".join(map(str, pd.unique(pset.group)[:12]))
    if pset.model is not None:
        facts["models"] = ", ".join(map(str, pset.models()))
    if pset.classes is not None:
        facts["classes"] = ", ".join(map(str, pset.classes[:20])) + (" …" if len(pset.classes) > 20 else "")
    if pset.features is not None and pset.features.shape[1]:
        facts["features"] = ", ".join(map(str, pset.features.columns[:12]))
    if pset.time is not None and len(pset.time):
        t = np.asarray(pset.time)
        if np.issubdtype(t.dtype, np.datetime64):
            facts["time"] = f"{pd.Timestamp(t.min())} … {pd.Timestamp(t.max())}"
        else:
            facts["time"] = f"{float(np.min(t)):g} … {float(np.max(t)):g} (numbers)"
    return pd.DataFrame({"property": list(facts), "value": list(facts.values())})


def preview_rows(pset: PredictionSet, n: int = 10) -> pd.DataFrame | None:
    """The first ``n`` validated rows: row, y, mean, std (regression with a distribution) or row, label,
    predicted class, confidence (classification with probabilities); None otherwise."""
    if pset.task == "regression" and pset.dist is not None:
        return pd.DataFrame(
            {"row": pset.row_number[:n], "y": pset.y[:n], "mean": pset.dist.mean()[:n], "std": pset.dist.std()[:n]}
        )
    if pset.task == "classification" and pset.probs is not None:
        pred = pset.probs[:n].argmax(axis=1)
        names = np.asarray(pset.classes or np.arange(pset.probs.shape[1]).astype(str), dtype=object)
        return pd.DataFrame(
            {"row": pset.row_number[:n], "label": names[pset.labels[:n]], "predicted": names[pred],
             "confidence": pset.probs[:n].max(axis=1)}
        )
    return None


_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]<>!$&~|@{}#])")  # characters that open an inline construct anywhere
_MARKDOWN_LINE_START = re.compile(r"^([ \t]*)([-+=.)>]|\d+[.)])", re.MULTILINE)  # block markers at a line start
_SHORTCODE_COLON = re.compile(r":(?=[^\s])|:$")
_WORD_JOINER = "\u2060"


def md_escape(text: object) -> str:
    """Text that came from a file (file, column, model, group and class names, cell values, messages that quote
    them) made inert for every Markdown surface of the dashboard (``st.markdown`` / ``caption`` / ``info`` /
    ``warning`` / ``error`` / ``toast``, widget, tab and expander labels, help tooltips): it shows as the same
    characters.  This is the one escaping path of the dashboard (``ui.md_escape``).

    Backslash-escaped (CommonMark §2.4): every character that opens an inline construct — links and images
    ``![](…)``, emphasis, code, raw HTML, entities ``&…;``, LaTeX ``$…$``, strikethrough, tables, e-mail
    autolinks, ``:color[…]`` directives — and the block markers at the start of a line (headings, lists,
    quotes, rules, setext underlines).  A ``:`` followed by a non-space character (or ending the text) gets an
    invisible word joiner (U+2060) after it, because Streamlit replaces ``:material/…:`` icons and ``:emoji:``
    shortcodes in the text *after* escapes are resolved, and URL autolinks need ``://`` / ``www.``
    (``www.`` gets its dot escaped).  Text written by the project itself is not passed through it (its
    Markdown is meant).
    """
    out = _MARKDOWN_INLINE.sub(r"\\\1", str(text))
    out = _MARKDOWN_LINE_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], out)
    out = re.sub(r"(?i)\bwww\.", lambda m: m.group(0)[:-1] + "\\.", out)
    return _SHORTCODE_COLON.sub(":" + _WORD_JOINER, out)


def data_caption(pset: PredictionSet, name: str) -> str:
    """One Markdown line: name (as given: escape text from uploads first), task, layout, rows and models."""
    models = pset.models()
    extra = f" · {len(models)} models" if len(models) > 1 else ""
    return f"**{name}** · {pset.task}, layout `{pset.layout}` · {pset.n_rows:,} rows{extra}"


#: Characters NFKD cannot reduce to ASCII, spelled out in download names (Greek letters of the metrics and papers).
_ASCII_SPELLING = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "eps", "θ": "theta", "κ": "kappa", "λ": "lambda",
    "μ": "mu", "ν": "nu", "π": "pi", "ρ": "rho", "σ": "sigma", "τ": "tau", "φ": "phi", "χ": "chi", "ψ": "psi",
    "ω": "omega", "Δ": "delta", "Σ": "sigma", "Φ": "phi", "Ω": "omega", "ß": "ss", "æ": "ae", "ø": "o", "đ": "d",
    "ł": "l", "×": "x", "%": "pct",
}
#: Words a cut data name does not end with.
_LINK_WORDS = frozenset({"a", "an", "and", "at", "by", "for", "in", "of", "on", "or", "the", "to", "vs", "with"})
#: File extensions of prediction files, dropped from the data name (``preds.csv`` → ``preds``).
_DATA_EXTENSIONS = (".csv", ".tsv", ".txt", ".parquet", ".pq", ".npz")


def _ascii_words(text: str) -> list[str]:
    """Lower-case ASCII words of ``text``: Greek letters spelled out, accents dropped (NFKD), other characters
    separate words; a dot between two digits is kept (``§4.1`` → ``4.1``)."""
    spelled = "".join(_ASCII_SPELLING.get(ch, _ASCII_SPELLING.get(ch.lower(), ch)) for ch in text)
    plain = unicodedata.normalize("NFKD", spelled).encode("ascii", "ignore").decode("ascii").lower()
    return re.findall(r"[a-z0-9]+(?:\.[0-9]+)*", plain)


def download_name(data_name: object, *parts: object, ext: str, max_data_chars: int = 40) -> str:
    """The file name of a download: ``<data>_<part>_<part>.<ext>``, ASCII, short and readable.

    Every piece is reduced to lower-case ASCII words joined by ``-`` (Greek letters spelled out: ``σ`` →
    ``sigma``; accents dropped; punctuation, dashes and spaces separate words; a dot between digits kept). The
    data name (a file name or an example title) loses its table extension and is cut at a word boundary to
    ``max_data_chars`` characters (at least its first word, itself cut to that length; a cut name does not end
    in a link word such as ``of`` or ``vs``); ``parts`` (page, table, figure) are kept whole. Pieces with no
    ASCII letter or digit are left out; the data name falls back to ``data``. E.g.
    ``("Levi et al. §4.1 synthetic — true σ vs random σ", "regression", "metrics", ext="csv")`` →
    ``levi-et-al-4.1-synthetic-true-sigma_regression_metrics.csv``.
    """
    text = str(data_name)
    if text.lower().endswith(_DATA_EXTENSIONS):
        text = text[: text.rindex(".")]
    words = _ascii_words(text) or ["data"]
    kept = [words[0][:max_data_chars]]
    for word in words[1:]:
        if len("-".join([*kept, word])) > max_data_chars:
            while len(kept) > 1 and kept[-1] in _LINK_WORDS:  # a cut name does not end in "of", "vs", …
                kept.pop()
            break
        kept.append(word)
    stem = "-".join(kept)
    pieces = [stem] + ["-".join(w) for w in (_ascii_words(str(p)) for p in parts) if w]
    suffix = "".join(_ascii_words(ext)) or "bin"
    return f"{'_'.join(pieces)}.{suffix}"


# ------------------------------------------------------------------------------------------------ metrics
def format_number(x: float) -> str:
    """4 significant digits, ``–`` for a missing value."""
    return "–" if pd.isna(x) else f"{x:.4g}"


def metric_table(
    metrics: pd.DataFrame,
    level: float = 0.95,
    keys: Iterable[str] | None = None,
    compact: bool = False,
    keep_model: bool = False,
) -> pd.DataFrame:
    """Display table: metric, value (and its debiased estimate where there is one), interval, perfect-calibration
    value, p-value (± its Monte-Carlo s.e. where that matters, see :func:`calib_core.plots.p_value_cell`),
    verdict of the test (Holm / BH flag), test name and note (+ model if several).

    ``keys`` picks and orders metrics (statistics of the inference layer that are not registry metrics, e.g. the
    top-bin gap, follow the keys); ``compact`` drops the test name and note columns (narrow layouts);
    ``keep_model`` keeps the model column even when only one model is present.  Without tests (null draws off,
    point predictions) the perfect-calibration, p-value and verdict columns are dropped.
    """
    pct = f"{level:.0%}"
    fmt = format_number
    t = _display_columns(metrics) if keys is None else _keyed_display_columns(metrics, keys)
    p_value = t["p_value"](float)
    columns: dict[str, Any] = {
        "model": t["model"](None),
        "metric": t["label"](None),
        "value": t["value"](None),
        "debiased": t["debiased"](float),
        f"{pct} CI": [f"[{fmt(a)}, {fmt(b)}]" for a, b in zip(t["ci_low"](None).tolist(), t["ci_high"](None).tolist())],
        "perfectly calibrated": t["perfect"](float),
        "p-value": [plots.p_value_cell(a, b) for a, b in zip(p_value.tolist(), t["p_mc_se"](None).tolist())],
        "verdict": t["verdict"](None),
        "test": t["test"](None),
        "note": t["note"](None),
    }
    # the columns a table without them would drop, decided on the arrays (one frame built, not one per drop)
    drop: list[str] = []
    if len({m for m in columns["model"].tolist() if not _missing(m)}) <= 1 and not keep_model:
        drop.append("model")
    if compact:
        drop += ["test", "note"]
    else:  # a column whose every cell is empty text or missing (as ``astype(str).str.len()`` of a text column)
        drop += [c for c in ("test", "note") if not any(not _missing(v) and len(str(v)) for v in columns[c].tolist())]
    if not np.isfinite(columns["debiased"]).any():
        drop.append("debiased")
    if not np.isfinite(p_value).any():  # no tests (null draws off, point predictions)
        drop += ["perfectly calibrated", "p-value", "verdict"]
    return pd.DataFrame({k: v for k, v in columns.items() if k not in drop})


def _keyed_display_columns(metrics: pd.DataFrame, keys: Iterable[str]) -> dict[str, Any]:
    """The columns of ``calib_core.plots.metric_display_table(metrics)`` that :func:`metric_table` reads (each a
    function of the dtype asked for: ``to_numpy(dtype=…)``), its rows picked and ordered by ``keys``: the rows whose
    metric is a key or not a registry metric, in the keys' order (the others after them, as they come: a stable
    sort), taken from ``metrics``' own columns without building that frame (see :func:`_display_columns`)."""
    order = {k: i for i, k in enumerate(keys)}
    registry_keys = _registry_keys()
    rows = np.flatnonzero((metrics["group"] == ALL).to_numpy(dtype=bool))
    names = metrics["metric"].to_numpy()[rows].tolist()
    kept = [i for i, k in enumerate(names) if k in order or k not in registry_keys]
    rank = np.asarray([order.get(names[i], len(order)) for i in kept], dtype=float)
    return _display_columns(metrics, rows[np.asarray(kept, dtype=np.intp)[np.argsort(rank, kind="stable")]])


def _display_columns(metrics: pd.DataFrame, rows: np.ndarray | None = None) -> dict[str, Any]:
    """The columns of ``calib_core.plots.metric_display_table(metrics)`` (all rows of :data:`ALL`, or the rows at
    the positions ``rows``) that :func:`metric_table` reads, each a function of the dtype asked for, taken from
    ``metrics``' own columns without building that frame (its drop, copy and inserted columns cost ~1 ms a table):
    ``label`` and ``verdict`` made as it makes them, every other column the metrics' own at those rows."""
    if rows is None:
        rows = (metrics["group"] == ALL).to_numpy(dtype=bool)

    def column(name: str) -> Any:
        return lambda dtype: metrics[name].to_numpy(dtype=dtype)[rows]

    out = {name: column(name) for name in ("model", "value", "debiased", "ci_low", "ci_high", "perfect",
                                           "p_value", "p_mc_se", "test", "note")}
    labels = [statistic_label(k) for k in metrics["metric"].to_numpy()[rows].tolist()]
    p = metrics["p_value"].to_numpy(dtype=float)[rows]
    family = metrics["family"].astype(str).to_numpy()[rows]
    flag = metrics["flag"].to_numpy(dtype=bool)[rows]
    verdicts = [(VERDICT_TEXT.get(f, "flagged") if hit else "not significant") if np.isfinite(pv) else ""
                for f, hit, pv in zip(family, flag, p)]
    out["label"] = lambda dtype: pd.array(labels, dtype="str").to_numpy(dtype=dtype)
    out["verdict"] = lambda dtype: pd.array(verdicts, dtype="str").to_numpy(dtype=dtype)
    return out


def _missing(value: Any) -> bool:
    """None or NaN (a missing cell)."""
    return value is None or (isinstance(value, float) and value != value)


def _registry_keys() -> set[str]:
    return {m.key for m in registry.metrics()}


def verdict_lines(report: Report, models: Iterable[str] | None = None, group: str = ALL) -> list[tuple[str, str]]:
    """(model, sentence) of the headline verdict of each model (default: the report's) for ``group``, in words —
    "Over-confident: the 90% intervals cover 65% of targets (expected 90%, p < 1e-6) …"."""
    wanted = report.models if models is None else list(models)
    found = dict(report.sentences(group))
    return [(m, found[m]) for m in wanted if m in found]


def selection_vs_all(selected: pd.DataFrame, overall: pd.DataFrame, level: float = 0.95,
                     several_models: bool = False, compact: bool = False, *, label: str = "selection",
                     keys: Iterable[str] | None = None) -> pd.DataFrame:
    """Metric table of a selection with the all-rows value beside it: columns ``[model,] metric, <label>,
    all rows`` first, then the selection's CI / perfect-calibration columns (``selected`` and ``overall`` are
    long metric frames, as ``Report.metrics``; ``compact`` and ``keys`` as :func:`metric_table`'s; ``label``:
    the name of the selection's value column, e.g. ``"slice"``)."""
    sel_table = metric_table(selected, level, keys=keys, keep_model=several_models, compact=compact)
    all_table = _value_table(overall, keys)  # only its model, metric and value columns are joined
    join = ["model", "metric"] if several_models else ["metric"]
    front = join + [label, "all rows"]
    rows = _matching_rows(sel_table, all_table, join)
    if rows is None or label in sel_table.columns or "all rows" in {label, *sel_table.columns}:  # pandas' join
        sel_table = sel_table.rename(columns={"value": label}).merge(
            all_table[join + ["value"]].rename(columns={"value": "all rows"}), on=join, how="left"
        )
        return sel_table[front + [c for c in sel_table.columns if c not in front]]
    # every selection row has one all-rows row: the join's frame built once from the columns (no merge, no copies)
    columns = {c: sel_table[c].array for c in join}
    columns[label] = sel_table["value"].array
    columns["all rows"] = all_table["value"].array.take(rows)
    columns.update((c, sel_table[c].array) for c in sel_table.columns if c not in front and c != "value")
    return pd.DataFrame(columns)


def _value_table(metrics: pd.DataFrame, keys: Iterable[str] | None = None) -> pd.DataFrame:
    """The ``model``, ``metric`` and ``value`` columns of ``metric_table(metrics, keys=keys, keep_model=True)``, the
    same cells and dtypes, without formatting the interval, p-value and other cells a join with them never reads."""
    t = _display_columns(metrics) if keys is None else _keyed_display_columns(metrics, keys)
    return pd.DataFrame({"model": t["model"](None), "metric": t["label"](None), "value": t["value"](None)})


def _matching_rows(left: pd.DataFrame, right: pd.DataFrame, join: list[str]) -> np.ndarray | None:
    """The position in ``right`` of each row of ``left`` with the same ``join`` cells, when every ``left`` row has
    exactly one (``left.merge(right, on=join, how="left")`` then keeps ``left``'s rows in order, each beside its
    ``right`` row); None otherwise (a missing or repeated key, a missing cell: pandas' merge decides)."""
    if any(c not in left.columns or c not in right.columns for c in join):
        return None
    keys = [tuple(r) for r in zip(*(right[c].tolist() for c in join))]
    wanted = [tuple(r) for r in zip(*(left[c].tolist() for c in join))]
    if any(_missing(v) for key in keys + wanted for v in key) or len(set(keys)) != len(keys):
        return None
    position = {key: i for i, key in enumerate(keys)}
    if any(key not in position for key in wanted):
        return None
    return np.asarray([position[key] for key in wanted], dtype=np.intp)


#: Headings of the metric families on the diagnosis pages (the registry's kinds, in this order).
KIND_HEADINGS = {
    registry.CALIBRATION: "Calibration statistics (tested against perfect calibration)",
    registry.PROPER: "Proper scores (lower is better; the perfect-calibration value is a reference)",
    registry.DESCRIPTIVE: "Descriptive (no verdict)",
}
_EMPTY_CELLS = ("", "–", "None", "nan")


def _registry_kind(key: str) -> str:
    """The registry's kind of a metric key; a statistic outside the registry counts as a calibration statistic."""
    try:
        return registry.metric(str(key)).kind
    except KeyError:
        return registry.CALIBRATION


def _empty_cell(value: Any) -> bool:
    """A cell :func:`metric_groups` counts as empty: missing, or one of :data:`_EMPTY_CELLS` as text."""
    return (not isinstance(value, str) and bool(pd.isna(value))) or str(value) in _EMPTY_CELLS


def metric_groups(table: pd.DataFrame, metrics: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """A display metric table (:func:`metric_table` or :func:`selection_vs_all`) split by the registry's kind:
    [(heading, rows)] in :data:`KIND_HEADINGS` order, empty groups left out.

    ``metrics``: the long metric frame the table was built from (``Report.metrics``; its ``kind`` column, or the
    registry's kind of the key, says the family).  Within a group the rows are ordered by metric, then model (the
    models' values of one metric side by side), and columns that are empty for every row of the group (no
    p-value among proper scores, no perfect-calibration value among descriptive numbers, no note) are dropped.
    Statistics outside the registry (the classification top-bin gap) count as calibration statistics.
    The rows are picked and ordered on plain lists and taken from ``table`` once per group (about 2 ms for a
    regression table; grouping with pandas took 13 ms, on every new diagnosis).
    """
    cells = {c: table[c].tolist() for c in table.columns}
    return [(heading, table.iloc[rows][keep].reset_index(drop=True))
            for heading, rows, keep in metric_group_rows(table, metrics, cells)]


def metric_group_rows(table: pd.DataFrame, metrics: pd.DataFrame,
                      cells: Mapping[Any, list] | None = None) -> list[tuple[str, list[int], list]]:
    """The groups of :func:`metric_groups` as (heading, row positions in ``table``, columns kept), without
    building their frames.

    Parameters
    ----------
    table : DataFrame
        A display metric table.
    metrics : DataFrame
        The long metric frame it was built from.
    cells : mapping of column to list, optional
        ``table``'s columns as lists, if already made.

    Returns
    -------
    list of (str, list of int, list)
        Heading, row positions in their display order and the columns kept, of each non-empty family.
    """
    kind_of: dict[str, str] = {}  # label → kind (a later row of the same label wins, as a dict of pairs would)
    for key, kind in zip(metrics["metric"].tolist(), metrics["kind"].tolist(), strict=True):
        kind_of[statistic_label(key)] = kind if isinstance(kind, str) and kind else _registry_kind(key)
    labels = table["metric"].tolist()
    order: dict[Any, int] = {}
    for label in labels:
        order.setdefault(label, len(order))
    kinds = [kind_of.get(label, registry.CALIBRATION) for label in labels]
    model_rank: list[int] | None = None
    if "model" in table.columns:
        first_seen: dict[Any, int] = {}
        model_rank = [first_seen.setdefault(m, len(first_seen)) for m in table["model"].tolist()]
    if cells is None:
        cells = {c: table[c].tolist() for c in table.columns}
    out = []
    for kind, heading in KIND_HEADINGS.items():
        rows = [i for i, k in enumerate(kinds) if k == kind]
        if not rows:
            continue
        if model_rank is not None:
            rows.sort(key=lambda i: (order[labels[i]], model_rank[i]))  # stable, as pandas' stable sort
        else:
            rows.sort(key=lambda i: order[labels[i]])
        keep = [c for c in table.columns if c in ("model", "metric")
                or not all(_empty_cell(cells[c][i]) for i in rows)]
        out.append((heading, rows, keep))
    return out


def _dedup_key(value: Any) -> Any:
    """``value`` as a set member that treats every missing value as one (as ``drop_duplicates`` does)."""
    return ("<missing>",) if not isinstance(value, str) and pd.isna(value) else value


def metric_tests(metrics: pd.DataFrame) -> pd.DataFrame:
    """metric, test, note: how each metric's p-value or reference was computed, once per metric (the test and note
    columns of :func:`metric_table`, shown apart so that the metric tables fit the page): the rows with a test or a
    note, the first of each (metric, test, note), then the first of each metric label."""
    has_text = ((metrics["test"].astype(str).str.len() > 0) | (metrics["note"].astype(str).str.len() > 0)).to_numpy()
    keys, tests, notes = metrics["metric"].tolist(), metrics["test"].tolist(), metrics["note"].tolist()
    seen_rows: set = set()
    seen_labels: set = set()
    out: dict[str, list] = {"metric": [], "test": [], "note": []}
    for i in np.flatnonzero(has_text):
        row = (_dedup_key(keys[i]), _dedup_key(tests[i]), _dedup_key(notes[i]))
        if row in seen_rows:
            continue
        seen_rows.add(row)
        label = statistic_label(keys[i])
        if label in seen_labels:
            continue
        seen_labels.add(label)
        out["metric"].append(label)
        out["test"].append(tests[i])
        out["note"].append(notes[i])
    return pd.DataFrame({k: np.array(v, dtype=object) for k, v in out.items()})


def diagram_tables(report: Report, name: str, models: Iterable[str] | None = None,
                   suffix: str = "") -> dict[str, pd.DataFrame]:
    """{model + suffix: diagram table ``name``} over all rows (group :data:`ALL`) of every model of ``models``
    (default: the report's) that has diagrams and that table (``rank_histogram``: ensembles only)."""
    names = report.models if models is None else models
    return {f"{m}{suffix}": report.diagrams[(m, ALL)][name] for m in names
            if name in report.diagrams.get((m, ALL), {})}


def diagnose_example(example: str, layout: str = "gaussian", rows: str = "all",
                     n_resamples: int = 200) -> tuple[Report, list[str]]:
    """Report (seed 0) and loader messages of a built-in regression example: ``"diabetes"`` (the boosting
    ensemble exported with ``layout`` gaussian / quantile / sample) or ``"levi"`` (Levi et al. §4.1 synthetic);
    ``rows`` = ``"all"`` or a value of the split column."""
    if example not in ("diabetes", "levi"):
        raise ValueError(f"example must be 'diabetes' or 'levi', got {example!r}")
    pset = examples.diabetes_example(layout) if example == "diabetes" else examples.levi_synthetic()
    if rows != "all":
        pset = pset.take(pset.split == rows)
    report = diagnose(pset, n_resamples=n_resamples, seed=0)
    return report, list(pset.messages)


# ------------------------------------------------------------------------------------------------ regression
def sigma_ranges(selection: Mapping[str, Iterable[int]], levi_tables: Mapping[str, pd.DataFrame]) -> str:
    """The σ ranges of the selected σ-bins of every model: one ``[low, high]`` per run of consecutive bins, so
    that bins 11 and 13 give two disjoint ranges (``σ ∈ [a, b] ∪ [c, d]``); ``(model)`` added when several models
    are selected; models joined by ``;``."""
    ranges = []
    for m, bins in selection.items():
        t = levi_tables[m]
        parts = []
        for first, last in bin_runs(bins):
            run = t[t["bin"].between(first, last)]
            if len(run):
                parts.append(f"[{run['sigma_low'].min():.4g}, {run['sigma_high'].max():.4g}]")
        if parts:
            ranges.append("σ ∈ " + " ∪ ".join(parts) + (f" ({m})" if len(selection) > 1 else ""))
    return "; ".join(ranges)


def sigma_bin_rows(pset: PredictionSet, selection: Mapping[str, Iterable[int]], n_bins: int,
                   binning: str = "count") -> np.ndarray:
    """Row mask of the selected Levi σ-bins ({model: bins}), the bins computed per model as the diagram does
    (:func:`views.selection.sigma_bins`)."""
    row_bins = sigma_bins(pset.dist.std(), n_bins, binning, group=pset.model)
    return rows_in_bins(row_bins, selection, group=pset.model)


def regression_rows(pset: PredictionSet, mask: np.ndarray, limit: int) -> pd.DataFrame:
    """The first ``limit`` rows of ``mask``: row, [model,] y, mean, σ and z = (y − mean)/σ."""
    part = pset.take(np.flatnonzero(mask)[:limit])
    y, mean, sigma = part.y, part.dist.mean(), part.dist.std()
    columns: dict[str, Any] = {"row": part.row_number}
    if part.model is not None:
        columns["model"] = part.model
    columns.update({"y": y, "mean": mean, "σ": sigma, "z": (y - mean) / sigma})  # one frame, built once
    return pd.DataFrame(columns)


# ------------------------------------------------------------------------------------------------ classification
def row_bin_values(pset: PredictionSet, target: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(binned value, predicted class, top-label confidence) of every row, as the reliability diagrams bin them.

    The binned value is the confidence (top-label files and ``target="top_label"``) or P(y = class 1)
    (``target="positive"``).
    """
    if pset.top_label_only:
        return pset.confidence, pset.point.astype(np.int64), pset.confidence
    conf = pset.probs.max(axis=1)
    pred = pset.probs.argmax(axis=1)
    return (pset.probs[:, 1] if target == "positive" else conf), pred, conf


def confidence_bin_rows(pset: PredictionSet, selection: Mapping[str, Iterable[int]], n_bins: int,
                        strategy: str = "uniform", target: str = "top_label") -> np.ndarray:
    """Row mask of the selected confidence bins ({model: bins}) of the reliability diagram of ``target``, the bins
    computed per model as the diagram does (:func:`views.selection.confidence_row_bins`)."""
    values, _, _ = row_bin_values(pset, target)
    row_bins = confidence_row_bins(values, n_bins, strategy, group=pset.model)
    return rows_in_bins(row_bins, selection, group=pset.model)


def reliability_semantics(pset: PredictionSet, target: str) -> str:
    """One Markdown sentence saying what the reliability diagram plots for this set and ``target``."""
    classes = list(pset.classes) if pset.classes is not None else None
    k = len(classes) if classes is not None else (pset.probs.shape[1] if pset.probs is not None else 0)
    if pset.top_label_only:
        return ("**Top-label file**: only the predicted class and its confidence are known, so the diagram bins "
                "the confidence against accuracy; NLL, Brier and per-class views need full probability vectors.")
    if target == "positive":
        positive = md_escape(classes[1]) if classes else "1"  # a label value of the file
        return (f"**Positive-class reliability** (binary): x = predicted P(y = {positive!s}), y = observed "
                f"frequency of {positive!s} in the bin (scikit-learn / netcal convention); the table's "
                "“ECE (positive class)” uses these bins. The top-label ECE bins max(p, 1 − p) instead.")
    if is_binary(pset):
        return ("**Top-label reliability** (binary): confidence = max(p, 1 − p) against accuracy (Guo et al.); "
                "switch *Binary semantics* to see P(positive) against the frequency of the positive class.")
    return (f"**Top-label reliability** ({k} classes): confidence = max_k p_k of each row against the "
            "accuracy of the predicted class (Guo et al. 2017).")


def _class_names(pset: PredictionSet) -> np.ndarray:
    if pset.classes is not None:
        return np.asarray(list(pset.classes), dtype=object)
    k = pset.probs.shape[1] if pset.probs is not None else 0
    return np.asarray([str(i) for i in range(max(k, 1))], dtype=object)


def classification_rows(pset: PredictionSet, mask: np.ndarray, target: str, limit: int,
                        values: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> pd.DataFrame:
    """The first ``limit`` rows of ``mask``: row, [model,] label, predicted, confidence, [P(positive),] correct.
    ``values``: :func:`row_bin_values` of ``pset`` and ``target`` if the caller has them."""
    values, pred, conf = row_bin_values(pset, target) if values is None else values
    idx = np.flatnonzero(mask)[:limit]
    names = _class_names(pset)
    frame = pd.DataFrame({"row": pset.row_number[idx]})
    if pset.model is not None:
        frame["model"] = pset.model[idx]
    frame["label"] = names[pset.labels[idx]]
    frame["predicted"] = names[pred[idx]]
    frame["confidence"] = conf[idx]
    if target == "positive":
        frame[f"P({names[1]})"] = values[idx]
    frame["correct"] = pset.labels[idx] == pred[idx]
    return frame


def class_breakdowns(pset: PredictionSet, mask: np.ndarray, target: str, models: Sequence[str],
                     values: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> pd.DataFrame:
    """:func:`views.selection.class_breakdown` of the rows of ``mask``, per model of ``models`` that has a
    model column (a ``model`` column first when there are several).  ``values``: :func:`row_bin_values` of
    ``pset`` and ``target`` if the caller has them."""
    _, pred, conf = row_bin_values(pset, target) if values is None else values
    classes = list(pset.classes) if pset.classes is not None else None
    k = len(classes) if classes is not None else (pset.probs.shape[1] if pset.probs is not None else 0)
    parts = []
    models_sel: list[str | None] = [None] if pset.model is None else list(models)
    for m in models_sel:  # loop over models, not rows
        mm = mask if m is None else mask & (pset.model == m)
        t = class_breakdown(pset.labels[mm], pred[mm], conf[mm], max(k, 1), classes)
        if m is not None and len(models_sel) > 1:
            t.insert(0, "model", m)
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


#: Panels of the per-class reliability figure shown at first (more are unreadable at a page's width).
PER_CLASS_SHOWN = 20


def per_class_choice(
    per_class: pd.DataFrame, classes: Sequence[str] | None, shown: int = PER_CLASS_SHOWN
) -> tuple[dict[str, Any], list[str]]:
    """The class picker of the per-class reliability figure: ({label: class code} of every class in class order,
    the labels shown by default) — all classes when there are at most ``shown``, else the ``shown`` with the largest
    one-vs-rest ECE, worst first (:func:`calib_core.plots.worst_classes`)."""
    summary = plots.per_class_summary(per_class, classes)
    options = dict(zip(summary["class"].astype(str), summary["class_code"]))
    by_code = {code: label for label, code in options.items()}
    return options, [by_code[c] for c in plots.worst_classes(per_class, shown)]


def per_class_caption(n_shown: int, n_classes: int, default: bool) -> str:
    """How many classes the per-class figure shows, and which ("" when it shows all of them)."""
    if n_shown >= n_classes:
        return ""
    which = (f"the {n_shown} with the largest one-vs-rest ECE, worst first" if default
             else "the classes picked above")
    return (f"Showing {n_shown} of {n_classes} classes ({which}); pick classes above to see others. The table "
            "below lists every class.")


def per_class_table(per_class: pd.DataFrame, classes: Sequence[str] | None, wide_up_to: int = 12) -> pd.DataFrame:
    """Per-class summary (``plots.per_class_summary``): one column per class (``class →`` first) when there are at
    most ``wide_up_to`` classes, else one row per class."""
    summary = plots.per_class_summary(per_class, classes).drop(columns="class_code")
    if len(summary) <= wide_up_to:
        return summary.set_index("class").T.rename_axis("class →").reset_index()
    return summary


# ------------------------------------------------------------------------------------------------ ordinal classes
def threshold_reliabilities(pset: PredictionSet, models: Sequence[str], *, n_bins: int = 15,
                            strategy: str = "uniform", n_resamples: int = 1000,
                            seed: int = 0) -> dict[str, ThresholdReliability]:
    """The Classification page's "Per threshold" section: {model: reliability of P(Y ≤ k) per threshold}
    (:func:`calib_core.diagrams.classification_ordinal.threshold_reliability`) of each model's rows; ``{}`` unless
    the set is ordinal with full probability vectors."""
    if not pset.ordinal or pset.top_label_only or pset.probs is None:
        return {}
    model = pset.model if pset.model is not None else np.full(pset.n_rows, "model")
    out = {}
    for name in models:
        mask = model == name
        if mask.sum() >= 2:
            out[name] = threshold_reliability(pset.probs[mask], pset.labels[mask], classes=pset.classes,
                                              n_bins=n_bins, strategy=strategy, n_resamples=n_resamples, seed=seed)
    return out


def threshold_table(results: Mapping[str, ThresholdReliability]) -> pd.DataFrame:
    """One row per (model, threshold): the event, mean P(Y ≤ k), the frequency of Y ≤ k, the event's Brier score
    (they sum to the RPS), binned ECE, CORP MCB, MCB if calibrated, the Holm-adjusted p-value and a verdict word."""
    parts = []
    for name, res in results.items():
        s = res.summary
        parts.append(pd.DataFrame({
            "model": name, "threshold": s["event"], "mean P(Y ≤ k)": s["mean_forecast"],
            "frequency of Y ≤ k": s["frequency"], "Brier": s["brier"], "ECE": s["ece"], "MCB": s["mcb"],
            "MCB if calibrated": s["mcb_null_mean"], "p (Holm)": s["adjusted_p"],
            "verdict": np.where(s["flag"], "miscalibrated", np.where(s["adjusted_p"].notna(), "consistent",
                                                                        "not tested")),
        }))
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return table.drop(columns="model") if len(results) == 1 else table


# ------------------------------------------------------------------------------------------------ labs
def quantity_table(numbers: Mapping[str, float], labels: Mapping[str, str]) -> pd.DataFrame:
    """A two-column (quantity, value) table of ``numbers`` named by ``labels`` (in the order of ``labels``)."""
    return pd.DataFrame([(label, numbers[key]) for key, label in labels.items()], columns=["quantity", "value"])


# ------------------------------------------------------------------------------------------------ recalibrate
#: The metrics the Recalibrate comparison shows first (dot-plot rows and table columns): one or two calibration
#: statistics a reader knows, the coverage of the 90% interval, the proper scores and a sharpness number.
COMPARISON_METRICS = {
    "regression": ("ence", "calibration_rmse", "coverage_90", "nll", "crps", "sharpness"),
    "classification": ("ece", "classwise_ece", "ece_positive", "nll", "brier", "accuracy"),
}


def comparison_metrics(summary: pd.DataFrame, task: str) -> tuple[list[str], list[str]]:
    """(every metric key of a comparison summary in its order, the default subset to show).

    ``summary``: :func:`calib_core.diagnosis.tables.comparison_summary`'s table (ordered by kind).  The default is
    :data:`COMPARISON_METRICS` of ``task`` restricted to the metrics present, in the summary's order; all
    metrics when none of them is present.
    """
    keys = [str(k) for k in pd.unique(summary["metric"])]
    wanted = set(COMPARISON_METRICS.get(task, ()))
    default = [k for k in keys if k in wanted]
    return keys, default or keys
