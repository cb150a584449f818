"""Real-browser test of a freshly started server's first page: it renders under the app's own navigation and the
sidebar never shows Streamlit's raw file list meanwhile.

Streamlit treats an app with a ``pages/`` folder as a "pages folder" app until ``st.navigation`` has run once in the
process; its automatic navigation (one entry per file: "app", "classification", "lab accrue", …) used to fill the
sidebar of the first session for as long as the first run imported the libraries (seconds).  Here a fresh server
is opened at once (as in ``bench/first_page.py``, without timing): a MutationObserver installed before the app's own
scripts records every list of labels the sidebar navigation ever holds, even for one frame, and a screenshot is taken
every 250 ms until the page settled (``tests/artifacts/first_page_<page>_*.png``).  No timing asserts.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from calib_core.labs import LABS

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import streamlit_server, wait_for_app  # noqa: E402

LONG = 180_000  # ms: first imports on a loaded 2-core machine
REPO = Path(__file__).resolve().parents[2]
#: Streamlit's automatic navigation names an entry after its file ("lab accrue") and the main script "app".
FILE_LABELS = {"app"} | {p.stem.replace("_", " ") for p in (REPO / "pages").glob("*.py")}

OBSERVER_JS = """
(() => {
  window.__navSeen = [];
  let last = null;
  const look = () => {
    const nav = document.querySelector("[data-testid='stSidebarNav']");
    const labels = nav ? Array.from(nav.querySelectorAll("[data-testid='stSidebarNavLink']"))
        .map(a => a.innerText.trim().split("\\n").pop().trim()) : [];
    const key = JSON.stringify(labels);
    if (key !== last) { window.__navSeen.push(labels); last = key; }
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true,
                                                characterData: true});
})();
"""
SETTLED_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  const nav = document.querySelector("[data-testid='stSidebarNav']");
  return !!(app && nav && app.getAttribute("data-test-connection-state") === "CONNECTED"
      && app.getAttribute("data-test-script-state") === "notRunning" && nav.innerText.includes("Lab index")
      && document.querySelectorAll("[data-stale='true']").length === 0);
}"""


#: The home page ("/") and a lab's address opened first (a link a teacher sends), with their heading's start.
FIRST = [("", "Calibration Lab"), ("lab_accrue", "")]


@pytest.mark.parametrize(("stem", "heading"), FIRST)
def test_a_fresh_servers_first_page_never_shows_the_raw_file_list(chromium_browser, tmp_path, artifacts_dir, stem,
                                                                  heading):
    name = stem or "home"
    for old in artifacts_dir.glob(f"first_page_{name}_*.png"):
        old.unlink()
    with streamlit_server(tmp_path) as url:  # opened as soon as the server answers its health check
        context = chromium_browser.new_context(viewport={"width": 1400, "height": 900})
        context.add_init_script(OBSERVER_JS)
        page = context.new_page()
        page.set_default_timeout(LONG)
        shots: list[Path] = []
        try:
            t0 = time.monotonic()
            page.goto(f"{url}/{stem}", wait_until="commit")
            while not page.evaluate(SETTLED_JS):
                shot = artifacts_dir / f"first_page_{name}_{len(shots):03d}.png"
                page.screenshot(path=str(shot))
                shots.append(shot)
                assert time.monotonic() - t0 < LONG / 1000, "the first page did not settle"
                page.wait_for_timeout(250)
            wait_for_app(page, timeout=LONG)
            expect(page.get_by_role("heading", level=1).first).to_contain_text(heading, timeout=LONG)
            expect(page.get_by_test_id("stException")).to_have_count(0)
            page.screenshot(path=str(artifacts_dir / f"first_page_{name}_{len(shots):03d}_settled.png"))
            seen = page.evaluate("window.__navSeen")
        finally:
            context.close()
    raw = [labels for labels in seen if FILE_LABELS & set(labels)]
    assert not raw, f"the sidebar showed Streamlit's file list: {raw[0]}"
    final = [labels for labels in seen if labels][-1]
    assert final[0] == "Home" and "Lab index" in final and all(item.title in final for item in LABS), final
    assert shots or seen, "nothing was recorded"
