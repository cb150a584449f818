"""Real browser: slice-wise recalibration on the Recalibrate page.  A file with a ``group``
column is uploaded on the Data page (its prediction-file uploader, by key); Recalibrate offers std scaling per slice
and Mondrian conformal, and the per-slice table (found by its key) shows the held-out coverage of every region before
and after.  Screenshot in tests/artifacts/recalibrate_slices.png."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import full_height_screenshot, upload_file, wait_for_app  # noqa: E402

LONG = 120_000


def _regions_csv(path, n: int = 3000, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    group = rng.choice(["north", "south", "east"], n, p=[0.45, 0.45, 0.10])
    mean = rng.normal(size=n)
    scale = np.select([group == "north", group == "south"], [2.0, 0.5], 1.0)
    pd.DataFrame({"y": mean + scale * rng.standard_normal(n), "mean": mean, "std": np.ones(n),
                  "group": group}).to_csv(path, index=False)


def _pick(page, key: str, option: str) -> None:
    """Add ``option`` to the multiselect with widget key ``key``."""
    box = page.locator(f".st-key-{key}")
    box.get_by_role("combobox").click()
    page.get_by_role("option", name=option, exact=True).click()
    page.keyboard.press("Escape")


def test_slice_wise_recalibration_per_slice_table(app_page, artifacts_dir, tmp_path):
    page = app_page
    path = tmp_path / "regions.csv"
    _regions_csv(path)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data", exact=True).click()
    upload_file(page, str(path))
    expect(page.get_by_text("Diagnose it on the Regression page")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Recalibrate").click()
    expect(page.get_by_role("button", name="Run comparison")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    cals = page.locator(".st-key-recal_cals_regression")
    for name in ("std scaling per slice", "Mondrian conformal"):
        _pick(page, "recal_cals_regression", name)
        expect(cals).to_contain_text(name)
        wait_for_app(page)
    page.get_by_role("button", name="Run comparison").click()
    expect(page.get_by_text("Per slice (test rows of trial 1)")).to_be_visible(timeout=LONG)
    wait_for_app(page, LONG)
    table = page.locator(".st-key-recal_slice_table")
    table.scroll_into_view_if_needed()
    expect(table.get_by_test_id("stDataFrame")).to_be_visible()
    # the grid is a canvas; its CSV toolbar download is the honest read of the cells
    with page.expect_download(timeout=LONG) as info:
        page.get_by_role("button", name="Per-slice table (CSV)").click()
    got = pd.read_csv(info.value.path())
    cov = got.pivot_table(index="slice", columns="calibrator", values="coverage_90")
    assert set(cov.index) == {"(all rows)", "north", "south", "east"}
    assert cov.loc["north", "std scaling"] < 0.8
    assert abs(cov.loc["north", "Mondrian conformal"] - 0.9) < 0.05
    assert abs(cov.loc["south", "std scaling per slice"] - 0.9) < 0.05
    box = table.bounding_box()
    main = page.get_by_test_id("stMainBlockContainer").bounding_box()
    assert box["x"] + box["width"] <= main["x"] + main["width"] + 1  # fits the main column
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    table.screenshot(path=str(artifacts_dir / "recalibrate_slices_table.png"))
    full_height_screenshot(page, artifacts_dir / "recalibrate_slices.png")


def test_explorer_worst_slices_before_and_after_a_slice_wise_recalibration(app_page, artifacts_dir, tmp_path):
    """Issue 17 pt 5 end to end: a file whose text column ``region`` has a miscalibrated level (east: σ 50% too
    small); Recalibrate with std scaling per slice by region; the Slice explorer then ranks the held-out rows'
    slices before and after it — region = east flagged before, nothing flagged after.  Screenshots:
    tests/artifacts/slices_before_after.png (the section) and slices_before_after_page.png."""
    page = app_page
    rng = np.random.default_rng(3)
    n = 4000
    region = rng.choice(["north", "south", "east", "west"], n)
    mu, sigma = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
    y = mu + np.where(region == "east", 1.5, 1.0) * sigma * rng.normal(size=n)
    path = tmp_path / "regions.csv"
    pd.DataFrame({"y": y, "mean": mu, "std": sigma, "region": region,
                  "age": rng.normal(45, 12, n).round(1)}).to_csv(path, index=False)
    nav = page.get_by_test_id("stSidebarNav")
    nav.get_by_role("link", name="Data", exact=True).click()
    upload_file(page, str(path))
    expect(page.get_by_text("Diagnose it on the Regression page")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    nav.get_by_role("link", name="Slice explorer", exact=True).click()
    expect(page.get_by_text("Run a comparison on the Recalibrate page")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    page.get_by_role("link", name="Go to the Recalibrate page").click()
    expect(page.get_by_role("button", name="Run comparison")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    _pick(page, "recal_cals_regression", "std scaling per slice")
    expect(page.locator(".st-key-recal_cals_regression")).to_contain_text("std scaling per slice")
    wait_for_app(page)
    page.get_by_role("button", name="Run comparison").click()
    expect(page.get_by_text("Per slice (test rows of trial 1)")).to_be_visible(timeout=LONG)
    wait_for_app(page, LONG)
    nav.get_by_role("link", name="Slice explorer", exact=True).click()
    sentence = page.get_by_text(re.compile(r"Judged on the 2,000 held-out \(test\) rows .* Flagged: [1-9]\d* before "
                                           r"\(uncalibrated\), 0 after std scaling per slice\."))
    expect(sentence).to_be_visible(timeout=LONG)
    wait_for_app(page, LONG)
    table = page.locator(".st-key-slc_ba_table")
    table.scroll_into_view_if_needed()
    expect(table.get_by_test_id("stDataFrame")).to_be_visible()
    box = table.bounding_box()
    main = page.get_by_test_id("stMainBlockContainer").bounding_box()
    assert box["x"] + box["width"] <= main["x"] + main["width"] + 1  # fits the main column
    # the grid is a canvas: the table's CSV download is the honest read of the cells
    with page.expect_download(timeout=LONG) as info:
        page.get_by_role("button", name="Before/after table (CSV)").click()
    got = pd.read_csv(info.value.path())
    assert got.loc[0, "slice"] == "region = east" and got.loc[0, "verdict after"] == "no longer flagged"
    assert got.loc[0, "adjusted p before"] <= 0.05 < got.loc[0, "adjusted p after"]
    funnel = page.locator(".st-key-slc_ba_funnel")
    funnel.scroll_into_view_if_needed()
    expect(funnel.locator(".legendtext", has_text="before → after std scaling per slice")).to_be_visible(timeout=LONG)
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    page.get_by_text("Before and after recalibration").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "slices_before_after.png"))
    expect(page.get_by_test_id("stException")).to_have_count(0)
    full_height_screenshot(page, artifacts_dir / "slices_before_after_page.png")
