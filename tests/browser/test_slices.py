"""Browser test of the Slice explorer: an upload with a planted miscalibrated slice, the slice
at the top of the ranked list, choosing it by a click on its row and by a click on its funnel point, the Regression
page restricted to it, "Show all rows" back; screenshots of both pages for a look."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import LONG, TITLES, hover_click, screenshot  # noqa: E402
from tests.conftest import upload_file, wait_for_app  # noqa: E402

FLAGGED_FILL = "228, 87, 86"  # calib_core.plots.slices.FLAGGED_COLOR as Plotly writes it in a marker's style


def nav(page, name: str, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()
    expect(page.get_by_role("heading", level=1, name=title, exact=True)).to_be_visible(timeout=LONG)
    wait_for_app(page)


def test_slice_explorer_click_restricts_the_regression_page(app_page, artifacts_dir, tmp_path):
    page = app_page
    rng = np.random.default_rng(3)
    n = 4000
    region = rng.choice(["north", "south", "east", "west"], n)
    mu, sigma = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
    y = mu + np.where(region == "east", 1.5, 1.0) * sigma * rng.normal(size=n)
    frame = pd.DataFrame({"y": y, "mean": mu, "std": sigma, "region": region, "age": rng.normal(45, 12, n).round(1)})
    frame.to_csv(tmp_path / "regions.csv", index=False)
    n_east = int((region == "east").sum())

    nav(page, "Data", TITLES["Data"])
    upload_file(page, str(tmp_path / "regions.csv"))
    expect(page.get_by_test_id("stSidebar").get_by_text("regions.csv")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    nav(page, "Slice explorer", "Slice explorer")
    expect(page.get_by_text(re.compile(r"slices searched \(2 of 2 columns, 1 pair\); [1-9]\d* flagged"))).to_be_visible(
        timeout=LONG)
    grid = page.locator(".st-key-slc_table").get_by_test_id("stDataFrame")
    expect(grid).to_be_visible(timeout=LONG)
    screenshot(page, artifacts_dir / "slices_explorer.png")

    # choose the first-ranked slice by a click on its row (the row-marker column of the grid)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)
    chosen = page.get_by_text("Chosen: region = east")
    expect(chosen).to_be_visible(timeout=LONG)
    wait_for_app(page)

    # "Show all rows" clears it; a click on the slice's funnel point chooses it again
    page.locator(".st-key-slc_clear").get_by_role("button").click()
    expect(page.get_by_text("No slice chosen")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    funnel = page.locator(".st-key-slc_funnel")
    funnel.scroll_into_view_if_needed()
    flagged = funnel.locator(f'.scatterlayer .points path[style*="{FLAGGED_FILL}"]')
    expect(flagged.first).to_be_visible(timeout=LONG)
    boxes = [flagged.nth(i).bounding_box() for i in range(flagged.count())]
    right = max(boxes, key=lambda b: b["x"])  # the largest flagged slice: region = east (its pairs are smaller)
    hover_click(page, right["x"] + right["width"] / 2, right["y"] + right["height"] / 2)
    expect(chosen).to_be_visible(timeout=LONG)
    wait_for_app(page)
    screenshot(page, artifacts_dir / "slices_explorer_chosen.png")

    nav(page, "Regression", TITLES["Regression"])
    expect(page.get_by_text(re.compile(rf"Restricted to the slice region = east \({n_east:,} of {n:,} rows\)"))) \
        .to_be_visible(timeout=LONG)
    wait_for_app(page)
    # the whole data drawn faintly behind every diagram of the slice
    for key in ("reg_levi_chart", "reg_kuleshov", "reg_pit", "reg_z"):
        chart = page.locator(f".st-key-{key}")
        chart.scroll_into_view_if_needed()
        expect(chart.locator(".legendtext", has_text="all rows (faint)")).to_be_visible(timeout=LONG)
    page.locator(".st-key-reg_levi_chart").scroll_into_view_if_needed()
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    screenshot(page, artifacts_dir / "slices_regression_restricted.png")
    page.locator(".st-key-reg_slice_clear").get_by_role("button").click()
    expect(page.get_by_text(re.compile("Restricted to the slice"))).to_have_count(0, timeout=LONG)
    wait_for_app(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_classification_page_draws_all_rows_faintly_behind_a_slice(app_page, artifacts_dir, tmp_path):
    """Issue 17 pt 3 on the Classification page: a slice chosen on the explorer (site = c, labels drawn with 0.7 of
    the predicted probability) is drawn over the whole data in faint grey (reliability diagram, confidence
    histogram, smooth reliability), and its metric table has an 'all rows' column.  Screenshot:
    tests/artifacts/slices_classification_restricted.png."""
    page = app_page
    rng = np.random.default_rng(1)
    n = 6000
    f = rng.uniform(0.05, 0.95, n)
    site = rng.choice(["a", "b", "c"], n)
    y = (rng.random(n) < np.where(site == "c", 0.7 * f, f)).astype(int)
    pd.DataFrame({"label": y, "prob_0": 1 - f, "prob_1": f, "site": site}).to_csv(tmp_path / "sites.csv", index=False)
    nav(page, "Data", TITLES["Data"])
    upload_file(page, str(tmp_path / "sites.csv"))
    expect(page.get_by_test_id("stSidebar").get_by_text("sites.csv")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    nav(page, "Slice explorer", "Slice explorer")
    grid = page.locator(".st-key-slc_table").get_by_test_id("stDataFrame")
    expect(grid).to_be_visible(timeout=LONG)
    wait_for_app(page)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)  # the first-ranked slice
    expect(page.get_by_text("Chosen: site = c")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    nav(page, "Classification", TITLES["Classification"])
    expect(page.get_by_text(re.compile(r"Restricted to the slice site = c"))).to_be_visible(timeout=LONG)
    wait_for_app(page)
    for key in ("cls_rel_chart", "cls_hist_chart"):
        chart = page.locator(f".st-key-{key}")
        chart.scroll_into_view_if_needed()
        expect(chart.locator(".legendtext", has_text="all rows (faint)")).to_be_visible(timeout=LONG)
    expect(page.get_by_text("'all rows': on the whole data with the same filters", exact=False)).to_be_visible()
    page.locator(".st-key-cls_rel_chart").scroll_into_view_if_needed()
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    page.screenshot(path=str(artifacts_dir / "slices_classification_restricted.png"))
    expect(page.get_by_test_id("stException")).to_have_count(0)
