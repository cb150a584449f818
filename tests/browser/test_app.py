"""Real-browser tests: `streamlit run app.py` + headless Debian Chromium via Playwright.

Skipped when /usr/bin/chromium or the playwright package is missing (CI installs both).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import full_height_screenshot, wait_for_app  # noqa: E402


def test_home_renders_charts_and_table(app_page, artifacts_dir):
    page = app_page
    charts = page.get_by_test_id("stPlotlyChart")
    # the first run trains the example model and bootstraps: allow time, then check Plotly drew
    expect(charts.first).to_be_visible(timeout=120_000)
    expect(charts).to_have_count(6)  # Kuleshov + Levi + four tabs (hidden tabs still mount)
    kuleshov, levi = charts.nth(0), charts.nth(1)
    expect(kuleshov.locator(".main-svg").first).to_be_visible()
    expect(kuleshov.locator(".gtitle")).to_have_text("Quantile calibration")
    expect(levi.locator(".gtitle")).to_contain_text("RMSE vs RMV")
    # 15 Levi σ-bins drawn as markers with error bars
    expect(levi.locator(".scatterlayer .trace").last.locator(".points path")).to_have_count(15)
    expect(levi.locator(".errorbar")).to_have_count(15)
    # the two headline charts sit side by side
    kb, lb = kuleshov.bounding_box(), levi.bounding_box()
    assert kb and lb and abs(kb["y"] - lb["y"]) < 5 and lb["x"] > kb["x"] + kb["width"] - 5
    # the metric tables: one whole table per family (calibration statistics, proper scores, descriptive) and the
    # tests table inside its expander
    expect(page.get_by_test_id("stDataFrame")).to_have_count(4)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    wait_for_app(page)
    shot = full_height_screenshot(page, artifacts_dir / "home.png")
    assert shot.stat().st_size > 20_000


def test_switching_example_redraws_with_two_models(app_page, artifacts_dir):
    page = app_page
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=120_000)
    page.get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name="Levi et al. §4.1 synthetic — true σ vs random σ").click()
    # wait for a consequence of the rerun (not just "script not running"): the legend shows both models
    levi = page.get_by_test_id("stPlotlyChart").nth(1)
    expect(levi.locator(".legendtext", has_text="random sigma")).to_be_visible(timeout=120_000)
    expect(levi.locator(".legendtext", has_text="true sigma")).to_be_visible()
    wait_for_app(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    full_height_screenshot(page, artifacts_dir / "home_levi.png")
