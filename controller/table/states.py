"""The round's states and the small values the round machine keeps between inputs.

Kept apart from :mod:`controller.table.machine` so that every part of the machine (betting,
card intake, rulings, holds, settlement) can name a state or a group of states without
importing the machine itself. The groups are the facts the rules turn on: whether a round is in
progress, whether cards may still be dealt, where a hold may resume to, and whether "No more
bets" has been called.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from controller.table import commands as cmd
from controller.table.irregularities import Ruling

Kind = cmd.IrregularityKind


class RoundState(str, Enum):
    IDLE = "idle"
    BETTING = "betting"
    CLOSED = "closed"
    SHUFFLED = "shuffled"
    BURN = "burn"
    DEALING = "dealing"
    HOLD = "hold"
    """Waiting for a supervisor's decision."""
    OPTIONS = "options"
    """Waiting for the players' options (RWS-NC3P 5.7, MBS-R3P 5.7, 5.13.1)."""
    DECISIONS = "decisions"
    DEALT = "dealt"
    REVEALED = "revealed"
    SETTLED = "settled"
    VOIDED = "voided"


S = RoundState
NO_ROUND = (S.IDLE, S.SETTLED, S.VOIDED)
IN_ROUND = tuple(s for s in S if s not in NO_ROUND)
DEALING_PHASES = (S.CLOSED, S.SHUFFLED, S.BURN, S.DEALING, S.DECISIONS, S.DEALT, S.REVEALED)
RESUMABLE = (S.BETTING, *DEALING_PHASES)
AFTER_CLOSE = (S.CLOSED, S.SHUFFLED, S.BURN, S.DEALING, S.HOLD, S.OPTIONS, S.DECISIONS,
               S.DEALT, S.REVEALED)


class Refused(Exception):
    """An input the machine will not act on; the message is the reason given to the operator."""


@dataclass(slots=True)
class Hold:
    kind: Kind
    ruling: Ruling
    position: str | None


__all__ = ["AFTER_CLOSE", "DEALING_PHASES", "IN_ROUND", "NO_ROUND", "RESUMABLE", "Hold", "Kind",
           "Refused", "RoundState", "S"]
