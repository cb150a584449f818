"""``python -m calib_core report FILE --out report.html``: see :mod:`calib_core.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
