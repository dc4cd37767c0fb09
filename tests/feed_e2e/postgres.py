"""The private PostgreSQL cluster of ``testbed/postgres.py`` for pytest: a missing program (or,
as root, no ``postgres`` user) fails the test in CI and skips it elsewhere, as the broker does."""

from __future__ import annotations

from testbed.floorlab import MissingBinary
from testbed.postgres import Postgres as _Postgres
from tests.feed_e2e.broker import missing

__all__ = ["Postgres"]


class Postgres(_Postgres):
    def __init__(self) -> None:
        try:
            super().__init__()
        except MissingBinary as error:
            missing(str(error))
