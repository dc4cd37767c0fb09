"""The values settlement consumes and produces. Money is always integer minor units."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from controller.games.cards import Card
from controller.games.rules import GameRules


MAX_AMOUNT = 10**12
"""The largest amount (minor units) any request, setting or meter may hold: $10 billion at a
cent unit, far above any table. It keeps every payout (188 to 1 at most) below 2**53, so a JSON
consumer that reads numbers as doubles (JavaScript, jq) still reads every amount exactly, and it
turns a typo such as 1e35 into a clear refusal instead of a meaningless settlement."""


class Outcome(str, Enum):
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"
    RETURNED = "returned"


@dataclass(frozen=True, slots=True)
class Wager:
    """One wager as it stood on the layout when bets closed (RWS-NC3P 5.13)."""

    id: str
    position: str
    bet: str
    amount: int
    player: str | None = None
    seated: bool | None = None
    """True/False when known; None lets RWS-NC3P 1.15 decide (highest bet on the box)."""

    @property
    def player_key(self) -> str | None:
        return self.player


@dataclass(frozen=True, slots=True)
class BetLimit:
    minimum: int
    maximum: int


@dataclass(frozen=True, slots=True)
class Component:
    """One part of a wager's result (the base bet, an Ante Bonus, an Envy Bonus, a limit)."""

    label: str
    net: int
    rule: str


@dataclass(frozen=True, slots=True)
class Result:
    wager_id: str
    outcome: Outcome
    net: int
    """Signed change to the player: winnings on a win (stake excluded), minus the amount
    collected on a loss, 0 on a push or a return."""
    rule: str
    components: tuple[Component, ...] = ()
    stake: int = 0
    """The amount that was in action after limits (0 when returned)."""
    amount: int = 0
    """The wager's amount on the layout at settlement, as the player placed it."""
    returned: int = 0
    """What went back to the player without being in action: the whole ``amount`` of a
    returned wager, the excess a limit took off (RWS-NC3P 5.1.1, MBS-R3P 5.11), else 0. So each
    result reconciles alone: ``amount == stake + returned``, and the player takes back
    ``stake + net + returned`` (the stake and winnings of a win, nothing of a lost stake)."""


@dataclass(frozen=True, slots=True)
class ProgressiveConfig:
    """The RWS-3CP progressive's house settings, which the rule text does not print.

    RWS-3CP 4.4 pays fixed sums ("$1250", "$175", ...) for a fixed stake it does not state; the
    sums are read as paid *for* the stake (the stake is not returned on top), the usual form of
    a progressive pay table. ``stake`` defaults to 500 minor units ($5): with a $1 stake the fixed
    sums alone would give the player a 40% edge before any jackpot (``tablectl odds``).
    """

    stake: int = 500
    seed: int = 0
    contribution_per_mille: int = 0


@dataclass(frozen=True, slots=True)
class TableMemory:
    """What settlement must remember between rounds, returned updated by each settlement."""

    under_minimum_players: frozenset[str] = frozenset()
    """MBS-R3P 5.10: players whose under-minimum wager has been settled once."""
    progressive_jackpot: int = 0
    """RWS-3CP 4.4: the progressive meter, minor units."""


@dataclass(frozen=True, slots=True)
class RoundInput:
    rules: GameRules
    hands: Mapping[str, tuple[Card, ...]]
    wagers: tuple[Wager, ...]
    limits: Mapping[str, BetLimit] = field(default_factory=lambda: MappingProxyType({}))
    memory: TableMemory = TableMemory()
    rounding_unit: int = 1
    """Smallest amount the table pays: 1:2 and pro-rata amounts round DOWN to a multiple."""
    returned_positions: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Positions whose hand was removed from play, with the clause (e.g. RWS-NC3P 5.9)."""
    progressive: ProgressiveConfig = ProgressiveConfig()
    void_clause: str | None = None
    """Set when the round is Void: every wager is returned under this clause (RWS-NC3P 5.15)."""
    on_layout_at_close: frozenset[tuple[str, str]] = frozenset()
    """(box, bet) of wagers on the layout at "No more bets" that a player's option has since
    withdrawn: a side Bet that needed one of them still stands, since it was placed on a box
    with its Initial Bet (RWS-NC3P 3.9, 5.13) and another Player's withdrawal (5.7.3) is his
    own choice, not a reason to return this Player's Bet (5.14 is for a side Bet placed
    *without* one)."""


@dataclass(frozen=True, slots=True)
class Settlement:
    results: tuple[Result, ...]
    memory: TableMemory

    def by_id(self) -> dict[str, Result]:
        return {result.wager_id: result for result in self.results}
