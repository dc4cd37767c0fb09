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
count for the Ante, Play and Pair Plus. The progressive wager is exact too: its result depends on
its own hand (3.11, 4.4) and, for a seated player, on the Envy Bonus hands (A-K-Q suited) of the
other boxes holding an Ante that the player does not own (3.12, 3.13); a fold does not touch it
(settlement: ``poker.resolve_progressive``). Every combination of the own hand's pay line and the
other hands' envy classes is looked at, counted only when some completion of every hand involved
is pairwise disjoint, and resolved by settlement's own function at the current meter.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import combinations

from controller.games import pictures, poker
from controller.games.cards import FULL_DECK, Card
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


_ENVY_LINES = ("akq_spades", "akq_suited")


def _line_groups(cards: Sequence[Card], unseen: Sequence[Card]
                 ) -> dict[str | None, tuple[poker_bets.ProgressiveHand, list[int]]]:
    """Completions of one hand grouped by progressive pay line: line -> (a hand, masks)."""
    missing = 3 - len(cards)
    groups: dict[str | None, tuple[poker_bets.ProgressiveHand, list[int]]] = {}
    for extra in combinations(unseen, max(missing, 0)):
        hand = (*cards, *extra)[:3]
        value = poker_bets.ProgressiveHand(
            poker.evaluate(hand), hand[0].suit if hand[0].suit is hand[1].suit is hand[2].suit
            else None)
        groups.setdefault(value.line_key, (value, []))[1].append(_mask(extra))
    return groups


def _disjoint(lists: Sequence[list[int]], used: int = 0) -> bool:
    """Some choice of one mask per list, pairwise disjoint (smallest lists first)."""
    if not lists:
        return True
    first, rest = lists[0], lists[1:]
    return any(mask & used == 0 and _disjoint(rest, used | mask) for mask in first)


def _progressive(rules: GameRules, wager: Wager, own: Sequence[Card],
                 others: Sequence[Sequence[Card]], unseen: Sequence[Card], jackpot: int
                 ) -> set[Outcome]:
    """Every realisable result of a progressive wager (stops at the second one)."""
    seated = wager.seated is not False
    own_groups = _line_groups(own, unseen)
    envy_classes: list[dict[str | None, list[int]]] = []
    if seated:
        for cards in others:
            classes: dict[str | None, list[int]] = {}
            for line, (_, masks) in _line_groups(cards, unseen).items():
                classes.setdefault(line if line in _ENVY_LINES else None, []).extend(masks)
            envy_classes.append(classes)
    found: set[Outcome] = set()

    def walk(index: int, chosen: list[tuple[str | None, list[int]]]) -> bool:
        if index == len(envy_classes):
            for hand, masks in own_groups.values():
                triggers = [key for key, _ in chosen if key is not None]
                outcome = poker_bets.resolve_progressive(rules, wager.amount, hand, jackpot,
                                                         triggers, seated).outcome
                if outcome in found:
                    continue
                if _disjoint(sorted([masks, *(m for _, m in chosen)], key=len)):
                    found.add(outcome)
                    if len(found) > 1:
                        return True
            return False
        return any(walk(index + 1, [*chosen, (key, masks)])
                   for key, masks in envy_classes[index].items())

    walk(0, [])
    return found


def decided_outcomes(rules: GameRules, hands: Mapping[str, Sequence[Card]],
                     unseen: Collection[Card], wagers: Sequence[Wager],
                     played: Mapping[str, bool | None] | None = None, jackpot: int = 0
                     ) -> dict[str, Outcome | None]:
    """Each wager's certain outcome, or None when the unseen cards can still change it.

    ``hands`` holds every hand being dealt (complete or not); ``played`` (RWS-3CP) says per Ante
    box whether the player played (True), folded (False) or has not decided (None);
    ``jackpot`` is the progressive meter the round would settle at (RWS-3CP 4.4).
    """
    played = played or {}
    if len(unseen) == len(FULL_DECK) and False not in played.values():
        # No card seen and nobody folded: every bet of the five rule sets can still both win
        # and lose (tests/controller/table/test_established.py checks that premise against
        # the exact search, bet by bet), so the 0.5-1.6 s search is skipped on the table
        # thread, where a restart before the deal would otherwise wait for it.
        return {wager.id: None for wager in wagers}
    return exact_outcomes(rules, hands, unseen, wagers, played, jackpot)


def exact_outcomes(rules: GameRules, hands: Mapping[str, Sequence[Card]],
                   unseen: Collection[Card], wagers: Sequence[Wager],
                   played: Mapping[str, bool | None], jackpot: int = 0
                   ) -> dict[str, Outcome | None]:
    """:func:`decided_outcomes` by the exhaustive search alone, whatever has been seen."""
    pool = sorted(unseen)
    cache: dict[str, dict[_Key, list[int]]] = {}

    def groups(position: str) -> dict[_Key, list[int]]:
        if position not in cache:
            cache[position] = _groups(rules, hands.get(position, ()), pool)
        return cache[position]

    result: dict[str, Outcome | None] = {}
    for wager in wagers:
        found: set[Outcome] = set()
        if wager.bet == "progressive":  # a fold does not touch it (3.8.1 lists Ante, Pair Plus)
            owners = {w.position for w in wagers if w.bet == "ante" and wager.player is not None
                      and w.player == wager.player}
            others = [hands.get(w, ()) for w in sorted({x.position for x in wagers
                                                         if x.bet == "ante"})
                      if w != wager.position and w not in owners]
            found = _progressive(rules, wager, hands.get(wager.position, ()), others, pool,
                                 jackpot)
            result[wager.id] = found.pop() if len(found) == 1 else None
            continue
        decision: bool | None = True
        if rules.family is Family.THREE_CARD_POKER and wager.bet != "play" and any(
                w.position == wager.position and w.bet == "ante" for w in wagers):
            decision = played.get(wager.position)  # Pair-Plus-only players never decide (3.8.2)
        if decision is False or decision is None:
            found.add(Outcome.LOSE)  # a fold loses Ante, Pair Plus and progressive (3.8.1)
        if decision is False:
            result[wager.id] = Outcome.LOSE
            continue
        if wager.bet in _TWO_HAND:
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
