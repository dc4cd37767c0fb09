"""Game protection: false alarms and power of every monitor against every shuffler model, the
live cost per card, and the integrity report's time (issue 15).

Decks are dealt straight from :mod:`firmware_sim.shuffle_models` into the monitors
(:class:`controller.protection.Guard`), seven three-card hands (21 cards) per deck, no ptys.

* ``false-alarms``: one long stream of fair decks; alarms per deck for each monitor.
* ``power``: for each faulty model, independent runs of ``--horizon`` decks; for each monitor
  the share of runs flagged within 1, 2, 5, 50 and ``horizon`` decks (by the deck the finding
  is about: a deck's scores are decided when the next shuffle closes it) and the median deck of
  the first finding.
* ``calibrate``: the CUSUM limits from the monitors' own scores (``--decks`` fair decks).
* ``false-alarms-by-hands``: the same for every number of hands a deck deals (2 to 9), since
  a table's number of players changes the length of what is scored.
* ``sortedness-variance``: the table ``limits.SORTEDNESS_VARIANCE`` (200,000 decks a length).
* ``goals``: issue 25's goals at every table size (9 to 27 cards, and the bench's mixed
  sizes of 3 to 18 cards), the shuffler fed a new deck or the cards the table collected: the
  10-shelf one-pass machine within 5 decks (and the likelihood information a deck carries, so
  the optimal test's figure stands beside it), a card stuck at one position within 10, a
  duplicated card within 5 (and the most any test on the dealt cards can reach), and false
  alarms per monitor over ``--decks`` fair decks.
* ``lr-calibration``: ``limits.ONE_PASS_LR_ALONE``, the likelihood CUSUMs' limits fed a new
  deck, one per shelf count and deck length, for 1e-4 false alarms a fair deck (importance
  sampling, ``--excursions`` a rate); ``lr-check``: the rate the monitor's limits give, its
  shelf counts together, at every size.
* ``lr-power``: issue 38's figures: ``one_pass_lr`` against the 10-shelf machine fed a new
  deck at 9, 12, 15 and 21 cards, within 5 and 7 decks, beside the bound (the exact 10-shelf
  likelihood test at its 1e-4 limit, on the same decks).
* ``cost``: the live guard's time per card (``TableGuard`` on ``CardSetDispensed`` events).
* ``report``: the report's monitors and plots over 1,000,000 hands (decoded inputs; journal
  reading measured separately per record).
* ``report-journal``: ``tablectl integrity report`` as a process over a real-shaped journal of
  ``--hands`` hands (1,000,000: about 15 million records), and the report's way of reading
  against a full parse, side by side.

Run: ``python benchmarks/protection.py [--json] [--only power,cost] [--runs N] [--decks N]``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.games.cards import FULL_DECK  # noqa: E402
from controller.logsetup import configure_logging  # noqa: E402
from controller.protection import Guard, MonitorId, TableGuard  # noqa: E402
from drivers import events as dev  # noqa: E402
from controller.protection.feed import Feed, input_order  # noqa: E402
from controller.protection.likelihood import collected_ratio, log_ratio  # noqa: E402
from controller.protection import limits  # noqa: E402
from controller.protection.sequential import FALSE_ALARM_RATE  # noqa: E402
from firmware_sim.shuffle_models import ShuffleModel, Shuffler, one_pass  # noqa: E402

HANDS = 7
WITHIN = (1, 2, 5, 50)


def deal(guard: Guard, shuffler: Shuffler) -> list[Any]:
    """One deck: shuffle (the machine's own honest count), then seven hands."""
    return guard.deal(shuffler.order(), HANDS, shuffler.form)


def false_alarms(decks: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    shuffler, guard = Shuffler(ShuffleModel.FAIR, rng.randrange), Guard()
    alarms = dict.fromkeys((m.value for m in MonitorId), 0)
    started = time.perf_counter()
    for _ in range(decks):
        for found in deal(guard, shuffler):
            alarms[found.monitor.value] += 1
    for found in guard.finish():
        alarms[found.monitor.value] += 1
    return {"decks": decks, "seconds": round(time.perf_counter() - started, 1),
            "alarms": alarms, "per_deck": {m: n / decks for m, n in alarms.items()}}


def power(model: ShuffleModel, runs: int, horizon: int, seed: int) -> dict[str, Any]:
    first: dict[str, list[int | None]] = {m.value: [] for m in MonitorId}
    for run in range(runs):
        rng = random.Random(seed * 100_003 + run)
        shuffler, guard = Shuffler(model, rng.randrange), Guard()
        seen: dict[str, int] = {}
        for _ in range(horizon):
            for found in deal(guard, shuffler):
                seen.setdefault(found.monitor.value, found.decks)
        for found in guard.finish():
            seen.setdefault(found.monitor.value, found.decks)
        for monitor, decks in first.items():
            decks.append(seen.get(monitor))
    result: dict[str, Any] = {}
    for monitor, decks in first.items():
        hit = sorted(d for d in decks if d is not None)
        result[monitor] = {
            **{f"within_{n}": sum(1 for d in hit if d <= n) / runs
               for n in sorted({*(w for w in WITHIN if w < horizon), horizon})},
            "median_first": statistics.median(hit) if len(hit) * 2 > runs else None}
    return {"runs": runs, "horizon": horizon, "decks": runs * horizon, "monitors": result}


def calibrate(decks: int, seed: int) -> dict[str, Any]:
    """CUSUM false alarms per deck for a grid of drifts and limits, from the monitors' own
    scores (``OnePass.score``, ``SortednessMonitor.score``) of ``decks`` fair 21-card decks."""
    from controller.protection.monitors import OnePass, SortednessMonitor

    rng = random.Random(seed)
    d = 3 * HANDS
    one_pass, sortedness = OnePass(), SortednessMonitor()
    scores: dict[str, list[float]] = {"one_pass": [], "sortedness": []}
    for _ in range(decks):
        cards = rng.sample(range(52), d)
        scores["one_pass"].append(one_pass.score(cards))
        scores["sortedness"].append(sortedness.score(cards))
    out: dict[str, Any] = {"decks": decks, "cards": d}
    for name, values in scores.items():
        out[name] = [{"drift": drift, "limit": limit,
                      "per_deck": _cusum_rate(values, drift, limit)}
                     for drift in (0.5, 1.0) for limit in (3.0, 4.0, 5.0, 6.0, 8.0)]
    return out


def sortedness_variance(decks: int) -> dict[int, float]:
    """limits.SORTEDNESS_VARIANCE: the variance of the sortedness score's summed halves over
    ``decks`` fair decks of each length from 9 to 52 cards (seeded per length)."""
    from controller.protection.stats import descent_z, descents, rising_sequences

    table = {}
    for n in range(9, 53):
        rng = random.Random(1000 + n)
        scores = []
        for _ in range(decks):
            cards = rng.sample(range(52), n)
            scores.append((descent_z(n, descents(cards))
                           + descent_z(n, rising_sequences(cards) - 1)) / math.sqrt(2))
        table[n] = round(statistics.pvariance(scores), 3)
    return table


def false_alarms_by_hands(decks: int, seed: int) -> dict[int, dict[str, Any]]:
    """False alarms per fair deck for each number of hands a table deals (2 to 9 three-card
    sets a deck: 6 to 27 cards), ``decks`` decks each."""
    out = {}
    for hands in range(2, 10):
        rng = random.Random(seed * 100 + hands)
        shuffler, guard = Shuffler(ShuffleModel.FAIR, rng.randrange), Guard()
        alarms = dict.fromkeys((m.value for m in MonitorId), 0)
        for _ in range(decks):
            for found in guard.deal(shuffler.order(), hands, shuffler.form):
                alarms[found.monitor.value] += 1
        out[hands] = {"decks": decks, "cards": 3 * hands,
                      "per_deck": {m: round(n / decks, 7) for m, n in alarms.items()}}
    return out


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


def lr_check(excursions: int, seed: int) -> dict[str, Any]:
    """The false alarms per fair deck the monitor's limits give, its shelf counts together
    (each at its share of the budget), at each deck length and at the mixed sizes."""
    return {"excursions": excursions, "per_deck": {
        str(size): lr_false_alarms(size, limits.ONE_PASS_SHELVES, limits.one_pass_lr_limit,
                                   excursions, seed + 2) for size in LR_SIZES}}


BOUND_SIZES = (3, 4, 5, 7)
"""9, 12, 15 and 21 cards: the sizes issue 38 asks the likelihood monitor's power at."""


def lr_power(runs: int, seed: int, sizes: tuple[int, ...] = BOUND_SIZES) -> dict[str, Any]:
    """The one-pass 10-shelf machine fed a new deck: the share of ``runs`` that ``one_pass_lr``
    flags within 5 and 7 decks, beside the bound: the same share for the exact likelihood test
    that knows the machine has 10 shelves and the deck length (Page's CUSUM on the 10-shelf
    log-likelihood ratio alone, its limit ``limits.ONE_PASS_LR_ALONE``: 1e-4 false alarms per
    fair deck at this length, measured by :func:`lr_limit`), run on the same decks."""
    out: dict[str, Any] = {}
    for sets in sizes:
        bound_limit = limits.ONE_PASS_LR_ALONE[10][3 * sets]
        ours = {5: 0, 7: 0}
        best = {5: 0, 7: 0}
        for run in range(runs):
            rng = random.Random(seed * 100_003 + run)
            guard = Guard()
            value, mine, theirs = 0.0, None, None
            for deck in range(1, 8):
                order = one_pass(list(range(52)), 10, rng.randrange)
                value = max(0.0, value + log_ratio(order[:3 * sets], 52, 10))
                if theirs is None and value > bound_limit:
                    theirs = deck
                found = guard.deal(order, sets) + (guard.finish() if deck == 7 else [])
                for f in found:
                    if f.monitor is MonitorId.ONE_PASS_LR and mine is None:
                        mine = f.decks
            for n in ours:
                ours[n] += mine is not None and mine <= n
                best[n] += theirs is not None and theirs <= n
        out[str(3 * sets)] = {
            "runs": runs, "bound_limit": bound_limit,
            "monitor_limit": round(limits.one_pass_lr_limit(10, 3 * sets), 3),
            **{f"within_{n}": ours[n] / runs for n in ours},
            **{f"bound_within_{n}": best[n] / runs for n in best}}
    return {"shares": limits.ONE_PASS_LR_SHARE, "cards": out}


def _cusum_rate(scores: list[float], drift: float, limit: float) -> float:
    value, alarms = 0.0, 0
    for score in scores:
        value = max(0.0, value + score - drift)
        if value > limit:
            alarms, value = alarms + 1, 0.0
    return alarms / len(scores)


def cost(decks: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    shuffler = Shuffler(ShuffleModel.FAIR, rng.randrange)
    stream: list[object] = []
    for _ in range(decks):
        order = shuffler.order()
        stream.append(dev.ShuffleDone("shuffler", counted=52))
        stream += [dev.CardSetDispensed("shuffler", cards=tuple(FULL_DECK[i] for i in
                                                                 order[3 * h:3 * h + 3]))
                   for h in range(HANDS)]
    guard = TableGuard()
    started = time.perf_counter()
    for item in stream:
        guard.before(item)
        guard.after(item)
    seconds = time.perf_counter() - started
    cards = decks * HANDS * 3
    return {"decks": decks, "cards": cards, "ms_per_card": round(seconds / cards * 1e3, 4),
            "ms_per_hand": round(seconds / (decks * HANDS) * 1e3, 4)}


def report_time(hands: int, seed: int) -> dict[str, Any]:
    from controller.analysis.integrity import Survey, render
    from controller.journal.reader import iter_records
    from controller.protection.tally import Surveyor

    decks = hands // HANDS
    rng = random.Random(seed)
    shuffler = Shuffler(ShuffleModel.FAIR, rng.randrange)
    surveyor = Surveyor()
    started = time.perf_counter()
    for _ in range(decks):
        order = shuffler.order()
        surveyor.see(dev.ShuffleDone("shuffler", counted=52))
        for h in range(HANDS):
            surveyor.see(dev.CardSetDispensed("shuffler", cards=tuple(
                FULL_DECK[i] for i in order[3 * h:3 * h + 3])))
    monitors = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        render(Survey(surveyor.totals()), Path(out))
        plots = time.perf_counter() - started
    reading = _journal_read_rate()
    return {"hands": decks * HANDS, "decks": decks, "monitors_seconds": round(monitors, 1),
            "plots_seconds": round(plots, 1), "journal_records_per_second": reading,
            "estimated_total_seconds": round(monitors + plots + (decks * (HANDS + 1)) /
                                             reading, 1) if reading else None}


def report_journal(hands: int, seed: int, keep: Path | None = None) -> dict[str, Any]:
    """``tablectl integrity report`` itself (a child process) over a journal of ``hands``
    hands: the records of a real 200-round RWS-3CP bench journal, round after round again,
    re-sealed in one chain and rotated at 64 MiB like the writer's files, each round's card sets
    taken in order from a fresh fair shuffle. Also, side by side on the first file: records per
    second read the report's way (``only=`` its kinds) and by a full parse."""
    import resource
    import subprocess

    from controller.bench import Bench
    from controller.journal.files import file_name
    from controller.journal.reader import iter_records
    from controller.analysis.integrity import SURVEYED_EVENTS
    from controller.journal.record import GENESIS_HASH, canonical_json, seal, to_jsonable

    with tempfile.TemporaryDirectory() as scratch:
        work = keep or Path(scratch)
        source = work / "source"
        Bench("rws-three-card-poker", 200, seed=seed, journal_dir=source).run()
        by_round: dict[str, list[dict[str, Any]]] = {}
        for record in iter_records([source]):
            if record.round_id is not None:
                by_round.setdefault(record.round_id, []).append(record.body())
        templates = list(by_round.values())
        journal = work / "journal"
        journal.mkdir()
        rng = random.Random(seed)
        started = time.perf_counter()
        prev, seq, written_hands, files, size = GENESIS_HASH, 0, 0, 1, 0
        out = (journal / file_name(files)).open("wb")
        rounds = 0
        while written_hands < hands:
            deck = list(FULL_DECK)
            rng.shuffle(deck)
            dealt = 0
            for body in templates[rounds % len(templates)]:
                body = dict(body)
                payload = body["payload"]
                if body["event"] == "input_device" and payload.get("type") == "CardSetDispensed":
                    fields = dict(payload["fields"])
                    fields["cards"] = [to_jsonable(card) for card in deck[dealt:dealt + 3]]
                    dealt += 3
                    written_hands += 1
                    body["payload"] = {**payload, "fields": fields}
                seq += 1
                body["seq"], body["prev"] = seq, prev
                sealed = seal(body, None)
                prev = sealed["hash"]
                line = canonical_json(sealed).encode() + b"\n"
                if size + len(line) > 64 * 1024 * 1024:
                    out.close()
                    files, size = files + 1, 0
                    out = (journal / file_name(files)).open("wb")
                out.write(line)
                size += len(line)
            rounds += 1
        out.close()
        generated = time.perf_counter() - started
        first = journal / file_name(1)
        started = time.perf_counter()
        full = sum(1 for _ in iter_records([first]))
        full_s = time.perf_counter() - started
        started = time.perf_counter()
        sum(1 for _ in iter_records([first], only=SURVEYED_EVENTS))
        only_s = time.perf_counter() - started
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "controller", "integrity", "report",
                                 str(journal), "--out", str(work / "report")],
                                capture_output=True, text=True, check=True)
        report_s = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        total_bytes = sum(p.stat().st_size for p in journal.iterdir())
    return {"hands": written_hands, "records": seq, "rounds": rounds, "files": files,
            "journal_mb": round(total_bytes / 2**20), "generated_seconds": round(generated, 1),
            "report_seconds": round(report_s, 1), "report_peak_rss_mb": round(peak_mb),
            "report_said": result.stdout.splitlines(),
            "first_file_records_per_second": {
                "full_parse": round(full / full_s), "report_kinds_only": round(full / only_s),
                "ratio": round(full_s / only_s, 1)}}


def _journal_read_rate() -> float | None:
    """Records per second read and decoded from a bench journal (a real one, 30 rounds)."""
    from controller.bench import Bench
    from controller.journal.codec import decode_input
    from controller.journal.reader import iter_records

    with tempfile.TemporaryDirectory() as directory:
        Bench("rws-three-card-poker", 30, seed=1, journal_dir=directory).run()
        started = time.perf_counter()
        n = 0
        for record in iter_records([directory]):
            n += 1
            if record.event_type.startswith("input_"):
                decode_input(record.event_type, record.payload)
        return round(n / (time.perf_counter() - started))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", default="false-alarms,power,cost")
    parser.add_argument("--decks", type=int, default=200_000, help="fair decks for false alarms")
    parser.add_argument("--runs", type=int, default=200, help="runs per faulty model")
    parser.add_argument("--horizon", type=int, default=600, help="decks per run")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES),
                        help="goals: three-card sets a deck (3..9) or 'mixed'")
    parser.add_argument("--feeds", default="new-deck,collected", help="goals: feeds")
    parser.add_argument("--hands", type=int, default=1_000_000,
                        help="hands in the report-journal journal")
    parser.add_argument("--excursions", type=int, default=10_000,
                        help="lr-calibration: importance-sampled excursions a rate")
    parser.add_argument("--models", default=",".join(m.value for m in ShuffleModel
                                                     if m is not ShuffleModel.FAIR))
    args = parser.parse_args()
    configure_logging("WARNING")  # the bench tables' device chatter stays out of the figures
    only = set(args.only.split(","))
    results: dict[str, Any] = {}
    if "calibrate" in only:
        results["calibrate"] = calibrate(args.decks, args.seed)
    if "false-alarms" in only:
        results["false_alarms"] = false_alarms(args.decks, args.seed)
    if "power" in only:
        results["power"] = {model: power(ShuffleModel(model), args.runs, args.horizon,
                                         args.seed) for model in args.models.split(",")}
    if "sortedness-variance" in only:
        results["sortedness_variance"] = sortedness_variance(200_000)
    if "false-alarms-by-hands" in only:
        results["false_alarms_by_hands"] = false_alarms_by_hands(args.decks, args.seed)
    if "goals" in only:
        sizes = tuple(int(s) if s.isdigit() else s for s in args.sizes.split(","))
        results["goals"] = goals(args.runs, args.decks, args.seed,
                                 tuple(Feed(f) for f in args.feeds.split(",")), sizes)
    if "cost" in only:
        results["cost"] = cost(20_000, args.seed)
    if "report" in only:
        results["report"] = report_time(1_000_000, args.seed)
    if "report-journal" in only:
        results["report_journal"] = report_journal(args.hands, args.seed)
    if "lr-calibration" in only:
        results["lr_calibration"] = lr_calibration(args.excursions, args.seed)
    if "lr-check" in only:
        results["lr_check"] = lr_check(args.excursions, args.seed)
    if "lr-power" in only:
        results["lr_power"] = lr_power(args.runs, args.seed)
    print(json.dumps(results, indent=1) if args.json else _text(results))
    return 0


def _text(results: dict[str, Any]) -> str:
    lines = []
    fa = results.get("false_alarms")
    if fa:
        lines.append(f"false alarms over {fa['decks']} fair decks ({fa['seconds']} s):")
        lines += [f"  {m:<12} {n:>5}  {fa['per_deck'][m]:.2e} per deck"
                  for m, n in fa["alarms"].items()]
    for model, row in results.get("power", {}).items():
        lines.append(f"{model}: {row['runs']} runs x {row['horizon']} decks")
        for monitor, r in row["monitors"].items():
            lines.append(f"  {monitor:<12} " + " ".join(f"{k}={v}" for k, v in r.items()))
    power = results.get("lr_power")
    if power:
        lines.append(f"one_pass_lr against the exact 10-shelf likelihood (the bound), one-pass "
                     f"10-shelf fed a new deck; budget shares {power['shares']}:")
        for cards, row in power["cards"].items():
            lines.append(f"  {cards:>2} cards, {row['runs']} runs: within 5 {row['within_5']:.3f}"
                         f" (bound {row['bound_within_5']:.3f}), within 7 {row['within_7']:.3f}"
                         f" (bound {row['bound_within_7']:.3f}); limit {row['monitor_limit']}"
                         f" (bound's {row['bound_limit']})")
    for key in ("cost", "report", "report_journal", "calibrate", "false_alarms_by_hands",
                "sortedness_variance", "lr_calibration", "lr_check"):
        if key in results:
            lines.append(f"{key}: {json.dumps(results[key])}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
