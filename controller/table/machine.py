"""The round as a ``transitions`` machine: states, guarded transitions, and what each input does.

Conditions are pure predicates over the machine's data; effects happen in ``after`` callbacks
(transitions has no rollback once the state has changed) and in the input handlers that run
after a successful trigger. ``queued=True`` because callbacks fire further triggers (a card that
completes the deal moves on to the decisions). Every input is handled by :meth:`handle`; an input
the rules forbid is refused with a :class:`CommandRefused` naming the reason and clause, and the
round loses nothing. Rulings on irregularities come from :mod:`controller.table.irregularities`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

import structlog
from transitions import Machine, MachineError

from controller.errors import TablectlError
from controller.games.cards import Card
from controller.games.rules import Family, GameId
from controller.settlement import (
    RoundInput,
    Settlement,
    TableMemory,
    Wager,
    settle,
    void_round,
)
from controller.settlement.model import Outcome, Result
from controller.settlement.validate import check_wager
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.dealing import Deal, Delivery
from controller.table.established import decided_outcomes, is_established
from controller.table.irregularities import (
    Action,
    Context,
    Phase,
    Ruling,
    after_settlement,
    general,
    rule,
)
from controller.table.irregularities import previous_round as previous_round_ruling
from controller.table.layout import DealingDevice, TableLayout
from controller.table.procedure import burn_cards, deal_plan, receiving_boxes
from drivers import events as dev

log = structlog.get_logger("controller.table")
Kind = cmd.IrregularityKind


class RoundState(str, Enum):
    IDLE = "idle"
    BETTING = "betting"
    CLOSED = "closed"
    SHUFFLED = "shuffled"
    BURN = "burn"
    DEALING = "dealing"
    HOLD = "hold"
    """Waiting for a supervisor's decision."""
    OPTIONS = "options"
    """Waiting for the players' options (RWS-NC3P 5.7, MBS-R3P 5.7, 5.13.1)."""
    DECISIONS = "decisions"
    DEALT = "dealt"
    REVEALED = "revealed"
    SETTLED = "settled"
    VOIDED = "voided"


S = RoundState
_NO_ROUND = (S.IDLE, S.SETTLED, S.VOIDED)
_IN_ROUND = tuple(s for s in S if s not in _NO_ROUND)
_DEALING_PHASES = (S.CLOSED, S.SHUFFLED, S.BURN, S.DEALING, S.DECISIONS, S.DEALT, S.REVEALED)
_RESUMABLE = (S.BETTING, *_DEALING_PHASES)
_AFTER_CLOSE = (S.CLOSED, S.SHUFFLED, S.BURN, S.DEALING, S.HOLD, S.OPTIONS, S.DECISIONS,
                S.DEALT, S.REVEALED)

_NO_MORE_BETS = {GameId.RWS_NC3P: "RWS-NC3P 5.8", GameId.MBS_3P: "MBS-3P 5.5",
                 GameId.MBS_R3P: "MBS-R3P 5.2", GameId.RWS_3CP: "RWS-3CP 5.2",
                 GameId.LIVE_3P: "LIVE-3P Game Play (bets are taken while bets are offered)"}
_NO_WITHDRAW = {GameId.RWS_NC3P: "RWS-NC3P 5.8", GameId.MBS_3P: "MBS-3P 5.6",
                GameId.MBS_R3P: "MBS-R3P 5.3", GameId.RWS_3CP: "RWS-3CP 5.2",
                GameId.LIVE_3P: "LIVE-3P Game Play"}
_FAULT_KINDS = {dev.Fault.FOREIGN_CARD: Kind.FOREIGN_CARD,
                dev.Fault.DUPLICATE_CARD: Kind.DUPLICATE_CARD,
                dev.Fault.COUNT_MISMATCH: Kind.DECK_COUNT,
                dev.Fault.NOT_SHUFFLED: Kind.NOT_SHUFFLED,
                dev.Fault.EXPOSED_CARD: Kind.EXPOSED_CARD,
                dev.Fault.REVERSED_CARD: Kind.EXPOSED_CARD,
                dev.Fault.UNREADABLE_CARD: Kind.NO_READ,
                dev.Fault.JAM: Kind.JAMMED}


class Refused(Exception):
    """An input the machine will not act on; the message is the reason given to the operator."""


@dataclass(slots=True)
class Hold:
    kind: Kind
    ruling: Ruling
    position: str | None


@dataclass(slots=True)
class Offer:
    clause: str
    pending: set[str]
    then_hold_clause: str | None = None


class RoundMachine:
    """One table's rounds. Not thread-safe by design: only the table thread calls it."""

    state: RoundState

    def __init__(self, layout: TableLayout, emit: Callable[[ev.RoundEvent], None],
                 memory: TableMemory = TableMemory()) -> None:
        self.layout = layout
        self.rules = layout.rules
        self.memory = memory
        self._emit_to = emit
        self.number = 0
        self.deck_blocked: str | None = None
        self.offline: dict[str, str] = {}
        """Devices reported offline and not yet back: "No more bets" waits for them."""
        self._shuffle_pending = False
        self._echoes: set[tuple[str, Kind]] = set()
        """(device, kind) already reported by a card event: the fault the same device raises
        right after it (shuffler exposed or duplicate bit, Bee-Tek E3/E5 alarm after the card)
        is the same event. Kept across rounds (the echo may arrive after a void and the next
        "Place your bets") until the device's next card event."""
        self._settled_from: TableMemory | None = None
        self._corrected = False
        self._reset_round()
        self.machine = Machine(model=self, states=RoundState, initial=S.IDLE, queued=True,
                               auto_transitions=False, model_attribute="state")
        add = self.machine.add_transition
        add("open_round", list(_NO_ROUND), S.BETTING)
        add("close_bets", S.BETTING, S.SHUFFLED, conditions="is_shuffled")
        add("close_bets", S.BETTING, S.CLOSED)
        add("confirm_shuffle", S.CLOSED, S.SHUFFLED, conditions="deck_usable")
        add("lose_shuffle", S.SHUFFLED, S.CLOSED)
        add("start_burn", S.SHUFFLED, S.BURN, conditions="must_burn")
        add("start_deal", [S.SHUFFLED, S.BURN], S.DEALING)
        add("finish_deal", S.DEALING, S.DECISIONS, conditions="needs_decisions")
        add("finish_deal", S.DEALING, S.REVEALED, conditions="face_up")
        add("finish_deal", S.DEALING, S.DEALT)
        add("decisions_done", S.DECISIONS, S.DEALT, conditions="all_decided")
        add("reveal", S.DEALT, S.REVEALED)
        add("settle_round", S.REVEALED, S.SETTLED, conditions="can_settle")
        add("hold", [*_RESUMABLE, S.OPTIONS], S.HOLD, before="_remember_source")
        add("offer_options", [*_RESUMABLE, S.HOLD], S.OPTIONS, before="_remember_source")
        for target in _RESUMABLE:
            add("resume", [S.HOLD, S.OPTIONS], target, conditions=self._resumes_to(target))
        add("void", list(_IN_ROUND), S.VOIDED)

    # -- round data -------------------------------------------------------------------------
    def _reset_round(self) -> None:
        self.wagers: dict[str, Wager] = {}
        self.withdrawn: dict[str, str] = {}
        self.removed: dict[str, str] = {}
        self.decisions: dict[str, cmd.Choice] = {}
        self.deal: Deal | None = None
        self.shuffled = False
        self.exposed = 0
        self.hold_info: Hold | None = None
        self.offer: Offer | None = None
        self.buffer: list[dev.DeviceEvent] = []
        self.source: RoundState = S.IDLE
        self.swapped = False
        self.last_settlement: Settlement | None = None
        self._settled_from = None
        self._corrected = False

    # -- conditions (pure predicates) ------------------------------------------------------
    def is_shuffled(self) -> bool:
        return self.shuffled and self.deck_blocked is None

    def deck_usable(self) -> bool:
        return self.deck_blocked is None

    def must_burn(self) -> bool:
        return burn_cards(self.layout.device) > 0

    def needs_decisions(self) -> bool:
        return bool(self.ante_positions())

    def face_up(self) -> bool:
        return self.rules.id is GameId.LIVE_3P

    def all_decided(self) -> bool:
        return all(position in self.decisions for position in self.ante_positions())

    def can_settle(self) -> bool:
        return self.deal is not None and self.deal.complete

    def _resumes_to(self, target: RoundState) -> Callable[[], bool]:
        return lambda *args, **kwargs: self.source is target

    def _remember_source(self, *args: object, **kwargs: object) -> None:
        if self.state not in (S.HOLD, S.OPTIONS):
            self.source = self.state

    def ante_positions(self) -> list[str]:
        if self.rules.family is not Family.THREE_CARD_POKER:
            return []
        return sorted({w.position for w in self.active_wagers() if w.bet == "ante"}
                      - set(self.removed), key=self.rules.positions.index)

    def active_wagers(self) -> list[Wager]:
        return [w for w in self.wagers.values() if w.id not in self.withdrawn]

    # -- output -----------------------------------------------------------------------------
    def emit(self, event: ev.RoundEvent) -> None:
        self._emit_to(event)

    def _refuse(self, what: object, reason: str) -> None:
        log.info("input refused", input=type(what).__name__, reason=reason)
        self.emit(ev.CommandRefused(round=self.number, command=type(what).__name__,
                                    reason=reason))

    # -- entry point ------------------------------------------------------------------------
    def handle(self, item: object) -> None:
        """Apply one input. Never raises for a bad input: it is refused with the reason."""
        try:
            if isinstance(item, cmd.Command):
                self._command(item)
            elif isinstance(item, dev.DeviceEvent):
                self._device(item)
            else:
                raise Refused(f"not a command or device event: {type(item).__name__}")
        except Refused as refusal:
            if isinstance(item, cmd.PlaceWager):
                self.emit(ev.WagerRefused(round=self.number, wager_id=item.wager_id,
                                          reason=str(refusal)))
            self._refuse(item, str(refusal))
        except (TablectlError, MachineError) as error:
            self._refuse(item, f"{type(error).__name__}: {error}")

    # -- commands ---------------------------------------------------------------------------
    def _command(self, command: cmd.Command) -> None:
        handler = getattr(self, f"_cmd_{type(command).__name__}", None)
        if handler is None:
            raise Refused(f"unknown command {type(command).__name__}")
        if isinstance(command, cmd.SupervisorDecision) and command.role is not cmd.Role.SUPERVISOR:
            raise Refused(f"{command.action.value}: this decision belongs to a Pit Supervisor or "
                          f"above (RWS-NC3P 5.11, 5.17; MBS-R3P 6.1; LIVE-3P T&C 1, 5, 6); "
                          f"{command.actor} acts as {command.role.value}")
        if self.state is S.HOLD and not isinstance(
                command, (cmd.SupervisorDecision, cmd.ReportIrregularity, cmd.ReplaceDeck,
                          cmd.DeckCounted)):
            assert self.hold_info is not None
            raise Refused(f"round held for a supervisor decision on "
                          f"{self.hold_info.kind.value} ({self.hold_info.ruling.clause})")
        handler(command)

    def _cmd_OpenRound(self, command: cmd.OpenRound) -> None:
        if self.state not in _NO_ROUND:
            raise Refused(f"round {self.number} is still in progress ({self.state.value})")
        self.open_round()
        self.number += 1
        self._reset_round()
        self.shuffled, self._shuffle_pending = self._shuffle_pending, False
        self.emit(ev.RoundOpened(round=self.number, game=self.rules.id.value,
                                 table=self.layout.table_id))

    def _cmd_PlaceWager(self, command: cmd.PlaceWager) -> None:
        if self.state is not S.BETTING:
            if self.state in _AFTER_CLOSE:
                raise Refused(f"no more bets: no wager may be placed or increased "
                              f"({_NO_MORE_BETS[self.rules.id]})")
            raise Refused("no round is open for betting")
        wager = Wager(command.wager_id, command.position, command.bet, command.amount,
                      command.player, command.seated)
        self._check_placement(wager)
        self.wagers[wager.id] = wager
        self.emit(ev.WagerAccepted(round=self.number, wager=wager))

    def _check_placement(self, wager: Wager) -> None:
        rules = self.rules
        if wager.id in self.wagers:
            raise Refused(f"wager id {wager.id!r} is already on the layout")
        if wager.position not in self.layout.boxes and wager.position != rules.dealer:
            raise Refused(f"box {wager.position} is not on this table's layout")
        if wager.bet == "play":
            raise Refused("the Play wager is placed by a play decision after the deal "
                          "(RWS-3CP 3.8.2)")
        check_wager(rules, wager, self.layout.limits, self.layout.progressive.stake)
        spec = rules.bet(wager.bet)
        here = [w for w in self.wagers.values() if w.position == wager.position]
        if spec.requires and not any(w.bet == spec.requires for w in here):
            raise Refused(f"{wager.bet} needs a {spec.requires} wager at box {wager.position} "
                          f"({spec.requires_clause})")
        if rules.max_wagers_per_area is not None:
            if sum(1 for w in here if w.bet == wager.bet) >= rules.max_wagers_per_area:
                raise Refused(f"at most {rules.max_wagers_per_area} wagers per playing area "
                              f"({rules.max_wagers_clause})")
        limit = self.layout.limits.get(wager.bet)
        if limit is not None and rules.limit_clause and rules.id is GameId.RWS_NC3P:
            total = sum(w.amount for w in here if w.bet == wager.bet) + wager.amount
            if total > limit.maximum:
                raise Refused(f"box {wager.position} {wager.bet} would total {total}, over the "
                              f"maximum {limit.maximum}: excess rejected (RWS-NC3P 5.1)")

    def _cmd_WithdrawWager(self, command: cmd.WithdrawWager) -> None:
        if self.state is not S.BETTING:
            raise Refused(f"no more bets: no wager may be withdrawn "
                          f"({_NO_WITHDRAW[self.rules.id]})")
        wager = self.wagers.get(command.wager_id)
        if wager is None:
            raise Refused(f"no wager {command.wager_id!r} on the layout")
        rest = [w for w in self.wagers.values() if w.position == wager.position and w is not wager]
        needing = [w for w in rest if self.rules.bet(w.bet).requires == wager.bet]
        if needing and not any(w.bet == wager.bet for w in rest):
            raise Refused(f"wager {wager.id} carries the {needing[0].bet} wager "
                          f"{needing[0].id} ({self.rules.bet(needing[0].bet).requires_clause}); "
                          f"withdraw that first")
        del self.wagers[wager.id]
        self.emit(ev.WagerWithdrawn(round=self.number, wager_id=wager.id))

    def _cmd_CloseBets(self, command: cmd.CloseBets) -> None:
        if self.state is not S.BETTING:
            raise Refused(f"bets are not open (state {self.state.value})")
        if self.offline:
            devices = ", ".join(f"{name} ({why})" for name, why in sorted(self.offline.items()))
            raise Refused(f"dealing device offline: {devices}; bets stay open until it returns "
                          f"(a round closed now could not be dealt)")
        receiving = receiving_boxes(self.rules, self.layout.boxes, self.wagers.values())
        self.deal = Deal(deal_plan(self.rules, self.layout.device, receiving),
                         burn_cards(self.layout.device), self.rules.dealer)
        self.close_bets()
        self.emit(ev.BetsClosed(round=self.number, wagers=tuple(self.wagers.values()),
                                receiving=receiving))
        if self.state is S.SHUFFLED:
            self.emit(ev.ShuffleConfirmed(round=self.number, source="before close"))

    def _cmd_ConfirmShuffle(self, command: cmd.ConfirmShuffle) -> None:
        self._shuffle_done(f"{command.actor} ({command.role.value})")

    def _shuffle_done(self, source: str) -> None:
        if self.deck_blocked is not None:
            raise Refused(f"dealing is blocked until the deck is replaced or counted: "
                          f"{self.deck_blocked}")
        if self.state in _NO_ROUND:
            self._shuffle_pending = True
            self.emit(ev.ShuffleConfirmed(round=self.number + 1, source=source))
        elif self.state is S.BETTING:
            self.shuffled = True
            self.emit(ev.ShuffleConfirmed(round=self.number, source=source))
        elif self.state is S.CLOSED:
            self.shuffled = True
            self.confirm_shuffle()
            self.emit(ev.ShuffleConfirmed(round=self.number, source=source))
        else:
            self._shuffle_pending = True  # a shuffle for the next round (two-deck shufflers)
            self.emit(ev.ShuffleConfirmed(round=self.number + 1, source=source))

    def _cmd_ReplaceDeck(self, command: cmd.ReplaceDeck) -> None:
        self._release(f"{command.actor}: deck replaced")

    def _cmd_DeckCounted(self, command: cmd.DeckCounted) -> None:
        if command.count == 52:
            self._release(f"{command.actor}: deck counted, 52 cards")
            return
        self._deck_count_wrong(f"manual count gives {command.count} cards, not 52")

    def _release(self, by: str) -> None:
        if self.deck_blocked is None:
            raise Refused("dealing is not blocked")
        self.deck_blocked = None
        self.emit(ev.DeckReleased(round=self.number, by=by))

    def _deck_count_wrong(self, detail: str) -> None:
        clause = rule(self.rules, Kind.DECK_COUNT, self._context()).clause
        self.deck_blocked = detail
        self.emit(ev.DeckBlocked(round=self.number, reason=detail, clause=clause))
        # During betting nothing is dealt from the deck yet: blocking it is enough, and the
        # round deals once the deck is replaced or counted.
        if self.state in _IN_ROUND and self.state not in (S.VOIDED, S.BETTING):
            self._irregularity(Kind.DECK_COUNT, detail=detail)

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
        plays: tuple[Wager, ...] = ()
        if command.choice is cmd.Choice.PLAY:
            plays = tuple(Wager(f"{w.id}:play", position, "play", w.amount, w.player, w.seated)
                          for w in self.active_wagers()
                          if w.position == position and w.bet == "ante")
            for wager in plays:
                self.wagers[wager.id] = wager
        self.decisions[position] = command.choice
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
        if self.state is not S.REVEALED:
            raise Refused(f"the round cannot be settled in state {self.state.value}")
        self._settled_from = self.memory
        settlement, hands = self._settlement()
        self.settle_round()
        self.memory = settlement.memory
        self.last_settlement = settlement
        self.emit(ev.RoundSettled(round=self.number, settlement=settlement, hands=hands,
                                  returned_positions=tuple(self.removed.items())))

    def _settlement(self) -> tuple[Settlement, tuple[tuple[str, tuple[Card, ...]], ...]]:
        assert self.deal is not None
        active = self.active_wagers()
        hands = {position: tuple(cards) for position, cards in self.deal.hands.items()
                 if len(cards) == 3 and position not in self.removed}
        round_input = RoundInput(
            rules=self.rules, hands=MappingProxyType(hands), wagers=tuple(active),
            limits=self.layout.limits, memory=self.memory,
            rounding_unit=self.layout.rounding_unit,
            returned_positions=MappingProxyType(dict(self.removed)),
            progressive=self.layout.progressive)
        settled = settle(round_input)
        extra = tuple(Result(wid, Outcome.RETURNED, 0, clause)
                      for wid, clause in self.withdrawn.items() if wid in self.wagers)
        return Settlement((*settled.results, *extra), settled.memory), tuple(hands.items())

    def _cmd_PlayerOption(self, command: cmd.PlayerOption) -> None:
        if self.state is not S.OPTIONS or self.offer is None:
            raise Refused("no options are offered now (RWS-NC3P 5.7, MBS-R3P 5.7, 5.13)")
        offer = self.offer
        if command.position not in offer.pending:
            raise Refused(f"box {command.position} has no option pending")
        affected: tuple[str, ...] = ()
        if command.option is cmd.Option.WITHDRAW:
            if command.player is not None:
                chosen = [w for w in self.active_wagers() if w.player == command.player]
            else:
                chosen = [w for w in self.active_wagers() if w.position == command.position]
            affected = tuple(w.id for w in chosen)
            if self.rules.id is GameId.RWS_NC3P:
                self._remove_hand(command.position, "RWS-NC3P 5.7.3")
            else:
                for wager in chosen:
                    self.withdrawn[wager.id] = offer.clause
        offer.pending.discard(command.position)
        self.emit(ev.PlayerOptionTaken(round=self.number, position=command.position,
                                       option=command.option.value, wager_ids=affected,
                                       clause=offer.clause))
        if not offer.pending:
            self._close_options()

    def _cmd_CloseOptions(self, command: cmd.CloseOptions) -> None:
        if self.state is not S.OPTIONS:
            raise Refused("no options are offered now")
        self._close_options()

    def _close_options(self) -> None:
        self.offer = None
        self.resume()
        self._after_resume()

    def _cmd_ReportIrregularity(self, command: cmd.ReportIrregularity) -> None:
        if self.state is S.SETTLED and command.round_number in (None, self.number):
            self._after_settlement(command)
            return
        if command.round_number is not None and command.round_number != self.number \
                or self.state in _NO_ROUND:
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
        self._irregularity(command.kind, position=position, handled=command.handled,
                           exposed_before_drop=command.exposed_before_drop,
                           detail=command.details)

    def _after_settlement(self, command: cmd.ReportIrregularity) -> None:
        """A wrong count noticed after settlement but before the next round: RWS-NC3P 5.9 and
        5.5.5, MBS-R3P 5.5 and RWS-3CP 5.1.5 still apply ("provided that this is noticed before
        the commencement of the next round"), so the settlement is corrected; anything else
        stands. Reversing a settlement is a supervisor's decision."""
        ruling = after_settlement(self.rules, command.kind)
        if ruling.action is Action.STANDS:
            self.emit(ev.IrregularityRuled(round=self.number, kind=command.kind.value,
                                           action=ruling.action.value, clause=ruling.clause,
                                           note=ruling.note))
            return
        if command.role is not cmd.Role.SUPERVISOR:
            raise Refused(f"correcting a settled round ({ruling.clause}) is a Pit Supervisor's "
                          f"decision; {command.actor} acts as {command.role.value}")
        if self._corrected:
            raise Refused(f"round {self.number} was already voided after settlement")
        assert self.deal is not None and self._settled_from is not None
        position = command.position
        if ruling.action is Action.REMOVE_HAND and (
                position is None or position == self.rules.dealer
                or not self.deal.hands.get(position) or position in self.removed):
            raise Refused(f"{command.kind.value} needs a box that was dealt a hand in play, got "
                          f"{position!r}")
        self.emit(ev.IrregularityRuled(round=self.number, kind=command.kind.value,
                                       action=ruling.action.value, clause=ruling.clause,
                                       note=ruling.note))
        if ruling.action is Action.VOID:
            returned = (f"{ruling.clause}; RWS-NC3P 5.15" if self.rules.id is GameId.RWS_NC3P
                        else ruling.clause)
            settlement = void_round(tuple(self.wagers.values()), returned, self._settled_from)
            self._corrected = True
        else:
            assert position is not None
            self.removed[position] = ruling.clause
            self.emit(ev.HandRemoved(round=self.number, position=position,
                                     clause=ruling.clause))
            self.memory = self._settled_from
            settlement, _ = self._settlement()
        self.memory = settlement.memory
        self.last_settlement = settlement
        self.emit(ev.SettlementCorrected(round=self.number, clause=ruling.clause,
                                         reason=command.details or ruling.note,
                                         settlement=settlement,
                                         voided=ruling.action is Action.VOID,
                                         position=position if ruling.action is not Action.VOID
                                         else None))

    def _cmd_SupervisorDecision(self, command: cmd.SupervisorDecision) -> None:
        action = command.action
        if self.state is not S.HOLD:
            if action is cmd.SupervisorAction.VOID and self.state in _IN_ROUND:
                if not command.reason:
                    raise Refused("a management void needs a reason")
                clause = command.clause or general(self.rules, "management void").clause
                self.emit(ev.SupervisorDecided(round=self.number, actor=command.actor,
                                               action=action.value, clause=clause,
                                               reason=command.reason))
                self._void(command.reason, clause)
                return
            raise Refused(f"no supervisor decision is pending (state {self.state.value})")
        hold = self.hold_info
        assert hold is not None
        if action not in hold.ruling.options:
            raise Refused(f"{action.value} is not an option for {hold.kind.value} "
                          f"({hold.ruling.clause}); options: "
                          f"{', '.join(o.value for o in hold.ruling.options)}")
        ordered: list[dev.DeviceEvent] = []
        if action is cmd.SupervisorAction.ORDER:
            ordered = self._ordered_cards(command.cards, from_buffer=hold.kind is not Kind.NO_READ)
        if action is cmd.SupervisorAction.RECONSTRUCT:
            assert self.deal is not None
            if command.moves:
                self.deal.move_hands(command.moves)
            if command.hands:
                self.deal.override(dict(command.hands))
        self.emit(ev.SupervisorDecided(round=self.number, actor=command.actor, action=action.value,
                                       clause=hold.ruling.clause, reason=command.reason))
        self.hold_info = None
        if action is cmd.SupervisorAction.VOID:
            self._void(command.reason or hold.ruling.note, hold.ruling.clause)
            return
        if action is cmd.SupervisorAction.RECONSTRUCT and (command.moves or command.hands):
            self.emit(ev.HandsMoved(round=self.number, moves=command.moves,
                                    clause=hold.ruling.clause))
        rebuilt: list[Delivery] = []
        if action is cmd.SupervisorAction.RECONSTRUCT and hold.kind is Kind.BURN_ERROR:
            assert self.deal is not None
            rebuilt = self.deal.rebuild_after_extra_burns()
            self.emit(ev.HandsMoved(round=self.number, moves=(), clause=hold.ruling.clause))
        if action is cmd.SupervisorAction.NOT_RECONSTRUCTABLE:
            declined = hold.ruling.declined or Action.VOID
            if declined is Action.VOID:
                self._void(hold.ruling.note, hold.ruling.clause)
                return
            self.resume()
            self._remove_hand(hold.position or "", hold.ruling.clause)
            self._after_resume()
            return
        self.resume()
        self._assigned(rebuilt)
        for event in ordered:
            self._device(event)
        if hold.ruling.then is Action.PLAYER_OPTIONS and self.state in _RESUMABLE:
            self._offer_options("RWS-NC3P 5.11.1, 5.7")
            return
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
            self.buffer = [e for e in self.buffer if e not in taken]
        return [dev.CardRead(device="supervisor", card=card) for card in cards]

    def _after_resume(self) -> None:
        """Replay device events that arrived while the round was held, in arrival order."""
        pending, self.buffer = self.buffer, []
        for event in pending:
            self._device(event)
        self._maybe_finish_deal()

    # -- device events ----------------------------------------------------------------------
    def _device(self, event: dev.DeviceEvent) -> None:
        if isinstance(event, (dev.CardRead, dev.CardSetDispensed, dev.NoRead, dev.DoubleFeed)):
            self._echoes = {echo for echo in self._echoes if echo[0] != event.device}
        if isinstance(event, (dev.CardRead, dev.CardSetDispensed, dev.NoRead, dev.DoubleFeed)) \
                and self.state in (S.HOLD, S.OPTIONS):
            self.buffer.append(event)
            return
        if isinstance(event, dev.CardRead):
            self._card_read(event)
        elif isinstance(event, dev.CardSetDispensed):
            self._card_set(event)
        elif isinstance(event, dev.ShuffleDone):
            if event.counted != event.expected:
                self._deck_count_wrong(f"{event.device} counted {event.counted} cards, expected "
                                       f"{event.expected}")
            else:
                try:
                    self._shuffle_done(event.device)
                except Refused as refusal:
                    self._note(event, f"shuffle not accepted: {refusal}")
        elif isinstance(event, dev.ForeignCard):
            self._in_round_irregularity(event, Kind.FOREIGN_CARD,
                                        f"foreign card {event.barcode} {event.deck_id or ''}")
        elif isinstance(event, dev.NoRead):
            self._echoes.add((event.device, Kind.NO_READ))
            self._in_round_irregularity(event, Kind.NO_READ, "card not identified")
        elif isinstance(event, dev.DoubleFeed):
            self._in_round_irregularity(event, Kind.SIMULTANEOUS_DRAW, "two cards drawn together")
        elif isinstance(event, dev.FaultRaised):
            kind = _FAULT_KINDS.get(event.fault)
            if kind is Kind.DECK_COUNT and self.deck_blocked is not None:
                # the shuffler's fault bit echoes the count it already reported in ShuffleDone
                self._note(event, f"fault {event.fault.value} {event.detail} (deck already "
                           f"blocked)")
            elif kind is Kind.DECK_COUNT:
                self._deck_count_wrong(f"{event.device}: {event.fault.value} {event.detail}")
            elif kind is not None and (event.device, kind) in self._echoes:
                # the device flagged the card (or reported the no-read) AND raises the fault
                self._echoes.discard((event.device, kind))
                self._note(event, f"fault {event.fault.value} {event.detail} (already counted)")
            elif kind is Kind.EXPOSED_CARD and self.state in (S.BURN, S.DEALING):
                self.exposed += 1
                self._irregularity(kind, detail=event.detail)
            elif kind is not None and kind is not Kind.EXPOSED_CARD:
                if kind is Kind.JAMMED:
                    self._interruption(event, Kind.JAMMED)
                else:
                    self._in_round_irregularity(event, kind, event.detail)
            else:
                self._note(event, f"fault {event.fault.value} {event.detail}")
        elif isinstance(event, dev.DeviceOffline):
            self.offline[event.device] = event.reason or "offline"
            self._interruption(event, Kind.INTERRUPTION)
        elif isinstance(event, dev.DeviceRebooted):
            self._rebooted(event)
        elif isinstance(event, dev.DeviceOnline):
            self.offline.pop(event.device, None)
            self._note(event, type(event).__name__)
        else:
            self._note(event, type(event).__name__)

    def _note(self, event: dev.DeviceEvent, detail: str) -> None:
        self.emit(ev.DeviceNoted(round=self.number, device=event.device, detail=detail.strip()))

    def _in_round_irregularity(self, event: dev.DeviceEvent, kind: Kind, detail: str) -> None:
        if self.state in _NO_ROUND or self.state is S.HOLD:
            self._note(event, f"{kind.value}: {detail}")
            return
        self._irregularity(kind, detail=detail)

    def _rebooted(self, event: dev.DeviceRebooted) -> None:
        """A rebooted shuffler has lost its deck (and any shuffle not yet dealt from), so a
        shuffle confirmed before the deal no longer counts; during the deal it is an
        interruption like any other (RWS-NC3P 5.4, MBS-R3P 5.13)."""
        lost = self.layout.device is DealingDevice.SHUFFLER and \
            self.state not in (S.BURN, S.DEALING, S.DECISIONS, S.DEALT, S.REVEALED, S.HOLD,
                               S.OPTIONS)
        if lost and (self.shuffled or self._shuffle_pending):
            self.shuffled = self._shuffle_pending = False
            if self.state is S.SHUFFLED:
                self.lose_shuffle()  # nothing dealt yet: back to waiting for a shuffle
            self._note(event, "DeviceRebooted: the shuffle before it is lost; shuffle again")
            return
        self._interruption(event, Kind.INTERRUPTION)

    def _interruption(self, event: dev.DeviceEvent, kind: Kind) -> None:
        if self.state not in _DEALING_PHASES:
            what = type(event).__name__
            if self.state is S.BETTING and isinstance(event, dev.DeviceOffline):
                what += (": no card dealt, nothing established; the round continues when the "
                         "device returns, No more bets waits for it")
            self._note(event, f"{kind.value}: {what}")
            return
        self._irregularity(kind, detail=f"{event.device}: {type(event).__name__}")

    def _card_read(self, event: dev.CardRead) -> None:
        if event.card is None:
            self._in_round_irregularity(event, Kind.NO_READ, "card read without identity")
            return
        if not self._accept_cards(event, (event.card,)):
            return
        deal = self.deal
        assert deal is not None
        card = event.card
        if deal.burning:
            deal.mark_seen((card,))
            self.emit(ev.BurnCard(round=self.number, card=card, index=deal.burn(card)))
            if not deal.burning:
                self.start_deal()
            return
        if event.burn and deal.burn_target:
            deal.mark_seen((card,))
            self.emit(ev.BurnCard(round=self.number, card=card, index=deal.burn(card)))
            self._irregularity(Kind.BURN_ERROR, detail=f"extra burn card {card.code}")
            return
        first = deal.first_card
        deal.mark_seen((card,))
        self._assigned([deal.deliver_card(card)])
        if event.exposed:
            self._echoes.add((event.device, Kind.EXPOSED_CARD))
            self.exposed += 1
            self._irregularity(Kind.EXPOSED_CARD, detail=card.code, first_card=first)
        self._maybe_finish_deal()

    def _card_set(self, event: dev.CardSetDispensed) -> None:
        if not self._accept_cards(event, event.cards):
            return
        deal = self.deal
        assert deal is not None
        first = deal.first_card
        deal.mark_seen(event.cards)
        deliveries = deal.deliver_set(event.cards)
        self._assigned(deliveries)
        for _ in event.exposed:
            self._echoes.add((event.device, Kind.EXPOSED_CARD))
            self.exposed += 1
            self._irregularity(Kind.EXPOSED_CARD, detail="exposed in set", first_card=first)
            if self.state not in (S.DEALING, S.BURN):
                return
        for delivery in deliveries:
            if delivery.wrong_count and self.state in _RESUMABLE:
                kind = Kind.WRONG_COUNT_DEALER if delivery.position == self.rules.dealer \
                    else Kind.WRONG_COUNT_PLAYER
                self._irregularity(kind, position=delivery.position,
                                   detail=f"set of {len(delivery.cards)} cards")
        self._maybe_finish_deal()

    def _accept_cards(self, event: dev.DeviceEvent, cards: tuple[Card, ...]) -> bool:
        """Route a card by state; True when it may be dealt now."""
        state = self.state
        if state in _NO_ROUND or state in (S.DECISIONS, S.DEALT, S.REVEALED):
            kind, phase = Kind.CARD_AFTER_GAME, (Phase.NO_ROUND if state in _NO_ROUND
                                                 else Phase.DEALT)
            ruling = rule(self.rules, kind, self._context(phase=phase))
            if ruling.action is Action.IGNORE:
                for card in cards:
                    if self.deal is not None and state not in _NO_ROUND:
                        self.deal.mark_seen((card,))
                        self.deal.ignored.append(card)
                    self.emit(ev.CardIgnored(round=self.number, card=card, clause=ruling.clause,
                                             reason=ruling.note))
                return False
            self._apply(kind, ruling, None, ", ".join(c.code for c in cards))
            return False
        if state is S.BETTING:
            self._irregularity(Kind.EXPOSED_CARD, detail="card drawn while bets are offered")
            return False
        deal = self.deal
        assert deal is not None
        if state is S.CLOSED:
            if self.deck_blocked is not None:
                self._irregularity(Kind.DECK_COUNT, detail=f"card dealt from a blocked deck: "
                                   f"{self.deck_blocked}")
            else:
                self._irregularity(Kind.NOT_SHUFFLED, detail="card dealt with no shuffle "
                                   "confirmed for this deck")
            return False
        repeated = [card for card in cards if card in deal.seen] or \
            [card for i, card in enumerate(cards) if card in cards[:i]]
        if repeated:
            self._echoes.add((event.device, Kind.DUPLICATE_CARD))  # the shuffler's fault bit
            self._irregularity(Kind.DUPLICATE_CARD,
                               detail=f"second copy of {repeated[0].code} in this round")
            return False
        if state is S.SHUFFLED:
            # with queued=True a trigger always returns True: decide first, then trigger
            if self.must_burn():
                self.start_burn()
            else:
                self.start_deal()
        return self.state in (S.BURN, S.DEALING)

    def _assigned(self, deliveries: list[Delivery]) -> None:
        for delivery in deliveries:
            for offset, card in enumerate(delivery.cards):
                self.emit(ev.CardAssigned(round=self.number, position=delivery.position,
                                          card=card, index=delivery.first_index + offset))
            if delivery.completed and not delivery.wrong_count:
                assert self.deal is not None
                self.emit(ev.HandComplete(
                    round=self.number, position=delivery.position,
                    cards=tuple(self.deal.hands[delivery.position])))

    def _maybe_finish_deal(self) -> None:
        if self.state is S.DEALING and self.deal is not None and self.deal.complete:
            self.emit(ev.DealComplete(round=self.number))
            self.finish_deal()
            if self.state is S.DECISIONS and self.all_decided():
                self.decisions_done()

    # -- irregularities ---------------------------------------------------------------------
    def _context(self, phase: Phase | None = None, **overrides: object) -> Context:
        deal = self.deal
        if phase is None:
            phase = {S.BETTING: Phase.BETTING, S.CLOSED: Phase.BEFORE_DEAL,
                     S.SHUFFLED: Phase.BEFORE_DEAL, S.BURN: Phase.BURNING,
                     S.DEALING: Phase.DEALING}.get(self._effective_state(), Phase.DEALT)
            if self.state in _NO_ROUND:
                phase = Phase.NO_ROUND
        values: dict[str, object] = {
            "phase": phase,
            "manual_device": self.layout.manual,
            "handled": phase is Phase.DEALT,
            "first_card": deal is not None and deal.dealt <= 1,
            "exposed_count": self.exposed,
            "before_p1_second_card": deal is not None
            and deal.cards_of(self.rules.positions[0]) < 2,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Context(**values)  # type: ignore[arg-type]

    def _effective_state(self) -> RoundState:
        return self.source if self.state in (S.HOLD, S.OPTIONS) else self.state

    def _irregularity(self, kind: Kind, position: str | None = None, detail: str = "",
                      **context: object) -> None:
        established = None
        if kind in (Kind.INTERRUPTION, Kind.JAMMED):
            established = self._outcome_established()
        ruling = rule(self.rules, kind, self._context(established=established, **context))
        self._apply(kind, ruling, position, detail)

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

    def _apply(self, kind: Kind, ruling: Ruling, position: str | None, detail: str) -> None:
        log.info("irregularity", kind=kind.value, action=ruling.action.value,
                 clause=ruling.clause, detail=detail)
        if kind not in (Kind.CARD_AFTER_GAME,):
            self.emit(ev.DealingError(round=self.number, kind=kind.value, clause=ruling.clause,
                                      detail=detail))
        self.emit(ev.IrregularityRuled(round=self.number, kind=kind.value,
                                       action=ruling.action.value, clause=ruling.clause,
                                       note=ruling.note))
        action = ruling.action
        if action is Action.VOID:
            self._void(f"{ruling.note}: {detail}" if detail else ruling.note, ruling.clause)
        elif action is Action.REMOVE_HAND and position is not None:
            self._remove_hand(position, ruling.clause)
        elif action is Action.SUPERVISOR:
            if self.state not in (*_RESUMABLE, S.OPTIONS):
                return
            self.hold_info = Hold(kind, ruling, position)
            self.offer = None  # a hold during the options ends them: the rest continue
            self.hold()
            self.emit(ev.SupervisorRequired(round=self.number, kind=kind.value,
                                            clause=ruling.clause,
                                            options=tuple(o.value for o in ruling.options)))
        elif action is Action.PLAYER_OPTIONS:
            self._offer_options(ruling.clause)
        elif action is Action.SWAP_RESULTS:
            self.swapped = True
            self.emit(ev.ResultsSwapped(round=self.number, first=self.rules.positions[0],
                                        second=self.rules.positions[-1], clause=ruling.clause))

    def _offer_options(self, clause: str) -> None:
        positions = sorted({w.position for w in self.active_wagers()} - set(self.removed),
                           key=lambda p: (p not in self.rules.positions,
                                          self.rules.positions.index(p)
                                          if p in self.rules.positions else 0))
        if not positions:
            return
        self.offer = Offer(clause, set(positions))
        self.offer_options()
        self.emit(ev.PlayerOptionsOffered(round=self.number, clause=clause,
                                          positions=tuple(positions)))

    def _remove_hand(self, position: str, clause: str) -> None:
        if position in self.removed:
            return
        self.removed[position] = clause
        if self.deal is not None and position != self.rules.dealer:
            self.deal.drop_position(position)  # the cards still to come go to the boxes in play
        self.emit(ev.HandRemoved(round=self.number, position=position, clause=clause))

    def _void(self, reason: str, clause: str) -> None:
        # RWS-NC3P 5.15 says in so many words that a void returns all bets; the other rule sets
        # say it in the void clause itself ("the round of play shall be void").
        returned = f"{clause}; RWS-NC3P 5.15" if self.rules.id is GameId.RWS_NC3P else clause
        settlement = void_round(tuple(self.wagers.values()), returned, self.memory)
        self.void()
        self.hold_info = None
        self.offer = None
        self.buffer = []
        self.last_settlement = settlement
        self.emit(ev.RoundVoided(round=self.number, reason=reason, clause=clause,
                                 settlement=settlement))
