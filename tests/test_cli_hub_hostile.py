"""``calibration-report`` on the hostile forecast hubs of ``tests/hub_hostile_cases.py``: a report or an input error
in command-line words (exit code 2), never a traceback; a kept value that makes a metric inf or NaN is named as its
forecast unit with the unit's task IDs, and a unit too few is said in units, not in a file's data rows."""

from __future__ import annotations

import numpy as np
import pytest

import calib_core as cc
from calib_core import cli
from calib_core.base.regression import QuantileSet
from tests.hub_hostile_cases import CASES
from tests.hub_synthetic import synthetic_hub

FAST = ["--resamples", "0", "--simulations", "0"]


def _run(tmp_path, capsys, name: str) -> tuple[int, str, str]:
    files, truth = CASES[name]()
    paths = []
    for n, b in files:
        (tmp_path / n).write_bytes(b)
        paths.append(str(tmp_path / n))
    (tmp_path / truth[0]).write_bytes(truth[1])
    code = cli.main(["report", *paths, "--truth", str(tmp_path / truth[0]), "--out", str(tmp_path / "r.html"), *FAST])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_hostile_hub_gives_a_report_or_a_message(tmp_path, capsys, name):
    code, out, err = _run(tmp_path, capsys, name)
    assert "Traceback" not in err
    if name == "units=1":
        assert code == 2 and "1 forecast unit(s) with truth; a diagnosis needs at least 2" in err, err
        return
    assert code == 0, err
    if name.startswith(("quantile=", "observation=")) and name.endswith("inf"):
        assert "forecast unit(s) dropped" in out and "infinite value" in out  # said in units
    if name in ("quantile=+1e300", "observation=+1e300", "observation=-1e300"):
        assert "because of forecast unit 1 [reference_date 2024-01-06, target wk inc flu hosp, horizon 0, " \
               "location 01]" in out, out


def test_compare_names_the_units_whose_score_overflows():
    ps = synthetic_hub(n_locations=3, n_dates=8, horizons=(0, 1))
    values = ps.dist.values.copy()
    values[0, :11], values[0, 11:] = -1.7e308, 1.7e308  # the interval widths overflow: WIS = inf
    ps.dist = QuantileSet(ps.dist.levels, values)
    with np.errstate(all="ignore"):
        res = cc.compare_models(ps, n_boot=50)
    note = next(n for n in res.notes if "no finite WIS" in n)
    assert "unit 1 [reference_date 2024-01-06, target wk inc flu hosp, horizon 0, location 01]" in note, note
