"""The conformance kit against the simulators over real ptys and TCP sockets: the simulator
that follows docs/protocols.md passes every scenario; the legacy firmware fails exactly where it
breaks the document, and each failure names the clause."""

from __future__ import annotations

import queue
from pathlib import Path

import pytest

from drivers.conformance import Result, Verdict
from drivers.conformance.reader import SCENARIOS as READER_SCENARIOS
from drivers.conformance.runner import run_reader_suite
from drivers.conformance.session import Action
from drivers.conformance.shoe import SCENARIOS as SHOE_SCENARIOS
from drivers.conformance.shuffler import SCENARIOS as SHUFFLER_SCENARIOS
from drivers.events import DeviceEvent
from drivers.shoe import open_shoe
from firmware_sim.beetek import BeeTekShoeSim
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.framed import Conformance, FramedSimDevice
from firmware_sim.scanner import ScannerShoeSim
from firmware_sim.serve import PtyServer
from firmware_sim.shoe_framed import FramedShoeSim
from firmware_sim.shuffler import ShufflerSim
from testbed.conformance.bench import SimDealer, run_kit


def _run(sim: FramedSimDevice, kind: str, tmp_path: Path, scenarios: tuple, *,
         dealer: bool = True) -> dict[str, Result]:
    return run_kit(sim, kind, tmp_path, scenarios, dealer=dealer)


@pytest.mark.parametrize("kind", ["pty", "tcp"])
def test_firmware_sim_shuffler_passes_every_scenario(kind: str, tmp_path: Path) -> None:
    """firmware_sim's shuffler, on a pty and over TCP, passes the whole matrix."""
    results = _run(ShufflerSim(), kind, tmp_path, SHUFFLER_SCENARIOS)
    failed = {k: r.detail for k, r in results.items() if r.verdict is not Verdict.PASS}
    assert failed == {}


def test_legacy_firmware_fails_naming_the_clause(tmp_path: Path) -> None:
    """The older firmware fails exactly the scenarios whose MUST it breaks, each with the
    clause: NAK(LENGTH) to another version (2.3), a NAK to EVENT_ACK (2.3), RESYNC replayed
    (3.3), FAULT_CLEARED before the ACK (5.5). Accepting SHUFFLE without END_ROUND is a MAY,
    so that row passes and says so."""
    sim = ShufflerSim(conformance=Conformance.LEGACY)
    results = _run(sim, "pty", tmp_path, SHUFFLER_SCENARIOS)
    failed = {k: r.detail for k, r in results.items() if r.verdict is Verdict.FAIL}
    assert set(failed) == {"other-version", "event-ack", "event-resend", "fault-clear-order"}
    assert failed["other-version"].startswith("protocols.md 2.3:")
    assert "NAK(LENGTH)" in failed["other-version"]
    assert failed["event-ack"].startswith("protocols.md 2.3:")
    assert "MUST NOT answer EVENT_ACK" in failed["event-ack"]
    assert failed["event-resend"].startswith("protocols.md 3.3:")
    assert "replayed" in failed["event-resend"]
    assert failed["fault-clear-order"] == ("protocols.md 5.5: FAULT_CLEARED(door_open) came before "
                                           "the ACK to CLEAR_FAULT; the ACK MUST come first")
    assert "MAY" in results["shuffle-in-ready"].detail


def test_physical_steps_are_not_run_without_a_person(tmp_path: Path) -> None:
    """With nobody at the device, causing a fault is reported as not run, with what to do;
    hands the simulator lifts by itself need nobody."""
    only = tuple(s for s in SHUFFLER_SCENARIOS if s.key in ("resync", "fault-clear-order"))
    results = _run(ShufflerSim(), "pty", tmp_path, only, dealer=False)
    assert results["resync"].verdict is Verdict.PASS
    row = results["fault-clear-order"]
    assert row.verdict is Verdict.NOT_RUN and "--interactive" in row.detail


def test_a_hand_nobody_lifts_needs_a_person(tmp_path: Path) -> None:
    """A shuffler that does not report hands taken by itself: minimum-cards asks a person to
    lift them, and is not run without one."""
    only = tuple(s for s in SHUFFLER_SCENARIOS if s.key in ("resync", "minimum-cards"))
    results = _run(ShufflerSim(take_seconds=None), "pty", tmp_path, only, dealer=False)
    row = results["minimum-cards"]
    assert row.verdict is Verdict.NOT_RUN and "lift" in row.detail


def test_framed_shoe_passes_every_scenario(tmp_path: Path) -> None:
    """The framed shoe simulator passes the link scenarios, its card (resent until EVENT_ACK,
    held for RESYNC) and its lid (ACK before LID closed)."""
    results = _run(FramedShoeSim(), "tcp", tmp_path, SHOE_SCENARIOS)
    failed = {k: r.detail for k, r in results.items() if r.verdict is not Verdict.PASS}
    assert failed == {}


def test_legacy_shoe_fails_the_lid_order(tmp_path: Path) -> None:
    """A shoe that sends LID closed before the ACK to CLEAR_FAULT fails the lid row (5.5)."""
    only = tuple(s for s in SHOE_SCENARIOS if s.key in ("resync", "lid"))
    results = _run(FramedShoeSim(conformance=Conformance.LEGACY), "pty", tmp_path, only)
    assert results["lid"].verdict is Verdict.FAIL
    assert results["lid"].detail.startswith("protocols.md 5.5: LID closed came before the ACK")


@pytest.mark.parametrize("dialect", ["scanner", "beetek"])
def test_reading_shoes_pass_what_their_dialect_allows(dialect: str, tmp_path: Path) -> None:
    """A scanner and a Bee-Tek shoe (simulated, on a pty): online, no card while nothing is
    drawn, one CardRead for one card drawn."""
    sim = ScannerShoeSim(seed=4) if dialect == "scanner" else BeeTekShoeSim(seed=4)
    server = PtyServer(sim, link=tmp_path / "shoe")
    server.start()
    sim.bind_link(server)
    events: queue.Queue[DeviceEvent] = queue.Queue()
    dealer = SimDealer(sim)  # type: ignore[arg-type]
    try:
        results = run_reader_suite(READER_SCENARIOS,
                                   open_shoe(dialect, str(tmp_path / "shoe"), events),
                                   events, operator=dealer)
    finally:
        sim.close()
        server.close()
    assert {r.key: r.verdict for r in results} == {
        "connects": Verdict.PASS, "quiet": Verdict.PASS, "card": Verdict.PASS}
    assert dealer.done == [Action.DRAW_CARD]


def test_a_reader_that_invents_a_card_fails_quiet(tmp_path: Path) -> None:
    """A card comes out of a scanner while the kit watches it with nothing drawn (here: one
    drawn before, held back by a stalled output for a second): the quiet row fails, naming
    the rule."""
    sim = ScannerShoeSim(seed=4)
    server = PtyServer(sim, link=tmp_path / "shoe")
    server.start()
    sim.bind_link(server)
    sim.inject(FaultSpec(FaultKind.STALL, 1.0))
    sim.draw()
    events: queue.Queue[DeviceEvent] = queue.Queue()
    try:
        results = run_reader_suite(READER_SCENARIOS[:2],
                                   open_shoe("scanner", str(tmp_path / "shoe"), events), events)
    finally:
        sim.close()
        server.close()
    assert results[1].verdict is Verdict.FAIL
    assert "never produce a card it was not shown" in results[1].detail
