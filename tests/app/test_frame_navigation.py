"""The frame's navigation setting (no browser): Streamlit's automatic ``pages/`` navigation is hidden by the project's
config, and ``app.py`` switches the option back on before its own ``st.navigation``, so that one is shown.

A fresh server's first run used to show the automatic navigation (one entry per file of ``pages/``) for as long as
it imported the libraries; ``tests/browser/test_first_page.py`` checks in Chromium that the sidebar never shows it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from streamlit import config
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 120  # s: the home page's first run trains the example model


def test_the_project_config_hides_streamlits_automatic_pages_navigation():
    settings = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert settings["client"]["showSidebarNavigation"] is False


def test_app_py_shows_its_own_navigation_although_the_config_hides_the_automatic_one():
    previous = config.get_option("client.showSidebarNavigation")
    config.set_option("client.showSidebarNavigation", False)  # as .streamlit/config.toml sets it for the server
    try:
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert config.get_option("client.showSidebarNavigation") is True  # st.navigation's position stays "sidebar"
        assert at.title[0].value == "Calibration Lab"
    finally:
        config.set_option("client.showSidebarNavigation", previous)
