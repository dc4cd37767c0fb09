"""The clock monitor: reads the host clock, tells the table when its quality changes or the wall
clock steps, and applies the ``[clock]`` policy.

The table never reads a clock (its outputs must replay exactly), so the clock reaches it like a
device: the monitor's thread puts a typed :class:`~drivers.events.ClockReport` on the table's
queue, the journal records it as an input, and the table emits ``clock_status`` and
``clock_stepped`` records and refuses to open a round while the policy says the clock cannot
be trusted (``controller.table.clockgate``).

What is reported (docs/service.md, "Time"):

* at start, a status report (the first input of the service's life after recovery);
* on change: synchronised or not, trusted or not, the time daemon;
* periodically (``status_interval_s``), so a reviewer has an anchor near every record;
* a step: the wall clock moved against the monotonic clock by more than
  ``step_threshold_ms`` between two reads (a daemon's slew is at most 0.5 ms/s, so a larger
  move is a step, e.g. the network time arriving after a power cut).

:class:`ClockWatch` is the pure part (readings in, reports out); :class:`ClockMonitor` is the
thread. Reads that fail are logged once per run of failures, never kill the thread, and count
as an unsynchronised clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import structlog

from controller.service.clock.kernel import ClockReading, ClockSource
from controller.service.policy import ClockPolicy, Unsynchronised
from drivers.events import ClockReport

log = structlog.get_logger(__name__)

CLOCK_DEVICE = "clock"
"""The device name clock reports carry (journal actor, ``DeviceEvent.device``)."""


def untrusted_because(policy: ClockPolicy, reading: ClockReading) -> str | None:
    """``None`` when ``policy`` trusts the reading, else why not (one phrase)."""
    if not reading.synchronised:
        return "clock not synchronised"
    if reading.max_error_us is None:
        return "clock error bound unknown"
    if reading.max_error_us > policy.max_error_ms * 1000:
        return (f"clock error bound {reading.max_error_us / 1000:.1f} ms exceeds "
                f"{policy.max_error_ms} ms")
    return None


class ClockWatch:
    """Readings in, reports out: decides when a report is due. Pure (no clock of its own:
    intervals are measured on the readings' monotonic times)."""

    def __init__(self, policy: ClockPolicy) -> None:
        self.policy = policy
        self.last: ClockReading | None = None
        self.last_report_mono: int | None = None
        self.last_verdict: str | None = None

    def observe(self, reading: ClockReading) -> ClockReport | None:
        previous = self.last
        self.last = reading
        verdict = untrusted_because(self.policy, reading)
        step = 0
        if previous is not None and previous.boot_id == reading.boot_id:
            moved = ((reading.wall_ns - reading.mono_ns)
                     - (previous.wall_ns - previous.mono_ns))
            if abs(moved) > self.policy.step_threshold_ms * 1_000_000:
                step = moved
        if previous is None:
            why = "start"
        elif step:
            why = f"wall clock stepped {step / 1e9:+.3f} s"
        elif verdict != self.last_verdict or reading.source != previous.source:
            why = "changed"
        elif (self.last_report_mono is not None and reading.mono_ns - self.last_report_mono
              >= self.policy.status_interval_s * 1_000_000_000):
            why = "periodic"
        else:
            return None
        self.last_verdict = verdict
        self.last_report_mono = reading.mono_ns
        blocks = verdict is not None and self.policy.unsynchronised is Unsynchronised.REFUSE
        return ClockReport(CLOCK_DEVICE, reading.mono_ns / 1e9,
                           synchronised=reading.synchronised, max_error_us=reading.max_error_us,
                           est_error_us=reading.est_error_us, source=reading.source,
                           boot_id=reading.boot_id, wall_ns=reading.wall_ns,
                           mono_ns=reading.mono_ns, step_ns=step, trusted=verdict is None,
                           blocks_rounds=blocks, reason=verdict or "", why=why)


class ClockMonitor:
    """``ClockMonitor(source, policy)``; :meth:`start` (``put`` the table's input queue)
    reports once at once, before the caller lets any command in, then polls on its own thread
    until :meth:`close`. :meth:`session_clock` may be asked before :meth:`start` (the
    ``session_started`` recovery writes)."""

    def __init__(self, source: ClockSource, policy: ClockPolicy) -> None:
        self.source = source
        self.policy = policy
        self.put: Callable[[object], None] | None = None
        self.watch = ClockWatch(policy)
        self._stop = threading.Event()
        self._failing = False
        self._thread = threading.Thread(target=self._run, name="clock-monitor", daemon=True)

    def start(self, put: Callable[[object], None]) -> None:
        self.put = put
        self.poll()
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def poll(self) -> None:
        """Read once and report if due. Never raises: a failed read is logged once per run of
        failures and the clock keeps its last verdict until a read succeeds."""
        try:
            reading = self.source.read()
        except Exception as error:  # a broken clock source must not stop the monitor
            if not self._failing:
                log.error("clock read failed", error=str(error))
            self._failing = True
            return
        self._failing = False
        report = self.watch.observe(reading)
        if report is not None and self.put is not None:
            if report.step_ns:
                log.warning("wall clock stepped", step_ms=report.step_ns / 1e6)
            self.put(report)

    def _run(self) -> None:
        while not self._stop.wait(self.policy.poll_interval_s):
            self.poll()

    def session_clock(self) -> dict[str, Any] | None:
        """What a ``session_started`` record says of the clock: the latest reading with the
        policy's verdict, or ``None`` before the first read."""
        reading = self.watch.last
        if reading is None:
            try:
                reading = self.source.read()
            except Exception as error:  # noted in the record, never fatal
                return {"trusted": False, "reason": f"clock read failed: {error}",
                        "policy": self.policy.unsynchronised.value}
        verdict = untrusted_because(self.policy, reading)
        return {**reading.to_dict(), "trusted": verdict is None, "reason": verdict or "",
                "policy": self.policy.unsynchronised.value}

    def status(self) -> dict[str, Any]:
        """The ``clock`` field of ``round.status``."""
        return self.session_clock() or {}
