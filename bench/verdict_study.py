"""Simulation study of the headline verdicts through the public API: false alarms, power, direction, cost.

    python bench/verdict_study.py                                   # the full study (long; resumable)
    python bench/verdict_study.py --sizes 200 3000 --reps 50 --power-reps 50 --types gaussian quantile9
    python bench/verdict_study.py --jobs 2 --max-hours 10           # stop submitting after 10 h; rerun to resume
    python bench/verdict_study.py --estimate                        # CPU budget of the configuration
    python bench/verdict_study.py --report                          # tables into docs/benchmarks/verdict-study.md

Every data set goes through ``cc.diagnose(cc.PredictionSet(...), n_resamples=0, diagrams=False, seed=...)``
(``n_resamples=0`` switches the intervals off; ``n_simulations`` keeps its default of 2,000 null draws, so tests and
verdicts are on) and the study keeps its headline row (``Report.verdicts``: verdict, direction, lead, Holm p-value)
and the raw p-values of the primary family.

**Targets come from the true law**, never from a law the tool interpolates.  Per row i a latent location-scale law
X_i = c_i + s_i·E (E standard normal or Student-t₃) with heterogeneous centres c_i and scales s_i (log-normal, the
way real forecasts vary), and a non-decreasing map g; the target is y_i = g(X_i) and the forecast states that law:

* ``gaussian``: N(c_i, s_i²) (g = identity).
* ``quantile9`` / ``quantile19`` / ``quantile23``: the true quantiles g(c_i + s_i·Φ⁻¹(τ)) at τ = 0.1 … 0.9,
  0.05 … 0.95, and the forecast hubs' 23 levels 0.01, 0.025, 0.05, 0.10, …, 0.95, 0.975, 0.99 (Bracher et al. 2021).
* ``quantile9_rounded``: integer targets y = round(X) stated by their exact quantiles round(q_τ) (ties between
  levels and with the target); ``quantile23_counts``: counts y = ⌊exp X⌋ with their exact quantiles ⌊exp q_τ⌋
  (zeros, heavy ties).  For a non-decreasing g, the τ-quantile of g(X) is g(q_τ(X)) (X continuous).
* ``ensemble{8,20,51}`` (Gaussian law), ``ensemble{8,20,51}_t3`` (Student-t₃), ``ensemble{8,20,51}_rain``
  (y = max(0, X)², an atom at 0 whose mass varies by row): M members drawn independently from the law of the
  target, so target and members are exchangeable (Hamill 2001).
* ``binary`` and ``classes10``: logits z_i with a per-row sharpness a_i ~ U[0.5, 3]; the stated probabilities
  p_i = softmax(z_i), labels drawn from p_i.

Scenarios (the forecast changes, the truth does not): ``null`` (perfectly calibrated); ``sigma0.8`` (every scale
× 0.8: over-confident); ``shift0.2`` (centres + 0.2·s_i: biased high); ``region`` (scale ÷ 1.5 in half the rows, a
region, the other half right: over-confident there, never biased); ``temp1.5`` (classification: p → softmax(1.5 z),
over-confident).  For ``rain`` and ``counts`` the scenarios act on the latent law.

Per (type, N) the report gives the family-wise false-alarm rate (share of null data sets headlined
"miscalibrated"; Holm 1979 inside the tool) with its Monte-Carlo standard error and pass / fail against 5 % + 2
MC s.e.; per alternative the power and the share naming the expected direction; for the σ-only alternatives the
share of detected miscalibrations whose direction names a bias (goal ≤ 1 %); and the CPU seconds per data set.
"Calibrated" here is probabilistic calibration of the stated law (Gneiting, Balabdaoui & Raftery 2007).

Results are appended, one line per data set, to a CSV file (``--out``; default ``bench/out/verdict_study.csv``),
seeded per (type, scenario, N, repetition): a stopped run resumes where it stopped, and ``--jobs`` spreads the data
sets over a process pool.  Each invocation appends its command, commit, machine and dates to ``<out>.runs.jsonl``;
``--report`` writes the tables from both into the page between its markers.

References
----------
.. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
   Statistics* 6(2), 65–70.
.. [2] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
   *Journal of the Royal Statistical Society B* 69(2), 243–268.
.. [3] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly
   Weather Review* 129(3), 550–560.
.. [4] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
   format. *PLoS Computational Biology* 17(2), e1008618.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import shlex
import sys
import time
import zlib
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special, stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from bench.study_runs import commit_id, machine, mc_se  # noqa: E402
from bench.study_runs import repair_tail as _repair_tail  # noqa: E402

OUT = ROOT / "bench" / "out" / "verdict_study.csv"
PAGE = ROOT / "docs" / "benchmarks" / "verdict-study.md"
BEGIN = "<!-- verdict-study results: begin (written by python bench/verdict_study.py --report) -->"
END = "<!-- verdict-study results: end -->"

TAU9 = np.arange(1, 10) / 10
TAU19 = np.arange(1, 20) / 20
TAU23 = np.concatenate([[0.01, 0.025], np.arange(1, 20) / 20, [0.975, 0.99]])


@dataclass(frozen=True)
class ForecastType:
    """One kind of forecast of the study: its layout, the law of the truth and what it states.

    Attributes
    ----------
    name : str
        The type's name (``--types``).
    kind : {"gaussian", "quantile", "sample", "binary", "classes"}
        The layout of the forecast.
    law : {"normal", "t3", "rounded", "counts", "rain"}
        The law of the truth (regression): latent E and map g.
    levels : tuple of float
        Quantile levels (quantile sets).
    members : int
        Ensemble members (ensembles).
    k : int
        Classes (classification).
    """

    name: str
    kind: str
    law: str = "normal"
    levels: tuple[float, ...] = ()
    members: int = 0
    k: int = 0


def _types() -> dict[str, ForecastType]:
    out = [ForecastType("gaussian", "gaussian"),
           ForecastType("quantile9", "quantile", levels=tuple(TAU9)),
           ForecastType("quantile19", "quantile", levels=tuple(TAU19)),
           ForecastType("quantile23", "quantile", levels=tuple(TAU23)),
           ForecastType("quantile9_rounded", "quantile", "rounded", levels=tuple(TAU9)),
           ForecastType("quantile23_counts", "quantile", "counts", levels=tuple(TAU23))]
    for law in ("normal", "t3", "rain"):
        for m in (8, 20, 51):
            out.append(ForecastType(f"ensemble{m}" + ("" if law == "normal" else f"_{law}"), "sample", law, members=m))
    out += [ForecastType("binary", "binary", k=2), ForecastType("classes10", "classes", k=10)]
    return {t.name: t for t in out}


TYPES = _types()
#: scenario → (label in the report, the direction a detection should name, σ-only alternative)
SCENARIOS = {
    "null": ("perfectly calibrated", "", False),
    "sigma0.8": ("σ × 0.8 everywhere", "over-confident", True),
    "shift0.2": ("centre + 0.2σ", "biased high", False),
    "region": ("σ ÷ 1.5 in half the rows", "over-confident", True),
    "temp1.5": ("p → softmax(1.5 z)", "over-confident", False),
}
REGRESSION_SCENARIOS = ("null", "sigma0.8", "shift0.2", "region")
CLASS_SCENARIOS = ("null", "temp1.5")
FIELDS = ["type", "scenario", "n", "rep", "verdict", "direction", "p_value", "lead", "n_tests", "primary", "note",
          "cpu_s", "wall_s", "gen_s", "commit"]


def scenarios_of(ftype: ForecastType) -> tuple[str, ...]:
    """The scenarios that apply to a forecast type.

    Parameters
    ----------
    ftype : ForecastType
        The type.

    Returns
    -------
    tuple of str
        Regression: null, σ × 0.8, shift, region; classification: null, temperature 1.5.
    """
    return CLASS_SCENARIOS if ftype.kind in ("binary", "classes") else REGRESSION_SCENARIOS


# ----------------------------------------------------------------------------------------------- the data sets
def _latent(law: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per-row centres c_i and scales s_i of the latent law (heterogeneous, log-normal scales)."""
    if law == "counts":
        return rng.normal(1.5, 1.0, n), np.exp(rng.normal(np.log(0.5), 0.3, n))
    if law == "rain":
        return rng.normal(0.0, 1.0, n), np.exp(rng.normal(0.0, 0.5, n))
    return rng.normal(0.0, 2.0, n), np.exp(rng.normal(0.0, 0.5, n))


def _noise(law: str, size, rng: np.random.Generator) -> np.ndarray:
    return rng.standard_t(3, size) if law == "t3" else rng.standard_normal(size)


def _ppf(law: str, tau: np.ndarray) -> np.ndarray:
    return stats.t.ppf(tau, 3) if law == "t3" else special.ndtri(tau)


def _g(law: str, x: np.ndarray) -> np.ndarray:
    """The non-decreasing map from the latent law to the target (in place where it can)."""
    if law == "rounded":
        return np.round(x, out=x)
    if law == "counts":
        return np.floor(np.exp(np.minimum(x, 50.0, out=x), out=x), out=x)
    if law == "rain":
        np.maximum(x, 0.0, out=x)
        return np.square(x, out=x)
    return x


def _forecast_latent(c: np.ndarray, s: np.ndarray, scenario: str) -> tuple[np.ndarray, np.ndarray]:
    if scenario == "sigma0.8":
        return c, 0.8 * s
    if scenario == "shift0.2":
        return c + 0.2 * s, s
    if scenario == "region":  # rows are in random order, so the first half is a region unrelated to c and s
        return c, np.where(np.arange(c.size) < c.size // 2, s / 1.5, s)
    return c, s


def draw(ftype: ForecastType, scenario: str, n: int, rng: np.random.Generator) -> cc.PredictionSet:
    """One data set: targets from the true law, the forecast stating it (or the scenario's wrong law).

    Regression: y_i = g(c_i + s_i·E_i) and the forecast's law g(c'_i + s'_i·E) with (c', s') = (c, s) under the null
    (see the module docstring); classification: labels ~ Categorical(softmax(z_i)), stated p = softmax(T·z_i).

    Parameters
    ----------
    ftype : ForecastType
        The forecast type.
    scenario : str
        A key of :data:`SCENARIOS` that applies to the type.
    n : int
        Rows.
    rng : numpy.random.Generator
        The random stream.

    Returns
    -------
    PredictionSet
        The data set (``layout`` "gaussian", "quantile", "sample", "binary_prob" or "probs").

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [2] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly
       Weather Review* 129(3), 550–560.
    """
    if ftype.kind in ("binary", "classes"):
        return _draw_classes(ftype, scenario, n, rng)
    law = ftype.law
    c, s = _latent(law, n, rng)
    y = _g(law, c + s * _noise(law, n, rng))
    cf, sf = _forecast_latent(c, s, scenario)
    if ftype.kind == "gaussian":
        return cc.PredictionSet(task="regression", y=y, dist=cc.Gaussian(cf, sf), layout="gaussian")
    if ftype.kind == "quantile":
        tau = np.asarray(ftype.levels)
        q = _g(law, cf[:, None] + sf[:, None] * _ppf(law, tau)[None, :])
        return cc.PredictionSet(task="regression", y=y, dist=cc.QuantileSet(tau, q), layout="quantile")
    members = _noise(law, (n, ftype.members), rng)
    members *= sf[:, None]
    members += cf[:, None]
    return cc.PredictionSet(task="regression", y=y, dist=cc.SampleSet(_g(law, members)), layout="sample")


def _draw_classes(ftype: ForecastType, scenario: str, n: int, rng: np.random.Generator) -> cc.PredictionSet:
    a = rng.uniform(0.5, 3.0, (n, 1))
    if ftype.k == 2:
        logit = -0.5 + a[:, 0] * rng.standard_normal(n)
        z = np.column_stack([np.zeros(n), logit])
    else:
        z = a * rng.standard_normal((n, ftype.k))
    p = special.softmax(z, axis=1)
    labels = np.minimum((np.cumsum(p, axis=1) < rng.random((n, 1))).sum(axis=1), ftype.k - 1)
    if scenario == "temp1.5":
        p = special.softmax(1.5 * z, axis=1)
    return cc.PredictionSet(task="classification", labels=labels.astype(np.int64), probs=p,
                            classes=[str(i) for i in range(ftype.k)], layout="binary_prob" if ftype.k == 2 else "probs")


# ----------------------------------------------------------------------------------------------- one data set
def _code(name: str) -> int:
    return zlib.crc32(name.encode())


def run_one(task: tuple[str, str, int, int], seed: int, n_simulations: int, commit: str = "") -> dict:
    """Draw one data set and diagnose it through the public API; the result row of the CSV file.

    The stream is ``default_rng([seed, crc32(type), crc32(scenario), n, rep])``, so a data set does not depend on
    which others run, in which order or process.

    Parameters
    ----------
    task : tuple
        (type, scenario, n, rep).
    seed : int
        The study's seed.
    n_simulations : int
        Null draws of the tool's simulated tests.
    commit : str, default ""
        The code's commit, stored with the row.

    Returns
    -------
    dict
        One row (:data:`FIELDS`): the headline verdict, direction, Holm p-value and lead statistic, the primary
        family's raw p-values, the CPU and wall seconds of ``cc.diagnose`` and of drawing the data.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    """
    name, scenario, n, rep = task
    rng = np.random.default_rng([seed, _code(name), _code(scenario), n, rep])
    g0 = time.perf_counter()
    pset = draw(TYPES[name], scenario, n, rng)
    gen = time.perf_counter() - g0
    diag_seed = int(rng.integers(2**31))
    row = dict(type=name, scenario=scenario, n=n, rep=rep, verdict="error", direction="", p_value=float("nan"),
               lead="", n_tests=0, primary="", note="", gen_s=round(gen, 4), commit=commit)
    c0, w0 = time.process_time(), time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            report = cc.diagnose(pset, n_resamples=0, n_simulations=n_simulations, seed=diag_seed, diagrams=False)
    except Exception as exc:  # one failing data set is a result of the study, not its end
        report, row["note"] = None, f"{type(exc).__name__}: {str(exc)[:200]}"
    row.update(cpu_s=round(time.process_time() - c0, 4), wall_s=round(time.perf_counter() - w0, 4))
    if report is None or not len(report.verdicts):
        if report is not None:
            row["note"] = "; ".join(report.options.get("notes", []))[:300] or "no verdict row"
        return row
    head = report.verdicts.iloc[0]
    m = report.metrics
    prim = m[m["family"] == "primary"]
    row.update(verdict=head["verdict"], direction=head["direction"] or "", p_value=float(head["p_value"]),
               lead=head["lead"] or "", n_tests=int(head["n_tests"]),
               primary=";".join(f"{k}={p:.3g}" for k, p in zip(prim["metric"], prim["p_value"])))
    return row


# ----------------------------------------------------------------------------------------------- the plan, the file
def parse_counts(text: str, sizes: list[int]) -> dict[int, int]:
    """Repetitions per N from ``"200:1000,3000:1000,1e5:200"`` or one number for every N.

    Parameters
    ----------
    text : str
        The option's text.
    sizes : list of int
        The study's sizes (each needs a count).

    Returns
    -------
    dict of int to int
        N → repetitions.
    """
    if ":" not in text:
        return {n: int(float(text)) for n in sizes}
    given = {int(float(k)): int(float(v)) for k, v in (part.split(":") for part in text.split(","))}
    missing = [n for n in sizes if n not in given]
    if missing:
        raise SystemExit(f"no repetition count for N = {missing} in {text!r}")
    return given


def plan(types: list[str], scenarios: list[str], sizes: list[int], reps: dict[int, int],
         power_reps: dict[int, int]) -> list[tuple[str, str, int, int]]:
    """Every data set of a configuration, in the order they run.

    N ascending, then repetition, then type and scenario: a run stopped early leaves every cell of an N with
    (almost) the same number of data sets.

    Parameters
    ----------
    types, scenarios : list of str
        Forecast types and scenarios (a scenario is run for the types it applies to).
    sizes : list of int
        Rows per data set.
    reps, power_reps : dict of int to int
        Data sets per N under the null and under each alternative.

    Returns
    -------
    list of tuple
        (type, scenario, n, rep).
    """
    out = []
    for n in sorted(sizes):
        for rep in range(max(reps[n], power_reps[n])):
            for name in types:
                for sc in scenarios_of(TYPES[name]):
                    if sc in scenarios and rep < (reps if sc == "null" else power_reps)[n]:
                        out.append((name, sc, n, rep))
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
        One row per diagnosed data set.
    """
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=FIELDS)
    return pd.read_csv(path, keep_default_na=False, na_values={"p_value": ["nan", "NaN"]},
                       dtype={"direction": str, "lead": str, "primary": str, "note": str, "commit": str})


# ----------------------------------------------------------------------------------------------- running
def run(args: argparse.Namespace) -> int:
    """Run the configuration's missing data sets, appending each result to the file as it comes.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.

    Returns
    -------
    int
        Data sets diagnosed by this invocation.
    """
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _repair_tail(out)
    if out.exists() and out.stat().st_size:
        with out.open(encoding="utf-8") as f:
            header = f.readline().strip().split(",")
        if header != FIELDS:
            raise SystemExit(f"{out} was written with other columns ({header}); use another --out")
    done = read_results(out)
    have = set(zip(done["type"], done["scenario"], done["n"].astype(int), done["rep"].astype(int)))
    todo = [t for t in plan(args.types, args.scenarios, args.sizes, args.reps, args.power_reps) if t not in have]
    commit = commit_id()
    started = dt.datetime.now(dt.UTC)
    print(f"{len(todo)} data sets to diagnose ({len(have)} already in {out}); commit {commit}", file=sys.stderr)
    deadline = time.time() + args.max_hours * 3600 if args.max_hours else float("inf")
    new = 0
    t0 = last = time.time()
    with out.open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        if out.stat().st_size == 0:
            writer.writeheader()

        def write(row: dict) -> None:
            nonlocal new, last
            writer.writerow(row)
            f.flush()
            new += 1
            if time.time() - last > args.progress:
                last = time.time()
                print(f"  {new}/{len(todo)} in {last - t0:.0f} s (last: {row['type']} {row['scenario']} "
                      f"N={row['n']:,} cpu {row['cpu_s']:.2f} s)", file=sys.stderr)

        try:
            if args.jobs <= 1:
                for task in todo:
                    if time.time() > deadline:
                        break
                    write(run_one(task, args.seed, args.n_simulations, commit))
            else:
                with ProcessPoolExecutor(max_workers=args.jobs) as pool:
                    pending, queue = set(), iter(todo)
                    while True:
                        while len(pending) < 2 * args.jobs and time.time() <= deadline:
                            task = next(queue, None)
                            if task is None:
                                break
                            pending.add(pool.submit(run_one, task, args.seed, args.n_simulations, commit))
                        if not pending:
                            break
                        finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for fut in finished:
                            write(fut.result())
        finally:
            meta = dict(command="python " + shlex.join(["bench/verdict_study.py", *args.argv]), commit=commit,
                        machine=machine(), started=started.isoformat(timespec="seconds"),
                        finished=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), data_sets=new)
            with Path(str(out) + ".runs.jsonl").open("a", encoding="utf-8") as mf:
                mf.write(json.dumps(meta, ensure_ascii=False) + "\n")
    print(f"{new} data sets diagnosed in {time.time() - t0:.0f} s", file=sys.stderr)
    return new


# ----------------------------------------------------------------------------------------------- the report
def _n(n: int) -> str:
    e = int(round(np.log10(n)))
    sup = str(e).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"10{sup}" if n >= 100_000 and n == 10**e else f"{n:,}"


def _wide(cells: dict[tuple[str, int], str], types: list[str], sizes: list[int], first: str = "type") -> list[str]:
    lines = [f"| {first} | " + " | ".join(f"N = {_n(n)}" for n in sizes) + " |", "|---|" + "---:|" * len(sizes)]
    for t in types:
        lines.append(f"| {t} | " + " | ".join(cells.get((t, n), "–") for n in sizes) + " |")
    return lines


def _order(df: pd.DataFrame) -> tuple[list[str], list[int]]:
    present = set(df["type"])
    return [t for t in TYPES if t in present], sorted(int(n) for n in df["n"].unique())


def _member_excess(null: pd.DataFrame, alpha: float) -> dict[tuple[str, int], str]:
    """Per (type, N): the primary members whose raw rejection rate at ``alpha`` exceeds alpha + 2 MC s.e."""
    cells = {}
    for (t, n), g in null.groupby(["type", "n"]):
        pairs = [item.split("=", 1) for text in g["primary"].fillna("") for item in text.split(";") if "=" in item]
        if not pairs:
            continue
        p = pd.DataFrame(pairs, columns=["metric", "p"]).astype({"p": float})
        bound = alpha + 2 * mc_se(alpha, len(g))
        rates = (p["p"] <= alpha).groupby(p["metric"]).sum() / len(g)
        high = rates[rates > bound].sort_values(ascending=False)
        cells[(t, n)] = ", ".join(f"{k} {v:.2f}" for k, v in high.items()) or "–"
    return cells


def tables(df: pd.DataFrame, alpha: float = 0.05, bias_goal: float = 0.01) -> list[str]:
    """The report's Markdown tables from the results.

    False alarms: r = share of null data sets headlined "miscalibrated", shown r ± √(r(1 − r)/R) and passing when
    r ≤ α + 2·√(α(1 − α)/R).  Power: share detected (share naming the expected direction).  σ-only alternatives:
    among the detected, the share whose direction names a bias (goal ≤ 1 %).  Cost: mean CPU seconds of
    ``cc.diagnose`` per data set.

    Parameters
    ----------
    df : DataFrame
        The results (:func:`read_results`).
    alpha : float, default 0.05
        The tool's family-wise level.
    bias_goal : float, default 0.01
        Largest share of detected σ-only miscalibrations whose direction may name a bias.

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
    df["n"] = df["n"].astype(int)
    df["alarm"] = df["verdict"] == "miscalibrated"
    df["bias"] = df["direction"].fillna("").str.contains("biased")
    types, sizes = _order(df)
    out: list[str] = []
    errors = df[df["verdict"] == "error"]
    if len(errors):
        out += ["**Data sets without a verdict** (counted as not \"miscalibrated\"; the note says why):", "",
                "| type | scenario | N | count | first note |", "|---|---|---:|---:|---|"]
        for (t, sc, n), g in errors.groupby(["type", "scenario", "n"]):
            out.append(f"| {t} | {sc} | {_n(n)} | {len(g)} | {g['note'].iloc[0]} |")
        out.append("")
    null = df[df["scenario"] == "null"]
    if len(null):
        cells, fails = {}, []
        for (t, n), g in null.groupby(["type", "n"]):
            r, reps = float(g["alarm"].mean()), len(g)
            goal = alpha + 2 * mc_se(alpha, reps)
            cells[(t, n)] = f"{r:.3f} ± {mc_se(r, reps):.3f} {'✓' if r <= goal else '✗'}"
            if r > goal:
                leads = g.loc[g["alarm"], "lead"].value_counts()
                fails.append(f"| {t} | {_n(n)} | {int(g['alarm'].sum())} / {reps} | "
                             + ", ".join(f"{k} {v}" for k, v in leads.items()) + " |")
        reps_by_n = null.groupby("n").size() / null.groupby("n")["type"].nunique()
        out += ["### False alarms under perfect calibration", "",
                "Share of data sets headlined \"miscalibrated\" ± its Monte-Carlo s.e.; ✓ when it is at most "
                f"{alpha:.0%} + 2 MC s.e. (data sets per cell and that bound: "
                + "; ".join(f"N = {_n(n)}: {int(round(r))}, {alpha + 2 * mc_se(alpha, int(round(r))):.3f}"
                            for n, r in reps_by_n.items()) + ").", ""]
        out += _wide(cells, [t for t in types if (null["type"] == t).any()], sizes)
        if fails:
            out += ["", "Cells that fail, and the primary statistic that led each false alarm:", "",
                    "| type | N | false alarms | lead statistic (count) |", "|---|---:|---:|---|", *fails]
        out += ["", "Primary statistics whose own test rejects too often under the null: share of the null data sets "
                f"with raw p ≤ {alpha:g}, listed when it exceeds {alpha:g} + 2 MC s.e. (– none; over many cells and "
                "members a few listings near the bound are chance):", ""]
        out += _wide(_member_excess(null, alpha), [t for t in types if (null["type"] == t).any()], sizes)
        out.append("")
    for sc, (label, expected, sigma_only) in SCENARIOS.items():
        alt = df[df["scenario"] == sc]
        if sc == "null" or not len(alt):
            continue
        cells = {}
        for (t, n), g in alt.groupby(["type", "n"]):
            named = g["alarm"] & g["direction"].fillna("").str.contains(expected, regex=False)
            cells[(t, n)] = f"{g['alarm'].mean():.2f} ({named.mean():.2f})"
        reps = alt.groupby(["type", "n"]).size()
        out += [f"### Power: {label}", "",
                f"Share headlined \"miscalibrated\" (in brackets: and naming \"{expected}\"); "
                f"{reps.min()}{'' if reps.min() == reps.max() else f'–{reps.max()}'} data sets per cell.", ""]
        out += _wide(cells, [t for t in types if (alt["type"] == t).any()], sizes)
        out.append("")
        if sigma_only:
            cells = {}
            for (t, n), g in alt.groupby(["type", "n"]):
                hit = int(g["alarm"].sum())
                k = int((g["alarm"] & g["bias"]).sum())
                share = k / hit if hit else 0.0
                cells[(t, n)] = f"{share:.1%} ({k}/{hit}) {'✓' if share <= bias_goal else '✗'}"
            out += [f"Direction under \"{label}\" (no bias in the truth): share of the detected miscalibrations whose "
                    f"direction names a bias (k / detected); ✓ when at most {bias_goal:.0%}.", ""]
            out += _wide(cells, [t for t in types if (alt["type"] == t).any()], sizes)
            out.append("")
    cells = {}
    for (t, n), g in df.groupby(["type", "n"]):
        cells[(t, n)] = f"{g['cpu_s'].mean():.3g}"
    out += ["### CPU seconds per data set", "",
            "Mean CPU seconds of one `cc.diagnose` call (all threads of the process; every scenario), "
            f"and in total {df['cpu_s'].sum() / 3600:.2f} CPU hours for the {len(df):,} data sets.", ""]
    out += _wide(cells, types, sizes)
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
    runs = [r for r in runs if r.get("data_sets")]
    lines = [BEGIN, ""]
    if not len(df):
        return "\n".join([*lines, f"(no results in `{path.name}` yet)", "", END])
    commits = df["commit"].value_counts()
    lines += ["**Commands:** " + "; ".join(sorted({f"`{r['command']}`" for r in runs})) if runs else
              "**Commands:** (not recorded)", "",
              "**Commit:** " + ", ".join(f"{c} ({k:,} data sets)" for c, k in commits.items())
              + (" — **mixed commits**" if len(commits) > 1 else ""), ""]
    if runs:
        lines += ["**Machine:** " + "; ".join(sorted({r["machine"].split(", load average")[0] for r in runs})), "",
                  f"**Dates (UTC):** {min(r['started'] for r in runs)} to {max(r['finished'] for r in runs)}, "
                  f"{len(runs)} run(s); load average at their starts "
                  + ", ".join(r["machine"].rsplit("load average ", 1)[-1].split(" ")[0] for r in runs), ""]
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


def estimate(args: argparse.Namespace) -> None:
    """Print the configuration's data sets and, from the timings in the results file, its CPU hours.

    Per data set: the CPU seconds of ``cc.diagnose`` plus the (wall) seconds of drawing the data.  A (type, N) not
    yet measured is extrapolated linearly in N from the largest N measured for that type.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.

    Returns
    -------
    None
    """
    df = read_results(Path(args.out))
    todo = plan(args.types, args.scenarios, args.sizes, args.reps, args.power_reps)
    cost = (df["cpu_s"] + df["gen_s"]).groupby([df["type"], df["n"]]).mean() if len(df) else pd.Series(dtype=float)
    per_n: dict[int, list[float]] = {}
    unknown = set()
    for name, _, n, _ in todo:
        if (name, n) in cost.index:
            c = float(cost[(name, n)])
        else:
            known = [(m, float(cost[(t, m)])) for t, m in cost.index if t == name]
            if not known:
                unknown.add(name)
                c = float("nan")
            else:
                m, cm = max(known)
                c = cm * n / m
        per_n.setdefault(n, []).append(c)
    print("| N | data sets | CPU hours (estimated: diagnosis + drawing the data) |\n|---:|---:|---:|")
    for n, cs in sorted(per_n.items()):
        print(f"| {n:,} | {len(cs):,} | {np.nansum(cs) / 3600:.2f} |")
    total = sum(np.nansum(cs) for cs in per_n.values()) / 3600
    print(f"\ntotal {len(todo):,} data sets, about {total:.1f} CPU hours"
          + (f" (types never measured, left out: {sorted(unknown)})" if unknown else ""))


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
    ap.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS))
    ap.add_argument("--sizes", nargs="+", type=lambda s: int(float(s)), default=[200, 3000, 100_000, 1_000_000])
    ap.add_argument("--reps", default="200:1000,3000:1000,1e5:200,1e6:50",
                    help="null data sets per N: 'N:R,N:R,…' or one number for every N")
    ap.add_argument("--power-reps", default="200:200,3000:200,1e5:50,1e6:20",
                    help="data sets per N under each alternative")
    ap.add_argument("--n-simulations", type=int, default=2000, help="the tool's null draws (its default: 2000)")
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--jobs", type=int, default=1, help="processes (the data sets run in parallel)")
    ap.add_argument("--max-hours", type=float, default=0.0, help="stop submitting data sets after this long (0: no)")
    ap.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines")
    ap.add_argument("--out", default=str(OUT), help="results CSV (appended; a rerun resumes)")
    ap.add_argument("--report", action="store_true", help="write the tables from --out into --page and stop")
    ap.add_argument("--page", default=str(PAGE), help="the page --report writes into ('-': print)")
    ap.add_argument("--estimate", action="store_true", help="print the configuration's size and CPU hours")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.report:
        write_report(Path(args.out), Path(args.page))
        return 0
    args.reps = parse_counts(args.reps, args.sizes)
    args.power_reps = parse_counts(args.power_reps, args.sizes)
    if args.estimate:
        estimate(args)
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
