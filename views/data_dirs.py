"""Which files on the server a dashboard user may open: Parquet data sets under directories the operator allows.

The dashboard can summarise a Parquet data set that lives on the server (too large to upload) by path or glob.
Nothing is allowed by default; the operator lists directories (``CALIB_LAB_DATA_DIR``, several separated by
``os.pathsep``, or ``data_dirs`` under ``[calibration_lab]`` in ``.streamlit/secrets.toml``; the dashboard reads
both, :data:`ENV_VAR`).  :func:`resolve_data_files` turns what the user typed into the files to read, or refuses
it with a message that says what is allowed and how the operator allows more:

* a relative path or glob is taken relative to the first allowed directory;
* a path with a ``..`` component is refused outright (no climbing, even back inside);
* the directory part of a pattern before its first wildcard must lie inside an allowed directory once symbolic
  links are resolved (``os.path.realpath``), so ``/etc/*`` is refused before anything is listed;
* a path with a NUL or another control character, characters the file system cannot write, or names too long is
  refused with a message before any file system call (:func:`calib_core.data.path_glob.check_path_text`);
* a glob is walked with bounds (:func:`calib_core.data.path_glob.bounded_glob`): at most 100,000 entries listed,
  32 folders deep, each real folder once; a symbolic link that loops back to a parent folder, or a folder that
  resolves outside the allowed directories, is refused (naming the link) before it is listed;
* every file found is resolved the same way and must lie inside an allowed directory (a symbolic link that
  points outside is refused, naming it) and be a Parquet file (``.parquet`` / ``.pq``).

The files returned are the resolved paths, so what is read is what was checked.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from calib_core.base.predictions import InputError
from calib_core.data.path_glob import MAX_GLOB_ENTRIES, bounded_glob, check_path_text, shown

__all__ = ["ENV_VAR", "SECRETS_SECTION", "PARQUET_SUFFIXES", "SUMMARY_SUFFIXES", "allowed_dirs", "how_to_allow",
           "resolve_data_files", "resolve_summary_file"]

#: Environment variable with the allowed directories (``os.pathsep``-separated).
ENV_VAR = "CALIB_LAB_DATA_DIR"
#: Section and key of ``.streamlit/secrets.toml`` with more allowed directories (a string or a list).
SECRETS_SECTION = ("calibration_lab", "data_dirs")
PARQUET_SUFFIXES = (".parquet", ".pq")
#: Names of summary files (``--save-summary``) opened by path.
SUMMARY_SUFFIXES = (".summary", ".zip")
_MAX_FILES = 100_000
_MAX_ENTRIES = MAX_GLOB_ENTRIES


def allowed_dirs(env_value: str | None, configured: Iterable[str] | str | None = None) -> list[Path]:
    """The allowed directories, resolved (``realpath``), existing ones only, without duplicates: those of the
    environment value (``os.pathsep``-separated) then the configured ones."""
    items: list[str] = []
    if env_value:
        items += [p for p in env_value.split(os.pathsep) if p.strip()]
    if isinstance(configured, str):
        items.append(configured)
    elif configured:
        items += [str(p) for p in configured]
    out: list[Path] = []
    for item in items:
        path = Path(os.path.realpath(os.path.expanduser(item.strip())))
        if path.is_dir() and path not in out:
            out.append(path)
    return out


def how_to_allow() -> str:
    """How the operator allows a directory (for the messages)."""
    section, key = SECRETS_SECTION
    return (f"the operator of this server allows directories with the environment variable {ENV_VAR} (e.g. "
            f"{ENV_VAR}=/srv/predictions streamlit run app.py; several separated by '{os.pathsep}') or with "
            f"{key} = [\"/srv/predictions\"] under [{section}] in .streamlit/secrets.toml")


def _allowed_text(allowed: Sequence[Path]) -> str:
    return ", ".join(str(p) for p in allowed)


def _inside(path: Path, allowed: Sequence[Path]) -> bool:
    return any(path == d or d in path.parents for d in allowed)


def _refuse(what: str, text: str, allowed: Sequence[Path]) -> InputError:
    first = allowed[0]
    return InputError(
        f"{what}. Files can be opened only under {_allowed_text(allowed)}",
        source=shown(text),
        hint=f"give a path or glob under it, e.g. {first / '*.parquet'} or a relative one such as runs/*.parquet "
             f"(relative to {first}); to open files elsewhere, {how_to_allow()}",
    )


def _static_prefix(pattern: str) -> str:
    """The directory part of a pattern before its first component with a wildcard."""
    parts = Path(pattern).parts
    keep: list[str] = []
    for part in parts:
        if glob.has_magic(part):
            break
        keep.append(part)
    if len(keep) == len(parts):  # no wildcard: the path itself
        return pattern
    return str(Path(*keep)) if keep else "."


def resolve_data_files(text: str, allowed: Sequence[Path], *,
                       suffixes: Sequence[str] = PARQUET_SUFFIXES) -> list[str]:
    """The Parquet files (``suffixes``) a user's path, directory or glob names, all inside the ``allowed``
    directories (resolved with :func:`allowed_dirs`), as sorted resolved paths; raises ``InputError`` (what is
    allowed, how to allow more) for anything else — none allowed, ``..``, a pattern or file outside, a link out,
    no match, another kind of file."""
    text = (text or "").strip()
    if not allowed:
        raise InputError("opening files on the server is switched off on this server (no directory is allowed)",
                         source=shown(text) or None,
                         hint=how_to_allow() + "; meanwhile, upload a file or a summary file")
    if not text:
        raise _refuse("no path given", text, allowed)
    check_path_text(text)
    if ".." in Path(text).parts:
        raise _refuse("a path may not contain '..'", text, allowed)
    pattern = os.path.expanduser(text)
    if not os.path.isabs(pattern):
        pattern = str(allowed[0] / pattern)
    check_path_text(pattern)
    prefix = Path(os.path.realpath(_static_prefix(pattern)))
    if not _inside(prefix, allowed):
        raise _refuse("this path is outside the allowed directories", text, allowed)
    try:
        if glob.has_magic(pattern):
            found = bounded_glob(pattern, inside=lambda real: _inside(real, allowed), max_entries=_MAX_ENTRIES)
        elif Path(pattern).is_dir():
            found = bounded_glob(os.path.join(glob.escape(pattern), "*"), inside=lambda real: _inside(real, allowed),
                                 max_entries=_MAX_ENTRIES)
            found = [p for p in found if Path(p).suffix.lower() in suffixes]
        else:
            found = [pattern] if Path(pattern).exists() else []
    except InputError as err:
        if "outside the allowed" in err.message:
            raise _refuse(err.message, text, allowed) from None
        raise InputError(err.message, source=shown(text), hint=err.hint) from None
    except OSError as exc:  # e.g. a name the file system refuses
        raise InputError(f"cannot be looked up on this server ({exc.strerror or exc})", source=shown(text),
                         hint=f"check the path or glob; relative paths start at {allowed[0]}") from None
    if len(found) > _MAX_FILES:
        raise _refuse(f"the pattern matches more than {_MAX_FILES:,} files", text, allowed)
    files: list[str] = []
    taken: set[str] = set()
    for item in found:
        real = Path(os.path.realpath(item))
        if real.is_dir():
            continue
        if not _inside(real, allowed):
            raise _refuse(f"{Path(item).name} is a symbolic link that leads outside the allowed directories", text,
                          allowed)
        if real.suffix.lower() not in suffixes:
            raise _refuse(f"{Path(item).name} is not a {' or '.join(suffixes)} file", text, allowed)
        if str(real) not in taken:
            taken.add(str(real))
            files.append(str(real))
    if not files:
        raise InputError(f"matches no {' or '.join(suffixes)} file" if glob.has_magic(pattern) or Path(pattern).is_dir()
                         else "no such file", source=shown(text),
                         hint=f"check the path or glob; relative paths start at {allowed[0]}")
    return sorted(files)


def resolve_summary_file(text: str, allowed: Sequence[Path]) -> Path:
    """One summary file (``.summary`` or ``.zip``) under the allowed directories, by the rules of
    :func:`resolve_data_files` (a glob must match exactly one)."""
    files = resolve_data_files(text, allowed, suffixes=SUMMARY_SUFFIXES)
    if len(files) > 1:
        raise InputError(f"matches {len(files)} summary files; open one at a time", source=shown(text),
                         hint="give the path of one summary file")
    return Path(files[0])
