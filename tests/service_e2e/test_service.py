"""The table service end to end: a subprocess driven through its control socket, like the pit.

Each of the five games plays whole rounds on simulated devices (open, wagers, no more bets, the
deal by the simulated shuffler or shoe, RWS-3CP play/fold decisions (3.8), reveal, settle); the
service is stopped with SIGTERM mid-round and restarted, and recovery applies the game's
interruption clause (RWS-NC3P 5.4.1/5.4.2, MBS-R3P 5.13.1/5.13.2, a supervisor elsewhere); and
the faults a deployment meets give one clear line each."""

from __future__ import annotations

import select
from pathlib import Path
from typing import Any

import pytest

from controller.journal.verify import verify
from controller.service.client import CommandRefused, ControlClient
from tests.service_e2e.conftest import GAMES, WAGERS, Processes, config_toml, wait_for

INTERRUPTION = {
    # game -> (clause if established, decision if established, clause if not, decision if not)
    "rws-nc-three-pictures": ("RWS-NC3P 5.4.1", "continue", "RWS-NC3P 5.4.2", "void"),
    "mbs-royal-three-pictures": ("MBS-R3P 5.13.2", "continue", "MBS-R3P 5.13.1",
                                 "player_options"),
}


def _bet_and_deal(client: ControlClient, events: Any, game: str) -> dict[str, Any]:
    opened = client.request("round.open", actor="dealer:e2e")
    for index, (position, bet, amount) in enumerate(WAGERS[game]):
        client.request("wager.place", {"wager_id": f"r{opened['round']}-{index}",
                                       "position": position, "bet": bet, "amount": amount})
    client.request("round.close")
    wait_for(events, "DealComplete")
    return client.request("round.status")


def _finish(client: ControlClient, game: str) -> dict[str, Any]:
    status = client.request("round.status")
    for position in status["decisions_due"]:  # RWS-3CP 3.8: every Ante player decides
        client.request("decide", {"position": position, "choice": "play"})
    if client.request("round.status")["state"] == "dealt":
        client.request("round.reveal")
    return client.request("round.settle")


@pytest.mark.parametrize("game", GAMES)
def test_whole_rounds_of_each_game(processes: Processes, tmp_path: Path, game: str) -> None:
    """Two whole rounds through the socket; every wager settled, the journal verifies."""
    service = processes.service(config_toml(tmp_path, game))
    ready = service.wait_ready()
    assert b"online" in ready, ready  # the simulated device is up before READY
    with service.client() as client, service.client() as watcher:
        events = watcher.watch()
        for number in (1, 2):
            status = _bet_and_deal(client, events, game)
            assert status["round"] == number
            hands = status["hands"]
            assert all(len(cards) == 3 for cards in hands.values()), hands
            settled = _finish(client, game)
            assert settled["state"] == "settled"
            (event,) = [e for e in settled["events"] if e["type"] == "RoundSettled"]
            ids = {r["wager_id"] for r in event["settlement"]["results"]}
            assert {f"r{number}-{i}" for i in range(len(WAGERS[game]))} <= ids
    code, err = service.terminate()
    assert code == 0, err
    report = verify([tmp_path / "journal"])
    assert report.ok and report.closed, report.problem


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
        before = _bet_and_deal(client, events, game)
    code, err = first.terminate()
    assert code == 0, err

    second = processes.service(toml, name="again.toml")
    second.wait_ready()
    with second.client() as client:
        status = client.request("round.status")
        recovery = status["recovery"]
        assert recovery["round"] == 1 and recovery["inputs_replayed"] > 0
        assert status["hands"] == before["hands"]  # not one card lost or changed
        if game in INTERRUPTION:
            yes_clause, yes, no_clause, no = INTERRUPTION[game]
            expected = (yes_clause, yes) if recovery["established"] else (no_clause, no)
            assert (recovery["clause"], recovery["decision"]) == expected
        else:  # MBS-3P, RWS-3CP, LIVE-3P print no interruption clause: a supervisor decides
            assert recovery["decision"] == "supervisor"
            assert status["state"] == "hold" and "interruption" in status["held_for"]
            client.request("supervisor.continue", {"reason": "controller restarted"},
                           actor="supervisor:e2e")
        if recovery["decision"] == "player_options":
            for position in client.request("round.status")["options_pending"]:
                client.request("option", {"position": position, "choice": "continue"})
        if recovery["decision"] != "void":
            assert _finish(client, game)["state"] == "settled"
        else:
            assert status["state"] == "voided"
        client.request("round.open")  # the table goes on: round numbers continue
        assert client.request("round.status")["round"] == 2
    code, err = second.terminate()
    assert code == 0, err
    assert verify([tmp_path / "journal"]).ok


def test_a_refused_command_is_one_line_exit_1(processes: Processes, tmp_path: Path) -> None:
    """The table's refusal, word for word, on one line; exit 1 (a usage problem is 2)."""
    service = processes.service(config_toml(tmp_path, "rws-three-card-poker"))
    service.wait_ready()
    sock = str(tmp_path / "control.sock")
    refused = processes.cli("round", "close", "--socket", sock)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == "tablectl round: refused: bets are not open (state idle)\n"
    assert processes.cli("round", "open", "--socket", sock).returncode == 0
    play = processes.cli("wager", "place", "1", "play", "500", "--socket", sock)
    assert play.returncode == 1
    assert "Play wager is placed by a play decision after the deal (RWS-3CP 3.8.2)" \
        in play.stderr
    usage = processes.cli("decide", "1", "maybe", "--socket", sock)
    assert usage.returncode == 2 and "invalid choice: 'maybe'" in usage.stderr
    with ControlClient(sock) as client:
        with pytest.raises(CommandRefused, match="no decisions are due"):
            client.request("decide", {"position": "1", "choice": "play"})
    service.terminate()


def test_watch_streams_round_events_as_json_lines(processes: Processes,
                                                  tmp_path: Path) -> None:
    """``tablectl watch`` prints one JSON object per round event, as the journal records it."""
    service = processes.service(config_toml(tmp_path, "rws-nc-three-pictures"))
    service.wait_ready()
    sock = str(tmp_path / "control.sock")
    watch = processes.spawn(["watch", "--socket", sock])
    assert watch.stdout is not None and watch.stderr is not None
    assert _line_within(watch.stderr).startswith("tablectl watch: watching round events")
    with service.client() as client:
        client.request("round.open")
        line = _line_within(watch.stdout)
    assert '"type": "RoundOpened"' in line and '"round": 1' in line
    service.terminate()
    watch.wait(timeout=10)
    assert watch.returncode == 0


def _line_within(stream: Any, seconds: float = 10.0) -> str:
    ready, _, _ = select.select([stream], [], [], seconds)
    assert ready, f"no line within {seconds} s"
    return str(stream.readline())


@pytest.mark.parametrize(("change", "message"), [
    (("game = \"rws-three-card-poker\"", "game = \"rws-3cp\""),
     "table.game: unknown game 'rws-3cp'"),
    (("kind = \"shuffler\"", "kind = \"shuffler\"\nbaud = 9600"),
     "device.baud: unknown key"),
    (("[journal]", "[journal\n"), "not valid TOML"),
])
def test_a_malformed_config_is_refused(processes: Processes, tmp_path: Path,
                                       change: tuple[str, str], message: str) -> None:
    """Exit 2 before anything starts, one line naming the file, the key and the problem."""
    toml = config_toml(tmp_path, "rws-three-card-poker").replace(*change)
    service = processes.service(toml)
    assert service.process.wait(timeout=15) == 2
    err = service.stop_and_stderr()
    assert err.startswith(f"tablectl run: {service.config}: ") and message in err, err
    assert err.count("\n") == 1
    assert not (tmp_path / "journal").exists() and not service.socket.exists()


def test_a_device_path_that_is_no_device_is_refused(processes: Processes,
                                                    tmp_path: Path) -> None:
    """A device.url the service cannot use as a device: one line, exit 2, no socket left."""
    not_a_device = tmp_path / "table-shuffler"
    not_a_device.mkdir()
    toml = config_toml(tmp_path, "rws-nc-three-pictures",
                       device={"kind": "shuffler", "url": str(not_a_device)})
    service = processes.service(toml)
    assert service.process.wait(timeout=15) == 2
    err = service.stop_and_stderr()
    assert err.endswith(f"tablectl run: device.url {not_a_device}: not a character device "
                        "(a serial port or USB adapter)\n"), err
    assert not service.socket.exists()


def test_a_key_file_others_can_read_is_refused(processes: Processes, tmp_path: Path) -> None:
    """Least privilege: an HMAC key readable by group or others is not used."""
    key = tmp_path / "journal.key"
    key.write_text("ab" * 32 + "\n")
    key.chmod(0o644)
    extra = f'hmac_key_file = "{key}"\n'
    service = processes.service(config_toml(tmp_path, "rws-nc-three-pictures", extra=extra))
    assert service.process.wait(timeout=15) == 2
    err = service.stop_and_stderr()
    assert err.endswith(f"journal.hmac_key_file {key}: mode 0644 lets group or others read "
                        f"or change the key; run chmod 0400 {key}\n"), err
    key.chmod(0o400)
    keyed = processes.service(config_toml(tmp_path, "rws-nc-three-pictures", extra=extra),
                              name="keyed.toml")
    keyed.wait_ready()
    keyed.terminate()
    assert verify([tmp_path / "journal"], hmac_key=bytes.fromhex("ab" * 32)).hmac_checked


def test_a_wrong_deck_count_blocks_dealing_until_counted(processes: Processes,
                                                         tmp_path: Path) -> None:
    """The dealer's count of 51 voids the dealt round and blocks the deck (RWS-NC3P 5.5.2,
    MBS-R3P 5.9): the next round's shuffle is not accepted and nothing is dealt until
    ``tablectl deck counted 52``, after which the round deals and settles normally."""
    game = "rws-nc-three-pictures"
    service = processes.service(config_toml(tmp_path, game))
    service.wait_ready()
    sock = ("--socket", str(tmp_path / "control.sock"), "--actor", "dealer:e2e")
    with service.client() as client, service.client() as watcher:
        events = watcher.watch()
        _bet_and_deal(client, events, game)
        short = processes.cli("deck", "counted", "51", *sock)
        assert short.returncode == 0, short.stderr
        assert short.stdout.startswith("accepted: round 1, now voided (DeckBlocked"), short.stdout
        assert "RoundVoided" in short.stdout
        blocked = "manual count gives 51 cards, not 52"
        assert client.request("round.status")["deck_blocked"] == blocked

        client.request("round.open")
        for index, (position, bet, amount) in enumerate(WAGERS[game]):
            client.request("wager.place", {"wager_id": f"r2-{index}", "position": position,
                                           "bet": bet, "amount": amount})
        client.request("round.close")
        noted = wait_for(events, "DeviceNoted", "DealComplete")
        while not noted.get("detail", "").startswith("shuffle not accepted"):
            assert noted["type"] == "DeviceNoted", noted  # never dealt from a blocked deck
            noted = wait_for(events, "DeviceNoted", "DealComplete")
        status = client.request("round.status")
        assert (status["state"], status["hands"], status["deck_blocked"]) == (
            "closed", {}, blocked)
        shuffled = processes.cli("round", "shuffled", *sock)
        assert (shuffled.returncode, shuffled.stderr) == (
            1, (f"tablectl round: refused: dealing is blocked until the deck is replaced or "
                f"counted: {blocked}\n"))

        counted = processes.cli("deck", "counted", "52", *sock)
        assert counted.returncode == 0, counted.stderr
        assert "DeckReleased" in counted.stdout
        wait_for(events, "DealComplete")
        status = client.request("round.status")
        assert status["round"] == 2 and status["deck_blocked"] is None
        assert all(len(cards) == 3 for cards in status["hands"].values()), status["hands"]
        settled = _finish(client, game)
        assert settled["state"] == "settled"
        (event,) = [e for e in settled["events"] if e["type"] == "RoundSettled"]
        assert {f"r2-{i}" for i in range(len(WAGERS[game]))} <= {
            r["wager_id"] for r in event["settlement"]["results"]}
        again = processes.cli("deck", "replace", *sock)
        assert (again.returncode, again.stderr) == (
            1, "tablectl deck: refused: dealing is not blocked\n")
    code, err = service.terminate()
    assert code == 0, err
    assert verify([tmp_path / "journal"]).ok
