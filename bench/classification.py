"""Classification bench: real-data calibration table and speed beside netcal 1.4 and scikit-learn 1.9.

Two parts, both printed as markdown tables (and written to ``bench/out/classification.md`` / ``.json``):

1. **Real data** (``../shared/data/real``): every calibrator is fitted on a random half of each set and evaluated on
   the other half, ``--repeats`` times (20 by default, split seed = repeat index), mean ± std of ECE15 (Guo's 15
   equal-width bins, top-label), NLL and Brier (Σ_k, in [0, 2]).  Full-probability sets: CIFAR-10/100 softmax
   outputs of netcal's WRN-16-4 / LeNet-5 / DenseNet-BC-100, Kumar et al.'s VGG-16, TorchUQ's ResNet-18 (logits
   are not available: the scaling methods use logits = log p).  Top-label ResNet-110 CIFAR-100 (markus93 /
   Hollemans CSV): only (label, prediction, confidence) are known, so the calibrators map the confidence as a
   binary "prediction is correct" score; NLL and Brier there are those of that binary event (Brier = mean (q − c)²),
   and temperature / vector / matrix scaling are not applicable.
2. **Speed** at N = 1e4, 1e5, 1e6 and K = 10 (synthetic over-confident logits), all peers in this process except
   netcal's BBQ, which runs in a subprocess with a 120 s timeout.  ``cc.diagnose`` is timed with intervals and
   tests off (the point estimates and the reliability tables) and on (the defaults: 1,000 bootstrap replicates,
   2,000 null draws, every p-value and the headline verdict), side by side (target: at most 3× at 1e6 rows):
   medians of interleaved rounds, at K = 10 (``--k 10 100`` adds K = 100), with the load average.  Peer times are
   the best of a few runs, ours and the peer's interleaved (the machine may be shared).

Usage::

    python bench/classification.py                # everything (~15-20 min: matrix scaling at K = 100 is slow)
    python bench/classification.py --quick        # 3 repeats, N up to 1e5
    python bench/classification.py --skip-real    # speed only
    python bench/classification.py --skip-real --diagnose-only --k 10 100   # cc.diagnose off / on only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from calib_core.calibrators import classification as ccal  # noqa: E402
from calib_core.diagrams import classification as cd  # noqa: E402
from calib_core.metrics import classification as cm  # noqa: E402

REAL = ROOT.parent / "shared" / "data" / "real"
OUT = ROOT / "bench" / "out"

FULL_SETS = [
    ("DenseNet-BC-100 CIFAR-100 (netcal)", "netcal_cifar_probs/densenet-bc-100-cifar-100.npz"),
    ("WRN-16-4 CIFAR-100 (netcal)", "netcal_cifar_probs/wideresnet-16-4-cifar-100.npz"),
    ("LeNet-5 CIFAR-100 (netcal)", "netcal_cifar_probs/lenet-5-cifar-100.npz"),
    ("WRN-16-4 CIFAR-10 (netcal)", "netcal_cifar_probs/wideresnet-16-4-cifar-10.npz"),
    ("LeNet-5 CIFAR-10 (netcal)", "netcal_cifar_probs/lenet-5-cifar-10.npz"),
    ("VGG-16 CIFAR-10 (Kumar et al.)", "plambda_vgg16_cifar10_probs/vgg16_cifar10_test.npz"),
    ("ResNet-18 CIFAR-10 (TorchUQ)", "torchuq_resnet18_cifar10_probs/resnet18_cifar10_test.npz"),
]
TOP_LABEL_SET = (
    "ResNet-110 CIFAR-100, top-label only (markus93)",
    "hollance_toplabel_csv/markus93/probs_resnet110_c100_logits.csv",
)

FULL_CALIBRATORS: dict[str, Callable[[], object] | None] = {
    "uncalibrated": None,
    "temperature": lambda: ccal.TemperatureScaling(input="probs"),
    "vector": lambda: ccal.VectorScaling(input="probs"),
    "matrix": lambda: ccal.MatrixScaling(input="probs"),
    "histogram binning": lambda: ccal.HistogramBinning(input="probs"),
    "isotonic": lambda: ccal.IsotonicCalibration(input="probs"),
    "BBQ": lambda: ccal.BBQ(input="probs"),
}
TOP_CALIBRATORS: dict[str, Callable[[], object] | None] = {
    "uncalibrated": None,
    "Platt (on the confidence)": lambda: ccal.PlattScaling(input="probs"),
    "histogram binning": lambda: ccal.HistogramBinning(input="probs"),
    "isotonic": lambda: ccal.IsotonicCalibration(input="probs"),
    "BBQ": lambda: ccal.BBQ(input="probs"),
}


# --------------------------------------------------------------------------------------------------
# part 1: real data
# --------------------------------------------------------------------------------------------------
def _mean_std(v: list[float], scale: float = 1.0, digits: int = 3) -> str:
    a = np.asarray(v, dtype=float) * scale
    return f"{a.mean():.{digits}f} ± {a.std(ddof=1) if a.size > 1 else 0.0:.{digits}f}"


def real_full(name: str, path: Path, repeats: int) -> dict:
    with np.load(path, allow_pickle=False) as d:
        p, y = d["probs"], d["labels"]
    n = y.size
    res: dict[str, dict[str, list[float]]] = {
        c: {"ece": [], "nll": [], "brier": [], "fit_s": []} for c in FULL_CALIBRATORS
    }
    for r in range(repeats):
        perm = np.random.default_rng(r).permutation(n)
        cal, test = perm[: n // 2], perm[n // 2 :]
        for cname, make in FULL_CALIBRATORS.items():
            t0 = time.perf_counter()
            if make is None:
                q = p[test].astype(float)
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # matrix scaling: K² + K > N/2 for K = 100 (said in the note)
                    est = make().fit(p[cal], y[cal])
                q = est.predict_proba(p[test])
            res[cname]["fit_s"].append(time.perf_counter() - t0)
            res[cname]["ece"].append(cm.ece(y[test], q))
            res[cname]["nll"].append(cm.nll(y[test], q))
            res[cname]["brier"].append(cm.brier(y[test], q))
    return {"name": name, "n": int(n), "k": int(p.shape[1]), "results": res}


def real_top_label(name: str, path: Path, repeats: int) -> dict:
    import pandas as pd

    df = pd.read_csv(path)
    conf = df["confidence"].to_numpy(float)
    correct = (df["true_label"].to_numpy() == df["pred_label"].to_numpy()).astype(int)
    n = conf.size
    res: dict[str, dict[str, list[float]]] = {
        c: {"ece": [], "nll": [], "brier": [], "fit_s": []} for c in TOP_CALIBRATORS
    }
    eps = np.finfo(float).eps
    for r in range(repeats):
        perm = np.random.default_rng(r).permutation(n)
        cal, test = perm[: n // 2], perm[n // 2 :]
        for cname, make in TOP_CALIBRATORS.items():
            t0 = time.perf_counter()
            q = conf[test] if make is None else make().fit(conf[cal], correct[cal]).predict_proba(conf[test])[:, 1]
            res[cname]["fit_s"].append(time.perf_counter() - t0)
            c = correct[test]
            res[cname]["ece"].append(cm.ClassificationRows.from_top_label(q, c).statistics()["ece"])
            qc = np.clip(q, eps, 1 - eps)
            res[cname]["nll"].append(float(-np.mean(c * np.log(qc) + (1 - c) * np.log1p(-qc))))
            res[cname]["brier"].append(float(np.mean((q - c) ** 2)))
    return {"name": name, "n": int(n), "k": None, "results": res}


def real_table(block: dict) -> str:
    k = f"K = {block['k']}" if block["k"] else "top-label only"
    lines = [
        f"**{block['name']}** (N = {block['n']}, {k}; fit on a random half, evaluated on the other, "
        f"{len(next(iter(block['results'].values()))['ece'])} repeats)",
        "",
        "| calibrator | ECE15 (%) | NLL | Brier | fit time (s) |",
        "|---|---|---|---|---|",
    ]
    for cname, r in block["results"].items():
        fit = "—" if cname == "uncalibrated" else f"{np.mean(r['fit_s']):.3f}"
        lines.append(
            f"| {cname} | {_mean_std(r['ece'], 100, 2)} | {_mean_std(r['nll'])} | {_mean_std(r['brier'])} | {fit} |"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# part 2: speed
# --------------------------------------------------------------------------------------------------
def make_data(n: int, k: int = 10, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Over-confident synthetic logits: z ~ N(0, 2²), y ~ softmax(z / 1.5); p = softmax(z)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2.0
    zt = z / 1.5
    pt = np.exp(zt - zt.max(1, keepdims=True))
    pt /= pt.sum(1, keepdims=True)
    u = rng.random(n)
    y = np.minimum((np.cumsum(pt, axis=1) < u[:, None]).sum(1), k - 1)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return z, p, y


def best_of(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """Minimum wall time of each function over ``runs`` interleaved rounds."""
    best = {k: np.inf for k in fns}
    for _ in range(runs):
        for key, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[key] = min(best[key], time.perf_counter() - t0)
    return best


def median_of(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """Median wall time of each function over ``runs`` interleaved rounds (every function sees the same load)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(runs):
        for key, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
    return {k: float(np.median(v)) for k, v in times.items()}


def diagnose_times(sizes: list[int], ks: list[int]) -> dict[tuple[int, int], dict[str, float]]:
    """``cc.diagnose`` with intervals and tests off (point estimates + reliability tables) and on (the defaults),
    medians of interleaved rounds (5 up to 1e5 rows, 3 above), per (K, N)."""
    out = {}
    for k in ks:
        for n in sizes:
            _, p, y = make_data(n, k)
            pset = cc.PredictionSet(task="classification", labels=y, probs=p, layout="probs")
            cc.diagnose(pset, diagrams=False)  # warm-up
            out[(k, n)] = median_of(
                {"off": lambda: cc.diagnose(pset, n_resamples=0, n_simulations=0),
                 "on": lambda: cc.diagnose(pset)},
                5 if n <= 100_000 else 3,
            )
            out[(k, n)]["load"] = os.getloadavg()[0]
            print(f"  diagnose K = {k}, N = {n:.0e}: {out[(k, n)]}", file=sys.stderr)
    return out


def diagnose_table(times: dict[tuple[int, int], dict[str, float]]) -> str:
    fmt = lambda s: f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"  # noqa: E731
    lines = [
        "**`cc.diagnose`** (class-wise ECE included; point estimates = intervals and tests off; on = 1,000 "
        "bootstrap replicates over random row blocks and 2,000 null draws: every interval, p-value and the headline; "
        "medians of interleaved runs)",
        "",
        "| K | N | point estimates + reliability tables | intervals + nulls on | on / off | load (1 min) |",
        "|---|---|---|---|---|---|",
    ]
    for (k, n), t in times.items():
        lines.append(f"| {k} | {n:.0e} | {fmt(t['off'])} | {fmt(t['on'])} | **{t['on'] / t['off']:.2f}×** | "
                     f"{t['load']:.1f} |")
    return "\n".join(lines)


def plain_numpy_ece(p: np.ndarray, y: np.ndarray, n_bins: int = 15) -> float:
    """The reference: top-label ECE with np.bincount, written the usual way."""
    conf = p.max(axis=1)
    acc = (p.argmax(axis=1) == y).astype(float)
    b = np.clip(np.ceil(conf * n_bins).astype(np.int64) - 1, 0, n_bins - 1)
    cnt = np.bincount(b, minlength=n_bins)
    s_conf = np.bincount(b, weights=conf, minlength=n_bins)
    s_acc = np.bincount(b, weights=acc, minlength=n_bins)
    return float(np.abs(s_acc - s_conf).sum() / cnt.sum())


def ours_all_metrics(p: np.ndarray, y: np.ndarray) -> tuple[dict, object]:
    rows = cm.ClassificationRows(y, p, n_bins=15)
    return rows.statistics(classwise=False), cd.reliability_of(rows)


def _sklearn_temperature(z: np.ndarray, y: np.ndarray) -> float:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator

    class PassThrough(ClassifierMixin, BaseEstimator):
        def fit(self, X, yy):
            self.classes_ = np.arange(z.shape[1])
            return self

        def decision_function(self, X):
            return X

        def predict(self, X):
            return np.asarray(X).argmax(1)

    clf = PassThrough().fit(z[:2], y[:2])
    cal = CalibratedClassifierCV(FrozenEstimator(clf), method="temperature").fit(z, y)
    return 1.0 / float(cal.calibrated_classifiers_[0].calibrators[0].beta_)


def netcal_bbq_subprocess(n: int, timeout: float = 120.0) -> str:
    """Time netcal's BBQ fit in a subprocess; "did not finish in 120 s" on timeout."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--netcal-bbq", str(n)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return f"did not finish in {timeout:.0f} s"
    if out.returncode != 0:
        return f"failed ({out.stderr.strip().splitlines()[-1][:80] if out.stderr.strip() else out.returncode})"
    return f"{float(out.stdout.strip().splitlines()[-1]):.2f} s"


def _netcal_bbq_child(n: int) -> None:
    from netcal.binning import BBQ as NBBQ

    _, p, y = make_data(n)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        NBBQ().fit(p, y)
    print(time.perf_counter() - t0)


def speed(sizes: list[int]) -> dict:
    from netcal.binning import IsotonicRegression as NIso
    from netcal.metrics import ECE as NECE
    from netcal.metrics import MCE as NMCE
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator

    class ProbaPassThrough(ClassifierMixin, BaseEstimator):
        def fit(self, X, yy):
            self.classes_ = np.arange(10)
            return self

        def predict_proba(self, X):
            return X

        def predict(self, X):
            return np.asarray(X).argmax(1)

    out: dict[str, dict] = {"metrics": {}, "temperature": {}, "isotonic": {}, "bbq": {}}
    warnings.simplefilter("ignore")
    for n in sizes:
        z, p, y = make_data(n)
        runs = 30 if n <= 100_000 else 5
        # sanity: same numbers
        s, _ = ours_all_metrics(p, y)
        assert abs(s["ece"] - plain_numpy_ece(p, y)) < 1e-12
        t = best_of(
            {
                "plain NumPy bincount ECE": lambda: plain_numpy_ece(p, y),
                "ours: ECE+MCE+NLL+Brier+accuracy+reliability table": lambda: ours_all_metrics(p, y),
                "ours without the DataFrame": lambda: cm.ClassificationRows(y, p).statistics(classwise=False),
                "netcal ECE+MCE (15 bins)": lambda: (NECE(bins=15).measure(p, y), NMCE(bins=15).measure(p, y)),
            },
            runs,
        )
        out["metrics"][n] = t
        # temperature scaling (logits)
        t_ours = ccal.TemperatureScaling().fit(z, y).temperature_
        t_sk = _sklearn_temperature(z, y)
        t = best_of(
            {"ours": lambda: ccal.TemperatureScaling().fit(z, y), "scikit-learn": lambda: _sklearn_temperature(z, y)},
            3 if n <= 100_000 else 2,
        )
        t["T ours"], t["T scikit-learn"] = t_ours, t_sk
        out["temperature"][n] = t
        # isotonic one-vs-rest (probabilities)

        def sk_iso():
            clf = ProbaPassThrough().fit(p[:2], y[:2])
            return CalibratedClassifierCV(FrozenEstimator(clf), method="isotonic").fit(p, y)

        def nc_iso():
            m = NIso()
            m.fit(p, y)
            return m

        t = best_of(
            {
                "ours": lambda: ccal.IsotonicCalibration(input="probs").fit(p, y),
                "netcal": nc_iso,
                "scikit-learn": sk_iso,
            },
            3 if n <= 100_000 else 2,
        )
        out["isotonic"][n] = t
        # BBQ
        if n <= 1_000_000:
            t = best_of({"ours": lambda: ccal.BBQ(input="probs").fit(p, y)}, 2 if n <= 100_000 else 1)
            t["netcal"] = netcal_bbq_subprocess(n) if n <= 100_000 else "not run (1e5 already times out)"
            out["bbq"][n] = t
        print(f"  speed N = {n:.0e} done", file=sys.stderr)
    return out


def speed_tables(sp: dict) -> str:
    sizes = list(sp["metrics"])
    fmt = lambda s: f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"  # noqa: E731
    lines: list[str] = []
    lines += [
        "**Metrics** (K = 10; ours = one `ClassificationRows` pass giving ECE, MCE, NLL, Brier, accuracy, mean "
        "confidence and the reliability table)",
        "",
        "| N | plain NumPy ECE | ours (all metrics + table) | ratio ours / plain | ratio without building the "
        "DataFrame | netcal ECE + MCE |",
        "|---|---|---|---|---|---|",
    ]
    for n in sizes:
        t = sp["metrics"][n]
        plain = t["plain NumPy bincount ECE"]
        ours = t["ours: ECE+MCE+NLL+Brier+accuracy+reliability table"]
        bare = t["ours without the DataFrame"]
        lines.append(
            f"| {n:.0e} | {fmt(plain)} | {fmt(ours)} | {ours / plain:.2f}× | {bare / plain:.2f}× | "
            f"{fmt(t['netcal ECE+MCE (15 bins)'])} |"
        )
    lines += [
        "",
        '**Temperature scaling fit** (K = 10, logits; scikit-learn = `CalibratedClassifierCV(method="temperature")`)',
        "",
        "| N | ours | scikit-learn | speed-up | T ours | T scikit-learn | relative difference |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        t = sp["temperature"][n]
        lines.append(
            f"| {n:.0e} | {fmt(t['ours'])} | {fmt(t['scikit-learn'])} | {t['scikit-learn'] / t['ours']:.1f}× | "
            f"{t['T ours']:.8f} | {t['T scikit-learn']:.8f} | {abs(t['T ours'] / t['T scikit-learn'] - 1):.1e} |"
        )
    lines += [
        "",
        "**Isotonic one-vs-rest fit** (K = 10, probabilities)",
        "",
        "| N | ours | netcal | scikit-learn | speed-up vs netcal | vs scikit-learn |",
        "|---|---|---|---|---|---|",
    ]
    for n in sizes:
        t = sp["isotonic"][n]
        lines.append(
            f"| {n:.0e} | {fmt(t['ours'])} | {fmt(t['netcal'])} | {fmt(t['scikit-learn'])} | "
            f"{t['netcal'] / t['ours']:.1f}× | {t['scikit-learn'] / t['ours']:.1f}× |"
        )
    lines += [
        "",
        "**BBQ fit** (K = 10, one-vs-rest; netcal in a subprocess with a 120 s timeout)",
        "",
        "| N | ours | netcal |",
        "|---|---|---|",
    ]
    for n, t in sp["bbq"].items():
        lines.append(f"| {n:.0e} | {fmt(t['ours'])} | {t['netcal']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="3 repeats, speed up to N = 1e5")
    ap.add_argument("--skip-real", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--diagnose-only", action="store_true", help="speed: only cc.diagnose with inference off / on")
    ap.add_argument("--k", nargs="*", type=int, default=[10], help="classes of the cc.diagnose timings (e.g. 10 100)")
    ap.add_argument("--netcal-bbq", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.netcal_bbq is not None:
        _netcal_bbq_child(args.netcal_bbq)
        return
    repeats = 3 if args.quick else args.repeats
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    report: dict = {"repeats": repeats}
    parts: list[str] = []
    if not args.skip_real:
        if not REAL.is_dir():
            print(f"real data folder {REAL} missing: skipping part 1", file=sys.stderr)
        else:
            blocks = []
            for name, rel in FULL_SETS:
                blocks.append(real_full(name, REAL / rel, repeats))
                print(f"  {name} done", file=sys.stderr)
            blocks.append(real_top_label(TOP_LABEL_SET[0], REAL / TOP_LABEL_SET[1], repeats))
            report["real"] = blocks
            dn = blocks[0]["results"]
            before, after = 100 * np.asarray(dn["uncalibrated"]["ece"]), 100 * np.asarray(dn["temperature"]["ece"])
            head = (
                f"Guo et al.'s headline, DenseNet-BC-100 on CIFAR-100: ECE15 {before.mean():.2f} % uncalibrated → "
                f"{after.mean():.2f} ± {after.std(ddof=1) if after.size > 1 else 0:.2f} % after temperature scaling "
                f"(worst of {after.size} splits {after.max():.2f} %)."
            )
            parts.append("## Real data\n\n" + head + "\n\n" + "\n\n".join(real_table(b) for b in blocks))
    if not args.skip_speed:
        dt = diagnose_times(sizes, args.k)
        report["diagnose"] = {f"K={k}, N={n}": v for (k, n), v in dt.items()}
        speed_text = diagnose_table(dt)
        if not args.diagnose_only:
            sp = speed(sizes)
            report["speed"] = {k: {str(n): v for n, v in d.items()} for k, d in sp.items()}
            speed_text += "\n\n" + speed_tables(sp)
        parts.append("## Speed (one process beside netcal 1.4 and scikit-learn 1.9)\n\n" + speed_text)
    text = "\n\n".join(parts)
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "classification.md").write_text(text + "\n")
    (OUT / "classification.json").write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
