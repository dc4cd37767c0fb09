"""Connection attacks on the studio gateway (issue 33, findings 2 and 4): a flood of plain TCP
connections that never start TLS, and certified connections that trickle a request's header a
byte at a time. Neither may lock the game server out; the tricklers are closed by the header
deadline (docs/studio.md, "Security"). Bounds are generous: nothing here asserts a latency."""

from __future__ import annotations

import json
import resource
import selectors
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.studio.conftest import Studio

ATTACKER = Path(__file__).resolve().parents[2] / "benchmarks" / "studio_attacks.py"

FLOOD = 1000
TRICKLERS = 100
CALLS = 20
TRICKLE_EVERY_SECONDS = 1.0
TRICKLE_REQUEST = (b"GET /v1/status HTTP/1.1\r\nHost: studio\r\nX-Pad: " + b"p" * 200
                   + b"\r\n\r\n")
"""About 250 bytes: at a byte a second, four minutes to arrive whole."""
ENDED_WITHIN_SECONDS = 120.0


@pytest.fixture(name="many_files")
def fixture_many_files() -> Iterator[int]:
    """This process's open-file soft limit raised to its hard limit (a thousand sockets)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    raised = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    if raised < FLOOD + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        pytest.skip(f"needs {FLOOD + 200} open files; the hard limit is {hard}")
    yield raised
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


class Flood:
    """``count`` plain TCP connections to ``port`` that never send a byte, each reopened as
    soon as the gateway closes it, in a process of their own (``benchmarks/studio_attacks.py``'s
    attacker: in this process it would hold the GIL from the game server's own handshakes)."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.opened = 0
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> Flood:
        self._process = subprocess.Popen(
            [sys.executable, str(ATTACKER), "--attacker", "flood", "--port", str(self.port),
             "--pki", ".", "--count", str(self.count)], cwd=ATTACKER.parents[1],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            assert selector.select(60), "the flood did not start"
        assert self._process.stdout.readline().strip() == "started"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._process is not None
        out, _ = self._process.communicate("", timeout=120)
        self.opened = json.loads(out.strip().splitlines()[-1])["opened"]


@dataclass
class Trickler:
    """A TLS connection with a listed certificate that sends its request a byte a second."""

    context: ssl.SSLContext
    port: int
    outcome: str = "open"
    sent: int = 0
    answer: bytes = b""
    started: threading.Event = field(default_factory=threading.Event)

    def run(self, stop: threading.Event) -> None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=60) as raw, \
                    self.context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                self._trickle(tls, stop)
        except OSError as error:
            if self.outcome == "open":
                self.outcome = f"error {type(error).__name__}"
        finally:
            self.started.set()

    def _trickle(self, tls: ssl.SSLSocket, stop: threading.Event) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(tls, selectors.EVENT_READ)
            while self.sent < len(TRICKLE_REQUEST) and not stop.is_set():
                if (tls.pending() or selector.select(0)) and self._answered(tls):
                    return
                try:
                    tls.sendall(TRICKLE_REQUEST[self.sent:self.sent + 1])
                except OSError:
                    self.outcome = "closed"
                    return
                self.sent += 1
                self.started.set()
                stop.wait(TRICKLE_EVERY_SECONDS)  # the attack's pace, not a synchronisation
            self.outcome = "complete" if self.sent == len(TRICKLE_REQUEST) else "stopped"

    def _answered(self, tls: ssl.SSLSocket) -> bool:
        """Whether the gateway answered or closed (a TLS 1.3 session ticket is neither)."""
        tls.setblocking(False)
        try:
            self.answer = tls.recv(4096)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return False
        except OSError:
            self.answer = b""
        finally:
            tls.settimeout(60)
        if b'"code":"busy"' in self.answer:
            self.outcome = "busy"
        elif b'"code":"request_timeout"' in self.answer:
            self.outcome = "request_timeout"
        else:
            self.outcome = "closed"
        return True


def _calls(studio: Studio, count: int, identity: str = "gs1") -> list[object]:
    """``count`` status requests, one connection each: each status or the error raised."""
    results: list[object] = []
    for _ in range(count):
        try:
            results.append(studio.call("GET", "/v1/status", identity=identity)[0])
        except OSError as error:
            results.append(f"{type(error).__name__}: {error}")
    return results


def test_a_flood_of_silent_connections_does_not_lock_the_game_server_out(
        many_files: int, studio: Studio) -> None:
    """1,000 plain TCP connections that never start TLS, each reopened as the gateway drops
    it (issue 33, finding 2: 16 of them filled every slot for 10 s): a pending handshake costs
    a socket, no slot and no thread, and the oldest silent one is dropped for a new one, so
    each of the game server's requests gets its handshake and is answered 200."""
    with Flood(studio.port, FLOOD) as flood:
        results = _calls(studio, CALLS)
    assert results == [200] * CALLS, Counter(map(str, results))
    assert flood.opened > FLOOD, "held, dropped (at 128 from one address) and reopened"
    assert studio.gateway.poll() is None
    assert not [r for r in studio.ledger_records() if r["kind"] == "refusal"], \
        "a silent connection is logged, never recorded in the ledger"


def test_tricklers_hold_no_slot_past_the_header_deadline(many_files: int,
                                                         studio: Studio) -> None:
    """100 connections certified as gs2 that send a request's header a byte a second
    (issue 33, finding 4: a socket timeout is per read, so they held every slot for ever):
    gs2 gets at most its share of the slots, the rest are answered ``503 busy``; gs1 keeps
    its share and is answered; each trickler with a slot is closed once its request has not
    arrived whole within the header deadline (10 s from its first byte)."""
    context = ssl.create_default_context(cafile=str(studio.pki / "ca.pem"))
    context.load_cert_chain(studio.pki / "gs2.pem", studio.pki / "gs2.key")
    tricklers = [Trickler(context, studio.port) for _ in range(TRICKLERS)]
    stop = threading.Event()
    threads = [threading.Thread(target=t.run, args=(stop,), name=f"test-trickler-{i}")
               for i, t in enumerate(tricklers)]
    try:
        for thread in threads:
            thread.start()
        for trickler in tricklers:
            assert trickler.started.wait(60), "a trickler could not connect"
        results = _calls(studio, CALLS // 2)
        deadline = time.monotonic() + ENDED_WITHIN_SECONDS
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    outcomes = Counter(t.outcome for t in tricklers)
    assert results == [200] * (CALLS // 2), Counter(map(str, results))
    assert outcomes["open"] == outcomes["complete"] == outcomes["stopped"] == 0, outcomes
    held = [t for t in tricklers if t.outcome != "busy"]
    assert held and all(t.outcome in ("request_timeout", "closed") for t in held), outcomes
    assert all(1 <= t.sent < len(TRICKLE_REQUEST) for t in held), outcomes
    assert outcomes["request_timeout"] >= 1, outcomes  # the others' answer lost to a reset
    assert outcomes["busy"] >= TRICKLERS - 16, outcomes
    assert studio.gateway.poll() is None
