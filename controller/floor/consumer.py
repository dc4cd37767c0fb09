"""The floor consumer: every table's events from the broker into the floor view, each once.

paho's thread only puts messages on a bounded queue (when it is full paho waits, so TCP pushes
back on the broker instead of the floor growing without bound); this thread judges each one
(:mod:`controller.floor.chain`) and applies it (:mod:`controller.floor.store`), up to
:data:`BATCH_MAX` in one transaction. A message is acknowledged to the broker (PUBACK, paho's
manual acks) only after its transaction committed: a floor killed with messages in its queue
gets them again from its persistent session, and the database drops what it already has.
Records that arrive early (a gap) wait in a bounded per-table buffer until the missing ones
come; every report names the table and the seq and is logged and kept in ``problems``.

The broker's PUBACK to a feed is not the floor's receipt: a broker killed before it delivered
what it acknowledged loses it. So the floor chases every table it knows to be ahead of what it
applied -- a gap, or a retained status naming a later seq -- and, when that table's records have
not moved for :data:`RESEND_AFTER_S`, asks its feed on ``.../resend`` to send again from the
first seq it lacks, asking again with a doubling, jittered pause (up to :data:`RESEND_MAX_S`,
:mod:`drivers.backoff`) until it has caught up. A table it is behind on is not shown online
(``controller.floor.view``).

Several consumers on one site (``[floor] group``, PostgreSQL only; what is particular to a
group's consumer, its subscription, locks and leases, is :mod:`controller.floor.group`): the
broker hands each record to one of them, and the database keeps the order, not a coordinator of
ours. A batch's records are checked (hash, signature) first, outside any lock; then its
transaction takes its tables (their advisory locks, or their leases), reads their heads from the
database and places each record in its chain.
A record whose predecessor another consumer has not applied yet waits in the database
(``pending``, written under the table's lock), and whichever consumer applies the predecessor
applies it next, in the same transaction: the chain never waits for a turn of the other
consumer. One whose predecessor died with a SIGKILLed consumer is asked for from the feed like
any gap. A group's consumers keep no broker session, so a dead one's share is not queued for
it.

With ``[floor] assign = "lease"`` the group divides the tables instead of the records. A record
of a table this consumer no longer holds is acknowledged and not applied: its new holder asks
for it again.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from controller import strictjson
from controller.feed.config import FloorConfig
from controller.feed.keys import SIGNATURE_PROPERTY
from controller.feed.mqtt import make_client, start, stop_on_signals, topic_resend
from controller.feed.mqtt import stop as stop_client
from controller.floor.authenticity import public_keys
from controller.floor.chain import Head, Judged, Verdict, examine, place
from controller.floor.group import GroupPart, events_topic
from controller.floor.leases import Leases
from controller.floor.machines import Machines, create_schema
from controller.floor.store import Store
from controller.journal.damage import check_line
from controller.journal.record import GENESIS_HASH, Record
from drivers.backoff import ExponentialBackoff

log = structlog.get_logger("tablectl.floor")

QUEUE_MAX = 10_000
BATCH_MAX = 500
"""Messages applied in one transaction when they are waiting: one commit, not 500."""
EARLY_MAX = 10_000
"""Records held per table while a gap is open; past this the oldest early one is dropped (the
floor asks for it again, so nothing is lost for good)."""
RESEND_AFTER_S = 3.0
"""A table known to be ahead whose records have not moved for this long is asked to resend.
Long enough that a floor merely working through a backlog (its records move) never asks."""
RESEND_MAX_S = 60.0
"""The pause between asks doubles up to this, while the table stays behind (its feed away,
its journal no longer holding what is missing)."""
DRAIN_READ = 256
"""Records read from ``pending`` at a time while they follow on from the head."""
GROUP_START = Head(0, GENESIS_HASH)
"""In a group, a table the database has never seen starts before its seq 1: a record of it
past seq 1 may have a predecessor still in another consumer's hands, so it waits (and is
asked for) instead of being taken for the table's first."""


@dataclass(frozen=True, slots=True)
class Message:
    topic: str
    payload: bytes
    sent_ns: int | None
    received_ns: int
    mid: int = 0
    qos: int = 0
    generation: int = 0
    """Which connection delivered it: a PUBACK goes only to the connection that sent it."""
    signature: bytes | None = None
    """The table's signature that came with it (MQTT 5 user property ``sig``)."""


@dataclass(slots=True)
class Chase:
    """A table the floor knows to be ahead of what it applied: what it knows, when its records
    last moved, and what it asked for."""

    site: str
    known_seq: int
    head_seq: int
    moved_at: float
    wait_s: float = RESEND_AFTER_S
    asks: int = 0
    asked_from: int | None = None
    unanswered: int = 0
    """Asks since its records last moved: the pause grows with these, not with ``asks``."""


class Floor:
    def __init__(self, config: FloorConfig, *,
                 on_judged: Callable[[Judged, Message], None] | None = None) -> None:
        self.config = config
        self.store = Store(config.database)
        create_schema(self.store)
        self.machines = Machines()
        """Each shuffler's evidence pooled by serial across tables (issue 25)."""
        self.heads: dict[str, Head] = self.store.heads()
        self.early: dict[str, dict[int, tuple[Judged, Message]]] = {}
        self.reported_gaps: set[tuple[str, int]] = set()
        self.keys = public_keys(config.keys)
        self.chases: dict[str, Chase] = {}
        self.resend_backoff = ExponentialBackoff(RESEND_AFTER_S, RESEND_MAX_S)
        """The pause between asks to one table (``drivers.backoff``, equal jitter)."""
        self.inbox: queue.Queue[Message] = queue.Queue(maxsize=QUEUE_MAX)
        self.on_judged = on_judged
        self.stop = threading.Event()
        self.connected = threading.Event()
        self.generation = 0
        self.group = config.group
        """Several consumers share this site's records (``[floor] group``, PostgreSQL): the
        database, not this process, knows each table's head; each batch takes its tables'
        locks and reads their heads again."""
        self.pool_machines = self.group is None
        if not self.pool_machines:
            log.warning("floor in group: the shuffler pool by serial is off (each consumer "
                        "sees only a share of every table's records); the tables' own "
                        "monitors run as before", group=self.group)
        # a group's consumer keeps no session (below), so its client id need not be stable:
        # made unique, two consumers started from one config never take each other's place
        client_id = config.client_id if self.group is None else \
            f"{config.client_id}-{socket.gethostname()}-{os.getpid()}"
        self.consumer_id = client_id
        self.part: GroupPart | None = None if self.group is None else \
            GroupPart(config, self.store, client_id)
        """This consumer's part in its group: subscription, locks or leases."""
        self.leases: Leases | None = None if self.part is None else self.part.leases
        """``assign = "lease"``: this consumer's tables (the heartbeat thread changes them)."""
        self.not_leased = 0
        """Records received for a table this consumer no longer held: its holder has them."""
        self.client = make_client(config.broker, client_id)
        self.client.manual_ack_set(True)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:
        if reason.is_failure:
            log.warning("broker refused the floor", reason=str(reason))
            return
        self.generation += 1
        site = self.config.site
        topics = [(f"tablectl/{site}/+/events", 1)] if self.part is None \
            else self.part.events_topics()
        # every consumer takes every status (retained ones reach no shared subscription):
        # each learns at connect how far every table has sent
        client.subscribe([*topics, (f"tablectl/{site}/+/status", 1)])
        self.connected.set()
        log.info("floor subscribed", site=site)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        sent = signature = None
        properties = getattr(message, "properties", None)
        for name, value in getattr(properties, "UserProperty", None) or []:
            if name == "sent_ns" and value.isdigit():
                sent = int(value)
            elif name == SIGNATURE_PROPERTY:
                try:
                    signature = base64.b64decode(value, validate=True)
                except (binascii.Error, ValueError):
                    signature = None  # judged as not signed
        self.inbox.put(Message(message.topic, bytes(message.payload), sent, time.time_ns(),
                               message.mid, message.qos, self.generation, signature))

    def start(self) -> None:
        # a group's consumer keeps no session: a dead one's share must not queue up in a session
        # nobody reads (the broker's next message goes to a live consumer; what the dead one
        # held is asked for again)
        start(self.client, self.config.broker, persistent=self.group is None)
        if self.part is not None:
            self.part.start(self.stop, self.client)

    def close(self) -> None:
        self.stop.set()
        if self.part is not None:
            self.part.close()
        stop_client(self.client)
        self.store.close()

    def run(self) -> None:
        self.start()
        try:
            while not self.stop.is_set():
                try:
                    batch = [self.inbox.get(timeout=0.2)]
                except queue.Empty:
                    self.chase(time.monotonic())
                    continue
                while len(batch) < BATCH_MAX:
                    try:
                        batch.append(self.inbox.get_nowait())
                    except queue.Empty:
                        break
                self.handle_batch(batch)
                self.chase(time.monotonic())
        finally:
            self.close()

    def handle_batch(self, batch: list[Message]) -> None:
        """Apply ``batch`` in one transaction, then acknowledge it to the broker. In a group the
        records are checked (hash, signature) before the transaction, side by side with the
        other consumers; inside it, the batch's tables are locked and their heads read from
        the database, and after the batch's own records, those waiting in ``pending`` for the
        ones it applied follow them. A group's statuses go first, each in its own
        transaction: every consumer gets every status, and two batches holding several
        statuses' rows, taken in different orders, would deadlock."""
        acks = batch
        if self.group is not None:
            for message in batch:
                if message.topic.endswith("/status"):
                    self._status(message)
            batch = [m for m in batch if not m.topic.endswith("/status")]
        examined = [None if m.topic.endswith("/status") else self._examine(m) for m in batch]
        with self.store.transaction():
            held: set[str] | None = None
            if self.part is not None:
                tables = {_table_of(m.topic) for m in batch}
                held = self.part.take(tables)  # a lease is checked in the apply's transaction
                self.heads.update(self.store.heads_of(tables))
                before = {table: self.heads.get(table) for table in tables}
            for message, judged in zip(batch, examined, strict=True):
                if held is not None and judged is not None \
                        and _table_of(message.topic) not in held:
                    self.not_leased += 1  # its lease passed: the new holder asks for it
                    continue
                self.handle(message, judged)
            if self.part is not None:
                for table in sorted(tables):
                    if self.heads.get(table) != before[table]:
                        self._drain_pending(table)
        for message in acks:
            if message.qos and message.generation == self.generation:
                self.client.ack(message.mid, message.qos)

    def handle(self, message: Message, examined: Judged | None = None) -> None:
        if message.topic.endswith("/status"):
            self._status(message)
            return
        self._act(self._place(examined or self._examine(message)), message)
        if self.group is None:
            self._drain_early(_table_of(message.topic))

    def _examine(self, message: Message) -> Judged:
        return examine(message.topic, message.payload, signature=message.signature,
                       key=self.keys.get(_table_of(message.topic)))

    def _place(self, examined: Judged) -> Judged:
        if examined.verdict is not Verdict.APPLY and examined.verdict is not Verdict.GAP:
            return examined  # not a sound record of its table: reported as it is
        assert examined.table is not None
        return place(examined, self._head(examined.table), self.store.applied_hash)

    def _head(self, table: str) -> Head | None:
        head = self.heads.get(table)
        return GROUP_START if head is None and self.group is not None else head

    def _learn(self, site: str, table: str, seq: int) -> None:
        """``table`` has sent ``seq``: if the floor has not applied it, chase the table."""
        head = self._head(table)
        if head is None or seq <= head.seq:
            return  # nothing to chase, or a table never seen (applied from its first record)
        chase = self.chases.get(table)
        if chase is None:
            self.chases[table] = chase = Chase(site, seq, head.seq, time.monotonic())
        elif seq <= chase.known_seq:
            return
        chase.known_seq = seq
        self.store.note_behind(table, seq, chase.asked_from, chase.asks)

    def chase(self, now: float) -> None:
        """Ask each table the floor is behind on, whose records stopped moving, to send again
        from the first seq the floor lacks; forget the tables it has caught up with. In a group
        the heads are read again first: another consumer may have applied what was missing."""
        if self.group is not None and self.chases:
            self.heads.update(self.store.heads_of(self.chases))
        for table, chase in list(self.chases.items()):
            head = self._head(table)
            assert head is not None  # a chase begins only for a table with a head
            if head.seq >= chase.known_seq:
                del self.chases[table]
                continue
            if self.part is not None and not self.part.holds(table):
                # its holder asks; should this consumer take it over, it asks at the take-over
                # (``GroupPart.follow``), and the pause starts then, not from a time before
                chase.moved_at = now
                continue
            if head.seq != chase.head_seq:
                chase.head_seq, chase.moved_at, chase.wait_s = head.seq, now, RESEND_AFTER_S
                chase.unanswered = 0
                continue
            if now < chase.moved_at + chase.wait_s:  # the deadline, as it was set: no
                continue  # rounding of a difference of two large clock readings
            chase.asks += 1
            chase.unanswered += 1
            chase.asked_from = head.seq + 1
            # asked n times since the records moved: RESEND_AFTER_S * 2 ** n, at most
            # RESEND_MAX_S, jittered (never below RESEND_AFTER_S), so the tables a broker
            # restart left behind together are not all asked again in the same instant
            chase.moved_at = now
            chase.wait_s = self.resend_backoff.delay(chase.unanswered + 1)
            log.warning("floor asks a table to resend", table=table, from_seq=head.seq + 1,
                        known_seq=chase.known_seq, asks=chase.asks)
            self.client.publish(topic_resend(chase.site, table),
                                json.dumps({"from": head.seq + 1}).encode(), qos=1)
            self.store.note_behind(table, chase.known_seq, chase.asked_from, chase.asks)

    def _status(self, message: Message) -> None:
        table = _table_of(message.topic)
        try:
            body = strictjson.loads(message.payload)  # a key given twice: refused by name
            online = body["online"]
            if body["table"] != table or not isinstance(online, bool):
                raise ValueError("status of another table, or no online flag")
        except (ValueError, KeyError, TypeError) as error:  # StrictJsonError is a ValueError
            problem = f"no {error}" if isinstance(error, KeyError) else str(error)
            self._report(Judged(Verdict.MALFORMED, table, None,
                                f"unreadable status on {message.topic}: {problem}"), message)
            return
        self.store.set_status(table, online, message.payload.decode())
        if self.part is not None:
            self.part.saw_status(table)
        seq = body.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            self._learn(message.topic.split("/")[1], table, seq)

    def _act(self, judged: Judged, message: Message) -> None:
        if judged.verdict is Verdict.APPLY:
            assert judged.record is not None and judged.table is not None
            if judged.table not in self.heads and judged.record.seq != 1:
                self._report(Judged(Verdict.GAP, judged.table, judged.record.seq,
                                    f"first record of this table seen at seq "
                                    f"{judged.record.seq}: the floor never saw the ones "
                                    "before (applying from here)"), message)
            if self.store.apply(judged.site or "", judged.record, message.sent_ns):
                self.heads[judged.table] = Head(judged.record.seq, judged.record.hash)
                if self.pool_machines:
                    self.machines.record(self.store, judged.record)
            self._tell(judged, message)
        elif judged.verdict is Verdict.DUPLICATE:
            assert judged.table is not None
            self.store.count_duplicate(judged.table)
            self._tell(judged, message)
        elif judged.verdict is Verdict.GAP:
            assert judged.table is not None and judged.seq is not None
            head = self._head(judged.table)
            assert head is not None
            self._learn(judged.site or "", judged.table, judged.seq)
            if self.group is not None:
                # in a group the predecessor is most often in another consumer's hands: the
                # record waits in the database for whichever consumer applies it (not a
                # problem unless it stays missing, when the chase asks for it and logs it)
                if judged.seq - head.seq <= EARLY_MAX and judged.record is not None:
                    self.store.hold(judged.site or "", judged.record.seq, judged.table,
                                    message.payload, message.sent_ns)
                self._tell(judged, message)
                return
            held = self.early.setdefault(judged.table, {})
            held[judged.seq] = (judged, message)
            if len(held) > EARLY_MAX:
                held.pop(min(held))
            if (judged.table, head.seq) not in self.reported_gaps:
                self.reported_gaps.add((judged.table, head.seq))
                self._report(judged, message)
            else:
                self._tell(judged, message)
        else:
            self._report(judged, message)

    def _drain_early(self, table: str) -> None:
        """Apply the records that waited for a gap to close, in order (a loop, not recursion:
        up to :data:`EARLY_MAX` of them)."""
        held = self.early.get(table)
        while held and (head := self._head(table)) is not None:
            following = held.pop(head.seq + 1, None)
            if following is None:
                for seq in [s for s in held if s <= head.seq]:
                    held.pop(seq)
                return
            judged, message = following
            self._act(self._place(judged), message)

    def _drain_pending(self, table: str) -> None:
        """In a group, under ``table``'s lock: apply the records other consumers (or this one)
        left waiting in the database for the ones now applied, in order, and forget those the
        head has passed. They were checked (hash, signature) by the consumer that received
        them; the hash is checked again here in parsing, the chain by :func:`place`. Read
        :data:`DRAIN_READ` at a time, from the head on, while they follow on."""
        head = self._head(table)
        assert head is not None  # in a group every table has one (GROUP_START)
        while True:
            rows = self.store.held(table, head.seq, DRAIN_READ)
            for seq, site, payload, sent_ns in rows:
                if seq != head.seq + 1:
                    break
                message = Message(events_topic(site, table), payload, sent_ns, 0)
                found = check_line(payload, None)
                if not isinstance(found, Record):
                    self._report(Judged(Verdict.ALTERED, table, seq, found.detail, site=site),
                                 message)
                    break
                self._act(place(Judged(Verdict.APPLY, table, seq, "", found, site), head,
                                self.store.applied_hash), message)
                moved = self._head(table)
                if moved is None or moved == head:
                    break  # not applied (reported): the chain goes on when its next comes
                head = moved
            else:
                if len(rows) == DRAIN_READ:
                    continue  # all followed on: read the next ones
            break
        self.store.release_held(table, head.seq)  # also any the head passed without them

    def _report(self, judged: Judged, message: Message) -> None:
        log.warning("floor message not applied", verdict=judged.verdict.value,
                    table=judged.table, seq=judged.seq, detail=judged.detail,
                    topic=message.topic)
        self.store.report(judged.table, judged.seq, judged.verdict.value, judged.detail)
        self._tell(judged, message)

    def _tell(self, judged: Judged, message: Message) -> None:
        if self.on_judged is not None:
            self.on_judged(judged, message)


def _table_of(topic: str) -> str:
    parts = topic.split("/")
    return parts[2] if len(parts) > 2 else ""


def run_floor(config: FloorConfig) -> int:
    floor = Floor(config)
    stop_on_signals(floor.stop)
    floor.run()
    return 0
