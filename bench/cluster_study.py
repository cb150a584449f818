"""Simulation study of dependence-aware verdicts: forecasts that share a date's surprise across locations.

    python bench/cluster_study.py                                  # the study (resumable; --jobs 2 on two cores)
    python bench/cluster_study.py --dates 20 50 --reps 100 --power-reps 50
    python bench/cluster_study.py --report                         # tables into docs/benchmarks/cluster-inference.md

Forecast data are not independent rows.  Every forecast made on one date shares that date's surprise across
locations, and consecutive dates share slow waves.  A verdict that treats D × L rows as independent then sees far
more evidence than there is, and it raises false alarms on perfectly calibrated forecasts.  This study measures
that, and how the dependence-aware verdicts of ``cc.diagnose(ps, cluster=..., block_length=...)`` hold their level.

**Data.** D dates × L = 50 locations; per row a centre c_{d,l} ~ N(0, 2²) and a scale s_{d,l} = exp(N(0, 0.5²))
(forecasts vary in sharpness), the target y = c + s·e with standard-normal errors that share a date effect:

    e_{d,l} = √½·a_d + √½·r_{d,l},     r_{d,l} i.i.d. N(0, 1),

``date`` dependence: a_d i.i.d. N(0, 1); ``ar1``: a_d a stationary AR(1) in d, a_d = ρ·a_{d−1} + √(1 − ρ²)·u_d
with ρ = 0.7 and unit variance; ``ar1loc``: a_d i.i.d. and each location's r_{d,l} a stationary AR(1) over the dates
(ρ = 0.7, unit variance) — errors that share a date effect across locations and are autocorrelated in time.  Either
way e_{d,l} ~ N(0, 1) marginally and corr(e_{d,l}, e_{d,l'}) = ½: the
forecast N(c, s²) — the TRUE marginal law of y — is calibrated row by row (probabilistic calibration, Gneiting,
Balabdaoui & Raftery 2007), and so is the quantile set of the forecast hubs' 23 levels 0.01, 0.025, 0.05,
0.10, …, 0.95, 0.975, 0.99 (Bracher et al. 2021) with the true quantiles c + s·Φ⁻¹(τ).  ``none`` (a_d = 0) is the
control without dependence (e_{d,l} = r_{d,l}).  Alternative ``sigma0.8``: the stated scale is 0.8·s
(over-confident); the targets do not change.  Targets always come from the true law, never from a law the tool
fits or interpolates.

**Verdicts compared** on the same data set (the rows carry a ``date`` and a ``location`` column):

* ``iid``: ``cluster=None`` (independent rows; before the option existed: ``cc.diagnose`` without it);
* ``cluster``: ``cluster="date"``, whole dates resampled (cluster bootstrap; Cameron, Gelbach & Miller 2008);
* ``block``: ``cluster="date", block_length="auto"``, moving blocks of round(D^{1/3}) consecutive dates (Künsch 1989).

Per cell (type, dependence, D, method) the family-wise false-alarm rate (share of calibrated data sets headlined
"miscalibrated"; Holm 1979 inside the tool) with its Monte-Carlo standard error, pass / fail against 5 % + 2 MC
s.e.; the power under σ × 0.8; the CPU seconds per diagnosis.  Data sets are seeded per (type, dependence,
forecast, D, repetition); each result is one CSV line, so a stopped run resumes, and a method added later (the
``cluster=`` option) runs on the very data sets the others saw.

References
----------
.. [1] Cameron, A. C., Gelbach, J. B. & Miller, D. L. (2008). Bootstrap-based improvements for inference with
   clustered errors. *The Review of Economics and Statistics* 90(3), 414–427.
.. [2] Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. *Annals of
   Statistics* 17(3), 1217–1241.
.. [3] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
   Statistics* 6(2), 65–70.
.. [4] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
   *Journal of the Royal Statistical Society B* 69(2), 243–268.
.. [5] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
   format. *PLoS Computational Biology* 17(2), e1008618.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import inspect
import json
import shlex
import signal as os_signal
import sys
import time
import zlib
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import signal, special

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from bench.study_runs import commit_id, machine, mc_se  # noqa: E402
from bench.study_runs import repair_tail as _repair_tail  # noqa: E402
from calib_core.diagnosis.regression import diagnose_regression  # noqa: E402

OUT = ROOT / "bench" / "out" / "cluster_study.csv"
PAGE = ROOT / "docs" / "benchmarks" / "cluster-inference.md"
BEGIN = "<!-- cluster-study results: begin (written by python bench/cluster_study.py --report) -->"
END = "<!-- cluster-study results: end -->"

TAU23 = np.concatenate([[0.01, 0.025], np.arange(1, 20) / 20, [0.975, 0.99]])
LOCATIONS = 50
RHO = 0.7
TYPES = ("gaussian", "quantile23")
#: dependence → its label in the report
DEPENDENCE = {"date": "date effect", "ar1loc": f"date effect + each location's AR(1) in time, ρ = {RHO}",
              "ar1": f"date effect that is itself an AR(1), ρ = {RHO}", "none": "independent rows"}
#: forecast → its label in the report
FORECASTS = {"calibrated": "calibrated (false alarms)", "sigma0.8": "σ × 0.8 (power)"}
#: method → the options of ``cc.diagnose``
METHODS = {"iid": {"cluster": None}, "cluster": {"cluster": "date"},
           "block": {"cluster": "date", "block_length": "auto"}}
METHOD_LABELS = {"iid": "i.i.d. rows", "cluster": "whole dates", "block": "moving blocks of dates"}
FIELDS = ["type", "dependence", "forecast", "dates", "rep", "method", "verdict", "p_value", "lead", "n_clusters",
          "clustering", "note", "cpu_s", "wall_s", "commit"]


def has_cluster_option() -> bool:
    """Whether this checkout's ``cc.diagnose`` takes ``cluster=`` / ``block_length=`` (regression).

    Returns
    -------
    bool
        True when both are parameters of ``diagnose_regression``.
    """
    params = inspect.signature(diagnose_regression).parameters
    return "cluster" in params and "block_length" in params


# ----------------------------------------------------------------------------------------------- the data sets
def date_effect(dependence: str, dates: int, rng: np.random.Generator, rho: float = RHO) -> np.ndarray:
    """The date effects a_d, unit variance: i.i.d. N(0, 1), a stationary AR(1), or zeros.

    a_0 ~ N(0, 1), a_d = ρ·a_{d−1} + √(1 − ρ²)·u_d (u_d i.i.d. N(0, 1)), so Var a_d = 1 and corr(a_d, a_{d+k}) = ρ^k.

    Parameters
    ----------
    dependence : {"date", "ar1", "none"}
        The dependence between dates.
    dates : int
        D.
    rng : numpy.random.Generator
        The random stream.
    rho : float, default 0.7
        The AR(1) coefficient.

    Returns
    -------
    ndarray of shape (dates,)
        a_d.
    """
    u = rng.standard_normal(dates)
    if dependence == "none":
        return np.zeros(dates)
    if dependence == "date":
        return u
    innov = np.concatenate([[u[0]], np.sqrt(1.0 - rho**2) * u[1:]])
    return signal.lfilter([1.0], [1.0, -rho], innov)  # a_d = ρ·a_{d−1} + innov_d, a_0 = u_0


def draw(ftype: str, dependence: str, forecast: str, dates: int, rng: np.random.Generator,
         locations: int = LOCATIONS) -> cc.PredictionSet:
    """One data set: D × L rows with ``date`` and ``location`` columns, targets from the true law.

    y_{d,l} = c_{d,l} + s_{d,l}·e_{d,l}, e_{d,l} = √½·a_d + √½·r_{d,l} (r_{d,l} alone for ``none``); the forecast
    states N(c, (k·s)²) or its 23 quantiles c + k·s·Φ⁻¹(τ), k = 1 (calibrated) or 0.8 (``sigma0.8``).

    Parameters
    ----------
    ftype : {"gaussian", "quantile23"}
        The forecast type.
    dependence : {"date", "ar1loc", "ar1", "none"}
        The date effect's law (``ar1loc``: i.i.d. date effects and each location's r an AR(1) over the dates).
    forecast : {"calibrated", "sigma0.8"}
        The stated scale.
    dates : int
        D.
    rng : numpy.random.Generator
        The random stream.
    locations : int, default 50
        L.

    Returns
    -------
    PredictionSet
        ``slice_columns`` with ``date`` (0 … D − 1, time order) and ``location``, rows date-major.

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. *Journal of the Royal Statistical Society B* 69(2), 243–268.
    """
    n = dates * locations
    a = date_effect("date" if dependence == "ar1loc" else dependence, dates, rng)
    e = rng.standard_normal(n)
    if dependence == "ar1loc":  # each location's own error an AR(1) over the dates, unit variance
        r = e.reshape(dates, locations)
        r[1:] *= np.sqrt(1.0 - RHO**2)
        e = signal.lfilter([1.0], [1.0, -RHO], r, axis=0).ravel()
    if dependence != "none":  # half the error variance is the date's
        e = np.sqrt(0.5) * (np.repeat(a, locations) + e)
    c = rng.normal(0.0, 2.0, n)
    s = np.exp(rng.normal(0.0, 0.5, n))
    y = c + s * e
    sf = 0.8 * s if forecast == "sigma0.8" else s
    cols = pd.DataFrame({"date": np.repeat(np.arange(dates), locations),
                         "location": np.tile(np.arange(locations), dates)})
    if ftype == "gaussian":
        return cc.PredictionSet(task="regression", y=y, dist=cc.Gaussian(c, sf), layout="gaussian",
                                slice_columns=cols)
    q = c[:, None] + sf[:, None] * special.ndtri(TAU23)[None, :]
    return cc.PredictionSet(task="regression", y=y, dist=cc.QuantileSet(TAU23, q), layout="quantile",
                            slice_columns=cols)


# ----------------------------------------------------------------------------------------------- one data set
def _code(name: str) -> int:
    return zlib.crc32(name.encode())


def run_one(task: tuple[str, str, str, int, int], methods: list[str], seed: int, n_resamples: int,
            n_simulations: int, commit: str = "") -> list[dict]:
    """Draw one data set and diagnose it with each method; one result row per method.

    The stream is ``default_rng([seed, crc32(type), crc32(dependence), crc32(forecast), D, rep])``, and the
    diagnosis seed is drawn from it after the data: a data set and its diagnosis seed do not depend on the method,
    on which other data sets run, or where.

    Parameters
    ----------
    task : tuple
        (type, dependence, forecast, D, rep).
    methods : list of str
        Keys of :data:`METHODS`.
    seed : int
        The study's seed.
    n_resamples, n_simulations : int
        The tool's bootstrap replicates and null draws.
    commit : str, default ""
        The code's commit.

    Returns
    -------
    list of dict
        Rows of :data:`FIELDS`: the headline verdict, its Holm p-value and lead statistic, the clustering, CPU and
        wall seconds of ``cc.diagnose``.
    """
    ftype, dependence, forecast, dates, rep = task
    rng = np.random.default_rng([seed, _code(ftype), _code(dependence), _code(forecast), dates, rep])
    pset = draw(ftype, dependence, forecast, dates, rng)
    diag_seed = int(rng.integers(2**31))
    clustered = has_cluster_option()
    rows = []
    for method in methods:
        options = METHODS[method] if clustered else {}
        row = dict(type=ftype, dependence=dependence, forecast=forecast, dates=dates, rep=rep, method=method,
                   verdict="error", p_value=float("nan"), lead="", n_clusters="", clustering="", note="",
                   commit=commit)
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            with np.errstate(all="ignore"):
                report = cc.diagnose(pset, n_resamples=n_resamples, n_simulations=n_simulations, seed=diag_seed,
                                     diagrams=False, by_group=False, **options)
        except Exception as exc:  # one failing data set is a result of the study, not its end
            report, row["note"] = None, f"{type(exc).__name__}: {str(exc)[:200]}"
        row.update(cpu_s=round(time.process_time() - c0, 4), wall_s=round(time.perf_counter() - w0, 4))
        if report is not None:
            opts = report.options
            row.update(clustering=str(opts.get("clustering", "independent rows")),
                       n_clusters=opts.get("n_clusters", "") or "")
            if len(report.verdicts):
                head = report.verdicts.iloc[0]
                row.update(verdict=head["verdict"], p_value=float(head["p_value"]), lead=head["lead"] or "")
            else:
                row["note"] = "; ".join(opts.get("notes", []))[:300] or "no verdict row"
        rows.append(row)
    return rows


# ----------------------------------------------------------------------------------------------- the plan, the file
def plan(types: list[str], dependence: list[str], dates: list[int], reps: int, power_reps: int,
         methods: list[str], done: set[tuple]) -> list[tuple[tuple, list[str]]]:
    """The data sets still to diagnose and, per data set, the methods missing for it.

    Repetition first, then D, type, dependence and forecast: a run stopped early leaves every cell with (almost)
    the same number of data sets.

    Parameters
    ----------
    types, dependence : list of str
        Forecast types and dependence scenarios.
    dates : list of int
        The D of the study.
    reps, power_reps : int
        Data sets per cell, calibrated and under σ × 0.8.
    methods : list of str
        Methods to run.
    done : set of tuple
        (type, dependence, forecast, D, rep, method) already in the results file.

    Returns
    -------
    list of (task, methods)
        The work.
    """
    out = []
    for rep in range(max(reps, power_reps)):
        for d in sorted(dates):
            for t in types:
                for dep in dependence:
                    for fc in FORECASTS:
                        if rep >= (reps if fc == "calibrated" else power_reps):
                            continue
                        task = (t, dep, fc, d, rep)
                        todo = [m for m in methods if (*task, m) not in done]
                        if todo:
                            out.append((task, todo))
    return out


def read_results(path: Path) -> pd.DataFrame:
    """The results file (an empty frame with :data:`FIELDS` when there is none).

    Parameters
    ----------
    path : Path
        The CSV file.

    Returns
    -------
    DataFrame
        One row per diagnosis (data set × method).
    """
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=FIELDS)
    return pd.read_csv(path, keep_default_na=False, na_values={"p_value": ["nan", "NaN"]},
                       dtype={"lead": str, "note": str, "commit": str, "clustering": str, "n_clusters": str})


def run(args: argparse.Namespace) -> int:
    """Run the configuration's missing diagnoses, appending each result to the file as it comes.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.

    Returns
    -------
    int
        Diagnoses made by this invocation.
    """
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _repair_tail(out)
    if out.exists() and out.stat().st_size:
        with out.open(encoding="utf-8") as f:
            if f.readline().strip().split(",") != FIELDS:
                raise SystemExit(f"{out} was written with other columns; use another --out")
    methods = [m for m in args.methods if m == "iid" or has_cluster_option()]
    if methods != args.methods:
        print("this checkout's cc.diagnose has no cluster= option: only the i.i.d. verdict runs", file=sys.stderr)
    done_df = read_results(out)
    done = set(zip(done_df["type"], done_df["dependence"], done_df["forecast"], done_df["dates"].astype(int),
                   done_df["rep"].astype(int), done_df["method"]))
    todo = plan(args.types, args.dependence, args.dates, args.reps, args.power_reps, methods, done)
    commit = commit_id()
    started = dt.datetime.now(dt.UTC)
    print(f"{len(todo)} data sets to diagnose ({len(done)} diagnoses already in {out}); commit {commit}",
          file=sys.stderr)
    os_signal.signal(os_signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run still logs itself (finally)
    deadline = time.time() + args.max_minutes * 60 if args.max_minutes else float("inf")
    new = 0
    t0 = last = time.time()
    with out.open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        if out.stat().st_size == 0:
            writer.writeheader()

        def write(rows: list[dict]) -> None:
            nonlocal new, last
            writer.writerows(rows)
            f.flush()
            new += len(rows)
            if time.time() - last > args.progress:
                last = time.time()
                r = rows[0]
                print(f"  {new} diagnoses in {last - t0:.0f} s (last: {r['type']} {r['dependence']} {r['forecast']} "
                      f"D={r['dates']} rep {r['rep']})", file=sys.stderr)

        options = (args.seed, args.n_resamples, args.n_simulations, commit)
        try:
            if args.jobs <= 1:
                for task, ms in todo:
                    if time.time() > deadline:
                        break
                    write(run_one(task, ms, *options))
            else:
                with ProcessPoolExecutor(max_workers=args.jobs) as pool:
                    pending, queue = set(), iter(todo)
                    while True:
                        while len(pending) < 2 * args.jobs and time.time() <= deadline:
                            item = next(queue, None)
                            if item is None:
                                break
                            pending.add(pool.submit(run_one, item[0], item[1], *options))
                        if not pending:
                            break
                        finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for fut in finished:
                            write(fut.result())
        finally:
            meta = dict(command="python " + shlex.join(["bench/cluster_study.py", *args.argv]), commit=commit,
                        machine=machine(), started=started.isoformat(timespec="seconds"),
                        finished=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), diagnoses=new,
                        wall_s=round(time.time() - t0, 1))
            with Path(str(out) + ".runs.jsonl").open("a", encoding="utf-8") as mf:
                mf.write(json.dumps(meta, ensure_ascii=False) + "\n")
    print(f"{new} diagnoses in {time.time() - t0:.0f} s", file=sys.stderr)
    return new


# ----------------------------------------------------------------------------------------------- the report
def tables(df: pd.DataFrame, alpha: float = 0.05) -> list[str]:
    """The report's Markdown table: per type, dependence and D, each method's false alarms and power.

    False alarms: r = share of calibrated data sets headlined "miscalibrated", shown r ± 2·√(r(1 − r)/R), ✓ when
    r ≤ α + 2·√(α(1 − α)/R).  Power: the share headlined "miscalibrated" under σ × 0.8.  Cost: mean CPU seconds of
    one ``cc.diagnose`` call.

    Parameters
    ----------
    df : DataFrame
        The results (:func:`read_results`).
    alpha : float, default 0.05
        The tool's family-wise level.

    Returns
    -------
    list of str
        Markdown lines.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    """
    df = df.copy()
    df["dates"] = df["dates"].astype(int)
    df["alarm"] = df["verdict"] == "miscalibrated"
    out: list[str] = []
    errors = df[df["verdict"] == "error"]
    if len(errors):
        out += ["**Diagnoses without a verdict** (counted as not \"miscalibrated\"; the note says why):", "",
                "| type | dependence | forecast | D | method | count | first note |", "|---|---|---|---:|---|---:|---|"]
        for key, g in errors.groupby(["type", "dependence", "forecast", "dates", "method"]):
            out.append("| " + " | ".join(map(str, key)) + f" | {len(g)} | {g['note'].iloc[0]} |")
        out.append("")
    out += ["| type | dependence | D | verdict | false alarms ± 2 s.e. | data sets | power (σ × 0.8) | data sets | "
            "CPU s per diagnosis |", "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    order = {k: i for i, k in enumerate([*TYPES, *DEPENDENCE, *METHODS])}
    keys = sorted(df.groupby(["type", "dependence", "dates", "method"]).groups,
                  key=lambda k: (order.get(k[0], 99), order.get(k[1], 99), k[2], order.get(k[3], 99)))
    for t, dep, d, m in keys:
        g = df[(df["type"] == t) & (df["dependence"] == dep) & (df["dates"] == d) & (df["method"] == m)]
        null, alt = g[g["forecast"] == "calibrated"], g[g["forecast"] == "sigma0.8"]
        if len(null):
            r = float(null["alarm"].mean())
            ok = "✓" if r <= alpha + 2 * mc_se(alpha, len(null)) else "✗"
            fa = f"{r:.3f} ± {2 * mc_se(r, len(null)):.3f} {ok}"
        else:
            fa = "–"
        power = f"{alt['alarm'].mean():.2f}" if len(alt) else "–"
        out.append(f"| {t} | {DEPENDENCE.get(dep, dep)} | {d} | {METHOD_LABELS.get(m, m)} | {fa} | {len(null)} | "
                   f"{power} | {len(alt)} | {g['cpu_s'].mean():.2f} |")
    leads = df[df["alarm"] & (df["forecast"] == "calibrated")].groupby("method")["lead"].value_counts()
    if len(leads):
        out += ["", "Statistics that led the false alarms (count over every cell): "
                + "; ".join(f"{METHOD_LABELS.get(m, m)}: " + ", ".join(f"{k} {v}" for k, v in s.items())
                            for m, s in leads.groupby(level=0, sort=False)
                            for s in [s.droplevel(0)]) + "."]
    described = df.loc[df["method"] != "iid"].drop_duplicates(["dates", "method"])
    if len(described):
        out += ["", "Resampling as the reports state it: "
                + "; ".join(f"D = {d}, {METHOD_LABELS.get(m, m)}: {c}" for d, m, c in
                            sorted(zip(described["dates"], described["method"], described["clustering"]))) + "."]
    out += ["", f"CPU in total: {df['cpu_s'].sum() / 3600:.2f} CPU hours for {len(df):,} diagnoses "
            f"({df.groupby(['type', 'dependence', 'forecast', 'dates', 'rep']).ngroups:,} data sets)."]
    return out


def report_text(path: Path) -> str:
    """The page's results block: commands, machine, commits and dates of the runs, then :func:`tables`.

    Parameters
    ----------
    path : Path
        The results CSV file (its runs are read from ``<path>.runs.jsonl``).

    Returns
    -------
    str
        Markdown, between :data:`BEGIN` and :data:`END`.
    """
    df = read_results(path)
    runs_path = Path(str(path) + ".runs.jsonl")
    runs = [json.loads(line) for line in runs_path.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if runs_path.exists() else []
    runs = [r for r in runs if r.get("diagnoses")]
    lines = [BEGIN, ""]
    if not len(df):
        return "\n".join([*lines, f"(no results in `{path.name}` yet)", "", END])
    commits = df["commit"].value_counts()
    lines += ["**Commands:** " + "; ".join(sorted({f"`{r['command']}`" for r in runs})) if runs else
              "**Commands:** (not recorded)", "",
              "**Commits:** " + ", ".join(f"{c} ({k:,} diagnoses)" for c, k in commits.items()), ""]
    if runs:
        lines += ["**Machine:** " + "; ".join(sorted({r["machine"].split(", load average")[0] for r in runs})), "",
                  f"**Dates (UTC):** {min(r['started'] for r in runs)} to {max(r['finished'] for r in runs)}, "
                  f"{len(runs)} run(s), {sum(r.get('wall_s', 0) for r in runs) / 60:.0f} wall minutes", ""]
    lines += tables(df)
    return "\n".join([*lines, "", END])


def write_report(path: Path, page: Path) -> None:
    """Replace the results block of the page (between :data:`BEGIN` and :data:`END`) by :func:`report_text`.

    Parameters
    ----------
    path : Path
        The results CSV file.
    page : Path
        The Markdown page; ``-`` prints the block instead.

    Returns
    -------
    None
    """
    block = report_text(path)
    if str(page) == "-":
        print(block)
        return
    text = page.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{page} has no results markers ({BEGIN!r} … {END!r})")
    head, rest = text.split(BEGIN, 1)
    page.write_text(head + block + rest.split(END, 1)[1], encoding="utf-8")
    print(f"wrote the results of {path} into {page}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring).

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status.
    """
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--types", nargs="+", default=list(TYPES), choices=list(TYPES))
    ap.add_argument("--dependence", nargs="+", default=["date", "ar1"], choices=list(DEPENDENCE))
    ap.add_argument("--dates", nargs="+", type=int, default=[20, 50, 200])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--reps", type=int, default=400, help="calibrated data sets per cell")
    ap.add_argument("--power-reps", type=int, default=100, help="data sets per cell under σ × 0.8")
    ap.add_argument("--n-resamples", type=int, default=400, help="the tool's bootstrap replicates (default 1000)")
    ap.add_argument("--n-simulations", type=int, default=500, help="the tool's null draws (default 2000)")
    ap.add_argument("--seed", type=int, default=2029)
    ap.add_argument("--jobs", type=int, default=1, help="processes (data sets run in parallel)")
    ap.add_argument("--max-minutes", type=float, default=0.0, help="stop submitting after this long (0: no)")
    ap.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines")
    ap.add_argument("--out", default=str(OUT), help="results CSV (appended; a rerun resumes)")
    ap.add_argument("--report", action="store_true", help="write the table from --out into --page and stop")
    ap.add_argument("--page", default=str(PAGE), help="the page --report writes into ('-': print)")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.report:
        write_report(Path(args.out), Path(args.page))
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
