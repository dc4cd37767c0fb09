"""Test-side parts of the feed tests: a floor on its own thread, a wire sniffer, waiting."""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from controller.feed.config import load_floor_config
from controller.feed.mqtt import stop as stop_client
from controller.floor.chain import Judged, Verdict
from controller.floor.consumer import Floor, Message

WAIT_S = 30.0
OVERALL_S = 900.0
"""The bound on a whole wait for a verdict, however steadily verdicts come."""


class RunningFloor:
    """``Floor.run`` on a thread; every verdict also lands on :attr:`judged`."""

    def __init__(self, config: Path) -> None:
        self.judged: queue.Queue[tuple[Judged, Message]] = queue.Queue()
        self.floor = Floor(load_floor_config(config),
                           on_judged=lambda j, m: self.judged.put((j, m)))
        self.thread = threading.Thread(target=self.floor.run, name="test-floor")

    def __enter__(self) -> RunningFloor:
        self.thread.start()
        assert self.floor.connected.wait(WAIT_S), "the floor did not connect"
        return self

    def __exit__(self, *exc: object) -> None:
        self.floor.stop.set()
        self.thread.join(timeout=WAIT_S)

    def until(self, done: Callable[[Judged], bool], timeout: float = WAIT_S) -> list[Judged]:
        """Verdicts until one satisfies ``done`` (included). Fails when the floor is silent for
        ``timeout`` s (it stalled), or after :data:`OVERALL_S` in all: a catch-up of thousands
        of records after an outage is slower on a loaded machine, which is not a failure while
        verdicts keep coming (a loaded CI run ran out of a 60 s deadline still applying)."""
        seen: list[Judged] = []
        overall = time.monotonic() + max(OVERALL_S, timeout)
        while True:
            remaining = overall - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"floor: no expected verdict within {OVERALL_S} s in all; "
                                     f"last: {seen[-3:]}")
            try:
                judged, _ = self.judged.get(timeout=max(0.01, min(timeout, remaining)))
            except queue.Empty:
                raise AssertionError(f"floor: no verdict at all for {timeout} s; "
                                     f"last: {seen[-3:]}") from None
            seen.append(judged)
            if done(judged):
                return seen

    def until_applied(self, table: str, seq: int, timeout: float = WAIT_S) -> list[Judged]:
        return self.until(lambda j: j.table == table and j.verdict is Verdict.APPLY
                          and j.seq == seq, timeout)


class Client:
    """A plain MQTT 5 client with a test identity, collecting what it receives."""

    def __init__(self, pki: Path, port: int, identity: str) -> None:
        self.received: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                                  client_id=f"test-{identity}-{time.monotonic_ns()}",
                                  protocol=mqtt.MQTTv5)
        self.client.tls_set(ca_certs=str(pki / "ca.pem"), certfile=str(pki / f"{identity}.pem"),
                            keyfile=str(pki / f"{identity}.key"))
        self.client.on_message = lambda c, u, m: self.received.put((m.topic, bytes(m.payload)))
        self.client.on_connect = lambda c, u, f, rc, p: self.events.put(("connect", rc))
        self.client.on_disconnect = lambda c, u, f, rc, p: self.events.put(("disconnect", rc))
        self.client.on_publish = lambda c, u, mid, rc, p: self.events.put(("puback", rc))
        self.client.on_subscribe = lambda c, u, mid, rcs, p: self.events.put(("suback", rcs))
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        kind, reason = self.events.get(timeout=WAIT_S)
        assert kind == "connect" and not reason.is_failure, (kind, reason)

    def subscribe(self, topic: str) -> None:
        self.client.subscribe(topic, qos=1)
        kind, _ = self.events.get(timeout=WAIT_S)
        assert kind == "suback"

    def next_event(self) -> tuple[str, Any]:
        return self.events.get(timeout=WAIT_S)

    def records_until(self, table: str, seq: int) -> list[dict[str, Any]]:
        """Records received on ``table``'s events topic until ``seq``."""
        out: list[dict[str, Any]] = []
        while True:
            topic, payload = self.received.get(timeout=WAIT_S)
            if topic.endswith(f"/{table}/events"):
                out.append(json.loads(payload))
                if out[-1]["seq"] == seq:
                    return out

    def close(self) -> None:
        stop_client(self.client)


def publish_journal(config: Path, last_seq: int) -> None:
    """Run a feed on this thread until every record up to ``last_seq`` has its PUBACK."""
    from controller.feed.config import load_feed_config
    from controller.feed.run import Feed

    feed = Feed(load_feed_config(config))
    feed.open()
    try:
        while not (feed.idle and feed.cursor.seq == last_seq):
            feed.step()
    finally:
        feed.close()
