"""AppTests: the hostile files of ``tests/degenerate_cases.py`` on every page that takes data (Data, Regression or
Classification, Recalibrate, Slices, Compare models): a diagnosis or a clear message on each, never an exception.

The default run takes a few representative files; the matrix is ``slow`` (without values whose page path repeats
another case's, unless ``CALIB_LAB_FULL_MATRIX=1``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.degenerate_cases import CASES, HOSTILE_ROW

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 240
PAGES = ("pages/recalibrate.py", "pages/slices.py", "pages/compare.py")
DEFAULT = ["binary-2row", "oneclass-p0", "mean=+1e300", "feature=+inf"]
OVERFLOWING = ("y=+1e300", "mean=+1e300", "quantile=+1e300", "member=+1e300")
"""Files whose kept hostile row makes some metric inf or NaN (σ = 1e300 no longer does: sharpness is scale-free)."""


def _texts(at: AppTest) -> str:
    parts = [e.value for kind in ("caption", "markdown", "warning", "info", "error") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def _no_exception(at: AppTest, where: str) -> None:
    assert not at.exception, (where, [e.value for e in at.exception])


def _visit(name: str) -> None:
    frame, task = CASES[name]()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/data.py").run()  # straight to the Data page: the home page's run is not what this tests
    file_name = f"{name.replace('=', '_')}.csv"
    at.file_uploader(key="data_upload").upload(file_name, frame.to_csv(index=False).encode(), "text/csv").run()
    _no_exception(at, "data")
    if at.session_state["pset"] is None if "pset" in at.session_state else True:
        shown = file_name.replace("_", "\\_")  # the page escapes Markdown in the file name
        assert any(shown in e.value for e in at.error), [e.value for e in at.error]  # the loader's message
        return
    if name.startswith("feature=") and "1e" not in name:  # the loader's notes count the non-finite cell
        assert f"row {HOSTILE_ROW + 1} (" in _texts(at), _texts(at)
    for page in (f"pages/{task}.py", *PAGES):
        at.switch_page(page).run()
        _no_exception(at, page)
        if page.endswith(f"{task}.py") and name in OVERFLOWING:
            assert f"row {HOSTILE_ROW + 1} (" in _texts(at), _texts(at)  # the note names the row behind inf/NaN
        if page.endswith("slices.py") and name.startswith("feature=") and "1e" not in name:
            assert f"feature 'age': 1 of {len(frame)} cells are not finite numbers (row {HOSTILE_ROW + 1} (" in \
                _texts(at), _texts(at)  # the slice explorer counts the cell that gets no bin


@pytest.mark.parametrize("name", DEFAULT)
def test_representative_files_on_every_page(name):
    _visit(name)


REDUNDANT_ON_PAGES = ("=+1e300", "=-1e300", "=-inf")
"""Values whose page path repeats another case of the same column: ±1e300 overflow as +1e308 does, -inf is refused
or kept as +inf is.  The command-line matrix (``tests/test_degenerate_matrix.py``) still runs every case; the pages
run them all with ``CALIB_LAB_FULL_MATRIX=1``."""
FULL_MATRIX = os.environ.get("CALIB_LAB_FULL_MATRIX") == "1"


def _page_matrix() -> list[str]:
    rest = sorted(set(CASES) - set(DEFAULT))
    return rest if FULL_MATRIX else [n for n in rest if n in OVERFLOWING or not n.endswith(REDUNDANT_ON_PAGES)]


@pytest.mark.slow
@pytest.mark.parametrize("name", _page_matrix())
def test_every_hostile_file_on_every_page(name):
    _visit(name)
