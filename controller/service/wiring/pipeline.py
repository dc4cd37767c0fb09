"""The wired table: journal -> recovery -> table thread -> device and its operator -> handler.

Kept apart from :mod:`controller.service.lifecycle.app` (the lifecycle and systemd) so that this is
the one module that imports the table, the journal, the drivers and the simulators; ``Service`` with
an injected handler stays light. Every failure to start is a :class:`ServiceError` naming the config
key and the cause, and whatever was opened before it is closed again.
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from controller.journal.background import BackgroundCheck, CheckOutcome, CheckResult, \
    record_result
from controller.journal.errors import JournalError
from controller.journal.recovery import RESTART_DEVICE, RecoveryReport, recover
from controller.journal.retention import apply_retention
from controller.journal.startup import (
    StartupCheck,
    advance_mark,
    background_damage,
    check_journal,
    mark_clean,
    mark_new_journal,
    record_acknowledgement,
    record_damage,
    refuse_later_release,
    unproven_round,
)
from controller.journal.writer import JournalWriter
from controller.protection.guard import Guard
from controller.service.wiring.warmup import WarmingGuard
from controller.selfcheck.manifest import SoftwareCheck
from controller.selfcheck import status as selfcheck_status
from controller.selfcheck.status import check_and_record
from controller.service.config import DeviceKind, ServiceConfig, SoftwareVerify
from controller.service.clock.watch import ClockMonitor
from controller.service.protocol import DEVICE_STATUS
from controller.service.wiring.devices import DealingDevice, check_device_path, open_device
from controller.service.errors import ResourceUnavailableError, ServiceError
from controller.service.wiring.floodgate import Floodgate
from controller.service.control.server import EncodedEvent, watch_text
from controller.service.wiring.handler import TableHandler, event_json
from controller.service.wiring.health import Health
from controller.service.clock.kernel import ClockSource, KernelClock
from controller.service.keyfile import load_service_key
from controller.service.wiring.liveness import waits
from controller.service.operator import DeviceOperator
from controller.service.wiring.retention import RetentionTimer
from controller.service.wiring.simdealer import SimulatedDealer
from controller.service.wiring.tablethread import InputSubscriber, JournalHold, TableThread
from controller.table import events as ev
from drivers import events as dev

log = structlog.get_logger(__name__)

SIM_ONLINE_SECONDS = 3.0
"""In sim mode READY waits (bounded) for the simulated device, so a first round can be dealt;
a real device is never waited for (it may be unplugged: the status line says so)."""

Publish = Callable[[Mapping[str, Any]], None]


_MAY_COME_BACK = {errno.ENOSPC: "full", errno.EDQUOT: "full (quota)",
                  errno.EROFS: "read-only", errno.EIO: "failing (I/O error)"}
"""OS errors of a resource that may come back (space freed, the card remounted read-write or
reseated). A permission or a missing path is a deployment mistake: exit 2, not retried."""


def _resource_gone(error: BaseException) -> str | None:
    """What went (``full``, ``read-only``) when ``error`` comes, through its causes, from an
    OS error that may go away again; None for anything else (a bad config, a bug)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _MAY_COME_BACK:
            return _MAY_COME_BACK[current.errno]
        current = current.__cause__ or current.__context__
    return None


class Wiring:
    """``Wiring(config, publish)``; :meth:`start` (recovery included), :meth:`close`.
    ``clock_source`` is the seam for the host clock (default: the kernel's)."""

    def __init__(self, config: ServiceConfig, publish: Publish, *,
                 observe: InputSubscriber | None = None,
                 clock_source: ClockSource | None = None) -> None:
        self.config = config
        self.publish = publish
        self.observe = observe
        """Each input and its typed events, on the table thread, before the device operator
        sees them: the seam for ``tablectl bench``'s actors (the simulated hands at the table)."""
        self.clock = ClockMonitor(clock_source or KernelClock(), config.clock)
        self.writer: JournalWriter | None = None
        self.table: TableThread | None = None
        self.device: DealingDevice | None = None
        self.operator: DeviceOperator | None = None
        self.sim_dealer: SimulatedDealer | None = None
        self.recovery: RecoveryReport | None = None
        self.software: SoftwareCheck | None = None
        self.handler: TableHandler | None = None
        self.retention: RetentionTimer | None = None
        self.journal_check: StartupCheck | None = None
        self.protection: WarmingGuard | None = None
        self.background_check: BackgroundCheck | None = None
        self._device_online = threading.Event()
        self._mark_lock = threading.Lock()
        """Held while the verified mark is read and written off the table thread: by the daily
        pass (and the stop) moving it, and by the background check keeping a break pending with
        it. Without it a daily pass that read the mark before a background break was journaled
        wrote its clean mark over the pending one, and a restart no longer held the break."""

    # start / stop ---------------------------------------------------------------------------
    def start(self) -> None:
        try:
            self._start()
        except BaseException as error:
            self.close()
            gone = _resource_gone(error)
            if gone is not None:
                raise ResourceUnavailableError(
                    f"{error} (the journal's disk is {gone}: retried, not a configuration "
                    "error)") from error
            raise

    def _start(self) -> None:
        config, journal = self.config, self.config.journal
        check_device_path(config.device)  # a deployment mistake: refused before the journal
        key = load_service_key(journal.hmac_key_file) if journal.hmac_key_file else None
        if key is None and (unkeyed := journal.unkeyed_warning()) is not None:
            log.warning("JOURNAL NOT KEYED", problem=unkeyed)
        self.journal_check = check = check_journal(journal.directory, key)  # before appending
        try:
            refuse_later_release(journal.directory)  # a downgrade: one line, nothing appended
        except JournalError as error:
            raise ServiceError(f"journal.directory {journal.directory}: {error}") from error
        log.info("journal checked", seconds=round(check.seconds, 3),
                 incremental=check.incremental, damage=check.damage is not None,
                 records=check.report.records if check.report else 0)
        if check.known is not None:
            log.warning("journal damage found again (acknowledged before)",
                        found=check.describe())
        software = config.software  # checked before the journal: every session records it
        self.software = check_and_record(software.manifest, software.public_key,
                                         required=software.verify is SoftwareVerify.REQUIRED)
        try:
            # damage the check found is journaled and holds the table: a damaged tail must
            # not stop the service (nobody could then conclude the round), so the writer
            # leaves it as evidence and continues in a new file
            found = check.damage is not None or check.known is not None
            self.writer = JournalWriter(journal.directory, table_id=config.table_id,
                                        hmac_key=key, durability=journal.durability,
                                        past_damage=found)
        except JournalError as error:
            raise ServiceError(f"journal.directory {journal.directory}: {error}") from error
        found_seq = record_damage(self.writer, check, key) if check.damage is not None \
            else None
        table_id = config.table_id

        def daily(writer: JournalWriter, *, keep_days: int) -> Any:
            result = apply_retention(writer, keep_days=keep_days)
            with self._mark_lock:
                if self.table is not None and self.table.journal_hold is None:
                    self._advance(advance_mark(journal.directory, key, table_id))
            return result

        self.retention = RetentionTimer(self.writer, keep_days=journal.retention_days,
                                        apply=daily)
        self.retention.run_pass()  # once now (a failure is logged; old files stay), then daily
        started = time.monotonic()
        journaled, self.recovery = recover(self.writer, config.layout(),
                                           clock=self.clock.session_clock)
        report = self.recovery
        if report.unproven is not None and found_seq is None:
            # damage the check could not see (before the verified mark) but replay did: held
            # like any damage, never a service that will not start (nobody could end the round)
            self.journal_check = check = unproven_round(check, report.unproven)
            if check.damage is not None:
                found_seq = record_damage(self.writer, check, key)
            else:
                log.warning("round not reproduced again (acknowledged before)",
                            found=check.describe())
        log.info("journal recovered", decision=report.decision.value, round=report.round,
                 clause=report.clause, inputs_replayed=report.inputs_replayed,
                 seconds=round(time.monotonic() - started, 3))
        if report.round is not None:
            log.warning("round interrupted by the restart", round=report.round,
                        decision=report.decision.value, clause=report.clause)
        self.table = TableThread(journaled, floodgate=Floodgate(config.journal.flood))
        if config.protection:  # warmed on its own thread: READY does not wait for it
            journaled.guard = self.protection = WarmingGuard(
                Guard(feed=config.protection_feed), journal.directory, self.writer.seq,
                self.table.put)
        self._journal_check(check, key, found_seq)
        self.device = open_device(config.device, self.table.inputs)
        if self.device.acknowledger is not None:  # before the table thread runs
            journaled.attach_link(self.device.name, self.device.acknowledger)
        live = config.device.kind is DeviceKind.LIVE
        device_name = self.device.name
        self.operator = DeviceOperator(
            self.device, self.table.put, live=live,
            on_change=lambda: self.publish({"type": DEVICE_STATUS, "device": device_name}))
        if journaled.tracker.open:
            self.operator.resume(journaled.table.machine.number, journaled.tracker.phase,
                                 journaled.tracker.resumes_to,
                                 deck_blocked=journaled.table.machine.deck_blocked is not None,
                                 awaited=journaled.tracker.awaited)
        self.table.subscribe_batches(self._published)
        if self.observe is not None:  # before the operator's: the bench's hands act first
            self.table.subscribe_inputs(self.observe)
        if self.device.simulated:  # the person at a simulated table, not the operator; a
            # hand is lifted before the operator acts on the input that presented it
            self.sim_dealer = SimulatedDealer(self.device, self.table.put, live=live)
            self.table.subscribe_inputs(self.sim_dealer.see)
        self.table.subscribe_inputs(self.operator.saw)
        self.handler = TableHandler(self.table, lambda: self._base, status=self.status,
                                    open_refusal=self._open_refusal, device=self.operator)
        self.table.start()
        self.clock.start(self.table.put)  # its first report is queued before any command
        if report.round is not None:
            # The restart was fed to the table as the controller going offline (recovery);
            # it is back now, so "No more bets" no longer waits for it.
            self.table.put(dev.DeviceOnline(RESTART_DEVICE, time.monotonic()))
        self.operator.start()
        if self.sim_dealer is not None:
            self.sim_dealer.start()
        self.device.start()
        if self.device.simulated and not self._device_online.wait(SIM_ONLINE_SECONDS):
            # a sim on our own pty that does not come up is a bug or a stolen pty: say so
            log.warning("simulated device not online yet", device=self.device.name,
                        error=getattr(self.device.driver, "last_error", ""))
        self.retention.start()
        if self.protection is not None:  # last: its reading competes with the start for the CPU
            self.protection.start()
        # a journal nobody reviews (a bench's temporary one) is not checked in the background
        hours = 0 if journal.ephemeral else journal.background_check_hours
        self.background_check = BackgroundCheck(
            self.writer, key, every=hours * 3600.0 if hours else None,
            first_after=float(journal.background_check_delay_s),
            on_outcome=lambda result: self._background_outcome(result, key))
        self.background_check.start()  # a process of its own, after READY's work

    def _journal_check(self, check: StartupCheck, key: bytes | None,
                       found_seq: int | None) -> None:
        """Damage found at start (journaled first thing, at ``found_seq``): dealing held until
        a supervisor acknowledges it; otherwise the verified mark moves to where the check
        ended."""
        assert self.writer is not None and self.table is not None
        writer = self.writer
        if found_seq is None:
            if check.report is None:  # a new journal
                mark_new_journal(writer.directory, writer.path, key)
            mark_clean(check, key, self.config.table_id)
            return
        self.table.hold_for_journal(self._hold(check, key, found_seq))

    def _hold(self, check: StartupCheck, key: bytes | None, found_seq: int,
              found_when: str = "at start") -> JournalHold:
        """The hold for damage journaled at ``found_seq`` (the alert: the log line, then
        ``journal_hold`` in ``round.status`` and the status line)."""
        assert self.writer is not None
        writer = self.writer
        log.error("journal damaged: dealing held until a supervisor acknowledges it",
                  found=check.describe(), found_seq=found_seq, found_when=found_when)

        def acknowledge(actor: str, role: str, reason: str) -> int:
            return record_acknowledgement(writer, check, found_seq, actor=actor, role=role,
                                          reason=reason, key=key)

        return JournalHold(found_seq, check.describe(), acknowledge, found_when)

    def _background_outcome(self, result: CheckResult, key: bytes | None) -> None:
        """On the checker's thread: journal ``journal_check``; a break is then journaled and
        held as the start-up check's is (the hold set on the table thread)."""
        writer, table = self.writer, self.table
        if writer is None or table is None:
            return
        record_result(writer, result)
        log.info("background journal check", outcome=result.outcome.value,
                 records=result.records, files=result.files, seconds=result.seconds)
        if result.outcome is not CheckOutcome.DAMAGED or result.problem is None:
            return
        with self._mark_lock:  # the mark read, the break kept pending: no daily pass between
            check = background_damage(writer.directory, result.problem, key)
            if check.damage is None:
                log.warning("journal damage found again by the background check "
                            "(acknowledged before)", found=check.describe())
                return
            if table.journal_hold is not None:  # its acknowledgement is due first
                log.error("journal damage found by the background check while a hold is "
                          "waiting", found=check.describe())
                return
            found_seq = record_damage(writer, check, key)
        table.put(self._hold(check, key, found_seq, "by the background check"))

    @staticmethod
    def _advance(check: StartupCheck | None) -> None:
        if check is not None and check.damage is not None:
            log.error("journal damaged (found by the running check; the next start holds "
                      "dealing)", found=check.describe())

    def close(self) -> None:
        """The clock and the device's operator first (no more commands), then the device (no
        more inputs), the table (after what is queued), and the journal (``journal_closed``)."""
        steps: list[Callable[[], None]] = [self.clock.close]
        if self.background_check is not None:  # its outcome is journaled: before the writer
            steps.append(self.background_check.close)
        # the operator before the device: a command it is sending (the last round's END_ROUND)
        # finishes on an open link instead of failing "not connected" at every shutdown
        if self.operator is not None:
            steps.append(self.operator.close)
        if self.sim_dealer is not None:
            steps.append(self.sim_dealer.close)
        if self.device is not None:
            steps.append(self.device.close)
        if self.protection is not None:  # its late findings go to the table: before it
            steps.append(self.protection.close)
        if self.table is not None:
            steps.append(self.table.close)
        if self.retention is not None:
            steps.append(self.retention.close)
        if self.writer is not None:
            steps.append(self.writer.close)
            check, key = self.journal_check, self.writer.hmac_key
            if check is not None and check.damage is None:
                table_id = self.config.table_id
                def advance_at_stop() -> None:
                    with self._mark_lock:
                        self._advance(advance_mark(check.directory, key, table_id))

                steps.append(advance_at_stop)
        # the verdict belongs to this running service: a later table in the same process (a
        # test, a second bench) journals its own, never this one's
        steps.append(selfcheck_status.reset)
        for step in steps:
            try:
                step()
            except Exception:
                log.exception("shutdown step failed", step=repr(step))
        self.device = self.operator = self.table = self.writer = self.retention = None
        self.sim_dealer = self.protection = self.background_check = None

    @property
    def _base(self) -> int:
        """The journal round base of the running session. Read live: the journal starts a
        session at each clean round boundary, so the base moves with the rounds."""
        table = self.table
        return table.journaled.session.base if table is not None else 0

    # events ---------------------------------------------------------------------------------
    def _published(self, events: list[ev.RoundEvent]) -> None:
        """After the input that caused them (so ``round.status`` already shows their effect):
        every event to the watchers, and the ones that need attention to the log."""
        for event in events:
            self._publish_one(event)

    def _publish_one(self, event: ev.RoundEvent) -> None:
        if isinstance(event, ev.DeviceNoted) and event.detail == "DeviceOnline":
            self._device_online.set()
        table = self.table
        if table is None:
            self.publish(event_json(event, self._base))
        else:
            # the journal's own text of the payload when it has it: a studio's settlement
            # (345 kB) is then encoded once, for the journal, not again for the watchers
            name = type(event).__name__
            shown = {"type": name, **table.journaled.payload_of(event)}
            text = table.journaled.payload_text_of(event)
            self.publish(shown if text is None else EncodedEvent(shown, watch_text(name, text)))
        if isinstance(event, (ev.SupervisorRequired, ev.RoundVoided, ev.DeckBlocked,
                              ev.CommandRefused)):
            log.info("table event", round_event=type(event).__name__,
                     **{k: v for k, v in event_json(event, self._base).items()
                        if k in ("round", "kind", "clause", "reason", "command")})

    # health and status ----------------------------------------------------------------------
    def device_status(self) -> dict[str, Any]:
        device = self.device
        if device is None:
            return {}
        driver = device.driver
        online = bool(getattr(driver, "online", False))
        operator = self.operator.status() if self.operator else None
        return {"name": device.name, "kind": self.config.device.kind.value,
                "dialect": self.config.device.dialect.value if self.config.device.dialect
                else None, "url": device.where, "online": online,
                "last_error": getattr(driver, "last_error", "") or None,
                "operator_error": (self.operator.last_error or None) if self.operator
                else None,
                "operator": operator,
                "cards_left": operator.get("cards_left") if operator else None,
                "identity": _identity_json(getattr(driver, "identity", None))}

    def status(self) -> dict[str, Any]:
        """Extra fields of ``round.status``: the table, the device, the journal, recovery."""
        writer = self.writer
        device = self.device_status()
        snap = self.table.snapshot.to_json() if self.table is not None else None
        layout = self.config.layout()
        return {"table": self.config.table_id, "game": self.config.game.value,
                # the cloth and its limits: what the dealer's screen offers and shows
                "layout": {"boxes": list(layout.boxes),
                           "limits": {bet: {"min": limit.minimum, "max": limit.maximum}
                                      for bet, limit in layout.limits.items()},
                           "settle_on_deal_complete": layout.settle_on_deal_complete},
                "device": device,
                "waits": waits({**snap, "open_refused": self._open_refusal()},
                               device.get("operator")) if snap else [],
                "journal": {"directory": str(self.config.journal.directory),
                            "seq": writer.seq if writer else None,
                            "last_hash": writer.last_hash if writer else None,
                            "retention": self.retention.status() if self.retention else None,
                            "background_check": self.background_check.status()
                            if self.background_check else None},
                "recovery": self.recovery.to_dict() if self.recovery else None,
                "software": self.software.to_json() if self.software else None,
                "clock": self.clock.status()}

    def _open_refusal(self) -> str | None:
        """Config ``software.verify = "required"`` and the check failed: no round opens."""
        if self.config.software.verify is not SoftwareVerify.REQUIRED or self.software is None \
                or self.software.verified:
            return None
        return f"software not verified ({self.software.summary()}); config requires it"

    def status_line(self, alive: bool = True) -> str:
        """"round 1234 dealing, shuffler online" plus what needs attention."""
        if self.table is None:
            return "table not running"
        snap = self.table.snapshot
        parts = [f"round {snap.round} {snap.state}" if snap.round
                 else f"table {self.config.table_id} {snap.state}"]
        device = self.device_status()
        if device:
            if device["online"]:
                parts.append(f"{device['name']} online")
            else:
                why = device["last_error"] or "not connected"
                parts.append(f"{device['name']} offline ({why})")
            if device["operator_error"]:
                parts.append(device["operator_error"])
        operator = device.get("operator") if device else None
        if operator and operator.get("role") and operator.get("waits_for") != "the table":
            parts.append(f"{device['name']} {operator['state']}: waits for "
                         f"{operator['waits_for']} ({operator['way_out']})")
        if snap.held_for:
            parts.append(f"held for a supervisor: {snap.held_for}")
        if snap.deck_blocked:
            parts.append(f"deck blocked: {snap.deck_blocked}")
        clock = self.clock.status()
        if snap.clock_blocks:
            parts.append(f"rounds refused: {snap.clock_blocks} (supervisor clock-override)")
        elif not clock.get("trusted", False):
            parts.append(f"clock untrusted: {clock.get('reason') or 'not read yet'}")
        if snap.journal_failures:
            parts.append(f"{snap.journal_failures} input(s) not journaled")
        if snap.journal_behind:
            parts.append(f"{snap.journal_behind} outcome record(s) waiting for the journal")
        if snap.journal_hold:
            parts.append(f"journal damaged, commands held for a supervisor: {snap.journal_hold}")
        if self.config.journal.hmac_key_file is None:
            parts.append("journal NOT keyed (HMAC off)")
        if not alive:
            parts.append("table thread not answering")
        return ", ".join(parts)

    def health(self, timeout: float) -> Health:
        alive = self.table is not None and self.table.probe(timeout)
        return Health(alive, self.status_line(alive))


def _identity_json(identity: dev.DeviceIdentity | None) -> dict[str, Any] | None:
    """Which machine the device last said it is (``IDENTIFY``), for ``round.status``;
    ``None`` before it answered, or for a device that cannot say."""
    if not isinstance(identity, dev.DeviceIdentity):
        return None
    return {"vendor": identity.vendor, "model": identity.model, "serial": identity.serial,
            "firmware_version": identity.firmware_version}
