"""``iter_records(only=...)``: the integrity report's fast path over long journals reads just the
kinds it asks for, and exactly those: the same records a full parse would select."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.bench import Bench
from controller.journal.errors import JournalFormatError
from controller.journal.reader import iter_records


@pytest.fixture(scope="module", name="journal")
def journal_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("journal")
    Bench("rws-three-card-poker", 6, seed=4, faults="0.2", journal_dir=directory).run()
    return directory


KINDS = ["input_device", "input_command", "protection_alert", "card_assigned", "round_settled",
         "journal_file_opened", "no_such_kind"]


@settings(max_examples=30, deadline=None)
@given(only=st.sets(st.sampled_from(KINDS)))
def test_only_selects_what_a_full_parse_selects(journal: Path, only: set[str]) -> None:
    everything = list(iter_records([journal]))
    wanted = [(r.seq, r.hash) for r in everything if r.event_type in only]
    assert [(r.seq, r.hash) for r in iter_records([journal], only=only)] == wanted


def test_a_damaged_line_of_a_wanted_kind_is_still_refused(journal: Path, tmp_path: Path
                                                          ) -> None:
    """Lines of other kinds are passed over unchecked (journal verify proves the whole);
    a wanted line whose hash does not match is an error as before."""
    copy = tmp_path / "journal-000001.jsonl"
    lines = next(journal.glob("journal-*.jsonl")).read_bytes().splitlines(keepends=True)
    target = next(i for i, line in enumerate(lines) if b'"event":"input_device"' in line)
    lines[target] = lines[target].replace(b'"seq":', b'"seq":1', 1)
    copy.write_bytes(b"".join(lines))
    with pytest.raises(JournalFormatError, match=f":{target + 1}:"):
        list(iter_records([copy], only={"input_device"}))
    assert list(iter_records([copy], only={"card_assigned"}))  # not read, not refused
