"""The guard: the monitors fed the card stream the table sees, deck by deck.

:class:`Guard` is the pure core (pack indices in, :class:`Finding` out) that the benchmark drives
directly. :class:`TableGuard` adapts it to the table's inputs: a shuffle (the shuffler's
``ShuffleDone`` or a dealer's ``ConfirmShuffle``) ends one deck and starts the next; every
``CardSetDispensed`` and ``CardRead`` adds its cards in order. Each finding becomes a
:class:`drivers.events.ProtectionReport` input, so the journal records it before the table acts
on it and a replay needs no monitor state (the journal starts a fresh table at every clean round
boundary; the monitors' evidence spans thousands of decks, so it cannot live in the table).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from controller.games.cards import Card
from controller.protection.diagnosis import Diagnosis, Episodes
from controller.protection.feed import Feed, reference
from controller.protection.monitors import (
    DECK,
    Deck,
    Finding,
    Ledger,
    Monitor,
    all_monitors,
)
from controller.table import commands as cmd
from drivers import events as dev

DEVICE = "protection"
"""The ``device`` name of the guard's reports (like the clock monitor's ``"clock"``)."""


class Guard:
    """Monitors over decks of pack indices. Not thread-safe: the table thread owns it."""

    def __init__(self, monitors: Iterable[Monitor] | None = None,
                 feed: Feed = Feed.NEW_DECK) -> None:
        self.monitors = list(monitors) if monitors is not None else all_monitors()
        self.feed = feed
        self.deck: Deck | None = None
        self.decks = 0
        self.dealt_before: list[tuple[int, ...]] | None = None
        """The sets dealt from the last deck closed: the collected cards of the next input."""
        self.diagnosis = Diagnosis()

    def shuffle(self, counted: int = DECK, expected: int = DECK) -> list[Finding]:
        """A shuffle: the deck so far is finished (its scores decided), a new one starts."""
        findings = self.finish()
        self.decks += 1
        self.deck = Deck(self.decks, counted, expected,
                         reference=reference(self.feed, self.dealt_before))
        for monitor in self.monitors:
            if isinstance(monitor, Ledger):
                found = monitor.open(self.deck)
                if found is not None:
                    findings.append(found)
        return findings

    def cards(self, cards: Sequence[int], as_set: bool = True) -> list[Finding]:
        """Cards dispensed in this order; ``as_set`` when they came out as one hand."""
        deck = self.deck
        if deck is None:  # cards before any shuffle seen: a deck of unknown count
            self.decks += 1
            deck = self.deck = Deck(self.decks, reference=None)
        findings: list[Finding] = []
        for card in cards:
            for monitor in self.monitors:
                found = monitor.card(deck, card)
                if found is not None:
                    findings.append(found)
            deck.cards.append(card)
            deck.seen.add(card)
        if as_set:
            deck.sets.append(tuple(cards))
        self.diagnosis.note(findings, deck.number)
        return findings

    def deal(self, order: Sequence[int], hands: int,
             form: Callable[[list[int]], list[int]] = list) -> list[Finding]:
        """A whole deck at once, as a simulation deals it: a shuffle counted ``len(order)``,
        then ``hands`` three-card sets from the top (each through ``form``, the machine's hand
        forming)."""
        found = self.shuffle(len(order), DECK)
        for hand in range(hands):
            found += self.cards(form(list(order[3 * hand:3 * hand + 3])))
        return found

    def finish(self) -> list[Finding]:
        deck, self.deck = self.deck, None
        if deck is None:
            return []
        self.dealt_before = deck.sets or ([tuple(deck.cards)] if deck.cards else None)
        return self.diagnosis.explain([found for monitor in self.monitors
                                       if (found := monitor.close(deck)) is not None],
                                      deck.number)


class TableGuard:
    """The guard on the table thread: :meth:`before` an input (a shuffle closes the deck
    before the table acts on it, so a deck found short blocks the next one), :meth:`after`
    it (what the input itself shows)."""

    def __init__(self, guard: Guard | None = None) -> None:
        self.guard = guard or Guard()
        self.reports = 0
        self.episodes = Episodes()

    def before(self, item: object) -> list[dev.ProtectionReport]:
        if isinstance(item, (dev.ShuffleDone, cmd.ConfirmShuffle)):
            return self._reports(self.guard.finish())
        return []

    def after(self, item: object) -> list[dev.ProtectionReport]:
        if isinstance(item, dev.ShuffleDone):
            return self._reports(self.guard.shuffle(item.counted, item.expected))
        if isinstance(item, cmd.ConfirmShuffle):
            return self._reports(self.guard.shuffle())
        if isinstance(item, dev.CardSetDispensed):
            return self._reports(self.guard.cards(_indices(item.cards)))
        if isinstance(item, dev.CardRead) and item.card is not None:
            return self._reports(self.guard.cards((item.card.index,), as_set=False))
        return []

    def _reports(self, findings: list[Finding]) -> list[dev.ProtectionReport]:
        findings = self.episodes.alerts(findings, self.guard.decks)
        self.reports += len(findings)
        return [report(found) for found in findings]


def report(found: Finding) -> dev.ProtectionReport:
    return dev.ProtectionReport(DEVICE, monitor=found.monitor.value, statistic=found.statistic,
                                threshold=found.threshold, decks=found.decks,
                                detail=found.detail, holds=found.holds,
                                evidence=found.evidence)


def _indices(cards: Sequence[Card]) -> tuple[int, ...]:
    return tuple(card.index for card in cards)
