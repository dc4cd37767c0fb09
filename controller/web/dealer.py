"""What the dealer's touch screen shows, from a ``round.status`` answer and the round's events
so far: pure, so it is tested alone.

The screen runs the round: the state in a dealer's words and the one thing to do next ("Deal
box 3", "Ask box 1: play or fold"), each box with its players' wagers (seated and standing),
folded and removed boxes marked, each wager's result as the chips move (``paid 5.00``, ``taken
25.00``, ``returned 25.00``), the buttons ``waits`` offers, a hold in words with the buttons
that answer it, and what placing a wager needs (the game's bets, the table's limits, the chip
denominations of ``web.chips``).

The web process reads the status with the surveillance role, which sees the dealer's
face-down hand; this module hides it before the reveal with the service's own rule
(:mod:`controller.service.visibility`), whatever role the viewer has: the screen is on the
table, in the players' sight.

What ``round.status`` does not carry (a box's play or fold, an option taken, a hand removed,
the results) comes from the ``watch`` events: :class:`RoundNotes` folds them in, one event at
a time, for the round they belong to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from controller.games.rules import GameRules
from controller.service.protocol import AWAITING_JOURNAL
from controller.service.visibility import REVEALED_STATES, redact_status
from controller.table.procedure import LIVE_BURN_CARDS
from controller.web.dealer_actions import box_choices, buttons_for
from controller.web.dealer_hold import NO_ROUND_STATES, game_rules, hold_view
from controller.web.dealer_reports import report_view
from controller.web.dealer_words import bet_words, fault_words, held_words, plain, result_words

STATE_WORDS: Mapping[str, str] = {
    "idle": "No round", "betting": "Place your bets", "closed": "No more bets",
    "shuffled": "Shuffled", "burn": "Burning", "dealing": "Dealing", "hold": "HOLD",
    "options": "Players' options", "decisions": "Players decide", "dealt": "Dealt",
    "revealed": "Revealed", "settled": "Settled", "voided": "Round void",
    AWAITING_JOURNAL: "HOLD: the journal",
}
DEFAULT_CHIPS: tuple[int, ...] = (100, 500, 2500, 10000, 50000)
"""Chip denominations in minor units (1, 5, 25, 100, 500) unless ``web.chips`` says others."""
DECISION_BETS = frozenset({"play"})
"""Bets the table places itself from a decision (RWS-3CP 3.8: playing puts a Play wager equal
to the Ante), never by the dealer's chips."""
DECK_STATES = frozenset({"shuffled", "burn", "dealing", "options", "decisions", "dealt",
                         "revealed", "hold"})
"""States with a shuffled deck in play: only then is the shuffler's "cards left" a count of
this round's deck (between rounds it is 0 or the last round's remainder, which misleads)."""


@dataclass(frozen=True, slots=True)
class RoundNotes:
    """What the round's events said that its status does not: each box's play or fold
    (RWS-3CP 3.8), options taken per wager (RWS-NC3P 5.7), hands removed with their clause,
    and the settlement's results. One round's worth; a new round starts it afresh."""

    round: Any = None
    decisions: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    removed: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    results: tuple[Mapping[str, Any], ...] = ()
    void_clause: str | None = None
    dealing: tuple[Mapping[str, Any], ...] = ()
    """The round's ``CardAssigned`` and ``DealingError`` events as received (redacted for
    this screen): what a hold's words name the exposed card and its box from."""

    def noted(self, event: Mapping[str, Any]) -> RoundNotes:
        """These notes with one ``watch`` event folded in (an event of another round starts
        the notes of that round)."""
        if "round" not in event:  # a DeviceStatus line: the device's, no round's
            return self
        notes = self if event.get("round") == self.round else RoundNotes(event.get("round"))
        kind = event.get("type")
        if kind == "DecisionMade":
            return replace(notes, decisions=MappingProxyType(
                {**notes.decisions, str(event.get("position")): str(event.get("choice"))}))
        if kind == "PlayerOptionTaken":
            taken = {str(w): str(event.get("option")) for w in event.get("wager_ids") or []}
            return replace(notes, options=MappingProxyType({**notes.options, **taken}))
        if kind in ("CardAssigned", "DealingError"):
            return replace(notes, dealing=(*notes.dealing, dict(event)))
        if kind == "HandRemoved":
            return replace(notes, removed=MappingProxyType(
                {**notes.removed, str(event.get("position")): str(event.get("clause"))}))
        if kind in ("RoundSettled", "RoundVoided"):
            settlement = event.get("settlement")
            results = settlement.get("results") if isinstance(settlement, dict) else None
            return replace(notes, results=tuple(r for r in results or []
                                                if isinstance(r, dict)),
                           void_clause=str(event.get("clause")) if kind == "RoundVoided"
                           else None)
        return notes


def next_step(status: Mapping[str, Any]) -> str:
    """The one thing to do next, in the words a dealer uses."""
    state = str(status.get("state"))
    device = status.get("device") or {}
    shuffler = device.get("kind") == "shuffler"
    hands: Mapping[str, list[Any]] = status.get("hands") or {}
    if status.get("journal_hold") or state == AWAITING_JOURNAL:
        return "Call a supervisor: the journal cannot record (dealing held)"
    if status.get("deck_blocked"):
        return "Replace the deck, or count it by hand"
    if state == "hold":
        what, _clause = held_words(str(status.get("held_for") or "other"))
        return f"Call a supervisor: {what[0].lower()}{what[1:]}"
    operator = device.get("operator") or {}
    name = str(device.get("name") or "the device")
    if operator.get("hold"):
        return f"Call a supervisor: the {name} is held"
    if operator.get("faults"):
        return f"Call a supervisor: {name} fault ({fault_words(operator['faults'])})"
    if status.get("clock_blocks") and state in NO_ROUND_STATES:
        return "Call a supervisor: the clock stops new rounds"
    if state in ("idle", "settled", "voided"):
        return "Open the next round: Place your bets"
    if state == "betting":
        return "Take bets, then call No more bets"
    if state == "closed":
        return "Wait for the shuffle" if shuffler else "Shuffle, then confirm the shuffle"
    if state == "burn":
        burned = len(hands.get("burn", []) or [])
        return f"Burn {max(1, LIVE_BURN_CARDS - burned)} card(s)"
    if state in ("shuffled", "dealing"):
        box = _next_box(status)
        return f"Deal box {box}" if box else "Deal the dealer's hand"
    if state == "options":
        return "Ask box " + ", ".join(_option_positions(status)) + ": continue or withdraw"
    if state == "decisions":
        return "Ask box " + ", ".join(status.get("decisions_due") or []) + ": play or fold"
    if state == "dealt":
        return "Reveal the dealer's hand"
    if state == "revealed":
        return "Settle the round"
    return f"Round state {plain(state)}"


def _next_box(status: Mapping[str, Any]) -> str | None:
    """The first box with a wager whose hand is not complete."""
    hands: Mapping[str, list[Any]] = status.get("hands") or {}
    for wager in status.get("wagers") or []:
        position = str(wager.get("position"))
        if len(hands.get(position) or []) < 3:
            return position
    return None


def _option_key(entry: Any) -> tuple[str, str | None]:
    """An ``options_pending`` entry: a position, ``"POS:PLAYER"``, or ``{position, player}``
    (a table that asks each player at a box)."""
    if isinstance(entry, Mapping):
        player = entry.get("player")
        return str(entry.get("position")), None if player is None else str(player)
    position, _sep, player = str(entry).partition(":")
    return position, player or None


def _option_positions(status: Mapping[str, Any]) -> list[str]:
    return list(dict.fromkeys(_option_key(e)[0] for e in status.get("options_pending") or []))


def _boxes(shown: Mapping[str, Any], rules: GameRules | None, notes: RoundNotes,
           layout_boxes: Sequence[str], waits: Sequence[Mapping[str, Any]]
           ) -> list[dict[str, Any]]:
    """Each box of the cloth: its hand, its players' wagers with their results, marks."""
    state = str(shown.get("state"))
    hands: Mapping[str, list[Any]] = shown.get("hands") or {}
    wagers = [w for w in shown.get("wagers") or [] if isinstance(w, Mapping)]
    same_round = notes.round == shown.get("round")
    results = {str(r.get("wager_id")): r for r in notes.results} if same_round else {}
    decisions = notes.decisions if same_round else {}
    removed = notes.removed if same_round else {}
    options = notes.options if same_round else {}
    due = {str(p) for p in shown.get("decisions_due") or []}
    decide = box_choices(waits, "decide")
    option = box_choices(waits, "option")
    pending = [_option_key(e) for e in shown.get("options_pending") or []]
    dealer = rules.dealer if rules else "dealer"
    positions = list(layout_boxes) or list(rules.positions if rules else ())
    for position in [*(str(w.get("position")) for w in wagers), *hands]:
        if position not in positions and position not in (dealer, "burn"):
            positions.append(position)
    boxes = []
    for position in positions:
        own = [w for w in wagers if str(w.get("position")) == position]
        players: dict[str, dict[str, Any]] = {}
        for wager in own:
            player = wager.get("player")
            key = "" if player is None else str(player)
            entry = players.setdefault(key, {
                "player": player, "seated": wager.get("seated"),
                "option_due": any(p == position and (q is None or q == player)
                                  for p, q in pending),
                "wagers": []})
            entry["wagers"].append(_wager(wager, rules, results.get(str(wager.get("id"))),
                                          options.get(str(wager.get("id")))))
        fold = decisions.get(position) == "fold" or any(
            any(c.get("label") == "fold" for c in r.get("components") or [])
            for w in own for r in [results.get(str(w.get("id")), {})])
        boxes.append({
            "position": position, "label": f"Box {position}",
            "cards": list(hands.get(position) or []),
            "players": list(players.values()),
            "decision": "fold" if fold else decisions.get(position),
            "folded": fold,
            "removed": removed.get(position),
            "decision_due": position in due and state == "decisions",
            "option_due": any(p == position for p, _q in pending) and state == "options",
            "choices": {"decide": list(decide.get(position, decide.get("*", ())))
                        if position in due and state == "decisions" else [],
                        "option": list(option.get(position, option.get("*", ())))
                        if state == "options" and any(p == position for p, _q in pending)
                        else []},
            "empty": not own and not hands.get(position),
        })
    return boxes


def _wager(wager: Mapping[str, Any], rules: GameRules | None, result: Mapping[str, Any] | None,
           option: str | None) -> dict[str, Any]:
    bet = str(wager.get("bet"))
    spec = rules.bets.get(bet) if rules else None
    amount = int(wager.get("amount") or 0)
    shown: dict[str, Any] = {"id": wager.get("id"), "bet": bet,
                             "bet_words": bet_words(bet, spec.title if spec else None),
                             "amount": amount, "option": option, "result": None}
    if result is not None:
        outcome = str(result.get("outcome"))
        net = int(result.get("net") or 0)
        words, moved = result_words(outcome, net, amount)
        shown["result"] = {"outcome": outcome, "net": net, "words": words, "moved": moved,
                           "rule": result.get("rule")}
    return shown


def _bets(rules: GameRules | None, limits: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The bets the dealer places with chips, each with the table's limits where it has one."""
    if rules is None:
        return []
    out = []
    for bet, spec in rules.bets.items():
        if bet in DECISION_BETS:
            continue
        limit = limits.get(bet) if isinstance(limits.get(bet), Mapping) else None
        out.append({"bet": bet, "words": bet_words(bet, spec.title), "requires": spec.requires,
                    "min": limit.get("min") if limit else None,
                    "max": limit.get("max") if limit else None})
    return out


def offline_view(problem: str | None, chips: Sequence[int] = DEFAULT_CHIPS) -> dict[str, Any]:
    """The screen when the table service does not answer: nothing to press but a wait."""
    return {"online": False, "problem": problem or "no table status yet", "state": "unknown",
            "words": "Table service not reachable",
            "next": "Call a supervisor: the table service does not answer",
            "round": None, "game": None, "game_title": None, "hold": None, "device": None,
            "boxes": [], "dealer": None, "revealed": False, "actions": [], "void": None,
            "reports": [],
            "betting": False, "bets": [], "chips": list(chips), "wagers": [], "results": [],
            "hands": []}


def dealer_view(status: Mapping[str, Any] | None, *, problem: str | None = None,
                notes: RoundNotes | None = None, chips: Sequence[int] = DEFAULT_CHIPS
                ) -> dict[str, Any]:
    """The JSON the dealer page renders; face-down cards are ``None`` before the reveal."""
    if status is None:
        return offline_view(problem, chips)
    notes = notes or RoundNotes()
    rules = game_rules(status.get("game"))
    shown: dict[str, Any]
    if rules is None:
        shown = {**status, "hands": {}}  # an unknown game: nothing rather than a face-down card
    else:
        shown = redact_status(status, rules)
    state = str(shown.get("state"))
    device = shown.get("device") or {}
    operator = device.get("operator") or {}
    waits = [w for w in shown.get("waits") or [] if isinstance(w, Mapping)]
    anytime = [w for w in waits if w.get("waits_for") == "(any time)"]
    buttons = [b for b in buttons_for(w for w in waits if w not in anytime)
               if not (b.verb == "round.shuffled" and device.get("kind") == "shuffler")]
    hold = hold_view(shown, buttons, notes.dealing)
    void = next((b.to_json() for b in buttons_for(anytime)), None)
    if hold is not None and void is not None and \
            all(b["verb"] != "supervisor.void" for b in hold["buttons"]):
        hold["buttons"].append(void)
    layout = shown.get("layout") if isinstance(shown.get("layout"), Mapping) else {}
    limits = layout.get("limits") if isinstance(layout.get("limits"), Mapping) else {}
    hands: Mapping[str, list[Any]] = shown.get("hands") or {}
    dealer = rules.dealer if rules else "dealer"
    same_round = notes.round == shown.get("round")
    return {
        "online": True, "problem": problem, "round": shown.get("round"),
        "game": shown.get("game"), "game_title": rules.title if rules else None,
        "state": state, "words": STATE_WORDS.get(state, plain(state)),
        "next": next_step(shown), "hold": hold,
        "actions": [b.to_json() for b in buttons if not b.supervisor] if hold is None else [],
        "void": void,
        "reports": report_view(waits, shown, rules,
                               [str(b) for b in layout.get("boxes") or []]),
        "device": {"name": device.get("name"), "kind": device.get("kind"),
                   "online": bool(device.get("online")), "state": operator.get("state"),
                   "error": device.get("last_error"), "faults": list(operator.get("faults") or []),
                   "fault_words": fault_words(list(operator.get("faults") or [])),
                   "cards_left": device.get("cards_left") if state in DECK_STATES else None},
        "boxes": _boxes(shown, rules, notes, [str(b) for b in layout.get("boxes") or []],
                        waits),
        "dealer": {"position": dealer, "cards": list(hands.get(dealer) or [])},
        "burn": list(hands.get("burn") or []),
        "revealed": state in REVEALED_STATES,
        "betting": state == "betting",
        "bets": _bets(rules, limits),
        "chips": list(chips),
        "void_clause": notes.void_clause if same_round else None,
        "hands": [{"position": p, "cards": list(c or [])} for p, c in hands.items()],
        "wagers": [{"position": w.get("position"), "bet": w.get("bet"),
                    "amount": w.get("amount")} for w in shown.get("wagers") or []],
        "results": [{"wager": r.get("wager_id"), "outcome": r.get("outcome"),
                     "net": r.get("net"), "rule": r.get("rule")}
                    for r in (notes.results if same_round else ())],
    }
