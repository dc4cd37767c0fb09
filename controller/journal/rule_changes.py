"""The rules changelog: every ruling the table changed since journals were first written, with
a way to recognise what the change does to the replay of a journal written before it.

A replay re-derives each recorded decision with today's rules. Where a ruling was corrected
(a clause read better, a check added), an honest journal of an earlier release holds the
decision its own release made, and today's rules give another: a difference that is not
tampering. Each correction is one :class:`RuleChange` here, naming the revision and release that
made it, the clause, and what changed; its ``recognises`` says whether one input's recorded
outcome is exactly what the old ruling made of it, against what today's rules make of it.

Every ruling changed so far decides where a wager goes on the layout (placement), so an entry
judges one placement input: its recorded outputs against the rules' outputs for it, as a whole
(:class:`PlacementOutcome`). Replay asks only in a session written before the change (:func:`explaining`);
where an entry recognises the outcome, the replay reports it as *explained* and goes on from the
layout the journal recorded (the table adopts it when bets close), so the deal, the cards and
the money after it are still re-derived by today's rules and compared: a settlement rewritten in
an old journal is never explained. Anything no entry recognises is *unexplained*
(docs/journal.md, "Replay across releases").

An entry is added with the change of ruling, in the same commit, with its revision
(:data:`controller.journal.forms.JOURNAL_REVISION` bumped) and a fixture journal of the old
ruling (``tests/journal_fixtures``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Output = tuple[str, Mapping[str, Any]]
"""An output record as (event type, payload)."""

PLACEMENT_INPUTS = frozenset({"PlaceWager", "PlaceWagers"})
"""The inputs whose outcome a listed change may explain: every ruling changed so far is one of
placement."""


@dataclass(frozen=True, slots=True)
class PlacementOutcome:
    """One placement input with what the journal recorded for it and what today's rules give."""

    game: str
    command: str
    """``PlaceWager`` or ``PlaceWagers``."""
    fields: Mapping[str, Any]
    """The input's fields as recorded."""
    recorded: tuple[Output, ...]
    replayed: tuple[Output, ...]

    def recorded_of(self, event: str) -> list[Mapping[str, Any]]:
        return [p for e, p in self.recorded if e == event]

    def replayed_of(self, event: str) -> list[Mapping[str, Any]]:
        return [p for e, p in self.replayed if e == event]


@dataclass(frozen=True, slots=True)
class RuleChange:
    revision: int
    """Sessions declaring this revision or later were written under the new ruling."""
    release: str
    clause: str
    change: str
    recognises: Callable[[PlacementOutcome], bool]
    placed_unrecorded: Callable[[PlacementOutcome], tuple[Mapping[str, Any], ...]] = lambda _o: ()
    """The wagers the old ruling left on the layout without a record of their own (the rows
    ahead of a batch refused whole): the journal's layout includes them."""

    def describe(self) -> str:
        return (f"rule change of revision {self.revision} ({self.release}, {self.clause}): "
                f"{self.change}")


# -- the old rulings, each recognised exactly ----------------------------------------------

_OLD_BOX_MAXIMUM = re.compile(r"^box \S+ \S+ would total \d+, over the maximum \d+: excess "
                              r"rejected \(RWS-NC3P 5\.1\)$")


def _box_maximum_by_priority(outcome: PlacementOutcome) -> bool:
    """Before 7961cf7 a wager that took a box over its maximum was refused whole ("excess
    rejected", a ``wager_refused`` and the ``command_refused`` of the input); now the box's
    limit is shared by priority (RWS-NC3P 5.1: the Seated Player first, Standing Players cut
    back or returned), so the rules accept it, maybe cutting it or others back."""
    if outcome.game != "rws-nc-three-pictures" or outcome.command != "PlaceWager":
        return False
    wager_id = outcome.fields.get("wager_id")
    refused = outcome.recorded_of("wager_refused")
    return (len(outcome.recorded) == 2 and len(refused) == 1
            and refused[0].get("wager_id") == wager_id
            and bool(_OLD_BOX_MAXIMUM.match(str(refused[0].get("reason", ""))))
            and [p.get("reason") for p in outcome.recorded_of("command_refused")]
            == [refused[0].get("reason")]
            and [p.get("wager", {}).get("id") for p in outcome.replayed_of("wager_accepted")]
            == [wager_id]
            and all(e in ("wager_accepted", "wager_reduced") for e, _ in outcome.replayed))


def _under_the_minimum(outcome: PlacementOutcome) -> bool:
    """Before 7961cf7 a Bet under the minimum went on the layout (and was judged at the
    settlement); now it is refused at placement (RWS-NC3P 5.2: the Player may increase it to
    the minimum or withdraw it)."""
    if outcome.game != "rws-nc-three-pictures" or outcome.command != "PlaceWager":
        return False
    accepted = outcome.recorded_of("wager_accepted")
    return (len(outcome.recorded) == 1 and len(accepted) == 1
            and _is_the_input(accepted[0].get("wager"), outcome.fields)
            and _one_refusal(outcome, "under the minimum"))


def _one_seated_player_a_box(outcome: PlacementOutcome) -> bool:
    """Before 24c8d2e a second player marked seated at a box was accepted; now one Seated
    Player a box (RWS-NC3P 1.15) refuses it at placement."""
    if outcome.game != "rws-nc-three-pictures" or outcome.command != "PlaceWager":
        return False
    accepted = outcome.recorded_of("wager_accepted")
    return (outcome.fields.get("seated") is True and len(outcome.recorded) == 1
            and len(accepted) == 1 and _is_the_input(accepted[0].get("wager"), outcome.fields)
            and _one_refusal(outcome, "marked seated"))


def _batch_row_refused_alone(outcome: PlacementOutcome) -> bool:
    """Before ca70a74 a batch with a row the rule set or the limits refused (a ``WagerError``)
    was refused whole, a ``command_refused`` naming the error, while the rows ahead of it stayed
    on the layout with no record of their own and the rows after it were never placed; now that
    row alone is refused (``wager_refused``) and the others are accepted."""
    if outcome.command != "PlaceWagers":
        return False
    refusals = outcome.recorded_of("command_refused")
    if len(refusals) != 1 or outcome.recorded[-1][0] != "command_refused":
        return False
    reason = str(refusals[0].get("reason", ""))
    if not reason.startswith("WagerError: "):
        return False
    row = _first_row_refused_for(outcome, reason.removeprefix("WagerError: "))
    return row is not None and all(e in ("wager_refused", "wagers_accepted", "wager_reduced")
                                   for e, _ in outcome.recorded[:-1] + outcome.replayed)


def _rows_ahead_of_the_refused_row(outcome: PlacementOutcome) -> tuple[Mapping[str, Any], ...]:
    reason = str(outcome.recorded_of("command_refused")[0].get("reason", ""))
    row = _first_row_refused_for(outcome, reason.removeprefix("WagerError: "))
    accepted = [w for p in outcome.replayed_of("wagers_accepted") for w in p.get("wagers", ())]
    rows = [str(r.get("wager_id")) for r in outcome.fields.get("wagers", ())]
    ahead = set(rows[:rows.index(row)]) if row in rows else set()
    return tuple(w for w in accepted if w.get("id") in ahead)


def _first_row_refused_for(outcome: PlacementOutcome, reason: str) -> str | None:
    return next((str(p.get("wager_id")) for p in outcome.replayed_of("wager_refused")
                 if p.get("reason") == reason), None)


def _is_the_input(wager: Any, fields: Mapping[str, Any]) -> bool:
    return isinstance(wager, Mapping) and wager.get("id") == fields.get("wager_id") and all(
        wager.get(k) == fields.get(k) for k in ("position", "bet", "amount", "player"))


def _one_refusal(outcome: PlacementOutcome, words: str) -> bool:
    """The rules refuse the input with ``words`` in the reason (a ``command_refused``, or a
    ``wager_refused`` with the input's ``command_refused`` after it), and give nothing else."""
    events = [e for e, _ in outcome.replayed]
    if events not in (["command_refused"], ["wager_refused", "command_refused"]):
        return False
    return all(words in str(p.get("reason")) for _e, p in outcome.replayed)


RULE_CHANGES: tuple[RuleChange, ...] = (
    RuleChange(1, "ca70a74, issue 33", "every game's bets and limits",
               "a row of a batch of wagers that the rule set or the limits refuse is refused "
               "alone; before, the whole batch was refused while the rows ahead of it stayed on "
               "the layout", _batch_row_refused_alone, _rows_ahead_of_the_refused_row),
    RuleChange(1, "7961cf7, issue 34", "RWS-NC3P 5.1",
               "the box maximum is shared by priority at placement (the Seated Player first, a "
               "Standing Player's wager cut back); before, a wager over what was left was "
               "refused whole", _box_maximum_by_priority),
    RuleChange(1, "7961cf7, issue 34", "RWS-NC3P 5.2",
               "a Bet under the minimum is refused at placement; before, it went on the layout",
               _under_the_minimum),
    RuleChange(1, "24c8d2e, issue 34", "RWS-NC3P 1.15",
               "one Seated Player a box: a second player marked seated is refused; before, it "
               "was accepted", _one_seated_player_a_box),
)


def explaining(declared: int | None, outcome: PlacementOutcome) -> RuleChange | None:
    """The listed change that explains ``outcome`` in a session declaring ``declared``
    (``None``: written before revisions were declared, so every change is a candidate), or
    ``None``: unexplained."""
    for change in RULE_CHANGES:
        if declared is not None and declared >= change.revision:
            continue
        if change.recognises(outcome):
            return change
    return None


def changes_since(declared: int | None) -> Sequence[RuleChange]:
    """The listed changes a session declaring ``declared`` was written before."""
    return [c for c in RULE_CHANGES if declared is None or c.revision > declared]


__all__ = ["PLACEMENT_INPUTS", "RULE_CHANGES", "PlacementOutcome", "RuleChange", "changes_since",
           "explaining"]
