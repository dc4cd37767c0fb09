"""The floor database as a person points at it (issue 34, "bad input"): ``tablectl floor
status`` only reads, and neither it nor the consumer ever replaces a file that is not a floor
database. On the previous main a 1-byte text file became an empty floor database (exit 0) and
a mistyped path made a new empty one, shown as an empty floor."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from controller.cli import EXIT_USAGE, main
from controller.feed.config import Broker, FloorConfig
from controller.floor.consumer import Floor, Message
from controller.floor.store import Store, StoreError
from tests.controller.floor.conftest import SIGN_KEY, sign_line
from tests.stderr import one_error_line


def _config(tmp_path: Path, database: Path) -> Path:
    path = tmp_path / "floor.toml"
    path.write_text(f'[floor]\nbroker = "mqtt://127.0.0.1:1883"\nsite = "site1"\n'
                    f'database = "{database}"\n')
    return path


def _floor_config(database: Path) -> FloorConfig:
    broker = Broker("127.0.0.1", 1883, False, None, None, None, None, None, 15)
    public = SIGN_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return FloorConfig("<test>", "site1", str(database), broker, "test-floor", {"T1": public})


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(name="floor_database")
def fixture_floor_database(tmp_path: Path, lines: list[bytes]) -> Path:
    """A floor database as the consumer leaves it: T1's first three records applied."""
    database = tmp_path / "floor.sqlite3"
    floor = Floor(_floor_config(database))
    try:
        for line in lines[:3]:
            floor.handle(Message("tablectl/site1/T1/events", line, None, 0,
                                 signature=sign_line(line)))
    finally:
        floor.store.close()
        floor.client._reset_sockets()  # noqa: SLF001 -- never started (controller.feed.mqtt)
    return database


def test_status_refuses_a_file_that_is_not_a_database_and_leaves_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``database =`` at a 1-byte text file: one line naming it, exit 2, the file as it was
    (SQLite took it for an empty database and wrote an empty floor over it)."""
    text = tmp_path / "notes.txt"
    text.write_bytes(b"x")
    assert main(["floor", "status", "--config", str(_config(tmp_path, text))]) == EXIT_USAGE
    line = one_error_line(capsys)
    assert str(text) in line and "not a floor database" in line
    assert text.read_bytes() == b"x"


def test_status_refuses_a_missing_database_and_creates_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mistyped path: one line naming it, exit 2, and no database made there (it was made,
    and shown as an empty floor)."""
    typo = tmp_path / "flor.sqlite3"
    assert main(["floor", "status", "--config", str(_config(tmp_path, typo))]) == EXIT_USAGE
    line = one_error_line(capsys)
    assert str(typo) in line and "no such file" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["floor.toml"]


def test_status_refuses_another_programs_sqlite_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An SQLite database of something else (the web's index, say): named, not written into
    (the floor's tables were created in it)."""
    other = tmp_path / "index.sqlite3"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE pages (x)")
    connection.close()
    before = _digest(other)
    assert main(["floor", "status", "--config", str(_config(tmp_path, other))]) == EXIT_USAGE
    line = one_error_line(capsys)
    assert str(other) in line and "not a floor database" in line
    assert _digest(other) == before


def test_status_reads_a_floor_database_without_changing_it(
        tmp_path: Path, floor_database: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The floor database the consumer made: shown, and its file's bytes unchanged."""
    before = _digest(floor_database)
    assert main(["floor", "status", "--config",
                 str(_config(tmp_path, floor_database))]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("T1 ")
    assert _digest(floor_database) == before


def test_status_names_the_tables_an_older_floor_database_lacks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A floor database from before the machines' tables: status creates nothing in it and
    says how to bring it up to date."""
    database = tmp_path / "old.sqlite3"
    Store(str(database)).close()  # the store's own tables only
    assert main(["floor", "status", "--config",
                 str(_config(tmp_path, database))]) == EXIT_USAGE
    line = one_error_line(capsys)
    assert "machines" in line and "tablectl floor" in line
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as connection:
        names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    connection.close()
    assert "machines" not in names


@pytest.mark.parametrize("content", [b"x", b"not a database at all\n" * 40])
def test_the_consumer_refuses_a_file_that_is_not_a_database(tmp_path: Path,
                                                            content: bytes) -> None:
    """The consumer may make its database where none is, never over a file that is not one."""
    text = tmp_path / "notes.txt"
    text.write_bytes(content)
    with pytest.raises(StoreError, match="not a floor database"):
        Floor(_floor_config(text))
    assert text.read_bytes() == content


def test_the_consumer_refuses_another_programs_sqlite_database(tmp_path: Path) -> None:
    other = tmp_path / "index.sqlite3"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE pages (x)")
    connection.close()
    before = _digest(other)
    with pytest.raises(StoreError, match="not a floor database"):
        Floor(_floor_config(other))
    assert _digest(other) == before

