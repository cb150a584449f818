"""``report … --cluster COLUMN|none|auto --block-length K|auto``: the diagnosis resamples the rows the user names,
the text and the HTML report say which, and a column the file lacks or a block length out of range exits with code 2
and a message in command-line words (the choices, ``--cluster none``), never ``cluster=``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calib_core import cli
from calib_core.base.predictions import InputError, PredictionSet
from calib_core.data.cluster_option import cluster_request, parse_block_length
from calib_core.export import clustering_statement, metrics_with_verdicts
from tests.hub_io_files import write_hub

FAST = ["--resamples", "50", "--simulations", "0"]


def _main(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["report", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    return write_hub(tmp_path_factory.mktemp("cluster") / "hub", models={"team-a": 0.0, "team-b": 3.0})


def _site_file(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"y": rng.normal(size=60), "mean": 0.0, "std": 1.0, "site": np.repeat(list("abcdef"), 10)})
    path = tmp_path / "sites.csv"
    frame.to_csv(path, index=False)
    return path


def test_parse_block_length():
    assert parse_block_length(None) is None
    assert parse_block_length(" auto ") == "auto" and parse_block_length("3") == 3
    for bad in ("0", "-2", "1.5", "two"):
        with pytest.raises(ValueError, match="--block-length must be a whole number"):
            parse_block_length(bad)


def test_cluster_request_checks_the_column_and_words_the_hint_for_the_command_line():
    ps = PredictionSet("regression", y=np.zeros(4), slice_columns=pd.DataFrame({"site": ["b", "a", "b", "c"]}),
                       source="preds.csv")
    assert cluster_request(ps, "auto", None) == {"cluster": "auto", "block_length": None}
    assert cluster_request(ps, "none", None) == {"cluster": None, "block_length": None}
    assert cluster_request(ps, "site", "2") == {"cluster": "site", "block_length": 2}
    with pytest.raises(InputError) as err:
        cluster_request(ps, "city", None)
    text = str(err.value)
    assert "preds.csv" in text and "'city'" in text and "'site'" in text
    assert "--cluster none" in text and "cluster=" not in text
    with pytest.raises(InputError) as err:
        cluster_request(ps, "site", "9")
    assert "--block-length 9" in str(err.value) and "block_length=" not in str(err.value)
    with pytest.raises(ValueError, match="--block-length needs a column"):
        cluster_request(ps, "none", "2")


def test_an_unknown_column_exits_2_with_the_choices(tmp_path, capsys):
    code, stdout, stderr = _main(capsys, str(_site_file(tmp_path)), "--out", str(tmp_path / "r.html"),
                                 "--cluster", "city", *FAST)
    assert code == 2 and stdout == ""
    assert stderr.startswith("error: ") and "sites.csv" in stderr and "'city'" in stderr and "'site'" in stderr
    assert "--cluster none" in stderr and "cluster=" not in stderr and "Traceback" not in stderr
    assert not (tmp_path / "r.html").exists()


def test_a_bad_block_length_exits_2(tmp_path, capsys):
    path = _site_file(tmp_path)
    code, _, stderr = _main(capsys, str(path), "--out", str(tmp_path / "r.html"), "--block-length", "x")
    assert code == 2 and "--block-length must be a whole number" in stderr
    code, _, stderr = _main(capsys, str(path), "--out", str(tmp_path / "r.html"), "--cluster", "site",
                            "--block-length", "7", *FAST)
    assert code == 2 and "--block-length 7" in stderr and "6" in stderr


def test_the_options_reach_the_diagnosis_and_the_reports_state_the_clustering(tmp_path, capsys, monkeypatch):
    """The plumbing alone: the options the CLI passes, and the statement it prints from the report's options."""
    seen = {}
    real = cli.diagnose

    def spy(pset, **options):
        seen.update(options)
        report = real(pset, **{k: v for k, v in options.items() if k not in ("cluster", "block_length")})
        report.options["clustering"] = "moving blocks of 2 consecutive site values resampled (6 values)"
        return report

    monkeypatch.setattr(cli, "diagnose", spy)
    out, csv = tmp_path / "r.html", tmp_path / "m.csv"
    code, stdout, stderr = _main(capsys, str(_site_file(tmp_path)), "--out", str(out), "--cluster", "site",
                                 "--block-length", "2", "--metrics-csv", str(csv), *FAST)
    assert code == 0, stderr
    assert seen["cluster"] == "site" and seen["block_length"] == 2
    statement = "Intervals and tests: moving blocks of 2 consecutive site values resampled (6 values)"
    assert statement in stdout.splitlines()
    assert f"{statement}." in out.read_text(encoding="utf-8")
    assert set(pd.read_csv(csv)["resampling"]) == {statement.removeprefix("Intervals and tests: ")}


def test_clustering_statement_and_the_csv_column():
    assert clustering_statement({}) == ""
    statement = clustering_statement({"clustering": "independent rows"})
    assert statement == "Intervals and tests: rows treated as independent"
    metrics = pd.DataFrame({"model": ["m"], "group": ["all"], "metric": ["crps"], "value": [1.0]})
    assert "resampling" not in metrics_with_verdicts(metrics, None, {})
    assert metrics_with_verdicts(metrics, None, {"clustering": "independent rows"})["resampling"].tolist() == [
        "rows treated as independent"]


def test_a_hub_report_resamples_reference_dates_by_default_and_rows_on_request(hub, tmp_path, capsys):
    truth = str(hub / "target-data" / "time-series.csv")
    out = tmp_path / "auto.html"
    code, stdout, stderr = _main(capsys, str(hub), "--truth", truth, "--out", str(out), *FAST)
    assert code == 0, stderr
    statement = "Intervals and tests: whole reference_date clusters resampled (2 clusters)"
    assert statement in stdout.splitlines()
    assert f"{statement}." in out.read_text(encoding="utf-8")
    code, stdout, stderr = _main(capsys, str(hub), "--truth", truth, "--out", str(tmp_path / "rows.html"),
                                 "--cluster", "none", *FAST)
    assert code == 0, stderr
    assert "Intervals and tests: rows treated as independent" in stdout.splitlines()
    code, stdout, stderr = _main(capsys, str(hub), "--truth", truth, "--out", str(tmp_path / "loc.html"),
                                 "--cluster", "location", *FAST)
    assert code == 0, stderr
    assert "Intervals and tests: whole location clusters resampled (3 clusters)" in stdout.splitlines()
