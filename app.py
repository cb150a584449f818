"""Calibration Lab dashboard entry point: ``streamlit run app.py``.

This file is the frame of every page: page config, the navigation (``st.navigation`` with
``st.Page``; add new pages to ``PAGES``) and anything shared by all pages.  Pages live in
``pages/`` and stay thin: all computation is in ``calib_core`` (which never imports Streamlit).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent

st.set_page_config(
    page_title="Calibration Lab",
    page_icon=":material/tune:",
    layout="wide",
    initial_sidebar_state="auto",
)

# Registered explicitly: calling st.navigation switches off Streamlit's automatic pages/ discovery,
# so only the pages listed here exist.  Sections are dict keys ("" = no header).
PAGES: dict[str, list[st.Page]] = {
    "": [
        st.Page(HERE / "pages" / "home.py", title="Home", icon=":material/home:", url_path="home", default=True),
    ],
}

page = st.navigation(PAGES, position="sidebar")

with st.sidebar:
    st.caption("Calibration Lab · diagnose and fix predictive uncertainty. Nothing leaves this machine.")

page.run()
