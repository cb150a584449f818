"""Lab index: one line per teaching lab — its lesson, the paper section, and a link to the lab."""

from __future__ import annotations

import streamlit as st

import dashboard as ui

st.title("Teaching labs")
st.markdown(
    "Each lab turns one paper's central demonstration into an interactive page: move the sliders (N, seed, noise, "
    "bins …) and watch the linked diagrams from the core. Every lab says what to look at and which section of "
    "which paper it reproduces. Nothing here uses your uploaded data."
)

ui.lab_index()
