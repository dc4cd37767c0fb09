"""What the table waits for, and the verb (and role) that gets it out: for ``round.status``
and the status line, for every round state and every device-operator state.

No state is a dead end: each round state has a way out here, and a supervisor can void any
round in progress (``tablectl supervisor void``). The device side's ways out come from the
operator (:meth:`controller.service.operator.DeviceMachine.way_out`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.table.states import RoundState as S


@dataclass(frozen=True, slots=True)
class Wait:
    waits_for: str
    way_out: str
    role: str

    def to_json(self) -> dict[str, str]:
        return {"waits_for": self.waits_for, "way_out": self.way_out, "role": self.role}


VOID = "tablectl supervisor void REASON"
ROUND_WAYS: Mapping[S, Wait] = {
    S.IDLE: Wait("a new round", "tablectl round open", "dealer"),
    S.BETTING: Wait("wagers, then No more bets", "tablectl round close", "dealer"),
    S.CLOSED: Wait("the shuffle", "automatic with a shuffler; tablectl round shuffled with a "
                   "shoe", "dealer"),
    S.SHUFFLED: Wait("the first card", "automatic with a shuffler; the dealer draws from a "
                     "shoe", "dealer"),
    S.BURN: Wait("the burn cards", "the dealer draws", "dealer"),
    S.DEALING: Wait("the rest of the deal", "automatic with a shuffler; the dealer draws from "
                    "a shoe", "dealer"),
    S.HOLD: Wait("a supervisor's decision", "tablectl supervisor continue | void | "
                 "reconstruct | order (as the ruling allows)", "supervisor"),
    S.OPTIONS: Wait("the players' options", "tablectl option POS continue|withdraw, or "
                    "tablectl options close", "dealer"),
    S.DECISIONS: Wait("the players' decisions", "tablectl decide POS play|fold", "dealer"),
    S.DEALT: Wait("the reveal", "tablectl round reveal", "dealer"),
    S.REVEALED: Wait("settlement", "tablectl round settle", "dealer"),
    S.SETTLED: Wait("the next round", "tablectl round open", "dealer"),
    S.VOIDED: Wait("the next round", "tablectl round open", "dealer"),
}


def round_wait(snapshot: Mapping[str, Any]) -> Wait:
    """The round's wait, with the specifics the snapshot knows (the hold, the deck)."""
    state = S(snapshot["state"])
    wait = ROUND_WAYS[state]
    if snapshot.get("deck_blocked") and state in (S.CLOSED, S.BETTING, S.IDLE, S.SETTLED,
                                                  S.VOIDED):
        return Wait(f"a replaced or counted deck ({snapshot['deck_blocked']})",
                    "tablectl deck replace | deck counted 52", "dealer")
    if state is S.HOLD and snapshot.get("held_for"):
        return Wait(f"a supervisor's decision on {snapshot['held_for']}", wait.way_out,
                    wait.role)
    if state is S.OPTIONS and snapshot.get("options_pending"):
        return Wait(f"the options of {' '.join(snapshot['options_pending'])}", wait.way_out,
                    wait.role)
    if state is S.DECISIONS and snapshot.get("decisions_due"):
        return Wait(f"the decisions of {' '.join(snapshot['decisions_due'])}", wait.way_out,
                    wait.role)
    return wait


def journal_wait(snapshot: Mapping[str, Any]) -> Wait | None:
    """While the journal is behind (a full disk: the state is ``awaiting_journal``, not a round
    state) the table takes no input until the outcome is written, so the only way out is the
    journal's own retry; what to do about it is to free the disk."""
    behind = snapshot.get("journal_behind")
    if not behind:
        return None
    return Wait(f"the journal to record {behind} outcome record(s)",
                "automatic: the table retries until the journal's disk takes them (free space "
                "on it)", "supervisor")


def waits(snapshot: Mapping[str, Any], operator: Mapping[str, Any] | None) -> list[dict[str, str]]:
    """The round's wait, then the device's when it needs someone; in a round, a supervisor's
    void is always a way out."""
    if (behind := journal_wait(snapshot)) is not None:
        return [behind.to_json()]
    out = [round_wait(snapshot).to_json()]
    if operator and operator.get("role") and operator.get("waits_for") != "the table":
        out.append({"waits_for": str(operator["waits_for"]), "way_out": str(operator["way_out"]),
                    "role": str(operator["role"])})
    state = S(snapshot["state"])
    if state not in (S.IDLE, S.SETTLED, S.VOIDED, S.BETTING):
        out.append(Wait("(any time)", VOID, "supervisor").to_json())
    return out
