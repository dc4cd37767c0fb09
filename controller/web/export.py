"""Export of a round or a time span as one self-contained file, and its re-verification.

The file is JSON: a header (table, what was selected, when, the journal's verified end at the
time) and ``records``, each the journal line **byte for byte** as a string. Anyone can check it
without this code: each line is canonical JSON whose ``hash`` is SHA-256 of the line without
``hash``/``hmac`` (docs/journal.md). Against the journal, each record must be there with the
same ``seq`` and the same hash; :func:`verify_export` does both and names the first
difference. A reviewer can hand the file on; whoever holds the journal can re-verify it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller import strictjson
from controller.journal.damage import check_line
from controller.journal.reader import iter_entries
from controller.journal.record import Record
from controller.web.errors import ExportError
from controller.web.timeline import TimelineEntry

FORMAT = "tablectl-journal-export"
VERSION = 1
MAX_EXPORT_RECORDS = 50_000
"""A bound on one export (about 25 MB, a busy table's day): a wider span is refused, not half
written, and the Pi's memory is not spent on it."""


def build_export(entries: Iterable[TimelineEntry], selection: Mapping[str, Any],
                 journal: Mapping[str, Any]) -> dict[str, Any]:
    """The export document; refuses (:class:`ExportError`) a selection with a mismatch in it,
    because a file that carries a record the journal does not hold proves nothing."""
    lines: list[str] = []
    for entry in entries:
        if entry.record is None:
            raise ExportError(f"seq {entry.seq}: {entry.problem}")
        lines.append(entry.raw)
    if not lines:
        raise ExportError("nothing to export: no record matches")
    table = json.loads(lines[0]).get("table")
    return {"format": FORMAT, "version": VERSION, "table": table,
            "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "selection": dict(selection), "journal": dict(journal),
            "count": len(lines), "records": lines}


@dataclass(frozen=True, slots=True)
class ExportPlan:
    """What a first pass over the selection found: how many records and the table's id."""

    count: int
    table: Any


def plan_export(entries: Iterable[TimelineEntry]) -> ExportPlan:
    """Check the selection without keeping it (a mismatch refuses the export, as
    :func:`build_export` does): the file is then written by :func:`stream_export` in a second
    pass, a record at a time, so a 25 MB export never sits in the Pi's memory."""
    count, table = 0, None
    for entry in entries:
        if entry.record is None:
            raise ExportError(f"seq {entry.seq}: {entry.problem}")
        if count == 0:
            table = json.loads(entry.raw).get("table")
        count += 1
    if count == 0:
        raise ExportError("nothing to export: no record matches")
    return ExportPlan(count, table)


STREAM_CHUNK = 64 * 1024


def stream_export(entries: Iterable[TimelineEntry], plan: ExportPlan,
                  selection: Mapping[str, Any], journal: Mapping[str, Any],
                  created: Callable[[], datetime] = lambda: datetime.now(UTC)
                  ) -> Iterator[bytes]:
    """The same document as :func:`build_export`, as chunks of about :data:`STREAM_CHUNK`
    bytes. A record that differs from the first pass (or a count that does) stops the stream
    with :class:`ExportError`: the client gets a truncated file that is not JSON, never a file
    that vouches for something else."""
    head = {"format": FORMAT, "version": VERSION, "table": plan.table,
            "created": created().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "selection": dict(selection), "journal": dict(journal), "count": plan.count}
    buffer = [json.dumps(head, ensure_ascii=False)[:-1] + ', "records": [']
    size, written = len(buffer[0]), 0
    for entry in entries:
        if entry.record is None or written >= plan.count:
            raise ExportError(f"seq {entry.seq}: the journal changed during the export")
        line = ("" if written == 0 else ",") + "\n" + json.dumps(entry.raw, ensure_ascii=False)
        written += 1
        buffer.append(line)
        size += len(line)
        if size >= STREAM_CHUNK:
            yield "".join(buffer).encode("utf-8")
            buffer, size = [], 0
    if written != plan.count:
        raise ExportError(f"export: {written} records, not {plan.count}: the journal changed")
    buffer.append("\n]}")
    yield "".join(buffer).encode("utf-8")


@dataclass(frozen=True, slots=True)
class ExportCheck:
    """What :func:`verify_export` found: ``ok`` with counts, or the first problem."""

    ok: bool
    records: int
    first_seq: int | None
    last_seq: int | None
    hmac_checked: bool
    problem: str | None

    def describe(self) -> str:
        if not self.ok:
            return f"NOT VERIFIED: {self.problem}"
        return (f"OK: {self.records} record(s), seq {self.first_seq}..{self.last_seq}, each "
                "hash recomputed and found in the journal with the same hash"
                + ("; HMAC verified" if self.hmac_checked else ""))


def parse_export(data: bytes) -> list[Record]:
    """The export's records, each line checked on its own (canonical form, hash)."""
    try:
        document = strictjson.loads(data)  # "records" given twice: which list was checked?
    except strictjson.StrictJsonError as error:
        raise ExportError(f"not an export: not JSON ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ExportError(f"not an export: no \"format\": \"{FORMAT}\"")
    lines = document.get("records")
    if not isinstance(lines, list) or not lines:
        raise ExportError("not an export: no records")
    records: list[Record] = []
    for number, line in enumerate(lines, 1):
        if not isinstance(line, str):
            raise ExportError(f"record {number}: not a journal line")
        found = check_line(line.encode("utf-8"), None)
        if not isinstance(found, Record):
            raise ExportError(f"record {number}: {found.kind.value}: {found.detail}")
        records.append(found)
    return records


def verify_export(data: bytes, journal: Mapping[int, str] | Iterable[Record],
                  key: bytes | None = None) -> ExportCheck:
    """Check an export's lines on their own and against ``journal`` (``{seq: hash}`` of the
    journal's records, or its records). Never raises for a bad file: that is the answer."""
    try:
        records = parse_export(data)
    except ExportError as error:
        return ExportCheck(False, 0, None, None, False, str(error))
    hashes = journal if isinstance(journal, Mapping) else {r.seq: r.hash for r in journal}
    seen: set[int] = set()
    for record in records:
        if record.seq in seen:
            return _bad(records, f"seq {record.seq} appears twice")
        seen.add(record.seq)
        held = hashes.get(record.seq)
        if held is None:
            return _bad(records, f"seq {record.seq}: not in the journal")
        if held != record.hash:
            return _bad(records, f"seq {record.seq}: the journal holds another hash "
                        f"({held[:16]}... not {record.hash[:16]}...)")
        if key is not None:
            found = check_line(record.line().encode("utf-8"), key)
            if not isinstance(found, Record):
                return _bad(records, f"seq {record.seq}: {found.detail}")
    return ExportCheck(True, len(records), records[0].seq, records[-1].seq, key is not None,
                       None)


def _bad(records: list[Record], problem: str) -> ExportCheck:
    return ExportCheck(False, len(records), records[0].seq, records[-1].seq, False, problem)


def journal_hashes(journal_dir: str | Path, wanted: set[int]) -> dict[int, str]:
    """``{seq: hash}`` of the journal's records among ``wanted``, read from the files (no
    index): what the command line's check holds an export against."""
    out: dict[int, str] = {}
    for entry in iter_entries([journal_dir], strict=False):
        if entry.record.seq in wanted:
            out[entry.record.seq] = entry.record.hash
    return out


def export_seqs(data: bytes) -> set[int]:
    try:
        return {record.seq for record in parse_export(data)}
    except ExportError:
        return set()
