"""Crash tests (issue 5): the controller is SIGKILLed at seeded random moments across 210
simulated rounds (three games, 7 kills each) with the shuffler in firmware_sim on a real pty,
restarted each time with recovery. After every kill the journal verifies; at the end the
journal replays without divergence, every wager placed is settled or returned exactly once,
every round ends once, and every round a restart interrupted ends as its clause says
(RWS-NC3P 5.4.1/5.4.2, MBS-R3P 5.13.1/5.13.2, MBS-3P: supervisor)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal import iter_records, verify
from controller.journal.replay import replay_records
from firmware_sim.framed import bind_server
from firmware_sim.serve import PtyServer
from firmware_sim.shuffler import ShufflerSim
from tests.crash.rig import check_journal, run_crash_campaign

ROUNDS = 70
KILLS = 7


@pytest.fixture(name="shuffler_link")
def fixture_shuffler_link(tmp_path: Path) -> Iterator[Path]:
    """The simulated shuffler keeps running across controller deaths (its own power)."""
    sim = ShufflerSim(seed=5, shuffle_seconds=0.01, dispense_seconds=0.005, take_seconds=0.005)
    server = PtyServer(sim, link=tmp_path / "shuffler")
    bind_server(sim, server)
    server.start()
    yield tmp_path / "shuffler"
    server.close()


@pytest.mark.parametrize(("game", "seed"), [("rws-nc-three-pictures", 7),
                                            ("mbs-royal-three-pictures", 8),
                                            ("mbs-three-pictures", 9)])
def test_sigkill_recovery_reconciles(game: str, seed: int, shuffler_link: Path,
                                     tmp_path: Path) -> None:
    """SIGKILL at random points; each restart recovers; totals reconcile exactly once."""
    journal = tmp_path / "journal"
    campaign = run_crash_campaign(journal, shuffler_link, game, ROUNDS, KILLS, seed)
    assert campaign.verified_after_kill == KILLS
    assert verify([journal]).ok
    replay = replay_records(iter_records([journal]))
    assert replay.divergences == []
    findings = check_journal(journal, game)
    assert findings.problems == []
    assert findings.rounds == ROUNDS
    assert findings.settled + findings.voided == ROUNDS
    assert findings.results == findings.wagers > 0
    assert replay.settlements_checked == ROUNDS
