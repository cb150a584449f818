"""Lab index: one line per teaching lab — its lesson, the paper section, and a link to the lab."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from calib_core.labs import LABS

PAGES_DIR = Path(__file__).resolve().parent

st.title("Teaching labs")
st.markdown(
    "Each lab turns one paper's central demonstration into an interactive page: move the sliders (N, seed, noise, "
    "bins …) and watch the linked diagrams from the core. Every lab says what to look at and which section of "
    "which paper it reproduces. Nothing here uses your uploaded data."
)

for number, item in enumerate(LABS, start=1):
    with st.container(border=True):
        st.markdown(f"**{number}. {item.title}** — {item.lesson}")
        st.caption(item.reference)
        if (PAGES_DIR / item.page_file).exists():
            st.page_link(f"pages/{item.page_file}", label=f"Open the lab: {item.title}", icon=item.icon)
        else:
            st.caption("(this lab's page is not built yet)")
