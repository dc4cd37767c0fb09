"""The journal's forms (issue 44): an event's fields never change without its entry in
``controller.journal.forms.FORM_CHANGES``, and every difference between a past release's
records and today's form is one that a listed change names.

``forms.json`` beside this file holds the fields of every class a journal record is decoded
into (round events, commands, device events and every dataclass inside them) at
:data:`JOURNAL_REVISION`. A change of any of them fails here until the change is listed (its
``FieldAdded``, the revision bumped, a fixture journal of the old form in
``tests/journal_fixtures``) and this file is rewritten (the failure prints it)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from pathlib import Path

from controller.journal.codec import COMMAND_TYPES, DEVICE_TYPES, ROUND_EVENT_TYPES, _hints
from controller.journal.forms import (
    EVERY,
    FORM_CHANGES,
    JOURNAL_REVISION,
    declared_revision,
    in_form,
    unsaid,
)
from controller.journal.rule_changes import RULE_CHANGES

GOLDEN = Path(__file__).with_name("forms.json")


def current_forms() -> dict[str, list[str]]:
    """``module.Class`` -> its init fields, for every class a record is decoded into."""
    seen: dict[type, list[str]] = {}

    def walk(cls: type) -> None:
        if cls in seen:
            return
        seen[cls] = sorted(f.name for f in dataclasses.fields(cls) if f.init)
        for hint in _hints(cls).values():
            stack = [hint]
            while stack:
                h = stack.pop()
                stack.extend(typing.get_args(h))
                if inspect.isclass(h) and dataclasses.is_dataclass(h):
                    walk(h)

    for registry in (ROUND_EVENT_TYPES, COMMAND_TYPES, DEVICE_TYPES):
        for cls in registry.values():
            walk(cls)
    return {f"{c.__module__}.{c.__qualname__}": fields
            for c, fields in sorted(seen.items(), key=lambda i: (i[0].__module__,
                                                                  i[0].__qualname__))}


def test_no_form_changes_without_its_entry() -> None:
    golden = json.loads(GOLDEN.read_text())
    now = {"revision": JOURNAL_REVISION, "forms": current_forms()}
    assert golden == now, (
        "a journaled class's fields changed: list the change in controller/journal/forms.py "
        "(FieldAdded, JOURNAL_REVISION bumped), add a fixture journal of the old form to "
        "tests/journal_fixtures, then write this as tests/controller/journal/forms.json:\n"
        + json.dumps(now, indent=1))


def test_the_revision_is_the_last_listed_change() -> None:
    revisions = [c.revision for c in FORM_CHANGES] + [c.revision for c in RULE_CHANGES]
    assert max(revisions) == JOURNAL_REVISION
    assert all(1 <= r <= JOURNAL_REVISION for r in revisions)


def test_a_field_is_unsaid_by_shape_before_revisions_were_declared_and_by_revision_after(
        ) -> None:
    old = {"round": 3, "kind": "exposed_card", "clause": "RWS-NC3P 4.4", "detail": ""}
    new = {**old, "position": "6"}
    assert [c.path for c in unsaid("dealing_error", old, None)] == [("position",)]
    assert unsaid("dealing_error", new, None) == ()
    assert unsaid("dealing_error", old, 3) == ()  # declared: a missing field is a finding
    assert [c.revision for c in unsaid("dealing_error", old, 1)] == [2]
    assert in_form(new, unsaid("dealing_error", old, None)) == old


def test_a_list_path_is_taken_from_every_element() -> None:
    settled = {"settlement": {"results": [{"net": 1, "amount": 5, "returned": 0},
                                          {"net": 2, "amount": 6, "returned": 1}]}}
    changes = tuple(c for c in FORM_CHANGES if c.record == "round_settled")
    assert {c.path[-1] for c in changes} == {"amount", "returned"}
    assert all(c.path[:3] == ("settlement", "results", EVERY) for c in changes)
    assert in_form(settled, changes) == {"settlement": {"results": [{"net": 1}, {"net": 2}]}}


def test_only_a_whole_number_is_a_declared_revision() -> None:
    assert declared_revision({"journal_revision": 3}) == 3
    assert declared_revision({}) is None
    assert declared_revision({"journal_revision": True}) is None
    assert declared_revision({"journal_revision": "3"}) is None
