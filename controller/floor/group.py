"""One floor consumer's part in a group (``[floor] group``, PostgreSQL only): what it subscribes
to, how a batch's tables are taken in the apply's transaction, and, with ``assign = "lease"``,
the heartbeat that holds its tables and follows each change on the broker.

``assign = "shared"``: an MQTT 5 shared subscription (``$share/<group>/...``) hands each record
to one of the consumers, and each batch's transaction takes its tables' advisory locks (one
order for all, so no deadlock) before it reads their heads.

``assign = "lease"``: the group divides the tables instead of the records. Each table is leased
to one consumer in PostgreSQL (:mod:`controller.floor.leases`), which subscribes to that table's
topic alone and checks its lease in the apply's transaction (in place of the advisory locks). A
heartbeat thread, on its own connection, renews, rebalances and claims, and follows each change
on the broker (subscribe, unsubscribe, and a resend asked of a table taken over from another
holder). Kept apart from :mod:`controller.floor.consumer`, which applies the records either way.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import structlog

from controller.feed.config import Assign, FloorConfig
from controller.feed.mqtt import topic_resend
from controller.floor.leases import Change, Leases, add_tables, held_now
from controller.floor.store import GROUP_SCHEMA, Store

log = structlog.get_logger("tablectl.floor")

HEARTBEAT_JOIN_S = 30.0
"""A bound for the heartbeat thread to end at close (it ends at its next beat)."""


def events_topic(site: str, table: str) -> str:
    """The topic a table's feed publishes its records on."""
    return f"tablectl/{site}/{table}/events"


class GroupPart:
    """This consumer (``consumer_id``, unique per process) in its group: the group's tables in
    ``store``, and its leases when the group divides the tables."""

    def __init__(self, config: FloorConfig, store: Store, consumer_id: str) -> None:
        assert config.group is not None  # made only for a group
        self.group = config.group
        self.site = config.site
        self.store = store
        self.consumer_id = consumer_id
        store.create_tables(GROUP_SCHEMA)
        self.leases: Leases | None = None
        """``assign = "lease"``: this consumer's tables (the heartbeat thread changes them)."""
        self.lease_tables: set[str] = set(config.keys)
        """The tables given a lease row: every table with a key, and any whose status came."""
        self.heartbeat: threading.Thread | None = None
        if config.assign is Assign.LEASE:
            self.leases = Leases(config.database, self.group, consumer_id, self.lease_tables)

    def events_topics(self) -> list[tuple[str, int]]:
        """What to subscribe to for records: the group's shared subscription (each message to
        one of us), or only the leased tables' topics."""
        if self.leases is not None:
            return [(events_topic(self.site, table), 1) for table in sorted(self.leases.held)]
        return [(f"$share/{self.group}/tablectl/{self.site}/+/events", 1)]

    def start(self, stop: threading.Event, client: Any) -> None:
        """With leases: the heartbeat, until ``stop``, following each change on ``client``."""
        if self.leases is None:
            return
        self.heartbeat = threading.Thread(
            target=self.leases.run, args=(stop, lambda change: self.follow(client, change)),
            name="floor-lease-heartbeat", daemon=True)
        self.heartbeat.start()

    def close(self) -> None:
        """After ``stop`` was set: the heartbeat ended, the leases released (the others claim
        them at their next beat) and their connection closed."""
        if self.heartbeat is not None:
            self.heartbeat.join(timeout=HEARTBEAT_JOIN_S)
        if self.leases is not None:
            try:
                self.leases.release_all()
            except Exception as error:  # noqa: BLE001 (they expire anyway: said, not raised)
                log.warning("floor leases not released (they expire)", error=str(error))
            self.leases.close()

    def follow(self, client: Any, change: Change) -> None:
        """Subscribe to the tables gained, unsubscribe from those lost; for a table taken over
        from another holder, ask its feed at once to resend from the first seq the database
        lacks (what that holder received and did not commit)."""
        assert self.leases is not None
        site = self.site
        if change.lost:
            client.unsubscribe([events_topic(site, t) for t in sorted(change.lost)])
        if change.gained:
            client.subscribe([(events_topic(site, t), 1) for t in sorted(change.gained)])
        if change.taken_over and site != "+":  # "+": the chase asks, once it sees the gap
            heads = self.leases.store.heads_of(change.taken_over)
            for table in sorted(change.taken_over):
                head = heads.get(table)
                client.publish(topic_resend(site, table), json.dumps(
                    {"from": (head.seq if head else 0) + 1}).encode(), qos=1)
        if change.gained or change.lost:
            log.info("floor leases changed", held=len(change.held), gained=sorted(change.gained),
                     lost=sorted(change.lost), taken_over=sorted(change.taken_over))

    def take(self, tables: set[str]) -> set[str] | None:
        """In the apply's transaction, before the heads are read: the tables this consumer
        holds (the lease, checked here), or None when it may apply all of them (their advisory
        locks taken)."""
        if self.leases is not None:
            return held_now(self.store, self.group, self.consumer_id, tables)
        self.store.lock_tables(tables)
        return None

    def holds(self, table: str) -> bool:
        """Whether this consumer asks for ``table``'s missing records: always, unless the
        group divides the tables and another holds it (its holder asks)."""
        return self.leases is None or table in self.leases.held

    def saw_status(self, table: str) -> None:
        """A table's status came: with leases, a table not in ``[floor.keys]`` gets its row."""
        if self.leases is not None and table not in self.lease_tables:
            add_tables(self.store, self.group, [table])
            self.lease_tables.add(table)
