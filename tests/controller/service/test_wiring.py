"""The wired pieces in-process: the table thread's liveness probe and answers, the key file's
least-privilege checks, and who acts as dealer or supervisor."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from controller.service.errors import ServiceError
from controller.service.wiring.handler import TableHandler
from controller.service.keyfile import load_service_key
from controller.service.protocol import ErrorCode, Refusal, Request
from controller.service.wiring.tablethread import TableThread
from controller.table import events as ev
from tests.controller.service.conftest import DEALER, SUPERVISOR


def test_probe_fails_while_the_table_thread_is_stuck(table: TableThread) -> None:
    """The watchdog marker passes only when the table thread gets through the queue: a hung
    input (here a subscriber blocked inside RoundOpened) withholds it, release restores it."""
    release, inside = threading.Event(), threading.Event()

    def stuck(event: ev.RoundEvent) -> None:
        if isinstance(event, ev.RoundOpened):
            inside.set()
            release.wait(10)

    table.subscribe(stuck)
    table.start()
    assert table.probe(2.0)
    handler = TableHandler(table, lambda: 0, timeout=0.2)
    with pytest.raises(Refusal) as caught:
        handler(Request(1, "round.open"), DEALER)
    assert caught.value.code is ErrorCode.UNAVAILABLE and "did not answer" in caught.value.message
    assert inside.wait(5)
    assert not table.probe(0.2)
    release.set()
    assert table.probe(5.0)
    assert table.snapshot.state == "betting"  # the queued command was still handled


def test_a_dealer_may_not_take_a_supervisor_decision(table: TableThread) -> None:
    """The table, not the socket, refuses a dealer's management void (RWS-NC3P 5.17)."""
    table.start()
    handler = TableHandler(table, lambda: 0)
    handler(Request(1, "round.open"), DEALER)
    void = Request(2, "supervisor.void", {"reason": "test"})
    with pytest.raises(Refusal) as caught:
        handler(void, DEALER)
    assert caught.value.code is ErrorCode.REFUSED
    assert "belongs to a Pit Supervisor" in caught.value.message
    answer = handler(void, SUPERVISOR)
    assert answer["state"] == "voided"
    assert [e["type"] for e in answer["events"]][-1] == "RoundVoided"


def test_a_refused_wager_says_why(table: TableThread) -> None:
    """The table's reason comes back as the refusal."""
    table.start()
    handler = TableHandler(table, lambda: 0)
    with pytest.raises(Refusal, match="no round is open for betting"):
        handler(Request(1, "wager.place", {"wager_id": "w", "position": "1", "bet": "main",
                                           "amount": 500}), DEALER)


@pytest.mark.parametrize(("mode", "problem"), [
    (0o644, "mode 0644 lets group or others read or change the key"),
    (0o440, "mode 0440 lets group or others"),
    (0o600, None), (0o400, None)])
def test_key_file_least_privilege(tmp_path: Path, mode: int, problem: str | None) -> None:
    """Only the service's user may read the HMAC key."""
    key = tmp_path / "journal.key"
    key.write_text("cd" * 32 + "\n")
    key.chmod(mode)
    if problem is None:
        assert load_service_key(key) == bytes.fromhex("cd" * 32)
    else:
        with pytest.raises(ServiceError, match=problem):
            load_service_key(key)


def test_key_file_of_another_owner_is_refused(tmp_path: Path) -> None:
    key = tmp_path / "journal.key"
    key.write_text("cd" * 32 + "\n")
    key.chmod(0o400)
    with pytest.raises(ServiceError, match="owned by uid .*, not by the service's user"):
        load_service_key(key, uid=key.stat().st_uid + 1)
