"""The installable package: pyproject.toml agrees with requirements.txt and the checkout; a fresh venv gets
``import calib_core``, ``calibration-report`` and ``calibration-lab`` (slow: it installs into a new venv)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from setuptools import find_packages

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _requirements(path: Path) -> set[str]:
    """The pinned requirement lines of a requirements file (no comments, no ``-r`` includes)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line and not line.startswith("-")}


def test_pyproject_dependencies_are_the_pins_of_requirements_txt():
    declared = PYPROJECT["project"]["dependencies"]
    assert len(declared) == len(set(declared))
    assert set(declared) == _requirements(REPO / "requirements.txt")
    assert all("==" in pin for pin in declared)


def test_crosscheck_extra_has_the_pins_of_requirements_dev_txt():
    extra = set(PYPROJECT["project"]["optional-dependencies"]["crosscheck"])
    assert extra <= _requirements(REPO / "requirements-dev.txt")
    assert {pin.split("==")[0] for pin in extra} == {"uncertainty-toolbox", "properscoring", "scoringrules"}


def test_netcal_extra_has_the_pins_of_requirements_netcal_txt_and_dev_requirements_pull_no_torch():
    extra = set(PYPROJECT["project"]["optional-dependencies"]["netcal"])
    assert extra == _requirements(REPO / "requirements-netcal.txt")
    assert {pin.split("==")[0] for pin in extra} == {"torch", "netcal"}
    # the README's test command must not pull torch (a multi-GB CUDA build on an ordinary machine)
    dev = {pin.split("==")[0] for pin in _requirements(REPO / "requirements-dev.txt")}
    assert not dev & {"torch", "netcal"}


def test_pyproject_lists_every_package_of_the_checkout():
    """A new subpackage of calib_core (or of dashboard/) must be added to [tool.setuptools] packages."""
    setup = PYPROJECT["tool"]["setuptools"]
    expected = set(find_packages(str(REPO), include=["calib_core", "calib_core.*"]))
    expected |= {"calibration_lab", "calibration_lab.pages", "calibration_lab.dashboard", "calibration_lab.views"}
    expected |= {f"calibration_lab.{name}" for name in find_packages(str(REPO), include=["dashboard.*"])}
    assert set(setup["packages"]) == expected
    for package, directory in setup["package-dir"].items():
        assert (REPO / directory).is_dir(), package
        assert package == "calibration_lab" or package.removeprefix("calibration_lab.").replace(".", "/") == directory
    assert (REPO / ".streamlit" / "config.toml").is_file() and setup["package-data"]["calibration_lab"] == [
        ".streamlit/config.toml"
    ]
    scripts = PYPROJECT["project"]["scripts"]
    assert scripts == {
        "calibration-lab": "calibration_lab.launcher:main",
        "calibration-report": "calib_core.cli:report_main",
    }


# --- fresh venv -----------------------------------------------------------------------------------------------------

_NOT_SHIPPED = shutil.ignore_patterns(
    ".git", ".venv", "tests", "bench", "docs", "__pycache__", "*.pyc", "build", "dist", "*.egg-info", ".hypothesis",
    ".benchmarks", ".pytest_cache", ".ruff_cache", ".ci",
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - a local test server
        return response.status, response.read().decode("utf-8", "replace")


def _stop_group(proc: subprocess.Popen) -> None:
    """Stop the process group started for ``proc`` (and only it): SIGTERM, then SIGKILL after 15 s."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
    try:  # children left in the group (none expected) go too
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="process groups and venv/bin paths of POSIX")
def test_fresh_venv_install_gives_the_package_and_both_commands(tmp_path):
    if importlib.util.find_spec("ensurepip") is None:
        pytest.skip("python -m venv needs ensurepip (on Debian: apt-get install python3-venv)")
    t0 = time.perf_counter()
    # A copy of the shipped files, so that the build writes nothing (build/, *.egg-info) into the checkout.
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=_NOT_SHIPPED)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bindir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    pip = subprocess.run([str(bindir / "python"), "-m", "pip", "install", "-q", str(src)], env=env,
                         capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    t_install = time.perf_counter() - t0

    outside = tmp_path / "elsewhere"  # neither the checkout nor the copy: only the venv can provide calib_core
    outside.mkdir()
    probe = subprocess.run(
        [str(bindir / "python"), "-c", "import calib_core, calibration_lab; print(calib_core.__file__); "
         "print(calib_core.load_predictions.__name__, calib_core.diagnose.__name__)"],
        cwd=outside, env=env, capture_output=True, text=True, timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    assert Path(probe.stdout.splitlines()[0]).resolve().is_relative_to(venv.resolve())

    # calibration-report on a small CSV written here
    rng = np.random.default_rng(0)
    mu, sigma = rng.normal(size=200), rng.uniform(0.5, 2.0, size=200)
    pd.DataFrame({"y": mu + sigma * rng.normal(size=200), "mean": mu, "std": sigma}).to_csv(outside / "p.csv",
                                                                                          index=False)
    report = subprocess.run(
        [str(bindir / "calibration-report"), "p.csv", "--out", "x.html", "--resamples", "10", "--simulations", "5"],
        cwd=outside, env=env, capture_output=True, text=True, timeout=300,
    )
    assert report.returncode == 0, report.stderr
    html = (outside / "x.html").read_text(encoding="utf-8")
    assert "<html" in html.lower() and "regression" in report.stdout

    # the installed app runs its pages from the venv (imports of pages/ and calib_core resolve there)
    apptest = subprocess.run(
        [str(bindir / "python"), "-c",
         "from importlib.resources import files\n"
         "from streamlit.testing.v1 import AppTest\n"
         "at = AppTest.from_file(str(files('calibration_lab') / 'app.py'), default_timeout=120).run()\n"
         "assert not at.exception, at.exception\n"
         "at.switch_page('pages/regression.py').run()\n"
         "assert not at.exception, at.exception\n"
         "print(at.title[0].value)\n"],
        cwd=outside, env=env, capture_output=True, text=True, timeout=300,
    )
    assert apptest.returncode == 0, apptest.stderr[-3000:]

    # calibration-lab serves the dashboard on a free local port; stopped with its own process group
    port = _free_port()
    log = (outside / "lab.log").open("w")
    proc = subprocess.Popen(
        [str(bindir / "calibration-lab"), "--server.port", str(port), "--server.address", "127.0.0.1"],
        cwd=outside, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        deadline, health = time.monotonic() + 120, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                health = _get(f"http://127.0.0.1:{port}/_stcore/health")
                break
            except OSError:
                time.sleep(0.5)
        assert health == (200, "ok"), (outside / "lab.log").read_text()
        status, page = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and "<html" in page.lower()
    finally:
        _stop_group(proc)
        log.close()
    assert proc.returncode is not None
    lab_log = (outside / "lab.log").read_text()
    assert "Traceback" not in lab_log and "WARNING" not in lab_log, lab_log  # e.g. caches built outside the app
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)  # nothing of the group is left
    print(f"fresh-venv install {t_install:.0f} s, whole test {time.perf_counter() - t0:.0f} s")


def test_a_missing_optional_peer_is_a_skip_with_the_install_command_and_an_error_under_ci(monkeypatch):
    from tests.peers import require_peer

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="requirements-netcal.txt"):
        require_peer("netcal.no_such_module_here")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_peer("netcal.no_such_module_here")
    assert require_peer("numpy").__name__ == "numpy"
