"""``tablectl studio`` with its ledger on a full disk (issue 34, "bad input"): one line naming
the ledger and the OS's error, and exit 75 (``EX_TEMPFAIL``) for systemd to retry, as
``tablectl run`` does for a full journal disk. On the previous main the gateway opened its
ledger for appending (which does not touch the disk), said ``listening`` and kept running, to
fail at the first answer it had to record. A real 256 KiB tmpfs (root only; skipped
elsewhere), never a patched write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed.floorlab import free_port
from controller.service.lifecycle.backoff import EXIT_TEMPFAIL
from tests.controller.journal.smalldisk import fill, small_disk
from tests.studio.conftest import studio_toml

ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 60.0


@pytest.fixture(name="disk")
def fixture_disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk") as disk:
        yield disk


def _config(tmp_path: Path, pki: Path, ledger: Path) -> Path:
    path = tmp_path / "studio.toml"
    path.write_text(studio_toml(tmp_path, pki, free_port(), 500).replace(
        str(tmp_path / "studio" / "ledger.jsonl"), str(ledger)))
    return path


def start_gateway(config: Path, runtime: Path) -> tuple[int, str, str]:
    """``tablectl studio --config`` as systemd starts it: its exit status, stdout and stderr.
    Once it says it will exit for systemd to retry it is sent SIGTERM, which ends its backoff
    wait (the exit status stays); a gateway that starts listening instead is killed."""
    env = dict(os.environ, RUNTIME_DIRECTORY=str(runtime))
    process = subprocess.Popen([sys.executable, "-m", "controller", "studio", "--config",
                                str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, cwd=ROOT)
    guard = threading.Timer(WAIT_SECONDS, process.kill)  # the previous main never exits
    guard.start()
    lines: list[str] = []
    try:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if "for systemd to retry" in line:
                process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=WAIT_SECONDS)
        code = process.wait(WAIT_SECONDS)
    finally:
        guard.cancel()
        guard.join()
    return code, out, "".join(lines)


@pytest.mark.parametrize("earlier", [b"", b'{"kind":"refusal","client":"gs1"}\n'],
                         ids=["no ledger yet", "a ledger with room in its last page"])
def test_a_full_ledger_disk_exits_75_naming_the_ledger(
        disk: Path, tmp_path: Path, pki: Path, earlier: bytes) -> None:
    """The gateway writes (and fsyncs) room for its next answers beside the ledger before it
    listens: a full disk is one line naming the ledger and ``No space left on device``, exit
    75, nothing listening, and the ledger as it was (an earlier ledger's last page still has
    room for a line on a full disk, so appending one would not find it full)."""
    ledger = disk / "ledger.jsonl"
    if earlier:
        ledger.write_bytes(earlier)
    filler = fill(disk)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    code, out, err = start_gateway(_config(tmp_path, pki, ledger), runtime)
    assert code == EXIT_TEMPFAIL == 75, err
    assert "listening" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(ledger) in lines[0] and "No space left on device" in lines[0], err
    assert (runtime / "start-failures").read_text().strip() == "1"
    assert sorted(p.name for p in disk.iterdir()) == sorted(
        [filler.name] + ([ledger.name] if earlier else []))
    if earlier:
        assert ledger.read_bytes() == earlier
