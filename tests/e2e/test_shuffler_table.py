"""End to end: the simulated shuffler served over a REAL pty, with the fault injected ->
drivers.shuffler -> Table (its one input queue) -> settlement; asserting outcome and clause."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import TableLayout
from controller.table.table import Table
from drivers.shuffler import Shuffler
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.framed import bind_server
from firmware_sim.serve import PtyServer
from firmware_sim.shuffler import ShufflerSim

WAIT = 10.0
DEALER = dict(actor="dana", role=cmd.Role.DEALER)
SHUFFLER_GAMES = ["rws-nc-three-pictures", "mbs-three-pictures", "mbs-royal-three-pictures",
                  "rws-three-card-poker"]


class Rig:
    def __init__(self, game: str, tmp_path: Path) -> None:
        self.sim = ShufflerSim(seed=11)
        self.server = PtyServer(self.sim, link=tmp_path / "shuffler")
        bind_server(self.sim, self.server)
        self.server.start()
        self.out: queue.Queue[ev.RoundEvent] = queue.Queue()
        self.table = Table(TableLayout.for_game(game), [self.out.put]).start()
        self.driver = Shuffler(str(tmp_path / "shuffler"), self.table.inputs,  # type: ignore[arg-type]
                               backoff=(0.05, 0.2))
        self.driver.start()
        self.game = game
        self.pending: list[ev.RoundEvent] = []
        self.wait(ev.DeviceNoted)

    def close(self) -> None:
        self.driver.close()
        self.table.close()
        self.server.close()

    def wait(self, kind: type, predicate=lambda e: True):  # noqa: ANN001, ANN201
        """The first not yet consumed event of ``kind``; earlier others are kept for later."""
        for index, event in enumerate(self.pending):
            if isinstance(event, kind) and predicate(event):
                return self.pending.pop(index)
        while True:
            try:
                event = self.out.get(timeout=WAIT)
            except queue.Empty:
                pytest.fail(f"no {kind.__name__} within {WAIT} s (pending {self.pending})")
            if isinstance(event, kind) and predicate(event):
                return event
            self.pending.append(event)

    def bets(self) -> None:
        first = "ante" if "poker" in self.game else "main"
        self.table.put(cmd.OpenRound(**DEALER))
        for n, box in enumerate(("1", "2")):
            self.table.put(cmd.PlaceWager(**DEALER, wager_id=f"w{n}", position=box, bet=first,
                                          amount=1000))
        self.table.put(cmd.CloseBets(**DEALER))
        self.wait(ev.BetsClosed)

    def hand(self) -> None:
        self.driver.dispense_hand()
        self.wait(ev.DeviceNoted, lambda e: e.detail == "HandTaken")


@pytest.fixture(name="rig")
def fixture_rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(request.param, tmp_path)
    yield rig
    rig.close()


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_round_settles_end_to_end(rig: Rig) -> None:
    """Shuffle, three sets (boxes 1, 2, dealer: RWS-NC3P 3.12.1, MBS-R3P 3.12, RWS-3CP 3.7),
    decisions (3CP), reveal and settlement, through the pty."""
    rig.bets()
    rig.driver.shuffle()
    rig.wait(ev.ShuffleConfirmed)
    for _ in range(3):
        rig.hand()
    rig.wait(ev.DealComplete)
    for box in ("1", "2"):
        rig.table.put(cmd.PlayerDecision(**DEALER, position=box, choice=cmd.Choice.PLAY))
    rig.table.put(cmd.RevealDealer(**DEALER))
    rig.table.put(cmd.SettleRound(**DEALER))
    settled = rig.wait(ev.RoundSettled)
    assert {r.outcome.value for r in settled.settlement.results} <= {"win", "lose", "push"}
    assert [p for p, _ in settled.hands] == ["1", "2", "dealer"]


COUNT = {"rws-nc-three-pictures": "RWS-NC3P 5.5.2", "mbs-three-pictures": "MBS-3P 5.2",
         "mbs-royal-three-pictures": "MBS-R3P 5.1, 5.9", "rws-three-card-poker": "RWS-3CP 5.1.3"}
FOREIGN = {"rws-nc-three-pictures": "RWS-NC3P 5.5.1", "mbs-three-pictures": "MBS-3P 5.1",
           "mbs-royal-three-pictures": "MBS-R3P 5.1", "rws-three-card-poker": "RWS-3CP 5.1.1"}


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_count_mismatch_voids_and_blocks(rig: Rig) -> None:
    """The shuffler counts 51 cards: shortage (RWS-NC3P 5.5.2, MBS-3P 5.2, MBS-R3P 5.1/5.9,
    RWS-3CP 5.1.3): the round is void and dealing blocked."""
    rig.bets()
    rig.sim.inject(FaultSpec(FaultKind.COUNT, 51.0))
    rig.driver.shuffle()
    voided = rig.wait(ev.RoundVoided)
    assert COUNT[rig.game] in voided.clause
    assert all(r.outcome.value == "returned" for r in voided.settlement.results)


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_foreign_card_voids(rig: Rig) -> None:
    """A card not of the deck in use (RWS-NC3P 5.5.1, MBS-3P 5.1, MBS-R3P 5.1, RWS-3CP 5.1.1)."""
    rig.bets()
    rig.sim.inject(FaultSpec(FaultKind.FOREIGN))
    rig.driver.shuffle()
    voided = rig.wait(ev.RoundVoided)
    assert FOREIGN[rig.game] in voided.clause


@pytest.mark.parametrize("rig", ["mbs-three-pictures"], indirect=True)
def test_dealer_set_of_four_voids_mbs_3p(rig: Rig) -> None:
    """MBS-3P 5.4: an incorrect number of cards to the Dealer's hand voids the round."""
    rig.bets()
    rig.driver.shuffle()
    rig.wait(ev.ShuffleConfirmed)
    rig.hand()
    rig.hand()
    rig.sim.inject(FaultSpec(FaultKind.SET_OF_FOUR))
    rig.driver.dispense_hand()
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause == "MBS-3P 5.4"
