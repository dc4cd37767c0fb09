"""The service on a journal disk that fills up or turns read-only (issue 24 findings 5 and 6):
a real 256 KiB tmpfs (root only; skipped elsewhere), never a patched write."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.service.config import ServiceConfig, load_config
from controller.service.protocol import ErrorCode, Refusal
from tests.controller.journal.smalldisk import PAGE, fill, small_disk
from tests.controller.service.conftest import service_toml
from tests.controller.service.test_journal_start import Running

PAD = "test_padding"
"""A record type replay ignores: it only moves the next record within the file's pages."""
WAIT_SECONDS = 60.0


@pytest.fixture(name="disk")
def fixture_disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk") as disk:
        yield disk


@pytest.fixture(name="config")
def fixture_config(tmp_path: Path, disk: Path) -> ServiceConfig:
    """The journal on the small disk; the socket and config beside it, on the big one."""
    text = service_toml(tmp_path).replace(str(tmp_path / "journal"), str(disk / "journal"))
    path = tmp_path / "tablectl.toml"
    path.write_text(text)
    return load_config(path)


def leave_slack(running: Running, slack: int) -> None:
    """Pad the journal so that about ``slack`` bytes remain in the page its file ends in (a
    record's length may differ by a digit): a record that fits there is written on a full
    disk, the next one is not."""
    writer = running.service.wiring.writer
    before = writer.path.stat().st_size
    writer.append(PAD, {"pad": ""})
    size = writer.path.stat().st_size
    empty = size - before
    pad = (-(size + empty + slack)) % PAGE
    writer.append(PAD, {"pad": "x" * pad})
    assert abs(PAGE - writer.path.stat().st_size % PAGE - slack) < 50


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_status_answers_while_the_outcome_waits_for_the_journal(
        config: ServiceConfig, disk: Path) -> None:
    """Issue 24 finding 6: the disk fills between an input's record and its outcome's. The
    command is answered `unavailable`; `round.status` answers (not `internal`) with the state
    `awaiting_journal`, how many records wait, and what the table waits for; once space
    returns the table writes them on its own and the status shows the round."""
    with Running(config) as running:
        open_round = 375  # bytes of the OpenRound input record; its round_opened is ~900
        leave_slack(running, open_round + 200)
        filler = fill(disk)
        with pytest.raises(Refusal) as refused:
            running.ask("round.open")
        assert refused.value.code is ErrorCode.UNAVAILABLE
        assert "has not recorded its outcome" in refused.value.message
        status = running.ask("round.status")  # before the fix: ValueError, i.e. `internal`
        assert status["state"] == "awaiting_journal" and status["journal_behind"] >= 1
        assert status["waits"] and "journal" in status["waits"][0]["waits_for"]
        assert "free space" in status["waits"][0]["way_out"]
        filler.unlink()
        wait_for(lambda: running.ask("round.status")["state"] == "betting",
                 "the journal to catch up")
        status = running.ask("round.status")
        assert status["journal_behind"] == 0 and status["round"] == 1
        assert status["waits"][0]["waits_for"].startswith("wagers")
