"""What a σ-bin click costs the browser: Chromium's CPU per click, per process and per kind of work, and the DOM
changes of each chart, on the Regression page at 10⁵ rows.

    python bench/click_browser.py                     # 5 clicks, 10⁵ rows, one session
    python bench/click_browser.py --clicks 7 --profile --shots tests/artifacts/click_browser

The session is that of ``bench/load.py --client browser --sessions 1`` (the same synthetic CSV of one model, σ 30 %
too small, uploaded through the Data page; σ-bins 15 → 16, equal width, rows → cal), then ``--clicks`` clicks on the
Levi σ-bins 13, 12, 13, 12, … each timed from the click to the settled page (:data:`bench.load.SETTLED_JS`: a run
started after the click has finished, nothing stale, every chart drawn, the "σ-bin k of …" text there).  For each
click it records:

* **CPU seconds per process** (/proc): the renderer (``--type=renderer``), Chromium's browser process, its GPU and
  utility processes, the Playwright driver (node) and the server;
* **the renderer's main thread** (Chrome DevTools Protocol ``Performance.getMetrics``): task, script, layout and
  style-recalculation durations;
* **DOM changes per chart**: a MutationObserver over the document (installed before the app's scripts) counts
  mutation records and added nodes under each element container with a key (``st-key-reg_levi_chart``,
  ``st-key-reg_kuleshov``, ``st-key-reg_pit``, ``st-key-reg_z``) and elsewhere;
* with ``--profile``: the JavaScript self time of the click by script (Streamlit's index bundle, the Plotly chart
  bundle, …) and its top functions (``Profiler`` of the DevTools Protocol, 1 ms sampling);
* with ``--shots DIR``: screenshots of the page before the first click and after the first and last clicks.

Medians over the clicks after the first (the first also builds the selection's metric table) are printed with the
load average.  A bench, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # noqa: E402  (bench/load.py: server, CSV, settled page)

#: Mutation counter per keyed element container (installed before the app's own scripts).
MUTATIONS_JS = """
(() => {
  window.__calibMut = {};
  const where = (node) => {
    const el = node && (node.nodeType === 1 ? node : node.parentElement);
    const box = el && el.closest("[class*='st-key-']");
    if (!box) return "other";
    const key = [...box.classList].find(c => c.startsWith("st-key-"));
    return key ? key.slice(7) : "other";
  };
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      const k = where(r.target);
      const entry = window.__calibMut[k] || (window.__calibMut[k] = [0, 0]);
      entry[0] += 1; entry[1] += r.addedNodes ? r.addedNodes.length : 0;
    }
  });
  const start = () => observer.observe(document.documentElement, {subtree: true, childList: true, attributes: true,
                                                                   characterData: true});
  if (document.documentElement) start(); else document.addEventListener("DOMContentLoaded", start);
})();
"""
#: every chart of ``dashboard.live_chart`` has drawn its latest figure (``data-pending`` false)
LIVE_DRAWN_JS = """() => [...document.querySelectorAll('.calab-live-chart')].every(
  c => c.querySelector('.main-svg') && c.getAttribute('data-pending') !== 'true')"""
CHARTS = ("reg_levi_chart", "reg_kuleshov", "reg_pit", "reg_z")


def process_cpu(server_pgid: int) -> dict[str, float]:
    """CPU seconds by kind of process: renderer, browser, gpu, utility (Chromium), driver (Playwright), server."""
    table = load.proc_table()
    children: dict[int, list[int]] = {}
    for pid, ppid, *_ in table:
        children.setdefault(ppid, []).append(pid)
    mine, todo = set(), [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in mine:
                mine.add(child)
                todo.append(child)
    out = {"renderer": 0.0, "browser": 0.0, "gpu": 0.0, "utility": 0.0, "driver": 0.0, "server": 0.0}
    for pid, _, group, cpu, _ in table:
        if group == server_pgid:
            out["server"] += cpu
            continue
        if pid not in mine:
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "chromium" not in cmd and "chrome" not in cmd:
            out["driver"] += cpu
        elif "--type=renderer" in cmd:
            out["renderer"] += cpu
        elif "--type=gpu" in cmd:
            out["gpu"] += cpu
        elif "--type=" in cmd:
            out["utility"] += cpu
        else:
            out["browser"] += cpu
    return out


async def main_async(args: argparse.Namespace) -> dict:
    from playwright.async_api import async_playwright, expect

    tmp = Path(tempfile.mkdtemp(prefix="click_browser_"))
    csv = load.write_csv(tmp / "click.csv", int(args.rows), seed=1)
    port = load.free_port()
    url = f"http://127.0.0.1:{port}"
    server = load.start_server(port, tmp / "server.log", 120)
    shots = Path(args.shots) if args.shots else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    clicks = []
    try:
        load.wait_healthy(url, server, tmp / "server.log")
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=load.CHROMIUM, args=load.CHROMIUM_ARGS)
            session = load.RegressionSession(0, browser, url, 600, expect, csv)
            await session.open_context()
            await session.context.add_init_script(MUTATIONS_JS)
            page = session.page
            cdp = await session.context.new_cdp_session(page)
            await cdp.send("Performance.enable")
            if args.profile:
                await cdp.send("Profiler.enable")
                await cdp.send("Profiler.setSamplingInterval", {"interval": 1000})
            app = f"{load.APP}[data-test-script-state='notRunning']"
            await page.goto(url)
            await page.locator(app).wait_for(state="attached")
            await session.nav("Data", "Data")
            await page.locator(app).wait_for(state="attached")
            await session.step("upload", lambda: page.locator(".st-key-data_upload").get_by_test_id(
                "stFileUploaderDropzoneInput").set_input_files(str(csv)))
            await session.step("first diagnosis", lambda: session.nav("Regression", "Regression diagnostics"),
                               lambda: expect(session.levi_markers()).to_have_count(15, timeout=600_000))
            slider = page.get_by_role("slider")
            await session.step("σ-bins 15→16", lambda: slider.press("ArrowRight"),
                               lambda: expect(session.levi_markers()).to_have_count(16, timeout=600_000))
            binning = page.get_by_test_id("stButtonGroup")
            await session.step("binning → width", lambda: binning.get_by_role("radio", name="equal width").click())
            await session.step("rows → cal", lambda: session.select("Rows", "cal"),
                               lambda: expect(page.get_by_role("combobox", name="Rows")).to_have_value("cal"))
            await page.wait_for_timeout(1000)
            if shots:
                await chart_shots(page, shots, "before_click")
            info = page.get_by_text(load.re.compile(r"rows? selected from σ-bins? "))
            bins = [12] + [(11, 12)[i % 2] for i in range(args.clicks - 1)]
            for k, nth in enumerate(bins):
                point = session.levi_markers().nth(nth)
                await point.scroll_into_view_if_needed()
                box = await point.bounding_box()
                x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
                await page.mouse.move(x - 6, y - 6)
                await page.mouse.move(x, y, steps=4)
                await page.wait_for_timeout(400)
                await page.evaluate("window.__calibMut = {}")
                metrics0 = {m["name"]: m["value"] for m in (await cdp.send("Performance.getMetrics"))["metrics"]}
                if args.profile:
                    await cdp.send("Profiler.start")
                cpu0 = process_cpu(server.pid)
                since = await page.evaluate("performance.now()")
                before = await page.evaluate("window.__calibRuns")
                t0 = time.perf_counter()
                await page.mouse.click(x, y)
                await session.idle(before)
                await expect(info).to_contain_text(f"σ-bin {nth + 1} of", timeout=600_000)
                await session.settled(since, min_charts=2)
                await page.wait_for_function(LIVE_DRAWN_JS, timeout=600_000, polling=50)
                wall = time.perf_counter() - t0
                await page.wait_for_timeout(300)  # late work (a chart's resize, the grid's paint) belongs to the click
                cpu1 = process_cpu(server.pid)
                profile = (await cdp.send("Profiler.stop"))["profile"] if args.profile else None
                metrics1 = {m["name"]: m["value"] for m in (await cdp.send("Performance.getMetrics"))["metrics"]}
                mut = await page.evaluate("window.__calibMut")
                row = {"click": k, "bin": nth + 1, "wall_s": wall,
                       "cpu_s": {p: cpu1[p] - cpu0[p] for p in cpu0},
                       "main_thread_s": {m: metrics1[m] - metrics0[m] for m in
                                         ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")},
                       "mutations": mut, "js_by_script": js_by_script(profile) if profile else None,
                       "top_functions": top_functions(profile) if profile else None}
                clicks.append(row)
                print(click_line(row), flush=True)
                if shots and k in (0, len(bins) - 1):
                    await chart_shots(page, shots, f"after_click_{k + 1}")
            await session.close()
            await browser.close()
    finally:
        load.stop_server(server)
    return {"rows": int(args.rows), "load_average": load.load_average(), "clicks": clicks}


async def chart_shots(page, folder: Path, stem: str) -> None:
    """A screenshot of each chart of :data:`CHARTS` (scrolled into view), ``{stem}_{chart}.png``."""
    for key in CHARTS:
        box = page.locator(f".st-key-{key}")
        if await box.count():
            await box.first.scroll_into_view_if_needed()
            await page.wait_for_timeout(200)
            await box.first.screenshot(path=str(folder / f"{stem}_{key.removeprefix('reg_')}.png"))


def _self_times(profile: dict) -> list[tuple[dict, float]]:
    """(call frame, self seconds) of every node of a DevTools CPU profile."""
    deltas = profile.get("timeDeltas", [])
    samples = profile.get("samples", [])
    hits: dict[int, float] = {}
    for node, dt in zip(samples, deltas[1:] + [0]):
        hits[node] = hits.get(node, 0.0) + dt / 1e6
    return [(n["callFrame"], hits.get(n["id"], 0.0)) for n in profile["nodes"]]


def js_by_script(profile: dict) -> dict[str, float]:
    """JavaScript self seconds by script file (``(program)``, ``(idle)``, ``(garbage collector)`` apart)."""
    out: dict[str, float] = {}
    for frame, secs in _self_times(profile):
        url = frame.get("url") or frame.get("functionName") or "(anonymous)"
        name = url.rsplit("/", 1)[-1].split("?")[0] if "/" in url else url
        out[name] = out.get(name, 0.0) + secs
    return dict(sorted(out.items(), key=lambda kv: -kv[1])[:12])


def top_functions(profile: dict, n: int = 15) -> list[tuple[str, float]]:
    """The ``n`` functions with the most self time (function, script:line)."""
    out: dict[str, float] = {}
    for frame, secs in _self_times(profile):
        url = (frame.get("url") or "").rsplit("/", 1)[-1]
        key = f"{frame.get('functionName') or '(anonymous)'} {url}:{frame.get('lineNumber', 0)}"
        out[key] = out.get(key, 0.0) + secs
    return sorted(out.items(), key=lambda kv: -kv[1])[:n]


def click_line(row: dict) -> str:
    cpu, main = row["cpu_s"], row["main_thread_s"]
    mut = row["mutations"]
    charts = " ".join(f"{c.removeprefix('reg_')}={mut.get(c, [0])[0]}" for c in CHARTS)
    return (f"click {row['click'] + 1} (bin {row['bin']}): {row['wall_s'] * 1e3:5.0f} ms wall | CPU ms renderer "
            f"{cpu['renderer'] * 1e3:4.0f} browser {cpu['browser'] * 1e3:3.0f} gpu {cpu['gpu'] * 1e3:3.0f} "
            f"utility {cpu['utility'] * 1e3:3.0f} driver {cpu['driver'] * 1e3:3.0f} server {cpu['server'] * 1e3:3.0f} "
            f"| main thread task {main['TaskDuration'] * 1e3:4.0f} script {main['ScriptDuration'] * 1e3:4.0f} layout "
            f"{main['LayoutDuration'] * 1e3:3.0f} style {main['RecalcStyleDuration'] * 1e3:3.0f} | DOM changes "
            f"{charts} other={mut.get('other', [0])[0]}")


def summary(result: dict) -> str:
    later = result["clicks"][1:] or result["clicks"]

    def med(get) -> float:
        return statistics.median(get(r) for r in later) * 1e3

    chromium = ("renderer", "browser", "gpu", "utility")
    lines = [f"load average {result['load_average']:.1f}; medians of clicks 2–{len(result['clicks'])} (ms):",
             f"  wall {med(lambda r: r['wall_s']):.0f}; Chromium CPU "
             f"{med(lambda r: sum(r['cpu_s'][p] for p in chromium)):.0f} "
             f"(renderer {med(lambda r: r['cpu_s']['renderer']):.0f}), "
             f"driver {med(lambda r: r['cpu_s']['driver']):.0f}, server {med(lambda r: r['cpu_s']['server']):.0f}; "
             f"renderer main thread task {med(lambda r: r['main_thread_s']['TaskDuration']):.0f} "
             f"script {med(lambda r: r['main_thread_s']['ScriptDuration']):.0f}",
             "  DOM changes per chart: " + ", ".join(
                 f"{c}: {statistics.median(r['mutations'].get(c, [0])[0] for r in later):.0f}" for c in CHARTS)]
    if later[0].get("js_by_script"):
        scripts: dict[str, list[float]] = {}
        for r in later:
            for s, v in r["js_by_script"].items():
                scripts.setdefault(s, []).append(v)
        lines.append("  JS self time by script: " + ", ".join(
            f"{s} {statistics.median(v + [0] * (len(later) - len(v))) * 1e3:.0f}" for s, v in
            sorted(scripts.items(), key=lambda kv: -sum(kv[1]))[:8]))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=float, default=1e5)
    ap.add_argument("--clicks", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="JavaScript CPU profile of each click")
    ap.add_argument("--shots", default=None, help="directory for screenshots before and after the clicks")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    print(f"load average {load.load_average():.1f} at the start", flush=True)
    result = asyncio.run(main_async(args))
    print(summary(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
