"""Printable text: the one rule (controller.text) that the control socket refuses input by and
the command line escapes output by (issue 35, "one rule, one place")."""

from __future__ import annotations

import json

import pytest

from controller.cli.output import json_text, printable
from controller.service.protocol import ErrorCode, Refusal, decode_request
from controller.text import UNPRINTABLE_CATEGORIES, escape_unprintable, is_printable

UNPRINTABLE = {
    "escape (Cc)": "\x1b[2J",
    "C1 CSI (Cc)": "\x9b",
    "bidi override (Cf)": "\u202e",
    "zero-width space (Cf)": "\u200b",
    "lone surrogate (Cs)": "\ud800",
    "private use (Co)": "\ue000",
    "line separator (Zl)": "\u2028",
    "paragraph separator (Zp)": "\u2029",
}
PRINTABLE = ["", "Ann", "a b", "Zoë", "Łódź", "山田", "tab-free ~!@#", "\u00a0non-breaking"]


def test_the_categories_are_named_once() -> None:
    """The rule is the six Unicode categories the module names, no more."""
    assert UNPRINTABLE_CATEGORIES == {"Cc", "Cf", "Cs", "Co", "Zl", "Zp"}


@pytest.mark.parametrize("text", PRINTABLE)
def test_printable_text_passes_and_is_shown_as_is(text: str) -> None:
    """Every letter of every script, spaces among them, is printable, and shown unchanged."""
    assert is_printable(text)
    assert escape_unprintable(text, lambda ch: "?") == text


@pytest.mark.parametrize("bad", UNPRINTABLE.values(), ids=list(UNPRINTABLE))
def test_an_unprintable_character_is_refused_and_escaped(bad: str) -> None:
    """One unprintable character anywhere makes text unprintable (ASCII and not); escaping
    replaces exactly that character."""
    for text in (bad, f"Ann{bad}", f"Zoë{bad}x"):
        assert not is_printable(text), repr(text)
    assert escape_unprintable(f"Zoë{bad[0]}x", lambda ch: "<>") == "Zoë<>x"


@pytest.mark.parametrize("bad", UNPRINTABLE.values(), ids=list(UNPRINTABLE))
def test_the_socket_and_the_command_line_use_the_one_rule(bad: str) -> None:
    """What the control socket refuses in a request's id, the command line escapes on output
    (the name an older version journaled before the rule is shown, never obeyed): the same
    characters both ways."""
    line = json.dumps({"id": f"r{bad}", "verb": "round.status", "args": {}}).encode()
    with pytest.raises(Refusal) as refused:
        decode_request(line)
    assert refused.value.code is ErrorCode.MALFORMED
    # a lone surrogate is refused even earlier, by the strict JSON reader, as not Unicode
    assert ("lone surrogate" if bad == "\ud800" else "printable") in refused.value.message
    shown = printable(f"Ann{bad}")
    assert shown != f"Ann{bad}" and is_printable(shown)
    as_json = json_text({"name": f"Ann{bad}"})
    assert is_printable(as_json) and json.loads(as_json) == {"name": f"Ann{bad}"}
