"""Issue 24, findings 2 and 3, with the real parts: a broker that loses records it acknowledged
(SIGKILLed), and a forged record on a table's own topic with that table's own certificate."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from controller.feed.keys import SIGNATURE_PROPERTY, read_private_seed, signed_bytes
from controller.feed.mqtt import user_properties
from controller.feed.signer import Signer
from controller.floor.chain import Judged, Verdict
from controller.floor.store import Store
from controller.floor.view import floor_view
from controller.journal.files import journal_files
from controller.journal.record import canonical_json, seal
from testbed.journalgen import rehome, write_all, write_live
from tests.feed_e2e.broker import SITE, Mosquitto
from tests.feed_e2e.conftest import feed_config, floor_config
from tests.feed_e2e.helpers import WAIT_S, Client, RunningFloor, publish_journal

REPO = Path(__file__).resolve().parents[2]
BROKER_KILLS = 5 if os.environ.get("TABLECTL_FEED_QUICK") else 20
"""The issue's 20 by default (and in CI); ``TABLECTL_FEED_QUICK=1``: 5, for a quick run."""
OUTAGE_S = 1.0
"""Each kill's outage before the broker starts again: the kills are the point, not their
length (the 30 s outage is test_feed.py's)."""
CATCH_UP_S = 180.0
"""Bound for the floor to have every record after the last restart: resend requests back off
up to 60 s, and the box is shared."""


def _start_feed(config: Path, log: Path) -> subprocess.Popen[bytes]:
    """The program the systemd unit runs (``python -m controller.feed``)."""
    with log.open("ab") as sink:
        return subprocess.Popen([sys.executable, "-m", "controller.feed", "--config",
                                 str(config), "--log-level", "INFO"], cwd=REPO, stdout=sink,
                                stderr=sink)


def _collect(floor: RunningFloor, seen: list[Judged], done: Callable[[], bool],
             timeout: float, tick: Callable[[], None] = lambda: None) -> None:
    """Verdicts into ``seen`` until ``done()``, bounded; ``tick`` runs at least every 2 s."""
    deadline = time.monotonic() + timeout
    while not done():
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"not within {timeout} s; last verdicts: {seen[-3:]}"
        tick()
        try:
            seen.extend(floor.until(lambda j: True, timeout=min(2.0, remaining)))
        except AssertionError:
            pass  # no verdict in these 2 s: look at the deadline and tick again


def _applied(seen: list[Judged]) -> list[int]:
    return [j.seq for j in seen if j.verdict is Verdict.APPLY and j.seq is not None]


def _asks(log: Path) -> int:
    return log.read_bytes().count(b"feed resending at the floor's request")


def test_broker_sigkilled_20_times_mid_stream_loses_nothing(
        tmp_path: Path, pki: Path, broker: Mosquitto, journal_3cp: Path) -> None:
    """Mosquitto SIGKILLed and started again 20 times (``TABLECTL_FEED_QUICK=1``: 5) while the
    table writes and the feed (the unit's program) publishes: whatever the broker had
    acknowledged to the feed and not yet delivered is lost with it, and the floor gets it
    again by asking the feed. Every record applied exactly once, in order; the floor ends
    caught up and shows the table online."""
    lines = rehome(journal_3cp, "T1")
    journal = tmp_path / "journal-T1"
    pace = (BROKER_KILLS + 2) * 3.0 / len(lines)  # the table writes while the kills go on
    writer = threading.Thread(target=lambda: list(write_live(journal, lines, pace)),
                              name="test-table")
    config = feed_config(tmp_path, pki, broker, "T1", journal)
    log = tmp_path / "feed.log"
    seen: list[Judged] = []
    feeds = [_start_feed(config, log)]

    def restart_like_systemd() -> None:
        """The unit's Restart=always: a feed that gave up on the broker (exit 1) starts
        again from its cursor."""
        if feeds[-1].poll() is not None:
            feeds.append(_start_feed(config, log))

    with RunningFloor(floor_config(tmp_path, pki, broker)) as floor:
        writer.start()
        try:
            for kill in range(1, BROKER_KILLS + 1):
                target = kill * len(lines) // (BROKER_KILLS + 2)
                _collect(floor, seen, lambda: max(_applied(seen) or [0]) >= target,
                         CATCH_UP_S, restart_like_systemd)
                broker.kill()
                threading.Event().wait(OUTAGE_S)  # the outage itself, not a synchronisation
                broker.start()
            _collect(floor, seen, lambda: len(lines) in _applied(seen), CATCH_UP_S,
                     restart_like_systemd)
            deadline = time.monotonic() + CATCH_UP_S
            view = Store(str(tmp_path / "floor.sqlite3"))  # a reader of its own, as the CLI
            try:
                while True:  # the status after the last record says the floor has it all
                    table = floor_view(view)["tables"]["T1"]
                    if table["online"] and table["behind"] == 0:
                        break
                    assert time.monotonic() < deadline, table
                    threading.Event().wait(0.1)
            finally:
                view.close()
        finally:
            writer.join(timeout=WAIT_S)
            feeds[-1].send_signal(signal.SIGTERM)
            feeds[-1].wait(timeout=WAIT_S)
    assert _applied(seen) == list(range(1, len(lines) + 1)), "lost or applied twice"
    assert {j.verdict for j in seen} <= {Verdict.APPLY, Verdict.DUPLICATE, Verdict.GAP}
    store = Store(str(tmp_path / "floor.sqlite3"))
    try:
        assert store.query("SELECT COUNT(*), MIN(seq), MAX(seq) FROM records") == [
            (len(lines), 1, len(lines))]
    finally:
        store.close()
    print(f"{BROKER_KILLS} broker kills: {_asks(log)} resends at the floor's request, "
          f"{len(feeds) - 1} feed restarts")


def test_records_the_broker_acknowledged_and_lost_are_sent_again(
        tmp_path: Path, pki: Path, broker: Mosquitto, journal_3cp: Path) -> None:
    """Finding 2, made certain: the floor is away (its persistent session queues for it), the
    feed publishes records 41..80 and has every PUBACK (its cursor moves past them), and the
    broker is SIGKILLed with them still queued: lost. The floor comes back, learns from the
    feed's status that the table sent up to 80, shows it behind (not online), asks, and gets
    41..80 from the feed's journal; then the stream goes on: every record once, in order.
    On a floor without resend requests it would wait at 40 for ever."""
    lines = rehome(journal_3cp, "T1")
    journal = tmp_path / "journal-T1"
    write_all(journal, lines[:40])
    config = feed_config(tmp_path, pki, broker, "T1", journal)
    floor_toml = floor_config(tmp_path, pki, broker)
    feed = _start_feed(config, tmp_path / "feed.log")
    try:
        with RunningFloor(floor_toml) as floor:
            seen = floor.until_applied("T1", 40)
        with journal_files(journal)[-1].open("ab") as handle:
            handle.writelines(lines[40:80])
        cursor = tmp_path / "feed-T1" / "feed.cursor"
        deadline = time.monotonic() + WAIT_S
        while not (cursor.exists() and json.loads(cursor.read_text())["seq"] == 80):
            assert time.monotonic() < deadline, "the feed did not get its PUBACKs"
            threading.Event().wait(0.05)
        broker.kill()  # 41..80 were acknowledged to the feed and only queued for the floor
        broker.start()
        with RunningFloor(floor_toml) as floor:
            seen += floor.until(lambda j: j.verdict is Verdict.APPLY and j.seq == 41,
                                timeout=60)
            with journal_files(journal)[-1].open("ab") as handle:
                handle.writelines(lines[80:])
            seen += floor.until_applied("T1", len(lines), timeout=60)
    finally:
        feed.send_signal(signal.SIGTERM)
        feed.wait(timeout=WAIT_S)
    assert _applied(seen) == list(range(1, len(lines) + 1))
    assert _asks(tmp_path / "feed.log") >= 1
    store = Store(str(tmp_path / "floor.sqlite3"))
    try:
        behind = store.query("SELECT known_seq, asked_from FROM behind WHERE table_id = 'T1'")
        assert behind and behind[0][1] == 41, behind
    finally:
        store.close()


def _forge(line: bytes) -> bytes:
    """``line``'s record with its payload changed, re-sealed (its hash matches again) and an
    all-zero HMAC: what the attack sent."""
    data = json.loads(line)
    data.pop("hash")
    data.pop("hmac", None)
    data["payload"] = {"forged": True}
    body = seal(data, None)
    body["hmac"] = "0" * 64
    return canonical_json(body).encode()


def test_forged_record_is_never_applied_and_the_genuine_stream_goes_on(
        tmp_path: Path, pki: Path, broker: Mosquitto, journal_3cp: Path) -> None:
    """Finding 3: with T1's own certificate, on T1's own topic, the next record forged three
    ways -- unsigned, signed with a key of the attacker's, and signed with T2's real key --
    each a ``forged`` verdict naming table and seq, never applied; the genuine records then
    apply from that very seq, and a captured genuine message replayed is a duplicate."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    lines = [line.rstrip(b"\n") for line in rehome(journal_3cp, "T1")[:30]]
    journal = tmp_path / "journal-T1"
    write_all(journal, [line + b"\n" for line in lines[:10]])
    config = feed_config(tmp_path, pki, broker, "T1", journal)
    forged = _forge(lines[10])
    record = json.loads(forged)
    message = signed_bytes(SITE, "T1", record["seq"], record["hash"])
    t2 = Signer(read_private_seed(pki / "T2.sign.key"))
    signatures = [None, Ed25519PrivateKey.generate().sign(message), t2.sign(message)]
    topic = f"tablectl/{SITE}/T1/events"
    with RunningFloor(floor_config(tmp_path, pki, broker)) as floor:
        publish_journal(config, 10)
        seen = floor.until_applied("T1", 10)
        hostile = Client(pki, broker.port, "T1")
        try:
            for signature in signatures:
                pairs = {} if signature is None else {
                    SIGNATURE_PROPERTY: base64.b64encode(signature).decode()}
                hostile.client.publish(topic, forged, qos=1, properties=user_properties(pairs))
                assert hostile.next_event()[0] == "puback"
            hostile.close()
            verdicts = [floor.until(lambda j: True)[0] for _ in signatures]
            with journal_files(journal)[-1].open("ab") as handle:
                handle.writelines(line + b"\n" for line in lines[10:])
            publish_journal(config, len(lines))
            seen += floor.until_applied("T1", len(lines))
            genuine = Signer(read_private_seed(pki / "T1.sign.key")).sign(
                signed_bytes(SITE, "T1", 5, json.loads(lines[4])["hash"]))
            hostile = Client(pki, broker.port, "T1")
            hostile.client.publish(topic, lines[4], qos=1, properties=user_properties(
                {SIGNATURE_PROPERTY: base64.b64encode(genuine).decode()}))
            assert hostile.next_event()[0] == "puback"
            replay = floor.until(lambda j: True)[0]
        finally:
            hostile.close()
    assert [(j.verdict, j.table, j.seq) for j in verdicts] == [(Verdict.FORGED, "T1", 11)] * 3
    assert _applied(seen) == list(range(1, len(lines) + 1))
    assert (replay.verdict, replay.seq) == (Verdict.DUPLICATE, 5)
    store = Store(str(tmp_path / "floor.sqlite3"))
    try:
        assert store.query("SELECT hash FROM records WHERE table_id = 'T1' AND seq = 11") == [
            (json.loads(lines[10])["hash"],)]
        assert sorted(k for (k,) in store.query("SELECT kind FROM problems")) == ["forged"] * 3
    finally:
        store.close()


def test_a_resend_never_carries_a_face_down_card_before_the_reveal(
        tmp_path: Path, pki: Path, broker: Mosquitto, journal_3cp: Path) -> None:
    """RWS-3CP 3.6 under a resend: the journal written up to just before the dealer's reveal,
    the feed holding the dealer's first card; the floor (its identity, on the real resend
    topic) asks for everything again from seq 1. The feed sends 1.. again and stops at the
    same record: no dealer card on the wire, signed or not, before the reveal."""
    from controller.feed.config import load_feed_config
    from controller.feed.run import Feed
    from controller.service.visibility import card_codes

    lines = rehome(journal_3cp, "T1")
    records = [json.loads(line) for line in lines]
    reveal = next(i for i, r in enumerate(records) if r["event"] == "dealer_revealed")
    dealer, round_id = set(records[reveal]["payload"]["cards"]), records[reveal]["round"]
    journal = write_all(tmp_path / "journal-T1", lines[:reveal])
    sniffer = Client(pki, broker.port, "sniffer")
    sniffer.subscribe(f"tablectl/{SITE}/T1/events")
    floor = Client(pki, broker.port, "floor")
    feed = Feed(load_feed_config(feed_config(tmp_path, pki, broker, "T1", journal.parent)))

    def turn_until(done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT_S
        while not done():
            assert time.monotonic() < deadline, f"the feed is stuck at {feed.cursor.seq}"
            feed.step()

    def held() -> bool:
        return feed.idle and bool(feed.pending) and feed.pending[0].round_id == round_id

    feed.open()
    try:
        turn_until(held)
        first_held = feed.pending[0].seq
        assert set(card_codes(feed.pending[0].payload)) & dealer
        wire = sniffer.records_until("T1", first_held - 1)
        floor.client.publish(f"tablectl/{SITE}/T1/resend", b'{"from": 1}', qos=1)
        assert floor.next_event()[0] == "puback"
        turn_until(lambda: feed.resends == 1)
        turn_until(lambda: held() and feed.cursor.seq == first_held - 1)
        again = sniffer.records_until("T1", first_held - 1)
        threading.Event().wait(1.0)  # anything further on the wire would have come by now
        assert sniffer.received.empty()
    finally:
        feed.close()
        sniffer.close()
        floor.close()
    assert [r["seq"] for r in again] == [r["seq"] for r in wire] == list(range(1, first_held))
    for record in wire + again:
        assert not (record["round"] == round_id and set(card_codes(record["payload"]))
                    & dealer), f"dealer card on the wire in seq {record['seq']}"
