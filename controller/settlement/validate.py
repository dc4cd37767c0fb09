"""Checks that a round can be settled at all, each failure a clear error naming the problem.

These are the same checks the table applies when a wager is placed, so ``tablectl settle`` and
the live table refuse exactly the same inputs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from controller.errors import HandError, RequestError, WagerError
from controller.games.cards import Card, ensure_single_deck
from controller.games.rules import Family, GameId, GameRules, LimitPolicy
from controller.settlement.model import BetLimit, ProgressiveConfig, Wager


def check_wager(rules: GameRules, wager: Wager, limits: Mapping[str, BetLimit],
                progressive_stake: int = ProgressiveConfig().stake) -> None:
    """One wager on its own: known bet, valid position, positive whole amount, within limits."""
    spec = rules.bet(wager.bet)
    if wager.position not in spec.positions:
        raise WagerError(f"wager {wager.id}: {rules.cite} has no position {wager.position!r} "
                         f"for {wager.bet}; positions are {', '.join(spec.positions)}")
    if isinstance(wager.amount, bool) or not isinstance(wager.amount, int) or wager.amount <= 0:
        raise WagerError(f"wager {wager.id}: amount must be a positive whole number of minor "
                         f"units, got {wager.amount!r}")
    if wager.bet == "progressive" and wager.amount != progressive_stake:
        raise WagerError(f"wager {wager.id}: the progressive wager is a fixed "
                         f"{progressive_stake} minor units at this table, got {wager.amount}")
    limit = limits.get(wager.bet)
    if limit is not None and rules.limit_policy is LimitPolicy.REFUSE:
        if not limit.minimum <= wager.amount <= limit.maximum:
            raise WagerError(f"wager {wager.id}: {wager.bet} amount {wager.amount} is outside "
                             f"the table limits {limit.minimum}-{limit.maximum}")


def check_wagers(rules: GameRules, wagers: Sequence[Wager], limits: Mapping[str, BetLimit],
                 progressive_stake: int = ProgressiveConfig().stake) -> None:
    """The wagers together: unique ids, area counts (MBS-R3P 3.9), 3CP Play equal to Ante."""
    duplicates = [wid for wid, n in Counter(w.id for w in wagers).items() if n > 1]
    if duplicates:
        raise WagerError(f"wager id {duplicates[0]!r} is used more than once")
    for bet, limit in limits.items():
        rules.bet(bet)
        if not 0 <= limit.minimum <= limit.maximum:
            raise WagerError(f"limits for {bet}: need 0 <= min <= max, got "
                             f"{limit.minimum}-{limit.maximum}")
    for wager in wagers:
        check_wager(rules, wager, limits, progressive_stake)
    if rules.max_wagers_per_area is not None:
        areas = Counter((w.position, w.bet) for w in wagers)
        for (position, bet), count in areas.items():
            if count > rules.max_wagers_per_area:
                raise WagerError(
                    f"position {position} holds {count} {bet} wagers; at most "
                    f"{rules.max_wagers_per_area} per playing area ({rules.max_wagers_clause})")
    if rules.family is Family.THREE_CARD_POKER:
        totals: dict[tuple[str, str], int] = defaultdict(int)
        for wager in wagers:
            totals[(wager.position, wager.bet)] += wager.amount
        for (position, bet), amount in totals.items():
            if bet == "play" and amount != totals.get((position, "ante"), 0):
                raise WagerError(f"position {position}: the Play wager must equal the Ante "
                                 f"(RWS-3CP 3.8.2), got play {amount} against ante "
                                 f"{totals.get((position, 'ante'), 0)}")


def check_seated(rules: GameRules, wagers: Iterable[Wager]) -> None:
    """RWS-NC3P 1.15: the Seated Player is "the Player sitting at the betting box", one per box.
    Wagers of two different players marked ``seated`` at one box are refused, naming both; a
    seated wager without a player id cannot be told apart from the seated player's own, so it
    is taken as his (settlement gives it the same priority either way). In the other games
    "seated" is a seat at the table, not at the box (RWS-3CP 3.12 "all other seated Players";
    MBS-R3P 3.10 "the seated Player who placed the wager first" on a position several seated
    Players bet on), so nothing is checked there.

    Not part of :func:`check_wagers`: the table checks it at placement (so a round it holds
    never has two), and a settlement must never fail on a round journaled before it did."""
    if rules.id is not GameId.RWS_NC3P:
        return
    seated: dict[str, Wager] = {}
    for wager in wagers:
        if not wager.seated or wager.player is None:
            continue
        first = seated.setdefault(wager.position, wager)
        if first.player != wager.player:
            raise WagerError(
                f"box {wager.position}: wagers {first.id} (player {first.player}) and "
                f"{wager.id} (player {wager.player}) are both marked seated; a box has one "
                f"Seated Player, the Player sitting at it ({rules.cite} 1.15)")


def check_hands(rules: GameRules, hands: Mapping[str, Sequence[Card]],
                needed: Iterable[str]) -> None:
    """Every hand is three cards at a known position, all from one deck, and each needed hand
    is present."""
    for position, cards in hands.items():
        if position not in rules.hand_positions:
            raise RequestError(f"{rules.cite} has no hand position {position!r}; hand "
                               f"positions are {', '.join(rules.hand_positions)}")
        if len(cards) != 3:
            raise HandError(f"hand {position!r} has {len(cards)} cards; a hand is three cards")
    ensure_single_deck(card for cards in hands.values() for card in cards)
    for position in needed:
        if position not in hands:
            raise RequestError(f"no hand for {position!r}, which has wagers to settle")
