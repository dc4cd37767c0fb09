"""The simulated dealer: the person at a simulated table, as a separate actor.

At a real table a person lifts each hand the shuffler presents, and with a shoe shuffles the
cards, loads the shoe, confirms the shuffle as the dealer and draws every card. With
``device.url = "sim"`` nobody stands there, so this actor does it. It is *not* part of the
device operator (:mod:`controller.service.operator`): the operator takes exactly the same path
for a simulated device as for a real one, and this actor acts only the way a person would,

* through the simulator's physical API (``sim.take_hand()``, ``sim.shuffle()``,
  ``sim.draw()``), the hands and the shoe, never the device's wire commands; and
* through the table's commands (``ConfirmShuffle`` as the dealer), put on the table's input
  queue like any other command, so they are journaled with their actor, ``sim-dealer``.

Interface (also used by ``tablectl bench``)::

    dealer = SimulatedDealer(device, put, live=False)   # device: a DealingDevice with .sim
    table.subscribe_batches(dealer.see)                 # after the operator's subscription
    dealer.start()
    ...
    dealer.close()

``device`` is the opened :class:`~.devices.DealingDevice` (its ``sim`` is the
simulator; its ``name`` says shuffler or shoe); ``put`` queues a table input; ``live`` marks the
LIVE-3P shoe, whose first four cards of a round are burns. :meth:`see` never blocks: the batch
is handled on the dealer's own thread.

What it does, per device:

* **shuffler**: lifts every presented hand once the table has taken in the input that
  produced it (a batch arrived), as a dealer moves each set to its box;
* **shoe**: after "No more bets" with no shuffle confirmed for the round, shuffles the shoe
  and confirms it as the dealer; then draws one card each time the previous one was assigned,
  burnt or ignored, until the deal is complete or the round is held (it waits, as a dealer does,
  for the supervisor's ruling and draws on if the round goes on); started with a round
  already open (the service restarted while bets were offered), takes that round up at its
  "No more bets" and deals it like any other.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from enum import Enum
from typing import Any

import structlog

from controller.table import commands as cmd
from controller.table import events as ev

log = structlog.get_logger(__name__)

SIM_DEALER = "sim-dealer"
LIVE_BURNS = 4
"""LIVE-3P: four burn cards before the first hand."""
MAX_DRAWS_PER_ROUND = 64
"""A deal needs at most 4 burns + 12 cards, or 8 boxes + dealer: more is a runaway."""
_STOP = object()
_RESUMING = ("continue", "order", "reconstruct")


class Draw(str, Enum):
    """Where the simulated shoe dealer stands in the round."""

    NO_ROUND = "no_round"
    BETTING = "betting"
    SHUFFLE = "shuffle"
    """Bets closed, no shuffle confirmed: shuffle the shoe and confirm it."""
    CONFIRMING = "confirming"
    """Shuffled and confirmed; waiting for the table's ``ShuffleConfirmed``."""
    DRAWING = "drawing"
    HELD = "held"
    DONE = "done"


class SimulatedDealer:
    """``SimulatedDealer(device, put, live=...)``; see the module doc for the interface."""

    def __init__(self, device: Any, put: Callable[[object], None], *,
                 live: bool = False) -> None:
        if device.sim is None:
            raise ValueError("SimulatedDealer needs a simulated device (device.url = 'sim')")
        self.device = device
        self.sim = device.sim
        self.put = put
        self.live = live
        self.shoe = device.name == "shoe"
        self.batches: queue.Queue[object] = queue.Queue()
        self.round = 0
        self.draw = Draw.NO_ROUND
        self.shuffled_ahead = False
        """A shuffle confirmed before "No more bets" (or for the next round). Not by round
        number: the table numbers its rounds per journal session."""
        self.out = False
        """A drawn card has not come back from the table yet."""
        self.unread = False
        """The card out was drawn while the shoe was unplugged: it was never read and never
        will be, so it does not hold up the next draw once the shoe is back."""
        self.draws = 0
        self._thread = threading.Thread(target=self._run, name=f"sim-dealer-{device.name}",
                                        daemon=True)

    # lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.batches.put(_STOP)
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def see(self, events: list[ev.RoundEvent]) -> None:
        """A batch subscriber: never blocks the table thread."""
        self.batches.put(events)

    # the thread -----------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            batch = self.batches.get()
            if batch is _STOP:
                return
            try:
                if self.shoe:
                    for event in batch:  # type: ignore[attr-defined]
                        self._follow(event)
                    self._act()
                else:
                    self.sim.take_hand()  # a no-op unless a hand is presented
            except Exception:  # a simulated person never stops the table
                log.exception("simulated dealer failed", device=self.device.name)

    def _follow(self, event: ev.RoundEvent) -> None:
        """The shoe dealer's view of the round, from the table's typed events."""
        if isinstance(event, ev.ShuffleConfirmed):
            if self.draw in (Draw.SHUFFLE, Draw.CONFIRMING):
                self.draw = Draw.DRAWING
            else:
                self.shuffled_ahead = True
            return
        if isinstance(event, ev.RoundOpened):
            self.round, self.draw, self.out, self.draws = event.round, Draw.BETTING, False, 0
            self.unread = False
            return
        if event.round != self.round and not self._walks_up(event):
            return
        if isinstance(event, ev.BetsClosed):
            self.draw = Draw.DRAWING if self.shuffled_ahead else Draw.SHUFFLE
            self.shuffled_ahead = False
        elif isinstance(event, ev.DeckReleased) and self.draw is Draw.CONFIRMING:
            self.draw = Draw.SHUFFLE  # the blocked deck was replaced: shuffle it
        elif isinstance(event, (ev.CardAssigned, ev.BurnCard, ev.CardIgnored)):
            self.out = False
        elif isinstance(event, (ev.SupervisorRequired, ev.PlayerOptionsOffered)):
            if self.draw is Draw.DRAWING:
                self.draw = Draw.HELD
        elif isinstance(event, ev.SupervisorDecided) and event.action in _RESUMING or \
                isinstance(event, (ev.PlayerOptionTaken, ev.PlayerOptionsClosed)) or \
                isinstance(event, ev.IrregularityRuled) and event.action == "continue":
            if self.draw is Draw.HELD:
                self.draw = Draw.DRAWING
        elif isinstance(event, (ev.DealComplete, ev.RoundSettled, ev.RoundVoided)):
            self.draw = Draw.DONE

    def _walks_up(self, event: ev.RoundEvent) -> bool:
        """A dealer who comes to the table with a round already open (the service restarted
        mid-round: recovery let betting go on, docs/service.md) takes that round up at its
        "No more bets", as a person would: no card of it has been drawn then, so it is
        shuffled and dealt from the first burn like any other (issue 33: such a round was
        never dealt and needed a supervisor's void). A round interrupted after its "No more
        bets" is the supervisor's to rule (the interruption's hold); the dealer takes up
        only a round it follows from its "No more bets"."""
        if self.draw is not Draw.NO_ROUND or not isinstance(event, ev.BetsClosed):
            return False
        log.info("simulated dealer takes up the round open at its start", round=event.round)
        self.round, self.out, self.unread, self.draws = event.round, False, False, 0
        return True

    def _shoe_online(self) -> bool:
        """What a person sees: the shoe's reader is connected (the driver's link)."""
        return bool(getattr(self.device.driver, "online", True))

    def _act(self) -> None:
        if not self._shoe_online():
            # no card is drawn into an unplugged shoe; one drawn as it went away is unread
            self.unread = self.unread or self.out
            return
        if self.unread:
            self.out = self.unread = False
        if self.draw is Draw.SHUFFLE:
            self.draw = Draw.CONFIRMING
            self.sim.shuffle()
            self.put(cmd.ConfirmShuffle(actor=SIM_DEALER, role=cmd.Role.DEALER))
            return
        if self.draw is not Draw.DRAWING or self.out:
            return
        if self.draws >= MAX_DRAWS_PER_ROUND:
            log.warning("simulated dealer stopped drawing: the deal never completed",
                        round=self.round)
            self.draw = Draw.DONE
            return
        burn = self.live and self.draws < LIVE_BURNS
        card = self.sim.draw(burn=burn) if hasattr(self.sim, "burn") else self.sim.draw()
        self.draws += 1
        self.out = card is not None
