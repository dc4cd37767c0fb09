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
"""

from __future__ import annotations

import base64
import binascii
import json
import queue
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
from controller.floor.chain import Head, Judged, Verdict, judge
from controller.floor.machines import Machines, create_schema
from controller.floor.store import Store
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
        self.client = make_client(config.broker, config.client_id)
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
        client.subscribe([(f"tablectl/{site}/+/events", 1), (f"tablectl/{site}/+/status", 1)])
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
        start(self.client, self.config.broker, persistent=True)

    def close(self) -> None:
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
        """Apply ``batch`` in one transaction, then acknowledge it to the broker."""
        with self.store.transaction():
            for message in batch:
                self.handle(message)
        for message in batch:
            if message.qos and message.generation == self.generation:
                self.client.ack(message.mid, message.qos)

    def handle(self, message: Message) -> None:
        if message.topic.endswith("/status"):
            self._status(message)
            return
        self._act(self._judge(message), message)
        self._drain_early(_table_of(message.topic))

    def _judge(self, message: Message) -> Judged:
        table = _table_of(message.topic)
        return judge(message.topic, message.payload, self.heads.get(table),
                     self.store.applied_hash, signature=message.signature,
                     key=self.keys.get(table))

    def _learn(self, site: str, table: str, seq: int) -> None:
        """``table`` has sent ``seq``: if the floor has not applied it, chase the table."""
        head = self.heads.get(table)
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
        from the first seq the floor lacks; forget the tables it has caught up with."""
        for table, chase in list(self.chases.items()):
            head = self.heads[table]
            if head.seq >= chase.known_seq:
                del self.chases[table]
                continue
            if head.seq != chase.head_seq:
                chase.head_seq, chase.moved_at, chase.wait_s = head.seq, now, RESEND_AFTER_S
                chase.unanswered = 0
                continue
            if now - chase.moved_at < chase.wait_s:
                continue
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
                self.machines.record(self.store, judged.record)
            self._tell(judged, message)
        elif judged.verdict is Verdict.DUPLICATE:
            assert judged.table is not None
            self.store.count_duplicate(judged.table)
            self._tell(judged, message)
        elif judged.verdict is Verdict.GAP:
            assert judged.table is not None and judged.seq is not None
            held = self.early.setdefault(judged.table, {})
            held[judged.seq] = (judged, message)
            if len(held) > EARLY_MAX:
                held.pop(min(held))
            head = self.heads[judged.table]
            self._learn(judged.site or "", judged.table, judged.seq)
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
        while held and table in self.heads:
            following = held.pop(self.heads[table].seq + 1, None)
            if following is None:
                for seq in [s for s in held if s <= self.heads[table].seq]:
                    held.pop(seq)
                return
            _, message = following
            self._act(self._judge(message), message)

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
