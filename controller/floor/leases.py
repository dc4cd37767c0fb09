"""Tables leased to the consumers of a group (``[floor] assign = "lease"``), in PostgreSQL.

With Mosquitto's shared subscription a table's records alternate between the consumers, so
each queues on the table's lock and about half its records wait in ``pending``: the group
shares the work but is no faster than one consumer (docs/feed.md). A lease gives each table
to one consumer, which subscribes to that table's topic only: its records arrive in order at
one process, nothing contends, and each consumer costs what one alone costs.

Nothing here is a coordinator of ours; PostgreSQL's row locks and its clock do the work:

* ``floor_leases`` (group, table, consumer, expires) holds one row per table; a table is the
  consumer's while ``expires`` is later than the database's clock (one clock for every host).
* Every :data:`HEARTBEAT_S` a consumer (:meth:`Leases.beat`, one transaction) says it is
  alive in ``floor_consumers``, counts the live consumers, renews the leases it holds up to
  its fair share (:func:`fair_share`) and releases the rest (a consumer joined), and claims
  free or expired leases up to its share with ``SELECT ... FOR UPDATE SKIP LOCKED`` (never
  waiting on a row another consumer is busy with).
* The apply checks the lease in the same transaction (:func:`held_now`, ``FOR SHARE``): a
  claim of that row waits for the apply to commit, and an apply after the lease passed finds
  it gone and applies nothing. So a table changes hands between two transactions, never in
  one; the chain check and the (table, seq) key stay the last guard.
* A consumer SIGKILLed stops renewing: its leases expire after :data:`LEASE_S` and the others
  claim them at their next beat, and ask the tables' feeds to resend from the first seq the
  database lacks (what the dead one had received and not committed).

Renewing locks the consumer's rows in table order (``ORDER BY ... FOR UPDATE``) and the
apply's check locks its rows in the same order, so the two never deadlock.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import structlog

from controller.floor.store import Store

log = structlog.get_logger("tablectl.floor")

LEASE_S = 4.0
"""A lease not renewed for this long is free: a SIGKILLed consumer's tables are taken over
within about ``LEASE_S + HEARTBEAT_S`` plus the feeds' resend."""
HEARTBEAT_S = 1.0
"""How often a consumer renews (and rebalances): a few beats fit in one lease, so a beat late
by a busy machine's second does not cost the lease."""
FORGET_CONSUMER_S = 3600
"""A consumer gone this long is deleted from ``floor_consumers`` (it counts for nothing once
its row expired; this only keeps the table small)."""
NEVER = "-infinity"
"""``expires`` of a table nobody holds: PostgreSQL's earliest timestamp."""

LEASE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS floor_leases (
        grp TEXT NOT NULL, table_id TEXT NOT NULL, consumer TEXT,
        expires TIMESTAMPTZ NOT NULL DEFAULT '-infinity', PRIMARY KEY (grp, table_id))""",
    """CREATE TABLE IF NOT EXISTS floor_consumers (
        grp TEXT NOT NULL, consumer TEXT NOT NULL, expires TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (grp, consumer))""",
)
"""``consumer`` is kept when a lease is released or expires (``expires`` is what says the
table is free): a claim of a table someone held knows records may be missing."""


@dataclass(frozen=True, slots=True)
class Change:
    """What one beat changed for this consumer."""

    held: frozenset[str]
    gained: frozenset[str]
    """Now held, not held before this beat: subscribe to their topics."""
    lost: frozenset[str]
    """Held before, not now (released for a joiner, or expired): unsubscribe."""
    taken_over: frozenset[str]
    """Claimed after another holder (or this one, its lease lapsed): records that holder
    received and did not commit are missing: ask the feeds to resend."""


def fair_share(tables: int, consumers: int) -> int:
    """The most tables one of ``consumers`` live consumers holds: every table has a holder
    (the shares add up to at least ``tables``) and none holds more than one above another."""
    return math.ceil(tables / max(consumers, 1))


def held_now(store: Store, group: str, consumer: str, tables: Iterable[str]) -> set[str]:
    """Those of ``tables`` whose lease ``consumer`` holds now, locked (``FOR SHARE``) until the
    open transaction ends: called in the apply's transaction, so no other consumer claims them
    meanwhile, and a lease that passed applies nothing."""
    names = sorted(set(tables))
    if not names:
        return set()
    return {str(table) for (table,) in store.query(
        "SELECT table_id FROM floor_leases WHERE grp = ? AND consumer = ? "
        "AND table_id = ANY(?::text[]) AND expires > clock_timestamp() "
        "ORDER BY table_id FOR SHARE", (group, consumer, names))}


def add_tables(store: Store, group: str, tables: Iterable[str]) -> None:
    """Give each of ``tables`` a lease row in ``group`` (free) if it has none."""
    names = sorted(set(tables))
    if names:
        with store.transaction() as cursor:
            cursor.execute("INSERT INTO floor_leases (grp, table_id) SELECT ?, t "
                           "FROM unnest(?::text[]) AS t ON CONFLICT DO NOTHING", (group, names))


class Leases:
    """This consumer's leases in ``group``, on its own connection to ``url`` (the heartbeat
    runs beside the apply, which has the other)."""

    def __init__(self, url: str, group: str, consumer: str, tables: Iterable[str]) -> None:
        self.group = group
        self.consumer = consumer
        self.store = Store(url, schema_also=LEASE_SCHEMA)
        self.held: frozenset[str] = frozenset()
        add_tables(self.store, group, tables)

    def beat(self) -> Change:
        """Say this consumer lives, renew its leases up to its fair share, release the rest,
        claim free ones up to the share: one transaction."""
        group, me = self.group, self.consumer
        with self.store.transaction() as cursor:
            cursor.execute("INSERT INTO floor_consumers (grp, consumer, expires) VALUES "
                           "(?, ?, clock_timestamp() + ? * interval '1 second') ON CONFLICT "
                           "(grp, consumer) DO UPDATE SET expires = excluded.expires",
                           (group, me, LEASE_S))
            cursor.execute("DELETE FROM floor_consumers WHERE grp = ? AND expires < "
                           "clock_timestamp() - ? * interval '1 second'",
                           (group, FORGET_CONSUMER_S))
            cursor.execute("SELECT (SELECT COUNT(*) FROM floor_consumers WHERE grp = ? AND "
                           "expires > clock_timestamp()), (SELECT COUNT(*) FROM floor_leases "
                           "WHERE grp = ?)", (group, group))
            ((live, tables),) = cursor.fetchall()
            share = fair_share(int(tables), int(live))
            cursor.execute("SELECT table_id FROM floor_leases WHERE grp = ? AND consumer = ? "
                           "AND expires > clock_timestamp() ORDER BY table_id FOR UPDATE",
                           (group, me))
            mine = [str(table) for (table,) in cursor.fetchall()]
            keep, release = mine[:share], mine[share:]
            self._set_expiry(cursor, keep, renew=True)
            self._set_expiry(cursor, release, renew=False)
            taken: list[tuple[str, str | None]] = []
            if len(keep) < share:
                cursor.execute("SELECT table_id, consumer FROM floor_leases WHERE grp = ? "
                               "AND expires <= clock_timestamp() ORDER BY table_id LIMIT ? "
                               "FOR UPDATE SKIP LOCKED", (group, share - len(keep)))
                taken = [(str(table), holder) for table, holder in cursor.fetchall()]
                if taken:
                    cursor.execute("UPDATE floor_leases SET consumer = ?, expires = "
                                   "clock_timestamp() + ? * interval '1 second' WHERE grp = ? "
                                   "AND table_id = ANY(?::text[])",
                                   (me, LEASE_S, group, [table for table, _ in taken]))
        held = frozenset(keep) | {table for table, _ in taken}
        change = Change(held, held - self.held, self.held - held,
                        frozenset(table for table, holder in taken if holder is not None))
        self.held = held
        return change

    def _set_expiry(self, cursor: Any, tables: list[str], *, renew: bool) -> None:
        if not tables:
            return
        expires = "clock_timestamp() + ? * interval '1 second'" if renew else f"'{NEVER}'"
        args = ((LEASE_S,) if renew else ()) + (self.group, tables)
        cursor.execute(f"UPDATE floor_leases SET expires = {expires} "
                       "WHERE grp = ? AND table_id = ANY(?::text[])", args)

    def run(self, stop: threading.Event, follow: Callable[[Change], None]) -> None:
        """The heartbeat thread: a beat every :data:`HEARTBEAT_S` until ``stop``, each change
        handed to ``follow`` (the consumer's broker subscriptions). A failed beat or follow
        (the database away) is logged once, with the count when beats work again; meanwhile
        the leases run out and the apply's check applies nothing, so nothing is lost by going
        on."""
        failures = 0
        while True:
            before = self.held
            try:
                follow(self.beat())
            except Exception as error:  # noqa: BLE001 (psycopg.Error and kin: never kill it)
                self.held = before  # the next beat's change names what was not followed
                failures += 1
                if failures == 1:
                    log.warning("floor lease heartbeat failed", error=str(error))
            else:
                if failures:
                    log.info("floor lease heartbeat back", failures=failures)
                    failures = 0
            if stop.wait(HEARTBEAT_S):
                return

    def release_all(self) -> None:
        """A consumer stopping cleanly frees its tables at once (the others claim them at their
        next beat instead of after the lease) and leaves the live count."""
        with self.store.transaction() as cursor:
            cursor.execute("UPDATE floor_leases SET expires = ? WHERE grp = ? AND consumer = ?",
                           (NEVER, self.group, self.consumer))
            cursor.execute("DELETE FROM floor_consumers WHERE grp = ? AND consumer = ?",
                           (self.group, self.consumer))
        self.held = frozenset()

    def close(self) -> None:
        self.store.close()
