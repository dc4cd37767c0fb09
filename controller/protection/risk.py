"""Risk in money for a flagged shuffler (issue 25): what a one-pass machine is worth to a player.

A monitor that flags an order fault says the machine is biased; surveillance then needs to know
how much money that bias puts at risk, per bet of the table's game. This module estimates it by
Monte Carlo, with a seeded :class:`random.Random` passed in (no clock, no I/O, no globals), for
the machine the monitors test for: the one-pass ``m``-shelf hand-former of Diaconis, Fulman and
Holmes (2013), :func:`controller.games.shuffling.one_pass`, fed as the table feeds it
(:mod:`.feed`: a new deck, or the cards collected last round on top of the undealt ones, whose
order nobody saw). ``shelves=None`` is the fair machine (a uniform shuffle): the check against
the exact enumeration of :mod:`controller.analysis.odds`.

Per bet it gives the player's return per unit staked (positive: the player's edge)

* **blind**: every box the bet can stand on, every round, the house's own strategy where the
  game has a decision (RWS-3CP: play Queen-6-4 or better, as ``tablectl odds`` assumes). This
  is how the machine shifts the bet's hand-class probabilities, with no information used.
* **guessed**: a player who knows the machine and its input order and uses the machine's
  posterior, as DFH's guessing strategy does (the next card follows the rising and falling
  runs of the input order). What he knows at each decision comes from the dealing procedure:

  - *Before "No more bets"* (every bet of every game: RWS-NC3P 3.11, 5.8; MBS-3P 3.2, 5.5;
    MBS-R3P 3.2, 5.2; RWS-3CP 3.2, 5.2; LIVE-3P Game Play): no card of this shuffle is out, so he knows only the
    input: pack order for a new deck (a constant: the posterior of each box's hand is the same
    every round), or, with a collected feed, the previous round's hands in pick-up order (all
    shown at the settlement: MBS-3P 3.5, MBS-R3P 3.13, RWS-NC3P 3.13; LIVE-3P deals face up)
    and which cards were not dealt (their order unknown). He places a bet on a box only when
    its posterior predictive return is positive.
  - *RWS-3CP play or fold* (3.8): he has seen his own three cards, face down to the others
    (3.6, 3.7), and knows his box's place in the deal. He plays when the machine's posterior
    return of playing, given his box and his hand's class and top card, beats folding.
  - Nothing else: the Three Pictures games have no decision after the deal, and every other
    box's cards are face down until the reveal.

Both posteriors are themselves Monte Carlo: the pre-bet one as the mean over training deals
(new deck: the input is the same every round) or, with a collected feed (the input changes
every round), the mean over ``inner`` fresh machine deals from the known input with the undealt
part in random order, shrunk toward the training mean with equal weight (a few dozen deals
alone would make the decision mostly noise);
the play rule as a table learned on training deals. A player with the exact posterior would do
at least as well, so the guessed figure is a lower bound on the risk.

Money stays integral: each wager is ``STAKE`` minor units (the progressive its configured
stake), every net is an integer from the settlement functions, and the figures per 100.00
staked are the exact ratio of integer sums rounded to the nearest minor unit, halves to even.
The standard error is the ratio estimator's, from each deal's totals.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

from controller.errors import TablectlError
from controller.games import pictures, poker
from controller.games.cards import FULL_DECK
from controller.games.pictures import PicturesValue
from controller.games.poker import PokerValue
from controller.games.rules import Family, GameId, GameRules
from controller.games.shuffling import one_pass
from controller.protection.feed import DECK, Feed, input_order
from controller.settlement import pictures as pictures_bets
from controller.settlement import poker as poker_bets
from controller.settlement.model import ProgressiveConfig
from controller.table.layout import DealingDevice
from controller.table.procedure import burn_cards, deal_plan

STAKE = 1000
"""Minor units per wager: even, so a 1 to 2 payout is exact (as in ``tablectl odds``)."""
PER_HUNDRED = 10_000
"""100.00 in minor units: the money figures are per 100.00 staked."""
DEFAULT_DEALS = 3000
DEFAULT_INNER = 60
Q64 = poker.evaluate_values(12, 6, 4, False).strength
"""The house's play rule in ``tablectl odds``: play Queen-6-4 or better."""


class RiskError(TablectlError):
    """A risk estimate asked for with parameters it cannot have (no deals, no shelves)."""


@dataclass(frozen=True, slots=True)
class Machine:
    """A shuffler as the monitors model it: ``shelves`` of a one-pass machine (``None``: fair),
    fed as ``feed`` says."""

    shelves: int | None
    feed: Feed

    def shuffle(self, fed: list[int], rng: random.Random) -> list[int]:
        if self.shelves is None:
            deck = list(fed)
            rng.shuffle(deck)
            return deck
        return one_pass(list(fed), self.shelves, rng.randrange)

    @property
    def name(self) -> str:
        return "fair" if self.shelves is None else f"one-pass-{self.shelves}"


@dataclass(frozen=True, slots=True)
class Return:
    """Integer sums over the deals: the net won (minor units) and the amount staked."""

    net: int
    staked: int
    se: float
    """Standard error of ``net / staked`` (per unit staked)."""

    @property
    def per_unit(self) -> Fraction:
        return Fraction(self.net, self.staked) if self.staked else Fraction(0)

    @property
    def percent(self) -> float:
        return float(self.per_unit * 100)

    @property
    def per_hundred(self) -> int:
        """Minor units won per 100.00 staked, rounded to the nearest unit, halves to even."""
        return round(self.per_unit * PER_HUNDRED)

    @property
    def se_per_hundred(self) -> int:
        return round(self.se * PER_HUNDRED)

    def as_json(self) -> dict[str, Any]:
        return {"percent": round(self.percent, 3), "se_percent": round(self.se * 100, 3),
                "per_100_00": self.per_hundred, "se_per_100_00": self.se_per_hundred,
                "net": self.net, "staked": self.staked}


@dataclass(frozen=True, slots=True)
class BetRisk:
    """One bet: the fair return (exact enumeration), and the machine's blind and guessed."""

    bet: str
    fair: Fraction
    """The player's return per unit staked on a fair shuffle: minus the house edge."""
    blind: Return
    guessed: Return
    offered: int
    """Chances to bet over the deals (boxes the bet can stand on, times deals)."""
    taken: int
    """How many of them the guessing player took."""

    def as_json(self) -> dict[str, Any]:
        return {"bet": self.bet, "fair_percent": round(float(self.fair * 100), 3),
                "fair_per_100_00": round(self.fair * PER_HUNDRED),
                "blind": self.blind.as_json(), "guessed": self.guessed.as_json(),
                "offered": self.offered, "taken": self.taken}


@dataclass(frozen=True, slots=True)
class RiskReport:
    game: GameId
    machine: Machine
    deals: int
    boxes: int
    seed: int | None
    bets: tuple[BetRisk, ...]

    def as_json(self) -> dict[str, Any]:
        return {"game": self.game.value, "machine": self.machine.name,
                "feed": self.machine.feed.value, "deals": self.deals, "boxes": self.boxes,
                "seed": self.seed, "stake": STAKE, "bets": [b.as_json() for b in self.bets]}


# -- the deal ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Layout:
    """Which places of the machine's output each hand takes, in dealing order (the table's
    own ``deal_plan``: sets of three from a shuffler; LIVE-3P burns 4, then one card at a
    time, P1, P2, P3, Banker, three rounds)."""

    positions: tuple[str, ...]
    places: tuple[tuple[int, ...], ...]
    dealer: str

    @property
    def cards(self) -> int:
        return max(max(p) for p in self.places) + 1


def layout(rules: GameRules, boxes: int | None = None) -> Layout:
    """The first ``boxes`` boxes receive (default: every box; LIVE-3P always deals its three
    Player hands)."""
    device = DealingDevice.LIVE if rules.id is GameId.LIVE_3P else DealingDevice.SHUFFLER
    receiving = rules.positions if boxes is None else rules.positions[:boxes]
    if not receiving:
        raise RiskError(f"{rules.cite}: at least one box must receive cards")
    place = burn_cards(device)
    places: dict[str, list[int]] = defaultdict(list)
    for step in deal_plan(rules, device, receiving):
        for _ in range(step.cards):
            places[step.position].append(place)
            place += 1
    positions = (*receiving, rules.dealer)
    return Layout(positions, tuple(tuple(places[p]) for p in positions), rules.dealer)


@cache
def _pictures_value(hand: tuple[int, ...]) -> PicturesValue:
    return pictures.evaluate_ranks([FULL_DECK[i].rank for i in hand])


@cache
def _poker_value(hand: tuple[int, ...]) -> PokerValue:
    return poker.evaluate([FULL_DECK[i] for i in hand])


@cache
def _progressive_hand(hand: tuple[int, ...]) -> poker_bets.ProgressiveHand:
    cards = [FULL_DECK[i] for i in hand]
    suit = cards[0].suit if cards[0].suit is cards[1].suit is cards[2].suit else None
    return poker_bets.ProgressiveHand(_poker_value(hand), suit)


def _key(hand: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(hand))


Nets = dict[tuple[str, str], int]
"""(bet, position) -> the net in minor units of one wager there."""


@dataclass(frozen=True, slots=True)
class _Game:
    """A game's bets resolved by the settlement engine's own per-bet functions."""

    rules: GameRules
    layout: Layout
    bets: tuple[str, ...]
    stakes: dict[str, int]

    def where(self, bet: str) -> tuple[str, ...]:
        allowed = self.rules.bet(bet).positions
        return tuple(p for p in self.layout.positions if p in allowed)

    def hands(self, order: Sequence[int]) -> dict[str, tuple[int, ...]]:
        return {p: _key([order[i] for i in places])
                for p, places in zip(self.layout.positions, self.layout.places)}

    def nets(self, hands: dict[str, tuple[int, ...]]) -> tuple[Nets, dict[str, tuple[int, int]]]:
        """Each bet's net at each position; for RWS-3CP also each box's Ante net if it plays
        and if it folds (``(played, folded)``)."""
        rules, dealer = self.rules, self.layout.dealer
        out: Nets = {}
        ante: dict[str, tuple[int, int]] = {}
        if rules.family is Family.THREE_CARD_POKER:
            dealer_value = _poker_value(hands[dealer])
            progressive_stake = self.stakes["progressive"]
            for p in self.where("ante"):
                value = _poker_value(hands[p])
                played = (poker_bets.resolve_ante(rules, STAKE, value, dealer_value, True, 1).net
                          + poker_bets.resolve_play(rules, STAKE, value, dealer_value, 1).net)
                ante[p] = (played, -STAKE)
                out[("ante", p)] = played if value.strength >= Q64 else -STAKE
                out[("pair_plus", p)] = poker_bets.resolve_pair_plus_3cp(
                    rules, STAKE, value, False, 1).net
                out[("progressive", p)] = poker_bets.resolve_progressive(
                    rules, progressive_stake, _progressive_hand(hands[p]), 0, (), False).net
            return out, ante
        dealer_value = _pictures_value(hands[dealer])
        for bet in self.bets:
            for p in self.where(bet):
                value = _pictures_value(hands[p])
                out[(bet, p)] = _PICTURES[bet](rules, bet, value, dealer_value, hands[p])
        return out, ante


_PICTURES: dict[str, Callable[[GameRules, str, PicturesValue, PicturesValue, tuple[int, ...]],
                              int]] = {
    "main": lambda r, b, v, d, h: pictures_bets.resolve_main(r, STAKE, v, d, 1).net,
    "win": lambda r, b, v, d, h: pictures_bets.resolve_live_win(r, STAKE, v, d, 1).net,
    "lose": lambda r, b, v, d, h: pictures_bets.resolve_live_lose(r, STAKE, v, d, 1).net,
    "tie": lambda r, b, v, d, h: pictures_bets.resolve_tie(r, STAKE, v, d, 1).net,
    "royal_pictures": lambda r, b, v, d, h: pictures_bets.resolve_royal_pictures(
        r, STAKE, v, 1).net,
    "three_pictures": lambda r, b, v, d, h: pictures_bets.resolve_three_pictures(
        r, b, STAKE, v, 1).net,
    "three_knights": lambda r, b, v, d, h: pictures_bets.resolve_three_pictures(
        r, b, STAKE, v, 1).net,
    "pair_plus": lambda r, b, v, d, h: pictures_bets.resolve_pair_plus(
        r, STAKE, _poker_value(h), 1).net,
}
"""The settlement function of each Three Pictures bet (as ``controller.analysis.odds``)."""


def _game(rules: GameRules, boxes: int | None) -> _Game:
    if rules.family is Family.THREE_CARD_POKER:
        bets: tuple[str, ...] = ("ante", "pair_plus", "progressive")
    else:
        bets = tuple(rules.bets)
    stakes = {bet: STAKE for bet in bets}
    if "progressive" in stakes:
        stakes["progressive"] = ProgressiveConfig().stake
    return _Game(rules, layout(rules, boxes), bets, stakes)


# -- the rounds -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Round:
    """One round's deal and what the player knew before it: the input order (the collected
    cards in pick-up order, then the undealt ones, whose order he does not know: ``known``
    says how many lead the input in an order he knows)."""

    order: list[int]
    fed: list[int]
    known: int


def _rounds(game: _Game, machine: Machine, rng: random.Random) -> Iterator[_Round]:
    """The machine's rounds, each fed as the table feeds it after the round before."""
    dealt_sets: list[list[int]] = []
    undealt: list[int] = list(range(DECK))
    used = game.layout.cards
    while True:
        if machine.feed is Feed.NEW_DECK or not dealt_sets:
            fed, known = list(range(DECK)), DECK
        else:
            fed = input_order(machine.feed, dealt_sets, undealt)
            known = sum(len(s) for s in dealt_sets)
        order = machine.shuffle(fed, rng)
        yield _Round(order, fed, known if machine.feed is not Feed.NEW_DECK else DECK)
        dealt_sets = [[order[i] for i in places] for places in game.layout.places]
        dealt = {card for cards in dealt_sets for card in cards}
        undealt = [card for card in order[:used] if card not in dealt] + order[used:]


def _hand_class(hand: tuple[int, ...]) -> tuple[int, int]:
    value = _poker_value(hand)
    return (int(value.strength >= Q64), value.strength // 16 ** 2)  # class and top card


class _PlayRule:
    """RWS-3CP 3.8: play or fold, learned from training deals of the machine, keyed on what the
    player sees (his box, his hand's class and top card)."""

    def __init__(self) -> None:
        self.gain: dict[tuple[str, tuple[int, int]], list[int]] = defaultdict(lambda: [0, 0])

    def learn(self, box: str, hand: tuple[int, ...], played: int, folded: int) -> None:
        cell = self.gain[(box, _hand_class(hand))]
        cell[0] += played - folded
        cell[1] += 1

    def plays(self, box: str, hand: tuple[int, ...]) -> bool:
        cell = self.gain.get((box, _hand_class(hand)))
        if cell is None or cell[1] < 20:
            return _poker_value(hand).strength >= Q64
        return cell[0] > 0


class _Sums:
    """Per-deal totals of one bet under one strategy, for the ratio and its standard error."""

    def __init__(self) -> None:
        self.deals: list[tuple[int, int]] = []

    def add(self, net: int, staked: int) -> None:
        self.deals.append((net, staked))

    def result(self) -> Return:
        net = sum(n for n, _ in self.deals)
        staked = sum(s for _, s in self.deals)
        n = len(self.deals)
        if not staked or n < 2:
            return Return(net, staked, 0.0)
        ratio = net / staked
        spread = sum((a - ratio * s) ** 2 for a, s in self.deals)
        return Return(net, staked, math.sqrt(spread * n / (n - 1)) / staked)


def estimate(rules: GameRules, machine: Machine, rng: random.Random, *,
             deals: int = DEFAULT_DEALS, boxes: int | None = None, inner: int = DEFAULT_INNER,
             fair: dict[str, Fraction] | None = None, seed: int | None = None) -> RiskReport:
    """The blind and guessed return of every bet of ``rules`` on ``machine``, over ``deals``
    test deals after as many training deals; ``fair`` is each bet's exact fair return
    (``-house_edge`` from :func:`controller.analysis.odds.game_odds`), reported beside it (0
    where not given).
    ``seed`` is only recorded (the caller seeds ``rng``)."""
    if deals < 2:
        raise RiskError(f"at least 2 deals are needed for a standard error, got {deals}")
    if machine.shelves is not None and machine.shelves < 1:
        raise RiskError(f"a one-pass machine needs at least one shelf, got {machine.shelves}")
    if machine.feed is Feed.UNKNOWN:
        raise RiskError("the feed is unknown: the machine's bias cannot be put in money")
    game = _game(rules, boxes)
    rounds = _rounds(game, machine, rng)
    next(rounds)  # the first round of a collected feed has no round before it
    play = _PlayRule()
    prior: dict[tuple[str, str], int] = defaultdict(int)
    for _ in range(deals):
        hands = game.hands(next(rounds).order)
        nets, ante = game.nets(hands)
        for key, net in nets.items():
            prior[key] += net
        for box, (played, folded) in ante.items():
            play.learn(box, hands[box], played, folded)

    blind = {bet: _Sums() for bet in game.bets}
    guessed = {bet: _Sums() for bet in game.bets}
    offered: dict[str, int] = defaultdict(int)
    taken: dict[str, int] = defaultdict(int)
    for _ in range(deals):
        deal = next(rounds)
        if machine.feed is Feed.NEW_DECK:
            predicted = prior
        else:  # this round's input, shrunk toward the training mean by as many deals again
            inner_sums = _predict(game, machine, deal, play, inner, rng)
            predicted = {key: inner_sums[key] * deals + prior[key] * inner for key in prior}
        hands = game.hands(deal.order)
        nets, ante = game.nets(hands)
        for bet in game.bets:
            stake = game.stakes[bet]
            b_net = g_net = g_staked = 0
            for p in game.where(bet):
                net = nets[(bet, p)]
                b_net += net
                offered[bet] += 1
                if predicted[(bet, p)] > 0:
                    taken[bet] += 1
                    if bet == "ante":
                        played, folded = ante[p]
                        net = played if play.plays(p, hands[p]) else folded
                    g_net += net
                    g_staked += stake
            blind[bet].add(b_net, stake * len(game.where(bet)))
            guessed[bet].add(g_net, g_staked)
    fair = fair or {}
    return RiskReport(rules.id, machine, deals, len(game.layout.positions) - 1, seed, tuple(
        BetRisk(bet, fair.get(bet, Fraction(0)), blind[bet].result(), guessed[bet].result(),
                offered[bet], taken[bet]) for bet in game.bets))


def _predict(game: _Game, machine: Machine, deal: _Round, play: _PlayRule, inner: int,
             rng: random.Random) -> dict[tuple[str, str], int]:
    """The posterior predictive net of each (bet, position) from what the player knows
    before the bets: the known head of the input, the rest in a random order."""
    head, tail = deal.fed[:deal.known], deal.fed[deal.known:]
    total: dict[tuple[str, str], int] = defaultdict(int)
    for _ in range(inner):
        rest = list(tail)
        rng.shuffle(rest)
        hands = game.hands(machine.shuffle(head + rest, rng))
        nets, ante = game.nets(hands)
        for key, net in nets.items():
            total[key] += net
        for box, (played, folded) in ante.items():
            total[("ante", box)] += (played if play.plays(box, hands[box]) else folded) \
                - nets[("ante", box)]
    return total
