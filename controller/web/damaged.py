"""Which rounds of a page hold a record that fails its check: flagged in the rounds list.

The integrity panel names only the first damage the verifier found; a reviewer scanning the
rounds list needs to see *which* rounds cannot be trusted without opening each. Each line is
checked on its own (:func:`controller.journal.damage.check_line`: canonical form, hash, the
HMAC when the key is readable) once, when it is indexed, and the index keeps the result with a
digest of the line's bytes. For the rounds on a page, each of their lines is read back from the
journal file and its digest compared: the same bytes pass or fail as they did, other bytes (a
line changed since) fail. A full check costs a few hundred microseconds a line on a busy Pi, a
digest a few: a page of 50 rounds (about 1,200 lines, read file by file in offset order) stays
well inside the page's time. The round holding the verifier's first problem (a chain fault
such as a missing record, which no line shows on its own) is flagged too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from itertools import groupby
from pathlib import Path

from controller.web.index import JournalIndex, line_digest

CHUNK = 200
"""Rounds per query (SQLite's bound-parameter limit is far above)."""


def damaged_rounds(index: JournalIndex, round_ids: Iterable[str],
                   problem_seq: int | None = None) -> frozenset[str]:
    """The rounds among ``round_ids`` with a record that fails its check, or that hold the
    verifier's first problem (``problem_seq``)."""
    wanted = list(dict.fromkeys(round_ids))
    damaged: set[str] = set()
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start:start + CHUNK]
        rows = index.query(
            "SELECT round, file, offset, ok, line_digest FROM records WHERE round IN ("
            + ",".join("?" * len(chunk)) + ") ORDER BY file, offset", tuple(chunk))
        for name, group in groupby(rows, key=lambda row: row["file"]):
            damaged |= _failing(index.journal_dir / name, list(group))
    if problem_seq is not None and wanted:
        found = index.query("SELECT round FROM records WHERE seq = ?", (problem_seq,))
        if found and found[0]["round"] in wanted:
            damaged.add(found[0]["round"])
    return frozenset(damaged)


def _failing(path: Path, rows: list[sqlite3.Row]) -> set[str]:
    """The rounds of ``rows`` (one file's, in offset order) with a line that failed its check
    when indexed or is no longer the line that was checked."""
    bad: set[str] = set()
    try:
        handle = path.open("rb")
    except OSError:
        return {row["round"] for row in rows}
    with handle:
        for row in rows:
            round_id = row["round"]
            if round_id in bad:
                continue
            if not row["ok"]:
                bad.add(round_id)
                continue
            handle.seek(row["offset"])
            if line_digest(handle.readline()) != row["line_digest"]:
                bad.add(round_id)
    return bad
