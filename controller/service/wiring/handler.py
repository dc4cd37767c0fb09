"""Control requests -> table commands, and the table's answer back.

Runs on the control-server thread: it builds the frozen command, hands it to the table thread
(:meth:`TableThread.command`) and waits a bounded time for the table's own answer, which is the
round events that command caused. A ``CommandRefused`` among them is the refusal, returned as
``refused`` with the table's reason (and clause) word for word; otherwise the command was
accepted and the events are returned. Reads (``round.status``, ``wager.list``) answer from the
table thread's last :class:`Snapshot`, never from table state; a face-down card in it is shown
only to a role that may see it (:mod:`controller.service.visibility`).

Who: the command's ``actor`` is the request's ``actor`` (who at the table gave it, e.g.
``dealer:1042``) joined to the account the kernel vouches for (``SO_PEERCRED``), so the journal
names both. The table ``role`` comes from the peer's groups: the supervisors group (and root or
the service's own account) act as supervisor, the operators group as dealer; the table then
refuses a dealer's supervisor decision with the clause that gives it to a supervisor.
"""

from __future__ import annotations

import pwd
from types import MappingProxyType
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from controller.errors import TablectlError
from controller.games.cards import parse_card
from controller.journal.codec import ROUND_EVENT_TYPES, encode_output
from controller.journal.rounds import round_outputs
from controller.service.control.server import Peer
from controller.service.wiring.liveness import offered_to
from controller.service.operator.clearing import CLEAR_SECONDS, ClearWatch
from controller.roles import Role
from controller.service.protocol import ErrorCode, Refusal, Request
from controller.service.wiring.tablethread import AcknowledgeJournal, TableThread
from controller.service.visibility import redact_event, redact_status
from controller.table import commands as cmd
from controller.table import events as ev

ANSWER_SECONDS = 5.0
"""How long a control request waits for the table thread (it normally takes milliseconds)."""

StatusExtra = Callable[[], Mapping[str, Any]]


class DeviceSide(Protocol):
    """What the handler asks the device operator
    (:class:`~controller.service.operator.DeviceOperator`): whether a supervisor's verb can have an
    effect on the device now, and what the device said."""

    clearing: ClearWatch

    @property
    def name(self) -> str: ...

    def clear_refusal(self) -> str | None: ...

    def status(self) -> dict[str, Any]: ...


def table_role(peer: Peer, request: Request | None = None) -> Role:
    """The role the table judges the request by. A superuser (root, the service's account)
    acts as whoever it names: ``--actor dealer:1042`` is judged and journaled as that dealer,
    not as a Pit Supervisor under the dealer's name (issue 44: a dealer's command given from
    root's shell read ``supervisor:dealer:1042`` in the journal); naming nobody, or a
    supervisor, it acts as a Pit Supervisor. It never gains a role by naming one."""
    role = peer.role.at_table
    if peer.role is Role.ROOT and request is not None and request.actor \
            and request.actor.split(":", 1)[0] == Role.DEALER.value:
        return Role.DEALER
    return role


def account_of(peer: Peer) -> str:
    """``uid 1001 alice``: who the kernel says is connected, whatever the request claims (the
    source whose refused commands are limited, :mod:`.floodgate`)."""
    account = "tcp" if peer.uid is None else f"uid {peer.uid}"
    if peer.uid is not None:
        try:
            account += f" {pwd.getpwuid(peer.uid).pw_name}"
        except KeyError:
            pass
    return account


def flood_source(peer: Peer) -> str:
    """Whose refused commands count together (:mod:`.floodgate`): the account, and for a
    delegate (the web process, trusted to name the person at its screen) that person, so one
    dealer flooding from the screen does not silence the other screens."""
    account = account_of(peer)
    return account if peer.acting_for is None else f"{peer.acting_for} via {account}"


def actor_of(request: Request, peer: Peer) -> str:
    """``dealer:1042 (uid 1001 alice)``: what the request says, and what the kernel says."""
    account = account_of(peer)
    return f"{request.actor} ({account})" if request.actor else account


class TableHandler:
    """The control handler of a wired service."""

    def __init__(self, table: TableThread, base: Callable[[], int], *,
                 status: StatusExtra | None = None, timeout: float = ANSWER_SECONDS,
                 open_refusal: Callable[[], str | None] = lambda: None,
                 device: DeviceSide | None = None) -> None:
        self.table = table
        self.device = device
        """The device operator, when there is one: ``clear-fault`` and ``continue`` are refused
        when the device makes them pointless, and ``clear-fault`` answers with the device's
        own word (docs/service.md, "What the table waits for")."""
        self.open_refusal = open_refusal
        """Why no round may open now (software not verified and required), or None."""
        self.base = base
        """The journal round base of the running session (round numbers in answers)."""
        self.status = status or (lambda: {})
        self.timeout = timeout

    def __call__(self, request: Request, peer: Peer) -> Mapping[str, Any]:
        verb = request.verb
        if verb == "round.status":
            status = {**self.table.snapshot.to_json(), **self.status()}
            if "waits" in status:  # only what this peer's role may send
                status["waits"] = offered_to(list(status["waits"]), peer.role)
            if peer.role.sees_face_down:
                return status
            return redact_status(status, self.table.journaled.table.machine.rules)
        if verb == "wager.list":
            snap = self.table.snapshot
            return {"round": snap.round, "state": snap.state,
                    "wagers": snap.to_json()["wagers"]}
        if verb == "round.events":
            return self._round_events(request, peer)
        if verb == "journal.acknowledge":
            return self._acknowledge(request, peer)
        if verb == "round.open" and (reason := self.open_refusal()) is not None:
            raise Refusal(ErrorCode.REFUSED, f"round.open: {reason}", request.id)
        try:
            command = self.command_for(request, peer)
        except (TablectlError, ValueError) as error:
            raise Refusal(ErrorCode.BAD_ARGS, f"{verb}: {error}", request.id) from None
        if (reason := self._pointless(request, peer)) is not None:
            raise Refusal(ErrorCode.REFUSED, f"{verb}: {reason}", request.id)
        clears = self.device.clearing.count() if self.device is not None else 0
        ticket = self.table.command(command, self.timeout, source=flood_source(peer))
        if ticket is None:
            raise Refusal(ErrorCode.UNAVAILABLE, f"{verb}: the table did not answer within "
                          f"{self.timeout:g} s; it is queued and will be handled",
                          request.id)
        if ticket.error is not None:
            raise Refusal(ErrorCode.UNAVAILABLE, f"{verb}: not done: {ticket.error}",
                          request.id)
        refused = next((e for e in ticket.events if isinstance(e, ev.CommandRefused)), None)
        if refused is not None:
            raise Refusal(ErrorCode.REFUSED, refused.reason, request.id)
        if verb == "supervisor.clear-fault" and self.device is not None:
            self._cleared(request, clears)
        snap = self.table.snapshot
        shown = ticket.events
        if isinstance(command, cmd.PlaceWagers):  # compact: each wager's outcome, not events
            shown = [e for e in shown if not isinstance(e, BATCH_OUTCOME_EVENTS)]
        events = [event_json(e, self.base()) for e in shown]
        if not peer.role.sees_face_down:  # a command's answer shows no more than watch does
            rules = self.table.journaled.table.machine.rules
            events = [redact_event(e, rules) or e for e in events]
        answer = {"accepted": True, "round": snap.round, "state": snap.state, "events": events}
        if isinstance(command, cmd.PlaceWagers) and "rows" in request.args:
            refusals = batch_refusals(command, ticket.events)
            answer["placed"] = len(command.wagers) - len(refusals)
            answer["refusals"] = refusals
        elif isinstance(command, cmd.PlaceWagers):
            answer["wagers"] = batch_outcomes(command, ticket.events)
        return answer

    def _pointless(self, request: Request, peer: Peer) -> str | None:
        """Why a supervisor's verb can have no effect on the device now (so it is refused, not
        answered ``accepted``), or ``None``. A dealer's attempt is left to the table, which
        refuses it with the clause that gives it to a supervisor."""
        device = self.device
        if device is None or table_role(peer, request) is not cmd.Role.SUPERVISOR:
            return None
        if request.verb == "supervisor.clear-fault":
            return device.clear_refusal()
        if request.verb == "supervisor.continue" and device.status().get("deck_lost"):
            return (f"the {device.name} lost its deck mid-deal (a reboot): "
                    "the round cannot be dealt on, so it cannot continue; void it (tablectl "
                    "supervisor void REASON)")
        return None

    def _cleared(self, request: Request, before: int) -> None:
        """After the table took a clear-fault: the device's own answer (the STATUS after
        CLEAR_FAULT). A fault it still reports is a refusal naming it: the door is still open,
        the jam is still there."""
        assert self.device is not None
        outcome = self.device.clearing.wait_after(before, CLEAR_SECONDS)
        if outcome is None:
            raise Refusal(ErrorCode.UNAVAILABLE, f"{request.verb}: CLEAR_FAULT ordered, but "
                          f"the device did not answer within {CLEAR_SECONDS:g} s; see "
                          "tablectl round status", request.id)
        if outcome.error:
            raise Refusal(ErrorCode.REFUSED, f"{request.verb}: the device did not clear: "
                          f"{outcome.error}", request.id)
        if outcome.faults:
            raise Refusal(ErrorCode.REFUSED, f"{request.verb}: the device still reports "
                          f"{', '.join(outcome.faults)} after CLEAR_FAULT: fix its cause "
                          "(close the door, free the jam), then clear-fault again", request.id)

    def _round_events(self, request: Request, peer: Peer) -> Mapping[str, Any]:
        """``round.events``: a round's events as ``watch`` streamed them (type, then the
        journal record's payload; face-down cards withheld from a role that may not see them),
        read back from the journal on a worker thread (``VerbSpec.reads_journal``). What a
        studio gateway rebuilds a round from after a restart: its stream complete from
        ``RoundOpened``, and the results of a round settled while it was down."""
        number = int(request.args["round"])
        records = round_outputs(self.table.journaled.writer.directory, number)
        if not records:
            raise Refusal(ErrorCode.REFUSED, f"round.events: round {number} is not in the "
                          "journal (not played yet, or older than the journal keeps)",
                          request.id)
        events = [{"type": ROUND_EVENT_TYPES[record.event_type].__name__,
                   **{k: v for k, v in record.payload.items() if k != "provenance"}}
                  for record in records]
        if not peer.role.sees_face_down:
            rules = self.table.journaled.table.machine.rules
            events = [redact_event(event, rules) or event for event in events]
        return {"round": number, "events": events}

    def _acknowledge(self, request: Request, peer: Peer) -> Mapping[str, Any]:
        """``journal.acknowledge``: a supervisor's only (docs/journal.md, "Start-up check")."""
        if table_role(peer, request) is not cmd.Role.SUPERVISOR:
            raise Refusal(ErrorCode.REFUSED, "journal.acknowledge: only a supervisor may "
                          "acknowledge journal damage", request.id)
        ticket = self.table.command(AcknowledgeJournal(
            actor_of(request, peer), table_role(peer, request).value,
            str(request.args["reason"])),
            self.timeout)
        if ticket is None or ticket.error is not None:
            raise Refusal(ErrorCode.UNAVAILABLE, "journal.acknowledge: not done: "
                          f"{ticket.error if ticket else 'the table did not answer'}",
                          request.id)
        return {"accepted": True, "journal_hold": None}

    def command_for(self, request: Request, peer: Peer) -> cmd.Command:
        """The table command for a request (arguments already type-checked by the protocol):
        the verb's builder in :data:`TABLE_COMMANDS`, the one table from verb to command."""
        build = TABLE_COMMANDS.get(request.verb)
        if build is None:
            raise Refusal(ErrorCode.UNKNOWN_VERB, f"{request.verb}: not a table command",
                          request.id)
        who = {"actor": actor_of(request, peer), "role": table_role(peer, request)}
        return build(self, request.args, who)

    def table_round(self, journal: int | None) -> int | None:
        """The table's round number for a journal round number (what status and events show).

        The table numbers the rounds of this session from 1; a round of an earlier session (before
        the last restart, or before the round boundary that started this session) has no table
        number, so it cannot be named here."""
        if journal is None:
            return None
        current = self.table.snapshot.round or self.base()
        if journal > current:
            raise ValueError(f"round {journal} has not been played (the current round is "
                             f"{current or 'none'})")
        if journal <= self.base():
            raise ValueError(f"round {journal} is closed: it was played before this table "
                             f"session, whose rounds start at {self.base() + 1}")
        return journal - self.base()


Who = dict[str, Any]
Builder = Callable[[TableHandler, Mapping[str, Any], Who], cmd.Command]


def _reason(args: Mapping[str, Any]) -> str:
    return str(args.get("reason", ""))


def _report(handler: TableHandler, args: Mapping[str, Any], who: Who) -> cmd.Command:
    return cmd.ReportIrregularity(
        **who, kind=cmd.IrregularityKind(args["kind"]), position=args.get("position"),
        handled=args.get("handled"), exposed_before_drop=args.get("exposed_before_drop", False),
        round_number=handler.table_round(args.get("round")),
        details=args.get("details", ""),
        source=cmd.Source(args["source"]) if args.get("source") else None)


def _reconstruct(handler: TableHandler, args: Mapping[str, Any], who: Who) -> cmd.Command:
    moves = tuple((a, b) for a, b in args.get("moves", ()))
    hands = tuple((position, tuple(parse_card(c) for c in cards))
                  for position, cards in args.get("hands", {}).items())
    return cmd.SupervisorDecision(**who, action=cmd.SupervisorAction.RECONSTRUCT,
                                  reason=_reason(args), moves=moves, hands=hands)


def _swap(handler: TableHandler, args: Mapping[str, Any], who: Who) -> cmd.Command:
    first, second = args["positions"]
    if first == second:
        raise ValueError("swap needs two different positions")
    # The two complete hands change places: a reconstruction by moves (RWS-NC3P 5.5.4).
    return cmd.SupervisorDecision(**who, action=cmd.SupervisorAction.RECONSTRUCT,
                                  reason=_reason(args) or f"swap {first} and {second}",
                                  moves=((first, second), (second, first)))


TABLE_COMMANDS: Mapping[str, Builder] = MappingProxyType({
    "round.open": lambda h, a, who: cmd.OpenRound(**who),
    "round.close": lambda h, a, who: cmd.CloseBets(**who),
    "round.shuffled": lambda h, a, who: cmd.ConfirmShuffle(**who),
    "round.reveal": lambda h, a, who: cmd.RevealDealer(**who),
    "round.settle": lambda h, a, who: cmd.SettleRound(**who),
    "wager.place": lambda h, a, who: cmd.PlaceWager(
        **who, wager_id=a["wager_id"], position=a["position"], bet=a["bet"],
        amount=a["amount"], player=a.get("player"), seated=a.get("seated")),
    "wager.place-batch": lambda h, a, who: cmd.PlaceWagers(**who, wagers=batch_orders(a)),
    "wager.withdraw": lambda h, a, who: cmd.WithdrawWager(**who, wager_id=a["wager_id"]),
    "options.close": lambda h, a, who: cmd.CloseOptions(**who),
    "deck.replace": lambda h, a, who: cmd.ReplaceDeck(**who),
    "deck.counted": lambda h, a, who: cmd.DeckCounted(**who, count=a["count"]),
    "irregularity.report": _report,
    "decide": lambda h, a, who: cmd.PlayerDecision(**who, position=a["position"],
                                                   choice=cmd.Choice(a["choice"])),
    "option": lambda h, a, who: cmd.PlayerOption(**who, position=a["position"],
                                                 option=cmd.Option(a["choice"]),
                                                 player=a.get("player")),
    "supervisor.continue": lambda h, a, who: cmd.SupervisorDecision(
        **who, action=cmd.SupervisorAction.CONTINUE, reason=_reason(a)),
    "supervisor.void": lambda h, a, who: cmd.SupervisorDecision(
        **who, action=cmd.SupervisorAction.VOID, reason=_reason(a), clause=a.get("clause")),
    "supervisor.reconstruct": _reconstruct,
    "supervisor.order": lambda h, a, who: cmd.SupervisorDecision(
        **who, action=cmd.SupervisorAction.ORDER, reason=_reason(a),
        cards=tuple(parse_card(c) for c in a["cards"])),
    "supervisor.answer": lambda h, a, who: cmd.SupervisorDecision(
        **who, action=cmd.SupervisorAction(a["answer"]), reason=_reason(a)),
    "supervisor.swap": _swap,
    "supervisor.clear-fault": lambda h, a, who: cmd.ClearDeviceFault(
        **who, device=str(a.get("device", "shuffler")), reason=_reason(a)),
    "supervisor.clock-override": lambda h, a, who: cmd.OverrideClock(**who, reason=_reason(a)),
})
"""Every verb that becomes a table command, with how its arguments become that command: the
one place a verb meets the table (the protocol's :data:`~controller.service.protocol.VERBS`
says what a verb takes and who may send it; a test holds the two to the same verbs)."""


BATCH_OUTCOME_EVENTS = (ev.WagersAccepted, ev.WagerRefused)
"""The events a ``wager.place-batch`` answer gives as its ``wagers`` outcomes instead."""


def batch_orders(args: Mapping[str, Any]) -> tuple[cmd.WagerOrder, ...]:
    """A ``wager.place-batch``'s wagers from either form (types already checked by the
    protocol): ``wagers``, an object each, or ``rows``, an array each in
    :data:`~controller.service.protocol.ROW_COLUMNS` order (a studio's 500 in one line).
    Both forms make the same orders, so the same input record and the same judgement."""
    wagers, rows = args.get("wagers"), args.get("rows")
    if (wagers is None) == (rows is None):
        raise ValueError("give the wagers as 'wagers' (objects) or as 'rows' (arrays), "
                         "one of the two")
    if rows is not None:
        return tuple(cmd.WagerOrder(wager_id=wager_id, position=position, bet=bet,
                                    amount=amount, player=player)
                     for wager_id, position, bet, amount, player in rows)
    return tuple(cmd.WagerOrder(
        wager_id=w["wager_id"], position=w["position"], bet=w["bet"], amount=w["amount"],
        player=w.get("player"), seated=w.get("seated")) for w in wagers)


def _judged(batch: cmd.PlaceWagers, events: list[ev.RoundEvent]
            ) -> Iterator[tuple[cmd.WagerOrder, str | None]]:
    """Each wager of the batch in the order sent, with ``None`` when it was accepted or the
    table's reason when refused (a wager id sent twice: the first accepted, the second
    refused). The accepted wagers (in ``WagersAccepted``) and the refusals each come in the
    batch's order, so the two are merged by walking the batch once, an order matching the
    next accepted wager by all its terms."""
    accepted = iter((w.id, w.position, w.bet, w.amount, w.player)
                    for e in events if isinstance(e, ev.WagersAccepted) for w in e.wagers)
    refused = iter(e for e in events if isinstance(e, ev.WagerRefused))
    next_accepted = next(accepted, None)
    for order in batch.wagers:
        if (order.wager_id, order.position, order.bet, order.amount,
                order.player) == next_accepted:
            next_accepted = next(accepted, None)
            yield order, None
            continue
        refusal = next(refused, None)
        yield order, refusal.reason if refusal is not None else "not placed"


def batch_outcomes(batch: cmd.PlaceWagers, events: list[ev.RoundEvent]
                   ) -> list[dict[str, Any]]:
    """Each wager of a ``wager.place-batch`` sent as objects, in the order sent:
    ``accepted``, or ``refused`` with the table's reason."""
    return [{"wager_id": order.wager_id, "status": "accepted"} if reason is None
            else {"wager_id": order.wager_id, "status": "refused", "reason": reason}
            for order, reason in _judged(batch, events)]


def batch_refusals(batch: cmd.PlaceWagers, events: list[ev.RoundEvent]
                   ) -> list[list[int | str]]:
    """The refused wagers of a ``wager.place-batch`` sent as ``rows``: ``[index, reason]``
    in the order sent (the index into the rows); every other wager was accepted. A studio's
    batch is nearly all accepted, so its answer is a few bytes, not an object a wager."""
    return [[index, reason] for index, (_, reason) in enumerate(_judged(batch, events))
            if reason is not None]


def event_json(event: ev.RoundEvent, base: int) -> dict[str, Any]:
    """A round event as the journal records it (round = journal round), plus its type."""
    return {"type": type(event).__name__, **encode_output(event, base)}
