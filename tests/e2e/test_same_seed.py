"""One seed, one run (issue 44): ``tablectl bench --seed S`` twice, every game with every fault
kind its table can inject, writes the same records but for the wall clock (the cards, the
inputs and their order, the rulings, the money). The journals are compared record by record by
:mod:`testbed.determinism`, which names the only fields allowed to differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.bench.faults import applicable_faults
from controller.cli import main
from controller.journal.reader import iter_records
from testbed.determinism import compare_journals, normalised

GAMES = ("rws-nc-three-pictures", "mbs-three-pictures", "mbs-royal-three-pictures",
         "live-three-pictures", "rws-three-card-poker")


def _bench(capsys: pytest.CaptureFixture[str], journal: Path, *args: str) -> dict:
    assert main(["bench", *args, "--journal-dir", str(journal), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("game", GAMES)
def test_two_runs_of_one_seed_write_the_same_records(game: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Every fault kind of the game's table once, in turn, and a round of each after it: a
    fault is planned on the device's own count of hands or cards, never on the clock, so it
    lands at the same hand or card and is ruled the same in both runs."""
    faults = ",".join(applicable_faults(game))
    args = ("--game", game, "--rounds", str(len(applicable_faults(game))), "--seed", "23",
            "--faults", faults)
    first = _bench(capsys, tmp_path / "first", *args)
    second = _bench(capsys, tmp_path / "second", *args)
    comparison = compare_journals(tmp_path / "first", tmp_path / "second")
    assert comparison.same, comparison.describe()
    assert comparison.rounds == len(applicable_faults(game))
    assert sum(first["faults_injected"].values()) == len(applicable_faults(game))
    assert first["bets"] == second["bets"] and first["stuck"] == second["stuck"] == 0
    assert first["unsettled"] == second["unsettled"] == 0


def test_another_seed_is_another_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The comparison can fail: another seed deals other cards, and the difference is named by
    its round."""
    args = ("--game", "rws-three-card-poker", "--rounds", "3")
    _bench(capsys, tmp_path / "first", *args, "--seed", "1")
    _bench(capsys, tmp_path / "second", *args, "--seed", "2")
    comparison = compare_journals(tmp_path / "first", tmp_path / "second")
    assert not comparison.same and comparison.rounds_differing >= 1
    assert "round " in comparison.describe()


def test_only_the_wall_clock_is_left_out(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """What the comparison ignores is a record's time and the chain over it, never what was
    dealt or paid: a card and a settlement stay in the normalised record."""
    _bench(capsys, tmp_path / "j", "--game", "rws-three-card-poker", "--rounds", "1",
           "--seed", "4")
    records = list(iter_records([tmp_path / "j"]))
    settled = next(r for r in records if r.event_type == "round_settled")
    body = normalised(settled)
    assert "ts" not in body and "hash" not in body and "prev" not in body
    assert body["payload"] == settled.to_dict()["payload"]


def test_a_report_says_how_to_run_it_again(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The summary ends with the command line that reruns the same seed."""
    assert main(["bench", "--game", "mbs-three-pictures", "--rounds", "1", "--seed", "31",
                 "--faults", "jam"]) == 0
    out = capsys.readouterr().out
    assert ("rerun: tablectl bench --game mbs-three-pictures --rounds 1 --seed 31 --faults jam"
            in out)


def test_a_failing_run_prints_its_seed_and_rerun(mocker, capsys: pytest.CaptureFixture[str]) -> None:
    """A bench that breaks part-way says which seed it was and the command that reruns it (a
    fault no simulator produces: the bench itself failing, through pytest-mock)."""
    from controller.bench.runner import Bench

    mocker.patch.object(Bench, "run", side_effect=RuntimeError("the rig broke"))
    assert main(["bench", "--game", "rws-three-card-poker", "--rounds", "2", "--seed",
                 "41"]) != 0
    err = capsys.readouterr().err
    assert ("seed 41 failed; rerun: tablectl bench --game rws-three-card-poker --rounds 2 "
            "--seed 41") in err and "the rig broke" in err and "Traceback" not in err
