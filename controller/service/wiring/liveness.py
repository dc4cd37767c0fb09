"""What the table waits for, and the ``tablectl`` command that gets it out: for ``round.status``
and the status line, for every round state and every device-operator state.

No state is a dead end: each round state has a way out here, and a supervisor can void any
round in progress (``tablectl supervisor void``). The device side's ways out come from the
operator (:meth:`controller.service.operator.DeviceMachine.way_out`).

A way out is offered only when the table would accept it now, and it is the literal command
that works, one command per :class:`Wait`: ``tablectl decide 3 play``, ``tablectl supervisor
answer in_device``. Words in capitals are what only the person knows and types (``REASON``, the
``CARD`` s in the order they were drawn, ``FROM:TO`` moves). A wait nobody acts on (the shuffler
forming a hand) says what happens instead, not a command. :func:`offered_to` then keeps the
commands a peer's role may send and, for the others, says whose they are: a dealer's status
never tells them to send a supervisor's verb, and surveillance is offered none.

Why here and not in the table: the table refuses what it will not do, with the clause; what a
person should type next is a question of the service's verbs and roles. What the table accepts
in a hold (:attr:`Snapshot.hold_options`) comes from the table itself, so the two cannot
disagree.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.roles import Role
from controller.service.protocol import AWAITING_JOURNAL
from controller.table.commands import IrregularityKind as Kind
from controller.table.commands import Source
from controller.table.states import IN_ROUND
from controller.table.states import RoundState as S

COMMAND = "tablectl "
"""Every way out that is a command starts so; anything else is what happens without one."""
DEALER, SUPERVISOR, NOBODY = "dealer", "supervisor", ""
DEALER_DRAWS = "dealer_draws"
"""The operator's state on a shoe table: the dealer draws, the service sends nothing."""


@dataclass(frozen=True, slots=True)
class Wait:
    waits_for: str
    way_out: str
    """A literal ``tablectl ...`` command, or what happens without one."""
    role: str
    """Who sends it: ``dealer``, ``supervisor``, or ``""`` when nobody needs to."""

    def to_json(self) -> dict[str, str]:
        return {"waits_for": self.waits_for, "way_out": self.way_out, "role": self.role}


VOID = "tablectl supervisor void REASON"
SWAP = "tablectl supervisor swap POS POS"
"""A reconstruction by moving two complete hands (``supervisor.swap``), for hands dealt to
the wrong boxes."""
ANY_TIME = Wait("(any time)", VOID, SUPERVISOR)
HOLD_COMMANDS: Mapping[str, str] = {
    "continue": "tablectl supervisor continue",
    "reconstruct": "tablectl supervisor reconstruct",
    "order": "tablectl supervisor order CARD CARD CARD",
    "in_device": "tablectl supervisor answer in_device",
    "by_dealer": "tablectl supervisor answer by_dealer",
    "interrupts": "tablectl supervisor answer interrupts",
    "not_reconstructable": "tablectl supervisor answer not_reconstructable",
}
"""A held ruling's options as the commands that send them (``void`` is :data:`ANY_TIME`)."""
WHOSE: Mapping[str, str] = {SUPERVISOR: "call a supervisor", DEALER: "the dealer acts"}
"""What a peer who may not send a way out is told instead (the dealer's screen shows it)."""
_MAY_SEND: Mapping[str, frozenset[Role]] = {
    DEALER: frozenset({Role.DEALER, Role.SUPERVISOR, Role.ROOT}),
    SUPERVISOR: frozenset({Role.SUPERVISOR, Role.ROOT}),
}


def _one(waits_for: str, way_out: str, role: str) -> list[Wait]:
    return [Wait(waits_for, way_out, role)]


def _deck(snapshot: Mapping[str, Any]) -> list[Wait]:
    waits_for = f"a replaced or counted deck ({snapshot['deck_blocked']})"
    return [Wait(waits_for, "tablectl deck replace", DEALER),
            Wait(waits_for, "tablectl deck counted 52", DEALER)]


def _no_round(snapshot: Mapping[str, Any], state: S) -> list[Wait]:
    if snapshot.get("deck_blocked"):
        return _deck(snapshot)
    if snapshot.get("open_refused"):  # software.verify = "required" and not verified
        return _one(f"verified software ({snapshot['open_refused']})",
                    "none at the table: install the signed release, then restart tablectl",
                    NOBODY)
    if snapshot.get("clock_blocks"):
        return _one(f"a trusted clock, or a supervisor's override ({snapshot['clock_blocks']})",
                    "tablectl supervisor clock-override --reason REASON", SUPERVISOR)
    return _one("a new round" if state is S.IDLE else "the next round", "tablectl round open",
                DEALER)


def _hold(snapshot: Mapping[str, Any], operator: Mapping[str, Any]) -> list[Wait]:
    held = snapshot.get("held_for")
    waits_for = f"a supervisor's decision on {held}" if held else "a supervisor's decision"
    deck_lost = bool(operator.get("deck_lost"))
    wrong_box = str(held or "").split("(")[0].strip() == Kind.DEALT_INCORRECTLY.value
    out = []
    for option in snapshot.get("hold_options") or ():
        if option == "continue" and deck_lost:
            continue  # the deck is gone: continuing would wait for cards that never come
        if option in HOLD_COMMANDS:
            out.append(Wait(waits_for, HOLD_COMMANDS[option], SUPERVISOR))
        if option == "reconstruct" and wrong_box:
            # hands dealt to the wrong boxes: moving two complete hands is the reconstruction
            # (RWS-NC3P 5.5.4, MBS-3P 5.3, MBS-R3P 5.4, RWS-3CP 5.1.4)
            out.append(Wait(waits_for, SWAP, SUPERVISOR))
    if not out:  # void is the way out (ANY_TIME): say what it is decided on
        out.append(Wait(waits_for, VOID, SUPERVISOR))
    return out


def _options(snapshot: Mapping[str, Any]) -> list[Wait]:
    """Each player still to answer, by box and name (RWS-NC3P 5.7, MBS-R3P 5.13.1: the options
    are each player's), and the dealer's close; the deadline after which they continue."""
    pending = list(snapshot.get("options_pending") or ())
    players = list(snapshot.get("options_pending_players") or ()) or [
        {"position": box, "player": None} for box in pending]
    out: list[Wait] = []
    for each in players:
        box, player = str(each.get("position")), each.get("player")
        whose = f"box {box}" + (f", {player}" if player else "")
        named = f" --player {shlex.quote(str(player))}" if player else ""
        out += [Wait(f"the option of {whose}", f"tablectl option {box} {choice}{named}", DEALER)
                for choice in ("continue", "withdraw")]
    deadline = snapshot.get("options_deadline_s")
    later = f" (players who do not answer continue after {deadline} s)" if deadline else ""
    out.append(Wait((f"the options of {' '.join(pending)}" if pending
                     else "the players' options") + later, "tablectl options close", DEALER))
    return out


def _decisions(snapshot: Mapping[str, Any]) -> list[Wait]:
    due = list(snapshot.get("decisions_due") or ())
    return [Wait(f"the decision of box {box}", f"tablectl decide {box} {choice}", DEALER)
            for box in due for choice in ("play", "fold")]


def _dealing(state: S, shoe: bool) -> list[Wait]:
    if state is S.BURN:
        return _one("the burn cards", "the dealer draws from the shoe", DEALER)
    what = "the first card" if state is S.SHUFFLED else "the rest of the deal"
    if shoe:
        return _one(what, "the dealer draws from the shoe", DEALER)
    return _one(what, "automatic: the shuffler forms each hand, the dealer lifts it", NOBODY)


@dataclass(frozen=True, slots=True)
class Report:
    """An irregularity only the dealer sees, offered as ``tablectl report KIND``: in which
    round states, and whether the dealer names the box (``--position POS``)."""

    kind: Kind
    states: frozenset[S]
    box: bool
    source: Source | None = None
    """``--source dealer`` where the clause turns on who exposed the card (RWS-NC3P 5.7 vs
    5.10): the dealer reports what the dealer did."""

    def way_out(self, dealt: bool) -> str:
        words = [f"{COMMAND}report {self.kind.value}"]
        if self.box and dealt:
            words.append("--position POS")
        if self.source is not None:
            words.append(f"--source {self.source.value}")
        return " ".join(words)


REPORT_WAIT = "an irregularity only the dealer sees"
"""What a dealer's report waits for: not the round (it goes on without one)."""
_DEALT = frozenset({S.DEALING, S.OPTIONS, S.DECISIONS, S.DEALT})
"""Cards are on the boxes and the round goes on: a card can be dropped, or be in the wrong box."""
REPORTS: tuple[Report, ...] = (
    Report(Kind.EXPOSED_CARD, frozenset({S.BETTING, S.CLOSED, S.SHUFFLED, S.BURN}) | _DEALT,
           box=True, source=Source.DEALER),
    Report(Kind.DROPPED_CARD, _DEALT, box=True),
    Report(Kind.BURN_ERROR, frozenset({S.BURN}), box=False),
    Report(Kind.CARD_AFTER_GAME, frozenset({S.DECISIONS, S.DEALT, S.REVEALED}), box=False),
    Report(Kind.DEALT_INCORRECTLY, _DEALT, box=True),
)
"""The dealer's reports (issue 36), each where the table rules it and it means something: an
exposure from "Place your bets" until the reveal (after it every hand is face up: nothing to
rule); a dropped card or a wrong box once cards are on the boxes; a burn error while the
round burns (LIVE-3P T&C 1: only the studio's shoe burns, and the status does not say after
the burn whether the round burned); a card after the game once the deal is complete (LIVE-3P
T&C 3 ignores it; elsewhere the general provision). The table refuses every report while a
round is held (a supervisor decides that first), so none is offered then. The box is asked
once a card has reached one; the table rules each by the game's clause
(:mod:`controller.table.irregularities`). None while a shuffler deals on its own (the round
moves by itself: the dealer reports at the next step) or the device is offline before "No more
bets": the round's own step stays the first command a dealer is offered."""


def dealer_reports(snapshot: Mapping[str, Any], operator: Mapping[str, Any]) -> list[Wait]:
    """The reports the dealer may send now, one command per kind, in :data:`REPORTS` order."""
    if snapshot.get("journal_hold") or snapshot["state"] == AWAITING_JOURNAL:
        return []
    state = S(snapshot["state"])
    shoe = operator.get("state") == DEALER_DRAWS
    if state in (S.CLOSED, S.SHUFFLED, S.BURN, S.DEALING) and not shoe:
        return []  # the shuffler deals on its own: no step of the dealer's to report beside
    if state is S.BETTING and snapshot.get("offline"):
        return []
    hands: Mapping[str, Any] = snapshot.get("hands") or {}
    dealt = any(cards for cards in hands.values())
    return [Wait(REPORT_WAIT, report.way_out(dealt), DEALER)
            for report in REPORTS if state in report.states]


def round_waits(snapshot: Mapping[str, Any], operator: Mapping[str, Any] | None = None
                ) -> list[Wait]:
    """The round's waits, each with one command the table accepts now (or what happens)."""
    operator = operator or {}
    if snapshot.get("journal_hold"):
        return _one(f"a supervisor to acknowledge the journal damage found at start "
                    f"({snapshot['journal_hold']})", "tablectl journal acknowledge REASON",
                    SUPERVISOR)
    if snapshot["state"] == AWAITING_JOURNAL:
        return _one("the journal to record the round's outcome",
                    "automatic once the journal can write (free space on its disk)", NOBODY)
    state = S(snapshot["state"])
    shoe = operator.get("state") == DEALER_DRAWS
    if state in (S.IDLE, S.SETTLED, S.VOIDED):
        return _no_round(snapshot, state)
    if state is S.BETTING:
        if snapshot.get("offline"):
            return _one("the device back online before No more bets",
                        "reconnect the device (No more bets waits for it)", NOBODY)
        return _one("wagers, then No more bets", "tablectl round close", DEALER)
    if state is S.CLOSED:
        if snapshot.get("deck_blocked"):
            return _deck(snapshot)
        if shoe:
            return _one("the shuffle", "tablectl round shuffled", DEALER)
        return _one("the shuffle", "automatic: the shuffler shuffles", NOBODY)
    if state in (S.SHUFFLED, S.BURN, S.DEALING):
        return _dealing(state, shoe)
    if state is S.HOLD:
        return _hold(snapshot, operator)
    if state is S.OPTIONS:
        return _options(snapshot)
    if state is S.DECISIONS:
        return _decisions(snapshot)
    if state is S.DEALT:
        return _one("the reveal", "tablectl round reveal", DEALER)
    return _one("settlement", "tablectl round settle", DEALER)  # S.REVEALED


def waits(snapshot: Mapping[str, Any], operator: Mapping[str, Any] | None) -> list[dict[str, str]]:
    """The round's waits, then the device's when it needs someone, then the dealer's reports;
    in a round, a supervisor's void is always a way out. For a peer who may send every verb
    (root, the service)."""
    out = [wait.to_json() for wait in round_waits(snapshot, operator)]
    if snapshot.get("journal_hold"):
        return out  # every other command is refused until a supervisor acknowledges it
    state = snapshot["state"]
    in_round = state != AWAITING_JOURNAL and S(state) in IN_ROUND
    if operator and operator.get("role") and operator.get("waits_for") != "the table" \
            and operator.get("state") != DEALER_DRAWS:
        waits_for = str(operator["waits_for"])
        for way_out in str(operator["way_out"]).split(" | "):
            if way_out == VOID and not in_round:
                continue  # no round to void
            same = next((w for w in out if w["way_out"] == way_out), None)
            if same is None:
                out.append({"waits_for": waits_for, "way_out": way_out,
                            "role": str(operator["role"])})
            elif way_out == VOID:  # one void, with both reasons for it
                same["waits_for"] += f"; {waits_for}"
    out += [wait.to_json() for wait in dealer_reports(snapshot, operator or {})]
    if in_round and not any(w["way_out"] == VOID for w in out):
        out.append(ANY_TIME.to_json())
    return out


def may_send(role: Role, wait_role: str) -> bool:
    """Whether a peer of ``role`` may send a way out meant for ``wait_role``."""
    return role in _MAY_SEND.get(wait_role, frozenset())


def offered_to(waits_: list[dict[str, str]], role: Role) -> list[dict[str, str]]:
    """The waits as ``role`` sees them: a command it may not send is replaced by whose it is
    (the wait itself stays: a dealer should know a supervisor is needed)."""
    shown = []
    for wait in waits_:
        if wait["way_out"].startswith(COMMAND) and not may_send(role, wait["role"]):
            wait = {**wait, "way_out": WHOSE.get(wait["role"], f"the {wait['role']} acts")}
        shown.append(wait)
    return shown
