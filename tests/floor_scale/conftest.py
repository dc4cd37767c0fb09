"""Fixtures of the floor-scale tests: the PKI of three tables and the floor, a real Mosquitto
(TLS, the ACL) and a private PostgreSQL, as the feed tests start them (``tests/feed_e2e``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed.floorlab import Mosquitto
from controller.bench import Bench
from tests.feed_e2e.broker import make_pki, start_broker
from tests.feed_e2e.postgres import fixture_postgres

__all__ = ["fixture_postgres"]

TABLES = ["T1", "T2", "T3"]


def lease_config(path: Path) -> Path:
    """A group consumer's file (``floorlab.floor_config``) with ``assign = "lease"`` (the
    benchmark's ``with_assign`` does the same: tests may not import benchmarks; it belongs in
    ``floor_config`` once the broker lab moves to testbed/)."""
    path.write_text(path.read_text().replace("[floor]\n", '[floor]\nassign = "lease"\n', 1))
    return path


@pytest.fixture(name="pki", scope="session")
def fixture_pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("pki"), [*TABLES, "floor"])


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
