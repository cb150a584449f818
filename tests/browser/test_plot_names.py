"""Uploaded names are drawn literally in Plotly charts, in Chromium.

Plotly renders ``<a href>``, ``<b>``, ``<span style>`` … in legend entries, hover labels and titles: a model named
``<a href="…">m</a><b>B</b>`` became a link and bold text in the legend.  Here such a model is uploaded and the
Regression page's charts must hold no link and no bold or styled legend text, while the legend shows the name as
typed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

HOSTILE = '<a href="http://127.0.0.1:9/x">m</a><b>B</b><span style="color:red">s</span>%{x}'


@pytest.mark.browser
def test_plotly_legends_show_uploaded_names_literally(open_page, streamlit_url, artifacts_dir):
    expect = pytest.importorskip("playwright.sync_api").expect
    from tests.conftest import full_height_screenshot, upload_file, wait_for_app

    rng = np.random.default_rng(0)
    n = 300
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, size=n)
    data = pd.DataFrame({"y": mean + std * rng.normal(size=n), "mean": mean, "std": std,
                         "model": np.where(np.arange(n) % 2, HOSTILE, "m2")})

    page = open_page(streamlit_url)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Data", exact=True)).to_be_visible(timeout=120_000)
    wait_for_app(page)
    upload_file(page, files=[
        {"name": "names.csv", "mimeType": "text/csv", "buffer": data.to_csv(index=False).encode()}])
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Loaded:", timeout=120_000)
    wait_for_app(page)

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Regression", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Regression diagnostics")).to_be_visible(timeout=120_000)
    expect(page.locator(".js-plotly-plot .legendtext").first).to_be_visible(timeout=180_000)
    wait_for_app(page, timeout=180_000)
    page.wait_for_timeout(1500)
    legends = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert HOSTILE in legends, legends  # the name as typed, tags and all
    plots = page.locator(".js-plotly-plot")
    assert plots.locator("a").count() == 0  # no link made of the name
    styled = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot .legendtext tspan'))
        .filter(t => t.style.fontWeight === 'bold' || t.getAttribute('style')?.includes('red'))
        .map(t => t.textContent)""")
    assert styled == [], styled  # no bold or red legend text
    full_height_screenshot(page, artifacts_dir / "plot_names_regression.png")
