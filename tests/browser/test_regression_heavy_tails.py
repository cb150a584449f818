"""Real browser: the Regression page's "ENCE vs bins" tab draws ENCE against the number of
σ-bins over its perfect-calibration band; a screenshot of the chart goes to tests/artifacts/."""

from __future__ import annotations

import pytest

from calib_core.data import examples

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import upload_file, wait_for_app  # noqa: E402

LONG = 120_000


def test_ence_against_bins_tab(app_page, artifacts_dir, tmp_path):
    page = app_page
    path = tmp_path / "levi_predictions.csv"
    examples.levi_frame(n=3000).to_csv(path, index=False)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data", exact=True).click()
    upload_file(page, str(path))
    expect(page.get_by_text("Diagnose it on the Regression page")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Regression", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Regression diagnostics")).to_be_visible(timeout=LONG)
    wait_for_app(page, LONG)
    tab = page.get_by_role("tab", name="ENCE vs bins")
    tab.scroll_into_view_if_needed()
    tab.click()
    panel = page.get_by_role("tabpanel").filter(has=page.get_by_text("ENCE at 2–100 σ-bins"))
    chart = panel.get_by_test_id("stPlotlyChart")
    expect(chart.locator(".legendtext", has_text="random sigma").first).to_be_visible(timeout=LONG)
    # 2 models × (band low, band high, null mean, ENCE) traces; ENCE markers at 14 bin counts per model
    expect(chart.locator(".scatterlayer .trace")).to_have_count(9)  # and the page's B as a dashed line
    expect(chart.locator(".scatterlayer .trace").nth(3).locator(".points path")).to_have_count(14)
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    chart.screenshot(path=str(artifacts_dir / "regression_ence_bins.png"))


def test_error_law_lab(app_page, artifacts_dir):
    page = app_page
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="The reference value depends on the error law",
                                                    exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Lab 10 · The reference value depends on the error law")
           ).to_be_visible(timeout=LONG)
    wait_for_app(page, LONG)
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts).to_have_count(2, timeout=LONG)
    expect(charts.nth(0).locator(".legendtext", has_text="the data's ENCE")).to_be_visible(timeout=LONG)
    expect(page.get_by_text("What the numbers say", exact=True)).to_be_visible()
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    from tests.conftest import full_height_screenshot

    full_height_screenshot(page, artifacts_dir / "lab_error_law.png")


def test_corp_quantile_reliability_diagram(app_page, artifacts_dir, tmp_path):
    """Issue 16, point 1 (regression side): the CORP quantile reliability diagram in its tab (opened by a click), its
    level selector (τ = 0.95 chosen), the band and the two models' curves; screenshot in tests/artifacts/."""
    page = app_page
    path = tmp_path / "levi_predictions.csv"
    examples.levi_frame(n=3000).to_csv(path, index=False)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data", exact=True).click()
    upload_file(page, str(path))
    expect(page.get_by_text("Diagnose it on the Regression page")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Regression", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Regression diagnostics")).to_be_visible(timeout=LONG)
    wait_for_app(page, LONG)
    tab = page.get_by_role("tab", name="CORP quantile reliability")  # a lazy tab: drawn once opened
    tab.scroll_into_view_if_needed()
    tab.click()
    wait_for_app(page, LONG)
    level = page.locator(".st-key-reg_qs_level")
    level.scroll_into_view_if_needed()
    level.get_by_role("radio", name="0.95", exact=True).click()
    wait_for_app(page, LONG)
    chart = page.locator(".st-key-reg_qs_corp").get_by_test_id("stPlotlyChart")
    expect(chart.locator(".gtitle", has_text="τ = 0.95")).to_be_visible(timeout=LONG)
    # while Plotly swaps the τ = 0.5 figure for the new one both legends can be in the DOM for a moment: wait for one
    expect(chart.locator(".legendtext", has_text="random sigma (MCB")).to_have_count(1, timeout=LONG)
    expect(chart.locator(".legendtext", has_text="random sigma (MCB")).to_be_visible(timeout=LONG)
    expect(chart.locator(".legendtext", has_text="90% consistency band")).to_have_count(2)
    chart.scroll_into_view_if_needed()
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    chart.screenshot(path=str(artifacts_dir / "regression_quantile_corp.png"))
