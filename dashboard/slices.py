"""The slice focus: a slice chosen on the Slice explorer page restricts the Regression and Classification pages.

``st.session_state["slice_focus"]`` holds ``{"token", "label", "mask", "n"}``: the data token it belongs to, the
slice's name, its boolean row mask over the loaded data and its rows.  :func:`apply_slice_focus` (called by a
diagnosis page right after it gets the data) restricts the data to the slice and changes the data token, so every
cache key, figure and linked selection of the page belongs to the slice; it shows which slice and a button that
returns to all rows.  A focus of other data (another file loaded) is ignored.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import calib_core as cc

from .display import md_escape

FOCUS_KEY = "slice_focus"


def set_slice_focus(token: str, label: str, mask: np.ndarray) -> None:
    """Restrict the diagnosis pages to the rows of ``mask`` (a slice named ``label`` of the data ``token``)."""
    mask = np.asarray(mask, dtype=bool)
    st.session_state[FOCUS_KEY] = {"token": token, "label": str(label), "mask": mask, "n": int(mask.sum())}


def clear_slice_focus() -> None:
    """Back to all rows (a button callback)."""
    st.session_state.pop(FOCUS_KEY, None)


def slice_focus(token: str) -> dict | None:
    """The focus of the data ``token``, or None."""
    focus = st.session_state.get(FOCUS_KEY)
    return focus if isinstance(focus, dict) and focus.get("token") == token else None


def apply_slice_focus(pset: cc.PredictionSet, token: str, prefix: str) -> tuple[cc.PredictionSet, str]:
    """``(pset, token)`` restricted to the focused slice, with a line saying so and a "Show all rows" button
    (key ``{prefix}_slice_clear``); unchanged when no slice is focused."""
    focus = slice_focus(token)
    if focus is None or focus["mask"].shape[0] != pset.n_rows:
        return pset, token
    info, back = st.columns([5, 1], vertical_alignment="center")
    info.info(f"Restricted to the slice **{md_escape(focus['label'])}** ({focus['n']:,} of {pset.n_rows:,} rows), "
              "chosen on the Slice explorer: every diagram and table below uses these rows only.",
              icon=":material/filter_alt:")
    back.button("Show all rows", key=f"{prefix}_slice_clear", on_click=clear_slice_focus,
                icon=":material/filter_alt_off:", width="stretch")
    return pset.take(focus["mask"]), f"{token}|slice={focus['label']}"
