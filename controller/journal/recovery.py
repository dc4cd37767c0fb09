"""Recovery after a restart: rebuild the table from the journal, then apply the game's
power-failure clause to a round the restart interrupted.

1. ``recovery_started`` is journaled (what was found: last seq, inputs replayed, divergences).
2. The last session's INPUT records are replayed through a fresh Table (:mod:`.replay`); only
   the last session is read (:func:`~controller.journal.reader.iter_from_last`), and the recorder
   starts a session before every round that only the TableMemory links to the ones before, so a
   restart replays at most about one round however long the service ran (earlier sessions are
   the auditor's, ``tablectl journal replay``). Its
   regenerated outputs are compared with the recorded ones. Outputs of the last input that the
   power cut kept out of the journal are recorded now (the input was durable before the table
   acted on it, so what it decided is decided again, identically: no card is lost).
3. If a round was in progress, the restart is fed to the table as the interruption it is: a
   ``DeviceOffline`` of the device ``controller``, journaled like any input. The table's own
   interruption ruling applies (no rule is re-implemented here): RWS-NC3P 5.4.1 / MBS-R3P 5.13.2
   continue when an outcome is established (``controller.table.established``); otherwise
   RWS-NC3P 5.4.2 void, MBS-R3P 5.13.1 players may withdraw all their wagers; the other games
   hold the round for a supervisor (as for any DeviceOffline). A round in betting goes on taking
   bets (nothing was decided); a round already held for a supervisor or the players stays held.
   A ``DeviceOnline`` of ``controller`` follows at once (journaled too): the controller is back.
4. ``recovery_completed`` names the decision. A round that had ended (settled or voided) is never
   touched again (RWS-NC3P 5.6, 5.12; MBS-R3P 5.12): if no round is open and dealing is not
   blocked, a new session starts from the TableMemory the last settlement left (MBS-R3P
   under-minimum players, RWS-3CP jackpot meter) with round numbers continuing.

A divergence in the session being continued (a recorded output the rules do not give, a record
that is not sound) means the journal's decisions for the round in progress cannot be reproduced.
Recovery does not refuse to start over it: a service that will not start leaves the round with
nobody able to conclude it. It rebuilds the table from the inputs it could read, applies the
restart as above, and names the first divergence in ``recovery_completed`` (``unproven``); the
service then holds every command until a supervisor acknowledges the damage
(``journal_damage_found``, docs/journal.md "Start-up check"), who may then void the round
(``supervisor.void``) or let it go on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import structlog

from controller.journal.provenance import layout_to_json, plain
from controller.journal.reader import Unsound, iter_from_last
from controller.journal.recorder import SESSION_STARTED, ClockProbe, JournaledTable, Phase
from controller.journal.replay import Divergence, DivergenceKind, Replayer
from controller.journal.writer import JournalWriter
from controller.table import events as ev
from controller.table.layout import TableLayout
from drivers import events as dev

log = structlog.get_logger("controller.journal.recovery")

RECOVERY_STARTED = "recovery_started"
RECOVERY_COMPLETED = "recovery_completed"
RESTART_DEVICE = "controller"
"""The device name of the interruption a restart feeds to the table."""


class Decision(str, Enum):
    NO_ROUND = "no_round"
    """No round was in progress: nothing to decide."""
    CONTINUE = "continue"
    """Outcome established: play continues to a conclusion (RWS-NC3P 5.4.1, MBS-R3P 5.13.2)."""
    VOID = "void"
    """Voided (RWS-NC3P 5.4.2), all wagers returned."""
    PLAYER_OPTIONS = "player_options"
    """Players may withdraw all their wagers (MBS-R3P 5.13.1)."""
    SUPERVISOR = "supervisor"
    """No clause: held for a supervisor's decision (void or continue)."""
    BETTING_CONTINUES = "betting_continues"
    """Interrupted while bets were offered: nothing was decided, betting goes on."""
    STILL_PENDING = "still_pending"
    """Interrupted while held for a supervisor or the players: that decision is still due."""


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    last_seq: int
    records: int
    inputs_replayed: int
    outputs_checked: int
    divergences: tuple[Divergence, ...]
    outputs_recorded: int
    round: int | None
    phase: str
    decision: Decision
    clause: str | None
    established: bool | None
    new_session: bool
    unproven: Divergence | None = None
    """The first divergence inside the session of the round in progress: its record cannot be
    reproduced, so the service holds the table for a supervisor (None: reproduced)."""

    def to_dict(self) -> dict[str, Any]:
        return {"last_seq": self.last_seq, "records": self.records,
                "inputs_replayed": self.inputs_replayed,
                "outputs_checked": self.outputs_checked,
                "divergences": [d.to_dict() for d in self.divergences],
                "outputs_recorded": self.outputs_recorded, "round": self.round,
                "phase": self.phase, "decision": self.decision.value, "clause": self.clause,
                "established": self.established, "new_session": self.new_session,
                "unproven": None if self.unproven is None else self.unproven.describe()}


def recover(writer: JournalWriter, layout: TableLayout, *, clock: ClockProbe | None = None
            ) -> tuple[JournaledTable, RecoveryReport]:
    """Rebuild the table from ``writer``'s journal and decide the interrupted round; returns the
    journaled table (not started) and what was done. ``clock`` says, in every session the
    table starts, how far the host clock can be trusted."""
    replayer = Replayer()
    with writer.lock:
        last_seq = writer.seq
    unsound: list[Divergence] = []

    def skip(line: Unsound) -> None:
        unsound.append(Divergence(line.seq or 0, DivergenceKind.UNREADABLE, line.describe()))

    for record in iter_from_last(writer.directory, SESSION_STARTED, on_unsound=skip):
        if record.seq > last_seq:
            break
        replayer.feed(record)
    report = replayer.report
    report.divergences[:0] = unsound
    current = replayer.current
    writer.append(RECOVERY_STARTED, {
        "last_seq": last_seq, "records": report.records, "inputs_replayed": report.inputs,
        "outputs_checked": report.outputs_checked,
        "divergences": [d.to_dict() for d in report.divergences[:20]],
        "unrecorded_outputs": len(current.pending) if current else 0}, money=True)
    if current is None:
        table = JournaledTable.new_session(writer, layout, reason="first start",
                                           delivered=replayer.delivered, clock=clock)
        return table, _complete(writer, report, last_seq, 0, None, Phase.NONE.value,
                                Decision.NO_ROUND, None, None, True)
    # an unreadable line is named first: what follows it (an output missing because its line
    # was skipped) is its consequence
    # a difference a listed rule change since the session's release explains is the ruling of
    # the release that wrote it, not damage: the round resumes as that release left it
    in_session = sorted((d for d in report.divergences if not d.explained and (
                         d.seq >= current.start_seq or d.kind is DivergenceKind.UNREADABLE)),
                        key=lambda d: (d.kind is not DivergenceKind.UNREADABLE, d.seq))
    tracker = current.tracker
    unproven = in_session[0] if in_session and (tracker.open or tracker.blocked) else None
    if unproven is not None:
        log.error("the round in progress cannot be reproduced from the journal; rebuilt from "
                  "the inputs that could be read, held for a supervisor",
                  first_divergence=unproven.describe(), divergences=len(in_session))
    journaled = JournaledTable(writer, current.session, table=current.table,
                               router=current.router, tracker=tracker, devices=current.devices,
                               delivered=replayer.delivered, clock=clock)
    pending, current.pending = current.pending, []
    for event, _payload in pending:
        journaled.record_output(event, track=False)
    journaled.flush()  # the journal must hold them before anything follows (raises if not)
    phase = tracker.phase
    round_number = tracker.round if tracker.open else None
    if not tracker.open and not tracker.blocked:
        if layout_to_json(layout) != layout_to_json(current.session.layout):
            log.info("layout changed between sessions", table=layout.table_id)
        fresh = JournaledTable.new_session(writer, layout, base=tracker.round,
                                           memory=tracker.memory, reason="restart",
                                           devices=current.devices,
                                           delivered=replayer.delivered, clock=clock)
        return fresh, _complete(writer, report, last_seq, len(pending), None, phase.value,
                                Decision.NO_ROUND, None, None, True)
    if not tracker.open:
        return journaled, _complete(writer, report, last_seq, len(pending), None, phase.value,
                                    Decision.NO_ROUND, None, None, False, unproven)
    if layout_to_json(layout) != layout_to_json(current.session.layout):
        log.warning("configured layout differs; the interrupted round keeps its own",
                    table=layout.table_id, round=round_number)
    outputs: list[ev.RoundEvent] = []
    journaled.subscribe(outputs.append)
    journaled.process(dev.DeviceOffline(RESTART_DEVICE, 0.0,
                                        reason="controller restarted during the round"))
    journaled.subscribers.remove(outputs.append)
    # the controller is back: it must not keep "No more bets" waiting for itself
    journaled.process(dev.DeviceOnline(RESTART_DEVICE, 0.0))
    decision, clause, established = _decided(outputs, phase)
    log.warning("interrupted round recovered", round=round_number, decision=decision.value,
                clause=clause)
    return journaled, _complete(writer, report, last_seq, len(pending), round_number,
                                phase.value, decision, clause, established, False, unproven)


def _decided(outputs: list[ev.RoundEvent], phase: Phase
             ) -> tuple[Decision, str | None, bool | None]:
    established = next((e.established for e in outputs
                        if isinstance(e, ev.OutcomeEstablished)), None)
    for event in outputs:
        if isinstance(event, ev.RoundVoided):
            return Decision.VOID, event.clause, established
        if isinstance(event, ev.PlayerOptionsOffered):
            return Decision.PLAYER_OPTIONS, event.clause, established
        if isinstance(event, ev.SupervisorRequired):
            return Decision.SUPERVISOR, event.clause, established
    ruled = next((e for e in outputs if isinstance(e, ev.IrregularityRuled)), None)
    if ruled is not None:
        return Decision.CONTINUE, ruled.clause, established
    if phase is Phase.BETTING:
        return Decision.BETTING_CONTINUES, None, None
    return Decision.STILL_PENDING, None, None


def _complete(writer: JournalWriter, report: Any, last_seq: int, recorded: int,
              round_number: int | None, phase: str, decision: Decision, clause: str | None,
              established: bool | None, new_session: bool,
              unproven: Divergence | None = None) -> RecoveryReport:
    result = RecoveryReport(
        last_seq=last_seq, records=report.records, inputs_replayed=report.inputs,
        outputs_checked=report.outputs_checked, divergences=tuple(report.divergences),
        outputs_recorded=recorded, round=round_number, phase=phase, decision=decision,
        clause=clause, established=established, new_session=new_session, unproven=unproven)
    payload = result.to_dict()
    payload["divergences"] = sum(1 for d in result.divergences if not d.explained)
    payload["explained"] = sum(1 for d in result.divergences if d.explained)
    writer.append(RECOVERY_COMPLETED, plain(payload),
                  round_id=None if round_number is None else str(round_number), money=True)
    return result
