"""Where the next card goes: the deal in progress, as plain data with no device or clock.

:class:`Deal` follows the plan of :mod:`controller.table.procedure` card by card. It only ever
records cards that have been dealt (the controller never asks for, stores or displays the order
of undealt cards) and answers the questions the irregularity rulings ask: is this the first
card, has Player 1 had a second card, which cards are unseen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from controller.errors import RequestError
from controller.games.cards import FULL_DECK, Card
from controller.table.procedure import CARDS_PER_HAND, Step


@dataclass(frozen=True, slots=True)
class Delivery:
    """Cards placed by one delivery, and whether a hand now has the wrong number of cards."""

    position: str
    cards: tuple[Card, ...]
    first_index: int
    completed: bool
    wrong_count: bool = False


@dataclass(slots=True)
class Deal:
    plan: tuple[Step, ...]
    burn_target: int = 0
    dealer: str = "dealer"
    hands: dict[str, list[Card]] = field(default_factory=dict)
    burns: list[Card] = field(default_factory=list)
    ignored: list[Card] = field(default_factory=list)
    seen: set[Card] = field(default_factory=set)
    cursor: int = 0
    partial: int = 0
    """Cards already given to the current set step (a shuffler set read card by card)."""
    dealt: int = 0
    order: list[Card] = field(default_factory=list)
    """Cards delivered to hands, in the order they came (for a LIVE-3P burn reconstruction)."""
    unmarked: list[Card] = field(default_factory=list)
    """Cards the shoe sent unmarked (from its game section) while LIVE-3P burns were still
    due: a short burn, held out of the hands until the supervisor reconstructs."""

    def __post_init__(self) -> None:
        for step in self.plan:
            self.hands.setdefault(step.position, [])

    @property
    def positions(self) -> tuple[str, ...]:
        return tuple(self.hands)

    @property
    def burning(self) -> bool:
        return len(self.burns) < self.burn_target

    @property
    def complete(self) -> bool:
        return self.cursor >= len(self.plan)

    @property
    def first_card(self) -> bool:
        return self.dealt == 0

    def cards_of(self, position: str) -> int:
        return len(self.hands.get(position, ()))

    def unseen(self) -> list[Card]:
        return [card for card in FULL_DECK if card not in self.seen]

    def mark_seen(self, cards: Iterable[Card]) -> None:
        self.seen.update(cards)

    def ignore(self, card: Card) -> None:
        """A card after the game, ignored by the rules: seen, and kept apart from the hands."""
        self.seen.add(card)
        self.ignored.append(card)

    def hold_out(self, card: Card) -> None:
        """A short burn (LIVE-3P T&C 1): seen, held out of the hands until reconstructed."""
        self.seen.add(card)
        self.unmarked.append(card)

    def burn(self, card: Card) -> int:
        self.burns.append(card)
        return len(self.burns) - 1

    def deliver_card(self, card: Card) -> Delivery:
        """One card to the next place in the plan."""
        step = self.plan[self.cursor]
        hand = self.hands[step.position]
        hand.append(card)
        self.order.append(card)
        self.dealt += 1
        self.partial += 1
        if self.partial >= step.cards:
            self.cursor += 1
            self.partial = 0
        return Delivery(step.position, (card,), len(hand) - 1, len(hand) == CARDS_PER_HAND)

    def deliver_set(self, cards: Sequence[Card]) -> list[Delivery]:
        """A shuffler set: all of it to the next set step (its count is what the device gave);
        on a single-card plan the cards go one per step."""
        if not self.plan[self.cursor].cards > 1 or self.partial:
            return [self.deliver_card(card) for card in cards if not self.complete]
        step = self.plan[self.cursor]
        hand = self.hands[step.position]
        first = len(hand)
        hand.extend(cards)
        self.order.extend(cards)
        self.dealt += len(cards)
        self.cursor += 1
        return [Delivery(step.position, tuple(cards), first, True,
                         wrong_count=len(hand) != CARDS_PER_HAND)]

    def rebuild_burns(self) -> tuple[list[Card], list[Delivery]]:
        """LIVE-3P T&C 1 reconstruction: every card drawn back in its intended sequential order
        (RWS-NC3P 1.13 defines reconstruction the same way): the first ``burn_target`` cards
        are the burns, the rest go to the hands from the start. A burn beyond the target (a
        fifth flagged burn) was Player 1's first card; a card sent unmarked before the burns
        were done (a short burn) was the last burn. Returns the cards newly burnt and the
        deliveries, re-made from the start."""
        sequence = [*self.burns, *self.unmarked, *self.order]
        burnt_before = len(self.burns)
        self.burns = sequence[:self.burn_target]
        self.unmarked = []
        for hand in self.hands.values():
            hand.clear()
        self.order, self.cursor, self.partial, self.dealt = [], 0, 0, 0
        burnt = self.burns[burnt_before:]
        return burnt, [self.deliver_card(card) for card in sequence[self.burn_target:]
                       if not self.complete]

    def still_to_come(self, position: str) -> int:
        """Cards the rest of the plan brings to ``position`` (a set step counts its three)."""
        rest = sum(step.cards for step in self.plan[self.cursor:] if step.position == position)
        if self.partial and not self.complete and self.plan[self.cursor].position == position:
            rest -= self.partial
        return rest

    def short_hands(self, positions: Iterable[str]) -> dict[str, int]:
        """Of ``positions``, those that can never hold a hand of three cards (RWS-NC3P 3.12,
        MBS-3P 3.8, MBS-R3P 3.17, RWS-3CP 3.6), with the cards each holds now: what it holds
        and what the plan still brings do not make three. Such a hand can be neither played
        nor settled, so a decision that would leave one in play is refused."""
        return {position: len(self.hands.get(position, ())) for position in positions
                if len(self.hands.get(position, ())) + self.still_to_come(position)
                != CARDS_PER_HAND}

    def drop_position(self, position: str) -> int:
        """A hand removed from play receives nothing more: its remaining steps leave the plan, so
        the cards still to come go to the remaining boxes in order (RWS-NC3P 3.12 deals only to
        boxes in play; 5.9 removes the hand). Returns how many deliveries were dropped."""
        keep_to = self.cursor + (1 if self.partial else 0)
        rest = [step for step in self.plan[keep_to:] if step.position != position]
        dropped = len(self.plan) - keep_to - len(rest)
        self.plan = (*self.plan[:keep_to], *rest)
        return dropped

    def move_hands(self, moves: Sequence[tuple[str, str]]) -> None:
        """Reconstruction by moving complete hands (RWS-NC3P 5.5.4): a permutation of hands."""
        sources = [src for src, _ in moves]
        targets = [dst for _, dst in moves]
        for position in (*sources, *targets):
            if position not in self.hands:
                raise RequestError(f"reconstruction: {position!r} holds no hand in this deal")
        if len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
            raise RequestError("reconstruction: each hand may be moved once, to one place")
        for src in sources:
            if len(self.hands[src]) != CARDS_PER_HAND:
                raise RequestError(f"reconstruction moves complete hands only; {src} holds "
                                   f"{len(self.hands[src])} cards")
        snapshot = {position: list(cards) for position, cards in self.hands.items()}
        for src, dst in moves:
            self.hands[dst] = snapshot[src]
        for src in set(sources) - set(targets):
            self.hands[src] = []

    def is_rearrangement(self, hands: Mapping[str, Sequence[Card]]) -> bool:
        """``hands`` only moves complete hands (RWS-NC3P 5.5.4: "moving complete Hands from one
        betting area to another"): each stated hand is empty or a complete hand of the record
        (its three cards, any order), no recorded hand is used twice, and every area a hand
        leaves is stated too, so no card is left in two places."""
        complete = {position: frozenset(cards) for position, cards in self.hands.items()
                    if len(cards) == CARDS_PER_HAND}
        sources: list[str] = []
        for cards in hands.values():
            if not cards:
                continue
            match = [p for p, held in complete.items()
                     if held == frozenset(cards) and len(cards) == CARDS_PER_HAND]
            if not match:
                return False
            sources.append(match[0])
        return len(set(sources)) == len(sources) and all(src in hands for src in sources)

    def override(self, hands: Mapping[str, Sequence[Card]]) -> None:
        """Reconstruction to stated hands, using only the cards already seen this round."""
        used: list[Card] = []
        for position, cards in hands.items():
            if position not in self.hands:
                raise RequestError(f"reconstruction: {position!r} holds no hand in this deal")
            if len(cards) > CARDS_PER_HAND:
                raise RequestError(f"reconstruction: {position} given {len(cards)} cards")
            used.extend(cards)
        if len(set(used)) != len(used):
            raise RequestError("reconstruction uses a card twice")
        unknown = [card.code for card in used if card not in self.seen]
        if unknown:
            raise RequestError(f"reconstruction uses cards not seen this round: "
                               f"{', '.join(unknown)}")
        for position, cards in hands.items():
            self.hands[position] = list(cards)
