"""Holds and player options: a supervisor's decision on a held round, and the players' options
offered after an irregularity (RWS-NC3P 5.7, 5.11; MBS-R3P 5.7, 5.13.1).

A decision is accepted only if the ruling offered it; the round then resumes where it was held
and the device events buffered meanwhile are replayed in arrival order.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from controller.errors import RequestError
from controller.games.cards import Card
from controller.games.rules import GameId
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.core import RoundCore
from controller.table.dealing import Deal, Delivery
from controller.table.events import PlayerAtBox
from controller.table.commands import Source
from controller.table.irregularities import Action, general
from controller.table.options import PER_PLAYER_WITHDRAWAL, players_at_boxes
from controller.table.states import IN_ROUND, RESUMABLE, Hold, Kind, Refused, RoundState, S
from drivers import events as dev

Act = cmd.SupervisorAction
_ANSWERS: dict[Act, tuple[Kind, dict[str, object]]] = {
    Act.IN_DEVICE: (Kind.EXPOSED_CARD, {"source": Source.DEVICE}),
    Act.BY_DEALER: (Kind.EXPOSED_CARD, {"source": Source.DEALER}),
    Act.INTERRUPTS: (Kind.INTERRUPTION, {}),
}
"""A supervisor's answer to the fact a ruling asked for: the irregularity is ruled again with
that fact (RWS-NC3P 5.10 vs 5.7; a jam that stops the round is a 5.4 interruption)."""


@dataclass(slots=True)
class Holds:
    """A round's hold, written only here: what the supervisor is asked to decide, the state
    the round was held (or offered the options) in, and the device events that arrived
    meanwhile, replayed in arrival order on resuming. A new one each round."""

    held: Hold | None = None
    source: RoundState = RoundState.IDLE
    """The state the round resumes to (``resume(source)``)."""
    buffer: list[dev.DeviceEvent] = field(default_factory=list)

    def hold(self, hold: Hold) -> None:
        self.held = hold

    def decided(self) -> None:
        self.held = None

    def remember(self, state: RoundState) -> None:
        """The round leaves ``state`` for a hold or the options (not one for the other)."""
        if state not in (RoundState.HOLD, RoundState.OPTIONS):
            self.source = state

    def keep(self, event: dev.DeviceEvent) -> None:
        """A card event while held: replayed on resuming."""
        self.buffer.append(event)

    def take(self, taken: list[dev.DeviceEvent]) -> None:
        """Cards a supervisor ordered out of the buffer: dealt now, not replayed."""
        self.buffer = [e for e in self.buffer if e not in taken]

    def release(self) -> list[dev.DeviceEvent]:
        """The events kept while held, in arrival order, handed back for replay."""
        pending, self.buffer = self.buffer, []
        return pending

    def end(self) -> None:
        """The round is voided: no hold remains and nothing kept is replayed."""
        self.held = None
        self.buffer = []


class HoldsMixin(RoundCore):
    """Supervisor decisions on a held round, player options, and resuming."""

    def hold_decisions(self) -> tuple[Act, ...]:
        """What a supervisor may decide on the current hold: the ruling's options, and a
        management void when the ruling offers none (a question of fact: where a card was seen,
        whether a jam stops the round). A pit supervisor can always void a round in progress;
        only a hold on a round already settled (a correction) has no void but its ruling's."""
        hold = self.hold_info
        if self.state is not S.HOLD or hold is None:
            return ()
        if Act.VOID in hold.ruling.options or self.source is S.SETTLED:
            return tuple(hold.ruling.options)
        return (*hold.ruling.options, Act.VOID)

    def _cmd_SupervisorDecision(self, command: cmd.SupervisorDecision) -> None:
        action = command.action
        if action is Act.VOID and command.clause:
            try:  # only a clause of this game's text that voids a round may be cited
                self.rules.void_clause(command.clause)
            except RequestError as error:
                raise Refused(str(error)) from error
        held = self.state is S.HOLD and self.hold_info is not None
        ruling_void = held and Act.VOID in self.hold_info.ruling.options  # type: ignore[union-attr]
        if action is Act.VOID and self.state in IN_ROUND and not ruling_void and (
                not held or Act.VOID in self.hold_decisions()):
            self._management_void(command)
            return
        if self.state is not S.HOLD:
            raise Refused(f"no supervisor decision is pending (state {self.state.value})")
        hold = self.hold_info
        assert hold is not None
        if action not in hold.ruling.options:
            raise Refused(f"{action.value} is not an option for {hold.kind.value} "
                          f"({hold.ruling.clause}); options: "
                          f"{', '.join(o.value for o in hold.ruling.options)}")
        if self.source is S.SETTLED:
            self._decide_correction(hold, command)
            return
        if action in _ANSWERS:
            self._answered(hold, command)
            return
        ordered: list[dev.DeviceEvent] = []
        if action is cmd.SupervisorAction.ORDER:
            ordered = self._ordered_cards(command.cards, from_buffer=hold.kind is not Kind.NO_READ)
        if action is cmd.SupervisorAction.RECONSTRUCT:
            self.cards.reconstructed(self._reconstructed(hold, command))
        elif action is cmd.SupervisorAction.CONTINUE:
            self._refuse_short_hands(hold, action, self.deal)
        self.emit(ev.SupervisorDecided(round=self.number, actor=command.actor, action=action.value,
                                       clause=hold.ruling.clause, reason=command.reason))
        self.holds.decided()
        if action is cmd.SupervisorAction.VOID:
            # a clause that voids unless the cards are reconstructed voids as the text says;
            # any other void offered is the supervisor's own decision
            self._void(command.reason or hold.ruling.note, hold.ruling.clause,
                       discretionary=hold.ruling.declined is not Action.VOID)
            return
        if action is cmd.SupervisorAction.RECONSTRUCT and (command.moves or command.hands):
            self.emit(ev.HandsMoved(round=self.number, moves=command.moves,
                                    clause=hold.ruling.clause))
        rebuilt: list[Delivery] = []
        burnt: list[Card] = []
        if action is cmd.SupervisorAction.RECONSTRUCT and hold.kind is Kind.BURN_ERROR:
            assert self.deal is not None
            burnt, rebuilt = self.deal.rebuild_burns()
            self.emit(ev.HandsMoved(round=self.number, moves=(), clause=hold.ruling.clause))
        if action is cmd.SupervisorAction.NOT_RECONSTRUCTABLE:
            declined = hold.ruling.declined or Action.VOID
            if declined is Action.VOID:
                self._void(hold.ruling.note, hold.ruling.clause)
                return
            self.resume(self.source)
            self._remove_hand(hold.position or "", hold.ruling.clause)
            self._after_resume()
            return
        self.resume(self.source)
        if burnt:
            self._burnt_on_reconstruction(burnt)
        self._assigned(rebuilt)
        for event in ordered:
            self._device(event)
        if hold.ruling.then is Action.PLAYER_OPTIONS and self.state in RESUMABLE:
            self._offer_options("RWS-NC3P 5.11.1, 5.7")
            return
        self._after_resume()

    def _management_void(self, command: cmd.SupervisorDecision) -> None:
        """A supervisor voids the round in progress, held or not, by the game's management-void
        clause (or the one given)."""
        if not command.reason:
            raise Refused("a management void needs a reason")
        clause = (self.rules.void_clause(command.clause) if command.clause
                  else general(self.rules, "management void").clause)
        self.emit(ev.SupervisorDecided(round=self.number, actor=command.actor,
                                       action=command.action.value, clause=clause,
                                       reason=command.reason))
        self.holds.decided()
        # A supervisor's own void: after the reveal it keeps the bets already decided
        # (rules-coverage interpretation 34).
        self._void(command.reason, clause, discretionary=True)

    def _burnt_on_reconstruction(self, burnt: list[Card]) -> None:
        """A short burn reconstructed (LIVE-3P T&C 1): the cards held out become the missing
        burns, and the deal starts once the burns are complete."""
        deal = self.deal
        assert deal is not None
        first = len(deal.burns) - len(burnt)
        for offset, card in enumerate(burnt):
            self.emit(ev.BurnCard(round=self.number, card=card, index=first + offset))
        if self.state is S.BURN and not deal.burning:
            self.start_deal()

    def _reconstructed(self, hold: Hold, command: cmd.SupervisorDecision) -> Deal:
        """The deal as the supervisor reconstructs it, worked out on a copy: the round's own
        deal changes only once the whole reconstruction is accepted (transitions has no
        rollback, and neither has a half-applied list of moves)."""
        assert self.deal is not None
        trial = copy.deepcopy(self.deal)
        if command.moves:
            trial.move_hands(command.moves)
        if command.hands:
            if hold.ruling.complete_hands_only \
                    and not trial.is_rearrangement(dict(command.hands)):
                raise Refused(f"{hold.ruling.clause}: the void is avoided only by moving "
                              f"complete hands from one betting area to another; the hands "
                              f"given are not a rearrangement of the complete hands dealt")
            trial.override(dict(command.hands))
        if hold.kind is not Kind.BURN_ERROR:  # LIVE-3P T&C 1: the deal is re-made in order
            self._refuse_short_hands(hold, command.action, trial)
        return trial

    def _refuse_short_hands(self, hold: Hold, action: cmd.SupervisorAction,
                            deal: Deal | None) -> None:
        """A decision that would resume the round with a box (or the dealer) that can never
        hold three cards is refused, naming the box and what the supervisor must give: such a
        hand can be neither played (RWS-3CP 3.8) nor settled, and the round would be stranded
        (issue 23). The hold stays, with every way out it offered."""
        short = self.short_hands(deal)
        if not short:
            return
        held = ", ".join(
            f"{'the dealer' if position == self.rules.dealer else f'box {position}'} with "
            f"{count} card{'' if count == 1 else 's'}" for position, count in short.items())
        ways: list[str] = []
        if Act.RECONSTRUCT in hold.ruling.options:
            what = ("`moves` of complete hands (or `hands` that rearrange them)"
                    if hold.ruling.complete_hands_only
                    else "`hands` (cards seen this round) or `moves` (complete hands)")
            ways.append(f"reconstruct with {what} that leave every box in play and the dealer "
                        f"three cards")
        ways += [f"decide {option.value}" for option in hold.ruling.options
                 if option not in (action, Act.RECONSTRUCT)]
        raise Refused(f"{action.value} would leave {held}, where a hand is three cards "
                      f"({hold.ruling.clause}), and the round could be neither played nor "
                      f"settled; instead {'; or '.join(ways) if ways else 'void the round'}")

    def _answered(self, hold: Hold, command: cmd.SupervisorDecision) -> None:
        """The supervisor answered the fact the ruling asked for: rule again knowing it."""
        kind, facts = _ANSWERS[command.action]
        self.emit(ev.SupervisorDecided(round=self.number, actor=command.actor,
                                       action=command.action.value, clause=hold.ruling.clause,
                                       reason=command.reason))
        self.holds.decided()
        self.resume(self.source)
        self._irregularity(kind, position=hold.position,
                           detail=f"{hold.kind.value}: {command.action.value}", **facts)
        if self.state in RESUMABLE:
            self._after_resume()

    def _ordered_cards(self, cards: tuple[Card, ...], from_buffer: bool
                       ) -> list[dev.DeviceEvent]:
        """The cards a supervisor orders (RWS-NC3P 5.11) or enters after a no-read. Cards of a
        simultaneous draw that the reader did see must be exactly those it saw."""
        if not cards:
            raise Refused("order: give the cards in the order they are received")
        buffered = [e for e in self.buffer if isinstance(e, dev.CardRead) and e.card is not None]
        if buffered and from_buffer:
            known = [e.card for e in buffered]
            missing = [c.code for c in cards if c not in known]
            if missing:
                raise Refused(f"order names cards not drawn: {', '.join(missing)}")
            taken = [e for e in buffered if e.card in cards]
            self.holds.take(taken)
        # cards entered in the order drawn complete the burns still due before the deal
        burns_due = self.deal.burn_target - len(self.deal.burns) if self.deal else 0
        return [dev.CardRead(device="supervisor", card=card, burn=index < burns_due)
                for index, card in enumerate(cards)]

    def _after_resume(self) -> None:
        """Replay device events that arrived while the round was held, in arrival order
        (after the players' options, when a hold interrupted them)."""
        if self._options_outlive_hold():
            return
        pending = self.holds.release()
        for event in pending:
            self._device(event)
        self._maybe_finish_deal()

    def _cmd_PlayerOption(self, command: cmd.PlayerOption) -> None:
        if self.state is not S.OPTIONS or self.offer is None:
            raise Refused("no options are offered now (RWS-NC3P 5.7, MBS-R3P 5.7, 5.13)")
        offer = self.offer
        who = offer.who(command.position, command.player)
        every_box = offer.clause in PER_PLAYER_WITHDRAWAL and who.player is not None
        answers = [p for p in offer.pending if p.player == who.player] if every_box else [who]
        withdrawn: tuple[str, ...] = ()
        if command.option is cmd.Option.WITHDRAW:
            withdrawn = self._withdraw(who, every_box, offer.clause)
        offer.settle(answers)
        offer.keep_only(players_at_boxes(self.active_wagers(), self.rules.positions,
                                         self.removed))
        self.emit(ev.PlayerOptionTaken(round=self.number, position=who.position,
                                       option=command.option.value, wager_ids=withdrawn,
                                       clause=offer.clause, player=who.player,
                                       players=tuple(answers)))
        if offer.done:
            self._close_options()

    def _withdraw(self, who: PlayerAtBox, every_box: bool, clause: str) -> tuple[str, ...]:
        """The player's wagers taken out of play: at his box (or, under MBS-R3P 5.13.1, all
        of them). Under RWS-NC3P 5.7.3 his Hand is invalidated: the box's hand leaves play
        (no more cards to it) only once no other player continues it."""
        chosen = [w for w in self.active_wagers() if w.player == who.player
                  and w.position not in self.removed
                  and (every_box or w.position == who.position)]
        returned_by = "RWS-NC3P 5.7.3" if self.rules.id is GameId.RWS_NC3P else clause
        for wager in chosen:
            self.book.withdraw(wager.id, returned_by)
        if self.rules.id is GameId.RWS_NC3P and \
                not any(w.position == who.position for w in self.active_wagers()):
            self._remove_hand(who.position, returned_by)
        return tuple(w.id for w in chosen)

    def _cmd_CloseOptions(self, command: cmd.CloseOptions) -> None:
        """The dealer closes the options: every player still to choose continues
        (RWS-NC3P 5.7.1/5.7.2; MBS-R3P 5.7, 5.13.1 only permit a withdrawal), named in a
        ``PlayerOptionsClosed``, so whoever follows the round (the device operator, recovery)
        sees the options end: with no event the operator waited for them for good (issue 23)."""
        if self.state is not S.OPTIONS or self.offer is None:
            raise Refused("no options are offered now")
        self._close_unanswered(f"{command.actor} ({command.role.value})")

    def _cmd_OptionsDeadline(self, command: cmd.OptionsDeadline) -> None:
        if self.state is not S.OPTIONS or self.offer is None \
                or self.offer.number != command.offer:
            raise Refused(f"options announcement {command.offer} is not open; its deadline "
                          f"closes nothing")
        self._close_unanswered(f"options deadline ({command.deadline_s} s)")

    def _close_unanswered(self, by: str) -> None:
        """The options end before every player answered: those who did not, continue."""
        offer = self.offer
        assert offer is not None
        self.emit(ev.PlayerOptionsClosed(round=self.number, clause=offer.clause, by=by,
                                         continuing=tuple(offer.pending)))
        self._close_options()

    def _seat_order(self, position: str) -> tuple[bool, int]:
        positions = self.rules.positions
        return (position not in positions,
                positions.index(position) if position in positions else 0)

    def _close_options(self) -> None:
        self.options.close()
        self.resume(self.source)
        self._after_resume()

    def _options_outlive_hold(self) -> bool:
        """Options interrupted by a hold are announced again once it is decided, for the
        players still to answer, with a fresh deadline (True: the round waits for them)."""
        offer = self.offer
        if offer is None or self.state not in RESUMABLE:
            return False
        offer.keep_only(players_at_boxes(self.active_wagers(), self.rules.positions,
                                         self.removed))
        if offer.done:
            self.options.close()
            return False
        self.options.renew()
        self.offer_options()
        self._announce_options(True)
        return True
