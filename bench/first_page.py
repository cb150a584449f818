"""First page of a freshly started server, in a real Chromium: how long until it is shown, and what the sidebar shows
meanwhile.

    python bench/first_page.py                      # 3 fresh servers, the home page ("/")
    python bench/first_page.py --path lab_accrue    # a page address opened first (a shared link)
    python bench/first_page.py --repeats 1 --shots bench/out/first_page   # plus a screenshot every 250 ms

For each repeat: a headless Debian Chromium is launched first (``/usr/bin/chromium``, never ``playwright install``;
not timed), then the clock starts and ``streamlit run app.py`` is started headless on a free loopback port (its own
process group, stopped afterwards).  The page is opened as soon as ``/_stcore/health`` answers.  A script installed
before the app's own (a MutationObserver on the whole document) notes, in milliseconds since the clock started:

* **nav**: every distinct list of labels the sidebar navigation (``stSidebarNav``) shows, with the time it appeared;
  a list with an entry named after a *file* of ``pages/`` or "app" (Streamlit's automatic one-entry-per-file
  navigation) is the **raw file list** — the bench reports whether it was ever in the document, even for a frame;
* **first page**: the first time the page's heading is in the document (Home: the ``h1`` "Calibration Lab") with
  the app's own navigation beside it (its "Lab index" entry) — the first meaningful paint of the page;
* **settled**: the app is connected and idle after its first run, every Plotly chart drawn.

With ``--shots DIR`` it also takes a screenshot every ``--every-ms`` (250) ms from the moment the page is opened
until it settled (they cost CPU on the same cores, so the timed repeats run without them unless asked).  It prints
one row per repeat and the median, the server's CPU seconds up to the first page (utime + stime of its process
group from /proc) and the load average before and after.  A bench, not a test: the browser test
``tests/browser/test_first_page.py`` checks the same things without timing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
CLK_TCK = os.sysconf("SC_CLK_TCK")

#: Streamlit's automatic navigation names one entry per file of pages/ after it ("lab accrue") and the main script
#: "app"; the app's own navigation uses page titles ("ACCRUE on toy data").
FILE_LABELS = sorted({"app"} | {p.stem.replace("_", " ") for p in (ROOT / "pages").glob("*.py")})

# Runs before the app's own scripts in every document: notes nav label lists, the first page and settling, in ms
# since window.__t0 (set by the bench to the clock's start, in the page's Date.now() time base).
OBSERVER_JS = """
(() => {
  window.__navSeen = [];
  window.__firstPage = null;
  window.__heading = null;
  const now = () => Date.now();
  let lastNav = null;
  const look = () => {
    const nav = document.querySelector("[data-testid='stSidebarNav']");
    const labels = nav ? Array.from(nav.querySelectorAll("[data-testid='stSidebarNavLink']"))
        .map(a => a.innerText.trim().split("\\n").pop().trim()) : [];
    const key = JSON.stringify(labels);
    if (key !== lastNav) { window.__navSeen.push([now(), labels]); lastNav = key; }
    if (window.__firstPage === null && window.__heading !== null) {
      const h = Array.from(document.querySelectorAll("h1")).find(e => e.innerText.trim().startsWith(window.__heading));
      if (h && labels.includes("Lab index")) window.__firstPage = now();
    }
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true,
                                                characterData: true});
})();
"""
SETTLED_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-connection-state") !== "CONNECTED"
      || app.getAttribute("data-test-script-state") !== "notRunning" || window.__firstPage === null) return false;
  const charts = document.querySelectorAll("[data-testid='stPlotlyChart']");
  return Array.from(charts).every(c => c.querySelector(".main-svg"))
      && document.querySelectorAll("[data-stale='true']").length === 0;
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def group_cpu_s(pgid: int) -> float:
    """utime + stime of every process of the group ``pgid`` (the server and any child), from /proc."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the name: state ppid pgrp …
            total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def raw_lists(nav_seen: list) -> list:
    """The navigation lists that name files (Streamlit's automatic navigation), with their times."""
    return [(t, labels) for t, labels in nav_seen if set(labels) & set(FILE_LABELS)]


def one(browser, path: str, heading: str, shots: Path | None, every_ms: int, timeout_s: float, log: Path) -> dict:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.add_init_script(OBSERVER_JS)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    load_before = load_average()
    t0 = time.time()
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    row: dict = {"path": path or "/", "load_before": load_before}
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() - t0 > timeout_s:
                raise RuntimeError(f"server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.05)
        row["healthy_s"] = time.time() - t0
        row["server_cpu_healthy_s"] = group_cpu_s(proc.pid)
        # the observer's clock: Date.now() in the page, in ms; t0 handed over before the app's scripts run
        page.add_init_script(f"window.__t0 = {t0 * 1000:.0f}; window.__heading = {json.dumps(heading)};")
        page.goto(f"{url}/{path}", wait_until="commit")
        n_shot = 0
        next_shot = time.time()
        first_cpu = None
        while True:
            if shots is not None and time.time() >= next_shot:
                page.screenshot(path=str(shots / f"{path or 'home'}_{n_shot:03d}_{time.time() - t0:05.2f}s.png"))
                n_shot += 1
                next_shot += every_ms / 1000
            if first_cpu is None and page.evaluate("window.__firstPage") is not None:
                first_cpu = group_cpu_s(proc.pid)
            if page.evaluate(SETTLED_JS):
                break
            if time.time() - t0 > timeout_s:
                raise TimeoutError(f"first page not settled after {timeout_s:.0f} s")
            page.wait_for_timeout(50)
        row["settled_s"] = time.time() - t0
        first = page.evaluate("window.__firstPage")
        row["first_page_s"] = (first - t0 * 1000) / 1000
        row["server_cpu_first_page_s"] = first_cpu if first_cpu is not None else group_cpu_s(proc.pid)
        row["server_cpu_settled_s"] = group_cpu_s(proc.pid)
        nav_seen = [((t - t0 * 1000) / 1000, labels) for t, labels in page.evaluate("window.__navSeen")]
        row["nav_seen"] = nav_seen
        row["raw_list"] = raw_lists(nav_seen)
        row["screenshots"] = n_shot
        row["load_after"] = load_average()
    finally:
        context.close()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--path", default="", help="address opened first ('' = Home; e.g. lab_accrue, regression)")
    ap.add_argument("--heading", default=None, help="start of the page's h1 (default: Home's 'Calibration Lab'; "
                    "for another --path, any h1)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--shots", type=Path, default=None, help="directory for a screenshot every --every-ms")
    ap.add_argument("--every-ms", type=int, default=250)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    heading = args.heading if args.heading is not None else ("Calibration Lab" if not args.path else "")
    if not Path(CHROMIUM).exists():
        print(f"no Chromium at {CHROMIUM}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    if args.shots is not None:
        args.shots.mkdir(parents=True, exist_ok=True)
    rows = []
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"first_page_{os.getpid()}.log"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for i in range(args.repeats):
                row = one(browser, args.path, heading, args.shots if i == 0 else None, args.every_ms,
                          args.timeout, log)
                rows.append(row)
                navs = " → ".join(f"{t:.2f}s:{len(labels)} entries" + (" (RAW FILE LIST)" if set(labels) &
                                  set(FILE_LABELS) else "") for t, labels in row["nav_seen"] if labels)
                print(f"repeat {i + 1}: healthy {row['healthy_s']:.2f} s, first page {row['first_page_s']:.2f} s, "
                      f"settled {row['settled_s']:.2f} s; server CPU at health {row['server_cpu_healthy_s']:.2f} s, "
                      f"to first page {row['server_cpu_first_page_s']:.2f}"
                      f" s, to settled {row['server_cpu_settled_s']:.2f} s; raw file list seen: "
                      f"{'YES' if row['raw_list'] else 'no'}; load {row['load_before']:.1f} → {row['load_after']:.1f}"
                      f"\n    sidebar navigation: {navs or '(none)'}", flush=True)
        finally:
            browser.close()
    med = {k: statistics.median(r[k] for r in rows) for k in ("healthy_s", "first_page_s", "settled_s",
                                                               "server_cpu_first_page_s")}
    print(f"\nmedian of {len(rows)}: healthy {med['healthy_s']:.2f} s, first page {med['first_page_s']:.2f} s, "
          f"settled {med['settled_s']:.2f} s, server CPU to first page {med['server_cpu_first_page_s']:.2f} s; "
          f"raw file list seen in {sum(bool(r['raw_list']) for r in rows)} of {len(rows)}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
