"""Benchmark: server CPU of the diagnosis pages with a slice chosen on the Slice explorer, the whole data drawn
faintly behind it, against the same steps without a slice, at 10⁵ rows.

    python bench/slice_background.py                      # both pages, 3 sessions each
    python bench/slice_background.py --pages regression --repeats 5 --n 1e5

Each session (new data, seed = repeat) runs the page through ``app.py`` with ``AppTest``: its first diagnosis of
all rows, then the slice chosen (region / site = the planted miscalibrated level, a quarter / third of the rows),
a redraw that changes nothing, the bins 15 → 16, back to 15 (seen), and "Show all rows".  The baseline session
runs the same bin steps without a slice.  Figure: the script thread's CPU time (``time.thread_time``, as
``bench/page_cpu.py``), medians over the sessions.  The faint background costs one diagnosis of all rows without
resamples or null draws per new set of options (values and diagram tables only), then nothing per redraw.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from page_cpu import _CPU_MS, _record_cpu  # noqa: E402

import calib_core as cc  # noqa: E402
from calib_core.base.regression import Gaussian  # noqa: E402


def data(page: str, n: int, seed: int) -> tuple[cc.PredictionSet, np.ndarray, str]:
    """A set with one miscalibrated level of a text column, that level's row mask and its name."""
    rng = np.random.default_rng(seed)
    if page == "regression":
        region = rng.choice(["north", "south", "east", "west"], n)
        mu, sigma = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
        y = mu + np.where(region == "east", 1.4, 1.0) * sigma * rng.normal(size=n)
        pset = cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=Gaussian(mu, sigma), point=mu,
                                slice_columns=pd.DataFrame({"region": region}), row_number=np.arange(1, n + 1),
                                n_read=n)
        return pset, region == "east", "region = east"
    site = rng.choice(["a", "b", "c"], n)
    logits = rng.normal(scale=2.0, size=(n, 3))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    sharp = np.exp(logits / np.where(site == "c", 2.0, 1.0)[:, None])
    sharp /= sharp.sum(axis=1, keepdims=True)
    labels = (rng.random(n)[:, None] > np.cumsum(sharp, axis=1)).sum(axis=1)
    pset = cc.PredictionSet(task="classification", layout="probs", labels=labels, probs=p, classes=["0", "1", "2"],
                            slice_columns=pd.DataFrame({"site": site}), row_number=np.arange(1, n + 1), n_read=n)
    return pset, site == "c", "site = c"


def session(page: str, n: int, seed: int, with_slice: bool) -> dict[str, float]:
    """{step: script CPU ms} of one new session."""
    from streamlit.testing.v1 import AppTest

    import dashboard

    pset, mask, label = data(page, n, seed)
    prefix = "reg" if page == "regression" else "cls"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    dashboard.warm_up_core().join()
    token = f"bench-slice:{page}:{n}:{seed}:{with_slice}:{os.getpid()}"
    for key, value in {"pset": pset, "pset_token": token, "pset_name": "bench.csv", "pset_origin": "upload"}.items():
        at.session_state[key] = value
    at.switch_page(str(ROOT / "pages" / f"{page}.py"))
    focus = {"token": token, "label": label, "mask": mask, "n": int(mask.sum())}
    steps = [("first diagnosis (all rows)", None)]
    if with_slice:
        steps.append(("slice chosen", lambda a: a.session_state.__setitem__("slice_focus", focus)))
    steps += [("redraw, nothing changed", lambda a: None),
              ("bins 15 → 16", lambda a: a.slider(key=f"{prefix}_n_bins").set_value(16)),
              ("bins 16 → 15 (seen)", lambda a: a.slider(key=f"{prefix}_n_bins").set_value(15))]
    if with_slice:
        steps.append(("Show all rows", lambda a: a.button(key=f"{prefix}_slice_clear").click()))
    out = {}
    for name, change in steps:
        if change is not None:
            change(at)
        at.run()
        if at.exception:
            raise RuntimeError([e.value for e in at.exception])
        out[name] = _CPU_MS[-1]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", default="regression,classification")
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    _record_cpu()
    n = int(args.n)
    print(f"Script-thread CPU per step at N = {n:,} (median of {args.repeats} sessions on new data; ms)")
    for page in args.pages.split(","):
        rows = {}
        for with_slice in (False, True):
            runs = [session(page, n, seed, with_slice) for seed in range(1, args.repeats + 1)]
            rows[with_slice] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"\n| {page} step | no slice (ms) | slice + faint all rows (ms) |\n|---|---|---|")
        for name in rows[True]:
            base = rows[False].get(name)
            print(f"| {name} | {'' if base is None else f'{base:.0f}'} | {rows[True][name]:.0f} |", flush=True)
    print(f"\nload average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
