"""``--crossing`` and ``--layout`` of ``python -m calib_core report|evaluate``: crossing quantiles sorted per row by
default (the note says so in command-line words), dropped with ``--crossing drop``; the layout of a file with several
chosen with ``--layout``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calib_core import cli

FAST = ["--resamples", "0", "--simulations", "0"]


def _file(tmp_path) -> str:
    rng = np.random.default_rng(0)
    n = 60
    mean = rng.normal(size=n)
    q = mean[:, None] + np.array([-1.28, 0.0, 1.28])
    q[::6, :] = q[::6, ::-1]  # rows 1, 7, 13, … cross
    frame = pd.DataFrame({"y": mean + rng.normal(size=n), "mean": mean, "std": 1.0,
                          "q0.1": q[:, 0], "q0.5": q[:, 1], "q0.9": q[:, 2]})
    path = tmp_path / "preds.csv"
    frame.to_csv(path, index=False)
    return str(path)


def _report(tmp_path, capsys, *extra: str) -> tuple[int, str, str]:
    code = cli.main(["report", _file(tmp_path), "--out", str(tmp_path / "r.html"), "--force", *FAST, *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_report_sorts_crossing_rows_and_says_so_in_cli_words(tmp_path, capsys):
    code, out, _ = _report(tmp_path, capsys)
    assert code == 0 and "regression, 60 rows, 1 model(s)" in out
    assert "note: 10 rows had crossing quantiles; sorted per row (rearrangement)" in out
    assert "rows 1, 7, 13, 19, 25, 31, 37, 43, 49, 55" in out
    assert "note: using the quantile layout" in out and "--layout gaussian" in out and "--crossing drop" in out
    assert "crossing=" not in out and "layout=" not in out  # no Python keywords on the command line


def test_report_crossing_drop_with_the_quantile_layout_drops_and_counts(tmp_path, capsys):
    code, out, _ = _report(tmp_path, capsys, "--crossing", "drop", "--layout", "quantile")
    assert code == 0 and "regression, 50 rows, 10 dropped" in out
    assert "dropped 10 row(s): quantiles decrease with the level (crossing) (rows 1, 7, 13" in out
    assert "--crossing rearrange (the default) keeps them" in out


def test_report_crossing_drop_alone_reads_the_layout_that_keeps_every_row(tmp_path, capsys):
    code, out, _ = _report(tmp_path, capsys, "--crossing", "drop")
    assert code == 0 and "regression, 60 rows, 1 model(s)" in out
    assert "using the gaussian layout" in out and "would keep 50" in out and "--layout quantile" in out


def test_evaluate_takes_the_options_too(tmp_path, capsys):
    code = cli.main(["evaluate", _file(tmp_path), "--repeats", "1", "--layout", "gaussian", "-c", "std scaling"])
    out = capsys.readouterr().out
    assert code == 0 and "regression, 60 rows" in out and "as asked (--layout gaussian)" in out


@pytest.mark.parametrize("extra", [["--layout", "sample"]])
def test_a_layout_the_file_lacks_exits_2_naming_it(tmp_path, capsys, extra):
    code, _, err = _report(tmp_path, capsys, *extra)
    assert code == 2 and "the sample layout was asked for" in err and "layout=" not in err


def test_bad_option_values_are_argparse_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", _file(tmp_path), "--out", str(tmp_path / "r.html"), "--crossing", "sort"])
    assert exc.value.code == 2 and "--crossing" in capsys.readouterr().err
