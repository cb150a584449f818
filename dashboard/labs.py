"""The one scaffold of the teaching-lab pages (``pages/lab_*.py``) and of the lab index.

A lab page is: a header (title "Lab n · title", the lab's text, its lesson and paper reference), slider
defaults, the lab's ``calib_core.labs`` run cached on the slider values, its figures (shared through the figure
cache under a key made of the lab and the values), tables, and the lab's numbers left in
``st.session_state["lab_<key>"]`` for the tests.  :class:`LabPage` does all of it but the layout of the sliders
and of the charts, which stays in each page.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from calib_core import plots
from calib_core.calibrators import registry
from calib_core.labs import LABS, lab
from views.selection import format_bins, with_selected

from .cache import cached, figure
from .display import number_table
from .selection import LinkedSelection
from .state import init_state, record_run_time

PAGES_DIR = Path(__file__).resolve().parents[1] / "pages"


class LabPage:
    """Scaffold of the lab ``key`` (``calib_core.labs.LABS``), drawn on construction.

    Header, two styles: with ``intro`` (the lab's own explanation, *What to look at* inside it) the intro is
    followed by a caption "lesson — reference"; with ``look`` the lesson comes first and *What to look at* is a
    box, the reference a caption at the end (:meth:`finish`).  ``defaults`` are the initial widget values.
    """

    def __init__(self, key: str, defaults: Mapping[str, Any], *, intro: str | None = None,
                 look: str | None = None):
        self.started = time.perf_counter()
        self.lab = lab(key)
        self.number = 1 + [item.key for item in LABS].index(key)
        st.title(f"Lab {self.number} · {self.lab.title}")
        if intro is not None:
            st.markdown(intro)
            st.caption(f"{self.lab.lesson}  —  {self.lab.reference}")
        else:
            st.markdown(f"**Lesson.** {self.lab.lesson}")
            st.info(look, icon=":material/visibility:")
        self.reference_at_end = intro is None
        self.defaults = dict(defaults)
        init_state(defaults)
        self.key = f"lab:{key}"

    @staticmethod
    def value(key: str, default: Any = None) -> Any:
        """The widget value ``key`` (``default`` when it is empty, e.g. a deselected segmented control)."""
        value = st.session_state[key]
        return default if value is None and default is not None else value

    def params(self, keys: Mapping[str, str], *, digits: int | None = None, **extra: Any) -> dict[str, Any]:
        """{parameter: value of its widget key} with each value converted to the type of the widget's default (an
        empty widget gives its default); floats rounded to ``digits`` if given; ``extra`` parameters as given."""
        out: dict[str, Any] = {}
        for name, key in keys.items():
            default = self.defaults[key]
            value = self.value(key, default)
            if isinstance(default, bool):
                value = bool(value)
            elif isinstance(default, int):
                value = int(value)
            elif isinstance(default, float):
                value = float(value) if digits is None else round(float(value), digits)
            out[name] = value
        return {**out, **extra}

    def run(self, function: Callable[..., Any], params: Mapping[str, Any], *, spinner: str = "Simulating…",
            max_entries: int = 16, suffix: str = "") -> Any:
        """``function(**params)``, cached on the values; sets :attr:`key` (figure cache key) from them."""
        self.params = dict(params)
        self.key = f"lab:{self.lab.key}|{sorted(self.params.items())}{suffix}"
        return cached(function, max_entries=max_entries, spinner=spinner)(**self.params)

    def figure(self, name: str, build: Callable[[], Any]) -> Any:
        """A figure of this run (built once per slider values and ``name``)."""
        return figure(f"{self.key}|{name}", build)

    def figures(self, result: Any, names: Iterable[str]) -> dict[str, Any]:
        """The named figures of ``result.figures()``."""
        return {name: self.figure(name, lambda n=name: result.figures()[n]) for name in names}

    @staticmethod
    def table(frame: pd.DataFrame, labels: Mapping[str, str], fmt: str, text: int | Iterable[str] = 1, *,
              task: str = "regression", by_quantity: bool = False) -> pd.DataFrame:
        """Show ``frame`` with readable column names (:func:`column_labels`: the registry's label for a metric of
        ``task``, the lab's ``labels`` for its own quantities) and numbers formatted with ``fmt``; ``text`` = the
        columns left as they are: the first ``text`` ones, or those named (by key or label).  Returns the renamed
        frame.  ``by_quantity``: one row per quantity and one column per row of ``frame`` (named by its first
        column), so a few forecasters with many numbers fit the page instead of scrolling sideways."""
        names = column_labels(frame.columns, labels, task=task)
        table = frame.rename(columns=names)
        if by_quantity:
            key = table.columns[0]
            table = table.set_index(key).T.rename_axis("quantity").reset_index()
            table.columns = [str(c) for c in table.columns]
            number_table(table, fmt, list(table.columns[1:]), height=35 * (len(table) + 1) + 3)
            return table
        columns = list(table.columns)
        if isinstance(text, int):
            numbers = columns[text:]
        else:
            kept = {names.get(c, c) for c in text} | set(text)
            numbers = [c for c in columns if c not in kept]
        number_table(table, fmt, numbers)
        return table

    def findings(self, sentences: Iterable[str], *, title: str = "What the numbers say") -> None:
        """The lab's conclusions, each computed from the numbers on screen (``calib_core.labs.<lab>``), as a list
        under ``title``; also left in ``st.session_state["lab_<key>_findings"]`` for the tests."""
        sentences = list(sentences)
        st.session_state[f"lab_{self.lab.key}_findings"] = sentences
        st.markdown(f"**{title}**\n\n" + "\n".join(f"- {s}" for s in sentences))

    def finish(self, numbers: Any) -> None:
        """Leave the lab's numbers in ``st.session_state["lab_<key>"]`` (tests read them), the reference caption
        (second header style) and the run time."""
        st.session_state[f"lab_{self.lab.key}"] = numbers
        if self.reference_at_end:
            st.caption(f"Reference: {self.lab.reference}.")
        record_run_time(self.started, f"lab_{self.lab.key}")


def is_registry_metric(key: str, task: str | None = None) -> bool:
    """Whether ``key`` is a metric of the registry (of ``task``; None: of either task)."""
    for t in (task,) if task is not None else registry.TASKS:
        try:
            registry.metric(key, t)
        except KeyError:
            continue
        return True
    return False


def column_labels(columns: Iterable[str], labels: Mapping[str, str] | None = None, *,
                  task: str = "regression") -> dict[str, str]:
    """{column: readable name}: a metric of the registry gets the registry's label (:func:`registry.metric_label`;
    a lab never relabels one), any other column the lab's label from ``labels``, else its own name."""
    labels = dict(labels or {})
    return {c: registry.metric_label(c, task) if is_registry_metric(c, task) else labels.get(c, c) for c in columns}


def pit_of_selected_bins(page: LabPage, prefix: str, result: Any, models: Iterable[str], colors: Mapping[str, str],
                         what: str) -> tuple[LinkedSelection, Any]:
    """Labs 2 and 3: bins (``what``: "γ-bins", "x-bins") selected in the lab's coverage-per-bin chart add the PIT
    histograms of their rows (``result.selected_pit(bins)``, dashed) to the PIT histogram of all rows.

    Draws the selection row; returns the selection (its :meth:`LinkedSelection.chart` draws the coverage chart)
    and the PIT figure."""
    selection = LinkedSelection(prefix, (page.key,))
    bins = tuple(sorted(set().union(*selection.bins.values()))) if not selection.empty else ()
    tables, dashes, pit_colors = with_selected({m: result.tables[m]["pit_histogram"] for m in models},
                                               result.selected_pit(bins) if bins else None, colors, f"selected {what}")
    selection.row(
        "Click a bin in the coverage chart (shift-click adds) to see the PIT histogram of its rows." if selection.empty
        else f"**{what} {format_bins(bins)} selected** — their PIT histograms are drawn dashed."
    )
    return selection, page.figure(f"pit|{bins}", lambda: plots.pit_histogram_figure(tables, colors=pit_colors,
                                                                                    dashes=dashes))


def lab_index() -> None:
    """The lab index: one bordered card per lab with its lesson, reference and a link to its page."""
    for number, item in enumerate(LABS, start=1):
        with st.container(border=True):
            st.markdown(f"**{number}. {item.title}** — {item.lesson}")
            st.caption(item.reference)
            if (PAGES_DIR / item.page_file).exists():
                st.page_link(f"pages/{item.page_file}", label=f"Open the lab: {item.title}", icon=item.icon)
            else:
                st.caption("(this lab's page is not built yet)")
