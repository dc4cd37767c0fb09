"""JSON read from outside (a control-socket request, a settlement file), refused when it is
ambiguous or would break something later.

The standard library's reader accepts more than a careful reader should: a key given twice
(the last silently wins, so what a person wrote and what the table did differ), text with a
lone UTF-16 surrogate (``"\\ud800"``: valid JSON, but it cannot be written back as UTF-8, so the
reply or the journal line that carries it fails later, far from the cause), an integer of
thousands of digits (CPython refuses to convert it with a ``ValueError`` that is not a
``JSONDecodeError``) and nesting deep enough to exhaust the stack (``RecursionError``). Each
becomes one :class:`StrictJsonError` that names the problem, so every caller turns it into
one clear line.
"""

from __future__ import annotations

import json
from typing import Any

from controller.errors import TablectlError

MAX_DEPTH = 64
"""Deeper than any document we read (a request is three levels, a settlement file four)."""


class StrictJsonError(TablectlError, ValueError):
    """JSON text that is not one unambiguous document we can carry."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise StrictJsonError(f"the key {key!r} appears twice in one object (which one "
                                  "was meant?)")
        found[key] = value
    return found


def loads(text: str | bytes) -> Any:
    """Parse ``text``; :class:`StrictJsonError` for anything but one unambiguous document."""
    try:
        value = json.loads(text, object_pairs_hook=_pairs)
    except StrictJsonError:
        raise
    except RecursionError:
        raise StrictJsonError("nested too deeply") from None
    except UnicodeDecodeError as error:
        raise StrictJsonError(f"not UTF-8 text (byte at offset {error.start})") from None
    except json.JSONDecodeError as error:
        raise StrictJsonError(f"not valid JSON: {error.msg} at line {error.lineno} column "
                              f"{error.colno}") from None
    except ValueError as error:  # e.g. an integer over the interpreter's digit limit
        raise StrictJsonError(str(error).split(";")[0]) from None
    _check(value)
    return value


def _check(value: Any) -> None:
    """Depth and text, iteratively: a deep document must not recurse here either."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise StrictJsonError(f"nested too deeply (more than {MAX_DEPTH} levels)")
        if isinstance(item, str):
            _text(item)
        elif isinstance(item, dict):
            for key, inner in item.items():
                _text(key)
                stack.append((inner, depth + 1))
        elif isinstance(item, list):
            stack.extend((inner, depth + 1) for inner in item)


def _text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise StrictJsonError(f"text with a lone surrogate (\\u{ord(text[error.start]):04x} at "
                              f"character {error.start}): not Unicode text") from None

