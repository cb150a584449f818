"""Uploaded text never renders as Markdown.

Every string that came from a file (file, column, model, group and class names, cell values, messages that quote
them) reaches Streamlit's Markdown surfaces through one function, :func:`views.pages.md_escape`
(``ui.md_escape``).  Two checks:

* a static scan of ``app.py``, ``pages/`` and ``dashboard/``: every argument of a Streamlit text call
  (``st.markdown`` / ``write`` / ``caption`` / ``info`` / ``warning`` / ``error`` / ``success`` / ``toast`` /
  headers, ``st.sidebar`` and column variants, widget / tab / expander / metric labels, help tooltips, Markdown
  options of radio / pills / segmented controls) must be built only from literals, formatted numbers, calls of
  ``md_escape`` (or of a function documented to escape its file text) and local names assigned from those —
  or be listed in :data:`OWN_TEXT` with the reason it cannot hold text from a file;
* the escaper itself on hostile names (an image link to a local server, ``:red-background[…]``,
  ``:material/verified:``, emoji shortcodes, LaTeX, HTML, entities, autolinks), rendered by the same Markdown
  parser family as Streamlit's frontend would be too heavy here, so the properties are checked on the escaped
  text; the browser test ``test_browser_hostile_names`` renders them in Chromium.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from views.pages import md_escape

REPO = Path(__file__).resolve().parents[2]
ALL_FILES = [REPO / "app.py", *sorted((REPO / "pages").glob("*.py")), *sorted((REPO / "dashboard").glob("*.py"))]
#: A file is given uploaded text when it touches the loaded data (the session's PredictionSet, the upload).
_LOADED_DATA = re.compile(r"\bpset\b|current_data|require_data|parse_upload|upload_columns|data_upload|pset_name")
FILES = [p for p in ALL_FILES if _LOADED_DATA.search(p.read_text(encoding="utf-8"))]

#: Calls whose first argument (body / label) renders as Markdown.
BODY_CALLS = {"markdown", "write", "caption", "info", "warning", "error", "success", "header", "subheader", "title",
              "toast", "exception", "spinner", "status", "expander", "popover", "latex"}
#: Widgets whose label (first argument or ``label=``) renders as Markdown.
WIDGETS = {"button", "download_button", "link_button", "page_link", "checkbox", "toggle", "radio", "selectbox",
           "multiselect", "slider", "select_slider", "text_input", "number_input", "text_area", "date_input",
           "time_input", "file_uploader", "color_picker", "segmented_control", "pills", "form_submit_button",
           "metric", "camera_input", "audio_input", "chat_input"}
#: Widgets whose options render as Markdown (selectbox / multiselect options do not).
MARKDOWN_OPTIONS = {"radio", "segmented_control", "pills", "select_slider"}
#: Keyword arguments that render as Markdown.
MARKDOWN_KEYWORDS = {"body", "label", "help", "caption", "captions"}
#: Dashboard helpers that render one of their arguments as Markdown: name → positional index.
HELPER_SINKS = {"row": 0}  # LinkedSelection.row(text)

#: Functions whose result is safe Markdown: the escaper, helpers that escape the file text they insert, and
#: functions of numbers.
SAFE_CALLS = {"md_escape", "data_caption", "summary_caption", "reliability_semantics", "len", "min", "max", "int",
              "float", "round", "abs", "sum", "range"}

#: Names of numbers (counts, limits): ``n_rows``, ``result.n_bins``, ``MAX_TABLE_ROWS``.
NUMBER_NAME = re.compile(r"^(n_\w+|MAX_\w+)$")
#: String methods that keep a safe string safe.
STR_METHODS = {"title", "upper", "lower", "capitalize", "strip", "replace"}

#: Expressions that cannot hold text from a file (``expression`` anywhere, or ``path:expression``) → why.
OWN_TEXT: dict[str, str] = {
    "vc.PREVALENCE_HELP": "views.clinical.PREVALENCE_HELP: a fixed help text",
    "dashboard/clinical.py:vc.smoothed_caption(next(iter(shown.values())), target)": "views.clinical.smoothed_caption: "
        "the page's own sentence and numbers; its one part from a file (the Resample-by column in the band's "
        "description) is escaped there",
    "dashboard/clinical.py:text": "views.clinical.prevalence_statement: the page's own sentence with numbers only",
    "dashboard/display.py:labels": "dashboard.lazy_tabs' tab labels: the pages' own literal tab names",
    "dashboard/selection.py:text": "LinkedSelection.row's Markdown parameter: every call of row is checked as a "
                                   "sink (HELPER_SINKS), so the text its callers give is escaped there",
    "summary.spec.task": "a loaded summary's task: 'regression' or 'classification' (summary_views.read_summary "
                         "refuses any other)",
    "summary.spec.task.title()": "a loaded summary's task: 'regression' or 'classification' (checked on reading)",
    "summary_views.NOT_FROM_SUMMARY['rows']": "a fixed sentence of views.summary",
    "NOT_FROM_SUMMARY['recalibrate']": "a fixed sentence of views.summary",
    "pset.task": "the task: 'regression' or 'classification'",
    "pset.task.title()": "the task: 'regression' or 'classification'",
    "data[0].task": "the task: 'regression' or 'classification'",
    "pset.layout": "the loader's layout name (gaussian, quantile, sample, point, probs, logits, top_label, …)",
    "pages/data.py:target": "a page path of this project",
    "pages/hub.py:hv.empty_state(None if data is None else data[0])": "views.hub.empty_state: the page's own "
                                                                       "sentences, the task and the layout name",
    "dashboard/compare.py:reason": "the Compare models page's views.compare.empty_state: its own sentences (how many "
                                   "models, the layout's kind); no model or file name",
    "pages/compare.py:label": "views.compare.score_label of the comparison's score key: WIS, CRPS, log score or "
                              "Brier score (the core's fixed score names)",
    "dashboard/hub.py:horizons": "a hub's horizons: integers (the reader parses the horizon column as int64)",
    "dashboard/hub.py:dates": "a hub's target end dates: datetime64 values, shown through a date format",
    "dashboard/timeview.py:_span_text(windows, picked, int(mask.sum()))": "a picked time range: timestamps formatted "
        "with strftime (datetime64 after calib_core.data.timecol) "
        "or numbers with .6g, and counts; no text from the file",
    "dashboard/monitorview.py:vm.looking_sentence(result.alpha)": "views.monitor.looking_sentence: fixed words and "
                                                                  "the monitor's false-alarm rate (a number)",
    "dashboard/monitorview.py:vm.monitor_caption(result.lag, time_name, grouped)": "views.monitor.monitor_caption: "
        "fixed words, the lag (an int), views.monitor.time_name ('target_end_date' or 'time', never a file's column "
        "name) and step_time's unit ('day' or 'hour')",
    "dashboard/cache.py:spinner": "the spinner text a page passes to a cache call: its own fixed words",
    "dashboard/state.py:hours": "dashboard.state.STORE_IDLE_HOURS, an int, and the word 'hours'",
    "dashboard/state.py:target": "a page path of this project",
    "pages/data.py:task": "the task: a fixed option of the segmented control, or the loop over both tasks",
    "pages/data.py:tname.replace('_', ' ')": "a built-in template name (calib_core.data.templates)",
    "pages/data.py:t.file_name": "a built-in template's file name (calib_core.data.templates)",
    "pages/data.py:t.description": "a built-in template's description (calib_core.data.templates)",
    "pages/data.py:role": "a role of the loop over ('split', 'group', 'model')",
    "pages/data.py:kind": "the chosen uncertainty layout, one of the selectbox's fixed options",
    "pages/recalibrate.py:how": "EvaluationResult.split_description(): fixed words and numbers",
    "pages/recalibrate.py:names[3:]": "figure titles of calib_core.plots.comparison_figures (fixed words)",
    "dashboard/display.py:heading": "a metric family's heading, views.pages.KIND_HEADINGS (fixed words)",
    "pages/recalibrate.py:p.label": "a calibrator parameter's label (calib_core.calibrators.registry)",
    "pages/slices.py:stats_choices": "the funnel statistics, fixed names (FUNNEL_STATISTICS of calib_core's "
                                     "regression.slices / classification.slices)",
    "pages/slices.py:statistic": "one of the funnel statistics, fixed names (FUNNEL_STATISTICS)",
    "pages/classification.py:list(REL_KINDS)": "the two reliability-diagram kinds, fixed words of the page",
    "pages/classification.py:list(corp_plots.BAND_CHOICES)": "CORP band choices, fixed words (calib_core.plots.corp)",
    "pages/regression.py:list(DEFAULT_DECOMPOSITION_LEVELS)": "the quantile levels 0.05…0.95, numbers of "
                                                              "calib_core.metrics.regression_decomposition",
    "pages/recalibrate.py:p.help": "a calibrator parameter's help (calib_core.calibrators.registry)",
    "pages/recalibrate.py:name": "a calibrator name of the registry (the loop over the offered calibrators)",
    "pages/recalibrate.py:entry.paper": "a calibrator's paper (calib_core.calibrators.registry)",
    "dashboard/state.py:task": "the page's task, a literal in the page",
    "dashboard/state.py:default_example": "a built-in example title",
    "pages/classification.py:caption": "views.per_class_caption: numbers of classes and fixed words (no class names)",
    "dashboard/display.py:note": "views.models_note: numbers of models and fixed words (no model names)",
    "dashboard/summary_pages.py:heading": "a metric family's heading, views.pages.KIND_HEADINGS (fixed words)",
    "sv.EXACTNESS_CAPTION": "a fixed paragraph of views.summary",
    "sv.NOT_FROM_SUMMARY['rows']": "a fixed sentence of views.summary",
    "sv.NOT_FROM_SUMMARY['z_selection']": "a fixed sentence of views.summary",
    "sv.NOT_FROM_SUMMARY['regression_selection_metrics']": "a fixed sentence of views.summary",
    "sv.NOT_FROM_SUMMARY['per_class_selection']": "a fixed sentence of views.summary",
}


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


class _Scanner:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rel = path.relative_to(REPO).as_posix()
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.parents = _parents(self.tree)

    def scope(self, node: ast.AST) -> ast.AST:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return node
        return self.tree

    def own(self, node: ast.AST) -> bool:
        text = ast.unparse(node)
        return text in OWN_TEXT or f"{self.rel}:{text}" in OWN_TEXT

    def safe(self, node: ast.AST, depth: int = 0) -> bool:
        if depth > 20:
            return False
        if self.own(node):
            return True
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.JoinedStr):
            return all(self.safe(v, depth + 1) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            # a format spec (``:,``, ``.4g``, ``.0%``) formats a number
            return node.format_spec is not None or self.safe(node.value, depth + 1)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if isinstance(func, ast.Attribute) and name in STR_METHODS:
                return self.safe(func.value, depth + 1) and all(self.safe(a, depth + 1) for a in node.args)
            return name in SAFE_CALLS
        if isinstance(node, ast.Attribute) and NUMBER_NAME.match(node.attr):
            return True
        if isinstance(node, ast.BinOp):
            return self.safe(node.left, depth + 1) and self.safe(node.right, depth + 1)
        if isinstance(node, ast.IfExp):
            return self.safe(node.body, depth + 1) and self.safe(node.orelse, depth + 1)
        if isinstance(node, (ast.List, ast.Tuple)):
            return all(self.safe(e, depth + 1) for e in node.elts)
        if isinstance(node, ast.ListComp):
            return self.safe(node.elt, depth + 1)
        if isinstance(node, ast.Name):
            return self.safe_name(node, depth)
        return False

    def safe_name(self, node: ast.Name, depth: int) -> bool:
        """A local name is safe when every assignment to it in its scope assigns a safe value (a loop over a
        literal tuple of literals counts as such an assignment)."""
        if NUMBER_NAME.match(node.id):
            return True
        scope = self.scope(node)
        values = []
        for sub in ast.walk(scope):
            if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in sub.targets):
                values.append(sub.value)
            elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub.target.id == node.id:
                values.append(sub.value)
            elif isinstance(sub, (ast.For, ast.comprehension)) and any(
                    isinstance(t, ast.Name) and t.id == node.id for t in ast.walk(sub.target)):
                literal = isinstance(sub.iter, (ast.Tuple, ast.List)) and all(
                    isinstance(e, ast.Constant) for e in sub.iter.elts)
                if not (literal and isinstance(sub.target, ast.Name)):
                    return False
            elif isinstance(sub, ast.arg) and sub.arg == node.id:
                return False
            elif isinstance(sub, ast.NamedExpr) and sub.target.id == node.id:
                values.append(sub.value)
        return bool(values) and all(v is not None and self.safe(v, depth + 1) for v in values)

    def sinks(self):
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            name = node.func.attr
            args: list[tuple[str, ast.AST]] = []
            if name in BODY_CALLS or name in WIDGETS:
                if node.args:
                    args.append(("label", node.args[0]))
                if name == "metric":
                    args += [("value", a) for a in node.args[1:3]]
                if name in MARKDOWN_OPTIONS and len(node.args) > 1:
                    args.append(("options", node.args[1]))
                for kw in node.keywords:
                    if kw.arg in MARKDOWN_KEYWORDS or (name == "metric" and kw.arg in ("value", "delta")) or (
                            name in MARKDOWN_OPTIONS and kw.arg == "options"):
                        args.append((kw.arg, kw.value))
            if name == "tabs" and node.args:
                args.append(("tabs", node.args[0]))
            if name in HELPER_SINKS and len(node.args) > HELPER_SINKS[name]:
                args.append(("text", node.args[HELPER_SINKS[name]]))
            for what, arg in args:
                yield node, name, what, arg


def unescaped_calls() -> list[str]:
    found = []
    for path in FILES:
        scanner = _Scanner(path)
        for node, name, what, arg in scanner.sinks():
            if not scanner.safe(arg):
                found.append(f"{scanner.rel}:{node.lineno}: {name}({what}={ast.unparse(arg)[:100]})")
    return found


def test_every_streamlit_text_call_escapes_text_from_files():
    assert {p.relative_to(REPO).as_posix() for p in FILES} >= {
        "pages/data.py", "pages/regression.py", "pages/classification.py", "pages/recalibrate.py",
        "dashboard/state.py", "dashboard/display.py"}
    found = unescaped_calls()
    assert not found, (
        "Streamlit text calls given text that may come from a file without ui.md_escape (wrap it, or add the "
        "expression to OWN_TEXT with the reason it cannot hold file text):\n" + "\n".join(found)
    )


def test_the_scan_finds_an_unescaped_name(tmp_path, monkeypatch):
    """The scanner itself: the issue's cases as they were (sidebar name, a note, a warning loop) are found."""
    page = tmp_path / "page.py"
    page.write_text(
        "import streamlit as st\nimport dashboard as ui\n"
        "name = st.session_state.get('pset_name')\n"
        "st.sidebar.markdown(f'**Loaded:** {name}')\n"
        "for note in notes:\n    st.caption(note)\n"
        "st.warning(f'The loaded data ({data[2]}) is a set')\n"
        "c1.selectbox(f'{col} column', [1])\n"
        "st.caption(ui.md_escape(name))\n"
        "st.caption(f'{n:,} rows')\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(_Scanner, "__init__", lambda self, path: _init(self, path))
    scanner = _Scanner(page)
    bad = sorted(ast.unparse(arg) for _, _, _, arg in scanner.sinks() if not scanner.safe(arg))
    assert bad == sorted(["f'**Loaded:** {name}'", "note", "f'The loaded data ({data[2]}) is a set'",
                          "f'{col} column'"])


def _init(self, path):
    self.path = path
    self.rel = path.name
    self.tree = ast.parse(path.read_text(encoding="utf-8"))
    self.parents = _parents(self.tree)


# ------------------------------------------------------------------------------------------------ the escaper
HOSTILE = [
    "![m](http://127.0.0.1:8765/x.png)",
    "file :red-background[styled] :material/verified: :smile: :+1:",
    "<img src=x onerror=alert(1)> &lt;b&gt; &#58;material/verified&#58;",
    "$x^2$ **bold** _it_ `code` ~~del~~ [link](http://x) <http://x> www.example.com a@b.com",
    "# heading\n- item\n1. item\n> quote\n---\n| a | b |",
    "back\\slash\\",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_md_escape_leaves_no_markdown_syntax(text):
    out = md_escape(text)
    bare = re.sub(r"\\.", "", out)  # what is left once every escaped character is taken out
    # no character that opens an inline construct is left unescaped ...
    assert not re.search(r"[`*_\[\]<>!$&~|@{}#\\]", bare), out
    # ... nor a block marker at the start of a line (heading, list, quote, rule, setext underline)
    assert not re.search(r"^[ \t]*([-+=>]|\d+[.)])", out, re.MULTILINE), out
    # no Streamlit shortcode (:material/…:, :emoji:, :+1:) and no URL autolink can match
    assert not re.search(r":[\w+\-/]", out) and "://" not in out and not re.search(r"(?i)www\.", out)
    # and it reads the same once the escapes are resolved (what Markdown shows)
    shown = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", out).replace("\u2060", "")
    assert shown == text


def test_positive_class_text_escapes_the_class_name():
    from calib_core.base.predictions import PredictionSet
    from views import pages as views

    hostile = "![p](http://127.0.0.1:8765/p.png)"
    pset = PredictionSet(task="classification", labels=np.array([0, 1]), probs=np.array([[0.4, 0.6], [0.7, 0.3]]),
                         classes=["no", hostile])
    text = views.reliability_semantics(pset, "positive")
    assert md_escape(hostile) in text and hostile not in text
