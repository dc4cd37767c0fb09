"""Bet resolution for RWS Three Card Poker (RWS-3CP 3.8-3.13, 4.1-4.4)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from controller.games.cards import Rank, Suit
from controller.games.poker import PokerCategory, PokerValue
from controller.games.rules import GameRules
from controller.settlement.model import Component, Outcome
from controller.settlement.payout import Resolution, lose, outcome_of, push, win, winnings

_ANTE_BONUS_LINE = {
    PokerCategory.STRAIGHT_FLUSH: "bonus_straight_flush",
    PokerCategory.THREE_OF_A_KIND: "bonus_three_of_a_kind",
    PokerCategory.STRAIGHT: "bonus_straight",
}
_ACE_KING_QUEEN = (Rank.ACE, Rank.KING, Rank.QUEEN)


def _vs_dealer(rules: GameRules, bet: str, stake: int, player: PokerValue, dealer: PokerValue,
               unit: int) -> Resolution:
    spec = rules.bet(bet)
    line = spec.line("win")
    assert line.odds is not None
    if not dealer.dealer_qualifies():
        if bet == "play":
            return push("RWS-3CP 3.9.1", label="dealer does not qualify: no payment")
        return win(stake, line.odds, unit, "RWS-3CP 3.9.2, 4.1")
    if player.strength > dealer.strength:
        return win(stake, line.odds, unit, "RWS-3CP 3.10.1, 4.1")
    if player.strength < dealer.strength:
        return lose(stake, "RWS-3CP 3.10.2")
    return push("RWS-3CP 3.10.3, 3.5.4", label="stand-off")


def resolve_ante(rules: GameRules, stake: int, player: PokerValue, dealer: PokerValue,
                 played: bool, unit: int) -> Resolution:
    """Ante: lost on a fold (3.8.1); else against the dealer (3.9-3.10), plus the Ante Bonus of
    4.3 for a player who plays, irrespective of the dealer's hand (3.9.3, 3.10.4)."""
    if not played:
        return lose(stake, "RWS-3CP 3.8.1", label="fold")
    base = _vs_dealer(rules, "ante", stake, player, dealer, unit)
    key = _ANTE_BONUS_LINE.get(player.category)
    if key is None:
        return base
    line = rules.bet("ante").line(key)
    assert line.odds is not None
    bonus = winnings(stake, line.odds, unit)
    component = Component(f"ante_bonus_{key.removeprefix('bonus_')}", bonus,
                          f"RWS-3CP 3.10.4, {line.clause}")
    net = base.net + bonus
    return Resolution(outcome_of(net), net, base.rule, (*base.components, component))


def resolve_play(rules: GameRules, stake: int, player: PokerValue, dealer: PokerValue,
                 unit: int) -> Resolution:
    """Play: no payment when the dealer does not qualify (3.9.1); else against the dealer."""
    return _vs_dealer(rules, "play", stake, player, dealer, unit)


def resolve_pair_plus_3cp(rules: GameRules, stake: int, player: PokerValue, folded: bool,
                          unit: int) -> Resolution:
    """Pair Plus irrespective of the dealer (3.9.3, 3.10.4); lost on a fold (3.8.1)."""
    from controller.settlement.pictures import resolve_pair_plus

    if folded:
        return lose(stake, "RWS-3CP 3.8.1", label="fold")
    return resolve_pair_plus(rules, stake, player, unit)


@dataclass(frozen=True, slots=True)
class ProgressiveHand:
    """What the progressive pay table needs of a hand: its value and whether it is A-K-Q of
    spades or of another suit (RWS-3CP 4.4)."""

    value: PokerValue
    suit: Suit | None

    @property
    def line_key(self) -> str | None:
        value = self.value
        if value.category is PokerCategory.STRAIGHT_FLUSH:
            if value.kickers == _ACE_KING_QUEEN:
                return "akq_spades" if self.suit is Suit.SPADES else "akq_suited"
            return "straight_flush"
        if value.category is PokerCategory.THREE_OF_A_KIND:
            return "three_of_a_kind"
        if value.category is PokerCategory.STRAIGHT:
            return "straight"
        return None


def resolve_progressive(rules: GameRules, stake: int, hand: ProgressiveHand,
                        jackpot: int, envy_triggers: Sequence[str], seated: bool) -> Resolution:
    """Progressive: paid on the box's own hand irrespective of the dealer (3.11, 4.4), plus one
    Envy Bonus per top-two hand achieved by another player holding an Ante (3.12, 3.13) when
    this player is seated. ``envy_triggers`` are the pay-line keys of those other hands.

    A fold does not touch it: 3.8.1 lists what a fold loses (the Ante and the Pair Plus), and
    3.11/3.12 pay "any Player who has wagered on the Progressive" on the cards dealt.
    """
    spec = rules.bet("progressive")
    key = hand.line_key
    if key is None:
        base = lose(stake, spec.clause)
    else:
        line = spec.line(key)
        if line.jackpot_percent is not None:
            amount = jackpot * line.jackpot_percent // 100
        else:
            assert line.fixed is not None
            amount = line.fixed
        # 4.4's sums are paid *for* the stake (ProgressiveConfig): net is sum - stake.
        net = amount - stake
        base = Resolution(Outcome.WIN, net, f"RWS-3CP 3.11, {line.clause}",
                          (Component(key, net, f"RWS-3CP 3.11, {line.clause}"),))
    if not seated:
        return base
    envy = []
    for key in envy_triggers:
        line = spec.line(key)
        assert line.envy_bonus is not None
        envy.append(Component(f"envy_bonus_{key}", line.envy_bonus, "RWS-3CP 3.12, 4.4"))
    if not envy:
        return base
    net = base.net + sum(c.net for c in envy)
    return Resolution(outcome_of(net), net, base.rule, (*base.components, *envy))
