"""Game-protection findings into the round: an alert for everyone who watches the table, and a
deck blocked for a supervisor when the finding says the deck itself is wrong.

The monitors (:mod:`controller.protection`) run beside the table, not in it, because their
evidence spans many sessions; a finding reaches the table as a journaled
:class:`~drivers.events.ProtectionReport` input. What the table does with a finding that holds
the deck depends on what it rests on (:class:`~drivers.events.Evidence`):

* cards counted (more dispensed than the deck was counted to hold) prove the deck wrong: it is
  ruled as the shuffler's own wrong count is (shortage/excess: RWS-NC3P 5.5.2, MBS-3P 5.2,
  MBS-R3P 5.1, 5.9, RWS-3CP 5.1.3, LIVE-3P supervisor), reusing
  :class:`~controller.table.events.DeckBlocked`;
* a statistical finding ("a card stuck inside or missing", a run of decks a fair shuffler seldom
  gives) is a doubt about the count, not a count. MBS-R3P 5.9 says what a doubt calls for: "the
  Dealer shall count the cards manually. If the count proves to have too many or too few cards,
  that round of play shall be void". So the deck is blocked and nothing is ruled: no card is
  dealt from it until ``deck counted`` (52 releases it, and the round waiting deals) or ``deck
  replace``; a wrong count is ruled by the game's deck-count clause
  (:meth:`~controller.table.betting.BettingMixin._cmd_DeckCounted`). The round just closed,
  nothing dealt, is not voided on the statistic alone.
"""

from __future__ import annotations

from controller.table import events as ev
from controller.table.core import RoundCore
from controller.table.irregularities import rule
from controller.table.states import Kind
from drivers import events as dev


class ProtectionMixin(RoundCore):
    """Protection findings: journaled alerts, and the deck held on a wrong or doubted count."""

    def _protection(self, report: dev.ProtectionReport) -> None:
        held = report.holds and self.deck_blocked is None
        clause = rule(self.rules, Kind.DECK_COUNT, self._context()).clause if held else ""
        self.emit(ev.ProtectionAlert(round=self.number, monitor=report.monitor,
                                     statistic=report.statistic, threshold=report.threshold,
                                     decks=report.decks, detail=report.detail, held=held,
                                     clause=clause))
        if not held:
            return
        if report.evidence is dev.Evidence.STATISTICAL:
            self._count_deck(f"{report.monitor}: {report.detail}; count the deck", clause)
        else:
            self._deck_count_wrong(f"{report.monitor}: {report.detail}")

    def _count_deck(self, reason: str, clause: str) -> None:
        """Block dealing until the deck is counted or replaced; rule nothing yet (the count is
        ruled when it is given, under ``clause``)."""
        self.deck.block(reason)
        self.emit(ev.DeckBlocked(round=self.number, reason=reason, clause=clause))
