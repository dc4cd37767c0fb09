"""The service's table thread: one queue, one thread, the journaled table, and answers.

:class:`~controller.journal.recorder.JournaledTable` records every input before the table acts
on it and every output before anyone sees it; its :meth:`process` runs one input on the calling
thread. This module owns the thread that calls it: the ONE table loop (issue 35). Neither the
table nor the journal has a loop of its own; the service's wiring, the bench, the crash campaign,
the delivery tests and the end-to-end rig all run a :class:`TableThread` around the recovered
journaled table (``tests/test_one_table_loop.py`` holds that no other module starts one). The
service can put two things on the same queue besides inputs, neither of which reaches the table
or the journal:

* a :class:`Ticket` around an operator command: the thread collects exactly the round events
  that command caused (processing is synchronous) and wakes the control handler, which returns
  the table's own answer: accepted with its events, or the refusal and its reason;
* a liveness marker (:meth:`TableThread.probe`): it passes only when the thread has worked
  through everything queued before it, so a hung table (a stuck fsync, a deadlock) stops the
  systemd watchdog pings and systemd restarts the service, whose recovery continues the round.

When the journal cannot take the outcome of an input (a full disk), the command's answer is not
``accepted`` but the journal error, the status shows ``awaiting_journal`` and the thread retries
:meth:`~controller.journal.recorder.JournaledTable.flush` when idle, backing off from
:data:`RETRY_FIRST_SECONDS` to :data:`RETRY_MAX_SECONDS`, until the records are written; only
then does anyone (watchers, the device operator) see those events.

Refused commands and link errors are journaled in full only up to a per-source limit
(:mod:`.floodgate`): past it, a link error is counted instead of recorded, and a command of the
account over its limit is refused unheard (it reaches neither the table nor the journal); when
the source's window ends the thread journals one ``flood_summary`` with the count. The thread
wakes for a summary that falls due while the queue is quiet.

After each input the thread publishes an immutable :class:`Snapshot` (state, round, wagers,
what the round waits for) that the control thread reads without locks: ``round.status`` and
``wager.list`` never touch table state from another thread.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from controller.journal.codec import journal_round
from controller.journal.errors import JournalBehindError, JournalError
from controller.journal.recorder import JournaledTable
from controller.service.protocol import AWAITING_JOURNAL
from controller.service.wiring.floodgate import FLOOD_SUMMARY, Floodgate, FloodKind, FloodSummary
from controller.settlement.model import Wager
from controller.table import commands as cmd
from controller.table import events as ev
from drivers import events as dev
from drivers.backoff import ExponentialBackoff, Jitter

log = structlog.get_logger(__name__)

Subscriber = Callable[[ev.RoundEvent], None]
BatchSubscriber = Callable[[list[ev.RoundEvent]], None]
InputSubscriber = Callable[[object, list[ev.RoundEvent]], None]
_STOP = object()
RETRY_FIRST_SECONDS = 0.05
RETRY_MAX_SECONDS = 5.0
JOURNAL_RETRY = ExponentialBackoff(RETRY_FIRST_SECONDS, RETRY_MAX_SECONDS, jitter=Jitter.NONE)
"""The waits between tries to write outcome records the journal could not take: doubling, no
jitter (one thread of one process; nothing to spread)."""
OPTIONS_DEADLINE_ACTOR = "options-deadline"
"""The actor of the input the table thread gives when the options' deadline passes."""


@dataclass(slots=True, eq=False)
class Ticket:
    """One operator command and, once handled, the events it caused (or why it was not)."""

    command: object
    source: str | None = None
    """The account the command came from (the kernel's word, :mod:`.floodgate`); ``None``:
    not limited (the service's own commands)."""
    done: threading.Event = field(default_factory=threading.Event)
    events: list[ev.RoundEvent] = field(default_factory=list)
    error: str | None = None
    """Set when the input could not be journaled (and so was not acted on)."""


@dataclass(frozen=True, slots=True)
class JournalHold:
    """Damage the start-up check found (journaled at ``found_seq``); ``acknowledge(actor,
    role, reason)`` journals a supervisor's acknowledgement and returns its seq."""

    found_seq: int
    description: str
    acknowledge: Callable[[str, str, str], int]
    found_when: str = "at start"
    """When it was found: ``at start``, or ``by the background check`` (put on the queue by
    the running service's full check, :mod:`controller.journal.background`)."""


@dataclass(frozen=True, slots=True)
class AcknowledgeJournal:
    """A supervisor acknowledges the journal damage found at start (a service-level command:
    journaled as ``journal_damage_acknowledged``, never given to the table)."""

    actor: str
    role: str
    reason: str


@dataclass(slots=True, eq=False)
class _Marker:
    passed: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the table looks like after the last input (built on the table thread)."""

    round: int | None
    state: str
    wagers: tuple[Wager, ...] = ()
    hands: tuple[tuple[str, tuple[str, ...]], ...] = ()
    held_for: str | None = None
    """The irregularity and clause a supervisor must decide, when the round is held."""
    hold_options: tuple[str, ...] = ()
    """What the table accepts as the supervisor's decision on that hold (the ruling's options,
    and ``void``), so ``round.status`` offers only those."""
    options_pending: tuple[str, ...] = ()
    """Boxes with a player whose option is awaited."""
    options_pending_players: tuple[dict[str, str | None], ...] = ()
    """Each player (box and player id) whose option is awaited (RWS-NC3P 5.7: per Player)."""
    options_deadline_s: int | None = None
    """How long the options announced last stay open (None: no options open)."""
    decisions_due: tuple[str, ...] = ()
    offline: tuple[tuple[str, str], ...] = ()
    deck_blocked: str | None = None
    clock_blocks: str | None = None
    """Why the ``[clock]`` policy refuses new rounds (no supervisor override yet)."""
    clock_override: str | None = None
    inputs: int = 0
    journal_failures: int = 0
    journal_behind: int = 0
    """Round events the table decided that the journal has not taken yet (they do not count
    until it has)."""
    journal_hold: str | None = None
    """Damage found in the journal at start, until a supervisor acknowledges it."""

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "state": self.state,
                "wagers": [_wager(w) for w in self.wagers],
                "hands": {position: list(cards) for position, cards in self.hands},
                "held_for": self.held_for, "hold_options": list(self.hold_options),
                "options_pending": list(self.options_pending),
                "options_pending_players": [dict(p) for p in self.options_pending_players],
                "options_deadline_s": self.options_deadline_s,
                "decisions_due": list(self.decisions_due),
                "offline": dict(self.offline), "deck_blocked": self.deck_blocked,
                "clock_blocks": self.clock_blocks, "clock_override": self.clock_override,
                "inputs": self.inputs, "journal_failures": self.journal_failures,
                "journal_behind": self.journal_behind, "journal_hold": self.journal_hold}


def _wager(wager: Wager) -> dict[str, Any]:
    return {"id": wager.id, "position": wager.position, "bet": wager.bet,
            "amount": wager.amount, "player": wager.player, "seated": wager.seated}


class TableThread:
    """``TableThread(journaled)``; drivers ``put`` on :attr:`inputs`; :meth:`command` answers."""

    def __init__(self, journaled: JournaledTable,
                 clock: Callable[[], float] = time.monotonic, *,
                 floodgate: Floodgate | None = None) -> None:
        self.journaled = journaled
        self.floodgate = floodgate or Floodgate()
        self._clock = clock
        self._options_due: float | None = None
        """When the options announced last close (``clock`` time), or None."""
        self._options_offer: int | None = None
        self.inputs: queue.Queue[object] = queue.Queue()
        self.subscribers: list[Subscriber] = []
        self.batch_subscribers: list[BatchSubscriber] = []
        self.input_subscribers: list[InputSubscriber] = []
        self._collected: list[ev.RoundEvent] = []
        self._count = 0
        self.journal_hold: JournalHold | None = None
        self.snapshot = self._snap()
        journaled.subscribe(self._on_output)
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"table-{journaled.layout.table_id}")

    def subscribe(self, subscriber: Subscriber) -> None:
        """Before :meth:`start`: called on the table thread with every journaled event."""
        self.subscribers.append(subscriber)

    def subscribe_batches(self, subscriber: BatchSubscriber) -> None:
        """Before :meth:`start`: called on the table thread after each input with all the
        events it caused, in order. A reactor that must not act between two events of one
        input (the last card's assignment and the DealComplete it completes) uses this."""
        self.batch_subscribers.append(subscriber)

    def subscribe_inputs(self, subscriber: InputSubscriber) -> None:
        """Before :meth:`start`: called on the table thread after each input (a command or a
        device event) with the input and the events it caused (maybe none), in the table's
        order. The device operator follows the device and the round together this way."""
        self.input_subscribers.append(subscriber)

    def start(self) -> None:
        self._arm_options_deadline()  # options recovered open: their deadline counts from now
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop after what is queued (commands get their answers) and join."""
        self.inputs.put(_STOP)
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # from other threads ---------------------------------------------------------------------
    def put(self, item: object) -> None:
        self.inputs.put(item)

    def command(self, command: object, timeout: float, *,
                source: str | None = None) -> Ticket | None:
        """Queue ``command`` and wait (bounded) for the table to handle it; ``None`` when it
        did not within ``timeout`` (it stays queued and will be handled). ``source``: the
        account it came from, whose refused commands are limited (:mod:`.floodgate`)."""
        ticket = Ticket(command, source)
        self.inputs.put(ticket)
        return ticket if ticket.done.wait(timeout) else None

    def probe(self, timeout: float) -> bool:
        """``True`` when the table thread worked through the queue up to a marker in time."""
        if not self._thread.is_alive():
            return False
        marker = _Marker()
        self.inputs.put(marker)
        return marker.passed.wait(timeout)

    # the thread -----------------------------------------------------------------------------
    def _run(self) -> None:
        tries = JOURNAL_RETRY.retries()
        while True:
            behind = bool(self.journaled.unrecorded)
            if not behind:
                tries.reset()
            self._options_deadline()
            timeout = JOURNAL_RETRY.delay(tries.failures + 1) if behind else None
            if self._options_due is not None:
                left = max(self._options_due - self._clock(), 0.0)
                timeout = left if timeout is None else min(timeout, left)
            flood_due = self.floodgate.next_due()
            if flood_due is not None:
                timeout = flood_due if timeout is None else min(timeout, flood_due)
            try:
                item = self.inputs.get(timeout=timeout)
            except queue.Empty:
                if behind:
                    self._catch_up()
                    tries.failed()
                self._record_floods(self.floodgate.due())
                continue
            if item is _STOP:
                self._record_floods(self.floodgate.drain())
                return
            if behind:  # its own batch: a command's answer holds only what it caused
                self._catch_up()
            if isinstance(item, _Marker):
                item.passed.set()
                continue
            if isinstance(item, JournalHold):  # the background check found a break
                self._hold_found_later(item)
                continue
            if not self._flooding(item):
                self._handle(item)
            self._record_floods(self.floodgate.due())

    def _handle(self, item: object) -> None:
        """One input (or a ticket around a command) through the journaled table."""
        ticket = item if isinstance(item, Ticket) else None
        self._collected = collected = ticket.events if ticket else []
        try:
            if ticket is None or not self._held(ticket):
                self.journaled.process(ticket.command if ticket else item)
        except JournalError as error:
            # not recorded -> not acted on (JournaledTable's rule); or recorded and acted
            # on but its outcome not durable yet (behind): either way not "accepted"
            behind = isinstance(error, JournalBehindError)
            self.journaled.failures += 1
            log.error("outcome not journaled yet; retrying" if behind
                      else "input not journaled; not acted on", input=_name(item),
                      error=str(error))
            if ticket is not None:
                ticket.error = (f"the journal has not recorded its outcome: {error}"
                                if behind else f"the journal cannot record it: {error}")
        except Exception:  # never let one input kill the table thread
            self.journaled.failures += 1
            log.exception("input failed", input=_name(item))
            if ticket is not None:
                ticket.error = "internal error; the service log has the details"
        finally:
            self._collected = []
            self._count += 1
            try:
                self.snapshot = self._snap()
            except Exception:
                log.exception("status snapshot failed")
            self._count_flood(item, collected)
            if ticket is not None:
                ticket.done.set()
            self._deliver_input(ticket.command if ticket else item, collected)
            if collected:
                self._deliver(collected)

    # flood limits (:mod:`.floodgate`) ---------------------------------------------------------
    def _flooding(self, item: object) -> bool:
        """Count ``item`` instead of handling it when its source is over its limit: a link
        error (not a numbered event: those are acknowledged only once journaled), or a
        command of an account whose refused commands filled its window (refused unheard)."""
        gate = self.floodgate
        chatter = _chatter(item)
        if chatter is not None:
            assert isinstance(item, dev.DeviceEvent)
            if not gate.throttled(chatter, item.device):
                return False
            if isinstance(item, dev.LinkError):
                gate.suppressed(chatter, item.device, item.reason, item.dropped)
            else:
                assert isinstance(item, dev.DeviceWarning)
                gate.suppressed(chatter, item.device, f"{item.code} {item.text}".strip())
            return True
        if not isinstance(item, Ticket) or item.source is None \
                or not isinstance(item.command, cmd.Command) \
                or not gate.throttled(FloodKind.COMMAND_REFUSED, item.source):
            return False
        name = type(item.command).__name__
        limits = gate.limits
        left = gate.seconds_left(FloodKind.COMMAND_REFUSED, item.source)
        reason = (f"{name} not handled: {item.source} had {limits.burst} commands refused "
                  f"within {limits.window_seconds:g} s; its commands are refused unheard for "
                  f"{left:.0f} s more (counted in the journal, not recorded one by one)")
        gate.suppressed(FloodKind.COMMAND_REFUSED, item.source, name)
        item.events = [ev.CommandRefused(round=self.journaled.table.machine.number,
                                         command=name, reason=reason)]
        item.done.set()
        return True

    def _count_flood(self, item: object, events: list[ev.RoundEvent]) -> None:
        """A handled link error, or a refused command with a source, counts in its window."""
        chatter = _chatter(item)
        if chatter is not None:
            assert isinstance(item, dev.DeviceEvent)
            self.floodgate.counted(chatter, item.device)
        elif isinstance(item, Ticket) and item.source is not None \
                and any(isinstance(e, ev.CommandRefused) for e in events):
            self.floodgate.counted(FloodKind.COMMAND_REFUSED, item.source)

    def _record_floods(self, summaries: list[FloodSummary]) -> None:
        """Journal each ended window's ``flood_summary``; one the journal cannot take yet is
        kept and tried again after a delay."""
        for done, summary in enumerate(summaries):
            try:
                self.journaled.writer.append(FLOOD_SUMMARY, summary.payload(),
                                             actor=summary.source)
            except JournalError as error:
                log.error("flood summary not journaled yet; kept", error=str(error),
                          source=summary.source, kind=summary.kind.value)
                self.floodgate.requeue(summaries[done:], RETRY_MAX_SECONDS)
                return
            log.warning("flood limited", kind=summary.kind.value, source=summary.source,
                        suppressed=summary.suppressed, first=summary.first_reason,
                        last=summary.last_reason)

    def _arm_options_deadline(self) -> None:
        """Measure the deadline of the options the table has just announced (or recovered)."""
        machine = self.journaled.table.machine
        offer = machine.offer if machine.state.value == "options" else None
        self._options_due = None if offer is None else self._clock() + offer.deadline_s
        self._options_offer = None if offer is None else offer.number

    def _options_deadline(self) -> None:
        """The table thread owns the clock: when the options' deadline has passed, it hands
        the table an :class:`~controller.table.commands.OptionsDeadline` input, journaled like
        any other, and the players who did not answer continue."""
        if self._options_due is None or self._clock() < self._options_due:
            return
        machine = self.journaled.table.machine
        offer = machine.offer if machine.state.value == "options" else None
        self._options_due = None
        if offer is None or offer.number != self._options_offer:
            return
        self._handle(cmd.OptionsDeadline(actor=OPTIONS_DEADLINE_ACTOR,
                                         deadline_s=offer.deadline_s, offer=offer.number))

    def hold_for_journal(self, hold: JournalHold) -> None:
        """Before :meth:`start`: the start-up check found the journal damaged; commands are
        refused (device events are still recorded) until :class:`AcknowledgeJournal`."""
        self.journal_hold = hold
        self.snapshot = self._snap()

    def _hold_found_later(self, hold: JournalHold) -> None:
        """On the table thread: hold like the start-up check does, unless a hold is already
        waiting (its acknowledgement is due first; a finding not acknowledged with it is found
        again by the next check)."""
        if self.journal_hold is not None:
            log.error("journal damage found while a hold is already waiting",
                      found=hold.description, found_seq=hold.found_seq)
            return
        self.hold_for_journal(hold)

    def _held(self, ticket: Ticket) -> bool:
        """Handle a ticket the journal hold decides: the acknowledgement itself, or any other
        command while held (refused with what was found). False: process it as usual."""
        hold, command = self.journal_hold, ticket.command
        if isinstance(command, AcknowledgeJournal):
            if hold is None:
                ticket.error = "no journal damage is waiting for acknowledgement"
                return True
            seq = hold.acknowledge(command.actor, command.role, command.reason)
            self.journal_hold = None
            log.warning("journal damage acknowledged; dealing resumes", actor=command.actor,
                        found_seq=hold.found_seq, acknowledged_seq=seq)
            return True
        if hold is None:
            return False
        ticket.error = (f"the journal was found damaged {hold.found_when} ({hold.description}); "
                        "nothing is dealt until a supervisor acknowledges it "
                        "(journal.acknowledge)")
        return True

    def _catch_up(self) -> None:
        """Idle while outcome records wait: try to write them (bounded by the backoff)."""
        self._collected = collected = []
        try:
            self.journaled.flush()
        except JournalError as error:
            log.debug("journal still behind", records=len(self.journaled.unrecorded),
                      error=str(error))
        finally:
            self._collected = []
            self.snapshot = self._snap()
        if collected:
            self._deliver(collected)

    def _deliver(self, events: list[ev.RoundEvent]) -> None:
        for subscriber in self.batch_subscribers:
            try:
                subscriber(list(events))
            except Exception:
                log.exception("subscriber failed", subscriber=repr(subscriber))

    def _deliver_input(self, item: object, events: list[ev.RoundEvent]) -> None:
        for subscriber in self.input_subscribers:
            try:
                subscriber(item, list(events))
            except Exception:
                log.exception("subscriber failed", subscriber=repr(subscriber))

    def _on_output(self, event: ev.RoundEvent) -> None:
        self._collected.append(event)
        if isinstance(event, ev.PlayerOptionsOffered):
            self._arm_options_deadline()
        for subscriber in self.subscribers:
            try:
                subscriber(event)
            except Exception:  # a broken watcher must not stop the table
                log.exception("subscriber failed", subscriber=repr(subscriber))

    def _snap(self) -> Snapshot:
        machine = self.journaled.table.machine
        held = machine.hold_info
        offer = machine.offer if machine.state.value == "options" else None
        hands: tuple[tuple[str, tuple[str, ...]], ...] = ()
        if machine.deal is not None:
            hands = tuple((position, tuple(card.code for card in cards))
                          for position, cards in machine.deal.hands.items() if cards)
        due: tuple[str, ...] = ()
        if machine.state.value == "decisions":
            due = tuple(p for p in machine.ante_positions() if p not in machine.decisions)
        behind = len(self.journaled.unrecorded)
        return Snapshot(
            round=journal_round(machine.number, self.journaled.session.base),
            state=AWAITING_JOURNAL if behind else machine.state.value,
            wagers=tuple(machine.active_wagers()),
            hands=hands,
            held_for=None if held is None or machine.state.value != "hold"
            else f"{held.kind.value} ({held.ruling.clause})",
            hold_options=tuple(action.value for action in machine.hold_decisions()),
            options_pending=offer.boxes if offer else (),
            options_pending_players=tuple(offer.to_json()) if offer else (),
            options_deadline_s=offer.deadline_s if offer else None,
            decisions_due=due,
            offline=tuple(sorted(machine.offline.items())),
            deck_blocked=machine.deck_blocked,
            clock_blocks=machine.clock_block if machine.clock_blocks_rounds() else None,
            clock_override=machine.clock_override,
            inputs=self._count,
            journal_failures=self.journaled.failures,
            journal_behind=behind,
            journal_hold=None if self.journal_hold is None else self.journal_hold.description)


def _chatter(item: object) -> FloodKind | None:
    """The flood kind of a device event that changes nothing at the table (a link error, a
    warning), when it is not numbered: a numbered event is acknowledged to its device only once
    journaled, so it is never counted away."""
    if not isinstance(item, (dev.LinkError, dev.DeviceWarning)) or item.origin is not None:
        return None
    return FloodKind.LINK_ERROR if isinstance(item, dev.LinkError) else FloodKind.DEVICE_WARNING


def _name(item: object) -> str:
    return type(item.command if isinstance(item, Ticket) else item).__name__
