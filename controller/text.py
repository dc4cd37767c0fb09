"""Printable text: the one rule for which characters may reach a screen, a terminal or a log
as themselves (issue 35, "one rule, one place").

A character is unprintable when it can drive a terminal or change what a screen shows, or cannot
be written out at all: control (``Cc``: ESC, the C1 CSI), format (``Cf``: bidi overrides,
zero-width characters), a lone surrogate (``Cs``: not UTF-8), private use (``Co``: means
nothing agreed) and the line and paragraph separators (``Zl``, ``Zp``). Everything else,
space and every letter of every script, is printable.

The same rule works both ways:

- input: :func:`is_printable` refuses text holding any such character (the control socket's
  ids, actors and player names, :mod:`controller.service.protocol`);
- output: :func:`escape_unprintable` shows each such character escaped instead of letting it
  act (the command line, :mod:`controller.cli.output`), so text an older version journaled
  before the input rule existed is shown, never obeyed.

A device's barcode is a narrower rule of its own (printable ASCII, ``drivers.shoe.codes``; the
drivers take nothing from here). Python's ``str.isprintable`` is narrower too (it also refuses
unassigned code points and every separator but the space), which a caller may add on top.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
"""The Unicode general categories that are not shown as themselves (see the module)."""


def is_printable(text: str) -> bool:
    """Whether ``text`` holds no unprintable character (the empty text is printable).

    ASCII text, nearly all of it, is judged by ``str.isprintable`` in C instead of a category
    look-up per character (the same verdict for ASCII: only ``Cc`` is unprintable there): a
    studio batch is 250 wagers of 4 texts."""
    if text.isascii():
        return text.isprintable()
    return not any(unicodedata.category(ch) in UNPRINTABLE_CATEGORIES for ch in text)


def escape_unprintable(text: str, escape: Callable[[str], str]) -> str:
    """``text`` with each unprintable character replaced by ``escape(ch)``; the rest as is."""
    if text.isprintable():  # the usual case, in C: nothing to look at
        return text
    return "".join(escape(ch) if unicodedata.category(ch) in UNPRINTABLE_CATEGORIES else ch
                   for ch in text)
