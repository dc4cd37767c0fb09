"""Exact house edge of every bet, by enumeration of all hands from one 52-card deck.

No simulation: every (player hand, dealer hand) pair of disjoint hands is counted, and every
wager is resolved by the same per-bet functions that :func:`controller.settlement.settle` calls,
so the figures check the settlement arithmetic as well as the pay tables.

* Three Pictures family: a hand's value depends only on its ranks, so the 22,100 x 18,424 pairs
  collapse to 455 x 455 rank multisets weighted by how many suit choices realise them.
* Three Card Poker: for each of the 22,100 player hands the dealer hands disjoint from it are
  counted by inclusion-exclusion over sorted strength lists (all hands, hands holding a given
  card, hands holding a given pair), which gives exact counts without the 407 million pairs.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import combinations, combinations_with_replacement
from math import comb

from controller.games import pictures, poker
from controller.games.cards import FULL_DECK, Rank
from controller.games.pictures import PicturesValue
from controller.games.poker import PokerValue
from controller.games.rules import Family, GameRules
from controller.settlement import pictures as pictures_bets
from controller.settlement import poker as poker_bets
from controller.settlement.model import ProgressiveConfig
from controller.settlement.payout import Resolution

STAKE = 1000
"""Even, so that 1 to 2 payouts are exact and rounding does not bias the edge."""
UNIT = 1
Q64 = poker.evaluate_values(12, 6, 4, False).strength
"""The Q-6-4 strategy: play Queen-6-4 or better, fold worse."""


@dataclass(frozen=True, slots=True)
class BetOdds:
    house_edge: Fraction
    win_probability: Fraction
    element_of_risk: Fraction | None = None
    note: str = ""

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"house_edge": float(self.house_edge),
                                  "win_probability": float(self.win_probability)}
        if self.element_of_risk is not None:
            out["element_of_risk"] = float(self.element_of_risk)
        if self.note:
            out["note"] = self.note
        return out


@cache
def _rank_multiset_pairs() -> dict[tuple[PicturesValue, PicturesValue], int]:
    """Weighted (player value, dealer value) pairs over all disjoint hand pairs."""
    multisets = [Counter(ms) for ms in combinations_with_replacement(range(13), 3)]
    values = [pictures.evaluate_ranks([Rank(r + 2) for r in ms.elements()]) for ms in multisets]
    weights: dict[tuple[PicturesValue, PicturesValue], int] = defaultdict(int)
    for p_ms, p_value in zip(multisets, values):
        p_ways = 1
        for rank, k in p_ms.items():
            p_ways *= comb(4, k)
        for d_ms, d_value in zip(multisets, values):
            ways = p_ways
            for rank, k in d_ms.items():
                ways *= comb(4 - p_ms.get(rank, 0), k)
                if not ways:
                    break
            if ways:
                weights[(p_value, d_value)] += ways
    return dict(weights)


@cache
def _poker_values() -> dict[PokerValue, int]:
    return dict(Counter(poker.evaluate(hand) for hand in combinations(FULL_DECK, 3)))


def _edge(weighted: list[tuple[int, Resolution]], wagered: int) -> BetOdds:
    total = sum(w for w, _ in weighted)
    ev = sum(w * r.net for w, r in weighted)
    wins = sum(w for w, r in weighted if r.net > 0)
    return BetOdds(Fraction(-ev, total * wagered), Fraction(wins, total))


_PICTURES_RESOLVERS: dict[str, Callable[[GameRules, str, PicturesValue, PicturesValue],
                                         Resolution]] = {
    "main": lambda r, b, p, d: pictures_bets.resolve_main(r, STAKE, p, d, UNIT),
    "win": lambda r, b, p, d: pictures_bets.resolve_live_win(r, STAKE, p, d, UNIT),
    "lose": lambda r, b, p, d: pictures_bets.resolve_live_lose(r, STAKE, p, d, UNIT),
    "tie": lambda r, b, p, d: pictures_bets.resolve_tie(r, STAKE, p, d, UNIT),
    "royal_pictures": lambda r, b, p, d: pictures_bets.resolve_royal_pictures(r, STAKE, p, UNIT),
    "three_pictures": lambda r, b, p, d: pictures_bets.resolve_three_pictures(
        r, b, STAKE, p, UNIT),
    "three_knights": lambda r, b, p, d: pictures_bets.resolve_three_pictures(
        r, b, STAKE, p, UNIT),
}
"""The settlement resolver of each Three Pictures bet, as a function of (player, dealer)."""


def _pictures_bet(rules: GameRules, bet: str) -> BetOdds:
    resolve = _PICTURES_RESOLVERS[bet]
    pairs = _rank_multiset_pairs()
    return _edge([(w, resolve(rules, bet, p, d)) for (p, d), w in pairs.items()], STAKE)


def _pair_plus(rules: GameRules) -> BetOdds:
    weighted = []
    for value, ways in _poker_values().items():
        if rules.family is Family.THREE_CARD_POKER:
            res = poker_bets.resolve_pair_plus_3cp(rules, STAKE, value, False, UNIT)
        else:
            res = pictures_bets.resolve_pair_plus(rules, STAKE, value, UNIT)
        weighted.append((ways, res))
    return _edge(weighted, STAKE)


def _dealer_relation_counts() -> dict[tuple[PokerValue, str], int]:
    """For every player value: how many (player hand, disjoint dealer hand) pairs fall in each
    relation: dealer does not qualify, qualifies and is lower, equal, higher."""
    hands = list(combinations(FULL_DECK, 3))
    strengths = [poker.evaluate(h).strength for h in hands]
    every = sorted(strengths)
    by_card: dict[object, list[int]] = defaultdict(list)
    by_pair: dict[tuple[object, object], list[int]] = defaultdict(list)
    for hand, s in zip(hands, strengths):
        a, b, c = hand
        for card in hand:
            by_card[card].append(s)
        for pair in ((a, b), (a, c), (b, c)):
            by_pair[pair].append(s)
    for lists in (by_card, by_pair):
        for values in lists.values():
            values.sort()
    q_min = poker.evaluate_values(12, 3, 2, False).strength  # Queen-high (RWS-3CP 3.9)

    def below(hand: tuple[object, ...], s_hand: int, threshold: int, inclusive: bool) -> int:
        """Dealer hands disjoint from ``hand`` with strength < threshold (<= if inclusive)."""
        cut = bisect.bisect_right if inclusive else bisect.bisect_left
        a, b, c = hand
        n = cut(every, threshold)
        n -= cut(by_card[a], threshold) + cut(by_card[b], threshold) + cut(by_card[c], threshold)
        n += (cut(by_pair[(a, b)], threshold) + cut(by_pair[(a, c)], threshold)
              + cut(by_pair[(b, c)], threshold))
        n -= 1 if (s_hand <= threshold if inclusive else s_hand < threshold) else 0
        return n

    total = comb(49, 3)
    counts: dict[tuple[PokerValue, str], int] = defaultdict(int)
    for hand, s in zip(hands, strengths):
        value = poker.evaluate(hand)
        lt_q = below(hand, s, q_min, False)
        lt_s = below(hand, s, s, False)
        le_s = below(hand, s, s, True)
        counts[(value, "no_qualify")] += lt_q
        counts[(value, "lower")] += max(0, lt_s - lt_q)
        counts[(value, "equal")] += le_s - max(lt_s, lt_q) if s >= q_min else 0
        counts[(value, "higher")] += total - max(le_s, lt_q)
    return dict(counts)


def _ante_play(rules: GameRules) -> BetOdds:
    representatives = {
        "no_qualify": poker.evaluate_values(5, 3, 2, False),
        "lower": poker.evaluate_values(12, 3, 2, False),
        "higher": poker.evaluate_values(14, 13, 12, True),
    }
    ev = wagered = pairs = wins = 0
    for (value, relation), n in _dealer_relation_counts().items():
        if not n:
            continue
        dealer = value if relation == "equal" else representatives[relation]
        plays = value.strength >= Q64
        ante = poker_bets.resolve_ante(rules, STAKE, value, dealer, plays, UNIT)
        net = ante.net
        if plays:
            net += poker_bets.resolve_play(rules, STAKE, value, dealer, UNIT).net
        ev += n * net
        wagered += n * (2 * STAKE if plays else STAKE)
        pairs += n
        wins += n if net > 0 else 0
    return BetOdds(Fraction(-ev, pairs * STAKE), Fraction(wins, pairs),
                   element_of_risk=Fraction(-ev, wagered),
                   note="Ante with Play and Ante Bonus, Q-6-4 strategy, per unit of Ante")


def _progressive(rules: GameRules, jackpot: int, stake: int) -> BetOdds:
    weighted = []
    for hand in combinations(FULL_DECK, 3):
        flush_suit = hand[0].suit if hand[0].suit is hand[1].suit is hand[2].suit else None
        progressive_hand = poker_bets.ProgressiveHand(poker.evaluate(hand), flush_suit)
        weighted.append((1, poker_bets.resolve_progressive(
            rules, stake, progressive_hand, jackpot, (), True)))
    odds = _edge(weighted, stake)
    return BetOdds(odds.house_edge, odds.win_probability,
                   note=f"stake {stake}, jackpot meter {jackpot} minor units; "
                        "Envy Bonuses not included")


def game_odds(rules: GameRules, jackpot: int = 0,
              progressive_stake: int = ProgressiveConfig().stake) -> dict[str, BetOdds]:
    """House edge of every bet of ``rules``."""
    if rules.family is Family.THREE_CARD_POKER:
        return {"ante": _ante_play(rules), "pair_plus": _pair_plus(rules),
                "progressive": _progressive(rules, jackpot, progressive_stake)}
    return {bet: (_pair_plus(rules) if bet == "pair_plus" else _pictures_bet(rules, bet))
            for bet in rules.bets}


def hand_class_counts() -> dict[str, int]:
    """Three Card Poker hand classes over all 22,100 hands (a check on the evaluator)."""
    counts: Counter[str] = Counter()
    for value, ways in _poker_values().items():
        counts[value.category.name.lower()] += ways
    return dict(counts)
