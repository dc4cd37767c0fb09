"""A simulated card-reading dealing shoe on the framed link.

:meth:`draw` deals the next card and reports it (``CARD`` with event id and index in the shoe);
armed faults change what the next draw reports: ``noread`` (``NO_READ``), ``doubleread`` (two
cards out together: ``DOUBLE_FEED``), ``foreign`` (``FOREIGN`` with the barcode read),
``duplicate`` (a card already dealt, as from a second deck), ``exposed`` (``CARD`` flagged
exposed), ``reversed`` (``FAULT_RAISED reversed``). ``door`` opens the lid (``LID open``) until
``CLEAR_FAULT`` or :meth:`close_lid`; ``unshuffled`` loads the next shoe in pack order. When the
shoe runs out a fresh shuffled deck is loaded and the index starts again at 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from controller.games.cards import FULL_DECK, Card
from drivers.events import Fault
from drivers.framed import event_messages as ev
from drivers.framed.messages import (
    CARD_BURN, CARD_EXPOSED, Ack, Button, ClearFault, DeviceState, GetMeters, GetStatus, Identify,
    IdentityReply, Message, MetersReply, Nak, NakReason, StatusReply, faults_to_word,
)
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.framed import LINK_FAULTS, Conformance, FramedSimDevice

FIRMWARE = "1.7.0"
IDENTITY = IdentityReply(
    vendor="Tablectl Sim", model="RS-1 reading shoe", serial="SIM-RS1-0001",
    firmware_version=FIRMWARE,
    firmware_hash=hashlib.sha256(f"rs1-{FIRMWARE}".encode()).hexdigest()[:16],
    protocol_version=1,
)
_ON_DRAW = {FaultKind.NO_READ, FaultKind.DOUBLE_READ, FaultKind.FOREIGN, FaultKind.DUPLICATE,
            FaultKind.EXPOSED, FaultKind.REVERSED}


class FramedShoeSim(FramedSimDevice):
    SUPPORTED_FAULTS = LINK_FAULTS | _ON_DRAW | {FaultKind.DOOR_OPEN, FaultKind.UNSHUFFLED}

    def __init__(self, seed: int | None = None, faults: Sequence[FaultSpec] = (), *,
                 clock: Callable[[], float] | None = None,
                 identity: IdentityReply = IDENTITY,
                 conformance: Conformance = Conformance.STRICT) -> None:
        self.faults: set[Fault] = set()
        self._armed: set[FaultKind] = set()
        self.meters = [0, 0, 0, 0]
        self._deck: list[Card] = []
        self._dealt: list[Card] = []
        self.index = 0
        self.burn = False
        """Burn mode: every card drawn is reported with the CARD burn flag (bit 0), as the
        shoe does after its burn button until the deal button (protocols.md, CARD, BUTTON)."""
        kwargs = {"clock": clock} if clock is not None else {}
        super().__init__(seed, faults, identity=identity, conformance=conformance, **kwargs)
        self._load()

    def shuffle(self) -> None:
        """Load a freshly shuffled deck (the dealer refills and shuffles the shoe)."""
        with self.lock:
            self._load()

    def _load(self) -> None:
        deck = list(FULL_DECK)
        if FaultKind.UNSHUFFLED in self._armed:
            self._armed.discard(FaultKind.UNSHUFFLED)
        else:
            for i in range(len(deck) - 1, 0, -1):
                j = self.randbelow(i + 1)
                deck[i], deck[j] = deck[j], deck[i]
        self._deck, self._dealt, self.index = deck, [], 0
        self.meters[0] += 1

    def state(self) -> DeviceState:
        return DeviceState.FAULT if self.faults else DeviceState.DEALING

    def fault_word(self) -> int:
        return faults_to_word(self.faults)

    def execute(self, message: Message) -> Message:
        if isinstance(message, Identify):
            return self.identity
        if isinstance(message, GetStatus):
            return StatusReply(self.state(), self.fault_word(), self.boot_id, 0, len(self._deck))
        if isinstance(message, GetMeters):
            return MetersReply(*self.meters)
        if isinstance(message, ClearFault):
            self.after_reply(self.close_lid)  # ACK first, then LID closed (protocols.md 5.5)
            return Ack()
        return Nak(NakReason.UNKNOWN)

    # physical actions -------------------------------------------------------------------------
    def draw(self, *, burn: bool | None = None) -> Card | None:
        """Deal one card past the reader; returns the card that came out, reported or not (a
        no-read's card is in the dealer's hand all the same, as the other shoes' ``draw``
        says), or ``None`` for a foreign card. ``burn`` overrides the burn mode for this
        card."""
        marked = CARD_BURN if (self.burn if burn is None else burn) else 0
        with self.lock:
            if not self._deck:
                self._load()
            card = self._deck.pop(0)
            self.index += 1
            self.meters[2] += 1
            index, armed = self.index, self._armed
            if FaultKind.DUPLICATE in armed and self._dealt:
                armed.discard(FaultKind.DUPLICATE)
                card = self._dealt[0]
            self._dealt.append(card)
            if FaultKind.NO_READ in armed:
                armed.discard(FaultKind.NO_READ)
                self.raise_event(lambda i: ev.NoReadMsg(i, index))
                return card
            if FaultKind.DOUBLE_READ in armed:
                armed.discard(FaultKind.DOUBLE_READ)
                if self._deck:
                    self._dealt.append(self._deck.pop(0))
                    self.index += 1
                self.raise_event(lambda i: ev.DoubleFeedMsg(i, index))
                return card
            if FaultKind.FOREIGN in armed:
                armed.discard(FaultKind.FOREIGN)
                self.raise_event(lambda i: ev.ForeignMsg(i, index, "9990417"))
                return None
            if FaultKind.REVERSED in armed:
                armed.discard(FaultKind.REVERSED)
                self.meters[3] += 1
                self.raise_event(lambda i: ev.FaultRaisedMsg(i, Fault.REVERSED_CARD,
                                                             f"card {index} reversed"))
                return card
            flags = (CARD_EXPOSED if FaultKind.EXPOSED in armed else 0) | marked
            armed.discard(FaultKind.EXPOSED)
            self.raise_event(lambda i: ev.CardMsg(i, index, card, flags))
            return card

    def press(self, button: Button = Button.DEAL) -> None:
        with self.lock:
            self.raise_event(lambda i: ev.ButtonMsg(i, button))

    def open_lid(self) -> None:
        with self.lock:
            if Fault.LID_OPEN not in self.faults:
                self.faults.add(Fault.LID_OPEN)
                self.meters[3] += 1
                self.raise_event(lambda i: ev.LidMsg(i, True))

    def close_lid(self) -> None:
        with self.lock:
            if Fault.LID_OPEN in self.faults:
                self.faults.discard(Fault.LID_OPEN)
                self.raise_event(lambda i: ev.LidMsg(i, False))

    def apply_fault(self, spec: FaultSpec) -> None:
        if spec.kind is FaultKind.DOOR_OPEN:
            self.open_lid()
        elif spec.kind in _ON_DRAW:
            self._armed.add(spec.kind)
        elif spec.kind is FaultKind.UNSHUFFLED:
            self._armed.add(spec.kind)
            self._load()
        else:
            super().apply_fault(spec)

    def on_reboot(self) -> None:
        self.faults.clear()
        self._armed.clear()
