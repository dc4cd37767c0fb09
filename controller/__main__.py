"""``python -m controller`` is the same program as the ``tablectl`` console script."""

from __future__ import annotations

import sys

from controller.cli import main

sys.exit(main())
