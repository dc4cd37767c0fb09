"""Time that surveillance can hold against the camera, end to end: the service's own wiring
(as ``tablectl run`` builds it) with a simulated shuffler and a clock-source seam that presents
an unsynchronised clock which later steps an hour forward, as a Pi's does after a power cut.

What must hold: the session says how far its times can be trusted; no round opens on the
untrusted clock until a supervisor overrides (journaled); the step is recorded; ``round.status``
and the status line show the clock; ``journal show`` marks the records written before the step
and while unsynchronised; the journal verifies and replays."""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from controller.journal import iter_records, verify
from controller.journal.replay import replay_records
from controller.service.config import ServiceConfig, parse_config
from controller.service.clock.kernel import ClockReading, boot_id
from controller.service.protocol import Refusal, Request
from controller.service.wiring.pipeline import Wiring
from tests.controller.service.conftest import DEALER, MINIMAL, SUPERVISOR
from tests.waiting import wait_for

HOUR_NS = 3600 * 10**9


class SteerableClock:
    """A clock source whose wall clock runs ``offset_ns`` off true time, synchronised or not;
    monotonic time is the real one (the journal stamps records with it too)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.offset_ns = -HOUR_NS
        self.synchronised = False
        self.boot = boot_id()

    def set(self, *, offset_ns: int, synchronised: bool) -> None:
        with self.lock:
            self.offset_ns, self.synchronised = offset_ns, synchronised

    def read(self) -> ClockReading:
        with self.lock:
            return ClockReading(time.time_ns() + self.offset_ns, time.monotonic_ns(),
                                self.synchronised, 2_000 if self.synchronised else 16_000_000,
                                1_000, "systemd-timesyncd", self.boot)


@pytest.fixture(name="config")
def fixture_config(tmp_path: Path) -> ServiceConfig:
    text = MINIMAL.replace("/var/lib/tablectl/journal", str(tmp_path / "journal")).replace(
        'url = "/dev/table-shuffler"', 'url = "sim"') + (
        f'\n[control]\nsocket = "{tmp_path / "control.sock"}"\nsocket_group = ""\n')
    config = parse_config(text, source=str(tmp_path / "tablectl.toml"))
    return dataclasses.replace(config, clock=dataclasses.replace(config.clock,
                                                                 poll_interval_s=0.02))


@pytest.fixture(name="wired")
def fixture_wired(config: ServiceConfig) -> Iterator[tuple[Wiring, SteerableClock,
                                                          queue.Queue[Mapping[str, Any]]]]:
    clock = SteerableClock()
    published: queue.Queue[Mapping[str, Any]] = queue.Queue()
    wiring = Wiring(config, published.put, clock_source=clock)
    wiring.start()
    try:
        yield wiring, clock, published
    finally:
        wiring.close()


def test_untrusted_clock_refuses_rounds_until_override_and_the_step_is_recorded(
        wired: tuple[Wiring, SteerableClock, queue.Queue[Mapping[str, Any]]],
        config: ServiceConfig, capsys: pytest.CaptureFixture[str]) -> None:
    wiring, clock, published = wired
    assert wiring.handler is not None
    handler = wiring.handler

    # 1. refused, and the status says why and what gets the table out
    with pytest.raises(Refusal, match="clock not synchronised") as caught:
        handler(Request(1, "round.open"), DEALER)
    assert "supervisor clock-override" in caught.value.message
    status = handler(Request(2, "round.status"), DEALER)
    assert status["clock_blocks"] == "clock not synchronised"
    assert status["clock"]["synchronised"] is False and status["clock"]["policy"] == "refuse"
    assert "rounds refused: clock not synchronised" in wiring.status_line()

    # 2. a dealer may not override; a supervisor may, and the round opens
    with pytest.raises(Refusal, match="Pit Supervisor"):
        handler(Request(3, "supervisor.clock-override", {"reason": "x"}), DEALER)
    handler(Request(4, "supervisor.clock-override", {"reason": "NTP down; pit approves"}),
            SUPERVISOR)
    opened = handler(Request(5, "round.open"), DEALER)
    assert opened["state"] == "betting"
    round_id = str(opened["round"])

    # 3. the network time arrives mid-round: the wall clock steps an hour forward
    clock.set(offset_ns=0, synchronised=True)
    stepped = wait_for(published, lambda event: event.get("type") == "ClockStepped",
                       "a ClockStepped published")
    assert abs(stepped["step_ns"] - HOUR_NS) < 10**9
    status = wait_for(published, lambda event: event.get("type") == "ClockStatus",
                      "a ClockStatus published")
    assert status["trusted"] is True and status["blocks_rounds"] is False
    assert handler(Request(6, "round.status"), DEALER)["clock"]["trusted"] is True
    handler(Request(7, "supervisor.void", {"reason": "end of test"}), SUPERVISOR)
    wiring.close()

    journal = config.journal.directory
    records = list(iter_records([journal]))
    session = next(r for r in records if r.event_type == "session_started")
    assert session.payload["clock"]["synchronised"] is False
    assert session.payload["clock"]["boot_id"] == clock.boot
    kinds = [r.event_type for r in records]
    for kind in ("clock_status", "clock_stepped", "clock_overridden"):
        assert kind in kinds
    attempts = [r for r in records if r.event_type == "input_command"
                and r.payload["type"] == "OverrideClock"]
    # both attempts are journaled with who made them: the dealer's refused, the supervisor's
    assert [r.payload["fields"]["role"] for r in attempts] == ["dealer", "supervisor"]
    assert attempts[-1].payload["fields"]["reason"] == "NTP down; pit approves"
    assert verify([journal]).ok
    assert replay_records(iter_records([journal])).ok

    # 4. review: the round's records before the step are marked, and carry corrected times
    assert main(["journal", "show", round_id, str(journal)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    opened_line = next(line for line in lines if "round_opened" in line)
    assert "UNSYNC" in opened_line and "PRE-STEP+3600" in opened_line and " -> " in opened_line
    voided_line = next(line for line in lines if "round_voided" in line)
    assert "UNSYNC" not in voided_line and "PRE-STEP" not in voided_line
    assert "±" in voided_line and "±?" not in voided_line
