"""``tablectl run --check`` refuses what ``run`` refuses (issue 16): a device path that is not a
device and an HMAC key file that is missing or readable by others, each in one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli import main
from controller.journal.policy import Durability
from controller.journal.writer import JournalWriter
from tests.controller.service.conftest import service_toml


def config_with(tmp_path: Path, *, url: str = "/dev/table-shuffler",
                key: Path | None = None) -> str:
    text = service_toml(tmp_path).replace('url = "/dev/table-shuffler"', f'url = "{url}"')
    if key is not None:
        text = text.replace("[journal]\n", f'[journal]\nhmac_key_file = "{key}"\n')
    path = tmp_path / "tablectl.toml"
    path.write_text(text)
    return str(path)


def check(config: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout, and the last stderr line (a log warning may precede it: the example
    device path is absent on a test machine, and run warns of that too)."""
    code = main(["run", "--check", "--config", config])
    captured = capsys.readouterr()
    return code, captured.out, (captured.err.splitlines() or [""])[-1]


def test_check_refuses_a_missing_key_file(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A key file that does not exist fails --check as it fails run."""
    key = tmp_path / "absent.key"
    code, out, err = check(config_with(tmp_path, key=key), capsys)
    assert (code, out) == (2, "")
    assert err == f"tablectl run: journal.hmac_key_file {key}: not found"


def test_check_refuses_a_key_others_can_read(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A key readable by group or others is refused with the chmod that fixes it."""
    key = tmp_path / "journal.key"
    key.write_text("ab" * 32)
    key.chmod(0o644)
    code, _, err = check(config_with(tmp_path, key=key), capsys)
    assert code == 2
    assert err.startswith("tablectl run: journal.hmac_key_file") and \
        err.endswith(f"run chmod 0400 {key}")


def test_check_refuses_a_regular_file_as_the_device(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """/etc/passwd is not a character device: --check refuses it as run does."""
    code, out, err = check(config_with(tmp_path, url="/etc/passwd"), capsys)
    assert (code, out) == (2, "")
    assert err == ("tablectl run: device.url /etc/passwd: not a character device (a serial "
                   "port or USB adapter)")


def test_check_passes_a_good_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 0400 key of the service's own user passes."""
    key = tmp_path / "journal.key"
    key.write_text("ab" * 32)
    key.chmod(0o400)
    code, out, _ = check(config_with(tmp_path, key=key), capsys)
    assert code == 0 and out.startswith("config OK")


def test_check_refuses_a_journal_directory_that_is_a_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24: ``--check`` said "config OK" where ``run`` then refused the journal."""
    config = config_with(tmp_path)
    (tmp_path / "journal").write_text("not a directory")
    code, out, err = check(config, capsys)
    assert (code, out) == (2, "")
    assert err == f"tablectl run: journal.directory {tmp_path / 'journal'}: not a directory"


def test_check_refuses_a_key_the_journal_was_not_written_with(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The journal's records carry an HMAC of another key: ``run`` cannot extend that chain."""
    writer = JournalWriter(tmp_path / "journal", table_id="T1", hmac_key=b"\x01" * 32,
                           durability=Durability.NONE)
    writer.append("note", {"text": "written with the first key"})
    writer.close()
    key = tmp_path / "journal.key"
    key.write_text("ab" * 32)
    key.chmod(0o400)
    code, out, err = check(config_with(tmp_path, key=key), capsys)
    assert (code, out) == (2, "")
    assert err.startswith("tablectl run: journal.hmac_key_file: not the key the journal")

