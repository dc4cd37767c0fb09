"""``tablectl conformance`` against simulated devices on real ptys and TCP sockets."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from controller.cli import main
from drivers.conformance import KIT_VERSION
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.framed import Conformance
from firmware_sim.scanner import ScannerShoeSim
from firmware_sim.serve import PtyServer, TcpServer
from firmware_sim.shuffler import ShufflerSim

QUICK = "resync,identify,bad-crc,other-version,event-ack,shuffle,fault-clear-order"


class DealerAtTheKeyboard(io.StringIO):
    """stdin for --interactive: each prompt is answered by doing it on the simulator (the
    shuffler matrix asks for a fault, then a power cycle), then pressing Enter."""

    def __init__(self, sim: ShufflerSim) -> None:
        super().__init__()
        self.sim = sim
        self.prompts = 0

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self.prompts += 1
        if self.prompts == 1:
            self.sim.inject(FaultSpec(FaultKind.DOOR_OPEN))
        else:
            self.sim.reboot()
        return "\n"


def test_conformance_over_tcp_passes_firmware_sim(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole matrix over TCP with --interactive: every row PASS, the prompt on stderr,
    exit 0."""
    sim = ShufflerSim()
    keyboard = DealerAtTheKeyboard(sim)
    monkeypatch.setattr("sys.stdin", keyboard)
    with TcpServer(sim) as server:
        code = main(["conformance", "--device", "shuffler", "--url", server.url,
                     "--interactive"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert keyboard.prompts == 2 and "ACTION (cause_fault)" in captured.err
    assert "ACTION (power_cycle)" in captured.err
    rows = [line.split() for line in captured.out.splitlines()[1:-1]]
    assert len(rows) == 23 and {row[2] for row in rows} == {"PASS"}
    assert captured.out.splitlines()[-1].startswith("23 passed, 0 failed, 0 not run")


def test_conformance_json_on_a_pty_reports_not_run(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """On a pty without --interactive the fault row is not run: exit 3, and the JSON says
    which row and why."""
    with PtyServer(ShufflerSim(), link=tmp_path / "dev"):
        code = main(["conformance", "--device", "shuffler", "--url", str(tmp_path / "dev"),
                     "--only", QUICK, "--json"])
    doc = json.loads(capsys.readouterr().out)
    verdicts = {r["scenario"]: r["verdict"] for r in doc["results"]}
    assert code == 3 and doc["passed"] is False
    assert doc["kit_version"] == KIT_VERSION and doc["interactive"] is False
    assert verdicts.pop("fault-clear-order") == "not run"
    assert set(verdicts.values()) == {"pass"} and len(verdicts) == 6


def test_conformance_fails_the_legacy_firmware(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The non-conforming firmware: exit 1, and each failed row names its clause."""
    with PtyServer(ShufflerSim(conformance=Conformance.LEGACY), link=tmp_path / "dev"):
        code = main(["conformance", "--device", "shuffler", "--url", str(tmp_path / "dev"),
                     "--only", QUICK])
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if "  FAIL  " in line]
    assert code == 1 and len(failed) == 2
    assert any(line.startswith("other-version") and "protocols.md 2.3" in line
               for line in failed)
    assert any(line.startswith("event-ack") and "MUST NOT answer EVENT_ACK" in line
               for line in failed)


def test_conformance_mute_device_stops_early(capsys: pytest.CaptureFixture[str]) -> None:
    """A port that opens but never answers: the first rows fail for want of a reply, the rest
    are not run ("the device sent nothing"), exit 1, within a few seconds."""

    class Mute(ShufflerSim):
        def receive(self, data: bytes) -> None:
            pass

        def tick(self, now: float) -> None:
            pass

    started = time.monotonic()
    with PtyServer(Mute()) as server:
        code = main(["conformance", "--device", "shuffler", "--url", server.path, "--json"])
    doc = json.loads(capsys.readouterr().out)
    verdicts = [r["verdict"] for r in doc["results"]]
    assert code == 1 and time.monotonic() - started < 10
    assert verdicts[:2] == ["fail", "fail"] and set(verdicts[2:]) == {"not run"}
    assert "sent nothing" in doc["results"][-1]["detail"]


def test_conformance_scanner_shoe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A scanner shoe: the rows its dialect allows; the drawn-card row needs a person (exit 3
    without --interactive)."""
    sim = ScannerShoeSim(seed=3)
    with PtyServer(sim, link=tmp_path / "shoe") as server:
        sim.bind_link(server)
        code = main(["conformance", "--device", "shoe", "--dialect", "scanner", "--url",
                     str(tmp_path / "shoe"), "--json"])
        sim.close()
    doc = json.loads(capsys.readouterr().out)
    assert code == 3
    assert {r["scenario"]: r["verdict"] for r in doc["results"]} == {
        "connects": "pass", "quiet": "pass", "card": "not run"}


def test_conformance_unknown_scenario_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown scenario in --only: exit 2, one line listing the known ones."""
    assert main(["conformance", "--device", "shuffler", "--url", "loop://", "--only",
                 "nosuch"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unknown scenario nosuch; known: resync" in err


def test_conformance_nothing_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No device at the URL: exit 2 with one line naming it."""
    code = main(["conformance", "--device", "shuffler", "--url", str(tmp_path / "ttyNONE")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "ttyNONE" in err


def test_rows_not_run_say_how_to_answer_them(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Without --interactive the row that needs a person is NOT RUN, the exit status is 3,
    and stderr says how a person answers it (docs/protocols.md section 9)."""
    with PtyServer(ShufflerSim(), link=tmp_path / "dev"):
        code = main(["conformance", "--device", "shuffler", "--url", str(tmp_path / "dev"),
                     "--only", "resync,fault-clear-order"])
    captured = capsys.readouterr()
    assert code == 3
    assert "1 passed, 0 failed, 1 not run of 2" in captured.out
    assert "--interactive" in captured.err and "ACTION" in captured.err
