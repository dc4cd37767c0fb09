"""The floor consumer: every table's events from the broker into the floor view, each once.

paho's thread only puts messages on a bounded queue (when it is full paho waits, so TCP pushes
back on the broker instead of the floor growing without bound); this thread judges each one
(:mod:`controller.floor.chain`) and applies it (:mod:`controller.floor.store`), up to
:data:`BATCH_MAX` in one transaction. A message is acknowledged to the broker (PUBACK, paho's
manual acks) only after its transaction committed: a floor killed with messages in its queue
gets them again from its persistent session, and the database drops what it already has.
Records that arrive early (a gap) wait in a bounded per-table buffer until the missing ones
come; every report names the table and the seq and is logged and kept in ``problems``.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from controller.feed.config import FloorConfig
from controller.feed.mqtt import make_client, start, stop_on_signals
from controller.feed.mqtt import stop as stop_client
from controller.floor.chain import Head, Judged, Verdict, judge
from controller.floor.machines import Machines, create_schema
from controller.floor.store import Store

log = structlog.get_logger("tablectl.floor")

QUEUE_MAX = 10_000
BATCH_MAX = 500
"""Messages applied in one transaction when they are waiting: one commit, not 500."""
EARLY_MAX = 10_000
"""Records held per table while a gap is open; past this the oldest early one is dropped (the
feed resends from its cursor after a restart, so nothing is lost for good)."""


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
        sent = None
        properties = getattr(message, "properties", None)
        for name, value in getattr(properties, "UserProperty", None) or []:
            if name == "sent_ns" and value.isdigit():
                sent = int(value)
        self.inbox.put(Message(message.topic, bytes(message.payload), sent, time.time_ns(),
                               message.mid, message.qos, self.generation))

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
                    continue
                while len(batch) < BATCH_MAX:
                    try:
                        batch.append(self.inbox.get_nowait())
                    except queue.Empty:
                        break
                self.handle_batch(batch)
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
        return judge(message.topic, message.payload, self.heads.get(_table_of(message.topic)),
                     self.store.applied_hash)

    def _status(self, message: Message) -> None:
        table = _table_of(message.topic)
        try:
            body = json.loads(message.payload)
            online = body["online"]
            if body["table"] != table or not isinstance(online, bool):
                raise ValueError("status of another table, or no online flag")
        except (ValueError, KeyError, TypeError):
            self._report(Judged(Verdict.MALFORMED, table, None,
                                f"unreadable status on {message.topic}"), message)
            return
        self.store.set_status(table, online, message.payload.decode())

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
