"""The writer: chain, structlog separation, durability policy, rotation, resume and power-cut
repair (issue 5 "The journal": durable, rotation continues the chain, torn last line repaired
and the repair journaled)."""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from controller.journal import (
    Anchor,
    Durability,
    JournalClosedError,
    JournalConfigError,
    JournalDamagedError,
    JournalIOError,
    JournalWriter,
    iter_records,
    verify,
)
from controller.journal.files import file_name
from controller.journal.record import GENESIS_HASH, canonical_json
from controller.logsetup import configure_logging
from drivers.events import DeviceIdentity, DeviceOnline

from .conftest import KEY, FakeClock, deal_round, read_lines

Opener = Callable[..., JournalWriter]


def test_first_file_starts_the_chain_at_genesis(open_writer: Opener, journal_dir: Path) -> None:
    """seq 1 is the file header, linked to the all-zero genesis hash; each record links on."""
    writer = open_writer()
    first = next(iter_records([journal_dir]))
    assert (first.seq, first.prev_hash, first.event_type) == (1, GENESIS_HASH,
                                                              "journal_file_opened")
    record = writer.append("card_assigned", {"position": "1", "card": "QD"}, round_id="r1")
    assert (record.seq, record.prev_hash) == (2, first.hash)
    assert writer.path.name == "journal-000001.jsonl"


def test_files_and_directory_have_least_privilege(open_writer: Opener, journal_dir: Path
                                                  ) -> None:
    """Owner writes, the surveillance group reads, others nothing (0640 / 0750)."""
    writer = open_writer()
    assert stat.S_IMODE(os.stat(journal_dir).st_mode) == 0o750
    assert stat.S_IMODE(os.stat(writer.path).st_mode) == 0o640


def test_journal_ignores_the_operational_log_configuration(
        open_writer: Opener, capsys: pytest.CaptureFixture[str]) -> None:
    """The journal has its own processor chain: the global structlog config neither changes
    its lines nor receives them."""
    configure_logging("DEBUG", json=True)
    writer = open_writer()
    writer.append("bets_closed", {"wagers": 2})
    writer.close()
    assert capsys.readouterr().err == ""
    assert all(json.loads(line)["v"] == 1 for line in read_lines(writer.path))


def test_dataclass_payload_is_journaled_field_by_field(open_writer: Opener) -> None:
    """Device events go in as the typed values the table receives."""
    writer = open_writer()
    event = DeviceOnline("shuffler", 1.5, DeviceIdentity("V", "M", "S1", "1.0", "ab", 2), 7)
    record = writer.append("device_online", event, actor="shuffler")
    assert record.payload["identity"]["serial"] == "S1"
    assert record.payload["boot_id"] == 7


@pytest.mark.parametrize(
    ("durability", "expected"),
    [(Durability.MONEY, [0, 1, 1, 1, 0]), (Durability.ALWAYS, [1, 1, 1, 1, 1]),
     (Durability.NONE, [0, 0, 0, 0, 0])],
)
def test_fsync_follows_the_durability_policy(open_writer: Opener, mocker: MockerFixture,
                                             durability: Durability, expected: list[int]) -> None:
    """Under ``money`` only money-deciding records are synced before append returns."""
    writer = open_writer(durability=durability)
    fsync = mocker.patch("os.fsync")
    counts = []
    for event, money in (("bet_placed", False), ("card_assigned", False),
                         ("round_voided", False), ("operator_override", True),
                         ("status", False)):
        before = fsync.call_count
        writer.append(event, {}, money=money)
        counts.append(fsync.call_count - before)
    assert counts == expected


def test_size_rotation_continues_the_chain(open_writer: Opener, journal_dir: Path) -> None:
    """Each new file opens with a header naming the file before, linked to its last hash."""
    writer = open_writer(rotate_bytes=2000)
    for number in range(5):
        deal_round(writer, f"r{number}")
    writer.close()
    files = writer.files()
    assert len(files) >= 3
    for before, after in zip(files, files[1:]):
        header = next(iter_records([after]))
        last = list(iter_records([before]))[-1]
        assert header.event_type == "journal_file_opened"
        assert header.payload["previous_file"] == before.name
        assert (header.prev_hash, header.seq) == (last.hash, last.seq + 1)
    assert verify([journal_dir]).ok


def test_day_rotation_at_utc_midnight(open_writer: Opener, clock: FakeClock,
                                      journal_dir: Path) -> None:
    """A record dated a new UTC day starts a new file, even mid-session."""
    clock.now = clock.now.replace(hour=23, minute=59, second=59)
    writer = open_writer()
    writer.append("round_started", {}, round_id="r1")
    clock.advance(seconds=2)
    record = writer.append("round_settled", {}, round_id="r1")
    assert writer.path.name == "journal-000002.jsonl"
    header = next(iter_records([writer.path]))
    assert header.payload["reason"] == "day" and header.ts == record.ts
    writer.close()
    assert verify([journal_dir]).ok


def test_reopen_resumes_the_chain(open_writer: Opener, journal_dir: Path) -> None:
    """A restart continues seq and hash and journals that it resumed."""
    first = open_writer()
    deal_round(first, "r1")
    first.close()
    second = open_writer()
    assert second.seq == first.seq + 1
    resumed = list(iter_records([journal_dir]))[-1]
    assert resumed.event_type == "journal_resumed"
    assert resumed.payload["last_seq"] == first.seq
    second.close()
    assert verify([journal_dir]).ok


def test_torn_last_line_is_repaired_and_journaled(open_writer: Opener, journal_dir: Path
                                                  ) -> None:
    """Power cut mid-write: the partial line is cut off, and the cut itself is a record."""
    writer = open_writer()
    deal_round(writer, "r1")
    last_seq = writer.seq
    writer._close_fd()  # the process dies: no journal_closed
    torn = b'{"actor":"shoe","event":"card_assigned","hash":"ab'
    with writer.path.open("ab") as handle:
        handle.write(torn)
    assert verify([journal_dir]).problem.kind.value == "truncated"  # type: ignore[union-attr]
    reopened = open_writer()
    records = list(iter_records([journal_dir]))
    repair = records[-2]
    assert repair.event_type == "journal_repaired" and repair.seq == last_seq + 1
    assert repair.payload["bytes_dropped"] == len(torn)
    assert bytes.fromhex(repair.payload["dropped_hex"]) == torn
    reopened.close()
    assert verify([journal_dir]).ok


def test_crash_inside_write_leaves_a_repairable_journal(open_writer: Opener, journal_dir: Path,
                                                       mocker: MockerFixture) -> None:
    """The process killed after half a record reached the file (a fault no simulator makes)."""
    writer = open_writer()
    deal_round(writer, "r1")
    real_write = os.write

    def half_then_die(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise KeyboardInterrupt  # stands in for SIGKILL: no cleanup runs

    mocker.patch("os.write", side_effect=half_then_die)
    with pytest.raises(KeyboardInterrupt):
        writer.append("card_assigned", {"position": "2", "card": "KS"}, round_id="r2")
    mocker.stopall()
    writer._close_fd()
    reopened = open_writer()
    events = [record.event_type for record in iter_records([journal_dir])]
    assert events[-2:] == ["journal_repaired", "journal_resumed"]
    reopened.close()
    assert verify([journal_dir]).ok


def test_crash_right_after_rotation_repairs_the_new_file(open_writer: Opener,
                                                         journal_dir: Path) -> None:
    """A new file that holds only a torn header gets its header and continues the chain."""
    writer = open_writer()
    deal_round(writer, "r1")
    writer._close_fd()
    (journal_dir / file_name(2)).write_bytes(b'{"actor":nu')
    reopened = open_writer()
    assert reopened.path.name == file_name(2)
    reopened.close()
    report = verify([journal_dir])
    assert report.ok and report.anchor is Anchor.GENESIS


def test_damage_beyond_a_torn_line_is_not_truncated(open_writer: Opener) -> None:
    """Two bad complete lines are not a power cut: the writer refuses to destroy evidence."""
    writer = open_writer()
    deal_round(writer, "r1")
    writer._close_fd()
    with writer.path.open("ab") as handle:
        handle.write(b"garbage\nmore garbage\n")
    size = writer.path.stat().st_size
    with pytest.raises(JournalDamagedError, match="refusing to truncate"):
        open_writer()
    assert writer.path.stat().st_size == size


def test_reopen_refuses_another_table_or_key(open_writer: Opener) -> None:
    """A journal directory belongs to one table and one HMAC key."""
    open_writer(hmac_key=KEY).close()
    with pytest.raises(JournalConfigError, match="table"):
        open_writer(table_id="T8", hmac_key=KEY)
    with pytest.raises(JournalConfigError, match="HMAC"):
        open_writer()
    with pytest.raises(JournalConfigError, match="HMAC"):
        open_writer(hmac_key=bytes(32))


def test_failed_write_leaves_no_partial_record(open_writer: Opener, journal_dir: Path,
                                               mocker: MockerFixture) -> None:
    """Disk full mid-record: the caller gets a JournalIOError and the file stays sound."""
    writer = open_writer()
    real_write = os.write

    def partial_then_enospc(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[:10]))
        raise OSError(errno.ENOSPC, "No space left on device")

    mocker.patch("os.write", side_effect=partial_then_enospc)
    with pytest.raises(JournalIOError, match="No space left"):
        writer.append("card_assigned", {"card": "QD"})
    mocker.stopall()
    writer.append("card_assigned", {"card": "QD"})
    writer.close()
    assert verify([journal_dir]).ok


def test_concurrent_appends_keep_one_chain(open_writer: Opener, journal_dir: Path) -> None:
    """Device threads and the table thread may append at once; the lock keeps one chain."""
    writer = open_writer(rotate_bytes=4000)
    threads = [threading.Thread(target=lambda n=n: [writer.append("tick", {"n": n, "i": i})
                                                    for i in range(40)], name=f"appender-{n}")
               for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    writer.close()
    report = verify([journal_dir])
    assert report.ok
    assert sum(r.event_type == "tick" for r in iter_records([journal_dir])) == 160


def test_closed_writer_refuses_appends(open_writer: Opener) -> None:
    """After close nothing can be appended (the last record is journal_closed)."""
    writer = open_writer()
    writer.close()
    writer.close()
    with pytest.raises(JournalClosedError):
        writer.append("late", {})


def test_table_round_events_journal_under_their_snake_case_names(open_writer: Opener) -> None:
    """The table's frozen round events go in as they are; a card assignment is money-deciding
    and carries its round id."""
    from controller.games.cards import parse_card
    from controller.journal import MONEY_EVENT_TYPES
    from controller.table.events import CardAssigned

    writer = open_writer()
    record = writer.append_event(CardAssigned(round=12, position="3", card=parse_card("TD"),
                                              index=0), actor="shoe")
    assert (record.event_type, record.round_id) == ("card_assigned", "12")
    assert record.payload == {"round": 12, "position": "3", "card": "TD", "index": 0}
    assert record.event_type in MONEY_EVENT_TYPES


def test_past_damage_continues_in_a_new_file_and_keeps_the_evidence(
        open_writer: Opener, journal_dir: Path) -> None:
    """For a caller that journals the damage first (the service), ``past_damage`` leaves the
    damaged file byte for byte and continues the chain in a new file (reason ``damaged``)
    from its last sound record: verify still names the damage where it is."""
    writer = open_writer()
    deal_round(writer, "r1")
    last_seq, first_file = writer.seq, writer.path
    writer._close_fd()
    with first_file.open("ab") as handle:
        handle.write(b"garbage\nmore garbage\n")
    evidence = first_file.read_bytes()
    again = open_writer(past_damage=True)
    again.append("note", {"n": 1})
    again.close()
    assert first_file.read_bytes() == evidence
    assert again.path.name == file_name(2)
    header = next(iter_records([again.path]))
    assert header.payload["reason"] == "damaged" and header.seq == last_seq + 1
    assert header.payload["previous_file"] == first_file.name
    problem = verify([journal_dir]).problem
    assert problem is not None and problem.file == str(first_file)
    assert problem.seq == last_seq + 1


def test_past_damage_when_the_newest_file_holds_nothing_sound(
        open_writer: Opener, journal_dir: Path) -> None:
    """The newest file only a torn line (a crash right after rotation) and the file before it
    ending in damage: with ``past_damage`` the chain still continues, in a third file, from
    the last sound record of the first."""
    writer = open_writer()
    deal_round(writer, "r1")
    last_seq, first_file = writer.seq, writer.path
    writer._close_fd()
    with first_file.open("ab") as handle:
        handle.write(b"garbage\nmore garbage\n")
    (journal_dir / file_name(2)).write_bytes(b'{"actor":nu')
    with pytest.raises(JournalDamagedError):
        open_writer()
    again = open_writer(past_damage=True)
    again.close()
    assert again.path.name == file_name(3)
    header = next(iter_records([again.path]))
    assert header.seq == last_seq + 1 and header.payload["reason"] == "damaged"


@pytest.mark.parametrize("keyed", [False, True])
def test_the_payload_text_kept_is_the_records_own(open_writer: Opener, journal_dir: Path,
                                                   keyed: bool) -> None:
    """``append_keeping_text`` gives the payload's canonical text as the record's line holds
    it (the service's watchers are sent it: issue 28), whatever the actor, round and payload
    strings hold; the line written is the one ``append`` writes."""
    writer = open_writer(hmac_key=KEY if keyed else None)
    payload = {"z": ',"prev":"x', "nested": {"payload": {"prev": "é\u2028"}, "v": 1},
               "a": [1, None, True]}
    record, text = writer.append_keeping_text("round_settled", payload, round_id='7,"prev":"',
                                              actor=',"payload":{}', jsonable=True)
    writer.close()
    assert text == canonical_json(payload)
    assert json.loads(text) == record.payload == payload
    line = next(line for line in (journal_dir / "journal-000001.jsonl").read_text(
        encoding="utf-8").split("\n") if '"event":"round_settled"' in line)
    assert line == record.line() and f',"payload":{text},"prev":"' in line
