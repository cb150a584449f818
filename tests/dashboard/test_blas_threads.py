"""The server runs each computation on one BLAS thread (dashboard.cache.one_blas_thread), undoable."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info

from dashboard.cache import one_blas_thread


def test_one_blas_thread_then_restored():
    np.ones((64, 64)) @ np.ones((64, 64))  # NumPy's BLAS is loaded
    before = {m["filepath"]: m["num_threads"] for m in threadpool_info() if m["user_api"] == "blas"}
    limiter = one_blas_thread()
    try:
        assert all(m["num_threads"] == 1 for m in threadpool_info() if m["user_api"] == "blas")
    finally:
        limiter.restore_original_limits()
    assert {m["filepath"]: m["num_threads"] for m in threadpool_info() if m["user_api"] == "blas"} == before
