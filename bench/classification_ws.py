"""Benchmark: server PROCESS CPU of each control change on the Classification page, over Streamlit's protocol.

    python bench/classification_ws.py                      # K = 10 and binary, 10⁵ rows, 2 sessions each
    python bench/classification_ws.py --k 10 --n 1e5 --repeats 3

Starts ``streamlit run app.py`` (``bench/load.py``'s server and websocket client, one session at a time), uploads a
classification file of ``--n`` rows (``bench/app.py``'s over-confident classifier: probabilities, label, split) on the
Data page and runs the steps of ``bench/page_cpu.py``'s Classification scenario: the first diagnosis, bins 15 → 16,
back to 15 (seen), binning → equal mass, → equal width (seen), the histogram's log axis, the smooth diagram off, a
click on the reliability diagram's most populated bin, rows → cal (new rows) and rows → all (seen).  Per step: the
CPU time of the server's whole process group (utime + stime from /proc: the script thread, Streamlit's serialising
and sending of the page, the event loop), the wall time, and the bytes received.  ``bench/page_cpu.py`` gives the
script thread's share of the same steps.  Medians over the sessions (each on new data: nothing is a cache hit that
would not be one for a new user).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import pandas as pd  # noqa: E402

#: Steps whose rows were not diagnosed before (new data, not redraws).
NEW_DATA = {"upload", "first diagnosis", "rows → cal (new rows)"}
TARGET_MS = 50.0  #: server CPU of a control change on unchanged data


def write_classification_csv(path: Path, n: int, k: int, seed: int) -> Path:
    """``bench/app.py``'s over-confident K-class classifier as a file: label, p_0 … p_{K−1}, split."""
    from app import classification_set  # bench/app.py

    pset = classification_set(n, k=k, seed=seed)
    df = pd.DataFrame(pset.probs, columns=[f"p_{i}" for i in range(k)])
    df.insert(0, "label", pset.labels)
    df["split"] = pset.split
    df.to_csv(path, index=False, float_format="%.8g")
    return path


def _session_class():
    from load import WsSession  # bench/load.py

    class WsClassificationSession(WsSession):
        """The Classification scenario over the protocol (module docstring)."""

        kind = "classification"

        def __init__(self, index: int, url: str, timeout_s: float, csv: Path, binary: bool, cpu=None) -> None:
            super().__init__(index, url, timeout_s, cpu)
            self.csv, self.binary = csv, binary

        async def click_bin(self) -> None:
            """A click on the reliability diagram's most populated bin, as plotly.js reports it."""
            import page_cpu  # bench/page_cpu.py: the bin of a trace's first point
            from streamlit.proto.WidgetStates_pb2 import WidgetState

            for etype, inner in self.elements:
                if etype != "plotly_chart" or not inner.id:
                    continue
                spec = json.loads(inner.spec)
                curve = next((i for i, d in enumerate(spec["data"]) if (d.get("meta") or {}).get("role") == "bars"),
                             None)
                if curve is None:
                    continue
                event = {"selection": {"points": [{"curve_number": curve, "point_index": 0, "point_number": 0,
                                                   "customdata": page_cpu._first_bin(spec["data"][curve])}],
                                       "point_indices": [0], "box": [], "lasso": []}}
                state = WidgetState(id=inner.id, string_value=json.dumps(event))
                await self.timed("bin click", lambda: self.rerun([state]))
                return
            self.result.errors.append("bin click: no reliability diagram with bars")

        async def run(self):
            try:
                await self.open()
                await self.rerun(page_name="")
                await self.rerun(page_hash=self.pages["data"])
                await self.timed("upload", lambda: self.upload("Prediction file", self.csv))
                await self.timed("first diagnosis", lambda: self.rerun(page_hash=self.pages["classification"]))
                bins = "Confidence bins"
                await self.step("bins 16", bins, double_array_value=[16])
                await self.step("bins 15 (seen)", bins, double_array_value=[15])
                await self.step("binning → mass", "Bins", string_array_value=["equal mass"])
                await self.step("binning → width (seen)", "Bins", string_array_value=["equal width"])
                await self.step("bins 17", bins, double_array_value=[17])
                await self.step("histogram → log", "y axis", string_array_value=["log"])
                await self.timed("smooth off", lambda: self.rerun(
                    [self.state("Smooth reliability diagram (no bins)", bool_value=False)]))
                await self.click_bin()
                await self.step("rows → cal (new rows)", "Rows", string_value="cal")
                await self.step("rows → all (seen)", "Rows", string_value="all")
            except Exception as exc:  # noqa: BLE001 (a timeout or a crash of this session is an error to report)
                await self.fail(exc)
            return self.result

    return WsClassificationSession


def run(k: int, n: int, repeats: int, timeout: float) -> list:
    """One server; ``repeats`` sessions one after the other, each on a new file (seed = repeat)."""
    import load  # bench/load.py

    port = load.free_port()
    url = f"http://127.0.0.1:{port}"
    work = Path(tempfile.mkdtemp(prefix="clsws"))
    proc = load.start_server(port, work / "server.log", session_ttl=5)
    results = []
    try:
        load.wait_healthy(url, proc, work / "server.log")
        session_class = _session_class()
        for seed in range(1, repeats + 1):
            csv = write_classification_csv(work / f"cls_{k}_{seed}.csv", n, k, seed)
            session = session_class(seed, url, timeout, csv, k == 2, cpu=lambda: load.cpu_split(os.getpgid(proc.pid)))
            result = asyncio.run(session.run())
            if result.errors:
                print(f"session {seed}: errors {result.errors}", file=sys.stderr)
            results.append(result)
    finally:
        load.stop_server(proc)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", default="10,2", help="classes of each page run (2: a binary file)")
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    n = int(args.n)
    for k in (int(x) for x in args.k.split(",")):
        results = run(k, n, args.repeats, args.timeout)
        print(f"\nClassification page, K = {k}, N = {n:,}: server process CPU per step (median of {len(results)} "
              f"sessions; ms)\n\n| step | server CPU ms | min | max | wall ms | ≤ {TARGET_MS:.0f} ms |\n"
              f"|---|---|---|---|---|---|")
        for name in results[0].cpu:
            cpu = [1000.0 * r.cpu[name][0] for r in results if name in r.cpu]
            wall = [1000.0 * r.steps[name] for r in results if name in r.steps]
            med = statistics.median(cpu)
            mark = "new data" if name in NEW_DATA else ("yes" if med <= TARGET_MS else "**no**")
            print(f"| {name} | {med:.0f} | {min(cpu):.0f} | {max(cpu):.0f} | {statistics.median(wall):.0f} | {mark} |",
                  flush=True)
    print(f"\nload average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
