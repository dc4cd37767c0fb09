"""Journals written by past releases, kept as test fixtures (issue 44: a journal written by any
earlier release replays, recovers and resumes under every later one).

``tests/journal_fixtures/RELEASE.tar.xz`` holds one directory a journal, written by that
release's own code with the scripts beside this module (``write_bench_journals.sh``,
``write_service_journals.sh``, ``write_rulings_journal.py``); ``manifest.json`` says what each
is and what today's replay must find in it. Every later change of a record's form or of a
ruling adds the journals of the release before it (docs/journal.md, "Journals of past
releases").
"""

from __future__ import annotations

import json
import shutil
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.journal.record import canonical_json, compute_hash

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "journal_fixtures"


@dataclass(frozen=True, slots=True)
class PastJournal:
    release: str
    name: str
    expected: str
    """Today's replay verdict: ``reproduced`` or ``explained``."""
    explained: int
    """How many placements listed rule changes explain (0 unless ``explained``)."""
    about: str

    @property
    def id(self) -> str:
        return f"{self.release}/{self.name}"


def manifest() -> dict[str, Any]:
    return json.loads((FIXTURES / "manifest.json").read_text())  # type: ignore[no-any-return]


def past_journals() -> list[PastJournal]:
    return [PastJournal(release, name, entry["expected"], entry.get("explained", 0),
                        entry["about"])
            for release, journals in sorted(manifest()["releases"].items())
            for name, entry in sorted(journals.items())]


def extract(journal: PastJournal, into: Path) -> Path:
    """A writable copy of ``journal``'s directory under ``into`` (each test its own)."""
    target = into / journal.release / journal.name
    if target.exists():
        shutil.rmtree(target)
    with tarfile.open(FIXTURES / f"{journal.release}.tar.xz") as archive:
        members = [m for m in archive.getmembers()
                   if m.name == journal.name or m.name.startswith(f"{journal.name}/")]
        archive.extractall(into / journal.release, members=members, filter="data")
    return target


def records_of(directory: Path) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
    for path in sorted(directory.glob("journal-*.jsonl")):
        yield path, [json.loads(line) for line in path.read_text().splitlines() if line]


def rewrite_and_rehash(directory: Path, change: Callable[[dict[str, Any]], bool]) -> int:
    """Apply ``change`` to the records (it returns True for each it altered) and re-hash the
    whole chain from the first file on, as a forger without the HMAC key can: the chain then
    verifies, only the head and replay can tell. Returns the first seq altered."""
    prev, first = None, 0
    for path, records in records_of(directory):
        for record in records:
            if change(record) and not first:
                first = record["seq"]
            if prev is not None:
                record["prev"] = prev
            body = {k: v for k, v in record.items() if k not in ("hash", "hmac")}
            record["hash"] = prev = compute_hash(body)
        path.write_text("".join(canonical_json(r) + "\n" for r in records))
    return first
