"""The private PostgreSQL cluster of ``testbed/postgres.py`` for pytest: a missing program (or,
as root, no ``postgres`` user) fails the test in CI and skips it elsewhere, as the broker does;
and the one ``postgres`` fixture the feed, floor-scale and floor-page tests import."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testbed.floorlab import MissingBinary
from testbed.postgres import Postgres as _Postgres
from tests.feed_e2e.broker import missing

__all__ = ["Postgres", "fixture_postgres"]


class Postgres(_Postgres):
    def __init__(self) -> None:
        try:
            super().__init__()
        except MissingBinary as error:
            missing(str(error))


@pytest.fixture(name="postgres")
def fixture_postgres() -> Iterator[str]:
    """The URL of a private, running PostgreSQL (from the OS packages), stopped after the test."""
    server = Postgres()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
