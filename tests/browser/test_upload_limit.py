"""The upload size limit: set once in ``.streamlit/config.toml`` (``server.maxUploadSize``),
stated on the Data page, given to the uploader widget (``dashboard.upload_limit_mb``), and enforced in the
browser before anything is sent.

The browser test starts its own ``streamlit run app.py`` with a tiny ``--server.maxUploadSize 1`` (a real
over-limit file of hundreds of MB would be slow to generate and send) and uploads a 2 MB CSV.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core.data.bytes import DEFAULT_MAX_BYTES

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / ".streamlit" / "config.toml"


def configured_limit_mb() -> int:
    return int(tomllib.loads(CONFIG.read_text())["server"]["maxUploadSize"])


def test_config_limit_fits_a_1e7_row_parquet_and_the_core_limit():
    limit = configured_limit_mb() * 2**20
    assert limit >= 10**7 * 3 * 8  # 1e7 rows of mean, std, y as float64 (Parquet is about this size: bench/big_file.py)
    assert limit <= DEFAULT_MAX_BYTES  # whatever the server accepts, the core loader reads by default


def test_data_page_states_the_limit_and_gives_it_to_the_uploader():
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/data.py").run()
    assert not at.exception
    limit = configured_limit_mb()
    import streamlit as st

    assert st.get_option("server.maxUploadSize") == limit  # AppTest reads the repository's config.toml
    assert at.file_uploader(key="data_upload").proto.max_upload_size_mb == limit
    captions = " ".join(c.value for c in at.caption)
    assert f"Up to **{limit:,} MB** per file" in captions


def test_core_loader_refuses_bytes_over_its_limit_with_a_clear_message():
    frame = pd.DataFrame({"mean": np.zeros(2000), "std": np.ones(2000), "y": np.zeros(2000)})
    data = frame.to_csv(index=False).encode()
    assert cc.load_predictions(data, max_bytes=len(data)).n_rows == 2000
    with pytest.raises(cc.InputError, match=rf"big\.csv.*larger than the size limit of 1,000 bytes.*{len(data):,}"):
        cc.load_predictions(data, source="big.csv", max_bytes=1000)


# ------------------------------------------------------------------------------------------- browser
@pytest.fixture(scope="module")
def tiny_limit_url(tmp_path_factory):
    """A second server whose upload limit is 1 MB (own process group, stopped at the end)."""
    from tests.conftest import streamlit_server

    with streamlit_server(tmp_path_factory.mktemp("streamlit_limit"), "--server.maxUploadSize", "1") as url:
        yield url


@pytest.mark.browser
def test_file_over_the_limit_gets_a_clear_message(open_page, tiny_limit_url, tmp_path):
    expect = pytest.importorskip("playwright.sync_api").expect
    from tests.conftest import wait_for_app

    rng = np.random.default_rng(0)
    n = 40_000
    frame = pd.DataFrame({"mean": rng.normal(size=n), "std": rng.uniform(0.5, 1, n), "y": rng.normal(size=n)})
    big = tmp_path / "too_big.csv"
    frame.to_csv(big, index=False)
    assert 1.5 * 2**20 < big.stat().st_size < 3 * 2**20  # ~2 MB, over the 1 MB limit of this server

    page = open_page(tiny_limit_url)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Data", exact=True)).to_be_visible(timeout=120_000)
    wait_for_app(page)
    uploader = page.get_by_test_id("stFileUploader").first
    expect(page.get_by_text("Up to 1 MB per file")).to_be_visible()
    expect(uploader).to_contain_text("1MB per file")  # the widget's own dropzone line
    uploader.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(big))
    # refused in the browser: the file is listed with Streamlit's message and nothing is sent or loaded
    expect(uploader).to_contain_text("too_big.csv", timeout=30_000)
    expect(uploader).to_contain_text("File must be 1.0MB or smaller.")
    page.wait_for_timeout(1000)
    wait_for_app(page)
    expect(page.get_by_text("Nothing loaded yet")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)


@pytest.mark.browser
def test_compressed_bomb_is_refused_at_the_servers_limit(open_page, tiny_limit_url, tmp_path, artifacts_dir):
    """Issue 15, point 1: a small gzip file (named .csv) inflating past the server's 1 MB limit is refused with the
    limit and how to raise it — the app gives the core its own limit (the core's default is 1 GB)."""
    import gzip

    expect = pytest.importorskip("playwright.sync_api").expect
    from tests.conftest import full_height_screenshot, upload_file, wait_for_app

    bomb = tmp_path / "bomb.csv"
    bomb.write_bytes(gzip.compress(b"y,mean,std\n" + b"0.5,0.25,1\n" * 300_000))  # 3.3 MB of text
    assert bomb.stat().st_size < 100_000

    page = open_page(tiny_limit_url)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Data", exact=True)).to_be_visible(timeout=120_000)
    wait_for_app(page)
    upload_file(page, str(bomb))
    alert = page.get_by_test_id("stAlertContentError")
    expect(alert).to_contain_text("decompresses to more than the size limit of 1 MB", timeout=120_000)
    text = alert.inner_text().replace("\u2060", "")
    assert "--server.maxUploadSize" in text and "now 1" in text, text
    wait_for_app(page)
    expect(page.get_by_text("Nothing loaded yet")).to_be_visible()
    full_height_screenshot(page, artifacts_dir / "upload_bomb_refused.png")
