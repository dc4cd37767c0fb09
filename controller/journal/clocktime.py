"""How far each record's time can be trusted, and its time corrected to true wall time.

Every record carries two clocks: ``ts`` (the wall clock when it was written) and ``mono_ns``
(the monotonic clock, which never steps but restarts at each boot). The service records the
host clock's quality (docs/journal.md, "Time"): ``session_started`` carries a reading, and the
clock monitor's ``ClockReport`` inputs carry readings at start, on every change, periodically
and at every step of the wall clock. A reading is an anchor: both clocks read together, with the
kernel's bound on the wall clock's error.

From those this module gives, for any record of a boot that has a trusted anchor (synchronised,
error bound known):

* the corrected wall time: the nearest anchor's wall time plus the monotonic time elapsed
  (``anchor.wall_ns + record.mono_ns - anchor.mono_ns``), which is right even for a record
  written before the network time arrived and the clock stepped;
* its error bound: the anchor's bound plus 500 ppm of the monotonic distance (the largest
  frequency error the kernel allows an undisciplined clock, the rule by which the kernel itself
  grows ``maxerror``);
* two marks: written while the clock was not synchronised (or before any reading), and
  written before a step of the wall clock later in the same boot (its ``ts`` is off by that
  step).

Pure: records in, annotations out. Boots are told apart by the boot id of the readings; a
record is in the boot of the latest reading before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.journal.record import Record

DRIFT_PPM = 500
"""The kernel's MAXFREQ: how fast an undisciplined clock may drift (parts per million)."""
CLOCK_REPORT = "ClockReport"


@dataclass(frozen=True, slots=True)
class ClockAnchor:
    """A trusted clock reading: the monotonic and wall clocks at one instant, and the bound of
    the wall clock's error (not the journal chain's ``verify.Anchor``)."""

    mono_ns: int
    wall_ns: int
    max_error_us: int


@dataclass(frozen=True, slots=True)
class RecordTime:
    """What is known of one record's time."""

    seq: int
    corrected_ns: int | None
    """True wall time (ns since the epoch) mapped from the nearest trusted anchor; ``None``
    when the record's boot has none."""
    error_us: int | None
    unsynchronised: bool
    """Written while the clock was not synchronised, or before any clock reading."""
    before_step_ns: int
    """Non-zero when a later step of the wall clock in the same boot moved it by this much:
    the record's ``ts`` is off by about that."""

    def to_dict(self) -> dict[str, Any]:
        return {"corrected_ns": self.corrected_ns, "error_us": self.error_us,
                "unsynchronised": self.unsynchronised, "before_step_ns": self.before_step_ns}


def _reading(record: Record) -> Mapping[str, Any] | None:
    """The clock reading a record carries, if any."""
    payload = record.payload
    if record.event_type == "session_started":
        clock = payload.get("clock")
        return clock if isinstance(clock, Mapping) and "mono_ns" in clock else None
    if record.event_type == "input_device" and payload.get("type") == CLOCK_REPORT:
        fields = payload.get("fields")
        return fields if isinstance(fields, Mapping) else None
    return None


def _trusted_anchor(reading: Mapping[str, Any]) -> ClockAnchor | None:
    bound = reading.get("max_error_us")
    if not reading.get("synchronised") or not isinstance(bound, int):
        return None
    return ClockAnchor(int(reading["mono_ns"]), int(reading["wall_ns"]), bound)


def annotate(records: Iterable[Record]) -> dict[int, RecordTime]:
    """Every record's :class:`RecordTime`, by sequence number."""
    rows: list[tuple[Record, str | None, bool]] = []
    anchors: dict[str, list[ClockAnchor]] = {}
    steps: dict[str, list[tuple[int, int]]] = {}
    boot: str | None = None
    synchronised = False
    for record in records:
        reading = _reading(record)
        if reading is not None:
            boot = str(reading.get("boot_id") or "unknown")
            synchronised = bool(reading.get("synchronised"))
            anchor = _trusted_anchor(reading)
            if anchor is not None:
                anchors.setdefault(boot, []).append(anchor)
            step = reading.get("step_ns")
            if isinstance(step, int) and step:
                steps.setdefault(boot, []).append((int(reading["mono_ns"]), step))
        rows.append((record, boot, synchronised))
    return {record.seq: _time(record, boot, synchronised, anchors, steps)
            for record, boot, synchronised in rows}


def _time(record: Record, boot: str | None, synchronised: bool,
          anchors: Mapping[str, list[ClockAnchor]], steps: Mapping[str, list[tuple[int, int]]]
          ) -> RecordTime:
    if boot is None:
        return RecordTime(record.seq, None, None, True, 0)
    later_step = sum(step for mono, step in steps.get(boot, ()) if mono > record.mono_ns)
    candidates = anchors.get(boot, [])
    if not candidates:
        return RecordTime(record.seq, None, None, not synchronised, later_step)
    anchor = min(candidates, key=lambda a: abs(record.mono_ns - a.mono_ns))
    distance = abs(record.mono_ns - anchor.mono_ns)
    error_us = anchor.max_error_us + distance * DRIFT_PPM // 1_000_000_000
    return RecordTime(record.seq, anchor.wall_ns + record.mono_ns - anchor.mono_ns, error_us,
                      not synchronised, later_step)


def describe(time: RecordTime) -> str:
    """A short column for ``journal show``: the error bound and the marks."""
    bound = "±?" if time.error_us is None else f"±{_ms(time.error_us)}"
    marks = []
    if time.unsynchronised:
        marks.append("UNSYNC")
    if time.before_step_ns:
        marks.append(f"PRE-STEP{time.before_step_ns / 1e9:+.3f}s")
    return " ".join([bound, *marks])


def _ms(error_us: int) -> str:
    return f"{error_us / 1000:.1f}ms" if error_us < 10_000_000 else f"{error_us / 1e6:.0f}s"
