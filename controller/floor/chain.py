"""The verdict on one message, per table: apply it, drop it as a duplicate, or report it.

Pure over the message and the table's head (last applied seq and hash) plus a lookup of the
hash applied at an earlier seq, so every rule is testable without a broker or a database. The
floor recomputes each record's hash itself (``docs/journal.md``, canonical JSON): it never
trusts the seq and hash the table claims, and applies nothing its table did not sign
(:mod:`controller.floor.authenticity`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.floor.authenticity import forgery
from controller.journal.damage import Damage, check_line
from controller.journal.record import GENESIS_HASH, Record

TOPIC_PREFIX = "tablectl"


class Verdict(str, Enum):
    APPLY = "apply"
    DUPLICATE = "duplicate"
    """The same record again (a resend after a lost PUBACK, a feed restarted from its cursor,
    or a replay of the same bytes): recognised and dropped, never applied twice."""
    GAP = "gap"
    """Later than the next expected record: held until the missing ones arrive."""
    ALTERED = "altered"
    """Hash does not match the content, does not link to the previous record, or another
    record at a seq already applied."""
    MALFORMED = "malformed"
    FOREIGN = "foreign"
    """Not a table's events topic, or a record of another table than the topic names."""
    FORGED = "forged"
    """A sound record that its table's key did not sign (no signature, a wrong one, another
    key's, or no key for the table): never applied, and it changes nothing, so the genuine
    record at the same seq still applies."""


@dataclass(frozen=True, slots=True)
class Head:
    seq: int
    hash: str


@dataclass(frozen=True, slots=True)
class Judged:
    verdict: Verdict
    table: str | None
    seq: int | None
    detail: str
    record: Record | None = None
    site: str | None = None


def parse_topic(topic: str) -> tuple[str, str] | None:
    """``tablectl/<site>/<table>/events`` -> (site, table)."""
    parts = topic.split("/")
    if len(parts) != 4 or parts[0] != TOPIC_PREFIX or parts[3] != "events" \
            or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def judge(topic: str, payload: bytes, head: Head | None,
          applied_hash: Callable[[str, int], str | None], *, signature: bytes | None,
          key: Ed25519PublicKey | None) -> Judged:
    """The verdict on ``payload`` from ``topic``: ``signature`` is what came with it, ``key``
    the public key of the table the topic names (None: the floor has none)."""
    examined = examine(topic, payload, signature=signature, key=key)
    if examined.verdict is not Verdict.APPLY:
        return examined
    return place(examined, head, applied_hash)


def examine(topic: str, payload: bytes, *, signature: bytes | None,
            key: Ed25519PublicKey | None) -> Judged:
    """Everything about a message that does not depend on what the floor applied: topic,
    record (hash, canonical form), table, signature. ``APPLY`` here means "a sound record of
    its table", still to be placed in its chain (:func:`place`). Split from the chain check so a
    floor of several consumers does this CPU work (a SHA-256 and an Ed25519 verification per
    record) outside the table's lock, side by side."""
    where = parse_topic(topic)
    if where is None:
        return Judged(Verdict.FOREIGN, None, None, f"not a table's events topic: {topic!r}")
    site, table = where
    found = check_line(payload, None)
    if not isinstance(found, Record):
        verdict = Verdict.ALTERED if found.kind is Damage.ALTERED else Verdict.MALFORMED
        return Judged(verdict, table, None, found.detail, site=site)
    record = found
    if record.table_id != table:
        return Judged(Verdict.FOREIGN, table, record.seq,
                      f"record of table {record.table_id!r} on table {table!r}'s topic",
                      site=site)
    problem = forgery(site, record, signature, key)
    if problem is not None:
        return Judged(Verdict.FORGED, table, record.seq, problem, site=site)
    return Judged(Verdict.APPLY, table, record.seq, "", record, site)


def place(examined: Judged, head: Head | None,
          applied_hash: Callable[[str, int], str | None]) -> Judged:
    """The chain position of a sound record (``examine``'s ``APPLY``) against its table's
    ``head`` (last applied seq and hash; None: a table never seen)."""
    record, table, site = examined.record, examined.table, examined.site
    assert record is not None and table is not None
    if head is None:
        if record.seq == 1 and record.prev_hash != GENESIS_HASH:
            return Judged(Verdict.ALTERED, table, 1, "seq 1 does not start from genesis",
                          site=site)
        return Judged(Verdict.APPLY, table, record.seq, "first record seen of this table",
                      record, site)
    if record.seq <= head.seq:
        earlier = applied_hash(table, record.seq)
        if earlier is None or earlier == record.hash:
            return Judged(Verdict.DUPLICATE, table, record.seq, "already applied", record, site)
        return Judged(Verdict.ALTERED, table, record.seq,
                      f"seq {record.seq} was applied with hash {earlier[:12]}..., "
                      f"this one has {record.hash[:12]}...", site=site)
    if record.seq > head.seq + 1:
        return Judged(Verdict.GAP, table, record.seq,
                      f"records {head.seq + 1}..{record.seq - 1} missing", record, site)
    if record.prev_hash != head.hash:
        return Judged(Verdict.ALTERED, table, record.seq,
                      f"does not link to record {head.seq} (prev {record.prev_hash[:12]}..., "
                      f"applied {head.hash[:12]}...)", site=site)
    return Judged(Verdict.APPLY, table, record.seq, "", record, site)
