"""The deck the round deals from: whether it is shuffled for this round (or for the next), and
whether dealing from it is blocked.

:class:`Deck` is the only code that writes these facts; betting (a shuffle confirmed, a wrong
count), card intake (a shuffler that rebooted and lost its shuffle) and protection (a count in
doubt) ask it through its methods. A blocked deck stays blocked until it is replaced or counted
(RWS-NC3P 5.5.2, MBS-3P 5.2, MBS-R3P 5.1, 5.9, RWS-3CP 5.1.3).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Deck:
    """The shuffle and the block on the deck, kept across rounds."""

    blocked: str | None = None
    """Why no card may be dealt from the deck until it is replaced or counted; ``None`` if
    usable."""
    shuffled: bool = False
    """A shuffle is confirmed for the round in progress."""
    next_round: bool = False
    """A shuffle is confirmed for the next round (between rounds, or a two-deck shuffler's
    second deck during one)."""

    def new_round(self) -> None:
        """A round opens: the shuffle confirmed for it (if any) is now this round's."""
        self.shuffled, self.next_round = self.next_round, False

    def shuffled_now(self) -> None:
        self.shuffled = True

    def shuffled_for_next(self) -> None:
        self.next_round = True

    def shuffle_lost(self) -> None:
        """A shuffler that rebooted has lost its deck, and any shuffle not yet dealt from."""
        self.shuffled = self.next_round = False

    def block(self, reason: str) -> None:
        self.blocked = reason

    def release(self) -> None:
        self.blocked = None


__all__ = ["Deck"]
