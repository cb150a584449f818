"""``python -m calib_core report FILE --out report.html``: the report without a browser; exit 2 on bad input."""

from __future__ import annotations

import subprocess
import sys
from html import escape as html_escape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from plotly.offline import get_plotlyjs

from calib_core import cli
from calib_core.base.report import METRIC_COLUMNS

REPO = Path(__file__).resolve().parents[1]
FAST = ["--resamples", "20", "--simulations", "5"]


def _regression_frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    sigma = rng.uniform(0.5, 2.0, size=n)
    y = mu + sigma * rng.normal(size=n)
    return pd.DataFrame({"target": y, "mu": mu, "sigma": sigma, "model": np.where(np.arange(n) % 3, "a", "b")})


def _run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "calib_core", *args], cwd=cwd, capture_output=True, text=True, timeout=180
    )


def test_subprocess_writes_a_self_contained_report(tmp_path):
    csv_path = tmp_path / "preds.csv"
    _regression_frame().rename(columns={"target": "y", "mu": "mean", "sigma": "std"}).to_csv(csv_path, index=False)
    out = tmp_path / "report.html"
    proc = _run("report", str(csv_path), "--out", str(out), "--n-bins", "10", "--binning", "width", "--seed", "3",
                *FAST)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stdout and "300 rows" in proc.stdout and "2 model(s)" in proc.stdout
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.count(get_plotlyjs()) == 1
    assert "<title>Calibration report: preds.csv</title>" in html
    assert "<th>n_bins</th><td>10</td>" in html and "<th>binning</th><td>width</td>" in html
    assert "<th>seed</th><td>3</td>" in html
    assert html.count("Plotly.newPlot(") == 6
    assert "Traceback" not in proc.stderr


def test_subprocess_bad_file_exits_2_with_the_loaders_message(tmp_path):
    bad = tmp_path / "garbage.csv"
    bad.write_bytes(b"\x00\x01\x02 not a table \xff\xfe" * 50)
    out = tmp_path / "r.html"
    proc = _run("report", str(bad), "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "garbage.csv" in proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()


def test_columns_mapping_and_metrics_csv(tmp_path):
    csv_path = tmp_path / "renamed.csv"
    _regression_frame().rename(columns={"target": "obs_value"}).to_csv(csv_path, index=False)
    out, metrics = tmp_path / "r.html", tmp_path / "m.csv"
    code = cli.main(["report", str(csv_path), "-o", str(out), "--columns", "y=obs_value,mean=mu",
                     "--columns", "std=sigma", "--metrics-csv", str(metrics), "--title", "Mapped", "-q", *FAST])
    assert code == 0
    assert "<title>Mapped</title>" in out.read_text(encoding="utf-8")
    table = pd.read_csv(metrics)
    # the Report's metric columns (with the p-values and flags), which rows the intervals and tests resampled
    # together (a file without forecast dates: independent rows) and the headline of each model
    assert list(table.columns) == METRIC_COLUMNS + ["resampling", "headline_verdict", "headline_direction",
                                                    "headline_p_value", "headline"]
    assert set(table["resampling"]) == {"rows treated as independent"}
    assert table["p_value"].notna().any() and set(table["headline_verdict"]) <= {"calibrated", "miscalibrated"}
    assert set(table["model"]) == {"a", "b"} and "ence" in set(table["metric"])


def test_missing_target_column_says_how_to_map_it(tmp_path, capsys):
    csv_path = tmp_path / "renamed.csv"
    _regression_frame().rename(columns={"target": "obs_value"}).to_csv(csv_path, index=False)
    code = cli.main(["report", str(csv_path), "-o", str(tmp_path / "r.html"), *FAST])
    err = capsys.readouterr().err
    assert code == 2
    assert "renamed.csv" in err and "--columns y=<column>" in err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--n-bins", "0"], "--n-bins"),
        (["--level", "1.5"], "--level"),
        (["--columns", "ymean"], "role=column"),
        (["--resamples", "-1"], "--resamples"),
    ],
)
def test_bad_options_exit_2(tmp_path, capsys, extra, needle):
    csv_path = tmp_path / "p.csv"
    _regression_frame().to_csv(csv_path, index=False)
    code = cli.main(["report", str(csv_path), "-o", str(tmp_path / "r.html"), *extra])
    assert code == 2 and needle in capsys.readouterr().err


def test_missing_file_and_unwritable_output_exit_2(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "nope.csv"), "-o", str(tmp_path / "r.html")]) == 2
    assert "nope.csv" in capsys.readouterr().err
    csv_path = tmp_path / "p.csv"
    _regression_frame().to_csv(csv_path, index=False)
    code = cli.main(["report", str(csv_path), "-o", str(tmp_path / "no" / "dir" / "r.html"), "--columns",
                     "y=target", *FAST])
    assert code == 2 and "No such file or directory" in capsys.readouterr().err


def test_argparse_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["report"])
    assert exc.value.code == 2 and "required" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "x.csv", "--out", "r.html", "--binning", "quantile"])
    assert exc.value.code == 2


def test_classification_file(tmp_path):
    rng = np.random.default_rng(2)
    n, k = 400, 3
    z = 2.5 * rng.normal(size=(n, k))
    labels = (z + rng.gumbel(size=(n, k)) * 2.5).argmax(1)
    frame = pd.DataFrame({"label": labels, **{f"logit_{j}": z[:, j] for j in range(k)}})
    csv_path = tmp_path / "cls.csv"
    frame.to_csv(csv_path, index=False)
    out = tmp_path / "r.html"
    assert cli.main(["report", str(csv_path), "-o", str(out), "--strategy", "quantile", "-q", *FAST]) == 0
    html = out.read_text(encoding="utf-8")
    assert "<th>strategy</th><td>quantile</td>" in html and "<th>task</th><td>classification</td>" in html
    # reliability diagram + confidence histogram + the loess calibration curve of the clinical set
    assert html.count("Plotly.newPlot(") == 3


def test_internal_error_is_a_message_not_a_traceback(tmp_path, capsys, monkeypatch):
    csv_path = tmp_path / "p.csv"
    _regression_frame().to_csv(csv_path, index=False)

    def boom(*args, **kwargs):
        raise RuntimeError("simulated failure")

    monkeypatch.setattr("calib_core.cli.diagnose", boom)
    code = cli.main(["report", str(csv_path), "-o", str(tmp_path / "r.html"), "--columns", "y=target"])
    err = capsys.readouterr().err
    assert code == 1 and "internal error: RuntimeError: simulated failure" in err and "Traceback" not in err
    with pytest.raises(RuntimeError):
        cli.main(["report", str(csv_path), "-o", str(tmp_path / "r.html"), "--columns", "y=target", "--traceback"])


def test_parse_columns():
    assert cli.parse_columns(None) is None
    assert cli.parse_columns(["y=t, mean=m", "samples=a|b|c", "q0.05=lo,q0.95=hi", "std="]) == {
        "y": "t",
        "mean": "m",
        "samples": ["a", "b", "c"],
        "quantiles": {"0.05": "lo", "0.95": "hi"},
        "std": None,
    }
    with pytest.raises(ValueError, match="role=column"):
        cli.parse_columns(["y"])


def test_calibration_report_entry_point_takes_the_report_arguments_at_the_top_level(tmp_path, capsys):
    csv_path = tmp_path / "preds.csv"
    _regression_frame().rename(columns={"target": "y", "mu": "mean", "sigma": "std"}).to_csv(csv_path, index=False)
    out = tmp_path / "r.html"
    assert cli.report_main([str(csv_path), "--out", str(out), *FAST]) == 0
    assert "<html" in out.read_text(encoding="utf-8").lower()
    assert cli.report_main([str(tmp_path / "nope.csv"), "--out", str(out)]) == 2
    with pytest.raises(SystemExit) as exc:
        cli.report_main(["--help"])
    assert exc.value.code == 0 and "usage: calibration-report" in capsys.readouterr().out



# ------------------------------------------------------ CLI outputs never overwrite
def test_report_never_overwrites_its_input(tmp_path, capsys):
    keep = tmp_path / "keep.csv"
    _regression_frame().to_csv(keep, index=False)
    before = keep.read_bytes()
    code = cli.main(["report", str(keep), "--out", str(keep), "--columns", "y=target", *FAST])
    err = capsys.readouterr().err
    assert code == 2 and "--out" in err and "input file" in err
    assert keep.read_bytes() == before
    # the same file through another spelling of its path, and as --metrics-csv; --force does not override it
    other = tmp_path / "sub" / ".." / "keep.csv"
    (tmp_path / "sub").mkdir()
    for extra in (["--out", str(other)], ["--out", str(tmp_path / "r.html"), "--metrics-csv", str(other)],
                  ["--out", str(keep), "--force"]):
        assert cli.main(["report", str(keep), "--columns", "y=target", *extra, *FAST]) == 2
        assert "input file" in capsys.readouterr().err
        assert keep.read_bytes() == before
    assert not (tmp_path / "r.html").exists()


def test_report_refuses_an_existing_non_html_output_without_force(tmp_path, capsys):
    src = tmp_path / "p.csv"
    _regression_frame().to_csv(src, index=False)
    data = tmp_path / "other_data.csv"
    data.write_text("a,b\n1,2\n", encoding="utf-8")
    code = cli.main(["report", str(src), "--out", str(data), "--columns", "y=target", *FAST])
    err = capsys.readouterr().err
    assert code == 2 and "--out" in err and "--force" in err and "not an HTML file" in err
    assert data.read_text(encoding="utf-8") == "a,b\n1,2\n"
    # a previous report is replaced; --force replaces anything that is not an input
    out = tmp_path / "r.html"
    assert cli.main(["report", str(src), "--out", str(out), "--columns", "y=target", "-q", *FAST]) == 0
    assert cli.main(["report", str(src), "--out", str(out), "--columns", "y=target", "-q", *FAST]) == 0
    # --metrics-csv: the previous metric table is overwritten, another CSV is not
    metrics = tmp_path / "m.csv"
    args = ["report", str(src), "--out", str(out), "--columns", "y=target", "-q", *FAST]
    assert cli.main([*args, "--metrics-csv", str(metrics)]) == 0
    assert cli.main([*args, "--metrics-csv", str(metrics)]) == 0
    code = cli.main([*args, "--metrics-csv", str(data)])
    assert code == 2 and "--metrics-csv" in capsys.readouterr().err
    assert data.read_text(encoding="utf-8") == "a,b\n1,2\n"
    assert cli.main([*args, "--out", str(data), "--force"]) == 0
    assert data.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_evaluate_never_overwrites_its_input(tmp_path, capsys):
    keep = tmp_path / "keep.csv"
    _regression_frame().rename(columns={"target": "y", "mu": "mean", "sigma": "std"}).to_csv(keep, index=False)
    before = keep.read_bytes()
    for option in ("--out", "--summary-csv", "--trials-csv"):
        assert cli.main(["evaluate", str(keep), option, str(keep), "--repeats", "2", "-q"]) == 2
        assert option in capsys.readouterr().err
        assert keep.read_bytes() == before


@pytest.mark.parametrize(
    ("command", "extra", "needle"),
    [
        ("report", ["--pit-bins", "0"], "--pit-bins must be at least 2, got 0"),
        ("report", ["--pit-bins", "-3"], "--pit-bins must be at least 2"),
        ("report", ["--seed", "-1"], "--seed must be at least 0"),
        ("report", ["--simulations", "-5"], "--simulations must be at least 0"),
        ("evaluate", ["--test-fraction", "1.5"], "--test-fraction must be strictly between 0 and 1"),
        ("evaluate", ["--n-bins", "0"], "--n-bins must be at least 1"),
        ("evaluate", ["--seed", "-2"], "--seed must be at least 0"),
        ("evaluate", ["--repeats", "0"], "--repeats must be at least 1"),
    ],
)
def test_options_are_validated_by_name(tmp_path, capsys, command, extra, needle):
    csv_path = tmp_path / "p.csv"
    _regression_frame().rename(columns={"target": "y", "mu": "mean", "sigma": "std"}).to_csv(csv_path, index=False)
    out = ["--out", str(tmp_path / "r.html")] if command == "report" else []
    assert cli.main([command, str(csv_path), *out, *extra]) == 2
    assert needle in capsys.readouterr().err


def test_classification_errors_get_classification_hints(tmp_path, capsys):
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(3), size=200)
    frame = pd.DataFrame({"lab": p.argmax(1), **{f"prob_{j}": p[:, j] for j in range(3)}})
    csv_path = tmp_path / "cls.csv"
    frame.to_csv(csv_path, index=False)
    assert cli.main(["report", str(csv_path), "--out", str(tmp_path / "r.html"), *FAST]) == 2
    err = capsys.readouterr().err
    assert "--columns label=<column>" in err and "y=<column>" not in err and "columns={" not in err
    # the hint works as given
    assert cli.main(["report", str(csv_path), "--out", str(tmp_path / "r.html"), "--columns", "label=lab",
                     "-q", *FAST]) == 0


def test_cli_message_translates_python_hints():
    assert cli.cli_message("x What to do: map them with columns={'probs': [...]}") == (
        "x What to do: map them with --columns probs=<column>|<column>|…")
    assert "--columns q0.05=lo,q0.95=hi" in cli.cli_message("e.g. columns={'quantiles': {0.05: 'lo', 0.95: 'hi'}}")
    text = cli.cli_message("pass columns={'y': '<name>', 'mean': '<name>', ...})")
    assert "--columns y=<column>,mean=<column>,…" in text


def test_numerical_warnings_become_one_note_not_a_flood(tmp_path):
    frame = _regression_frame().rename(columns={"target": "y", "mu": "mean", "sigma": "std"})
    frame.loc[:5, "std"] = 1e-300  # z overflows: NumPy warns in many places
    csv_path = tmp_path / "tiny.csv"
    frame.to_csv(csv_path, index=False)
    out = tmp_path / "r.html"
    proc = _run("report", str(csv_path), "--out", str(out), *FAST)
    assert proc.returncode == 0, proc.stderr
    assert "RuntimeWarning" not in proc.stderr and proc.stderr.strip() == ""
    # the diagnosis names the rows and why instead of NumPy's warnings: rows 0-5 are 4 of
    # model a's 200 rows and 2 of model b's 100
    html = out.read_text(encoding="utf-8")
    for text in ("model 'a', all rows: 4 of 200 rows have |z| = |y − mean|/σ above 1.3e154 (a tiny σ), so z² overflows",
                 "model 'b', all rows: 2 of 100 rows have |z|"):
        assert f"note: {text}" in proc.stdout
        assert html_escape(text) in html


def test_size_limit_is_a_cli_option_and_the_message_says_so(tmp_path, capsys):
    import gzip

    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(b"y,mean,std\n" + b"0.5,0.25,1\n" * 300_000))  # inflates to 3.3 MB
    out = tmp_path / "r.html"
    assert cli.main(["report", str(bomb), "--out", str(out), "--max-size-mb", "1", *FAST]) == 2
    err = capsys.readouterr().err
    assert "more than the size limit of 1 MB" in err and "pass a larger --max-size-mb (now 1)" in err
    assert "max_bytes" not in err and not out.exists()
    assert cli.main(["evaluate", str(bomb), "--max-size-mb", "1", "-q"]) == 2
    assert "--max-size-mb" in capsys.readouterr().err
    assert cli.main(["report", str(bomb), "--out", str(out), "--max-size-mb", "0"]) == 2
    assert "--max-size-mb must be at least 1, got 0" in capsys.readouterr().err
    assert cli.main(["report", str(bomb), "--out", str(out), "-q", *FAST]) == 0  # within the default 1,024 MB
