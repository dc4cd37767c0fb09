"""Issue 23, finding 7: LIVE-3P T&C 1 burn cards, driven through the service's own wiring (the
real ``Wiring`` of ``tablectl run``: driver, table thread, journal) against a shoe simulator
served on a real pty that the service opens as its device path.

"4 cards will be skipped before the start of every hand." A shoe that marks its burn cards
(Bee-Tek: the ``[Manual Burn Cards]`` section) and sends the fourth card from its game section
has burned three: that card is not burn 4 (every hand would shift by one card) but a burn error,
found before Player 1's second card, so the ruling is reconstruction. A scanner marks nothing:
there the first four cards of a round are the burns, as documented.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.games.cards import Card
from controller.journal import iter_records
from controller.journal.replay import replay_records
from controller.service.config import parse_config
from controller.service.wiring.pipeline import Wiring
from controller.table import commands as cmd
from firmware_sim.beetek import BeeTekShoeSim
from firmware_sim.scanner import ScannerShoeSim
from firmware_sim.serve import PtyServer
from tests.controller.service.operator_rig import DEALER, SUPERVISOR, Rig, toml

GAME = "live-three-pictures"
ORDER = ("p1", "p2", "p3", "banker")


class ShoeRig(Rig):
    """The operator rig's waits and verbs, with a LIVE shoe of ``dialect`` on the pty."""

    def __init__(self, tmp: Path, dialect: str) -> None:
        self.tmp, self.game, self.dialect = tmp, GAME, dialect
        self.shoe = BeeTekShoeSim(seed=11) if dialect == "beetek" else ScannerShoeSim(seed=11)
        self.server = PtyServer(self.shoe, name="shoe", link=tmp / "shoe")
        self.shoe.bind_link(self.server)
        self.events: queue.Queue[Mapping[str, Any]] = queue.Queue()
        self.seen: list[Mapping[str, Any]] = []
        self.published: list[Mapping[str, Any]] = []
        self.auto_take = False  # no shuffler hands to lift
        self.wiring: Wiring | None = None
        self._stop = threading.Event()

    def open_service(self) -> None:
        text = toml(self.tmp, GAME, str(self.tmp / "shoe")).replace(
            'kind = "shuffler"', f'kind = "live"\ndialect = "{self.dialect}"')
        self.wiring = Wiring(parse_config(text, source=str(self.tmp / "tablectl.toml")),
                             self._publish)
        self.wiring.start()

    def bets_closed_and_shuffled(self) -> None:
        self.send(cmd.OpenRound(**DEALER))
        self.send(cmd.PlaceWager(**DEALER, wager_id="w1", position="p1", bet="win",
                                 amount=1000))
        self.send(cmd.CloseBets(**DEALER))
        self.send(cmd.ConfirmShuffle(**DEALER))

    def draw(self, *, burn: bool | None = None) -> Card:
        """The dealer draws one card; waits until the table has taken it."""
        card = self.shoe.draw(burn=burn) if isinstance(self.shoe, BeeTekShoeSim) \
            else self.shoe.draw()
        assert card is not None
        self.wait("BurnCard", "CardAssigned", "SupervisorRequired",
                  where=lambda e: e.get("card") in (card.code, None))
        return card


@pytest.fixture(name="rig")
def fixture_rig(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[ShoeRig]:
    rig = ShoeRig(tmp_path, getattr(request, "param", "beetek"))
    rig.start()
    try:
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
        yield rig
    finally:
        rig.close()


def _of(rig: ShoeRig, kind: str) -> list[Mapping[str, Any]]:
    return [e for e in rig.published if e.get("type") == kind]


def test_a_short_burn_is_a_burn_error_reconstructed(rig: ShoeRig) -> None:
    """T&C 1: three cards marked as burns, the fourth sent from the game section. The table does
    not take it as burn 4: it rules a burn error before Player 1's second card (reconstruction,
    the only option), deals nothing meanwhile, and the supervisor's ``reconstruct`` makes that
    card the fourth burn; the deal then starts with the next card at Player 1, P1 -> P2 -> P3 ->
    Banker, and the journal replays."""
    rig.bets_closed_and_shuffled()
    burns = [rig.draw(burn=True) for _ in range(3)]
    fourth = rig.shoe.draw(burn=False)
    assert fourth is not None
    required = rig.wait("SupervisorRequired")
    assert (required["kind"], required["clause"], required["options"]) == (
        "burn_error", "LIVE-3P T&C 1", ["reconstruct"]), required
    (ruled,) = _of(rig, "DealingError")
    assert fourth.code in ruled["detail"] and "short burn" in ruled["detail"], ruled
    assert [e["card"] for e in _of(rig, "BurnCard")] == [c.code for c in burns]
    assert _of(rig, "CardAssigned") == [] and rig.status()["state"] == "hold"

    rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.RECONSTRUCT))
    assert [(e["card"], e["index"]) for e in _of(rig, "BurnCard")] == [
        (c.code, i) for i, c in enumerate([*burns, fourth])]
    dealt = [rig.draw(burn=False) for _ in range(12)]
    rig.wait("DealComplete")
    hands = rig.status()["hands"]
    assert {p: hands[p] for p in ORDER} == {
        p: [c.code for c in dealt[i::4]] for i, p in enumerate(ORDER)}
    assert rig.finish()[-1]["type"] == "RoundSettled"
    rig.close_service()
    assert replay_records(list(iter_records([rig.tmp / "journal"]))).divergences == []


def test_four_marked_burns_deal_from_the_fifth_card(rig: ShoeRig) -> None:
    """The normal procedure is unchanged: four marked burns, no ruling, P1 gets the fifth."""
    rig.bets_closed_and_shuffled()
    burns = [rig.draw(burn=True) for _ in range(4)]
    dealt = [rig.draw(burn=False) for _ in range(12)]
    rig.wait("DealComplete")
    assert [e["card"] for e in _of(rig, "BurnCard")] == [c.code for c in burns]
    assert rig.status()["hands"]["p1"] == [c.code for c in dealt[0::4]]
    assert _of(rig, "SupervisorRequired") == []


@pytest.mark.parametrize("rig", ["scanner"], indirect=True)
def test_a_scanner_that_cannot_mark_burns_burns_the_first_four(rig: ShoeRig) -> None:
    """A barcode scanner reads only the card: no burn error can be seen from it, and the first
    four cards of a round are the burns (docs/protocols-shoes.md), as before."""
    rig.bets_closed_and_shuffled()
    drawn = [rig.draw() for _ in range(16)]
    rig.wait("DealComplete")
    assert [e["card"] for e in _of(rig, "BurnCard")] == [c.code for c in drawn[:4]]
    assert rig.status()["hands"]["p1"] == [c.code for c in drawn[4::4]]
    assert _of(rig, "SupervisorRequired") == []


@pytest.mark.parametrize(("dialect", "url", "marked"), [
    ("framed", "/dev/table-shoe", True), ("beetek", "/dev/table-shoe", True),
    ("scanner", "/dev/table-shoe", False), ("hid", "usb:1209:5ca1:HID0001", False)])
def test_the_dialect_says_whether_burns_are_marked(tmp_path: Path, dialect: str, url: str,
                                                    marked: bool) -> None:
    """The config's dialect sets the table's ``burns_marked``: the framed shoe and the Bee-Tek
    mark burn cards, a barcode scanner (serial or HID) cannot."""
    text = toml(tmp_path, GAME, url).replace(
        'kind = "shuffler"', f'kind = "live"\ndialect = "{dialect}"')
    config = parse_config(text, source=str(tmp_path / "tablectl.toml"))
    assert config.layout().burns_marked is marked
