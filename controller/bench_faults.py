"""The faults a bench table can inject, and ``--faults`` parsed into them.

Which faults apply depends on the dealing device the game uses (the hand-forming shuffler or the
Bee-Tek shoe), so a fault list naming one the bench's devices cannot produce is refused up front
rather than silently never injected.
"""

from __future__ import annotations

from controller.errors import RequestError
from controller.games.rules import GameId
from firmware_sim.faults import FaultKind, FaultSpec, FaultSpecError, parse_fault

SHUFFLER_FAULTS = ("set2", "set4", "exposed", "duplicate", "unshuffled", "count:51", "count:53",
                   "foreign", "noread", "jam", "reboot", "disconnect")
SHOE_FAULTS = ("noread", "doubleread", "duplicate", "exposed", "disconnect")
BEFORE_SHUFFLE = {FaultKind.COUNT, FaultKind.UNSHUFFLED, FaultKind.FOREIGN}
"""Faults armed before the shuffle rather than before a delivery."""


def applicable_faults(game: str) -> tuple[str, ...]:
    """Faults the bench's devices for ``game`` can produce (``--faults`` RATE draws from it)."""
    return SHOE_FAULTS if GameId(game) is GameId.LIVE_3P else SHUFFLER_FAULTS


def parse_faults(game: str, text: str | None) -> tuple[tuple[FaultSpec, ...], float]:
    """``--faults``: a comma-separated list (one per round, in turn) or a rate in [0, 1]."""
    if not text:
        return (), 0.0
    try:
        rate = float(text)
    except ValueError:
        rate = -1.0
    if rate >= 0:
        if rate > 1:
            raise RequestError(f"--faults rate must be between 0 and 1, got {text}")
        return tuple(parse_fault(f) for f in applicable_faults(game)), rate
    allowed = applicable_faults(game)
    specs = []
    for item in text.split(","):
        try:
            spec = parse_fault(item)
        except FaultSpecError as error:
            raise RequestError(str(error)) from error
        if str(spec) not in allowed and spec.kind.value not in allowed:
            raise RequestError(f"fault {item!r} does not apply to the {game} bench table; "
                               f"applicable: {', '.join(allowed)}")
        specs.append(spec)
    return tuple(specs), -1.0


__all__ = ["BEFORE_SHUFFLE", "SHOE_FAULTS", "SHUFFLER_FAULTS", "applicable_faults",
           "parse_faults"]
