"""Hostile forecast hubs made by the tests: hubverse model output and its truth with 1, 2 or 3 forecast units, one
model only, one quantile ``value`` or one truth ``observation`` at ±1e300, ±inf or NaN, and a pmf output whose
probabilities are 0 or 1 only.

Each case is ``(forecast files, truth file)`` as ``[(name, bytes)]`` and ``(name, bytes)``, built from the small hub
of ``tests/hub_io_files.py`` (7 quantile levels of N(μ, 1) plus a median row, locations 01, 02, US, horizons 0-2,
two rounds).  The hostile value sits in the first forecast unit of model ``team-a`` (its quantile 0.9 row) or in the
truth of that unit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from tests.hub_io_files import ROUNDS, TARGET, csv_bytes, model_frame, truth_frame

Files = tuple[list[tuple[str, bytes]], tuple[str, bytes]]
HOSTILE = {"+1e300": 1e300, "-1e300": -1e300, "+inf": np.inf, "-inf": -np.inf, "nan": np.nan}


def _files(models=("team-a", "team-b"), rounds=ROUNDS, keep=None, edit=None) -> list[tuple[str, bytes]]:
    out = []
    for m in models:
        for r in rounds:
            f = model_frame(m, r)
            if keep is not None:
                f = f[keep(f)]
            if edit is not None and m == "team-a" and r == rounds[0]:
                f = edit(f)
            out.append((f"{r}-{m}.csv", csv_bytes(f)))
    return out


def _truth(edit=None) -> tuple[str, bytes]:
    t = truth_frame()
    if edit is not None:
        t = edit(t)
    return ("time-series.csv", csv_bytes(t))


def _units(n: int) -> Files:
    """n forecast units of one model: round 1, location 01, horizons 0 .. n − 1."""
    keep = lambda f: (f["location"] == "01") & (f["horizon"] < n)  # noqa: E731
    return _files(models=("team-a",), rounds=ROUNDS[:1], keep=keep), _truth()


def _quantile(v: float) -> Files:
    def edit(f: pd.DataFrame) -> pd.DataFrame:
        f = f.copy()
        f.loc[(f["output_type"] == "quantile") & (f["output_type_id"] == "0.9") & (f["location"] == "01")
              & (f["horizon"] == 0), "value"] = v
        return f
    return _files(edit=edit), _truth()


def _observation(v: float) -> Files:
    end = ROUNDS[0]  # the truth of round 1, horizon 0 (target end date = the round date)

    def edit(t: pd.DataFrame) -> pd.DataFrame:
        t = t.copy()
        t.loc[(t["date"] == end) & (t["location"] == "01"), "observation"] = v
        return t
    return _files(), _truth(edit)


def pmf_hub(values=(0.0, 1.0), n_units: int = 6) -> Files:
    """A pmf hub of one model: categories low / high, probabilities 0 or 1 only, truth a category per unit."""
    dates = pd.date_range("2024-01-06", periods=n_units, freq="7D").strftime("%Y-%m-%d")
    rows, truth = [], []
    for i, d in enumerate(dates):
        p_low = values[i % len(values)]
        rows += [(d, TARGET, 0, "01", d, "pmf", "low", p_low), (d, TARGET, 0, "01", d, "pmf", "high", 1 - p_low)]
        truth.append((d, TARGET, "01", "low" if i % 3 else "high"))
    frame = pd.DataFrame(rows, columns=["reference_date", "target", "horizon", "location", "target_end_date",
                                        "output_type", "output_type_id", "value"])
    t = pd.DataFrame(truth, columns=["date", "target", "location", "observation"])
    return [("2024-01-06-team-a.csv", csv_bytes(frame))], ("time-series.csv", csv_bytes(t))


CASES: dict[str, Callable[[], Files]] = {
    "units=1": lambda: _units(1),
    "units=2": lambda: _units(2),
    "units=3": lambda: _units(3),
    "one-model": lambda: (_files(models=("team-a",)), _truth()),
    **{f"quantile={k}": (lambda v=v: _quantile(v)) for k, v in HOSTILE.items()},
    **{f"observation={k}": (lambda v=v: _observation(v)) for k, v in HOSTILE.items()},
    "pmf-0-1": lambda: pmf_hub(),
    "pmf-certain": lambda: pmf_hub(values=(1.0,)),
}
"""Every hostile hub by name."""
