"""Optional peer libraries of the cross-checks.

netcal needs torch, which is not in ``requirements-dev.txt`` (pip's default Linux torch wheel is a multi-GB CUDA
build): ``requirements-netcal.txt`` says how to install it with torch's CPU build.  Without it the netcal
cross-checks are skipped with that reason; under ``CI=true`` (``.ci/run`` installs it) a missing peer is an error,
so CI never passes by skipping them.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

INSTALL_HINT = {
    "netcal": "netcal is optional (it needs torch): pip install torch==2.13.0 --index-url "
              "https://download.pytorch.org/whl/cpu && pip install -r requirements-netcal.txt",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_peer(module: str) -> ModuleType:
    """Import an optional peer module, or skip the calling test (fail under ``CI=true``) naming how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        reason = INSTALL_HINT.get(top, f"{top} is not installed (pip install -r requirements-dev.txt)")
        if in_ci():
            pytest.fail(f"CI=true but {module} cannot be imported ({exc}); {reason}", pytrace=False)
        pytest.skip(reason)


class LazyPeer:
    """A peer module imported at its first attribute use, inside the test that uses it, not while pytest collects.

    Collection imports every test module in every run, and some peers are expensive to import (scoringrules and
    properscoring compile their Numba gufuncs at import): a run that deselects their tests (``-m slow``,
    ``-m browser``) need not pay for them.  ``optional=True`` skips the calling test when the module is missing (as a
    module-level ``pytest.importorskip`` skipped the whole file); ``optional=False`` lets the ImportError fail it.
    """

    def __init__(self, module: str, *, optional: bool = True) -> None:
        self._module = module
        self._optional = optional

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        loaded = pytest.importorskip(self._module) if self._optional else importlib.import_module(self._module)
        return getattr(loaded, name)
