"""Which cards a control-socket client may see: a face-down card stays hidden until the reveal.

The dealer's hand is dealt face down in every game but LIVE-3P (RWS-3CP 3.6, RWS-NC3P 3.12,
MBS-3P 3.4, MBS-R3P 3.12) and stays so until the dealer reveals it (RWS-3CP: after every
player has played or folded). Anyone who sees it earlier can tell a player when to fold, so
before the reveal the socket shows it only to the roles of :attr:`Role.sees_face_down`
(surveillance, and root/the service account); a dealer or supervisor client sees the number of
cards dealt (each as ``null``) and nothing of their faces. LIVE-3P deals everything face up
(studio procedure), so nothing is hidden there.

Pure functions over the JSON the socket sends (status answers and round events), so the rule is
in one place for ``round.status`` and ``watch`` alike, and testable without a table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.games.rules import GameId, GameRules

FACE_UP_GAMES = frozenset({GameId.LIVE_3P})
REVEALED_STATES = frozenset({"revealed", "settled"})
"""Round states in which the dealer's hand is face up on the layout."""
_CARD_EVENTS = frozenset({"CardAssigned", "HandComplete"})


def hidden_position(rules: GameRules) -> str | None:
    """The position whose cards are face down until the reveal (``None``: all face up)."""
    return None if rules.id in FACE_UP_GAMES else rules.dealer


def redact_status(status: Mapping[str, Any], rules: GameRules) -> dict[str, Any]:
    """``status`` as a client that may not see face-down cards gets it."""
    shown = dict(status)
    position = hidden_position(rules)
    hands = status.get("hands")
    if position is None or not isinstance(hands, Mapping) or position not in hands \
            or status.get("state") in REVEALED_STATES:
        return shown
    shown["hands"] = {**hands, position: [None] * len(hands[position])}
    return shown


def redact_event(event: Mapping[str, Any], rules: GameRules) -> dict[str, Any] | None:
    """The event as a client that may not see face-down cards gets it, or ``None`` when the
    event shows no face-down card (everyone gets it as it is). A card or hand of the dealer is
    dealt before the reveal by construction; ``DealerRevealed`` is the reveal itself."""
    position = hidden_position(rules)
    if position is None or event.get("type") not in _CARD_EVENTS \
            or event.get("position") != position:
        return None
    shown = dict(event)
    if "card" in shown:
        shown["card"] = None
    if isinstance(shown.get("cards"), list):
        shown["cards"] = [None] * len(shown["cards"])
    return shown
