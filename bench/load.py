"""Load test of the dashboard (issue #7, point 3): N concurrent browser sessions against one ``streamlit run``.

    python bench/load.py                        # 10 sessions, 1e5 rows each
    python bench/load.py --sessions 3 --rows 2e4 --json bench/out/load.json
    python bench/load.py --rounds 2 --settle 130   # two waves of 10 new sessions: is the memory bounded?

What it does:

1. Writes one regression CSV per session into a temporary directory (``--rows`` rows of y, mean, std and a
   ``split`` column cal/test; synthetic heteroscedastic Gaussian predictions, σ 30 % too small; seed = session
   number, so every session uploads different data and nothing is shared through the caches).  With
   ``--rounds R`` the N sessions run R times one wave after the other, each wave with new sessions and new files
   (caches keyed per upload then fill up to their ``max_entries``).
2. Starts ``streamlit run app.py --server.headless true --server.address 127.0.0.1 --server.port <free>`` in its
   own process group (stopped with SIGTERM, then SIGKILL, whatever happens) and waits for ``/_stcore/health``.
3. Samples the resident memory of the server's process group every ``--sample-ms`` ms in a thread (VmRSS of every
   process whose process group is the server's, from /proc; no psutil needed).
4. Drives N sessions at the same time: one headless Debian Chromium (``/usr/bin/chromium``, never
   ``playwright install``) with one browser context per session, all running concurrently under asyncio.  Each
   session opens the app, goes to the Data page, uploads its file through the real file input, goes to the
   Regression page and waits for the Levi diagram, then changes controls one after the other:
   σ-bins 15 → 16 (slider, keyboard), binning → equal width, rows → cal, a click on a Levi σ-bin, binning → equal
   count, rows → all, σ-bins 16 → 15.  The last two return to combinations the session has seen (cache hits); the
   others need a new diagnosis (with the page's default CIs: 50 bootstrap resamples and 50 perfect-calibration
   simulations above 50,000 rows).
5. **Latency** of a step = wall time from the browser action to the end of the page run it causes, as the page
   sees it: a MutationObserver (installed before the app's own scripts) counts the app's transitions from
   ``data-test-script-state="running"`` to ``"notRunning"`` (the attribute ``wait_for_app`` in tests/conftest.py
   polls); the step ends when a new run has finished, its visible consequence is there (e.g. 16 markers in the
   Levi diagram, the "rows selected" line) and the app is idle again.  So it includes the websocket round trip,
   the server's queueing behind the other sessions, the diagnosis or cache hit, and Plotly's drawing in the
   browser.  Upload = set the file → validation summary shown; first diagnosis = click on "Regression" → Levi
   markers drawn.
6. **Errors**: any ``stException`` element, any ``st.error`` alert (``stAlertContentError``), any Playwright
   timeout (``--timeout`` s per step; the session stops at its first timeout), any crashed session.

Prints per-session and per-step tables (median / p90 / max), the peak server RSS, the RSS before the sessions,
at the end of each wave and ``--settle`` seconds after the last browser contexts were closed (Streamlit drops a
disconnected session after ``server.disconnectedSessionTTL``, 120 s by default, when the next session is stored:
so after settling the bench opens and closes one more session; settle longer than 120 s to see what the caches
alone keep); exits with status 1 when there was any error.  A bench, not a test: on the 2-core
machine ten sessions take minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
APP = "[data-testid='stApp']"

# counts the app's finished runs (running → anything else) from the very first document of every page
RUN_COUNTER_JS = """
(() => {
  window.__calibRuns = 0;
  let last = null;
  const observer = new MutationObserver(() => {
    const app = document.querySelector("[data-testid='stApp']");
    const state = app ? app.getAttribute("data-test-script-state") : null;
    if (state !== last) {
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


# --------------------------------------------------------------------------------------------------
# data, server, memory
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


def start_server(port: int, log_path: Path) -> subprocess.Popen:
    """``streamlit run app.py`` headless on 127.0.0.1:port in its own process group (output to log_path)."""
    log = open(log_path, "w")  # noqa: SIM115 (closed by stop_server)
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
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


def group_rss_mb(pgid: int) -> float:
    """Sum of VmRSS (MB) of the processes in process group ``pgid`` (Linux /proc)."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                stat = f.read()
            if int(stat[stat.rindex(")") + 2:].split()[2]) != pgid:  # fields after "(comm)": state ppid pgrp
                continue
            with open(f"/proc/{entry.name}/status") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("VmRSS")), 0)
        except (OSError, ValueError):
            continue
    return total / 1024


class RssSampler(threading.Thread):
    """Samples ``group_rss_mb(pgid)`` every ``interval`` s until stopped; keeps (time, MB) pairs."""

    def __init__(self, pgid: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.pgid, self.interval = pgid, interval
        self.samples: list[tuple[float, float]] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.samples.append((time.monotonic(), group_rss_mb(self.pgid)))
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(5)

    @property
    def peak(self) -> float:
        return max((mb for _, mb in self.samples), default=float("nan"))


# --------------------------------------------------------------------------------------------------
# one browser session
# --------------------------------------------------------------------------------------------------
@dataclass
class SessionResult:
    index: int
    steps: dict[str, float] = field(default_factory=dict)  # step name → seconds
    errors: list[str] = field(default_factory=list)

    @property
    def control_latencies(self) -> list[float]:
        return [v for k, v in self.steps.items() if k not in ("upload", "first diagnosis")]


class Session:
    def __init__(self, index: int, browser, url: str, csv: Path, timeout_s: float, expect) -> None:
        self.index, self.browser, self.url, self.csv = index, browser, url, csv
        self.timeout = int(timeout_s * 1000)
        self.expect = expect
        self.result = SessionResult(index)
        self.context = None
        self.page = None

    async def idle(self, before: int) -> None:
        await self.page.wait_for_function(IDLE_JS, arg=before, timeout=self.timeout, polling=50)

    async def check_errors(self, step: str) -> None:
        for test_id, what in (("stException", "exception"), ("stAlertContentError", "st.error")):
            n = await self.page.get_by_test_id(test_id).count()
            if n:
                text = (await self.page.get_by_test_id(test_id).first.inner_text())[:300]
                self.result.errors.append(f"{step}: {n} {what} element(s): {text}")

    async def step(self, name: str, action, consequence=None) -> None:
        """Run ``action``; wait for a finished run, ``consequence`` and idleness; record the wall time."""
        before = await self.page.evaluate("window.__calibRuns")
        t0 = time.perf_counter()
        await action()
        await self.idle(before)
        if consequence is not None:
            await consequence()
            await self.page.locator(f"{APP}[data-test-script-state='notRunning']").wait_for(
                state="attached", timeout=self.timeout)
        self.result.steps[name] = time.perf_counter() - t0
        await self.check_errors(name)

    def levi_markers(self):
        levi = self.page.get_by_test_id("stPlotlyChart").nth(0)
        return levi.locator(".scatterlayer .trace").nth(1).locator(".points path")  # trace 0: the diagonal

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
            self.context = await self.browser.new_context(viewport={"width": 1400, "height": 1000})
            await self.context.add_init_script(RUN_COUNTER_JS)
            self.page = page = await self.context.new_page()
            page.set_default_timeout(page_timeout)
            await page.goto(self.url)
            await page.locator(f"{APP}[data-test-script-state='notRunning']").wait_for(state="attached")
            await self.nav("Data", "Data")
            await page.locator(f"{APP}[data-test-script-state='notRunning']").wait_for(state="attached")

            n_rows = sum(1 for _ in open(self.csv)) - 1
            await self.step(
                "upload",
                lambda: page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(self.csv)),
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
            info = page.get_by_text("rows selected from σ-bins")

            async def click_bin() -> None:
                point = self.levi_markers().nth(12)
                await point.scroll_into_view_if_needed()
                box = await point.bounding_box()
                x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
                await page.mouse.move(x - 6, y - 6)
                await page.mouse.move(x, y, steps=4)
                await page.wait_for_timeout(250)  # Plotly selects from its hover state
                await page.mouse.click(x, y)

            await self.step("click a Levi σ-bin", click_bin,
                            lambda: expect(info).to_be_visible(timeout=page_timeout))
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
            step = f"after {list(self.result.steps)[-1]!r}" if self.result.steps else "before the upload"
            self.result.errors.append(f"{step}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
        return self.result

    async def close(self) -> None:
        if self.context is not None:
            await self.context.close()


async def drive(url: str, csvs: list[Path], timeout_s: float, first_index: int = 0) -> list[SessionResult]:
    from playwright.async_api import async_playwright, expect

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            sessions = [Session(first_index + i, browser, url, csv, timeout_s, expect) for i, csv in enumerate(csvs)]
            results = await asyncio.gather(*(s.run() for s in sessions))
            for s in sessions:
                await s.close()
            return list(results)
        finally:
            await browser.close()


async def touch(url: str) -> None:
    """Open and close one more session: Streamlit drops disconnected sessions older than the TTL when the next
    session is stored (a ``cachetools.TTLCache`` expires entries on insertion), not by a timer."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context()
            page = await context.new_page()
            await page.goto(url)
            await page.locator(f"{APP}[data-test-script-state='notRunning']").wait_for(state="attached",
                                                                                        timeout=120_000)
            await context.close()
        finally:
            await browser.close()


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1, help="waves of --sessions new sessions, one after the other")
    ap.add_argument("--rows", type=float, default=1e5, help="rows of each session's upload")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per step before it counts as an error")
    ap.add_argument("--sample-ms", type=float, default=100)
    ap.add_argument("--settle", type=float, default=10, help="seconds to wait after the sessions closed")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers to this file")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"no Chromium at {CHROMIUM}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="calib_load_") as tmp:
        tmp_dir = Path(tmp)
        n_rows = int(args.rows)
        csvs = [write_csv(tmp_dir / f"session_{i:02d}.csv", n_rows, seed=i) for i in range(args.sessions * args.rounds)]
        port = free_port()
        log_path = tmp_dir / "server.log"
        proc = start_server(port, log_path)
        sampler = None
        try:
            url = f"http://127.0.0.1:{port}"
            t_start = time.perf_counter()
            wait_healthy(url, proc, log_path)
            print(f"server up in {time.perf_counter() - t_start:.1f} s on {url}; {args.sessions} sessions × "
                  f"{n_rows:,} rows ({csvs[0].stat().st_size / 2**20:.1f} MB CSV each)", flush=True)
            sampler = RssSampler(proc.pid, args.sample_ms / 1000)
            sampler.start()
            time.sleep(0.5)
            rss_idle = group_rss_mb(proc.pid)
            t0 = time.perf_counter()
            results: list[SessionResult] = []
            rss_rounds = []
            for r in range(args.rounds):
                wave = csvs[r * args.sessions:(r + 1) * args.sessions]
                results += asyncio.run(drive(url, wave, args.timeout, first_index=r * args.sessions))
                rss_rounds.append(group_rss_mb(proc.pid))
                print(f"wave {r + 1}/{args.rounds} done after {time.perf_counter() - t0:.0f} s; server RSS "
                      f"{rss_rounds[-1]:.0f} MB, peak so far {sampler.peak:.0f} MB", flush=True)
            wall = time.perf_counter() - t0
            rss_end_sessions = rss_rounds[-1]
            time.sleep(args.settle)
            asyncio.run(touch(url))
            time.sleep(5)
            rss_settled = group_rss_mb(proc.pid)
            sampler.stop()
            server_errors = [line for line in log_path.read_text().splitlines()
                             if "Traceback" in line or "ERROR" in line]
        finally:
            if sampler is not None:
                sampler.stop()
            stop_server(proc)

    step_names = list(dict.fromkeys(k for r in results for k in r.steps))
    waves = f" × {args.rounds} waves" if args.rounds > 1 else ""
    print(f"\n{args.sessions} concurrent sessions{waves}, {n_rows:,} rows each, {wall:.0f} s wall clock\n")
    print("| session | upload | first diagnosis | control changes: median | p90 | max | errors |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        med, p90, mx = stats(r.control_latencies)
        print(f"| {r.index} | {fmt(r.steps.get('upload', float('nan')))} | "
              f"{fmt(r.steps.get('first diagnosis', float('nan')))} | {fmt(med)} | {fmt(p90)} | {fmt(mx)} | "
              f"{len(r.errors)} |")
    print("\n| step (all sessions) | n | median | p90 | max |")
    print("|---|---|---|---|---|")
    for name in step_names:
        values = [r.steps[name] for r in results if name in r.steps]
        med, p90, mx = stats(values)
        print(f"| {name} | {len(values)} | {fmt(med)} | {fmt(p90)} | {fmt(mx)} |")
    every = [v for r in results for v in r.control_latencies]
    med, p90, mx = stats(every)
    print(f"| **all control changes** | {len(every)} | {fmt(med)} | {fmt(p90)} | {fmt(mx)} |")
    n_errors = sum(len(r.errors) for r in results) + len(server_errors)
    print(f"\nServer RSS (process group): idle before the sessions {rss_idle:.0f} MB, peak {sampler.peak:.0f} MB, "
          f"after each wave {', '.join(f'{mb:.0f}' for mb in rss_rounds)} MB, {args.settle:.0f} s after the last "
          f"sessions closed and one more session opened and closed {rss_settled:.0f} MB ({len(sampler.samples)} "
          f"samples every {args.sample_ms:.0f} ms)")
    print(f"Errors: {n_errors}")
    for r in results:
        for e in r.errors:
            print(f"  session {r.index}: {e}")
    for line in server_errors[:20]:
        print(f"  server log: {line}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "sessions": args.sessions, "rounds": args.rounds, "rows": n_rows, "wall_s": wall, "rss_idle_mb": rss_idle,
            "rss_after_waves_mb": rss_rounds,
            "rss_peak_mb": sampler.peak, "rss_end_mb": rss_end_sessions, "rss_settled_mb": rss_settled,
            "rss_samples": sampler.samples[:: max(1, len(sampler.samples) // 2000)],
            "results": [{"session": r.index, "steps": r.steps, "errors": r.errors} for r in results],
            "server_errors": server_errors,
        }, indent=1))
    return 1 if n_errors else 0


if __name__ == "__main__":
    sys.exit(main())
