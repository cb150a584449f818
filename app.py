"""Calibration Lab dashboard entry point: ``streamlit run app.py``.

This file is the frame of every page: page config, the navigation (``st.navigation`` with
``st.Page``; add new pages to ``PAGES``), the sidebar status of the loaded data, and the
persistence of page controls across page switches.  Pages live in ``pages/`` and stay thin: all
computation is in ``calib_core`` (which never imports Streamlit; the pages' tables, decisions and texts are in
``views.pages``); the Streamlit plumbing — session state, caches, widget persistence, linked selections,
the lab scaffold — is the ``dashboard`` package.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import dashboard as ui
from calib_core.labs import LABS

HERE = Path(__file__).resolve().parent

st.set_page_config(
    page_title="Calibration Lab",
    page_icon=ui.PAGE_ICON,  # inline SVG: the browser fetches nothing (a :material/…: icon comes from a CDN)
    layout="wide",
    initial_sidebar_state="auto",
)

# Widget keys are deleted when their page is not rendered; re-assigning the keys the pages declared persistent
# (this file runs on every page) keeps the controls' values across page switches (verified in the browser;
# AppTest does not reproduce the deletion).
ui.keep_widget_values()


def _page(file: str, title: str, icon: str, **kwargs) -> st.Page:
    return st.Page(HERE / "pages" / file, title=title, icon=icon, url_path=Path(file).stem, **kwargs)


# Registered explicitly: calling st.navigation switches off Streamlit's automatic pages/ discovery,
# so only the pages listed here exist.  (A page address opened first on a fresh server would run its file
# without this navigation: `import dashboard` reruns such a run through this file, see dashboard.frame.)
# Sections are dict keys ("" = no header).
PAGES: dict[str, list[st.Page]] = {
    "": [
        _page("home.py", "Home", ":material/home:", default=True),
        _page("data.py", "Data", ":material/upload_file:"),
    ],
    "Diagnose": [
        _page("regression.py", "Regression", ":material/show_chart:"),
        _page("classification.py", "Classification", ":material/category:"),
        _page("hub.py", "Forecast hub", ":material/hub:"),
        _page("compare.py", "Compare models", ":material/compare_arrows:"),
        _page("slices.py", "Slice explorer", ":material/grid_view:"),
    ],
}
if (HERE / "pages" / "recalibrate.py").exists():  # built by the recalibration work; registered when present
    PAGES["Fix"] = [_page("recalibrate.py", "Recalibrate", ":material/build:")]
PAGES["Reference"] = [_page("help.py", "Help", ":material/help:")]
PAGES["Labs"] = [_page("labs.py", "Lab index", ":material/school:")] + [
    _page(item.page_file, item.title, item.icon) for item in LABS if (HERE / "pages" / item.page_file).exists()
]  # each lab's page is registered once its file exists (calib_core.labs.LABS is the index)

# .streamlit/config.toml hides Streamlit's automatic pages/ navigation (client.showSidebarNavigation = false), the
# raw list of files a fresh server's first run would show while it imports the libraries; that option hides
# st.navigation's sidebar too, so it is switched back on here — after `import dashboard` has switched the automatic
# navigation off for this process (dashboard.frame), so no run can show the raw list.
st.set_option("client.showSidebarNavigation", True)
# expanded: every page listed (with the labs there are 17; collapsed, Streamlit would hide some behind "View more")
page = st.navigation(PAGES, position="sidebar", expanded=True)

# The loaded data survives a reload or a new tab: a server-side store keyed by an unguessable ?data=<key> in the
# address (dashboard.state.keep_data; bounds in dashboard.state: STORE_MAX_BYTES, STORE_IDLE_HOURS).  Lab
# addresses never carry the key: they are the links people share.
is_lab = page.url_path in {p.url_path for p in PAGES["Labs"]}
ui.keep_data(in_address=not is_lab)

# Status of the loaded data.  Pages change the data in widget callbacks (which run before this file) or
# rerun after changing it, so this is always current.
with st.sidebar:
    ui.data_status(home=page.url_path == "", in_address=not is_lab)  # "": the default page, Home
    st.caption("Calibration Lab · diagnose and fix predictive uncertainty. Nothing leaves this machine.")

# Once per server process, in the background: the core's N-only null tables and the first use of Plotly and the
# tables (about 1 s of CPU), so the first diagnosis a user asks for does not pay for them.  Started after the frame
# is drawn (navigation, sidebar): on a fresh server it would otherwise compete with the first page for the GIL.
ui.warm_up_core()

page.run()
