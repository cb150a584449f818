"""Real-browser test of the Recalibrate page (Playwright + Debian Chromium against ``streamlit run app.py``).

Fixtures from ``tests/conftest.py``: ``app_page`` (a fresh browser context on the running app), ``wait_for_app``
and ``full_height_screenshot``.  Skipped when Chromium or Playwright is missing (an error under CI=true).
"""

from __future__ import annotations

import io

import pandas as pd
import pytest
from conftest import full_height_screenshot, wait_for_app

pytestmark = pytest.mark.browser


def _open_recalibrate(page) -> None:
    from playwright.sync_api import expect

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Recalibrate").click()
    expect(page.get_by_role("button", name="Run comparison")).to_be_visible()
    wait_for_app(page)


def _run(page) -> None:
    from playwright.sync_api import expect

    page.get_by_role("button", name="Run comparison").click()
    expect(page.get_by_text("Comparison on held-out rows")).to_be_visible(timeout=120_000)
    wait_for_app(page)


def _download(page, label: str) -> bytes:
    with page.expect_download(timeout=120_000) as info:
        page.get_by_role("button", name=label).click()
    path = info.value.path()
    with open(path, "rb") as fh:
        return fh.read()


def test_recalibrate_runs_draws_and_downloads(app_page, artifacts_dir):
    from playwright.sync_api import expect

    page = app_page
    _open_recalibrate(page)
    expect(page.get_by_text("using a built-in example")).to_be_visible()
    _run(page)

    # the comparison table and the before/after diagrams are drawn by plotly.js
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts.first.locator(".main-svg").first).to_be_attached()
    # Kuleshov chart: identity line + one consistency band (2 traces) + uncalibrated + four calibrators
    expect(charts.nth(0).locator(".scatterlayer .trace")).to_have_count(8, timeout=60_000)
    legend = charts.nth(0).locator(".legend")
    for name in ("uncalibrated", "std scaling", "isotonic (Kuleshov)", "CRUDE", "σ-binning"):
        expect(legend).to_contain_text(name)

    # downloads: the self-contained page report and the calibrated predictions
    report = _download(page, "Page report (HTML)").decode("utf-8")
    assert report.startswith("<!DOCTYPE html>") and report.count("Plotly.newPlot(") == 6
    assert "Comparison on held-out rows" in report
    calibrated = pd.read_csv(io.BytesIO(_download(page, "Predictions (CSV)")))
    assert {"y", "mean", "std", "q0.05", "q0.95", "split", "calibrator"} <= set(calibrated.columns)
    assert len(calibrated) == 442 and set(calibrated["calibrator"]) == {"std scaling"}

    full_height_screenshot(page, artifacts_dir / "recalibrate.png")


def test_recalibrate_classification_example(app_page, artifacts_dir):
    from playwright.sync_api import expect

    page = app_page
    _open_recalibrate(page)
    page.get_by_test_id("stSelectbox").filter(has_text="Built-in example").click()
    page.get_by_role("option", name="Digits — over-confident classifier (10 classes, logits)").click()
    expect(page.get_by_text("1,297 rows")).to_be_visible(timeout=120_000)
    wait_for_app(page)
    _run(page)
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts).to_have_count(2)
    expect(charts.nth(0).locator(".legend")).to_contain_text("temperature scaling")
    expect(charts.nth(1).locator(".barlayer .trace")).to_have_count(5)  # one bar trace per calibrator
    full_height_screenshot(page, artifacts_dir / "recalibrate_classification.png")


def test_recalibrate_controls_survive_page_switches(app_page):
    """The Recalibrate page's controls use the dashboard's one widget-persistence mechanism (declared persistent,
    re-assigned by app.py): a value survives a visit to another page."""
    from playwright.sync_api import expect

    page = app_page
    _open_recalibrate(page)
    seed = page.get_by_label("Seed")
    seed.fill("17")
    seed.press("Enter")
    wait_for_app(page)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Help").click()
    expect(page.get_by_role("tab", name="Regression metrics")).to_be_visible()
    wait_for_app(page)
    _open_recalibrate(page)
    expect(page.get_by_label("Seed")).to_have_value("17")
