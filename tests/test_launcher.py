"""``calibration-lab`` (launcher.py): streamlit run on app.py with the project's .streamlit/config.toml as flags.

The launcher starting a real server from a fresh venv is tested in tests/test_packaging.py (slow)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.web import cli as streamlit_cli

import launcher

REPO = Path(__file__).resolve().parents[1]


def test_config_flags_read_the_streamlit_config(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[server]\nheadless = true\nmaxUploadSize = 500\nfileWatcherType = "none"\n'
                      '[runner]\nmagicEnabled = false\n', encoding="utf-8")
    assert launcher.config_flags(config) == ["--server.headless=true", "--server.maxUploadSize=500",
                                             "--server.fileWatcherType=none", "--runner.magicEnabled=false"]
    assert launcher.config_flags(tmp_path / "missing.toml") == []


def test_streamlit_args_run_the_app_with_the_project_config_then_the_forwarded_arguments():
    args = launcher.streamlit_args(["--server.port", "8600"])
    assert args[0] == "run" and Path(args[1]) == REPO / "app.py"
    flags = launcher.config_flags(REPO / ".streamlit" / "config.toml")
    assert "--server.maxUploadSize=500" in flags and "--client.showErrorDetails=none" in flags
    assert "--server.enableXsrfProtection=true" in flags
    # the project's settings first, the forwarded arguments last (the last value of a flag wins in streamlit run)
    assert args[2:] == [*flags, "--server.port", "8600"]


def test_missing_app_is_a_message_not_a_traceback(tmp_path, monkeypatch, capsys):
    with pytest.raises(FileNotFoundError, match="pip install"):
        launcher.find_app(tmp_path)
    monkeypatch.setattr(launcher, "ROOT", tmp_path)
    assert launcher.main([]) == 2
    assert "app.py is missing" in capsys.readouterr().err


def test_help_does_not_start_streamlit(capsys):
    assert launcher.main(["--help"]) == 0
    assert "usage: calibration-lab" in capsys.readouterr().out


def test_forwarded_flags_override_the_project_config_in_streamlit_run():
    """The order of streamlit_args is what makes ``calibration-lab --server.headless false`` win (last value wins)."""
    args = launcher.streamlit_args(["--server.headless", "false", "--server.maxUploadSize", "7"])
    params = streamlit_cli.main_run.make_context("run", args[1:]).params
    assert params["server_headless"] is False and params["server_maxUploadSize"] == 7
    assert streamlit_cli.main_run.make_context("run", launcher.streamlit_args()[1:]).params["server_headless"] is True
