"""The rounds list as CSV, for a spreadsheet: streamed, bounded, safe to open.

* Streamed: rounds are read a page at a time (the console's keyset query) and written as they
  come, so a month of rounds never sits in memory.
* Bounded: at most :data:`MAX_CSV_ROUNDS` rows. When more rounds match, the last line says so
  (a file that silently stops would read as complete).
* Formula-injection safe: a spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or
  ``@`` as a formula (OWASP "CSV Injection"), and journal text (a player's name, a reason) is
  typed by people. Every text cell starting with one of those (or a tab or carriage return,
  which some spreadsheets skip before looking) is prefixed with ``'``. Whole numbers this code
  formats itself (minor units, counts) cannot be formulas and stay numbers, so a net of
  ``-500`` still sums.
* Face-down cards: the list carries no cards at all.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from controller.web.index import JournalIndex
from controller.web.localtime import LocalZone
from controller.web.search import RoundFilter, search_rounds

MAX_CSV_ROUNDS = 20_000
"""About two weeks of one busy table; a longer span is narrowed by time."""
BATCH = 500
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
HEADER = ("round", "table", "began_utc", "began_local", "game", "outcome", "void_clause",
          "void_reason", "irregular", "damaged", "wagers", "largest_wager_minor",
          "player_net_minor")

DamageCheck = Callable[[list[str]], frozenset[str]]
"""The rounds of a batch that fail their check (:func:`controller.web.damaged.damaged_rounds`)."""


def safe_cell(value: Any) -> str | int:
    """A cell a spreadsheet shows as text, never runs: text starting like a formula gets a
    leading ``'``; integers pass as numbers; None is empty."""
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def rounds_csv(index: JournalIndex, wanted: RoundFilter, zone: LocalZone,
               damaged: DamageCheck, limit: int | None = None, *,
               hide_cards_of: str | None = None) -> Iterator[str]:
    """The CSV text of every round ``wanted`` matches (at most ``limit``, by default
    :data:`MAX_CSV_ROUNDS`), newest first, in chunks. ``hide_cards_of``: as
    :func:`controller.web.search.search_rounds` (a face-down hand is found by no card)."""
    limit = MAX_CSV_ROUNDS if limit is None else limit
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def take() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(HEADER)
    yield take()
    written, before = 0, None
    page = replace(wanted, before=None)
    while written < limit:
        rows, before = search_rounds(index, replace(page, before=before),
                                     limit=min(BATCH, limit - written),
                                     hide_cards_of=hide_cards_of)
        flagged = damaged([row["id"] for row in rows])
        for row in rows:
            writer.writerow([safe_cell(v) for v in (
                row["id"], row["table_id"], row["first_ts"], zone.local(row["first_ts"]),
                row["game"], row["outcome"], row["void_clause"], row["void_reason"],
                "yes" if row["irregular"] else "", "yes" if row["id"] in flagged else "",
                row["wagers"], row["max_amount"], row["net"])])
        written += len(rows)
        yield take()
        if before is None:
            return
    writer.writerow([f"more than {limit} rounds match: narrow the filter (a time span) "
                     "and export again"])
    yield take()
