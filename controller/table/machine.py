"""The round as a ``transitions`` machine: states, guarded transitions, and what each input does.

Conditions are pure predicates over the machine's data; effects happen in ``after`` callbacks
(transitions has no rollback once the state has changed) and in the input handlers that run
after a successful trigger. ``queued=True`` because callbacks fire further triggers (a card that
completes the deal moves on to the decisions). Every input is handled by :meth:`handle`; an input
the rules forbid is refused with a :class:`CommandRefused` naming the reason and clause, and the
round loses nothing. Rulings on irregularities come from :mod:`controller.table.irregularities`.

This module holds the model: the transition list (:data:`TRANSITIONS`, declared once), the parts
the round's state lives in (each the only writer of its fields: :class:`~.betting.WagerBook`,
:class:`~.cards.RoundCards`, :class:`~.deck.Deck`, :class:`~.holds.Holds`,
:class:`~.options.Options`, :class:`~.settling.Money`, :class:`~.intake.Devices`,
:class:`~.clockgate.ClockGate`), and the entry point. Only this module assigns the round's own
attributes. What each input does lives in the handlers :class:`RoundMachine` is composed of,
one concern each, which own no field and change the round only by asking its parts:

- :mod:`~controller.table.core`: the read-only views, the guard conditions and the output;
- :mod:`~controller.table.betting`: wagers, "No more bets", the shuffle and the deck;
- :mod:`~controller.table.intake`: device events and card intake;
- :mod:`~controller.table.rulings`: irregularities ruled and applied;
- :mod:`~controller.table.holds`: supervisor decisions, player options, resuming;
- :mod:`~controller.table.settling`: decisions, the reveal, settlement and corrections;
- :mod:`~controller.table.clockgate`: no round opens on an untrusted clock (the ``[clock]``
  policy);
- :mod:`~controller.table.protection`: game-protection findings (alerts, a short deck held).

The states and the small values kept between inputs are in :mod:`~controller.table.states`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from transitions import Machine, MachineError

from controller.errors import TablectlError
from controller.settlement import TableMemory
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.betting import BettingMixin, WagerBook
from controller.table.clockgate import ClockGate, ClockGateMixin
from controller.table.cards import RoundCards
from controller.table.deck import Deck
from controller.table.holds import Holds, HoldsMixin
from controller.table.intake import Devices, IntakeMixin
from controller.table.commands import Source
from controller.table.layout import TableLayout
from controller.table.options import Offer, Options
from controller.table.protection import ProtectionMixin
from controller.table.positions import check_positions
from controller.table.rulings import RulingsMixin
from controller.table.settling import Money, SettlingMixin
from controller.table.states import (
    IN_ROUND,
    NO_ROUND,
    RESUMABLE,
    Hold,
    Kind,
    Refused,
    RoundState,
    S,
)
from controller.games.rules import GameId
from drivers import events as dev

SUPERVISOR_AUTHORITY = {
    GameId.RWS_NC3P: "RWS-NC3P 5.11, 5.17",
    GameId.MBS_R3P: "MBS-R3P 6.1",
    GameId.LIVE_3P: "LIVE-3P T&C 1, 5, 6",
    GameId.MBS_3P: "MBS-3P (no clause names who decides; house: a Pit Supervisor or above)",
    GameId.RWS_3CP: "RWS-3CP (no clause names who decides; house: a Pit Supervisor or above)",
}
"""Who decides what a supervisor decides, cited from the table's own game (issue 11: an RWS-3CP
table cited the clauses of three other games)."""


@dataclass(frozen=True, slots=True)
class CameFrom:
    """The ``resume`` condition: the round goes back to the state it was held (or offered the
    options) in, which the trigger is given (``resume(source)``)."""

    target: RoundState

    def __call__(self, source: RoundState) -> bool:
        return source is self.target


TRANSITIONS: tuple[dict[str, object], ...] = (
    {"trigger": "open_round", "source": list(NO_ROUND), "dest": S.BETTING},
    {"trigger": "close_bets", "source": S.BETTING, "dest": S.SHUFFLED,
     "conditions": "is_shuffled"},
    {"trigger": "close_bets", "source": S.BETTING, "dest": S.CLOSED},
    {"trigger": "confirm_shuffle", "source": S.CLOSED, "dest": S.SHUFFLED,
     "conditions": "deck_usable"},
    {"trigger": "lose_shuffle", "source": S.SHUFFLED, "dest": S.CLOSED},
    {"trigger": "start_burn", "source": S.SHUFFLED, "dest": S.BURN, "conditions": "must_burn"},
    {"trigger": "start_deal", "source": [S.SHUFFLED, S.BURN], "dest": S.DEALING},
    {"trigger": "finish_deal", "source": S.DEALING, "dest": S.DECISIONS,
     "conditions": "needs_decisions"},
    {"trigger": "finish_deal", "source": S.DEALING, "dest": S.REVEALED, "conditions": "face_up"},
    {"trigger": "finish_deal", "source": S.DEALING, "dest": S.DEALT},
    {"trigger": "decisions_done", "source": S.DECISIONS, "dest": S.DEALT,
     "conditions": "all_decided"},
    {"trigger": "reveal", "source": S.DEALT, "dest": S.REVEALED},
    {"trigger": "settle_round", "source": S.REVEALED, "dest": S.SETTLED,
     "conditions": "can_settle"},
    # a hold after settlement: a correction whose clause asks a question (RWS-NC3P 5.9)
    {"trigger": "hold", "source": [*RESUMABLE, S.OPTIONS, S.SETTLED], "dest": S.HOLD,
     "before": "_remember_source"},
    {"trigger": "offer_options", "source": [*RESUMABLE, S.HOLD], "dest": S.OPTIONS,
     "before": "_remember_source"},
    *({"trigger": "resume", "source": [S.HOLD, S.OPTIONS], "dest": target,
       "conditions": CameFrom(target)} for target in (*RESUMABLE, S.SETTLED)),
    {"trigger": "void", "source": list(IN_ROUND), "dest": S.VOIDED},
)
"""The round's transitions, declared once (as ``transitions``' own examples keep them): each
condition names a pure predicate of the model (:mod:`~controller.table.core`); effects happen in
the input handlers after a successful trigger."""


class RoundMachine(BettingMixin, IntakeMixin, RulingsMixin, HoldsMixin, SettlingMixin,
                   ClockGateMixin, ProtectionMixin):
    """One table's rounds. Not thread-safe by design: only the table thread calls it."""

    def __init__(self, layout: TableLayout, emit: Callable[[ev.RoundEvent], None],
                 memory: TableMemory = TableMemory()) -> None:
        # the parts kept across rounds; the round's own parts are made new by _reset_round
        self.layout = layout
        self.rules = layout.rules
        self.money = Money(memory)
        self._emit_to = emit
        self.number = 0
        self.devices = Devices()
        self.clock_gate = ClockGate()
        self.deck = Deck()
        self.machine = Machine(model=self, states=RoundState, initial=S.IDLE, queued=True,
                               auto_transitions=False, model_attribute="state",
                               transitions=[dict(t) for t in TRANSITIONS])
        self._reset_round()

    # -- the round's data ----------------------------------------------------------------------
    def _reset_round(self) -> None:
        """A new round: a new wager book, cards, holds and options; the money forgets the last
        round's settlement (not the table's memory)."""
        self.book = WagerBook()
        self.cards = RoundCards()
        self.holds = Holds()
        self.options = Options()
        self.money.new_round()

    # -- entry point ------------------------------------------------------------------------
    def handle(self, item: object) -> None:
        """Apply one input. Never raises for a bad input: it is refused with the reason."""
        try:
            if isinstance(item, cmd.Command):
                self._command(item)
            elif isinstance(item, dev.ClockReport):
                self._clock(item)
            elif isinstance(item, dev.ProtectionReport):
                self._protection(item)
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
        if isinstance(command, cmd.ClearDeviceFault) and command.role is not cmd.Role.SUPERVISOR:
            raise Refused(f"clearing a device fault belongs to a Pit Supervisor or above; "
                          f"{command.actor} acts as {command.role.value}")
        if isinstance(command, cmd.SupervisorDecision) and command.role is not cmd.Role.SUPERVISOR:
            raise Refused(f"{command.action.value}: this decision belongs to a Pit Supervisor or "
                          f"above ({SUPERVISOR_AUTHORITY[self.rules.id]}); "
                          f"{command.actor} acts as {command.role.value}")
        check_positions(self.layout, command)
        if self.state is S.HOLD and not isinstance(
                command, (cmd.SupervisorDecision, cmd.ReportIrregularity, cmd.ReplaceDeck,
                          cmd.DeckCounted, cmd.ClearDeviceFault)):
            assert self.hold_info is not None
            raise Refused(f"round held for a supervisor decision on "
                          f"{self.hold_info.kind.value} ({self.hold_info.ruling.clause})")
        handler(command)

    def _cmd_OpenRound(self, command: cmd.OpenRound) -> None:
        if self.state not in NO_ROUND:
            # no number here: the table's own count differs from the journal's round number
            # that status and the refusal event show
            raise Refused(f"the current round is still in progress ({self.state.value})")
        self._check_clock_for_round()
        self.open_round()
        self.number += 1
        self._reset_round()
        self.deck.new_round()
        self.emit(ev.RoundOpened(round=self.number, game=self.rules.id.value,
                                 table=self.layout.table_id))
        found = self.devices.take_face_up()
        if found:  # found face up while shuffling for this round
            self._exposure(Source.DEVICE, cards=found,
                           detail=f"{found} card(s) found face up while shuffling")

    def _cmd_ClearDeviceFault(self, command: cmd.ClearDeviceFault) -> None:
        held = self.hold_info if self.state is S.HOLD else None
        self.emit(ev.DeviceFaultClearOrdered(
            round=self.number, device=command.device, actor=command.actor,
            clause=held.ruling.clause if held is not None else "", reason=command.reason))


__all__ = ["Hold", "Kind", "Offer", "Refused", "RoundMachine", "RoundState"]
