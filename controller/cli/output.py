"""Small helpers shared by the subcommands for printing JSON and tables."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from controller.settlement.model import MAX_AMOUNT


def print_json(value: Any) -> None:
    """One JSON document on stdout, UTF-8, keys in the order given."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A plain left-aligned text table; the human counterpart of ``--json``."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


def minor_units(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` for an amount in minor units from ``minimum`` to ``MAX_AMOUNT``, so
    a stake of 0 or -100 or a jackpot of 10**26 is refused in one line before any arithmetic."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a whole number of minor units") from None
        if not minimum <= value <= MAX_AMOUNT:
            raise argparse.ArgumentTypeError(
                f"{value} is outside {minimum}-{MAX_AMOUNT} minor units")
        return value

    return parse
