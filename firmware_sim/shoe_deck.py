"""Shared parts of the simulated shoes: the shuffled deck, the fault queue, stalls, disconnects.

Every shoe simulator (scanner, Bee-Tek, HID) deals from a :class:`SimShoe`: a seeded shuffle is
reproducible (``random.Random(seed)``), otherwise the order comes from ``secrets``, as a real
shuffle must be unpredictable. Faults are one-shot: ``inject(FaultSpec)`` arms a fault and the
next draw consumes it. ``stall`` holds every byte for ARG seconds and then bursts them;
``disconnect`` unplugs the link (anything with ``unplug()``/``replug()``, e.g. a
:class:`firmware_sim.serve.PtyServer`, bound with :meth:`SimShoe.bind_link`, or the
``unplug_hook`` that ``firmware_sim.framed.bind_server`` installs) and replugs it ARG seconds
later.

A fault can also be planned on the shoe's own count of draws (:meth:`SimShoe.plan`: "at card
``j`` since the shuffle", burns included), so the same plan lands at the same card whatever the
host's timing; and the shoe counts what it has said (:attr:`SimShoe.said`, messages sent to a
host), so a bench can wait until the table has taken all of it in.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import structlog

from controller.games.cards import FULL_DECK, Card
from drivers.decks import DeckMap
from firmware_sim.faults import FaultKind, FaultPlan, FaultSpec, FaultSpecError

log = structlog.get_logger(__name__)


class Link(Protocol):
    def unplug(self) -> None: ...

    def replug(self) -> None: ...


class SimShoe:
    """A shuffled deck plus armed faults; dialect simulators subclass it."""

    SUPPORTED: frozenset[FaultKind] = frozenset()

    def __init__(self, seed: int | None = None, faults: Sequence[FaultSpec] = ()) -> None:
        self.seed = seed
        self._rng: random.Random = (random.Random(seed) if seed is not None
                                    else secrets.SystemRandom())
        self._lock = threading.RLock()
        self._faults: list[FaultSpec] = []
        self._held: list[tuple[bytes, int]] = []
        self._hold_until = 0.0
        self._send: Callable[[bytes], None] | None = None
        self._link: Link | None = None
        self._replug_timer: threading.Timer | None = None
        self.unplug_hook: Callable[[float], None] | None = None  # firmware_sim.framed.bind_server
        self.attached = threading.Event()
        self.dealt: list[Card] = []
        self.cards: list[Card] = []
        self._plan = FaultPlan("card")
        self.said = 0
        """Messages sent to a host (a card, a no-read, an alarm, a warning: each one line)."""
        self.unplugs = 0
        """Times the shoe's cable came out (the ``disconnect`` fault)."""
        self.shuffle()
        for fault in faults:
            self.inject(fault)

    # deck ---------------------------------------------------------------------------------------
    def shuffle(self) -> None:
        """Load a fresh 52-card deck in a new random (or seeded) order."""
        with self._lock:
            cards = list(FULL_DECK)
            self._rng.shuffle(cards)
            self.cards, self.dealt = cards, []

    def next_card(self) -> Card:
        """Take the next card; an empty shoe is reloaded with a fresh shuffle."""
        with self._lock:
            if not self.cards:
                self.shuffle()
            card = self.cards.pop(0)
            self.dealt.append(card)
            return card

    def count_by_hand(self) -> int:
        """The dealer counts the deck by hand: the cards left in the shoe and those drawn."""
        with self._lock:
            return len(set(self.cards) | set(self.dealt))

    def foreign_card(self) -> Card:
        return self._rng.choice(FULL_DECK)

    # faults -------------------------------------------------------------------------------------
    def pick_barcode(self, deck: DeckMap, foreign_deck: DeckMap) -> tuple[Card | None, str]:
        """The next card under a barcode reader and its code, with the card faults applied: a
        ``foreign`` card carries another deck's id (returned as None: it is not of this deck),
        a ``duplicate`` repeats the first card dealt. Call with the lock held."""
        if self.take_fault(FaultKind.FOREIGN):
            return None, foreign_deck.barcode_for(self.foreign_card())
        if self.dealt and self.take_fault(FaultKind.DUPLICATE):
            card = self.dealt[0]
        else:
            card = self.next_card()
        return card, deck.barcode_for(card)

    def inject(self, fault: FaultSpec) -> None:
        """Arm ``fault`` for the next draw; a kind this device cannot produce is an error."""
        if fault.kind not in self.SUPPORTED:
            known = ", ".join(sorted(k.value for k in self.SUPPORTED))
            raise FaultSpecError(f"{type(self).__name__} cannot simulate fault "
                                 f"{fault.kind.value!r}; it supports: {known}")
        with self._lock:
            if fault.kind is FaultKind.STALL:
                self._hold_until = time.monotonic() + (fault.arg or 0.5)
            else:
                self._faults.append(fault)

    def plan(self, spec: FaultSpec | None, *, card: int) -> None:
        """Put ``spec`` into the shoe as card ``card`` (1-based since the shuffle, burns
        included) is drawn: a card fault for that card, or, for ``disconnect``, the cable
        coming out as the dealer reaches for it (no card leaves the shoe; it is drawn once the
        shoe is back). ``None`` drops a plan that has not fired; a new plan replaces it."""
        with self._lock:
            if spec is not None and spec.kind not in self.SUPPORTED:
                self.inject(spec)  # the error names what this shoe supports
            self._plan.set(spec, card)

    def planned_draw(self) -> bool:
        """At the start of a draw: fire the plan if this is its card; ``True`` when the cable
        came out (nothing is drawn). Call with the lock held."""
        spec = self._plan.take(len(self.dealt) + 1)
        if spec is None:
            return False
        if spec.kind is FaultKind.DISCONNECT:
            self.disconnect_for(spec.arg if spec.arg is not None else 0.5)
            return True
        self.inject(spec)
        return False

    @property
    def quiet(self) -> bool:
        """Plugged in, with nothing held back (a stall) or waiting to be replugged."""
        with self._lock:
            return self.attached.is_set() and not self._held

    def take_fault(self, *kinds: FaultKind) -> FaultSpec | None:
        """Consume the first armed fault of one of ``kinds``."""
        with self._lock:
            for fault in self._faults:
                if fault.kind in kinds:
                    self._faults.remove(fault)
                    return fault
        return None

    # link ---------------------------------------------------------------------------------------
    def bind_link(self, link: Link | None) -> None:
        """The server this device is plugged into, needed for the ``disconnect`` fault."""
        self._link = link

    def disconnect_for(self, seconds: float) -> None:
        """Unplug the link now and replug it after ``seconds``."""
        self.unplugs += 1
        if self.unplug_hook is not None:
            self.unplug_hook(seconds)
            return
        link = self._link
        if link is None:
            raise FaultSpecError("fault 'disconnect' needs bind_link(server) first (or "
                                 "firmware_sim.framed.bind_server)")
        log.info("sim_unplug", seconds=seconds)
        link.unplug()
        self._replug_timer = threading.Timer(seconds, link.replug)
        self._replug_timer.name = "sim-replug"
        self._replug_timer.daemon = True
        self._replug_timer.start()

    def close(self) -> None:
        """Cancel a pending replug (tests call this before closing the server)."""
        timer = self._replug_timer
        if timer is not None:
            timer.cancel()
            if timer is not threading.current_thread():
                timer.join(timeout=2.0)

    # SimDevice ----------------------------------------------------------------------------------
    def attach(self, send: Callable[[bytes], None]) -> None:
        self._send = send
        self.attached.set()

    def detach(self) -> None:
        self.attached.clear()
        self._send = None

    def wait_attached(self, timeout: float = 3.0) -> bool:
        """Block until a host is connected (a TCP accept lags the client's connect)."""
        return self.attached.wait(timeout)

    def receive(self, data: bytes) -> None:
        """Shoes in these dialects only talk; host bytes are ignored."""

    def tick(self, now: float) -> None:
        with self._lock:
            if self._held and now >= self._hold_until:
                held, self._held = self._held, []
                self._emit(b"".join(data for data, _ in held), sum(n for _, n in held))

    def output(self, data: bytes, messages: int = 1) -> None:
        """Send ``data`` (``messages`` lines) now, or hold it while a stall is active."""
        with self._lock:
            if time.monotonic() < self._hold_until or self._held:
                self._held.append((data, messages))
                return
            self._emit(data, messages)

    def _emit(self, data: bytes, messages: int = 1) -> None:
        send = self._send
        if send is not None and data:
            log.debug("sim_tx", hex=data.hex(" "))
            send(data)
            self.said += messages
