"""Small helpers shared by the subcommands for printing JSON and tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any


def print_json(value: Any) -> None:
    """One JSON document on stdout, UTF-8, keys in the order given."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A plain left-aligned text table; the human counterpart of ``--json``."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
