"""Real-browser end-to-end tests of the Data, Regression, Classification and Help pages.

`streamlit run app.py` + headless Debian Chromium via Playwright (fixtures in conftest.py).  Every step waits
for a visible *consequence* with ``expect(...)`` (a rerun may not have started right after a click), and
screenshots of each page are written to tests/artifacts/ (the README shows copies from docs/screenshots/).
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from calib_core.data import examples

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import full_height_screenshot, upload_file, wait_for_app  # noqa: E402


def screenshot(page, path) -> None:
    """Full-height screenshot without hover labels or Plotly's mode bar (mouse parked), then reset the viewport."""
    page.mouse.move(5, 5)
    expect(page.get_by_test_id("stToast")).to_have_count(0, timeout=20_000)  # "Loaded: …" notices fade out
    page.wait_for_timeout(300)
    full_height_screenshot(page, path)
    page.set_viewport_size({"width": 1400, "height": 1000})

LONG = 120_000  # ms: the first computation of an example (training, bootstrap) on a loaded 2-core machine
DIGITS = "Digits — over-confident classifier (10 classes, logits)"


TITLES = {"Data": "Data", "Regression": "Regression diagnostics", "Classification": "Classification diagnostics",
          "Help": "Help"}


def nav(page, name: str) -> None:
    """Go to a page through the sidebar and wait until its own title is there and the script is idle."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()
    expect(page.get_by_role("heading", level=1, name=TITLES[name], exact=True)).to_be_visible(timeout=LONG)
    wait_for_app(page)


def hover_click(page, x: float, y: float, shift: bool = False) -> None:
    """Plotly selects on click from its hover state: move there first, then click (optionally with Shift)."""
    page.mouse.move(x - 6, y - 6)
    page.mouse.move(x, y, steps=4)
    page.wait_for_timeout(250)
    if shift:
        page.keyboard.down("Shift")
    page.mouse.click(x, y)
    if shift:
        page.keyboard.up("Shift")


def click_point(page, chart, trace: int, index: int, shift: bool = False) -> None:
    point = chart.locator(".scatterlayer .trace").nth(trace).locator(".points path").nth(index)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    hover_click(page, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, shift)


def click_bar(page, chart, trace: int, index: int, shift: bool = False) -> None:
    bar = chart.locator(".barlayer .trace").nth(trace).locator(".point path").nth(index)
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    # the middle of the bar's visible part: on a log axis its path runs far below the (clipped) plot area,
    # and its top may sit under Plotly's mode bar (top right of the chart, shown on hover)
    plot = chart.locator(".nsewdrag").first.bounding_box()
    bottom = min(box["y"] + box["height"], plot["y"] + plot["height"])
    hover_click(page, box["x"] + box["width"] / 2, (box["y"] + bottom) / 2, shift)


def load_example(page, name: str) -> None:
    nav(page, "Data")
    option = page.get_by_role("option", name=name)
    for _ in range(4):  # a rerun still settling (the Data page's later sections) can close the list just opened
        page.get_by_role("combobox", name="Example").click()
        try:
            option.wait_for(state="visible", timeout=5_000)
            break
        except Exception:
            page.keyboard.press("Escape")
            wait_for_app(page)
    option.click()
    expect(page.get_by_role("combobox", name="Example")).to_have_value(name)
    page.get_by_role("button", name="Load example").click()
    expect(page.get_by_test_id("stSidebar").get_by_text(name)).to_be_visible(timeout=LONG)
    wait_for_app(page)


def test_upload_csv_then_select_levi_bins(app_page, artifacts_dir, tmp_path):
    page = app_page
    path = tmp_path / "levi_predictions.csv"
    examples.levi_frame(n=3000).to_csv(path, index=False)
    nav(page, "Data")
    upload_file(page, str(path))
    # validation summary of the upload
    expect(page.get_by_test_id("stSidebar").get_by_text("levi_predictions.csv")).to_be_visible(timeout=LONG)
    metrics = page.get_by_test_id("stMetricValue")
    expect(metrics.nth(0)).to_have_text("6,000")
    expect(metrics.nth(2)).to_have_text("0")
    expect(page.get_by_text("Diagnose it on the Regression page")).to_be_visible()
    wait_for_app(page)
    screenshot(page, artifacts_dir / "data.png")

    nav(page, "Regression")
    charts = page.get_by_test_id("stPlotlyChart")
    levi = charts.nth(0)
    # two models, 15 σ-bins each, drawn as markers with error bars
    expect(levi.locator(".scatterlayer .trace").nth(2).locator(".points path")).to_have_count(15, timeout=LONG)
    expect(levi.locator(".legendtext", has_text="random sigma")).to_be_visible()
    info = page.get_by_text(re.compile(r"σ-bins selected|rows selected from σ-bin"))
    expect(info).to_have_text(re.compile("No σ-bins selected"))
    wait_for_app(page)

    click_point(page, levi, 2, 13)  # trace 2 = 'random sigma' (trace 0 is the identity line)
    expect(info).to_have_text(re.compile(r"200 rows selected from σ-bin 14 of 15 \(random sigma\)"), timeout=LONG)
    kuleshov = page.locator(".st-key-reg_kuleshov")  # live charts (dashboard.live_chart): found by their key
    expect(kuleshov.locator(".legendtext", has_text="random sigma · selected")).to_be_visible(timeout=LONG)
    expect(page.locator(".st-key-reg_pit .legendtext", has_text="random sigma · selected")).to_be_visible()  # PIT
    expect(page.get_by_role("heading", name="Metrics of the selected rows")).to_be_visible()
    wait_for_app(page)

    click_point(page, charts.nth(0), 2, 14, shift=True)  # shift-click adds a bin
    expect(info).to_have_text(re.compile(r"400 rows selected from σ-bins 14–15 of 15 \(random sigma\)"),
                              timeout=LONG)
    wait_for_app(page)
    screenshot(page, artifacts_dir / "regression.png")

    # take the results away: the metric table (CSV) and the page report (self-contained HTML)
    with page.expect_download(timeout=LONG) as csv_download:
        page.get_by_role("button", name="Metric table (CSV)").click()
    metrics = pd.read_csv(csv_download.value.path())
    assert set(metrics["rows"]) == {"all", "selected σ-bins"}
    assert {"value", "ci_low", "ci_high", "perfect"} <= set(metrics.columns)
    with page.expect_download(timeout=LONG) as html_download:
        page.get_by_role("button", name="Page report (HTML)").click()
    report = open(html_download.value.path(), encoding="utf-8").read()
    assert "Regression diagnostics — levi_predictions.csv" in report and "Metrics of the selected σ-bins" in report
    assert "400 rows selected from σ-bins 14–15 of 15" in report
    assert not re.search(r"<script[^>]*\ssrc=", report)  # plotly.js inlined: renders offline

    page.get_by_role("button", name="Clear selection").click()
    expect(info).to_have_text(re.compile("No σ-bins selected"), timeout=LONG)
    expect(kuleshov.locator(".legendtext", has_text="selected")).to_have_count(0)
    wait_for_app(page)

    # box selection: Plotly's "Box Select" tool, dragged around the random-σ bins 10–14
    levi = charts.nth(0)
    points = levi.locator(".scatterlayer .trace").nth(2).locator(".points path")
    first, last = points.nth(10).bounding_box(), points.nth(14).bounding_box()
    levi.hover()
    levi.locator('[data-title="Box Select"]').click()
    x0, y0 = first["x"] - 4, min(first["y"], last["y"]) - 10
    x1, y1 = last["x"] + last["width"] + 4, max(first["y"] + first["height"], last["y"] + last["height"]) + 10
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=8)
    page.mouse.up()
    expect(info).to_have_text(re.compile(r"1,000 rows selected from σ-bins 11–15 of 15 \(random sigma\)"),
                              timeout=LONG)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_classification_reliability_bars_link_to_histogram_and_rows(app_page, artifacts_dir):
    page = app_page
    load_example(page, DIGITS)
    nav(page, "Classification")
    charts = page.get_by_test_id("stPlotlyChart")
    rel, hist = charts.nth(0), charts.nth(1)
    expect(rel.locator(".barlayer .trace").first.locator(".point path")).to_have_count(9, timeout=LONG)
    info = page.get_by_text(re.compile(r"No bins selected|rows selected from confidence bin"))
    expect(info).to_have_text(re.compile("No bins selected"))
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="log").click()  # histogram y axis
    expect(hist.locator(".ytick").first).to_be_visible()
    wait_for_app(page)

    click_bar(page, rel, 0, 7)  # the 8th non-empty bin: confidence (13/15, 14/15]
    expect(info).to_have_text(re.compile(r"14 rows selected from confidence bin 14 of 15\."), timeout=LONG)
    # the histogram highlights bin 13 and dims the others
    bars = hist.locator(".barlayer .trace").first.locator(".point path")
    expect(bars.nth(13)).to_have_css("opacity", "1", timeout=LONG)
    expect(bars.nth(14)).to_have_css("opacity", "0.25")
    expect(page.get_by_text("Per-class breakdown of the selected rows")).to_be_visible()
    expect(page.get_by_text("Rows in the selected bins (first 14 of 14)")).to_be_visible()
    wait_for_app(page)

    n_top = int((examples.digits_example().probs.max(axis=1) > 14 / 15).sum())  # rows of the top bin
    click_bar(page, hist, 0, 14)  # the other direction: a histogram bar
    expect(info).to_have_text(re.compile(rf"{n_top:,} rows selected from confidence bin 15 of 15\."), timeout=LONG)
    expect(page.get_by_text(f"Rows in the selected bins (first 200 of {n_top:,})")).to_be_visible()
    wait_for_app(page)
    screenshot(page, artifacts_dir / "classification.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_broken_upload_keeps_the_app_usable(app_page, tmp_path):
    page = app_page
    load_example(page, "Diabetes — Gaussian (mean, std) of a boosting ensemble")
    bad = tmp_path / "broken.csv"
    bad.write_bytes(b"\x00\x01garbage\xff" * 100)
    upload_file(page, str(bad))
    error = page.get_by_test_id("stAlertContentError")
    expect(error).to_contain_text("broken.csv", timeout=LONG)
    expect(page.get_by_text("Still using the previously loaded data")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    nav(page, "Regression")
    expect(page.get_by_test_id("stPlotlyChart").first.locator(".main-svg").first).to_be_visible(timeout=LONG)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_controls_survive_page_switches_and_templates_download(app_page, artifacts_dir):
    page = app_page
    load_example(page, "Diabetes — Gaussian (mean, std) of a boosting ensemble")
    with page.expect_download() as download:
        page.get_by_role("button", name="gaussian std").click()
    assert download.value.suggested_filename == "template_gaussian_std.csv"
    assert open(download.value.path(), encoding="utf-8").readline().strip() == "y,mean,std,split,x"

    nav(page, "Regression")
    box = page.get_by_role("combobox", name="Bootstrap resamples")
    expect(box).to_have_value("1000", timeout=LONG)  # the default (the same at every size)
    # the first diagnosis may still be drawing: a rerun that lands while the menu is open closes it
    expect(page.get_by_test_id("stPlotlyChart").first.locator(".main-svg").first).to_be_visible(timeout=LONG)
    wait_for_app(page)
    option = page.get_by_role("option", name="500", exact=True)
    for _ in range(3):
        box.click()
        try:
            option.wait_for(state="visible", timeout=10_000)
            break
        except Exception:  # menu closed by a late rerun: open it again
            wait_for_app(page)
    option.click()
    expect(box).to_have_value("500")
    wait_for_app(page)
    nav(page, "Help")
    expect(page.get_by_role("tab", name="Tests and verdicts")).to_be_visible()
    expect(page.get_by_text("Benjamini–Hochberg").first).to_be_visible()
    wait_for_app(page)
    screenshot(page, artifacts_dir / "help.png")
    nav(page, "Regression")
    expect(page.get_by_role("combobox", name="Bootstrap resamples")).to_have_value("500", timeout=LONG)
    expect(page.get_by_test_id("stException")).to_have_count(0)
