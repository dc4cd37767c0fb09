"""Fixtures of the feed tests: the PKI, a real Mosquitto with TLS and the ACL, bench journals,
and the feed/floor configurations pointing at them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed.floorlab import Mosquitto, feed_config, floor_config
from controller.bench import Bench
from tests.feed_e2e.broker import make_pki, start_broker
from tests.feed_e2e.postgres import fixture_postgres

__all__ = ["feed_config", "fixture_postgres", "floor_config"]

IDENTITIES = ["T1", "T2", "floor", "sniffer"]


@pytest.fixture(name="pki", scope="session")
def fixture_pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("pki"), IDENTITIES)


@pytest.fixture(name="broker")
def fixture_broker(tmp_path: Path, pki: Path) -> Iterator[Mosquitto]:
    directory = tmp_path / "broker"
    directory.mkdir()
    broker = start_broker(directory, pki)
    yield broker
    broker.stop()


@pytest.fixture(name="journal_3cp", scope="session")
def fixture_journal_3cp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished RWS-3CP bench journal (face-down dealer hand), 12 rounds with faults."""
    directory = tmp_path_factory.mktemp("journal-3cp")
    Bench("rws-three-card-poker", 12, seed=3, faults="0.3", journal_dir=directory).run()
    return directory
