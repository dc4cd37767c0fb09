"""A harness that drives the round machine directly (no thread), recording its events."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from controller.games.cards import Card, parse_card, parse_cards
from controller.games.catalog import get_game
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import DealingDevice, TableLayout
from controller.table.machine import RoundMachine
from drivers import events as dev

DEALER = dict(actor="dana", role=cmd.Role.DEALER)
SUPERVISOR = dict(actor="sam", role=cmd.Role.SUPERVISOR)

GAMES_AND_DEVICES = [
    ("rws-nc-three-pictures", "shuffler"), ("rws-nc-three-pictures", "shoe"),
    ("mbs-three-pictures", "shuffler"), ("mbs-royal-three-pictures", "shuffler"),
    ("mbs-royal-three-pictures", "shoe"), ("rws-three-card-poker", "shuffler"),
    ("rws-three-card-poker", "shoe"), ("live-three-pictures", "live"),
]
CASINO_GAMES = ["rws-nc-three-pictures", "mbs-three-pictures", "mbs-royal-three-pictures",
                "rws-three-card-poker"]


@dataclass
class Harness:
    machine: RoundMachine
    events: list[ev.RoundEvent] = field(default_factory=list)
    wager_seq: int = 0

    @property
    def rules(self):  # noqa: ANN201
        return self.machine.rules

    @property
    def state(self) -> str:
        return self.machine.state.value

    def send(self, item: object) -> list[ev.RoundEvent]:
        start = len(self.events)
        self.machine.handle(item)
        return self.events[start:]

    def of(self, kind: type) -> list:  # noqa: ANN001
        return [e for e in self.events if isinstance(e, kind)]

    def last(self, kind: type):  # noqa: ANN001, ANN201
        found = self.of(kind)
        assert found, f"no {kind.__name__} among {[type(e).__name__ for e in self.events]}"
        return found[-1]

    def open(self) -> None:
        self.send(cmd.OpenRound(**DEALER))

    def bet(self, position: str, bet: str, amount: int = 1000, player: str | None = None
            ) -> list[ev.RoundEvent]:
        self.wager_seq += 1
        return self.send(cmd.PlaceWager(**DEALER, wager_id=f"w{self.wager_seq}",
                                        position=position, bet=bet, amount=amount,
                                        player=player or f"player-{position}"))

    def default_bets(self) -> None:
        """One initial wager on boxes 1 and 2 (LIVE: Win on p1, p2)."""
        if self.rules.id.value == "live-three-pictures":
            self.bet("p1", "win")
            self.bet("p2", "win")
            self.bet("p3", "tie")
        else:
            first = "ante" if self.rules.family.value == "three_card_poker" else "main"
            self.bet("1", first)
            self.bet("2", first)

    def close(self) -> None:
        self.send(cmd.CloseBets(**DEALER))

    def shuffle(self) -> None:
        self.send(dev.ShuffleDone(device="shuffler", counted=52, expected=52))

    def ready(self) -> None:
        """Open, default bets, close, shuffle confirmed."""
        self.open()
        self.default_bets()
        self.close()
        self.shuffle()

    def card_events(self, hands: Mapping[str, Sequence[str]], burns: Sequence[str] = ()
                    ) -> list[dev.DeviceEvent]:
        """Device events that deal ``hands`` in the machine's plan order."""
        plan = self.machine.deal.plan
        out: list[dev.DeviceEvent] = [dev.CardRead(device="shoe", card=parse_card(c), burn=True)
                                      for c in burns]
        taken = {p: 0 for p in hands}
        for step in plan:
            cards = parse_cards(hands[step.position][taken[step.position]:
                                                     taken[step.position] + step.cards])
            taken[step.position] += step.cards
            if step.cards == 3:
                out.append(dev.CardSetDispensed(device="shuffler", cards=cards))
            else:
                out.extend(dev.CardRead(device="shoe", card=c) for c in cards)
        return out

    def deal(self, hands: Mapping[str, Sequence[str]], burns: Sequence[str] = ()) -> None:
        for event in self.card_events(hands, burns):
            self.send(event)

    def finish(self) -> ev.RoundEvent:
        """Decide (3CP: everyone plays), reveal, settle; return the last event."""
        if self.state == "decisions":
            for position in self.machine.ante_positions():
                self.send(cmd.PlayerDecision(**DEALER, position=position,
                                             choice=cmd.Choice.PLAY))
        if self.state == "dealt":
            self.send(cmd.RevealDealer(**DEALER))
        self.send(cmd.SettleRound(**DEALER))
        return self.events[-1]

    def outcomes(self) -> dict[str, str]:
        settlement = self.last(ev.RoundSettled).settlement
        return {r.wager_id: r.outcome.value for r in settlement.results}


def standard_hands(game: str) -> dict[str, list[str]]:
    """Box 1 wins, box 2 loses, in every game (LIVE: p1 wins, p2 loses, p3 ties on points)."""
    if game == "rws-three-card-poker":
        return {"1": ["AS", "AH", "2C"], "2": ["3D", "5C", "7H"], "dealer": ["KS", "KH", "4D"]}
    if game == "live-three-pictures":
        return {"p1": ["KS", "QH", "9C"], "p2": ["2D", "3C", "AH"], "p3": ["4S", "4H", "TD"],
                "banker": ["5S", "3H", "TC"]}
    return {"1": ["KS", "QH", "9C"], "2": ["2D", "3C", "AH"], "dealer": ["5S", "3H", "TC"]}


LIVE_BURNS = ["6S", "6H", "6D", "6C"]


@pytest.fixture(name="make")
def make_fixture() -> Iterator[Callable[..., Harness]]:
    def make(game: str, device: str | None = None, **layout: object) -> Harness:
        events: list[ev.RoundEvent] = []
        table = TableLayout.for_game(game, device, **layout)  # type: ignore[arg-type]
        harness = Harness(RoundMachine(table, events.append), events)
        return harness
    yield make


def cards(*codes: str) -> tuple[Card, ...]:
    return parse_cards(codes)


__all__ = ["CASINO_GAMES", "DEALER", "GAMES_AND_DEVICES", "Harness", "LIVE_BURNS", "SUPERVISOR",
           "cards", "standard_hands", "get_game", "DealingDevice"]
