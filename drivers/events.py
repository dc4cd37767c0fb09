"""Typed, frozen events that devices hand to the table.

A device's reader thread only ever puts these values on the one queue the table thread consumes;
it never touches table state. Every event names the device (its configured name, e.g.
``"shuffler"``) and carries the monotonic time it was decoded, so latency can be measured and
the journal can order inputs. Cards are :class:`controller.games.cards.Card` values; their JSON
form is always the two-character code.

An event from a link that numbers its events (the framed shuffler and shoe) also carries its
:class:`EventOrigin`. The device resends such an event until the host acknowledges it, and a
driver built with ``deferred_ack=True`` leaves that acknowledgement to whoever makes the event
durable (the journal, :mod:`controller.journal.recorder`), through :class:`EventAcknowledger`:
a controller killed between the device's event and the journal's record then gets the event
again from the device instead of losing a dispensed hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, TypeVar

from controller.games.cards import Card


class Fault(str, Enum):
    """Fault conditions a shuffler or shoe can report (status fault bits)."""

    DOOR_OPEN = "door_open"
    JAM = "jam"
    COUNT_MISMATCH = "count_mismatch"
    UNREADABLE_CARD = "unreadable_card"
    FOREIGN_CARD = "foreign_card"
    DUPLICATE_CARD = "duplicate_card"
    EXPOSED_CARD = "exposed_card"
    REVERSED_CARD = "reversed_card"
    NOT_SHUFFLED = "not_shuffled"
    LID_OPEN = "lid_open"


@dataclass(frozen=True, slots=True)
class EventOrigin:
    """A numbered device event: the device's boot id and the event's id within that boot.

    The pair names one event for good: a device resends an unacknowledged event with the same
    id, and forgets its unacknowledged events only when it reboots (a new boot id)."""

    boot_id: int | None
    event_id: int


@dataclass(frozen=True, slots=True)
class DeviceEvent:
    """Base of every event: which device, and when (``time.monotonic()``) it was decoded.
    ``origin`` is set when the device numbers its events (compared by neither ``==`` nor
    hash: the same card read twice is the same event for the table)."""

    device: str
    at: float = field(default=0.0, compare=False)
    origin: EventOrigin | None = field(default=None, compare=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class DeviceIdentity:
    vendor: str
    model: str
    serial: str
    firmware_version: str
    firmware_hash: str
    protocol_version: int


@dataclass(frozen=True, slots=True)
class DeviceOnline(DeviceEvent):
    identity: DeviceIdentity | None = None
    boot_id: int | None = None


@dataclass(frozen=True, slots=True)
class DeviceOffline(DeviceEvent):
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DeviceRebooted(DeviceEvent):
    old_boot_id: int | None = None
    new_boot_id: int | None = None


@dataclass(frozen=True, slots=True)
class ShuffleDone(DeviceEvent):
    """The shuffler finished a shuffle; ``counted != expected`` is a shortage or excess."""

    counted: int = 0
    expected: int = 52


@dataclass(frozen=True, slots=True)
class CardSetDispensed(DeviceEvent):
    """A hand-forming shuffler dispensed a set (normally three cards; faults can give 2 or 4)."""

    cards: tuple[Card, ...] = ()
    hand_number: int = 0
    exposed: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class HandTaken(DeviceEvent):
    hand_number: int = 0


@dataclass(frozen=True, slots=True)
class CardRead(DeviceEvent):
    """A shoe read one card as it was drawn. ``burn`` is set when the shoe marks a burn card."""

    card: Card | None = None
    index_in_shoe: int | None = None
    burn: bool = False
    exposed: bool = False


@dataclass(frozen=True, slots=True)
class ForeignCard(DeviceEvent):
    """A card was read that is not of the deck in use (unknown barcode or another deck id)."""

    barcode: str = ""
    deck_id: str | None = None


@dataclass(frozen=True, slots=True)
class NoRead(DeviceEvent):
    """A card passed the reader but could not be identified."""

    index_in_shoe: int | None = None


@dataclass(frozen=True, slots=True)
class DoubleFeed(DeviceEvent):
    """Two cards came out together (RWS-NC3P 5.11: simultaneous draw)."""


@dataclass(frozen=True, slots=True)
class ButtonPressed(DeviceEvent):
    button: str = ""


@dataclass(frozen=True, slots=True)
class FaultRaised(DeviceEvent):
    fault: Fault = Fault.JAM
    detail: str = ""


@dataclass(frozen=True, slots=True)
class FaultCleared(DeviceEvent):
    fault: Fault = Fault.JAM


@dataclass(frozen=True, slots=True)
class DeviceWarning(DeviceEvent):
    """A non-fatal message from the device (e.g. Bee-Tek ``<W0x01>``)."""

    code: str = ""
    text: str = ""


@dataclass(frozen=True, slots=True)
class LinkError(DeviceEvent):
    """Bytes were dropped (bad CRC, truncated frame, garbage); counted and logged, not fatal."""

    reason: str = ""
    dropped: int = 0


@dataclass(frozen=True, slots=True)
class CommandFailed(DeviceEvent):
    """The host gave up on a device command after repeated failures. Not sent by a device:
    the service's device operator records the whole streak once (how many tries, the first
    and last, in ``time.monotonic()`` seconds), so a device that refuses everything adds one
    journal record, not one per try."""

    command: str = ""
    error: str = ""
    count: int = 0
    first: float = 0.0
    last: float = 0.0


@dataclass(frozen=True, slots=True)
class ClockReport(DeviceEvent):
    """The host's own clock, read by the service's clock monitor (``device = "clock"``).

    Not a card device, but it reaches the table the same way and for the same reason: the
    table reads no clock (its outputs replay exactly), so whatever it decides from the clock
    (``blocks_rounds``: the ``[clock]`` policy refuses new rounds) must be an input the
    journal records. ``wall_ns``/``mono_ns`` are one reading of both clocks, the anchor a
    reviewer maps record times to corrected wall time with; ``step_ns`` is non-zero when the
    wall clock jumped against the monotonic clock since the previous reading."""

    synchronised: bool = False
    max_error_us: int | None = None
    est_error_us: int | None = None
    source: str = "unknown"
    boot_id: str = ""
    wall_ns: int = 0
    mono_ns: int = 0
    step_ns: int = 0
    trusted: bool = False
    blocks_rounds: bool = False
    reason: str = ""
    """Why the clock is not trusted (empty when it is)."""
    why: str = ""
    """Why this report was sent: start, changed, periodic, or the step."""


class EventAcknowledger(Protocol):
    """What a driver with deferred acknowledgement offers the component that makes its events
    durable. Both are called from that component's thread, never the reader's."""

    def acknowledge(self, origin: EventOrigin) -> bool:
        """The event is recorded: acknowledge it, so the device stops resending it.
        ``False`` when the device rebooted since (it has forgotten the event anyway)."""
        ...

    def redeliver(self, origin: EventOrigin) -> None:
        """The event could not be recorded: hand the device's next resend of it on again."""
        ...


class Evidence(str, Enum):
    """What a game-protection finding that holds the deck rests on, which decides what the table
    may do with it before anyone counts the cards."""

    COUNT = "count"
    """Cards counted prove the deck wrong (more cards dispensed than the deck was counted to
    hold): ruled at once by the rule set's shortage/excess clause."""
    STATISTICAL = "statistical"
    """A run of decks a fair shuffler seldom gives ("a card stuck inside or missing"): a doubt
    about the count, not a count. Dealing waits for the cards to be counted by hand
    (MBS-R3P 5.9 counts before it voids) and the count is ruled."""


@dataclass(frozen=True, slots=True)
class ProtectionReport(DeviceEvent):
    """A game-protection monitor's finding over the card stream (``device = "protection"``,
    :mod:`controller.protection`).

    Not a card device, but it reaches the table as an input for the reason :class:`ClockReport`
    does: the monitors' evidence spans thousands of decks, beyond the table's sessions, so what
    the table does with a finding (a ``ProtectionAlert``; a deck ``holds`` for a supervisor)
    must be an input the journal records for the replay to regenerate it."""

    monitor: str = ""
    statistic: float = 0.0
    threshold: float = 0.0
    decks: int = 0
    detail: str = ""
    holds: bool = False
    evidence: Evidence = Evidence.COUNT
    """What a finding that ``holds`` rests on. Journals written before the field existed replay
    as they were ruled then (at once), hence the default."""


class DeviceMode(str, Enum):
    """What a card device says it is doing, in the device's own words rather than a protocol's
    byte codes (docs/protocols.md section 5.1 names them; the framed link's ``DeviceState``
    numbers them 0-6). The controller decides on these words: a driver's own state value
    becomes one through :meth:`of`, so no code above the drivers imports a wire module."""

    IDLE = "idle"
    """No shuffled deck (booted, or the round was ended): shuffle first."""
    SHUFFLING = "shuffling"
    READY = "ready"
    """A shuffled deck: a hand can be dispensed."""
    DISPENSING = "dispensing"
    HAND_WAITING = "hand_waiting"
    """A hand is presented and not yet taken."""
    FAULT = "fault"
    DEALING = "dealing"
    """A shoe: cards are being drawn."""

    @classmethod
    def of(cls, said: object) -> DeviceMode | None:
        """The device-level word for a driver's state value, ``None`` for nothing known.

        Matched by the member's *name*: a protocol's state enum names its states as the
        protocol document does, and its byte values stay the wire's business. A word this enum
        does not know is ``None`` (the device said something the controller cannot follow,
        which callers treat as they treat silence)."""
        return _by_name(cls, said)


class RefusalCause(str, Enum):
    """Why a device refused a command (a NAK), in device-level words (docs/protocols.md
    section 4: the framed link's ``NakReason`` numbers them 1-5)."""

    CRC = "crc"
    """The frame arrived damaged (the link resends it by itself)."""
    LENGTH = "length"
    """The payload had the wrong length."""
    UNKNOWN = "unknown"
    """The device does not know the command (a shoe asked to shuffle)."""
    BUSY = "busy"
    """The mechanism is moving: ask again later."""
    BAD_STATE = "bad_state"
    """The command conflicts with the device's state (or a fault is active)."""

    @classmethod
    def of(cls, reason: object) -> RefusalCause | None:
        """The device-level word for a driver's refusal reason (matched by name, as
        :meth:`DeviceMode.of`), ``None`` when the error carries none this enum knows."""
        return _by_name(cls, reason)


Word = TypeVar("Word", bound=Enum)


def _by_name(words: type[Word], value: object) -> Word | None:
    """``value`` in the device-level ``words``: itself if it is one already, else the member
    named as ``value``'s ``name`` (a driver's enum names its members as the protocol document
    does); ``None`` for ``None`` or a name ``words`` does not know. The one matching rule of
    :meth:`DeviceMode.of` and :meth:`RefusalCause.of`."""
    if isinstance(value, words) or value is None:
        return value
    name = getattr(value, "name", None)
    return words.__members__.get(name) if isinstance(name, str) else None


@dataclass(frozen=True, slots=True)
class DeviceReport:
    """A device's answer to a status request, in device-level words: what it is doing, its
    active faults, and how many cards it still holds (a count only, never which cards).

    ``faults`` and ``cards_remaining`` are ``None`` when the answer did not say (a driver whose
    status has no such field): the reader keeps what it knew rather than forgetting it."""

    mode: DeviceMode | None = None
    faults: frozenset[Fault] | None = None
    cards_remaining: int | None = None

    @classmethod
    def of(cls, reply: object) -> DeviceReport:
        """A driver's status reply (any object with ``state``, ``faults`` and
        ``cards_remaining``, such as the framed link's ``DeviceStatus``) as a report; a report
        is returned as it is, and no reply at all is a report that says nothing."""
        if isinstance(reply, cls):
            return reply
        faults = getattr(reply, "faults", None)
        remaining = getattr(reply, "cards_remaining", None)
        return cls(mode=DeviceMode.of(getattr(reply, "state", None)),
                   faults=None if faults is None else frozenset(faults),
                   cards_remaining=remaining if isinstance(remaining, int) else None)
