"""A short bench journal as table T1's chain, line by line (no newline), for the floor tests."""

from __future__ import annotations

import pytest

from benchmarks.journalgen import rehome
from controller.bench import Bench


@pytest.fixture(name="lines", scope="package")
def fixture_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    directory = tmp_path_factory.mktemp("floor-journal")
    Bench("rws-three-card-poker", 2, seed=1, journal_dir=directory).run()
    return [line.rstrip(b"\n") for line in rehome(directory, "T1")]
