"""The table service end to end: a subprocess driven through its control socket, like the pit.

Each of the five games plays whole rounds on simulated devices (open, wagers, no more bets, the
deal by the simulated shuffler or shoe, RWS-3CP play/fold decisions (3.8), reveal, settle); and
the faults a deployment meets give one clear line each. Restarts mid-round: test_restart.py."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal.verify import verify
from controller.service.control.client import ControlClient, RequestRefused
from tests.lines import LineReader
from tests.service_e2e.conftest import (
    GAMES,
    WAGERS,
    Account,
    Processes,
    config_toml,
    next_watched,
    unprivileged_account,
)
from tests.service_e2e.rounds import bet_and_deal, finish

NOBODY = 65534
"""The unprivileged account a root test runs the service as."""


@pytest.mark.parametrize("game", GAMES)
def test_whole_rounds_of_each_game(processes: Processes, tmp_path: Path, game: str) -> None:
    """Two whole rounds through the socket; every wager settled, the journal verifies."""
    service = processes.service(config_toml(tmp_path, game))
    ready = service.wait_ready()
    assert b"online" in ready, ready  # the simulated device is up before READY
    with service.client() as client, service.client() as watcher:
        events = watcher.watch()
        for number in (1, 2):
            status = bet_and_deal(client, events, game)
            assert status["round"] == number
            hands = status["hands"]
            assert all(len(cards) == 3 for cards in hands.values()), hands
            settled = finish(client, game)
            assert settled["state"] == "settled"
            (event,) = [e for e in settled["events"] if e["type"] == "RoundSettled"]
            ids = {r["wager_id"] for r in event["settlement"]["results"]}
            assert {f"r{number}-{i}" for i in range(len(WAGERS[game]))} <= ids
    code, err = service.terminate()
    assert code == 0, err
    report = verify([tmp_path / "journal"])
    assert report.ok and report.closed, report.problem


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
        with pytest.raises(RequestRefused, match="no decisions are due"):
            client.request("decide", {"position": "1", "choice": "play"})
    service.terminate()


def test_watch_streams_round_events_as_json_lines(processes: Processes,
                                                  tmp_path: Path) -> None:
    """``tablectl watch`` prints one JSON object per round event, as the journal records it;
    when the service stops it says so in one line and exits 3 (issue 10: it exited 0 with no
    message, so a log shipper could not tell the end of the stream from a clean stop)."""
    service = processes.service(config_toml(tmp_path, "rws-nc-three-pictures"))
    service.wait_ready()
    sock = str(tmp_path / "control.sock")
    watch = processes.spawn(["watch", "--socket", sock])
    assert watch.stdout is not None and watch.stderr is not None
    out, err = LineReader(watch.stdout), LineReader(watch.stderr)
    # the clock's state comes first (docs/service.md "Time"), then the stream starts
    assert err.line().startswith("tablectl watch: clock: ")
    assert err.line().startswith("tablectl watch: watching round events")
    with service.client() as client:
        client.request("round.open")
        line = out.line()
    assert '"type": "RoundOpened"' in line and '"round": 1' in line
    service.terminate()
    watch.wait(timeout=60)
    assert watch.returncode == 3
    assert err.line() == (f"tablectl watch: the service closed the connection "
                          f"on {sock} (stopped, restarted, or this watcher "
                          "fell behind)\n")


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


@pytest.fixture(name="nobody")
def fixture_nobody() -> Iterator[Account | None]:
    """The account to run the service as: nobody when the test is root (as systemd runs it:
    unprivileged), else the test's own (already unprivileged)."""
    if os.geteuid() != 0:
        yield None
        return
    stage = Path(tempfile.mkdtemp(prefix="tablectl-e2e-python-"))
    try:
        account = unprivileged_account(NOBODY, stage)
        if account is None:
            pytest.skip(f"no Python that uid {NOBODY} may run: {sys.executable} and its "
                        "standard library are not readable by others, and there is no system "
                        "python3 of the same minor version")
        yield account
    finally:
        shutil.rmtree(stage)


@pytest.fixture(name="service_dir")
def fixture_service_dir(nobody: Account | None) -> Iterator[Path]:
    """A directory for the config, journal and socket of the service, owned by its account:
    pytest's own tmp dirs are root's 0700, which nobody cannot enter."""
    directory = Path(tempfile.mkdtemp(prefix="tablectl-e2e-"))
    try:
        if nobody is not None:
            os.chown(directory, nobody.uid, nobody.uid)
        yield directory
    finally:
        shutil.rmtree(directory)


@pytest.fixture(name="forbidden_device")
def fixture_forbidden_device() -> Iterator[Path]:
    """A real character device (a pty's slave) the service's account may not open: root's,
    mode 0600, when the service runs as nobody; mode 0000 when the test is not root."""
    master, slave = os.openpty()
    path = Path(os.ttyname(slave))
    try:
        if os.geteuid() == 0:
            os.chown(path, 0, 0)
            path.chmod(0o600)
        else:
            path.chmod(0)
            if os.access(path, os.R_OK | os.W_OK):
                pytest.skip("not root (cannot run the service as another user) and the "
                            f"device stays readable by this account even at mode 0000 ({path})")
        yield path
    finally:
        os.close(slave)
        os.close(master)


def test_a_device_the_service_may_not_open_is_refused(
        processes: Processes, nobody: Account | None, service_dir: Path,
        forbidden_device: Path) -> None:
    """The service as an unprivileged account (as systemd runs it) against a serial device
    it has no access to: exit 2 with one line naming device.url, no traceback, and nothing
    left behind (no journal, no socket), since no retry can fix permissions."""
    toml = config_toml(service_dir, "rws-nc-three-pictures",
                       device={"kind": "shuffler", "url": str(forbidden_device)})
    service = processes.service(toml, directory=service_dir, account=nobody)
    assert service.process.wait(timeout=15) == 2
    err = service.stop_and_stderr()
    assert err.startswith(f"tablectl run: device.url {forbidden_device}: permission denied: "
                          "the service's user needs read and write access"), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert not (service_dir / "journal").exists() and not service.socket.exists()


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
        bet_and_deal(client, events, game)
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
        # the device operator does not even shuffle a blocked deck (issue 10, no spinning):
        # the status names what the table waits for and the verb that releases it
        operator: dict[str, object] = {}
        for _ in range(100):  # bounded: the operator thread catches up within milliseconds
            status = client.request("round.status")
            operator = status["device"]["operator"]
            if operator["waits_for"] == "a replaced or counted deck":
                break
            client.request("wager.list")  # a round trip through the table, not a sleep
        assert operator["way_out"] == "tablectl deck replace | tablectl deck counted 52", operator
        assert (status["state"], status["hands"], status["deck_blocked"]) == (
            "closed", {}, blocked)
        shuffled = processes.cli("round", "shuffled", *sock)
        assert (shuffled.returncode, shuffled.stderr) == (
            1, (f"tablectl round: refused: dealing is blocked until the deck is replaced or "
                f"counted: {blocked}\n"))

        counted = processes.cli("deck", "counted", "52", *sock)
        assert counted.returncode == 0, counted.stderr
        assert "DeckReleased" in counted.stdout
        next_watched(events, "DealComplete")
        status = client.request("round.status")
        assert status["round"] == 2 and status["deck_blocked"] is None
        assert all(len(cards) == 3 for cards in status["hands"].values()), status["hands"]
        settled = finish(client, game)
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
