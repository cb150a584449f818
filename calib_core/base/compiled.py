"""Compiled kernels: fused loops over rows where NumPy would make one temporary array per operation.

A NumPy expression such as ``np.mean(0.5 * np.log(2π σ²) + 0.5 * z²)`` walks the rows once per operator and writes an
array of N doubles each time; at 10⁶ rows the passes are memory-bound and the page faults of fresh 8 MB temporaries
cost as much as the arithmetic.  A compiled loop reads each row once and keeps the running sums in registers.  The
kernels are compiled with Numba (Lam, Pitrou & Seibert 2015) the first time they are called, never at import: the
dashboard's first page and ``import calib_core`` do not pay for the compiler.  Compiled code is cached on disk beside
its module (``__pycache__``), so later processes load it in milliseconds.

Rules for a kernel
------------------
* Plain Python over NumPy arrays and scalars, decorated with :func:`compiled_kernel`; float64 in, float64 out.
* Same operations as the NumPy reference formula it replaces, written out in the docstring with its paper.  A
  sequential sum rounds differently from NumPy's pairwise sum (each within N·2⁻⁵³ relative, Higham 2002, §4.2):
  tests compare kernels with their NumPy formula to a relative tolerance, never bit for bit, unless the kernel sums
  exactly.
* ``nogil``: kernels release the GIL, so the embedded engine's threads and the dashboard's sessions run them side by
  side.
* ``boundscheck``: every array index is checked, so a kernel given values its author did not foresee (a subnormal
  range, an index past the end) raises ``IndexError`` instead of writing outside an array and taking the server down
  with every session on it; uploads are untrusted input.  It costs about a tenth of a kernel's time when the
  compiler can prove the indices of a loop in bounds (a loop over a slice ``x[lo:hi]`` checked once), and up to 3×
  when it cannot (``x[lo + j]`` in the loop body stops vectorisation): write leaf loops over slices.
* The on-disk cache is keyed by the function's bytecode, its argument types, the machine *and* these compile
  options: Numba's own key leaves the options out, so a kernel compiled once without bounds checks would otherwise
  be loaded unchecked after the options changed.

References
----------
Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*, 1–6.
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms* (2nd ed.). SIAM.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["compiled_kernel", "compile_now"]

F = TypeVar("F", bound=Callable[..., Any])

_LOCK = threading.Lock()


class _LazyKernel:
    """A Python function that is compiled by Numba on its first call (or by :func:`compile_now`)."""

    def __init__(self, function: Callable[..., Any], options: dict[str, Any]) -> None:
        self.python_function = function
        self._options = options
        self._compiled: Callable[..., Any] | None = None
        self.__name__ = function.__name__
        self.__qualname__ = function.__qualname__
        self.__doc__ = function.__doc__
        self.__module__ = function.__module__

    def compiled(self) -> Callable[..., Any]:
        """The Numba dispatcher of the function, created on first use (thread-safe)."""
        dispatcher = self._compiled
        if dispatcher is None:
            with _LOCK:
                if self._compiled is None:
                    import numba  # the compiler is loaded only when a kernel first runs

                    options = dict(self._options)
                    # Numba caches beside the source file; a function without one (a doctest) compiles uncached.
                    cached = options.pop("cache") and os.path.isfile(self.python_function.__code__.co_filename)
                    dispatcher = numba.njit(cache=False, **options)(self.python_function)
                    if cached:
                        dispatcher._cache = _options_keyed_cache(self.python_function, options)
                    self._compiled = dispatcher
                dispatcher = self._compiled
        return dispatcher

    def __call__(self, *args: Any) -> Any:
        return self.compiled()(*args)


def _options_keyed_cache(function: Callable[..., Any], options: dict[str, Any]) -> Any:
    """Numba's on-disk function cache with the compile options added to each entry's key (Numba keys an entry by
    bytecode, signature and machine only)."""
    from numba.core.caching import FunctionCache

    tag = tuple(sorted((name, repr(value)) for name, value in options.items()))

    class OptionsKeyedCache(FunctionCache):
        def _index_key(self, sig: Any, codegen: Any) -> tuple:
            return (*super()._index_key(sig, codegen), tag)

    return OptionsKeyedCache(function)


def compiled_kernel(function: F | None = None, *, parallel: bool = False, fastmath: bool = False) -> F:
    """Mark a row loop as a compiled kernel: Numba ``njit(cache=True, nogil=True, boundscheck=True)``, compiled on
    first call.

    Parameters
    ----------
    function : callable
        A function of NumPy arrays and scalars in Numba's nopython subset.
    parallel : bool, default False
        Numba's ``parallel=True`` (``prange`` loops on its own thread pool).  Off by default: the callers already
        run on threads of their own.
    fastmath : bool, default False
        Numba's ``fastmath``.  Off by default: it reorders sums and drops the IEEE rules for NaN and ∞, which the
        diagnostics rely on.

    Returns
    -------
    callable
        A callable with the function's name and docstring that compiles the kernel the first time it is called.

    References
    ----------
    Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*, 1–6.

    Examples
    --------
    >>> import numpy as np
    >>> @compiled_kernel
    ... def total(x):
    ...     s = 0.0
    ...     for v in x:
    ...         s += v
    ...     return s
    >>> float(total(np.arange(4.0)))
    6.0
    """
    options = {"cache": True, "nogil": True, "boundscheck": True, "parallel": parallel, "fastmath": fastmath}

    def wrap(fn: F) -> F:
        return _LazyKernel(fn, options)  # type: ignore[return-value]

    return wrap(function) if function is not None else wrap  # type: ignore[return-value]


def compile_now(*kernels: Callable[..., Any]) -> None:
    """Create the Numba dispatchers of some kernels ahead of their first call (the dashboard's warm-up thread).

    Compilation for given argument types still happens at the first call with those types, from the on-disk cache
    when it is there.

    Parameters
    ----------
    *kernels : callable
        Functions decorated with :func:`compiled_kernel`.

    References
    ----------
    Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*, 1–6.
    """
    for kernel in kernels:
        if isinstance(kernel, _LazyKernel):
            kernel.compiled()
