"""Real-browser tests of the frame every page is shown in.

* Offline means offline: every request any page makes goes to the app's own host (127.0.0.1); the page icon is an
  inline SVG, not a font-CDN fetch.  Download names are ASCII, short and readable.
* A shared link opens the page it names: on a fresh server, a page's address opened first shows the app's own
  navigation (titles and sections of ``app.py``'s ``st.navigation``), not Streamlit's automatic one-entry-per-file
  list ("app", "common", "lab accrue", …).  Each address gets its own fresh server (the fault was once per process).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from calib_core.labs import LABS
from views import pages as views

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import full_height_screenshot, streamlit_server, wait_for_app  # noqa: E402

LONG = 180_000  # ms: first imports and computations on a loaded 2-core machine
REPO = Path(__file__).resolve().parents[2]
LEVI = "Levi et al. §4.1 synthetic — true σ vs random σ"

#: app.py's navigation: page title → file stem (= url path), in the order of the sidebar.
APP_PAGES = {
    "Home": "home", "Data": "data", "Regression": "regression", "Classification": "classification",
    "Forecast hub": "hub", "Compare models": "compare", "Slice explorer": "slices", "Recalibrate": "recalibrate",
    "Help": "help",
    "Lab index": "labs",
    **{item.title: Path(item.page_file).stem for item in LABS},
}
SECTIONS = ["Diagnose", "Fix", "Reference", "Labs"]
#: Streamlit's automatic navigation would show one entry per file of pages/, named after it ("lab accrue").
FILE_LABELS = {"app"} | {p.stem.replace("_", " ") for p in (REPO / "pages").glob("*.py")}


def _nav_labels(page) -> list[str]:
    """The labels of the sidebar's navigation links (the icon ligature, e.g. "home", is its own line: dropped)."""
    links = page.get_by_test_id("stSidebarNav").get_by_test_id("stSidebarNavLink")
    return [text.strip().splitlines()[-1].strip() for text in links.all_inner_texts()]


def _url(stem: str) -> re.Pattern:
    """The address of a page (the default page, Home, is at "/"), with or without a query string."""
    path = "/(home)?" if stem == "home" else f"/{stem}"
    return re.compile(rf"{path}(\?.*)?$")


def _off_host(urls: list[str]) -> list[str]:
    """The requests that left the machine: every URL whose host is not the app's own (data: / blob: have none)."""
    return [u for u in urls if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u).hostname != "127.0.0.1"]


def test_no_page_requests_any_host_but_the_apps_own_and_downloads_have_ascii_names(
    chromium_browser, streamlit_url, artifacts_dir
):
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(LONG)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    try:
        # every page's address loaded on its own (page icon, fonts, scripts of a first visit) …
        for stem in APP_PAGES.values():
            page.goto(f"{streamlit_url}/{stem}")
            wait_for_app(page, timeout=LONG)
            expect(page.get_by_test_id("stSidebarNav")).to_contain_text("Lab index", timeout=LONG)
        icons = page.evaluate("Array.from(document.querySelectorAll('link[rel*=icon]')).map(l => l.href)")
        assert icons and all(href.startswith("data:image/svg+xml") for href in icons), icons

        # … then, with data loaded, every page again through the sidebar (charts, tables, widgets drawn)
        page.goto(f"{streamlit_url}/data")
        wait_for_app(page, timeout=LONG)
        page.get_by_role("combobox", name="Example").click()
        page.get_by_role("option", name=LEVI).click()
        page.get_by_role("button", name="Load example").click()
        expect(page.get_by_test_id("stSidebar").get_by_text(LEVI)).to_be_visible(timeout=LONG)
        for title in APP_PAGES:
            page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()
            expect(page).to_have_url(_url(APP_PAGES[title]), timeout=LONG)
            wait_for_app(page, timeout=LONG)
            expect(page.get_by_test_id("stException")).to_have_count(0)

        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Regression", exact=True).click()
        expect(page.get_by_role("button", name="Metric table (CSV)")).to_be_visible(timeout=LONG)
        wait_for_app(page, timeout=LONG)
        names = []
        for button in ("Metric table (CSV)", "Figure (HTML)", "Page report (HTML)"):
            with page.expect_download(timeout=LONG) as download:
                page.get_by_role("button", name=button).click()
            names.append(download.value.suggested_filename)
        full_height_screenshot(page, artifacts_dir / "frame_regression_offline.png")
    finally:
        context.close()

    assert requests and not _off_host(requests), sorted(set(_off_host(requests)))
    assert names[0] == views.download_name(LEVI, "regression", "metrics", ext="csv")
    assert names[0] == "levi-et-al-4.1-synthetic-true-sigma_regression_metrics.csv"  # the example, fixed
    for name in names:
        assert name.isascii() and len(name) <= 80 and re.fullmatch(r"[a-z0-9._-]+", name), name


def _open_first_on_a_fresh_server(chromium_browser, tmp_path, artifacts_dir, title: str) -> None:
    stem = APP_PAGES[title]
    with streamlit_server(tmp_path) as url:
        context = chromium_browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.set_default_timeout(LONG)
        try:
            page.goto(f"{url}/{stem}")
            nav = page.get_by_test_id("stSidebarNav")
            # the automatic navigation may flash for one short run: wait for the app's own
            expect(nav.get_by_role("link", name="Lab index", exact=True)).to_be_visible(timeout=LONG)
            wait_for_app(page, timeout=LONG)
            labels = _nav_labels(page)
            assert labels == list(APP_PAGES), labels
            assert not FILE_LABELS & set(labels), labels
            for section in SECTIONS:
                expect(nav.get_by_text(section, exact=True)).to_be_visible()
            active = nav.locator("[data-testid=stSidebarNavLink][aria-current=page]")
            expect(active).to_have_count(1)
            assert active.inner_text().strip().splitlines()[-1].strip() == title
            expect(page).to_have_url(_url(stem))
            expect(page.get_by_test_id("stException")).to_have_count(0)
            status = re.compile(r"No data (of yours )?loaded yet")  # Home: "… Home diagnoses a built-in example"
            expect(page.get_by_test_id("stSidebar").get_by_text(status)).to_be_visible()
            page.mouse.move(5, 5)
            page.screenshot(path=str(artifacts_dir / f"frame_fresh_{stem}.png"))
        finally:
            context.close()


#: Quick set (a lab, a diagnosis page, the lab index) and the rest, slow: one fresh server each.
QUICK = ("ACCRUE on toy data", "Regression", "Lab index")


@pytest.mark.parametrize("title", QUICK)
def test_a_page_address_opened_first_on_a_fresh_server_shows_the_apps_navigation(
    chromium_browser, tmp_path, artifacts_dir, title
):
    _open_first_on_a_fresh_server(chromium_browser, tmp_path, artifacts_dir, title)


@pytest.mark.slow
@pytest.mark.parametrize("title", [t for t in APP_PAGES if t not in QUICK])
def test_every_other_page_address_opened_first_on_a_fresh_server(chromium_browser, tmp_path, artifacts_dir, title):
    _open_first_on_a_fresh_server(chromium_browser, tmp_path, artifacts_dir, title)
