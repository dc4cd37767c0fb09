"""A SQLite index of the journal, for search: built incrementally, rebuildable, never trusted.

The journal stays the only source of truth. The index holds, per record, where its line is
(file, byte offset) and its hash, and per round what the console filters on (table, game,
void, irregularity, clauses, actors and players, boxes, cards, results, the largest wager). A round's
timeline is read back from the journal files at those offsets and each line's hash compared
with the indexed one, so a journal changed under the index shows as a mismatch instead of
being papered over (:mod:`controller.web.timeline`).

Incremental: the index remembers the last line it read (file, offset, seq, hash). The next
update first checks that this line is still there with that hash; if not (a journal replaced,
edited or cut), the mismatch is noted and the index rebuilt from the journal.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.journal.damage import check_line
from controller.journal.files import journal_files
from controller.journal.record import Record
from controller.journal.rounds import (ACCEPTED_EVENTS, BURN_EVENTS, CARD_EVENTS,
                                       accepted_wagers)

SCHEMA_VERSION = "2"
"""2: rounds carry their table and whether a record failed its check; each record its check and
the digest of its line; boxes and folds are terms. An index of another version is rebuilt."""
BATCH_RECORDS = 2_000
FOLD = "fold"
"""The result term of a wager lost to a fold (a component label, not an outcome)."""
DEALER = "dealer"
IRREGULAR_EVENTS = frozenset({
    "irregularity_ruled", "dealing_error", "supervisor_required", "supervisor_decided",
    "hand_removed", "hands_moved", "results_swapped", "card_exposed",
})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records(
    seq INTEGER PRIMARY KEY, file TEXT NOT NULL, offset INTEGER NOT NULL, line INTEGER NOT NULL,
    round TEXT, event TEXT NOT NULL, actor TEXT, ts TEXT NOT NULL, hash TEXT NOT NULL,
    ok INTEGER NOT NULL, line_digest BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS records_round ON records(round, seq);
CREATE TABLE IF NOT EXISTS rounds(
    id TEXT PRIMARY KEY, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL,
    first_ts TEXT NOT NULL, last_ts TEXT NOT NULL, game TEXT, outcome TEXT NOT NULL,
    void_clause TEXT, void_reason TEXT, irregular INTEGER NOT NULL, net INTEGER,
    max_amount INTEGER NOT NULL, wagers INTEGER NOT NULL, table_id TEXT,
    damaged INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rounds_first ON rounds(first_seq);
CREATE INDEX IF NOT EXISTS rounds_ts ON rounds(first_ts);
CREATE TABLE IF NOT EXISTS terms(
    kind TEXT NOT NULL, term TEXT NOT NULL, round TEXT NOT NULL,
    PRIMARY KEY(kind, term, round)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS terms_round ON terms(round);
CREATE TABLE IF NOT EXISTS overrides(
    seq INTEGER PRIMARY KEY, round TEXT, ts TEXT NOT NULL, actor TEXT, action TEXT,
    clause TEXT, reason TEXT);
"""


@dataclass(slots=True)
class _Round:
    """One round's searchable facts, folded record by record."""

    id: str
    first_seq: int
    first_ts: str
    last_seq: int = 0
    last_ts: str = ""
    game: str | None = None
    outcome: str = "open"
    void_clause: str | None = None
    void_reason: str | None = None
    irregular: bool = False
    net: int | None = None
    max_amount: int = 0
    wagers: int = 0
    table: str | None = None
    damaged: bool = False
    """A record of the round failed its check when it was indexed (:func:`check_line`)."""
    terms: set[tuple[str, str]] = field(default_factory=set)

    def row(self) -> tuple[Any, ...]:
        return (self.id, self.first_seq, self.last_seq, self.first_ts, self.last_ts, self.game,
                self.outcome, self.void_clause, self.void_reason, int(self.irregular), self.net,
                self.max_amount, self.wagers, self.table, int(self.damaged))


@dataclass(frozen=True, slots=True)
class IndexState:
    """Where the index stands against the journal, for the integrity panel."""

    records: int
    last_seq: int | None
    rebuilt: int
    mismatch: str | None
    """Why the last update found the index did not match the journal (then rebuilt it)."""


def _cards(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, Mapping):
        return [c for v in value.values() for c in _cards(v)]
    return []


def line_digest(raw: bytes) -> bytes:
    """A line's own bytes, digested (16 bytes of SHA-256, newline excluded): the same digest
    later means the same bytes, so the check made when it was indexed still holds."""
    return hashlib.sha256(raw.rstrip(b"\n")).digest()[:16]


def _key_mark(key: bytes | None) -> str:
    """Which key the lines were checked with (a digest, never the key): a different key
    means the index's checks no longer apply, so it is rebuilt."""
    return "nokey" if key is None else hashlib.sha256(b"tablectl-web-index" + key).hexdigest()[:16]


def _add_box(terms: set[tuple[str, str]], position: Any) -> None:
    """A box in play (a wager, a hand, a decision); the dealer's hand is no box."""
    if isinstance(position, str | int) and not isinstance(position, bool) \
            and str(position) != DEALER:
        terms.add(("box", str(position)))


def _folded(result: Any) -> bool:
    """Whether a settled wager was lost to its player's fold.

    Settlement reports a fold as outcome ``lose`` (the player loses the stake, RWS-3CP 3.8.1);
    only the result's component says why, with the label ``fold``. Searching the outcome alone
    for ``fold`` therefore never matched; the label does."""
    if not isinstance(result, Mapping):
        return False
    components = result.get("components")
    return isinstance(components, list) and any(
        isinstance(c, Mapping) and c.get("label") == FOLD for c in components)


def _fold(summary: _Round, record: Mapping[str, Any]) -> None:
    """Add one record's searchable facts to its round."""
    event, payload = record["event"], record.get("payload") or {}
    summary.last_seq, summary.last_ts = record["seq"], record["ts"]
    if summary.table is None and isinstance(record.get("table"), str):
        summary.table = record["table"]
    terms = summary.terms
    if record.get("actor"):
        terms.add(("actor", str(record["actor"])))
    fields = payload.get("fields") if isinstance(payload.get("fields"), Mapping) else {}
    for source in (payload, fields):
        if isinstance(source.get("actor"), str):
            terms.add(("actor", source["actor"]))
        if isinstance(source.get("clause"), str):
            terms.add(("clause", source["clause"]))
        if isinstance(source.get("player"), str):
            terms.add(("actor", source["player"]))
    if event in CARD_EVENTS or event in BURN_EVENTS:
        for card in _cards(payload.get("card")) + _cards(payload.get("cards")):
            terms.add(("card", card.upper()))
        _add_box(terms, payload.get("position"))
    elif event == "round_opened" and isinstance(payload.get("game"), str):
        summary.game = payload["game"]
    elif event in ACCEPTED_EVENTS:
        for wager in accepted_wagers(event, payload):
            summary.wagers += 1
            if isinstance(wager.get("amount"), int):
                summary.max_amount = max(summary.max_amount, wager["amount"])
            if isinstance(wager.get("player"), str):
                terms.add(("actor", wager["player"]))
            _add_box(terms, wager.get("position"))
    elif event == "decision_made":
        _add_box(terms, payload.get("position"))
    elif event in ("round_settled", "round_voided"):
        settlement = payload.get("settlement")
        results = settlement.get("results", []) if isinstance(settlement, Mapping) else []
        summary.net = sum(int(r.get("net", 0)) for r in results if isinstance(r, Mapping))
        for result in results:
            if isinstance(result, Mapping) and isinstance(result.get("outcome"), str):
                terms.add(("result", result["outcome"]))
            if _folded(result):
                terms.add(("result", FOLD))
        if event == "round_voided":
            summary.outcome = "voided"
            summary.void_clause = payload.get("clause")
            summary.void_reason = payload.get("reason")
        else:
            summary.outcome = "settled"
    if event in IRREGULAR_EVENTS:
        summary.irregular = True


class JournalIndex:
    """The index of one journal directory in one SQLite file (``update()`` brings it level)."""

    def __init__(self, journal_dir: str | Path, db_path: str | Path,
                 key: bytes | None = None) -> None:
        self.journal_dir = Path(journal_dir)
        self.db_path = Path(db_path)
        self.key = key
        """The journal's HMAC key when readable: each line is checked with it as indexed."""
        self._lock = threading.Lock()
        self._rebuilt = 0
        self._mismatch: str | None = None
        self._db = self._connect()
        self._count, self._last = self._db.execute(
            "SELECT count(*), max(seq) FROM records").fetchone()
        self.games = self._games()
        self.tables = self._tables()

    def _games(self) -> list[str]:
        return [row[0] for row in self._db.execute(
            "SELECT DISTINCT game FROM rounds WHERE game IS NOT NULL ORDER BY game")]

    def _tables(self) -> list[str]:
        return [row[0] for row in self._db.execute(
            "SELECT DISTINCT table_id FROM rounds WHERE table_id IS NOT NULL ORDER BY table_id")]

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.db_path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        found = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        version = f"{SCHEMA_VERSION} {_key_mark(self.key)}"
        if found is None:
            db.execute("INSERT INTO meta VALUES('schema', ?)", (version,))
        elif found[0] != version:  # another layout, or lines checked with another key
            db.close()
            self.db_path.unlink()
            return self._connect()
        return db

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- reading --------------------------------------------------------------------------------

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Read-only SQL for the console's queries (one lock: one connection, many threads)."""
        with self._lock:
            cursor = self._db.execute(sql, args)
            cursor.row_factory = sqlite3.Row
            return cursor.fetchall()

    def state(self) -> IndexState:
        """Counted as records are added, not per page (a count of a million rows costs tens
        of milliseconds)."""
        return IndexState(self._count, self._last, self._rebuilt, self._mismatch)

    # -- building -------------------------------------------------------------------------------

    def update(self, *, wait: bool = True) -> int:
        """Index what the journal gained since the last update; rebuild on a mismatch.
        Returns the number of records added. ``wait=False``: do nothing (0) when another
        thread is updating (a page does not wait for a long build)."""
        if not self._lock.acquire(blocking=wait):
            return 0
        try:
            return self._update()
        finally:
            self._lock.release()

    def _update(self) -> int:
        where = self._position()
        problem = self._check_position(where) if where else None
        if problem is not None:
            self._mismatch = problem
            self._rebuilt += 1
            self._clear()
            where = None
        return self._scan_counted(where)

    def rebuild(self) -> int:
        with self._lock:
            self._clear()
            self._rebuilt += 1
            return self._scan_counted(None)

    def _scan_counted(self, where: tuple[str, int, int, int, str] | None) -> int:
        added = self._scan(where)
        if added:
            self._count, self._last = self._db.execute(
                "SELECT count(*), max(seq) FROM records").fetchone() if where is None \
                else (self._count + added, self._db.execute(
                    "SELECT max(seq) FROM records").fetchone()[0])
            self.games = self._games()
            self.tables = self._tables()
        return added

    def _position(self) -> tuple[str, int, int, int, str] | None:
        rows = dict(self._db.execute(
            "SELECT key, value FROM meta WHERE key IN ('file','offset','line','seq','hash')"
        ).fetchall())
        if "file" not in rows:
            return None
        return (rows["file"], int(rows["offset"]), int(rows["line"]), int(rows["seq"]),
                rows["hash"])

    def _check_position(self, where: tuple[str, int, int, int, str]) -> str | None:
        """Why the journal no longer holds the last indexed record where the index says, or
        None when it does."""
        name, _offset, _line, seq, digest = where
        found = self._db.execute("SELECT offset FROM records WHERE seq=?", (seq,)).fetchone()
        path = self.journal_dir / name
        if found is None:
            return f"the index lost its record seq {seq}"
        try:
            with path.open("rb") as handle:
                handle.seek(found[0])
                raw = handle.readline()
        except OSError as error:
            return f"{name}: {error.strerror or error}"
        try:
            record = json.loads(raw)
        except ValueError:
            record = None
        if not isinstance(record, dict) or record.get("hash") != digest \
                or record.get("seq") != seq:
            return f"the journal no longer holds seq {seq} as indexed ({name})"
        return None

    def _clear(self) -> None:
        self._db.execute("BEGIN")
        for table in ("records", "rounds", "terms", "overrides"):
            self._db.execute(f"DELETE FROM {table}")  # noqa: S608 (fixed names)
        self._db.execute("DELETE FROM meta WHERE key != 'schema'")
        self._db.execute("COMMIT")
        self._count, self._last = 0, None

    def _lines(self, where: tuple[str, int, int, int, str] | None
               ) -> Iterator[tuple[str, int, int, bytes]]:
        """(file, offset, line number, raw) of each whole line after ``where``."""
        files = journal_files(self.journal_dir)
        if where is not None:
            files = [p for p in files if p.name >= where[0]]
        for path in files:
            offset, number = (where[1], where[2]) if where and path.name == where[0] else (0, 0)
            with path.open("rb") as handle:
                handle.seek(offset)
                for raw in handle:
                    if not raw.endswith(b"\n"):
                        break  # a line still being written: next update
                    number += 1
                    yield path.name, offset, number, raw
                    offset += len(raw)

    def _scan(self, where: tuple[str, int, int, int, str] | None) -> int:
        added = 0
        open_rounds: dict[str, _Round] = {}
        batch: list[tuple[Any, ...]] = []
        overrides: list[tuple[Any, ...]] = []
        last: tuple[str, int, int, int, str] | None = None
        for name, offset, number, raw in self._lines(where):
            checked = check_line(raw.rstrip(b"\n"), self.key)
            try:
                record = checked.to_dict() if isinstance(checked, Record) else json.loads(raw)
                seq, digest, ts = record["seq"], record["hash"], record["ts"]
            except (ValueError, KeyError, TypeError):
                continue  # not a record: verify names it; the index only skips it
            round_id = record.get("round")
            batch.append((seq, name, offset, number, round_id, record.get("event", "?"),
                          record.get("actor"), ts, digest, int(isinstance(checked, Record)),
                          line_digest(raw)))
            last = (name, offset + len(raw), number, seq, digest)
            if round_id is not None:
                summary = open_rounds.get(round_id) or self._load_round(round_id) \
                    or _Round(round_id, seq, ts)
                open_rounds[round_id] = summary
                _fold(summary, record)
                summary.damaged = summary.damaged or not isinstance(checked, Record)
            if record.get("event") == "supervisor_decided":
                payload = record.get("payload") or {}
                overrides.append((seq, round_id, ts, payload.get("actor"),
                                  payload.get("action"), payload.get("clause"),
                                  payload.get("reason")))
            added += 1
            if len(batch) >= BATCH_RECORDS:
                self._flush(batch, open_rounds, overrides, last)
                batch, overrides = [], []
                open_rounds = {k: v for k, v in open_rounds.items() if v.outcome == "open"}
        if batch:
            self._flush(batch, open_rounds, overrides, last)
        return added

    def _load_round(self, round_id: str) -> _Round | None:
        row = self._db.execute("SELECT * FROM rounds WHERE id=?", (round_id,)).fetchone()
        if row is None:
            return None
        summary = _Round(*row[:2], row[3], row[2], *row[4:9], bool(row[9]), *row[10:14],
                         bool(row[14]))
        summary.terms = set(self._db.execute(
            "SELECT kind, term FROM terms WHERE round=?", (round_id,)).fetchall())
        return summary

    def _flush(self, batch: list[tuple[Any, ...]], rounds: dict[str, _Round],
               overrides: list[tuple[Any, ...]], last: tuple[str, int, int, int, str] | None
               ) -> None:
        db = self._db
        db.execute("BEGIN")
        db.executemany("INSERT OR REPLACE INTO records VALUES(?,?,?,?,?,?,?,?,?,?,?)", batch)
        db.executemany("INSERT OR REPLACE INTO rounds VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       [r.row() for r in rounds.values()])
        db.executemany("INSERT OR IGNORE INTO terms VALUES(?,?,?)",
                       [(kind, term, r.id) for r in rounds.values() for kind, term in r.terms])
        db.executemany("INSERT OR REPLACE INTO overrides VALUES(?,?,?,?,?,?,?)", overrides)
        if last is not None:
            db.executemany("INSERT OR REPLACE INTO meta VALUES(?,?)",
                           zip(("file", "offset", "line", "seq", "hash"), map(str, last)))
        db.execute("COMMIT")
