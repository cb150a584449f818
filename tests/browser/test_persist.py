"""Real-browser test of data that stays: a reload or a new tab keeps the uploaded data, the
address carries the private key, labs leave it out, and another browser without the key sees nothing."""

from __future__ import annotations

import re

import pytest

from calib_core.data import examples

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import full_height_screenshot, upload_file, wait_for_app  # noqa: E402

LONG = 180_000
KEY = re.compile(r"[?&]data=([A-Za-z0-9_-]{22})(&|$)")


def _nav(page, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()
    wait_for_app(page, timeout=LONG)


def test_uploaded_data_survives_a_reload_and_a_new_tab_but_not_another_browser(
    chromium_browser, streamlit_url, artifacts_dir, tmp_path
):
    path = tmp_path / "my_preds.csv"
    examples.levi_frame(n=1500).to_csv(path, index=False)
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(LONG)
    sidebar = page.get_by_test_id("stSidebar")
    try:
        page.goto(f"{streamlit_url}/data")
        wait_for_app(page, timeout=LONG)
        upload_file(page, str(path))
        expect(sidebar.get_by_text("my_preds.csv")).to_be_visible(timeout=LONG)
        expect(sidebar.get_by_text(re.compile("Kept on this server for 12 hours"))).to_be_visible()
        expect(page).to_have_url(KEY, timeout=LONG)
        key = KEY.search(page.url).group(1)

        page.reload()  # a new session: the data comes back from the server's store
        wait_for_app(page, timeout=LONG)
        expect(sidebar.get_by_text("my_preds.csv")).to_be_visible(timeout=LONG)
        summary = page.get_by_test_id("stMain").get_by_text(re.compile(r"my_preds\.csv · regression.*3,000 rows"))
        expect(summary).to_be_visible()  # the Data page's summary of the loaded data

        _nav(page, "Regression")
        expect(page).to_have_url(re.compile(rf"/regression\?data={key}$"), timeout=LONG)
        tab = context.new_page()  # the same address in a new tab
        tab.set_default_timeout(LONG)
        tab.goto(page.url)
        wait_for_app(tab, timeout=LONG)
        expect(tab.get_by_role("heading", level=1, name="Regression diagnostics")).to_be_visible(timeout=LONG)
        expect(tab.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=LONG)
        expect(tab.get_by_text("No data loaded yet", exact=False)).to_have_count(0)
        wait_for_app(tab, timeout=LONG)
        tab.mouse.move(5, 5)
        tab.screenshot(path=str(artifacts_dir / "persist_new_tab_regression.png"))
        tab.close()

        _nav(page, "ACCRUE on toy data")  # a lab: its address is for sharing and leaves the key out
        expect(page).to_have_url(re.compile(r"/lab_accrue$"), timeout=LONG)
        expect(sidebar.get_by_text(re.compile("Lab addresses leave out the key"))).to_be_visible()
        _nav(page, "Home")
        expect(page.get_by_text(re.compile("Your data, my_preds.csv, is loaded"))).to_be_visible(timeout=LONG)
        expect(page).to_have_url(KEY)
        wait_for_app(page, timeout=LONG)
        page.mouse.move(5, 5)
        page.screenshot(path=str(artifacts_dir / "persist_home_with_data.png"))
    finally:
        context.close()

    other = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})  # another user, no key
    try:
        page = other.new_page()
        page.set_default_timeout(LONG)
        page.goto(f"{streamlit_url}/regression")
        wait_for_app(page, timeout=LONG)
        expect(page.get_by_text("No data loaded yet", exact=False).first).to_be_visible(timeout=LONG)
        page.goto(f"{streamlit_url}/regression?data={'B' * 22}")  # a key never given out
        wait_for_app(page, timeout=LONG)
        expect(page.get_by_test_id("stSidebar").get_by_text(re.compile("no longer kept"))).to_be_visible()
        expect(page).to_have_url(re.compile(r"/regression$"))
        full_height_screenshot(page, artifacts_dir / "persist_unknown_key.png")
    finally:
        other.close()
