"""The floor view in a real database: SQLite (embedded default) or PostgreSQL (``psycopg``).

Exactly once is the database's job: ``records`` has the primary key (table, seq), and a record
is applied -- its row and its effect on the view -- in one transaction, so a crash between
the two cannot count a round twice or lose it. The SQL is the subset both databases speak
(``INSERT ... ON CONFLICT``); only the placeholder differs.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from controller.feed.errors import FeedError
from controller.floor.chain import Head
from controller.journal.record import Record

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS records (
        table_id TEXT NOT NULL, seq BIGINT NOT NULL, hash TEXT NOT NULL, event TEXT NOT NULL,
        round_id TEXT, ts TEXT NOT NULL, applied_ns BIGINT NOT NULL, sent_ns BIGINT,
        PRIMARY KEY (table_id, seq))""",
    """CREATE TABLE IF NOT EXISTS tables (
        table_id TEXT PRIMARY KEY, site TEXT NOT NULL, game TEXT, last_seq BIGINT NOT NULL,
        last_hash TEXT NOT NULL, last_ts TEXT NOT NULL, duplicates BIGINT NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS rounds (
        table_id TEXT NOT NULL, round_id TEXT NOT NULL, game TEXT, opened_ts TEXT,
        ended_ts TEXT, outcome TEXT, wagered BIGINT NOT NULL DEFAULT 0,
        hold BIGINT NOT NULL DEFAULT 0, clause TEXT, PRIMARY KEY (table_id, round_id))""",
    """CREATE TABLE IF NOT EXISTS irregularities (
        table_id TEXT NOT NULL, seq BIGINT NOT NULL, round_id TEXT, event TEXT NOT NULL,
        kind TEXT, clause TEXT, PRIMARY KEY (table_id, seq))""",
    """CREATE TABLE IF NOT EXISTS statuses (
        table_id TEXT PRIMARY KEY, online BOOLEAN NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS behind (
        table_id TEXT PRIMARY KEY, known_seq BIGINT NOT NULL, asked_from BIGINT,
        asks BIGINT NOT NULL DEFAULT 0, at_ns BIGINT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS problems (
        id BIGINT, table_id TEXT, seq BIGINT, kind TEXT NOT NULL, detail TEXT NOT NULL,
        at_ns BIGINT NOT NULL)""",
)
IRREGULARITY_EVENTS = frozenset({"dealing_error", "supervisor_required", "deck_blocked"})


class StoreError(FeedError):
    """The floor database cannot be opened or written."""


class Store:
    def __init__(self, url: str) -> None:
        self.url = url
        self.postgres = url.startswith(("postgresql://", "postgres://"))
        self._open: _Cursor | None = None
        try:
            if self.postgres:
                try:
                    import psycopg
                except ImportError as error:
                    raise StoreError("a postgresql:// database needs psycopg: "
                                     "pip install 'tablectl[floor]'") from error
                self.connection: Any = psycopg.connect(url)
            else:
                self.connection = sqlite3.connect(url, isolation_level=None,
                                                  check_same_thread=False)
                self.connection.execute("PRAGMA journal_mode=WAL")
                self.connection.execute("PRAGMA synchronous=NORMAL")
        except StoreError:
            raise
        except Exception as error:  # psycopg.Error, sqlite3.Error: one line for the user
            detail = " ".join(str(error).split())  # psycopg's messages span lines
            raise StoreError(f"cannot open the floor database {self._safe_url()}: {detail}") \
                from error
        with self.transaction() as cursor:
            for statement in SCHEMA:
                cursor.execute(statement)

    def close(self) -> None:
        self.connection.close()

    def _safe_url(self) -> str:
        return self.url.split("@")[-1] if self.postgres else self.url

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s") if self.postgres else text

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One transaction; a transaction opened inside another is part of it (the floor
        applies a batch of messages in one commit)."""
        if self._open is not None:
            yield self._open
            return
        with self._transaction() as cursor:
            self._open = cursor
            try:
                yield cursor
            finally:
                self._open = None

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        if self.postgres:
            with self.connection.transaction():
                yield _Cursor(self.connection.cursor(), self._sql)
        else:
            self.connection.execute("BEGIN")
            try:
                yield _Cursor(self.connection.cursor(), self._sql)
            except BaseException:
                self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")

    def query(self, text: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.transaction() as cursor:
            cursor.execute(text, args)
            return list(cursor.fetchall())

    def heads(self) -> dict[str, Head]:
        return {table: Head(seq, digest) for table, seq, digest in
                self.query("SELECT table_id, last_seq, last_hash FROM tables")}

    def applied_hash(self, table: str, seq: int) -> str | None:
        rows = self.query("SELECT hash FROM records WHERE table_id = ? AND seq = ?",
                          (table, seq))
        return rows[0][0] if rows else None

    def count_duplicate(self, table: str) -> None:
        with self.transaction() as cursor:
            cursor.execute("UPDATE tables SET duplicates = duplicates + 1 WHERE table_id = ?",
                           (table,))

    def set_status(self, table: str, online: bool, body: str) -> None:
        """The table's retained status as last received (``online`` false: its Will)."""
        with self.transaction() as cursor:
            cursor.execute("INSERT INTO statuses (table_id, online, body) VALUES (?, ?, ?) "
                           "ON CONFLICT (table_id) DO UPDATE SET online = excluded.online, "
                           "body = excluded.body", (table, online, body))

    def note_behind(self, table: str, known_seq: int, asked_from: int | None,
                    asks: int) -> None:
        """The highest seq the floor knows ``table`` sent, and what it asked for: the view
        shows the table behind (never online) until ``last_seq`` reaches it."""
        with self.transaction() as cursor:
            cursor.execute("INSERT INTO behind (table_id, known_seq, asked_from, asks, at_ns) "
                           "VALUES (?, ?, ?, ?, ?) ON CONFLICT (table_id) DO UPDATE SET "
                           "known_seq = excluded.known_seq, asked_from = excluded.asked_from, "
                           "asks = excluded.asks, at_ns = excluded.at_ns",
                           (table, known_seq, asked_from, asks, time.time_ns()))

    def report(self, table: str | None, seq: int | None, kind: str, detail: str) -> None:
        with self.transaction() as cursor:
            cursor.execute("INSERT INTO problems (table_id, seq, kind, detail, at_ns) "
                           "VALUES (?, ?, ?, ?, ?)", (table, seq, kind, detail[:500],
                                                      time.time_ns()))

    def apply(self, site: str, record: Record, sent_ns: int | None = None) -> bool:
        """Apply ``record`` once; ``False`` when (table, seq) was already applied. ``sent_ns``
        (the feed's wall clock at publishing) is kept for the publish-to-applied latency."""
        with self.transaction() as cursor:
            cursor.execute(
                "INSERT INTO records (table_id, seq, hash, event, round_id, ts, applied_ns, "
                "sent_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (record.table_id, record.seq, record.hash, record.event_type, record.round_id,
                 record.ts, time.time_ns(), sent_ns))
            if cursor.rowcount != 1:
                return False
            cursor.execute(
                "INSERT INTO tables (table_id, site, last_seq, last_hash, last_ts) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (table_id) DO UPDATE SET "
                "site = excluded.site, last_seq = excluded.last_seq, "
                "last_hash = excluded.last_hash, last_ts = excluded.last_ts",
                (record.table_id, site, record.seq, record.hash, record.ts))
            _apply_view(cursor, record)
        return True


class _Cursor:
    """A DB-API cursor that takes ``?`` placeholders on either database."""

    def __init__(self, cursor: Any, sql: Any) -> None:
        self._cursor, self._sql = cursor, sql

    def execute(self, text: str, args: Sequence[Any] = ()) -> None:
        self._cursor.execute(self._sql(text), tuple(args))

    @property
    def rowcount(self) -> int:
        return int(self._cursor.rowcount)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._cursor.fetchall())


def _apply_view(cursor: _Cursor, record: Record) -> None:
    payload, table, round_id = record.payload, record.table_id, record.round_id
    event = record.event_type
    if event == "round_opened" and round_id is not None:
        game = payload.get("game")
        cursor.execute("INSERT INTO rounds (table_id, round_id, game, opened_ts) "
                       "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (table, round_id, game, record.ts))
        cursor.execute("UPDATE tables SET game = ? WHERE table_id = ?", (game, table))
    elif event in ("round_settled", "round_voided") and round_id is not None:
        results = (payload.get("settlement") or {}).get("results") or []
        wagered = sum(int(r.get("stake", 0)) for r in results if isinstance(r, dict))
        hold = -sum(int(r.get("net", 0)) for r in results if isinstance(r, dict))
        outcome = "settled" if event == "round_settled" else "voided"
        cursor.execute("INSERT INTO rounds (table_id, round_id) VALUES (?, ?) "
                       "ON CONFLICT DO NOTHING", (table, round_id))
        cursor.execute("UPDATE rounds SET ended_ts = ?, outcome = ?, wagered = ?, hold = ?, "
                       "clause = ? WHERE table_id = ? AND round_id = ?",
                       (record.ts, outcome, wagered, hold, payload.get("clause"), table,
                        round_id))
    elif event in IRREGULARITY_EVENTS:
        cursor.execute("INSERT INTO irregularities (table_id, seq, round_id, event, kind, "
                       "clause) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (table, record.seq, round_id, event, payload.get("kind"),
                        payload.get("clause")))
