"""Irregularities: the context a ruling is asked in, the ruling from
:mod:`controller.table.irregularities`, and what it does to the round (void, hand removed,
supervisor hold, player options, results swapped).

The rulings themselves are pure functions of the rule set and the context; this module only
gathers the context from the round and applies the action, emitting the clause it rests on.
"""

from __future__ import annotations

from controller.errors import TablectlError
from controller.games.rules import GameId
from controller.settlement import Settlement, void_round
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.commands import REPORTED_SOURCES, Source
from controller.table.core import RoundCore, log
from controller.table.established import decided_outcomes, is_established
from controller.table.options import players_at_boxes
from controller.table.irregularities import (
    Action,
    Context,
    Phase,
    Ruling,
    general,
    rule,
)
from controller.table.irregularities import previous_round as previous_round_ruling
from controller.table.states import (
    NO_ROUND,
    RESUMABLE,
    Hold,
    Kind,
    Refused,
    RoundState,
    S,
)


_OPTIONS_AFTER = {"MBS-R3P 5.5": "MBS-R3P 5.7"}
"""The clause under which the players' options follow a ruling (MBS-R3P 5.7 after 5.5)."""


class RulingsMixin(RoundCore):
    """Irregularities ruled and applied; irregularities reported by the dealer."""

    def _cmd_ReportIrregularity(self, command: cmd.ReportIrregularity) -> None:
        if self.state is S.SETTLED and command.round_number in (None, self.number):
            self._after_settlement(command)
            return
        if command.round_number is not None and command.round_number != self.number \
                or self.state in NO_ROUND:
            ruling = previous_round_ruling(self.rules)
            self.emit(ev.IrregularityRuled(round=self.number, kind=command.kind.value,
                                           action=ruling.action.value, clause=ruling.clause,
                                           note=ruling.note))
            return
        if self.state is S.HOLD:
            raise Refused("round already held for a supervisor decision; decide that first")
        position = command.position
        if command.kind is Kind.WRONG_COUNT_PLAYER:
            if self.deal is None or position not in self.deal.hands or position == self.rules.dealer:
                raise Refused(f"wrong_count_player needs a box that received cards, got "
                              f"{position!r}")
        if command.kind is Kind.WRONG_COUNT_DEALER:
            position = self.rules.dealer
        if command.kind is Kind.EXPOSED_CARD:
            if command.source is not None and command.source not in REPORTED_SOURCES:
                raise Refused(f"an exposed card is reported as seen in the device or exposed "
                              f"by the dealer, not {command.source.value!r}")
            self._exposure(command.source, detail=command.details or "reported by "
                           f"{command.actor}", reported_at=position)
            return
        self._irregularity(command.kind, position=position, handled=command.handled,
                           exposed_before_drop=command.exposed_before_drop,
                           detail=command.details)

    def _exposure(self, source: Source | None, detail: str, cards: int = 1,
                  first_card: bool | None = None, reported_at: str | None = None) -> None:
        """``cards`` exposed at once (one set can show two): counted, then ruled once, so a
        clause that counts them (RWS-3CP 5.1.2) sees them all. ``reported_at``: the box the
        dealer names, for the words of the hold only."""
        self.cards.count_exposed(cards, self._context().phase in (Phase.DEALING, Phase.BURNING))
        self._irregularity(Kind.EXPOSED_CARD, detail=detail, first_card=first_card,
                           source=source, reported_at=reported_at)

    def _context(self, phase: Phase | None = None, **overrides: object) -> Context:
        deal = self.deal
        if phase is None:
            phase = {S.BETTING: Phase.BETTING, S.CLOSED: Phase.BEFORE_DEAL,
                     S.SHUFFLED: Phase.BEFORE_DEAL, S.BURN: Phase.BURNING,
                     S.DEALING: Phase.DEALING}.get(self._effective_state(), Phase.DEALT)
            if self.state in NO_ROUND:
                phase = Phase.NO_ROUND
        values: dict[str, object] = {
            "phase": phase,
            "manual_device": self.layout.manual,
            "handled": phase is Phase.DEALT,
            "first_card": deal is not None and deal.dealt <= 1,
            "exposed_count": self.exposed,
            "exposed_in_deal": self.exposed_in_deal,
            "revealed": self._effective_state() is S.REVEALED,
            "before_p1_second_card": deal is not None
            and deal.cards_of(self.rules.positions[0]) < 2,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Context(**values)  # type: ignore[arg-type]

    def _effective_state(self) -> RoundState:
        return self.source if self.state in (S.HOLD, S.OPTIONS) else self.state

    def _irregularity(self, kind: Kind, position: str | None = None, detail: str = "",
                      reported_at: str | None = None, **context: object) -> None:
        established = None
        if kind in (Kind.INTERRUPTION, Kind.JAMMED):
            established = self._outcome_established()
        ruling = rule(self.rules, kind, self._context(established=established, **context))
        self._apply(kind, ruling, position, detail, reported_at)

    def _outcome_established(self) -> bool:
        deal = self.deal
        if deal is None:
            return False
        played: dict[str, bool | None] = {p: (self.decisions[p] is cmd.Choice.PLAY
                                              if p in self.decisions else None)
                                          for p in self.ante_positions()}
        wagers = [w for w in self.active_wagers() if w.position not in self.removed]
        progressive = self.layout.progressive
        meter = self.memory.progressive_jackpot + sum(
            w.amount for w in wagers if w.bet == "progressive"
        ) * progressive.contribution_per_mille // 1000  # as settlement computes it
        decided = decided_outcomes(self.rules, deal.hands, deal.unseen(), wagers, played, meter)
        established = is_established(decided)
        clause = {GameId.RWS_NC3P: "RWS-NC3P 5.4", GameId.MBS_R3P: "MBS-R3P 5.13"}.get(
            self.rules.id, general(self.rules, "interruption").clause)
        self.emit(ev.OutcomeEstablished(
            round=self.number, established=established, clause=clause,
            decided=tuple((wid, o) for wid, o in decided.items() if o is not None)))
        return established

    def _apply(self, kind: Kind, ruling: Ruling, position: str | None, detail: str,
               reported_at: str | None = None) -> None:
        log.info("irregularity", kind=kind.value, action=ruling.action.value,
                 clause=ruling.clause, detail=detail)
        if kind not in (Kind.CARD_AFTER_GAME,):
            self.emit(ev.DealingError(round=self.number, kind=kind.value, clause=ruling.clause,
                                      detail=detail, position=reported_at))
        self.emit(ev.IrregularityRuled(round=self.number, kind=kind.value,
                                       action=ruling.action.value, clause=ruling.clause,
                                       note=ruling.note))
        action = ruling.action
        if action is Action.VOID:
            self._void(f"{ruling.note}: {detail}" if detail else ruling.note, ruling.clause)
        elif action is Action.REMOVE_HAND and position is not None:
            self._remove_hand(position, ruling.clause)
            if ruling.then is Action.PLAYER_OPTIONS and self.state in RESUMABLE:
                self._offer_options(_OPTIONS_AFTER.get(ruling.clause, ruling.clause))
        elif action is Action.SUPERVISOR:
            if self.state not in (*RESUMABLE, S.OPTIONS):
                return
            self.holds.hold(Hold(kind, ruling, position))
            # a hold during the options suspends them: they are announced again on resuming
            self.hold()
            self.emit(ev.SupervisorRequired(round=self.number, kind=kind.value,
                                            clause=ruling.clause,
                                            options=tuple(o.value for o in ruling.options)))
        elif action is Action.PLAYER_OPTIONS:
            self._offer_options(ruling.clause)
        elif action is Action.SWAP_RESULTS:
            self.cards.swap_results()
            self.emit(ev.ResultsSwapped(round=self.number, first=self.rules.positions[0],
                                        second=self.rules.positions[-1], clause=ruling.clause))

    def _offer_options(self, clause: str) -> None:
        """Offer the options to every Player with a wager in play, each answering for himself
        (RWS-NC3P 5.7 "all Players on the gaming table"; MBS-R3P 5.7, 5.13.1)."""
        players = players_at_boxes(self.active_wagers(), self.rules.positions, self.removed)
        if not players:
            return
        self.options.open(clause, players, self.layout.options_deadline_s)
        if self.state is not S.OPTIONS:  # a new dealing error while the options are open:
            self.offer_options()  # every player in play chooses again, on the same options
        self._announce_options(resumed=False)

    def _announce_options(self, resumed: bool) -> None:
        offer = self.offer
        assert offer is not None
        self.emit(ev.PlayerOptionsOffered(round=self.number, clause=offer.clause,
                                          positions=offer.boxes, players=tuple(offer.pending),
                                          deadline_s=offer.deadline_s, resumed=resumed))

    def _remove_hand(self, position: str, clause: str) -> None:
        if not self.cards.remove_hand(position, clause, self.rules.dealer):
            return  # already out of play
        self.emit(ev.HandRemoved(round=self.number, position=position, clause=clause))

    def _void(self, reason: str, clause: str, discretionary: bool = False) -> None:
        """Void the round. A void a clause orders returns every bet: RWS-NC3P 5.15 says so in
        so many words, the other rule sets in the void clause itself ("the round of play shall
        be void"). A supervisor's own void (``discretionary``: a management void, or the void
        a hold offers where no clause voids) after the dealer's hand is revealed returns only
        what is not decided: see :meth:`_decided_stand` (docs/rules-coverage.md)."""
        settlement = self._decided_stand(clause) \
            if discretionary and self._effective_state() is S.REVEALED else None
        if settlement is None:
            returned = (f"{clause}; RWS-NC3P 5.15" if self.rules.id is GameId.RWS_NC3P
                        else clause)
            settlement = void_round(tuple(self.wagers.values()), returned, self.memory)
        self.void()
        self.holds.end()
        self.options.close()
        self.money.booked(settlement)  # a void returns the memory unchanged; settled bets move it
        self.emit(ev.RoundVoided(round=self.number, reason=reason, clause=clause,
                                 settlement=settlement))

    def _decided_stand(self, clause: str) -> Settlement | None:
        """A supervisor's void after the reveal: every box holding a hand of three cards
        against the dealer's three is decided, and its bets are settled as the revealed hands
        decide; only the bets of a box with no such hand are returned. The texts void a round
        that has "no result" (RWS-NC3P 1.19) and conclude one whose outcome is established
        (5.4.1, MBS-R3P 5.13.2); no clause lets a void take back a bet the revealed hands have
        already won or lost (issue 23). ``None``: nothing is decided (the dealer has no hand
        of three cards), so the void returns every bet."""
        assert self.deal is not None
        short = self.short_hands()
        if self.rules.dealer in short:
            return None
        returned = {position: f"{clause} (no hand of three cards: returned)"
                    for position in short}
        try:
            settlement, _ = self._settlement(returned)
        except TablectlError as error:  # a record settlement cannot read: return everything
            log.warning("void after the reveal settles nothing", error=str(error))
            return None
        return settlement
