"""Fuzzing the Data page's upload path with AppTest: the generators of ``fuzz_cases.py``.

One app session uploads generated bad files one after another, starting from a loaded example.  For every upload:
no exception element; a file the loader must refuse shows an ``st.error`` with the loader's message (file name, the
problem, what to do — the same per-category checks as ``tests/data/test_reading_fuzz.py``) and the previously loaded
data stay loaded (with the "still using" caption); a file the loader accepts becomes the loaded data with its rows
read / kept / dropped shown.  Every few uploads, and at the end, an example is loaded and the Regression page is
drawn, to
show the session still works.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.fuzz_cases import CATEGORIES, check_error_message, check_prediction_set

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 180
EXAMPLE = "Diabetes — Gaussian (mean, std) of a boosting ensemble"
EXAMPLES_PER_CATEGORY = 4  # 17 categories → 68 uploads (a few seconds of AppTest each second or so)
CHECK_EVERY = 10  # uploads between "the session still works" checks
SEEN: dict[str, int] = {}


def uploads(category: str) -> st.SearchStrategy:
    """The category's cases; the renormalise / column-mapping options have their own page tests, so only cases
    that an upload alone produces (no loader keyword arguments)."""
    return CATEGORIES[category].filter(lambda case: not case.load_kwargs)


@pytest.fixture(scope="module")
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    load_example(at)
    return at


def load_example(at: AppTest) -> None:
    at.switch_page("pages/data.py").run()
    at.selectbox(key="data_example").select(EXAMPLE).run()
    at.button(key="data_load_example").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["pset_name"] == EXAMPLE


def unescape(markdown: str) -> str:
    """The loader's message as it was before ``ui.md_escape`` made it inert (backslash escapes of ASCII
    punctuation resolved, word joiners after colons removed)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def session_still_works(at: AppTest) -> None:
    """After bad uploads: an example loads and the Regression page draws its figures without errors."""
    load_example(at)
    at.switch_page("pages/regression.py").run()
    assert not at.exception and not at.error, ([e.value for e in at.exception], [e.value for e in at.error])
    assert at.title[0].value == "Regression diagnostics" and at.get("plotly_chart")
    at.switch_page("pages/data.py").run()


@pytest.mark.parametrize("category", [pytest.param(c, marks=pytest.mark.slow) if c == "huge_column_count" else c
                                      for c in CATEGORIES])
def test_bad_uploads_show_the_message_and_keep_the_data(app, category):
    @settings(max_examples=EXAMPLES_PER_CATEGORY, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(case=uploads(category))
    def run(case):
        upload_and_check(app, case)

    run()
    assert SEEN.get(category, 0) >= 2


def upload_and_check(at: AppTest, case) -> None:
    SEEN[case.category] = SEEN.get(case.category, 0) + 1
    before = at.session_state["pset_name"]
    mime = "application/octet-stream" if case.name.endswith(".parquet") else "text/csv"
    at.file_uploader(key="data_upload").upload(case.name, case.data, mime).run()
    assert not at.exception, ([e.value for e in at.exception], case)
    errors = [unescape(e.value) for e in at.error]
    if errors:
        assert case.expect in ("error", "any"), (errors, case)
        assert len(errors) == 1
        check_error_message(case, errors[0], app=True)
        assert at.session_state["pset_name"] == before, case  # the previous data are kept
        assert any("previously loaded data" in c.value for c in at.caption)
    else:
        assert case.expect in ("load", "any"), ([m.value for m in at.metric], case)
        pset = at.session_state["pset"]
        assert at.session_state["pset_name"] == case.name
        check_prediction_set(case, pset)
        assert [m.value for m in at.metric][:3] == [f"{pset.n_read:,}", f"{pset.n_rows:,}",
                                                    f"{pset.dropped.total:,}"]
        if case.category == "fewer_rows_than_bins":  # 2–9 rows, fewer than the default bins: the page still draws
            page = "regression" if pset.task == "regression" else "classification"
            at.switch_page(f"pages/{page}.py").run()
            assert not at.exception, ([e.value for e in at.exception], case)
            assert at.get("plotly_chart") or at.error, case
            at.switch_page("pages/data.py").run()
    if sum(SEEN.values()) % CHECK_EVERY == 0:
        session_still_works(at)


def test_a_real_npz_archive_can_be_uploaded(app, real_data_dir):
    """.npz (plain arrays, read with allow_pickle=False) is an accepted upload type: a real CIFAR-10 set loads."""
    path = real_data_dir / "netcal_cifar_probs" / "lenet-5-cifar-10.npz"
    app.file_uploader(key="data_upload").upload(path.name, path.read_bytes(), "application/octet-stream").run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    pset = app.session_state["pset"]
    assert app.session_state["pset_name"] == path.name
    assert pset.layout == "probs" and pset.probs.shape == (10_000, 10) and pset.dropped.total == 0


def test_markdown_in_uploaded_names_is_shown_inert(app):
    """Column names, cell values and file names are shown as text: an uploaded file cannot put a link or a remote
    image (a tracking pixel) on the page through the loader's messages, the error box or the captions."""
    evil_col = "![t](https://tracker.example/p.png)"
    link = "[fix your file here](https://phish.example)"
    bad = f"truth,mean,{evil_col}\n1,2,3\n4,5,6\n".encode()
    app.file_uploader(key="data_upload").upload(f"{link}.csv", bad, "text/csv").run()
    assert not app.exception
    shown = [e.value for e in app.error] + [c.value for c in app.caption] + [m.value for m in app.markdown]
    assert any("tracker.example" in text for text in shown)  # the name is shown …
    for text in shown:  # … but never as Markdown link/image syntax
        assert not re.search(r"(?<!\\)\]\(", text) and "![" not in text, text
    good = f"y_true,mean,std,{link}\n1,2,3,0\n4,5,6,0\n".encode()
    app.file_uploader(key="data_upload").upload(f"{link}.csv", good, "text/csv").run()
    assert not app.exception and app.session_state["pset_name"] == f"{link}.csv"
    shown = [m.value for m in app.markdown] + [c.value for c in app.caption]
    assert any("phish.example" in text for text in shown)
    assert all(not re.search(r"(?<!\\)\]\(", text) for text in shown), shown
    assert app.session_state["pset"].layout == "gaussian", app.session_state["pset"].messages


def test_session_works_after_the_fuzzing(app):
    """Runs after the fuzz test (file order): the session is still usable, and enough kinds of file were tried."""
    session_still_works(app)
    if len(SEEN) < len(CATEGORIES):
        pytest.skip("run together with the whole fuzz test to count the uploads")
    print(f"\napp uploads: {sum(SEEN.values())} in {len(SEEN)} categories: {dict(sorted(SEEN.items()))}")
    assert sum(SEEN.values()) >= 50 and len(SEEN) == len(CATEGORIES)
