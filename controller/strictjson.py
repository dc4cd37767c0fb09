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
import re
from typing import Any

from controller.errors import TablectlError

MAX_DEPTH = 64
"""Deeper than any document we read (a request is three levels, a settlement file four)."""


class StrictJsonError(TablectlError, ValueError):
    """JSON text that is not one unambiguous document we can carry."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)  # built in C; a key given twice leaves fewer keys than pairs
    if len(found) == len(pairs):
        return found
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise StrictJsonError(f"the key {key!r} appears twice in one object (which one "
                                  "was meant?)")
        seen.add(key)
    raise AssertionError("unreachable: fewer keys than pairs means a key given twice")


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
    if _may_hold_surrogates(text):
        _check(value)
    else:
        _check_depth(value)
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89abcdefABCDEF]")


def _may_hold_surrogates(text: str | bytes) -> bool:
    """Whether a parsed string could hold a lone surrogate: only through a ``\\uD800``-
    ``\\uDFFF`` escape, or raw (bytes are decoded with ``surrogatepass``, so an encoded
    surrogate starts with byte 0xED in UTF-8; a ``str`` may hold one only if it is not ASCII). Both
    are found by C-speed scans; a false alarm (an escaped backslash before ``ud800``, a
    Hangul syllable) only costs the full check. A studio's batch of 500 wagers is 2,500
    strings the full check would encode one by one (issue 28)."""
    if isinstance(text, bytes):
        if json.detect_encoding(text) != "utf-8":  # UTF-16 or -32: surrogates are not 0xED
            return True
        return b"\xed" in text or _SURROGATE_ESCAPE_BYTES.search(text) is not None
    return not text.isascii() or _SURROGATE_ESCAPE.search(text) is not None


def _check_depth(value: Any) -> None:
    """The depth bound of :func:`_check` alone, visiting only containers."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise StrictJsonError(f"nested too deeply (more than {MAX_DEPTH} levels)")
        children = item.values() if type(item) is dict else item if type(item) is list \
            else ()
        if children and depth == MAX_DEPTH:  # its members would be one level too deep
            raise StrictJsonError(f"nested too deeply (more than {MAX_DEPTH} levels)")
        stack.extend((inner, depth + 1) for inner in children
                     if type(inner) is dict or type(inner) is list)


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

