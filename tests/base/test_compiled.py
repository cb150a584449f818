"""Compiled kernels: lazy compilation, the on-disk cache, threads and agreement with the NumPy formula."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

from calib_core.base.compiled import compile_now, compiled_kernel


@compiled_kernel
def _sum_and_max(x):
    total = 0.0
    largest = -np.inf
    for value in x:
        total += value
        if value > largest:
            largest = value
    return total, largest


def test_kernel_equals_numpy_and_keeps_its_name():
    x = np.random.default_rng(1).normal(size=10_001)
    total, largest = _sum_and_max(x)
    assert np.isclose(total, x.sum(), rtol=1e-12, atol=1e-9)
    assert largest == x.max()
    assert _sum_and_max.__name__ == "_sum_and_max"


def test_kernel_follows_ieee_for_nan_and_infinity():
    total, _ = _sum_and_max(np.array([1.0, np.inf, -np.inf]))
    assert np.isnan(total)
    total, largest = _sum_and_max(np.array([1.0, np.inf]))
    assert total == np.inf and largest == np.inf


def test_threads_compile_once_and_agree():
    @compiled_kernel
    def twice(x):
        return 2.0 * x.sum()

    x = np.arange(100.0)
    results: list[float] = []
    threads = [threading.Thread(target=lambda: results.append(twice(x))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [9900.0] * 4


def test_import_does_not_load_the_compiler(tmp_path: Path):
    code = "import sys, calib_core; import calib_core.base.compiled; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "False"


def test_compile_now_prepares_the_dispatcher():
    compile_now(_sum_and_max)
    assert _sum_and_max.compiled() is _sum_and_max.compiled()


@compiled_kernel
def _write_at(x, index):
    x[index] = 1.0
    return x


def test_an_index_past_the_end_raises_instead_of_writing_outside_the_array():
    import pytest

    with pytest.raises(IndexError):
        _write_at(np.zeros(3), 3)


def test_the_disk_cache_is_keyed_by_the_compile_options(tmp_path: Path):
    """A kernel compiled once is loaded from disk by the next process, but not under other compile options."""
    # The module under test is copied beside the kernel, so the child processes load NumPy and Numba only.
    (tmp_path / "compiled_copy.py").write_text(Path(compile_now.__code__.co_filename).read_text())
    (tmp_path / "kernel_module.py").write_text(
        "from compiled_copy import compiled_kernel\n\n\n"
        "@compiled_kernel\n"
        "def first(x):\n"
        "    return x[0]\n")
    script = (
        "import sys, numpy as np, kernel_module as m\n"
        "if sys.argv[1] == 'unchecked':\n"
        "    m.first._options = {**m.first._options, 'boundscheck': False}\n"
        "m.first(np.zeros(2))\n"
        "d = m.first.compiled()\n"
        "print(sum(d._cache_hits.values()), sum(d._cache_misses.values()))\n")
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def hits_misses(variant: str) -> str:
        return subprocess.run([sys.executable, "-c", script, variant], capture_output=True, text=True, check=True,
                              cwd=tmp_path, env=env).stdout.strip()

    assert hits_misses("checked") == "0 1"
    assert hits_misses("checked") == "1 0"
    assert hits_misses("unchecked") == "0 1"
