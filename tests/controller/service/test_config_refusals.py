"""Issue 34, bad input in the service config: each is refused in one line naming the file, the
dotted key and the problem, exit 2, by ``tablectl run --check`` and by ``tablectl run`` alike
(the same checks: ``load_config`` for the text, ``check_host`` for what it names on this
machine), and nothing starts. ``run`` is a real process (as systemd starts it), so a config it
wrongly accepts is a service that starts, killed at the timeout, not a test that hangs."""

from __future__ import annotations

import grp
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import main
from controller.service.config import MAX_ROUNDING_UNIT, load_config
from tests.controller.service.conftest import service_toml

ROOT = Path(__file__).resolve().parents[3]
SHUFFLER = 'kind = "shuffler"\nurl = "/dev/table-shuffler"'
RUN_TIMEOUT_S = 60.0
"""Far longer than a refusal takes (about a second: the interpreter's start); a service that
started instead is killed then."""


def write_config(tmp_path: Path, *, table: str = "", device: str = SHUFFLER,
                 control: str = "", extra: str = "",
                 game: str = "rws-three-card-poker") -> Path:
    """The tests' valid base config (``service_toml``) for ``game``, with ``table`` keys added
    to ``[table]``, ``[device]`` replaced, ``control`` keys added and ``extra`` appended."""
    text = service_toml(tmp_path).replace('game = "rws-nc-three-pictures"',
                                          f'game = "{game}"\n{table}')
    text = text.replace(SHUFFLER, device).replace('socket_group = ""\n', control or
                                                  'socket_group = ""\n')
    path = tmp_path / "tablectl.toml"
    path.write_text(text + extra, encoding="utf-8")
    return path


@pytest.fixture(name="both", params=["check", "run"])
def fixture_both(request: pytest.FixtureRequest) -> list[str]:
    """``tablectl run --check`` and ``tablectl run``: every refusal must come from both."""
    return ["run", "--check"] if request.param == "check" else ["run"]


def refused(argv: list[str], path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Exit 2, nothing on stdout, no control socket made; the problem after the file's name
    on the last stderr line (``--check`` in this process, ``run`` as a process)."""
    if "--check" in argv:
        code = main([*argv, "--config", str(path)])
        captured = capsys.readouterr()
        out, err = captured.out, captured.err
    else:
        process = subprocess.Popen([sys.executable, "-m", "controller", *argv, "--config",
                                    str(path)], cwd=ROOT, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            out, err = process.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        code = process.returncode
    assert (code, out) == (2, ""), err
    assert not (path.parent / "control.sock").exists()
    line = err.splitlines()[-1]
    assert line.startswith(f"tablectl run: {path}: ")
    return line.removeprefix(f"tablectl run: {path}: ")


def test_unknown_deck_map(tmp_path: Path, both: list[str],
                          capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown ``device.deck`` passed --check while run refused it in a line naming neither
    the file nor the key; now both refuse it by file and key."""
    path = write_config(tmp_path, device='kind = "shoe"\ndialect = "scanner"\nurl = "sim"\n'
                                         'deck = "no-such-deck"')
    assert refused(both, path, capsys) == ("device.deck: unknown deck map 'no-such-deck'; "
                                           "shipped maps: generic-code128, house-s2")


def test_deck_map_file_that_is_missing(tmp_path: Path, both: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A deck map named by a relative path is looked for beside the config (as every relative
    path is), and a missing one is refused by key."""
    path = write_config(tmp_path, device='kind = "shoe"\ndialect = "scanner"\nurl = "sim"\n'
                                         'deck = "decks/house.json"')
    assert load_config(path).device.deck == str(tmp_path / "decks" / "house.json")
    assert refused(both, path, capsys) == (f"device.deck: deck map {tmp_path}/decks/house.json: "
                                           "cannot read (No such file or directory)")


def test_socket_group_missing_on_this_machine(tmp_path: Path, both: list[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A ``control.socket_group`` that ``grp`` does not know passed --check; run refused it
    only when it bound the socket."""
    group = "tablectl-no-such-grp"
    with pytest.raises(KeyError):
        grp.getgrnam(group)
    path = write_config(tmp_path, control=f'socket_group = "{group}"\n')
    assert refused(both, path, capsys) == (
        f"control.socket_group: group '{group}' does not exist on this machine (create it, "
        "docs/install-raspberry-pi.md step 2; \"\" keeps the service's own group)")


def test_socket_group_that_exists_passes(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The process's own group exists: --check says OK."""
    own = grp.getgrgid(os.getgid()).gr_name
    path = write_config(tmp_path, control=f'socket_group = "{own}"\n')
    assert main(["run", "--check", "--config", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"config OK: {path}")


def test_rounding_unit_of_2_to_the_62_without_limits(tmp_path: Path, both: list[str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """2^62 made every 1:2 payout round to 0 and was accepted; with no bet minimum the unit is
    at most MAX_ROUNDING_UNIT."""
    path = write_config(tmp_path, table="rounding_unit = 4611686018427387904",
                        game="rws-nc-three-pictures")
    assert refused(both, path, capsys) == (
        f"table.rounding_unit: 4611686018427387904 is above {MAX_ROUNDING_UNIT}, the largest "
        "unit of a table without bet minimums ([limits.<bet>] min): 1:2 wins and pro-rated "
        "stakes would round down to nothing")


def test_rounding_unit_above_the_smallest_minimum(tmp_path: Path, both: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """With limits, the unit is at most the smallest positive minimum (here tie's 100; main's
    min 0 sets none): a unit of 200 would pay a 100 wager's 1:2 win (50) as 0."""
    limits = ("\n[limits.main]\nmin = 0\nmax = 50000\n"
              "\n[limits.tie]\nmin = 100\nmax = 5000\n")
    path = write_config(tmp_path, table="rounding_unit = 200", extra=limits,
                        game="rws-nc-three-pictures")
    assert refused(both, path, capsys) == (
        "table.rounding_unit: 200 is above limits.tie.min 100, the smallest bet minimum: the "
        "unit is the smallest amount paid, so a 1:2 win or a pro-rated stake on that wager "
        "would round down to nothing; use at most 100")


@pytest.mark.parametrize(("unit", "limits"), [
    (100, "\n[limits.tie]\nmin = 100\nmax = 5000\n"),
    (MAX_ROUNDING_UNIT, ""),
    (MAX_ROUNDING_UNIT, "\n[limits.main]\nmin = 0\nmax = 50000\n"),
])
def test_rounding_unit_at_its_bound_is_accepted(tmp_path: Path, unit: int, limits: str) -> None:
    """The bound itself is allowed: a unit equal to the smallest minimum, or the fixed bound
    when no bet has a positive minimum."""
    path = write_config(tmp_path, table=f"rounding_unit = {unit}", extra=limits,
                        game="rws-nc-three-pictures")
    assert load_config(path).rounding_unit == unit


def test_progressive_limit_below_the_stake(tmp_path: Path, both: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """RWS-3CP 4.4: a progressive wager is exactly the stake (check_wager), so a maximum below
    it made the bet impossible, and was accepted."""
    extra = ("\n[limits.progressive]\nmin = 100\nmax = 200\n"
             "\n[progressive]\nstake = 500\n")
    path = write_config(tmp_path, extra=extra)
    assert refused(both, path, capsys) == (
        "limits.progressive.max: 200 is below progressive.stake 500: a progressive wager must "
        "be exactly the stake, so none could be placed")


def test_progressive_minimum_above_the_default_stake(tmp_path: Path, both: list[str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Without ``[progressive]`` the stake is the default 500; a minimum above it is refused
    too, naming the default."""
    path = write_config(tmp_path, extra="\n[limits.progressive]\nmin = 600\nmax = 1000\n")
    assert refused(both, path, capsys) == (
        "limits.progressive.min: 600 is above the progressive stake (default) 500: a "
        "progressive wager must be exactly the stake, so none could be placed")


def test_progressive_limit_that_holds_the_stake_is_accepted(tmp_path: Path) -> None:
    """min = max = stake (the example config's choice) is a valid progressive."""
    extra = ("\n[limits.progressive]\nmin = 500\nmax = 500\n"
             "\n[progressive]\nstake = 500\n")
    config = load_config(write_config(tmp_path, extra=extra))
    assert config.progressive is not None and config.progressive.stake == 500


@pytest.mark.parametrize("missing", ["manifest", "public_key", "both"])
def test_software_files_that_do_not_exist(tmp_path: Path, both: list[str], missing: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A ``[software]`` section naming a manifest or key that does not exist said "config OK"
    and run started (the verdict merely "not verified"); now both refuse by key (the manifest
    first when both are missing)."""
    files = {"manifest": tmp_path / "manifest.json", "public_key": tmp_path / "release.pub"}
    for name, file in files.items():
        if missing not in (name, "both"):
            file.write_text("present")
    extra = ('\n[software]\nmanifest = "manifest.json"\npublic_key = "release.pub"\n')
    path = write_config(tmp_path, extra=extra)
    name = "manifest" if missing == "both" else missing
    assert refused(both, path, capsys) == f"software.{name}: {files[name]} does not exist"


def test_software_path_that_is_a_directory(tmp_path: Path, both: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A directory where the manifest should be is not a manifest."""
    (tmp_path / "manifest.json").mkdir()
    (tmp_path / "release.pub").write_text("present")
    extra = f'\n[software]\nmanifest = "{tmp_path / "manifest.json"}"\npublic_key = ' \
            f'"{tmp_path / "release.pub"}"\n'
    path = write_config(tmp_path, extra=extra)
    assert refused(both, path, capsys) == \
        f"software.manifest: {tmp_path / 'manifest.json'} is not a file"
