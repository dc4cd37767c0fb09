"""The device side as a ``transitions`` machine: what the shuffler is doing, what the round
wants of it, and the one next command (if any). Pure: no I/O, no clock of its own.

Inputs are typed: device events (after the table took them in), the round's events (through
:class:`~.roundview.RoundView`), the outcome of each command the runner sent, and the expiry of
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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog
from transitions import Machine

from controller.service.operator.effort import Streak
from controller.service.operator.roundview import Deck, RoundView, Signal
from controller.service.operator.states import (
    MAX_HANDS_PER_ROUND,
    MAX_SHUFFLES_PER_ROUND,
    WAIT_SECONDS,
    Action,
    HoldReason,
    Op,
    Stage,
)
from controller.table import events as ev
from drivers import events as dev
from drivers.errors import CommandRejected, DeviceFault, DriverError
from drivers.framed.messages import DeviceState, NakReason

log = structlog.get_logger(__name__)

_OP_OF_DEVICE = {DeviceState.IDLE: Op.IDLE, DeviceState.SHUFFLING: Op.SHUFFLING,
                 DeviceState.READY: Op.READY, DeviceState.DISPENSING: Op.FORMING,
                 DeviceState.HAND_WAITING: Op.PRESENTED, DeviceState.FAULT: Op.FAULT,
                 DeviceState.DEALING: Op.READY}
_WAITING_ON_DEVICE = (Op.SHUFFLING, Op.FORMING)
"""Waits whose expiry is a failure: the device took a command and did not finish it."""


@dataclass(slots=True)
class _Round:
    """What this round has cost so far (bounded: see states.MAX_*)."""

    shuffles: int = 0
    hands: int = 0
    bad_state_retried: bool = False


class DeviceMachine:
    """``DeviceMachine(name)``; feed it, then ask :meth:`next_action`. See the module doc."""

    state: Op

    def __init__(self, name: str = "shuffler", view: RoundView | None = None) -> None:
        self.name = name
        self.view = view or RoundView()
        self.faults: frozenset[dev.Fault] = frozenset()
        self.streak = Streak()
        self.costs = _Round()
        self.hold_reason: HoldReason | None = None
        self.order: Action | None = None
        """A command decided by an input (STATUS to resync, CLEAR_FAULT by a supervisor)."""
        self.deadline: float | None = None
        self.backoff_until: float | None = None
        self.last_error = ""
        self.cards_left: int | None = None
        """Cards in the shuffler's deck, for the dealer's screen: the device's own count from
        STATUS or SHUFFLE_DONE, less each set dispensed since; ``None`` while unknown (offline,
        after a reboot). A count only, never which cards (docs/protocols.md, STATUS)."""
        self.machine = Machine(model=self, states=Op, initial=Op.OFFLINE, queued=True,
                               auto_transitions=False, model_attribute="state",
                               after_state_change="_entered", ignore_invalid_triggers=True)
        add = self.machine.add_transition
        add("went_offline", "*", Op.OFFLINE)
        add("sync", "*", Op.IDLE, conditions="_reports_idle")
        add("sync", "*", Op.SHUFFLING, conditions="_reports_shuffling")
        add("sync", "*", Op.READY, conditions="_reports_ready")
        add("sync", "*", Op.FORMING, conditions="_reports_forming")
        add("sync", "*", Op.PRESENTED, conditions="_reports_presented")
        add("sync", "*", Op.FAULT)
        add("shuffle_acked", [Op.IDLE, Op.BACKING_OFF], Op.SHUFFLING)
        add("hand_acked", [Op.READY, Op.BACKING_OFF], Op.FORMING)
        add("round_ended", [Op.READY, Op.PRESENTED, Op.BACKING_OFF, Op.IDLE], Op.IDLE)
        add("shuffle_done", [Op.SHUFFLING, Op.IDLE, Op.BACKING_OFF, Op.READY], Op.READY)
        add("hand_ready", [Op.FORMING, Op.READY, Op.BACKING_OFF], Op.PRESENTED)
        add("hand_taken", [Op.PRESENTED, Op.FORMING], Op.READY)
        add("faulted", [o for o in Op if o not in (Op.OFFLINE, Op.HELD)], Op.FAULT)
        add("back_off", "*", Op.BACKING_OFF)
        add("hold", "*", Op.HELD)
        self._now = 0.0
        self._reported: DeviceState | None = None

    # conditions (sync follows what STATUS said) ---------------------------------------------
    def _reports(self, *states: DeviceState) -> bool:
        return self._reported in states

    def _reports_idle(self) -> bool:
        return self._reports(DeviceState.IDLE)

    def _reports_shuffling(self) -> bool:
        return self._reports(DeviceState.SHUFFLING)

    def _reports_ready(self) -> bool:
        return self._reports(DeviceState.READY, DeviceState.DEALING)

    def _reports_forming(self) -> bool:
        return self._reports(DeviceState.DISPENSING)

    def _reports_presented(self) -> bool:
        return self._reports(DeviceState.HAND_WAITING)

    def _entered(self) -> None:
        wait = WAIT_SECONDS[self.state]
        if self.state is Op.BACKING_OFF:
            self.deadline = self.backoff_until
        else:
            self.deadline = None if wait is None else self._now + wait
        if self.state is not Op.HELD:
            self.hold_reason = None
        log.debug("device operator state", device=self.name, state=self.state.value)

    # inputs ---------------------------------------------------------------------------------
    def device(self, event: dev.DeviceEvent, now: float) -> None:
        """A device event, after the table took it in."""
        self._now = now
        if isinstance(event, dev.DeviceOffline):
            self.cards_left = None
            self.went_offline()
        elif isinstance(event, (dev.DeviceOnline, dev.DeviceRebooted)):
            self.cards_left = None  # until STATUS says
            if isinstance(event, dev.DeviceRebooted):
                self.faults = frozenset()  # a new boot: every fault and hand is forgotten
            self._release()
            self.order = Action.STATUS
        elif isinstance(event, dev.ShuffleDone):
            self.cards_left = event.counted
            self.streak.end()
            if self.state is not Op.HELD:
                self.shuffle_done()
        elif isinstance(event, dev.CardSetDispensed):
            if self.cards_left is not None:
                self.cards_left = max(0, self.cards_left - len(event.cards))
            self.streak.end()
            if self.state is not Op.HELD:
                self.hand_ready()
        elif isinstance(event, dev.HandTaken):
            self.streak.end()
            if self.state in (Op.PRESENTED, Op.FORMING):
                self.hand_taken()
        elif isinstance(event, dev.FaultRaised):
            self.faults = self.faults | {event.fault}
            if self.state not in (Op.OFFLINE, Op.HELD):
                self.faulted()
        elif isinstance(event, dev.FaultCleared):
            self.faults = self.faults - {event.fault}
            if not self.faults and self.state is Op.FAULT:
                self.order = Action.STATUS  # what the device is now, it says

    def round_events(self, events: list[ev.RoundEvent], now: float) -> None:
        """The events one table input caused, in order."""
        self._now = now
        for event in events:
            signal = self.view.follow(event)
            if signal is Signal.NEW_ROUND:
                self.costs = _Round()
                self._release()
            elif signal is Signal.ROUND_ENDED:
                self._release()
            elif signal is Signal.CLEAR_FAULT and event_device(event) == self.name:
                self.streak.end()
                self._release()
                self.order = Action.CLEAR_FAULT

    def expired(self, now: float, online: bool) -> None:
        """The current state's wait is over (see states.WAIT_SECONDS)."""
        self._now = now
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
            self.deadline = None
            if self.order is None:
                self.order = Action.STATUS
            return
        if state in _WAITING_ON_DEVICE:
            self._failed(Action.STATUS, f"no answer from the {state.value} device in "
                         f"{WAIT_SECONDS[state]:g} s")
            return
        self.order = Action.STATUS
        self.deadline = None

    def _release(self) -> None:
        """Out of a hold: look at the device at once (a backoff that expires now)."""
        if self.state is Op.HELD:
            self.backoff_until = self._now
            self.back_off()

    # decisions ------------------------------------------------------------------------------
    def next_action(self) -> Action | None:
        """The one command to send now, or ``None`` (waiting; :attr:`deadline` says until)."""
        state, view = self.state, self.view
        if state is Op.HELD or state is Op.BACKING_OFF and self.deadline is not None \
                and self.order is not Action.CLEAR_FAULT:
            return None  # held: only a supervisor; backing off: only its expiry
        if self.order is not None:
            return self.order
        if state is Op.IDLE and (view.wants_shuffle or view.wants_hand):
            if view.stage is Stage.DEALING:
                return self._hold(HoldReason.DECK_LOST)
            if self.costs.shuffles >= MAX_SHUFFLES_PER_ROUND:
                return self._hold(HoldReason.RUNAWAY)
            return Action.SHUFFLE
        if state is Op.PRESENTED and view.over:
            return Action.END_ROUND  # decision 2: the presented hand is collected with the rest
        if state is Op.READY:
            if view.over or view.wants_shuffle:
                return Action.END_ROUND
            if view.wants_hand:
                if self.costs.hands >= MAX_HANDS_PER_ROUND:
                    return self._hold(HoldReason.RUNAWAY)
                return Action.DISPENSE_HAND
        return None

    def _hold(self, reason: HoldReason) -> None:
        self.order = None
        self.hold()
        self.hold_reason = reason
        log.warning("device operator holds for a supervisor", device=self.name,
                    reason=reason.value, round=self.view.round)
        return None

    # outcomes -------------------------------------------------------------------------------
    def succeeded(self, action: Action, now: float, reply: Any = None) -> None:
        self._now = now
        if self.order is action:
            self.order = None
        self.last_error = ""
        if action is Action.STATUS:
            self.faults = frozenset(getattr(reply, "faults", self.faults))
            remaining = getattr(reply, "cards_remaining", None)
            self.cards_left = remaining if isinstance(remaining, int) else self.cards_left
            self._reported = getattr(reply, "state", None)
            self.sync()
        elif action is Action.SHUFFLE:
            self.costs.shuffles += 1
            self.shuffle_acked()
        elif action is Action.DISPENSE_HAND:
            self.costs.hands += 1
            self.hand_acked()
        elif action is Action.END_ROUND:
            self.cards_left = 0  # the device collects what is left; a shuffle comes next
            self.round_ended()
        elif action is Action.CLEAR_FAULT:
            self.order = Action.STATUS  # FAULT_CLEARED may come before or after the ACK

    def failed(self, action: Action, error: DriverError, now: float) -> dev.CommandFailed | None:
        """A command failed; the journal record of the whole streak when the operator gives
        up (once), else ``None``."""
        self._now = now
        if self.order is action:
            self.order = None
        reason = getattr(error, "reason", None)
        if isinstance(error, DeviceFault):
            # a fault is active, or the device rebooted under the command: ask it which
            self.last_error = f"{self.name}: {action.value}: {error}"
            self.order = Action.STATUS
            return None
        if action is Action.SHUFFLE and reason is NakReason.BAD_STATE and \
                not self.costs.bad_state_retried:
            self.costs.bad_state_retried = True  # strict devices want END_ROUND first
            self.order = Action.END_ROUND
            self.last_error = f"{self.name}: shuffle refused (BAD_STATE): ending the round first"
            return None
        if isinstance(error, CommandRejected) and reason is NakReason.BAD_STATE and \
                action is not Action.SHUFFLE:
            self.order = Action.STATUS  # the device is not where we thought: ask it
        return self._failed(action, str(error))

    def _failed(self, action: Action, error: str) -> dev.CommandFailed | None:
        now = self._now
        self.streak.fail(action.value, error, now)
        self.last_error = f"{self.name}: {action.value} failed: {error}"
        if self.streak.exhausted:
            record = dev.CommandFailed(self.name, now, **self.streak.summary())  # type: ignore[arg-type]
            log.error("device_command_failed", device=self.name, **self.streak.summary())
            self.order = None
            self._hold(HoldReason.REPEATED_FAILURE)
            return record
        self.backoff_until = now + self.streak.delay()
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
        return _way_out(self)


def event_device(event: ev.RoundEvent) -> str:
    return str(getattr(event, "device", ""))


def offline_way_out(name: str) -> tuple[str, str, str]:
    """What an offline device waits for, the way out, and whose it is (the shuffler's and the
    shoe's alike)."""
    return (f"the {name} to come back online (cable, power)",
            "reconnect the device | tablectl supervisor void REASON", "supervisor")


def _way_out(m: DeviceMachine) -> tuple[str, str, str]:
    name, state = m.name, m.state
    if m.deck_lost:
        return (f"the {name} lost its deck mid-deal; the round cannot be dealt on",
                "tablectl supervisor void REASON", "supervisor")
    if state is Op.HELD:
        if m.hold_reason is HoldReason.DECK_LOST:
            return (f"the {name} lost its deck mid-deal; the round cannot be dealt on",
                    "tablectl supervisor void REASON", "supervisor")
        if m.hold_reason is HoldReason.RUNAWAY:
            return (f"the {name} was asked too often this round",
                    "tablectl supervisor void REASON", "supervisor")
        return (f"a supervisor to fix the {name}, which failed {m.streak.count} times "
                f"({m.streak.command}: {m.streak.error})",
                "tablectl supervisor clear-fault | tablectl supervisor void REASON",
                "supervisor")
    if state is Op.FAULT:
        active = ", ".join(sorted(f.value for f in m.faults)) or "a fault"
        return (f"a supervisor to clear {active} on the {name}",
                "tablectl supervisor clear-fault", "supervisor")
    if state is Op.OFFLINE:
        return offline_way_out(name)
    if state is Op.BACKING_OFF:
        return (f"a retry of {m.streak.command or 'the device'} after a failure "
                f"({m.streak.count} so far)", "none needed (automatic)", "")
    if state is Op.PRESENTED:
        return ("the dealer to lift the presented hand", "none (lift the hand)", "dealer")
    if state in (Op.SHUFFLING, Op.FORMING):
        return (f"the {name} to finish ({state.value})", "none needed (automatic)", "")
    if m.view.deck is Deck.BLOCKED and m.view.stage is Stage.CLOSED:
        return ("a replaced or counted deck",
                "tablectl deck replace | tablectl deck counted 52", "dealer")
    return ("the table", "the round's next verb", "dealer")


__all__ = ["DeviceMachine", "offline_way_out"]
