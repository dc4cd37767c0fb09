"""``tablectl bench``: a simulated table end to end through the service's own wiring (journal,
recovery, table thread, the real driver on a pty, the product's device operator)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.cli import main


def _bench(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["bench", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_shape_and_a_clean_run(capsys) -> None:
    """``--json`` prints the documented keys; with no faults every round settles."""
    data = _bench(capsys, "--game", "rws-three-card-poker", "--rounds", "6", "--seed", "3")
    assert list(data)[:7] == ["game", "rounds", "settled", "voided", "voids_by_clause",
                              "hands_removed", "journal"]
    assert (data["game"], data["rounds"], data["settled"], data["voided"]) == (
        "rws-three-card-poker", 6, 6, 0)
    assert data["voids_by_clause"] == {} and data["hands_removed"] == 0
    assert data["journal"] is None and data["stuck"] == 0
    assert set(data["bets"]) <= {"ante", "pair_plus", "progressive"}
    assert data["bets"]["ante"]["theoretical"] == pytest.approx(-0.0337, abs=1e-4)


def test_same_seed_same_results(capsys) -> None:
    """Seeded devices and wagers: two runs with one seed give the same money."""
    first = _bench(capsys, "--game", "mbs-royal-three-pictures", "--rounds", "4", "--seed", "9")
    second = _bench(capsys, "--game", "mbs-royal-three-pictures", "--rounds", "4", "--seed", "9")
    assert first["bets"] == second["bets"] and first["settled"] == 4


def test_fault_list_voids_by_clause(capsys) -> None:
    """One fault per round, in turn: each voids under its own RWS-NC3P clause (5.5.1 foreign,
    5.5.2 count, 5.5.1/5.5.2 second copy, 5.5.3 not shuffled)."""
    data = _bench(capsys, "--game", "rws-nc-three-pictures", "--rounds", "4", "--faults",
                  "foreign,count:51,duplicate,unshuffled")
    assert data["faults_injected"] == {"count:51": 1, "duplicate": 1, "foreign": 1,
                                       "unshuffled": 1}
    assert data["voids_by_clause"] == {"RWS-NC3P 5.5.1": 1, "RWS-NC3P 5.5.1, 5.5.2": 1,
                                       "RWS-NC3P 5.5.2": 1, "RWS-NC3P 5.5.3": 1}
    assert (data["settled"], data["voided"], data["stuck"]) == (0, 4, 0)


def test_fault_rate_and_live_studio(capsys) -> None:
    """``--faults 1`` puts a fault in every round; the LIVE-3P studio bench (Bee-Tek shoe,
    burn cards) has the supervisor enter unread cards and order double feeds, so every round
    with those faults still settles."""
    data = _bench(capsys, "--game", "live-three-pictures", "--rounds", "4", "--seed", "5",
                  "--faults", "noread,doubleread,exposed")
    assert sum(data["faults_injected"].values()) == 4 and data["settled"] == 4
    rated = _bench(capsys, "--game", "mbs-three-pictures", "--rounds", "3", "--faults", "1")
    assert sum(rated["faults_injected"].values()) == 3 and rated["stuck"] == 0


def test_wrong_count_removes_hands(capsys) -> None:
    """RWS-NC3P 5.9 at volume: sets of two to players remove those hands and the rounds still
    settle; to the dealer they void (5.5.5)."""
    data = _bench(capsys, "--game", "rws-nc-three-pictures", "--rounds", "4", "--seed", "3",
                  "--faults", "set2")
    assert data["hands_removed"] + data["voids_by_clause"].get("RWS-NC3P 5.5.5", 0) == 4
    assert data["hands_removed"] == data["settled"]


def test_journal_dir_records_inputs_and_events(capsys, tmp_path: Path) -> None:
    """``--journal-dir``: every table input and round event goes to the surveillance
    journal. It is the service's own journal (the bench runs the service's wiring): inputs are
    recorded by type (``input_device`` CardSetDispensed, ``input_command`` PlaceWager) before
    the table acts on them, and ``tablectl journal verify`` and ``replay`` accept it."""
    data = _bench(capsys, "--game", "rws-three-card-poker", "--rounds", "2", "--journal-dir",
                  str(tmp_path / "journal"))
    journal = data["journal"]
    assert journal["directory"] == str(tmp_path / "journal") and journal["records"] > 40
    text = "".join(p.read_text() for p in sorted((tmp_path / "journal").rglob("*")) if p.is_file())
    assert "round_settled" in text and '"type":"CardSetDispensed"' in text \
        and '"type":"PlaceWager"' in text
    assert "recovery_completed" in text  # started as `tablectl run` starts: recovery first
    capsys.readouterr()
    assert main(["journal", "verify", str(tmp_path / "journal")]) == 0
    assert main(["journal", "replay", str(tmp_path / "journal")]) == 0
    assert "2 settlement(s)/void(s)" in capsys.readouterr().out


def test_bad_fault_is_a_usage_error(capsys) -> None:
    """A fault the table's devices cannot produce is one clear line and exit 2."""
    assert main(["bench", "--game", "live-three-pictures", "--rounds", "1", "--faults",
                 "set2"]) == 2
    assert "does not apply" in capsys.readouterr().err


def _journal_inputs(directory: Path) -> list[dict]:
    records = [json.loads(line) for path in sorted(directory.glob("*.jsonl"))
               for line in path.read_text().splitlines()]
    return [r["payload"] for r in records if r["event"] == "input_command"]


def test_faults_take_the_products_path(capsys, tmp_path: Path) -> None:
    """``--faults`` on the service's own pipeline: a jam holds the round (the supervisor clears
    the shuffler's fault with ``ClearDeviceFault``, i.e. ``tablectl supervisor clear-fault``,
    and continues), an exposed card (the HAND_READY mask, no fault: docs/protocols.md) is ruled
    "continue" (RWS-3CP 5.1.2), a reboot mid-dispense ends settled or voided: none stuck. Every
    command in the journal is a person's (dealer or supervisor, with actor and role): the bench
    never commands the device itself."""
    data = _bench(capsys, "--game", "rws-three-card-poker", "--rounds", "3", "--faults",
                  "jam,exposed,reboot", "--journal-dir", str(tmp_path / "journal"))
    assert data["faults_injected"] == {"exposed": 1, "jam": 1, "reboot": 1}
    assert data["stuck"] == 0 and data["settled"] + data["voided"] == 3
    assert data["settled"] >= 2  # the jam and the exposed card rounds go on
    inputs = _journal_inputs(tmp_path / "journal")
    people = {(p["fields"]["actor"], p["fields"]["role"]) for p in inputs}
    assert people <= {("bench-dealer", "dealer"), ("bench-supervisor", "supervisor")}
    clears = [p for p in inputs if p["type"] == "ClearDeviceFault"]
    assert [p["fields"]["reason"] for p in clears] == ["bench: jam"]
    assert all(p["fields"]["role"] == "supervisor" and p["fields"]["device"] == "shuffler"
               for p in clears)


def test_one_pipeline_no_private_operator() -> None:
    """The bench puts the table together only through the service's wiring: no bench module
    opens a driver, serves a simulator or builds a table of its own (STYLE.md: two wirings of
    one pipeline), so what ``tablectl bench`` exercises is what ``tablectl run`` runs."""
    import ast

    import controller

    forbidden = {"drivers.shuffler", "drivers.shoe", "drivers.framed.messages",
                 "firmware_sim.serve", "firmware_sim.shuffler", "firmware_sim.beetek",
                 "controller.table.table", "controller.journal.writer"}
    modules = sorted((Path(controller.__file__).parent / "bench").glob("*.py"))
    assert len(modules) >= 6
    for module in modules:
        tree = ast.parse(module.read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                     for alias in node.names}
        assert not imported & forbidden, f"{module.name} imports {imported & forbidden}"
        assert "controller.service.wiring.pipeline" in imported or module.name != "rig.py"
