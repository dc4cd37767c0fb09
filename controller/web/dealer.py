"""What the dealer's screen shows, from a ``round.status`` answer: pure, so it is tested alone.

The state in a dealer's words and the one thing to do next ("Deal box 3", "Burn 4 cards",
"Call a supervisor: exposed_card, RWS-3CP 5.1.2"), the device and its hold with the verb that
resolves it, and the hands. The web process reads the status with the surveillance role, which
sees the dealer's face-down hand; this module hides it before the reveal with the service's own
rule (:mod:`controller.service.visibility`), whatever role the viewer has: the screen is on the
table, in the players' sight.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.errors import TablectlError
from controller.games.catalog import get_game
from controller.service.visibility import REVEALED_STATES, redact_status

STATE_WORDS: Mapping[str, str] = {
    "idle": "No round", "betting": "Place your bets", "closed": "No more bets",
    "shuffled": "Shuffled", "burn": "Burning", "dealing": "Dealing", "hold": "HOLD",
    "options": "Players' options", "decisions": "Players decide", "dealt": "Dealt",
    "revealed": "Revealed", "settled": "Settled", "voided": "Round void",
    "awaiting_journal": "HOLD: the journal",
}
LIVE_BURNS = 4


def next_step(status: Mapping[str, Any]) -> str:
    """The one thing to do next, in the words a dealer uses."""
    state = str(status.get("state"))
    device = status.get("device") or {}
    shuffler = device.get("kind") == "shuffler"
    hands: Mapping[str, list[Any]] = status.get("hands") or {}
    if status.get("journal_hold") or state == "awaiting_journal":
        return "Call a supervisor: the journal cannot record (dealing held)"
    if status.get("deck_blocked"):
        return f"Replace the deck or count it: {status['deck_blocked']}"
    if state == "hold":
        return f"Call a supervisor: {status.get('held_for') or 'held irregularity'}"
    operator = device.get("operator") or {}
    if operator.get("hold"):
        return f"Call a supervisor: {device.get('name', 'device')} held ({operator['hold']})"
    if operator.get("faults"):
        return f"Call a supervisor: {device.get('name', 'device')} fault " \
               f"({', '.join(map(str, operator['faults']))})"
    if state in ("idle", "settled", "voided"):
        return "Open the next round: Place your bets"
    if state == "betting":
        return "Take bets, then call No more bets"
    if state == "closed":
        return "Wait for the shuffle" if shuffler else "Shuffle, then confirm the shuffle"
    if state == "burn":
        burned = len(hands.get("burn", []) or [])
        return f"Burn {max(1, LIVE_BURNS - burned)} card(s)"
    if state in ("shuffled", "dealing"):
        box = _next_box(status)
        return f"Deal box {box}" if box else "Deal the dealer's hand"
    if state == "options":
        return "Ask box " + ", ".join(status.get("options_pending") or []) \
            + ": continue or withdraw"
    if state == "decisions":
        return "Ask box " + ", ".join(status.get("decisions_due") or []) + ": play or fold"
    if state == "dealt":
        return "Reveal the dealer's hand"
    if state == "revealed":
        return "Settle the round"
    return f"Round state {state}"


def _next_box(status: Mapping[str, Any]) -> str | None:
    """The first box with a wager whose hand is not complete."""
    hands: Mapping[str, list[Any]] = status.get("hands") or {}
    for wager in status.get("wagers") or []:
        position = str(wager.get("position"))
        if len(hands.get(position) or []) < 3:
            return position
    return None


def dealer_view(status: Mapping[str, Any] | None, *, problem: str | None = None
                ) -> dict[str, Any]:
    """The JSON the dealer page renders; face-down cards are ``None`` before the reveal."""
    if status is None:
        return {"online": False, "problem": problem or "no table status yet",
                "state": "unknown", "words": "Table service not reachable",
                "next": "Call a supervisor: the table service does not answer", "hands": [],
                "device": None, "results": [], "round": None, "game": None, "hold": None}
    shown = dict(status)
    try:
        shown = redact_status(status, get_game(str(status.get("game"))))
    except (TablectlError, KeyError, ValueError):
        shown["hands"] = {}  # an unknown game: nothing is shown rather than a face-down card
    state = str(shown.get("state"))
    device = shown.get("device") or {}
    operator = device.get("operator") or {}
    waits = [w for w in shown.get("waits") or [] if w.get("waits_for") != "(any time)"]
    hold = None
    if state == "hold" or operator.get("hold") or operator.get("faults"):
        resolving = [w for w in waits if w.get("role") == "supervisor"] or waits
        hold = {"what": shown.get("held_for") or operator.get("hold")
                or ", ".join(map(str, operator.get("faults") or [])),
                "verb": resolving[0]["way_out"] if resolving else "tablectl supervisor void",
                "role": resolving[0]["role"] if resolving else "supervisor"}
    hands = [{"position": position, "cards": list(cards or [])}
             for position, cards in (shown.get("hands") or {}).items()]
    return {
        "online": True, "problem": problem, "round": shown.get("round"),
        "game": shown.get("game"), "state": state,
        "words": STATE_WORDS.get(state, state), "next": next_step(shown), "hold": hold,
        "device": {"name": device.get("name"), "online": bool(device.get("online")),
                   "state": operator.get("state"), "error": device.get("last_error"),
                   "faults": list(operator.get("faults") or []),
                   "cards_left": device.get("cards_left")},
        "hands": hands, "revealed": state in REVEALED_STATES,
        "wagers": [{"position": w.get("position"), "bet": w.get("bet"),
                    "amount": w.get("amount")} for w in shown.get("wagers") or []],
        "results": shown.get("results") or [],
    }
