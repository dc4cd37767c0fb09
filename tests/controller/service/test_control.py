"""The control socket over a real Unix socket in tmp_path, with real SO_PEERCRED.

Tests cannot create system groups, so the group lookup is injected (``groups_of``) and the
superuser list emptied; the uid and gid it is asked about come from the kernel.
"""

from __future__ import annotations

import grp
import json
import os
import socket
import stat
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from controller.errors import WagerError
from controller.service.control import connections as connections_module
from controller.service.control import server as control_module
from controller.service.control.connections import RepeatedError
from controller.service.control.server import (
    AccessPolicy,
    RequestRefused,
    ControlClient,
    MAX_PENDING_EVENTS,
    ControlServer,
    Peer,
)
from controller.service.errors import ControlError, ServiceError
from controller.service.policy import ConnectionLimits
from controller.service.protocol import MAX_LINE_BYTES, ErrorCode, Request, Role

OPERATORS = "tablectl-operators"
SURVEILLANCE = "tablectl-surveillance"


@dataclass
class Groups:
    """The injected group lookup: which groups the peer is in, and who was asked about."""

    names: frozenset[str] = frozenset()
    asked: list[tuple[int, int]] = field(default_factory=list)

    def __call__(self, uid: int, gid: int) -> frozenset[str]:
        self.asked.append((uid, gid))
        return self.names


@dataclass
class Recorder:
    """A handler that records what reached it and answers with the verb."""

    seen: list[tuple[Request, Peer]] = field(default_factory=list)
    fail_with: Exception | None = None

    def __call__(self, request: Request, peer: Peer) -> Mapping[str, Any]:
        self.seen.append((request, peer))
        if self.fail_with is not None:
            raise self.fail_with
        return {"verb": request.verb, "args": dict(request.args)}


@pytest.fixture(name="groups")
def fixture_groups() -> Groups:
    return Groups()


@pytest.fixture(name="handler")
def fixture_handler() -> Recorder:
    return Recorder()


@pytest.fixture(name="server")
def fixture_server(tmp_path: Path, groups: Groups, handler: Recorder) -> Iterator[ControlServer]:
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=groups, superusers=frozenset())
    with ControlServer(tmp_path / "control.sock", handler, policy) as server:
        yield server


@pytest.fixture(name="client")
def fixture_client(server: ControlServer) -> Iterator[ControlClient]:
    with ControlClient(server.path) as client:
        yield client


def _connect(server: ControlServer, groups: Groups, *names: str) -> ControlClient:
    groups.names = frozenset(names)
    return ControlClient(server.path).connect()


def test_operator_commands_reach_the_handler(server: ControlServer, groups: Groups,
                                             handler: Recorder) -> None:
    """An operator's command reaches the table handler with the kernel's credentials."""
    with _connect(server, groups, OPERATORS) as client:
        result = client.request("wager.place", {"wager_id": "w1", "position": "3",
                                                "bet": "ante", "amount": 500},
                                actor="dealer:1042")
    assert result == {"verb": "wager.place", "args": {"wager_id": "w1", "position": "3",
                                                      "bet": "ante", "amount": 500}}
    request, peer = handler.seen[0]
    assert request.actor == "dealer:1042"
    assert (peer.uid, peer.gid, peer.pid) == (os.getuid(), os.getgid(), os.getpid())
    assert peer.role is Role.DEALER
    assert groups.asked == [(os.getuid(), os.getgid())]


def test_surveillance_may_only_watch_status_and_list(server: ControlServer, groups: Groups,
                                                     handler: Recorder) -> None:
    """Surveillance reads; a command is refused naming the verb and the group."""
    with _connect(server, groups, SURVEILLANCE) as client:
        assert client.request("round.status") == {"verb": "round.status", "args": {}}
        assert client.request("wager.list")["verb"] == "wager.list"
        with pytest.raises(RequestRefused) as caught:
            client.request("round.open")
        assert client.request("watch") == {"watching": True}
    assert caught.value.code is ErrorCode.FORBIDDEN
    assert "round.open not permitted" in caught.value.message
    assert SURVEILLANCE in caught.value.message and "may only watch" in caught.value.message
    assert [request.verb for request, _ in handler.seen] == ["round.status", "wager.list"]


def test_a_peer_in_neither_group_may_do_nothing(server: ControlServer, groups: Groups,
                                                handler: Recorder) -> None:
    with _connect(server, groups, "users") as client:
        for verb in ("watch", "round.status"):
            with pytest.raises(RequestRefused, match=f"{verb} not permitted: uid {os.getuid()}"
                                                     f".* is in none of {OPERATORS}"):
                client.request(verb)
    assert handler.seen == []


def test_root_and_the_service_user_may_do_all(tmp_path: Path, handler: Recorder) -> None:
    """With the default policy the service's own uid (root here or tablectl) is a superuser."""
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=Groups())
    with ControlServer(tmp_path / "c.sock", handler, policy), \
            ControlClient(tmp_path / "c.sock") as client:
        client.request("supervisor.void", {"reason": "foreign card", "clause": "RWS-3CP 5.1.1"})
    assert handler.seen[0][1].role is Role.ROOT


@pytest.mark.parametrize(("line", "code", "message"), [
    (b"{not json", "malformed", "not a JSON line"),
    (b'{"id": 9, "verb": "round.explode"}', "unknown_verb", "unknown verb 'round.explode'"),
    (b'{"id": 9, "verb": "decide", "args": {"position": "1"}}', "bad_args",
     "missing argument 'choice'"),
])
def test_invalid_requests_are_refused_and_the_connection_lives(
        server: ControlServer, groups: Groups, line: bytes, code: str, message: str) -> None:
    """A refusal says why, and the client can carry on on the same connection."""
    with _connect(server, groups, OPERATORS) as client:
        client.send_line(line)
        reply = client.read_message()
        assert reply["ok"] is False
        assert reply["error"]["code"] == code and message in reply["error"]["message"]
        assert client.request("round.status")["verb"] == "round.status"


def test_table_refusal_and_internal_errors(server: ControlServer, groups: Groups,
                                           handler: Recorder) -> None:
    """A TablectlError from the table is 'refused' with its message; a bug is 'internal'
    without details, and the server keeps serving."""
    with _connect(server, groups, OPERATORS) as client:
        handler.fail_with = WagerError("RWS-3CP has no bet 'tie'")
        with pytest.raises(RequestRefused, match=r"refused \(refused\): RWS-3CP has no bet"):
            client.request("wager.place", {"wager_id": "w", "position": "1", "bet": "tie",
                                           "amount": 5})
        handler.fail_with = RuntimeError("bug")
        with pytest.raises(RequestRefused) as caught:
            client.request("round.open")
        assert caught.value.code is ErrorCode.INTERNAL and "bug" not in caught.value.message
        handler.fail_with = None
        assert client.request("round.open")["verb"] == "round.open"


def test_watch_streams_published_events(server: ControlServer, groups: Groups) -> None:
    """Every watcher gets every event, in order, tagged with its watch request id."""
    with _connect(server, groups, SURVEILLANCE) as first, \
            _connect(server, groups, OPERATORS) as second:
        for client in (first, second):
            client.request("watch")  # subscribed once the reply is back
        publisher = threading.Thread(target=lambda: [
            server.publish({"event": "card_assigned", "n": n}) for n in range(50)])
        publisher.start()
        publisher.join()
        for client in (first, second):
            got = [client.read_message() for _ in range(50)]
            assert [m["event"]["n"] for m in got] == list(range(50))
            assert {m["id"] for m in got} == {client._next_id}
        assert server.watchers == 2


def test_watch_iterator_ends_when_the_server_stops(tmp_path: Path, groups: Groups,
                                                   handler: Recorder) -> None:
    """watch() yields events and ends quietly when the service shuts down."""
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=groups, superusers=frozenset())
    server = ControlServer(tmp_path / "c.sock", handler, policy)
    server.start()
    groups.names = frozenset({SURVEILLANCE})
    with ControlClient(server.path) as client:
        events = client.watch()
        server.publish({"event": "round_opened"})
        assert next(events) == {"event": "round_opened"}
        server.stop()
        assert list(events) == []


def test_a_watcher_that_never_reads_is_dropped(server: ControlServer, groups: Groups) -> None:
    """A stuck surveillance client cannot make the service buffer without bound."""
    with _connect(server, groups, SURVEILLANCE) as client:
        client.request("watch")
        blob = "x" * 100_000
        for n in range(40):
            server.publish({"event": "big", "n": n, "blob": blob})
        with pytest.raises(ControlError, match="closed the connection"):
            while True:
                client.read_message()
        assert server.watchers == 0


def test_socket_file_mode_and_group(tmp_path: Path, handler: Recorder) -> None:
    """The socket file is 0660 and belongs to the configured group."""
    group = grp.getgrgid(os.getgid()).gr_name
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=Groups())
    with ControlServer(tmp_path / "c.sock", handler, policy, socket_group=group) as server:
        info = os.stat(server.path)
        assert stat.S_ISSOCK(info.st_mode)
        assert stat.S_IMODE(info.st_mode) == 0o660
        assert info.st_gid == os.getgid()
    assert not (tmp_path / "c.sock").exists()


def test_unknown_socket_group_refuses_to_start(tmp_path: Path, handler: Recorder) -> None:
    """A socket group that does not exist is a clear start-up error, not a world-open socket."""
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=Groups())
    server = ControlServer(tmp_path / "c.sock", handler, policy, socket_group="no-such-grp-x")
    with pytest.raises(ServiceError, match="group 'no-such-grp-x' does not exist"):
        server.start()
    server.stop()


def test_stale_socket_is_replaced_but_a_live_one_is_not(tmp_path: Path,
                                                         handler: Recorder) -> None:
    """A socket file left by a killed service is removed; a running service is not usurped."""
    path = tmp_path / "c.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stale:
        stale.bind(str(path))  # bound, never listening: what a killed process leaves
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=Groups())
    with ControlServer(path, handler, policy):
        second = ControlServer(path, handler, policy)
        with pytest.raises(ServiceError, match="another tablectl is listening"):
            second.start()
        second.stop()
        assert path.exists()  # the first server's socket survives the refused second


def test_refuses_to_replace_a_file_that_is_no_socket(tmp_path: Path, handler: Recorder) -> None:
    """A misconfigured socket path never deletes somebody's file."""
    path = tmp_path / "c.sock"
    path.write_text("precious")
    server = ControlServer(path, handler, AccessPolicy(OPERATORS, SURVEILLANCE))
    with pytest.raises(ServiceError, match="exists and is not a socket"):
        server.start()
    server.stop()
    assert path.read_text() == "precious"


def test_overlong_line_is_refused_and_closed(server: ControlServer, groups: Groups) -> None:
    """A line over 64 KiB is refused (too_long) and the connection closed: no unbounded buffer."""
    with _connect(server, groups, OPERATORS) as client:
        client.send_line(b"x" * (MAX_LINE_BYTES + 10))
        reply = client.read_message()
        assert reply["error"]["code"] == "too_long" and reply["id"] is None
        with pytest.raises(ControlError, match="closed the connection"):
            client.read_message()


def test_client_errors_are_one_line(tmp_path: Path) -> None:
    """No service: the client says so instead of a traceback."""
    with pytest.raises(ControlError, match=r"not found \(is tablectl running\?\)"):
        ControlClient(tmp_path / "absent.sock").connect()


def test_deeply_nested_json_is_malformed(server: ControlServer, groups: Groups,
                                         handler: Recorder) -> None:
    """30,000-deep nested JSON (60 KB) was an ``internal`` error with a traceback (issue 11):
    it is the sender's mistake, ``malformed``, and the connection carries on."""
    line = b"[" * 30_000 + b"]" * 30_000
    assert len(line) < MAX_LINE_BYTES
    with _connect(server, groups, OPERATORS) as client:
        client.send_line(line)
        reply = client.read_message()
        assert reply["error"] == {"code": "malformed",
                                  "message": "not a JSON line: nested too deeply"}
        assert client.request("round.status")["verb"] == "round.status"
    assert [request.verb for request, _ in handler.seen] == ["round.status"]


@pytest.mark.parametrize(("line", "why"), [
    (b'{"id": ' + b"9" * 5001 + b', "verb": "round.status"}', "5001 digits"),
    (b'{"id": "\\ud800", "verb": "round.status"}', "lone surrogate"),
    (b'{"id": 1, "verb": "round.status", "verb": "round.open"}', "'verb' appears twice"),
    (b'{"id": 1, "verb": "round.status", "actor": "' + b"a" * 60_000 + b'"}', "'actor' must"),
    (b'{"id": 1, "verb": "round.status", "actor": "x\\u001b[2J"}', "'actor' must"),
    (b'{"id": "' + b"7" * 65 + b'", "verb": "round.status"}', "bad 'id'"),
])
def test_requests_that_broke_the_server_are_malformed(
        server: ControlServer, groups: Groups, handler: Recorder, line: bytes, why: str) -> None:
    """Issue 24: a 5,001-digit id was ``internal`` with a traceback, a lone surrogate got no
    reply at all (the reply could not be encoded), a repeated key silently took the last value,
    a 60,000-character actor was journaled. Each is ``malformed``, named, and the connection
    carries on; the table never sees it."""
    with _connect(server, groups, OPERATORS) as client:
        client.send_line(line)
        reply = client.read_message()
        assert reply["ok"] is False and reply["error"]["code"] == "malformed"
        assert why in reply["error"]["message"]
        assert client.request("round.status")["verb"] == "round.status"
    assert [request.verb for request, _ in handler.seen] == ["round.status"]


def test_a_client_that_never_reads_its_replies_is_dropped(server: ControlServer,
                                                          groups: Groups) -> None:
    """400,000 ``round.status`` requests from a client that never read grew the service from 48
    to 509 MB (issue 11). The unsent output of a connection is bounded: past it the client is
    dropped, and what the server keeps for it is gone with it."""
    groups.names = frozenset({OPERATORS})
    request = b'{"id": 1, "verb": "round.status"}\n' * 1000
    sent = 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(server.path))
        with pytest.raises((BrokenPipeError, ConnectionResetError)):
            for _ in range(400):  # 400,000 requests, 14 MB; replies never read
                sock.sendall(request)
                sent += 1
    assert sent < 400
    assert server.connections == 0


def test_an_idle_connection_is_closed_but_a_watcher_stays(tmp_path: Path, groups: Groups,
                                                          handler: Recorder) -> None:
    """A connection with no whole request for ``idle_seconds`` is closed with one line saying
    why; a ``watch`` connection is idle by nature and stays."""
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=groups, superusers=frozenset())
    limits = ConnectionLimits(idle_seconds=0.2)
    groups.names = frozenset({OPERATORS})
    with ControlServer(tmp_path / "c.sock", handler, policy, limits=limits) as server, \
            ControlClient(server.path) as watcher, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle:
        events = watcher.watch()
        idle.settimeout(5)
        idle.connect(str(server.path))
        idle.sendall(b'{"id": 1, "verb": "round.st')  # a partial line is not a request
        with idle.makefile("rb") as stream:
            reply = json.loads(stream.readline())
            assert stream.read() == b""  # then closed
        assert reply["error"]["code"] == "busy"
        assert "without a request (control.idle_seconds)" in reply["error"]["message"]
        server.publish({"event": "still here"})
        assert next(events) == {"event": "still here"}


def test_past_the_cap_a_peer_is_told_busy_and_a_supervisor_still_gets_in(
        tmp_path: Path, groups: Groups, handler: Recorder) -> None:
    """Past ``max_connections`` a dealer gets one ``busy`` line; the reserved slots take a
    supervisor, and when those are full too a supervisor closes the longest-idle dealer's
    connection: a held table can always be reached by someone who may decide it."""
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=groups, superusers=frozenset(),
                          supervisors_group="tablectl-supervisors")
    limits = ConnectionLimits(max_connections=3, reserved=1)
    with ControlServer(tmp_path / "c.sock", handler, policy, limits=limits) as server:
        dealers = [_connect(server, groups, OPERATORS) for _ in range(3)]
        for dealer in dealers:  # each one admitted (and its role fixed) before the next
            dealer.request("round.status")
        extra = _connect(server, groups, OPERATORS)
        with pytest.raises(RequestRefused) as caught:
            extra.request("round.status")
        assert caught.value.code is ErrorCode.BUSY
        assert "all 3 control connections are taken (control.max_connections)" in \
            caught.value.message
        supervisors = [_connect(server, groups, "tablectl-supervisors") for _ in range(2)]
        for supervisor in supervisors:
            assert supervisor.request("round.status") == {"verb": "round.status", "args": {}}
        for other in dealers[1:]:
            other.request("round.status")  # dealers[0] is now the longest idle
        reply = dealers[0].read_message()
        assert "closed to make room for a supervisor" in reply["error"]["message"]
        assert server.connections == 4
        for client in (*dealers, extra, *supervisors):
            client.close()


def test_one_account_may_not_take_every_slot(tmp_path: Path, groups: Groups,
                                             handler: Recorder) -> None:
    """A dealer account past ``max_per_account`` is told ``busy`` while slots remain for the
    others; a supervisor of the same uid is not limited by it."""
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=groups, superusers=frozenset(),
                          supervisors_group="tablectl-supervisors")
    limits = ConnectionLimits(max_connections=10, per_account=2)
    with ControlServer(tmp_path / "c.sock", handler, policy, limits=limits) as server:
        mine = [_connect(server, groups, OPERATORS) for _ in range(2)]
        for client in mine:
            client.request("round.status")
        third = _connect(server, groups, OPERATORS)
        with pytest.raises(RequestRefused, match=r"your account already holds 2 control "
                                                 r"connections \(control.max_per_account\)"):
            third.request("round.status")
        supervisor = _connect(server, groups, "tablectl-supervisors")
        assert supervisor.request("round.status")["verb"] == "round.status"
        for client in (*mine, third, supervisor):
            client.close()


def test_a_stuck_control_loop_fails_its_probe(tmp_path: Path, groups: Groups) -> None:
    """The watchdog asks the control loop to go round (``probe``): while a handler holds the
    loop, nobody can reach the table, and the probe says so (the service then withholds
    WATCHDOG=1, test_app). Meanwhile the table's events do not pile up without bound and
    publishing never blocks the table thread: past the bound the watchers are dropped (they
    would have missed events)."""
    release = threading.Event()
    entered = threading.Event()

    def stuck(request: Request, peer: Peer) -> Mapping[str, Any]:
        entered.set()
        release.wait(10)
        return {}

    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=groups, superusers=frozenset())
    groups.names = frozenset({OPERATORS})
    with ControlServer(tmp_path / "c.sock", stuck, policy) as server, \
            ControlClient(server.path) as watcher:
        events = watcher.watch()
        assert server.probe(1.0)
        with ControlClient(server.path) as client:
            client.send_line(b'{"id": 1, "verb": "round.status"}')
            assert entered.wait(5)
            assert not server.probe(0.2)
            for n in range(MAX_PENDING_EVENTS + 1):
                server.publish({"event": "card", "n": n})
            release.set()
            assert client.read_message()["ok"] is True
        assert server.probe(1.0)
        assert list(events) == []  # dropped: the stream ends rather than skipping events
        assert server.watchers == 0


@pytest.fixture(name="uncached_loggers")
def fixture_uncached_loggers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``capture_logs`` sees the control modules' logs even after a CLI test configured
    caching (a logger already used under caching keeps its processors): fresh, uncached
    loggers for the test."""
    saved = structlog.get_config()
    structlog.configure(cache_logger_on_first_use=False)
    for module in (control_module, connections_module):
        monkeypatch.setattr(module, "log", structlog.get_logger(module.__name__))
    yield
    structlog.configure(**saved)


@pytest.mark.usefixtures("uncached_loggers")
def test_a_repeated_failure_is_logged_once_with_its_count() -> None:
    """12.7 MB of ``control server loop error`` in 5 s (issue 11): a failure that recurs is one
    line when it starts and one with the count and span when it stops."""
    repeated = RepeatedError("control accept failed")
    with capture_logs() as logs:
        for _ in range(10_000):
            repeated.failed(error="Too many open files")
        repeated.recovered()
        repeated.recovered()  # nothing more to say
    assert [(entry["event"], entry.get("count")) for entry in logs] == [
        ("control accept failed", None), ("control accept failed: recovered", 10_000)]


@pytest.mark.usefixtures("uncached_loggers")
def test_an_event_that_is_not_json_is_skipped_and_the_rest_delivered(
        server: ControlServer, groups: Groups) -> None:
    """A bad event (not JSON) is logged once and not published; the events around it are, in
    order, and the loop goes on."""
    with capture_logs() as logs, _connect(server, groups, SURVEILLANCE) as client:
        events = client.watch()
        server.publish({"type": "A"})
        server.publish({"type": "Bad", "value": object()})
        server.publish({"type": "B"})
        assert [next(events), next(events)] == [{"type": "A"}, {"type": "B"}]
        assert server.probe(5.0)
    assert [entry["event_type"] for entry in logs
            if entry["event"] == "event not JSON-able, not published"] == ["Bad"]


def test_a_connection_reset_mid_answer_is_a_control_error(tmp_path: Path) -> None:
    """Issue 33, finding 4: a service killed while a request waits resets the connection; the
    client raised ``ConnectionResetError``, which the studio gateway answered ``500 internal``.
    It is a :class:`ControlError` (the gateway's ``503 unavailable``, resend with the same key).
    A real Unix socket closed with the request unread resets the peer (ECONNRESET)."""
    import socket as socketlib
    import threading

    path = tmp_path / "reset.sock"
    listener = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def reset_after_request() -> None:
        conn, _ = listener.accept()
        conn.recv(1)  # the request has arrived; the rest of it stays unread
        conn.close()  # unread data: the kernel resets the peer

    server = threading.Thread(target=reset_after_request)
    server.start()
    try:
        with ControlClient(path, timeout=60) as client, \
                pytest.raises(ControlError, match="the connection broke"):
            client.request("round.status")
    finally:
        server.join(60)
        listener.close()
