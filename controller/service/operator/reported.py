"""What the device has said, as the operator knows it: its active faults, the cards it still
holds, and the state its last STATUS reported. One part of the operator, the only code that
writes these fields; the machine tells it each device event and STATUS answer, and asks it.

Everything here is in device-level words (:mod:`drivers.events`): the operator never sees a
protocol's byte codes, so a second shuffler protocol changes its driver, not this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from drivers.events import DeviceMode, DeviceReport, Fault


@dataclass(slots=True)
class Reported:
    """The device's own word, kept until it says otherwise (or the link drops)."""

    faults: frozenset[Fault] = frozenset()
    cards_left: int | None = None
    """Cards in the shuffler's deck, for the dealer's screen: the device's own count from STATUS
    or SHUFFLE_DONE, less each set dispensed since; ``None`` while unknown (offline, after a
    reboot). A count only, never which cards (docs/protocols.md, STATUS)."""
    mode: DeviceMode | None = None
    """What the last STATUS said the device is doing (``None``: no STATUS yet, or a word the
    controller does not know)."""

    # the device's events -------------------------------------------------------------------
    def offline(self) -> None:
        """The link dropped: the count is unknown, not stale."""
        self.cards_left = None

    def online(self, *, rebooted: bool) -> None:
        """The link is back; after a reboot every fault and hand is forgotten (a new boot)."""
        self.cards_left = None  # until STATUS says
        if rebooted:
            self.faults = frozenset()

    def shuffled(self, counted: int) -> None:
        """SHUFFLE_DONE: the device counted this many cards (a short deck shows as short)."""
        self.cards_left = counted

    def dispensed(self, cards: int) -> None:
        """A set of ``cards`` left the device."""
        if self.cards_left is not None:
            self.cards_left = max(0, self.cards_left - cards)

    def raised(self, fault: Fault) -> None:
        self.faults = self.faults | {fault}

    def cleared(self, fault: Fault) -> None:
        self.faults = self.faults - {fault}

    # the answers to commands ---------------------------------------------------------------
    def status(self, report: DeviceReport) -> None:
        """A STATUS answer: what it says replaces what was known; what it does not say stays."""
        if report.faults is not None:
            self.faults = report.faults
        if report.cards_remaining is not None:
            self.cards_left = report.cards_remaining
        self.mode = report.mode

    def collected(self) -> None:
        """END_ROUND was taken: the device collects what is left; a shuffle comes next."""
        self.cards_left = 0

    # questions ------------------------------------------------------------------------------
    def reports(self, *modes: DeviceMode) -> bool:
        """Whether the last STATUS said one of ``modes``."""
        return self.mode in modes

    @property
    def fault_words(self) -> tuple[str, ...]:
        """The active faults' values, sorted (for the status line and ``clear-fault``)."""
        return tuple(sorted(f.value for f in self.faults))


__all__ = ["Reported"]
