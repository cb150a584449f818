"""What the simulation studies under ``bench/`` share about their runs: resumable result files, the commit and the
machine a result was measured on, and the Monte-Carlo standard error of a rate."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import numpy as np

__all__ = ["repair_tail", "commit_id", "machine", "mc_se"]

ROOT = Path(__file__).resolve().parents[1]


def repair_tail(path: Path) -> None:
    """Drop a partial last line (a run killed while writing), so that appending resumes cleanly."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        with path.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""

def commit_id() -> str:
    """The checkout's short commit, ``+dirty`` when tracked files differ from it.

    Returns
    -------
    str
        E.g. ``"34593c2"`` or ``"34593c2+dirty"``.
    """
    head = _git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+dirty" if _git("status", "--porcelain", "--untracked-files=no") else "")

def machine() -> str:
    """One line describing the machine: CPU model, cores, memory, Python and NumPy, load average.

    Returns
    -------
    str
        The description.
    """
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30 if hasattr(os, "sysconf") else float("nan")
    return (f"{model}, {os.cpu_count()} cores, {mem:.0f} GB, {platform.system()}, Python {platform.python_version()}, "
            f"NumPy {np.__version__}, load average {os.getloadavg()[0]:.1f} at the start")

def mc_se(rate: float, reps: int) -> float:
    """Monte-Carlo standard error of a rate, √(r(1 − r)/R).

    Parameters
    ----------
    rate : float
        The rate r.
    reps : int
        Data sets R.

    Returns
    -------
    float
        The standard error.
    """
    return float(np.sqrt(rate * (1.0 - rate) / reps)) if reps else float("nan")
