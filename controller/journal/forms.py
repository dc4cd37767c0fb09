"""The journal's forms: what each kind of record has said, release by release.

Surveillance keeps a table's journal for years while the table's software is upgraded many
times; the record that an old release wrote is the evidence and is never rewritten. So a reader
of today must know the form each record was written in, and compare, decode and resume it in
that form: a field a later release added is one the old record does not say, not one it says
wrongly. Event-sourced systems keep such knowledge as upcasters, one per change, naming the
revision that made it (Greg Young, "Versioning in an Event Sourced System"; Axon's upcasters).
Every change of a record's form is one :class:`FieldAdded` in :data:`FORM_CHANGES`, and
``tests/controller/journal/test_forms.py`` fails when an event's fields change without one.

A journal declares its form: every ``session_started`` since revision 3 names the
:data:`JOURNAL_REVISION` of the release that wrote it (``journal_revision``). A session that
names none was written before revision 3, by a release that did not say; its records' forms are
then read from their shape, change by change: a field a change added that the record lacks was
not yet there. That is exact for every change listed (each only added fields), and it cannot
hide tampering: deleting a field from an undeclared record only removes something that record
could have said, and every field it does say is still compared.

A session naming a revision above this release's was written by a later release: its records
may say what this code cannot read, so replay reports it and the service refuses to resume it
(:class:`~controller.journal.errors.JournalFromLaterRelease`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

JOURNAL_REVISION = 3
"""The revision of the journal's forms and rulings this release writes and reads: the highest
``revision`` of :data:`FORM_CHANGES` and of :data:`controller.journal.rule_changes.RULE_CHANGES`.
Bumped with every change of either, never otherwise."""

REVISION_FIELD = "journal_revision"
"""The field of ``session_started`` that declares the revision of the session's records."""

EVERY = "*"
"""In a :attr:`FieldAdded.path`: every element of a list."""


@dataclass(frozen=True, slots=True)
class FieldAdded:
    """One change of a record's form: ``path`` first said by records of ``record`` from
    ``revision`` on (the release that made it named by commit and issue)."""

    revision: int
    release: str
    record: str
    """The record's ``event`` (``dealing_error``, ``round_settled``, ``session_started``)."""
    path: tuple[str, ...]
    change: str

    def describe(self) -> str:
        return (f"revision {self.revision} ({self.release}): {self.record}."
                f"{'.'.join(self.path)} added: {self.change}")


_RESULTS = ("settlement", "results", EVERY)
_ISSUE_34 = "7961cf7, issue 34"
_SETTLEMENTS = ("round_settled", "round_voided", "settlement_corrected")

FORM_CHANGES: tuple[FieldAdded, ...] = (
    *(FieldAdded(1, _ISSUE_34, record, (*_RESULTS, name),
                 "each settlement result names the wager's amount and what went back without "
                 "being in action, so it reconciles alone (amount == stake + returned)")
      for record in _SETTLEMENTS for name in ("amount", "returned")),
    FieldAdded(2, "ac021f9, issue 36", "dealing_error", ("position",),
               "the box the dealer reported an exposed card at (words of the hold only: the "
               "ruling is the clause's whatever box is named); null where the table found it"),
    FieldAdded(3, "issue 44", "session_started", (REVISION_FIELD,),
               "the journal revision of the release that wrote the session"),
    FieldAdded(3, "issue 44", "recovery_started", ("divergences", EVERY, "explained_by"),
               "the listed rule change that explains a divergence, where one does"),
    FieldAdded(3, "issue 44", "recovery_completed", ("explained",),
               "how many differences listed rule changes explain (``divergences`` counts "
               "only the unexplained ones since revision 3)"),
)


def declared_revision(session_payload: Mapping[str, Any]) -> int | None:
    """The revision a ``session_started`` declares, ``None`` for a session written before
    revision 3 (which declared none)."""
    value = session_payload.get(REVISION_FIELD)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def unsaid(record: str, payload: Mapping[str, Any], declared: int | None
           ) -> tuple[FieldAdded, ...]:
    """The changes of :data:`FORM_CHANGES` that ``payload`` (a ``record`` record of a session
    declaring ``declared``) was written before: what its form does not say."""
    changes = [c for c in FORM_CHANGES if c.record == record]
    if declared is not None:
        return tuple(c for c in changes if c.revision > declared)
    return tuple(c for c in changes if not _present(payload, c.path))


def in_form(payload: Any, changes: tuple[FieldAdded, ...]) -> Any:
    """``payload`` (today's form) without the fields ``changes`` added: as the record's own
    release would have written it."""
    for change in changes:
        payload = _without(payload, change.path)
    return payload


def _present(value: Any, path: tuple[str, ...]) -> bool:
    """Whether ``path`` is in ``value``; under :data:`EVERY`, in any element (an empty list
    says nothing either way, and removing nothing from it changes nothing)."""
    if not path:
        return True
    head, rest = path[0], path[1:]
    if head == EVERY:
        return isinstance(value, list) and any(_present(item, rest) for item in value)
    return isinstance(value, Mapping) and head in value and _present(value[head], rest)


def _without(value: Any, path: tuple[str, ...]) -> Any:
    head, rest = path[0], path[1:]
    if head == EVERY:
        return [_without(item, rest) for item in value] if isinstance(value, list) else value
    if not isinstance(value, Mapping) or head not in value:
        return value
    if not rest:
        return {k: v for k, v in value.items() if k != head}
    return {**value, head: _without(value[head], rest)}


__all__ = ["EVERY", "FORM_CHANGES", "JOURNAL_REVISION", "REVISION_FIELD", "FieldAdded",
           "declared_revision", "in_form", "unsaid"]
