"""Benchmark: a file with many models on the diagnosis pages (200 models once took 22 s to draw and
10 s per control change, with 201 legend entries).

    python bench/many_models.py                    # 200 models × 500 rows, Regression and Classification pages
    python bench/many_models.py --models 200 --rows 500 --repeats 3

Each page runs headless with ``streamlit.testing.v1.AppTest`` on the set put into the session as the Data page
does (the same path as bench/first_diagnosis.py).  Reported per page: the wall time of the first run (diagnosis of
the models shown, every figure and table) and of a control change (the number of bins: a new diagnosis), the page
script's own server time ``page_run_ms`` beside it, the number of models diagnosed (``{prefix}_models``) and the
number of legend entries of the main figure.  Medians over ``--repeats`` fresh apps.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402

PAGES = ROOT / "pages"


def regression_set(n_models: int, n_rows: int, seed: int = 0) -> cc.PredictionSet:
    """``n_models`` Gaussian forecasters of the same kind of targets, σ scaled by 0.5 … 2 (some miscalibrated)."""
    rng = np.random.default_rng(seed)
    n = n_models * n_rows
    mu = rng.normal(size=n)
    scale = np.repeat(np.linspace(0.5, 2.0, n_models), n_rows)
    sigma = rng.uniform(0.5, 2.0, n)
    y = rng.normal(mu, sigma)
    model = np.repeat([f"model {i:03d}" for i in range(n_models)], n_rows).astype(object)
    return cc.PredictionSet(task="regression", source="many.csv", layout="gaussian", y=y,
                            dist=cc.Gaussian(mu, sigma * scale), model=model, row_number=np.arange(1, n + 1),
                            n_read=n)


def classification_set(n_models: int, n_rows: int, k: int = 10, seed: int = 0) -> cc.PredictionSet:
    """``n_models`` softmax classifiers with temperatures 0.5 … 3 on the same kind of labels."""
    rng = np.random.default_rng(seed)
    n = n_models * n_rows
    logits = rng.normal(size=(n, k)) * 2.0
    p_true = np.exp(logits - logits.max(axis=1, keepdims=True))
    p_true /= p_true.sum(axis=1, keepdims=True)
    labels = (rng.random(n)[:, None] > p_true.cumsum(axis=1)).sum(axis=1).clip(0, k - 1)
    t = np.repeat(np.linspace(0.5, 3.0, n_models), n_rows)[:, None]
    probs = np.exp((logits - logits.max(axis=1, keepdims=True)) / t)
    probs /= probs.sum(axis=1, keepdims=True)
    model = np.repeat([f"model {i:03d}" for i in range(n_models)], n_rows).astype(object)
    return cc.PredictionSet(task="classification", source="many.csv", layout="probs", labels=labels, probs=probs,
                            classes=[str(c) for c in range(k)], model=model, row_number=np.arange(1, n + 1),
                            n_read=n)


def run_page(page: str, pset: cc.PredictionSet, prefix: str, chart: str) -> dict[str, float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(PAGES / page), default_timeout=900)
    for k, v in {"pset": pset, "pset_token": f"bench:{time.time_ns()}", "pset_name": "many.csv",
                 "pset_origin": "upload"}.items():
        at.session_state[k] = v
    key = page.removesuffix(".py")
    t0 = time.perf_counter()
    at.run()
    first = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError([e.value for e in at.exception])
    first_ms = float(at.session_state["page_run_ms"][key])
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == chart)
    legend = sum(1 for d in spec["data"] if d.get("showlegend", True) and d.get("name"))
    shown = len(at.session_state[f"{prefix}_models"])
    slider = at.slider(key=f"{prefix}_n_bins")
    slider.set_value(int(slider.value) - 2)
    t0 = time.perf_counter()
    at.run()
    change = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError([e.value for e in at.exception])
    return {"first_s": first, "first_server_s": first_ms / 1000, "change_s": change,
            "change_server_s": float(at.session_state["page_run_ms"][key]) / 1000, "models": shown,
            "legend": legend}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--rows", type=int, default=500, help="rows per model")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--pages", default="regression,classification")
    args = ap.parse_args()
    cases = {
        "regression": ("regression.py", regression_set, "reg", "reg_levi_chart"),
        "classification": ("classification.py", classification_set, "cls", "cls_rel_chart"),
    }
    print(f"{args.models} models × {args.rows:,} rows; median of {args.repeats} fresh app(s)")
    print(f"{'page':<16}{'models shown':>13}{'legend':>8}{'first run s':>13}{'(server)':>10}{'change s':>10}"
          f"{'(server)':>10}")
    for name in args.pages.split(","):
        page, make, prefix, chart = cases[name]
        pset = make(args.models, args.rows)
        runs = [run_page(page, pset, prefix, chart) for _ in range(args.repeats)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"{name:<16}{int(med['models']):>13}{int(med['legend']):>8}{med['first_s']:>13.2f}"
              f"{med['first_server_s']:>10.2f}{med['change_s']:>10.2f}{med['change_server_s']:>10.2f}")


if __name__ == "__main__":
    main()
