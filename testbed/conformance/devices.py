"""Device variants for testing the conformance kit itself: the conformant ones it must pass
(this module) and the mutants it must fail (:mod:`testbed.conformance.mutants`).

Each variant is a small subclass of a simulator that follows docs/protocols.md
(:class:`firmware_sim.shuffler.ShufflerSim`, :class:`firmware_sim.shoe_framed.FramedShoeSim`)
and changes one thing the document's words govern; none patches our codec. A
:class:`Variant` says which rows to run against it (the rows that can tell, so the suite
stays CI-sized) and, for a mutant, which row must fail and with which clause.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from firmware_sim.framed import FramedSimDevice
from firmware_sim.shoe_framed import FramedShoeSim
from firmware_sim.shuffler import ShufflerSim


# conformant behaviours ----------------------------------------------------------------------
class SlowReplies:
    """Reads its input late: every command is answered ``reply_delay`` after it arrived (90%
    of the 1 s a host waits in all, 3.2), as a slow controller board does."""

    reply_delay = 0.9

    def receive(self, data: bytes) -> None:
        with self.lock:  # type: ignore[attr-defined]
            inbox: list[tuple[float, bytes]] = self.__dict__.setdefault("_inbox", [])
            inbox.append((self.clock() + self.reply_delay, data))  # type: ignore[attr-defined]

    def on_tick(self, now: float) -> None:
        inbox: list[tuple[float, bytes]] = self.__dict__.setdefault("_inbox", [])
        while inbox and inbox[0][0] <= now:
            _, data = inbox.pop(0)
            super().receive(data)  # type: ignore[misc]
        super().on_tick(now)  # type: ignore[misc]


class ResendHalfSecond:
    """Resends an unacknowledged event every 0.5 s: slower than the SHOULD 0.3 s of 3.4,
    which is allowed."""

    resend_seconds = 0.5


class SlowReplyShuffler(SlowReplies, ShufflerSim):
    pass


class SlowReplyShoe(SlowReplies, FramedShoeSim):
    pass


class ResendHalfSecondShuffler(ResendHalfSecond, ShufflerSim):
    pass


class ResendHalfSecondShoe(ResendHalfSecond, FramedShoeSim):
    pass


class ExposingShuffler(ShufflerSim):
    """Every hand has its first card face up, reported by the mask alone (5.4: conformant)."""

    def _finish_hand(self, now: float) -> None:
        from firmware_sim.faults import FaultKind, FaultSpec

        self._armed[FaultKind.EXPOSED] = FaultSpec(FaultKind.EXPOSED)
        super()._finish_hand(now)


def _mix(*bases: type, name: str) -> type[FramedSimDevice]:
    cls = type(name, bases, {"__doc__": bases[0].__doc__})
    return cls  # type: ignore[return-value]


@dataclass(frozen=True)
class Variant:
    """A device variant: how to build it, the rows to run, and (a mutant) the row that must
    fail and the clause it must name."""

    name: str
    device: str  # shuffler | shoe
    make: Callable[[], FramedSimDevice]
    rows: tuple[str, ...]
    fails: str | None = None
    clause: str | None = None
    detail: tuple[str, ...] = field(default=())
    """Words the failure must contain (what was expected and what arrived)."""


def _shuffler(cls: type, **kwargs: object) -> Callable[[], FramedSimDevice]:
    return lambda: cls(seed=7, **kwargs)


def _shoe(cls: type) -> Callable[[], FramedSimDevice]:
    return lambda: cls(seed=7)


CONFORMANT = (
    Variant("shuffler-resend-0.5s", "shuffler", _shuffler(ResendHalfSecondShuffler),
            ("event-resend", "shuffle", "dispense")),
    Variant("shuffler-replies-at-0.9s", "shuffler", _shuffler(SlowReplyShuffler),
            ("resync", "bad-crc", "event-ack", "replay", "event-resend", "shuffle")),
    Variant("shuffler-slow-mechanism", "shuffler",
            _shuffler(ShufflerSim, shuffle_seconds=3.0, dispense_seconds=1.0,
                      take_seconds=1.5),
            ("replay", "event-resend", "shuffle-hand-waiting", "busy", "end-round")),
    Variant("shuffler-exposes-by-mask", "shuffler", _shuffler(ExposingShuffler),
            ("dispense", "end-round")),
    Variant("shoe-resend-0.5s", "shoe", _shoe(ResendHalfSecondShoe),
            ("card", "lid", "quiet")),
    Variant("shoe-replies-at-0.9s", "shoe", _shoe(SlowReplyShoe),
            ("card", "lid")),
)
"""Devices the document allows: the kit must pass every row run against them."""

REFERENCE = (
    Variant("shuffler-as-simulated", "shuffler", _shuffler(ShufflerSim),
            ("event-resend", "heartbeat")),
    Variant("shoe-as-simulated", "shoe", _shoe(FramedShoeSim), ("card", "heartbeat")),
)
"""The simulators as they are (resend every 0.3 s): the benchmark's baseline; the suite
runs their whole matrices in test_kit.py."""
