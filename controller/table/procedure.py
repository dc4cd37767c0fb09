"""Deal order, as a pure function of the rule set, the dealing device and the wagers.

* Shuffler sets of three: one set to each box holding an initial wager, from the dealer's
  immediate left (box 1) clockwise, then the dealer (RWS-NC3P 3.12.1, MBS-R3P 3.12, RWS-3CP 3.7;
  MBS-3P 3.4 says the same without naming the device).
* Manual shoe: one card at a time to each such box and then the dealer, three rounds
  (RWS-NC3P 3.12, MBS-R3P 3.12.1, RWS-3CP 3.6).
* LIVE-3P: burn 4 cards (T&C 1), then one card at a time face up P1 -> P2 -> P3 -> Banker, three
  rounds (Game Play).

Which boxes receive cards: a box without an initial wager receives nothing. In RWS-3CP a box
holding only a Pair Plus wager DOES receive cards: 3.3 makes Ante, Pair Plus "or both" the wager
that lets a player participate, and 3.8.2 speaks of Pair-Plus-only players placing their cards.
LIVE-3P always deals its three Player hands (the bets are on the hands, not on boxes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.games.rules import Family, GameRules
from controller.settlement.model import Wager
from controller.table.layout import DealingDevice

LIVE_BURN_CARDS = 4
"""LIVE-3P T&C 1: "4 cards will be skipped before the start of every hand"."""
CARDS_PER_HAND = 3


@dataclass(frozen=True, slots=True)
class Step:
    """One delivery: ``cards`` cards (3 for a shuffler set, else 1) to ``position``."""

    position: str
    cards: int
    turn: int
    """Dealing round 1-3 for single cards; 1 for sets."""


def participating_bets(rules: GameRules) -> frozenset[str]:
    """Bets that make a box receive cards (see the module docstring for RWS-3CP 3.3)."""
    if rules.family is Family.THREE_CARD_POKER:
        return frozenset({"ante", "pair_plus"})
    return frozenset({rules.initial_bet}) if rules.initial_bet else frozenset()


def receiving_boxes(rules: GameRules, boxes: Iterable[str], wagers: Iterable[Wager]
                    ) -> tuple[str, ...]:
    """Boxes that receive a hand, in dealing order (the game's position order = clockwise)."""
    boxes = tuple(boxes)
    if not rules.initial_bet and rules.family is Family.THREE_PICTURES:
        return tuple(p for p in rules.positions if p in boxes)  # LIVE-3P: every Player hand
    bets = participating_bets(rules)
    holding = {w.position for w in wagers if w.bet in bets}
    return tuple(p for p in rules.positions if p in boxes and p in holding)


def deal_plan(rules: GameRules, device: DealingDevice, receiving: Iterable[str]
              ) -> tuple[Step, ...]:
    """Every delivery of the deal, in order, ending with the dealer's (or Banker's) hand."""
    order = (*receiving, rules.dealer)
    if device is DealingDevice.SHUFFLER:
        return tuple(Step(position, CARDS_PER_HAND, 1) for position in order)
    return tuple(Step(position, 1, turn) for turn in range(1, CARDS_PER_HAND + 1)
                 for position in order)


def burn_cards(device: DealingDevice) -> int:
    """Cards burned before the deal: 4 in the LIVE studio (T&C 1), none at the casino tables."""
    return LIVE_BURN_CARDS if device is DealingDevice.LIVE else 0
