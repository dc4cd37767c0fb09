"""Issue 25: ``tablectl integrity report`` carries the risk in money of a flagged machine, per
bet of the table's game, in its text, ``report.md``, ``report.json`` and ``--json``; a clean
journal's report has no risk section. The journals are written by ``tablectl bench`` on the
service's wiring with the simulated shuffler on a real pty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.bench import Bench
from controller.cli import main


def _journal(tmp_path: Path, shuffler: str) -> Path:
    journal = tmp_path / f"journal-{shuffler}"
    Bench("rws-three-card-poker", 12, seed=2, shuffler=shuffler, journal_dir=journal).run()
    return journal


def test_flagged_journal_reports_the_risk_of_every_bet(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A one-pass 10-shelf shuffler, fed a new deck (the simulated shuffler): the likelihood
    test flags it, and the report puts the machine's return per bet of RWS-3CP beside the fair
    house edge, in integer minor units per 100.00 staked with a standard error."""
    journal = _journal(tmp_path, "one-pass-10")
    out = tmp_path / "report"
    args = ["integrity", "report", str(journal), "--out", str(out), "--feed", "new-deck",
            "--risk-deals", "300"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "risk: rws-three-card-poker on a one-pass-10 machine fed new-deck" in text
    for bet in ("ante", "pair_plus", "progressive"):
        assert f"  {bet}: fair " in text
    assert "  pair_plus: fair -5.575% = -557; blind +" in text
    assert "## Risk in money" in (out / "report.md").read_text()
    risk = json.loads((out / "report.json").read_text())["risk"]
    assert [r["machine"] for r in risk] == ["one-pass-10"]
    bets = {b["bet"]: b for b in risk[0]["bets"]}
    assert set(bets) == {"ante", "pair_plus", "progressive"}
    assert bets["pair_plus"]["fair_per_100_00"] == -557
    assert isinstance(bets["pair_plus"]["blind"]["per_100_00"], int)
    assert bets["pair_plus"]["blind"]["per_100_00"] > 0
    assert main([*args, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["risk"] == risk


def test_clean_journal_has_no_risk_section(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fair shuffler flags nothing, so the report carries no risk section anywhere."""
    journal = _journal(tmp_path, "fair")
    out = tmp_path / "report"
    assert main(["integrity", "report", str(journal), "--out", str(out), "--feed",
                 "new-deck"]) == 0
    assert not any(line.startswith("risk:") for line in capsys.readouterr().out.splitlines())
    assert "Risk in money" not in (out / "report.md").read_text()
    assert "risk" not in json.loads((out / "report.json").read_text())
    assert main(["integrity", "report", str(journal), "--out", str(out), "--feed",
                 "new-deck", "--json"]) == 0
    assert "risk" not in json.loads(capsys.readouterr().out)
