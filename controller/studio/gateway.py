"""The studio's verbs, forwarded to the control socket with delegation.

The gateway is one account to the table (a member of ``control.web_group``, like the web
process); every request names the game server in ``acting_for`` with the operator role, and the
batch's idempotency key in ``actor``, so the table judges and journals it exactly as a dealer's
command, as ``<game server> [operator via studio <key>]``. There is no second path into the
table: the verbs, roles, limits and journal records are the control socket's.

Exactly once: an answer is kept in the :class:`~controller.studio.ledger.Ledger` under
``(game server, key)`` before it is sent, so a resend gets the same answer and places nothing;
if the gateway itself died between placing a wager and recording the answer, the table refuses
the resent wager as already on the layout and the gateway answers ``accepted`` when
``wager.list`` holds the same wager. One lock serialises the gateway's commands, so no round
opens while a batch is being placed into the one before it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog

from controller.service.control.client import ControlClient, RequestRefused
from controller.service.errors import ControlError
from controller.service.protocol import MAX_BATCH_ROWS, MAX_LINE_BYTES, ROW_COLUMNS, ErrorCode
from controller.studio.book import RoundBook, wager_id
from controller.studio.config import StudioConfig
from controller.studio.errors import StudioRefusal
from controller.studio.ledger import Ledger
from controller.studio.offer import table_offer
from controller.studio.wire import (CloseBetting, MemberWager, OpenRound, WagerBatch,
                                    max_body_bytes, parse_batch, parse_close, parse_open)

log = structlog.get_logger(__name__)

ON_LAYOUT = "is already on the layout"
WATCH_RETRY_SECONDS = 1.0
ENVELOPE_BYTES = 2048
"""What a ``wager.place-batch`` line holds besides its rows: ``id``, ``verb``, ``actor`` and
``acting_for`` (each at most 64 characters, escaped at most 6 bytes a character)."""


def line_parts(sizes: list[int]) -> list[tuple[int, int]]:
    """Rows of the given JSON sizes (bytes) cut into as few runs ``(start, end)`` as each fit
    one control request line and :data:`MAX_BATCH_ROWS`: one run for any studio batch of
    ordinary ids (500 wagers are about 25 kB as rows)."""
    runs: list[tuple[int, int]] = []
    budget = MAX_LINE_BYTES - ENVELOPE_BYTES
    start, used = 0, 0
    for index, size in enumerate(sizes):
        if index > start and (used + size > budget or index - start >= MAX_BATCH_ROWS):
            runs.append((start, index))
            start, used = index, 0
        used += size
    if start < len(sizes):
        runs.append((start, len(sizes)))
    return runs


def row_bytes(wager: MemberWager) -> int:
    """The JSON size of a wager's row ``["<client>/<id>","p1","win",500,"m7"],`` less the
    game server's name (the caller adds it, measured as JSON once): the wire's tokens need no
    escaping."""
    return 1 + len(wager.id) + len(wager.position) + len(wager.bet) \
        + len(str(wager.amount)) + len(wager.member) + 15


REFUSALS_WITH_NOTHING_DONE = frozenset({ErrorCode.REFUSED, ErrorCode.BAD_ARGS,
                                        ErrorCode.FORBIDDEN})
"""The control socket's answers that mean the table did nothing. Any other (``unavailable``:
the table did not answer in time and the command is still queued; ``internal``) leaves the
outcome unknown, so it is never told to a game server as a refusal."""


def _outcome_known(refused: RequestRefused) -> None:
    """Re-raise a control answer whose outcome is unknown (the server answers it ``503
    unavailable``, resend with the same key; nothing is recorded under the key, so the resend
    asks the table again and a wager it had placed meanwhile is answered accepted)."""
    if refused.code not in REFUSALS_WITH_NOTHING_DONE:
        raise refused


class Gateway:
    """The studio API's behaviour, independent of HTTP (the server only routes to it)."""

    def __init__(self, config: StudioConfig, ledger: Ledger,
                 connect: Callable[[float | None], ControlClient] | None = None) -> None:
        self.config = config
        self.ledger = ledger
        self._connect = connect or (lambda timeout: ControlClient(
            config.control_socket, timeout=timeout).connect())
        self._lock = threading.RLock()
        """Serialises the verbs (open, place, close, the window's close, the settle): each
        holds it across its control request and ledger record. Reads (status, events) never
        take it."""
        self._control: ControlClient | None = None
        self._owner: dict[int, str] = {}
        self._current: int | None = None
        self._timers: dict[int, threading.Timer] = {}
        self._stopping = threading.Event()
        self._watcher: ControlClient | None = None
        self._settle_queue: list[int] = []
        self._table_settles: bool | None = None
        """The table's ``settle_on_deal_complete`` (from ``round.status``; asked again after
        a reconnect, the service may have restarted with another config)."""
        self._settle_wake = threading.Condition()
        self.book = RoundBook(self._noticed)
        self.archive = RoundBook()
        self._archive_fill = threading.Lock()
        """Rounds read back from the table's journal (:meth:`_from_journal`), apart from the
        live book so reading an old round never pushes the current one out."""
        self._threads = [threading.Thread(target=self._watch, name="studio-watch", daemon=True),
                         threading.Thread(target=self._settler, name="studio-settle",
                                          daemon=True)]

    # -- life cycle -------------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            self._adopt()
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stopping.set()
        for timer in list(self._timers.values()):
            timer.cancel()
        if self._watcher is not None:
            self._watcher.interrupt()
        with self._settle_wake:
            self._settle_wake.notify_all()
        for thread in self._threads:
            thread.join(timeout=10)
        with self._lock:
            if self._control is not None:
                self._control.close()

    def _adopt(self) -> None:
        """After a restart of the gateway, take up the round it opened last if the table is
        still in it (on a studio table only the gateway opens rounds): its game server may go
        on placing batches and closing it, the betting window is kept, and the round's events
        so far are filed from the table's journal (``round.events``: RoundOpened, BetsClosed,
        the cards...) so a reader from cursor 0 misses none."""
        if self.ledger.last_open is None:
            return
        client, answer = self.ledger.last_open
        try:
            status = self._request("round.status", {}, client, "adopt")
        except (RequestRefused, ControlError) as error:
            log.warning("studio_adopt_failed", error=str(error))
            return
        if status.get("state") in (None, "idle", "settled", "voided"):
            return
        number = int(answer["round"])
        self._owner[number] = client
        self._current = number
        self.book.ensure(number, "betting" if status.get("state") == "betting" else "closed")
        try:  # the round's stream so far, complete from RoundOpened (issue 33, finding 5)
            so_far = self._request("round.events", {"round": number}, client, "adopt")
        except (RequestRefused, ControlError) as error:
            log.warning("studio_adopt_events_failed", round=number, error=str(error))
            so_far = {}
        for event in so_far.get("events", ()):
            self.book.add(event)
        if status.get("state") == "betting":
            left = max(0.0, float(answer["closes_at"]) - time.time())
            timer = threading.Timer(left, self._window_ends, (number,))
            timer.daemon = True
            self._timers[number] = timer
            timer.start()
        log.info("studio_round_adopted", round=number, client=client, state=status["state"])

    # -- the verbs --------------------------------------------------------------------------
    def open_round(self, client: str, body: object) -> dict[str, Any]:
        request = parse_open(body, self.config.max_betting_seconds)
        with self._lock:
            if (replay := self._replayed(client, request.key, request.digest)) is not None:
                return replay
            return self._open(client, request)

    def place_batch(self, client: str, round_number: int, body: object) -> dict[str, Any]:
        try:
            batch = parse_batch(body, round_number, self.config.max_batch)
        except StudioRefusal as refusal:
            if refusal.status == 413:
                self.ledger.record_refusal(client, refusal.code, refusal.message)
            raise
        digest = batch.digest  # a hash of the whole batch: worked out once
        with self._lock:
            if (replay := self._replayed(client, batch.key, digest, batch)) is not None:
                return replay
            return self._place(client, batch, digest)

    def close_betting(self, client: str, round_number: int, body: object) -> dict[str, Any]:
        request = parse_close(body, round_number)
        with self._lock:
            if (replay := self._replayed(client, request.key, request.digest)) is not None:
                return replay
            return self._close(client, request)

    def status(self, client: str) -> dict[str, Any]:
        """Read without the verbs' lock, which a batch holds across its control request and
        its ledger fsync (issue 35: a status waited behind a batch of 500). ``_current`` and
        ``_owner`` are only replaced or added to, one whole value at a time, so each read here
        sees a value some verb wrote."""
        current = self._current
        owner = self._owner.get(current) if current is not None else None
        view = self.book.view(current) if current is not None else None
        return {"round": current, "state": view.state if view else "idle",
                "yours": owner == client, "max_batch": self.config.max_batch}

    def table(self, client: str) -> dict[str, Any]:
        """The table's game, bets, positions and limits (:func:`~.offer.table_offer`), read
        from the table now (``round.status``) on a control connection of its own, without the
        verbs' lock (as :meth:`status`): the service may have been restarted with another
        config since the last read. The gateway's own bounds come with it (``max_batch``,
        ``max_body_bytes``, ``max_betting_seconds``)."""
        control = self._connect(30.0)
        try:  # a refusal or a lost connection: the server answers 503 unavailable
            status = control.request("round.status", actor="studio table",
                                     acting_for={"name": client, "role": "operator"})
        finally:
            control.close()
        return {**table_offer(status), "max_batch": self.config.max_batch,
                "max_body_bytes": max_body_bytes(self.config.max_batch),
                "max_betting_seconds": self.config.max_betting_seconds}

    def events(self, client: str, round_number: int, after: int,
               wait: float) -> dict[str, Any]:
        owner = self._owner.get(round_number)  # without the verbs' lock, as status()
        if owner is not None and owner != client:
            self._refuse(client, 403, "not_yours", f"round {round_number} was opened by "
                         "another game server")
        read = self.book.read(round_number, client, after, wait)
        if read is None:
            read = self._from_journal(client, round_number, after)
        state, events = read
        return {"round": round_number, "state": state, "next": after + len(events),
                "events": events}

    def _from_journal(self, client: str, number: int, after: int
                      ) -> tuple[str, list[dict[str, Any]]]:
        """A round no longer (or not yet, after a restart) in memory, read back from the
        table's journal (``round.events``) for the game server that opened it, and kept in
        :attr:`archive`: a round settled while the gateway was down, or one of the rounds
        before the last :data:`~.book.KEEP_ROUNDS`, is readable for as long as the table's
        journal keeps it (issue 33, finding 3). Its own control connection: the verbs' one is
        the verbs' (this read takes no lock)."""
        opener = self.ledger.opener(number)
        if opener is None:
            raise StudioRefusal(404, "unknown_round", f"round {number}: not a round this "
                                "gateway opened (or opened longer ago than its ledger keeps)")
        if opener != client:
            self._refuse(client, 403, "not_yours", f"round {number} was opened by another "
                         "game server")
        read = self.archive.read(number, client, after, 0)
        if read is not None:
            return read
        control = self._connect(30.0)
        try:
            answer = control.request("round.events", {"round": number},
                                     actor=f"studio events r{number}",
                                     acting_for={"name": client, "role": "operator"})
        except RequestRefused as refused:
            _outcome_known(refused)
            raise StudioRefusal(404, "unknown_round", f"round {number}: {refused.message}") \
                from refused
        finally:
            control.close()
        with self._archive_fill:  # two readers of one old round file its events once
            if self.archive.view(number) is None:
                for event in answer.get("events", ()):
                    self.archive.add(event)
        read = self.archive.read(number, client, after, 0)
        if read is None:  # the journal gave no event of it
            raise StudioRefusal(404, "unknown_round", f"round {number}: no events in the "
                                "table's journal")
        return read

    # -- helpers ----------------------------------------------------------------------------
    def _refuse(self, client: str, status: int, code: str, message: str) -> None:
        self.ledger.record_refusal(client, code, message)
        raise StudioRefusal(status, code, message)

    def _replayed(self, client: str, key: str, digest: str,
                  batch: WagerBatch | None = None) -> dict[str, Any] | None:
        """The answer recorded for ``key``; a batch's per-wager answers are rebuilt from the
        resent batch itself (same digest, so the same wagers in the same order) and the
        refusals the ledger kept, so the ledger holds a few bytes a batch, not its wagers."""
        entry = self.ledger.get(client, key)
        if entry is None:
            return None
        if entry.digest != digest:
            self._refuse(client, 409, "key_reused", f"idempotency key {key!r} was used for "
                         "different content; nothing done (send new content with a new key)")
        answer = dict(entry.answer)
        refusals = answer.pop("refusals", None)
        if batch is not None and isinstance(refusals, dict):
            answer["wagers"] = [
                {"id": w.id, "status": "refused", "reason": refusals[str(i)]}
                if str(i) in refusals else {"id": w.id, "status": "accepted"}
                for i, w in enumerate(batch.wagers)]
        return {**answer, "replayed": True}

    def _answer(self, client: str, key: str, digest: str, answer: dict[str, Any]
                ) -> dict[str, Any]:
        self.ledger.record_answer(client, key, digest, answer)
        return {**answer, "replayed": False}

    def _request(self, verb: str, args: dict[str, Any], client: str, key: str
                 ) -> dict[str, Any]:
        """One control request for ``client``; a broken connection is reopened once (the
        service restarted), a refusal raises :class:`RequestRefused`."""
        for attempt in (1, 2):
            try:
                if self._control is None:
                    self._control = self._connect(30.0)
                return self._control.request(verb, args, actor=f"studio {key}",
                                             acting_for={"name": client, "role": "operator"})
            except ControlError:
                if self._control is not None:
                    self._control.close()
                self._control = None
                self._table_settles = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _open(self, client: str, request: OpenRound) -> dict[str, Any]:
        try:
            result = self._request("round.open", {}, client, request.key)
        except RequestRefused as refused:
            _outcome_known(refused)
            return self._answer(client, request.key, request.digest, {
                "ok": False, "code": "refused", "message": refused.message})
        number = next(e["round"] for e in result["events"] if e["type"] == "RoundOpened")
        self._current = number
        self._owner[number] = client
        self.book.ensure(number)  # its events arrive on the watch stream
        timer = threading.Timer(request.betting_seconds, self._window_ends, (number,))
        timer.daemon = True
        self._timers[number] = timer
        timer.start()
        return self._answer(client, request.key, request.digest, {
            "ok": True, "round": number, "state": "betting",
            "betting_seconds": request.betting_seconds,
            "closes_at": time.time() + request.betting_seconds})

    def _owned(self, client: str, number: int) -> None:
        owner = self._owner.get(number)
        if owner is None or number != self._current:
            self._refuse(client, 409, "not_betting", f"round {number} is not the round open "
                         "for betting on this table")
        if owner != client:
            self._refuse(client, 403, "not_yours", f"round {number} was opened by another "
                         "game server")

    def _place(self, client: str, batch: WagerBatch, digest: str) -> dict[str, Any]:
        """The batch goes to the table as one ``wager.place-batch`` in its compact form
        (``rows``: one array a wager, so 500 fit the control socket's line): one input record,
        one fsync and one ``wagers_accepted`` record for the batch (issue 28: 500 wagers took
        1.5 s one by one, and two requests of 250 objects cost a second record, a second fsync
        and a second round trip). A batch of very long ids that would not fit one line is sent
        in as few parts as fit (:func:`line_parts`). A wager refused as already on the layout
        with the same terms is this batch's own, placed before a retry: accepted."""
        self._owned(client, batch.round)
        refusals: dict[int, str] = {}
        on_layout: dict[str, Any] | None = None
        rows = [[wager_id(client, w.id), w.position, w.bet, w.amount, w.member]
                for w in batch.wagers]
        name = len(json.dumps(client, ensure_ascii=False).encode()) - 2
        for start, end in line_parts([name + row_bytes(w) for w in batch.wagers]):
            part = rows[start:end]
            try:
                answer = self._request("wager.place-batch", {"rows": part}, client, batch.key)
                refused = [(start + int(index), str(reason))
                           for index, reason in answer["refusals"]]
            except RequestRefused as refused_whole:  # no round takes bets: every wager refused
                _outcome_known(refused_whole)
                refused = [(start + index, refused_whole.message)
                           for index in range(len(part))]
            for index, reason in refused:
                if ON_LAYOUT in reason:
                    if on_layout is None:
                        on_layout = {w["id"]: w for w in self._control_list()}
                    held = on_layout.get(rows[index][0])
                    if held is not None and [held.get(k) for k in ROW_COLUMNS[1:]] \
                            == rows[index][1:]:
                        continue
                refusals[index] = reason
        answers = [{"id": w.id, "status": "refused", "reason": refusals[i]}
                   if i in refusals else {"id": w.id, "status": "accepted"}
                   for i, w in enumerate(batch.wagers)]
        summary = {"ok": True, "round": batch.round, "key": batch.key,
                   "accepted": len(answers) - len(refusals), "refused": len(refusals)}
        self.ledger.record_answer(client, batch.key, digest, {
            **summary, "refusals": {str(i): reason for i, reason in sorted(refusals.items())}})
        return {**summary, "wagers": answers, "replayed": False}

    def _control_list(self) -> list[dict[str, Any]]:
        assert self._control is not None
        return list(self._control.request("wager.list").get("wagers", []))

    def _close(self, client: str, request: CloseBetting) -> dict[str, Any]:
        self._owned_any(client, request.round)
        if self._current == request.round:
            try:
                self._request("round.close", {}, client, request.key)
            except RequestRefused as refused:
                _outcome_known(refused)
                view = self.book.view(request.round)
                if view is None or view.state == "betting":
                    return self._answer(client, request.key, request.digest, {
                        "ok": False, "code": "refused", "message": refused.message})
        self._cancel_timer(request.round)
        return self._answer(client, request.key, request.digest, {
            "ok": True, "round": request.round, "state": "closed"})

    def _owned_any(self, client: str, number: int) -> None:
        owner = self._owner.get(number)
        if owner is None:
            self._refuse(client, 404, "unknown_round", f"round {number} was not opened "
                         "through this gateway")
        if owner != client:
            self._refuse(client, 403, "not_yours", f"round {number} was opened by another "
                         "game server")

    def _cancel_timer(self, number: int) -> None:
        timer = self._timers.pop(number, None)
        if timer is not None:
            timer.cancel()

    def _window_ends(self, number: int) -> None:
        """The betting window the round was opened with has passed: no more bets, whether or
        not the game server is still there to say so."""
        with self._lock:
            self._timers.pop(number, None)
            if self._current != number or self._stopping.is_set():
                return
            view = self.book.view(number)
            if view is not None and view.state != "betting":
                return
            try:
                self._request("round.close", {}, self._owner[number], f"window r{number}")
            except (RequestRefused, ControlError) as error:
                log.warning("studio_window_close_failed", round=number, error=str(error))

    def _noticed(self, event: dict[str, Any]) -> None:
        """The watch thread's hook: a complete deal is settled at once (LIVE-3P has no
        decisions between the last card and the settlement), by the table itself where it is
        configured to, else by the gateway's ``round.settle``."""
        if event.get("type") == "DealComplete" and event.get("round") in self._owner:
            with self._settle_wake:
                self._settle_queue.append(int(event["round"]))
                self._settle_wake.notify()

    def _settler(self) -> None:
        while not self._stopping.is_set():
            with self._settle_wake:
                while not self._settle_queue and not self._stopping.is_set():
                    self._settle_wake.wait()
                if self._stopping.is_set():
                    return
                number = self._settle_queue.pop(0)
            with self._lock:
                view = self.book.view(number)
                if view is not None and view.ended:
                    continue
                try:
                    if self._settles_itself(number):
                        continue
                    self._request("round.settle", {}, self._owner[number],
                                  f"deal complete r{number}")
                except (RequestRefused, ControlError) as error:
                    log.warning("studio_settle_failed", round=number, error=str(error))

    def _settles_itself(self, number: int) -> bool:
        """Whether the table settles a round in the input that completes its deal
        (``[table] settle_on_deal_complete``): then the gateway sends no ``round.settle``,
        and the result is out with the last card."""
        if self._table_settles is None:
            status = self._request("round.status", {}, self._owner[number],
                                   f"deal complete r{number}")
            layout = status.get("layout") or {}
            self._table_settles = bool(layout.get("settle_on_deal_complete"))
        return self._table_settles

    def _watch(self) -> None:
        """Follow the table's round events for as long as the gateway runs, reconnecting
        after a service restart. Each time the stream is (re)opened, the round being followed
        is caught up from the table's journal (:meth:`_catch_up`): what the table did while
        no stream was open (a round dealt and settled by a restarted service within the
        reconnect's second) is filed too, and the stream's first events that the journal
        already gave are passed over."""
        while not self._stopping.is_set():
            try:
                self._watcher = self._connect(None)
                lines = self._watcher.watch_lines()  # subscribed: nothing is missed from here
                overlap = self._catch_up()
                for line, event in lines:
                    if overlap and event.get("round") == self._current:
                        seen = _comparable(event)
                        if seen in overlap:  # journaled after the subscription: filed already
                            del overlap[:overlap.index(seen) + 1]
                            continue
                        overlap = []
                    self.book.add(event, line)
            except (ControlError, OSError) as error:
                log.warning("studio_watch_lost", error=str(error))
            finally:
                if self._watcher is not None:
                    self._watcher.close()
            self._stopping.wait(WATCH_RETRY_SECONDS)

    def _catch_up(self) -> list[str]:
        """File the events of the round being followed that the journal holds and the book
        lacks (``round.events``, on a connection of its own, without the verbs' lock); the
        journal's events of the round as :func:`_comparable` texts, which the new stream may
        repeat at its start. Nothing when no round is followed, or it has ended. A service
        that cannot answer yet (still recovering its journal after a restart) raises
        :class:`ControlError`: the stream is opened again a second later, and caught up then."""
        number = self._current
        view = self.book.view(number) if number is not None else None
        owner = self._owner.get(number) if number is not None else None
        if number is None or owner is None or (view is not None and view.ended):
            return []
        control = self._connect(30.0)
        try:
            events = control.request("round.events", {"round": number},
                                     actor=f"studio catch-up r{number}",
                                     acting_for={"name": owner, "role": "operator"})["events"]
        except RequestRefused as refused:
            if refused.code not in REFUSALS_WITH_NOTHING_DONE:  # a service still starting
                raise ControlError(f"round.events r{number}: {refused.message}") from refused
            log.warning("studio_catch_up_failed", round=number, error=refused.message)
            return []
        finally:
            control.close()
        held = len(view.events) if view is not None else 0
        public = 0
        for event in events:
            if public >= held:
                self.book.add(event)
            elif self.book.is_public(event):
                public += 1
        log.info("studio_caught_up", round=number, journal_events=len(events), held=held)
        return [_comparable(event) for event in events]


def _comparable(event: dict[str, Any]) -> str:
    """An event as one text, to tell the same event from the journal and from the watch stream
    (the same record's payload; the journal's read leaves out ``provenance``)."""
    return json.dumps({k: v for k, v in event.items() if k != "provenance"}, sort_keys=True)
