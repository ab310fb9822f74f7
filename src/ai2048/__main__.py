"""``python -m ai2048``: the same command line as the ``ai2048`` script (for environments where the
script is not on PATH)."""

from __future__ import annotations

import sys

from ai2048.cli import main

if __name__ == "__main__":
    sys.exit(main())
