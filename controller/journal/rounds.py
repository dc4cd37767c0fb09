"""One summary row per round, for ``tablectl journal rounds`` and ``recall``.

Read from the table's output records (``round_opened`` with its provenance, ``card_assigned``
in deal order, ``burn_card``, ``round_settled``/``round_voided`` with the settlement,
``supervisor_decided``: the overrides and who made them; an ordinary command sent with a
supervisor's or root's rights is not an override).
Records of other shapes that carry a round id (``cards_assigned``, ``card_burned``) are read too,
so excerpts written by other tools still summarise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.journal.codec import OUTPUT_EVENT_TYPES
from controller.journal.reader import iter_newest_first
from controller.journal.record import Record

CARD_EVENTS = frozenset({"card_assigned", "cards_assigned"})
BURN_EVENTS = frozenset({"card_burned", "cards_burned", "burn_card"})
ENDED = frozenset({"round_settled", "round_voided"})
ACCEPTED_EVENTS = frozenset({"wager_accepted", "wagers_accepted"})
"""Records of wagers going on the layout: one wager (``wager.place``) or a batch's
(``wager.place-batch``, one record listing each accepted wager)."""


def accepted_wagers(event_type: str, payload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Each wager a ``wager_accepted`` or ``wagers_accepted`` record put on the layout (its
    ``id``, ``position``, ``bet``, ``amount``, ``player``, ``seated``), so every reader
    expands a batch the same way; none for another record or a malformed one."""
    if event_type == "wager_accepted":
        wager = payload.get("wager")
        return [wager] if isinstance(wager, Mapping) else []
    if event_type == "wagers_accepted":
        wagers = payload.get("wagers")
        return [w for w in wagers if isinstance(w, Mapping)] if isinstance(wagers, list) else []
    return []


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
    results: list[dict[str, Any]] = field(default_factory=list)
    overrides: list[dict[str, Any]] = field(default_factory=list)
    provenance: dict[str, Any] | None = None
    recovered: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ended(self) -> bool:
        return self.settled or self.void is not None

    @property
    def outcome(self) -> str:
        if self.void is not None:
            return f"void ({self.void['reason']}; {self.void['clause']})"
        if self.settled:
            net = sum(int(r.get("net", 0)) for r in self.results)
            return f"settled: {len(self.results)} wager(s), player net {net:+d}"
        return "open"

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round_id, "first_seq": self.first_seq, "last_seq": self.last_seq,
            "first_ts": self.first_ts, "last_ts": self.last_ts, "game": self.game,
            "events": self.events, "cards": self.cards, "burns": self.burns,
            "void": self.void, "settled": self.settled, "outcome": self.outcome,
            "results": self.results, "overrides": self.overrides,
            "provenance": self.provenance, "recovered": self.recovered,
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
            summary.results = _results(payload)
        elif record.event_type == "round_settled":
            summary.settled = True
            summary.results = _results(payload)
        elif record.event_type == "round_opened":
            summary.provenance = payload.get("provenance")
        elif record.event_type == "supervisor_decided":
            summary.overrides.append({"seq": record.seq, "actor": payload.get("actor"),
                                      "action": payload.get("action"),
                                      "clause": payload.get("clause"),
                                      "reason": payload.get("reason")})
        elif record.event_type == "recovery_completed":
            summary.recovered.append({"seq": record.seq, "decision": payload.get("decision"),
                                      "clause": payload.get("clause")})
    return list(rounds.values())


def _results(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    settlement = payload.get("settlement")
    if not isinstance(settlement, Mapping):
        return []
    return [{"wager": r.get("wager_id"), "outcome": r.get("outcome"), "net": r.get("net"),
             "rule": r.get("rule")} for r in settlement.get("results", [])
            if isinstance(r, Mapping)]


def round_outputs(directory: str | Path, round_number: int) -> list[Record]:
    """The output records (round events) of journal round ``round_number``, in chain order:
    read from the journal's end, newest first, only lines that name the round, stopping at its
    ``round_opened`` (its first output), so a recent round costs a few reads, not the journal.
    Empty: no such round in the journal (never played, or gone with retention)."""
    found: list[Record] = []
    # the reader quotes each word it looks for: this one becomes the record's own
    # "round":"N" (its round id), so only the round's lines are parsed
    for record in iter_newest_first(directory, only=OUTPUT_EVENT_TYPES,
                                    mentioning=(f'round":"{round_number}',)):
        if record.round_id != str(round_number):
            continue
        found.append(record)
        if record.event_type == "round_opened":
            break
    found.reverse()
    return found


def round_timeline(records: Iterable[Record], round_id: str) -> list[Record]:
    """Every record of one round, in chain order: inputs, outputs, recovery."""
    return [record for record in records if record.round_id == round_id]


def recall(records: Iterable[Record], count: int = 10) -> list[RoundSummary]:
    """The last ``count`` games that ended (settled or voided), oldest first."""
    return [row for row in summarise_rounds(records) if row.ended][-count:]
