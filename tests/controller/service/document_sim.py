"""The shuffler for the operator tests: firmware_sim's, which follows the protocol decisions
(SHUFFLE only in IDLE, END_ROUND refused during a fault, the exposed mask not a fault, a jammed
hand never presented; docs/protocols.md section 5), plus the behaviours it has no fault for:
``refuse_all``, a device that NAKs every command (the fault storm), and
``reboot_on_dispense``, a reboot as DISPENSE_HAND arrives (before its ACK). Zero mechanism times and
no automatic hand-taking: the test is the dealer."""

from __future__ import annotations

from drivers.framed.messages import (
    ClearFault, DispenseHand, EndRound, Message, Nak, NakReason, Shuffle,
)
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.shuffler import ShufflerSim


class DocumentShuffler(ShufflerSim):
    def __init__(self, seed: int = 7) -> None:
        super().__init__(seed=seed, shuffle_seconds=0.0, dispense_seconds=0.0,
                         take_seconds=None)
        self.refuse_all = False
        self.reboot_on_dispense = False

    def execute(self, message: Message) -> Message:
        if self.refuse_all and isinstance(message, (Shuffle, DispenseHand, EndRound, ClearFault)):
            return Nak(NakReason.BAD_STATE)
        if self.reboot_on_dispense and isinstance(message, DispenseHand):
            # power lost as the command arrived: the rebooted device answers from IDLE
            self.reboot_on_dispense = False
            self.reboot()
        return super().execute(message)

    def jam_next_hand(self) -> None:
        """The next hand jams after its DISPENSE_HAND is acknowledged (never presented)."""
        self.inject(FaultSpec(FaultKind.JAM_HAND))

    def sent(self, name: str) -> int:
        """How many commands of this type the device executed."""
        return sum(1 for t in self.executed if t.name == name)
