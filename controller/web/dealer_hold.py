"""The dealer's screen during a hold: what it is about in words, the card or box it names, the
buttons that answer it, and, for a supervisor's order of the cards, which box a card is due to
and how many (the card pad's heading). Split from :mod:`controller.web.dealer` (issue 36): the
view composes it. Pure: a ``round.status`` (already redacted) and the round's events in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from controller.errors import TablectlError
from controller.games.catalog import get_game
from controller.games.rules import GameRules
from controller.service.protocol import AWAITING_JOURNAL
from controller.web.dealer_actions import Button
from controller.web.dealer_words import (
    DEVICE_HOLD_WORDS,
    fault_words,
    held_words,
    hold_subject,
    plain,
)

NO_ROUND_STATES = frozenset({"idle", "settled", "voided", "unknown"})
"""States with no round in progress (``unknown``: the service does not answer)."""


def game_rules(game: Any) -> GameRules | None:
    """The rule set a status names, or None for a game this process does not know."""
    try:
        return get_game(str(game))
    except (TablectlError, KeyError, ValueError):
        return None


def held_kind(status: Mapping[str, Any]) -> str | None:
    """The irregularity a hold is for, as the table names it (``no_read``), or None."""
    held = str(status.get("held_for") or "").split("(")[0].strip()
    return held or None


def cards_due(status: Mapping[str, Any]) -> dict[str, Any] | None:
    """Where the next card drawn goes and how many a supervisor's order gives, for the card
    pad of ``supervisor order``: a no-read is one card (the one the reader missed), a
    simultaneous draw the cards drawn together (the table knows how many; the screen does
    not, so ``count`` is None). The box is the first in dealing order with the fewest cards,
    of the boxes with a wager and the dealer (cards are dealt one at a time, round the
    table); None when every hand is complete."""
    hands: Mapping[str, list[Any]] = status.get("hands") or {}
    rules = game_rules(status.get("game"))
    dealer = rules.dealer if rules else "dealer"
    order = [str(p) for p in (rules.positions if rules else ())]
    boxes = {str(w.get("position")) for w in status.get("wagers") or []
             if isinstance(w, Mapping)}
    playing = [p for p in order if p in boxes] + [dealer]
    counts = {p: len(hands.get(p) or []) for p in playing}
    open_ = [p for p in playing if counts[p] < 3]
    if not open_:
        return None
    least = min(counts[p] for p in open_)
    position = next(p for p in open_ if counts[p] == least)
    kind = held_kind(status)
    return {"position": position, "label": "the dealer" if position == dealer
            else f"Box {position}", "count": 1 if kind == "no_read" else None}


def hold_view(shown: Mapping[str, Any], buttons: Sequence[Button],
              dealing: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any] | None:
    """The hold in words, with the buttons that answer it (a supervisor's, from ``waits``);
    an exposed card's hold names the card and its box, a no-read's the box whose card is due
    (issue 36)."""
    state = str(shown.get("state"))
    device = shown.get("device") or {}
    operator = device.get("operator") or {}
    name = str(device.get("name") or "the device")
    answering = [b.to_json() for b in buttons if b.supervisor]
    if shown.get("journal_hold") or state == AWAITING_JOURNAL:
        return {"title": "The journal cannot record", "detail": str(shown.get("journal_hold")
                                                                   or ""),
                "clause": None, "buttons": answering}
    if state == "hold":
        kind = held_kind(shown)
        card, box = hold_subject(kind, dealing) if kind else (None, None)
        due = cards_due(shown)
        if kind == "no_read" and due is not None:
            box = str(due["position"])
        rules = game_rules(shown.get("game"))
        what, clause = held_words(str(shown.get("held_for") or "other"), card=card, box=box,
                                  dealer=rules.dealer if rules else None)
        return {"title": what, "detail": "The round waits for a supervisor's decision.",
                "clause": clause, "buttons": answering, "kind": held_kind(shown),
                "due": cards_due(shown)}
    if operator.get("hold"):
        hold = str(operator["hold"])
        return {"title": f"The {name} is held",
                "detail": f"The {name} {DEVICE_HOLD_WORDS.get(hold, plain(hold))}.",
                "clause": None, "buttons": answering}
    if operator.get("faults"):
        return {"title": f"The {name} reports a fault: {fault_words(operator['faults'])}",
                "detail": "Fix the device; a supervisor confirms it is fixed.",
                "clause": None, "buttons": answering}
    if shown.get("clock_blocks") and state in NO_ROUND_STATES:
        # the [clock] policy refuses new rounds: a supervisor's override is the way out
        # (waits offers supervisor.clock-override), or the clock synchronises by itself
        return {"title": "The clock cannot be trusted",
                "detail": f"New rounds wait for a trusted clock or a supervisor's override "
                          f"({shown['clock_blocks']}).",
                "clause": None, "buttons": answering}
    return None
