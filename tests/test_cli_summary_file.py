"""``python -m calib_core report FILE.summary``: a hostile or damaged summary file exits 2 with a message naming the
file and the part (as any other bad input), never "internal error"; a valid one gives the report."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core import cli
from tests.summary_hostile import file_of, load_array, npy, with_array, with_header

FAST = ["--resamples", "0", "--simulations", "0"]


def _n_rows(value):
    def edit(h):
        h["n_rows"] = value
    return edit


def _bins(h):
    h["spec"]["n_bins"] = 10**9


def _negative(data: bytes) -> bytes:
    n = load_array(data, "n")
    n[0] = -3
    return with_array(data, "n", npy(n))


CASES = {
    "rows 1e15": (lambda d: with_header(d, _n_rows(10**15)), "n_rows"),
    "rows -5": (lambda d: with_header(d, _n_rows(-5)), "n_rows"),
    "a billion bins": (lambda d: with_header(d, _bins), "spec.n_bins"),
    "negative count": (_negative, "negative count"),
    "wrong shape": (lambda d: with_array(d, "n", npy(np.zeros(14, dtype=np.int64))), "shape"),
    "float counts": (lambda d: with_array(d, "n", npy(load_array(d, "n") + 0.5)), "whole numbers"),
    "cut short": (lambda d: d[: len(d) // 2], "damaged or cut short"),
    "garbage zip": (lambda d: b"PK\x03\x04" + b"\xff" * 200, "summary file"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_summary_file_exits_2_naming_the_file(tmp_path, capsys, case):
    make, needle = CASES[case]
    path = tmp_path / "run.summary"
    path.write_bytes(make(file_of("gauss1")))
    code = cli.main(["report", str(path), "-o", str(tmp_path / "r.html"), *FAST])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err
    assert "run.summary" in err and needle in err, err
    assert not (tmp_path / "r.html").exists()


def test_a_valid_summary_file_gives_the_report(tmp_path, capsys):
    path = tmp_path / "run.summary"
    path.write_bytes(file_of("gauss1"))
    code = cli.main(["report", str(path), "-o", str(tmp_path / "r.html"), *FAST])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "r.html").stat().st_size > 1000
