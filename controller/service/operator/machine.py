"""The device side as a plain ``transitions`` model: what the shuffler is doing, what the round
wants of it, and the one next command (if any). Pure: no I/O, no clock of its own.

Inputs are typed: device events (after the table took them in), the round's events (through
:class:`~.roundview.OperatorView`), the outcome of each command the runner sent, and the expiry of
the current state's wait. :meth:`DeviceMachine.next_action` decides from the device state and
the round's stage, so that every combination has a defined next step or a named wait:

======================  ====================================================================
device \\ round          what happens
======================  ====================================================================
IDLE, round closed      SHUFFLE (BAD_STATE: END_ROUND, then SHUFFLE once more; then back off)
IDLE, round dealing     the deck is gone mid-deal (a reboot): hold; a supervisor voids
READY, wants a hand     DISPENSE_HAND (a BAD_STATE reply: ask STATUS, follow the device)
READY, round over       END_ROUND (every round: settled, voided or abandoned)
PRESENTED, round over   END_ROUND (the presented hand is collected with the rest)
READY, round closed     END_ROUND, then SHUFFLE: a deck left from before is never dealt from
FAULT                   wait for ``supervisor clear-fault`` (CLEAR_FAULT, then STATUS)
any wait expired        STATUS, and follow what the device says
a failure               back off (exponential, capped); after MAX_FAILURES: hold
======================  ====================================================================

The model owns its state (and, when it holds, why); everything else belongs to a part that is
the only code writing its fields, and the model asks it (``tests/controller/service/
test_operator_ownership.py`` holds this):

- :class:`~.roundview.OperatorView` (``view``): the round as the operator sees it;
- :class:`~.reported.Reported` (``said``): the device's own word: faults, cards left, its state;
- :class:`~.effort.Streak` (``streak``) and :class:`~.effort.RoundCosts` (``costs``): bounded
  effort, per failure streak and per round;
- :class:`~.waits.Waits` (``waits``): ``now``, the current deadline, the end of a backoff;
- :class:`~.orders.Orders` (``orders``): the command an input made due, the last error.

The transitions are one declarative list, :data:`TRANSITIONS`. The device speaks device-level
words (:class:`drivers.events.DeviceMode`, :class:`drivers.events.RefusalCause`): no module of
the operator imports a wire protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import structlog
from transitions import Machine

from controller.journal.recorder import Phase
from controller.service.operator.effort import RoundCosts, Streak
from controller.service.operator.orders import Orders
from controller.service.operator.reported import Reported
from controller.service.operator.roundview import OperatorView, Signal
from controller.service.operator.states import (
    WAIT_SECONDS,
    DeviceAction,
    HoldReason,
    Op,
    Stage,
)
from controller.service.operator.waits import Waits
from controller.service.operator.wayout import offline_way_out, way_out
from controller.table import events as ev
from controller.table.awaited import AwaitedOptions
from drivers import events as dev
from drivers.errors import CommandRejected, DeviceDisconnected, DeviceFault, DriverError
from drivers.events import DeviceMode, DeviceReport, RefusalCause

log = structlog.get_logger(__name__)

ANY = "*"
"""Every state, as ``transitions`` spells it."""


@dataclass(frozen=True, slots=True)
class Move:
    """One transition: ``trigger`` takes the model from ``source`` to ``dest``. A move with
    ``reports`` applies only when the device's last STATUS said one of them (``sync`` follows
    the device: the first move whose words match wins, in the order of :data:`TRANSITIONS`)."""

    trigger: str
    source: tuple[Op, ...] | str
    dest: Op
    reports: tuple[DeviceMode, ...] = ()


_LIVE = tuple(o for o in Op if o not in (Op.OFFLINE, Op.HELD))
"""States in which a device fault can be raised (offline: no device; held: a supervisor's)."""

TRANSITIONS: tuple[Move, ...] = (
    Move("went_offline", ANY, Op.OFFLINE),
    Move("sync", ANY, Op.IDLE, (DeviceMode.IDLE,)),
    Move("sync", ANY, Op.SHUFFLING, (DeviceMode.SHUFFLING,)),
    Move("sync", ANY, Op.READY, (DeviceMode.READY, DeviceMode.DEALING)),
    Move("sync", ANY, Op.FORMING, (DeviceMode.DISPENSING,)),
    Move("sync", ANY, Op.PRESENTED, (DeviceMode.HAND_WAITING,)),
    Move("sync", ANY, Op.FAULT),  # FAULT, or a state the operator cannot follow
    Move("shuffle_acked", (Op.IDLE, Op.BACKING_OFF), Op.SHUFFLING),
    Move("hand_acked", (Op.READY, Op.BACKING_OFF), Op.FORMING),
    Move("round_ended", (Op.READY, Op.PRESENTED, Op.BACKING_OFF, Op.IDLE), Op.IDLE),
    Move("shuffle_done", (Op.SHUFFLING, Op.IDLE, Op.BACKING_OFF, Op.READY), Op.READY),
    Move("hand_ready", (Op.FORMING, Op.READY, Op.BACKING_OFF), Op.PRESENTED),
    Move("hand_taken", (Op.PRESENTED, Op.FORMING), Op.READY),
    Move("faulted", _LIVE, Op.FAULT),
    Move("back_off", ANY, Op.BACKING_OFF),
    Move("hold", ANY, Op.HELD),
)
"""Every transition of the device side, in one place (the triggers are the model's methods)."""

_WAITING_ON_DEVICE = (Op.SHUFFLING, Op.FORMING)
"""Waits whose expiry is a failure: the device took a command and did not finish it."""


class DeviceMachine:
    """``DeviceMachine(name)``; feed it, then ask :meth:`next_action`. See the module doc."""

    state: Op
    """Written only by the model's own ``transitions`` machine (:data:`TRANSITIONS`)."""
    hold_reason: HoldReason | None
    """Why the model is HELD; ``None`` in every other state."""

    # the triggers ``transitions`` adds to the model (see TRANSITIONS)
    went_offline: Any
    sync: Any
    shuffle_acked: Any
    hand_acked: Any
    round_ended: Any
    shuffle_done: Any
    hand_ready: Any
    hand_taken: Any
    faulted: Any
    back_off: Any
    hold: Any

    def __init__(self, name: str = "shuffler", view: OperatorView | None = None) -> None:
        self.name = name
        self.view = view or OperatorView()
        self.said = Reported()
        self.streak = Streak()
        self.costs = RoundCosts()
        self.waits = Waits()
        self.orders = Orders()
        self.hold_reason = None
        self.machine = Machine(model=self, states=Op, initial=Op.OFFLINE, queued=True,
                               transitions=[self._spec(move) for move in TRANSITIONS],
                               auto_transitions=False, model_attribute="state",
                               after_state_change=self._entered, ignore_invalid_triggers=True)

    def _spec(self, move: Move) -> dict[str, Any]:
        """One :class:`Move` as ``transitions`` takes it; a ``reports`` move asks the device's
        last word (:class:`~.reported.Reported`), never a field of the model."""
        spec: dict[str, Any] = {"trigger": move.trigger, "dest": move.dest,
                                "source": move.source if move.source == ANY else
                                list(move.source)}
        if move.reports:
            spec["conditions"] = [partial(self.said.reports, *move.reports)]
        return spec

    def _entered(self) -> None:
        self.waits.enter(self.state)
        if self.state is not Op.HELD:
            self.hold_reason = None
        log.debug("device operator state", device=self.name, state=self.state.value)

    # what the parts say, for the runner and the status line ---------------------------------
    @property
    def faults(self) -> frozenset[dev.Fault]:
        return self.said.faults

    @property
    def cards_left(self) -> int | None:
        return self.said.cards_left

    @property
    def deadline(self) -> float | None:
        """When the current wait expires (``None``: it waits for an input)."""
        return self.waits.deadline

    @property
    def last_error(self) -> str:
        return self.orders.last_error

    @property
    def order(self) -> DeviceAction | None:
        """A command decided by an input (STATUS to resync, CLEAR_FAULT by a supervisor)."""
        return self.orders.due

    # inputs ---------------------------------------------------------------------------------
    def resume(self, number: int, phase: Phase, resumes_to: Phase, *,
               deck_blocked: bool = False, awaited: AwaitedOptions | None = None) -> None:
        """After a restart, before any input: the round recovery left open (``awaited``: the
        players' options it left open)."""
        self.view.resume(number, phase, resumes_to, deck_blocked, awaited)

    def device(self, event: dev.DeviceEvent, now: float) -> None:
        """A device event, after the table took it in."""
        self.waits.at(now)
        if isinstance(event, dev.DeviceOffline):
            self.said.offline()
            self.went_offline()
        elif isinstance(event, (dev.DeviceOnline, dev.DeviceRebooted)):
            self.said.online(rebooted=isinstance(event, dev.DeviceRebooted))
            self._release()
            self.orders.give(DeviceAction.STATUS)
        elif isinstance(event, dev.ShuffleDone):
            self.said.shuffled(event.counted)
            self.streak.end()
            if self.state is not Op.HELD:
                self.shuffle_done()
        elif isinstance(event, dev.CardSetDispensed):
            self.said.dispensed(len(event.cards))
            self.streak.end()
            if self.state is not Op.HELD:
                self.hand_ready()
        elif isinstance(event, dev.HandTaken):
            self.streak.end()
            if self.state in (Op.PRESENTED, Op.FORMING):
                self.hand_taken()
        elif isinstance(event, dev.FaultRaised):
            self.said.raised(event.fault)
            if self.state not in (Op.OFFLINE, Op.HELD):
                self.faulted()
        elif isinstance(event, dev.FaultCleared):
            self.said.cleared(event.fault)
            if not self.said.faults and self.state is Op.FAULT:
                self.orders.give(DeviceAction.STATUS)  # what the device is now, it says

    def round_events(self, events: list[ev.RoundEvent], now: float) -> None:
        """The events one table input caused, in order."""
        self.waits.at(now)
        for event in events:
            signal = self.view.follow(event)
            if signal is Signal.NEW_ROUND:
                self.costs.new_round()
                self._release()
            elif signal is Signal.ROUND_ENDED:
                self._release()
            elif signal is Signal.CLEAR_FAULT and event_device(event) == self.name:
                self.streak.end()
                self._release()
                self.orders.give(DeviceAction.CLEAR_FAULT)

    def expired(self, now: float, online: bool) -> None:
        """The current state's wait is over (see states.WAIT_SECONDS)."""
        self.waits.at(now)
        state = self.state
        if state is Op.HELD:
            log.warning("device operator held for a supervisor", device=self.name,
                        reason=self.hold_reason.value if self.hold_reason else None,
                        way_out=self.way_out()[1])
            self._entered()
            return
        if state is Op.OFFLINE and not online:
            self._entered()
            return
        if state is Op.BACKING_OFF:
            self.waits.over()
            self.orders.give_unless_due(DeviceAction.STATUS)
            return
        if state in _WAITING_ON_DEVICE:
            self._failed(DeviceAction.STATUS, f"no answer from the {state.value} device in "
                         f"{WAIT_SECONDS[state]:g} s")
            return
        self.orders.give(DeviceAction.STATUS)
        self.waits.over()

    def _release(self) -> None:
        """Out of a hold: look at the device at once (a backoff that expires now)."""
        if self.state is Op.HELD:
            self.waits.back_off(0.0)
            self.back_off()

    # decisions ------------------------------------------------------------------------------
    def next_action(self) -> DeviceAction | None:
        """The one command to send now, or ``None`` (waiting; :attr:`deadline` says until)."""
        state, view, due = self.state, self.view, self.orders.due
        if state is Op.HELD or state is Op.BACKING_OFF and self.waits.deadline is not None \
                and due is not DeviceAction.CLEAR_FAULT:
            return None  # held: only a supervisor; backing off: only its expiry
        if due is not None:
            return due
        if state is Op.IDLE and (view.wants_shuffle or view.wants_hand):
            if view.stage is Stage.DEALING:
                self._hold(HoldReason.DECK_LOST)
                return None
            if not self.costs.may_shuffle:
                self._hold(HoldReason.RUNAWAY)
                return None
            return DeviceAction.SHUFFLE
        if state is Op.PRESENTED and view.over:
            return DeviceAction.END_ROUND  # decision 2: the presented hand is collected with the rest
        if state is Op.READY:
            if view.over or view.wants_shuffle:
                return DeviceAction.END_ROUND
            if view.wants_hand:
                if not self.costs.may_dispense:
                    self._hold(HoldReason.RUNAWAY)
                    return None
                return DeviceAction.DISPENSE_HAND
        return None

    def _hold(self, reason: HoldReason) -> None:
        self.orders.drop()
        self.hold()
        self.hold_reason = reason
        log.warning("device operator holds for a supervisor", device=self.name,
                    reason=reason.value, round=self.view.round)

    # outcomes -------------------------------------------------------------------------------
    def succeeded(self, action: DeviceAction, now: float, reply: Any = None) -> None:
        """``action`` was answered; ``reply`` is the driver's answer (a STATUS reply, read
        through :meth:`drivers.events.DeviceReport.of`)."""
        self.waits.at(now)
        self.orders.sent(action)
        self.orders.succeeded()
        if action is DeviceAction.STATUS:
            self.said.status(DeviceReport.of(reply))
            self.sync()
        elif action is DeviceAction.SHUFFLE:
            self.costs.shuffled()
            self.shuffle_acked()
        elif action is DeviceAction.DISPENSE_HAND:
            self.costs.dispensed()
            self.hand_acked()
        elif action is DeviceAction.END_ROUND:
            self.said.collected()
            self.round_ended()
        elif action is DeviceAction.CLEAR_FAULT:
            self.orders.give(DeviceAction.STATUS)  # FAULT_CLEARED may come before or after the ACK

    def failed(self, action: DeviceAction, error: DriverError, now: float) -> dev.CommandFailed | None:
        """A command failed; the journal record of the whole streak when the operator gives
        up (once), else ``None``."""
        self.waits.at(now)
        self.orders.sent(action)
        cause = RefusalCause.of(getattr(error, "reason", None))
        if isinstance(error, DeviceFault):
            # a fault is active, or the device rebooted under the command: ask it which
            self.orders.failed(f"{self.name}: {action.value}: {error}")
            self.orders.give(DeviceAction.STATUS)
            return None
        if action is DeviceAction.SHUFFLE and cause is RefusalCause.BAD_STATE and \
                self.costs.retry_refused_shuffle():
            self.orders.give(DeviceAction.END_ROUND)  # strict devices want END_ROUND first (5.2)
            self.orders.failed(f"{self.name}: shuffle refused (BAD_STATE): ending the round "
                               "first")
            return None
        if isinstance(error, CommandRejected) and cause is RefusalCause.BAD_STATE and \
                action is not DeviceAction.SHUFFLE:
            self.orders.give(DeviceAction.STATUS)  # the device is not where we thought: ask it
        return self._failed(action, str(error), link_lost=isinstance(error, DeviceDisconnected))

    def _failed(self, action: DeviceAction, error: str, *,
                link_lost: bool = False) -> dev.CommandFailed | None:
        """One more failure of the streak (bounded: a hold for a supervisor when exhausted).
        ``link_lost``: the link went under the command, so the operator is offline until the
        table has taken the device back (its ``DeviceOnline`` input, after the
        ``DeviceOffline`` and whatever the table ruled on it): a STATUS on the driver's own
        word, before the table had ruled the interruption, dealt on into a held round."""
        now = self.waits.now
        self.streak.fail(action.value, error, now)
        self.orders.failed(f"{self.name}: {action.value} failed: {error}")
        if self.streak.exhausted:
            summary = self.streak.summary()
            record = dev.CommandFailed(self.name, now, **summary)  # type: ignore[arg-type]
            log.error("device_command_failed", device=self.name, **summary)
            self._hold(HoldReason.REPEATED_FAILURE)
            return record
        if link_lost:
            self.orders.drop()
            self.went_offline()  # its exit is the table's DeviceOnline (or the long look)
            return None
        self.waits.back_off(self.streak.delay())
        self.back_off()  # its expiry orders STATUS (unless an order is already due)
        return None

    # liveness -------------------------------------------------------------------------------
    @property
    def deck_lost(self) -> bool:
        """The device has no deck for a round whose cards are being dealt (it rebooted
        mid-deal): held for it already, or about to be as soon as a held round goes on. So a
        supervisor's "continue" could only lead to this hold: it is not offered, and refused."""
        if self.hold_reason is HoldReason.DECK_LOST:
            return True
        return self.state is Op.IDLE and self.view.stage is Stage.HELD \
            and self.view.resume_to is Stage.DEALING

    def way_out(self) -> tuple[str, str, str]:
        """(what the device side waits for, the verb that gets it out, that verb's role)."""
        return way_out(self)


def event_device(event: ev.RoundEvent) -> str:
    return str(getattr(event, "device", ""))


__all__ = ["TRANSITIONS", "DeviceMachine", "Move", "offline_way_out"]
