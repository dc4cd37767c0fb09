"""The bench actors' view of the round in progress, from the table's events only.

The actors know only what the table's events tell them, as the people at a table would: the
dealer and the players never look into the device operator or the table's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.games.cards import Card
from controller.settlement.model import Wager
from controller.table import events as ev


@dataclass(slots=True)
class RoundView:
    """What the actors know of the round in progress."""

    number: int = 0
    closed: bool = False
    close_refused: bool = False
    """"No more bets" was refused while a device was offline: call it again when it is back."""
    wagers: dict[str, Wager] = field(default_factory=dict)
    hands: dict[str, tuple[Card, ...]] = field(default_factory=dict)
    held: ev.SupervisorRequired | None = None
    """An interruption the supervisor decides once the device is back online."""
    finishing: bool = False
    counted: bool = False
    """The deck was counted by hand for a finding that blocked it with nothing ruled."""
    over: bool = False


__all__ = ["RoundView"]
