"""A slow disk: while the journal's writer is inside its fsync of a money record, the control
socket still answers everyone else (issue 35). Shown by ordering, not timing: the fsync is held
until the test lets it go, and the other connections are answered before it does.

The held fsync is a fault no simulator gives (a disk that does not return), so it is made by
wrapping ``os.fsync`` for the journal's own files only."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from pytest_mock import MockerFixture

from controller.service.config import ServiceConfig, load_config
from controller.service.control.client import ControlClient, RequestRefused
from controller.service.protocol import ErrorCode
from controller.studio.config import StudioConfig
from controller.studio.gateway import Gateway
from controller.studio.ledger import Ledger
from tests.controller.service.conftest import InProcessService, service_toml

WAIT = 60.0
"""Generous: a bound for something that is coming on a loaded machine, not a measure."""


class HeldFsync:
    """``os.fsync`` that, once armed, holds the first fsync of a journal file until released."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.armed = threading.Event()
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, fd: int) -> None:
        if self.armed.is_set() and "journal-" in _path_of(fd):
            self.armed.clear()
            self.entered.set()
            self.release.wait(WAIT)
        self.real(fd)


def _path_of(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


@pytest.fixture(name="config")
def fixture_config(tmp_path: Path) -> ServiceConfig:
    path = tmp_path / "tablectl.toml"
    path.write_text(service_toml(tmp_path).replace(
        "[journal]\n", '[journal]\ndurability = "always"\n', 1))
    return load_config(path)


@pytest.fixture(name="held")
def fixture_held(mocker: MockerFixture) -> Iterator[HeldFsync]:
    held = HeldFsync(os.fsync)
    mocker.patch("os.fsync", held)
    yield held
    held.release.set()


def test_others_are_answered_while_a_command_waits_on_the_journals_fsync(
        config: ServiceConfig, held: HeldFsync) -> None:
    """Connection A places a wager; its record's fsync is held. Meanwhile connection B's
    ``round.status`` and ``wager.list`` are answered, and a new watcher is subscribed, all
    before A has its answer (the writer is still inside the fsync); once the disk returns, A
    is answered (accepted) and the watcher gets the wager's event. On a control socket that
    answered commands on its one selector thread, B waited behind A (issue 35: 985 ms median
    behind 500 ms fsyncs)."""
    socket_path = config.control.socket
    answers: dict[str, Any] = {}
    with InProcessService(config) as running:
        assert running.service.ready.wait(WAIT)
        running.ask("round.open")

        def place() -> None:
            with ControlClient(socket_path, timeout=WAIT) as client:
                answers["place"] = client.request("wager.place", {
                    "wager_id": "a1", "position": "1", "bet": "main", "amount": 1000})

        held.armed.set()
        placing = threading.Thread(target=place, name="connection-a")
        placing.start()
        assert held.entered.wait(WAIT), "the wager's record never reached its fsync"
        with ControlClient(socket_path, timeout=WAIT) as other, \
                ControlClient(socket_path, timeout=WAIT) as watcher:
            status = other.request("round.status")
            listed = other.request("wager.list")
            events = watcher.watch()
            assert "place" not in answers, "A was answered before its fsync returned"
            assert not held.release.is_set()
            assert status["state"] == "betting" and listed["wagers"] == []
            held.release.set()
            placing.join(WAIT)
            assert answers["place"]["accepted"] is True
            seen = next(e for e in events if e.get("type") == "WagerAccepted")
            assert seen["wager"]["id"] == "a1"


def _live_config(tmp_path: Path) -> ServiceConfig:
    path = tmp_path / "tablectl.toml"
    path.write_text(service_toml(tmp_path).replace(
        'game = "rws-nc-three-pictures"', 'game = "live-three-pictures"').replace(
        'kind = "shuffler"', 'kind = "live"\ndialect = "beetek"').replace(
        "[journal]\n", '[journal]\ndurability = "always"\n', 1))
    return load_config(path)


@contextmanager
def _studio(tmp_path: Path, config: ServiceConfig) -> Iterator[Gateway]:
    """The gateway in process (no HTTP) on the running service's control socket."""
    studio = StudioConfig(listen="127.0.0.1", port=0, certificate=tmp_path / "unused",
                          private_key=tmp_path / "unused", client_ca=tmp_path / "unused",
                          clients=frozenset({"gs1"}), control_socket=config.control.socket,
                          ledger=tmp_path / "studio" / "ledger.jsonl")
    gateway = Gateway(studio, Ledger(studio.ledger))
    gateway.start()
    try:
        yield gateway
    finally:
        gateway.stop()


BATCH = {"key": "b1", "wagers": [{"id": "a1", "member": "m1", "position": "p1", "bet": "win",
                                  "amount": 500}]}


def test_the_studios_status_is_answered_while_a_batch_waits_on_the_fsync(
        tmp_path: Path, held: HeldFsync) -> None:
    """The studio gateway places a batch whose journal record's fsync is held; its status and
    the round's events are read meanwhile, before the batch is answered (the verbs' lock is
    held across the batch's request; reads no longer take it). Then the batch is accepted."""
    config = _live_config(tmp_path)
    answers: dict[str, Any] = {}
    with InProcessService(config) as running, _studio(tmp_path, config) as gateway:
        assert running.service.ready.wait(WAIT)
        number = gateway.open_round("gs1", {"key": "o1", "betting_seconds": 120})["round"]
        held.armed.set()
        placing = threading.Thread(target=lambda: answers.update(
            batch=gateway.place_batch("gs1", number, BATCH)), name="batch")
        placing.start()
        assert held.entered.wait(WAIT), "the batch's record never reached its fsync"
        status = gateway.status("gs1")
        events = gateway.events("gs1", number, 0, 0)
        assert "batch" not in answers, "the batch was answered before its fsync returned"
        assert (status["round"], status["yours"]) == (number, True)
        assert events["round"] == number
        held.release.set()
        placing.join(WAIT)
        assert answers["batch"]["accepted"] == 1


def test_a_batch_the_table_did_not_answer_in_time_is_unavailable_not_refused(
        tmp_path: Path, held: HeldFsync) -> None:
    """Issue 33 (answers that are true): the fsync is held past the control handler's bound,
    so the table has not answered the batch, which stays queued and is placed once the disk
    returns. The gateway must not answer it "refused" (it raises, which the server sends as
    ``503 unavailable``, and records nothing under the key); the game server's resend with
    the same key is then answered accepted, and the wager is on the layout once."""
    config = _live_config(tmp_path)
    with InProcessService(config) as running, _studio(tmp_path, config) as gateway:
        assert running.service.ready.wait(WAIT)
        number = gateway.open_round("gs1", {"key": "o1", "betting_seconds": 120})["round"]
        held.armed.set()
        with pytest.raises(RequestRefused) as unanswered:
            gateway.place_batch("gs1", number, BATCH)  # returns after the handler's bound
        assert unanswered.value.code is ErrorCode.UNAVAILABLE
        assert held.entered.is_set() and not held.release.is_set()
        held.release.set()
        again = gateway.place_batch("gs1", number, BATCH)
        assert (again["accepted"], again["refused"], again["replayed"]) == (1, 0, False)
        assert [w["id"] for w in running.ask("wager.list")["wagers"]] == ["gs1/a1"]
