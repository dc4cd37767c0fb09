"""``draw burn`` on the simulator's stdin (issue 36): a person at the bench deals a LIVE-3P round
from ``python -m firmware_sim shoe --dialect beetek`` (or ``framed``) by typing, its four burns
marked as burns, read as burns by the driver and burned by the table (LIVE-3P T&C 1).
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.service.config import parse_config
from controller.service.wiring.pipeline import Wiring
from controller.table import commands as cmd
from drivers.events import CardRead, DeviceEvent, DeviceOnline
from drivers.shoe.beetek import BeeTekShoe
from drivers.shoe.framed import FramedShoe
from tests.controller.service.operator_rig import DEALER, Rig, toml
from tests.drivers.sim_fixtures import fixture_events, next_event  # noqa: F401 - fixture
from tests.firmware_sim.test_main import _first_line, _stderr_line, fixture_spawn  # noqa: F401

GAME = "live-three-pictures"
ORDER = ("p1", "p2", "p3", "banker")


def _start(tmp: Path, dialect: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "firmware_sim", "shoe", "--dialect", dialect, "--seed", "11",
         "--link", str(tmp / "shoe")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _type(proc: subprocess.Popen[str], *lines: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write("".join(f"{line}\n" for line in lines))
    proc.stdin.flush()


@pytest.mark.parametrize("dialect", ["beetek", "framed"])
def test_draw_burn_is_read_as_a_burn_by_the_driver(tmp_path: Path, dialect: str,
                                                   spawn: list[subprocess.Popen[str]],
                                                   events: queue.Queue[DeviceEvent]) -> None:
    """``draw burn`` sends a burn card (Bee-Tek ``[Manual Burn Cards]``, framed CARD flag bit
    0), ``draw`` and ``draw game`` a game card: the driver's CardRead says which."""
    spawn.append(proc := _start(tmp_path, dialect))
    assert _first_line(proc).startswith("PTY ")
    driver = BeeTekShoe if dialect == "beetek" else FramedShoe
    with driver(str(tmp_path / "shoe"), events):
        next_event(events, DeviceOnline)
        _type(proc, "draw burn", "draw", "draw burn", "draw game")
        burns = [next_event(events, CardRead).burn for _ in range(4)]
    assert burns == [True, False, True, False]


def test_a_scanner_refuses_draw_burn_in_one_line(tmp_path: Path,
                                                 spawn: list[subprocess.Popen[str]]) -> None:
    """A barcode scanner sends the card only: ``draw burn`` is refused on stderr, and a
    misspelt ``draw`` too, each in one line; the simulator serves on."""
    spawn.append(proc := _start(tmp_path, "scanner"))
    assert _first_line(proc).startswith("PTY ")
    _type(proc, "draw burn")
    assert "marks no burn cards" in _stderr_line(proc)
    _type(proc, "draw brun")
    assert "'brun'" in _stderr_line(proc)
    assert proc.poll() is None


class StdinShoeRig(Rig):
    """The service's own wiring (``tablectl run``'s) on the device path of a Bee-Tek shoe
    simulator run as ``python -m firmware_sim``, driven by lines on its stdin."""

    def __init__(self, tmp: Path, proc: subprocess.Popen[str]) -> None:
        self.tmp, self.game, self.proc = tmp, GAME, proc
        self.events: queue.Queue[Mapping[str, Any]] = queue.Queue()
        self.seen: list[Mapping[str, Any]] = []
        self.published: list[Mapping[str, Any]] = []
        self.auto_take = False
        self.wiring: Wiring | None = None
        self._stop = threading.Event()

    def start(self) -> StdinShoeRig:
        self.open_service()
        return self

    def open_service(self) -> None:
        text = toml(self.tmp, GAME, str(self.tmp / "shoe")).replace(
            'kind = "shuffler"', 'kind = "live"\ndialect = "beetek"')
        self.wiring = Wiring(parse_config(text, source=str(self.tmp / "tablectl.toml")),
                             self._publish)
        self.wiring.start()

    def close(self) -> None:
        self.close_service()

    def type(self, line: str, *expect: str) -> Mapping[str, Any]:
        """The person types ``line``; the table's next event of ``expect``."""
        _type(self.proc, line)
        return self.wait(*expect)


@pytest.fixture(name="rig")
def fixture_rig(tmp_path: Path, spawn: list[subprocess.Popen[str]]) -> Iterator[StdinShoeRig]:
    spawn.append(proc := _start(tmp_path, "beetek"))
    assert _first_line(proc).startswith("PTY ")
    rig = StdinShoeRig(tmp_path, proc).start()
    try:
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
        yield rig
    finally:
        rig.close()


def test_a_live_round_dealt_by_typing(rig: StdinShoeRig) -> None:
    """LIVE-3P T&C 1 at the bench: four ``draw burn`` are burned (BurnCard 0-3, no ruling),
    then twelve ``draw`` deal P1 -> P2 -> P3 -> Banker, and the round settles. Before issue 36
    stdin's ``draw`` always sent a game card, so every such round was a short burn."""
    rig.send(cmd.OpenRound(**DEALER))
    rig.send(cmd.PlaceWager(**DEALER, wager_id="w1", position="p1", bet="win", amount=1000))
    rig.send(cmd.CloseBets(**DEALER))
    rig.send(cmd.ConfirmShuffle(**DEALER))
    burned = [rig.type("draw burn", "BurnCard", "CardAssigned", "SupervisorRequired")
              for _ in range(4)]
    assert [(e["type"], e["index"]) for e in burned] == [("BurnCard", i) for i in range(4)]
    dealt = [rig.type("draw", "CardAssigned", "SupervisorRequired")["card"] for _ in range(12)]
    rig.wait("DealComplete")
    hands = rig.status()["hands"]
    assert {p: hands[p] for p in ORDER} == {p: dealt[i::4] for i, p in enumerate(ORDER)}
    assert not [e for e in rig.published if e.get("type") == "SupervisorRequired"]
    assert rig.finish()[-1]["type"] == "RoundSettled"
