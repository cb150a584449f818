"""Real-browser test of the Recalibrate page (Playwright + Debian Chromium against ``streamlit run app.py``).

Fixtures from ``tests/conftest.py``: ``app_page`` (a fresh browser context on the running app), ``wait_for_app``
and ``full_height_screenshot``.  Skipped when Chromium or Playwright is missing (an error under CI=true).
"""

from __future__ import annotations

import io

import pandas as pd
import pytest

from tests.conftest import full_height_screenshot, wait_for_app

pytestmark = pytest.mark.browser


def _open_recalibrate(page) -> None:
    from playwright.sync_api import expect

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Recalibrate").click()
    expect(page.get_by_role("button", name="Run comparison")).to_be_visible(timeout=120_000)  # a loaded machine
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
    kuleshov = page.locator(".st-key-recal_kuleshov").get_by_test_id("stPlotlyChart")
    expect(kuleshov.locator(".scatterlayer .trace")).to_have_count(8, timeout=60_000)
    legend = kuleshov.locator(".legend")
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
    expect(charts).to_have_count(4)  # the dot plot, the MCB–DSC plane, reliability diagram, confidence histogram
    expect(charts.nth(2).locator(".legend")).to_contain_text("temperature scaling")
    expect(charts.nth(3).locator(".barlayer .trace")).to_have_count(5)  # one bar trace per calibrator
    full_height_screenshot(page, artifacts_dir / "recalibrate_classification.png")

    # the MCB–DSC plane: clicking the isotonic point selects it in the downloads' picker
    plane = page.locator(".st-key-recal_plane").get_by_test_id("stPlotlyChart")
    legend = plane.locator(".legend")
    for name in ("uncalibrated", "temperature scaling", "histogram binning", "isotonic", "BBQ"):
        expect(legend).to_contain_text(name)
    # by key and not stale: during a rerun Streamlit may briefly keep the previous run's widget beside the new one
    picker = page.locator(".st-key-recal_dl_which[data-stale='false']").get_by_role("combobox", name="Calibrator")
    expect(picker).to_have_value("temperature scaling")
    traces = plane.locator(".scatterlayer .trace")
    point = traces.nth(traces.count() - 2).locator(".points path").first  # isotonic: the 4th of 5 point traces
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x - 6, y - 6)
    page.mouse.move(x, y, steps=4)
    page.wait_for_timeout(250)
    page.mouse.click(x, y)
    try:
        expect(picker).to_have_value("isotonic", timeout=120_000)
    finally:
        full_height_screenshot(page, artifacts_dir / "recalibrate_plane_clicked.png")
    wait_for_app(page)
    page.mouse.move(5, 5)
    plane.screenshot(path=str(artifacts_dir / "recalibrate_mcb_dsc_plane.png"))


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


LEVI = "Levi et al. §4.1 synthetic — true σ vs random σ"
SEVEN = ["MLE + shift", "split conformal", "constant σ"]  # added to the four defaults: 7 calibrators
#: Glide's data grid keeps its scroller 10 px larger than its viewport (room for the overlay scrollbars); a table
#: that really scrolls overflows by at least a row (35 px) or a column.
GRID_SLACK = 12

BOXES = """(selector) => [...document.querySelectorAll(selector)].map(e => {
    const b = e.getBoundingClientRect(); return {left: b.left, right: b.right, width: b.width}; })"""
INNER_SCROLL = """() => [...document.querySelectorAll('[data-testid=stDataFrame]')].map(t => {
    let x = 0, y = 0;
    for (const e of t.querySelectorAll('*')) {
        x = Math.max(x, e.scrollWidth - e.clientWidth); y = Math.max(y, e.scrollHeight - e.clientHeight); }
    return {x, y}; })"""


def test_comparison_of_seven_calibrators_and_two_models_fits_1440x900(open_page, streamlit_url, artifacts_dir):
    """Issue 14, point 1: with 7 calibrators and 2 models the comparison (dot plot + table of the chosen metrics)
    fits the page at 1440×900: no chart or table is wider than the viewport, the table has no inner scroll, the
    Levi panels too; the log-axes toggle turns every Levi panel's axes to log."""
    from playwright.sync_api import expect

    page = open_page(streamlit_url, width=1440, height=900, timeout=120_000)
    _open_recalibrate(page)
    page.get_by_test_id("stSelectbox").filter(has_text="Built-in example").click()
    page.get_by_role("option", name=LEVI).click()
    expect(page.get_by_text("20,000 rows")).to_be_visible(timeout=120_000)
    wait_for_app(page)
    box = page.locator(".st-key-recal_cals_regression")
    for name in SEVEN:
        box.locator("input").click()
        box.locator("input").fill(name)
        page.keyboard.press("Enter")
        wait_for_app(page)
    page.keyboard.press("Escape")
    page.get_by_text("random", exact=True).click()
    wait_for_app(page)
    repeats = page.get_by_role("spinbutton", name="Repeats")
    repeats.fill("2")
    repeats.press("Enter")
    wait_for_app(page)
    _run(page)
    dots = page.locator(".st-key-recal_dots")
    expect(dots.locator(".scatterlayer .trace").first).to_be_attached()
    dots.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts_dir / "recalibrate_comparison_1440.png"))

    width = page.evaluate("window.innerWidth")
    main = page.evaluate(BOXES, "[data-testid=stMainBlockContainer]")[0]
    for selector in ("[data-testid=stPlotlyChart]", "[data-testid=stDataFrame]"):
        for b in page.evaluate(BOXES, selector):
            if b["width"]:  # charts in closed tabs have no box
                assert b["right"] <= min(width, main["right"]) + 1, (selector, b, width)
    table = page.get_by_test_id("stDataFrame").first
    expect(table).to_contain_text("calibrator")
    scroll = page.evaluate(INNER_SCROLL)[0]
    assert scroll["x"] <= GRID_SLACK and scroll["y"] <= GRID_SLACK, scroll  # 16 rows, 8 columns, whole
    # the best of each row is drawn as a star (plotly draws stars as paths in the point layer)
    assert dots.locator(".scatterlayer .point").count() >= 16 * 6

    levi = page.locator(".st-key-recal_levi[data-stale='false']")
    levi.scroll_into_view_if_needed()
    types = "(el) => { const p = el.querySelector('.js-plotly-plot')._fullLayout; " \
            "return Object.keys(p).filter(k => /^[xy]axis\\d*$/.test(k)).map(k => p[k].type); }"
    assert set(levi.evaluate(types)) == {"linear"}
    page.locator(".st-key-recal_levi_log").get_by_text("Log axes").click()
    wait_for_app(page)
    page.wait_for_function(
        "() => { const e = document.querySelector('.st-key-recal_levi[data-stale=false] .js-plotly-plot'); "
        "return !!(e && e._fullLayout && e._fullLayout.xaxis.type === 'log'); }")
    assert set(levi.evaluate(types)) == {"log"}
    assert len(levi.evaluate(types)) == 2 * 7  # one panel per calibrator
    page.wait_for_timeout(500)
    levi.screenshot(path=str(artifacts_dir / "recalibrate_levi_panels_log.png"))
