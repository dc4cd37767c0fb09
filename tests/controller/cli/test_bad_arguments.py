"""Bad command-line arguments get one line naming the option and the problem, exit 2, and
nothing is written (issue 34): on the previous main an empty path wrote into the current
directory, a jackpot or a shuffle model for a game without one was ignored without a word, a
password with a NUL byte was written to the accounts file and a mistyped listen address was
blamed on missing TLS."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from controller.cli import EXIT_USAGE, build_parser, main
from controller.games.catalog import GAMES
from testbed.journalgen import write_synthetic_journal
from tests.stderr import one_error_line


@pytest.fixture(name="cwd")
def cwd_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty current directory: a test checks that nothing was written into it."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def _exit_code(argv: list[str]) -> int | str | None:
    """``tablectl ARGV``'s exit status, argparse's usage errors (``SystemExit``) included."""
    try:
        return main(argv)
    except SystemExit as stopped:
        return stopped.code


def _refused(argv: list[str], option: str, capsys: pytest.CaptureFixture[str]) -> str:
    """``argv`` ends in exit 2 with one line that names ``option``; that line."""
    assert _exit_code(argv) == EXIT_USAGE
    line = one_error_line(capsys)
    assert option in line, line
    return line


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_bench_journal_dir_empty(blank: str, cwd: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``--journal-dir ""`` (an unset shell variable) wrote the journal into the current
    directory; a name of blanks made a directory of blanks there."""
    line = _refused(["bench", "--game", "rws-three-card-poker", "--rounds", "1",
                     "--journal-dir", blank], "argument --journal-dir", capsys)
    assert "path" in line
    assert list(cwd.iterdir()) == []


@pytest.mark.parametrize("blank", ["", "  "])
def test_deploy_files_into_an_empty_path(blank: str, cwd: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``tablectl deploy-files ""`` wrote the units and configs into the current directory."""
    _refused(["deploy-files", blank], "argument DIR", capsys)
    assert list(cwd.iterdir()) == []


def test_integrity_report_out_empty(tmp_path: Path, cwd: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``integrity report --out ""`` wrote its plots and report.md into the current
    directory."""
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, rounds=3)
    line = _refused(["integrity", "report", str(journal), "--out", ""], "argument --out",
                    capsys)
    assert "empty path" in line
    assert list(cwd.iterdir()) == []


@pytest.mark.parametrize("argv, option", [
    (["web", "--config", ""], "--config"),
    (["web", "--journal", ""], "--journal"),
    (["web", "--socket", ""], "--socket"),
    (["web", "--accounts", " "], "--accounts"),
    (["web", "--index", ""], "--index"),
    (["web", "--hmac-key", ""], "--hmac-key"),
    (["web", "passwd", "", "ann", "dealer"], "FILE"),
    (["web", "verify-export", "", "--journal", "j"], "FILE"),
    (["web", "verify-export", "x.json", "--journal", ""], "--journal"),
    (["feed", "--config", ""], "--config"),
])
def test_other_path_options_refuse_an_empty_path(argv: list[str], option: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Every other path option of these commands: an empty one read the current directory as
    a config or an export, crashed (``web --journal ""``: an internal error), or quietly meant
    "none" (``--accounts ""``). Parsed only: on the previous main some of these would start
    the web server."""
    with pytest.raises(SystemExit) as stopped:
        build_parser(argv[0]).parse_args(argv)
    assert stopped.value.code == EXIT_USAGE
    line = one_error_line(capsys)
    assert f"argument {option}:" in line and "path" in line, line


NO_PROGRESSIVE = [game for game, rules in GAMES.items() if "progressive" not in rules.bets]


@pytest.mark.parametrize("game", NO_PROGRESSIVE)
@pytest.mark.parametrize("option", ["--jackpot", "--progressive-stake"])
def test_odds_progressive_options_for_a_game_without_one(game: str, option: str,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """Only RWS-3CP has a progressive bet (RWS-3CP 3.11-3.13, 4.4); for the others the
    jackpot and the stake changed nothing, and the table printed looked priced with them."""
    assert _exit_code(["odds", game, option, "100000"]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (f"tablectl odds: {option}: {game} has no progressive bet "
                                    "(only rws-three-card-poker has one)")
    # where the line points, the option is taken and priced
    assert main(["odds", "rws-three-card-poker", option, "100000", "--json"]) == 0
    assert '"progressive"' in capsys.readouterr().out


@pytest.mark.parametrize("model", ["one-pass-10", "fair"])
def test_bench_shuffler_for_the_live_table(model: str, cwd: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The LIVE-3P bench table deals from a card-reading shoe: a shuffle model was accepted
    and ignored, and the run looked like a test of that machine."""
    line = _refused(["bench", "--game", "live-three-pictures", "--rounds", "1",
                     "--shuffler", model], f"--shuffler {model}", capsys)
    assert "not a shuffler" in line
    assert "rws-three-card-poker" in line  # where it does apply
    assert list(cwd.iterdir()) == []


@pytest.mark.parametrize("password", ["pass\x00word12", "password12\r", "pass\x1b[2Jword"])
def test_web_passwd_refuses_control_characters(password: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A NUL, a carriage return (a CRLF line on stdin) or an escape cannot be typed at the
    login page: the account was written and could never log in. The password is not echoed."""
    accounts = tmp_path / "accounts"
    monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
    line = _refused(["web", "passwd", str(accounts), "ann", "dealer"], "password", capsys)
    assert "control characters" in line
    assert password not in line
    assert not accounts.exists()


@pytest.mark.parametrize("address, problem", [
    ("not..an..address", "not an IP address or a host name"),
    ("127.1", "write it in full (127.0.0.1)"),
    ("[::1]", "not an IP address or a host name"),
    ("", "empty"),
])
def test_web_listen_that_is_no_address(address: str, problem: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A mistyped ``--listen`` is named as such; it used to be taken for a remote address and
    the refusal blamed missing TLS."""
    line = _refused(["web", "--listen", address, "--journal", str(tmp_path)],
                    "argument --listen", capsys)
    assert problem in line and repr(address) in line
    assert "TLS" not in line
