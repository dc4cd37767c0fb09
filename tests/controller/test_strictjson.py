"""``controller.strictjson``: what it refuses, whichever way it checks (issue 28 gave it a
quick path for text that cannot hold a lone surrogate; these hold it to the full check)."""

from __future__ import annotations

import json

import pytest

from controller import strictjson
from controller.strictjson import MAX_DEPTH, StrictJsonError


@pytest.mark.parametrize("text", [
    b'{"a": "\\ud800"}',                                           # escaped, in bytes
    '{"a": "x\\uDFFF"}',                                           # escaped, in str
    '{"a": "\ud800"}'.encode("utf-8", "surrogatepass"),            # raw, UTF-8 bytes
    '{"a": "\ud800"}'.encode("utf-16-le", "surrogatepass"),        # raw, UTF-16 bytes
    '{"a": "\udc00"}',                                             # raw, str
    '{"\\ud800": 1}',                                              # in a key
])
def test_a_lone_surrogate_is_refused_however_it_comes(text: str | bytes) -> None:
    with pytest.raises(StrictJsonError, match="lone surrogate"):
        strictjson.loads(text)


def test_text_that_only_looks_like_a_surrogate_is_accepted() -> None:
    """An escaped backslash before ``ud800`` is text, and a pair is one character."""
    assert strictjson.loads(b'["\\\\ud800", "\\ud83d\\ude00", "\xed\x95\x9c"]') == [
        "\\ud800", "\U0001F600", "\ud55c"]


def _nested(levels: int, leaf: object, key: str) -> str:
    value: object = leaf
    for level in range(levels):
        value = [value] if level % 2 else {key: value}
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("levels", range(MAX_DEPTH - 2, MAX_DEPTH + 3))
@pytest.mark.parametrize("leaf", [1, "x", [], {}, [1]])
def test_the_depth_bound_is_the_same_on_both_paths(levels: int, leaf: object) -> None:
    """The same shape with ASCII keys (the quick path) and with a non-ASCII key (the full
    check): refused by both or by neither, and refused exactly when deeper than the bound."""
    verdicts = []
    for key in ("k", "\u00e9"):
        try:
            strictjson.loads(_nested(levels, leaf, key))
            verdicts.append(True)
        except StrictJsonError as error:
            assert "nested too deeply" in str(error)
            verdicts.append(False)
    assert verdicts[0] == verdicts[1], verdicts
    members = leaf != [] and leaf != {}
    deepest = levels + (1 if members and isinstance(leaf, (list, dict)) else 0)
    assert verdicts[0] == (deepest <= MAX_DEPTH), (levels, leaf)


def test_a_key_given_twice_is_named() -> None:
    with pytest.raises(StrictJsonError, match="'b' appears twice"):
        strictjson.loads('[{"a": 1, "b": 2, "c": 3, "b": 4}]')
