"""The table harness and the journal's writer fixtures, shared with their own packages."""

from __future__ import annotations

from tests.controller.journal.conftest import (  # noqa: F401
    fixture_clock,
    fixture_journal_dir,
    fixture_open_writer,
)
from tests.controller.table.conftest import make_fixture  # noqa: F401
