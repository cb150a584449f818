"""Benchmark: server CPU time of each control change of the load scenario on the diagnosis pages at 10⁵ rows.

    python bench/page_cpu.py                          # Regression and Classification, 3 data sets each
    python bench/page_cpu.py --pages regression --repeats 5 --n 1e5
    python bench/page_cpu.py --profile "n_bins 16"    # cProfile of that step (first repeat), our code only
    PROF_FILTER=. PROF_SORT=tottime python bench/page_cpu.py --pages classification --profile "bins 16"  # all code
    python bench/page_cpu.py --pages labs             # the lab scenario's steps on labs 1-5

The steps are those of ``bench/load.py``'s regression session run headless with
``streamlit.testing.v1.AppTest`` through ``app.py`` (its scripts compiled once, as by the server's one bytecode
cache: ``--script-cache``) on data put into the session as the Data page does: the first
diagnosis, then σ-bins 15 → 16, binning → equal width, rows → cal, binning → equal count, rows → all (seen before),
σ-bins 16 → 15 (seen before); then a σ-bin click in the Levi diagram (a Plotly selection event), the view toggles
(log axes on, the curve's ECDF view, both back), Clear selection, the "CORP quantile reliability" tab, its level τ
0.5 → 0.95 and back, the "Intervals" tab; each step's median is marked against the ≤ 50 ms target of a control
change on unchanged data ("new rows": a step that diagnoses rows not diagnosed before).  Classification (K = 10;
``classification_binary``: K = 2): ``classification_steps``, marked the same way.  Each repeat uses new data
(seed = repeat), so nothing is a cache hit that would not be one for a new user.  Labs
(``--pages labs`` or ``lab_random_sigma,…``): ``bench/load.py``'s lab scenario for one student of rank k = repeat —
open the lab (caches emptied first: the class's first student), Seed → k, the second slider + 1, Seed → 0.

Two figures per step, both insensitive to other processes competing for the cores (on 2 shared cores the wall time
is not): the CPU time of the script thread (``time.thread_time`` over ``AppTest``'s script run), and the server
**process** CPU of the step (``time.process_time``, every thread of this process: the script thread, the core's
worker threads such as its parallel sorts, and the garbage collector; not the background prefetch thread:
below), plus what the server does with the run's messages outside the script thread — serialising each ForwardMsg
for the websocket (``SerializeToString``) — and,
when ``runner.postScriptGC`` is true in ``.streamlit/config.toml`` (Streamlit's default), the full garbage
collection Streamlit runs after every page run (``AppTest`` skips it; ``--post-gc on|off`` overrides the config).
The ≤ 50 ms mark is on the process CPU.  With n sessions redrawing at the same instant, the server (Python scripts
serialised by the GIL) finishes the median one after about (n + 1)/2 times that CPU time, the last after n times.
Medians over the repeats.

**Background prefetch.**  Some summaries are prepared in a background thread before the user asks for them (the
CORP quantile diagram's band: its current level in the server's idle time after the rows are first drawn, every
level of its control once its tab is open; ``dashboard.cache.prefetch``).  Its CPU is not counted in the step's
figures: it is reported as its own line per step that started it (CPU of the prefetch thread during the step and
after it, and the wall time the bench then waits).  After every step the bench waits until every prefetch has
ended, as a user's think time between two controls would allow (an idle window of 0.25 s, then ~70 ms of CPU per
level on a free core), so each step is measured with the prefetches it started finished.  A user quicker than that
gets a step that waits for the running job or computes its level itself (never twice): ``--think none`` measures
that case.  ``bench/load.py`` measures the real server's process CPU per step (from /proc, in 10 ms ticks) over its
websocket protocol.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import statistics
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

_CPU_MS: list[float] = []
_PROC_MS: list[float] = []  # process CPU of each run: script run + serialising its messages (+ the post-run gc)
_POST_GC = [False]  # run gc.collect(2) after each run, as Streamlit's runner.postScriptGC does
_PROFILE: dict[str, str | None] = {"step": None, "current": None}
_THINK = [True]  # wait for the background prefetches after each step (--think none: the next step at once)
_BG_TOTAL_MS: list[float] = []  # CPU of all the background prefetches of each session
_BG_MS: list[float] = []  # CPU of the background prefetch thread within each run (taken out of its process CPU)


def _background_cpu() -> float:
    """CPU seconds used so far by the dashboard's background prefetch thread (``dashboard.cache.prefetch``)."""
    from dashboard.cache import PREFETCH_LOG

    return sum(run.cpu_seconds() for run in list(PREFETCH_LOG))


def _think_time() -> tuple[float, float]:
    """Wait until every background prefetch has ended, as a user's think time between two controls would allow:
    (CPU ms the prefetches used meanwhile, wall ms waited)."""
    from dashboard.cache import PREFETCH_LOG

    b0, w0 = _background_cpu(), time.perf_counter()
    for run in list(PREFETCH_LOG):
        run.done.wait()
    return 1000.0 * (_background_cpu() - b0), 1000.0 * (time.perf_counter() - w0)


def _share_script_cache() -> None:
    """Every ``AppTest`` run reads one bytecode cache, as every rerun of a real server does.

    Streamlit's ``Runtime`` makes one ``ScriptCache`` and hands it to every session, so ``app.py`` and each page are
    read, magic-transformed and compiled once per server process; ``AppTest``'s ``LocalScriptRunner`` makes a new one
    for each run, which would add that compile (~2 ms for the app and a page) to every step measured here."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import local_script_runner as lsr

    shared = ScriptCache()
    lsr.ScriptCache = lambda: shared


def _record_cpu() -> None:
    """Record the script thread's CPU time of every AppTest run in _CPU_MS (and profile the chosen step)."""
    from streamlit.testing.v1 import local_script_runner as lsr

    run = lsr.LocalScriptRunner._run_script_thread

    def timed(self) -> None:
        profile = cProfile.Profile() if _PROFILE["step"] and _PROFILE["step"] == _PROFILE["current"] else None
        b0, c0, p0 = _background_cpu(), time.thread_time(), time.process_time()
        if profile:
            profile.enable()
        try:
            run(self)
        finally:
            _CPU_MS.append(1000.0 * (time.thread_time() - c0))
            for msg in self.forward_msgs():  # what the server's event loop does with each message of the run
                msg.SerializeToString()
            if _POST_GC[0]:
                gc.collect(2)
            p1, b1 = time.process_time(), _background_cpu()
            _BG_MS.append(1000.0 * (b1 - b0))  # a prefetch thread running beside the run: its own line
            _PROC_MS.append(1000.0 * (p1 - p0) - _BG_MS[-1])
            if profile:
                profile.disable()
                out = io.StringIO()
                where = os.environ.get("PROF_FILTER", str(ROOT))  # a regular expression of file names
                order = os.environ.get("PROF_SORT", "cumulative")  # e.g. tottime: each function's own time
                pstats.Stats(profile, stream=out).sort_stats(order).print_stats(where, 50)
                print(out.getvalue(), file=sys.stderr)
                _PROFILE["step"] = None

    lsr.LocalScriptRunner._run_script_thread = timed


def steps(page: str):
    """(name, change) of each step; change(at) sets the control (None: a first run)."""
    def slider(key: str, value: int):
        return lambda at: at.slider(key=key).set_value(value)

    def select(key: str, value: str):
        return lambda at: at.selectbox(key=key).set_value(value)

    def state(key: str, value: str):
        return lambda at: at.session_state.__setitem__(key, value)

    if page in LAB_SLIDERS:
        seed_key, second_key = LAB_SLIDERS[page]
        return [("open lab", None), ("Seed → k", lambda at: at.slider(key=seed_key).set_value(_RANK[0])),
                ("second + 1", lambda at: at.slider(key=second_key).set_value(at.slider(key=second_key).value + _step(
                    at.slider(key=second_key)))),
                ("Seed → 0", lambda at: at.slider(key=seed_key).set_value(0))]
    if page == "regression":
        return regression_steps()
    return classification_steps(page)


def classification_steps(page: str):
    """(name, change) of the Classification page's steps (K = 10, or binary for ``classification_binary``): every
    control that leaves the data alone (bins, binning, view toggles, a reliability-bin click, the binary semantics),
    then new rows (rows → cal: a new diagnosis, not a redraw) and rows seen before.
    A change may return widget states to run with (the bin click's Plotly selection event)."""
    def slider(key: str, value: int):
        return lambda at: at.slider(key=key).set_value(value)

    def state(key: str, value):
        return lambda at: at.session_state.__setitem__(key, value)

    def click(at):  # a click on the reliability diagram's most populated bin (the on_select event)
        import json

        from streamlit.proto.WidgetStates_pb2 import WidgetState

        chart = next(c for c in at.get("plotly_chart") if c.key == "cls_rel_chart")
        spec = json.loads(chart.proto.spec)
        curve = next(i for i, d in enumerate(spec["data"]) if d.get("meta", {}).get("role") == "bars")
        event = {"selection": {"points": [{"curve_number": curve, "point_index": 0, "point_number": 0,
                                           "customdata": _first_bin(spec["data"][curve])}],
                               "point_indices": [0], "box": [], "lasso": []}}
        states = at._tree.get_widget_states()
        states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(event)))
        return states  # run with these widget states

    last = [("target → positive", state("cls_target", "positive class"))] if page == "classification_binary" else []
    return [("first diagnosis", None), ("bins 16", slider("cls_n_bins", 16)),
            ("bins 15 (seen)", slider("cls_n_bins", 15)),
            ("binning → mass", state("cls_strategy", "equal mass")),
            ("binning → width (seen)", state("cls_strategy", "equal width")),
            ("histogram → log", state("cls_hist_scale", "log")), ("smooth off", state("cls_smooth", False)),
            ("bin click", click), *last,
            ("rows → cal (new rows)", lambda at: at.selectbox(key="cls_rows").set_value("cal")),
            ("rows → all (seen)", lambda at: at.selectbox(key="cls_rows").set_value("all"))]


def _first_bin(trace: dict) -> int:
    """The bin number of a trace's first point (customdata, plain or base64-encoded)."""
    import base64

    import numpy as np

    cd = trace["customdata"]
    if isinstance(cd, dict) and "bdata" in cd:
        cd = np.frombuffer(base64.b64decode(cd["bdata"]), dtype=np.dtype(cd["dtype"]))
    return int(np.asarray(cd).reshape(len(cd), -1)[0, 0])


#: The steps on which a redraw must cost at most 50 ms of script CPU (the data unchanged).
CLASSIFICATION_TARGET_MS = 50.0


def regression_steps():
    """(name, change) of the Regression scenario: ``bench/load.py``'s steps, then a σ-bin click in the Levi diagram,
    the view toggles (log axes, the curve's ECDF view), the selection cleared, the CORP tab and its level τ.  A
    change may return widget states to run with (a Plotly selection event) instead of changing a widget."""
    def slider(key: str, value: int):
        return lambda at: at.slider(key=key).set_value(value)

    def select(key: str, value: str):
        return lambda at: at.selectbox(key=key).set_value(value)

    def state(key: str, value):
        return lambda at: at.session_state.__setitem__(key, value)

    def toggle(key: str, value: bool):
        return lambda at: at.toggle(key=key).set_value(value)

    def seg(key: str, value):
        return lambda at: at.segmented_control(key=key).set_value(value)

    return [("first diagnosis", None), ("n_bins 16", slider("reg_n_bins", 16)),
            ("binning → width", state("reg_binning", "equal width")), ("rows → cal", select("reg_rows", "cal")),
            ("binning → count", state("reg_binning", "equal count")),
            ("rows → all (seen)", select("reg_rows", "all")), ("n_bins 15 (seen)", slider("reg_n_bins", 15)),
            ("σ-bin click (bin 3)", lambda at: _levi_click(at, 3)),
            ("Levi log axes on (view)", toggle("reg_levi_log", True)),
            ("curve → ECDF difference (view)", seg("reg_curve_view", "ECDF difference")),
            ("Levi log axes off (view, seen)", toggle("reg_levi_log", False)),
            ("curve → curve (view, seen)", seg("reg_curve_view", "curve")),
            ("clear selection", lambda at: at.button(key="reg_clear").click()),
            ("tab → CORP reliability", state("reg_more_tab", "CORP quantile reliability")),
            ("level τ 0.5 → 0.95", seg("reg_qs_level", 0.95)), ("level τ → 0.5 (seen)", seg("reg_qs_level", 0.5)),
            ("tab → Intervals", state("reg_more_tab", "Intervals"))]


#: Steps whose data (rows diagnosed) change: the ≤ 50 ms target is for control changes on the same data.
NEW_DATA_STEPS = {"first diagnosis", "rows → cal"}
TARGET_MS = 50.0  #: script CPU of a control change on unchanged data (the redraw target)


def _levi_click(at, bin_index: int):
    """Widget states of a click on σ-bin ``bin_index`` of the Levi diagram's first model (a Plotly selection event,
    as the browser sends it)."""
    import base64
    import json

    import numpy as np
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    chart = next(c for c in at.get("plotly_chart") if c.key == "reg_levi_chart")
    spec = json.loads(chart.proto.spec)
    curve, trace = next((i, d) for i, d in enumerate(spec["data"]) if d.get("meta", {}).get("role") == "bins")
    cd = trace["customdata"]
    cd = (np.frombuffer(base64.b64decode(cd["bdata"]), dtype=np.dtype(cd["dtype"])) if isinstance(cd, dict)
          else np.asarray(cd))
    points = [{"curve_number": curve, "point_index": int(i), "point_number": int(i), "customdata": int(cd[i])}
              for i in range(len(cd)) if int(cd[i]) == bin_index]
    states = at._tree.get_widget_states()
    event = {"selection": {"points": points, "point_indices": [p["point_index"] for p in points], "box": [],
                           "lasso": []}}
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(event)))
    return states


#: Lab pages of bench/load.py's lab scenario: (Seed slider key, second slider key).
LAB_SLIDERS = {"lab_random_sigma": ("lab1_seed", "lab1_bins"), "lab_cauchy": ("lab2_seed", "lab2_bins"),
               "lab_marginal": ("lab3_seed", "lab3_bins"), "lab_isotonic": ("lab4_seed", "lab4_n_cal"),
               "lab_nlpd": ("lab5_seed", "lab5_steps")}
_RANK = [1]  # the student's rank k within the lab (= the repeat)


def _mark(page: str, name: str, cpu_ms: list[float]) -> str:
    """A Classification step's mark against :data:`CLASSIFICATION_TARGET_MS` (steps that change no data)."""
    if not page.startswith("classification") or name.startswith(("first", "rows → cal")):
        return " (new data) |"
    return " ✓ |" if statistics.median(cpu_ms) <= CLASSIFICATION_TARGET_MS else " ✗ |"


def _step(slider) -> float:
    """One keyboard step of a slider (its ``step``)."""
    return slider.step if getattr(slider, "step", None) else 1


def run_page(page: str, n: int, seed: int) -> dict[str, tuple[float, float]]:
    """{step: (script CPU ms, process CPU ms)} of one new session of ``page`` on new data (``seed``)."""
    from streamlit.testing.v1 import AppTest

    import dashboard

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    dashboard.warm_up_core().join()  # a server whose warm-up has run (the teacher opened it)
    if page in LAB_SLIDERS:
        from dashboard.cache import clear_caches

        clear_caches()
        _RANK[0] = seed
        at.switch_page(str(ROOT / "pages" / f"{page}.py"))
        return _run_steps(at, page)

    from app import classification_set, regression_set  # bench/app.py

    pset = (regression_set(n, seed=seed) if page == "regression" else
            classification_set(n, k=2 if page == "classification_binary" else 10, seed=seed))
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = f"bench:{page}:{n}:{seed}:{os.getpid()}"
    at.session_state["pset_name"] = "bench.csv"
    at.session_state["pset_origin"] = "upload"
    at.switch_page(str(ROOT / "pages" / f"{page.removesuffix('_binary')}.py"))
    return _run_steps(at, page)


def _run_steps(at, page: str) -> dict[str, tuple[float, float]]:
    out = {}
    b_start = _background_cpu()
    for name, change in steps(page):
        _PROFILE["current"] = name
        states = change(at) if change is not None else None
        if hasattr(states, "widgets"):  # a Plotly selection event: run with these widget states
            at._run(states)
        else:
            at.run()
        if at.exception:
            raise RuntimeError([e.value for e in at.exception])
        background, waited = _think_time() if _THINK[0] else (0.0, 0.0)
        out[name] = (_CPU_MS[-1], _PROC_MS[-1], _BG_MS[-1] + background, waited)
    _think_time()
    _BG_TOTAL_MS.append(1000.0 * (_background_cpu() - b_start))  # the session's prefetches, in and between steps
    return out


def print_regression(runs: list[dict[str, tuple[float, float]]]) -> None:
    """The Regression scenario's table: every step's script-thread and process CPU with the ≤ 50 ms target of a
    control change on unchanged data marked on the process CPU (steps that diagnose new rows: "new rows")."""
    print(f"\n| regression step | script CPU ms (median) | process CPU ms (median) | process min | process max | "
          f"≤ {TARGET_MS:.0f} ms |\n|---|---|---|---|---|---|")
    controls, scripts = [], []
    for name in runs[0]:
        v = [r[name][1] for r in runs]
        script = statistics.median([r[name][0] for r in runs])
        med = statistics.median(v)
        mark = "new rows" if name in NEW_DATA_STEPS else ("yes" if med <= TARGET_MS else "**no**")
        if name not in NEW_DATA_STEPS:
            controls.append(med)
            scripts.append(script)
        print(f"| {name} | {script:.0f} | {med:.0f} | {min(v):.0f} | {max(v):.0f} | {mark} |", flush=True)
    print(f"| mean of the control-change medians ({len(controls)} steps) | {statistics.mean(scripts):.0f} | "
          f"{statistics.mean(controls):.0f} | | | {sum(c <= TARGET_MS for c in controls)}/{len(controls)} within |")
    background = [name for name in runs[0] if any(r[name][2] > 0.5 for r in runs)]
    if background:
        print("\n| background prefetch CPU during the step and while the bench waits after it (not in the step's "
              "figures above) | CPU ms (median) | min | max | wall ms waited after the step (median) |\n"
              "|---|---|---|---|---|")
        for name in background:
            v = [r[name][2] for r in runs]
            waited = statistics.median([r[name][3] for r in runs])
            print(f"| {name} | {statistics.median(v):.0f} | {min(v):.0f} | {max(v):.0f} | {waited:.0f} |")
        total = _BG_TOTAL_MS[-len(runs):]
        print(f"| all the session's prefetches (also between steps) | {statistics.median(total):.0f} | "
              f"{min(total):.0f} | {max(total):.0f} | |")


def post_script_gc() -> bool:
    """``runner.postScriptGC`` as the server runs it: ``.streamlit/config.toml``'s value, else Streamlit's default
    (true)."""
    config = ROOT / ".streamlit" / "config.toml"
    options = tomllib.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    return bool(options.get("runner", {}).get("postScriptGC", True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", default="regression,classification")
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--repeats", type=int, default=3, help="new sessions on new data per page")
    ap.add_argument("--profile", default=None, help="cProfile this step of the first repeat (to stderr)")
    ap.add_argument("--post-gc", choices=("config", "on", "off"), default="config",
                    help="count Streamlit's full garbage collection after each run (runner.postScriptGC) in the "
                    "process CPU: as .streamlit/config.toml says (default), or on / off")
    ap.add_argument("--think", choices=("wait", "none"), default="wait",
                    help="after each step, wait until the background prefetches have ended (a user's think time; "
                    "default) or go on at once (none: a user quicker than the prefetch)")
    ap.add_argument("--script-cache", choices=("server", "per-run"), default="server",
                    help="compile app.py and the page once for all runs, as the server's one ScriptCache does "
                    "(default), or once per run, as AppTest alone does")
    args = ap.parse_args()
    if args.script_cache == "server":
        _share_script_cache()
    _THINK[0] = args.think == "wait"
    _POST_GC[0] = post_script_gc() if args.post_gc == "config" else args.post_gc == "on"
    _record_cpu()
    _PROFILE["step"] = args.profile
    n = int(args.n)
    print(f"Script-thread and process CPU per step at N = {n:,} (median of {args.repeats} sessions on new data; ms; "
          f"full garbage collection after each run: {'yes' if _POST_GC[0] else 'no'})")
    pages = args.pages.replace("labs", ",".join(LAB_SLIDERS)).split(",")
    for page in pages:
        runs = [run_page(page, n, seed) for seed in range(1, args.repeats + 1)]
        if page == "regression":
            print_regression(runs)
            continue
        target = (" ≤ 50 ms |", "---|") if page.startswith("classification") else ("", "")
        print(f"\n| {page} step | CPU ms (median) | min | max | process CPU ms (median) |{target[0]}\n"
              f"|---|---|---|---|---|{target[1]}")
        for name in runs[0]:
            v = [r[name][0] for r in runs]
            proc = statistics.median([r[name][1] for r in runs])
            print(f"| {name} | {statistics.median(v):.0f} | {min(v):.0f} | {max(v):.0f} | {proc:.0f} |"
                  f"{_mark(page, name, v)}", flush=True)
        redraws = [statistics.median([r[k][0] for r in runs]) for k in list(runs[0])[1:]]
        print(f"| mean of the redraw medians | {statistics.mean(redraws):.0f} | | | |")
        if page in LAB_SLIDERS:
            every = [statistics.median([r[k][0] for r in runs]) for k in runs[0]]
            print(f"| mean of the step medians (open included) | {statistics.mean(every):.0f} | | | |")
    print(f"\nload average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
