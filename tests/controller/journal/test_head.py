"""The journal head (issue 11, "The journal's tail and its key"): a cut tail or a missing newest
file is ``truncated`` (exit 1), not a note; a journal whose head is missing, or a keyed journal
checked without its key, exits 3 (not checked); a forged unkeyed journal is caught by its head."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from controller.cli import main
from controller.journal import Damage, Durability, JournalWriter, verify
from controller.journal.head import HEAD_NAME, SLOT_BYTES, read_head
from controller.journal.record import canonical_json, seal
from controller.journal.startup import check_journal, mark_clean

from .conftest import KEY, deal_round, read_lines, write_lines

ROUNDS = 60
"""Six records a round: 360 records and more, so 300 can be cut."""


@pytest.fixture(name="long_journal")
def fixture_long_journal(open_writer: Callable[..., JournalWriter], journal_dir: Path) -> Path:
    """One file of 360+ records, closed: its head is its last record."""
    writer = open_writer(rotate_bytes=None)
    for number in range(ROUNDS):
        deal_round(writer, f"r{number}")
    writer.close()
    return journal_dir


def _verify_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["journal", "verify", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("cut", [1, 10, 300])
def test_cut_tail_is_truncated(long_journal: Path, cut: int,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """Removing the last 1, 10 or 300 records leaves a valid chain; the head names the record
    the journal must reach, so verify says `truncated` and exits 1."""
    path = long_journal / "journal-000001.jsonl"
    lines = read_lines(path)
    assert len(lines) > 300
    write_lines(path, lines[:-cut])
    assert verify([long_journal], head=None).ok  # the chain alone cannot see it
    report = verify([long_journal])
    assert report.problem is not None and report.problem.kind is Damage.TRUNCATED
    assert report.problem.seq == len(lines) - cut
    assert f"seq {len(lines) - cut + 1}..{len(lines)} cut from its end" in report.problem.detail
    code, out, err = _verify_cli(capsys, str(long_journal))
    assert code == 1 and "DAMAGED: truncated" in out and "truncated" in err


def test_missing_newest_file_is_truncated(open_writer: Callable[..., JournalWriter],
                                          journal_dir: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Deleting the newest file of several is `truncated`, exit 1."""
    writer = open_writer(rotate_bytes=1500)
    for number in range(6):
        deal_round(writer, f"r{number}")
    writer.close()
    files = writer.files()
    assert len(files) >= 3
    files[-1].unlink()
    code, out, _err = _verify_cli(capsys, str(journal_dir))
    assert code == 1 and "truncated" in out and files[-1].name in out


def test_missing_head_is_not_checked(long_journal: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Without its head the end of a journal cannot be checked: exit 3 with the reason; an
    excerpt handed over for review is accepted with --allow-unanchored."""
    (long_journal / HEAD_NAME).unlink()
    code, out, err = _verify_cli(capsys, str(long_journal))
    assert code == 3 and "NOT CHECKED: no head" in out and "not fully checked" in err
    code, out, _err = _verify_cli(capsys, str(long_journal), "--allow-unanchored")
    assert code == 0 and "accepted as an excerpt" in out


def test_keyed_journal_without_key_is_not_checked(
        open_writer: Callable[..., JournalWriter], journal_dir: Path, key_file: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A keyed journal checked without --hmac-key exits 3, even after every `hmac` field was
    stripped and the chain rehashed (its head says it is keyed); with the key it is bad_hmac."""
    writer = open_writer(hmac_key=KEY, rotate_bytes=None)
    deal_round(writer, "r1")
    writer.close()
    assert _verify_cli(capsys, str(journal_dir))[0] == 3
    assert _verify_cli(capsys, str(journal_dir), "--hmac-key", str(key_file))[0] == 0
    path = writer.path
    prev = None
    stripped = []
    for raw in read_lines(path):
        data = json.loads(raw)
        data.pop("hmac")
        if prev is not None:
            data["prev"] = prev
        body = {k: v for k, v in data.items() if k != "hash"}
        sealed = seal(body, None)
        prev = sealed["hash"]
        stripped.append((canonical_json(sealed) + "\n").encode())
    write_lines(path, stripped)
    # the hash never covered the HMAC, so the chain is unchanged; the keyed head says a key
    # is needed to check it
    code, out, _err = _verify_cli(capsys, str(journal_dir))
    assert code == 3 and "head carries an HMAC" in out
    (journal_dir / HEAD_NAME).unlink()
    code, out, _err = _verify_cli(capsys, str(journal_dir))
    assert code == 3 and "no head" in out  # and without the head: not checked either
    code, out, _err = _verify_cli(capsys, str(journal_dir), "--hmac-key", str(key_file))
    assert code == 1 and "bad_hmac" in out


def test_forged_unkeyed_journal_is_caught_by_its_head(
        long_journal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A settlement rewritten and every later record rehashed is a valid chain, but the head's
    record has another hash now: `altered`, exit 1."""
    path = long_journal / "journal-000001.jsonl"
    lines = read_lines(path)
    target = next(i for i, raw in enumerate(lines) if b'"round_settled"' in raw)
    prev = json.loads(lines[target - 1])["hash"]
    for index in range(target, len(lines)):
        data = json.loads(lines[index])
        if index == target:
            data["payload"]["net"]["1"] = 999999
        data["prev"] = prev
        sealed = seal({k: v for k, v in data.items() if k != "hash"}, None)
        prev = sealed["hash"]
        lines[index] = (canonical_json(sealed) + "\n").encode()
    write_lines(path, lines)
    assert verify([long_journal], head=None).ok
    code, out, _err = _verify_cli(capsys, str(long_journal))
    assert code == 1 and "altered" in out and "head" in out


def test_torn_head_slot_falls_back_to_the_other(long_journal: Path) -> None:
    """The head is two slots rewritten in turn: a torn write spoils one, the other (one durable
    write older) still holds the end the journal must reach."""
    path = long_journal / HEAD_NAME
    newest = read_head(path, None).head
    assert newest is not None
    data = bytearray(path.read_bytes())
    assert len(data) == 2 * SLOT_BYTES
    slot = 0 if b'"seq":%d' % newest.seq in data[:SLOT_BYTES] else 1
    data[slot * SLOT_BYTES:slot * SLOT_BYTES + 40] = b"\0" * 40
    path.write_bytes(bytes(data))
    older = read_head(path, None).head
    assert older is not None and older.seq < newest.seq
    lines = read_lines(long_journal / "journal-000001.jsonl")
    write_lines(long_journal / "journal-000001.jsonl", lines[:older.seq - 1])
    problem = verify([long_journal]).problem
    assert problem is not None and problem.kind is Damage.TRUNCATED


def test_start_up_check_reads_the_newest_file_without_a_mark(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """Without a verified mark the start-up check reads only the newest file (bounded, however
    old the journal); with the mark it writes, the next check reads only what follows; a cut
    tail is damage either way."""
    writer = open_writer(rotate_bytes=1500)
    for number in range(6):
        deal_round(writer, f"r{number}")
    writer.close()
    files = writer.files()
    newest_records = len(read_lines(files[-1]))
    check = check_journal(journal_dir, None)
    assert not check.incremental and check.damage is not None  # a head without its mark
    assert check.damage["kind"] == "unchecked" and "verified mark" in check.damage["detail"]
    assert check.report is not None and check.report.records == newest_records
    mark_clean(replace(check, damage=None), None, "T7")  # as a supervisor's acknowledgement
    again = open_writer(rotate_bytes=None)
    again.append("note", {"n": 1})
    again.close()
    follow = check_journal(journal_dir, None)
    # the marked record, then journal_resumed, the note and journal_closed
    assert follow.incremental and follow.report is not None and follow.report.records == 4
    lines = read_lines(again.path)
    write_lines(again.path, lines[:-2])
    cut = check_journal(journal_dir, None)
    assert cut.damage is not None and cut.damage["kind"] == "truncated"


def test_an_older_file_alone_is_an_excerpt(open_writer: Callable[..., JournalWriter],
                                           journal_dir: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """One older file handed over alone is not held to the head (it is not the journal's
    end): its end is unchecked (exit 3), and accepted as an excerpt with --allow-unanchored."""
    writer = open_writer(rotate_bytes=1500)
    for number in range(4):
        deal_round(writer, f"r{number}")
    writer.close()
    first = writer.files()[0]
    code, out, _err = _verify_cli(capsys, str(first))
    assert code == 3 and "no head given" in out
    assert _verify_cli(capsys, str(first), "--allow-unanchored")[0] == 0


def test_the_two_slots_never_name_the_same_record(open_writer: Callable[..., JournalWriter],
                                                  journal_dir: Path) -> None:
    """A ``sync()`` with nothing new rewrites no slot, so the slots always name two records and
    a spoiled one named the later: a torn head write is never mistaken for a cut."""
    writer = open_writer(rotate_bytes=None, durability=Durability.MONEY)
    deal_round(writer, "r1")
    writer.sync()
    writer.sync()
    data = (journal_dir / HEAD_NAME).read_bytes()
    seqs = [json.loads(data[i * SLOT_BYTES:(i + 1) * SLOT_BYTES])["seq"] for i in range(2)]
    assert seqs[0] != seqs[1] and max(seqs) == writer.seq
