"""Settlement: wagers + hands -> results, as a pure function of its inputs.

No I/O, no clock, no globals: :func:`controller.settlement.engine.settle` is what the table calls
and what ``tablectl settle`` and ``tablectl odds`` call, so there is one arithmetic only.
"""

from __future__ import annotations

from controller.settlement.engine import settle, void_round
from controller.settlement.model import (
    BetLimit,
    Component,
    Outcome,
    ProgressiveConfig,
    Result,
    RoundInput,
    Settlement,
    TableMemory,
    Wager,
)

__all__ = [
    "BetLimit", "Component", "Outcome", "ProgressiveConfig", "Result", "RoundInput", "Settlement",
    "TableMemory", "Wager", "settle", "void_round",
]
