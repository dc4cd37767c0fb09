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
    table.subscribe_inputs(dealer.see)                  # before the operator's subscription
    dealer.start()
    ...
    dealer.close()

``device`` is the opened :class:`~.devices.DealingDevice` (its ``sim`` is the
simulator; its ``name`` says shuffler or shoe); ``put`` queues a table input; ``live`` marks the
LIVE-3P shoe, whose first four cards of a round are burns. :meth:`see` is called on the table
thread with every input and the round events it caused, in the table's order, and never waits.

What it does, per device:

* **shuffler**: lifts every presented hand as soon as the table has taken in the input that
  produced it, on the table thread, before the device operator sees that input (a lift is a
  few bytes into the simulator's pty): so the operator never ends a round under a hand the
  dealer was about to lift, and a hand is lifted, or not, the same way every run;
* **shoe**: on its own thread, in the table's order: after "No more bets" with no shuffle
  confirmed for the round, shuffles the shoe and confirms it as the dealer; then draws one card
  each time the previous one was assigned, burnt or ignored, until the deal is complete or the
  round is held (it waits, as a dealer does, for the supervisor's ruling and draws on if the
  round goes on); started with a round already open (the service restarted while bets were
  offered), takes that round up at its "No more bets" and deals it like any other. It draws
  only while the table has the shoe online (``DeviceOffline`` and ``DeviceOnline`` as the table
  took them in, not the driver's word of the moment), and a shoe whose cable came out under
  its hand is not drawn from again before the table has seen it go and come back: so what it
  draws, and when, follows from the table's inputs alone (``tablectl bench``: one seed, one
  run).
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
from controller.table.awaited import AwaitedOptions, Pause, pause_after
from controller.table.procedure import LIVE_BURN_CARDS
from drivers import events as dev

log = structlog.get_logger(__name__)

SIM_DEALER = "sim-dealer"
"""LIVE-3P: four burn cards before the first hand."""
MAX_DRAWS_PER_ROUND = 64
"""A deal needs at most 4 burns + 12 cards, or 8 boxes + dealer: more is a runaway."""
_STOP = object()


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


class Dark(str, Enum):
    """The shoe's cable, as the dealer saw it come out under his hand."""

    LIT = "lit"
    """In, as far as the dealer knows."""
    OUT = "out"
    """It came out as he drew; the table has not seen the shoe go yet."""
    SEEN_GOING = "seen_going"
    """The table has the shoe offline; the dealer waits for it to come back."""


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
        self.options = AwaitedOptions()
        """The players' options still awaited: no card is drawn until the last answer."""
        self.online = False
        """The shoe as the table has it: online since its last ``DeviceOnline`` input."""
        self.dark = Dark.LIT
        """Whether the cable came out under the dealer's hand, and what the table saw since."""
        self._queued = 0
        self._handled = 0
        self._thread = threading.Thread(target=self._run, name=f"sim-dealer-{device.name}",
                                        daemon=True)

    # lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.batches.put(_STOP)
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def see(self, item: object, events: list[ev.RoundEvent]) -> None:
        """An input subscriber (the table thread): the shuffler's hand is lifted at once, the
        shoe's work queued for the dealer's thread; never waits."""
        if not self.shoe:
            try:
                self.sim.take_hand()  # a no-op unless a hand is presented
            except Exception:  # a simulated person never stops the table
                log.exception("simulated dealer failed", device=self.device.name)
            return
        self._queued += 1
        self.batches.put((item, events))

    @property
    def busy(self) -> bool:
        """Inputs the dealer has not acted on yet (the shoe's thread is behind the table)."""
        return self._handled != self._queued

    # the thread -----------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            batch = self.batches.get()
            if batch is _STOP:
                return
            try:
                item, events = batch  # type: ignore[misc]
                self._link(item)
                for event in events:
                    self._follow(event)
                self._act()
            except Exception:  # a simulated person never stops the table
                log.exception("simulated dealer failed", device=self.device.name)
            finally:
                self._handled += 1

    def _link(self, item: object) -> None:
        """The shoe going and coming back, as the table took it in."""
        if not isinstance(item, (dev.DeviceOffline, dev.DeviceOnline)) \
                or item.device != self.device.name:
            return
        self.online = isinstance(item, dev.DeviceOnline)
        if not self.online:
            self.unread = self.unread or self.out  # a card drawn as it went is never read
            if self.dark is Dark.OUT:
                self.dark = Dark.SEEN_GOING
        elif self.dark is Dark.SEEN_GOING:
            self.dark = Dark.LIT

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
            self.options.clear()
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
        elif (pause := pause_after(self.options, event)) is not None:
            # a dealer waits for the ruling, or for the last player to choose
            if pause is Pause.HELD and self.draw is Draw.DRAWING:
                self.draw = Draw.HELD
            elif pause is Pause.GOES_ON and self.draw is Draw.HELD:
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

    def _act(self) -> None:
        if not self.online or self.dark is not Dark.LIT:
            return  # no card is drawn into a shoe the table does not have
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
        burn = self.live and self.draws < LIVE_BURN_CARDS
        unplugs = self.sim.unplugs
        card = self.sim.draw(burn=burn) if hasattr(self.sim, "burn") else self.sim.draw()
        if self.sim.unplugs != unplugs:  # the cable came out under the dealer's hand
            self.dark = Dark.OUT
        if card is None and self.dark is Dark.OUT:
            return  # nothing left the shoe: the same card is drawn once it is back
        self.draws += 1
        self.out = card is not None
