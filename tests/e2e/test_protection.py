"""Game protection end to end: a bench on a faulty simulated shuffler (the service's wiring,
the real driver on a pty) raises the alert in the journal and to ``tablectl watch``, and
``tablectl integrity report`` renders over that journal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.bench import Bench
from controller.cli import main
from controller.journal import iter_records
from controller.journal.replay import replay_records


def test_one_pass_shuffler_alert_in_journal_watch_and_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--shuffler one-pass-10``: within 12 rounds a one-pass finding (the valleys or the exact
    likelihood test, whichever decides first: one alert for the episode, naming the fault) is
    journaled as an input, its ``protection_alert`` record follows and the same event is
    published to watchers; the journal replays; the report finds the same alarm offline and
    writes every plot as PNG and SVG."""
    watched: list[dict[str, Any]] = []
    journal = tmp_path / "journal"
    report = Bench("rws-three-card-poker", 12, seed=2, shuffler="one-pass-10",
                   journal_dir=journal, publish=watched.append).run()
    one_pass = ("one_pass", "one_pass_lr")
    assert sum(report.protection_alerts[m] for m in one_pass) >= 1 and report.stuck == 0
    records = list(iter_records([journal]))
    alerts = [r.payload for r in records if r.event_type == "protection_alert"]
    assert alerts and alerts[0]["monitor"] in one_pass
    assert alerts[0]["statistic"] > alerts[0]["threshold"]
    assert alerts[0]["detail"].startswith("biased shuffle: ")
    published = [e for e in watched if e["type"] == "ProtectionAlert"]
    assert [e["decks"] for e in published] == [a["decks"] for a in alerts]
    assert replay_records(records).divergences == []

    out = tmp_path / "report"
    assert main(["integrity", "report", str(journal), "--out", str(out),
                 "--feed", "new-deck"]) == 0
    assert f"{len(alerts)} recorded live" in capsys.readouterr().out
    for name in ("positions", "valleys", "packets", "categories"):
        for suffix in ("png", "svg"):
            assert (out / f"{name}.{suffix}").stat().st_size > 1000
    data = json.loads((out / "report.json").read_text())
    assert data["totals"]["decks"] == 12
    # live, a deck is decided when the next shuffle closes it; the report also closes the
    # journal's last deck (12) at its end, so it may find one more there
    offline = [f["decks"] for f in data["findings"] if f["monitor"] in one_pass]
    assert [d for d in offline if d < 12] == [a["decks"] for a in alerts]


def test_missing_card_alert_at_the_first_count(capsys: pytest.CaptureFixture[str]) -> None:
    """``--shuffler missing-card``: the ledger alarms at the first wrong count (51 of 52), once
    for the episode (issue 25: not at every shuffle), and the table voids each round under the
    shortage clause (RWS-NC3P 5.5.2)."""
    assert main(["bench", "--game", "rws-nc-three-pictures", "--rounds", "2",
                 "--shuffler", "missing-card", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["protection_alerts"] == {"ledger": 1}
    assert data["voids_by_clause"] == {"RWS-NC3P 5.5.2": 2}


def test_stuck_card_alert_is_counted_not_voided(capsys: pytest.CaptureFixture[str]) -> None:
    """``--shuffler stuck-card``: the ledger's statistical finding ("stuck inside or missing")
    blocks the deck just after "No more bets"; the bench's dealer counts it by hand (52: the
    card is inside the machine), the deck is released and that round deals: nothing is voided
    on the statistic alone (MBS-R3P 5.9, issue 23)."""
    assert main(["bench", "--game", "mbs-royal-three-pictures", "--rounds", "80",
                 "--shuffler", "stuck-card", "--seed", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["protection_alerts"] == {"ledger": 1}
    assert (data["settled"], data["voided"], data["stuck"]) == (80, 0, 0)
