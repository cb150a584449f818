"""Browser test: a 100-class upload's per-class reliability shows the worst 20 classes, says so, and takes the
user's pick; screenshot of the figure for a look."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import LONG, nav  # noqa: E402
from tests.conftest import upload_file, wait_for_app  # noqa: E402


def test_per_class_reliability_of_100_classes(app_page, artifacts_dir, tmp_path):
    page = app_page
    rng = np.random.default_rng(5)
    n, k = 3000, 100
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), labels] += 2.5
    logits[:, 70:] += 1.5  # classes 70–99 over-predicted
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    frame = pd.DataFrame(np.round(p, 6), columns=[f"prob_{j}" for j in range(k)])
    frame /= frame.sum(axis=1).to_numpy()[:, None]
    frame.insert(0, "label", labels)
    frame.to_csv(tmp_path / "hundred.csv", index=False, float_format="%.7f")
    nav(page, "Data")
    upload_file(page, str(tmp_path / "hundred.csv"))
    expect(page.get_by_test_id("stSidebar").get_by_text("hundred.csv")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    nav(page, "Classification")
    caption = page.get_by_text(re.compile(r"Showing \d+ of 100 classes"))
    expect(caption).to_have_text(re.compile(r"Showing 20 of 100 classes \(the 20 with the largest one-vs-rest ECE"),
                                 timeout=LONG)
    figure = page.locator(".st-key-cls_per_class").get_by_test_id("stPlotlyChart")  # by key: new charts come first
    titles = figure.locator(".annotation-text")
    expect(titles).to_have_count(20, timeout=LONG)
    shown = [int(t.split(" ·")[0]) for t in titles.all_text_contents()]
    assert all(c >= 70 for c in shown), shown  # the worst classes, not 0–19
    wait_for_app(page)
    figure.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    page.screenshot(path=str(artifacts_dir / "classification_per_class_100.png"), full_page=False)
    expect(page.get_by_test_id("stException")).to_have_count(0)
