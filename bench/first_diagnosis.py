"""Benchmark: server time of a first diagnosis in the dashboard at 10⁵ rows (target: at most 0.5 s).

    python bench/first_diagnosis.py                       # 5 fresh processes per page, then warm repeats
    python bench/first_diagnosis.py --processes 3 --start-delay 1
    python bench/first_diagnosis.py --no-warm-up          # fresh processes without the server-start warm-up

Pages: Regression (Levi example, 2 × 50,000 rows) and Classification (10 classes, 100,000 synthetic rows).  Each
page runs headless with ``streamlit.testing.v1.AppTest`` through ``app.py`` (as the server runs it: the frame, then
the page chosen with ``switch_page``) on data put into the session as the Data page does.  The time is the page
script's own server time, ``st.session_state["page_run_ms"]`` (recorded by ``dashboard.record_run_time``; without
the websocket transfer and the browser's rendering), of the **first** run (``cc.diagnose`` with the page's defaults
— 1,000 bootstrap replicates and 2,000 null draws at every N — plus every figure and table).  Beside it, the CPU
time of the script thread over that whole run, ``app.py``'s frame included (``time.thread_time``: what the server
spends, insensitive to other processes competing for the cores — the wall time is not, on a shared machine).

* **Fresh process** (the number the issue asks for): ``--processes`` new Python processes per page.  With
  ``--start-delay 0`` (default, the worst case) the process's first script run is the diagnosis page itself: the
  server-start warm-up thread (``app.py`` → ``dashboard.warm_up_core`` → ``dashboard.cache.warm_up_server``: the
  core's N-only null tables, then the first use of Plotly and the tables on small data) starts in that same run.
  With ``--start-delay s`` the first run is the Home page (the server starts when the first browser connects),
  then the diagnosis page s seconds later (uploading a file takes longer than 1 s).  ``--no-warm-up`` replaces
  the warm-up by nothing; ``--after-warm-up`` runs the page once the warm-up thread has finished (Home first: a
  server whose warm-up had the CPU it needs, about 1 s, before the first diagnosis).  Medians over the processes.
* **Same process** (``--repeats``): later first diagnoses of new data in one process (every cache of the process
  warm, the diagnosis itself not cached), and a redraw (the diagnosis cached).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

PAGES = ROOT / "pages"
CASES = {
    "regression.py": "Regression (Levi example, 2 × {half:,})",
    "classification.py": "Classification (10 classes, {n:,} synthetic rows)",
}

_CPU_MS: list[float] = []


def _record_cpu() -> None:
    """Record the CPU time of every AppTest script run (the script thread's ``time.thread_time``) in _CPU_MS."""
    from streamlit.testing.v1 import local_script_runner as lsr

    run = lsr.LocalScriptRunner._run_script_thread

    def timed(self) -> None:
        c0 = time.thread_time()
        try:
            run(self)
        finally:
            _CPU_MS.append(1000.0 * (time.thread_time() - c0))

    lsr.LocalScriptRunner._run_script_thread = timed


def make_set(page: str, n: int):
    from app import classification_set  # bench/app.py
    from calib_core.data import examples

    return examples.levi_synthetic(n=n // 2) if page == "regression.py" else classification_set(n)


def first_run(page: str, pset, name: str, token: str, delay: float | None = None,
              wait: bool = False) -> tuple[float, float, float]:
    """(first run ms, its script-thread CPU ms, redraw ms) of ``page`` on ``pset`` in a new AppTest session of
    ``app.py``; with ``delay``, the Home page runs first and the page ``delay`` seconds later (``wait``: once the
    server-start warm-up thread has finished)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = token
    at.session_state["pset_name"] = name
    at.session_state["pset_origin"] = "upload"
    if delay is not None:
        at.run()
        time.sleep(delay)
        if wait:
            import dashboard

            dashboard.warm_up_core().join()  # the thread app.py started (st.cache_resource: the same object)
    at.switch_page(f"pages/{page}")
    at.run()
    if at.exception:
        raise RuntimeError([e.value for e in at.exception])
    key = page.removesuffix(".py")
    first, cpu = float(at.session_state["page_run_ms"][key]), _CPU_MS[-1]
    at.run()
    return first, cpu, float(at.session_state["page_run_ms"][key])


def child(page: str, n: int, warm: bool, delay: float, wait: bool) -> None:
    """One fresh server process: the first diagnosis (app.py starts the warm-up thread, see the module docstring)."""
    if not warm:
        import dashboard.cache

        dashboard.cache.warm_up_server = lambda: None
    _record_cpu()
    pset = make_set(page, n)  # the upload: parsing is the Data page's time, not the diagnosis page's
    first, cpu, _ = first_run(page, pset, "bench.csv", f"bench:{page}:fresh", delay if delay > 0 or wait else None,
                              wait)
    print(json.dumps({"first_ms": first, "cpu_ms": cpu}))


def fresh(page: str, args) -> list[dict]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", page, "--n", str(args.n),
           "--start-delay", str(args.start_delay)] + (["--no-warm-up"] if args.no_warm_up else []) + (
        ["--after-warm-up"] if args.after_warm_up else [])
    out = []
    for _ in range(args.processes):
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
        if res.returncode != 0:
            raise RuntimeError(res.stderr[-2000:])
        out.append(json.loads(res.stdout.strip().splitlines()[-1]))
    return out


def _med(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ms (min {min(values):.0f}, max {max(values):.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--processes", type=int, default=5, help="fresh processes per page")
    ap.add_argument("--repeats", type=int, default=3, help="first diagnoses of new data in one warm process")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--no-warm-up", action="store_true", help="fresh processes without the server-start warm-up")
    ap.add_argument("--start-delay", type=float, default=0.0,
                    help="seconds between server start (warm-up thread) and the first diagnosis (0: worst case)")
    ap.add_argument("--after-warm-up", action="store_true",
                    help="run the page once the warm-up thread has finished (Home first)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.n, not args.no_warm_up, args.start_delay, args.after_warm_up)
        return
    how = ("without the warm-up" if args.no_warm_up else f"warm-up thread started, {args.start_delay:g} s start delay"
           + (", page once it has finished" if args.after_warm_up else ""))
    print(f"First diagnosis at N = {args.n:,}: fresh processes ({how}), then one warm process")
    print()
    print("| page | fresh process: first diagnosis | its CPU time | same process: first diagnosis | its CPU "
          "time | redraw |")
    print("|---|---|---|---|---|---|")
    _record_cpu()
    for page, title in CASES.items():
        runs = fresh(page, args)
        pset = make_set(page, args.n)
        first_run(page, pset, "warm-up.csv", f"bench:{page}:warm-up")  # this process's first use
        firsts, cpus, redraws = [], [], []
        for r in range(args.repeats):
            f, c, d = first_run(page, pset, f"bench_{r}.csv", f"bench:{page}:{r}")
            firsts.append(f)
            cpus.append(c)
            redraws.append(d)
        print(f"| {title.format(half=args.n // 2, n=args.n)} | {_med([r['first_ms'] for r in runs])} | "
              f"{_med([r['cpu_ms'] for r in runs])} | {_med(firsts)} | {_med(cpus)} | "
              f"{statistics.median(redraws):.0f} ms |", flush=True)
    print()
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}")


if __name__ == "__main__":
    main()
