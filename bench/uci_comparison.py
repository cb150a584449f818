"""Post-hoc regression recalibrators on UCI sets under CRUDE's protocol (Zelikman et al. §5.1, Table 1).

    python bench/uci_comparison.py                         # 8 sets × 20 trials × {RF, GP}
    python bench/uci_comparison.py --sets yacht energy --trials 5 --models rf

Protocol (CRUDE §5.1): for each data set, ``--trials`` (20) times: shuffle (seed = trial), split
0.5 / 0.4 / 0.1 into train / calibration / test; train a probabilistic model on the train part; fit
every calibrator on the calibration part; score the test part.  Metrics (CRUDE §4): calibration RMSE
(eq. 12: sqrt of the mean squared gap between p̂_j and p_j over p = 0, 0.01, …, 1,
``rm.calibration_rmse``) and sharpness (sqrt of the mean predicted variance of the *recalibrated*
distribution, ``rm.sharpness``; exact variances: ShapeScale σ²·var(Ẑ) for CRUDE, the exact moments
of R∘F for Kuleshov).  Targets are standardised with the training part's mean and std, so the
sharpness is in units of std(y), as CRUDE's Table 1 appears to be (its sharpness values are O(0.1–1)
on sets whose raw target std is O(10)).  Mean ± std over trials.

Models, both from scikit-learn:

* ``rf`` — RandomForestRegressor (100 trees, seeded); μ = forest mean, σ = std of the tree predictions
  (floored at 1e-3 std(y) so z stays finite).  An ensemble spread: epistemic only, overconfident.
* ``gp`` — GaussianProcessRegressor, kernel C·RBF(ARD) + White, inputs standardised; predictive std
  includes the fitted noise.  Trained on at most ``--gp-max-train`` (1000) of the train rows (seeded
  subsample; GP fitting is O(n³)) — only kin8nm and power-plant are affected.

Calibrators (``calib_core.calibrators.regression``, not reimplemented here): none, STD scaling (Levi
eq. 12), Gaussian MLE with shift (CRUDE's baseline), Kuleshov isotonic, CRUDE.

At the end the orderings are compared with CRUDE's Table 1, read from the seed text
(``../shared/seeds/zelikman_crude.txt``) for the eight data sets both share.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.uci_data import available, load_uci  # noqa: E402
from calib_core import Gaussian  # noqa: E402
from calib_core.calibrators import regression as rcal  # noqa: E402
from calib_core.metrics import regression as rm  # noqa: E402

SEED_TEXT = ROOT.parent / "shared" / "seeds" / "zelikman_crude.txt"
DEFAULT_SETS = [
    "yacht",
    "bostonHousing",
    "energy",
    "concrete",
    "wine-quality-red",
    "kin8nm",
    "power-plant",
    "airfoil",
]
#: our file stem -> CRUDE Table 1 row name
PAPER_NAMES = {
    "yacht": "yacht",
    "bostonHousing": "housing",
    "energy": "energy",
    "concrete": "concrete",
    "wine-quality-red": "wine",
    "kin8nm": "kin8nm",
    "power-plant": "power",
    "airfoil": "airfoil",
}
CALIBRATORS = {
    "none": None,
    "std scaling": rcal.StdScaling(),
    "MLE+shift": rcal.GaussianShiftScale(),
    "Kuleshov": rcal.IsotonicRecalibration(),
    "CRUDE": rcal.CRUDE(),
}
PAPER_METHODS = ["none", "MLE+shift", "Kuleshov", "CRUDE"]  # CRUDE Table 1's column order
PAPER_MODELS = ["VarNN", "DropoutNN", "NGBoost", "GP"]


# ----------------------------------------------------------------------------------------------
# models
# ----------------------------------------------------------------------------------------------
def fit_predict(model: str, X_tr, y_tr, X_out: list[np.ndarray], seed: int, gp_max_train: int):
    """Train one model and return [(μ, σ)] for each array in ``X_out``."""
    if model == "rf":
        rf = RandomForestRegressor(n_estimators=100, random_state=seed, n_jobs=1).fit(X_tr, y_tr)
        out = []
        for X in X_out:
            per_tree = np.stack([tree.predict(X) for tree in rf.estimators_])
            out.append((per_tree.mean(axis=0), np.maximum(per_tree.std(axis=0), 1e-3)))
        return out
    if model == "gp":
        if len(y_tr) > gp_max_train:
            keep = np.random.default_rng(seed).choice(len(y_tr), gp_max_train, replace=False)
            X_tr, y_tr = X_tr[keep], y_tr[keep]
        d = X_tr.shape[1]
        kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(d), (1e-2, 1e3)) + WhiteKernel(0.1, (1e-6, 1e1))
        gp = GaussianProcessRegressor(kernel=kernel, normalize_y=False, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gp.fit(X_tr, y_tr)
        return [tuple(gp.predict(X, return_std=True)) for X in X_out]
    raise ValueError(f"unknown model {model!r}")


@lru_cache(maxsize=2)
def _data(name: str):
    return load_uci(name)


def one_trial(task: tuple) -> list[dict]:
    """CRUDE protocol, one shuffle: train / calibrate / test and score every calibrator."""
    name, trial, models, gp_max_train = task
    X, y, _ = _data(name)
    n = len(y)
    perm = np.random.default_rng(trial).permutation(n)
    n_tr, n_cal = int(0.5 * n), int(0.4 * n)
    tr, cal, te = perm[:n_tr], perm[n_tr : n_tr + n_cal], perm[n_tr + n_cal :]
    x_mean, x_std = X[tr].mean(axis=0), X[tr].std(axis=0)
    x_std = np.where(x_std > 0, x_std, 1.0)
    y_mean, y_std = y[tr].mean(), y[tr].std()
    Xs, ys = (X - x_mean) / x_std, (y - y_mean) / y_std
    rows = []
    for model in models:
        t0 = time.perf_counter()
        (mu_c, sd_c), (mu_t, sd_t) = fit_predict(model, Xs[tr], ys[tr], [Xs[cal], Xs[te]], trial, gp_max_train)
        t_model = time.perf_counter() - t0
        d_cal, d_te = Gaussian(mu_c, sd_c), Gaussian(mu_t, sd_t)
        for cname, cal_proto in CALIBRATORS.items():
            t0 = time.perf_counter()
            if cal_proto is None:
                d_out = d_te
            else:
                d_out = clone(cal_proto).fit(d_cal, ys[cal]).transform(d_te)
            rows.append(
                {
                    "dataset": name,
                    "trial": trial,
                    "model": model,
                    "calibrator": cname,
                    "cal_rmse": rm.calibration_rmse(ys[te], d_out),
                    "sharpness": rm.sharpness(ys[te], d_out),
                    "rmse": rm.rmse(ys[te], d_out),
                    "model_seconds": t_model,
                    "calibrator_seconds": time.perf_counter() - t0,
                }
            )
    return rows


# ----------------------------------------------------------------------------------------------
# CRUDE Table 1 from the seed text
# ----------------------------------------------------------------------------------------------
def paper_table1(path: Path = SEED_TEXT) -> pd.DataFrame | None:
    """CRUDE Table 1 as a long table (dataset, model, calibrator, metric, value), parsed from the seed text.

    The text lists the sharpness block first, then the calibration block; each row is a data set
    name followed by 16 numbers (4 models × none/MLE/Kule./CRUDE), some prefixed by ``\\ul``.
    """
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    start = text.find("Table 1: Performance on UCI Datasets")
    if start < 0:
        return None
    rows, seen = [], {}
    for line in text[start:].splitlines()[1:]:
        tokens = line.replace("\\ul", "").split()
        if len(tokens) == 17 and re.fullmatch(r"[a-z0-9]+", tokens[0]):
            try:
                values = [float(t) for t in tokens[1:]]
            except ValueError:
                continue
            block = seen.get(tokens[0], 0)
            seen[tokens[0]] = block + 1
            metric = "sharpness" if block == 0 else "cal_rmse"
            for i, v in enumerate(values):
                rows.append(
                    {
                        "dataset": tokens[0],
                        "model": PAPER_MODELS[i // 4],
                        "calibrator": PAPER_METHODS[i % 4],
                        "metric": metric,
                        "value": v,
                    }
                )
        if len(rows) >= 2 * 12 * 16:
            break
    return pd.DataFrame(rows) if rows else None


def ordering_stats(table: pd.DataFrame) -> dict[str, float]:
    """Fractions of (data set, model) cells in which each CRUDE Table 1 claim holds.

    ``table``: columns dataset, model, calibrator, cal_rmse, sharpness (means), methods PAPER_METHODS.
    Values are rounded to 3 decimals first (the paper prints 3) and ties count as holding.
    """
    out = {}
    table = table.assign(cal_rmse=table["cal_rmse"].round(3), sharpness=table["sharpness"].round(3))
    cells = list(table.groupby(["dataset", "model"]))
    n = len(cells)

    def frac(pred) -> float:
        return sum(bool(pred(g.set_index("calibrator"))) for _, g in cells) / n

    calibrated = ["MLE+shift", "Kuleshov", "CRUDE"]
    out["CRUDE best calibrated (of MLE/Kule./CRUDE)"] = frac(
        lambda g: g.loc["CRUDE", "cal_rmse"] <= g.loc[calibrated, "cal_rmse"].min()
    )
    out["CRUDE calibration ≤ MLE+shift"] = frac(lambda g: g.loc["CRUDE", "cal_rmse"] <= g.loc["MLE+shift", "cal_rmse"])
    out["CRUDE calibration ≤ Kuleshov"] = frac(lambda g: g.loc["CRUDE", "cal_rmse"] <= g.loc["Kuleshov", "cal_rmse"])
    out["none worst calibrated"] = frac(lambda g: g.loc["none", "cal_rmse"] >= g.loc[PAPER_METHODS, "cal_rmse"].max())
    out["CRUDE sharper than or equal to MLE+shift"] = frac(
        lambda g: g.loc["CRUDE", "sharpness"] <= g.loc["MLE+shift", "sharpness"]
    )
    out["Kuleshov least sharp of the calibrated"] = frac(
        lambda g: g.loc["Kuleshov", "sharpness"] >= g.loc[calibrated, "sharpness"].max()
    )
    out["none sharpest"] = frac(lambda g: g.loc["none", "sharpness"] <= g.loc[PAPER_METHODS, "sharpness"].min())
    return out


# ----------------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------------
def markdown_tables(df: pd.DataFrame, sets: list[str], models: list[str]) -> str:
    summ = df.groupby(["dataset", "model", "calibrator"])[["cal_rmse", "sharpness"]].agg(["mean", "std"])
    out = []
    for metric, title in (("cal_rmse", "Calibration RMSE (CRUDE eq. 12)"), ("sharpness", "Sharpness (units of std y)")):
        header = ["dataset"] + [f"{m.upper()} {c}" for m in models for c in CALIBRATORS]
        lines = [f"**{title}**, mean ± std over trials (test rows); lowest calibrated mean per model in bold", ""]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for name in sets:
            cells = [name]
            for m in models:
                means = {c: summ.loc[(name, m, c), (metric, "mean")] for c in CALIBRATORS}
                best = min((c for c in CALIBRATORS if c != "none"), key=lambda c: means[c])
                for c in CALIBRATORS:
                    s = f"{means[c]:.3f} ± {summ.loc[(name, m, c), (metric, 'std')]:.3f}"
                    cells.append(f"**{s}**" if (c == best and metric == "cal_rmse") else s)
            lines.append("| " + " | ".join(cells) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def comparison_with_paper(df: pd.DataFrame, sets: list[str]) -> str:
    paper = paper_table1()
    ours = (
        df[df["calibrator"].isin(PAPER_METHODS)]
        .groupby(["dataset", "model", "calibrator"], as_index=False)[["cal_rmse", "sharpness"]]
        .mean()
    )
    ours_stats = ordering_stats(ours)
    lines = [
        "| ordering claim (fraction of data set × model cells where it holds) | this run | CRUDE Table 1 |",
        "|---|---|---|",
    ]
    paper_stats: dict[str, float] = {}
    if paper is not None:
        wanted = {PAPER_NAMES[s] for s in sets if s in PAPER_NAMES}
        p = paper[paper["dataset"].isin(wanted)]
        p = p.pivot_table(index=["dataset", "model", "calibrator"], columns="metric", values="value").reset_index()
        paper_stats = ordering_stats(p)
    for key, value in ours_stats.items():
        ref = f"{paper_stats[key]:.2f}" if key in paper_stats else "n/a"
        lines.append(f"| {key} | {value:.2f} | {ref} |")
    n_cells = ours.groupby(["dataset", "model"]).ngroups
    lines.append("")
    lines.append(
        f"this run: {n_cells} cells ({len(sets)} sets × models); CRUDE Table 1: the same data sets × its 4 models "
        "(VarNN, Dropout NN, NGBoost, GP)" + ("" if paper is not None else " — seed text not found")
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", nargs="+", default=DEFAULT_SETS)
    p.add_argument("--models", nargs="+", default=["rf", "gp"], choices=["rf", "gp"])
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--gp-max-train", type=int, default=1000)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--csv", type=Path, default=None, help="also write the long per-trial table here")
    args = p.parse_args(argv)
    sets = [s for s in args.sets if s in available()]
    if len(sets) < len(args.sets):
        print(f"skipping missing sets: {sorted(set(args.sets) - set(sets))}")
    if not sets:
        print("no UCI data found; nothing to do")
        return
    t0 = time.perf_counter()
    tasks = [(name, trial, tuple(args.models), args.gp_max_train) for name in sets for trial in range(args.trials)]
    rows: list[dict] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for i, r in enumerate(pool.map(one_trial, tasks)):
            rows += r
            if (i + 1) % args.trials == 0:
                print(f"# {tasks[i][0]} done at {time.perf_counter() - t0:.0f}s", flush=True)
    df = pd.DataFrame(rows)
    if args.csv is not None:
        df.to_csv(args.csv, index=False)
    print()
    print(
        f"CRUDE protocol: {args.trials} shuffled 0.5/0.4/0.1 train/calibration/test splits; models: "
        + ", ".join(args.models)
        + f" (GP on ≤ {args.gp_max_train} train rows)\n"
    )
    print(markdown_tables(df, sets, args.models))
    print()
    print(comparison_with_paper(df, sets))
    fit_s = df.groupby("model")["model_seconds"].mean()  # one value per (trial, model), repeated per calibrator
    cal_s = df.groupby("calibrator")["calibrator_seconds"].mean()
    print(f"\nmean seconds per trial: model fit+predict {fit_s.round(2).to_dict()}; calibrator fit+transform+metrics")
    print(f"{cal_s.round(4).to_dict()}; total {time.perf_counter() - t0:.0f}s")


if __name__ == "__main__":
    main()
