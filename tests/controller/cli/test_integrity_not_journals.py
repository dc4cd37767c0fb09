"""``tablectl integrity report`` given files that are not journals (issue 34, "bad input"):
one line naming them and exit 2, before any report is written. On the previous main a file of
zeros or another program's file read as a journal of no records: "0 decks", exit 0, the same
answer as a table that dealt nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli import EXIT_USAGE, main
from testbed.journalgen import write_synthetic_journal
from tests.stderr import one_error_line


@pytest.fixture(name="journal")
def fixture_journal(tmp_path: Path) -> Path:
    directory = tmp_path / "journal"
    write_synthetic_journal(directory, rounds=3)
    return directory


@pytest.mark.parametrize("content", [bytes(100_000), b"\0" * 4000 + b"\n" * 50,
                                     b"# tablectl\n\nThe table-side controller.\n" * 200,
                                     b'{"not": "a record"}\n'],
                         ids=["zeros", "zeros with newlines", "text", "other JSON"])
def test_a_file_that_is_not_a_journal_is_named(tmp_path: Path, content: bytes,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.bin"
    other.write_bytes(content)
    out = tmp_path / "report"
    assert main(["integrity", "report", str(other), "--out", str(out)]) == EXIT_USAGE
    line = one_error_line(capsys)
    assert "no journal records" in line and str(other) in line
    assert not out.exists()


def test_only_the_paths_without_records_are_named(tmp_path: Path, journal: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A journal and a file of zeros: the zeros are refused by name, not left out silently."""
    zeros = tmp_path / "zeros.bin"
    zeros.write_bytes(bytes(8192))
    assert main(["integrity", "report", str(journal), str(zeros),
                 "--out", str(tmp_path / "report")]) == EXIT_USAGE
    line = one_error_line(capsys)
    assert str(zeros) in line and str(journal) not in line


def test_a_journal_given_as_its_listing_still_reports(tmp_path: Path, journal: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``DIR/*`` names the journal's bookkeeping files (``journal.head``) and an empty journal
    file (the newest, just rotated) holds no record yet: neither is refused."""
    assert main(["integrity", "report", str(journal), "--out", str(tmp_path / "whole")]) == 0
    whole = capsys.readouterr().out.split(";")[0]
    (journal / "journal-000099.jsonl").write_bytes(b"")
    names = sorted(str(path) for path in journal.iterdir())
    assert any(name.endswith("journal.head") for name in names)
    assert main(["integrity", "report", *names, "--out", str(tmp_path / "report")]) == 0
    assert capsys.readouterr().out.split(";")[0] == whole != "0 decks, 0 hands"


def test_the_bookkeeping_alone_is_not_a_journal(journal: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    head = journal / "journal.head"
    assert main(["integrity", "report", str(head),
                 "--out", str(tmp_path / "report")]) == EXIT_USAGE
    assert str(head) in one_error_line(capsys)
