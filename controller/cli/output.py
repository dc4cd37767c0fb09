"""Small helpers shared by the subcommands for printing JSON and tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from controller.text import escape_unprintable


def printable(text: str) -> str:
    """``text`` with every unprintable character escaped (``\\x1b``, ``\\u202e``; the one rule,
    :mod:`controller.text`): what the service answers may hold a player's name an older
    version journaled with a terminal escape in it, and a terminal must show it, not obey it."""
    return escape_unprintable(text, lambda ch: repr(ch)[1:-1])


def json_text(value: Any, indent: int | None = None) -> str:
    """``value`` as one line of JSON, UTF-8, with control and format characters as ``\\u``
    escapes (JSON escapes only U+0000-U+001F itself; a C1 CSI or a bidi override would reach
    the terminal raw)."""
    # JSON escapes U+0000-U+001F inside strings itself: one left raw is the indent's newline
    return escape_unprintable(json.dumps(value, ensure_ascii=False, indent=indent),
                              lambda ch: ch if ch < " " else json.dumps(ch)[1:-1])


def print_json(value: Any) -> None:
    """One JSON document on stdout, UTF-8, keys in the order given (control and format
    characters escaped, :func:`json_text`)."""
    sys.stdout.write(json_text(value) + "\n")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A plain left-aligned text table; the human counterpart of ``--json``."""
    cells = [[printable(str(h)) for h in headers]] + [[printable(str(c)) for c in row]
                                                      for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
