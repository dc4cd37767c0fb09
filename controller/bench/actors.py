"""The people at a bench table: seeded players and a pit supervisor, acting only through the
table's commands (``controller.table.commands``, with an actor name and a role, as a control
client's requests become them) and, for what hands do, the bench rig's physical world.

* players: seeded random wagers (entered by the dealer, as at a real table), the RWS-3CP
  Q-6-4 strategy (play Q-6-4 or better) and "continue" for every player option;
* the supervisor decides as a pit would: not reconstructable for a wrong count, continue after
  an interruption or a jam, the cards on the layout for a double feed, void for a bad deck; and
  clears a shuffler's fault once it is fixed (``ClearDeviceFault``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from controller.analysis.odds import Q64
from controller.games import poker
from controller.games.cards import Card
from controller.games.rules import Family, GameRules
from controller.service.operator import HoldReason, Op
from controller.settlement.model import ProgressiveConfig
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.options import PER_PLAYER_WITHDRAWAL

DEALER = {"actor": "bench-dealer", "role": cmd.Role.DEALER}
SUPERVISOR = {"actor": "bench-supervisor", "role": cmd.Role.SUPERVISOR}
BOXES = 5
AMOUNTS = (100, 200, 500, 1000)
Put = Callable[[cmd.Command], None]

_PREFERENCE = {
    "wrong_count_player": ("not_reconstructable", "void"),
    "wrong_count_dealer": ("not_reconstructable", "void"),
    "burn_error": ("reconstruct", "void"),
    "not_shuffled": ("void",), "deck_count": ("void",), "foreign_card": ("void",),
    "duplicate_card": ("void",),
}


class Players:
    """Everyone seated: what they stake, and what they decide when the table asks them."""

    def __init__(self, rules: GameRules, rng: random.Random, put: Put, *, live: bool) -> None:
        self.rules = rules
        self.rng = rng
        self.put = put
        self.live = live
        self.placed = 0

    def wagers(self) -> list[cmd.PlaceWager]:
        rng, rules, out = self.rng, self.rules, []

        def add(position: str, bet: str, amount: int) -> None:
            self.placed += 1
            out.append(cmd.PlaceWager(**DEALER, wager_id=f"b{self.placed}", position=position,
                                      bet=bet, amount=amount, player=f"player-{position}"))

        if self.live:
            for position in rules.positions:
                if rng.random() < 0.8:
                    add(position, rng.choice(("win", "lose")), rng.choice(AMOUNTS))
                for side in ("tie", "three_knights", "pair_plus"):
                    if rng.random() < 0.25:
                        add(position, side, rng.choice(AMOUNTS))
            return out
        for position in rules.positions[:BOXES]:
            if rng.random() < 0.75:
                add(position, rules.initial_bet or "main", rng.choice(AMOUNTS))
                for side in (b for b in rules.bets if b not in ("main", "ante", "play")):
                    if rng.random() < 0.3:
                        stake = ProgressiveConfig().stake if side == "progressive" \
                            else rng.choice(AMOUNTS)
                        add(position, side, stake)
            elif rules.family is Family.THREE_CARD_POKER and rng.random() < 0.2:
                add(position, "pair_plus", rng.choice(AMOUNTS))  # a Pair-Plus-only player
        return out

    def options(self, event: ev.PlayerOptionsOffered) -> None:
        """Every player continues, each answering for himself (one answer per player where
        an answer covers all his boxes: MBS-R3P 5.13.1)."""
        players = event.players or tuple(ev.PlayerAtBox(p) for p in event.positions)
        answered: set[str] = set()
        for who in players:
            if who.player is not None and event.clause in PER_PLAYER_WITHDRAWAL:
                if who.player in answered:
                    continue
                answered.add(who.player)
            self.put(cmd.PlayerOption(**DEALER, position=who.position, player=who.player,
                                      option=cmd.Option.CONTINUE))

    def decide(self, antes: set[str], hands: dict[str, tuple[Card, ...]]) -> None:
        """RWS-3CP 3.8: each Ante player plays Q-6-4 or better, else folds."""
        if self.rules.family is not Family.THREE_CARD_POKER:
            return
        for position in sorted(antes):
            hand = hands.get(position)
            if hand is None:
                continue
            plays = poker.evaluate(hand).strength >= Q64
            self.put(cmd.PlayerDecision(**DEALER, position=position,
                                        choice=cmd.Choice.PLAY if plays else cmd.Choice.FOLD))


class Supervisor:
    """The pit: decides a held round with a table command, as ``tablectl supervisor`` would."""

    def __init__(self, put: Put, cards_in_hand: Callable[[int], tuple[Card, ...]]) -> None:
        self.put = put
        self.cards_in_hand = cards_in_hand

    def decide(self, event: ev.SupervisorRequired) -> None:
        for action in _PREFERENCE.get(event.kind, ("continue", "order", "void")):
            if action not in event.options:
                continue
            cards: tuple[Card, ...] = ()
            if action == "order":
                cards = self.cards_in_hand(2 if event.kind == "simultaneous_draw" else 1)
                if not cards:
                    continue
            self.rule(action, f"bench: {event.kind}", cards)
            return

    def rule(self, action: str, reason: str, cards: tuple[Card, ...] = ()) -> None:
        self.put(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction(action),
                                        reason=reason, cards=cards))

    def replace_deck(self) -> None:
        """A blocked deck (RWS-NC3P 5.5): a fresh deck put in."""
        self.put(cmd.ReplaceDeck(**SUPERVISOR))

    def look(self, operator: Mapping[str, Any] | None) -> None:
        """The device side of ``round status``: a device operator held for a supervisor
        (``HoldReason``) is answered as its way out says."""
        if not operator or operator.get("state") != Op.HELD.value:
            return
        if operator.get("hold") == HoldReason.REPEATED_FAILURE.value:
            self.clear_fault(str(operator["device"]), "repeated failures")
        else:  # the deck lost mid-deal, or a runaway: the round cannot be dealt on
            self.rule("void", f"bench: device operator held ({operator.get('hold')})")

    def clear_fault(self, device: str, fault: str) -> None:
        """The device is fixed (jam freed, card turned down): its fault cleared."""
        self.put(cmd.ClearDeviceFault(**SUPERVISOR, device=device, reason=f"bench: {fault}"))


__all__ = ["AMOUNTS", "BOXES", "DEALER", "SUPERVISOR", "Players", "Supervisor"]
