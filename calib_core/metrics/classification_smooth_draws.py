"""Compiled binomial draws of the smooth ECE's null: the same draws as NumPy from the same generator, faster.

The smooth ECE's null (:mod:`calib_core.metrics.classification_smooth`, Błasiok & Nakkiran 2023) draws, per chunk
of R null draws, the events of every grid cell c whose binomial is small (n_c·min(f̄_c, 1 − f̄_c) < 30):
K_rc ~ Binomial(n_c, f̄_c), r = 1 … R, in C order — ``rng.binomial(n, p, size=(R, C))``.  NumPy draws each of these
by inversion (Kachitvichyanukul & Schmeiser 1988; ``random_binomial_inversion`` of NumPy's ``distributions.c``):
one uniform U, then X = the first k with U − px_0 − … − px_{k−1} ≤ px_k, px_0 = (1 − a)^n = exp(n log(1 − a)),
px_k = px_{k−1}·(n − k + 1)a / (k(1 − a)), a = min(p, 1 − p) (X → n − X for p > ½), restarted with a new U past
k = ⌊min(n, na + 10√(na(1 − a) + 1))⌋; n = 0 or p = 0 gives 0 without a draw.  Consecutive draws have other
(n, p), so NumPy sets the px_k up again on every draw (an ``exp``, a ``log`` and a division per step).
:func:`small_binomials` tabulates the px_k of each cell once, with the same operations, and each draw only
subtracts them from U: the same subtractions in the same order, so the same X, from the same uniforms (Numba's
generator methods are NumPy's algorithms on the same bit generator).  A cell with n·a > 30 (never a small cell of
the null) is drawn by ``rng.binomial`` itself (BTPE), as NumPy does.

References
----------
Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
arXiv:2309.12236.

Kachitvichyanukul, V. & Schmeiser, B. W. (1988). Binomial random variate generation. Communications of the ACM
31(2), 216–222.

Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*, 1–6.
"""

from __future__ import annotations

import numpy as np

from ..base.compiled import compiled_kernel

__all__ = ["small_binomials", "warm_up"]

#: Entries of an inversion table: the inversion's bound is below 30 + 10·√31 < 86 whenever n·a ≤ 30.
_TABLE = 88


@compiled_kernel
def _small_binomials(rng, n_c, p_c, rows):  # pragma: no cover - compiled
    """``rng.binomial(n_c, p_c, size=(rows, C))`` as one loop with tabulated inversions (module docstring)."""
    cells = n_c.shape[0]
    out = np.empty((rows, cells), np.int64)
    kind = np.zeros(cells, np.int64)  # 0: no draw, 1: inversion, 2: inversion of 1 − p, 3: NumPy's BTPE
    table = np.empty((cells, _TABLE))
    last = np.zeros(cells, np.int64)
    for c in range(cells):
        n = n_c[c]
        p = p_c[c]
        if n == 0 or p == 0.0:
            continue
        a = p if p <= 0.5 else 1.0 - p
        if a * n > 30.0:
            kind[c] = 3
            continue
        kind[c] = 1 if p <= 0.5 else 2
        q = 1.0 - a  # NumPy's random_binomial_inversion: its set-up and px_k sequence
        px = np.exp(n * np.log(q))
        mu = n * a
        bound = min(n, mu + 10.0 * np.sqrt(mu * q + 1))
        table[c, 0] = px
        x = 0
        while x + 1 <= bound:
            x += 1
            px = ((n - x + 1) * a * px) / (x * q)
            table[c, x] = px
        last[c] = x
    for r in range(rows):
        for c in range(cells):
            k = kind[c]
            n = n_c[c]
            if k == 0:
                out[r, c] = 0
            elif k == 3:
                out[r, c] = rng.binomial(n, p_c[c])
            else:
                b = last[c]
                x = 0
                px = table[c, 0]
                u = rng.random()
                while u > px:
                    if x >= b:  # past the bound: a new uniform
                        x = 0
                        px = table[c, 0]
                        u = rng.random()
                    else:
                        u -= px
                        x += 1
                        px = table[c, x]
                out[r, c] = (n - x) if k == 2 else x
    return out


def small_binomials(rng: np.random.Generator, n: np.ndarray, p: np.ndarray, rows: int) -> np.ndarray:
    """``rng.binomial(n, p, size=(rows, len(n)))`` with the same random numbers in the same order and the same
    values, compiled (module docstring): K_rc ~ Binomial(n_c, p_c), by inversion where n_c·min(p_c, 1 − p_c) ≤ 30.
    Falls back to NumPy itself where NumPy would raise or another bit generator than PCG64 is used.

    Parameters
    ----------
    rng : numpy.random.Generator
        The generator (advanced exactly as by ``rng.binomial``).
    n : ndarray of int, shape (C,)
        Trials per cell (≥ 0).
    p : ndarray of float, shape (C,)
        Success probability per cell, in [0, 1].
    rows : int
        Draws per cell R.

    Returns
    -------
    ndarray of int64, shape (R, C)
        The draws.

    References
    ----------
    .. [1] Kachitvichyanukul, V. & Schmeiser, B. W. (1988). Binomial random variate generation. *Communications of
       the ACM* 31(2), 216–222.
    .. [2] Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
       *arXiv:2309.12236*.

    Examples
    --------
    >>> n, p = np.array([0, 5, 40, 40, 1000]), np.array([0.3, 0.5, 0.1, 0.95, 0.4])
    >>> a = small_binomials(np.random.default_rng(0), n, p, 3)
    >>> bool((a == np.random.default_rng(0).binomial(n, p, size=(3, 5))).all())
    True
    """
    n_c = np.ascontiguousarray(n, dtype=np.int64)
    p_c = np.ascontiguousarray(p, dtype=np.float64)
    if (n_c.ndim != 1 or p_c.shape != n_c.shape or int(rows) < 0 or not (n_c >= 0).all()
            or not ((p_c >= 0.0) & (p_c <= 1.0)).all() or type(rng.bit_generator) is not np.random.PCG64):
        return rng.binomial(n, p, size=(int(rows), np.shape(n)[0]))
    return _small_binomials(rng, n_c, p_c, int(rows))


def warm_up() -> None:
    """Compile (or load from the on-disk cache) this module's kernel on a few cells, for a warm-up thread.

    Returns
    -------
    None

    References
    ----------
    Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*, 1–6.

    Examples
    --------
    >>> warm_up()
    """
    small_binomials(np.random.default_rng(0), np.array([3, 40]), np.array([0.5, 0.9]), 2)
