"""The clock gate: no round opens while the host clock cannot be trusted, unless a supervisor
says so.

Surveillance settles a dispute by matching a journal record to a camera frame; a round dealt
while the Pi's clock is minutes off (no battery clock, network time not yet arrived) cannot be
matched. The service's clock monitor decides, by the ``[clock]`` policy, whether the clock
blocks new rounds and says so in a :class:`~drivers.events.ClockReport`; this mixin only obeys
the report, so the table still reads no clock and replays exactly. A round already open is
never stopped by the clock: the step or the loss of synchronisation is recorded
(``clock_stepped``, ``clock_status``) and the round goes on.

The gate is not a rule-text clause; it is the table's policy, so refusals cite
``[clock] unsynchronised = "refuse"`` (docs/service.md, "Time").
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.core import RoundCore
from controller.table.states import Refused
from drivers import events as dev

POLICY = '[clock] unsynchronised = "refuse"'


@dataclass(slots=True)
class ClockGate:
    """The clock gate's state, written only here: whether the last report blocks new rounds,
    and who overrode that. The round asks :meth:`blocks_rounds`; it never sets these."""

    block: str | None = None
    """Why the ``[clock]`` policy refuses new rounds; ``None`` if it does not."""
    override: str | None = None
    """Who let rounds open despite :attr:`block`, and why."""

    def report(self, report: dev.ClockReport) -> None:
        """The monitor's latest word; an override lapses once the clock is trusted again."""
        self.block = (report.reason or "clock not trusted") if report.blocks_rounds else None
        if self.block is None:
            self.override = None

    def overridden(self, by: str) -> None:
        self.override = by

    def blocks_rounds(self) -> bool:
        return self.block is not None and self.override is None


class ClockGateMixin(RoundCore):
    def _clock(self, report: dev.ClockReport) -> None:
        if report.step_ns:
            self.emit(ev.ClockStepped(round=self.number, step_ns=report.step_ns,
                                      wall_ns=report.wall_ns, mono_ns=report.mono_ns))
        self.clock_gate.report(report)
        self.emit(ev.ClockStatus(
            round=self.number, synchronised=report.synchronised,
            max_error_us=report.max_error_us, source=report.source, trusted=report.trusted,
            reason=report.reason, blocks_rounds=self.clock_blocks_rounds()))

    def clock_blocks_rounds(self) -> bool:
        return self.clock_gate.blocks_rounds()

    def _cmd_OverrideClock(self, command: cmd.OverrideClock) -> None:
        if command.role is not cmd.Role.SUPERVISOR:
            raise Refused(f"overriding the clock policy ({POLICY}) belongs to a Pit Supervisor "
                          f"or above; {command.actor} acts as {command.role.value}")
        if self.clock_block is None:
            raise Refused("the clock does not block rounds; nothing to override")
        by = f"{command.actor} ({command.role.value})"
        self.clock_gate.overridden(f"{by}: {command.reason}")
        self.emit(ev.ClockOverridden(round=self.number, by=by,
                                     reason=command.reason, untrusted=self.clock_block))

    def _check_clock_for_round(self) -> None:
        if self.clock_blocks_rounds():
            raise Refused(f"{self.clock_block}: no round opens until the clock is trusted "
                          f"({POLICY}); a supervisor may override with "
                          f"`tablectl supervisor clock-override --reason TEXT`")
