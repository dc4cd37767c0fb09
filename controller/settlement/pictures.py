"""Bet resolution for the Three Pictures family (RWS-NC3P, MBS-3P, MBS-R3P, LIVE-3P).

Each function takes evaluated hands and a stake and says what the wager wins or loses, reading
odds and clauses from the rule set's tables. The odds enumeration calls these same functions.
"""

from __future__ import annotations

from controller.games.pictures import PicturesValue, RoyalCategory
from controller.games.poker import PokerCategory, PokerValue
from controller.games.rules import GameRules, TieRule
from controller.settlement.payout import Resolution, lose, push, win

_PAIR_PLUS_LINE = {
    PokerCategory.STRAIGHT_FLUSH: "straight_flush",
    PokerCategory.THREE_OF_A_KIND: "three_of_a_kind",
    PokerCategory.STRAIGHT: "straight",
    PokerCategory.FLUSH: "flush",
    PokerCategory.PAIR: "pair",
}


def _compare(rules: GameRules, bet: str, stake: int, winner: PicturesValue,
             loser: PicturesValue, unit: int) -> Resolution:
    """Even-money comparison bet won by ``winner`` beating ``loser``: 1 to 2 on six points."""
    spec = rules.bet(bet)
    if winner.strength > loser.strength:
        line = spec.line("win_six" if winner.points == 6 and not winner.is_three_pictures
                         else "win")
        assert line.odds is not None
        rule = spec.clause_for("win")
        if line.key == "win_six":
            rule = f"{rule}; {line.clause} ({line.label})"
        return win(stake, line.odds, unit, rule)
    if winner.strength < loser.strength:
        return lose(stake, spec.clause_for("lose"))
    return push(spec.clause_for("push"))


def resolve_main(rules: GameRules, stake: int, player: PicturesValue, dealer: PicturesValue,
                 unit: int) -> Resolution:
    """Initial/main wager: higher ranking wins, lower loses, same ranking returned (3.13)."""
    return _compare(rules, "main", stake, player, dealer, unit)


def resolve_live_win(rules: GameRules, stake: int, player: PicturesValue,
                     banker: PicturesValue, unit: int) -> Resolution:
    """LIVE-3P "Win": the player hand beats the Banker; push on a tie."""
    return _compare(rules, "win", stake, player, banker, unit)


def resolve_live_lose(rules: GameRules, stake: int, player: PicturesValue,
                      banker: PicturesValue, unit: int) -> Resolution:
    """LIVE-3P "Lose": the Banker beats the player hand; 1 to 2 when the Banker wins on 6."""
    return _compare(rules, "lose", stake, banker, player, unit)


def resolve_tie(rules: GameRules, stake: int, player: PicturesValue, dealer: PicturesValue,
                unit: int) -> Resolution:
    """Tie bet: same Point Total (RWS-NC3P 1.18, 3.13.4; MBS-3P 3.13.1; MBS-R3P 1.1.6), or the
    same ranking for LIVE-3P."""
    spec = rules.bet("tie")
    line = spec.line("tie")
    assert line.odds is not None
    if rules.tie_rule is TieRule.SAME_RANKING:
        tied = player.strength == dealer.strength
    else:
        tied = player.points == dealer.points
    if tied:
        return win(stake, line.odds, unit, f"{spec.clause}; {line.clause}")
    return lose(stake, spec.clause)


def resolve_three_pictures(rules: GameRules, bet: str, stake: int, player: PicturesValue,
                           unit: int) -> Resolution:
    """Three Pictures / 3 Knights bet: wins when the box's own hand is three pictures."""
    spec = rules.bet(bet)
    line = spec.paytable[0]
    assert line.odds is not None
    if player.is_three_pictures:
        return win(stake, line.odds, unit, f"{spec.clause}; {line.clause}")
    return lose(stake, spec.clause)


def resolve_royal_pictures(rules: GameRules, stake: int, player: PicturesValue,
                           unit: int) -> Resolution:
    """MBS-R3P Royal Pictures, independent of the main wager's outcome (1.1.4, 4.2)."""
    spec = rules.bet("royal_pictures")
    if player.royal is RoyalCategory.NONE:
        return lose(stake, spec.clause)
    line = spec.line(player.royal.value)
    assert line.odds is not None
    return win(stake, line.odds, unit, line.clause, label=line.key)


def resolve_pair_plus(rules: GameRules, stake: int, hand: PokerValue, unit: int) -> Resolution:
    """Pair Plus on the poker value of the box's own hand (LIVE-3P, and RWS-3CP 4.2)."""
    spec = rules.bet("pair_plus")
    key = _PAIR_PLUS_LINE.get(hand.category)
    if key is None:
        return lose(stake, spec.clause)
    line = spec.line(key)
    assert line.odds is not None
    return win(stake, line.odds, unit, line.clause, label=key)
