"""The journaled table: every input recorded before the table acts on it, every output recorded
before anyone else sees it.

It has no thread of its own: :meth:`JournaledTable.process` runs one input on the calling thread,
which is the service's table thread (:class:`~controller.service.wiring.tablethread.TableThread`,
the one loop, which owns the queue) or, synchronously, recovery and the tests.

Recording order (docs/journal.md, "Recording order"), for each input:

1. the input is appended as an ``input_command``/``input_device`` record; an input that decides
   money (:data:`~controller.journal.codec.MONEY_INPUT_TYPES`) is fsynced under the ``money``
   policy before step 2, so the table never acts on an input a power cut could erase. A
   numbered device event (one with an :class:`~drivers.events.EventOrigin`) is fsynced too and
   only then acknowledged to its device (:mod:`controller.journal.delivery`); a resend of one
   the journal already holds is acknowledged again and recorded as ``device_event_repeated``,
   not acted on twice;
2. ``table.process(input)`` runs on the same thread;
3. every round event the table emits is appended as an output record by the first (and only)
   table subscriber, the router; money-deciding outputs are fsynced under the ``money`` policy;
4. only then does the router hand the event to the other subscribers (settlement displays, the
   cage, the service). If the append fails the event goes nowhere: nobody acts on a decision that
   is not in the journal. The event, and every later event of the same input, is kept in order
   (:attr:`JournaledTable.unrecorded`) and the input ends in :class:`JournalBehindError`, so
   nobody is told it was done; :meth:`JournaledTable.flush` writes them, in order, before
   anything else is recorded (the service's table thread retries it, backing off, until the
   disk takes them). A restart in between loses nothing either: the input is durable, so
   recovery regenerates and records exactly these outputs.

Because the journal holds every input before its outputs, a replay of the inputs through a fresh
table (:mod:`controller.journal.replay`) regenerates the outputs exactly; that is what recovery
and ``tablectl journal replay`` rely on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

import structlog

from controller.journal.codec import (
    MONEY_INPUT_TYPES,
    actor_of,
    encode_input,
    encode_output,
    journal_round,
)
from controller.journal.delivery import DeliveredWindow, Delivery
from controller.journal.errors import JournalBehindError, JournalError
from controller.journal.forms import JOURNAL_REVISION, REVISION_FIELD
from controller.journal.record import event_type_of
from controller.journal.provenance import layout_to_json, plain, round_provenance, software
from controller.journal.writer import JournalWriter
from controller.settlement.model import TableMemory
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.awaited import AwaitedOptions
from controller.table.layout import TableLayout
from controller.table.table import Table
from drivers import events as dev

if TYPE_CHECKING:
    from controller.protection.guard import TableGuard

log = structlog.get_logger("controller.journal.recorder")

Subscriber = Callable[[ev.RoundEvent], None]
ClockProbe = Callable[[], Mapping[str, Any] | None]
"""What ``session_started`` says of the host clock (``ClockMonitor.session_clock``)."""
SESSION_STARTED = "session_started"
DEVICE_IDENTIFIED = "device_identified"
DEVICE_EVENT_REPEATED = "device_event_repeated"
RESYNCING = "waiting for the device to resend what it holds (controller started)"
"""Why a linked device is offline from :meth:`JournaledTable.attach_link` to its DeviceOnline."""
ROUND_BOUNDARY = "round boundary"
"""The ``reason`` of a session the recorder starts itself, before a round opens."""
CARRIED_ORIGINS = 64
"""Numbered device events named in each ``session_started``: more than a device holds
unacknowledged."""


class Phase(str, Enum):
    """Where the current round is, as the outputs tell it (for recovery and review)."""

    NONE = "none"
    BETTING = "betting"
    CLOSED = "closed"
    SHUFFLED = "shuffled"
    DEALING = "dealing"
    HOLD = "hold"
    OPTIONS = "options"
    DEALT = "dealt"
    REVEALED = "revealed"
    SETTLED = "settled"
    VOIDED = "voided"


@dataclass(slots=True)
class RoundTracker:
    """What the outputs say about the table: the current journal round, whether it is still
    open, whether dealing is blocked, and the TableMemory the last settlement left.

    Fed the same events live and in replay, so recovery knows what the recorder knew."""

    base: int = 0
    round: int = 0
    phase: Phase = Phase.NONE
    blocked: bool = False
    memory: TableMemory = field(default_factory=TableMemory)
    resumes_to: Phase = Phase.NONE
    """The phase a hold or the players' options return to."""
    awaited: AwaitedOptions = field(default_factory=AwaitedOptions)
    """The options (RWS-NC3P 5.7, MBS-R3P 5.7, 5.13.1) still awaited."""

    @property
    def options_pending(self) -> list[str]:
        """Boxes whose option is still awaited."""
        return self.awaited.positions

    @property
    def players_pending(self) -> list[ev.PlayerAtBox]:
        """The players whose option is still awaited (each Player answers for himself)."""
        return self.awaited.players

    @property
    def open(self) -> bool:
        return self.phase not in (Phase.NONE, Phase.SETTLED, Phase.VOIDED)

    def see(self, event: ev.RoundEvent) -> None:
        number = journal_round(event.round, self.base)
        if isinstance(event, ev.RoundOpened):
            self.round, self.phase = number or 0, Phase.BETTING
        elif isinstance(event, ev.DeckBlocked):
            self.blocked = True
        elif isinstance(event, ev.DeckReleased):
            self.blocked = False
        if number != self.round or not self.open:
            return
        if isinstance(event, ev.BetsClosed):
            self.phase = Phase.CLOSED
        elif isinstance(event, ev.ShuffleConfirmed) and self.phase is Phase.CLOSED:
            self.phase = Phase.SHUFFLED
        elif isinstance(event, ev.DealerRevealed):
            self.phase = Phase.REVEALED
        elif isinstance(event, (ev.CardAssigned, ev.BurnCard)):
            self.phase = Phase.DEALING
        elif isinstance(event, ev.DealComplete):
            self.phase = Phase.DEALT
        elif isinstance(event, ev.SupervisorRequired):
            self._suspend(Phase.HOLD)
        elif isinstance(event, ev.PlayerOptionsOffered):
            self._suspend(Phase.OPTIONS)
            self.awaited.offered(event)
        elif isinstance(event, ev.SupervisorDecided) and self.phase is Phase.HOLD:
            self.phase = self.resumes_to
        elif isinstance(event, ev.PlayerOptionTaken) and self.phase is Phase.OPTIONS:
            if self.awaited.taken(event):
                self.phase = self.resumes_to
        elif isinstance(event, ev.PlayerOptionsClosed) and self.phase is Phase.OPTIONS:
            self.awaited.clear()
            self.phase = self.resumes_to
        elif isinstance(event, ev.RoundSettled):
            self.phase, self.memory = Phase.SETTLED, event.settlement.memory
        elif isinstance(event, ev.RoundVoided):
            self.phase, self.memory = Phase.VOIDED, event.settlement.memory


    def _suspend(self, phase: Phase) -> None:
        if self.phase not in (Phase.HOLD, Phase.OPTIONS):
            self.resumes_to = self.phase
        self.phase = phase
        self.awaited.clear()


@dataclass(frozen=True, slots=True)
class Session:
    """One run of inputs through one Table instance: the unit a replay starts from."""

    layout: TableLayout
    base: int
    memory: TableMemory


class Router:
    """The table's only subscriber: journal first, then the other subscribers. During a replay
    it collects instead of recording (``collect`` set)."""

    def __init__(self, recorder: JournaledTable | None = None) -> None:
        self.recorder = recorder
        self.collect: Callable[[ev.RoundEvent], None] | None = None

    def __call__(self, event: ev.RoundEvent) -> None:
        if self.collect is not None:
            self.collect(event)
            return
        if self.recorder is None:
            raise RuntimeError("router has no recorder")
        self.recorder.record_output(event)


class JournaledTable:
    """A :class:`Table` behind a journal. :meth:`process` does one input on the calling thread:
    the service's table thread (:class:`~controller.service.wiring.tablethread.TableThread`),
    or recovery and tests, synchronously. It owns no thread or queue."""

    def __init__(self, writer: JournalWriter, session: Session, *, table: Table | None = None,
                 router: Router | None = None, tracker: RoundTracker | None = None,
                 devices: dict[str, dev.DeviceIdentity] | None = None,
                 delivered: DeliveredWindow | None = None,
                 clock: ClockProbe | None = None) -> None:
        self.writer = writer
        self.clock = clock
        self.session = session
        self.layout = session.layout
        self.router = router or Router()
        self.router.recorder = self
        self.router.collect = None
        self.table = table or Table(session.layout, [self.router], session.memory)
        self.tracker = tracker or RoundTracker(base=session.base, round=session.base,
                                               memory=session.memory)
        self.devices: dict[str, dev.DeviceIdentity] = dict(devices or {})
        self.delivery = Delivery(delivered)
        self.subscribers: list[Subscriber] = []
        self.failures = 0
        self.unrecorded: list[ev.RoundEvent] = []
        """Outputs the journal could not take yet, in order (:meth:`flush` writes them)."""
        self._encoded: dict[int, tuple[ev.RoundEvent, dict[str, Any], str | None]] = {}
        """This input's outputs as journaled (by identity): the payload and, where the record
        holds exactly it, its canonical text (:meth:`payload_of`, :meth:`payload_text_of`)."""
        self.unrecorded_error = ""
        self.guard: TableGuard | None = None
        """Game-protection monitors (set by the service's wiring, never during replay): they
        see every input in order, and their findings are recorded and handled as inputs."""

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def new_session(cls, writer: JournalWriter, layout: TableLayout, *, base: int = 0,
                    memory: TableMemory = TableMemory(), reason: str = "started",
                    devices: dict[str, dev.DeviceIdentity] | None = None,
                    delivered: DeliveredWindow | None = None,
                    clock: ClockProbe | None = None) -> JournaledTable:
        """Write ``session_started`` (layout, round base, TableMemory carried over, the host
        clock's quality) and return a journaled fresh table."""
        session = Session(layout, base, memory)
        _record_session(writer, session, reason, delivered, clock)
        return cls(writer, session, devices=devices, delivered=delivered, clock=clock)

    def _next_session(self) -> None:
        """Start a new session before a round opens, when only the TableMemory carries over
        (:meth:`~controller.table.core.RoundCore.only_memory_carries_over`): a fresh table
        from the memory behaves exactly as this one would, so recovery and replay can start
        from here instead of from the controller's start months ago."""
        machine = self.table.machine
        if machine.number == 0 or not machine.only_memory_carries_over():
            return
        session = Session(self.layout, self.session.base + machine.number, machine.memory)
        _record_session(self.writer, session, ROUND_BOUNDARY, self.delivery.delivered,
                        self.clock)
        self.session = session
        self.table = Table(session.layout, [self.router], session.memory)
        self.tracker.base = session.base

    # -- inputs ------------------------------------------------------------------------------
    def attach_link(self, device: str, link: dev.EventAcknowledger) -> None:
        """Before the table thread starts: ``device``'s driver (built with
        ``deferred_ack=True``) is acknowledged by this journal once each of its events is
        recorded.

        Until the driver reports the device online (after the device has resent everything it
        still holds, docs/protocols.md "RESYNC"), "No more bets" waits for it: a hand the device
        dispensed before this controller started, resent late, must not land in a round that
        opens meanwhile. The wait is recorded as the device's ``DeviceOffline`` (when no card
        of the round is dealt yet: mid-deal the round's own hands are what arrives, in order,
        and the recovery has ruled on the interruption already)."""
        self.delivery.attach(device, link)
        if self.table.machine.bets_still_open():
            self.process(dev.DeviceOffline(device, 0.0, reason=RESYNCING))

    def subscribe(self, subscriber: Subscriber) -> None:
        """Add a subscriber (before the table thread starts); it sees events after they are
        journaled."""
        self.subscribers.append(subscriber)

    def process(self, item: object) -> None:
        """Record one input (synced when it decides money), then let the table act on it.

        Outputs an earlier failed write left unrecorded are written first (:meth:`flush`); while
        the journal still cannot take them this raises and the input is neither recorded nor
        acted on. When an output of this input cannot be recorded, :class:`JournalBehindError`
        says so after the table has acted: the input is durable, its outcome is not yet."""
        self._encoded.clear()
        self.flush()
        if isinstance(item, DeviceIdentified):
            self.devices[item.device] = item.identity
            self.writer.append(DEVICE_IDENTIFIED, {"device": item.device,
                                                   "identity": item.identity})
            return
        round_id = str(self.tracker.round) if self.tracker.open else None
        numbered = item if isinstance(item, dev.DeviceEvent) and item.origin else None
        if numbered is not None and self.delivery.already_recorded(numbered):
            self.writer.append(DEVICE_EVENT_REPEATED, {"type": type(numbered).__name__,
                                                       "origin": numbered.origin},
                               round_id=round_id, actor=numbered.device)
            self.delivery.repeated(numbered)
            return
        if isinstance(item, dev.DeviceOnline) and item.identity is not None:
            self.devices[item.device] = item.identity
        if isinstance(item, cmd.OpenRound):
            self._next_session()
        guard = self.guard
        for finding in guard.before(item) if guard is not None else ():
            self.process(finding)  # a deck found short is blocked before the next shuffle
        event_type, payload = encode_input(item)
        try:
            self.writer.append(event_type, payload, round_id=round_id, actor=actor_of(item),
                               money=numbered is not None
                               or payload["type"] in MONEY_INPUT_TYPES, jsonable=True)
        except JournalError:
            if numbered is not None:
                self.delivery.not_recorded(numbered)
            raise
        if numbered is not None:
            self.delivery.recorded(numbered)
        self.table.process(item)
        for finding in guard.after(item) if guard is not None else ():
            self.process(finding)
        if self.unrecorded:
            raise JournalBehindError(
                f"{len(self.unrecorded)} outcome record(s) of {payload['type']} not written "
                f"({self.unrecorded_error}); it is not done until they are: retried before "
                "the next input")

    def flush(self) -> int:
        """Write the outputs a failed write left unrecorded, in their order, handing each on
        once written; the number written. Raises the writer's :class:`JournalError` (the rest
        stay queued) while the journal still cannot take them."""
        written = 0
        while self.unrecorded:
            event = self.unrecorded[0]
            self._write_output(event)
            del self.unrecorded[0]
            written += 1
            self._hand_on(event)
        if written:
            log.warning("journal caught up: outcome records written", records=written)
        return written

    def record_output(self, event: ev.RoundEvent, *, track: bool = True) -> None:
        """Journal one round event, then hand it on. When the journal cannot take it, it is
        kept in :attr:`unrecorded` (and so is every later one, so the journal's order stays the
        table's) and no subscriber sees it until :meth:`flush` has written it. ``track`` False:
        the tracker saw it already (recovery recording a replayed output)."""
        if track:
            self.tracker.see(event)
        if not self.unrecorded:
            try:
                self._write_output(event)
            except JournalError as error:
                self.unrecorded_error = str(error)
                log.error("outcome not journaled; held until the journal takes it",
                          round_event=type(event).__name__, error=str(error))
            else:
                self._hand_on(event)
                return
        self.unrecorded.append(event)

    def payload_of(self, event: ev.RoundEvent) -> dict[str, Any]:
        """``event`` as its output record's payload (:func:`encode_output`, without a round's
        provenance): taken from the journaling of the last input when it is one of its outputs,
        so the watchers' copy of a 2,000-result settlement is not encoded twice (issue 28).
        Call it on the table thread, before the next input; shared, so not to be changed."""
        known = self._encoded.get(id(event))
        if known is not None and known[0] is event:
            return known[1]
        return encode_output(event, self.session.base)

    def payload_text_of(self, event: ev.RoundEvent) -> str | None:
        """The canonical JSON text of :meth:`payload_of` ``event`` as its output record holds
        it, or ``None`` when there is none to reuse (not an output of the last input, or a
        ``round_opened``, whose record adds the round's provenance). Same thread, same
        moment as :meth:`payload_of`."""
        known = self._encoded.get(id(event))
        if known is not None and known[0] is event:
            return known[2]
        return None

    def _write_output(self, event: ev.RoundEvent) -> None:
        payload = encode_output(event, self.session.base)
        number = payload["round"]
        round_id = None if number is None else str(number)
        if isinstance(event, ev.RoundOpened):
            self._encoded[id(event)] = (event, dict(payload), None)
            payload["provenance"] = round_provenance(self.layout, self.devices)
            self.writer.append(event_type_of(event), payload, round_id=round_id)  # walked
            return
        _, text = self.writer.append_keeping_text(event_type_of(event), payload,
                                                  round_id=round_id, jsonable=True)
        self._encoded[id(event)] = (event, payload, text)

    def _hand_on(self, event: ev.RoundEvent) -> None:
        for subscriber in self.subscribers:
            try:
                subscriber(event)
            except Exception:  # a broken display must not stop the table
                log.exception("subscriber failed", subscriber=repr(subscriber))


def _record_session(writer: JournalWriter, session: Session, reason: str,
                    delivered: DeliveredWindow | None, clock: ClockProbe | None = None) -> None:
    """``session_started``: what a fresh table is built from, the latest numbered device
    events recorded (a resend of one after a restart is then still recognised when recovery
    reads only this session), and how far the host clock can be trusted (``clock``: the latest
    reading, or ``None`` where no clock monitor runs)."""
    recent = list(delivered)[-CARRIED_ORIGINS:] if delivered is not None else []
    writer.append(SESSION_STARTED, {
        "reason": reason, "round_base": session.base, "layout": layout_to_json(session.layout),
        "memory": plain(session.memory), "software": software(),
        REVISION_FIELD: JOURNAL_REVISION,
        "recent_origins": [list(key) for key in recent],
        "clock": clock() if clock is not None else None}, money=True)


@dataclass(frozen=True, slots=True)
class DeviceIdentified:
    """An input that is not the table's: which machine ``device`` is, recorded as
    ``device_identified`` (the floor pools a shuffler's evidence by its serial).

    The driver puts it on the table's queue from the same thread and under the same hold as
    its own events (:mod:`drivers.framed.identify`), so it is recorded before anything that
    machine did after its link came up: a ``DeviceOnline`` carrying the identity could not keep
    that order after a reboot, which reports no new online, and an identity asked while the
    events flow could land after the first cards of a swapped-in machine."""

    device: str
    identity: dev.DeviceIdentity


def output_record_payload(event: ev.RoundEvent, base: int) -> dict[str, Any]:
    """The payload a replay compares with the record (the record minus ``provenance``)."""
    return plain(encode_output(event, base))  # type: ignore[no-any-return]
