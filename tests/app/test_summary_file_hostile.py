"""AppTests: a hostile summary file — uploaded, or opened by path from an allowed directory — is refused on the Data
page with a message naming the file and the part, in the page's words; the loaded summary stays loaded and the
session keeps working (the Regression page still draws from it)."""

from __future__ import annotations

import numpy as np

from tests.app.test_pages import new_app
from tests.app.test_summary import _open, data_dir  # noqa: F401 - the fixture
from tests.summary_hostile import file_of, header_of, load_array, npy, summary_of, with_array, with_header


def _rows(h):
    h["n_rows"] = 10**15


def test_hostile_uploads_are_refused_and_the_loaded_summary_stays(data_dir):  # noqa: F811
    at = new_app()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_summary_upload").upload("good.summary", file_of("gauss1"), "application/zip").run()
    assert not at.error and at.session_state["summary_name"] == "good.summary"
    n = load_array(file_of("gauss1"), "n")
    n[0] = -1
    data = bytearray(file_of("gauss1"))
    data[len(data) // 3] ^= 0x10  # inside a deflated member: damaged
    for name, raw, needle in [("rows.summary", with_header(file_of("gauss1"), _rows), "n_rows"),
                              ("negative.summary", with_array(file_of("gauss1"), "n", npy(n)), "array 'n'"),
                              ("flipped.summary", bytes(data), "damaged"),
                              ("shape.summary", with_array(file_of("gauss1"), "curve", npy(np.zeros((15, 3), "i8"))),
                               "array 'curve'")]:
        at.file_uploader(key="data_summary_upload").upload(name, raw, "application/zip").run()
        assert not at.exception, [e.value for e in at.exception]
        message = at.error[0].value.replace("\\", "")  # the page escapes Markdown
        assert name in message and needle in message, message
        assert "Large data" in message  # the page's own words for what to do
        assert at.session_state["summary_name"] == "good.summary"
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["summary"].n_rows == summary_of("gauss1").n_rows


def test_a_hostile_summary_opened_by_path_is_refused(data_dir):  # noqa: F811
    allowed, _ = data_dir
    (allowed / "bins.summary").write_bytes(with_header(file_of("cls2"), lambda h: h["spec"].update(n_bins=10**9)))
    at = _open(new_app(), "bins.summary")
    assert "bins.summary" in at.error[0].value and "n\\_bins" in at.error[0].value
    assert "summary" not in at.session_state
    assert header_of(file_of("cls2"))["spec"]["n_bins"] == 15
