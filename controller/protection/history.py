"""The monitors' evidence across a restart: the last decks of the journal fed through a fresh
guard before the table thread starts.

Without it a restart would start every sequential test afresh (a stuck card would need its 26
decks again, the repeat window would be empty). Only the card inputs of the newest files are
read, up to the last :data:`WARM_DECKS` shuffles: some tens of thousands of records, not the
journal's months (the start-up journal check has already verified the bytes). Findings the
warm-up reaches again are not reported again: they are in the journal already.
"""

from __future__ import annotations

import json
from pathlib import Path

from controller.journal.codec import decode_input
from controller.journal.errors import JournalFormatError
from controller.journal.files import journal_files
from controller.protection.guard import TableGuard
from controller.protection.limits import REPEAT_WINDOW

WARM_DECKS = REPEAT_WINDOW
"""The repeat monitor's whole window (2,000 decks, about two days of one table), which also
covers the CUSUMs, the stuck-card run (26 decks) and the position (520) and category (400)
batches in progress: a restart loses no evidence. About 0.75 s on the development machine
from a journal of 64 MiB files (docs/game-protection.md); the batches after a restart are
counted from the first deck fed here, so a batch may share decks with one decided before."""
_SHUFFLES = (b'"ShuffleDone"', b'"ConfirmShuffle"')
_CARDS = (*_SHUFFLES, b'"CardSetDispensed"', b'"CardRead"')


def warm_from_journal(guard: TableGuard, directory: str | Path,
                      decks: int = WARM_DECKS) -> int:
    """Feed the last ``decks`` decks of the journal in ``directory`` to ``guard``; the number
    of shuffles fed."""
    lines: list[bytes] = []
    shuffles = 0
    for path in reversed(journal_files(directory)):
        found = [line for line in path.read_bytes().splitlines()
                 if b'"input_' in line and any(key in line for key in _CARDS)]
        lines[:0] = found
        shuffles += sum(1 for line in found if any(key in line for key in _SHUFFLES))
        if shuffles >= decks:
            break
    starts = [i for i, line in enumerate(lines) if any(key in line for key in _SHUFFLES)]
    first = starts[-decks] if len(starts) >= decks else 0
    fed = 0
    for line in lines[first:]:
        try:
            record = json.loads(line)
            item = decode_input(record["event"], record["payload"])
        except (ValueError, KeyError, TypeError, JournalFormatError):
            continue  # a line the start-up check already reported; the evidence goes on
        guard.before(item)
        guard.after(item)
        fed += any(key in line for key in _SHUFFLES)
    guard.reports = 0
    return fed
