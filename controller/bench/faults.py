"""The faults a bench table can inject, and ``--faults`` parsed into them.

Which faults apply depends on the dealing device the game uses (the hand-forming shuffler or the
Bee-Tek shoe), so a fault list naming one the bench's devices cannot produce is refused up front
rather than silently never injected.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from controller.errors import RequestError
from controller.games.rules import GameId
from controller.table import events as ev
from firmware_sim.faults import FaultKind, FaultSpec, FaultSpecError, parse_fault

SHUFFLER_FAULTS = ("set2", "set4", "exposed", "duplicate", "unshuffled", "count:51", "count:53",
                   "foreign", "noread", "jam", "jamhand", "faceup", "reboot", "disconnect")
SHOE_FAULTS = ("noread", "doubleread", "duplicate", "exposed", "disconnect")
BEFORE_SHUFFLE = {FaultKind.COUNT, FaultKind.UNSHUFFLED, FaultKind.FOREIGN, FaultKind.FACE_UP}
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


class FaultInjector:
    """Puts the round's fault into the device: before the shuffle (armed when "No more bets"
    is called, before the device operator can ask for the shuffle), or planned on the device's
    own count for delivery ``k`` of the deal (a set of three, or a card with the LIVE-3P burns),
    ``k`` drawn from the seed: the simulator counts its hands or cards itself and puts the fault
    in as that one is asked for (``plan``). Never on a table event seen in passing nor on the
    clock: a hand lifted late, or a reconnect paced otherwise, cannot move the fault, so the
    same seed puts the same fault at the same hand or card every run. Runs on the table thread
    (the bench's observer), before the device operator sees the same event."""

    def __init__(self, inject: Callable[[FaultSpec], None],
                 plan: Callable[[FaultSpec | None, int], None], seed: int, *,
                 live: bool) -> None:
        self.inject = inject
        self.plan_at = plan
        self.rng = random.Random(seed)
        self.live = live
        self.injected: Counter[str] = Counter()
        self.planned: FaultSpec | None = None
        self.fault: FaultSpec | None = None

    def plan(self, spec: FaultSpec | None) -> None:
        """The next round's fault; called before that round is opened."""
        self.planned = spec

    def see(self, event: ev.RoundEvent) -> None:
        if isinstance(event, ev.RoundOpened):
            self.fault, self.planned = self.planned, None
            self.plan_at(None, 1)  # a fault planned for a round that ended first is dropped
        elif isinstance(event, ev.BetsClosed) and self.fault is not None:
            fault, self.fault = self.fault, None
            self.injected[str(fault)] += 1
            if fault.kind in BEFORE_SHUFFLE:
                self.inject(fault)
                return
            deliveries = (len(event.receiving) + 1) * (3 if self.live else 1)
            self.plan_at(fault, self.rng.randrange(deliveries) + 1)

__all__ = ["BEFORE_SHUFFLE", "FaultInjector", "SHOE_FAULTS", "SHUFFLER_FAULTS", "applicable_faults",
           "parse_faults"]
