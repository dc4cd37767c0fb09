"""``iter_newest_first``: the protection warm-up's reader, newest record first and only as far as
its caller reads: the same records a full parse selects, in reverse, whatever the read size."""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from pathlib import Path

import pytest

from controller.journal import JournalWriter
from controller.journal.errors import JournalIOError
from controller.journal.reader import iter_newest_first, iter_records


@pytest.fixture(name="journal")
def journal_fixture(open_writer: Callable[..., JournalWriter], journal_dir: Path) -> Path:
    """Three files of inputs of two kinds, and other records between them."""
    writer = open_writer()
    for number in range(30):
        writer.append("input_device", {"type": "ShuffleDone" if number % 3 == 0
                                       else "CardRead", "fields": {"n": number}})
        writer.append("round_settled", {"type": "ShuffleDone", "n": number})
        if number in (9, 19):
            writer.rotate()
    writer.close()
    return journal_dir


@pytest.mark.parametrize("chunk", [1, 7, 97, 4096, 256 * 1024])
def test_newest_first_is_a_full_parse_reversed(journal: Path, chunk: int) -> None:
    """Whatever the read size (a line split across reads, a read inside one line), the records
    are exactly those a full parse selects by kind and mention, newest first."""
    wanted = [r.seq for r in iter_records([journal]) if r.event_type == "input_device"
              and r.payload["type"] == "ShuffleDone"]
    found = [r.seq for r in iter_newest_first(journal, only=["input_device"],
                                              mentioning=["ShuffleDone"], chunk=chunk)]
    assert len(list(journal.glob("journal-*.jsonl"))) == 3
    assert found == wanted[::-1] and len(found) == 10


def test_a_torn_end_and_records_after_the_moment_are_left_out(journal: Path) -> None:
    """The newest file's unterminated end (torn, or being written) is not a record, and
    ``up_to_seq`` leaves out what was appended after the reader's moment."""
    every = [r.seq for r in iter_records([journal]) if r.event_type == "input_device"]
    newest = sorted(journal.glob("journal-*.jsonl"))[-1]
    with newest.open("ab") as handle:
        handle.write(b'{"event":"input_device","payload":{"type":"CardRead"')
    found = [r.seq for r in iter_newest_first(journal, only=["input_device"],
                                              up_to_seq=every[-3])]
    assert found == every[-3::-1]


def test_reads_only_as_far_as_asked(journal: Path) -> None:
    """A caller that stops early never opens the older files: an unreadable first file
    (a directory in its place) fails a full read, not the last five records."""
    (journal / "journal-000000.jsonl").mkdir()
    last = list(islice(iter_newest_first(journal, only=["input_device"]), 5))
    assert len(last) == 5 and last[0].payload["fields"] == {"n": 29}
    with pytest.raises(JournalIOError, match="journal-000000.jsonl"):
        list(iter_newest_first(journal, only=["input_device"]))
