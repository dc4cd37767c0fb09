"""The console's round filters, turned into one parameterised SQL query over the index.

Paged by key (rounds older than the last one shown), not by OFFSET, so the hundredth page of a
million-record journal costs what the first does. Every value is a bound parameter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.errors import CardError
from controller.games.cards import Suit, parse_card
from controller.service.protocol import MAX_MINOR_UNITS
from controller.web.index import JournalIndex

PAGE_SIZE = 50
_TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?)?$")
OUTCOMES = ("open", "settled", "voided")
_RANK_ONLY = {"A": "A", "T": "T", "10": "T", "J": "J", "Q": "Q", "K": "K",
              **{str(n): str(n) for n in range(2, 10)}}
"""A rank alone (``T`` or ``10``): a card of that rank in any suit."""


def card_codes(text: str) -> tuple[str, ...]:
    """The canonical codes a card search means, in the README's notation: ``10D``, ``Q♦``,
    ``qd``, ``10h`` are one card; a rank alone (``T``, ``10``, ``q``) is the four of that rank.

    Raises :class:`CardError` naming the text for a card that cannot exist (``1X``, ``11H``):
    the one parser of the project (:func:`controller.games.cards.parse_card`) decides."""
    rank = _RANK_ONLY.get(text.strip().upper())
    if rank is not None:
        return tuple(rank + suit.value for suit in Suit)
    return (parse_card(text).code,)



@dataclass(frozen=True, slots=True)
class RoundFilter:
    """What surveillance asked for; empty fields do not filter."""

    since: str = ""
    until: str = ""
    table: str = ""
    game: str = ""
    voided: bool = False
    irregular: bool = False
    clause: str = ""
    actor: str = ""
    box: str = ""
    """A box (position) in play in the round: a wager, a hand or a decision there."""
    card: str = ""
    """The canonical code (``TD``), or a rank alone (``T``: any suit); checked by
    :func:`card_codes` when read from a query."""
    result: str = ""
    amount_over: int | None = None
    before: int | None = None
    """Show rounds that began before this seq (the next page)."""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> tuple[RoundFilter, list[str]]:
        """The filter from a URL's query, and a one-line complaint per value it ignored."""
        problems: list[str] = []

        def text(name: str) -> str:
            return query.get(name, "").strip()[:200]

        def number(name: str) -> int | None:
            value = text(name)
            if not value:
                return None
            # ASCII digits only ("²".isdigit() is true, int() refuses it) and no larger than the
            # journal's largest amount (SQLite's integers end at 2**63; 1e26 was an HTTP 500).
            if not (value.isascii() and value.isdigit()) or int(value) > MAX_MINOR_UNITS:
                problems.append(f"{name}: not a whole number of minor units up to "
                                f"{MAX_MINOR_UNITS}: {value[:40]!r}")
                return None
            return int(value)

        def moment(name: str) -> str:
            value = text(name)
            if value and not _TIME_RE.match(value):
                problems.append(f"{name}: not a UTC time like 2026-11-23T18:00: {value!r}")
                return ""
            return value.replace(" ", "T")

        def card(name: str) -> str:
            value = text(name)
            if not value:
                return ""
            try:
                found = card_codes(value)
            except CardError as error:
                problems.append(f"{name}: {error}")
                return ""
            return found[0] if len(found) == 1 else found[0][0]

        return cls(since=moment("since"), until=moment("until"), table=text("table"),
                   game=text("game"),
                   voided=query.get("voided") == "1", irregular=query.get("irregular") == "1",
                   clause=text("clause"), actor=text("actor"), box=text("box"),
                   card=card("card"), result=text("result"),
                   amount_over=number("amount_over"), before=number("before")), problems

    def query_string(self, **override: Any) -> dict[str, str]:
        """The filter as URL query values (for the next page's link and the export)."""
        values = {"since": self.since, "until": self.until, "table": self.table,
                  "game": self.game,
                  "voided": "1" if self.voided else "", "irregular": "1" if self.irregular else "",
                  "clause": self.clause, "actor": self.actor, "box": self.box,
                  "card": self.card,
                  "result": self.result,
                  "amount_over": "" if self.amount_over is None else str(self.amount_over)}
        values.update({k: str(v) for k, v in override.items()})
        return {k: v for k, v in values.items() if v}


def search_rounds(index: JournalIndex, wanted: RoundFilter, limit: int = PAGE_SIZE, *,
                  hide_cards_of: str | None = None
                  ) -> tuple[list[dict[str, Any]], int | None]:
    """One page of rounds, newest first, and the ``before`` of the next page (None: last).

    ``hide_cards_of``: a round a card search never finds, whatever its cards (the round whose
    face-down hand the viewer may not see yet: finding it by a card would tell the card)."""
    where: list[str] = []
    args: list[Any] = []
    if wanted.card and hide_cards_of is not None:
        where.append("id != ?")
        args.append(hide_cards_of)
    # Times and sequence numbers rise together (but for a clock step): the span becomes a seq
    # range found on the time index, then the time is checked on each row (unary + keeps the
    # planner on the seq order, so a wide span is not sorted).
    if wanted.since:
        where += ["first_seq >= (SELECT coalesce(min(first_seq), 0) FROM rounds "
                  "WHERE first_ts >= ?)", "+first_ts >= ?"]
        args += [wanted.since, wanted.since]
    if wanted.until:
        until = wanted.until + "\uffff"
        where += ["first_seq <= (SELECT coalesce(max(first_seq), -1) FROM rounds "
                  "WHERE first_ts <= ?)", "+first_ts <= ?"]
        args += [until, until]
    if wanted.table:
        where.append("table_id = ?")
        args.append(wanted.table)
    if wanted.game:
        where.append("game = ?")
        args.append(wanted.game)
    if wanted.voided:
        where.append("outcome = 'voided'")
    if wanted.irregular:
        where.append("irregular = 1")
    if wanted.amount_over is not None:
        where.append("max_amount > ?")
        args.append(wanted.amount_over)
    if wanted.before is not None:
        where.append("first_seq < ?")
        args.append(wanted.before)
    # Clauses: a substring ("5.1.4"; few rounds have one). Actors and players: a prefix, on
    # the terms' primary key (a substring would scan every name of every round).
    if wanted.clause:
        where.append("id IN (SELECT round FROM terms WHERE kind = 'clause' AND term LIKE ? "
                     "ESCAPE '\\')")
        args.append("%" + _like(wanted.clause) + "%")
    if wanted.actor:
        where.append("id IN (SELECT round FROM terms WHERE kind = 'actor' AND term >= ? AND "
                     "term < ?)")
        args += [wanted.actor, wanted.actor + "\U0010ffff"]
    if wanted.card:  # one card (``TD``), or a rank alone (``T``): its four cards
        codes = [wanted.card] if len(wanted.card) == 2 else \
            [wanted.card + suit.value for suit in Suit]
        where.append("id IN (SELECT round FROM terms WHERE kind = 'card' AND term IN ("
                     + ",".join("?" * len(codes)) + "))")
        args += codes
    for kind, value in (("box", wanted.box), ("result", wanted.result)):
        if value:
            where.append("id IN (SELECT round FROM terms WHERE kind = ? AND term = ?)")
            args += [kind, value]
    sql = "SELECT * FROM rounds" + (" WHERE " + " AND ".join(where) if where else "") \
        + " ORDER BY first_seq DESC LIMIT ?"
    rows = [dict(row) for row in index.query(sql, (*args, limit + 1))]
    return rows[:limit], (rows[limit - 1]["first_seq"] if len(rows) > limit else None)


def _like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def recall(index: JournalIndex, count: int = 10) -> list[dict[str, Any]]:
    """The last ``count`` games that ended (AGCO 13.1 game recall), newest first."""
    return [dict(row) for row in index.query(
        "SELECT * FROM rounds WHERE outcome != 'open' ORDER BY last_seq DESC LIMIT ?",
        (count,))]


def overrides(index: JournalIndex, limit: int = 200) -> list[dict[str, Any]]:
    """Supervisor decisions (``supervisor_decided``), newest first."""
    return [dict(row) for row in index.query(
        "SELECT * FROM overrides ORDER BY seq DESC LIMIT ?", (limit,))]


def games(index: JournalIndex) -> list[str]:
    return index.games
