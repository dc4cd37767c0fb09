"""A dealer's words for what the table reports in identifiers: irregularity kinds, device
holds and faults, and a wager's result with its amount.

The table's identifiers (``exposed_card``, ``repeated_failure``) are for the journal and the
socket; the screen at the table is read by a dealer and a pit supervisor from two metres away,
who need a sentence, not a token or a shell command. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
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
REPORT_WORDS: Mapping[str, str] = {
    "exposed_card": "Card exposed",
    "dropped_card": "Card dropped",
    "burn_error": "Burn error",
    "card_after_game": "Card after the game",
    "dealt_incorrectly": "Wrong box",
    "wrong_count_player": "Wrong number of cards to a box",
    "wrong_count_dealer": "Wrong number of cards to the dealer",
    "simultaneous_draw": "Cards drawn together",
    "reversed_sequence": "Cards out of order",
}
"""A dealer's report as its button says it (what they saw, not what the table rules)."""
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


def held_words(held_for: str, *, card: str | None = None, box: str | None = None,
               dealer: str | None = None) -> tuple[str, str | None]:
    """``"exposed_card (RWS-3CP 5.1.2)"`` -> ``("A card was exposed", "RWS-3CP 5.1.2")``.

    With what the hold is about (:func:`hold_subject`: the card and the box it went to; for a
    no-read the box whose card the reader missed), the words name them, so the supervisor
    called to the table knows which card and which box: ``"10♦ was exposed at box 3"``,
    ``"The card for box 2 could not be read"``. ``dealer``: the game's dealer position."""
    match = _HELD.match(held_for)
    if match is None:
        return plain(held_for), None
    kind, clause = match.groups()
    where = box_words(box, dealer) if box else None
    shown = card_words(card) if card else None
    if kind == "exposed_card" and (shown or where):
        what = (f"{shown} {'were' if ' ' in shown else 'was'} exposed" if shown
                else "A card was exposed")
        at = "in" if where and where.endswith("hand") else "at"
        return (f"{what} {at} {where}" if where else what), clause or None
    if kind == "no_read" and where:
        return f"The card for {where} could not be read", clause or None
    return KIND_WORDS.get(kind, plain(kind).capitalize()), clause or None


_SUIT_GLYPHS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_CARD = re.compile(r"^(10|[2-9TJQKA])([SHDC])$", re.IGNORECASE)


def card_words(code: str) -> str:
    """``TD`` -> ``10♦``, ``QS KD`` -> ``Q♠ K♦`` (as the screen draws cards); anything that is
    not a card code stays as it is."""
    out = []
    for token in code.split():
        found = _CARD.match(token)
        if found is None:
            out.append(token)
            continue
        rank, suit = found.group(1).upper(), found.group(2).upper()
        out.append(("10" if rank == "T" else rank) + _SUIT_GLYPHS[suit])
    return " ".join(out)


def box_words(position: str, dealer: str | None = None) -> str:
    """A position as the rule texts and the dealer say it: ``3`` -> ``box 3``, the dealer's
    position -> ``the dealer's hand``, LIVE-3P's ``p2`` -> ``Player 2``, ``banker`` -> ``the
    Banker``."""
    if dealer is not None and position == dealer or position == "dealer":
        return "the dealer's hand"
    if position.isdigit():
        return f"box {position}"
    live = re.fullmatch(r"p(\d+)", position)
    if live:
        return f"Player {live.group(1)}"
    if position == "banker":
        return "the Banker"
    return plain(position)


def hold_subject(kind: str, events: Iterable[Mapping[str, Any]]
                 ) -> tuple[str | None, str | None]:
    """The card and the box a hold of ``kind`` is about, from the round's events as the
    screen received them (already redacted for its role: a face-down card it may not see is
    ``null`` in them and is never named here). An exposed card: the card the table ruled on
    (``DealingError.detail``, a card code or ``exposed in set: ...``) and the box its
    ``CardAssigned`` put it in; a card the dealer reports exposed, the box the report names
    (``DealingError.position``); a card found exposed inside the device names neither. A no-read
    names no card (none was read) and no box here: its box is the one whose card is due (the
    status's hands, ``dealer.cards_due``)."""
    assigned: dict[str, str] = {}
    card: str | None = None
    reported: str | None = None
    for event in events:
        if event.get("type") == "CardAssigned" and event.get("card"):
            assigned[str(event["card"]).upper()] = str(event.get("position"))
        elif event.get("type") == "DealingError" and event.get("kind") == kind:
            card = None
            reported = str(event["position"]) if event.get("position") else None
            detail = str(event.get("detail") or "")
            detail = detail.removeprefix("exposed in set:").strip()
            tokens = detail.split()
            if tokens and all(_CARD.match(t) for t in tokens):
                card = " ".join(t.upper() for t in tokens)
    if kind != "exposed_card":
        return None, None
    if card is None:  # the dealer's report names the box, not the card
        return None, reported
    boxes = {assigned.get(t) for t in card.split()} - {None}
    return card, boxes.pop() if len(boxes) == 1 else None


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
