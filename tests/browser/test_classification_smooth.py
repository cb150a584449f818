"""Browser check of smooth reliability diagram (Classification page) and the PIT-ECDF difference view with
its simultaneous band (Regression page); screenshots in tests/artifacts/ (smooth_reliability.png, pit_ecdf.png)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import DIGITS, LONG, load_example, nav  # noqa: E402
from tests.conftest import wait_for_app  # noqa: E402

LEVI = "Levi et al. §4.1 synthetic — true σ vs random σ"


def test_smooth_reliability_and_pit_ecdf_views(app_page, artifacts_dir):
    page = app_page
    load_example(page, DIGITS)
    nav(page, "Classification")
    toggle = page.get_by_text("Smooth reliability diagram (no bins)")
    expect(toggle).to_be_visible(timeout=LONG)
    chart = page.get_by_test_id("stPlotlyChart").nth(2)
    expect(chart.locator(".legendtext").filter(has_text="smECE")).to_have_count(1, timeout=LONG)
    expect(chart.locator(".gtitle")).to_have_text("Smooth reliability diagram")
    chart.scroll_into_view_if_needed()
    page.mouse.move(5, 5)
    wait_for_app(page)
    chart.screenshot(path=str(artifacts_dir / "smooth_reliability.png"))
    expect(page.get_by_test_id("stException")).to_have_count(0)

    load_example(page, LEVI)
    nav(page, "Regression")
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="ECDF difference").click()
    kuleshov = page.locator(".st-key-reg_kuleshov")  # a live chart (dashboard.live_chart): found by its key
    expect(kuleshov.locator(".gtitle")).to_have_text("PIT-ECDF difference", timeout=LONG)
    expect(page.get_by_text("The ribbon is a simultaneous 95% band", exact=False)).to_be_visible()
    kuleshov.scroll_into_view_if_needed()
    page.mouse.move(5, 5)
    wait_for_app(page)
    kuleshov.screenshot(path=str(artifacts_dir / "pit_ecdf.png"))
    expect(page.get_by_test_id("stException")).to_have_count(0)
