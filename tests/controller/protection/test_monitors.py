"""Each monitor against the fault it is for, and silence on a fair seeded stream.

Decks come from :mod:`firmware_sim.shuffle_models` dealt straight into the guard, seven
three-card hands a deck, as the benchmark deals them (the benchmark measures the rates; these
tests pin seeded cases and the exact bounds).
"""

from __future__ import annotations

import math
import random
import tracemalloc
from collections import deque

from controller.protection import Guard, MonitorId
from controller.protection.monitors import Deck, Finding, Ledger, Repeat
from firmware_sim.shuffle_models import ShuffleModel, Shuffler

HANDS = 7


def _first(model: ShuffleModel, decks: int, seed: int = 1) -> dict[MonitorId, Finding]:
    """The first finding of each monitor within ``decks`` decks (its ``decks`` is the deck it
    is about: a deck's scores are decided when the next shuffle closes it)."""
    rng = random.Random(seed)
    shuffler, guard = Shuffler(model, rng.randrange), Guard()
    first: dict[MonitorId, Finding] = {}
    for _ in range(decks):
        for found in guard.deal(shuffler.order(), HANDS, shuffler.form):
            first.setdefault(found.monitor, found)
    for found in guard.finish():
        first.setdefault(found.monitor, found)
    return first


def test_fair_seeded_stream_raises_nothing() -> None:
    """1,200 fair decks (25,200 cards; every batch test decided at least twice): no alarm."""
    assert _first(ShuffleModel.FAIR, 1200) == {}


def test_missing_card_at_the_first_count() -> None:
    """A 51-card deck: the ledger alarms at the first shuffle's count, deck 1."""
    found = _first(ShuffleModel.MISSING_CARD, 1)[MonitorId.LEDGER]
    assert (found.statistic, found.threshold, found.decks) == (51, 52, 1)
    assert not found.holds  # the table's own count rule blocks the deck already


def test_stuck_card_found_by_the_exact_bound_and_holds_the_deck() -> None:
    """A card that never comes out while the count says 52: with 21 of 52 cards dealt a deck,
    a fair card stays unseen 26 decks in a row with probability (31/52)^26 < 1e-4 / 52; the
    ledger alarms on the 26th deck (decided at the 27th shuffle) and holds the deck."""
    step = math.log(31 / 52)
    assert 25 * step > math.log(1e-4 / 52) > 26 * step
    found = _first(ShuffleModel.STUCK_CARD, 40)[MonitorId.LEDGER]
    assert found.decks == 26 and found.holds and "stuck inside or missing" in found.detail


def test_duplicate_and_overcount_in_one_deck() -> None:
    """A card dispensed twice since the shuffle, and more cards than the shuffler counted."""
    guard = Guard([Ledger()])
    guard.shuffle(counted=4)
    assert guard.cards((0, 1, 2)) == []
    twice = guard.cards((1,))
    assert [(f.detail, f.statistic, f.threshold) for f in twice] == [
        ("3S dispensed twice since the shuffle", 2, 1)]
    extra = guard.cards((7,))
    assert extra[0].holds and extra[0].threshold == 4


def test_repeated_order_at_its_second_dispense() -> None:
    """Every second shuffle replays the first: the repeat monitor alarms during deck 2, once
    its seventh card has come out (five ordered runs of three in common)."""
    found = _first(ShuffleModel.REPEATED_ORDER, 2)[MonitorId.REPEAT]
    assert found.decks == 2 and found.statistic == 5 and "repeats deck 1" in found.detail


def test_one_pass_ten_shelves_within_five_decks() -> None:
    """The 10-shelf one-pass hand-former (Diaconis, Fulman and Holmes 2013): the valleys CUSUM
    alarms within five decks, over 20 seeds (the benchmark measures the probability)."""
    for seed in range(20):
        found = _first(ShuffleModel.ONE_PASS_10, 6, seed)[MonitorId.ONE_PASS]
        assert found.decks <= 5 and found.statistic > found.threshold


def test_partial_sort_and_unshuffled_deck() -> None:
    """Half the places in pack order: the sortedness CUSUM alarms within ten decks. A deck in
    pack order alarms on its own (no descent, one rising sequence, and no valley; and a
    one-pass machine deals it far likelier than a fair one)."""
    assert _first(ShuffleModel.PARTIAL_SORT, 11)[MonitorId.SORTEDNESS].decks <= 10
    guard = Guard()
    guard.shuffle()
    guard.cards(tuple(range(21)), as_set=False)
    assert {f.monitor for f in guard.finish()} == {MonitorId.SORTEDNESS, MonitorId.ONE_PASS,
                                                   MonitorId.ONE_PASS_LR}


def test_biased_packets_found_by_the_packet_batch() -> None:
    """Lowest card first in half the sets (2/3 instead of 1/3): the first 50-deck batch's
    chi-square is far over its critical value."""
    found = _first(ShuffleModel.BIASED_PACKETS, 51)[MonitorId.PACKET]
    assert found.decks == 50 and found.statistic > 3 * found.threshold


def test_position_and_category_batches_decide_on_their_batch() -> None:
    """The regulators' per-position chi-square (520-deck batches) and the hand categories
    (400-deck batches) find the 10-shelf machine at their first decision."""
    first = _first(ShuffleModel.ONE_PASS_10, 521)
    position, categories = first[MonitorId.POSITION], first[MonitorId.CATEGORIES]
    assert position.decks == 520 and position.statistic > position.threshold
    assert categories.decks == 400 and categories.statistic > categories.threshold


def test_repeat_window_forgets_old_decks() -> None:
    """The repeat monitor's memory is bounded: a deck older than the window is forgotten (its
    runs leave the index), so a replay of it is no longer matched."""
    guard = Guard([Repeat(window=2)])
    order = list(range(30, 39))
    for deck in (order, [1, 2, 3, 4, 5, 6, 7, 8, 9], [11, 12, 13, 14, 15, 16, 17, 18, 19]):
        guard.shuffle()
        assert guard.cards(deck) == []
    guard.shuffle()  # closes deck 3: decks 2 and 3 kept, deck 1 forgotten
    monitor = guard.monitors[0]
    assert isinstance(monitor, Repeat) and [n for n, _ in monitor.kept] == [2, 3]
    triples = [(a * 52 + b) * 52 + c for a, b, c in zip(order, order[1:], order[2:])]
    assert all(monitor.decks_with(key) == [] for key in triples)
    assert monitor.decks_with((1 * 52 + 2) * 52 + 3) == [2]
    assert guard.cards(order) == []
    guard.shuffle()
    assert [f.detail for f in guard.cards(order)][:1] == [
        "dispense order repeats deck 4 (5 ordered runs of three cards in common)"]


class _DictRepeat(Repeat):
    """The repeat monitor as it stored its window before issue 27 (a dict of lists of deck
    numbers per triple): the reference the hash chains must agree with."""

    def __init__(self, window: int) -> None:
        super().__init__(window=window)
        self.lists: dict[int, list[int]] = {}
        self.order: deque[tuple[int, list[int]]] = deque()

    def decks_with(self, key: int) -> list[int]:
        return list(reversed(self.lists.get(key, [])))

    def close(self, deck: Deck) -> Finding | None:
        keys = list(self.keys)
        for key in keys:
            self.lists.setdefault(key, []).append(deck.number)
        self.order.append((deck.number, keys))
        while len(self.order) > self.window:
            number, old = self.order.popleft()
            for key in old:
                self.lists[key].remove(number)
                if not self.lists[key]:
                    del self.lists[key]
        return super().close(deck)


def test_repeat_chains_agree_with_the_dict_of_lists_they_replace() -> None:
    """Issue 27: the compact window finds the same decks for every triple, and raises the same
    findings, as the dict of lists did, over decks that replay earlier ones, repeat a run
    within themselves and pass out of a small window."""
    rng = random.Random(27)
    guards = Guard([Repeat(window=7)]), Guard([_DictRepeat(window=7)])
    dealt: list[list[int]] = []
    for number in range(300):
        if dealt and rng.random() < 0.2:  # a replay of a recent deck, perhaps out of window
            deck = list(dealt[-rng.randint(1, min(len(dealt), 12))])
        else:
            deck = rng.sample(range(52), rng.randint(3, 40))
            if rng.random() < 0.1:  # a faulty deck repeats a run
                deck += deck[:4]
        dealt.append(deck)
        found = [[f.detail for f in g.shuffle() + g.cards(deck)] for g in guards]
        assert found[0] == found[1], number
        compact, reference = (g.monitors[0] for g in guards)
        assert isinstance(compact, Repeat)
        for key in {(a * 52 + b) * 52 + c for a, b, c in zip(deck, deck[1:], deck[2:])}:
            assert compact.decks_with(key) == reference.decks_with(key), (number, key)


def test_repeat_window_of_whole_decks_stays_small() -> None:
    """Issue 27: 2,000 whole decks (the full window, 100,000 triples) held in under 2 MB; the
    dict of lists held 12.6 MB, so the service's memory grew for days."""
    rng = random.Random(5)
    monitor = Repeat()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        guard = Guard([monitor])
        for _ in range(monitor.window + 50):
            guard.shuffle()
            guard.cards(rng.sample(range(52), 52))
        guard.shuffle()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(monitor.kept) == monitor.window
    assert held < 2 * 1024 * 1024, f"{held / 1024 / 1024:.1f} MB"
