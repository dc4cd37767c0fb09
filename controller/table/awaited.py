"""When a round waits and when it goes on, as the table's own events tell it.

Whoever follows a round from its events rather than its state (the journal's round tracker,
for recovery and review; the device operator and the simulated dealer, which must not deal on
while the round waits) needs the same answers: is the round held now, and when does it go on?
A single player's answer does not end the players' options: each player answers for himself
(RWS-NC3P 5.7, MBS-R3P 5.7, 5.13.1), so the options end with the last awaited answer, or with
``PlayerOptionsClosed``. A supervisor's ruling lets the round go on only when it is one that
goes on (continue, the cards' order, a reconstruction, not reconstructable: the round resumes
where it stood). One follower, here, so that none of them deals while another waits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from controller.table import events as ev

GOING_ON = frozenset({"continue", "order", "reconstruct", "not_reconstructable"})
"""The supervisor's rulings after which the held round resumes where it stood."""


class Pause(str, Enum):
    """What one event does to a round's wait."""

    HELD = "held"
    """The round waits: for a supervisor's ruling, or for the players' options."""
    GOES_ON = "goes_on"
    """The ruling, or the last awaited answer, came: the round resumes where it stood."""


@dataclass(slots=True)
class AwaitedOptions:
    """Boxes and players whose answer is still awaited (empty: no options are open)."""

    positions: list[str] = field(default_factory=list)
    players: list[ev.PlayerAtBox] = field(default_factory=list)

    def offered(self, event: ev.PlayerOptionsOffered) -> None:
        self.positions = list(event.positions)
        self.players = list(event.players)

    def taken(self, event: ev.PlayerOptionTaken) -> bool:
        """One answer; ``True`` when it was the last one awaited."""
        if event.players:
            self.players = [p for p in self.players if p not in event.players]
            self.positions = list(dict.fromkeys(p.position for p in self.players))
        elif event.position in self.positions:
            self.positions.remove(event.position)
        return not self.positions

    def clear(self) -> None:
        self.positions, self.players = [], []

    def copy(self) -> AwaitedOptions:
        return AwaitedOptions(list(self.positions), list(self.players))


def pause_after(options: AwaitedOptions, event: ev.RoundEvent) -> Pause | None:
    """What ``event`` (of the round followed) does to its wait; ``options`` follows the
    players' options as it goes. ``None``: nothing."""
    if isinstance(event, ev.SupervisorRequired):
        return Pause.HELD
    if isinstance(event, ev.PlayerOptionsOffered):
        options.offered(event)
        return Pause.HELD
    if isinstance(event, ev.PlayerOptionTaken):
        return Pause.GOES_ON if options.taken(event) else None
    if isinstance(event, ev.SupervisorDecided) and event.action in GOING_ON or \
            isinstance(event, ev.PlayerOptionsClosed) or \
            isinstance(event, ev.IrregularityRuled) and event.action == "continue":
        options.clear()
        return Pause.GOES_ON
    return None


__all__ = ["AwaitedOptions", "GOING_ON", "Pause", "pause_after"]
