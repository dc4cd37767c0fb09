"""The rounds as the table's ``watch`` stream tells them, kept for the game servers to read.

One thread reads ``watch`` on the control socket and files each round event under its round
(the journal's round number, as events carry it). A game server reads a round's events from a
cursor (``after``), so a reconnect resumes where it stopped and misses nothing; a burn card is
passed on without its face (it is never shown to anyone), and a settlement is cut to the
reader's own wagers (least privilege: one game server never sees another's members)."""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.studio.errors import StudioRefusal

KEEP_ROUNDS = 4
"""Rounds kept in memory (a settled one holds every wager's result, 2,000 in a studio round);
an older one is read back from the table's journal when asked for (``round.events``,
:meth:`controller.studio.gateway.Gateway.events`)."""
CARD_EVENTS = frozenset({"CardAssigned", "HandComplete"})
PASSED_AS_IS = frozenset({"RoundOpened", "ShuffleConfirmed", "DealComplete"}) | CARD_EVENTS
ENDINGS = frozenset({"RoundSettled", "RoundVoided"})


def wager_id(client: str, own_id: str) -> str:
    """The table's wager id for a game server's own id: two game servers never collide."""
    return f"{client}/{own_id}"


@dataclass(frozen=True, slots=True)
class EncodedEvent:
    """An event of a round as its JSON text, ready for the answer (the server splices it in:
    ``controller.studio.server.encode_answer``)."""

    text: bytes


@dataclass(frozen=True, slots=True)
class OwnedResults:
    """A settlement's results as the watch line carried them, when every one is ``owner``'s:
    the one game server at a studio table (its normal case). Its share is then the whole
    list, and its answer is this text with the wager ids' ``<owner>/`` cut, made without
    decoding and encoding 2,000 results again (issue 28)."""

    owner: str
    text: bytes


@dataclass
class RoundView:
    number: int
    state: str = "betting"
    events: list[dict[str, Any]] = field(default_factory=list)
    ended: bool = False
    owned: dict[int, OwnedResults] = field(default_factory=dict)
    """By index in ``events``: an ending's results as received, when they are one owner's."""


class RoundBook:
    """Round events by round, with a condition readers wait on (long polling)."""

    def __init__(self, on_event: Callable[[dict[str, Any]], None] = lambda event: None) -> None:
        self._rounds: OrderedDict[int, RoundView] = OrderedDict()
        self._changed = threading.Condition()
        self._on_event = on_event

    def add(self, event: dict[str, Any], line: bytes | None = None) -> None:
        """File one watched event (the watch thread calls this); ``line``: the watch line it
        was decoded from, whose text of a settlement's results is kept when they are all one
        game server's (:class:`OwnedResults`)."""
        number = event.get("round")
        kind = event.get("type")
        if not isinstance(number, int) or not isinstance(kind, str):
            return
        with self._changed:
            view = self._rounds.get(number)
            if view is None:
                view = self._rounds[number] = RoundView(number)
                while len(self._rounds) > KEEP_ROUNDS:
                    self._rounds.popitem(last=False)
            public = _public(event)
            if public is not None:
                owned = _owned_results(public, line) if kind in ENDINGS and line else None
                if owned is not None:
                    view.owned[len(view.events)] = owned
                view.events.append(public)
            view.state = _state_after(view.state, kind)
            view.ended = view.ended or kind in ENDINGS
            self._changed.notify_all()
        self._on_event(event)

    @staticmethod
    def is_public(event: dict[str, Any]) -> bool:
        """Whether :meth:`add` keeps ``event`` among a round's events (a wager's own record
        is not: each batch has its own answer)."""
        return isinstance(event.get("type"), str) and _public(event) is not None

    def ensure(self, number: int, state: str = "betting") -> None:
        """A round just opened (or taken up after a restart, in ``state``): readers may ask
        for it before its next event arrives."""
        with self._changed:
            if number not in self._rounds:
                self._rounds[number] = RoundView(number, state)
                while len(self._rounds) > KEEP_ROUNDS:
                    self._rounds.popitem(last=False)

    def view(self, number: int) -> RoundView | None:
        with self._changed:
            return self._rounds.get(number)

    def read(self, number: int, client: str, after: int, wait: float
             ) -> tuple[str, list[dict[str, Any]]] | None:
        """The round's state and its events after cursor ``after`` (waiting up to ``wait``
        seconds for one), settlements cut to ``client``'s wagers; None: no such round kept."""
        deadline = time.monotonic() + wait
        with self._changed:
            while True:
                view = self._rounds.get(number)
                if view is None:
                    return None
                if after > len(view.events):  # a cursor this book never gave
                    raise StudioRefusal(409, "stale_cursor", (
                        f"round {number}: cursor {after} is past its {len(view.events)} "
                        "event(s) here (the gateway restarted and rebuilt the round); read "
                        "again from after=0"))
                if len(view.events) > after or view.ended:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            chosen = view.events[after:]
            owned = [view.owned.get(index) for index in range(after, len(view.events))]
            state = view.state
        return state, [_encoded_for(event, mine) if mine is not None and mine.owner == client
                       else _for_client(event, client)
                       for event, mine in zip(chosen, owned, strict=True)]


def _state_after(state: str, kind: str) -> str:
    return {"RoundOpened": "betting", "BetsClosed": "closed", "BurnCard": "dealing",
            "CardAssigned": "dealing", "DealComplete": "dealt", "RoundSettled": "settled",
            "RoundVoided": "voided"}.get(kind, state)


def _public(event: dict[str, Any]) -> dict[str, Any] | None:
    kind = event["type"]
    if kind in PASSED_AS_IS:
        return dict(event)
    if kind == "BetsClosed":
        return {"type": kind, "round": event["round"], "wagers": len(event.get("wagers", ()))}
    if kind == "BurnCard":  # burned face down: its face is nobody's business
        return {"type": kind, "round": event["round"], "index": event.get("index")}
    if kind == "RoundSettled":
        return {"type": kind, "round": event["round"], "hands": event.get("hands"),
                "results": event["settlement"]["results"]}
    if kind == "RoundVoided":
        return {"type": kind, "round": event["round"], "reason": event.get("reason"),
                "clause": event.get("clause"), "results": event["settlement"]["results"]}
    if kind in ("WagerAccepted", "WagersAccepted", "WagerRefused", "CommandRefused",
                "WagerWithdrawn"):
        return None  # each batch has its own answers; other game servers' wagers are not theirs
    return {"type": kind, "round": event["round"]}  # an irregularity: that it happened


def _for_client(event: dict[str, Any], client: str) -> dict[str, Any]:
    if "results" not in event:
        return event
    prefix = wager_id(client, "")
    own = [{**result, "wager_id": result["wager_id"][len(prefix):]}
           for result in event["results"] if str(result.get("wager_id", "")).startswith(prefix)]
    return {**event, "results": own}


RESULTS_KEY = b',"results":['
RESULTS_END = b']}}}'
"""A watch line of an ending closes with its results: ``...,"results":[...]}}}`` (the
settlement's last key, the event's last, the line's object): the service sends the journal's
canonical text, keys sorted (docs/service.md)."""


def _id_key(client: str) -> bytes:
    """The text that begins each of ``client``'s results' wager ids in canonical JSON."""
    return b'"wager_id":"' + json.dumps(wager_id(client, ""), ensure_ascii=False)[1:-1].encode()


def _owned_results(public: dict[str, Any], line: bytes) -> OwnedResults | None:
    """The results' text in ``line`` when every result is one game server's, else ``None``
    (the general path then cuts each reader's share). Checked, not assumed: each decoded
    result's id names the owner, and the text holds exactly as many of the owner's ids as
    there are results, so the text cut is these results and nothing else."""
    results = public.get("results")
    if not isinstance(results, list) or not results:
        return None
    owners = set()
    for result in results:
        identifier = result.get("wager_id") if isinstance(result, dict) else None
        if not isinstance(identifier, str) or "/" not in identifier:
            return None
        owners.add(identifier.split("/", 1)[0])
        if len(owners) > 1:
            return None
    owner = owners.pop()
    start = line.rfind(RESULTS_KEY)
    if start < 0 or not line.endswith(RESULTS_END):
        return None
    text = line[start + len(RESULTS_KEY) - 1:len(line) - len(RESULTS_END) + 1]
    if text.count(_id_key(owner)) != len(results):
        return None
    return OwnedResults(owner, text)


def _encoded_for(event: dict[str, Any], owned: OwnedResults) -> EncodedEvent:
    """``_for_client(event, owned.owner)`` as JSON, from the results' text as received: the
    same bytes the answer's encoder makes of it (the public event's keys in order, results
    last; each result's keys as the line had them)."""
    rest = {key: value for key, value in event.items() if key != "results"}
    try:
        head = json.dumps(rest, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate: escaped, as the answer's encoder does
        head = json.dumps(rest, separators=(",", ":")).encode()
    results = owned.text.replace(_id_key(owned.owner), b'"wager_id":"')
    return EncodedEvent(head[:-1] + b',"results":' + results + b"}")
