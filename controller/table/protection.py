"""Game-protection findings into the round: an alert for everyone who watches the table, and a
deck blocked for a supervisor when the finding says the deck itself is wrong.

The monitors (:mod:`controller.protection`) run beside the table, not in it, because their
evidence spans many sessions; a finding reaches the table as a journaled
:class:`~drivers.events.ProtectionReport` input. A deck short of a card is ruled as the
shuffler's own wrong count is (shortage/excess: RWS-NC3P 5.5.2, MBS-3P 5.2, MBS-R3P 5.1, 5.9,
RWS-3CP 5.1.3, LIVE-3P supervisor), reusing :class:`~controller.table.events.DeckBlocked`.
"""

from __future__ import annotations

from controller.table import events as ev
from controller.table.core import RoundCore
from controller.table.irregularities import rule
from controller.table.states import Kind
from drivers import events as dev


class ProtectionMixin(RoundCore):
    """Protection findings: journaled alerts, and the deck held on a wrong count."""

    def _protection(self, report: dev.ProtectionReport) -> None:
        held = report.holds and self.deck_blocked is None
        clause = rule(self.rules, Kind.DECK_COUNT, self._context()).clause if held else ""
        self.emit(ev.ProtectionAlert(round=self.number, monitor=report.monitor,
                                     statistic=report.statistic, threshold=report.threshold,
                                     decks=report.decks, detail=report.detail, held=held,
                                     clause=clause))
        if held:
            self._deck_count_wrong(f"{report.monitor}: {report.detail}")
