"""Sessions at round boundaries and recovery from the last one (issue 5: a restart must not read
the whole journal). The recorder starts a new session before a round that only the TableMemory
links to the earlier ones; recovery reads files newest first until the last ``session_started``
and replays from there, so a restart after months of play replays about one round."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from controller.games.cards import parse_cards
from controller.journal import JournalWriter, iter_records
from controller.journal.delivery import origin_key
from controller.journal.reader import iter_from_last
from controller.journal.recorder import ROUND_BOUNDARY, SESSION_STARTED, JournaledTable
from controller.journal.recovery import Decision, recover
from controller.journal.replay import replay_records
from controller.table import commands as cmd
from controller.table.layout import TableLayout
from drivers import events as dev

DEALER = dict(actor="dana", role=cmd.Role.DEALER)
GAME = "mbs-royal-three-pictures"
HANDS = (("QD", "JD", "KD"), ("2C", "3C", "4C"), ("5H", "6H", "7H"))


def _round(table: JournaledTable, number: int, *, settle: bool = True) -> None:
    """One whole round: boxes 1 and 2 bet (box 2 below the minimum sometimes, so the MBS-R3P
    5.10 memory changes), three hands, reveal, settle."""
    table.process(cmd.OpenRound(**DEALER))
    for box, amount in (("1", 1000), ("2", 500 if number % 2 else 1000)):
        table.process(cmd.PlaceWager(**DEALER, wager_id=f"r{number}-{box}", position=box,
                                     bet="main", amount=amount, player=f"p{box}"))
    table.process(cmd.CloseBets(**DEALER))
    table.process(dev.ShuffleDone("shuffler", counted=52))
    for hand, cards in enumerate(HANDS, 1):
        table.process(dev.CardSetDispensed("shuffler", cards=parse_cards(cards),
                                           hand_number=hand,
                                           origin=dev.EventOrigin(77, number * 10 + hand)))
    if settle:
        table.process(cmd.RevealDealer(**DEALER))
        table.process(cmd.SettleRound(**DEALER))


def _start(writer: JournalWriter) -> JournaledTable:
    table, report = recover(writer, TableLayout.for_game(GAME))
    assert report.decision is Decision.NO_ROUND
    table.process(dev.DeviceOnline("shuffler"))
    return table


def _sessions(directory: Path) -> list[dict]:
    return [r.payload for r in iter_records([directory]) if r.event_type == SESSION_STARTED]


def test_each_round_after_the_first_starts_a_session(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """Before each round after the first a ``session_started`` (reason "round boundary") names
    the round base and the memory the last settlement left; round numbers run on unbroken and
    the whole journal still replays without divergence."""
    writer = open_writer()
    table = _start(writer)
    for number in range(1, 4):
        _round(table, number)
    sessions = _sessions(journal_dir)
    assert [s["reason"] for s in sessions] == ["first start", ROUND_BOUNDARY, ROUND_BOUNDARY]
    assert [s["round_base"] for s in sessions] == [0, 1, 2]
    assert sessions[2]["memory"] == _memory_after(journal_dir, round_number=2)
    opened = [r.payload["round"] for r in iter_records([journal_dir])
              if r.event_type == "round_opened"]
    assert opened == [1, 2, 3]
    report = replay_records(iter_records([journal_dir]))
    assert report.divergences == [] and report.settlements_checked == 3
    assert report.sessions == 3


def _memory_after(directory: Path, round_number: int) -> dict:
    settled = [r.payload for r in iter_records([directory])
               if r.event_type == "round_settled" and r.payload["round"] == round_number]
    return settled[-1]["settlement"]["memory"]


@pytest.mark.parametrize("carried", ["offline device", "shuffle for the next round"])
def test_no_session_while_more_than_memory_carries_over(
        carried: str, open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """A device still offline, or a shuffle confirmed for the next round, is table state a
    fresh table would not have: the round opens in the same session."""
    writer = open_writer()
    table = _start(writer)
    _round(table, 1)
    if carried == "offline device":
        table.process(dev.DeviceOffline("shuffler", reason="cable out"))
    else:
        table.process(dev.ShuffleDone("shuffler", counted=52))
    table.process(cmd.OpenRound(**DEALER))
    assert [s["reason"] for s in _sessions(journal_dir)] == ["first start"]


def test_recovery_reads_only_the_last_session(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """After many rounds across several files a restart reads from the last session on: its
    count of records is one round's, not the journal's, and it continues correctly (the round
    interrupted mid-deal is ruled by MBS-R3P 5.13.2: the outcome is established)."""
    writer = open_writer(rotate_bytes=40_000)
    table = _start(writer)
    for number in range(1, 21):
        _round(table, number, settle=number < 20)
    writer.close()
    files = sorted(journal_dir.glob("journal-*.jsonl"))
    total = sum(1 for _ in iter_records([journal_dir]))
    assert len(files) >= 3
    again = open_writer(rotate_bytes=40_000)
    table, report = recover(again, TableLayout.for_game(GAME))
    assert report.records < total / 10
    assert report.round == 20 and report.decision is Decision.CONTINUE
    assert report.clause == "MBS-R3P 5.13.2"
    table.process(cmd.RevealDealer(**DEALER))
    table.process(cmd.SettleRound(**DEALER))
    again.close()
    full = replay_records(iter_records([journal_dir]))
    assert full.divergences == [] and full.settlements_checked == 20


def test_recent_device_events_survive_the_session_boundary(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """The last numbered device events are named in each ``session_started``, so a resend of
    one recorded before the boundary is still recognised after a restart that reads only the
    last session (the device never saw its acknowledgement)."""
    writer = open_writer()
    table = _start(writer)
    _round(table, 1)
    table.process(cmd.OpenRound(**DEALER))  # a new session: round 1's events are behind it
    writer.close()
    again = open_writer()
    table, _report = recover(again, TableLayout.for_game(GAME))
    resent = dev.CardSetDispensed("shuffler", cards=parse_cards(HANDS[2]), hand_number=3,
                                  origin=dev.EventOrigin(77, 13))
    assert table.delivery.already_recorded(resent)
    table.process(resent)
    assert table.delivery.repeats == 1
    assert origin_key(resent) in table.delivery.delivered


def test_iter_from_last_reads_across_files(open_writer: Callable[..., JournalWriter],
                                           journal_dir: Path) -> None:
    """The last record of the type may sit in an older file: reading starts there and runs on
    through the newer files; with no such record every record is read."""
    writer = open_writer(rotate_bytes=2_000)
    writer.append("marker", {"n": 0})
    writer.append(SESSION_STARTED, {"n": 1})
    writer.append(SESSION_STARTED, {"n": 2})
    for n in range(3, 40):
        writer.append("filler", {"n": n, "pad": "x" * 100})
    writer.close()
    assert len(list(journal_dir.glob("journal-*.jsonl"))) >= 3
    read = list(iter_from_last(journal_dir, SESSION_STARTED))
    assert read[0].event_type == SESSION_STARTED and read[0].payload == {"n": 2}
    assert read[-1].event_type == "journal_closed"
    assert [r.seq for r in read] == list(range(read[0].seq, read[-1].seq + 1))
    everything = list(iter_from_last(journal_dir, "no_such_event"))
    assert everything[0].seq == 1 and len(everything) == read[-1].seq


def _bytes_read() -> int:
    """Bytes this process has read through read() system calls so far (``rchar``)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_iter_from_last_reads_the_newest_files_end_not_all_of_it(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """Recovery's read is bounded by the last session, not by the newest file (issue 27: READY
    within 1 s at any journal size): with a 20 MB file before the last ``session_started``,
    finding it and reading on reads well under a megabyte (it read the file whole twice)."""
    writer = open_writer()
    writer.append(SESSION_STARTED, {"n": 1})
    for n in range(80_000):
        writer.append("filler", {"n": n, "pad": "x" * 150})
    writer.append(SESSION_STARTED, {"n": 2})
    writer.append("after", {"n": 3})
    writer.close()
    newest = sorted(journal_dir.glob("journal-*.jsonl"))[-1]
    assert newest.stat().st_size > 20_000_000
    before = _bytes_read()
    read = list(iter_from_last(journal_dir, SESSION_STARTED))
    spent = _bytes_read() - before
    assert [r.event_type for r in read] == [SESSION_STARTED, "after", "journal_closed"]
    assert read[0].payload == {"n": 2}
    assert spent < 1_000_000, f"read {spent} bytes to find the last session"


def test_iter_from_last_names_an_unsound_lines_number_in_the_file(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """A line after the last session that is not a sound record is reported with its line
    number in the file (counted only then), as recovery names it."""
    writer = open_writer()
    for n in range(5):
        writer.append("filler", {"n": n})
    writer.append(SESSION_STARTED, {"n": 1})
    writer.append("after", {"n": 2})
    writer.close()
    newest = sorted(journal_dir.glob("journal-*.jsonl"))[-1]
    lines = newest.read_bytes().splitlines(keepends=True)
    number = next(i for i, raw in enumerate(lines, 1) if b'"after"' in raw)
    lines[number - 1] = lines[number - 1].replace(b'"n":2', b'"n":9')
    newest.write_bytes(b"".join(lines))
    unsound: list[object] = []
    read = list(iter_from_last(journal_dir, SESSION_STARTED, on_unsound=unsound.append))
    assert [r.event_type for r in read] == [SESSION_STARTED, "journal_closed"]
    assert [(u.line, u.seq) for u in unsound] == [(number, 8)]  # type: ignore[attr-defined]
