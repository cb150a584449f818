"""AppTests of hostile text in the Data page's server-path box: a NUL character, a glob through symbolic-link loops,
a Parquet dictionary bomb and a data set whose first file has no valid row — each a message on the page (never a
traceback), within seconds, with what was loaded kept or the valid partitions summarised."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from tests.app.test_pages import new_app
from tests.scale.test_server_path_bombs import dictionary_bomb, regression_frame


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    allowed = tmp_path / "allowed"
    (allowed / "runs" / "a").mkdir(parents=True)
    for i in range(2):
        regression_frame(500, i).to_parquet(allowed / "runs" / f"part-{i}.parquet")
    os.symlink("..", allowed / "runs" / "a" / "up")
    os.symlink(".", allowed / "runs" / "a" / "self")
    (allowed / "bomb").mkdir()
    dictionary_bomb(allowed / "bomb" / "note.parquet")
    (allowed / "bad").mkdir()
    for i in range(2):
        frame = regression_frame(300, 5 + i)
        if i == 0:
            frame["std"] = np.nan
        frame.to_parquet(allowed / "bad" / f"p{i}.parquet")
    monkeypatch.setenv("CALIB_LAB_DATA_DIR", str(allowed))
    monkeypatch.delenv("CALIB_LAB_DASK_SCHEDULER", raising=False)
    return allowed


def _open(at, text: str):
    at.switch_page("pages/data.py").run()
    at.text_input(key="data_server_path").input(text).run()
    at.button(key="data_server_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("text, words", [("runs/part-0\x00.parquet", "NUL character"),
                                         ("runs/**/*.parquet", "a loop"),
                                         ("bomb/note.parquet", "row group 0")])
def test_hostile_paths_and_files_get_a_message_and_keep_the_loaded_data(data_dir, text, words):
    at = _open(new_app(), "runs/part-0.parquet")
    before = at.session_state["summary"]
    t0 = time.perf_counter()
    at = _open(at, text)
    assert time.perf_counter() - t0 < 30  # an AppTest rerun on a loaded machine; the refusals themselves take ms
    message = at.error[0].value.replace("\\", "")
    assert words in message, message
    assert at.session_state["summary"] is before


def test_a_first_file_without_a_valid_row_does_not_sink_the_data_set(data_dir):
    at = _open(new_app(), "bad/*.parquet")
    assert not at.error, [e.value for e in at.error]
    summary = at.session_state["summary"]
    assert summary.n_rows == 300 and sum(d["count"] for d in summary.dropped.values()) == 300
