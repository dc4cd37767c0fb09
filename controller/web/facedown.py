"""Where the journal stops being shown to a console viewer who may not see face-down cards.

The console reads the journal itself, which records every card, the dealer's face-down hand
included. A Pit Supervisor at the table must not see that hand before the reveal (they could
tell a player when to fold), any more than on the control socket (docs/service.md, "Face-down
cards"). The rule is the one the floor feed applies, :class:`controller.service.visibility.
Horizon`: a record that shows a face-down card, and every record after it in the chain, stay
hidden until the round's reveal or end is in the journal. Withheld, not redacted: a blanked
card under a published hash can be brute-forced back (52 candidates).

Only the journal's newest round can hold a face-down card (rounds are sequential; a later
round ends an earlier one), so the boundary is found from that round's records alone, read back
from the journal files as the pages read them. A record of that round that does not match the
index cannot be judged, so it is withheld too.
"""

from __future__ import annotations

from controller.service.visibility import Horizon
from controller.web.index import JournalIndex
from controller.web.timeline import iter_seqs


def withheld_from(index: JournalIndex, key: bytes | None) -> int | None:
    """The first journal seq such a viewer may not see now, or ``None`` when nothing is face
    down (the newest round has ended or been revealed, or deals everything face up)."""
    newest = index.query("SELECT id, first_seq, outcome FROM rounds "
                         "ORDER BY first_seq DESC LIMIT 1")
    if not newest or newest[0]["outcome"] != "open":
        return None
    last = index.query("SELECT max(seq) AS last FROM records")
    if not last or last[0]["last"] is None:
        return None
    entries = list(iter_seqs(index, key, newest[0]["first_seq"], last[0]["last"]))
    for position, entry in enumerate(entries):
        if entry.record is None:
            held = Horizon().releasable([e.record for e in entries[:position]
                                         if e.record is not None])
            return entries[held].seq if held < position else entry.seq
    records = [entry.record for entry in entries if entry.record is not None]
    released = Horizon().releasable(records)
    return None if released == len(records) else records[released].seq


def withheld_round(index: JournalIndex, first_withheld: int | None) -> str | None:
    """The round whose face-down card starts the withheld records (for card search)."""
    if first_withheld is None:
        return None
    found = index.query("SELECT id FROM rounds WHERE first_seq <= ? ORDER BY first_seq DESC "
                        "LIMIT 1", (first_withheld,))
    return str(found[0]["id"]) if found else None
