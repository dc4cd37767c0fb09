"""Is an outcome established? (RWS-NC3P 5.4, MBS-R3P 5.13: "any of the available Bets has
conclusively won or lost".)

"Conclusively" is taken exactly: a wager is decided when EVERY possible completion of the unseen
cards gives it the same outcome. The unseen cards are the 52 minus every card seen this round
(hands, burns, ignored cards): the controller knows nothing about their order and asks nothing.

Method: for each incomplete hand enumerate its completions from the unseen cards (at most
C(49,3) = 18,424), grouped by the value that settlement reads (a Three Pictures value, a poker
value). A wager on one hand is decided when all its hand's groups give one outcome. A wager that
compares two hands (main, Tie, Win/Lose, Ante, Play) looks at pairs of groups; a pair counts only
when it is realisable, i.e. some completion of the one is disjoint from some completion of the
other (both hands may be waiting for the same card). The search stops at the second outcome.

Choices (docs/table.md): only WIN and LOSE establish an outcome (a push or a return is not
"won or lost"); an RWS-3CP player who has not yet decided may still fold (3.8.1), so both branches
count; the progressive wager is decided only in the plain cases (own hand certain to pay, or the
own hand complete and no other Ante box able to make A-K-Q suited): conservative, never wrong
about a wager it calls decided.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import combinations

from controller.games import pictures, poker
from controller.games.cards import Card
from controller.games.rules import Family, GameRules
from controller.settlement import pictures as pictures_bets
from controller.settlement import poker as poker_bets
from controller.settlement.model import Outcome, Wager

_Key = tuple[object, ...]
_TWO_HAND = frozenset({"main", "tie", "win", "lose", "ante", "play"})


def _mask(cards: Sequence[Card]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card.index
    return mask


def _key(rules: GameRules, cards: Sequence[Card]) -> _Key:
    if rules.family is Family.THREE_CARD_POKER:
        hand = poker_bets.ProgressiveHand(
            poker.evaluate(cards),
            cards[0].suit if cards[0].suit is cards[1].suit is cards[2].suit else None)
        return (hand.value, hand.line_key)
    return (pictures.evaluate(cards), poker.evaluate(cards))


def _groups(rules: GameRules, cards: Sequence[Card], unseen: Sequence[Card]
            ) -> dict[_Key, list[int]]:
    """Completions of one hand grouped by value: key -> bitmasks of the added cards."""
    missing = 3 - len(cards)
    groups: dict[_Key, list[int]] = {}
    if missing <= 0:
        groups[_key(rules, tuple(cards)[:3])] = [0]
        return groups
    for extra in combinations(unseen, missing):
        groups.setdefault(_key(rules, (*cards, *extra)), []).append(_mask(extra))
    return groups


def _realisable(first: list[int], second: list[int]) -> bool:
    return any(a & b == 0 for a in first for b in second)


def _one_hand(rules: GameRules, bet: str, stake: int, key: _Key) -> Outcome:
    if rules.family is Family.THREE_CARD_POKER:
        return pictures_bets.resolve_pair_plus(rules, stake, key[0], 1).outcome  # type: ignore[arg-type]
    value, pk = key
    if bet == "pair_plus":
        return pictures_bets.resolve_pair_plus(rules, stake, pk, 1).outcome  # type: ignore[arg-type]
    if bet == "royal_pictures":
        return pictures_bets.resolve_royal_pictures(rules, stake, value, 1).outcome  # type: ignore[arg-type]
    return pictures_bets.resolve_three_pictures(rules, bet, stake, value, 1).outcome  # type: ignore[arg-type]


def _two_hands(rules: GameRules, bet: str, stake: int, own: _Key, dealer: _Key) -> Outcome:
    if rules.family is Family.THREE_CARD_POKER:
        mine, theirs = own[0], dealer[0]
        if bet == "ante":
            return poker_bets.resolve_ante(rules, stake, mine, theirs, True, 1).outcome  # type: ignore[arg-type]
        return poker_bets.resolve_play(rules, stake, mine, theirs, 1).outcome  # type: ignore[arg-type]
    mine, theirs = own[0], dealer[0]
    resolver = {"main": pictures_bets.resolve_main, "win": pictures_bets.resolve_live_win,
                "lose": pictures_bets.resolve_live_lose, "tie": pictures_bets.resolve_tie}[bet]
    return resolver(rules, stake, mine, theirs, 1).outcome  # type: ignore[arg-type]


def _outcomes_two(rules: GameRules, wager: Wager, own: dict[_Key, list[int]],
                  dealer: dict[_Key, list[int]], found: set[Outcome]) -> None:
    for own_key, own_masks in own.items():
        for dealer_key, dealer_masks in dealer.items():
            outcome = _two_hands(rules, wager.bet, wager.amount, own_key, dealer_key)
            if outcome not in found and _realisable(own_masks, dealer_masks):
                found.add(outcome)
                if len(found) > 1:
                    return


def _progressive(wager: Wager, own: dict[_Key, list[int]],
                 others: Iterator[dict[_Key, list[int]]]) -> Outcome | None:
    pays = {key[1] is not None for key in own}
    if pays == {True}:
        return Outcome.WIN
    if len(own) == 1 and pays == {False}:
        if not any(key[1] in ("akq_spades", "akq_suited") for other in others for key in other):
            return Outcome.LOSE
    return None


def decided_outcomes(rules: GameRules, hands: Mapping[str, Sequence[Card]],
                     unseen: Collection[Card], wagers: Sequence[Wager],
                     played: Mapping[str, bool | None] | None = None
                     ) -> dict[str, Outcome | None]:
    """Each wager's certain outcome, or None when the unseen cards can still change it.

    ``hands`` holds every hand being dealt (complete or not); ``played`` (RWS-3CP) says per Ante
    box whether the player played (True), folded (False) or has not decided (None).
    """
    played = played or {}
    pool = sorted(unseen)
    cache: dict[str, dict[_Key, list[int]]] = {}

    def groups(position: str) -> dict[_Key, list[int]]:
        if position not in cache:
            cache[position] = _groups(rules, hands.get(position, ()), pool)
        return cache[position]

    result: dict[str, Outcome | None] = {}
    for wager in wagers:
        found: set[Outcome] = set()
        decision: bool | None = True
        if rules.family is Family.THREE_CARD_POKER and wager.bet != "play" and any(
                w.position == wager.position and w.bet == "ante" for w in wagers):
            decision = played.get(wager.position)  # Pair-Plus-only players never decide (3.8.2)
        if decision is False or decision is None:
            found.add(Outcome.LOSE)  # a fold loses Ante, Pair Plus and progressive (3.8.1)
        if decision is False:
            result[wager.id] = Outcome.LOSE
            continue
        if wager.bet == "progressive":
            others = (groups(w.position) for w in wagers
                      if w.bet == "ante" and w.position != wager.position)
            certain = _progressive(wager, groups(wager.position), others)
            if certain is not None:
                found.add(certain)
            else:
                found.update((Outcome.WIN, Outcome.LOSE))
        elif wager.bet in _TWO_HAND:
            _outcomes_two(rules, wager, groups(wager.position), groups(rules.dealer), found)
        else:
            for key in groups(wager.position):
                found.add(_one_hand(rules, wager.bet, wager.amount, key))
                if len(found) > 1:
                    break
        result[wager.id] = found.pop() if len(found) == 1 else None
    return result


def is_established(decided: Mapping[str, Outcome | None]) -> bool:
    """RWS-NC3P 5.4.1 / MBS-R3P 5.13.2: some wager has conclusively won or lost."""
    return any(outcome in (Outcome.WIN, Outcome.LOSE) for outcome in decided.values())
