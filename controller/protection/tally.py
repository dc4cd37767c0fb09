"""What the surveillance report draws: the monitors' running totals over a whole journal.

:class:`Tally` is one more :class:`~controller.protection.monitors.Monitor` beside the deciding
ones: it only counts (valleys by deck length, cards dealt), so the report's plots and tables come
from the same pass, over the same decks, as the alerts it lists.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from controller.protection.feed import Feed
from controller.protection.guard import Guard, TableGuard
from controller.protection.monitors import (
    CATEGORY_ORDER,
    Categories,
    Deck,
    Finding,
    Monitor,
    MonitorId,
    Packet,
    Position,
    all_monitors,
)
from controller.protection.stats import CATEGORY_COUNTS, HANDS, valleys
from drivers.events import ProtectionReport


class Tally(Monitor):
    """Counts only; never finds anything."""

    def __init__(self) -> None:
        self.valleys: dict[int, Counter[int]] = {}
        self.cards = 0
        self.hands = 0

    def close(self, deck: Deck) -> Finding | None:
        self.cards += len(deck.cards)
        self.hands += sum(1 for cards in deck.sets if len(cards) == 3)
        if len(deck.cards) >= 3:
            self.valleys.setdefault(len(deck.cards), Counter())[valleys(deck.cards)] += 1
        return None


@dataclass(slots=True)
class Totals:
    """Everything the report shows, as plain numbers."""

    decks: int
    cards: int
    hands: int
    positions: list[list[int]]
    """``positions[p][card]``: how often ``card`` came out at dealing position ``p``."""
    valleys: dict[int, dict[int, int]]
    packet: list[int]
    categories: dict[str, tuple[int, float]]
    """Category title -> (observed, expected from the 22,100 hands)."""
    findings: list[Finding] = field(default_factory=list)


class Surveyor:
    """A :class:`TableGuard` over the deciding monitors plus a :class:`Tally`."""

    def __init__(self, feed: Feed = Feed.COLLECTED_REVERSED) -> None:
        self.tally = Tally()
        self.monitors = all_monitors()
        self.table_guard = TableGuard(Guard([*self.monitors, self.tally], feed=feed))
        self.findings: list[Finding] = []

    def see(self, item: object) -> None:
        for method in (self.table_guard.before, self.table_guard.after):
            self.findings.extend(_finding(report) for report in method(item))

    def totals(self) -> Totals:
        for found in self.table_guard.guard.finish():
            self.findings.append(found)
        position = next(m for m in self.monitors if isinstance(m, Position))
        packet = next(m for m in self.monitors if isinstance(m, Packet))
        categories = next(m for m in self.monitors if isinstance(m, Categories))
        per = [position.totals[p * 52:(p + 1) * 52] for p in range(position.positions)]
        hands = sum(categories.totals)
        return Totals(
            decks=self.table_guard.guard.decks, cards=self.tally.cards, hands=self.tally.hands,
            positions=per,
            valleys={n: dict(sorted(c.items())) for n, c in sorted(self.tally.valleys.items())},
            packet=list(packet.totals),
            categories={kind.title: (categories.totals[i], hands * CATEGORY_COUNTS[kind] / HANDS)
                        for i, kind in enumerate(CATEGORY_ORDER)},
            findings=list(self.findings))


def _finding(report: ProtectionReport) -> Finding:
    return Finding(MonitorId(report.monitor), report.statistic, report.threshold, report.decks,
                   report.detail, report.holds)
