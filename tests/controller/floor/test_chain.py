"""The floor's verdict on one message: each table's chain checked across messages."""

from __future__ import annotations

import json

import pytest

from controller.floor.chain import Head, Judged, Verdict
from controller.floor.chain import judge as judge_with
from controller.journal.record import Record
from tests.controller.floor.conftest import SIGN_KEY, sign_line

TOPIC = "tablectl/site1/T1/events"


def _head(line: bytes) -> Head:
    data = json.loads(line)
    return Head(data["seq"], data["hash"])


def _never(table: str, seq: int) -> str | None:
    raise AssertionError("no lookup expected")


def judge(topic: str, payload: bytes, head: Head | None, applied) -> Judged:
    """The verdict on ``payload`` signed by T1's key (as T1's feed sends it), the floor
    holding T1's public key."""
    try:
        signature = sign_line(payload)
    except (ValueError, KeyError, TypeError):
        signature = None  # not a record: nothing to sign
    return judge_with(topic, payload, head, applied, signature=signature,
                      key=SIGN_KEY.public_key())


def test_next_record_applies_and_first_record_anchors(lines: list[bytes]) -> None:
    """Seq 1 from genesis anchors a new table; the next record linking to the head applies."""
    first = judge(TOPIC, lines[0], None, _never)
    assert first.verdict is Verdict.APPLY and isinstance(first.record, Record)
    assert judge(TOPIC, lines[1], _head(lines[0]), _never).verdict is Verdict.APPLY


def test_same_record_again_is_a_duplicate(lines: list[bytes]) -> None:
    applied = {1: json.loads(lines[0])["hash"], 2: json.loads(lines[1])["hash"]}
    judged = judge(TOPIC, lines[0], _head(lines[1]), lambda t, s: applied[s])
    assert (judged.verdict, judged.table, judged.seq) == (Verdict.DUPLICATE, "T1", 1)


def test_a_later_record_is_a_gap_naming_what_is_missing(lines: list[bytes]) -> None:
    judged = judge(TOPIC, lines[4], _head(lines[1]), _never)
    assert judged.verdict is Verdict.GAP and judged.seq == 5
    assert "3..4" in judged.detail


def test_edited_content_is_altered(lines: list[bytes]) -> None:
    """A changed byte of content no longer matches the record's hash."""
    edited = lines[1].replace(b'"table":"T1"', b'"table":"T1 "')
    assert judge(TOPIC, edited, _head(lines[0]), _never).verdict is Verdict.ALTERED


def test_resealed_record_that_does_not_link_is_altered(lines: list[bytes]) -> None:
    """A record rewritten and re-hashed (its hash matches again) fails the link to the head
    when it follows another version of the chain."""
    forged = rehome_one(lines[2], prev="f" * 64)
    judged = judge(TOPIC, forged, _head(lines[1]), _never)
    assert (judged.verdict, judged.seq) == (Verdict.ALTERED, 3)
    assert "does not link to record 2" in judged.detail


def rehome_one(line: bytes, prev: str | None = None) -> bytes:
    from controller.journal.record import canonical_json, seal

    data = json.loads(line)
    data.pop("hash")
    data["payload"] = {"forged": True}
    if prev is not None:
        data["prev"] = prev
    return canonical_json(seal(data, None)).encode()


def test_another_record_at_an_applied_seq_is_altered(lines: list[bytes]) -> None:
    forged = rehome_one(lines[0])
    judged = judge(TOPIC, forged, _head(lines[1]), lambda t, s: json.loads(lines[0])["hash"])
    assert judged.verdict is Verdict.ALTERED and judged.seq == 1


@pytest.mark.parametrize("topic, payload, verdict", [
    (TOPIC, b"not json", Verdict.MALFORMED),
    (TOPIC, b'{"seq": 1}', Verdict.MALFORMED),
    ("tablectl/site1/T2/events", None, Verdict.FOREIGN),
    ("somewhere/else", None, Verdict.FOREIGN),
])
def test_malformed_and_foreign_messages(lines: list[bytes], topic: str, payload: bytes | None,
                                        verdict: Verdict) -> None:
    """Not a record, a record of T1 on T2's topic, or not a table's topic: reported."""
    judged = judge(topic, payload if payload is not None else lines[0], None, _never)
    assert judged.verdict is verdict


def test_record_its_table_did_not_sign_is_forged(lines: list[bytes]) -> None:
    """Finding 3: a sound record (hash matches, links to the head, here with an all-zero
    HMAC) that T1's key did not sign -- unsigned, signed by another key, signed for another
    site or seq, or for a table the floor has no key of -- is ``forged``, never applied."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.journal.record import canonical_json, seal

    data = json.loads(lines[1])
    data.pop("hash")
    data["payload"] = {"forged": True}
    body = seal(data, None)
    body["hmac"] = "0" * 64
    forged = canonical_json(body).encode()
    head, key = _head(lines[0]), SIGN_KEY.public_key()
    intruder = Ed25519PrivateKey.generate()
    for signature, public in [(None, key), (b"\0" * 64, key), (sign_line(forged, intruder), key),
                              (sign_line(forged, site="site2"), key),
                              (sign_line(lines[1]), key), (sign_line(forged), None)]:
        judged = judge_with(TOPIC, forged, head, _never, signature=signature, key=public)
        assert (judged.verdict, judged.table, judged.seq) == (Verdict.FORGED, "T1", 2), judged
        assert judged.record is None
    genuine = judge_with(TOPIC, lines[1], head, _never, signature=sign_line(lines[1]), key=key)
    assert genuine.verdict is Verdict.APPLY
