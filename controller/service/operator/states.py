"""The device operator's vocabulary: device-side states, the round as the operator sees it,
the actions it may take, and how long each waiting state waits.

The states mirror the shuffler's protocol states (docs/protocols.md section 5: IDLE, SHUFFLING,
READY, DISPENSING, HAND_WAITING, FAULT) plus the host's own: OFFLINE (no link), BACKING_OFF
(a command failed; retry later) and HELD (the operator gave up; a supervisor must act).
"""

from __future__ import annotations

from enum import Enum


class Op(str, Enum):
    """Where the device stands, as the operator knows it."""

    OFFLINE = "offline"
    """No link. Exit: the device comes back online (the driver reconnects by itself)."""
    IDLE = "idle"
    """No shuffled deck (booted, or the round was ended). Exit: SHUFFLE when a round needs one."""
    SHUFFLING = "shuffling"
    """SHUFFLE acknowledged; waiting for SHUFFLE_DONE."""
    READY = "ready"
    """A shuffled deck: DISPENSE_HAND when the round needs a hand, END_ROUND when it is over."""
    FORMING = "forming"
    """DISPENSE_HAND acknowledged; waiting for HAND_READY."""
    PRESENTED = "presented"
    """A hand is presented; waiting for the dealer to lift it (HAND_TAKEN)."""
    FAULT = "fault"
    """A fault is active; the device refuses commands until a supervisor clears it."""
    BACKING_OFF = "backing_off"
    """A command failed; the operator waits (exponential, capped) before it looks again."""
    HELD = "held"
    """The operator stopped trying; a supervisor must act (see :class:`HoldReason`)."""


class HoldReason(str, Enum):
    """Why the operator holds for a supervisor, and what gets it out."""

    REPEATED_FAILURE = "repeated_failure"
    """Commands kept failing: `supervisor clear-fault` after fixing the device, or void."""
    DECK_LOST = "deck_lost"
    """The shuffler lost its deck mid-deal (a reboot or a new device): void the round."""
    RUNAWAY = "runaway"
    """Too many shuffles or hands for one round: void the round."""


class Stage(str, Enum):
    """The round as the operator sees it (from the table's typed events): what it wants of
    the device."""

    NO_ROUND = "no_round"
    """No round, or the round ended: the device should be IDLE (END_ROUND)."""
    BETTING = "betting"
    CLOSED = "closed"
    """No more bets, no shuffle confirmed: the round needs a shuffle."""
    SHUFFLED = "shuffled"
    """The shuffle is confirmed, no card dealt yet: the round needs hands."""
    DEALING = "dealing"
    """Cards are dealt: the round needs hands from this deck only."""
    HELD = "held"
    """The table holds the round (supervisor or player options): no hands meanwhile."""
    DEALT = "dealt"
    """The deal is complete: no more hands."""


class DeviceAction(str, Enum):
    """What the operator asks of the device (one wire command each)."""

    STATUS = "status"
    SHUFFLE = "shuffle"
    DISPENSE_HAND = "dispense_hand"
    END_ROUND = "end_round"
    CLEAR_FAULT = "clear_fault"


WAIT_SECONDS: dict[Op, float | None] = {
    Op.OFFLINE: 30.0,      # look at the link again (no wire traffic)
    Op.IDLE: None,         # waits for the table: its exits are the table's verbs
    Op.SHUFFLING: 30.0,    # then STATUS: a lost SHUFFLE_DONE, or a stuck mechanism
    Op.READY: None,
    Op.FORMING: 15.0,      # then STATUS: a lost HAND_READY, or a jam
    Op.PRESENTED: 120.0,   # then STATUS: a lost HAND_TAKEN
    Op.FAULT: 60.0,        # then STATUS: a fault cleared at the device's own panel
    Op.BACKING_OFF: None,  # its own delay (the backoff)
    Op.HELD: 300.0,        # a reminder in the log; no command
}
"""How long each state waits before it looks again (``None``: it waits for the table)."""

MAX_FAILURES = 5
"""Failed commands in a row before the operator holds for a supervisor."""
MAX_SHUFFLES_PER_ROUND = 3
"""Shuffles one round may take (the first, one after a lost deck, one after a refusal)."""
MAX_HANDS_PER_ROUND = 32
"""A deal needs at most 8 boxes + the dealer's hand; more is a runaway."""
BACKOFF_FIRST = 0.5
BACKOFF_CAP = 30.0
