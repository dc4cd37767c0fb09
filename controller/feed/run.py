"""The feed process: journal -> hold rule -> sign -> MQTT 5 QoS 1 -> PUBACK -> cursor.

One thread (this one) owns the cursor, the pending records and what is in flight; paho's loop
thread only hands it PUBACKs and connection changes through a queue. At most ``window``
records are in flight; the cursor moves to the highest record below which every record was
acknowledged. paho resends what was in flight after a reconnect (the floor drops the duplicates
by table and seq). A record not acknowledged within :data:`ACK_TIMEOUT_S` of a live connection,
or refused by the broker (ACL), ends the process with an error: systemd starts it again from the
cursor, which is the one recovery path that always works.

A PUBACK is the broker's receipt, not the floor's: a broker that dies before it delivered what
it acknowledged loses it. The floor then asks on ``.../resend`` for the records from the seq it
lacks, and the feed reads them again from the journal (the outbox) and sends them, moving its
cursor back to just before them (:meth:`Feed.rewind`). Every record goes with an Ed25519
signature of this table's key (:mod:`controller.feed.keys`), and every
:data:`STATUS_EVERY_S` the retained status repeats the last seq sent, so a floor that lost the
end of a stream learns that it is behind.
"""

from __future__ import annotations

import base64
import queue
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Any

from controller import strictjson
from controller.feed.config import FeedConfig
from controller.feed.cursor import Cursor, load_cursor, save_cursor
from controller.feed.errors import BrokerError, CursorError
from controller.feed.keys import SIGNATURE_PROPERTY, read_private_seed, signed_bytes
from controller.feed.signer import Signer
from controller.service.visibility import Horizon
from controller.feed.log import log
from controller.feed.lookahead import RoundEndSearch
from controller.feed.mqtt import (
    make_client,
    start,
    stop_on_signals,
    topic_events,
    topic_resend,
    topic_status,
    user_properties,
)
from controller.feed.mqtt import stop as stop_client
from controller.feed.status import TableStatus
from controller.feed.tail import JournalTail
from controller.journal.record import Record

POLL_S = 0.05
"""How often the journal is looked at when there is nothing new: the floor's latency floor."""
PENDING_MAX = 512
"""Records read ahead of the broker at most (some 0.9 MB parsed): several rounds, so the hold
rule usually sees the reveal among them; when it does not, the feed looks on in the journal
for the round's end without keeping what it reads (controller.feed.lookahead)."""
READ_AHEAD = 64
"""Records read ahead while some of them may go: catching up after an outage reads in steps
of this, so the feed's memory stays small (docs/feed.md, memory); it reads on towards
:data:`PENDING_MAX` only while the first record waits for a reveal further on."""
ACK_TIMEOUT_S = 60.0
DROPS_WITHOUT_ACK = 5
"""Connections in a row that the broker closed with our records unacknowledged: Mosquitto
closes an MQTT 5 connection that publishes where its ACL forbids, so this is a refusal, not an
outage, and retrying for ever would hide it."""
CURSOR_EVERY_S = 0.2
STATUS_EVERY_S = 10.0
"""The retained status (with the last seq sent) is published again at least this often: the
floor's only way to learn that records at the end of a stream went missing (a broker killed
after its PUBACK), since no later record shows the gap."""


class Link(str, Enum):
    UP = "up"
    DOWN = "down"


@dataclass(frozen=True, slots=True)
class _Ack:
    mid: int
    refused: str | None


@dataclass(frozen=True, slots=True)
class _Sent:
    """What the feed keeps of a published record until its PUBACK: enough to move the cursor.
    The record itself (some 1.7 kB parsed) is let go; paho holds the bytes for a resend."""

    seq: int
    hash: str


@dataclass(frozen=True, slots=True)
class _LinkChange:
    link: Link
    reason: str


@dataclass(frozen=True, slots=True)
class _Resend:
    """The floor's request: send again from ``from_seq`` (it lacks that record)."""

    from_seq: int


@dataclass(frozen=True, slots=True)
class _Refused:
    """The broker refused our subscription to the resend topic (the ACL)."""

    detail: str


class Feed:
    def __init__(self, config: FeedConfig) -> None:
        self.config = config
        self.cursor = load_cursor(config.state_dir, config.table_id)
        self.tail = JournalTail(config.journal_dir, self.cursor.seq)
        self.horizon = Horizon()
        self.status = TableStatus(config.site, config.table_id)
        self.pending: deque[Record] = deque()
        self.in_flight: dict[int, _Sent] = {}
        self.sent: deque[_Sent] = deque()
        self.acked: set[int] = set()
        self.events: queue.Queue[_Ack | _LinkChange | _Resend | _Refused] = queue.Queue()
        self.link = Link.DOWN
        self.link_since = self.last_ack = time.monotonic()
        self.drops = 0
        self.stop = threading.Event()
        self._cursor_saved = time.monotonic()
        self._cursor_dirty = False
        self._checked_cursor = self.cursor.seq == 0
        self._may_go = 0
        """Records at the head of ``pending`` the hold rule released when last asked and not
        sent yet: a lower bound (records read since can only add), so the read-ahead is judged
        again only when it is full or none of it may go, not every turn."""
        self._search: RoundEndSearch | None = None
        """Looking past a full read-ahead for the end of the round holding it."""
        self._status_at = 0.0
        self.resends = 0
        """Times the feed went back in its journal at the floor's request."""
        self.signer = Signer(read_private_seed(config.signing_key))
        self.topic = topic_events(config.site, config.table_id)
        self.resend_topic = topic_resend(config.site, config.table_id)
        self.client = make_client(config.broker, f"tablectl-feed-{config.site}-{config.table_id}")
        self.client.will_set(topic_status(config.site, config.table_id),
                             self.status.payload(online=False), qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe

    # paho's thread: hand over, nothing else
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:
        if reason.is_failure:
            self.events.put(_LinkChange(Link.DOWN, f"broker refused the connection: {reason}"))
        else:
            client.subscribe(self.resend_topic, qos=1)  # each time: a clean session
            self.events.put(_LinkChange(Link.UP, "connected"))

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, reasons: Any,
                      properties: Any) -> None:
        for reason in reasons:
            if reason.is_failure:
                self.events.put(_Refused(str(reason)))

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        try:
            request = strictjson.loads(message.payload)  # a key given twice: refused by name
            from_seq = request["from"]
            if isinstance(from_seq, bool) or not isinstance(from_seq, int) or from_seq < 1:
                raise ValueError("'from' is not a seq")
        except (ValueError, KeyError, TypeError) as error:  # StrictJsonError is a ValueError
            self.events.put(_Refused(f"unreadable resend request on {message.topic}: {error}"))
            return
        self.events.put(_Resend(from_seq))

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                       properties: Any) -> None:
        self.events.put(_LinkChange(Link.DOWN, str(reason)))

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any,
                    properties: Any) -> None:
        self.events.put(_Ack(mid, str(reason) if reason.is_failure else None))

    # the feed's thread
    def run(self) -> None:
        self.open()
        try:
            while not self.stop.is_set():
                self.step()
        finally:
            self.close()

    def open(self) -> None:
        log.info("feed starting", table=self.config.table_id, site=self.config.site,
                 after_seq=self.cursor.seq, signing=self.signer.backend,
                 broker=f"{self.config.broker.host}:{self.config.broker.port}")
        start(self.client, self.config.broker)

    def close(self) -> None:
        """Save the cursor, mark the table offline (what the Last Will says after a crash)."""
        self._save_cursor(force=True)
        if self.link is Link.UP:
            info = self.client.publish(topic_status(self.config.site, self.config.table_id),
                                       self.status.payload(online=False), qos=1, retain=True)
            try:
                info.wait_for_publish(timeout=2.0)
            except (RuntimeError, ValueError):
                pass  # the link went meanwhile: the broker publishes the Will instead
        stop_client(self.client)

    @property
    def idle(self) -> bool:
        """Nothing in flight, and nothing read that may go now (empty, or held for a reveal)."""
        return not self.in_flight and self.link is Link.UP and (
            not self.pending or self.horizon.releasable(list(self.pending)) == 0)

    def step(self) -> None:
        """One turn: read the journal, send what may go, take PUBACKs, move the cursor."""
        self._read()
        self._send()
        try:
            event = self.events.get(timeout=POLL_S)
        except queue.Empty:
            event = None
        while event is not None:
            self._handle(event)
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                event = None
        self._advance()
        self._check_stuck()
        if self.link is Link.UP and time.monotonic() - self._status_at >= STATUS_EVERY_S:
            self._publish_status()

    def _publish_status(self) -> None:
        self._status_at = time.monotonic()
        self.client.publish(topic_status(self.config.site, self.config.table_id),
                            self.status.payload(online=True), qos=1, retain=True)

    def _read(self) -> None:
        if len(self.pending) >= READ_AHEAD and not self._may_go:
            self._may_go = self.horizon.releasable(list(self.pending))
        room = PENDING_MAX - len(self.pending)
        if room <= 0:
            self._look_past_the_read_ahead()
            return
        self._search = None
        if len(self.pending) >= READ_AHEAD and self._may_go:
            return  # enough to send; read more once these have gone
        records = self.tail.read(min(room, READ_AHEAD))
        if not self._checked_cursor and records:
            self._check_cursor(records[0])
        self.pending.extend(records)

    def _look_past_the_read_ahead(self) -> None:
        """The read-ahead is full: normal while the broker is away (some of it may go), but if
        not one record may go, its first record shows a face-down card of a round with more
        than PENDING_MAX records after it so far. The feed says so, once, and looks on in the
        journal (a batch a turn, keeping nothing) for that round's end; once it is written,
        the held records go (controller.feed.lookahead)."""
        if self._may_go:
            return
        head = self.pending[0]
        assert head.round_id is not None  # a record without a round always may go
        if self._search is None or self._search.round_id != head.round_id:
            log.warning("feed held: the read-ahead is full and its first record waits for a "
                        "reveal; looking further on in the journal for the round's end",
                        seq=head.seq, round=head.round_id, records=len(self.pending))
            self._search = RoundEndSearch(self.config.journal_dir, head.round_id,
                                          self.pending[-1].seq)
        if self._search.found():
            log.info("feed released: the round's end is in the journal", round=head.round_id,
                     looked_past=self._search.looked_at)
            self.horizon.mark_ended(head.round_id)
            self._search = None

    def _check_cursor(self, first: Record) -> None:
        """The record after the cursor must link to the cursor's hash: otherwise this is not the
        journal the cursor was written for (restored from another table, rewritten)."""
        self._checked_cursor = True
        if first.seq == self.cursor.seq + 1 and self.cursor.hash is not None \
                and first.prev_hash != self.cursor.hash:
            raise CursorError(f"journal record {first.seq} does not follow the cursor's record "
                              f"{self.cursor.seq} (hash {self.cursor.hash[:12]}...)")

    def _send(self) -> None:
        if self.link is not Link.UP or not self.pending:
            return
        room = self.config.window - len(self.in_flight)
        if room <= 0:
            return
        ready = self.horizon.releasable(list(self.pending))
        self._may_go = ready - min(room, ready)
        for _ in range(min(room, ready)):
            record = self.pending.popleft()
            signature = self.signer.sign(signed_bytes(self.config.site, self.config.table_id,
                                                      record.seq, record.hash))
            properties = user_properties({"seq": str(record.seq), "hash": record.hash,
                                          "sent_ns": str(time.time_ns()),
                                          SIGNATURE_PROPERTY: base64.b64encode(signature)
                                          .decode()})
            info = self.client.publish(self.topic, record.line().encode(), qos=1,
                                       properties=properties)
            sent = _Sent(record.seq, record.hash)
            self.in_flight[info.mid] = sent
            self.sent.append(sent)
            if record.seq > self.status.seq and self.status.note(record):
                self._publish_status()
            self.status.seq = max(self.status.seq, record.seq)

    def _handle(self, event: _Ack | _LinkChange | _Resend | _Refused) -> None:
        if isinstance(event, _Resend):
            self.rewind(event.from_seq)
            return
        if isinstance(event, _Refused):
            log.warning("resend requests unusable", problem=event.detail,
                        topic=self.resend_topic)
            return
        if isinstance(event, _LinkChange):
            if event.link is not self.link:
                log.info("broker link", link=event.link.value, reason=event.reason,
                         in_flight=len(self.in_flight))
            if event.link is Link.DOWN and self.link is Link.UP and self.in_flight:
                self.drops += 1
                if self.drops >= DROPS_WITHOUT_ACK:
                    raise BrokerError(
                        f"the broker closed the connection {self.drops} times in a row before "
                        f"acknowledging record {self.sent[0].seq} ({event.reason}): is this "
                        f"table's identity allowed to publish on {self.topic}? (broker ACL)")
            self.link, self.link_since = event.link, time.monotonic()
            if event.link is Link.UP:
                self._publish_status()
            return
        sent = self.in_flight.pop(event.mid, None)
        if sent is None:
            return  # a status message's PUBACK
        if event.refused is not None:
            raise BrokerError(f"the broker refused record {sent.seq} on {self.topic}: "
                              f"{event.refused} (check the ACL and this table's identity)")
        self.acked.add(sent.seq)
        self.last_ack = time.monotonic()
        self.drops = 0

    def rewind(self, from_seq: int) -> None:
        """The floor lacks ``from_seq``: send everything again from there. Only a record the
        broker acknowledged can be asked for (later ones are in flight or not sent yet, and go
        anyway); the journal is read again from it, and the cursor goes back to the record
        before it so that a feed restarted meanwhile sends them too. What was in flight is
        forgotten (its PUBACKs are ignored; a copy the broker still delivers is a duplicate
        the floor drops). A record the journal no longer holds (retention) cannot be sent:
        the feed says so and sends what it has."""
        if from_seq > self.cursor.seq:
            return
        if from_seq == 1:
            tail, cursor = JournalTail(self.config.journal_dir, 0), \
                Cursor(self.config.table_id, 0, None)
        else:
            tail = JournalTail(self.config.journal_dir, from_seq - 2)
            before = tail.read_first()
            if before is None or before.seq != from_seq - 1:
                log.error("feed cannot resend: the journal no longer holds the record before "
                          "the one the floor asks for (retention)", from_seq=from_seq,
                          found=before.seq if before else None)
                return
            cursor = Cursor(self.config.table_id, before.seq, before.hash)
        log.warning("feed resending at the floor's request", from_seq=from_seq,
                    cursor_was=self.cursor.seq, in_flight=len(self.in_flight))
        self.resends += 1
        self.tail, self.cursor = tail, cursor
        self.pending.clear()
        self.in_flight.clear()
        self.sent.clear()
        self.acked.clear()
        self._may_go, self._search = 0, None
        self._cursor_dirty = True
        self._save_cursor(force=True)

    def _advance(self) -> None:
        moved = False
        while self.sent and self.sent[0].seq in self.acked:
            sent = self.sent.popleft()
            self.acked.discard(sent.seq)
            self.cursor = Cursor(self.config.table_id, sent.seq, sent.hash)
            moved = True
        if moved:
            self._cursor_dirty = True
        self._save_cursor(force=not self.sent and not self.pending)

    def _save_cursor(self, *, force: bool) -> None:
        now = time.monotonic()
        if self._cursor_dirty and (force or now - self._cursor_saved >= CURSOR_EVERY_S):
            save_cursor(self.config.state_dir, self.cursor)
            self._cursor_saved, self._cursor_dirty = now, False

    def _check_stuck(self) -> None:
        now = time.monotonic()
        if self.link is Link.UP and self.in_flight and \
                now - max(self.link_since, self.last_ack) > ACK_TIMEOUT_S:
            raise BrokerError(f"record {self.sent[0].seq} not acknowledged for "
                              f"{ACK_TIMEOUT_S:.0f} s on a live connection")


EXIT_RESTART = 1
"""The broker refused or stalled us: systemd starts the feed again from its cursor
(``Restart=always``, bounded by ``StartLimitBurst``). A bad config or a cursor that does not
match the journal exits 2 instead, which the unit does not restart: a person must look."""


def run_feed(config: FeedConfig) -> int:
    feed = Feed(config)
    stop_on_signals(feed.stop)
    try:
        feed.run()
    except BrokerError as error:
        log.error("feed stopped", problem=str(error))
        print(f"tablectl feed: {error}", file=sys.stderr)
        return EXIT_RESTART
    return 0
