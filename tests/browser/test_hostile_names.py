"""Uploaded text never renders as Markdown, in Chromium.

A model named ``![m](http://127.0.0.1:PORT/x.png)`` made the Regression page request that image; a file name with
``:red-background[…]`` and ``:material/verified:`` rendered as styled text and an icon.  Here a local HTTP server
records every request, a file with such names is uploaded, and the Data and Regression pages must neither request
the image nor show styled text or the icon — while showing the names as text.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pandas as pd
import pytest


class _Recorder(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        type(self).requests.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def recorder():
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    _Recorder.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], _Recorder.requests
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.browser
def test_hostile_names_request_nothing_and_show_as_text(open_page, streamlit_url, recorder, artifacts_dir):
    expect = pytest.importorskip("playwright.sync_api").expect
    from tests.conftest import full_height_screenshot, upload_file, wait_for_app

    port, requests = recorder
    image = f"![m](http://127.0.0.1:{port}/x.png)"
    file_name = f":red-background[styled] :material/verified: ![f](http://127.0.0.1:{port}/f.png).csv"
    rng = np.random.default_rng(0)
    n = 300
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, size=n)
    data = pd.DataFrame({"y": mean + std * rng.normal(size=n), "mean": mean, "std": std,
                         "model": np.where(np.arange(n) % 2, image, ":blue[m2] :material/verified:")})

    page = open_page(streamlit_url)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Data", exact=True)).to_be_visible(timeout=120_000)
    wait_for_app(page)
    upload_file(page, files=[
        {"name": file_name, "mimeType": "text/csv", "buffer": data.to_csv(index=False).encode()}])
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar).to_contain_text("Loaded:", timeout=120_000)
    wait_for_app(page)
    shown_name = page.get_by_test_id("stSidebar").inner_text().replace("\u2060", "")  # word joiners
    assert ":red-background[styled]" in shown_name and ":material/verified:" in shown_name, shown_name
    full_height_screenshot(page, artifacts_dir / "hostile_names_data.png")

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Regression", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Regression diagnostics")).to_be_visible(timeout=120_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=180_000)
    wait_for_app(page, timeout=180_000)
    page.wait_for_timeout(1500)
    text = page.get_by_test_id("stMain").inner_text().replace("\u2060", "")
    assert image in text  # the model name is shown, as text
    full_height_screenshot(page, artifacts_dir / "hostile_names_regression.png")

    for where in ("stMain", "stSidebar"):
        root = page.get_by_test_id(where)
        assert root.locator(".stMarkdownColoredBackground, .stMarkdownColoredText").count() == 0, where
        assert root.locator(f"img[src*='127.0.0.1:{port}']").count() == 0, where
        icons = root.locator("[data-testid='stMarkdownContainer'] [data-testid='stIconMaterial']")
        assert "verified" not in " ".join(icons.all_inner_texts()), where
    assert requests == [], requests
