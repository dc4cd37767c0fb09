"""Replay: the journal's input records through a fresh table, compared with its output records.

The journal is event-sourced: inputs are the facts (a card came out of the shuffler, a dealer
closed the bets), outputs are what the rules made of them. A replay rebuilds each session's
:class:`~controller.table.table.Table` from its ``session_started`` record (layout, round base,
TableMemory), feeds it every input in sequence order and checks that the outputs recorded after
each input are exactly the outputs the rules give now. This needs no HMAC key and trusts no
recorded decision: a settlement altered and re-hashed (chain intact) is still caught here,
because the arithmetic is redone.

The same engine gives recovery its rebuilt table (:mod:`controller.journal.recovery`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from controller.journal.codec import (
    INPUT_EVENT_TYPES,
    OUTPUT_EVENT_TYPES,
    decode_input,
)
from controller.journal.delivery import DeliveredWindow
from controller.journal.errors import JournalFormatError
from controller.journal.forms import JOURNAL_REVISION, declared_revision, in_form, unsaid
from controller.journal.policy import MONEY_EVENT_TYPES
from controller.journal.provenance import layout_from_json, memory_from_json
from controller.journal.record import Record, event_type_of
from controller.journal.rule_changes import (
    PLACEMENT_INPUTS,
    PlacementOutcome,
    RuleChange,
    changes_since,
    explaining,
)
from controller.journal.recorder import (
    DEVICE_IDENTIFIED,
    SESSION_STARTED,
    Phase,
    RoundTracker,
    Router,
    Session,
    output_record_payload,
)
from controller.journal.wagerbook import WagerBook
from controller.settlement import Wager
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.table import Table
from drivers import events as dev


class DivergenceKind(str, Enum):
    ALTERED = "altered"
    """A recorded output differs from the one the rules give for the same inputs."""
    UNEXPECTED = "unexpected"
    """A recorded output the rules do not give at all."""
    MISSING = "missing"
    """An output the rules give that the journal lacks (before the next input)."""
    UNDECODABLE = "undecodable"
    """An input record that does not decode to a command or device event."""
    NO_SESSION = "no_session"
    """Inputs with no ``session_started`` before them (an excerpt): nothing to replay from."""
    UNREADABLE = "unreadable"
    """A line of the session that is not a sound record (recovery skips it and holds the
    table: what it said cannot be known)."""
    UNACCOUNTED = "unaccounted"
    """The wagers ``bets_closed`` puts in action differ from what the round's own recorded
    acceptances, reductions and withdrawals placed (:mod:`controller.journal.wagerbook`): a
    wager in action that no record placed, even where today's rules regenerate it."""
    LATER_RELEASE = "later_release"
    """A session written by a later release than this one (its ``journal_revision`` is above
    this release's): its records may say what this code cannot read, so it is not replayed
    (replay it with that release or a later one)."""


@dataclass(frozen=True, slots=True)
class Divergence:
    seq: int
    kind: DivergenceKind
    detail: str
    recorded: Any = None
    replayed: Any = None
    explained_by: RuleChange | None = None
    """The listed rule change since the session's release that makes exactly this of an
    honest record (:mod:`controller.journal.rule_changes`); ``None``: unexplained."""

    @property
    def explained(self) -> bool:
        return self.explained_by is not None

    def describe(self) -> str:
        text = f"seq {self.seq}: {self.kind.value}: {self.detail}"
        if self.explained_by is not None:
            text += f" [explained: {self.explained_by.describe()}]"
        return text

    def to_dict(self) -> dict[str, Any]:
        out = {"seq": self.seq, "kind": self.kind.value, "detail": self.detail,
               "recorded": self.recorded, "replayed": self.replayed}
        if self.explained_by is not None:
            out["explained_by"] = self.explained_by.describe()
        return out


class ReplayVerdict(str, Enum):
    """What a replay found, worst first: the CLI's exit status says which (docs/journal.md)."""

    UNEXPLAINED = "unexplained"
    """A recorded decision today's rules do not give and no listed rule change explains:
    tampering or damage; its findings are listed first."""
    LATER_RELEASE = "later_release"
    """A session written by a later release, not replayed here."""
    EXPLAINED = "explained"
    """Every difference is one a listed rule change since the journal's release makes of an
    honest record; everything else reproduced."""
    REPRODUCED = "reproduced"
    """Every recorded decision reproduced by today's rules."""


@dataclass(slots=True)
class SessionReplay:
    """One session being replayed: its table, and the outputs of the last input not yet matched
    with a record."""

    session: Session
    start_seq: int
    declared: int | None
    """The ``journal_revision`` the session declares (``None``: written before revision 3)."""
    table: Table
    router: Router
    tracker: RoundTracker
    devices: dict[str, dev.DeviceIdentity] = field(default_factory=dict)
    pending: list[tuple[ev.RoundEvent, dict[str, Any]]] = field(default_factory=list)
    last_input_seq: int = 0
    inputs: int = 0
    placement: _Placement | None = None
    """A placement input whose recorded outputs are being gathered, to judge as a whole."""
    adopt: bool = False
    """A listed rule change explained a placement of the round: the table takes the journal's
    layout when bets close (or at the end of a recovery's replay, in betting)."""


@dataclass(slots=True)
class ReplayReport:
    records: int = 0
    sessions: int = 0
    inputs: int = 0
    outputs_checked: int = 0
    money_checked: int = 0
    settlements_checked: int = 0
    divergences: list[Divergence] = field(default_factory=list)
    unrecorded_tail: int = 0
    """Outputs of the journal's last input that are not recorded (a cut-off journal; recovery
    records them)."""

    @property
    def unexplained(self) -> list[Divergence]:
        return [d for d in self.divergences
                if not d.explained and d.kind is not DivergenceKind.LATER_RELEASE]

    @property
    def explained(self) -> list[Divergence]:
        return [d for d in self.divergences if d.explained]

    @property
    def verdict(self) -> ReplayVerdict:
        if self.unexplained:
            return ReplayVerdict.UNEXPLAINED
        if any(d.kind is DivergenceKind.LATER_RELEASE for d in self.divergences):
            return ReplayVerdict.LATER_RELEASE
        return ReplayVerdict.EXPLAINED if self.divergences else ReplayVerdict.REPRODUCED

    @property
    def ok(self) -> bool:
        """Nothing unexplained and nothing left unread: an honest journal of any earlier
        release is ``ok`` (a listed rule change is reported, never as tampering)."""
        return self.verdict in (ReplayVerdict.REPRODUCED, ReplayVerdict.EXPLAINED)

    def ordered(self) -> list[Divergence]:
        """The findings as surveillance reads them: unexplained ones first (a tampering is
        the first thing named), then a later release's sessions, then the explained ones; each
        group in sequence order."""
        def group(d: Divergence) -> int:
            if d.kind is DivergenceKind.LATER_RELEASE:
                return 1
            return 2 if d.explained else 0
        return sorted(self.divergences, key=lambda d: (group(d), d.seq))

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "verdict": self.verdict.value,
                "journal_revision": JOURNAL_REVISION,
                "records": self.records, "sessions": self.sessions,
                "inputs": self.inputs, "outputs_checked": self.outputs_checked,
                "money_checked": self.money_checked,
                "settlements_checked": self.settlements_checked,
                "unrecorded_tail": self.unrecorded_tail,
                "unexplained": len(self.unexplained), "explained": len(self.explained),
                "divergences": [d.to_dict() for d in self.ordered()]}


class Replayer:
    """Feed records in chain order (:meth:`feed`); :attr:`current` is the session being
    replayed, whose table is left in the state the journal's inputs put it in."""

    def __init__(self) -> None:
        self.report = ReplayReport()
        self.current: SessionReplay | None = None
        self.delivered = DeliveredWindow()
        """The latest numbered device events the journal holds, across sessions: after a
        restart the device resends what it never saw acknowledged (recovery hands this on)."""
        self._warned_no_session = False
        self._book = WagerBook()
        self._skipping = False
        """Inside a session of a later release (not replayed)."""

    def feed(self, record: Record) -> None:
        self.report.records += 1
        event_type = record.event_type
        if event_type == SESSION_STARTED:
            self._close_session(record.seq)
            self._open_session(record)
        elif self._skipping:
            return
        elif event_type in INPUT_EVENT_TYPES:
            self._input(record)
        elif event_type in OUTPUT_EVENT_TYPES:
            self._output(record)
        elif event_type == DEVICE_IDENTIFIED and self.current is not None:
            try:
                identity = decode_input("input_device", {"type": "DeviceOnline", "fields": {
                    "device": record.payload["device"],
                    "identity": record.payload["identity"]}})
            except (JournalFormatError, KeyError):
                return
            assert isinstance(identity, dev.DeviceOnline) and identity.identity is not None
            self.current.devices[identity.device] = identity.identity

    def finish(self) -> ReplayReport:
        current = self.current
        if current is not None:
            self._judge_placement(current)
            if current.adopt and current.tracker.phase is Phase.BETTING:
                self._adopt(current)  # recovery resumes the betting the journal recorded
            self.report.unrecorded_tail = len(current.pending)
        return self.report

    # -- sessions ----------------------------------------------------------------------------
    def _open_session(self, record: Record) -> None:
        payload = record.payload
        declared = declared_revision(payload)
        self._skipping = declared is not None and declared > JOURNAL_REVISION
        if self._skipping:
            self.current = None
            self._diverge(record.seq, DivergenceKind.LATER_RELEASE,
                          f"session written by a later release (journal revision {declared}; "
                          f"this release reads revisions up to {JOURNAL_REVISION}): not replayed")
            return
        session = Session(layout_from_json(payload["layout"]), int(payload["round_base"]),
                          memory_from_json(payload["memory"]))
        router = Router()
        table = Table(session.layout, [router], session.memory)
        tracker = RoundTracker(base=session.base, round=session.base, memory=session.memory)
        for key in payload.get("recent_origins", ()):
            if isinstance(key, list) and len(key) == 3:
                self.delivered.add((str(key[0]), int(key[1]), int(key[2])))
        replay = SessionReplay(session, record.seq, declared, table, router, tracker)
        router.collect = lambda event: self._regenerated(replay, event)
        self.current = replay
        self.report.sessions += 1

    def _close_session(self, seq: int) -> None:
        current = self.current
        if current is None:
            return
        self._judge_placement(current)
        self._missing(current)

    def _missing(self, current: SessionReplay) -> None:
        for event, payload in current.pending:
            self._diverge(current.last_input_seq, DivergenceKind.MISSING,
                          f"the rules give {event_type_of(event)} ({_name(payload)}) after "
                          f"input seq {current.last_input_seq}; the journal does not record "
                          "it", None, payload)
        current.pending.clear()

    def _regenerated(self, replay: SessionReplay, event: ev.RoundEvent) -> None:
        replay.tracker.see(event)
        replay.pending.append((event, output_record_payload(event, replay.session.base)))

    # -- records -----------------------------------------------------------------------------
    def _input(self, record: Record) -> None:
        current = self.current
        if current is None:
            if not self._warned_no_session:
                self._warned_no_session = True
                self._diverge(record.seq, DivergenceKind.NO_SESSION,
                              "input recorded before any session_started: cannot replay")
            return
        self._judge_placement(current)
        self._missing(current)
        try:
            item = decode_input(record.event_type, record.payload)
        except JournalFormatError as error:
            self._diverge(record.seq, DivergenceKind.UNDECODABLE, str(error))
            return
        if isinstance(item, dev.DeviceOnline) and item.identity is not None:
            current.devices[item.device] = item.identity
        self.delivered.see(item)
        current.last_input_seq = record.seq
        current.inputs += 1
        self.report.inputs += 1
        if current.adopt and isinstance(item, cmd.CloseBets):
            self._adopt(current)
        current.table.process(item)
        name = type(item).__name__
        if name in PLACEMENT_INPUTS and changes_since(current.declared):
            # judged as a whole once its recorded outputs are in (the next input, or the end)
            current.placement = _Placement(record.seq, name, record.payload.get("fields", {}),
                                           current.pending)
            current.pending = []

    def _output(self, record: Record) -> None:
        current = self.current
        if current is None:
            return
        recorded = {k: v for k, v in record.payload.items() if k != "provenance"}
        unaccounted = self._book.see(record.event_type, recorded)
        if unaccounted is not None:
            self._diverge(record.seq, DivergenceKind.UNACCOUNTED, unaccounted, recorded)
        if current.placement is not None:
            current.placement.recorded.append((record.seq, record.event_type, recorded))
            return
        self._compare(current, record.seq, record.event_type, recorded)

    def _compare(self, current: SessionReplay, seq: int, event_type: str,
                 recorded: dict[str, Any]) -> None:
        """One recorded output against the next the rules give, in the record's own form."""
        if not current.pending:
            self._diverge(seq, DivergenceKind.UNEXPECTED,
                          f"{event_type} is recorded but the rules give no such output "
                          f"after input seq {current.last_input_seq}", recorded, None)
            return
        event, replayed = current.pending.pop(0)
        replayed = in_form(replayed, unsaid(event_type, recorded, current.declared))
        self.report.outputs_checked += 1
        if event_type != event_type_of(event) or recorded != replayed:
            self._diverge(seq, DivergenceKind.ALTERED,
                          f"recorded {event_type} differs from the rules' "
                          f"{event_type_of(event)}{_first_difference(recorded, replayed)}",
                          recorded, replayed)
            return
        if event_type in MONEY_EVENT_TYPES:
            self.report.money_checked += 1
        if isinstance(event, (ev.RoundSettled, ev.RoundVoided)):
            self.report.settlements_checked += 1

    # -- rule changes ------------------------------------------------------------------------
    def _judge_placement(self, current: SessionReplay) -> None:
        """The placement input waiting for its outputs, judged as a whole: what the journal
        recorded for it is compared output by output with what the rules give (reproduced, or
        each difference a finding), unless the two differ exactly as a listed rule change
        since the session's release makes them: then one explained finding, the journal's
        layout vouched for, and adopted by the table when bets close."""
        placement, current.placement = current.placement, None
        if placement is None:
            return
        recorded = tuple((e, p) for _s, e, p in placement.recorded)
        replayed = tuple((event_type_of(e), p) for e, p in placement.replayed)
        change = None
        if recorded != replayed:
            change = explaining(current.declared, PlacementOutcome(
                current.session.layout.game.value, placement.command, placement.fields,
                recorded, replayed))
        if change is None:
            current.pending = placement.replayed + current.pending
            for seq, event_type, payload in placement.recorded:
                self._compare(current, seq, event_type, payload)
            return
        outcome = PlacementOutcome(current.session.layout.game.value, placement.command,
                          placement.fields, recorded, replayed)
        self._book.vouch(change.placed_unrecorded(outcome))
        current.adopt = True
        seq = placement.recorded[0][0] if placement.recorded else placement.seq
        self._diverge(seq, DivergenceKind.ALTERED,
                      f"input seq {placement.seq} ({placement.command}): recorded "
                      f"{', '.join(e for e, _ in recorded) or 'nothing'}; the rules give "
                      f"{', '.join(e for e, _ in replayed) or 'nothing'}",
                      [dict(p, event=e) for e, p in recorded],
                      [dict(p, event=e) for e, p in replayed], explained_by=change)

    def _adopt(self, current: SessionReplay) -> None:
        """The layout the journal recorded, on the table (see :meth:`_judge_placement`)."""
        current.adopt = False
        wagers = []
        for fields in self._book.layout():
            try:
                wagers.append(Wager(str(fields["id"]), str(fields["position"]),
                                    str(fields["bet"]), int(fields["amount"]),
                                    fields.get("player"), fields.get("seated")))
            except (KeyError, TypeError, ValueError):
                continue  # a malformed acceptance is the comparison's finding, not ours
        current.table.machine.book.adopt(tuple(wagers))

    def _diverge(self, seq: int, kind: DivergenceKind, detail: str, recorded: Any = None,
                 replayed: Any = None, *, explained_by: RuleChange | None = None) -> None:
        self.report.divergences.append(
            Divergence(seq, kind, detail, recorded, replayed, explained_by))


@dataclass(slots=True)
class _Placement:
    """A placement input (the only kind a listed rule change may explain) and its outputs."""

    seq: int
    command: str
    fields: Any
    replayed: list[tuple[ev.RoundEvent, dict[str, Any]]]
    recorded: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)


def _name(payload: dict[str, Any]) -> str:
    return f"an output of round {payload.get('round')}"


class _Absent:
    """A field one side does not have at all (printed so, not as ``None``)."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()


def _first_difference(recorded: Any, replayed: Any, path: str = "") -> str:
    """`` at settlement.results[0].net: recorded 900, rules 100`` (the first place they
    differ); a field only one side has reads ``(absent)`` on the other."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in sorted(set(recorded) | set(replayed)):
            a, b = recorded.get(key, ABSENT), replayed.get(key, ABSENT)
            if a != b:
                return _first_difference(a, b, f"{path}.{key}" if path else key)
        return ""
    if isinstance(recorded, list) and isinstance(replayed, list) and \
            len(recorded) == len(replayed):
        for index, (a, b) in enumerate(zip(recorded, replayed, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{index}]")
        return ""
    return f" at {path or 'payload'}: recorded {recorded!r}, rules {replayed!r}"


def replay_records(records: Iterable[Record]) -> ReplayReport:
    """Replay every session of ``records`` (chain order) and report the divergences."""
    replayer = Replayer()
    for record in records:
        replayer.feed(record)
    return replayer.finish()
