"""The end of the round: players' decisions, the dealer's hand revealed, settlement through
:mod:`controller.settlement`, and corrections to a settled round noticed before the next one.

Settlement itself is pure; the table memory it returns (progressive meter, players under the
minimum) replaces the machine's only when the round settles, so a correction settles again from
the memory the round started with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from controller.games.cards import Card
from controller.games.rules import GameId
from controller.settlement import RoundInput, Settlement, TableMemory, Wager, settle, void_round
from controller.settlement.model import Outcome, Result
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.core import RoundCore
from controller.table.irregularities import Action, after_settlement
from controller.table.states import Hold, Refused, S


@dataclass(slots=True)
class Money:
    """The table's memory (progressive meter, players under the minimum) and the round's
    settlement, written only here. The memory moves only when a settlement (or a void) is
    booked; a correction settles again from the memory the round was settled from."""

    memory: TableMemory
    last_settlement: Settlement | None = None
    settled_from: TableMemory | None = None
    """The memory the round's settlement started from (``None`` until it settles)."""
    corrected: bool = False
    """The settled round was voided by a correction (only once)."""

    def new_round(self) -> None:
        self.last_settlement = None
        self.settled_from = None
        self.corrected = False

    def settling(self) -> None:
        """The round is about to settle from the memory as it stands."""
        self.settled_from = self.memory

    def booked(self, settlement: Settlement) -> None:
        """A settlement (or a void: it returns the memory unchanged) is the round's result."""
        self.memory = settlement.memory
        self.last_settlement = settlement

    def rewind(self) -> None:
        """A correction settles again from the memory the round was settled from."""
        assert self.settled_from is not None
        self.memory = self.settled_from

    def voided_after_settlement(self) -> None:
        self.corrected = True


class SettlingMixin(RoundCore):
    """Decisions, the reveal, settlement and corrections after settlement."""

    def _cmd_PlayerDecision(self, command: cmd.PlayerDecision) -> None:
        if self.state is not S.DECISIONS:
            raise Refused(f"no decisions are due (state {self.state.value}; RWS-3CP 3.8)")
        position = command.position
        if position not in self.ante_positions():
            raise Refused(f"box {position} holds no Ante in play: only Ante players decide "
                          f"(RWS-3CP 3.8, 3.8.2)")
        if position in self.decisions:
            raise Refused(f"box {position} has already decided "
                          f"({self.decisions[position].value})")
        held = len(self.deal.hands.get(position, ())) if self.deal is not None else 0
        if held != 3:
            raise Refused(f"box {position} holds {held} card{'' if held == 1 else 's'}: a "
                          f"player plays or folds on a hand of three cards (RWS-3CP 3.6, 3.8); "
                          f"a supervisor reconstructs the hand or voids the round")
        plays: tuple[Wager, ...] = ()
        if command.choice is cmd.Choice.PLAY:
            plays = tuple(Wager(f"{w.id}:play", position, "play", w.amount, w.player, w.seated)
                          for w in self.active_wagers()
                          if w.position == position and w.bet == "ante")
        self.book.decide(position, command.choice, plays)
        self.emit(ev.DecisionMade(round=self.number, position=position,
                                  choice=command.choice.value, play_wagers=plays))
        if self.all_decided():
            self.decisions_done()

    def _cmd_RevealDealer(self, command: cmd.RevealDealer) -> None:
        if self.state is S.DECISIONS:
            missing = [p for p in self.ante_positions() if p not in self.decisions]
            raise Refused(f"the dealer's hand is revealed only after every decision "
                          f"(RWS-3CP 3.8); waiting for box(es) {', '.join(missing)}")
        if self.state is not S.DEALT:
            raise Refused(f"nothing to reveal (state {self.state.value})")
        self.reveal()
        assert self.deal is not None
        self.emit(ev.DealerRevealed(round=self.number,
                                    cards=tuple(self.deal.hands[self.rules.dealer])))

    def _cmd_SettleRound(self, command: cmd.SettleRound) -> None:
        if self.state is S.SETTLED and self.layout.settle_on_deal_complete:
            raise Refused(f"round {self.number} was settled once, when its deal completed "
                          "(settle_on_deal_complete): nothing settled again")
        if self.state is not S.REVEALED:
            raise Refused(f"the round cannot be settled in state {self.state.value}")
        self._settle_round()

    def _settle_on_deal_complete(self) -> None:
        """A studio table (``settle_on_deal_complete``) settles in the input that completed
        the deal: LIVE-3P has no decision between the Banker's third card and the result, so
        the ``round.settle`` round trip only delayed it (issue 28)."""
        if self.layout.settle_on_deal_complete and self.state is S.REVEALED \
                and self.can_settle():
            self._settle_round()

    def _settle_round(self) -> None:
        self.money.settling()
        settlement, hands = self._settlement()
        self.settle_round()
        self.money.booked(settlement)
        self.emit(ev.RoundSettled(round=self.number, settlement=settlement, hands=hands,
                                  returned_positions=tuple(self.removed.items())))

    def _settlement(self, returned: Mapping[str, str] | None = None
                    ) -> tuple[Settlement, tuple[tuple[str, tuple[Card, ...]], ...]]:
        """Settle the round as dealt; ``returned`` adds boxes whose wagers are returned (with
        the clause) besides the hands removed from play."""
        assert self.deal is not None
        active = self.active_wagers()
        returned_positions = {**self.removed, **(returned or {})}
        hands = {position: tuple(cards) for position, cards in self.deal.hands.items()
                 if len(cards) == 3 and position not in returned_positions}
        round_input = RoundInput(
            rules=self.rules, hands=MappingProxyType(hands), wagers=tuple(active),
            limits=self.layout.limits, memory=self.memory,
            rounding_unit=self.layout.rounding_unit,
            returned_positions=MappingProxyType(returned_positions),
            progressive=self.layout.progressive,
            on_layout_at_close=frozenset((w.position, w.bet) for w in self.wagers.values()
                                         if w.id in self.withdrawn))
        settled = settle(round_input)
        extra = tuple(Result(wid, Outcome.RETURNED, 0, clause, amount=self.wagers[wid].amount,
                             returned=self.wagers[wid].amount)
                      for wid, clause in self.withdrawn.items() if wid in self.wagers)
        return Settlement((*settled.results, *extra), settled.memory), tuple(hands.items())

    def _after_settlement(self, command: cmd.ReportIrregularity) -> None:
        """A wrong count noticed after settlement but before the next round: RWS-NC3P 5.9 and
        5.5.5, MBS-R3P 5.5 and RWS-3CP 5.1.5 still apply ("provided that this is noticed before
        the commencement of the next round"), so the settlement is corrected; anything else
        stands. Reversing a settlement is a supervisor's decision. Where the clause adds "and
        the cards cannot be Reconstructed" the round is held and the supervisor is asked that;
        the next round cannot open meanwhile."""
        ruling = after_settlement(self.rules, command.kind)
        if ruling.action is Action.STANDS:
            self.emit(ev.IrregularityRuled(round=self.number, kind=command.kind.value,
                                           action=ruling.action.value, clause=ruling.clause,
                                           note=ruling.note))
            return
        if command.role is not cmd.Role.SUPERVISOR:
            raise Refused(f"correcting a settled round ({ruling.clause}) is a Pit Supervisor's "
                          f"decision; {command.actor} acts as {command.role.value}")
        if self.money.corrected:
            raise Refused(f"round {self.number} was already voided after settlement")
        assert self.deal is not None and self.money.settled_from is not None
        position = command.position
        removes = (ruling.declined or ruling.action) is Action.REMOVE_HAND
        if removes and (position is None or position == self.rules.dealer
                        or not self.deal.hands.get(position) or position in self.removed):
            raise Refused(f"{command.kind.value} needs a box that was dealt a hand in play, got "
                          f"{position!r}")
        self.emit(ev.IrregularityRuled(round=self.number, kind=command.kind.value,
                                       action=ruling.action.value, clause=ruling.clause,
                                       note=ruling.note))
        if ruling.action is Action.SUPERVISOR:
            self.holds.hold(Hold(command.kind, ruling, position))
            self.hold()
            self.emit(ev.SupervisorRequired(round=self.number, kind=command.kind.value,
                                            clause=ruling.clause,
                                            options=tuple(o.value for o in ruling.options)))
            return
        self._correct(ruling.action, ruling.clause, command.details or ruling.note, position)

    def _decide_correction(self, hold: Hold, command: cmd.SupervisorDecision) -> None:
        """The answer to a held correction: reconstructable, the settlement (made on the
        recorded, i.e. intended, sequence) stands; not reconstructable, it is corrected."""
        ruling = hold.ruling
        if command.moves or command.hands:
            raise Refused(f"{ruling.clause}: after settlement the question is only whether the "
                          f"cards can be reconstructed; the settlement was made on the recorded "
                          f"sequence, so no moves or hands are taken")
        self.emit(ev.SupervisorDecided(round=self.number, actor=command.actor,
                                       action=command.action.value, clause=ruling.clause,
                                       reason=command.reason))
        self.holds.decided()
        self.resume(self.source)
        if command.action is cmd.SupervisorAction.NOT_RECONSTRUCTABLE:
            self._correct(ruling.declined or Action.VOID, ruling.clause,
                          command.reason or ruling.note, hold.position)
        else:
            self.emit(ev.IrregularityRuled(
                round=self.number, kind=hold.kind.value, action=Action.STANDS.value,
                clause=ruling.clause, note="the cards can be reconstructed: the settlement, "
                "made on the recorded sequence, stands"))
        self._after_resume()

    def _correct(self, action: Action, clause: str, reason: str, position: str | None) -> None:
        settled_from = self.money.settled_from
        assert settled_from is not None
        if action is Action.VOID:
            returned = (f"{clause}; RWS-NC3P 5.15" if self.rules.id is GameId.RWS_NC3P
                        else clause)
            settlement = void_round(tuple(self.wagers.values()), returned, settled_from)
            self.money.voided_after_settlement()
        else:
            assert position is not None
            self.cards.remove_settled_hand(position, clause)
            self.emit(ev.HandRemoved(round=self.number, position=position, clause=clause))
            self.money.rewind()
            settlement, _ = self._settlement()
        self.money.booked(settlement)
        self.emit(ev.SettlementCorrected(round=self.number, clause=clause, reason=reason,
                                         settlement=settlement, voided=action is Action.VOID,
                                         position=position if action is not Action.VOID
                                         else None))
