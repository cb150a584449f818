"""Benchmark: server time of a first diagnosis in the dashboard at 10⁵ rows (issue 12: at most 0.5 s).

    python bench/first_diagnosis.py             # Regression (Levi example, 2 × 50,000) and Classification (K = 10)
    python bench/first_diagnosis.py --repeats 3

Each page runs headless with ``streamlit.testing.v1.AppTest`` in a fresh app on data put into the session as the
Data page does; the time is the page script's own server time, ``st.session_state["page_run_ms"]`` (recorded by
``dashboard.record_run_time``; without the websocket transfer and the browser's rendering), of the **first** run
(``cc.diagnose`` with the page's defaults — 1,000 bootstrap replicates and 2,000 null draws at every N — plus every
figure and table), then of a cached redraw.  The inference layer's per-N null tables are process-wide caches built
on the first diagnosis of a process: the first scenario of a process is reported separately ("cold process").
The dashboard builds them at server start in a background thread (``app.py`` → ``dashboard.warm_up_core``); the
cold scenario starts that thread as the server does and then runs the first page at once (the worst case: no idle
time between server start and the first diagnosis; ``--start-delay 1`` gives the server one second, less than
uploading a file takes).  ``--no-warm-up`` measures a cold process without it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from app import classification_set  # noqa: E402
from calib_core import examples  # noqa: E402

PAGES = ROOT / "pages"


def first_run(page: str, pset, name: str, token: str) -> tuple[float, float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(PAGES / page), default_timeout=600)
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = token
    at.session_state["pset_name"] = name
    at.session_state["pset_origin"] = "upload"
    at.run()
    if at.exception:
        raise RuntimeError([e.value for e in at.exception])
    key = page.removesuffix(".py")
    first = float(at.session_state["page_run_ms"][key])
    at.run()
    return first, float(at.session_state["page_run_ms"][key])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--no-warm-up", action="store_true", help="cold process without the server-start warm-up")
    ap.add_argument("--start-delay", type=float, default=0.0,
                    help="seconds between server start (warm-up thread) and the first diagnosis (0: worst case)")
    args = ap.parse_args()
    if not args.no_warm_up:  # what app.py does once per server process
        from calib_core.regression.inference import warm_up

        threading.Thread(target=warm_up, daemon=True).start()
    time.sleep(args.start_delay)
    levi = examples.levi_synthetic(n=args.n // 2)
    cls = classification_set(args.n)
    cases = [(f"Regression (Levi example, 2 × {args.n // 2:,})", "regression.py", levi),
             ("Classification (10 classes, synthetic)", "classification.py", cls)]
    cold = None
    for title, page, pset in cases:
        firsts, redraws = [], []
        for r in range(args.repeats):
            f, d = first_run(page, pset, f"bench_{r}.csv", f"bench:{page}:{r}")
            if cold is None:
                cold = (title, f)
                continue
            firsts.append(f)
            redraws.append(d)
        print(f"| {title} | {statistics.median(firsts):.0f} ms (min {min(firsts):.0f}, max {max(firsts):.0f}) | "
              f"{statistics.median(redraws):.0f} ms |", flush=True)
    how = "without the warm-up" if args.no_warm_up else "warm-up thread started with it, as at server start"
    print(f"cold process ({cold[0]}, first diagnosis of the process, {how}): {cold[1]:.0f} ms")


if __name__ == "__main__":
    main()
