"""A restart in the middle of a round: SIGTERM (as systemd stops the service) with the cards
dealt, and SIGKILL (no handler runs, nothing is flushed) with one hand dealt. On restart recovery
replays the journal and rules the interrupted round by the game's clause (RWS-NC3P 5.4.1/5.4.2,
MBS-R3P 5.13.1/5.13.2, a supervisor elsewhere), and the round is concluded through the socket."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.journal.verify import verify
from testbed.crash.rig import dispensed_vs_journaled
from tests.service_e2e.conftest import (
    GAMES,
    HELD,
    HeldDevice,
    Processes,
    config_toml,
)
from tests.service_e2e.rounds import (
    DEALING,
    apply_interruption_clause,
    bet,
    bet_and_deal,
    deal_one_hand,
    deal_the_rest,
    ended_once,
    finish,
    wait_online,
)


@pytest.mark.parametrize("game", GAMES)
def test_restart_mid_round_applies_the_interruption_clause(
        processes: Processes, tmp_path: Path, game: str) -> None:
    """SIGTERM with the cards dealt and the round unsettled; on restart recovery replays the
    journal and rules the interruption by the game's clause, and the round can be concluded."""
    toml = config_toml(tmp_path, game)
    first = processes.service(toml)
    first.wait_ready()
    with first.client() as client, first.client() as watcher:
        events = watcher.watch()
        before = bet_and_deal(client, events, game)
    code, err = first.terminate()
    assert code == 0, err

    second = processes.service(toml, name="again.toml")
    second.wait_ready()
    with second.client() as client:
        status = client.request("round.status")
        recovery = status["recovery"]
        assert recovery["round"] == 1 and recovery["inputs_replayed"] > 0
        assert status["hands"] == before["hands"]  # not one card lost or changed
        if apply_interruption_clause(client, game, status) != "void":
            assert finish(client, game)["state"] == "settled"
        else:
            assert status["state"] == "voided"
        client.request("round.open")  # the table goes on: round numbers continue
        assert client.request("round.status")["round"] == 2
    code, err = second.terminate()
    assert code == 0, err
    assert verify([tmp_path / "journal"]).ok


@pytest.mark.parametrize("game", HELD)
def test_sigkill_mid_deal_then_restart_applies_the_clause(
        processes: Processes, tmp_path: Path, hold_device: Callable[[str], HeldDevice],
        game: str) -> None:
    """SIGKILL (no handler, nothing flushed) with bets closed and one hand dealt; the restarted
    service comes back READY on the same journal, the journal verifies, recovery rules the
    round by the game's power-failure clause (RWS-NC3P 5.4.1/5.4.2, MBS-R3P 5.13.2/5.13.1), the
    round is brought to its end through the socket, and every wager is settled or returned
    exactly once. The device is held by the test, so it outlives the kill as hardware does and
    the deal stops exactly after the first hand."""
    device = hold_device(HELD[game])
    toml = config_toml(tmp_path, game, device=device.device_config())
    journal = tmp_path / "journal"
    first = processes.service(toml)
    first.wait_ready()
    with first.client() as client, first.client() as watcher:
        events = watcher.watch()
        wait_online(client, events, device)
        wagers = bet(client, game)
        deal_one_hand(client, events, device)
        before = client.request("round.status")
        assert before["state"] in DEALING, before["state"]
    code, _ = first.kill()
    assert code == -signal.SIGKILL
    killed = verify([journal])
    assert killed.ok and not killed.closed, killed.problem

    second = processes.service(toml, name="again.toml")
    second.wait_ready()
    with second.client() as client, second.client() as watcher:
        events = watcher.watch()
        status = client.request("round.status")
        assert status["recovery"]["round"] == 1 and status["recovery"]["inputs_replayed"] > 0
        assert status["hands"] == before["hands"]  # not one card lost or changed
        if apply_interruption_clause(client, game, status) == "void":
            assert client.request("round.status")["state"] == "voided"
        else:
            wait_online(client, events, device)
            deal_the_rest(client, events, device)
            assert finish(client, game)["state"] == "settled"
    code, err = second.terminate()
    assert code == 0, err
    checked = processes.cli("journal", "verify", str(journal))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ended = ended_once(journal, "1")
    results = ended["settlement"]["results"]
    ids = [result["wager_id"] for result in results]
    assert len(ids) == len(set(ids))  # none settled twice
    # every wager placed, once; RWS-3CP Play wagers (3.8) come from a placed Ante's decision
    assert sorted(i for i in ids if not i.endswith(":play")) == sorted(wagers)
    assert all(i.removesuffix(":play") in wagers for i in ids)
    if status["recovery"]["decision"] == "void":  # 5.4.2: every wager returned, none paid
        assert all(result["net"] == 0 for result in results), results
    if device.kind == "shuffler":  # acknowledged only once journaled: no hand lost or doubled
        dispensed, journaled = dispensed_vs_journaled(device.sim, journal)
        assert journaled == dispensed > 0
