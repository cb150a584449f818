"""Every CSV a user can download is neutralised.

Streamlit's dataframe toolbar offers "Download as CSV" of every displayed table, exporting the cells as shown:
``=1+1`` and ``=HYPERLINK(…)`` from an uploaded file went out verbatim (Data page preview, models / groups table,
row tables of the diagnosis pages).  Every frame given to ``st.dataframe`` on a page that shows uploaded data goes
through ``ui.dataframe`` (``ui.csv_safe``: the rule of the project's own CSV exports,
``calib_core.export.neutralise_formulas``).  Checked statically (no direct ``st.dataframe`` call there) and in
the running app (AppTest: every frame handed to ``st.dataframe`` on the Data, Regression, Classification and
Recalibrate pages, with formula-like model, group, split, label and column names).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from calib_core.export import FORMULA_PREFIXES
from tests.app.test_pages import bins_points, plotly_select, specs

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
_LOADED_DATA = re.compile(r"\bpset\b|current_data|require_data|parse_upload|upload_columns|data_upload|pset_name")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

FORMULAS = ["=1+1", '=HYPERLINK("http://127.0.0.1:9/x","click")', "@SUM(1)", "+cmd|' /C calc'!A0", "-2+3"]


def test_no_page_with_uploaded_data_calls_st_dataframe_directly():
    files = [REPO / "app.py", *sorted((REPO / "pages").glob("*.py")), *sorted((REPO / "dashboard").glob("*.py"))]
    found = []
    for path in files:
        source = path.read_text(encoding="utf-8")
        if not _LOADED_DATA.search(source):
            continue
        tree = ast.parse(source)
        helpers = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "dataframe"
                   and path.name == "display.py" for n in ast.walk(f)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("dataframe", "data_editor", "table")
                    and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "ui")
                    and id(node) not in helpers):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node.func)}")
    assert not found, "use ui.dataframe (CSV-safe) for frames that may hold text from a file:\n" + "\n".join(found)


def unsafe_cells(frame: pd.DataFrame) -> list[str]:
    """Column names and text cells a spreadsheet would run as a formula."""
    texts = [str(c) for c in frame.columns]
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        texts += [v for v in values if isinstance(v, str)]
    return [t for t in texts if t.startswith(FORMULA_PREFIXES) and not _NUMBER.fullmatch(t)]


def all_frames(at: AppTest) -> list[pd.DataFrame]:
    assert not at.exception, [e.value for e in at.exception]
    return [d.value for d in at.dataframe]


def check(at: AppTest, expect_neutralised: bool = True) -> None:
    frames = all_frames(at)
    assert frames
    bad = {i: unsafe_cells(f) for i, f in enumerate(frames) if unsafe_cells(f)}
    assert not bad, bad
    if expect_neutralised:  # not vacuous: the file's formulas are shown, neutralised
        shown = {str(v) for f in frames for v in [*f.columns, *f.astype(str).to_numpy().ravel()]}
        assert any(t.startswith("'" + f) for t in shown for f in FORMULAS), sorted(shown)[:50]


def regression_file() -> bytes:
    rng = np.random.default_rng(0)
    n = 240
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, size=n)
    return pd.DataFrame({
        "y": mean + std * rng.normal(size=n), "mean": mean, "std": std,
        "model": np.where(np.arange(n) % 2, FORMULAS[0], FORMULAS[1]),
        "group": np.where(np.arange(n) % 3, FORMULAS[2], "plain"),
        "split": np.where(np.arange(n) < n // 2, "cal", "test"),
        FORMULAS[3]: 0.0,  # a column name
    }).to_csv(index=False).encode()


def classification_file() -> bytes:
    rng = np.random.default_rng(1)
    n = 300
    p = rng.dirichlet(np.ones(3), size=n)
    labels = np.array([FORMULAS[0], FORMULAS[2], "plain"])[(rng.uniform(size=(n, 1)) > p.cumsum(1)).sum(1)]
    frame = pd.DataFrame({"label": labels, **{f"prob_{j}": p[:, j] for j in range(3)}})
    frame["model"] = FORMULAS[1]
    return frame.to_csv(index=False).encode()


def upload(at: AppTest, name: str, data: bytes) -> None:
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload").upload(name, data, "text/csv").run()
    assert not at.exception and not at.session_state["data_upload_error"] if "data_upload_error" in \
        at.session_state else True


def test_displayed_frames_are_csv_safe_on_every_page():
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    upload(at, "formulas.csv", regression_file())
    assert at.session_state["pset_name"] == "formulas.csv"
    check(at)  # column-mapping preview, data facts, first validated rows

    at.session_state["reg_resamples"] = 0
    at.session_state["reg_sims"] = 0
    at.switch_page("pages/regression.py").run()
    check(at)  # metric table
    spec = specs(at)["reg_levi_chart"]
    plotly_select(at, "reg_levi_chart", bins_points(spec, FORMULAS[0], [0, 1, 2]))
    assert at.session_state["reg_sel"].bins
    check(at)  # + the selected rows

    at.switch_page("pages/recalibrate.py").run()
    run = next(b for b in at.button if "Run comparison" in str(b.label))
    run.click().run()
    check(at)  # comparison table (models x calibrators)

    upload(at, "classes.csv", classification_file())
    assert at.session_state["pset"].task == "classification"
    at.session_state["cls_resamples"] = 0
    at.session_state["cls_sims"] = 0
    at.switch_page("pages/classification.py").run()
    check(at)
    spec = specs(at)["cls_rel_chart"]
    plotly_select(at, "cls_rel_chart", bins_points(spec, FORMULAS[1], list(range(15)), role="bars"))
    check(at)  # + per-class breakdown and the rows of the selected bins
