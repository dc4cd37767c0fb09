"""The journal review verbs an auditor runs (issue 16 "auditor traps"): replay says when there
was nothing to replay, the bench's record count is the one ``journal verify`` reports, and
``recall`` lists only real overrides."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.cli import main
from controller.journal import JournalWriter, verify
from controller.journal.recovery import recover
from controller.table import commands as cmd
from controller.table.layout import TableLayout
from drivers import events as dev
from tests.controller.journal.conftest import (  # noqa: F401 (fixtures)
    fixture_clock,
    fixture_journal_dir,
    fixture_open_writer,
)

ROOT_AS_SUPERVISOR = dict(actor="root", role=cmd.Role.SUPERVISOR)  # a root peer's table role
IDENTITY = dev.DeviceIdentity("Sim", "HF-3", "SIM-0001", "2.3.1", "abcd", 1)


@pytest.fixture(name="bench_journal", scope="module")
def fixture_bench_journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A two-round bench journal and the bench's JSON report."""
    directory = tmp_path_factory.mktemp("bench") / "journal"
    from controller.bench import Bench

    report = Bench("rws-nc-three-pictures", 2, seed=3, journal_dir=directory).run()
    return directory, report.as_json()


def test_bench_reports_the_count_verify_reports(bench_journal: tuple[Path, dict]) -> None:
    """The bench's record count is taken after its journal is closed: the count `journal
    verify` finds, journal_closed included."""
    directory, report = bench_journal
    assert report["journal"]["records"] == verify([directory]).records


def test_replay_of_a_bench_journal_reproduces_it(
        bench_journal: tuple[Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    """The bench runs the service's own wiring, so its journal has service sessions and replays
    like the service's: every input replayed, its outputs reproduced."""
    directory, _ = bench_journal
    assert main(["journal", "replay", str(directory), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and data["inputs"] > 0 and data["outputs_checked"] > 0


def test_replay_of_a_journal_without_a_session_says_nothing_was_replayed(
        open_writer: Callable[..., JournalWriter], journal_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Records with no service session (an excerpt, another tool's journal): replay does not
    say OK over zero inputs; it says what was not replayed and why, and exits 1."""
    writer = open_writer()
    writer.append("place_wager", {"wager": "w1"}, round_id="1")
    writer.append("place_wager", {"wager": "w2"}, round_id="1")
    writer.close()
    assert main(["journal", "replay", str(journal_dir)]) == 1
    out = capsys.readouterr()
    assert out.out.startswith("NOT REPLAYED: none of the") and "no session_started" in out.out
    assert "place_wager" in out.out and "OK" not in out.out
    assert out.err == "tablectl journal: nothing replayed: no service session in the journal\n"
    assert main(["journal", "replay", str(journal_dir), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["inputs"] == 0 and data["not_replayed"]["place_wager"]


def test_recall_lists_only_real_overrides(open_writer: Callable[..., JournalWriter],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Ordinary commands sent with supervisor rights (root's peer maps to the supervisor role)
    are not overrides; the supervisor's void is the one override listed."""
    writer = open_writer()
    table, _ = recover(writer, TableLayout.for_game("rws-nc-three-pictures"))
    table.process(dev.DeviceOnline("shuffler", identity=IDENTITY))
    table.process(cmd.OpenRound(**ROOT_AS_SUPERVISOR))
    table.process(cmd.PlaceWager(**ROOT_AS_SUPERVISOR, wager_id="w1", position="1",
                                 bet="main", amount=1000, player="p1"))
    table.process(cmd.CloseBets(**ROOT_AS_SUPERVISOR))
    table.process(cmd.SupervisorDecision(**ROOT_AS_SUPERVISOR,
                                         action=cmd.SupervisorAction.VOID, reason="camera"))
    directory = writer.directory
    writer.close()
    assert main(["journal", "recall", str(directory), "--json"]) == 0
    games = json.loads(capsys.readouterr().out)["games"]
    assert [(o["actor"], o["action"]) for o in games[-1]["overrides"]] == [("root", "void")]
