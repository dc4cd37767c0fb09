"""Two journals of one seed, compared record by record with the wall clock left out (issue 44,
"one seed, one run"): the tests and ``benchmarks/determinism.py`` both read through this.

``tablectl bench --seed S`` must write the same records every run: the same cards, inputs,
their order and money. What may differ is the wall clock, and only that: a record's ``ts`` and
``mono_ns`` (and so its ``hash``/``prev``/``hmac``, which cover them), the clock readings a
device event or a session carries (``at``, ``mono_ns``, ``wall_ns``, the kernel's error
estimates, the machine's ``boot_id``), measured durations, and temporary paths in a text.
Those are listed here, once (:data:`WALL_CLOCK_KEYS` and the rules beside it); everything else
is compared.

A difference is reported by the round it falls in (the record's ``round``, or the round open
at that point of the chain), so "how many rounds differ" is one number, and the first
difference in full, so a failing test says what differed rather than only that something did.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

from controller.journal.reader import iter_records
from controller.journal.record import Record

MONEY_EVENTS = frozenset({"round_settled", "round_voided", "settlement_corrected"})
"""The records that carry a round's money."""
RECORD_WALL_CLOCK = frozenset({"ts", "mono_ns", "hash", "prev", "hmac", "seq"})
"""Fields of a record that follow the wall clock: its times, and the chain over them. ``seq``
is left out too: it is compared through the records' order, and one extra record (a second
reconnect) would otherwise make every later one differ."""
WALL_CLOCK_KEYS = frozenset({
    "at",            # a device event's monotonic reading (drivers.events)
    "mono_ns",       # the clock report's and the session's monotonic reading
    "wall_ns",       # their wall-clock reading
    "est_error_us",  # the kernel's clock error estimate
    "max_error_us",
    "step_ns",
    "seconds",       # a measured duration
    "waited_s",
})
"""Payload keys, at any depth, whose values are wall-clock readings or durations."""
WALL_CLOCK_OF_TYPE = {
    "CommandFailed": frozenset({"first", "last"}),  # the failure streak's clock readings
}
"""Per input type (a payload's ``type``), further keys of its ``fields`` that are readings."""
MACHINE_BOOT = "boot_id"
"""The machine's boot (a clock report's UUID string) differs between machines and boots; a
device's boot id (an integer, drawn from the simulator's seed) is compared."""
TEMP_PATH = re.compile(re.escape(tempfile.gettempdir().rstrip("/")) + r"/[^/\s'\"]+")
"""A temporary directory's path inside a text (a simulator's pty link in a disconnect's
reason): ``<tmp>``."""


def normalised(record: Record) -> dict[str, Any]:
    """``record`` without its wall-clock fields (:data:`RECORD_WALL_CLOCK`,
    :data:`WALL_CLOCK_KEYS`, :data:`WALL_CLOCK_OF_TYPE`, the machine's boot, temporary
    paths)."""
    body = {key: value for key, value in record.to_dict().items()
            if key not in RECORD_WALL_CLOCK}
    payload = body.get("payload")
    if isinstance(payload, dict) and isinstance(payload.get("fields"), dict):
        extra = WALL_CLOCK_OF_TYPE.get(str(payload.get("type")), frozenset())
        payload = {**payload, "fields": {k: v for k, v in payload["fields"].items()
                                         if k not in extra}}
        body["payload"] = payload
    return _strip(body)


def _strip(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _strip(item) for key, item in value.items()
                if key not in WALL_CLOCK_KEYS
                and not (key == MACHINE_BOOT and isinstance(item, str))}
    if isinstance(value, list):
        return [_strip(item) for item in value]
    if isinstance(value, str):
        return TEMP_PATH.sub("<tmp>", value)
    return value


@dataclass(frozen=True, slots=True)
class Difference:
    """The first place two journals part, within one round."""

    round: str | None
    """The round it falls in (``None``: before the first round, or after the last)."""
    index: int
    """Its place among the records compared (0 is the first record)."""
    first: dict[str, Any] | None
    second: dict[str, Any] | None

    def describe(self) -> str:
        return (f"round {self.round}, record {self.index}:\n  first:  {self.first}\n"
                f"  second: {self.second}")


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two journals compared: how many rounds each holds, and where they differ."""

    rounds: int
    differences: tuple[Difference, ...] = field(default=())
    """The first difference of each round that differs, in chain order."""
    money: tuple[str | None, ...] = field(default=())
    """The rounds whose money differs: their settlement or void (:data:`MONEY_EVENTS`)."""

    @property
    def same(self) -> bool:
        return not self.differences

    @property
    def rounds_differing(self) -> int:
        return len({d.round for d in self.differences})

    @property
    def money_differing(self) -> int:
        return len(self.money)

    def describe(self, limit: int = 3) -> str:
        if self.same:
            return f"the same records ({self.rounds} rounds)"
        shown = "\n".join(d.describe() for d in self.differences[:limit])
        return (f"{self.rounds_differing} of {self.rounds} rounds differ "
                f"({self.money_differing} in money); the first "
                f"{min(limit, len(self.differences))}:\n{shown}")


def compare_journals(first: Path, second: Path) -> Comparison:
    """Every record of the journals in ``first`` and ``second``, in chain order, compared round
    by round with the wall clock left out; the first difference of each round is kept, so one
    late record does not make every later round differ."""
    left = _rounds(iter_records([first]))
    right = _rounds(iter_records([second]))
    differences: list[Difference] = []
    money: list[str | None] = []
    index = 0
    for number in list(left) + [n for n in right if n not in left]:
        a, b = left.get(number, []), right.get(number, [])
        for place, (x, y) in enumerate(zip_longest(a, b)):
            if x != y:
                differences.append(Difference(number, index + place, x, y))
                break
        if _money(a) != _money(b):
            money.append(number)
        index += max(len(a), len(b))
    return Comparison(len(set(left) | set(right) - {None}), tuple(differences), tuple(money))


def _money(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("event") in MONEY_EVENTS]


def _rounds(records: Iterable[Record]) -> dict[str | None, list[dict[str, Any]]]:
    """The normalised records by round, in chain order. A record of no round (the session
    record the recorder starts before every round, the dealer's ``OpenRound``, a device note
    between rounds) joins the round whose record follows it; the ones after the last round
    join it (``None`` for a journal of no round)."""
    rounds: dict[str | None, list[dict[str, Any]]] = {}
    loose: list[dict[str, Any]] = []
    last: str | None = None
    for record in records:
        body = normalised(record)
        number = record.round_id
        if number is None:
            loose.append(body)
            continue
        group = rounds.setdefault(number, [])
        group.extend(loose)
        group.append(body)
        loose, last = [], number
    if loose:
        rounds.setdefault(last, []).extend(loose)
    return rounds


__all__ = ["Comparison", "Difference", "MONEY_EVENTS", "RECORD_WALL_CLOCK", "WALL_CLOCK_KEYS",
           "compare_journals", "normalised"]
