"""Random streams of the classification inference, one per part, and the memo of the parts the bins do not change.

Each random part of :func:`calib_core.inference.classification.infer_classification` draws from a stream of its own,
``SeedSequence([seed, 0xC1A55, *name])`` (the smooth ECE's stream is its own too,
:mod:`~calib_core.inference.classification_smooth`):

* ``"binned"`` — the null draws of the binned top-label (and positive-class) statistics: ECE, MCE, the top-bin gap,
  the overall gap and the calibration ratio.  The only draws that depend on the confidence bins.
* ``"blocks"`` — the random row blocks of the bootstrap and its multinomial block weights.
* ``"classwise labels"`` / ``"classwise weights"`` — the class-wise ECE's label draws y* ~ Categorical(p_i), and the
  weights of its (possibly merged) blocks.
* ``"tce"`` — TCE's null draws; ``"clinical"`` — the clinical set's (binary files).

So a draw of one part never shifts the draws of another: with a change of the confidence bins (the Classification
page's slider, equal width ↔ equal mass) only the binned part is drawn again.  The parts that do not depend on the bins
— the blocks and their weights, the class-wise label draw and the per-block class totals, TCE, the clinical set, the
score references, the calibration ratio's interval — are kept in a memo the caller owns (one per set of rows and
bin-free options; :class:`InferenceMemo`), so a new bins count recomputes only the binned statistics from those.
Every result is equal, bit for bit, with and without the memo (the memo stores what the same streams draw).

Independent streams from one seed: L'Ecuyer et al. (2017) (``SeedSequence`` hashes the entropy words into
independent PCG64 states, O'Neill 2014).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, MutableMapping
from typing import Any, TypeVar

import numpy as np

__all__ = ["STREAM_TAG", "InferenceMemo", "stream"]

T = TypeVar("T")

#: The entropy word that separates the classification inference's streams from every other stream of a seed.
STREAM_TAG = 0xC1A55


def stream(seed: int | None, name: str) -> np.random.Generator:
    """The random stream ``name`` of the classification inference of ``seed``: PCG64 seeded by
    ``SeedSequence([seed, 0xC1A55, *utf8(name)])`` (fresh entropy when ``seed`` is None).

    Parameters
    ----------
    seed : int or None
        The inference's seed.
    name : str
        The part ("binned", "blocks", "classwise labels", "classwise weights", "tce", "clinical").

    Returns
    -------
    numpy.random.Generator
        A generator independent of every other part's.

    References
    ----------
    .. [1] L'Ecuyer, P., Munger, D., Oreshkin, B. & Simard, R. (2017). Random numbers for parallel computers:
       requirements and methods, with emphasis on GPUs. *Mathematics and Computers in Simulation* 135, 3–17.
    .. [2] O'Neill, M. E. (2014). PCG: a family of simple fast space-efficient statistically good algorithms for
       random number generation. *Harvey Mudd College, HMC-CS-2014-0905*.

    Examples
    --------
    >>> bool(stream(0, "tce").random() == stream(0, "tce").random())
    True
    >>> bool(stream(0, "tce").random() == stream(0, "binned").random())
    False
    """
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(np.random.SeedSequence([int(seed), STREAM_TAG, *name.encode()]))


class InferenceMemo:
    """The bin-free parts of one set of rows' classification inference, kept across bins counts and binnings.

    A view of a mapping the caller owns (e.g. one per (model, group) and data), keyed by ``options`` — every option
    the bin-free parts depend on (draws, replicates, blocks, level, alpha, budget, seed, clustering) — and the part's
    name: ``get(name, build)`` returns the kept value or builds and keeps it.  No memo (``store=None``) or no seed
    (fresh entropy every time) builds every time.

    The value of a part is a function of (rows, options, its stream): with the same rows, a kept part is what a fresh
    inference would draw, so results are equal with and without the memo.  The caller keeps the mapping per rows
    (the predictions and labels; the bins may differ).

    Parameters
    ----------
    store : mutable mapping or None
        Where the parts are kept (None: nothing kept).
    options : tuple
        The bin-free options (hashable).

    References
    ----------
    .. [1] Michie, D. (1968). "Memo" functions and machine learning. *Nature* 218, 19–22.
    """

    def __init__(self, store: MutableMapping[Hashable, Any] | None, options: tuple) -> None:
        self.store = store
        self.options = options

    def get(self, name: Hashable, build: Callable[[], T]) -> T:
        """The part ``name``: kept, or built by ``build()`` and kept.

        Parameters
        ----------
        name : hashable
            The part (with its own arguments, e.g. ``("classwise weights", 156)``).
        build : callable
            Computes the part.

        Returns
        -------
        object
            The part (shared: callers never change it).

        References
        ----------
        .. [1] Michie, D. (1968). "Memo" functions and machine learning. *Nature* 218, 19–22.
        """
        if self.store is None:
            return build()
        key = (name, self.options)
        try:
            return self.store[key]
        except KeyError:
            value = build()
            self.store[key] = value
            return value

    def __call__(self, name: Hashable, build: Callable[[], T]) -> T:
        """Same as :meth:`get`.

        Parameters
        ----------
        name : hashable
            The part.
        build : callable
            Computes the part.

        Returns
        -------
        object
            The part.

        References
        ----------
        .. [1] Michie, D. (1968). "Memo" functions and machine learning. *Nature* 218, 19–22.
        """
        return self.get(name, build)
