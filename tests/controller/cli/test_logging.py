"""Where operational log lines go and how they look (issue 16 "Logs"): stdout holds output
only; on a terminal the bench's status line never shares a line with a log line; under journald
each line carries its syslog priority; ``NO_COLOR`` turns colour off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from controller import logsetup
from controller.logsetup import configure_logging, status_line
from tests.controller.service.conftest import service_toml

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(name="restore_logging", autouse=True)
def fixture_restore_logging() -> Iterator[None]:
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)
    logsetup._STDERR.status = ""


def tablectl(args: list[str], tmp_path: Path, *, journal_stream: bool = False,
             env: dict[str, str] | None = None) -> tuple[str, str]:
    """Run tablectl with stdout and stderr in files; with ``journal_stream`` JOURNAL_STREAM
    names the stderr file, as systemd names the journal's stream socket."""
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        environ = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
        if journal_stream:
            info = os.fstat(err.fileno())
            environ["JOURNAL_STREAM"] = f"{info.st_dev}:{info.st_ino}"
        environ.update(env or {})
        subprocess.run([sys.executable, "-m", "controller", *args], stdout=out, stderr=err,
                       env=environ, cwd=ROOT, timeout=120, check=False)
    return out_path.read_text(), err_path.read_text()


def test_off_a_terminal_stdout_is_output_and_stderr_only_json_logs(tmp_path: Path) -> None:
    """The bench off a terminal: its progress and summary on stdout, not one JSON log line
    among them; every stderr line is a JSON log record."""
    out, err = tablectl(["--log-level", "debug", "bench", "--game", "rws-nc-three-pictures",
                         "--rounds", "3"], tmp_path)
    assert "round 3/3: settled 3" in out and "settled 3, voided 0" in out
    assert not [line for line in out.splitlines() if line.startswith("{")]
    records = [json.loads(line) for line in err.splitlines()]
    assert records and all("event" in record and "level" in record for record in records)


def check_config(tmp_path: Path) -> str:
    """A config whose device path is absent: ``run --check`` logs one warning about it (the
    journal is keyed, so --check has no HMAC warning to print)."""
    key = tmp_path / "journal.key"
    key.write_text("ab" * 32)
    key.chmod(0o600)
    path = tmp_path / "tablectl.toml"
    path.write_text(service_toml(tmp_path).replace(
        "[journal]\n", f'[journal]\nhmac_key_file = "{key}"\n'))
    return str(path)


def test_under_journald_each_line_has_its_priority(tmp_path: Path) -> None:
    """With JOURNAL_STREAM naming stderr, a warning is ``<4>{...}`` and a debug line
    ``<7>{...}``, so ``journalctl -p warning`` keeps the one and drops the other."""
    _, err = tablectl(["--log-level", "debug", "run", "--check", "--config",
                       check_config(tmp_path)], tmp_path, journal_stream=True)
    lines = err.splitlines()
    warnings = [json.loads(line[3:]) for line in lines if line.startswith("<4>{")]
    assert [w["event"] for w in warnings] == ["device path not present; the driver keeps "
                                              "retrying"]
    assert all(line[:3] in {"<7>", "<6>", "<4>", "<3>"} for line in lines), lines


def test_not_under_journald_no_prefix(tmp_path: Path) -> None:
    """A JOURNAL_STREAM that is not our stderr (a child redirected to a file) adds nothing."""
    _, err = tablectl(["run", "--check", "--config", check_config(tmp_path)], tmp_path,
                      env={"JOURNAL_STREAM": "1:2"})
    assert json.loads(err.splitlines()[0])["level"] == "warning"


@pytest.mark.parametrize(("no_color", "coloured"), [("1", False), ("", True)])
def test_no_color(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                  no_color: str, coloured: bool) -> None:
    """NO_COLOR (set and not empty, no-color.org) renders the console log without escapes."""
    monkeypatch.setenv("NO_COLOR", no_color)
    configure_logging("INFO", json=False, journald=False)
    structlog.get_logger("t").warning("table paused", table="T1")
    err = capsys.readouterr().err
    assert "table paused" in err
    assert ("\x1b[" in err) is coloured


def test_a_log_line_clears_the_status_line_and_redraws_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A log line while a status line is shown starts on a cleared line and the status line is
    drawn again after it; the final status ends with a newline."""
    configure_logging("INFO", json=True, journald=False)
    status_line("round 1/3")
    structlog.get_logger("t").warning("device offline")
    status_line("round 3/3", final=True)
    structlog.get_logger("t").warning("after")
    err = capsys.readouterr().err
    clear = "\r\x1b[K"
    first, log_line, rest = err.split("\n", 2)
    assert first.startswith(f"{clear}round 1/3{clear}{{")
    assert json.loads(first.split(clear)[2])["event"] == "device offline"
    assert log_line == f"round 1/3{clear}round 3/3"
    assert json.loads(rest)["event"] == "after"
