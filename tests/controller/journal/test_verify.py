"""Tamper tests: every kind of damage is detected and named with its file, line and sequence
number (issue 5 "Tests and benchmarks": alter a byte, delete, reorder, duplicate or truncate
records, swap files; bad HMAC)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.journal import Anchor, Damage, JournalWriter, verify
from controller.journal.record import canonical_json, seal

from .conftest import KEY, deal_round, read_lines, write_lines


@pytest.fixture(name="one_file")
def fixture_one_file(open_writer: Callable[..., JournalWriter]) -> Path:
    """One file, 14 records; line N holds seq N."""
    writer = open_writer(rotate_bytes=None)
    deal_round(writer, "r1")
    deal_round(writer, "r2", ("2C", "3C", "4C"))
    writer.close()
    return writer.path


@pytest.fixture(name="many_files")
def fixture_many_files(open_writer: Callable[..., JournalWriter]) -> list[Path]:
    """Five or more files, rotated by size; the chain runs across them."""
    writer = open_writer(rotate_bytes=1500)
    for number in range(6):
        deal_round(writer, f"r{number}")
    writer.close()
    files = writer.files()
    assert len(files) >= 5
    return files


def _rehash(line: bytes, key: bytes | None = None, **changes: object) -> bytes:
    """What a forger without the key does: change fields and recompute the hash."""
    data = json.loads(line)
    data.update(changes)
    body = {k: v for k, v in data.items() if k not in ("hash", "hmac")}
    return (canonical_json(seal(body, key)) + "\n").encode()


def _damage(paths: list[Path] | Path, **options: object) -> tuple[Damage, str, int, int | None]:
    targets = [paths] if isinstance(paths, Path) else paths
    report = verify(targets, **options)  # type: ignore[arg-type]
    assert not report.ok, "damage went undetected"
    assert report.problem is not None
    problem = report.problem
    return problem.kind, Path(problem.file).name, problem.line, problem.seq


def test_intact_journal_verifies_from_genesis(one_file: Path) -> None:
    """An untouched journal verifies: every record counted, anchored at genesis, closed."""
    report = verify([one_file])
    assert report.ok and report.records == 14 and report.first_seq == 1
    assert report.anchor is Anchor.GENESIS and report.closed and report.notes == ()


def test_altered_byte_is_named_altered(one_file: Path) -> None:
    """A card changed in place (QD -> QH) breaks that record's hash."""
    lines = read_lines(one_file)
    assert b'"QD"' in lines[3]
    lines[3] = lines[3].replace(b'"QD"', b'"QH"')
    write_lines(one_file, lines)
    assert _damage(one_file) == (Damage.ALTERED, one_file.name, 4, 4)


def test_rehashed_record_breaks_the_next_link(one_file: Path) -> None:
    """A forger who recomputes the hash is caught by the next record's link."""
    lines = read_lines(one_file)
    lines[4] = _rehash(lines[4], payload={"position": "1", "card": "AS"})
    write_lines(one_file, lines)
    assert _damage(one_file) == (Damage.ALTERED, one_file.name, 6, 6)


def test_non_canonical_bytes_are_altered(one_file: Path) -> None:
    """Whitespace added leaves the same JSON values but not the same bytes: still caught."""
    lines = read_lines(one_file)
    lines[2] = lines[2].replace(b'"seq":', b'"seq": ')
    write_lines(one_file, lines)
    kind, _, line, seq = _damage(one_file)
    assert (kind, line, seq) == (Damage.ALTERED, 3, 3)


def test_deleted_record_is_named_missing(one_file: Path) -> None:
    """A record removed from the middle: the next one names the gap."""
    lines = read_lines(one_file)
    del lines[6]
    write_lines(one_file, lines)
    assert _damage(one_file) == (Damage.MISSING, one_file.name, 7, 8)


def test_swapped_records_are_named_reordered(one_file: Path) -> None:
    """Two records exchanged: the first out of place is named."""
    lines = read_lines(one_file)
    lines[5], lines[6] = lines[6], lines[5]
    write_lines(one_file, lines)
    assert _damage(one_file) == (Damage.REORDERED, one_file.name, 6, 7)


def test_repeated_record_is_named_duplicated(one_file: Path) -> None:
    """A record copied in again right after itself."""
    lines = read_lines(one_file)
    lines.insert(5, lines[4])
    write_lines(one_file, lines)
    assert _damage(one_file) == (Damage.DUPLICATED, one_file.name, 6, 5)


def test_cut_last_line_is_named_truncated(one_file: Path) -> None:
    """The file cut inside its last record."""
    data = one_file.read_bytes()
    one_file.write_bytes(data[:-40])
    assert _damage(one_file) == (Damage.TRUNCATED, one_file.name, 14, 14)


def test_garbage_line_is_named_malformed(one_file: Path) -> None:
    """A line that is not a record at all."""
    lines = read_lines(one_file)
    lines.insert(3, b"not json\n")
    write_lines(one_file, lines)
    assert _damage(one_file) == (Damage.MALFORMED, one_file.name, 4, 4)


def test_file_cut_at_a_record_boundary_is_named_truncated(many_files: list[Path]) -> None:
    """A rotated file that lost its last records: the next file's header still names it."""
    target = many_files[1]
    lines = read_lines(target)
    write_lines(target, lines[:-2])
    kind, name, _line, _seq = _damage(many_files)
    assert (kind, name) == (Damage.TRUNCATED, target.name)


def test_swapped_files_are_named_file_swapped(many_files: list[Path]) -> None:
    """Two files' contents exchanged (or renamed): the first misplaced file is named."""
    second, third = many_files[1], many_files[2]
    a, b = second.read_bytes(), third.read_bytes()
    second.write_bytes(b)
    third.write_bytes(a)
    kind, name, line, _seq = _damage(many_files)
    assert (kind, name, line) == (Damage.FILE_SWAPPED, second.name, 1)


def test_deleted_middle_file_is_named_gap(many_files: list[Path]) -> None:
    """A whole file removed between two others."""
    many_files[2].unlink()
    remaining = [path for path in many_files if path.exists()]
    kind, name, line, _seq = _damage(remaining)
    assert (kind, name, line) == (Damage.GAP, many_files[3].name, 1)


def test_deleted_oldest_file_without_checkpoint_is_missing(many_files: list[Path]) -> None:
    """Dropping the oldest file is not retention: nothing vouches for it."""
    many_files[0].unlink()
    kind, name, line, _seq = _damage(many_files[1:])
    assert (kind, name, line) == (Damage.MISSING, many_files[1].name, 1)
    excerpt = verify(many_files[1:], allow_unanchored=True)
    assert excerpt.ok and excerpt.anchor is Anchor.UNANCHORED


def test_directory_verifies_like_its_files(many_files: list[Path]) -> None:
    """A directory stands for its journal files in name order."""
    report = verify([many_files[0].parent])
    assert report.ok and len(report.files) == len(many_files)


@pytest.fixture(name="keyed")
def fixture_keyed(open_writer: Callable[..., JournalWriter], tmp_path: Path) -> Path:
    writer = open_writer(rotate_bytes=None, hmac_key=KEY, directory=tmp_path / "keyed")
    deal_round(writer, "r1")
    writer.close()
    return writer.path


def test_keyed_journal_verifies_with_its_key(keyed: Path) -> None:
    """With the key every HMAC is checked; without it the report says HMACs were not checked,
    and it is not complete (issue 11: `journal verify` exits 3)."""
    assert verify([keyed], hmac_key=KEY).complete
    unkeyed = verify([keyed])
    assert unkeyed.ok and not unkeyed.hmac_checked and unkeyed.hmac_present
    assert not unkeyed.complete and any("HMAC" in why for why in unkeyed.unchecked)


def test_rewrite_without_the_key_is_bad_hmac(keyed: Path) -> None:
    """A forger who rehashes the record and every later link still cannot make the HMAC."""
    lines = read_lines(keyed)
    forged = _rehash(lines[3], None, payload={"position": "1", "card": "AS"})
    data = json.loads(forged)
    data["hmac"] = json.loads(lines[3])["hmac"]  # the old HMAC left in place
    lines[3] = (canonical_json(data) + "\n").encode()
    previous = json.loads(lines[3])["hash"]
    for index in range(4, len(lines)):  # relink the rest of the chain too
        lines[index] = _rehash(lines[index], None, prev=previous)
        previous = json.loads(lines[index])["hash"]
    write_lines(keyed, lines)
    assert verify([keyed], head=None).ok, "without the key the forgery is chain-consistent"
    assert verify([keyed]).problem.kind is Damage.ALTERED  # type: ignore[union-attr]
    assert _damage(keyed, hmac_key=KEY) == (Damage.BAD_HMAC, keyed.name, 4, 4)


def test_wrong_key_or_unkeyed_journal_is_bad_hmac(keyed: Path, one_file: Path) -> None:
    """A key that is not the journal's, or a journal with no HMACs, fails at seq 1."""
    assert _damage(keyed, hmac_key=bytes(32))[0::2] == (Damage.BAD_HMAC, 1)
    assert _damage(one_file, hmac_key=KEY)[0::2] == (Damage.BAD_HMAC, 1)
