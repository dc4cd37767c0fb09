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

The same rule governs the journal's records wherever they leave the journal files: the floor
feed, the web console's round pages, exports and card search (:class:`Horizon`). A record that
shows a face-down card is not shown in any form, nor is anything after it in the chain, until
the round's reveal or end is in the journal.

Why withhold rather than redact a record: every hash after a record depends on that record. A
record with its card blanked out but its hash shown (or the next record's ``prev``) can be
brute-forced back to the card: 52 candidates times the little uncertainty in its timestamps. So
a record that shows a face-down card is not released, in any form, until the round's reveal
(``dealer_revealed``) or end (settled, voided, a new round) is in the journal; the records after
it wait with it, so nothing released depends on the hidden card.

A record "shows" a card when any string anywhere in its payload is a card code of the round's
face-down position (``card_assigned``/``hand_complete`` of the dealer tell which cards those
are). A device input that carries cards not yet assigned to a position (the shuffler's set just
dispensed, before the table has placed it) waits until the table has placed every one of its
cards: the dealer's set then holds, a player's set goes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from controller.games.catalog import GAMES
from controller.games.rules import GameRules
from controller.journal.record import Record

REVEALED_STATES = frozenset({"revealed", "settled"})
"""Round states in which the dealer's hand is face up on the layout."""
_CARD_EVENTS = frozenset({"CardAssigned", "HandComplete"})


def hidden_position(rules: GameRules) -> str | None:
    """The position whose cards are face down until the reveal (``None``: all face up)."""
    return None if rules.dealt_face_up else rules.dealer


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


# -- journal records: what may leave the journal files now ------------------------------

_CARD = re.compile(r"^(?:[2-9TJQKA]|10)[SHDC]$")
REVEAL_EVENTS = frozenset({"dealer_revealed", "round_settled", "round_voided"})
"""After one of these in its round, no card of the round is face down any more."""
_PLACING_EVENTS = frozenset({"card_assigned", "hand_complete"})


def card_codes(value: Any) -> Iterator[str]:
    """Every string in ``value`` (nested) that is a card code."""
    if isinstance(value, str):
        if _CARD.match(value):
            yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from card_codes(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from card_codes(item)


def ends_round(record: Record, round_id: str) -> bool:
    """After ``record`` no card of ``round_id`` is face down: the round's reveal or end, or a
    record of a later round (rounds are sequential)."""
    if record.round_id == round_id:
        return record.event_type in REVEAL_EVENTS
    return record.round_id is not None


def _placed(record: Record) -> tuple[str | None, set[str]]:
    if record.event_type not in _PLACING_EVENTS:
        return None, set()
    position = record.payload.get("position")
    return (position if isinstance(position, str) else None), set(card_codes(record.payload))


class Horizon:
    """Remembers which game each round is dealt under (from ``round_opened``), so that the
    decision for a record needs only the records read after the cursor."""

    def __init__(self) -> None:
        self._games: dict[str, str] = {}
        self._ended: dict[str, None] = {}
        """Rounds whose end the feed found in the journal beyond its read-ahead
        (:mod:`controller.feed.lookahead`): none of their cards is face down any more."""

    def mark_ended(self, round_id: str) -> None:
        self._ended[round_id] = None
        if len(self._ended) > 64:
            self._ended.pop(next(iter(self._ended)))

    def note(self, record: Record) -> None:
        """Learn from a record that is leaving (or was found already sent at start-up)."""
        if record.event_type == "round_opened" and record.round_id is not None:
            game = record.payload.get("game")
            if isinstance(game, str):
                self._games[record.round_id] = game
                if len(self._games) > 64:  # rounds are sequential: keep the recent ones
                    self._games.pop(next(iter(self._games)))

    def _hidden_position(self, round_id: str, pending: Sequence[Record]) -> str | None:
        game = self._games.get(round_id)
        if game is None:
            game = next((r.payload.get("game") for r in pending
                         if r.round_id == round_id and r.event_type == "round_opened"), None)
        rules = GAMES.get(game) if isinstance(game, str) else None
        if rules is None:
            # A round whose game we do not know: treat the dealer of every game as face down.
            return "dealer"
        return hidden_position(rules)

    def releasable(self, pending: Sequence[Record]) -> int:
        """How many records from the start of ``pending`` (the journal after the cursor, in
        order) may be published now."""
        for index, record in enumerate(pending):
            if not self._may_go(index, record, pending):
                return index
            self.note(record)
        return len(pending)

    def _may_go(self, index: int, record: Record, pending: Sequence[Record]) -> bool:
        round_id = record.round_id
        if round_id is None or round_id in self._ended:
            return True
        cards = set(card_codes(record.payload))
        if not cards or record.event_type in REVEAL_EVENTS:
            return True
        position = self._hidden_position(round_id, pending)
        if position is None:
            return True
        hidden: set[str] = set()
        placed: set[str] = set()
        for later in pending[index:]:
            if ends_round(later, round_id):
                return True
            if later.round_id != round_id:
                continue
            where, those = _placed(later)
            placed |= those
            if where == position:
                hidden |= those
        if cards & hidden:
            return False
        # Cards the table has not placed yet could be the face-down hand: wait until it has.
        return cards <= placed
