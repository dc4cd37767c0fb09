"""The rounds as the table's ``watch`` stream tells them, kept for the game servers to read.

One thread reads ``watch`` on the control socket and files each round event under its round
(the journal's round number, as events carry it). A game server reads a round's events from a
cursor (``after``), so a reconnect resumes where it stopped and misses nothing; a burn card is
passed on without its face (it is never shown to anyone), and a settlement is cut to the
reader's own wagers (least privilege: one game server never sees another's members)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

KEEP_ROUNDS = 4
"""Rounds kept in memory (a settled one holds every wager's result, 2,000 in a studio round);
an older one is in the journal (``tablectl journal``)."""
CARD_EVENTS = frozenset({"CardAssigned", "HandComplete"})
PASSED_AS_IS = frozenset({"RoundOpened", "ShuffleConfirmed", "DealComplete"}) | CARD_EVENTS
ENDINGS = frozenset({"RoundSettled", "RoundVoided"})


def wager_id(client: str, own_id: str) -> str:
    """The table's wager id for a game server's own id: two game servers never collide."""
    return f"{client}/{own_id}"


@dataclass
class RoundView:
    number: int
    state: str = "betting"
    events: list[dict[str, Any]] = field(default_factory=list)
    ended: bool = False


class RoundBook:
    """Round events by round, with a condition readers wait on (long polling)."""

    def __init__(self, on_event: Callable[[dict[str, Any]], None] = lambda event: None) -> None:
        self._rounds: OrderedDict[int, RoundView] = OrderedDict()
        self._changed = threading.Condition()
        self._on_event = on_event

    def add(self, event: dict[str, Any]) -> None:
        """File one watched event (the watch thread calls this)."""
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
                view.events.append(public)
            view.state = _state_after(view.state, kind)
            view.ended = view.ended or kind in ENDINGS
            self._changed.notify_all()
        self._on_event(event)

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
                if len(view.events) > after or view.ended:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            chosen = view.events[after:]
            state = view.state
        return state, [_for_client(event, client) for event in chosen]


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
