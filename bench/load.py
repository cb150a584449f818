"""Serving load of the dashboard : concurrent browser sessions against one server.

    python bench/load.py --all                  # both scenarios below, one server each, README rows at the end
    python bench/load.py                        # regression: 10 sessions, 1e5 rows each
    python bench/load.py --scenario lab         # teaching: 30 sessions opening labs and moving their sliders
    python bench/load.py --sessions 3 --rows 2e4 --json bench/out/load.json
    python bench/load.py --rounds 2             # two waves of new sessions one after the other
    python bench/load.py --all --client ws      # the same sessions over Streamlit's protocol, without browsers

Scenarios:

* **regression** (``--sessions 10 --rows 1e5``): one regression CSV per session (``--rows`` rows of y, mean, std and a
  ``split`` column cal/test; synthetic heteroscedastic Gaussian predictions, σ 30 % too small; seed = session
  number, so every session uploads different data and nothing is shared through the caches).  Each session opens
  the app, goes to the Data page, uploads its file through the real file input, goes to the Regression page and
  waits for the Levi diagram, then changes controls one after the other: σ-bins 15 → 16 (slider, keyboard),
  binning → equal width, rows → cal, a click on a Levi σ-bin, binning → equal count, rows → all, σ-bins 16 → 15.
  The last two return to combinations the session has seen (cache hits); the others need a new diagnosis (with the
  page's default intervals and tests).  A *redraw* is any of these control changes.  The σ-bin click is timed from
  the click itself (the pointer rests on the marker first, untimed); ``--clicks k`` adds k − 1 more clicks,
  alternating between two neighbouring bins; ``--views`` (ws client) then toggles the Levi diagram's log axes and
  the curve view on and off (reruns of the page's linked-views fragment, as the browser sends them).
* **lab** (``--sessions 30``): the sessions are dealt round-robin to the labs in ``--labs`` (default: labs 1–5).
  Each opens its lab's address directly (as a student following a link), waits for the settled page, then moves
  the lab's sliders with the keyboard to values that differ between the sessions of a lab: Seed → +k (k = 1, 2, …
  the session's rank within its lab: a new simulation), the lab's second slider → +1, Seed → −k (back to seed 0
  with the new second value: the first session of a lab computes it, the others find it cached).

How it measures:

1. Starts ``streamlit run app.py`` headless on a free loopback port in its own process group (stopped with
   SIGTERM, then SIGKILL, whatever happens), with ``server.disconnectedSessionTTL`` = ``--session-ttl`` (default
   30 s instead of Streamlit's 120 s, so that the sessions expire within the bench), waits for
   ``/_stcore/health``, then opens and closes one session (``cold open``: the server imports the app and its
   libraries on its first session, not at start; a class's server has been opened by the teacher before).
2. A monitor thread samples every ``--sample-ms`` ms the resident memory of the server's process group (VmRSS from
   /proc; no psutil), its CPU time (utime + stime from /proc) and the 1-minute load average.
3. Drives the sessions at the same time: one headless Debian Chromium (``/usr/bin/chromium``, never
   ``playwright install``) with one browser context per session, all concurrent under asyncio.  **Latency** of a
   step = wall time from the browser action to the settled page: a MutationObserver (installed before the app's
   own scripts) counts the app's runs (``data-test-script-state`` running → notRunning, the attribute
   ``wait_for_app`` in tests/conftest.py polls) and notes when the last run started; the step ends when a run that
   started after the action has finished, its visible consequence is there (16 Levi markers, the slider's new
   value, every Plotly chart drawn, no stale element) and the app is idle.  So it includes the websocket round
   trip, the server's queueing behind the other sessions, the computation or cache hit, and the drawing in the
   browser — which, here, runs on the same 2 cores as the server (30 Chromium renderers drawing Plotly charts).
4. **Server CPU per step**, the figure that does not depend on the machine's load: after the concurrent waves, one
   more session runs the same steps *alone* (its own data or slider values, so nothing is a cache hit that was not
   one above) and each step's CPU time of the server's processes (from /proc) is recorded, beside the CPU time of
   the browser (Chromium and the Playwright driver).  The concurrent waves' total server CPU per step is printed
   too.  Projection for a class (browsers on the students' machines, server scripts serialised by Python's GIL on
   one core): n requests arriving at once finish after n·c seconds at worst, (n + 1)/2·c at the median, for a
   server CPU time c per step.
5. **Memory**: server RSS before the sessions, the peak, after each wave, and after the sessions expired: the bench
   waits ``--settle`` s (longer than the TTL), opens and closes one more session (Streamlit drops disconnected
   sessions older than the TTL when the next session is stored, not by a timer), and reads the RSS again.  What is
   left then is the caches, whose bound ``bound_lines`` prints (``dashboard.cache.memory_bound``).
6. **Errors**: any ``stException`` element, any ``st.error`` alert (``stAlertContentError``), any Playwright
   timeout (``--timeout`` s per step; the session stops at its first timeout), any crashed session, any
   traceback in the server's log.  The exit status is 1 when there was any error.

**Clients** (``--client``): ``browser`` (default) drives Chromium as above — its renderers run on the server's cores:
in the last measurement the 30 lab sessions' browsers used 320 s of CPU against the server's 30 s, so on a 2-core
machine the wall times measure the browsers.  ``ws`` replaces each browser by a :class:`WsSession` that speaks
Streamlit's websocket protocol as the frontend does (the same page addresses, the same widget changes, an upload
through the same HTTP route; no rendering), so a step's latency is the server's: its queueing behind the other
sessions, the computation or cache hit, building and serialising every element and the transfer — what a class
sees when the browsers run on the students' machines (plus their own drawing, 0.4–2 s of one core per step in the
solo browser session).  The Levi-bin click is sent as the selection event plotly.js reports for it; every step is
checked to change a figure of the page, and the bytes of the server's messages of each step are counted.

The machine's load average is printed before and during every scenario: other jobs on the machine lengthen the wall
times (not the server CPU per step).  A bench, not a test: ``--all`` takes about 5–10 minutes on a quiet 2-core
machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
APP = "[data-testid='stApp']"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

#: Lab scenario: (address path, heading starts with, second slider's label); every lab has a "Seed" slider.
LAB_SLIDERS: dict[str, tuple[str, str, str]] = {
    "random_sigma": ("lab_random_sigma", "Lab 1 ·", "σ-bins (Levi diagram, ENCE)"),
    "cauchy": ("lab_cauchy", "Lab 2 ·", "γ-bins"),
    "marginal": ("lab_marginal", "Lab 3 ·", "Bins (σ-bins and x-bins)"),
    "isotonic": ("lab_isotonic", "Lab 4 ·", "Calibration points m"),
    "nlpd": ("lab_nlpd", "Lab 5 ·", "Models in the sequence (incl. the calibrated one)"),
}

# counts the app's finished runs (running → anything else) and notes when the last run started (performance.now()),
# from the very first document of every page
RUN_COUNTER_JS = """
(() => {
  window.__calibRuns = 0;
  window.__calibLastStart = -1;
  let last = null;
  const observer = new MutationObserver(() => {
    const app = document.querySelector("[data-testid='stApp']");
    const state = app ? app.getAttribute("data-test-script-state") : null;
    if (state !== last) {
      if (state === "running") window.__calibLastStart = performance.now();
      if (last === "running" && state !== "running") window.__calibRuns += 1;
      last = state;
    }
  });
  observer.observe(document, {subtree: true, attributes: true, attributeFilter: ["data-test-script-state"]});
})();
"""
IDLE_JS = f"""(before) => {{
  const app = document.querySelector("{APP}");
  return window.__calibRuns > before && app && app.getAttribute("data-test-connection-state") === "CONNECTED"
      && app.getAttribute("data-test-script-state") === "notRunning";
}}"""
# settled: a run that started after `since` (performance.now()) has finished, the app is idle, nothing is stale and
# every Plotly chart on the page is drawn
SETTLED_JS = f"""([since, minCharts]) => {{
  const app = document.querySelector("{APP}");
  if (!(app && window.__calibRuns > 0 && window.__calibLastStart > since
        && app.getAttribute("data-test-connection-state") === "CONNECTED"
        && app.getAttribute("data-test-script-state") === "notRunning")) return false;
  if (document.querySelector("[data-stale='true']")) return false;
  const charts = [...document.querySelectorAll("[data-testid='stPlotlyChart']")];
  return charts.length >= minCharts && charts.every(c => c.querySelector(".main-svg"));
}}"""


# --------------------------------------------------------------------------------------------------
# data, server, /proc
# --------------------------------------------------------------------------------------------------
def write_csv(path: Path, n_rows: int, seed: int) -> Path:
    """n_rows synthetic Gaussian regression predictions (y, mean, std, split), σ 30 % too small."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 1.0, n_rows)
    std = 0.2 * x + 0.02
    mean = np.sin(3 * x) + 0.05 * rng.standard_normal(n_rows)
    y = np.sin(3 * x) + 1.3 * std * rng.standard_normal(n_rows)
    split = np.where(rng.random(n_rows) < 0.5, "cal", "test")
    pd.DataFrame({"y": y, "mean": mean, "std": std, "split": split}).to_csv(path, index=False, float_format="%.6g")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, log_path: Path, session_ttl: float) -> subprocess.Popen:
    """``streamlit run app.py`` headless on 127.0.0.1:port in its own process group (output to log_path);
    disconnected sessions are dropped after ``session_ttl`` s."""
    log = open(log_path, "w")  # noqa: SIM115 (closed by stop_server)
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
         "--server.disconnectedSessionTTL", str(int(session_ttl)),
         "--browser.gatherUsageStats", "false", "--client.showErrorDetails", "full"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )


def stop_server(proc: subprocess.Popen) -> None:
    """SIGTERM to the server's own process group, SIGKILL after 15 s."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        except ProcessLookupError:
            pass
    if proc.stdout is not None:
        proc.stdout.close()


def wait_healthy(url: str, proc: subprocess.Popen, log_path: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"streamlit not healthy after {timeout:.0f} s")
        time.sleep(0.25)


def proc_table() -> list[tuple[int, int, int, float, float]]:
    """(pid, ppid, process group, CPU seconds (utime + stime), RSS in MB) of every process, from /proc."""
    rows = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "(comm)": state ppid pgrp … utime(11) stime(12) rss(21)
        try:
            rows.append((int(entry.name), int(fields[1]), int(fields[2]), (int(fields[11]) + int(fields[12])) / CLK_TCK,
                         int(fields[21]) * PAGE_SIZE / 2**20))
        except (IndexError, ValueError):
            continue
    return rows


def group_rss_mb(pgid: int) -> float:
    """Sum of the resident memory (MB) of the processes in process group ``pgid``."""
    return sum(rss for _, _, group, _, rss in proc_table() if group == pgid)


def cpu_split(server_pgid: int) -> tuple[float, float]:
    """(CPU seconds of the server's process group, CPU seconds of this bench's other descendants — the Playwright
    driver and Chromium), cumulative since each process started (exited processes are not counted)."""
    table = proc_table()
    children: dict[int, list[int]] = {}
    for pid, ppid, *_ in table:
        children.setdefault(ppid, []).append(pid)
    mine, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, ()):
            if child not in mine:
                mine.add(child)
                todo.append(child)
    server = sum(cpu for _, _, group, cpu, _ in table if group == server_pgid)
    browser = sum(cpu for pid, _, group, cpu, _ in table if pid in mine and group != server_pgid)
    return server, browser


def load_average() -> float:
    """The 1-minute load average (/proc/loadavg)."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class Monitor(threading.Thread):
    """Samples (time, server RSS MB, 1-minute load average) every ``interval`` s until stopped."""

    def __init__(self, pgid: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.pgid, self.interval = pgid, interval
        self.samples: list[tuple[float, float, float]] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.samples.append((time.monotonic(), group_rss_mb(self.pgid), load_average()))
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(5)

    def peak(self, since: float = 0.0) -> float:
        return max((mb for t, mb, _ in self.samples if t >= since), default=float("nan"))

    def mean_load(self, since: float, until: float) -> float:
        values = [load for t, _, load in self.samples if since <= t <= until]
        return float(np.mean(values)) if values else float("nan")


# --------------------------------------------------------------------------------------------------
# browser sessions
# --------------------------------------------------------------------------------------------------
@dataclass
class SessionResult:
    index: int
    kind: str
    steps: dict[str, float] = field(default_factory=dict)  # step name → seconds
    cpu: dict[str, tuple[float, float]] = field(default_factory=dict)  # step → (server, browser) CPU s (solo runs)
    bytes: dict[str, int] = field(default_factory=dict)  # step → bytes of the server's messages (ws client)
    errors: list[str] = field(default_factory=list)

    @property
    def redraws(self) -> list[float]:
        """Latencies of the steps after the page was first drawn (control changes, slider moves)."""
        return [v for k, v in self.steps.items() if k not in FIRST_STEPS]


FIRST_STEPS = ("upload", "first diagnosis", "open lab")


class Session:
    """One browser context driven through a scenario; :meth:`step` times one action."""

    kind = "?"

    def __init__(self, index: int, browser, url: str, timeout_s: float, expect,
                 cpu: Callable[[], tuple[float, float]] | None = None) -> None:
        self.index, self.browser, self.url = index, browser, url
        self.timeout = int(timeout_s * 1000)
        self.expect = expect
        self.cpu = cpu  # set for a solo session: each step's CPU time is recorded
        self.result = SessionResult(index, self.kind)
        self.context = None
        self.page = None

    async def open_context(self) -> None:
        self.context = await self.browser.new_context(viewport={"width": 1400, "height": 1000})
        await self.context.add_init_script(RUN_COUNTER_JS)
        self.page = await self.context.new_page()
        self.page.set_default_timeout(self.timeout)

    async def idle(self, before: int) -> None:
        await self.page.wait_for_function(IDLE_JS, arg=before, timeout=self.timeout, polling=50)

    async def settled(self, since: float, min_charts: int = 1) -> None:
        await self.page.wait_for_function(SETTLED_JS, arg=[since, min_charts], timeout=self.timeout, polling=50)

    async def check_errors(self, step: str) -> None:
        for test_id, what in (("stException", "exception"), ("stAlertContentError", "st.error")):
            n = await self.page.get_by_test_id(test_id).count()
            if n:
                text = (await self.page.get_by_test_id(test_id).first.inner_text())[:300]
                self.result.errors.append(f"{step}: {n} {what} element(s): {text}")

    async def timed(self, name: str, body: Callable[[], Awaitable[None]]) -> None:
        """Run ``body`` (the action and its waits); record its wall time (and CPU times in a solo session)."""
        cpu0 = self.cpu() if self.cpu else None
        t0 = time.perf_counter()
        await body()
        self.result.steps[name] = time.perf_counter() - t0
        if cpu0 is not None:
            cpu1 = self.cpu()
            self.result.cpu[name] = (cpu1[0] - cpu0[0], cpu1[1] - cpu0[1])
        await self.check_errors(name)

    async def step(self, name: str, action, consequence=None) -> None:
        """Run ``action``; wait for a finished run, ``consequence`` and idleness; record the time."""
        before = await self.page.evaluate("window.__calibRuns")

        async def body() -> None:
            await action()
            await self.idle(before)
            if consequence is not None:
                await consequence()
                await self.page.locator(f"{APP}[data-test-script-state='notRunning']").wait_for(
                    state="attached", timeout=self.timeout)

        await self.timed(name, body)

    async def fail(self, exc: Exception) -> None:
        step = f"after {list(self.result.steps)[-1]!r}" if self.result.steps else "at the first step"
        self.result.errors.append(f"{step}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")

    async def close(self) -> None:
        if self.context is not None:
            await self.context.close()
            self.context = None


class RegressionSession(Session):
    """Upload a CSV on the Data page, open the Regression page, change its controls (see the module docstring)."""

    kind = "regression"

    def __init__(self, index: int, browser, url: str, timeout_s: float, expect, csv: Path,
                 cpu: Callable[[], tuple[float, float]] | None = None, clicks: int = 1) -> None:
        super().__init__(index, browser, url, timeout_s, expect, cpu)
        self.csv = csv
        self.clicks = clicks

    def levi_markers(self):
        levi = self.page.get_by_test_id("stPlotlyChart").nth(0)
        return levi.locator(".scatterlayer .trace").nth(1).locator(".points path")  # trace 0: the diagonal

    async def click_bins(self, info, bins: list[int]) -> None:
        """Click the Levi σ-bins ``bins`` (0-based) one after the other; each click is a step timed from the click
        itself to the settled page (the pointer is moved onto the marker and rests there first, untimed: Plotly
        selects from its hover state).  The first is "click a Levi σ-bin", the others "click a σ-bin again (k)"."""
        page = self.page
        for k, nth in enumerate(bins):
            point = self.levi_markers().nth(nth)
            await point.scroll_into_view_if_needed()
            box = await point.bounding_box()
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            await page.mouse.move(x - 6, y - 6)
            await page.mouse.move(x, y, steps=4)
            await page.wait_for_timeout(250)
            name = "click a Levi σ-bin" if k == 0 else f"click a σ-bin again ({k})"
            since = await page.evaluate("performance.now()")

            async def consequence(since=since, nth=nth) -> None:
                await self.expect(info).to_contain_text(f"σ-bin {nth + 1} of", timeout=self.timeout)
                await self.settled(since, min_charts=2)

            await self.step(name, lambda x=x, y=y: page.mouse.click(x, y), consequence)

    async def nav(self, name: str, title: str) -> None:
        await self.page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()
        await self.expect(self.page.get_by_role("heading", level=1, name=title, exact=True)).to_be_visible(
            timeout=self.timeout)

    async def select(self, label: str, option: str) -> None:
        box = self.page.get_by_role("combobox", name=label)
        await box.click()
        await self.page.get_by_role("option", name=option, exact=True).click()

    async def run(self) -> SessionResult:
        expect, page_timeout = self.expect, self.timeout
        try:
            await self.open_context()
            page = self.page
            await page.goto(self.url)
            await page.locator(f"{APP}[data-test-script-state='notRunning']").wait_for(state="attached")
            await self.nav("Data", "Data")
            await page.locator(f"{APP}[data-test-script-state='notRunning']").wait_for(state="attached")

            n_rows = sum(1 for _ in open(self.csv)) - 1
            await self.step(
                "upload",
                lambda: page.locator(".st-key-data_upload").get_by_test_id(
                    "stFileUploaderDropzoneInput").set_input_files(str(self.csv)),
                lambda: expect(page.get_by_test_id("stMetricValue").nth(0)).to_have_text(f"{n_rows:,}",
                                                                                         timeout=page_timeout),
            )
            await self.step(
                "first diagnosis",
                lambda: self.nav("Regression", "Regression diagnostics"),
                lambda: expect(self.levi_markers()).to_have_count(15, timeout=page_timeout),
            )
            slider = page.get_by_role("slider")
            await self.step(
                "σ-bins 15→16", lambda: slider.press("ArrowRight"),
                lambda: expect(self.levi_markers()).to_have_count(16, timeout=page_timeout),
            )
            binning = page.get_by_test_id("stButtonGroup")
            await self.step(
                "binning → width", lambda: binning.get_by_role("radio", name="equal width").click(),
                lambda: expect(binning.get_by_role("radio", name="equal width")).to_be_checked(timeout=page_timeout),
            )
            await self.step(
                "rows → cal", lambda: self.select("Rows", "cal"),
                lambda: expect(page.get_by_role("combobox", name="Rows")).to_have_value("cal", timeout=page_timeout),
            )
            info = page.get_by_text(re.compile(r"rows? selected from σ-bins? "))  # "… from σ-bin 13 of 16."
            await self.click_bins(info, [12] + [(11, 12)[i % 2] for i in range(self.clicks - 1)])
            await self.step(
                "binning → count", lambda: binning.get_by_role("radio", name="equal count").click(),
                lambda: expect(binning.get_by_role("radio", name="equal count")).to_be_checked(timeout=page_timeout),
            )
            await self.step(
                "rows → all (cached)", lambda: self.select("Rows", "all"),
                lambda: expect(page.get_by_role("combobox", name="Rows")).to_have_value("all", timeout=page_timeout),
            )
            await self.step(
                "σ-bins 16→15 (cached)", lambda: slider.press("ArrowLeft"),
                lambda: expect(self.levi_markers()).to_have_count(15, timeout=page_timeout),
            )
        except Exception as exc:  # noqa: BLE001 (a timeout or a crash of this session is an error to report)
            await self.fail(exc)
        return self.result



class LabSession(Session):
    """Open a lab's address, then move its sliders (see the module docstring); ``rank`` = 1, 2, … within the lab."""

    kind = "lab"

    def __init__(self, index: int, browser, url: str, timeout_s: float, expect, lab: str, rank: int,
                 cpu: Callable[[], tuple[float, float]] | None = None) -> None:
        super().__init__(index, browser, url, timeout_s, expect, cpu)
        self.lab, self.rank = lab, rank
        self.path, self.heading, self.second = LAB_SLIDERS[lab]

    async def now(self) -> float:
        return float(await self.page.evaluate("performance.now()"))

    async def move(self, name: str, label: str, presses: int) -> None:
        """Press ArrowRight (``presses`` > 0) or ArrowLeft on the slider ``label``; the step ends when the slider
        shows its new value and a run that started after the last press has settled the page."""
        slider = self.page.locator(f"input[type=range][aria-label='{label}']")
        start = float(await slider.input_value())
        key = "ArrowRight" if presses > 0 else "ArrowLeft"

        async def body() -> None:
            await slider.focus()
            for _ in range(abs(presses) - 1):
                await slider.press(key)
            since = await self.now()
            await slider.press(key)
            await self.page.wait_for_function(
                "([el, start]) => Number(el.value) !== start", arg=[await slider.element_handle(), start],
                timeout=self.timeout, polling=50)
            await self.settled(since)

        await self.timed(name, body)
        value = float(await slider.input_value())
        if presses > 0 and value <= start or presses < 0 and value >= start:
            self.result.errors.append(f"{name}: the slider {label!r} stayed at {start:g}")

    async def run(self) -> SessionResult:
        try:
            await self.open_context()
            page = self.page

            async def open_lab() -> None:
                await page.goto(f"{self.url}/{self.path}")
                await self.expect(page.get_by_role("heading", level=1)).to_contain_text(self.heading,
                                                                                        timeout=self.timeout)
                await self.settled(-1.0)

            await self.timed("open lab", open_lab)
            await self.move("Seed +k", "Seed", self.rank)
            await self.move("second slider +1", self.second, 1)
            await self.move("Seed −k (back)", "Seed", -self.rank)
        except Exception as exc:  # noqa: BLE001 (a timeout or a crash of this session is an error to report)
            await self.fail(exc)
        return self.result


# --------------------------------------------------------------------------------------------------
# protocol sessions (--client ws): Streamlit's own websocket protocol, no browser
# --------------------------------------------------------------------------------------------------
SCRIPT_FINISHED_OK = 0  # ScriptFinishedStatus.FINISHED_SUCCESSFULLY (2 = stopped early for a rerun: keep reading)
FRAGMENT_FINISHED_OK = 3  # FINISHED_FRAGMENT_RUN_SUCCESSFULLY: a rerun of fragments (st.fragment) only


class WsSession:
    """One session that speaks Streamlit's websocket protocol like the app's frontend, without drawing anything.

    It sends what the browser sends — a ``rerun_script`` BackMsg with the page and the widget states of the controls
    it changes (the server keeps every other widget's value from the previous run), and for a widget drawn inside a
    fragment (``st.fragment``) the fragment's id, taken from the element's delta as the frontend does, so the
    server reruns that fragment only — and reads the ForwardMsgs (every element of the run, the figures' JSON
    included) up to ``script_finished``.  The page is kept as the browser keeps it: elements by delta path; a full
    run replaces the page, a fragment run replaces only the elements of its fragments.  A step's latency is the wall
    time from sending to the end of that run: the server's queueing behind the other sessions, its computation or
    cache hit, building and serialising the page and the transfer, without the browser's rendering — what a class
    whose browsers run on the students' own machines sees from the server.  Widgets are found by label in the
    elements received; an upload goes through the same HTTP route as the browser's (file URL request, PUT).
    """

    kind = "?"

    def __init__(self, index: int, url: str, timeout_s: float, cpu=None) -> None:
        self.index, self.url, self.timeout = index, url, timeout_s
        self.cpu = cpu
        self.result = SessionResult(index, self.kind)
        self.ws = None
        self.session_id = ""
        self.page_hash = ""
        self.pages: dict[str, str] = {}  # url path → page script hash
        self.widgets: dict[str, tuple[str, str, str]] = {}  # label → (widget id, element type, fragment id)
        self.page: dict[tuple[int, ...], tuple[str, object, str]] = {}  # delta path → (type, element, fragment id)
        self.elements: list[tuple[str, object]] = []  # (type, element proto) of the page after the last run
        self.run_elements: list[tuple[str, object]] = []  # those the last run sent (its errors)
        self.run_fragments: tuple[str, ...] = ()  # the fragments the last run reran (() = the whole page)
        self.received = 0  # bytes of the websocket messages received (as sent: the server compresses none)
        self.xsrf = ""

    async def open(self, page: str = "") -> None:
        import websockets

        with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=self.timeout) as r:  # XSRF cookie
            cookie = r.headers.get("Set-Cookie", "")
        match = re.search(r"_streamlit_xsrf=([^;]+)", cookie)
        self.xsrf = match.group(1) if match else ""
        ws_url = self.url.replace("http://", "ws://") + "/_stcore/stream"
        self.ws = await websockets.connect(ws_url, subprotocols=["streamlit", self.xsrf] if self.xsrf else
                                           ["streamlit"], origin=self.url, max_size=None,
                                           additional_headers={"Cookie": f"_streamlit_xsrf={self.xsrf}"}
                                           if self.xsrf else None)
        self._first_page = page

    async def _read_run(self) -> None:
        """Read ForwardMsgs up to the end of a run that finished normally; note widgets, pages and errors."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self.run_elements = []
        while True:
            msg = ForwardMsg()
            data = await asyncio.wait_for(self.ws.recv(), self.timeout)
            self.received += len(data)
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                ns = msg.new_session
                if ns.initialize.session_id:
                    self.session_id = ns.initialize.session_id
                rerun = set(msg.metadata.run.fragment_ids)  # empty: a full run (the whole page is sent again)
                self.page = {k: v for k, v in self.page.items() if rerun and v[2] not in rerun}
                self.run_fragments = tuple(rerun)
                self.run_elements = []
            elif kind == "navigation":  # st.navigation (app.py): the pages and the one this run shows
                nav = msg.navigation
                self.page_hash = nav.page_script_hash
                self.pages.update({p.url_pathname: p.page_script_hash for p in nav.app_pages})
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                etype = element.WhichOneof("type")
                inner = getattr(element, etype)
                self.page[tuple(msg.metadata.delta_path)] = (etype, inner, msg.delta.fragment_id)
                self.run_elements.append((etype, inner))
                wid, label = getattr(inner, "id", ""), getattr(inner, "label", "")
                if wid and label:
                    self.widgets[label] = (wid, etype, msg.delta.fragment_id)
            elif kind == "script_finished" and msg.script_finished in (SCRIPT_FINISHED_OK, FRAGMENT_FINISHED_OK):
                self.elements = [(etype, inner) for _, (etype, inner, _) in sorted(self.page.items())]
                return

    def errors_in_run(self) -> list[str]:
        out = []
        for etype, inner in self.run_elements:
            if etype == "exception":
                out.append(f"exception: {inner.message[:200]}")
            elif etype == "alert" and inner.format == 1:  # Alert.Format.ERROR
                out.append(f"st.error: {inner.body[:200]}")
        return out

    async def rerun(self, states=(), page_hash: str | None = None, page_name: str = "", fragment_id: str = "") -> None:
        """Send a rerun with ``states`` (WidgetState protos) and read the run; ``fragment_id``: the fragment of the
        widget changed (the browser's rerun of that fragment only; "" = the whole page)."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        back = BackMsg()
        client = back.rerun_script
        client.query_string = ""
        client.page_script_hash = self.page_hash if page_hash is None else page_hash
        client.page_name = page_name
        client.widget_states.widgets.extend(states)
        client.fragment_id = fragment_id
        await self.ws.send(back.SerializeToString())
        await self._read_run()

    def state(self, label: str, **value):
        """The WidgetState of the widget ``label`` with ``value`` (e.g. ``double_array_value=[16]``)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid, _, _ = self.widgets[label]
        ws = WidgetState(id=wid)
        for name, v in value.items():
            field_ = getattr(ws, name)
            if name in ("double_array_value", "string_array_value"):
                field_.data.extend(v)
            elif name == "file_uploader_state_value":
                field_.CopyFrom(v)
            else:
                setattr(ws, name, v)
        return ws

    async def timed(self, name: str, body) -> None:
        cpu0 = self.cpu() if self.cpu else None
        received = self.received
        t0 = time.perf_counter()
        await body()
        self.result.steps[name] = time.perf_counter() - t0
        self.result.bytes[name] = self.received - received
        if cpu0 is not None:
            cpu1 = self.cpu()
            self.result.cpu[name] = (cpu1[0] - cpu0[0], cpu1[1] - cpu0[1])
        for e in self.errors_in_run():
            self.result.errors.append(f"{name}: {e}")

    def charts(self) -> tuple[bytes, ...]:
        """The figures of the page: ``st.plotly_chart`` elements and the live charts (``dashboard.live_chart``:
        ``st.components.v2`` elements carrying the figure's JSON), as their serialised protos."""
        return tuple(inner.SerializeToString() for etype, inner in self.elements
                     if etype in ("plotly_chart", "bidi_component"))

    async def step(self, name: str, label: str, **value) -> None:
        """Set the widget ``label`` to ``value`` (a rerun); every step of the scenarios changes a figure, which is
        checked (the server does not echo a widget's value back)."""
        before = self.charts()
        fragment = self.widgets[label][2]  # the browser reruns the widget's fragment only
        await self.timed(name, lambda: self.rerun([self.state(label, **value)], fragment_id=fragment))
        if self.charts() == before:
            self.result.errors.append(f"{name}: no figure changed")
        if fragment and fragment not in self.run_fragments:
            self.result.errors.append(f"{name}: the server reran the whole page, not the widget's fragment")

    async def fail(self, exc: BaseException) -> None:
        step = f"after {list(self.result.steps)[-1]!r}" if self.result.steps else "at the first step"
        self.result.errors.append(f"{step}: {type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}")

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    async def upload(self, label: str, path: Path) -> None:
        """Upload ``path`` into the file uploader ``label`` as the frontend does, then rerun with its state."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.Common_pb2 import FileUploaderState, UploadedFileInfo
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        back = BackMsg()
        back.file_urls_request.request_id = f"upload-{self.index}"
        back.file_urls_request.file_names.append(path.name)
        back.file_urls_request.session_id = self.session_id
        await self.ws.send(back.SerializeToString())
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(await asyncio.wait_for(self.ws.recv(), self.timeout))
            if msg.WhichOneof("type") == "file_urls_response":
                urls = msg.file_urls_response.file_urls[0]
                break
        data = path.read_bytes()
        boundary = f"calibload{self.index}"
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{path.name}\"\r\n"
                "Content-Type: text/csv\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
        request = urllib.request.Request(
            urls.upload_url if urls.upload_url.startswith("http") else f"{self.url}{urls.upload_url}", data=body,
            method="PUT", headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                                   "X-Xsrftoken": self.xsrf, "Cookie": f"_streamlit_xsrf={self.xsrf}",
                                   "Origin": self.url})
        await asyncio.to_thread(lambda: urllib.request.urlopen(request, timeout=self.timeout).read())
        info = UploadedFileInfo(file_id=urls.file_id, name=path.name, size=len(data), file_urls=urls)
        await self.rerun([self.state(label, file_uploader_state_value=FileUploaderState(uploaded_file_info=[info]))])


class WsRegressionSession(WsSession):
    """The regression session's steps (module docstring) over the protocol; the Levi-bin click is sent as the
    selection event plotly.js reports for it (:meth:`click_bin`).  ``clicks``: k − 1 more clicks after the first
    (bins 11, 12, 11, …, as the browser client); ``views``: then the Levi diagram's log axes on and off and the
    curve view to the ECDF difference and back (each a rerun of the linked views' fragment, as the browser sends)."""

    kind = "regression"

    def __init__(self, index: int, url: str, timeout_s: float, csv: Path, cpu=None, clicks: int = 1,
                 views: bool = False) -> None:
        super().__init__(index, url, timeout_s, cpu)
        self.csv, self.clicks, self.views = csv, clicks, views

    async def click_bin(self, nth: int, name: str = "click a Levi σ-bin") -> None:
        """A click on the Levi diagram's σ-bin ``nth`` (0-based), as plotly.js reports it: the selection event of the
        page's first selectable chart (the Levi diagram) with the clicked point of its σ-bins trace (role "bins")."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        levi, fragment = next((inner, frag) for etype, inner, frag in (v for _, v in sorted(self.page.items()))
                              if etype == "plotly_chart" and inner.id)
        spec = json.loads(levi.spec)
        curve = next(k for k, trace in enumerate(spec["data"]) if (trace.get("meta") or {}).get("role") == "bins")
        event = {"selection": {"points": [{"curve_number": curve, "point_number": nth, "point_index": nth,
                                           "customdata": [nth]}], "point_indices": [nth], "box": [], "lasso": []}}
        before = self.charts()
        await self.timed(name, lambda: self.rerun([WidgetState(id=levi.id, string_value=json.dumps(event))],
                                                  fragment_id=fragment))
        if not any(t == "markdown" and f"σ-bin {nth + 1} of" in e.body for t, e in self.elements):
            self.result.errors.append(f"{name}: the page does not say σ-bin {nth + 1} is selected")
        if self.charts() == before:
            self.result.errors.append(f"{name}: no figure changed")
        if fragment and fragment not in self.run_fragments:
            self.result.errors.append(f"{name}: the server reran the whole page, not the Levi diagram's fragment")

    async def run(self) -> SessionResult:
        try:
            await self.open()
            await self.rerun(page_name="")
            await self.rerun(page_hash=self.pages["data"])
            await self.timed("upload", lambda: self.upload("Prediction file", self.csv))
            n_rows = sum(1 for _ in open(self.csv)) - 1
            if not any(t == "metric" and e.body == f"{n_rows:,}" for t, e in self.elements):
                self.result.errors.append(f"upload: the Data page does not show {n_rows:,} rows read")
            await self.timed("first diagnosis", lambda: self.rerun(page_hash=self.pages["regression"]))
            shown = (self.csv.stem, self.csv.stem.replace("_", "\\_"))  # the caption escapes Markdown
            if not any(t == "markdown" and any(x in e.body for x in shown) for t, e in self.elements):
                self.result.errors.append(f"first diagnosis: the Regression page does not name {self.csv.name}")
            bins = "σ-bins (Levi diagram, ENCE)"
            await self.step("σ-bins 15→16", bins, double_array_value=[16])
            await self.step("binning → width", "Binning", string_array_value=["equal width"])
            await self.step("rows → cal", "Rows", string_value="cal")
            await self.click_bin(12)
            for k in range(self.clicks - 1):
                await self.click_bin((11, 12)[k % 2], f"click a Levi σ-bin ({k + 2})")
            if self.views:
                await self.step("Levi log axes on", "Log axes", bool_value=True)
                await self.step("curve → ECDF difference", "Curve view", string_array_value=["ECDF difference"])
                await self.step("Levi log axes off (seen)", "Log axes", bool_value=False)
                await self.step("ECDF difference → curve (seen)", "Curve view", string_array_value=["curve"])
            await self.step("binning → count", "Binning", string_array_value=["equal count"])
            await self.step("rows → all (cached)", "Rows", string_value="all")
            await self.step("σ-bins 16→15 (cached)", bins, double_array_value=[15])
        except Exception as exc:  # noqa: BLE001 (a timeout or a crash of this session is an error to report)
            await self.fail(exc)
        return self.result


class WsLabSession(WsSession):
    """The lab session's steps (module docstring) over the protocol: open the lab's address, Seed +k, the second
    slider +1, Seed back (one rerun per step with the slider's final value)."""

    kind = "lab"

    def __init__(self, index: int, url: str, timeout_s: float, lab: str, rank: int, cpu=None) -> None:
        super().__init__(index, url, timeout_s, cpu)
        self.lab, self.rank = lab, rank
        self.path, self.heading, self.second = LAB_SLIDERS[lab]

    def value(self, label: str) -> float:
        """The slider's value as the page now holds it (the value the server set, else its default)."""
        for etype, inner in self.elements:
            if etype == "slider" and inner.label == label:
                return float(inner.value[0] if inner.set_value and inner.value else inner.default[0])
        raise KeyError(label)

    async def run(self) -> SessionResult:
        try:
            await self.open()
            await self.timed("open lab", lambda: self.rerun(page_name=self.path, page_hash=""))
            seed = self.value("Seed")
            await self.step("Seed +k", "Seed", double_array_value=[seed + self.rank])
            second = self.value(self.second)
            step_ = next(inner.step for etype, inner in self.elements if etype == "slider"
                         and inner.label == self.second)
            await self.step("second slider +1", self.second, double_array_value=[second + step_])
            await self.step("Seed −k (back)", "Seed", double_array_value=[seed])
        except Exception as exc:  # noqa: BLE001
            await self.fail(exc)
        return self.result


async def drive_ws(sessions: list[WsSession], cpu) -> tuple[list[SessionResult], tuple[float, float]]:
    """Run protocol sessions concurrently; their results and ``cpu()`` when they are done."""
    try:
        results = await asyncio.gather(*(s.run() for s in sessions))
        return list(results), cpu()
    finally:
        for s in sessions:
            await s.close()


# --------------------------------------------------------------------------------------------------
# driving and measuring one scenario
# --------------------------------------------------------------------------------------------------
async def drive(sessions_of: Callable[[object], list[Session]],
                cpu: Callable[[], tuple[float, float]]) -> tuple[list[SessionResult], tuple[float, float]]:
    """Run the sessions made by ``sessions_of(browser)`` concurrently in one headless Chromium; returns their
    results and ``cpu()`` read when they are done, before the browser closes (its CPU time goes with it)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            sessions = sessions_of(browser)
            results = await asyncio.gather(*(s.run() for s in sessions))
            cpu_end = cpu()
            for s in sessions:
                await s.close()
            return list(results), cpu_end
        finally:
            await browser.close()


async def touch(url: str, timeout_s: float) -> float:
    """Open and close one session on the home page; returns its time to an idle app.  Streamlit drops disconnected
    sessions older than the TTL when the next session is stored (not by a timer), and imports the app on the first
    session."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context()
            await context.add_init_script(RUN_COUNTER_JS)
            page = await context.new_page()
            t0 = time.perf_counter()
            await page.goto(url, timeout=timeout_s * 1000)
            await page.get_by_role("heading", level=1).first.wait_for(timeout=timeout_s * 1000)
            await page.wait_for_function(SETTLED_JS, arg=[-1, 0], timeout=timeout_s * 1000, polling=100)
            elapsed = time.perf_counter() - t0
            await context.close()
            return elapsed
        finally:
            await browser.close()


def make_sessions(args: argparse.Namespace, kind: str, n: int, first: int, files: list[Path] | None, expect,
                  cpu=None) -> Callable[[object], list[Session]]:
    """The sessions ``first``, …, ``first + n - 1`` of a scenario (``cpu``: record each step's CPU times)."""
    def sessions_of(browser) -> list[Session]:
        out: list[Session] = []
        for i in range(n):
            index = first + i
            if kind == "regression":
                out.append(RegressionSession(index, browser, args.url, args.timeout, expect, files[index], cpu=cpu,
                                             clicks=args.clicks))
            else:
                lab = args.labs[index % len(args.labs)]  # the solo session is the next in turn: a rank nobody used
                rank = 1 + index // len(args.labs)
                out.append(LabSession(index, browser, args.url, args.timeout, expect, lab, rank, cpu=cpu))
        return out
    return sessions_of


def make_ws_sessions(args: argparse.Namespace, kind: str, n: int, first: int, files: list[Path] | None,
                     cpu=None) -> list[WsSession]:
    """Protocol sessions ``first``, …, ``first + n - 1`` (``--client ws``), dealt like :func:`make_sessions`."""
    out: list[WsSession] = []
    for index in range(first, first + n):
        if kind == "regression":
            out.append(WsRegressionSession(index, args.url, args.timeout, files[index], cpu=cpu, clicks=args.clicks,
                                           views=args.views))
        else:
            out.append(WsLabSession(index, args.url, args.timeout, args.labs[index % len(args.labs)],
                                    1 + index // len(args.labs), cpu=cpu))
    return out


def run_scenario(args: argparse.Namespace, kind: str, sessions: int, rows: int) -> dict:
    """Start a server, run ``args.rounds`` waves of ``sessions`` concurrent sessions of ``kind``, one solo session,
    let the sessions expire; return the measurements."""
    from playwright.async_api import expect

    total = sessions * args.rounds + 1  # + the solo session
    with tempfile.TemporaryDirectory(prefix="calib_load_") as tmp:
        tmp_dir = Path(tmp)
        files = None
        if kind == "regression":
            files = [write_csv(tmp_dir / f"session_{i:02d}.csv", rows, seed=i) for i in range(total)]
        port = free_port()
        log_path = tmp_dir / "server.log"
        load_before = load_average()
        proc = start_server(port, log_path, args.session_ttl)
        monitor = None
        try:
            args.url = url = f"http://127.0.0.1:{port}"
            t_start = time.perf_counter()
            wait_healthy(url, proc, log_path)
            up = time.perf_counter() - t_start
            monitor = Monitor(proc.pid, args.sample_ms / 1000)
            monitor.start()
            rss_start = group_rss_mb(proc.pid)
            cold = asyncio.run(touch(url, args.timeout))
            time.sleep(1.0)
            rss_idle = group_rss_mb(proc.pid)
            what = (f"{sessions} sessions × {rows:,} rows ({files[0].stat().st_size / 2**20:.1f} MB CSV each)"
                    if kind == "regression" else f"{sessions} sessions over labs {', '.join(args.labs)}")
            print(f"[{kind}] server up in {up:.1f} s, first session (imports the app) {cold:.1f} s; {what}; load "
                  f"average {load_before:.1f}", flush=True)
            cpu = lambda: cpu_split(proc.pid)  # noqa: E731

            def wave_of(n: int, first: int, solo_cpu=None):
                if args.client == "ws":
                    return asyncio.run(drive_ws(make_ws_sessions(args, kind, n, first, files, solo_cpu), cpu))
                return asyncio.run(drive(make_sessions(args, kind, n, first, files, expect, cpu=solo_cpu), cpu))
            t0 = time.monotonic()
            results: list[SessionResult] = []
            rss_waves = []
            cpu_server, cpu_browser = 0.0, 0.0
            for r in range(args.rounds):
                cpu0 = cpu()  # the browser is not started yet: its CPU time counts from 0
                wave, cpu1 = wave_of(sessions, r * sessions)
                results += wave
                cpu_server += cpu1[0] - cpu0[0]
                cpu_browser += cpu1[1] - cpu0[1]
                rss_waves.append(group_rss_mb(proc.pid))
                med, p90, _ = stats([v for res in wave for v in res.redraws])
                print(f"[{kind}] wave {r + 1}/{args.rounds} done after {time.monotonic() - t0:.0f} s: redraws median "
                      f"{fmt(med)}, p90 {fmt(p90)}; {sum(len(res.errors) for res in wave)} errors; server RSS "
                      f"{rss_waves[-1]:.0f} MB, peak {monitor.peak():.0f} MB; load average {load_average():.1f}",
                      flush=True)
            t1 = time.monotonic()
            solo = wave_of(1, sessions * args.rounds, solo_cpu=cpu)[0][0]
            time.sleep(args.settle)
            asyncio.run(touch(url, args.timeout))
            time.sleep(3)
            rss_settled = group_rss_mb(proc.pid)
            load_after = load_average()
            monitor.stop()
            server_errors = [line for line in log_path.read_text().splitlines()
                             if "Traceback" in line or "ERROR" in line]
        finally:
            if monitor is not None:
                monitor.stop()
            stop_server(proc)
    n_steps = sum(len(r.steps) for r in results)
    return {
        "kind": kind, "client": args.client, "sessions": sessions, "rounds": args.rounds, "rows": rows,
        "labs": list(args.labs),
        "wall_s": t1 - t0, "server_up_s": up, "cold_open_s": cold,
        "load_before": load_before, "load_during": monitor.mean_load(t0, t1), "load_after": load_after,
        "rss_start_mb": rss_start, "rss_idle_mb": rss_idle, "rss_peak_mb": monitor.peak(),
        "rss_after_waves_mb": rss_waves,
        "rss_settled_mb": rss_settled, "settle_s": args.settle, "session_ttl_s": args.session_ttl,
        "server_cpu_waves_s": cpu_server, "browser_cpu_waves_s": cpu_browser, "steps_waves": n_steps,
        "results": [r.__dict__ for r in results], "solo": solo.__dict__, "server_errors": server_errors,
        "rss_samples": monitor.samples[:: max(1, len(monitor.samples) // 2000)],
    }


# --------------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------------
def stats(values: list[float]) -> tuple[float, float, float]:
    """(median, p90, max); NaN when empty."""
    if not values:
        return (float("nan"),) * 3
    return statistics.median(values), float(np.quantile(values, 0.9)), max(values)


def fmt(s: float) -> str:
    return "–" if s != s else (f"{s * 1000:.0f} ms" if s < 1 else f"{s:.1f} s")


def redraws(m: dict) -> list[float]:
    return [v for r in m["results"] for k, v in r["steps"].items() if k not in FIRST_STEPS]


def first_steps(m: dict) -> list[float]:
    name = "first diagnosis" if m["kind"] == "regression" else "open lab"
    return [r["steps"][name] for r in m["results"] if name in r["steps"]]


def n_errors(m: dict) -> int:
    return sum(len(r["errors"]) for r in m["results"]) + len(m["solo"]["errors"]) + len(m["server_errors"])


def solo_cpu(m: dict, first: bool) -> float:
    """Median server CPU seconds of the solo session's redraws (``first``: its first-draw step)."""
    values = [c[0] for k, c in m["solo"]["cpu"].items() if (k in FIRST_STEPS and k != "upload") == first
              and k != "upload"]
    return statistics.median(values) if values else float("nan")


def print_details(m: dict) -> None:
    kind, results = m["kind"], m["results"]
    print(f"\n## {kind}: {m['sessions']} concurrent sessions"
          + (f" × {m['rounds']} waves" if m["rounds"] > 1 else "")
          + (f", {m['rows']:,} rows each" if kind == "regression" else f" over labs {', '.join(m['labs'])}")
          + f", {m['wall_s']:.0f} s wall clock; load average {m['load_before']:.1f} before, "
          f"{m['load_during']:.1f} during (this bench included)\n")
    step_names = list(dict.fromkeys(k for r in results for k in r["steps"]))
    print("| step (all sessions) | n | median | p90 | max | server CPU alone | browser CPU alone | messages (ws) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in step_names:
        values = [r["steps"][name] for r in results if name in r["steps"]]
        med, p90, mx = stats(values)
        cpu = m["solo"]["cpu"].get(name)
        cpu_text = f"{fmt(cpu[0])} | {fmt(cpu[1])}" if cpu else "– | –"
        sizes = [r.get("bytes", {}).get(name) for r in results]
        sizes = [b for b in sizes if b is not None]
        size_text = f"{statistics.median(sizes) / 1e3:,.0f} kB" if sizes else "–"
        print(f"| {name} | {len(values)} | {fmt(med)} | {fmt(p90)} | {fmt(mx)} | {cpu_text} | {size_text} |")
    every = redraws(m)
    med, p90, mx = stats(every)
    print(f"| **all redraws** | {len(every)} | {fmt(med)} | {fmt(p90)} | {fmt(mx)} | "
          f"{fmt(solo_cpu(m, first=False))} (median) | |")
    per_step = m["server_cpu_waves_s"] / max(m["steps_waves"], 1)
    print(f"\nCPU during the waves: server {m['server_cpu_waves_s']:.0f} s ({fmt(per_step)} per step over "
          f"{m['steps_waves']} steps), browsers {m['browser_cpu_waves_s']:.0f} s, i.e. {m['wall_s'] * 2:.0f} core-s "
          f"available on 2 cores in {m['wall_s']:.0f} s.")
    c = solo_cpu(m, first=False)
    n = m["sessions"]
    print(f"Projection with the browsers elsewhere (server CPU {fmt(c)} per redraw, scripts serialised on one core): "
          f"{n} redraws at the same instant finish after {fmt((n + 1) / 2 * c)} (median) and {fmt(n * c)} (last).")
    print(f"Server RSS (process group): {m['rss_start_mb']:.0f} MB at start, {m['rss_idle_mb']:.0f} MB after the first "
          f"session (app imported), peak {m['rss_peak_mb']:.0f} MB, after each wave "
          f"{', '.join(f'{mb:.0f}' for mb in m['rss_after_waves_mb'])} MB, {m['rss_settled_mb']:.0f} MB after the "
          f"sessions expired (TTL {m['session_ttl_s']:.0f} s, settled {m['settle_s']:.0f} s, one more session opened "
          f"and closed)")
    print(f"Errors: {n_errors(m)}")
    for r in [*results, m["solo"]]:
        for e in r["errors"]:
            print(f"  session {r['index']}: {e}")
    for line in m["server_errors"][:20]:
        print(f"  server log: {line}")


def readme_rows(ms: list[dict]) -> None:
    print("\n| scenario | load avg before / during | first draw median / p90 | redraw median / p90 / max | "
          "server CPU per redraw (alone) | peak RSS | RSS after the sessions expired | errors |")
    print("|---|---|---|---|---|---|---|---|")
    for m in ms:
        name = (f"{m['sessions']} sessions × {m['rows']:,} rows, Regression page" if m["kind"] == "regression"
                else f"{m['sessions']} sessions, labs {', '.join(LAB_SLIDERS[k][1].split()[1] for k in m['labs'])}")
        f_med, f_p90, _ = stats(first_steps(m))
        r_med, r_p90, r_max = stats(redraws(m))
        print(f"| {name} | {m['load_before']:.1f} / {m['load_during']:.1f} | {fmt(f_med)} / {fmt(f_p90)} | "
              f"{fmt(r_med)} / {fmt(r_p90)} / {fmt(r_max)} | {fmt(solo_cpu(m, first=False))} | "
              f"{m['rss_peak_mb']:.0f} MB | {m['rss_settled_mb']:.0f} MB | {n_errors(m)} |")


def bound_lines() -> None:
    """The caches' memory bound (dashboard.cache.memory_bound) as the server computes it with the default config."""
    import logging

    import streamlit  # noqa: F401 (creates the logger silenced below)

    sys.path.insert(0, str(ROOT))
    logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)  # "No runtime found"
    try:
        from dashboard.cache import memory_bound
    except ImportError:
        return
    bound = memory_bound(upload_limit_mb=500)
    print("\nMemory bound of the server's caches (default config):")
    for name, nbytes in bound.items():
        print(f"  {name}: {nbytes / 2**20:,.0f} MB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="both scenarios with their defaults, one server each")
    ap.add_argument("--scenario", choices=("regression", "lab"), default="regression")
    ap.add_argument("--sessions", type=int, default=None, help="concurrent sessions (regression 10, lab 30)")
    ap.add_argument("--rounds", type=int, default=1, help="waves of --sessions new sessions, one after the other")
    ap.add_argument("--rows", type=float, default=1e5, help="rows of each regression session's upload")
    ap.add_argument("--labs", default=",".join(LAB_SLIDERS),
                    help=f"labs of the lab scenario, comma-separated ({', '.join(LAB_SLIDERS)})")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per step before it counts as an error")
    ap.add_argument("--sample-ms", type=float, default=200)
    ap.add_argument("--session-ttl", type=float, default=30, help="server.disconnectedSessionTTL of the server (s)")
    ap.add_argument("--settle", type=float, default=None, help="seconds to wait after the sessions closed "
                    "(default: the TTL + 5)")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers to this file")
    ap.add_argument("--clicks", type=int, default=1, help="Levi σ-bin clicks of each browser regression session "
                    "(the first, then alternating between two neighbouring bins; each timed from the click)")
    ap.add_argument("--views", action="store_true", help="ws regression sessions: also the view toggles after the "
                    "clicks (Levi log axes on/off, curve → ECDF difference → curve)")
    ap.add_argument("--client", choices=("browser", "ws"), default="browser",
                    help="browser: Chromium sessions (rendering on this machine's cores); ws: Streamlit's websocket "
                    "protocol without a browser (the server's latency, as with the browsers on other machines)")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"no Chromium at {CHROMIUM}", file=sys.stderr)
        return 2
    args.labs = [k.strip() for k in args.labs.split(",") if k.strip()]
    unknown = [k for k in args.labs if k not in LAB_SLIDERS]
    if unknown or not args.labs:
        print(f"unknown lab(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(LAB_SLIDERS)}", file=sys.stderr)
        return 2
    if args.settle is None:
        args.settle = args.session_ttl + 5
    plan = ([("regression", 10), ("lab", 30)] if args.all else
            [(args.scenario, args.sessions or (10 if args.scenario == "regression" else 30))])
    if args.all and args.sessions is not None:
        print("--all runs 10 regression and 30 lab sessions; --sessions is ignored", file=sys.stderr)
    measured = []
    for kind, sessions in plan:
        try:
            m = run_scenario(args, kind, sessions, int(args.rows))
        except Exception as exc:  # noqa: BLE001 (the server did not start, the browser did not launch, …)
            print(f"[{kind}] failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        print_details(m)
        measured.append(m)
    readme_rows(measured)
    bound_lines()
    total_errors = sum(n_errors(m) for m in measured)
    print(f"\nload average now {load_average():.1f}; errors in all: {total_errors}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(measured, indent=1, default=str))
    return 1 if total_errors else 0


if __name__ == "__main__":
    sys.exit(main())
