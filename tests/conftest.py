"""Shared pytest fixtures.

* ``real_data_dir``: ``../shared/data/real`` beside the repository (read-only; the test is skipped
  when the folder is missing, e.g. in a bare clone).
* ``artifacts_dir``: ``tests/artifacts/`` (gitignored) for screenshots and other test outputs.
* ``streamlit_url`` (session): a real ``streamlit run app.py`` on a free loopback port, started
  once and stopped (its own process group only) at the end of the session.
* ``chromium_browser`` (session) / ``open_page`` (a factory: a page in a fresh context, any address, viewport
  and timeout) / ``app_page`` (the home page at 1400×1000): Debian's ``/usr/bin/chromium`` driven by
  Playwright (never ``playwright install``); browser tests are skipped when Chromium or the
  Playwright package is missing, except under ``CI=true``, where that is an error.
  ``wait_for_app(page)`` waits until the app is connected and its script has finished running.
  ``upload_file(page, path)`` puts a file into one keyed uploader (the Data page's prediction file by default)
  and waits until the uploader lists it, trying again when a busy browser dropped the first attempt.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
REAL_DATA = REPO_ROOT.parent / "shared" / "data" / "real"
ARTIFACTS = REPO_ROOT / "tests" / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SERVER_START_TIMEOUT = 90.0  # s; the first start imports scipy/sklearn/plotly on a 2-core machine


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The read-only real data sets (``../shared/data/real``); skips the test when absent."""
    if not REAL_DATA.is_dir():
        pytest.skip(f"real data folder {REAL_DATA} is missing")
    return REAL_DATA


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """``tests/artifacts/`` (gitignored), created on demand."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (bound and released; tiny race, fine for tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(url: str, proc: subprocess.Popen, log_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}:\n{log_path.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"streamlit not healthy after {timeout:.0f} s:\n{log_path.read_text()}")
        time.sleep(0.25)


@contextlib.contextmanager
def streamlit_server(log_dir: Path, *extra_args: str) -> Iterator[str]:
    """``streamlit run app.py`` headless on a free loopback port (plus ``extra_args``, e.g. another
    upload limit); yields its URL once healthy and stops its own process group afterwards."""
    port = free_port()
    log_path = log_dir / "server.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", "app.py",
                "--server.headless", "true",
                "--server.port", str(port),
                "--server.address", "127.0.0.1",
                "--server.fileWatcherType", "none",
                "--browser.gatherUsageStats", "false",
                "--client.showErrorDetails", "full",  # tests want the traceback if a page crashes
                *extra_args,
            ],
            cwd=REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # own process group: we stop exactly what we started
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc, log_path, SERVER_START_TIMEOUT)
            yield url
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)


@pytest.fixture(scope="session")
def streamlit_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app served by :func:`streamlit_server` for the whole test session."""
    with streamlit_server(tmp_path_factory.mktemp("streamlit")) as url:
        yield url


@pytest.fixture(scope="session")
def chromium_browser():
    """Headless Debian Chromium through Playwright; skips when either is missing."""
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    if in_ci:  # .ci/run installs both: a silent skip there would hide a broken browser setup
        from playwright import sync_api
        if not Path(CHROMIUM).exists():
            pytest.fail(f"CI=true but no Chromium at {CHROMIUM}")
    else:
        sync_api = pytest.importorskip("playwright.sync_api")
        if not Path(CHROMIUM).exists():
            pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def wait_for_app(page, timeout: int = 60_000) -> None:
    """Connected and the script is not running (the attributes Streamlit's own e2e suite uses).

    Right after an interaction the rerun may not have started yet: wait for a visible consequence
    with ``expect(...)`` first, then call this.
    """
    app = "[data-testid='stApp']"
    page.locator(f"{app}[data-test-connection-state='CONNECTED']").wait_for(state="attached", timeout=timeout)
    page.locator(f"{app}[data-test-script-state='notRunning']").wait_for(state="attached", timeout=timeout)


def upload_file(page, path: Path | str | list[Path | str] | None = None, *, files: list[dict] | None = None,
                key: str = "data_upload", attempts: int = 3, wait_ms: int = 40_000) -> None:
    """Put ``path`` (a list of paths for a multi-file uploader, or Playwright's in-memory ``files`` payloads) into
    the file uploader whose widget key is ``key`` and wait until the uploader lists the (first) file.

    The Data page has several uploaders, so the input is found by its key, never by position. On a loaded CI
    machine the browser has been seen to drop an upload set right after the page settled (nothing listed, nothing
    loaded); the upload is then set again, up to ``attempts`` times.
    """
    from playwright.sync_api import expect  # only browser tests call this

    uploader = page.locator(f".st-key-{key}")
    if files is not None:
        payload, name = files, files[0]["name"]
    elif isinstance(path, (list, tuple)):
        payload, name = [str(p) for p in path], Path(path[0]).name
    else:
        payload, name = str(path), Path(path).name
    for attempt in range(attempts):
        uploader.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(payload)
        try:
            # the start of the name only: the uploader shortens long names with an ellipsis
            expect(uploader.get_by_text(name[:6], exact=False).first).to_be_visible(timeout=wait_ms)
            return
        except AssertionError as error:
            if attempt == attempts - 1:
                raise AssertionError(f"{name!r} not listed by uploader {key!r}: {uploader.inner_text()!r}") from error


@pytest.fixture
def open_page(chromium_browser) -> Iterator[Callable[..., Any]]:
    """A factory of fresh browser pages, each in its own context (no shared cookies or session), all closed at the
    end of the test: ``open_page(url, width=1400, height=1000, timeout=60_000)`` opens ``url``, waits until the app
    is idle (:func:`wait_for_app` with ``timeout`` ms, also the page's default timeout) and returns the page;
    ``url=None`` returns the blank page (e.g. to listen to its requests first)."""
    contexts = []

    def open_(url: str | None, *, width: int = 1400, height: int = 1000, timeout: int = 60_000):
        context = chromium_browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(timeout)
        if url is not None:
            page.goto(url)
            wait_for_app(page, timeout=timeout)
        return page

    try:
        yield open_
    finally:
        for context in contexts:
            context.close()


@pytest.fixture
def app_page(open_page, streamlit_url):
    """A fresh browser context on the app's home page, loaded and idle (1400×1000 viewport)."""
    return open_page(streamlit_url)


def full_height_screenshot(page, path: Path, width: int = 1400) -> Path:
    """Screenshot of the whole page: Streamlit scrolls inside ``stMain``, so grow the viewport first."""
    height = int(page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight"))
    page.set_viewport_size({"width": width, "height": max(height, 600)})
    page.wait_for_timeout(500)  # let Plotly re-layout after the resize
    page.screenshot(path=str(path), full_page=True)
    return path
