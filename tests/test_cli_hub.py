"""``python -m calib_core report <hub folder or files…> --truth FILE [--output-type T]``: a forecast hub's report with
its scores by model; bad input exits with code 2 and a message in command-line words (``--truth``, never
``truth=``), without a traceback.  The real example hub (../shared/data/real/hubverse_simple_forecast_hub, read in
place) gives the coverages its PROVENANCE.md states."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from calib_core import cli
from calib_core.base.predictions import ALL
from calib_core.data.loading_options import by_model_table, hub_cli_message, hub_request
from tests.hub_io_files import ROUNDS, UNITS_PER_MODEL, model_frame, write_hub

REPO = Path(__file__).resolve().parents[1]
FAST = ["--resamples", "0", "--simulations", "0"]


def _main(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["report", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_hub_folder_and_its_truth_give_the_report_with_the_scores_by_model(tmp_path, capsys):
    hub = write_hub(tmp_path / "hub", models={"team-a": 0.0, "team-b": 3.0})
    out = tmp_path / "report.html"
    code, stdout, stderr = _main(capsys, str(hub), "--truth", str(hub / "target-data" / "time-series.csv"),
                                 "--out", str(out), *FAST)
    assert code == 0, stderr
    assert f"{2 * UNITS_PER_MODEL} rows" in stdout and "2 model(s)" in stdout
    assert "scores by model:" in stdout and "team-a" in stdout and "coverage_50" in stdout
    assert any(line.startswith("read: ") and "matched" in line for line in stdout.splitlines())  # the join, said
    html = out.read_text(encoding="utf-8")
    assert "<title>Calibration report: hub</title>" in html
    assert "Scores by model" in html and "team-b" in html


def test_a_hub_folder_without_truth_uses_its_target_data_and_says_so(tmp_path, capsys):
    hub = write_hub(tmp_path / "hub")
    code, stdout, stderr = _main(capsys, str(hub), "--out", str(tmp_path / "r.html"), *FAST)
    assert code == 0, stderr
    assert "read: truth: target-data/time-series.csv" in stdout and "--truth FILE" in stdout


def test_forecast_files_and_the_output_type(tmp_path, capsys):
    files = []
    for r in ROUNDS:
        path = tmp_path / f"{r}-team-a.csv"
        model_frame("team-a", r, mean_rows=True).to_csv(path, index=False)
        files.append(str(path))
    write_hub(tmp_path / "hub")
    truth = str(tmp_path / "hub" / "target-data" / "time-series.csv")
    code, stdout, stderr = _main(capsys, *files, "--truth", truth, "--out", str(tmp_path / "q.html"), *FAST)
    assert code == 0, stderr
    assert f"{UNITS_PER_MODEL} rows" in stdout
    code, stdout, stderr = _main(capsys, *files, "--truth", truth, "--output-type", "mean",
                                 "--out", str(tmp_path / "m.html"), *FAST)
    assert code == 0, stderr
    assert "<title>Calibration report: 2 forecast files</title>" in (tmp_path / "m.html").read_text(encoding="utf-8")


def test_compressed_and_parquet_forecast_files(tmp_path, capsys):
    hub = write_hub(tmp_path / "hub", models={"team-a": 0.0})
    folder = hub / "model-output" / "team-a"
    first, second = sorted(folder.glob("*.csv"))
    model_frame("team-a", ROUNDS[0]).to_csv(folder / f"{first.name}.gz", index=False, compression="gzip")
    model_frame("team-a", ROUNDS[1]).to_parquet(second.with_suffix(".parquet"), index=False)
    first.unlink()
    second.unlink()
    code, stdout, stderr = _main(capsys, str(hub), "--truth", str(hub / "target-data" / "time-series.csv"),
                                 "--out", str(tmp_path / "r.html"), *FAST)
    assert code == 0, stderr
    assert f"{UNITS_PER_MODEL} rows" in stdout


def test_a_hub_file_without_truth_asks_for_the_truth_option(tmp_path):
    hub = write_hub(tmp_path / "hub")
    one = next((hub / "model-output" / "team-a").glob("*.csv"))
    proc = subprocess.run([sys.executable, "-m", "calib_core", "report", str(one), "--out", str(tmp_path / "r.html")],
                          cwd=REPO, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 2
    assert "--truth" in proc.stderr and "truth=" not in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("which", ["forecasts", "truth"])
def test_missing_paths_are_named(tmp_path, capsys, which):
    hub = write_hub(tmp_path / "hub")
    forecasts = str(tmp_path / "nope") if which == "forecasts" else str(hub)
    truth = str(tmp_path / "nope.csv") if which == "truth" else str(hub / "target-data" / "time-series.csv")
    code, _, stderr = _main(capsys, forecasts, "--truth", truth, "--out", str(tmp_path / "r.html"), *FAST)
    assert code == 2 and "nope" in stderr and "no such file" in stderr


def test_an_output_may_not_overwrite_a_hub_file(tmp_path, capsys):
    hub = write_hub(tmp_path / "hub")
    truth = hub / "target-data" / "time-series.csv"
    before = truth.read_bytes()
    code, _, stderr = _main(capsys, str(hub), "--truth", str(truth), "--out", str(truth), "--force", *FAST)
    assert code == 2 and "input" in stderr
    assert truth.read_bytes() == before


def test_hub_request_and_messages_in_command_line_words(tmp_path):
    assert hub_request([str(tmp_path / "x.csv")], None, None) is None  # one file: read as before
    hub = write_hub(tmp_path / "hub")
    request = hub_request([str(hub)], None, "quantile")
    assert request.forecasts == str(hub) and request.truth is None and request.output_type == "quantile"
    assert hub / "target-data" / "time-series.csv" in request.inputs and request.name == "hub"
    text = ("give its truth file too — `truth=` / CLI --truth / Data page truth file. What to do: pass "
            "truth=<target-data file> (e.g. target-data/x.csv), or on the command line --truth <file>; not read: "
            "mean (choose with output_type=…)")
    cli_text = hub_cli_message(text)
    assert "truth=" not in cli_text and "output_type=" not in cli_text and "Data page" not in cli_text
    assert cli_text.count("--truth FILE") == 2 and "--output-type …" in cli_text


def test_by_model_table_keeps_the_hub_scores_else_every_metric():
    long = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "group": ALL,
                         "metric": ["rmse", "coverage_50", "wis"] * 2, "value": [1.0, 0.5, 2.0, 3.0, 0.4, 5.0]})
    assert list(by_model_table(long).columns) == ["model", "wis", "coverage_50"]
    points = long[long["metric"] == "rmse"]
    assert list(by_model_table(points).columns) == ["model", "rmse"]


def test_the_real_example_hub_gives_the_coverages_of_its_provenance(tmp_path, capsys, real_data_dir):
    hub = real_data_dir / "hubverse_simple_forecast_hub"
    out, csv = tmp_path / "real.html", tmp_path / "metrics.csv"
    code, stdout, stderr = _main(capsys, str(hub), "--truth", str(hub / "target-data" / "covid-hospitalizations.csv"),
                                 "--out", str(out), "--metrics-csv", str(csv), *FAST)
    assert code == 0, stderr
    assert "567 rows" in stdout and "3 model(s)" in stdout and "Scores by model" in out.read_text(encoding="utf-8")
    table = by_model_table(pd.read_csv(csv, keep_default_na=False)).set_index("model")
    # PROVENANCE.md, sanity numbers (inclusive interval ends): cov50 / cov90 per model
    expected = {"UMass-ar": (0.503, 0.942), "UMass-gbq": (0.439, 0.852), "simple_hub-baseline": (0.815, 1.000)}
    for model, (c50, c90) in expected.items():
        assert table.loc[model, "coverage_50"] == pytest.approx(c50, abs=6e-4)
        assert table.loc[model, "coverage_90"] == pytest.approx(c90, abs=6e-4)
