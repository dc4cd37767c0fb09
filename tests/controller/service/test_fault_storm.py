"""Bounded effort under a fault storm (issue 10.5): a device that refuses everything costs a
bounded number of commands and journal records, and almost no CPU.

Two views: the operator's policy over 60 s of a clock seam (fast, exact), and a real run of
the service wiring against a refusing shuffler on a real pty, until the operator holds (the
storm is over: nothing more is sent until a supervisor acts)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from controller.service.operator import DeviceAction, DeviceMachine, HoldReason, Op
from controller.table import events as ev
from drivers import events as dev
from drivers.errors import CommandRejected, DriverError, DriverTimeoutError
from drivers.framed.device import DeviceStatus
from drivers.framed.messages import DeviceState, NakReason
from tests.controller.service.document_sim import DocumentShuffler
from tests.controller.service.operator_rig import Rig

STORM_SECONDS = 60.0


def _storm(error: DriverError, status_fails: bool) -> tuple[int, list[dev.CommandFailed],
                                                            DeviceMachine]:
    """Drive the machine through STORM_SECONDS of a refusing device on a simulated clock:
    (commands sent, journal records asked for, the machine)."""
    machine = DeviceMachine("shuffler")
    now = 0.0
    machine.device(dev.DeviceOnline("shuffler", now), now)
    machine.round_events([ev.RoundOpened(round=1, game="g", table="t"),
                          ev.BetsClosed(round=1, wagers=(), receiving=())], now)
    sent, records = 0, []
    while now < STORM_SECONDS:
        action = machine.next_action()
        if action is None:
            if machine.deadline is None:
                break
            now = max(now, machine.deadline)
            machine.expired(now, online=True)
            continue
        sent += 1
        if action is DeviceAction.STATUS and not status_fails:
            machine.succeeded(action, now, DeviceStatus(DeviceState.IDLE, frozenset(), 1, 0, 0))
            continue
        record = machine.failed(action, error, now)
        if record is not None:
            records.append(record)
        now += 0.01  # a NAK takes a few milliseconds on the wire
    return sent, records, machine


@pytest.mark.parametrize(("error", "status_fails"), [
    (CommandRejected("shuffler rejected SHUFFLE: BAD_STATE", NakReason.BAD_STATE), False),
    (CommandRejected("shuffler rejected: BUSY", NakReason.BUSY), False),
    (DriverTimeoutError("shuffler: no answer"), True),
])
def test_sixty_seconds_of_refusals_is_bounded(error: DriverError, status_fails: bool) -> None:
    """Backoff, then a hold for a supervisor after MAX_FAILURES: a handful of commands in 60 s
    and ONE journal record with the count and the time span."""
    sent, records, machine = _storm(error, status_fails)
    assert machine.state is Op.HELD and machine.hold_reason is HoldReason.REPEATED_FAILURE
    assert sent <= 15, sent
    (record,) = records
    assert record.count == 5 and record.last - record.first >= 7.0  # 0.5+1+2+4 s of backoff
    assert record.command and record.error


def test_a_supervisor_clear_fault_releases_the_hold() -> None:
    """The hold's way out: ``supervisor clear-fault`` sends CLEAR_FAULT and tries afresh."""
    _, _, machine = _storm(CommandRejected("no", NakReason.BAD_STATE), False)
    machine.round_events([ev.DeviceFaultClearOrdered(round=1, device="shuffler",
                                                     actor="supervisor:1")], 61.0)
    assert machine.state is not Op.HELD
    assert machine.next_action() is DeviceAction.CLEAR_FAULT
    assert machine.streak.count == 0


def test_a_refusing_device_on_a_pty_costs_little(tmp_path: Path) -> None:
    """The real wiring and a shuffler that NAKs every command: the operator backs off, holds
    after MAX_FAILURES, the journal gains a bounded number of records (one CommandFailed for
    the streak) and the whole process spends well under 2 s of CPU."""
    device = DocumentShuffler()
    device.refuse_all = True
    rig = Rig(tmp_path, sim=device).start()
    try:
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
        assert rig.wiring is not None and rig.wiring.writer is not None
        records_before, cpu_before = rig.wiring.writer.seq, time.process_time()
        rig.open_and_close(1)
        rig.until(lambda: rig.operator()["state"] == "held", timeout=20.0,
                  what="the operator's hold")
        cpu = time.process_time() - cpu_before
        records = rig.wiring.writer.seq - records_before
        operator = rig.operator()
        assert operator["hold"] == "repeated_failure" and operator["failures"] == 5
        assert "clear-fault" in operator["way_out"]
        # the hold and the journaled failure reach the watch stream in their own time: the
        # status may show the hold before the CommandFailed note is published
        rig.until(lambda: any(e.get("detail") == "CommandFailed" for e in rig.published),
                  timeout=30.0, what="the streak's CommandFailed note")
        assert sum(1 for e in rig.published if e.get("detail") == "CommandFailed") == 1
        assert records < 40, records  # the round's own ~12 records, and the one failure
        assert cpu < 2.0, cpu
        assert device.commands_executed < 25
    finally:
        rig.close()
