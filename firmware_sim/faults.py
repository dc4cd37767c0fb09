"""Fault injection vocabulary shared by every simulated device.

A fault is written ``KIND`` or ``KIND:ARG`` (``--fault jam``, ``--fault count:51``,
``--fault stall:0.5``) on the command line, or built as :class:`FaultSpec` from Python. Each
simulated device says which kinds it supports; asking a device for a kind it cannot produce is a
clear :class:`FaultSpecError`, never a silent no-op.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class FaultSpecError(ValueError):
    """A ``--fault`` argument that is not a known fault or has a bad argument."""


class FaultKind(str, Enum):
    JAM = "jam"                        # shuffler jams (and ``clear`` clears it)
    SET_OF_TWO = "set2"                # a dispensed set has two cards
    SET_OF_FOUR = "set4"               # a dispensed set has four cards
    EXPOSED = "exposed"                # a card is exposed (face up)
    REVERSED = "reversed"              # a card is reversed in the shoe/shuffler
    FOREIGN = "foreign"                # a card not of this deck
    DUPLICATE = "duplicate"            # a second copy of a card already dealt
    UNSHUFFLED = "unshuffled"          # the deck was not shuffled
    COUNT = "count"                    # shuffle counts ARG cards (51 or 53)
    NO_READ = "noread"                 # a card passes unread
    DOUBLE_READ = "doubleread"         # one card reported twice / double feed
    BAD_CRC = "badcrc"                 # next frame's CRC corrupted
    TRUNCATE = "truncate"              # next frame cut short
    STALL = "stall"                    # hold output ARG seconds, then burst it
    REPEAT_EVENT = "repeat"            # next event sent twice
    LOST_ACK = "lostack"               # next response to the host is lost
    DISCONNECT = "disconnect"          # unplug, then replug after ARG seconds
    REBOOT = "reboot"                  # reboot (new boot id), mid-hand if dealing
    DOOR_OPEN = "door"                 # door opened (and ``clear`` closes it)
    JAM_HAND = "jamhand"               # the next hand jams after its DISPENSE_HAND is ACKed
    FACE_UP = "faceup"                 # a card found face up while the next shuffle runs


_NEEDS_NUMBER = {FaultKind.COUNT, FaultKind.STALL, FaultKind.DISCONNECT}
_DEFAULT_ARG = {FaultKind.STALL: 0.5, FaultKind.DISCONNECT: 0.5}


@dataclass(frozen=True, slots=True)
class FaultSpec:
    kind: FaultKind
    arg: float | None = None

    def __str__(self) -> str:
        return self.kind.value if self.arg is None else f"{self.kind.value}:{self.arg:g}"


def parse_fault(text: str) -> FaultSpec:
    """Parse ``KIND`` or ``KIND:NUMBER``; raise :class:`FaultSpecError` naming the problem."""
    name, _, raw_arg = text.strip().partition(":")
    try:
        kind = FaultKind(name.lower())
    except ValueError as error:
        known = ", ".join(k.value for k in FaultKind)
        raise FaultSpecError(f"unknown fault {name!r}; known faults: {known}") from error
    if not raw_arg:
        if kind is FaultKind.COUNT:
            raise FaultSpecError("fault 'count' needs the number of cards, e.g. count:51")
        return FaultSpec(kind, _DEFAULT_ARG.get(kind))
    if kind not in _NEEDS_NUMBER:
        raise FaultSpecError(f"fault {kind.value!r} takes no argument, got {raw_arg!r}")
    try:
        value = float(raw_arg)
    except ValueError as error:
        raise FaultSpecError(f"fault {kind.value!r} needs a number, got {raw_arg!r}") from error
    if value < 0:
        raise FaultSpecError(f"fault {kind.value!r} needs a non-negative number, got {raw_arg!r}")
    return FaultSpec(kind, value)


@dataclass(slots=True)
class FaultPlan:
    """One fault planned on a device's own count of its events (hand ``k`` of the deal, card
    ``k`` since the shuffle), so that it lands at the same event whatever the host's timing
    (``tablectl bench --seed``: one seed, one run). The device checks that it supports the
    kind; the plan knows only when it is due."""

    unit: str
    """What the device counts: ``"hand"``, ``"card"`` (for the error's words)."""
    due: tuple[int, FaultSpec] | None = None

    def set(self, spec: FaultSpec | None, at: int) -> None:
        """``spec`` at event ``at`` (1-based); ``None`` drops a plan that has not fired. A new
        plan replaces the last."""
        if spec is None:
            self.due = None
            return
        if at < 1:
            raise FaultSpecError(f"a fault is planned for {self.unit} 1 or later, got {at}")
        self.due = (at, spec)

    def take(self, number: int) -> FaultSpec | None:
        """The fault planned for event ``number``, which is about to happen (it fires once)."""
        if self.due is None or self.due[0] != number:
            return None
        spec, self.due = self.due[1], None
        return spec
