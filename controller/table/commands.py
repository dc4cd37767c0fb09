"""Operator commands: every command is an input event with an actor and a role.

Commands are frozen values so that the journal can record them and a replay can feed them back.
Decisions the rules give to a Pit Supervisor or Shift Manager (RWS-NC3P 5.11 order of
simultaneous cards, 5.5.4 reconstruction confirmation, 5.17 / MBS-R3P 6.1 unprovided cases,
LIVE-3P T&C 1/5/6 management voids) are :class:`SupervisorDecision`, which requires
``Role.SUPERVISOR``; a dealer sending one is refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from controller.games.cards import Card
from controller.roles import TABLE_ROLES, Role


class Choice(str, Enum):
    """RWS-3CP 3.8: after examining the cards an Ante player plays or folds."""

    PLAY = "play"
    FOLD = "fold"


class Option(str, Enum):
    """A player's option after a dealing error (RWS-NC3P 5.7, MBS-R3P 5.7) or a power failure
    with no outcome established (MBS-R3P 5.13.1)."""

    CONTINUE = "continue"
    WITHDRAW = "withdraw"


class Source(str, Enum):
    """Where an exposed card was seen: the fact RWS-NC3P 5.10 (a card *found* face up in the
    shoe or shuffler) and 5.7 (any other dealing error) turn on."""

    DEVICE = "device"
    """Found face up in the shoe or shuffler (a reader flag, a HAND_READY exposed mask, or the
    shuffler's exposed-card fault bit)."""
    DEALER = "dealer"
    """Exposed by the dealer (while dealing, before or after the deal)."""
    DRAWN = "drawn"
    """A card drawn from the device while bets are offered (LIVE-3P T&C 2, first bullet): the
    table sees this itself, no person reports it (:data:`REPORTED_SOURCES`)."""


REPORTED_SOURCES = (Source.DEVICE, Source.DEALER)
"""Where a person may report an exposed card seen (``tablectl report exposed_card --source``,
``irregularity.report``'s ``source``)."""


class IrregularityKind(str, Enum):
    """Irregularities a dealer or supervisor reports (devices report the rest themselves)."""

    FOREIGN_CARD = "foreign_card"
    DUPLICATE_CARD = "duplicate_card"
    DECK_COUNT = "deck_count"
    NOT_SHUFFLED = "not_shuffled"
    WRONG_COUNT_PLAYER = "wrong_count_player"
    WRONG_COUNT_DEALER = "wrong_count_dealer"
    DEALT_INCORRECTLY = "dealt_incorrectly"
    OTHER_DEALING_ERROR = "other_dealing_error"
    EXPOSED_CARD = "exposed_card"
    SIMULTANEOUS_DRAW = "simultaneous_draw"
    BURN_ERROR = "burn_error"
    DROPPED_CARD = "dropped_card"
    REVERSED_SEQUENCE = "reversed_sequence"
    CARD_AFTER_GAME = "card_after_game"
    JAMMED = "jammed"
    INTERRUPTION = "interruption"
    NO_READ = "no_read"
    OTHER = "other"


class SupervisorAction(str, Enum):
    VOID = "void"
    RECONSTRUCT = "reconstruct"
    """Reconstruction confirmed (RWS-NC3P 1.13, 5.5.4): optional ``moves`` of complete hands and
    ``hands`` overriding the record; with neither, the table was put back to the recorded deal."""
    NOT_RECONSTRUCTABLE = "not_reconstructable"
    ORDER = "order"
    """The order of simultaneously drawn cards (RWS-NC3P 5.11), or a card the reader missed."""
    CONTINUE = "continue"
    IN_DEVICE = "in_device"
    """The answer to "where was the exposed card seen?": found face up in the shoe/shuffler
    (RWS-NC3P 5.10)."""
    BY_DEALER = "by_dealer"
    """The answer to "where was the exposed card seen?": exposed by the dealer (RWS-NC3P 5.7)."""
    INTERRUPTS = "interrupts"
    """The answer to "does the jam stop the round?": yes, it affects the continuation of the
    round, so RWS-NC3P 5.4 applies (``continue`` answers no: cleared, dealing goes on)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    actor: str
    role: Role = Role.DEALER

    def __post_init__(self) -> None:
        # The table judges a command as a dealer's or a Pit Supervisor's, nobody else's: the
        # socket maps its peers first (Role.at_table); a journal or a test that names another
        # role is refused here rather than judged by the wrong rule.
        if self.role not in TABLE_ROLES:
            raise ValueError(f"a table command's role is one of "
                             f"{', '.join(r.value for r in TABLE_ROLES)}, not {self.role.value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenRound(Command):
    """The dealer announces "Place your bets, please" (RWS-NC3P 3.4, MBS-R3P 3.1, RWS-3CP 3.1)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OverrideClock(Command):
    """A supervisor lets rounds open while the ``[clock]`` policy would refuse them (the clock
    is unsynchronised or its error bound too large): journaled with who and why."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlaceWager(Command):
    wager_id: str
    position: str
    bet: str
    amount: int
    player: str | None = None
    seated: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WagerOrder:
    """One wager of a :class:`PlaceWagers` batch: what a :class:`PlaceWager` carries."""

    wager_id: str
    position: str
    bet: str
    amount: int
    player: str | None = None
    seated: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlaceWagers(Command):
    """Many wagers in one input, as a live studio's game server sends them (hundreds a round):
    one journal record and one fsync for the batch instead of one each, replayed as one input.
    Each wager is accepted or refused on its own, in order, exactly as a :class:`PlaceWager` of
    it would be; the batch as a whole is refused only when no round takes bets."""

    wagers: tuple[WagerOrder, ...]

    def single(self, order: WagerOrder) -> PlaceWager:
        return PlaceWager(actor=self.actor, role=self.role, wager_id=order.wager_id,
                          position=order.position, bet=order.bet, amount=order.amount,
                          player=order.player, seated=order.seated)


@dataclass(frozen=True, slots=True, kw_only=True)
class WithdrawWager(Command):
    wager_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseBets(Command):
    """ "No more bets" (RWS-NC3P 3.11, 5.8; MBS-R3P 3.2; RWS-3CP 3.2)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfirmShuffle(Command):
    """The dealer confirms the deck was shuffled (a shoe table; a shuffler reports ShuffleDone)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplaceDeck(Command):
    """A fresh, complete deck replaces one whose count was wrong: unblocks dealing."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCounted(Command):
    """A manual count of the deck (MBS-R3P 5.9); 52 unblocks dealing, anything else voids."""

    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerDecision(Command):
    """RWS-3CP 3.8: play (a Play wager equal to the Ante is placed) or fold."""

    position: str
    choice: Choice


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerOption(Command):
    """One player's option (RWS-NC3P 5.7, MBS-R3P 5.7, 5.13.1): each Player at the box answers
    for himself ("all Players on the gaming table shall have the option"). ``player`` names
    him; it may be left out only when one player at ``position`` has an option pending. A
    withdrawal takes that player's wagers at the box only (RWS-NC3P 5.7.3: the hand is
    invalidated for him; it leaves play only when no player continues it), except under
    MBS-R3P 5.13.1, where it takes ALL his wagers ("must withdraw all his wagers")."""

    position: str
    option: Option
    player: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseOptions(Command):
    """The dealer closes the options: players who did not answer continue."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OptionsDeadline(Command):
    """The table's options deadline passed (``[table] options_deadline_s``): players who did
    not answer continue. Put by the service's table thread, which owns the clock, so that the
    journal records it as an input and a replay closes the options at the same point."""

    deadline_s: int
    offer: int
    """Which announcement of the options the deadline belongs to (a resumed offer after a
    hold has a deadline of its own); a stale one is refused."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportIrregularity(Command):
    kind: IrregularityKind
    position: str | None = None
    handled: bool | None = None
    """Whether players had handled their cards; None: inferred (handled once the deal is done)."""
    exposed_before_drop: bool = False
    """LIVE-3P T&C 4: a dropped card exposed before it left the camera's view is reused."""
    round_number: int | None = None
    """The round the error occurred in, when it is an earlier one (RWS-NC3P 5.6, 5.12)."""
    details: str = ""
    source: Source | None = None
    """An exposed card: found in the device or exposed by the dealer; None: the supervisor is
    asked (RWS-NC3P 5.10 vs 5.7)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SupervisorDecision(Command):
    action: SupervisorAction
    reason: str = ""
    clause: str | None = None
    cards: tuple[Card, ...] = ()
    moves: tuple[tuple[str, str], ...] = ()
    hands: tuple[tuple[str, tuple[Card, ...]], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ClearDeviceFault(Command):
    """A supervisor has fixed the device (jam cleared, door closed) and orders its fault
    cleared: the service sends CLEAR_FAULT. Requires ``Role.SUPERVISOR``, like every decision
    that releases a held table."""

    device: str = "shuffler"
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RevealDealer(Command):
    """The dealer exposes his hand: after all hands are returned (MBS-R3P 3.15) and, in
    RWS-3CP, after every decision."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SettleRound(Command):
    pass
