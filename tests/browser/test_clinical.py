"""Real-browser run of the clinical lab and of the Classification page's loess calibration curve and prevalence
control (screenshots in tests/artifacts/: clinical_lab.png, clinical_lab_hl.png, clinical_smoothed.png,
clinical_prevalence.png)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import LONG, load_example, nav  # noqa: E402
from tests.conftest import full_height_screenshot, wait_for_app  # noqa: E402

CANCER = "Breast cancer — binary classifier (logit of malignant)"


def test_clinical_lab_and_the_smoothed_curve(app_page, streamlit_url, artifacts_dir):
    page = app_page
    page.goto(f"{streamlit_url}/lab_clinical")
    expect(page.get_by_role("heading", level=1, name="Lab 11 · Clinical calibration: intercept, slope and groups")
           ).to_be_visible(timeout=LONG * 2)
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts.nth(4)).to_be_visible(timeout=LONG * 2)
    wait_for_app(page, timeout=LONG * 2)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(charts.first.locator(".gtitle")).to_have_text("Same population: development vs over-fitted")
    expect(charts.nth(2).locator(".gtitle")).to_have_text("Hosmer–Lemeshow p-value against g")
    expect(page.get_by_text("So the two numbers tell different stories", exact=False)).to_be_visible()
    page.mouse.move(5, 5)
    charts.nth(2).scroll_into_view_if_needed()
    charts.nth(2).screenshot(path=str(artifacts_dir / "clinical_lab_hl.png"))
    full_height_screenshot(page, artifacts_dir / "clinical_lab.png")
    page.set_viewport_size({"width": 1400, "height": 1000})

    load_example(page, CANCER)
    nav(page, "Classification")
    smoothed = page.get_by_test_id("stPlotlyChart").filter(has=page.locator(".gtitle",
                                                                               has_text="Smoothed calibration curve"))
    expect(smoothed).to_have_count(1, timeout=LONG)
    expect(smoothed.locator(".legendtext").filter(has_text="bootstrap band")).to_have_count(1, timeout=LONG)
    smoothed.scroll_into_view_if_needed()
    page.mouse.move(5, 5)
    wait_for_app(page)
    smoothed.screenshot(path=str(artifacts_dir / "clinical_smoothed.png"))

    page.get_by_text("Prevalence adjustment", exact=True).click()
    wait_for_app(page, timeout=LONG)
    box = page.get_by_test_id("stNumberInputField").and_(page.get_by_label("Prevalence (this file", exact=False))
    expect(box).to_be_enabled(timeout=LONG)
    box.fill("0.05")
    box.press("Enter")
    wait_for_app(page, timeout=LONG)
    expect(page.get_by_text("Probabilities read as made for a prevalence of 5%", exact=False)).to_be_visible(
        timeout=LONG)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    page.mouse.move(5, 5)
    full_height_screenshot(page, artifacts_dir / "clinical_prevalence.png")
