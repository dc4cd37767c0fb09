"""What the journal syncs, and the event types it writes about itself.

Kept apart from the writer so that the table and the docs can read the policy (which event
types decide money) without importing file handling.
"""

from __future__ import annotations

from enum import Enum


class Durability(str, Enum):
    """When a record is forced to disk (``fsync``) before ``append`` returns."""

    ALWAYS = "always"
    """Every record. Slowest; nothing acknowledged is ever lost."""
    MONEY = "money"
    """Records that decide money, rotation and close. The default."""
    NONE = "none"
    """Never (flush to the OS only). For benchmarks and simulations, not for a live table."""


class JournalEvent(str, Enum):
    """Event types the journal writes about itself."""

    FILE_OPENED = "journal_file_opened"
    RESUMED = "journal_resumed"
    REPAIRED = "journal_repaired"
    CLOSED = "journal_closed"
    RETENTION_CHECKPOINT = "retention_checkpoint"
    DAMAGE_FOUND = "journal_damage_found"
    """The service's start-up check found the journal damaged (what, where); dealing waits."""
    DAMAGE_ACKNOWLEDGED = "journal_damage_acknowledged"
    """A supervisor acknowledged a ``journal_damage_found`` (who, role, why); dealing resumes."""
    CHECKED = "journal_check"
    """The running service's background full check concluded (:mod:`.background`): outcome,
    records and files checked, duration, the first break found."""


MONEY_EVENT_TYPES: frozenset[str] = frozenset(
    {
        "card_assigned",
        "cards_assigned",
        "bets_closed",
        "round_settled",
        "settlement",
        "round_voided",
        "decision_made",
        "player_option_taken",
        "outcome_established",
        "supervisor_decided",
        "irregularity_ruled",
        "hand_removed",
        "hands_moved",
        "results_swapped",
        "wager_withdrawn",
        "wager_reduced",
        "player_options_closed",
        JournalEvent.REPAIRED.value,
        JournalEvent.RETENTION_CHECKPOINT.value,
        JournalEvent.DAMAGE_FOUND.value,
        JournalEvent.DAMAGE_ACKNOWLEDGED.value,
    }
)
"""Event types that decide money (who holds which card, which bets stand, a player's or a
supervisor's decision, what is paid, what is voided; names as :func:`event_type_of` gives them
for the table's round events), plus the journal's own repairs and checkpoints.
``append(..., money=True)`` marks any other record the same way."""
