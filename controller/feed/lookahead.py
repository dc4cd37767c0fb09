"""Looking past a full read-ahead for the end of the round that holds it.

The feed keeps at most ``PENDING_MAX`` records in memory. If the first of them shows a
face-down card and the round's reveal or end is further on in the journal than that, the
records in memory alone can never release it, and the feed would wait for ever. This search
reads the journal on from the last record held, one batch a turn, and keeps nothing but the
answer: once the round's end is written, :meth:`Horizon.mark_ended` lets the held records go,
in order, and the feed reads on as usual. The journal is the outbox, so nothing read here needs
keeping: the same records are read again when their turn comes.
"""

from __future__ import annotations

from pathlib import Path

from controller.service.visibility import ends_round
from controller.feed.tail import JournalTail

BATCH = 256
"""Records looked at a turn: a turn stays short, the search memory one batch."""


class RoundEndSearch:
    """Whether the journal after ``after_seq`` holds the end of ``round_id`` yet."""

    def __init__(self, journal_dir: Path, round_id: str, after_seq: int) -> None:
        self.round_id = round_id
        self._tail = JournalTail(journal_dir, after_seq)
        self.looked_at = 0

    def found(self) -> bool:
        """Read one more batch (what the table has written since, if less): True once the
        round's end is among the records read so far."""
        batch = self._tail.read(BATCH)
        self.looked_at += len(batch)
        return any(ends_round(record, self.round_id) for record in batch)
