"""Paths and globs typed by a user, checked and walked with bounds.

``glob.glob(pattern, recursive=True)`` follows symbolic links to folders with no memory of where it has been: two
links that point back up (``a/loop -> ..``) make ``**`` walk an ever longer chain of the same folders until the
operating system's path limit, minutes later.  :func:`bounded_glob` walks the folders itself: each real folder is
listed at most once per pattern component, a link to a folder that is one of its own parents is refused as a loop
(naming the link), and the walk stops with a message past :data:`MAX_GLOB_ENTRIES` entries listed or
:data:`MAX_GLOB_DEPTH` folders below the pattern's fixed part.  :func:`check_path_text` refuses, before any file
system call, what no file name can hold or what a file system call would raise on: a NUL character, other control
characters, characters the file system's encoding cannot write, names over 255 bytes or paths over 4096 bytes.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Callable
from pathlib import Path

from ..base.predictions import InputError

__all__ = ["MAX_COMPONENT_BYTES", "MAX_GLOB_DEPTH", "MAX_GLOB_ENTRIES", "MAX_PATH_BYTES", "bounded_glob",
           "check_path_text", "shown"]

MAX_GLOB_ENTRIES = 100_000
"""Folder entries a glob may list (files and folders seen, matching or not) before it is refused."""
MAX_GLOB_DEPTH = 32
"""Folders a glob may descend below its fixed part."""
MAX_PATH_BYTES = 4096
"""Bytes of a whole path (Linux's PATH_MAX)."""
MAX_COMPONENT_BYTES = 255
"""Bytes of one file or folder name (NAME_MAX of common file systems)."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shown(text: str, limit: int = 120) -> str:
    """A user's path as it can be shown in a message: control characters escaped, cut at ``limit`` characters.

    Parameters
    ----------
    text : str
        The path as typed.
    limit : int, default 120
        Characters kept.

    Returns
    -------
    str
        The escaped, shortened text.

    Examples
    --------
    >>> shown("runs/a\\x00.parquet")
    'runs/a\\\\x00.parquet'
    """
    out = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    out = out.encode("utf-8", "backslashreplace").decode("utf-8")
    return out if len(out) <= limit else out[:limit] + "…"


def check_path_text(text: str, *, what: str = "path") -> None:
    """Refuse a path no file can have, before any file system call.

    Refused with :class:`~calib_core.base.predictions.InputError` (naming the character and its position, 1-based):
    a NUL or other control character (U+0000–U+001F, U+007F), characters the file system encoding cannot write
    (e.g. lone surrogates), a name over :data:`MAX_COMPONENT_BYTES` bytes or a path over :data:`MAX_PATH_BYTES`.

    Parameters
    ----------
    text : str
        The path or glob as typed.
    what : str, default "path"
        The word for it in messages.

    Returns
    -------
    None
        Returns only when the text is acceptable.

    Raises
    ------
    InputError
        For the characters and lengths above.

    Examples
    --------
    >>> check_path_text("runs/*.parquet")
    >>> try:
    ...     check_path_text("runs/a\\x00b")
    ... except InputError as err:
    ...     print(err.message)
    the path has a NUL character (\\x00) at character 7, which no file name can hold
    """
    hint = (f"type the {what} again without it (text copied from a document or a terminal can carry invisible "
            "characters)")
    bad = _CONTROL.search(text)
    if bad is not None:
        char = bad.group()
        name = "a NUL character (\\x00)" if char == "\x00" else f"a control character (\\x{ord(char):02x})"
        raise InputError(f"the {what} has {name} at character {bad.start() + 1}, which no file name can hold",
                         source=shown(text), hint=hint)
    try:
        raw = os.fsencode(text)
    except UnicodeError:
        position = next((i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF), 0)
        code = f"U+{ord(text[position]):04X}"
        raise InputError(f"the {what} has a character the server's file system cannot write ({code} at character "
                         f"{position + 1})", source=shown(text), hint=hint) from None
    if len(raw) > MAX_PATH_BYTES:
        raise InputError(f"the {what} is {len(raw):,} bytes long, more than the {MAX_PATH_BYTES:,} a path may have",
                         source=shown(text), hint=f"give a shorter {what}")
    longest = max(raw.split(os.fsencode(os.sep)), key=len)
    if len(longest) > MAX_COMPONENT_BYTES:
        raise InputError(f"the {what} has a name of {len(longest):,} bytes, more than the {MAX_COMPONENT_BYTES} a file "
                         "or folder name may have", source=shown(text), hint=f"give a shorter {what}")


def _refuse_walk(message: str, pattern: str) -> InputError:
    return InputError(message, source=shown(pattern),
                      hint="give a narrower pattern (a fixed folder before the wildcards, fewer '**'); a link is "
                           "the operator's to change")


def bounded_glob(pattern: str, *, inside: Callable[[Path], bool] | None = None,
                 max_entries: int = MAX_GLOB_ENTRIES, max_depth: int = MAX_GLOB_DEPTH) -> list[str]:
    """The paths a glob matches (``**`` is recursive, names starting with '.' only by a pattern starting with '.'),
    as ``glob.glob(pattern, recursive=True)`` finds them, with a bounded walk.

    Each real folder is listed at most once per pattern component (links to the same folder are walked once); a
    link to a folder that is itself or one of its parents is refused as a loop; so is a walk that lists more than
    ``max_entries`` entries or goes more than ``max_depth`` folders below the fixed part of the pattern; with
    ``inside``, a folder whose real path ``inside`` rejects is refused before it is listed.

    Parameters
    ----------
    pattern : str
        The glob (an absolute path, or relative to the working directory).
    inside : callable, optional
        ``inside(real_path) -> bool``: the folders the walk may enter.
    max_entries : int, default MAX_GLOB_ENTRIES
        Entries the walk may list.
    max_depth : int, default MAX_GLOB_DEPTH
        Folders the walk may descend below the fixed part.

    Returns
    -------
    list of str
        The matching paths (files and folders), sorted.

    Raises
    ------
    InputError
        A loop of links, a folder outside ``inside``, too many entries or too deep (each naming the pattern and,
        for links, the link).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for name in ("a/x.parquet", "a/b/y.parquet", "c.txt"):
    ...         p = Path(d, name); p.parent.mkdir(parents=True, exist_ok=True); _ = p.write_bytes(b"")
    ...     os.symlink("..", os.path.join(d, "a", "b", "up"))
    ...     try:
    ...         bounded_glob(os.path.join(d, "**", "*.parquet"))
    ...     except InputError as err:
    ...         print(err.message.split(" (")[0])
    a/b/up is a symbolic link to one of its own parent folders
    """
    parts = Path(pattern).parts
    fixed: list[str] = []
    for part in parts:
        if glob.has_magic(part):
            break
        fixed.append(part)
    rest = list(parts[len(fixed):])
    root = str(Path(*fixed)) if fixed else os.curdir
    if not rest:
        return [pattern] if os.path.lexists(pattern) else []
    regex = {i: re.compile(fnmatch.translate(c)) for i, c in enumerate(rest) if c != "**" and glob.has_magic(c)}
    found: set[str] = set()
    seen: set[tuple[str, int]] = set()
    entries = 0
    start_real = os.path.realpath(root)
    stack: list[tuple[str, int, int, tuple[str, ...]]] = [(root, 0, 0, (start_real,))]

    def descend(path: str, i: int, depth: int, chain: tuple[str, ...]) -> None:
        real = os.path.realpath(path)
        if real in chain:
            rel = os.path.relpath(path, root) if fixed else path
            raise _refuse_walk(f"{rel} is a symbolic link to one of its own parent folders (a loop: the walk "
                               "would never end)", pattern)
        if inside is not None and not inside(Path(real)):
            rel = os.path.relpath(path, root) if fixed else path
            raise _refuse_walk(f"{rel} is a symbolic link that leads outside the allowed directories", pattern)
        if depth > max_depth:
            raise _refuse_walk(f"the pattern goes more than {max_depth} folders deep", pattern)
        if (real, i) not in seen:
            seen.add((real, i))
            stack.append((path, i, depth, (*chain, real)))

    while stack:
        path, i, depth, chain = stack.pop()
        if i == len(rest):
            found.add(path)
            continue
        comp = rest[i]
        last = i + 1 == len(rest)
        if comp != "**" and not glob.has_magic(comp):
            child = os.path.join(path, comp)
            if last:
                if os.path.lexists(child):
                    found.add(child)
            elif os.path.isdir(child):
                descend(child, i + 1, depth + 1, chain)
            continue
        if comp == "**":
            if last:
                found.add(path)
            else:
                stack.append((path, i + 1, depth, chain))
        try:
            with os.scandir(path) as it:
                listed = []
                for entry in it:
                    entries += 1
                    if entries > max_entries:
                        raise _refuse_walk(f"the pattern lists more than {max_entries:,} files and folders", pattern)
                    listed.append(entry)
        except OSError:
            continue
        for entry in listed:
            name = entry.name
            if name.startswith(".") and not comp.startswith("."):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if comp == "**":
                if is_dir:
                    descend(entry.path, i, depth + 1, chain)
                elif last:
                    found.add(entry.path)
            elif regex[i].match(name):
                if last:
                    found.add(entry.path)
                elif is_dir:
                    descend(entry.path, i + 1, depth + 1, chain)
    return sorted(found)
