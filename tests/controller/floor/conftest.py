"""A short bench journal as table T1's chain, line by line (no newline), and T1's signing key,
for the floor tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.bench import Bench
from controller.feed.keys import signed_bytes
from testbed.journalgen import rehome

SIGN_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
"""Table T1's key in these tests (the floor is given its public half)."""


@pytest.fixture(name="lines", scope="package")
def fixture_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    directory = tmp_path_factory.mktemp("floor-journal")
    Bench("rws-three-card-poker", 2, seed=1, journal_dir=directory).run()
    return [line.rstrip(b"\n") for line in rehome(directory, "T1")]


def sign_line(line: bytes, key: Ed25519PrivateKey = SIGN_KEY, site: str = "site1") -> bytes:
    """T1's feed's signature of ``line`` (as the feed sends it with the record)."""
    record = json.loads(line)
    return key.sign(signed_bytes(site, record["table"], record["seq"], record["hash"]))


@pytest.fixture(name="sign")
def fixture_sign() -> Callable[[bytes], bytes]:
    return sign_line


@pytest.fixture(name="t1_key")
def fixture_t1_key(tmp_path: Path):
    return SIGN_KEY.public_key()
