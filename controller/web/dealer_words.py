"""A dealer's words for what the table reports in identifiers: irregularity kinds, device
holds and faults, and a wager's result with its amount.

The table's identifiers (``exposed_card``, ``repeated_failure``) are for the journal and the
socket; the screen at the table is read by a dealer and a pit supervisor from two metres away,
who need a sentence, not a token or a shell command. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

KIND_WORDS: Mapping[str, str] = {
    "foreign_card": "A card from another deck",
    "duplicate_card": "A card appeared twice",
    "deck_count": "The deck count is wrong",
    "not_shuffled": "The deck was not shuffled",
    "wrong_count_player": "A player's box got the wrong number of cards",
    "wrong_count_dealer": "The dealer's hand got the wrong number of cards",
    "dealt_incorrectly": "Cards dealt incorrectly",
    "other_dealing_error": "A dealing error",
    "exposed_card": "A card was exposed",
    "simultaneous_draw": "Cards drawn together",
    "burn_error": "A burn card error",
    "dropped_card": "A card was dropped",
    "reversed_sequence": "Cards dealt out of order",
    "card_after_game": "A card after the game",
    "jammed": "The device jammed",
    "interruption": "The round was interrupted",
    "no_read": "A card could not be read",
    "other": "An irregularity",
}
DEVICE_HOLD_WORDS: Mapping[str, str] = {
    "repeated_failure": "keeps failing: fix it, then a supervisor clears the fault",
    "deck_lost": "lost its deck mid-deal: a supervisor voids the round",
    "runaway": "shuffled or dealt too often for one round: a supervisor voids the round",
}
FAULT_WORDS: Mapping[str, str] = {
    "door_open": "door open", "jam": "card jam", "count_mismatch": "wrong card count",
    "unreadable_card": "unreadable card", "foreign_card": "card from another deck",
    "duplicate_card": "duplicate card", "exposed_card": "exposed card",
    "reversed_card": "reversed card", "not_shuffled": "not shuffled", "lid_open": "lid open",
}
BET_WORDS: Mapping[str, str] = {"pair_plus": "Pair Plus", "three_pictures": "3 Pictures",
                                "three_knights": "3 Knights"}
_HELD = re.compile(r"^\s*([a-z_]+)\s*(?:\((.*)\))?\s*$")


def plain(identifier: str) -> str:
    """``door_open`` -> ``door open``: the fallback for an identifier with no words yet."""
    return identifier.replace("_", " ")


def held_words(held_for: str) -> tuple[str, str | None]:
    """``"exposed_card (RWS-3CP 5.1.2)"`` -> ``("A card was exposed", "RWS-3CP 5.1.2")``."""
    match = _HELD.match(held_for)
    if match is None:
        return plain(held_for), None
    kind, clause = match.groups()
    return KIND_WORDS.get(kind, plain(kind).capitalize()), clause or None


def fault_words(faults: list[Any]) -> str:
    return ", ".join(FAULT_WORDS.get(str(f), plain(str(f))) for f in faults)


def bet_words(bet: str, title: str | None = None) -> str:
    return BET_WORDS.get(bet) or title or plain(bet).capitalize()


def money(value: int) -> str:
    """Minor units as major.minor with thousands separators (docs/money.md)."""
    sign = "-" if value < 0 else ""
    return f"{sign}{abs(value) // 100:,}.{abs(value) % 100:02d}"


def result_words(outcome: str, net: int, amount: int) -> tuple[str, int]:
    """What happens to the chips, and how much: a win is paid its net, a loss taken (the
    stake), a push stays, a void or removed hand is returned *its stake* (the settlement's
    ``stake`` is 0 then: nothing was in action, but the player gets the wager back)."""
    if outcome == "win":
        return f"paid {money(net)}", net
    if outcome == "lose":
        return f"taken {money(-net)}", -net
    if outcome == "returned":
        return f"returned {money(amount)}", amount
    if outcome == "push":
        return f"push: {money(amount)} stays", amount
    return f"{plain(outcome)} {money(net)}", net
