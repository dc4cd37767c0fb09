"""A shuffler that follows the binding protocol decisions to the letter where firmware_sim may
still be lenient (it is being brought in line on another branch), plus the fault hooks the
operator tests need. Written from docs/protocols.md section 5 and the decisions, not from the
operator:

1. SHUFFLE only in IDLE; anything else is NAK(BAD_STATE) (END_ROUND first);
2. END_ROUND is NAK(BAD_STATE) while a fault is active;
3. an exposed card in a formed hand is only the HAND_READY mask, never a fault bit;
4. a jam after an acknowledged DISPENSE_HAND never presents that hand (its number is used);
and ``refuse_all``: a device that NAKs every command (the fault storm).
"""

from __future__ import annotations

from drivers.events import Fault
from drivers.framed.messages import (
    ClearFault, DeviceState, DispenseHand, EndRound, Message, Nak, NakReason, Shuffle,
)
from firmware_sim.shuffler import ShufflerSim


class DocumentShuffler(ShufflerSim):
    def __init__(self, seed: int = 7) -> None:
        super().__init__(seed=seed, shuffle_seconds=0.0, dispense_seconds=0.0,
                         take_seconds=None)
        self.jam_next = False
        self.refuse_all = False

    def execute(self, message: Message) -> Message:
        if self.refuse_all and isinstance(message, (Shuffle, DispenseHand, EndRound, ClearFault)):
            return Nak(NakReason.BAD_STATE)
        if isinstance(message, Shuffle) and not self.faults and \
                self._state is not DeviceState.IDLE:
            return Nak(NakReason.BAD_STATE)
        if isinstance(message, EndRound) and self.faults:
            return Nak(NakReason.BAD_STATE)
        return super().execute(message)

    def _fault(self, fault: Fault, detail: str) -> None:
        if fault is Fault.EXPOSED_CARD and self._state is DeviceState.HAND_WAITING:
            return  # decision 3: the mask of HAND_READY says it; no fault bit
        super()._fault(fault, detail)

    def _finish_hand(self, now: float) -> None:
        if self.jam_next and not self._reboot_mid_hand:
            self.jam_next = False
            self.hand_number += 1  # decision 4: the number is consumed, the hand never comes
            self._state = DeviceState.READY
            self._fault(Fault.JAM, "jam at the gripper")
            return
        super()._finish_hand(now)

    def sent(self, name: str) -> int:
        """How many commands of this type the device executed."""
        return sum(1 for t in self.executed if t.name == name)
