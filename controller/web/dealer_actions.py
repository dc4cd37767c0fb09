"""The buttons of the dealer's screen, read from what ``round.status`` ``waits`` offers.

The table says what gets each wait out as the literal ``tablectl ...`` command that works
(``tablectl round close``, ``tablectl supervisor answer in_device``, alternatives joined by
``|``). A button is that command as the control-socket verb and arguments the web process sends
(``POST /dealer/command``), with its label in a dealer's words. Nothing is offered that
``waits`` does not offer, so the screen never shows a button the table would refuse in that
state; text that is not a command (``automatic with a shuffler``) gives no button.

Pure: strings in, frozen values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Need(str, Enum):
    """What a button asks for before it is sent (a touch prompt), named as the verb's arg."""

    REASON = "reason"
    CARDS = "cards"
    POSITIONS = "positions"
    HANDS = "hands"
    """A reconstruction: the boxes' hands from the cards seen this round (RWS-NC3P 5.9,
    5.5.4); with none the table refuses any box left short of three cards."""


@dataclass(frozen=True, slots=True)
class Button:
    """One command the screen can send: ``verb`` and ``args`` as the control socket takes
    them, ``needs`` what the person must add first, ``supervisor`` when only a supervisor
    logged in at the table may send it."""

    label: str
    verb: str
    args: Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[Need, ...] = ()
    supervisor: bool = False

    @property
    def key(self) -> tuple[str, tuple[tuple[str, Any], ...]]:
        return self.verb, tuple(sorted((k, str(v)) for k, v in self.args.items()))

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "verb": self.verb, "args": dict(self.args),
                "needs": [need.value for need in self.needs], "supervisor": self.supervisor}


ANSWER_WORDS: Mapping[str, str] = {
    "in_device": "Card seen in the shuffler or shoe",
    "by_dealer": "Card exposed by the dealer",
    "interrupts": "The jam stops the round",
    "not_reconstructable": "The hands cannot be reconstructed",
}
_SIMPLE: Mapping[tuple[str, ...], tuple[str, str]] = {
    ("round", "open"): ("round.open", "Open the round"),
    ("round", "close"): ("round.close", "No more bets"),
    ("round", "shuffled"): ("round.shuffled", "Shuffle done"),
    ("round", "reveal"): ("round.reveal", "Reveal the dealer's hand"),
    ("round", "settle"): ("round.settle", "Settle the round"),
    ("options", "close"): ("options.close", "Close the options"),
    ("deck", "replace"): ("deck.replace", "A fresh deck is in"),
    ("supervisor", "continue"): ("supervisor.continue", "Continue the round"),
    ("supervisor", "clear-fault"): ("supervisor.clear-fault", "The device is fixed"),
}
_WITH_REASON: Mapping[tuple[str, ...], tuple[str, str]] = {
    ("supervisor", "void"): ("supervisor.void", "Void the round"),
    ("supervisor", "clock-override"): ("supervisor.clock-override",
                                       "Open rounds on this clock"),
    ("journal", "acknowledge"): ("journal.acknowledge", "Acknowledge the journal damage"),
}
_GROUPS = frozenset({"round", "options", "deck", "supervisor", "journal", "decide", "option",
                     "wager", "report"})
_SUPERVISOR_VERBS = re.compile(r"^(supervisor\.|journal\.)")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*$")
"""A word in capitals in a way out: what the person fills in (``POS``, ``REASON``, ``CARD``)."""
_PAREN = re.compile(r"\([^()]*\)")


def commands_in(way_out: str) -> list[list[str]]:
    """The ``tablectl`` commands a ``way_out`` text names, as word lists without ``tablectl``:
    ``"tablectl supervisor continue | void (as the ruling allows)"`` gives
    ``[["supervisor", "continue"], ["supervisor", "void"]]``. An alternative that does not
    start with a command group takes the previous one's (``continue | void``)."""
    text = way_out
    while _PAREN.search(text):
        text = _PAREN.sub("", text)
    found: list[list[str]] = []
    for clause in re.split(r";|,? or |, then ", text):
        words = clause.split()
        if "tablectl" not in words:
            continue
        group: str | None = None
        for alternative in re.split(r"\s\|\s", " ".join(words[words.index("tablectl") + 1:])):
            parts = alternative.replace("tablectl ", " ").split()
            if not parts:
                continue
            if parts[0] in _GROUPS:
                group = parts[0]
            elif group is not None and group not in ("decide", "option"):
                parts = [group, *parts]
            else:
                continue
            found.append(parts)
    return found


def button_for(words: Sequence[str], role: str) -> Button | None:
    """The button for one command, or None for what is not a table-wide button (a box's
    ``decide``/``option`` are the box's own buttons; a placeholder the screen cannot fill)."""
    head = tuple(words[:2])
    supervisor = role == "supervisor"
    rest = list(words[2:])
    if head in _SIMPLE:
        verb, label = _SIMPLE[head]
        return Button(label, verb, supervisor=supervisor or bool(_SUPERVISOR_VERBS.match(verb)))
    if head in _WITH_REASON:
        verb, label = _WITH_REASON[head]
        return Button(label, verb, needs=(Need.REASON,), supervisor=True)
    if head == ("deck", "counted") and rest and rest[0].isdigit():
        return Button(f"Deck counted: {rest[0]} cards", "deck.counted",
                      {"count": int(rest[0])}, supervisor=supervisor)
    if head == ("supervisor", "answer") and rest and not PLACEHOLDER.match(rest[0]):
        answer = rest[0]
        return Button(ANSWER_WORDS.get(answer, answer.replace("_", " ").capitalize()),
                      "supervisor.answer", {"answer": answer}, supervisor=True)
    if head == ("supervisor", "reconstruct"):
        return Button("Reconstruct the hands", "supervisor.reconstruct", needs=(Need.HANDS,),
                      supervisor=True)
    if head == ("supervisor", "order"):
        return Button("Set the order of the cards", "supervisor.order", needs=(Need.CARDS,),
                      supervisor=True)
    if head == ("supervisor", "swap"):
        return Button("Swap two boxes' hands", "supervisor.swap", needs=(Need.POSITIONS,),
                      supervisor=True)
    return None


def buttons_for(waits: Iterable[Mapping[str, Any]]) -> list[Button]:
    """Every button the waits offer, in their order, each once."""
    seen: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()
    out: list[Button] = []
    for wait in waits:
        for words in commands_in(str(wait.get("way_out") or "")):
            button = button_for(words, str(wait.get("role") or "dealer"))
            if button is not None and button.key not in seen:
                seen.add(button.key)
                out.append(button)
    return out


def box_choices(waits: Iterable[Mapping[str, Any]], group: str) -> dict[str, tuple[str, ...]]:
    """The choices each box's own buttons may send for ``group`` (``decide``: play, fold;
    ``option``: continue, withdraw), as the waits offer them: per box (``tablectl decide 3
    play``) or for any box due (``tablectl decide POS play|fold``, keyed ``"*"``)."""
    found: dict[str, list[str]] = {}
    for wait in waits:
        for words in commands_in(str(wait.get("way_out") or "")):
            if words[0] != group or len(words) < 3:
                continue
            position = "*" if PLACEHOLDER.match(words[1]) else words[1]
            for choice in words[2].split("|"):
                if choice and not PLACEHOLDER.match(choice) and \
                        choice not in found.setdefault(position, []):
                    found[position].append(choice)
    return {position: tuple(choices) for position, choices in found.items()}
