"""What a shift left in the journal, checked against what the screen showed.

After the shift, from the journal alone (every line's own hash checked as it is read):

* every wager the table accepted (and every Play wager it placed for a box that plays,
  RWS-3CP 3.8) and nobody withdrew is settled or returned **exactly once**
  (a ``round_settled`` or ``round_voided`` result), and nothing else is;
* every supervisor action is journaled under the supervisor's name (``super1``, a supervisor,
  through the web process's account), in the order the supervisor tapped them, and none under
  the dealer's; the dealer's commands are the dealer's, in the dealer's role; nobody else (no
  shell, no script) commanded the table;
* the money on the screen is the journal's: each wager's result as shown (``paid 5.00``,
  ``taken 30.00``, ``returned 25.00``, ``push: 5.00 stays``) is what its journaled result says,
  on its journaled amount, and the shift's net on the screen equals the journal's.

Pure over its inputs: the records, and the results the screen showed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testbed.shift.screen import ShownResult, money, shown_net
from testbed.shift.table import DEALER, SUPERVISOR, ShiftError
from controller.journal.reader import iter_records
from controller.journal.record import Record
from controller.journal.rounds import ACCEPTED_EVENTS, accepted_wagers

DEALER_ACTOR = f"dealer:{DEALER} [operator via tablectl web]"
SUPERVISOR_ACTOR = f"supervisor:{SUPERVISOR} [supervisor via tablectl web]"
SUPERVISOR_INPUTS = {"supervisor.continue": ("SupervisorDecision", "continue"),
                     "supervisor.clear-fault": ("ClearDeviceFault", None),
                     "supervisor.void": ("SupervisorDecision", "void"),
                     "supervisor.clock-override": ("OverrideClock", None),
                     "supervisor.swap": ("SupervisorDecision", "reconstruct"),
                     "supervisor.reconstruct": ("SupervisorDecision", "reconstruct"),
                     "supervisor.order": ("SupervisorDecision", "order")}
"""A supervisor's button -> the journaled command (its type, and its ``action``). The swap is a
reconstruction by moves; ``supervisor.answer:FACT`` is :func:`supervisor_input`'s."""
SUPERVISOR_TYPES = frozenset(kind for kind, _ in SUPERVISOR_INPUTS.values())
ENDS = ("round_settled", "round_voided")


def supervisor_input(tap: str) -> tuple[str, str | None]:
    """The journaled command of a supervisor's button: ``supervisor.answer:FACT`` (the hold's
    question answered) is the decision named by the fact, any other from
    :data:`SUPERVISOR_INPUTS`."""
    verb, _, answer = tap.partition(":")
    if verb == "supervisor.answer":
        return "SupervisorDecision", answer
    return SUPERVISOR_INPUTS[verb]


@dataclass(frozen=True, slots=True)
class Audit:
    """The shift's figures as the journal has them."""

    rounds_settled: int
    rounds_voided: int
    wagers: int
    results: int
    supervisor_actions: int
    dealer_commands: int
    holds: tuple[str, ...]
    """Each ``supervisor_required`` kind, in order (``exposed_card``, ``jammed``)."""
    void_clauses: tuple[str, ...]
    journal_net: int
    screen_net: int


def chips_moved(result: Mapping[str, Any], amount: int) -> str:
    """What the screen must say a journaled result did with the chips."""
    outcome, net = result["outcome"], int(result["net"])
    if outcome == "win":
        return f"paid {money(net)}"
    if outcome == "lose":
        return f"taken {money(-net)}"
    if outcome == "returned":
        return f"returned {money(amount)}"
    return f"push: {money(amount)} stays"


def audit(journal: Path, shown: Sequence[ShownResult], supervisor_taps: Sequence[str]
          ) -> Audit:
    """Check the journal; :class:`ShiftError` lists every problem found."""
    return audit_records(list(iter_records([journal])), shown, supervisor_taps)


def audit_records(records: Iterable[Record], shown: Sequence[ShownResult],
                  supervisor_taps: Sequence[str]) -> Audit:
    problems: list[str] = []
    amounts: dict[str, int] = {}
    withdrawn: set[str] = set()
    settled: Counter[str] = Counter()
    results: dict[str, Mapping[str, Any]] = {}
    ends: Counter[str] = Counter()
    holds: list[str] = []
    void_clauses: list[str] = []
    supervisor: list[tuple[str, str | None]] = []
    dealer_commands = 0
    for record in records:
        payload = record.payload
        kind = record.event_type
        if kind in ACCEPTED_EVENTS:
            for wager in accepted_wagers(kind, payload):
                amounts[str(wager["id"])] = int(wager["amount"])
        elif kind == "decision_made":  # a box that plays: the table places its Play wagers
            for wager in payload.get("play_wagers") or ():
                amounts[str(wager["id"])] = int(wager["amount"])
        elif kind == "wager_withdrawn":
            withdrawn.add(str(payload["wager_id"]))
        elif kind in ENDS:
            ends[kind] += 1
            if kind == "round_voided":
                void_clauses.append(str(payload["clause"]))
            for result in payload["settlement"]["results"]:
                settled[str(result["wager_id"])] += 1
                results[str(result["wager_id"])] = result
        elif kind == "settlement_corrected":
            problems.append(f"seq {record.seq}: a settlement was corrected")
        elif kind == "supervisor_required":
            holds.append(str(payload["kind"]))
        elif kind in ("supervisor_decided", "device_fault_clear_ordered"):
            if not str(payload.get("actor")).startswith(f"{SUPERVISOR} [supervisor via"):
                problems.append(f"seq {record.seq}: {kind} by {payload.get('actor')!r}")
        elif kind == "input_command":
            dealer_commands += _check_command(record, supervisor, problems)
    in_play = set(amounts) - withdrawn
    for wager_id in sorted(in_play | set(settled)):
        if settled[wager_id] != 1:
            problems.append(f"wager {wager_id}: settled or returned {settled[wager_id]} "
                            f"time(s), accepted: {wager_id in amounts}, withdrawn: "
                            f"{wager_id in withdrawn}")
    expected = [supervisor_input(verb) for verb in supervisor_taps]
    if supervisor != expected:
        problems.append(f"supervisor actions journaled {supervisor}, tapped {expected}")
    journal_net = sum(int(r["net"]) for r in results.values())
    screen_net = _check_screen(shown, results, amounts, problems)
    if screen_net != journal_net:
        problems.append(f"net on the screen {money(screen_net)}, in the journal "
                        f"{money(journal_net)}")
    if problems:
        raise ShiftError("the journal does not match the shift:\n  " + "\n  ".join(problems))
    return Audit(ends["round_settled"], ends["round_voided"], len(in_play), sum(settled.values()),
                 len(supervisor), dealer_commands, tuple(holds), tuple(void_clauses),
                 journal_net, screen_net)


def _check_command(record: Record, supervisor: list[tuple[str, str | None]],
                   problems: list[str]) -> int:
    """One journaled command: a supervisor's under the supervisor's name, a dealer's in the
    dealer's role, and nobody else's. 1 for a dealer's command."""
    fields = record.payload["fields"]
    kind, role, actor = record.payload["type"], fields.get("role"), str(record.actor)
    if role == "supervisor":
        if not actor.startswith(SUPERVISOR_ACTOR + " (uid ") or DEALER in actor:
            problems.append(f"seq {record.seq}: supervisor's {kind} journaled as {actor!r}")
        supervisor.append((kind, fields.get("action")))
        return 0
    if kind in SUPERVISOR_TYPES:
        problems.append(f"seq {record.seq}: a supervisor's {kind} sent in the dealer's role "
                        f"by {actor!r}")
    if not actor.startswith(DEALER_ACTOR + " (uid ") or role != "dealer":
        problems.append(f"seq {record.seq}: {kind} by {actor!r} in role {role!r}: only the "
                        "dealer and the supervisor at the screen command the table")
    return 1


def _check_screen(shown: Sequence[ShownResult], results: Mapping[str, Mapping[str, Any]],
                  amounts: Mapping[str, int], problems: list[str]) -> int:
    """Each result the screen showed is the journal's; the screen's net."""
    net = 0
    seen: set[str] = set()
    for item in shown:
        result = results.get(item.wager_id)
        if result is None or item.wager_id not in amounts:
            problems.append(f"round {item.round}: the screen shows {item.wager_id} "
                            f"({item.text}), the journal has no result for it")
            continue
        want = chips_moved(result, amounts[item.wager_id])
        if item.text != want or item.amount_text != money(amounts[item.wager_id]):
            problems.append(f"round {item.round}: {item.wager_id} shown {item.amount_text} "
                            f"{item.text!r}, journaled {money(amounts[item.wager_id])} {want!r}")
        net += shown_net(item.text)
        seen.add(item.wager_id)
    missing = sorted(set(results) - seen)
    if missing:
        problems.append(f"results never shown on the screen: {', '.join(missing)}")
    return net
