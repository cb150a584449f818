"""The bytes of a file as something to stream: a path read in chunks, bytes in memory, a decompressing stream.

:func:`calib_core.data.bytes.read_table` reads a path's text or compressed text without holding the whole file (or
what it decompresses to) in memory: :class:`Payload` opens fresh streams of the file's bytes, and
:class:`LimitedStream` stops a (decompressing) stream one byte past the size limit with the loader's message and
turns a corrupt compressed stream into an ``InputError`` saying so.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..base.predictions import InputError

__all__ = ["LimitedStream", "Payload", "decompressing"]

HEAD = 1 << 16
"""Bytes of a file looked at to recognise its format."""


class Payload:
    """A file's raw bytes: in memory (``data``) or on disk (``path``, read only when a stream is opened).

    Parameters
    ----------
    data : bytes, optional
        The bytes, when they are in memory already.
    path : pathlib.Path, optional
        The file, when it is read from disk (its size checked by the caller).

    Attributes
    ----------
    head : bytes
        The first ``HEAD`` bytes.
    size : int
        The number of bytes.
    """

    def __init__(self, data: bytes | None = None, path: Path | None = None) -> None:
        self.data, self.path = data, path
        if data is not None:
            self.head, self.size = data[:HEAD], len(data)
        else:
            assert path is not None
            with path.open("rb") as fh:
                self.head = fh.read(HEAD)
            self.size = path.stat().st_size

    def open(self) -> IO[bytes]:
        """A fresh binary stream of the bytes (a view of the bytes in memory, or the file).

        Returns
        -------
        binary file-like
            The stream, to be closed by the caller.
        """
        if self.data is not None:
            return io.BytesIO(self.data)
        assert self.path is not None
        return self.path.open("rb")

    def read_all(self) -> bytes:
        """All the bytes (read from disk when needed).

        Returns
        -------
        bytes
            The file's bytes.
        """
        if self.data is None:
            assert self.path is not None
            self.data = self.path.read_bytes()
        return self.data


class LimitedStream(io.RawIOBase):
    """A read-only stream over ``stream`` that raises ``too_big()`` once more than ``limit`` bytes came out, and an
    ``InputError`` saying "cannot be decompressed" when the inner stream fails (corrupt gzip / bzip2 / xz).

    Parameters
    ----------
    stream : binary file-like
        The inner stream (closed with this one).
    limit : int
        The most bytes it may give.
    too_big : callable
        Returns the ``InputError`` to raise past the limit.
    corrupt : callable
        Takes the inner exception and returns the ``InputError`` to raise.
    """

    def __init__(self, stream: IO[bytes], limit: int, too_big: Callable[[], InputError],
                 corrupt: Callable[[BaseException], InputError]) -> None:
        super().__init__()
        self._stream, self._limit, self._count = stream, limit, 0
        self._too_big, self._corrupt = too_big, corrupt

    def readable(self) -> bool:
        """Always True.

        Returns
        -------
        bool
            True.
        """
        return True

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` from the inner stream, counting the bytes.

        Parameters
        ----------
        buffer : writable buffer
            Where to put the bytes.

        Returns
        -------
        int
            The number of bytes read (0 at the end).
        """
        try:
            n = self._stream.readinto(buffer)  # type: ignore[attr-defined]
        except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise self._corrupt(exc) from None
        self._count += n or 0
        if self._count > self._limit:
            raise self._too_big()
        return n or 0

    def close(self) -> None:
        """Close this stream and the inner one."""
        try:
            self._stream.close()
        finally:
            super().close()


def decompressing(kind: str, raw: IO[bytes]) -> IO[bytes]:
    """A stream of what ``raw`` decompresses to (``kind``: gzip, bzip2 or xz).

    Parameters
    ----------
    kind : {"gzip", "bzip2", "xz"}
        The compression format.
    raw : binary file-like
        The compressed bytes.

    Returns
    -------
    binary file-like
        The decompressed stream.

    Examples
    --------
    >>> import gzip, io
    >>> from calib_core.data.bytes_stream import decompressing
    >>> decompressing("gzip", io.BytesIO(gzip.compress(b"a,b"))).read()
    b'a,b'
    """
    opener = {"gzip": lambda b: gzip.GzipFile(fileobj=b), "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind]
    return opener(raw)


def regular_file(path_or_buffer: Any) -> Path | None:
    """The path when ``path_or_buffer`` names an existing regular file, else None.

    Parameters
    ----------
    path_or_buffer : any
        What the loader was given.

    Returns
    -------
    pathlib.Path or None
        The file.
    """
    if isinstance(path_or_buffer, (str, os.PathLike)):
        p = Path(path_or_buffer)
        if p.is_file():
            return p
    return None
