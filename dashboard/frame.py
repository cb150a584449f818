"""The frame every page is shown in: the page icon (served from the app itself) and the guarantee that the app's
own navigation (``app.py``'s ``st.navigation``) frames every page, even the first one a fresh server serves.

Why the navigation needs a guard: Streamlit decides once per server process, when the first browser session
starts, whether the app is a "pages/ folder" app (its multipage version 1) — it is one as soon as a ``pages/``
folder sits beside ``app.py`` — and it only changes its mind when ``st.navigation`` runs.  Until then, a page
address opened directly (``/lab_accrue``, a link a teacher sends) runs ``pages/lab_accrue.py`` on its own, without
``app.py``, under an automatic navigation with one entry per file ("app", "classification", "lab accrue", …).
:func:`take_over_navigation` runs when ``dashboard`` is first imported (every page and ``app.py`` import it
before anything is drawn): it switches that mode off for the process and, inside such a run, reruns it, so that
``app.py`` runs first and shows the page the address names under the app's own navigation.  Meanwhile the
automatic navigation is not shown: ``.streamlit/config.toml`` hides it (``client.showSidebarNavigation = false``) and
``app.py`` switches that option back on for its own ``st.navigation``.
"""

from __future__ import annotations

import streamlit as st

#: The page icon: Material Symbols "tune" (Apache License 2.0) as an inline SVG.  ``st.set_page_config`` turns it
#: into a ``data:`` URL, so the browser fetches nothing (a ``:material/…:`` page icon is fetched from a font CDN).
PAGE_ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path fill="#ff4b4b" d="M3 17v2h6v-2H3zM3 '
    '5v2h10V5H3zm10 16v-2h8v-2h-8v-2h-2v6h2zM7 9v2H3v2h4v2h2V9H7zm14 4v-2H11v2h10zm-6-4h2V7h4V5h-4V3h-2v6z"/></svg>'
)


def take_over_navigation() -> None:
    """Make ``app.py``'s navigation the only one of this server process (see the module docstring).

    Clears Streamlit's process-wide "pages/ folder app" flag (``PagesManager.uses_pages_directory``; ``app.py``'s
    ``st.navigation`` clears it too, but only once it has run).  If the flag was set and a script is running — a
    page address opened first on a fresh server, run without ``app.py`` — the run is restarted: the rerun runs
    ``app.py``, whose ``st.navigation`` resolves the same address (each page's ``url_path`` is its file's stem, as
    in the automatic navigation).  Outside a script run (tests, tools) only the flag is cleared.
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    was_pages_folder_app = bool(getattr(PagesManager, "uses_pages_directory", False))
    PagesManager.uses_pages_directory = False
    if was_pages_folder_app and get_script_run_ctx() is not None:
        st.rerun()
