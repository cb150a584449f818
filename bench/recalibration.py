"""Benchmark: fit + transform time of every regression calibrator beside uncertainty-toolbox and netcal.

    python bench/recalibration.py                     # N = 1e5 and 1e6, all calibrators, peers, ratios
    python bench/recalibration.py --sizes 1e4 --repeat 1

One process, one synthetic data set per N (seeded): N calibration rows and N test rows of
heteroscedastic Gaussian predictions (μ, σ) with a feature x, targets drawn with a 1.3× wider,
slightly skewed noise so every calibrator has something to fix.  For every method:

* ``fit``       — fit on the N calibration rows;
* ``transform`` — map the N test predictions to recalibrated ones (a calib_core distribution; netcal:
  its output arrays; uncertainty-toolbox has no transform step: its isotonic model maps levels);
* ``query``     — the recalibrated central 90% interval of every test row (forces any lazy work;
  the same question asked of every method that can answer it).

Peers (the project's conventions, docs/conventions.md):

* uncertainty-toolbox 0.1.1 — ``get_proportion_lists_vectorized`` (its default 100 levels, default
  ``prop_type="interval"``) + ``recalibration.iso_recal`` as fit; ``get_prediction_interval(…,
  recal_model)`` as query.  It fits on 100 levels, not on the N PIT values.
* netcal 1.4.0 — ``regression.VarianceScaling`` (fit/transform → σ'; query μ ± 1.645σ') and
  ``regression.IsotonicRegression`` (fit on the N PITs; transform returns CDF/PDF on a grid of
  ``t`` points per row: t = 512 by default, which at N = 1e6 would need 3 × 512 × 1e6 × 8 B ≈ 12 GB,
  so it is timed with t = 16 (``--netcal-t``); measured at N = 1e4: t = 512 takes 2.7× as long as
  t = 16).  Its transform loops over the rows in Python (one scipy ``interp1d`` per row, ≈ 1–2 ms
  per row), so it is timed on ``--netcal-rows`` (2e4) test rows and scaled linearly to N, flagged in
  the table (``--netcal-full`` times all N rows: ≈ 30 min at 1e6).  No interval query: the grid
  would have to be inverted.

Times are the best of ``--repeat`` runs (wall clock, one BLAS thread).  Ratios: peer / calib_core
counterpart (StdScaling for VarianceScaling, IsotonicRecalibration for the isotonic peers) on
fit + transform and on total = fit + transform + query (where the peer answers the query), and every
calibrator's fit + transform / StdScaling's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calib_core import Gaussian  # noqa: E402
from calib_core.calibrators import regression as rcal  # noqa: E402

Z90 = 1.6448536269514722


def make_data(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """N calibration + N test rows: μ, σ, y, x."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 1.0, 2 * n)
    mu = np.sin(3 * x) + 0.05 * rng.standard_normal(2 * n)
    sigma = 0.2 * x + 0.02
    noise = rng.standard_normal(2 * n) + 0.3 * (rng.standard_exponential(2 * n) - 1.0)
    y = np.sin(3 * x) + 1.3 * sigma * noise
    return {"mu": mu, "sigma": sigma, "y": y, "x": x[:, None]}


def calibrators() -> dict[str, object]:
    """Every calib_core regression calibrator (fresh, default settings unless noted)."""
    return {
        "StdScaling": rcal.StdScaling(),
        "GaussianShiftScale": rcal.GaussianShiftScale(),
        "IsotonicRecalibration": rcal.IsotonicRecalibration(),
        "IsotonicRecalibration(add_endpoint)": rcal.IsotonicRecalibration(add_endpoint=True),
        "CRUDE": rcal.CRUDE(),
        "SplitConformal(|z|)": rcal.SplitConformal(),
        "SplitConformal(signed)": rcal.SplitConformal(signed=True),
        "SigmaBinning": rcal.SigmaBinning(),
        "SigmaIsotonic": rcal.SigmaIsotonic(),
        "ConstantSigma": rcal.ConstantSigma(),
        "KMeansSigma": rcal.KMeansSigma(),
        "ACCRUE(polynomial)": rcal.ACCRUE(),
    }


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_ours(name: str, proto, d: dict, n: int, repeat: int) -> dict:
    from sklearn.base import clone

    cal = Gaussian(d["mu"][:n], d["sigma"][:n])
    test = Gaussian(d["mu"][n:], d["sigma"][n:])
    y_cal, x_cal, x_test = d["y"][:n], d["x"][:n], d["x"][n:]
    t_fit, est = timed(lambda: clone(proto).fit(cal, y_cal, features=x_cal), repeat)
    t_tr, out = timed(lambda: est.transform(test, features=x_test), repeat)
    t_q, (lo, hi) = timed(lambda: out.interval(0.9), repeat)
    cover = float(np.mean((d["y"][n:] >= lo) & (d["y"][n:] <= hi)))
    return {"method": name, "library": "calib_core", "fit": t_fit, "transform": t_tr, "query": t_q, "cover90": cover}


def bench_ut(d: dict, n: int, repeat: int) -> dict:
    import uncertainty_toolbox as uct
    from uncertainty_toolbox.metrics_calibration import get_prediction_interval
    from uncertainty_toolbox.recalibration import iso_recal

    mu, sd, y = d["mu"][:n], d["sigma"][:n], d["y"][:n]

    def fit():
        with contextlib.redirect_stdout(io.StringIO()):
            exp_props, obs_props = uct.get_proportion_lists_vectorized(mu, sd, y)
            return iso_recal(exp_props, obs_props)

    t_fit, model = timed(fit, repeat)
    t_q, bounds = timed(lambda: get_prediction_interval(d["mu"][n:], d["sigma"][n:], 0.9, model), repeat)
    cover = float(np.mean((d["y"][n:] >= bounds.lower) & (d["y"][n:] <= bounds.upper)))
    return {
        "method": "iso_recal (interval props, 100 levels)",
        "library": "uncertainty-toolbox",
        "fit": t_fit,
        "transform": np.nan,
        "query": t_q,
        "cover90": cover,
    }


def bench_netcal(d: dict, n: int, repeat: int, t_grid: int, netcal_rows: int, netcal_full: bool) -> list[dict]:
    from netcal.regression import IsotonicRegression, VarianceScaling

    X_cal = (d["mu"][:n], d["sigma"][:n])
    X_test = (d["mu"][n:], d["sigma"][n:])
    y_cal = d["y"][:n]
    out = []
    t_fit, vs = timed(lambda: VarianceScaling().fit(X_cal, y_cal), repeat)
    t_tr, sd_new = timed(lambda: vs.transform(X_test), repeat)
    sd_new = np.asarray(sd_new).reshape(-1)
    t_q, (lo, hi) = timed(lambda: (X_test[0] - Z90 * sd_new, X_test[0] + Z90 * sd_new), repeat)
    cover = float(np.mean((d["y"][n:] >= lo) & (d["y"][n:] <= hi)))
    out.append(
        {
            "method": "VarianceScaling",
            "library": "netcal",
            "fit": t_fit,
            "transform": t_tr,
            "query": t_q,
            "cover90": cover,
        }
    )
    t_fit, iso = timed(lambda: IsotonicRegression().fit(X_cal, y_cal), repeat)
    # netcal's transform loops over rows in Python (one scipy interp1d per row in
    # density_from_cumulative, ≈ 1–2 ms/row), so it is O(N) with a large constant: time it on
    # n_sub rows and scale by N/n_sub unless --netcal-full.
    n_sub = n if netcal_full else min(n, netcal_rows)
    X_sub = (X_test[0][:n_sub], X_test[1][:n_sub])
    t_tr, _ = timed(lambda: iso.transform(X_sub, t=t_grid), 1 if n_sub < n else repeat)
    label = f"IsotonicRegression (t={t_grid})"
    if n_sub < n:
        label += f" [transform timed on {n_sub:.0e} rows ×{n / n_sub:g}]"
    out.append(
        {
            "method": label,
            "library": "netcal",
            "fit": t_fit,
            "transform": t_tr * n / n_sub,
            "query": np.nan,
            "cover90": np.nan,
        }
    )
    return out


COUNTERPART = {
    "VarianceScaling": "StdScaling",
    "iso_recal (interval props, 100 levels)": "IsotonicRecalibration",
}


def run(
    sizes: list[int], repeat: int, skip: set[str], t_grid: int, netcal_rows: int, netcal_full: bool
) -> pd.DataFrame:
    rows = []
    for n in sizes:
        d = make_data(n)
        for name, proto in calibrators().items():
            if name in skip:
                continue
            r = bench_ours(name, proto, d, n, repeat)
            rows.append({"N": n, **r})
            print(f"# N={n:.0e} {name}: fit {r['fit']:.3f}s transform {r['transform']:.3f}s", flush=True)
        rows.append({"N": n, **bench_ut(d, n, repeat)})
        rows += [{"N": n, **r} for r in bench_netcal(d, n, repeat, t_grid, netcal_rows, netcal_full)]
    df = pd.DataFrame(rows)
    df["fit+transform"] = df["fit"] + df["transform"].fillna(0.0)
    df["total"] = df["fit+transform"] + df["query"].fillna(0.0)
    df["× StdScaling"] = np.nan
    df["peer / calib_core (fit+transform)"] = np.nan
    df["peer / calib_core (total)"] = np.nan
    for i, r in df.iterrows():
        same_n = df[df["N"] == r["N"]]
        base = same_n[same_n["method"] == "StdScaling"]
        if len(base):
            df.loc[i, "× StdScaling"] = r["fit+transform"] / base["fit+transform"].iloc[0]
        cp = (
            "IsotonicRecalibration"
            if r["method"].startswith("IsotonicRegression (t=")
            else COUNTERPART.get(r["method"])
        )
        ref = same_n[same_n["method"] == cp]
        if cp is not None and len(ref):
            df.loc[i, "peer / calib_core (fit+transform)"] = r["fit+transform"] / ref["fit+transform"].iloc[0]
            if not pd.isna(r["query"]):
                df.loc[i, "peer / calib_core (total)"] = r["total"] / ref["total"].iloc[0]
    return df


def markdown(df: pd.DataFrame) -> str:
    cols = [
        "N",
        "library",
        "method",
        "fit",
        "transform",
        "query",
        "fit+transform",
        "total",
        "× StdScaling",
        "peer / calib_core (fit+transform)",
        "peer / calib_core (total)",
        "cover90",
    ]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if c == "N":
                cells.append(f"{int(v):.0e}")
            elif isinstance(v, str):
                cells.append(v)
            elif pd.isna(v):
                cells.append("—")
            elif c.startswith("×") or c.startswith("peer"):
                cells.append(f"{v:.2f}×")
            elif c == "cover90":
                cells.append(f"{v:.3f}")
            else:
                cells.append(f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", nargs="+", type=float, default=[1e5, 1e6])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--skip", nargs="*", default=[], help="calib_core calibrators to leave out")
    p.add_argument("--netcal-t", type=int, default=16, help="grid points per row of netcal's isotonic transform")
    p.add_argument("--netcal-rows", type=int, default=20000, help="rows on which netcal's isotonic transform is timed")
    p.add_argument("--netcal-full", action="store_true", help="time netcal's isotonic transform on all N rows")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    df = run(
        [int(s) for s in args.sizes], args.repeat, set(args.skip), args.netcal_t, args.netcal_rows, args.netcal_full
    )
    print()
    print(
        f"fit on N calibration rows, transform N test rows, query = central 90% interval of every test row; "
        f"best of {args.repeat}; cover90 = empirical coverage of that interval on the test rows"
    )
    print(markdown(df))
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")


if __name__ == "__main__":
    main()
