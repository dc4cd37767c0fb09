"""A simulated hand-forming shuffler with card recognition, on the framed link.

Timing is simulated on the byte server's tick: a shuffle takes ``shuffle_seconds``, forming a hand
``dispense_seconds``, and the dealer takes the presented hand after ``take_seconds`` (``None``:
only when :meth:`take_hand` is called). Shuffles come from ``secrets`` unless a ``seed`` makes
them reproducible for tests. No command reveals the undealt cards or their order.

Faults are planned on the device's own events by :meth:`plan` (hand ``k`` of the deal: the
shuffler counts its hands itself, so the same plan lands at the same hand whatever the host's
timing), or armed by :meth:`inject`, which fires them at the next operation they apply to:
``count``/``unshuffled``/``foreign``/``faceup`` at the end of the next shuffle; ``set2``/``set4``/
``exposed``/``reversed``/``duplicate``/``noread``/``jamhand`` at the next hand; ``reboot``
mid-hand (after the next dispense is acknowledged, before the hand is reported) or at once while
a hand is out; ``jam`` and ``door`` at once, until ``CLEAR_FAULT``.

It follows docs/protocols.md section 5 to the letter: ``SHUFFLE`` only from IDLE (``END_ROUND``
first), ``END_ROUND`` refused while the mechanism moves or a fault is active, an exposed card in
a formed hand reported only by the ``HAND_READY`` mask (fault bit 6 is a card found face up
outside a hand), a hand stopped by a fault after its ``DISPENSE_HAND`` was ACKed never presented
(its number and cards consumed), ``DISPENSE_HAND`` refused with fewer than 3 cards, ``ACK`` to
``CLEAR_FAULT`` before the ``FAULT_CLEARED`` events, and no fault cleared while its cause
persists (:meth:`open_door` until :meth:`close_door`). ``conformance="legacy"`` plays the older
firmware instead: ``SHUFFLE`` accepted in READY without ``END_ROUND``, an exposed card also
raised as fault bit 6, plus the link divergences of :mod:`firmware_sim.framed`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace

from controller.games.cards import FULL_DECK, Card
from drivers.events import Fault
from drivers.framed import event_messages as ev
from drivers.framed.messages import (
    Ack, ClearFault, DeviceState, DispenseHand, EndRound, GetMeters, GetStatus, Identify,
    IdentityReply, Message, MetersReply, Nak, NakReason, Shuffle, StatusReply, faults_to_word,
)
from firmware_sim.faults import FaultKind, FaultPlan, FaultSpec, FaultSpecError
from firmware_sim.framed import LINK_FAULTS, Conformance, FramedSimDevice
from firmware_sim.shuffle_models import ShuffleModel, Shuffler

FIRMWARE = "2.3.1"
IDENTITY = IdentityReply(
    vendor="Tablectl Sim", model="HF-3 hand-forming shuffler", serial="SIM-HF3-0001",
    firmware_version=FIRMWARE,
    firmware_hash=hashlib.sha256(f"hf3-{FIRMWARE}".encode()).hexdigest()[:16],
    protocol_version=1,
)
_ON_SHUFFLE = {FaultKind.COUNT, FaultKind.UNSHUFFLED, FaultKind.FOREIGN, FaultKind.FACE_UP}
_ON_HAND = {FaultKind.SET_OF_TWO, FaultKind.SET_OF_FOUR, FaultKind.EXPOSED, FaultKind.REVERSED,
            FaultKind.DUPLICATE, FaultKind.NO_READ, FaultKind.JAM_HAND}
# Armed hand faults that stop the hand being formed: it is never presented.
_STOPS_HAND = {FaultKind.JAM_HAND: (Fault.JAM, "jam while forming the hand"),
               FaultKind.REVERSED: (Fault.REVERSED_CARD, "reversed card in the elevator"),
               FaultKind.NO_READ: (Fault.UNREADABLE_CARD, "card not recognised")}
HAND_SIZE = 3


class ShufflerSim(FramedSimDevice):
    SUPPORTED_FAULTS = LINK_FAULTS | _ON_SHUFFLE | _ON_HAND | {FaultKind.JAM, FaultKind.DOOR_OPEN}

    def __init__(self, seed: int | None = None, faults: Sequence[FaultSpec] = (), *,
                 shuffle_seconds: float = 0.1, dispense_seconds: float = 0.05,
                 take_seconds: float | None = 0.1, clock: Callable[[], float] | None = None,
                 identity: IdentityReply = IDENTITY, serial: str | None = None,
                 conformance: Conformance = Conformance.STRICT,
                 shuffle_model: ShuffleModel | str = ShuffleModel.FAIR) -> None:
        self.shuffle_seconds = shuffle_seconds
        self.dispense_seconds = dispense_seconds
        self.take_seconds = take_seconds
        self.faults: set[Fault] = set()
        self.causes: set[Fault] = set()
        """Faults whose physical cause persists (a door held open): CLEAR_FAULT keeps them."""
        self._armed: dict[FaultKind, FaultSpec] = {}
        self._plan = FaultPlan("hand")
        """A fault for hand ``k`` of the deal (:meth:`plan`): (k, fault)."""
        self._reboot_mid_hand = False
        self.meters = [0, 0, 0, 0]  # shuffles, hands, cards, faults: survive reboots
        self._reset_round()
        kwargs = {"clock": clock} if clock is not None else {}
        if serial is not None:  # another machine of the same model (a floor test's swap)
            identity = replace(identity, serial=serial)
        super().__init__(seed, faults, identity=identity, conformance=conformance, **kwargs)
        self.model = Shuffler(shuffle_model, self.randbelow)
        """How the mechanism orders the deck (:mod:`firmware_sim.shuffle_models`): a faulty
        machine for the game-protection monitors; the protocol is the same."""

    def _reset_round(self) -> None:
        self._state = DeviceState.IDLE
        self._deck: list[Card] = []
        self._dealt: list[Card] = []
        self.hand_number = 0
        self._due: float | None = None  # when the current timed step completes

    # state ------------------------------------------------------------------------------------
    def state(self) -> DeviceState:
        return DeviceState.FAULT if self.faults else self._state

    def fault_word(self) -> int:
        return faults_to_word(self.faults)

    def on_reboot(self) -> None:
        self.faults.clear()
        self.causes.clear()
        self._armed.clear()
        self._reboot_mid_hand = False
        self._reset_round()

    # commands ---------------------------------------------------------------------------------
    def execute(self, message: Message) -> Message:
        if isinstance(message, Identify):
            return self.identity
        if isinstance(message, GetStatus):
            return StatusReply(self.state(), self.fault_word(), self.boot_id, self.hand_number,
                               len(self._deck))
        if isinstance(message, GetMeters):
            return MetersReply(*self.meters)
        if isinstance(message, ClearFault):
            self.after_reply(self._clear_faults)  # ACK first, then FAULT_CLEARED (section 5)
            return Ack()
        if isinstance(message, DispenseHand) and self._planned_now():
            return Nak(NakReason.BUSY)  # never sent: the cable came out as the hand was asked
        if self.faults:
            return Nak(NakReason.BAD_STATE)
        if self._state in (DeviceState.SHUFFLING, DeviceState.DISPENSING):
            return Nak(NakReason.BUSY)
        if isinstance(message, EndRound):
            self._reset_round()
            return Ack()
        if isinstance(message, Shuffle):
            allowed = (DeviceState.IDLE, DeviceState.READY) if self.legacy else (DeviceState.IDLE,)
            if self._state not in allowed:
                return Nak(NakReason.BAD_STATE)
            self._state, self._due = DeviceState.SHUFFLING, self.clock() + self.shuffle_seconds
            return Ack()
        if isinstance(message, DispenseHand):
            if self._state is not DeviceState.READY or len(self._deck) < HAND_SIZE:
                return Nak(NakReason.BAD_STATE)
            self._state, self._due = DeviceState.DISPENSING, self.clock() + self.dispense_seconds
            return Ack()
        return Nak(NakReason.UNKNOWN)

    # faults planned on the device's own events ---------------------------------------------
    def plan(self, spec: FaultSpec | None, *, hand: int) -> None:
        """Put ``spec`` into the mechanism when hand ``hand`` (1-based, of the deck shuffled
        next or being dealt) is asked for: its ``DISPENSE_HAND`` arms a card fault for that hand
        (``set2``, ``exposed``, ``duplicate`` ...), jams before forming it (``jam``, ``door``),
        reboots under it (``reboot``: the ACK, then the reboot, the hand never presented), or
        pulls the cable before answering (``disconnect``: the command is never executed). A
        shuffle fault (``count``, ``unshuffled`` ...) is armed at once. ``None`` drops a plan
        that has not fired; a new plan replaces it."""
        with self.lock:
            if spec is not None and spec.kind not in self.SUPPORTED_FAULTS:
                self.inject(spec)  # the error names what this device supports
            self._plan.set(spec, hand)
            if spec is not None and spec.kind in _ON_SHUFFLE:
                self._plan.set(None, hand)
                self.apply_fault(spec)

    def _planned_now(self) -> bool:
        """Before a DISPENSE_HAND: fire the plan if this is its hand; ``True`` when the fault
        took the link down (the command is not executed, its answer never leaves)."""
        if self._state is not DeviceState.READY or self.faults:
            return False
        spec = self._plan.take(self.hand_number + 1)
        if spec is None:
            return False
        self.apply_fault(spec)
        return spec.kind is FaultKind.DISCONNECT

    def busy(self) -> bool:
        return self._due is not None

    def _clear_faults(self) -> None:
        for fault in sorted(self.faults - self.causes, key=lambda f: f.value):
            self.faults.discard(fault)
            self.raise_event(lambda i, f=fault: ev.FaultClearedMsg(i, f))

    def count_by_hand(self) -> int:
        """The dealer empties the machine and counts the deck by hand: the cards still inside
        (a stuck card too) and those dispensed since the shuffle, each physical card once."""
        with self.lock:
            return len(set(self._deck) | set(self._dealt))

    def take_hand(self) -> None:
        """The dealer lifts the presented hand."""
        with self.lock:
            if self._state is DeviceState.HAND_WAITING:
                self._state, self._due = DeviceState.READY, None
                self.raise_event(lambda i: ev.HandTakenMsg(i, self.hand_number))

    # physical actions -----------------------------------------------------------------------
    def open_door(self) -> None:
        """Someone opens the door and holds it: DOOR_OPEN stays until :meth:`close_door`."""
        with self.lock:
            self.causes.add(Fault.DOOR_OPEN)
            self._fault(Fault.DOOR_OPEN, "door open")

    def close_door(self) -> None:
        """The door is shut; the fault itself stays until CLEAR_FAULT."""
        with self.lock:
            self.causes.discard(Fault.DOOR_OPEN)

    # faults -----------------------------------------------------------------------------------
    def apply_fault(self, spec: FaultSpec) -> None:
        kind = spec.kind
        if kind is FaultKind.COUNT and spec.arg not in (51.0, 53.0):
            raise FaultSpecError(f"fault 'count' takes 51 or 53 cards, got {spec.arg}")
        if kind in (FaultKind.JAM, FaultKind.DOOR_OPEN):
            self._fault(Fault.JAM if kind is FaultKind.JAM else Fault.DOOR_OPEN,
                        "jam at the gripper" if kind is FaultKind.JAM else "door open")
        elif kind is FaultKind.REBOOT and self._state is DeviceState.READY:
            self._reboot_mid_hand = True  # fires after the next dispense is acknowledged
        elif kind in _ON_SHUFFLE or kind in _ON_HAND:
            self._armed[kind] = spec
        else:
            super().apply_fault(spec)

    def _fault(self, fault: Fault, detail: str) -> None:
        """Raise ``fault``; a fault stops the mechanism: a shuffle in progress is abandoned (the
        deck must be shuffled again) and a hand being formed is never presented."""
        if self._state is DeviceState.SHUFFLING:
            self._reset_round()
        elif self._state is DeviceState.DISPENSING:
            self._consume_hand()
        if fault not in self.faults:
            self.faults.add(fault)
            self.meters[3] += 1
            self.raise_event(lambda i: ev.FaultRaisedMsg(i, fault, detail))

    def _consume_hand(self) -> None:
        """An ACKed hand that will never be presented: its number and its cards are used up
        (docs/protocols.md section 5, "A hand that is not presented")."""
        for _ in range(min(HAND_SIZE, len(self._deck))):
            self._dealt.append(self._deck.pop(0))
        self.hand_number += 1
        self._state, self._due = DeviceState.READY, None

    # timed steps ------------------------------------------------------------------------------
    def on_tick(self, now: float) -> None:
        if self._due is not None and now >= self._due:
            self._due = None
            if self._state is DeviceState.SHUFFLING:
                self._finish_shuffle()
            elif self._state is DeviceState.DISPENSING:
                self._finish_hand(now)
            elif self._state is DeviceState.HAND_WAITING:
                self.take_hand()

    def _finish_shuffle(self) -> None:
        deck = list(FULL_DECK)
        if self._armed.pop(FaultKind.UNSHUFFLED, None) is None:
            # Fisher-Yates with the CSPRNG (or seed), unless a faulty model is configured
            deck = [FULL_DECK[i] for i in self.model.order()]
            shuffled = True
        else:
            shuffled = False
        self._deck, self._dealt, self.hand_number = deck, [], 0
        self._state = DeviceState.READY
        self.meters[0] += 1
        count = self._armed.pop(FaultKind.COUNT, None)
        counted = int(count.arg) if count is not None and count.arg is not None else len(deck)
        self.raise_event(lambda i: ev.ShuffleDoneMsg(i, counted, len(FULL_DECK)))
        if counted != len(FULL_DECK):
            self._fault(Fault.COUNT_MISMATCH, f"counted {counted} of {len(FULL_DECK)}")
        if not shuffled:
            self._fault(Fault.NOT_SHUFFLED, "deck left in pack order")
        if self._armed.pop(FaultKind.FOREIGN, None) is not None:
            self._fault(Fault.FOREIGN_CARD, "card not of this deck in the input")
        if self._armed.pop(FaultKind.FACE_UP, None) is not None:
            self._fault(Fault.EXPOSED_CARD, "card found face up while shuffling")

    def _finish_hand(self, now: float) -> None:
        if self._reboot_mid_hand:
            self._reboot_mid_hand = False
            self.reboot()
            return
        armed = self._armed
        size = 2 if armed.pop(FaultKind.SET_OF_TWO, None) else (
            4 if armed.pop(FaultKind.SET_OF_FOUR, None) else HAND_SIZE)
        for kind, (fault, detail) in _STOPS_HAND.items():
            if armed.pop(kind, None):
                self._fault(fault, detail)
                return
        cards = [self._deck.pop(0) for _ in range(size)]
        cards = [FULL_DECK[i] for i in self.model.form([c.index for c in cards])]
        duplicate = armed.pop(FaultKind.DUPLICATE, None) is not None
        if duplicate:
            cards[-1] = (self._dealt or cards)[0]
        exposed = 0b001 if armed.pop(FaultKind.EXPOSED, None) else 0
        self._dealt.extend(cards)
        self.hand_number += 1
        self.meters[1] += 1
        self.meters[2] += len(cards)
        self._state = DeviceState.HAND_WAITING
        self._due = now + self.take_seconds if self.take_seconds is not None else None
        hand = self.hand_number
        self.raise_event(lambda i: ev.HandReadyMsg(i, hand, tuple(cards), exposed))
        if exposed and self.legacy:  # the mask alone says it (section 5); the old firmware
            self._fault(Fault.EXPOSED_CARD, f"{cards[0].code} seen face up")  # faulted too
        if duplicate:
            self._fault(Fault.DUPLICATE_CARD, f"{cards[-1].code} already dealt")
