"""The bench operator's view of the round in progress, and when it may take its next step.

The operator knows only what the table's events tell it, as a dealer at the table would; acting
on an event that is not a step forward would deal a card into the next round.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.games.cards import Card
from controller.settlement.model import Wager
from controller.table import events as ev
from firmware_sim.faults import FaultSpec


@dataclass(slots=True)
class RoundView:
    """What the operator knows of the round in progress, from the table's events only."""

    number: int = 0
    closed: bool = False
    close_refused: bool = False
    wagers: dict[str, Wager] = field(default_factory=dict)
    hands: dict[str, tuple[Card, ...]] = field(default_factory=dict)
    shuffled: bool = False
    shuffle_asked: bool = False
    hand_out: bool = False
    sets: int = 0
    cards: int = 0
    needed: int = 0
    """Deliveries the deal takes: sets of three, or single cards plus the 4 LIVE burns. Never
    more, or a card still in flight would land in the next round."""
    held: bool = False
    fault_blocked: bool = False
    """The device refused to deal because of a fault: wait for the table's ruling on it."""
    complete: bool = False
    finishing: bool = False
    over: bool = False
    fault: FaultSpec | None = None
    fault_at: int = -1
    """Delivery index before which the fault is armed (-1: before the shuffle)."""


def may_step_after(event: ev.RoundEvent) -> bool:
    """Events after which the dealer may take the next physical step. Acting on any other
    (say between a supervisor's "not reconstructable" and the void it leads to) would deal a
    card into the next round."""
    if isinstance(event, ev.DeviceNoted):
        return event.detail in ("HandTaken", "DeviceOnline") or "shuffle" in event.detail
    if isinstance(event, ev.SupervisorDecided):
        return event.action in ("continue", "order", "reconstruct")
    if isinstance(event, ev.IrregularityRuled):
        return event.action == "continue"
    return isinstance(event, (ev.BetsClosed, ev.ShuffleConfirmed, ev.DealComplete,
                              ev.HandRemoved, ev.PlayerOptionTaken, ev.CardAssigned,
                              ev.BurnCard, ev.CardIgnored, ev.DeckReleased))


__all__ = ["RoundView", "may_step_after"]
