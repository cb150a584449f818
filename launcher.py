"""``calibration-lab``: start the dashboard — ``streamlit run`` on ``app.py`` with the project's Streamlit settings.

Installed by ``pip install .`` as a console command.  This file, ``app.py``, ``pages/``, ``dashboard/`` and
``.streamlit/config.toml`` are installed side by side (as the package ``calibration_lab``), so ``app.py`` is found
next to this file both in a checkout and in an installed copy.  It is not part of ``dashboard/``: importing that
package would build its Streamlit caches outside a running app (and twice, under two module names).

Streamlit reads ``.streamlit/config.toml`` only from the working directory, so the launcher passes the project's
settings as command-line flags instead: the dashboard behaves the same from any directory.  Further arguments are
forwarded to ``streamlit run`` after the project's settings (the last value of a flag wins), e.g.
``calibration-lab --server.port 8600``.

Streamlit runs in this process (``streamlit.web.cli``, as the ``streamlit`` command itself does): no subprocess.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

from streamlit.web import cli as streamlit_cli

#: The directory that holds ``app.py``, ``pages/``, ``dashboard/`` and ``.streamlit/`` (checkout or installed copy).
ROOT = Path(__file__).resolve().parent

USAGE = """usage: calibration-lab [STREAMLIT OPTIONS]

Start the Calibration Lab dashboard: streamlit run on the installed app.py, with the project's
.streamlit/config.toml applied as flags. Other arguments are passed on to 'streamlit run', e.g.
  calibration-lab --server.port 8600 --server.address 127.0.0.1
"""


def find_app(root: Path | None = None) -> Path:
    """The dashboard's ``app.py`` (``FileNotFoundError`` with what to do when the installation is incomplete)."""
    app = (ROOT if root is None else root) / "app.py"
    if not app.is_file():
        raise FileNotFoundError(f"the dashboard's app.py is missing from {root}; reinstall with 'pip install .'")
    return app


def config_flags(config: Path) -> list[str]:
    """``[server] headless = true`` in a Streamlit ``config.toml`` → ``["--server.headless=true", …]``."""
    if not config.is_file():
        return []
    flags = []
    for section, options in tomllib.loads(config.read_text(encoding="utf-8")).items():
        for key, value in options.items():
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            flags.append(f"--{section}.{key}={text}")
    return flags


def streamlit_args(argv: Sequence[str] = (), root: Path | None = None) -> list[str]:
    """The ``streamlit`` arguments of ``calibration-lab ARGV``: ``run APP``, the project's flags, then ``ARGV``."""
    app = find_app(root)
    return ["run", str(app), *config_flags(app.parent / ".streamlit" / "config.toml"), *argv]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``calibration-lab``; returns Streamlit's exit code (2 when ``app.py`` is missing)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    try:
        args = streamlit_args(argv)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.argv = ["streamlit", *args]  # what Streamlit's own entry point sees; the app gets sys.argv from Streamlit
    try:
        streamlit_cli.main.main(args=args, prog_name="streamlit")
    except SystemExit as exc:  # click's standalone mode ends with SystemExit
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
