"""Fixtures of the floor-scale tests: the PKI of three tables and the floor, a real Mosquitto
(TLS, the ACL) and a private PostgreSQL, as the feed tests start them (``tests/feed_e2e``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.feed_e2e.broker import make_pki
from tests.feed_e2e.conftest import fixture_broker, fixture_journal_3cp  # noqa: F401 (fixtures)
from tests.feed_e2e.postgres import fixture_postgres

__all__ = ["fixture_postgres"]

TABLES = ["T1", "T2", "T3"]


def lease_config(path: Path) -> Path:
    """A group consumer's file (``testbed.floorlab.floor_config``) with ``assign = "lease"``
    (the benchmark's ``with_assign`` does the same; the next step is an ``assign`` argument of
    ``floor_config``, now that the broker lab is in testbed/)."""
    path.write_text(path.read_text().replace("[floor]\n", '[floor]\nassign = "lease"\n', 1))
    return path


@pytest.fixture(name="pki", scope="session")
def fixture_pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("pki"), [*TABLES, "floor"])


