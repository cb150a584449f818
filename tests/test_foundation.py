"""Checks of the project foundation: README quick start, .ci/run, tool configuration, data policy."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def _code_blocks(section_title: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split(section_title, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(?:bash|sh|python)?\n(.*?)```", section, re.S)


def _commands(block: str) -> list[str]:
    """The commands of a shell block, without their trailing comments."""
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_readme_is_a_door():
    """A short README: what it is with a screenshot, the two quick-start commands, Python in ~20 lines, the house
    and where to read next; the depth lives in docs/."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    blocks = _code_blocks("## Quick start")
    assert _commands(blocks[0]) == [
        "pip install -r requirements.txt && streamlit run app.py",
        "pip install -r requirements-dev.txt && pytest",
    ]
    assert _commands(blocks[1]) == ['pytest -m "browser or slow"']  # the marked tests' command
    for section in ("## Quick start", "## Python in twenty lines", "## The house", "## Where to read next",
                    "## Data policy"):
        assert section in readme
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme):
        assert (ROOT / image).is_file(), image
    for link in re.findall(r"\]\(((?:docs/|CHANGELOG)[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


def test_readme_python_runs(tmp_path):
    """The README's Python block runs as written on a small Gaussian prediction file."""
    (code,) = _code_blocks("## Python in twenty lines")
    rng = np.random.default_rng(0)
    mean = rng.normal(size=300)
    pd.DataFrame({"y": mean + rng.normal(size=300), "mean": mean, "std": 1.0}).to_csv(
        tmp_path / "predictions.csv", index=False)
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / "calibration_curve.html").is_file()


def test_ci_script_is_strict_and_ordered():
    path = ROOT / ".ci" / "run"
    assert os.access(path, os.X_OK)
    subprocess.run(["bash", "-n", str(path)], check=True)  # syntax
    text = path.read_text()
    assert "set -euo pipefail" in text
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]

    def first(pattern: str) -> int:
        hits = [i for i, ln in enumerate(lines) if re.search(pattern, ln)]
        assert hits, pattern
        return hits[0]

    order = [
        first(r"pip install -r requirements-dev\.txt"),
        first(r"pip install torch==2\.13\.0"),
        first(r"pip install -r requirements-netcal\.txt"),
        first(r"apt-get .*update"),
        first(r"apt-get .*install -y chromium"),
        first(r"^ruff check \.$"),
        first(r"^run_prefixed default -q -ra &$"),  # the README's test command ...
        first(r"^run_prefixed slow -q -ra -m \"slow and not browser\" &$"),  # ... beside the slow tests,
        first(r'^wait "\$default_pid" \|\| default_rc=\$\?$'),
        first(r"^run_prefixed browser -q -ra -m browser \|\| browser_rc=\$\?$"),  # then the browser tests
        first(r'^wait "\$slow_pid" \|\| slow_rc=\$\?$'),  # beside the slow ones: together "browser or slow"
        first(r"^if \(\( default_rc != 0 \|\| slow_rc != 0 \|\| browser_rc != 0 \)\); then$"),
    ]
    assert order == sorted(order)
    assert "playwright install" not in text
    # no exit code is masked: no "|| true"; the prefixing pipe keeps pytest's code (pipefail in its subshell), each
    # background run's code is collected by wait, and any non-zero one fails the job
    assert "|| true" not in "\n".join(ln for ln in lines if "pytest" in ln or "wait" in ln)
    assert any(re.fullmatch(r'\( set -o pipefail; pytest "\$@" 2>&1 \| sed -u .*\)', ln) for ln in lines)
    assert 'wait "$default_pid" || default_rc=$?' in lines and 'wait "$slow_pid" || slow_rc=$?' in lines
    assert lines[-2:] == ["exit 1", "fi"]


def test_tool_configuration():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    ruff = config["tool"]["ruff"]
    assert ruff["line-length"] == 120 and ruff["target-version"] == "py311"
    assert {"E", "F", "W", "I", "UP", "B", "NPY"} <= set(ruff["lint"]["select"])
    pytest_cfg = config["tool"]["pytest"]["ini_options"]
    assert pytest_cfg["testpaths"] == ["tests"]
    markers = {m.split(":")[0] for m in pytest_cfg["markers"]}
    assert {"browser", "slow"} <= markers


def test_runtime_requirements_are_pinned():
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line and not line.startswith("-r"):
                assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][0-9A-Za-z.+\-]*", line), (name, line)


def test_no_real_data_copied_into_the_repository(real_data_dir):
    """No tracked file has the name and size of a file in ../shared/data/real (read it in place instead)."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=False)
    files = [ROOT / f for f in tracked.stdout.split("\0") if f]
    ours = {(p.name, p.stat().st_size) for p in files if p.is_file()}
    real = {(p.name, p.stat().st_size) for p in real_data_dir.rglob("*") if p.is_file() and p.name != "PROVENANCE.md"}
    assert not ours & real, sorted(ours & real)[:10]


def test_code_and_docs_cite_concepts_and_papers_not_tracker_issues():
    """No tracked source or document cites a tracker issue of this project (the word issue and a number, or a hash
    and a number) or an outside specification: a reader of the repository cannot open either.  Upstream trackers
    are cited by URL; commits by hash."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    pattern = re.compile(r"\bissues? ?#?\d+|\bSPEC\b|[(\s]#\d{1,3}[,;:)\s]")
    hits = []
    for name in tracked:
        if not name.endswith((".py", ".md", ".toml", ".txt", ".cfg", ".yml", ".yaml")) and name != ".ci/run":
            continue
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        hits += [f"{name}:{i}: {line.strip()[:100]}" for i, line in enumerate(text.splitlines(), 1)
                 if pattern.search(line)]
    assert hits == []
