"""One summary row per round, read generically from records that carry a round id.

PROVISIONAL: the table machine's round events are still being written, so this reads only the
shapes documented in ``docs/journal.md`` (``card_assigned``/``cards_assigned``, ``card_burned``,
``round_voided``, ``round_settled``) and ignores what it does not know. It will be replaced by a
summary built from the table's own event types, which is also where ``show``/``recall`` belong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.journal.record import Record

CARD_EVENTS = frozenset({"card_assigned", "cards_assigned"})
BURN_EVENTS = frozenset({"card_burned", "cards_burned", "burn_card"})


@dataclass(slots=True)
class RoundSummary:
    """What the journal says about one round, in record order."""

    round_id: str
    first_seq: int
    first_ts: str
    last_seq: int = 0
    last_ts: str = ""
    game: str | None = None
    events: list[str] = field(default_factory=list)
    cards: dict[str, list[str]] = field(default_factory=dict)
    burns: list[str] = field(default_factory=list)
    void: dict[str, Any] | None = None
    settled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round_id, "first_seq": self.first_seq, "last_seq": self.last_seq,
            "first_ts": self.first_ts, "last_ts": self.last_ts, "game": self.game,
            "events": self.events, "cards": self.cards, "burns": self.burns,
            "void": self.void, "settled": self.settled,
        }


def _card_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _add_cards(summary: RoundSummary, payload: Mapping[str, Any]) -> None:
    position = payload.get("position")
    if isinstance(position, str):
        cards = _card_list(payload.get("card")) + _card_list(payload.get("cards"))
        summary.cards.setdefault(position, []).extend(cards)
        return
    by_position = payload.get("cards")
    if isinstance(by_position, Mapping):
        for name, cards in by_position.items():
            summary.cards.setdefault(str(name), []).extend(_card_list(cards))


def summarise_rounds(records: Iterable[Record]) -> list[RoundSummary]:
    """Rows in order of each round's first record."""
    rounds: dict[str, RoundSummary] = {}
    for record in records:
        if record.round_id is None:
            continue
        summary = rounds.get(record.round_id)
        if summary is None:
            summary = rounds[record.round_id] = RoundSummary(record.round_id, record.seq,
                                                             record.ts)
        summary.last_seq, summary.last_ts = record.seq, record.ts
        if record.event_type not in summary.events:
            summary.events.append(record.event_type)
        payload = record.payload
        if summary.game is None and isinstance(payload.get("game"), str):
            summary.game = payload["game"]
        if record.event_type in CARD_EVENTS:
            _add_cards(summary, payload)
        elif record.event_type in BURN_EVENTS:
            summary.burns.extend(_card_list(payload.get("card")) +
                                 _card_list(payload.get("cards")))
        elif record.event_type == "round_voided":
            summary.void = {"reason": payload.get("reason"), "clause": payload.get("clause"),
                            "seq": record.seq}
        elif record.event_type == "round_settled":
            summary.settled = True
    return list(rounds.values())
