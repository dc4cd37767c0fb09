"""argparse ``type`` functions shared by the subcommands: a value the person typed is refused in
argparse's own one line (``tablectl: argument --out: ...``, exit 2) before anything runs, and
argparse names the option in it, so these only say what is wrong."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from controller.settlement.model import MAX_AMOUNT


def nonempty_path(text: str) -> Path:
    """A path option's value, refusing an empty or all-whitespace one: ``Path("")`` is the
    current directory, so ``--journal-dir ""`` (an unset shell variable) wrote a journal, a
    report or the release's files wherever the command happened to be run, and a name of
    blanks is a slip nobody means. The current directory is still there for whoever means
    it: ``.``."""
    if not text:
        raise argparse.ArgumentTypeError("empty path (it would mean the current directory; "
                                         "give . if that is meant)")
    if text.isspace():
        raise argparse.ArgumentTypeError(f"{text!r} is only blanks, not a path")
    return Path(text)


def minor_units(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` for an amount in minor units from ``minimum`` to ``MAX_AMOUNT``, so
    a stake of 0 or -100 or a jackpot of 10**26 is refused in one line before any arithmetic."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a whole number of minor units") from None
        if not minimum <= value <= MAX_AMOUNT:
            raise argparse.ArgumentTypeError(
                f"{value} is outside {minimum}-{MAX_AMOUNT} minor units")
        return value

    return parse
