"""AppTest: loaded data stays across a reload or a new tab, and only with its key.

A reload or a new tab is a new session: here a new ``AppTest`` of the same process (the data store is a
``st.cache_resource`` of the server process) whose address carries, or does not carry, the first one's ``?data=``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from calib_core.data import examples
from dashboard.state import DATA_PARAM, STORE_IDLE_HOURS

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 180
LEVI = "Levi et al. §4.1 synthetic — true σ vs random σ"


@pytest.fixture(autouse=True)
def _every_page_through_app_py(monkeypatch):
    """As on the server, every run goes through ``app.py`` (which keeps the data and draws the sidebar).

    AppTest resets Streamlit's process-wide "pages/ folder app" flag before each run, so a page it switches to
    would run alone; a subclass takes that reset, and the real flag stays off (as ``app.py``'s navigation sets it).
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import app_test

    monkeypatch.setattr(app_test, "PagesManager", type("PagesManagerOfAppTest", (PagesManager,), {}))
    monkeypatch.setattr(PagesManager, "uses_pages_directory", False)


def _session(key: str | None = None, page: str | None = None) -> AppTest:
    """A new session (a reload / a new tab), with ``?data=key`` in its address when given."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if key is not None:
        at.query_params[DATA_PARAM] = key
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def test_an_upload_comes_back_in_a_new_session_with_the_key_and_never_without_it():
    at = _session(page="pages/data.py")
    data = examples.levi_frame(n=500).to_csv(index=False).encode()
    at.file_uploader(key="data_upload").upload("my_preds.csv", data, "text/csv").run()
    assert at.session_state["pset_name"] == "my_preds.csv"
    key = at.query_params[DATA_PARAM][0] if isinstance(at.query_params[DATA_PARAM], list) else \
        at.query_params[DATA_PARAM]
    assert len(key) == 22
    assert f"Kept on this server for {STORE_IDLE_HOURS} hours" in _captions(at)

    again = _session(key, page="pages/regression.py")  # the same address in a new tab
    assert again.session_state["pset_name"] == "my_preds.csv"
    assert again.session_state["pset"] is at.session_state["pset"]  # the stored set itself, not a re-read
    assert again.title[0].value == "Regression diagnostics" and not again.info  # diagnosed, no "No data loaded"

    stranger = _session(page="pages/regression.py")  # no key: nothing
    assert "pset" not in stranger.session_state
    assert any("No data loaded yet" in i.value for i in stranger.info)
    guess = _session("A" * 22, page="pages/regression.py")  # a well-formed key that was never given out
    assert "pset" not in guess.session_state
    assert "no longer kept" in _captions(guess)
    assert DATA_PARAM not in guess.query_params  # the dead key leaves the address


def test_an_example_is_kept_by_title_and_labs_leave_the_key_out_of_their_address():
    at = _session(page="pages/data.py")
    at.selectbox(key="data_example").select(LEVI).run()
    at.button(key="data_load_example").click().run()
    key = at.query_params[DATA_PARAM]
    key = key[0] if isinstance(key, list) else key
    at.switch_page("pages/lab_accrue.py").run()
    assert not at.exception and DATA_PARAM not in at.query_params
    assert "Lab addresses leave out the key" in _captions(at)
    at.switch_page("pages/regression.py").run()
    assert at.query_params[DATA_PARAM] in (key, [key])  # back on a data page: the key is in the address again
    again = _session(key)
    assert again.session_state["pset_name"] == LEVI and again.session_state["pset_token"] == f"example:{LEVI}"


def test_home_and_sidebar_agree_on_what_is_shown():
    home = _session()
    assert "Home diagnoses a built-in example" in _captions(home)
    assert "No data loaded yet —" not in _captions(home)
    at = _session(page="pages/data.py")
    at.selectbox(key="data_example").select(LEVI).run()
    at.button(key="data_load_example").click().run()
    at.switch_page("pages/home.py").run()
    assert not at.exception
    assert f"Loaded: {LEVI}" in " ".join(m.value for m in at.sidebar.markdown).replace("**", "")
    links = [link.label for link in at.get("page_link")]
    assert any(label.startswith("Your data,") and "Below: a built-in example" in label for label in links), links


def test_data_larger_than_the_budget_stays_in_its_tab_and_is_not_resized_on_every_run(monkeypatch):
    import dashboard.state as state

    sized = []
    real = state.approx_nbytes
    monkeypatch.setattr(state, "approx_nbytes", lambda obj: sized.append(1) or real(obj))
    monkeypatch.setattr(state, "STORE_MAX_BYTES", 50_000)  # a 1,000-row upload holds more than this
    state.data_store.clear()  # a new store with the small budget
    try:
        at = _session(page="pages/data.py")
        data = examples.levi_frame(n=500).to_csv(index=False).encode()
        at.file_uploader(key="data_upload").upload("big.csv", data, "text/csv").run()
        assert at.session_state["pset_name"] == "big.csv" and at.session_state["data_kept"] is False
        assert DATA_PARAM not in at.query_params  # no key: nothing to bring back
        assert "Too large to keep on this server beyond this tab" in _captions(at)
        n_sized = len(sized)
        at.switch_page("pages/regression.py").run()
        at.switch_page("pages/data.py").run()
        assert len(sized) == n_sized  # not measured again on every run
    finally:
        state.data_store.clear()
