"""Browser test: a naive-Bayes export's tiny probabilities (2.9e-149) and a huge value are written in scientific
notation inside their cells of the Data page's tables (the grid itself prints such floats as rows of zeros or as an
error cell)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import LONG, nav, screenshot  # noqa: E402
from tests.conftest import upload_file, wait_for_app  # noqa: E402


def test_tiny_and_huge_numbers_fit_their_cells(app_page, artifacts_dir, tmp_path):
    page = app_page
    rng = np.random.default_rng(0)
    n = 60
    p1 = rng.uniform(0.05, 0.95, n)
    p1[:2] = [2.9e-149, 1e-300]
    frame = pd.DataFrame({"y": (rng.uniform(size=n) < p1).astype(int), "p_0": 1 - p1, "p_1": p1,
                          "weight_kg": np.r_[1e300, np.ones(n - 1)]})
    frame.to_csv(tmp_path / "naive_bayes.csv", index=False)
    nav(page, "Data")
    upload_file(page, str(tmp_path / "naive_bayes.csv"))
    expect(page.get_by_test_id("stSidebar").get_by_text("naive_bayes.csv")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    page.get_by_text("Column mapping").first.click()
    wait_for_app(page)
    expect(page.get_by_text("Pre-filled with what was detected")).to_be_visible()
    screenshot(page, artifacts_dir / "data_tiny_numbers.png")
    # The grid draws on a canvas (its cells are not in the DOM here): the texts are asserted by the AppTest of the
    # same page (tests/app/test_numbers_in_tables.py); this run gives the screenshot a person looks at.
    preview = page.get_by_test_id("stDataFrame").first
    expect(preview).to_be_visible()
    box = preview.bounding_box()
    assert box is not None and box["width"] < 1400  # the table stays inside the main column
    expect(page.get_by_test_id("stException")).to_have_count(0)
