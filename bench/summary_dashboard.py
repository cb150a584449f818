"""Selection redraw from a summary at any N: the server time of a σ-bin or confidence-bin
selection on the Regression / Classification page when the loaded data is a summary.

``--build`` makes the summaries once: N synthetic rows summarised in process, chunk by chunk (NumPy, no data set
on disk; each chunk's rows drawn from its own seed), merged, and written as summary files (the format of the
CLI's ``--save-summary``).  Regression: Gaussian (mean, std) whose true spread grows faster than σ (so the σ-bins
differ), σ-bins from the first chunk's equal-count edges (``spec_from_sample``).  Classification: K = 10
probabilities, over-confident (labels from the probabilities at temperature 1.3), equal-width bins.

Without ``--build`` it reads the files and times, per selection, the page's redraw functions — the linked diagram
tables (``views.summary.selection_tables``), the metrics of the selected rows with their intervals
(``selection_metrics``, regression) and the Plotly figures the page draws from them — median of ``--repeats``,
next to the time of the full report of the summary (done once per summary on the page, cached).

    nice -n 10 python bench/summary_dashboard.py --build --rows 1e8      # once (minutes)
    python bench/summary_dashboard.py --rows 1e8 [--repeats 21]

Read the CPU columns on a shared machine: wall time there measures the other jobs too.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calib_core as cc  # noqa: E402
from calib_core.base.predictions import ALL, PredictionSet
from calib_core.scale import summary as S

OUT = Path("/tmp/calib_summary_bench")


def _regression_chunk(start: int, n: int, seed: int) -> PredictionSet:
    rng = np.random.default_rng([seed, start])
    mu = rng.standard_normal(n)
    sd = np.exp(0.5 * rng.standard_normal(n))
    y = mu + sd ** 1.25 * rng.standard_normal(n)  # error grows faster than σ: small σ over-, large under-stated
    return PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, sd), layout="gaussian",
                         row_number=np.arange(start + 1, start + n + 1, dtype=np.int64))


def _classification_chunk(start: int, n: int, seed: int, k: int = 10) -> PredictionSet:
    rng = np.random.default_rng([seed, start, 1])
    logits = 2.0 * rng.standard_normal((n, k))
    probs = cc.softmax(logits)
    truth = np.cumsum(cc.softmax(logits / 1.3), axis=1)
    labels = np.minimum((truth < rng.random(n)[:, None]).sum(axis=1), k - 1)
    return PredictionSet(task="classification", labels=labels, probs=probs, layout="probs",
                         row_number=np.arange(start + 1, start + n + 1, dtype=np.int64))


def build(task: str, rows: int, chunk: int, seed: int = 0) -> Path:
    """Summarise ``rows`` synthetic rows of ``task`` chunk by chunk and write the summary file."""
    make = _regression_chunk if task == "regression" else _classification_chunk
    t0 = time.perf_counter()
    first = make(0, min(chunk, rows), seed)
    spec = S.spec_from_sample(first, n_bins=15)
    total = None
    start = 0
    while start < rows:
        n = min(chunk, rows - start)
        pset = first if start == 0 else make(start, n, seed)
        part = S.summarize(pset, spec=spec)
        total = part if total is None else S.merge(total, part)
        start += n
        print(f"  {task}: {start:,} rows summarised, {time.perf_counter() - t0:.0f} s", flush=True)
    assert total is not None
    total.source = f"synthetic {task}, {rows:.0e} rows"
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{task}_{rows:.0e}.summary"
    path.write_bytes(total.to_bytes())
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB) in {time.perf_counter() - t0:.0f} s "
          f"({rows / (time.perf_counter() - t0):,.0f} rows/s)", flush=True)
    return path


def upgrade_v1(path: Path) -> bool:
    """Rewrite a format-version-1 summary file of this benchmark as version 2 in place (returns whether it did):
    version 2 only renamed the all-rows group key from "(all)" to ``ALL`` (" (all)"), and these synthetic
    summaries have no other group — the arrays are copied byte for byte, so rebuilding 10⁸ rows is not needed."""
    import io
    import json
    import zipfile

    from calib_core.base.mergeable import FORMAT_VERSION

    with zipfile.ZipFile(path) as zf:
        header = json.loads(zf.read("header.json"))
        if header.get("version") != 1:
            return False
        entries = {info.filename: zf.read(info.filename) for info in zf.infolist() if info.filename != "header.json"}
    old_all = "(all)"
    assert all(part["group"] == old_all for part in header["parts"]), "only all-rows summaries are upgraded"
    for part in header["parts"]:
        part["group"] = ALL
    spec = header["spec"]
    spec["sigma_edges"] = [[m, ALL if g == old_all else g, *rest] for m, g, *rest in spec.get("sigma_edges", [])]
    spec["conf_edges"] = [[m, ALL if g == old_all else g, *rest] for m, g, *rest in spec.get("conf_edges", [])]
    if "version" in spec:
        spec["version"] = FORMAT_VERSION
    header["version"] = FORMAT_VERSION
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("header.json", json.dumps(header))
        for name, data in entries.items():
            out.writestr(name, data)
    path.write_bytes(buf.getvalue())
    return True


def _median_ms(fn, repeats: int) -> float:
    """Median CPU time of ``fn`` in ms (``time.thread_time``: unaffected by other processes on the machine)."""
    times = []
    for _ in range(repeats):
        t = time.thread_time()
        fn()
        times.append(1000.0 * (time.thread_time() - t))
    return statistics.median(times)


def timings(path: Path, repeats: int) -> None:
    from calib_core import plots
    from views import pages as views
    from views import summary as summary_views
    from views.selection import with_selected

    summ = summary_views.read_summary(path.read_bytes(), source=path.name)
    t = time.perf_counter()
    rep = summary_views.summary_report(summ)
    t_report = time.perf_counter() - t
    task = summ.spec.task
    model = str(summ.models[0])
    colors = plots.model_colors([model])
    print(f"\n{path.name}: {summ.n_rows:,} rows, {task}, {summ.spec.n_bins} bins; full report (once per summary, "
          f"cached by the page) {t_report:.2f} s wall; CPU ms per selection, median of {repeats}:")
    print(f"{'selection':22s} {'rows selected':>14s} {'tables ms':>10s} {'metrics ms':>11s} {'figures ms':>11s} "
          f"{'total ms':>9s}")
    for bins in ((0,), (7,), (13, 14), tuple(range(5)), tuple(range(15))):
        sel = {model: bins}

        def tables():
            return summary_views.selection_tables(summ, sel)

        def metrics():
            return summary_views.selection_metrics(summ, sel)  # regression: 1,000 bootstrap replicates

        out = tables()

        def figures():
            if task == "regression":
                for name, build in (("calibration_curve", plots.calibration_curve_figure),
                                    ("pit_histogram", plots.pit_histogram_figure)):
                    t_, dashes, cols = with_selected(views.diagram_tables(rep, name), out.get(name), colors)
                    build(t_, colors=cols, dashes=dashes)
            else:
                rel = {model: rep.diagrams[(model, ALL)]["reliability"]}
                plots.mark_selected(plots.reliability_figure(rel, colors=colors), sel)
                plots.mark_selected(plots.confidence_histogram_figure(rel, colors=colors), sel)

        t_tab, t_met, t_fig = (_median_ms(f, repeats) for f in (tables, metrics, figures))
        print(f"{str(bins):22s} {summary_views.selected_rows(summ, sel):14,d} {t_tab:10.1f} {t_met:11.1f} "
              f"{t_fig:11.1f} {t_tab + t_met + t_fig:9.1f}")


def page_timings(path: Path, repeats: int) -> None:
    """The whole page run of a bin selection (AppTest, in this process): CPU time of the page's own thread
    (``time.thread_time``: what the server spends, whatever else the machine runs) and wall time
    (``page_run_ms``), median over ``repeats`` selections of different bins."""
    import uuid

    import dashboard.summary_pages as pages
    from tests.app.test_pages import bins_points, new_app, plotly_select, specs
    from views import summary as summary_views

    summ = summary_views.read_summary(path.read_bytes(), source=path.name)
    task = summ.spec.task
    name = "regression_page" if task == "regression" else "classification_page"
    original = getattr(pages, name)
    cpu: list[float] = []

    def timed(*args, **kwargs):
        t0 = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            cpu.append(1000.0 * (time.thread_time() - t0))

    setattr(pages, name, timed)
    at = new_app()
    at.session_state["summary"] = summ
    at.session_state["summary_token"] = f"summary:{uuid.uuid4().hex}"
    at.session_state["summary_name"] = path.name
    at.switch_page(f"pages/{task}.py").run()
    first_wall, first_cpu = at.session_state["page_run_ms"][task], cpu[-1]
    cpu.clear()
    wall = []
    chart, role = ("regsum_levi_chart", "bins") if task == "regression" else ("clssum_rel_chart", "column")
    model = str(summ.models[0])
    rng = np.random.default_rng(0)
    for _ in range(repeats):
        bins = sorted(rng.choice(summ.spec.n_bins, size=int(rng.integers(1, 4)), replace=False).tolist())
        points = bins_points(specs(at)[chart], model, bins, role=role)
        if not points:  # an empty confidence bin is not drawn
            continue
        plotly_select(at, chart, points)
        wall.append(at.session_state["page_run_ms"][task])
    setattr(pages, name, original)
    print(f"  page run ({task} page, AppTest): first draw {first_cpu:.0f} ms CPU / {first_wall:.0f} ms wall "
          f"(the report of the summary, once); a selection: median {statistics.median(cpu):.0f} ms CPU "
          f"(max {max(cpu):.0f}), median {statistics.median(wall):.0f} ms wall over {len(wall)} selections")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e8)
    ap.add_argument("--chunk", type=float, default=5e6)
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--tasks", default="regression,classification")
    ap.add_argument("--repeats", type=int, default=21)
    args = ap.parse_args()
    rows = int(args.rows)
    for task in args.tasks.split(","):
        path = OUT / f"{task}_{rows:.0e}.summary"
        if args.build:
            chunk = int(args.chunk) if task == "regression" else min(int(args.chunk), 2_000_000)
            path = build(task, rows, chunk)
        else:
            if upgrade_v1(path):
                print(f"upgraded {path.name} from format version 1 to 2 (group key renamed, arrays unchanged)")
            timings(path, args.repeats)
            page_timings(path, args.repeats)


if __name__ == "__main__":
    main()
