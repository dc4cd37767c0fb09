"""The service records which shuffler is at the table (issue 25): its driver asks ``IDENTIFY``
on every link-up and reboot, and the journal holds the serial before that machine's cards, so
the floor can pool one machine's evidence across tables. Through the real wiring, the
simulator on a real pty."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from controller.journal.reader import iter_records
from controller.journal.recorder import DEVICE_IDENTIFIED
from controller.service.config import parse_config
from controller.service.wiring.pipeline import Wiring
from drivers.framed.messages import MsgType
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.shoe_framed import IDENTITY as SHOE
from firmware_sim.shuffler import IDENTITY, ShufflerSim
from tests.controller.service.operator_rig import Rig, toml

SWAPPED = "SIM-HF3-0002"


class SilentShuffler(ShufflerSim):
    """A firmware that never answers ``IDENTIFY`` (no reply, no NAK); everything else as the
    simulator does it."""

    def _frame(self, seq: int, type_: int, frame: object) -> None:
        if type_ == MsgType.IDENTIFY:
            return
        super()._frame(seq, type_, frame)


def _sim(cls: type[ShufflerSim] = ShufflerSim) -> ShufflerSim:
    return cls(seed=7, shuffle_seconds=0.0, dispense_seconds=0.0, take_seconds=None)


def _records(rig: Rig) -> list[tuple[str, dict[str, Any]]]:
    return [(r.event_type, r.payload) for r in iter_records([rig.tmp / "journal"])]


def _serials(rig: Rig) -> list[str]:
    return [p["identity"]["serial"] for kind, p in _records(rig) if kind == DEVICE_IDENTIFIED]


def _first_card_index(records: list[tuple[str, dict[str, Any]]]) -> int:
    return next(i for i, (kind, payload) in enumerate(records)
                if kind == "input_device" and payload.get("type") == "CardSetDispensed")


def _deal_one_round(rig: Rig) -> None:
    rig.open_and_close()
    rig.until(lambda: rig.status()["state"] in ("dealt", "decisions"), timeout=30.0,
              what="the round dealt")
    rig.finish()


@pytest.fixture(name="rig")
def fixture_rig(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Rig]:
    rig = Rig(tmp_path, sim=_sim(getattr(request, "param", ShufflerSim)))
    try:
        yield rig
    finally:
        rig.close()


def _identifier(rig: Rig) -> Any:
    assert rig.wiring is not None and rig.wiring.device is not None
    return rig.wiring.device.driver.identifier


def test_the_shuffler_serial_is_journaled_before_its_first_card(rig: Rig) -> None:
    """At start the wiring asks the shuffler who it is: ``device_identified`` with the
    simulator's serial precedes its DeviceOnline and every card it deals; the status names it."""
    rig.start()
    rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline", timeout=20.0)
    assert rig.status()["device"]["identity"]["serial"] == IDENTITY.serial
    _deal_one_round(rig)
    rig.close_service()
    records = _records(rig)
    kinds = [kind for kind, _ in records]
    identified = kinds.index(DEVICE_IDENTIFIED)
    online = next(i for i, (kind, p) in enumerate(records)
                  if kind == "input_device" and p.get("type") == "DeviceOnline")
    assert records[identified][1]["device"] == "shuffler"
    assert records[identified][1]["identity"]["serial"] == IDENTITY.serial
    assert identified < online < _first_card_index(records)
    assert kinds.count(DEVICE_IDENTIFIED) == 1
    opened = next(p for kind, p in records if kind == "round_opened")
    assert opened["provenance"]["devices"]["shuffler"]["serial"] == IDENTITY.serial


def test_a_swapped_machine_is_recorded_and_the_same_one_is_not_again(rig: Rig) -> None:
    """A reboot of the same machine asks again but records nothing new; another machine on
    the port (a new boot reporting a new serial) is recorded, before the cards it deals."""
    rig.start()
    rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline", timeout=20.0)
    identifier = _identifier(rig)
    rig.until(lambda: identifier.completed >= 1, timeout=20.0, what="first identification")
    rig.sim.reboot()  # the same machine power-cycled
    rig.until(lambda: identifier.completed >= 2, timeout=20.0, what="identified after reboot")
    rig.sim.identity = replace(IDENTITY, serial=SWAPPED)
    rig.sim.reboot()  # another machine, a new boot
    rig.until(lambda: identifier.completed >= 3, timeout=20.0, what="the swapped machine")
    assert rig.status()["device"]["identity"]["serial"] == SWAPPED
    _deal_one_round(rig)
    rig.close_service()
    assert _serials(rig) == [IDENTITY.serial, SWAPPED]
    records = _records(rig)
    swapped_at = next(i for i, (kind, p) in enumerate(records)
                      if kind == DEVICE_IDENTIFIED and p["identity"]["serial"] == SWAPPED)
    assert swapped_at < _first_card_index(records)


def test_another_machine_plugged_in_after_a_reconnect_is_recorded(rig: Rig) -> None:
    """The link drops and comes back (unplugged, replugged on a new pty) with another serial
    answering, same boot: asked again on the new link-up, the new serial is recorded."""
    rig.start()
    rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline", timeout=20.0)
    identifier = _identifier(rig)
    rig.until(lambda: identifier.completed >= 1, timeout=20.0, what="first identification")
    rig.sim.identity = replace(IDENTITY, serial=SWAPPED)
    rig.sim.inject(FaultSpec(FaultKind.DISCONNECT, 0.2))
    rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline", timeout=20.0)
    rig.until(lambda: identifier.completed >= 2, timeout=20.0, what="identified after replug")
    _deal_one_round(rig)
    rig.close_service()
    assert _serials(rig) == [IDENTITY.serial, SWAPPED]
    records = _records(rig)
    swapped_at = next(i for i, (kind, p) in enumerate(records)
                      if kind == DEVICE_IDENTIFIED and p["identity"]["serial"] == SWAPPED)
    assert swapped_at < _first_card_index(records)


@pytest.mark.parametrize("rig", [SilentShuffler], indirect=True)
def test_a_shuffler_that_never_answers_identify_still_deals(rig: Rig) -> None:
    """IDENTIFY unanswered: the tries are bounded, ``device_identify_failed`` names the device
    and the reason, the device comes online all the same and the round is dealt and settled."""
    with capture_logs() as logs:
        rig.start()
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline", timeout=30.0)
        _deal_one_round(rig)
    failed = [entry for entry in logs if entry["event"] == "device_identify_failed"]
    assert failed and failed[0]["device"] == "shuffler" and "IDENTIFY" in failed[0]["reason"]
    assert rig.status()["device"]["identity"] is None
    rig.close_service()
    records = _records(rig)
    assert DEVICE_IDENTIFIED not in [kind for kind, _ in records]
    assert "round_settled" in [kind for kind, _ in records]
    assert _first_card_index(records) > 0


def test_the_framed_shoe_is_identified_too(tmp_path: Path) -> None:
    """A framed shoe speaks IDENTIFY as the shuffler does: the same wiring records its serial
    (device ``shoe``) before its DeviceOnline."""
    config = parse_config(toml(tmp_path, "rws-three-card-poker", "sim").replace(
        'kind = "shuffler"', 'kind = "shoe"\ndialect = "framed"'),
        source=str(tmp_path / "tablectl.toml"))
    wiring = Wiring(config, lambda event: None)
    try:
        wiring.start()
        assert wiring.device is not None
        identifier = wiring.device.driver.identifier
        end, tick = time.monotonic() + 20.0, threading.Event()
        while identifier.completed < 1 and time.monotonic() < end:
            tick.wait(0.05)  # a bounded poll of a counter no event announces
        assert identifier.completed >= 1
    finally:
        wiring.close()
    records = list(iter_records([tmp_path / "journal"]))
    identified = [i for i, r in enumerate(records) if r.event_type == DEVICE_IDENTIFIED]
    assert len(identified) == 1
    payload = records[identified[0]].payload
    assert payload["device"] == "shoe" and payload["identity"]["serial"] == SHOE.serial
    online = next(i for i, r in enumerate(records)
                  if r.event_type == "input_device" and r.payload.get("type") == "DeviceOnline"
                  and r.actor == "shoe")
    assert identified[0] < online
