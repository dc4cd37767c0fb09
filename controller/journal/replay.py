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
from controller.journal.policy import MONEY_EVENT_TYPES
from controller.journal.provenance import layout_from_json, memory_from_json
from controller.journal.record import Record, event_type_of
from controller.journal.recorder import (
    DEVICE_IDENTIFIED,
    SESSION_STARTED,
    RoundTracker,
    Router,
    Session,
    output_record_payload,
)
from controller.journal.wagerbook import WagerBook
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


@dataclass(frozen=True, slots=True)
class Divergence:
    seq: int
    kind: DivergenceKind
    detail: str
    recorded: Any = None
    replayed: Any = None

    def describe(self) -> str:
        return f"seq {self.seq}: {self.kind.value}: {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "kind": self.kind.value, "detail": self.detail,
                "recorded": self.recorded, "replayed": self.replayed}


@dataclass(slots=True)
class SessionReplay:
    """One session being replayed: its table, and the outputs of the last input not yet matched
    with a record."""

    session: Session
    start_seq: int
    table: Table
    router: Router
    tracker: RoundTracker
    devices: dict[str, dev.DeviceIdentity] = field(default_factory=dict)
    pending: list[tuple[ev.RoundEvent, dict[str, Any]]] = field(default_factory=list)
    last_input_seq: int = 0
    inputs: int = 0


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
    def ok(self) -> bool:
        return not self.divergences

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "records": self.records, "sessions": self.sessions,
                "inputs": self.inputs, "outputs_checked": self.outputs_checked,
                "money_checked": self.money_checked,
                "settlements_checked": self.settlements_checked,
                "unrecorded_tail": self.unrecorded_tail,
                "divergences": [d.to_dict() for d in self.divergences]}


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

    def feed(self, record: Record) -> None:
        self.report.records += 1
        event_type = record.event_type
        if event_type == SESSION_STARTED:
            self._close_session(record.seq)
            self._open_session(record)
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
        if self.current is not None:
            self.report.unrecorded_tail = len(self.current.pending)
        return self.report

    # -- sessions ----------------------------------------------------------------------------
    def _open_session(self, record: Record) -> None:
        payload = record.payload
        session = Session(layout_from_json(payload["layout"]), int(payload["round_base"]),
                          memory_from_json(payload["memory"]))
        router = Router()
        table = Table(session.layout, [router], session.memory)
        tracker = RoundTracker(base=session.base, round=session.base, memory=session.memory)
        for key in payload.get("recent_origins", ()):
            if isinstance(key, list) and len(key) == 3:
                self.delivered.add((str(key[0]), int(key[1]), int(key[2])))
        replay = SessionReplay(session, record.seq, table, router, tracker)
        router.collect = lambda event: self._regenerated(replay, event)
        self.current = replay
        self.report.sessions += 1

    def _close_session(self, seq: int) -> None:
        current = self.current
        if current is None:
            return
        for _event, payload in current.pending:
            self._diverge(current.last_input_seq, DivergenceKind.MISSING,
                          f"the rules give {_name(payload)} after input seq "
                          f"{current.last_input_seq}; the journal does not record it", None,
                          payload)
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
        for _event, payload in current.pending:
            self._diverge(current.last_input_seq, DivergenceKind.MISSING,
                          f"the rules give {_name(payload)} after input seq "
                          f"{current.last_input_seq}; the journal does not record it", None,
                          payload)
        current.pending.clear()
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
        current.table.process(item)

    def _output(self, record: Record) -> None:
        current = self.current
        if current is None:
            return
        recorded = {k: v for k, v in record.payload.items() if k != "provenance"}
        unaccounted = self._book.see(record.event_type, recorded)
        if unaccounted is not None:
            self._diverge(record.seq, DivergenceKind.UNACCOUNTED, unaccounted, recorded)
        if not current.pending:
            self._diverge(record.seq, DivergenceKind.UNEXPECTED,
                          f"{record.event_type} is recorded but the rules give no such output "
                          f"after input seq {current.last_input_seq}", recorded, None)
            return
        event, replayed = current.pending.pop(0)
        replayed = _in_recorded_form(recorded, replayed)
        self.report.outputs_checked += 1
        if record.event_type != event_type_of(event) or recorded != replayed:
            self._diverge(record.seq, DivergenceKind.ALTERED,
                          f"recorded {record.event_type} differs from the rules' "
                          f"{event_type_of(event)}{_first_difference(recorded, replayed)}",
                          recorded, replayed)
            return
        if record.event_type in MONEY_EVENT_TYPES:
            self.report.money_checked += 1
        if isinstance(event, (ev.RoundSettled, ev.RoundVoided)):
            self.report.settlements_checked += 1

    def _diverge(self, seq: int, kind: DivergenceKind, detail: str, recorded: Any = None,
                 replayed: Any = None) -> None:
        self.report.divergences.append(Divergence(seq, kind, detail, recorded, replayed))


RESULT_FIELDS_ADDED = ("amount", "returned")
"""Fields each settlement result gained with issue 34 (what the wager was and what went back).
A settlement recorded before has none of them in any result; replay then compares it without
them, so an older journal still replays, and every field it did record (outcome, net, stake,
rule, components) is still compared."""


def _in_recorded_form(recorded: dict[str, Any], replayed: dict[str, Any]) -> dict[str, Any]:
    """``replayed`` without :data:`RESULT_FIELDS_ADDED` where the recorded settlement's
    results have none of them (a journal written before they existed); else as it is."""
    settlement, before = replayed.get("settlement"), recorded.get("settlement")
    if not isinstance(settlement, dict) or not isinstance(before, dict):
        return replayed
    old_results = before.get("results")
    if not isinstance(old_results, list) or not old_results or any(
            not isinstance(r, dict) or any(k in r for k in RESULT_FIELDS_ADDED)
            for r in old_results):
        return replayed
    results = [{k: v for k, v in r.items() if k not in RESULT_FIELDS_ADDED}
               if isinstance(r, dict) else r for r in settlement.get("results") or ()]
    return {**replayed, "settlement": {**settlement, "results": results}}


def _name(payload: dict[str, Any]) -> str:
    return f"an output of round {payload.get('round')}"


def _first_difference(recorded: Any, replayed: Any, path: str = "") -> str:
    """`` at settlement.results[0].net: recorded 900, rules 100`` (the first place they differ)."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in sorted(set(recorded) | set(replayed)):
            if recorded.get(key) != replayed.get(key):
                return _first_difference(recorded.get(key), replayed.get(key),
                                         f"{path}.{key}" if path else key)
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
