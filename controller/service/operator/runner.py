"""The device operator's thread: feeds :class:`~.machine.DeviceMachine` and sends its commands.

It subscribes to the table's inputs (:meth:`TableThread.subscribe_inputs`): every command or
device event *after* the table took it in, with the round events it caused, in the table's
order, so the operator never acts on a device event the table has not seen (the last hand's
``HAND_TAKEN`` arrives after the ``DealComplete`` its ``HAND_READY`` caused). Driver commands
block on the device's answer, which is why this is not the table thread.

The same path for every device: ``url = "sim"`` only changes what is at the other end of the
pty; the person at a simulated table is
:class:`controller.service.wiring.simdealer.SimulatedDealer`. A shoe has no commands to send here
(the dealer draws); the operator only tells the driver a fresh shoe was confirmed, so duplicate
detection starts over.

Bounded effort: at most :data:`MAX_ACTIONS_PER_WAKE` commands per input or expiry, failures back
off and end in a hold (see :mod:`.effort`); the give-up is journaled once as
:class:`drivers.events.CommandFailed` through the table's input queue.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog

from controller.journal.recorder import Phase
from controller.service.operator.clearing import ClearWatch, clear_refusal
from controller.service.operator.machine import DeviceMachine
from controller.service.operator.states import DeviceAction, Op
from controller.service.operator.wayout import offline_way_out
from controller.table import events as ev
from controller.table.awaited import AwaitedOptions
from drivers import events as dev
from drivers.errors import DriverError

log = structlog.get_logger(__name__)

MAX_ACTIONS_PER_WAKE = 4
"""END_ROUND + SHUFFLE + STATUS is the longest useful chain; more means something loops."""
_STOP = object()


class DeviceOperator:
    """``DeviceOperator(device, put)``; subscribe :meth:`saw` to the table's inputs, then
    :meth:`start`; :meth:`close`. ``clock`` is a seam for the tests."""

    def __init__(self, device: Any, put: Callable[[object], None], *, live: bool = False,
                 clock: Callable[[], float] = time.monotonic,
                 on_change: Callable[[], None] = lambda: None) -> None:
        self.device = device
        self.on_change = on_change
        """Called on the operator's thread when :meth:`status` changed (it must not block: the
        wiring publishes a ``DeviceStatus`` line to the watchers). The device side changes
        after the round event that caused it (a fault raised, then cleared), with no round
        event of its own: a screen that reads the status on round events alone kept the old
        one (issue 36)."""
        self._told: dict[str, Any] | None = None
        self.put = put
        self.live = live
        self.clock = clock
        self.shoe = device.name == "shoe"
        self.machine = DeviceMachine(device.name)
        self.inbox: queue.Queue[object] = queue.Queue()
        self.commands_sent = 0
        self.clearing = ClearWatch()
        """What the device said after each CLEAR_FAULT, for ``supervisor.clear-fault``."""
        self._queued = 0
        self._handled = 0
        self._thread = threading.Thread(target=self._run, name=f"operator-{device.name}",
                                        daemon=True)

    @property
    def name(self) -> str:
        return self.machine.name

    @property
    def last_error(self) -> str:
        return self.machine.last_error

    def clear_refusal(self) -> str | None:
        """Why ``supervisor.clear-fault`` could do nothing now (read from the control thread:
        the machine's state is one attribute, read whole), or ``None``."""
        return clear_refusal(self.machine, shoe=self.shoe)

    # lifecycle ------------------------------------------------------------------------------
    def resume(self, number: int, phase: Phase, resumes_to: Phase, *,
               deck_blocked: bool = False, awaited: AwaitedOptions | None = None) -> None:
        """Before :meth:`start`, after a restart: the round recovery left open. What the
        device itself is doing, it says when it is online (STATUS)."""
        self.machine.resume(number, phase, resumes_to, deck_blocked=deck_blocked,
                            awaited=awaited)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.inbox.put(_STOP)
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def saw(self, item: object, events: list[ev.RoundEvent]) -> None:
        """An input subscriber (the table thread): never blocks. A fresh shoe is reset here,
        on the table thread, before anyone can draw from it."""
        if self.shoe:
            if any(isinstance(e, ev.ShuffleConfirmed) for e in events):
                new_shoe = getattr(self.device.driver, "new_shoe", None)
                if new_shoe is not None:
                    new_shoe()
            return
        self._queued += 1
        self.inbox.put((item, events))

    @property
    def busy(self) -> bool:
        """The operator has an input it has not acted on yet, or a failed command it will try
        again after its backoff: the device side is still moving. A bench waits for it to be
        over before a person acts (``tablectl bench``: one seed, one run); a wait for the
        device or for a person (a hold, a fault) is not busy."""
        return self._handled != self._queued or self.machine.state is Op.BACKING_OFF

    # the thread -----------------------------------------------------------------------------
    def _run(self) -> None:
        machine = self.machine
        while True:
            deadline = machine.deadline
            timeout = None if deadline is None else max(0.0, deadline - self.clock())
            try:
                item = self.inbox.get(timeout=timeout)
            except queue.Empty:
                item = None
            if item is _STOP:
                return
            try:
                self._step(item)
            finally:
                if item is not None:
                    self._handled += 1

    def _step(self, item: object) -> None:
        """One input (``None``: the current wait expired) through the machine, then its
        commands."""
        machine = self.machine
        try:
            now = self.clock()
            if item is None:
                machine.expired(now, bool(getattr(self.device.driver, "online", False)))
            else:
                source, events = item  # type: ignore[misc]
                if isinstance(source, dev.DeviceEvent) and source.device == machine.name:
                    machine.device(source, now)
                machine.round_events(events, now)
            self._act()
            self._tell_if_changed()
        except Exception:  # never let one bad moment stop the dealing
            log.exception("device operator failed", device=machine.name)

    def _tell_if_changed(self) -> None:
        status = self.status()
        if status != self._told:
            self._told = status
            self.on_change()

    def _act(self) -> None:
        for _ in range(MAX_ACTIONS_PER_WAKE):
            action = self.machine.next_action()
            if action is None:
                return
            self._send(action)

    def _send(self, action: DeviceAction) -> None:
        driver = self.device.driver
        self.commands_sent += 1
        if action is DeviceAction.CLEAR_FAULT:
            self.clearing.sent()
        try:
            reply = getattr(driver, action.value)()
        except DriverError as error:
            if action in (DeviceAction.CLEAR_FAULT, DeviceAction.STATUS):
                self.clearing.failed(f"{action.value}: {error}")
            record = self.machine.failed(action, error, self.clock())
            if record is not None:
                self.put(record)  # journaled once for the whole streak
            return
        self.machine.succeeded(action, self.clock(), reply)
        if action is DeviceAction.STATUS:  # the device's own word after a CLEAR_FAULT
            self.clearing.answered(self.machine.said.fault_words)

    # status ---------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """The device side for ``round.status``: its state, what it waits for, the way out.

        Offline is the driver's word, read now: the machine learns it from the
        ``DeviceOffline`` the table took in, a moment later, and a shoe has no machine. So an
        unplugged device is offline here at once and until it is back (issue 36: an unplugged
        shoe said "the dealer draws"), save a hold or a lost deck, whose way out still stands.
        """
        online = bool(getattr(self.device.driver, "online", False))
        if self.shoe:
            if not online:
                waits_for, way_out, role = offline_way_out(self.name)
                return {"state": Op.OFFLINE.value, "waits_for": waits_for, "way_out": way_out,
                        "role": role}
            return {"state": "dealer_draws", "waits_for": "the dealer to draw",
                    "way_out": "none (the dealer draws)", "role": "dealer"}
        machine = self.machine
        state = machine.state
        waits_for, way_out, role = machine.way_out()
        if not online and state is not Op.HELD and not machine.deck_lost:
            state = Op.OFFLINE
            waits_for, way_out, role = offline_way_out(self.name)
        return {"state": state.value,
                "hold": machine.hold_reason.value if machine.hold_reason else None,
                "faults": list(machine.said.fault_words),
                "waits_for": waits_for, "way_out": way_out, "role": role,
                "failures": machine.streak.count,
                "cards_left": machine.cards_left if online else None,
                "deck_lost": machine.deck_lost}
