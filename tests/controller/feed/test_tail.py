"""Following the journal as it is written: complete lines only, across files, from a cursor."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.bench import Bench
from controller.feed.tail import JournalTail
from controller.journal.files import file_name
from testbed.journalgen import rehome


@pytest.fixture(name="lines", scope="module")
def fixture_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    directory = tmp_path_factory.mktemp("tail")
    Bench("rws-three-card-poker", 1, seed=2, journal_dir=directory).run()
    return rehome(directory, "T1")


def test_half_written_line_waits_and_the_next_file_follows(tmp_path: Path,
                                                           lines: list[bytes]) -> None:
    """A line without its newline is not read until it is complete; after the current file's
    last line the tail moves to the next file; nothing is read twice or skipped."""
    journal = tmp_path / "journal"
    tail = JournalTail(journal, 0)
    assert tail.read(100) == []  # no directory yet: the service has not started
    journal.mkdir()
    first = journal / file_name(1)
    first.write_bytes(b"".join(lines[:10]) + lines[10][:20])
    assert [r.seq for r in tail.read(100)] == list(range(1, 11))
    with first.open("ab") as handle:
        handle.write(lines[10][20:] + b"".join(lines[11:20]))
    (journal / file_name(2)).write_bytes(b"".join(lines[20:]))
    assert [r.seq for r in tail.read(5)] == list(range(11, 16))
    assert [r.seq for r in tail.read(10_000)] == list(range(16, len(lines) + 1))
    assert tail.read(100) == []


def test_starts_after_the_cursor_in_the_right_file(tmp_path: Path, lines: list[bytes]) -> None:
    """From a cursor at seq 25: the first file (seqs 1-20) is not read again."""
    journal = tmp_path / "journal"
    journal.mkdir()
    (journal / file_name(1)).write_bytes(b"".join(lines[:20]))
    (journal / file_name(2)).write_bytes(b"".join(lines[20:]))
    records = JournalTail(journal, 25).read(10_000)
    assert records[0].seq == 26 and records[-1].seq == len(lines)
    assert records[0].prev_hash == json.loads(lines[24])["hash"]


@settings(max_examples=40, deadline=None)
@given(chunk=st.integers(min_value=1, max_value=3000),
       limits=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=20))
def test_any_chunk_size_reads_every_record_once_in_order(lines: list[bytes], chunk: int,
                                                          limits: list[int]) -> None:
    """However the file is cut into reads (a chunk far shorter than a line included, which is
    then read on to its newline) and however many records each call asks for, the tail gives
    each written record once, in order, equal to the line written, and nothing else."""
    with tempfile.TemporaryDirectory() as work:
        journal = Path(work)
        (journal / file_name(1)).write_bytes(b"".join(lines[:30]))
        (journal / file_name(31)).write_bytes(b"".join(lines[30:]))
        tail = JournalTail(journal, 0, chunk=chunk)
        got = []
        for limit in limits * (len(lines) // len(limits) + 1):
            batch = tail.read(limit)
            assert len(batch) <= limit
            got += batch
        got += tail.read(len(lines))
    assert [record.seq for record in got] == list(range(1, len(lines) + 1))
    assert [record.line().encode() + b"\n" for record in got] == lines
    assert tail.problem is None


def test_read_first_finds_a_record_deep_in_the_journal(tmp_path: Path) -> None:
    """A resend from the middle of a journal: ``read_first`` returns the record at the seq
    asked for even when many chunks of earlier records lie before it (``read`` gives nothing
    for a chunk it only skipped)."""
    from testbed.journalgen import rehome, write_all
    from controller.bench import Bench

    Bench("rws-three-card-poker", 6, seed=2, journal_dir=tmp_path / "bench").run()
    lines = rehome(tmp_path / "bench", "T1")
    write_all(tmp_path / "journal", lines)
    deep = len(lines) - 3
    tail = JournalTail(tmp_path / "journal", deep - 1, chunk=4096)
    found = tail.read_first()
    assert found is not None and found.seq == deep
    assert JournalTail(tmp_path / "journal", len(lines), chunk=4096).read_first() is None
