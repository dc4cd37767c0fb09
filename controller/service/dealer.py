"""The device operator: commands the shuffler as the round needs it, and in sim mode plays the
dealer's hands so rounds complete with no hardware.

The table decides, the devices deal, and someone must tell a framed shuffler when to shuffle
and when to form the next hand. That is this operator, on its own thread, driven only by the
table's round events (it never reads table state, so it cannot race the table thread):

* shuffler: after "no more bets" it starts a shuffle (unless one was confirmed), and once the
  shuffle is confirmed it dispenses the next hand each time the previous one was lifted
  (``HandTaken``), until the deal is complete, the round is held, or the device is offline;
* sim mode adds the dealer's hands: it ticks the simulated shuffler right after each command is
  acknowledged, lifts each presented hand, and for a simulated shoe shuffles the shoe, confirms
  the shuffle as the dealer (``ConfirmShuffle``, journaled like any command) and draws the next
  card each time the previous one was assigned (the 4 LIVE-3P burn cards marked as burns).

Driver commands block on the device's answer, which is why this is not done on the table thread.
A refused or timed-out command is one log line and a status note (``last_error``), never a
traceback, and never kills the thread.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog

from controller.journal.recorder import Phase
from controller.service.devices import DealingDevice
from controller.table import commands as cmd
from controller.table import events as ev

log = structlog.get_logger(__name__)

SIM_DEALER = "sim-dealer"
MAX_STEPS_PER_ROUND = 64
"""A deal needs at most 8 boxes + dealer sets, or 4 burns + 12 cards: more is a runaway."""
_STOP = object()
_STEP = object()
_RESUMING = ("continue", "order", "reconstruct")
_CLOSED = (Phase.CLOSED, Phase.SHUFFLED, Phase.DEALING, Phase.DEALT, Phase.REVEALED)
_SHUFFLED = (Phase.SHUFFLED, Phase.DEALING, Phase.DEALT, Phase.REVEALED)


class DeviceOperator:
    """``DeviceOperator(device, put, live=...)``; feed it round events with :meth:`see`."""

    def __init__(self, device: DealingDevice, put: Callable[[object], None], *,
                 live: bool = False) -> None:
        self.device = device
        self.put = put
        self.live = live
        self.shoe = device.name == "shoe"
        self.events: queue.Queue[object] = queue.Queue()
        self.last_error = ""
        self._thread = threading.Thread(target=self._run, name=f"operator-{device.name}",
                                         daemon=True)
        self._reset(0)

    def _reset(self, number: int) -> None:
        self.round = number
        self.closed = False
        self.shuffled = False
        self.shuffle_asked = False
        self.waiting = False
        """A hand or card is out and its event has not come back yet."""
        self.held = False
        self.over = False
        self.steps = 0

    # lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.events.put(_STOP)
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def resume(self, number: int, phase: Phase, resumes_to: Phase) -> None:
        """Before :meth:`start`, after a restart: take up the round recovery left open (table
        round ``number``, where the journal says it stood), so that a round the clause lets go
        on (RWS-NC3P 5.4.1, MBS-R3P 5.13.2, a supervisor's "continue") is dealt on. The
        events that said so were emitted during recovery, before this operator subscribed."""
        self._reset(number)
        self.held = phase in (Phase.HOLD, Phase.OPTIONS)
        stood = resumes_to if self.held else phase
        self.closed = stood in _CLOSED
        self.shuffled = self.shuffle_asked = stood in _SHUFFLED
        self.over = stood in (Phase.DEALT, Phase.REVEALED)
        self.events.put(_STEP)

    def see(self, events: list[ev.RoundEvent]) -> None:
        """A batch subscriber (all events of one table input): never blocks the table thread.
        Acting only after the whole batch keeps a card from being drawn between the last
        card's assignment and the DealComplete it caused."""
        self.events.put(events)

    # the thread -----------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            event = self.events.get()
            if event is _STOP:
                return
            try:
                due = event is _STEP
                for one in event if isinstance(event, list) else ():
                    due = self._on_event(one) or due
                if due:
                    self._step()
            except Exception as error:  # never let one bad moment stop the dealing
                self.last_error = f"{self.device.name}: {error}"
                log.exception("device operator failed", device=self.device.name)

    def _on_event(self, event: ev.RoundEvent) -> bool:
        """Update what we know; ``True`` when the next physical step may be due."""
        if isinstance(event, ev.RoundOpened):
            self._reset(event.round)
            return False
        if event.round != self.round:
            return False
        if isinstance(event, ev.BetsClosed):
            self.closed = True
        elif isinstance(event, ev.ShuffleConfirmed):
            self.shuffled = True
        elif isinstance(event, ev.DeviceNoted):
            if event.detail == "HandTaken":
                self.waiting = False
            elif "shuffle before it is lost" in event.detail:
                self.shuffled = self.shuffle_asked = False
            elif event.detail.startswith("shuffle not accepted"):
                self.shuffle_asked = False
            elif event.detail != "DeviceOnline":
                return False
        elif isinstance(event, (ev.CardAssigned, ev.BurnCard, ev.CardIgnored)):
            if self.shoe:
                self.waiting = False
        elif isinstance(event, ev.SupervisorRequired):
            self.held = True
        elif isinstance(event, ev.PlayerOptionsOffered):
            self.held = True
        elif isinstance(event, ev.SupervisorDecided):
            self.held = False
            return event.action in _RESUMING
        elif isinstance(event, ev.PlayerOptionTaken):
            self.held = False
        elif isinstance(event, ev.IrregularityRuled):
            if event.kind == "interruption":
                self.waiting = False  # a rebooted device forgot the set it was forming
            return event.action == "continue"
        elif isinstance(event, (ev.DealComplete, ev.RoundSettled, ev.RoundVoided)):
            self.over = True
            return False
        elif not isinstance(event, (ev.DeckReleased, ev.HandRemoved)):
            return False
        return True

    def _step(self) -> None:
        if self.over or self.held or not self.closed:
            return
        if not self.shuffled:
            if not self.shuffle_asked:
                self.shuffle_asked = self._shuffle()
            return
        if self.waiting:
            return
        if self.steps >= MAX_STEPS_PER_ROUND:
            self._error("the deal never completed; stopped dealing (void the round)")
            return
        self.waiting = self._deal()
        if self.waiting:
            self.steps += 1

    # device actions -------------------------------------------------------------------------
    def _shuffle(self) -> bool:
        sim, driver = self.device.sim, self.device.driver
        if self.shoe:
            if sim is None:
                return False  # a real shoe: the dealer shuffles and confirms (round.shuffled)
            sim.shuffle()
            if hasattr(driver, "new_shoe"):
                driver.new_shoe()
            self.put(cmd.ConfirmShuffle(actor=SIM_DEALER, role=cmd.Role.DEALER))
            return True
        if sim is not None and sim.faults:
            self._command("clear_fault")  # the dealer clears the simulator's alarms
        if not self._command("shuffle"):
            return False
        self._tick()
        return True

    def _deal(self) -> bool:
        sim = self.device.sim
        if self.shoe:
            if sim is None:
                return False  # a real shoe: the dealer draws
            burn = self.live and self.steps < 4
            card = sim.draw(burn=burn) if hasattr(sim, "burn") else sim.draw()
            return card is not None
        before = sim.hand_number if sim is not None else None
        if not self._command("dispense_hand"):
            return False
        if sim is not None:
            self._tick()
            if sim.hand_number > before:
                sim.take_hand()
        return True

    def _command(self, name: str) -> bool:
        try:
            getattr(self.device.driver, name)()
        except Exception as error:  # DriverError: refused, timed out, offline
            self._error(f"{name} failed: {error}")
            return False
        self.last_error = ""
        return True

    def _tick(self) -> None:
        sim: Any = self.device.sim
        if sim is not None:
            sim.tick(time.monotonic())

    def _error(self, text: str) -> None:
        self.last_error = f"{self.device.name}: {text}"
        log.warning("device command failed", device=self.device.name, round=self.round,
                    error=text)
