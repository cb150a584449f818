"""Real-browser run of the teaching labs: the lab index links to every lab, and each lab page draws its
Plotly diagrams without an error (screenshots in tests/artifacts/lab_<key>.png)."""

from __future__ import annotations

import re

import pytest

from calib_core.labs import LABS

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import full_height_screenshot, wait_for_app  # noqa: E402

LONG = 180_000  # ms: a lab's first run simulates / fits on a loaded 2-core machine


def test_lab_index_links_open_every_lab_with_its_diagrams(app_page, streamlit_url, artifacts_dir):
    page = app_page
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Lab index", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Teaching labs")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    for item in LABS:
        expect(page.get_by_text(item.lesson, exact=False)).to_be_visible()
    full_height_screenshot(page, artifacts_dir / "lab_index.png")
    page.set_viewport_size({"width": 1400, "height": 1000})

    for item in LABS:
        page.goto(f"{streamlit_url}/labs")
        expect(page.get_by_role("heading", level=1, name="Teaching labs")).to_be_visible(timeout=LONG)
        page.get_by_role("link", name=f"Open the lab: {item.title}").click()
        expect(page).to_have_url(re.compile(rf"/lab_{item.key}$"), timeout=LONG)
        charts = page.get_by_test_id("stPlotlyChart")
        expect(charts.first).to_be_visible(timeout=LONG)
        wait_for_app(page, timeout=LONG)
        expect(charts.first.locator(".main-svg").first).to_be_visible(timeout=LONG)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        expect(page.get_by_text(item.reference, exact=False).first).to_be_visible()
        page.mouse.move(5, 5)
        full_height_screenshot(page, artifacts_dir / f"lab_{item.key}.png")
        page.set_viewport_size({"width": 1400, "height": 1000})
