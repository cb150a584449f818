"""Calibration Lab dashboard entry point: ``streamlit run app.py``.

This file is the frame of every page: page config, the navigation (``st.navigation`` with
``st.Page``; add new pages to ``PAGES``), the sidebar status of the loaded data, and the
persistence of page controls across page switches.  Pages live in ``pages/`` and stay thin: all
computation is in ``calib_core`` (which never imports Streamlit); ``pages/common.py`` holds the
shared session-state contract and cached loaders.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from calib_core.labs import LABS

HERE = Path(__file__).resolve().parent

st.set_page_config(
    page_title="Calibration Lab",
    page_icon=":material/tune:",
    layout="wide",
    initial_sidebar_state="auto",
)

# Widget keys are deleted when their page is not rendered; re-assigning them here (this file runs on
# every page) keeps the controls' values across page switches (verified in the browser; AppTest does
# not reproduce the deletion).  File uploaders and buttons cannot be set this way and are not listed.
PERSISTENT_KEYS = (
    "data_example", "data_renormalize",
    "reg_models", "reg_group", "reg_rows", "reg_n_bins", "reg_binning", "reg_resamples", "reg_sims",
    "cls_models", "cls_group", "cls_rows", "cls_n_bins", "cls_strategy", "cls_resamples", "cls_sims", "cls_target",
    "cls_hist_scale", "cls_per_class_model",
)
for _key in PERSISTENT_KEYS:
    if _key in st.session_state:
        st.session_state[_key] = st.session_state[_key]


def _page(file: str, title: str, icon: str, **kwargs) -> st.Page:
    return st.Page(HERE / "pages" / file, title=title, icon=icon, url_path=Path(file).stem, **kwargs)


# Registered explicitly: calling st.navigation switches off Streamlit's automatic pages/ discovery,
# so only the pages listed here exist.  Sections are dict keys ("" = no header).
PAGES: dict[str, list[st.Page]] = {
    "": [
        _page("home.py", "Home", ":material/home:", default=True),
        _page("data.py", "Data", ":material/upload_file:"),
    ],
    "Diagnose": [
        _page("regression.py", "Regression", ":material/show_chart:"),
        _page("classification.py", "Classification", ":material/category:"),
    ],
}
if (HERE / "pages" / "recalibrate.py").exists():  # built by the recalibration work; registered when present
    PAGES["Fix"] = [_page("recalibrate.py", "Recalibrate", ":material/build:")]
PAGES["Reference"] = [_page("help.py", "Help", ":material/help:")]
PAGES["Labs"] = [_page("labs.py", "Lab index", ":material/school:")] + [
    _page(item.page_file, item.title, item.icon) for item in LABS if (HERE / "pages" / item.page_file).exists()
]  # each lab's page is registered once its file exists (calib_core.labs.LABS is the index)

# expanded: every page listed (with the labs there are 17; collapsed, Streamlit would hide some behind "View more")
page = st.navigation(PAGES, position="sidebar", expanded=True)

# Status of the loaded data.  Pages change the data in widget callbacks (which run before this file) or
# rerun after changing it, so this is always current.
with st.sidebar:
    pset = st.session_state.get("pset")
    if pset is not None:
        st.markdown(f"**Loaded:** {st.session_state.get('pset_name', pset.source)}")
        st.caption(f"{pset.task} · `{pset.layout}` · {pset.n_rows:,} rows")
    else:
        st.caption("No data loaded yet — see the Data page.")
    st.caption("Calibration Lab · diagnose and fix predictive uncertainty. Nothing leaves this machine.")

page.run()
