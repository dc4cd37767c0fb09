"""The floor view in a real database: SQLite (embedded default) or PostgreSQL (``psycopg``).

Exactly once is the database's job: ``records`` has the primary key (table, seq), and a record
is applied -- its row and its effect on the view -- in one transaction, so a crash between
the two cannot count a round twice or lose it. The SQL is the subset both databases speak
(``INSERT ... ON CONFLICT``); only the placeholder differs.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
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
GROUP_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS pending (
        table_id TEXT NOT NULL, seq BIGINT NOT NULL, site TEXT NOT NULL, payload TEXT NOT NULL,
        sent_ns BIGINT, PRIMARY KEY (table_id, seq))""",
)
"""What only a group of consumers needs: the records that came before their predecessors,
waiting for whichever consumer applies those (``controller.floor.consumer``)."""
IRREGULARITY_EVENTS = frozenset({"dealing_error", "supervisor_required", "deck_blocked"})
FLOOR_TABLES = frozenset({"records", "tables"})
"""The tables that make a database the floor's: one holding other tables but not these is
another program's, and the floor neither reads it nor writes into it."""
SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file (sqlite.org/fileformat.html, 1.3)."""
_CREATED = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")


def table_names(schema: Sequence[str]) -> list[str]:
    """The tables the ``CREATE TABLE IF NOT EXISTS`` statements of ``schema`` make."""
    return [found.group(1) for found in map(_CREATED.search, schema) if found]


LOCK_CLASS = 0x74626C66
"""The first key of the floor's advisory locks ("tblf"): another program's advisory locks in
the same database use other classes, and a table id maps into the second key."""


def table_lock_key(table: str) -> int:
    """A table's advisory lock key: 32 bits of its id's BLAKE2b digest. Two tables sharing a
    key only take turns; correctness never depends on the key being unique."""
    return int.from_bytes(hashlib.blake2b(table.encode(), digest_size=4).digest(), "big",
                          signed=True)


class StoreError(FeedError):
    """The floor database cannot be opened or written."""


def _check_sqlite_file(path: Path, read_only: bool) -> None:
    """Before SQLite opens ``path``: SQLite takes a short file that is not a database for an
    empty one and writes a new database over it (a 1-byte text file became an empty floor), and
    creates a file that does not exist. A read-only open needs the file; neither open accepts a
    file whose first bytes are not SQLite's (an empty file is an empty database)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise StoreError(f"{path} is not a floor database (not a regular file)")
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        if read_only:
            raise StoreError(f"{path}: no such file: no floor database there (check database "
                             f"in the floor config; the floor consumer, tablectl floor, makes "
                             f"it)") from None
        return
    except OSError as error:
        raise StoreError(f"cannot open the floor database {path}: "
                         f"{error.strerror or error}") from error
    if head and head != SQLITE_HEADER:
        raise StoreError(f"{path} is not a floor database (not an SQLite file): left as it is; "
                         f"point database at the floor's database, or at a new file")


class Store:
    """The floor database at ``url``. Writable (the consumer): a SQLite file that does not
    exist is created, and one that exists must be a floor database (or an empty SQLite one),
    never replaced. ``read_only`` (``tablectl floor status``): the database must exist and hold
    the floor's tables, its own and those of ``schema_also`` (the machines'), and none is created
    (SQLite is opened ``mode=ro``: nothing can be written)."""

    def __init__(self, url: str, *, read_only: bool = False,
                 schema_also: Sequence[str] = ()) -> None:
        self.url = url
        self.read_only = read_only
        self.postgres = url.startswith(("postgresql://", "postgres://"))
        self._open: _Cursor | None = None
        self.connection: Any = None
        if not self.postgres:
            _check_sqlite_file(Path(url), read_only)
        try:
            if self.postgres:
                try:
                    import psycopg
                except ImportError as error:
                    raise StoreError("a postgresql:// database needs psycopg: "
                                     "pip install 'tablectl[floor]'") from error
                self.connection = psycopg.connect(url)
            elif read_only:
                self.connection = sqlite3.connect(f"{Path(url).absolute().as_uri()}?mode=ro",
                                                  uri=True, isolation_level=None,
                                                  check_same_thread=False)
            else:
                self.connection = sqlite3.connect(url, isolation_level=None,
                                                  check_same_thread=False)
            self._check_schema(schema_also)
            if not self.postgres and not read_only:
                self.connection.execute("PRAGMA journal_mode=WAL")
                self.connection.execute("PRAGMA synchronous=NORMAL")
        except StoreError:
            self._close_quietly()
            raise
        except Exception as error:  # psycopg.Error, sqlite3.Error: one line for the user
            self._close_quietly()
            detail = " ".join(str(error).split())  # psycopg's messages span lines
            raise StoreError(f"cannot open the floor database {self._safe_url()}: {detail}") \
                from error
        if not read_only:
            self.create_tables((*SCHEMA, *schema_also))

    def create_tables(self, schema: Sequence[str]) -> None:
        """Run ``schema``'s ``CREATE TABLE IF NOT EXISTS`` statements in one transaction. On
        PostgreSQL under a lock first: two consumers of a group starting together would
        otherwise race to create the same table, and PostgreSQL refuses the second ``IF NOT
        EXISTS`` that lost the race (a unique violation in its catalogue) instead of
        skipping it."""
        with self.transaction() as cursor:
            if self.postgres:
                cursor.execute("SELECT pg_advisory_xact_lock(?, 0)", (LOCK_CLASS + 1,))
            for statement in schema:
                cursor.execute(statement)

    def _check_schema(self, schema_also: Sequence[str]) -> None:
        """Refuse a database that is not the floor's: a SQLite file with tables but not the
        floor's ``records`` and ``tables`` (another program's, the web index) is never written
        into (a PostgreSQL database may hold other programs' tables beside the floor's); a
        read-only open also needs every table the view reads."""
        present = set(self._table_names())
        where = self._safe_url()
        if not self.postgres and present and not FLOOR_TABLES <= present:
            raise StoreError(f"{where} is not a floor database (it holds the tables "
                             f"{', '.join(sorted(present)[:8])}, not the floor's "
                             f"{' and '.join(sorted(FLOOR_TABLES))}): left as it is; point "
                             f"database at the floor's database")
        if not self.read_only:
            return
        if not present:
            raise StoreError(f"{where} is not a floor database (it holds no tables; the floor "
                             f"consumer, tablectl floor, makes its database)")
        missing = [name for name in table_names((*SCHEMA, *schema_also)) if name not in present]
        if missing:
            raise StoreError(f"{where}: a floor database without the table(s) "
                             f"{', '.join(missing)} (an older floor's): run the floor consumer, "
                             f"tablectl floor, once to bring it up to date")

    def _table_names(self) -> list[str]:
        if self.postgres:
            text = ("SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = ANY (current_schemas(false))")
        else:
            text = "SELECT name FROM sqlite_master WHERE type = 'table'"
        return [str(row[0]) for row in self.query(text)]

    def _close_quietly(self) -> None:
        if self.connection is not None:
            try:
                self.connection.close()
            except Exception:  # noqa: BLE001 (already failing: the first error is the one told)
                pass

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

    def lock_tables(self, tables: Iterable[str]) -> None:
        """Hold each of ``tables``' locks until the open transaction ends, so no other floor
        consumer on this database applies a record of them meanwhile: PostgreSQL's advisory
        transaction locks (no row needed: a table's first record has none yet), released by
        the commit or the rollback, also when the process dies. Taken in one order (sorted
        keys) by every consumer, so two consumers locking overlapping sets never deadlock.
        SQLite serves one consumer (``[floor] group`` refuses it): nothing to take."""
        if not self.postgres:
            return
        keys = sorted({table_lock_key(table) for table in tables})
        if keys:
            with self.transaction() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(?, k) FROM unnest(?::int[]) AS k",
                               (LOCK_CLASS, keys))

    def heads_of(self, tables: Iterable[str]) -> dict[str, Head]:
        """The last applied seq and hash of those of ``tables`` the database has."""
        names = sorted(set(tables))
        if not names:
            return {}
        marks = ", ".join("?" * len(names))
        return {table: Head(seq, digest) for table, seq, digest in self.query(
            f"SELECT table_id, last_seq, last_hash FROM tables WHERE table_id IN ({marks})",
            names)}

    def hold(self, site: str, seq: int, table: str, payload: bytes,
             sent_ns: int | None) -> None:
        """A record of ``table`` that came before its predecessor, kept for whichever consumer
        of the group applies the predecessor (under the table's lock: :meth:`lock_tables`)."""
        with self.transaction() as cursor:
            cursor.execute("INSERT INTO pending (table_id, seq, site, payload, sent_ns) "
                           "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                           (table, seq, site, payload.decode(), sent_ns))

    def held(self, table: str, after: int, limit: int
             ) -> list[tuple[int, str, bytes, int | None]]:
        """``table``'s first ``limit`` records waiting with a seq after ``after``, by seq."""
        return [(int(seq), site, payload.encode(), sent_ns) for seq, site, payload, sent_ns in
                self.query("SELECT seq, site, payload, sent_ns FROM pending WHERE table_id = ? "
                           "AND seq > ? ORDER BY seq LIMIT ?", (table, after, limit))]

    def release_held(self, table: str, seq: int) -> None:
        """Forget ``table``'s waiting records up to ``seq`` (applied, or duplicates)."""
        with self.transaction() as cursor:
            cursor.execute("DELETE FROM pending WHERE table_id = ? AND seq <= ?", (table, seq))

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
