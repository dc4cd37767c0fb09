"""Fixtures of the feed tests: the PKI, a real Mosquitto with TLS and the ACL, bench journals,
and the feed/floor configurations pointing at them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.bench import Bench
from tests.feed_e2e.broker import SITE, Mosquitto, make_pki

IDENTITIES = ["T1", "T2", "floor", "sniffer"]


@pytest.fixture(name="pki", scope="session")
def fixture_pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("pki"), IDENTITIES)


@pytest.fixture(name="broker")
def fixture_broker(tmp_path: Path, pki: Path) -> Iterator[Mosquitto]:
    directory = tmp_path / "broker"
    directory.mkdir()
    broker = Mosquitto(directory, pki)
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(name="journal_3cp", scope="session")
def fixture_journal_3cp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished RWS-3CP bench journal (face-down dealer hand), 12 rounds with faults."""
    directory = tmp_path_factory.mktemp("journal-3cp")
    Bench("rws-three-card-poker", 12, seed=3, faults="0.3", journal_dir=directory).run()
    return directory


def feed_config(tmp_path: Path, pki: Path, broker: Mosquitto, table: str,
                journal: Path, identity: str | None = None) -> Path:
    """A table config file holding what the feed reads: [table], [journal] and [feed]."""
    who = identity or table
    path = tmp_path / f"{table}.toml"
    path.write_text(
        f'[table]\nid = "{table}"\ngame = "rws-three-card-poker"\n\n'
        f'[journal]\ndirectory = "{journal}"\n\n'
        f'[feed]\nbroker = "mqtts://127.0.0.1:{broker.port}"\nsite = "{SITE}"\n'
        f'ca_file = "{pki / "ca.pem"}"\ncert_file = "{pki / f"{who}.pem"}"\n'
        f'key_file = "{pki / f"{who}.key"}"\n'
        f'state_directory = "{tmp_path / f"feed-{table}"}"\n')
    return path


def floor_config(tmp_path: Path, pki: Path, broker: Mosquitto, database: str | None = None,
                 identity: str = "floor") -> Path:
    path = tmp_path / f"{identity}.toml"
    path.write_text(
        f'[floor]\nbroker = "mqtts://127.0.0.1:{broker.port}"\nsite = "{SITE}"\n'
        f'ca_file = "{pki / "ca.pem"}"\ncert_file = "{pki / f"{identity}.pem"}"\n'
        f'key_file = "{pki / f"{identity}.key"}"\n'
        f'database = "{database or tmp_path / f"{identity}.sqlite3"}"\n'
        f'client_id = "tablectl-{identity}"\n')
    return path


@pytest.fixture(name="postgres")
def fixture_postgres() -> Iterator[str]:
    """The URL of a private, running PostgreSQL (from the OS packages)."""
    from tests.feed_e2e.postgres import Postgres

    server = Postgres()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
