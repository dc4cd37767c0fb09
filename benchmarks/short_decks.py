"""Game protection at short decks (issues 25 and 38), the power part of
``benchmarks/protection.py`` (run from there: ``--only goals``, ``lr-calibration``, ``lr-check``,
``lr-power``): simulated tables dealing 3 to 27 cards a deck, the shuffler fed a new deck or the
cards the table collected.

* :func:`goals`: issue 25's goals at every table size: the 10-shelf one-pass machine within 5
  decks (and the likelihood information a deck carries, so the optimal test's figure stands
  beside it), a card stuck at one position within 10, a duplicated card within 5, and false
  alarms per monitor over fair decks.
* :func:`lr_calibration` and :func:`lr_check`: ``limits.ONE_PASS_LR_ALONE``, the likelihood
  CUSUMs' limits for 1e-4 false alarms a fair deck (importance sampling), and the rate the
  monitor's limits give, its shelf counts together, at every size.
* :func:`lr_window_calibration`: ``limits.ONE_PASS_LR_WINDOW``, the window test's limits (the
  fair tail of five decks' sum by importance sampling, :mod:`testbed.fair_tail`).
* :func:`lr_power`: ``one_pass_lr`` against the 10-shelf machine fed a new deck at 9, 12, 15
  and 21 cards, beside the bound (the exact 10-shelf likelihood test on that many decks at
  1e-4) and a CUSUM alone; :func:`lr_fair_count`: its false alarms counted over fair decks.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable
from typing import Any

from controller.protection import Guard, MonitorId, limits
from controller.protection.monitors import OnePassLikelihood
from controller.protection.feed import Feed, input_order
from controller.protection.likelihood import collected_ratio, log_ratio
from controller.protection.sequential import FALSE_ALARM_RATE
from firmware_sim.shuffle_models import ShuffleModel, Shuffler, one_pass
from testbed.fair_tail import fair_tail_limit, window_sums


ORDER_MONITORS = ("sortedness", "one_pass", "one_pass_lr")
SIZES: tuple[int | str, ...] = (3, 4, 5, 6, 7, 8, 9, "mixed")
"""Three-card sets a deck: 9 to 27 cards, and "mixed": 1 to 6 sets at random (3 to 18 cards,
as the bench's random players deal)."""


class Table:
    """A simulated table: a shuffler fed as ``feed`` says, dealing ``sets`` three-card sets a
    deck into a guard that assumes the same feed."""

    def __init__(self, model: ShuffleModel, sets: int | str, feed: Feed, seed: int) -> None:
        self.rng = random.Random(seed)
        self.shuffler = Shuffler(model, self.rng.randrange)
        self.guard = Guard(feed=feed)
        self.sets, self.feed = sets, feed
        self.fed: list[int] | None = None

    def deal(self) -> tuple[list[Any], list[int | None], int | None]:
        """One deck: its findings, the dealt cards as the likelihood reads them (their input
        places; ``None`` for an undealt-part card of a collected feed) and how many collected
        cards were fed (``None``: every place known, a new deck)."""
        order = self.shuffler.order(self.fed)
        sets = self.sets if isinstance(self.sets, int) else 1 + self.rng.randrange(6)
        found = self.guard.shuffle(len(order), 52)
        reference = self.guard.deck.reference if self.guard.deck is not None else None
        dealt = []
        for hand in range(sets):
            cards = self.shuffler.form(list(order[3 * hand:3 * hand + 3]))
            dealt.append(tuple(cards))
            found += self.guard.cards(cards)
        self.fed = input_order(self.feed, dealt, order[3 * sets:])
        cards = [c for hand in dealt for c in hand]
        if reference is None:
            return found, [], 0
        if reference.places is None:
            return found, list(cards), None
        return found, [reference.places.get(c) for c in cards], reference.fed


def goals(runs: int, fair_decks: int, seed: int,
          feeds: tuple[Feed, ...] = (Feed.NEW_DECK, Feed.COLLECTED),
          sizes: tuple[int | str, ...] = SIZES) -> dict[str, Any]:
    return {feed.value: {str(size): _goal_row(size, feed, runs, fair_decks, seed)
                         for size in sizes} for feed in feeds}


def _first_decks(model: ShuffleModel, size: int | str, feed: Feed, horizon: int,
                 seed: int) -> dict[str, int]:
    table = Table(model, size, feed, seed)
    first: dict[str, int] = {}
    for _ in range(horizon):
        for f in table.deal()[0]:
            first.setdefault(f.monitor.value, f.decks)
    for f in table.guard.finish():
        first.setdefault(f.monitor.value, f.decks)
    return first


def _goal_row(size: int | str, feed: Feed, runs: int, fair_decks: int,
              seed: int) -> dict[str, Any]:
    row: dict[str, Any] = {}
    flagged = {m: 0 for m in ("any_order", *ORDER_MONITORS)}
    for run in range(runs):
        first = _first_decks(ShuffleModel.ONE_PASS_10, size, feed, 6, seed * 7919 + run)
        for m in ORDER_MONITORS:
            flagged[m] += m in first and first[m] <= 5
        flagged["any_order"] += any(first.get(m, 99) <= 5 for m in ORDER_MONITORS)
    row["one_pass_10_within_5"] = {m: n / runs for m, n in flagged.items()}
    nats = _information(size, feed, ShuffleModel.ONE_PASS_10, 10, max(runs, 200), seed)
    row["one_pass_10_nats_per_deck"] = round(nats, 4)
    row["one_pass_10_optimal_decks"] = round(math.log(2e4) / nats, 1) if nats > 0 else None
    for model, horizon, within, names in (
            (ShuffleModel.STUCK_POSITION, 11, 10, ("position_run",)),
            (ShuffleModel.DUPLICATE_CARD, 6, 5, ("ledger",))):
        hit = 0
        for run in range(runs):
            first = _first_decks(model, size, feed, horizon, seed * 104_729 + run)
            hit += any(first.get(m, 999) <= within for m in names)
        row[f"{model.value}_within_{within}"] = hit / runs
    if isinstance(size, int):
        d = 3 * size
        row["duplicate_card_bound_within_5"] = round(1 - (1 - d * (d - 1) / (52 * 51)) ** 5, 3)
    alarms = dict.fromkeys((m.value for m in MonitorId), 0)
    table = Table(ShuffleModel.FAIR, size, feed, seed * 31 + 7)
    for _ in range(fair_decks):
        for f in table.deal()[0]:
            alarms[f.monitor.value] += 1
    row["fair_decks"] = fair_decks
    row["false_alarms_per_10000"] = {m: round(n / fair_decks * 1e4, 2)
                                     for m, n in alarms.items()}
    return row


def _information(size: int | str, feed: Feed, model: ShuffleModel, shelves: int, decks: int,
                 seed: int) -> float:
    """Mean log-likelihood ratio per deck (one-pass ``shelves`` against fair) of the dealt
    cards with a known input place, the machine being ``model``: the information the optimal
    sequential test works with (Wald: about log(1/rate) / this many decks to decide)."""
    table = Table(model, size, feed, seed * 13 + 5)
    table.deal()  # the first deck of a collected feed has no reference
    total = 0.0
    for _ in range(decks):
        _, tokens, collected = table.deal()
        if not tokens:
            continue
        if collected is None:
            total += log_ratio([t for t in tokens if t is not None], 52, shelves)
        else:
            ratio = collected_ratio(tokens, collected, 52, shelves)
            total += math.log(ratio) if ratio > 0 else -50.0
    return total / decks


LR_SIZES: tuple[int | str, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, "mixed")
"""Deck lengths the likelihood limit is calibrated at: 3 to 27 cards, and the mixed sizes."""


def _cards(size: int | str, rng: random.Random) -> int:
    return 3 * (size if isinstance(size, int) else 1 + rng.randrange(6))


def lr_false_alarms(size: int | str, shelves: tuple[int, ...],
                    limit: Callable[[int, int], float], excursions: int, seed: int) -> float:
    """False alarms per fair deck of Page's CUSUMs on the exact log-likelihood ratio, one per
    shelf count in ``shelves`` (one-pass k-shelf against fair, fed a new deck), each alarming
    over ``limit(shelves, cards in the deck)``, at ``size`` three-card sets a deck, computed
    exactly up to sampling error by importance sampling.

    From all CUSUMs at 0 the process runs until all are back at 0 or one crosses the limit (an
    excursion). The chance that an excursion crosses, under a fair shuffle, is the mean, over
    excursions sampled from the machines (each deck from one shelf count at random), of the
    product of each deck's fair-over-mixture likelihood ratio when it crosses (Wald's change
    of measure: fair decks that cross are far too rare to count by simulation). By renewal the
    alarms per fair deck are that chance over the mean length of an excursion of fair decks
    (simulated directly: typical, not rare). Lorden's bound ``e^-limit`` per model ignores how
    far past the limit the last deck carries the sum; this measures it."""
    rng = random.Random(seed)
    total = 0.0
    for _ in range(excursions):
        values = [0.0] * len(shelves)
        log_weight = 0.0
        while True:
            cards = _cards(size, rng)
            dealt = one_pass(list(range(52)), rng.choice(shelves), rng.randrange)[:cards]
            scores = [log_ratio(dealt, 52, k) for k in shelves]
            top = max(scores)
            log_weight -= top + math.log(sum(math.exp(x - top) for x in scores) / len(shelves))
            values = [max(0.0, v + x) for v, x in zip(values, scores)]
            if any(v > limit(k, cards) for v, k in zip(values, shelves)):
                total += math.exp(log_weight)
                break
            if not any(values):
                break
    return total / excursions / _fair_excursion(size, shelves, limit, excursions, rng)


def _fair_excursion(size: int | str, shelves: tuple[int, ...],
                    limit: Callable[[int, int], float], excursions: int,
                    rng: random.Random) -> float:
    """The mean number of fair decks from all CUSUMs at 0 until all are at 0 again (or one
    crosses)."""
    decks = 0
    for _ in range(excursions):
        values = [0.0] * len(shelves)
        while True:
            cards = _cards(size, rng)
            dealt = list(range(52))
            rng.shuffle(dealt)
            decks += 1
            values = [max(0.0, v + log_ratio(dealt[:cards], 52, k))
                      for v, k in zip(values, shelves)]
            if not any(values) or any(v > limit(k, cards) for v, k in zip(values, shelves)):
                break
    return decks / excursions


def lr_limit(size: int, shelves: int, excursions: int, seed: int,
             rate: float = FALSE_ALARM_RATE) -> tuple[float, float]:
    """The limit at which the ``shelves``-shelf CUSUM alone gives ``rate`` false alarms per
    fair deck at ``size`` sets a deck: measured once below Lorden's limit, then moved by the
    log of the measured rate over ``rate`` (the rate falls e-fold per unit of limit: measured
    8.98-fold over 2.21 at nine cards), and the rate measured there with other random
    numbers."""
    start = math.log(1 / rate) - 1.0
    measured = lr_false_alarms(size, (shelves,), lambda k, c: start, excursions, seed)
    limit = start + math.log(measured / rate)
    return limit, lr_false_alarms(size, (shelves,), lambda k, c: limit, excursions, seed + 1)


def lr_calibration(excursions: int, seed: int) -> dict[str, Any]:
    """``limits.ONE_PASS_LR_ALONE``: for each shelf count and deck length, the limit at which
    that CUSUM alone gives 1e-4 false alarms per fair deck (progress on stderr)."""
    alone = {}
    for k in limits.ONE_PASS_SHELVES:
        alone[k] = {}
        for sets in range(1, 10):
            limit, check = lr_limit(sets, k, excursions, seed)
            alone[k][3 * sets] = {"limit": round(limit, 3), "rate_there": check}
            print(k, 3 * sets, alone[k][3 * sets], file=sys.stderr, flush=True)
    return {"excursions": excursions, "alone": alone}


def lr_window_calibration(samples: int, seed: int) -> dict[str, Any]:
    """``limits.ONE_PASS_LR_WINDOW``: for each window (a number of decks) and deck length, the
    limit on the sum of the last decks' 10-shelf log-likelihood ratio at which a fair window
    crosses with probability at most the window's share of 1e-4, the estimate plus three
    standard errors (importance sampling over ``samples`` windows of the machine's decks;
    progress on stderr)."""
    out: dict[int, dict[int, Any]] = {}
    for decks, share in limits.ONE_PASS_LR_WINDOW_SHARES.items():
        out[decks] = {}
        for sets in range(1, 10):
            # the 5-deck window's numbers as first calibrated; the 7-deck window's apart
            rng = random.Random(seed * 1_009 + sets + 100 * (decks != 5))
            sums = window_sums(sets, decks, samples, rng)
            limit, at = fair_tail_limit(sums, FALSE_ALARM_RATE * share, sigmas=3.0)
            out[decks][3 * sets] = {"limit": round(limit, 3), "fair_rate_estimate": at}
            print(decks, 3 * sets, out[decks][3 * sets], file=sys.stderr, flush=True)
    return {"samples": samples, "shares": limits.ONE_PASS_LR_WINDOW_SHARES, "window": out}


def lr_fair_count(decks: int, seed: int, sizes: tuple[int, ...] = (3, 7)) -> dict[str, Any]:
    """The likelihood monitor's alarms counted directly over ``decks`` fair decks fed a new deck
    at each size (9 and 21 cards): its CUSUMs and its window together, as the table runs
    them."""
    out = {}
    for sets in sizes:
        rng = random.Random(seed * 31 + sets)
        guard = Guard([OnePassLikelihood()])
        alarms = 0
        for _ in range(decks):
            order = list(range(52))
            rng.shuffle(order)
            alarms += len(guard.deal(order, sets))
        alarms += len(guard.finish())
        out[str(3 * sets)] = {"decks": decks, "alarms": alarms,
                              "per_10000": round(alarms / decks * 1e4, 3)}
    return out


def lr_check(excursions: int, seed: int) -> dict[str, Any]:
    """The false alarms per fair deck the monitor's limits give, its shelf counts together
    (each at its share of the budget), at each deck length and at the mixed sizes."""
    return {"excursions": excursions, "per_deck": {
        str(size): lr_false_alarms(size, limits.ONE_PASS_SHELVES, limits.one_pass_lr_limit,
                                   excursions, seed + 2) for size in LR_SIZES}}


BOUND_SIZES = (3, 4, 5, 7)
"""9, 12, 15 and 21 cards: the sizes issue 38 asks the likelihood monitor's power at."""


def lr_power(runs: int, seed: int, sizes: tuple[int, ...] = BOUND_SIZES,
             samples: int = 40_000) -> dict[str, Any]:
    """The one-pass 10-shelf machine fed a new deck: the share of ``runs`` that ``one_pass_lr``
    flags within 5 and 7 decks, beside the bound: the most power any test can have that
    decides on that many decks' dealt cards with at most 1e-4 false alarms, the exact
    10-shelf likelihood test (Neyman-Pearson: the sum of the decks' log-likelihood ratios over
    the limit at which a fair sum crosses with probability 1e-4, from ``samples`` sums of the
    machine's decks, :func:`fair_tail_limit`), its power measured on ``samples`` further
    sums; and the same test on the runs' own decks ("paired": the gap between it and the
    monitor on the same decks is what the monitor leaves, without the luck of 400 runs). Beside
    them, Page's CUSUM on the 10-shelf ratio alone at its 1e-4 limit
    (``limits.ONE_PASS_LR_ALONE``), run on the same decks as the monitor: the bound of a
    CUSUM, which the monitor's window tests go past."""
    out: dict[str, Any] = {}
    for sets in sizes:
        cusum_limit = limits.ONE_PASS_LR_ALONE[10][3 * sets]
        bound = {}
        for n in (5, 7):
            rng = random.Random(seed * 7_919 + 100 * sets + n)
            limit, _ = fair_tail_limit(window_sums(sets, n, samples, rng), FALSE_ALARM_RATE)
            power = window_sums(sets, n, samples, rng)
            bound[n] = {"limit": limit,
                        "power": round(sum(1 for x in power if x > limit) / samples, 4)}
        ours = {5: 0, 7: 0}
        cusum = {5: 0, 7: 0}
        paired = {5: 0, 7: 0}
        for run in range(runs):
            rng = random.Random(seed * 100_003 + run)
            guard = Guard()
            value, mine, page, scores = 0.0, None, None, []
            for deck in range(1, 8):
                order = one_pass(list(range(52)), 10, rng.randrange)
                scores.append(log_ratio(order[:3 * sets], 52, 10))
                value = max(0.0, value + scores[-1])
                if page is None and value > cusum_limit:
                    page = deck
                found = guard.deal(order, sets) + (guard.finish() if deck == 7 else [])
                for f in found:
                    if f.monitor is MonitorId.ONE_PASS_LR and mine is None:
                        mine = f.decks
            for n in ours:
                ours[n] += mine is not None and mine <= n
                cusum[n] += page is not None and page <= n
                paired[n] += sum(scores[:n]) > bound[n]["limit"]
        out[str(3 * sets)] = {
            "runs": runs, "cusum_limit": cusum_limit,
            "monitor_limit": round(limits.one_pass_lr_limit(10, 3 * sets), 3),
            "window_limits": {decks: limits.ONE_PASS_LR_WINDOW[decks].get(3 * sets)
                              for decks in limits.ONE_PASS_LR_WINDOW_SHARES},
            **{f"within_{n}": ours[n] / runs for n in ours},
            **{f"bound_within_{n}": bound[n]["power"] for n in bound},
            **{f"paired_bound_within_{n}": paired[n] / runs for n in paired},
            **{f"bound_limit_{n}": round(bound[n]["limit"], 3) for n in bound},
            **{f"cusum_within_{n}": cusum[n] / runs for n in cusum}}
    return {"shares": limits.ONE_PASS_LR_SHARE, "window_shares": limits.ONE_PASS_LR_WINDOW_SHARES,
            "cards": out}
