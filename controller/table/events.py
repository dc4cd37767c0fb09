"""Round events: what the table tells settlement, the journal and the displays.

Every event carries the round number and nothing taken from a clock, so replaying the same inputs
gives equal events. An event that reports an irregularity names its clause.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from controller.games.cards import Card
from controller.settlement.model import Outcome, Settlement, Wager


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundEvent:
    round: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundOpened(RoundEvent):
    game: str
    table: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WagerAccepted(RoundEvent):
    wager: Wager


@dataclass(frozen=True, slots=True, kw_only=True)
class WagersAccepted(RoundEvent):
    """The wagers of one :class:`~controller.table.commands.PlaceWagers` batch that went on
    the layout, in the order sent: one journal record for the batch instead of one
    :class:`WagerAccepted` each (issue 28: a studio's 500 wagers cost 0.3 ms a record). Each
    wager keeps its id, position, bet, amount and player, so surveillance reads every one."""

    wagers: tuple[Wager, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class WagerWithdrawn(RoundEvent):
    wager_id: str
    player: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WagerRefused(RoundEvent):
    wager_id: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WagerReduced(RoundEvent):
    """A Standing Player's wager cut back because a Seated Player's wager has priority up to
    the box's maximum (RWS-NC3P 5.1): ``amount`` stays in play (0: the whole wager is
    returned, the room left being under the minimum), ``returned`` goes back to the player."""

    wager_id: str
    player: str | None
    amount: int
    returned: int
    clause: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BetsClosed(RoundEvent):
    wagers: tuple[Wager, ...]
    receiving: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ShuffleConfirmed(RoundEvent):
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckBlocked(RoundEvent):
    reason: str
    clause: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckReleased(RoundEvent):
    by: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BurnCard(RoundEvent):
    card: Card | None
    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CardAssigned(RoundEvent):
    position: str
    card: Card
    index: int
    """0-based place of the card in its hand."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HandComplete(RoundEvent):
    position: str
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DealComplete(RoundEvent):
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class DecisionMade(RoundEvent):
    position: str
    choice: str
    play_wagers: tuple[Wager, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerRevealed(RoundEvent):
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class OutcomeEstablished(RoundEvent):
    """The RWS-NC3P 5.4 / MBS-R3P 5.13 test: ``established`` when some wager is conclusively
    won or lost; ``decided`` lists those wagers."""

    established: bool
    decided: tuple[tuple[str, Outcome], ...]
    clause: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DealingError(RoundEvent):
    kind: str
    clause: str
    detail: str = ""
    position: str | None = None
    """The box the dealer reported it at (a card the dealer saw exposed at a box, issue 36: the
    hold then names the box); ``None`` where the table found it itself. Words only: the
    ruling is the clause's, whatever box is named."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IrregularityRuled(RoundEvent):
    """The ruling applied to an irregularity: what happens, under which clause, and why."""

    kind: str
    action: str
    clause: str
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class SupervisorRequired(RoundEvent):
    kind: str
    clause: str
    options: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SupervisorDecided(RoundEvent):
    actor: str
    action: str
    clause: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PlayerAtBox:
    """A Player at a betting box (RWS-NC3P 1.11, 1.15, 1.16): the one who answers an option.
    ``player`` is None for wagers that name no player (the box's one unnamed player)."""

    position: str
    player: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerOptionsOffered(RoundEvent):
    """Options offered to each player in ``players`` (``positions``: their boxes). After a
    hold the options still unanswered are announced again (``resumed``) with a fresh deadline;
    ``deadline_s`` 0 means only the dealer closes them."""

    clause: str
    positions: tuple[str, ...]
    players: tuple[PlayerAtBox, ...] = ()
    deadline_s: int = 0
    resumed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerOptionTaken(RoundEvent):
    """One player's answer. ``wager_ids``: the wagers it withdrew (only that player's);
    ``players``: every player-at-box the answer settles (MBS-R3P 5.13.1: all boxes of the
    player)."""

    position: str
    option: str
    wager_ids: tuple[str, ...]
    clause: str
    player: str | None = None
    players: tuple[PlayerAtBox, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerOptionsClosed(RoundEvent):
    """The options closed before every player answered: by the dealer (``options close``) or
    by the table's options deadline. ``continuing``: the players who had not answered and so
    continue (RWS-NC3P 5.7.1/5.7.2: "continue their Hand"; MBS-R3P 5.7, 5.13.1: a withdrawal is
    only ever the player's own choice)."""

    clause: str
    by: str
    continuing: tuple[PlayerAtBox, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class HandRemoved(RoundEvent):
    position: str
    clause: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HandsMoved(RoundEvent):
    moves: tuple[tuple[str, str], ...]
    clause: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultsSwapped(RoundEvent):
    """LIVE-3P T&C 5: dealt P3 -> P2 -> P1 -> Banker; P1 and P3 results swap at settlement."""

    first: str
    second: str
    clause: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CardIgnored(RoundEvent):
    card: Card | None
    clause: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundVoided(RoundEvent):
    reason: str
    clause: str
    settlement: Settlement


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundSettled(RoundEvent):
    settlement: Settlement
    hands: tuple[tuple[str, tuple[Card, ...]], ...]
    returned_positions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SettlementCorrected(RoundEvent):
    """A settled round corrected before the next round commenced: a wrong count noticed after
    settlement (RWS-NC3P 5.9, 5.5.5; MBS-R3P 5.5; RWS-3CP 5.1.5 reach until the next round).
    ``settlement`` replaces the round's earlier one; ``voided`` when the whole round is void."""

    clause: str
    reason: str
    settlement: Settlement
    voided: bool
    position: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandRefused(RoundEvent):
    command: str
    reason: str


class NoteCause(str, Enum):
    """Why a device event was only noted, for the readers that act on it (the device operator)
    without reading ``detail``, which is for people."""

    OTHER = "other"
    SHUFFLE_REFUSED = "shuffle_refused"
    """The device reported a shuffle the table cannot use (a blocked deck): do not shuffle
    again until the deck is released."""
    SHUFFLE_LOST = "shuffle_lost"
    """The device rebooted before the deal: the confirmed shuffle is gone; shuffle again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceNoted(RoundEvent):
    """A device event with no effect on the round (online, warning, fault cleared, ...)."""

    device: str
    detail: str
    cause: NoteCause = NoteCause.OTHER


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceFaultClearOrdered(RoundEvent):
    """A supervisor has fixed the device (cleared the jam, closed the door) and orders its
    fault cleared: the service sends CLEAR_FAULT (docs/protocols.md section 5). ``clause`` is
    the one the held round cites, if any."""

    device: str
    actor: str
    clause: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockStatus(RoundEvent):
    """The host clock's quality (journal ``clock_status``): at start, on change, periodically.
    ``blocks_rounds`` while the ``[clock]`` policy refuses new rounds and no supervisor has
    overridden it."""

    synchronised: bool
    max_error_us: int | None
    source: str
    trusted: bool
    reason: str
    blocks_rounds: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockStepped(RoundEvent):
    """The wall clock jumped by ``step_ns`` against the monotonic clock (journal
    ``clock_stepped``): records before it carry the old, wrong wall time."""

    step_ns: int
    wall_ns: int
    mono_ns: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockOverridden(RoundEvent):
    """A supervisor let rounds open although the clock cannot be trusted; lasts until the
    clock is trusted again."""

    by: str
    reason: str
    untrusted: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtectionAlert(RoundEvent):
    """A game-protection monitor alarmed (:mod:`controller.protection`): its statistic against
    its threshold after ``decks`` decks. ``held`` when the deck is blocked for a supervisor (a
    card missing or extra: the rule set's shortage/excess clause, ``clause``)."""

    monitor: str
    statistic: float
    threshold: float
    decks: int
    detail: str
    held: bool = False
    clause: str = ""
