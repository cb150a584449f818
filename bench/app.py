"""Benchmark of the dashboard: figure payload at 1e6 rows and server time of a redraw at 1e5 rows.

    python bench/app.py                          # payload at N = 1e6, redraw at N = 1e5
    python bench/app.py --payload-n 1e5 --redraw-n 1e4 --repeats 3

(1) **Figure payload** (target: < 1 MB at 1e6 rows).  Every page that draws data-dependent figures —
Regression, Classification, Recalibrate (regression and classification data) — is run headless with
``streamlit.testing.v1.AppTest`` on a synthetic 1e6-row set put into ``st.session_state`` exactly as the Data
page does (``pset``, ``pset_token``, ``pset_name``), and the JSON of every ``st.plotly_chart`` element as sent to
the browser (``proto.spec``, i.e. ``plotly.io.to_json`` of the figure) is measured.  To keep the run short the
diagnostics pages run with bootstrap CIs and perfect-calibration simulations switched off at 1e6 rows (this
changes numbers inside the fixed-size diagram tables, not their size; the table below also gives the payload at
the redraw size with the default CI settings for comparison).  The Recalibrate page runs one trial (split column)
with four calibrators.

(2) **Redraw time** (< 200 ms at 1e5 rows).  For each page: a cold first run (the heavy work: ``cc.diagnose`` with
the page's default CIs, or the calibrator comparison), one change of a control to a value never seen (cold again),
then the control toggled back and forth between the two values: every later run finds the heavy work in the
cache (``st.cache_data`` keyed by the data token and the options; Recalibrate keeps its comparison in session
state), so its time is the redraw — script, figures, tables and protobuf serialisation of the page.  The time of
``AppTest.run()`` is reported (median and max over ``--repeats`` toggles) together with the page script's own time
(measured inside the script run by a small wrapper: the server's work for the rerun, including building and
serialising every element, without AppTest's bookkeeping) and that script thread's CPU time
(``time.thread_time``: insensitive to other processes competing for the cores); none includes the websocket
transfer or the browser's rendering.

Prints a table and writes ``bench/out/app.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from calib_core.base.predictions import PredictionSet  # noqa: E402

PAGES = ROOT / "pages"
LIMIT_BYTES = 1_000_000
LIMIT_SECONDS = 0.200
TIMEOUT = 1800


def regression_set(n: int, seed: int = 0) -> PredictionSet:
    """Heteroscedastic Gaussian predictions, 30% over-confident, with a cal/test split column."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=n)
    mu = np.sin(3 * x)
    sigma = 0.2 + 0.5 * np.abs(x)
    y = mu + 1.3 * sigma * rng.normal(size=n)
    split = np.where(rng.random(n) < 0.5, "cal", "test")
    return PredictionSet(task="regression", source=f"synthetic_regression_{n}.csv", layout="gaussian", y=y,
                         dist=cc.Gaussian(mu, sigma), split=split, n_read=n, row_number=np.arange(1, n + 1))


def classification_set(n: int, k: int = 10, seed: int = 0) -> PredictionSet:
    """Over-confident K-class logits (3× the true logits), labels drawn from the true probabilities."""
    rng = np.random.default_rng(seed)
    z_true = 1.2 * rng.normal(size=(n, k))
    labels = (z_true + rng.gumbel(size=(n, k))).argmax(1)
    logits = 3.0 * z_true
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    split = np.where(rng.random(n) < 0.5, "cal", "test")
    return PredictionSet(task="classification", source=f"synthetic_classification_{n}.csv", layout="logits",
                         labels=labels, probs=probs, logits=logits, split=split, n_read=n,
                         row_number=np.arange(1, n + 1))


# The page runs inside this wrapper so that the script's own time (the server's work for a rerun, without
# AppTest's tree bookkeeping) is recorded in the session state; st.stop() inside the page still records it.
_WRAPPER = """
import runpy, time
import streamlit as st
_t0, _c0 = time.perf_counter(), time.thread_time()
try:
    runpy.run_path({page!r}, run_name="__main__")
finally:
    st.session_state["_bench_script_s"] = time.perf_counter() - _t0
    st.session_state["_bench_script_cpu_s"] = time.thread_time() - _c0
"""


def app_test(page: str, pset: PredictionSet, state: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(_WRAPPER.format(page=str(PAGES / page)), default_timeout=TIMEOUT)
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = f"bench:{pset.source}"
    at.session_state["pset_name"] = pset.source
    at.session_state["pset_origin"] = "upload"
    for k, v in state.items():
        at.session_state[k] = v
    return at


def check(at) -> None:
    if at.exception:
        raise RuntimeError(f"page raised: {[e.value for e in at.exception]}")
    if at.error:
        raise RuntimeError(f"page error: {[e.value for e in at.error]}")


def timed_run(at, script_times: list[float] | None = None, cpu_times: list[float] | None = None) -> float:
    t0 = time.perf_counter()
    at.run()
    dt = time.perf_counter() - t0
    check(at)
    if script_times is not None:
        script_times.append(float(at.session_state["_bench_script_s"]))
    if cpu_times is not None:
        cpu_times.append(float(at.session_state["_bench_script_cpu_s"]))
    return dt


def click_run(at) -> float:
    button = next(b for b in at.button if b.label == "Run comparison")
    button.click()
    return timed_run(at)


def payloads(at) -> list[int]:
    return [len(c.proto.spec.encode("utf-8")) for c in at.get("plotly_chart")]


# ------------------------------------------------------------------------------------------------------------
# scenarios: (page file, data, state before the first run, prepare, control to toggle (key, a, b))
# ------------------------------------------------------------------------------------------------------------
RECAL_REG = {"recal_cals_regression": ["std scaling", "isotonic (Kuleshov)", "CRUDE", "σ-binning"]}
RECAL_CLS = {"recal_cals_classification": ["temperature scaling", "histogram binning", "isotonic", "BBQ"]}


def scenarios(n: int, fast_ci: bool) -> list[dict]:
    reg, cls = regression_set(n), classification_set(n)
    no_ci_reg = {"reg_resamples": 0, "reg_sims": 0} if fast_ci else {}
    no_ci_cls = {"cls_resamples": 0, "cls_sims": 0} if fast_ci else {}
    return [
        {"page": "Regression", "file": "regression.py", "pset": reg, "state": no_ci_reg, "run": False,
         "toggle": ("reg_n_bins", "slider", 15, 10)},
        {"page": "Classification", "file": "classification.py", "pset": cls, "state": no_ci_cls, "run": False,
         "toggle": ("cls_n_bins", "slider", 15, 10)},
        {"page": "Recalibrate (regression)", "file": "recalibrate.py", "pset": reg, "state": RECAL_REG, "run": True,
         "toggle": ("recal_dl_fig", "selectbox", "Quantile calibration (Kuleshov)", "RMSE vs RMV (Levi)")},
        {"page": "Recalibrate (classification)", "file": "recalibrate.py", "pset": cls, "state": RECAL_CLS,
         "run": True, "toggle": ("recal_dl_fig", "selectbox", "Reliability diagram", "Confidence histogram")},
    ]


def set_widget(at, key: str, kind: str, value) -> None:
    widget = getattr(at, kind)(key=key)
    if kind == "selectbox":
        widget.select(value)
    else:
        widget.set_value(value)


def measure_payload(n: int) -> list[dict]:
    rows = []
    for sc in scenarios(n, fast_ci=True):
        at = app_test(sc["file"], sc["pset"], sc["state"])
        t_first = timed_run(at)
        t_compute = click_run(at) if sc["run"] else t_first
        sizes = payloads(at)
        rows.append({"page": sc["page"], "n": n, "charts": len(sizes), "max_bytes": max(sizes, default=0),
                     "total_bytes": sum(sizes), "compute_s": t_compute})
        print(f"  payload {sc['page']:<30} N={n:>9,}: {len(sizes)} charts, max {max(sizes, default=0):>8,} B, "
              f"total {sum(sizes):>9,} B  (first run {t_compute:.1f} s)", flush=True)
    return rows


def measure_redraw(n: int, repeats: int) -> list[dict]:
    rows = []
    for sc in scenarios(n, fast_ci=False):
        at = app_test(sc["file"], sc["pset"], sc["state"])
        cold = timed_run(at)
        if sc["run"]:
            cold += click_run(at)
        key, kind, a, b = sc["toggle"]
        set_widget(at, key, kind, b)
        cold_change = timed_run(at)  # first time with value b: heavy work recomputed (diagnostics pages)
        times: list[float] = []
        script: list[float] = []
        cpu: list[float] = []
        for i in range(repeats):
            set_widget(at, key, kind, a if i % 2 == 0 else b)
            times.append(timed_run(at, script, cpu))
        noop = [timed_run(at) for _ in range(max(2, repeats // 2))]
        sizes = payloads(at)
        row = {"page": sc["page"], "n": n, "control": key, "cold_first_s": cold, "cold_change_s": cold_change,
               "redraw_median_s": statistics.median(times), "redraw_max_s": max(times),
               "script_median_s": statistics.median(script), "script_max_s": max(script),
               "script_cpu_median_s": statistics.median(cpu),
               "rerun_no_change_s": statistics.median(noop), "charts": len(sizes), "total_bytes": sum(sizes),
               "max_bytes": max(sizes, default=0)}
        rows.append(row)
        print(f"  redraw  {sc['page']:<30} N={n:>9,}: cold {cold:.2f} s, new {key} {cold_change:.2f} s, "
              f"cached toggle: AppTest run median {1000 * row['redraw_median_s']:.0f} ms (max "
              f"{1000 * row['redraw_max_s']:.0f} ms), page script median {1000 * row['script_median_s']:.0f} ms "
              f"(CPU {1000 * row['script_cpu_median_s']:.0f} ms); "
              f"no-op rerun {1000 * row['rerun_no_change_s']:.0f} ms", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--payload-n", type=float, default=1e6, help="rows for the payload measurement")
    ap.add_argument("--redraw-n", type=float, default=1e5, help="rows for the redraw measurement")
    ap.add_argument("--repeats", type=int, default=6, help="cached toggles timed per page")
    ap.add_argument("--skip-payload", action="store_true")
    ap.add_argument("--skip-redraw", action="store_true")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)

    out: dict = {"payload": [], "redraw": []}
    if not args.skip_payload:
        print(f"(1) figure payload at N = {int(args.payload_n):,} (CIs off):", flush=True)
        out["payload"] = measure_payload(int(args.payload_n))
    if not args.skip_redraw:
        print(f"(2) redraw at N = {int(args.redraw_n):,} (default CIs, heavy work cached):", flush=True)
        out["redraw"] = measure_redraw(int(args.redraw_n), args.repeats)

    print()
    print(f"{'page':<30} {'N':>10} {'charts':>6} {'largest fig':>12} {'all figs':>10} {'< 1 MB':>7}")
    for r in out["payload"] + [dict(r, note="default CIs") for r in out["redraw"]]:
        ok = "yes" if r["max_bytes"] < LIMIT_BYTES else "NO"
        print(f"{r['page']:<30} {r['n']:>10,} {r['charts']:>6} {r['max_bytes'] / 1e3:>9.1f} kB "
              f"{r['total_bytes'] / 1e3:>7.1f} kB {ok:>7}")
    if out["redraw"]:
        print()
        print(f"{'page':<30} {'N':>10} {'control':<14} {'cold':>8} {'AppTest med':>12} {'max':>7} "
              f"{'script med':>11} {'max':>7} {'script CPU':>11} {'< 200 ms':>9}")
        for r in out["redraw"]:
            ok = "yes" if r["script_median_s"] < LIMIT_SECONDS else "NO"
            print(f"{r['page']:<30} {r['n']:>10,} {r['control']:<14} {r['cold_first_s']:>7.2f}s "
                  f"{1000 * r['redraw_median_s']:>10.0f}ms {1000 * r['redraw_max_s']:>5.0f}ms "
                  f"{1000 * r['script_median_s']:>9.0f}ms {1000 * r['script_max_s']:>5.0f}ms "
                  f"{1000 * r['script_cpu_median_s']:>9.0f}ms {ok:>9}")
        load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
        print(f"(load average during the run: {' '.join(load)} on {__import__('os').cpu_count()} cores)")
    dest = ROOT / "bench" / "out"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "app.json").write_text(json.dumps(out, indent=2))
    print(f"\nwrote {dest / 'app.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
