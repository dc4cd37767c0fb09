"""A full disk never loses a settlement (issue 11, "Data loss").

The journal lives on a real 256 KiB tmpfs. Just before the N-th record of a round the test fills
every free page of it, so the write of that record is the one that fails with ENOSPC (the round
is shifted by a padding record so that a page boundary falls inside record N: a record that
fits in the slack of its file's last page would still be written, as on any filesystem). For
every record of a round: no command is answered ``accepted`` while its records are not in the
file; once space returns (live, or after a restart) the round is completed or voided by the
table's own rules; ``journal verify`` and ``journal replay`` are clean; every wager is settled
or returned exactly once.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from controller.games.cards import parse_cards
from controller.journal import Durability, JournalWriter, iter_records, verify
from controller.journal.recovery import recover
from controller.journal.replay import replay_records
from controller.service.wiring.handler import TableHandler
from controller.service.protocol import ErrorCode, Refusal, Request
from controller.service.wiring.tablethread import AWAITING_JOURNAL, TableThread
from controller.table.layout import TableLayout
from drivers import events as dev
from tests.controller.journal.smalldisk import PAGE, fill, small_disk
from tests.controller.service.conftest import DEALER, SUPERVISOR

GAME = "rws-nc-three-pictures"
IDENTITY = dev.DeviceIdentity("Sim", "HF-3", "SIM-0001", "2.3.1", "abcd", 1)
HANDS = (("QD", "JD", "KD"), ("2C", "3C", "4C"), ("5H", "6H", "7H"))
PAD = "test_padding"
"""A record type replay ignores: it only moves the round within the file's pages."""
WAIT = 5.0


def steps() -> list[tuple[str, Any]]:
    """One round, as the dealer's requests and the shuffler's events."""
    out: list[tuple[str, Any]] = [("request", Request(1, "round.open"))]
    for box in ("1", "2"):
        out.append(("request", Request(2, "wager.place", {
            "wager_id": f"w{box}", "position": box, "bet": "main", "amount": 1000,
            "player": f"p{box}"})))
    out += [("request", Request(3, "round.close")),
            ("device", dev.ShuffleDone("shuffler", counted=52))]
    out += [("device", dev.CardSetDispensed("shuffler", cards=parse_cards(cards),
                                            hand_number=number))
            for number, cards in enumerate(HANDS, 1)]
    out += [("request", Request(4, "round.reveal")), ("request", Request(5, "round.settle"))]
    return out


@dataclass
class Run:
    """A table on a journal directory, with a clock that can fill the disk before a record."""

    directory: Path
    fill_before: int | None = None
    """Fill the disk just before the record with this seq is written."""
    filler: Path | None = None
    ticks: Iterator[int] = field(default_factory=lambda: itertools.count(10**12, 10**6))
    writer: JournalWriter | None = None
    table: TableThread | None = None
    handler: TableHandler | None = None

    def clock(self) -> datetime:
        writer = self.writer
        if writer is not None and self.fill_before == writer.seq + 1:
            self.fill_before = None
            self.filler = fill(self.directory.parent)
        return datetime(2026, 11, 23, 12, 0, 0, tzinfo=timezone.utc)

    def open(self) -> None:
        self.writer = JournalWriter(self.directory, table_id="T1", durability=Durability.MONEY,
                                    clock=self.clock, monotonic_ns=lambda: next(self.ticks))
        journaled, _ = recover(self.writer, TableLayout.for_game(GAME))
        self.table = TableThread(journaled)
        self.table.start()
        base = journaled.session.base
        self.handler = TableHandler(self.table, lambda: base)

    def close(self) -> None:
        if self.table is not None:
            self.table.close()
        if self.writer is not None:
            self.writer.close()
        self.table = self.writer = None

    def step(self, kind: str, item: Any) -> dict[str, Any] | Refusal:
        assert self.table is not None and self.handler is not None
        if kind == "device":
            self.table.put(item)
            assert self.table.probe(WAIT)
            return {}
        try:
            return dict(self.handler(item, DEALER))
        except Refusal as refusal:
            return refusal

    def free(self) -> None:
        if self.filler is not None:
            self.filler.unlink()
            self.filler = None


def round_layout(directory: Path, pad: int, fill_before: int | None = None) -> Run:
    """Start a table, pad, bring the shuffler online; the round is played by the caller."""
    run = Run(directory, fill_before=fill_before)
    run.open()
    assert run.writer is not None
    run.writer.append(PAD, {"pad": "x" * pad})
    run.step("device", dev.DeviceOnline("shuffler", identity=IDENTITY))
    return run


def dry_run() -> tuple[int, list[tuple[int, int, int]]]:
    """Where each record of the round lies (seq, start, length) with no padding, and the seq
    of the round's first record."""
    with tempfile.TemporaryDirectory() as scratch:
        run = round_layout(Path(scratch) / "journal", 0)
        first = run.writer.seq + 1 if run.writer else 0
        for kind, item in steps():
            run.step(kind, item)
        last = run.writer.seq if run.writer else 0
        run.close()
        lines: list[tuple[int, int, int]] = []
        offset = 0
        for raw in (Path(scratch) / "journal" / "journal-000001.jsonl").read_bytes() \
                .splitlines(keepends=True):
            seq = int(raw.split(b'"seq":', 1)[1].split(b",", 1)[0])
            if first <= seq <= last:
                lines.append((seq, offset, len(raw)))
            offset += len(raw)
    return first, lines


FIRST_SEQ, ROUND_RECORDS = dry_run()


@pytest.fixture(name="disk")
def fixture_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 256 KiB tmpfs mounted for this test (root only), unmounted afterwards."""
    with small_disk(tmp_path / "disk") as disk:
        yield disk


def play_until_done(run: Run, fails_at: int, replies: list[tuple[int, Any]],
                    on_failure: Callable[[Run], None]) -> None:
    """Play the round from step ``start``. At the first failed step the disk is freed and
    ``on_failure`` runs (carry on, or restart); a step whose input the journal refused (the
    table did not act) is sent again, as the dealer or the device would."""
    failed = False
    script = steps()
    index = 0
    while index < len(script):
        kind, item = script[index]
        assert run.table is not None
        failures = run.table.journaled.failures
        reply = run.step(kind, item)
        snap = run.table.snapshot
        replies.append((index, reply))
        if isinstance(reply, dict) and reply.get("accepted"):
            # every record the answer reports is in the file already
            types = [snake(event["type"]) for event in reply["events"]]
            tail = [r.event_type for r in iter_records([run.directory])][-len(types):]
            assert snap.journal_behind == 0 and tail == types, "accepted before durable"
        if run.table.journaled.failures > failures and not failed:
            failed = True
            assert run.writer is not None and run.writer.seq == fails_at - 1, \
                "the disk filled at another record than intended"
            behind = snap.journal_behind > 0
            if behind:  # acted on, outcome not durable: the status says so
                assert snap.state == AWAITING_JOURNAL
            if kind == "request":
                assert isinstance(reply, Refusal) and reply.code is ErrorCode.UNAVAILABLE
            run.free()
            on_failure(run)
            if not behind:
                continue  # not recorded, not acted on: send it again
        index += 1
    assert run.table is not None
    assert run.table.probe(WAIT)  # the table thread retries what waits before the marker


def settled_once(directory: Path) -> dict[str, int]:
    """How many times each wager got a result (settlement or void)."""
    counts: dict[str, int] = {}
    for record in iter_records([directory]):
        if record.event_type in ("round_settled", "round_voided"):
            for result in record.payload["settlement"]["results"]:
                counts[result["wager_id"]] = counts.get(result["wager_id"], 0) + 1
    return counts


def pad_for(index: int) -> int:
    """Padding that puts a page boundary in the middle of the round's ``index``-th record (the
    padding record is the only thing that differs from the dry run before it)."""
    _seq, start, length = ROUND_RECORDS[index]
    return (-(start + length // 2)) % PAGE


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@pytest.mark.parametrize("restart", [False, True], ids=["live", "restart"])
@pytest.mark.parametrize("index", range(len(ROUND_RECORDS)))
def test_full_disk_at_every_record_of_a_round(disk: Path, index: int, restart: bool) -> None:
    """The disk fills at this record of the round: no `accepted` for an input whose records are
    not durable; when space returns (live, or across a restart) the round ends by the table's
    rules (RWS-NC3P 5.4 on a restart), the journal verifies and replays clean, and each wager
    is settled or returned exactly once."""
    directory = disk / "journal"
    seq = ROUND_RECORDS[index][0]
    run = round_layout(directory, pad_for(index), fill_before=seq)
    assert run.writer is not None and run.writer.seq + 1 == FIRST_SEQ

    def again(run: Run) -> None:
        if restart:
            run.close()
            run.open()

    replies: list[tuple[int, Any]] = []
    try:
        play_until_done(run, seq, replies, again)
        assert run.filler is None, "the disk was never full"
        assert run.table is not None
        # ended (after a restart past the round's end a new session is idle), or held for a
        # supervisor, saying why, who voids it
        if run.table.snapshot.state not in ("settled", "voided", "idle"):
            assert run.table.snapshot.state == "hold" and run.table.snapshot.held_for
            assert run.handler is not None
            run.handler(Request(9, "supervisor.void", {"reason": "journal disk full"}),
                        SUPERVISOR)
        if restart is False:
            assert run.table.snapshot.state == "settled"
    finally:
        run.close()
    records = list(iter_records([directory]))
    report = verify([directory])
    assert report.ok, report.problem
    replayed = replay_records(records)
    assert replayed.ok and replayed.unrecorded_tail == 0, replayed.divergences
    assert settled_once(directory) == {"w1": 1, "w2": 1}
    assert os.listdir(disk) == ["journal"]
