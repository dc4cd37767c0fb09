"""Bad input from a person gets one line that names the problem, never a traceback or a false
alarm (issue 24, finding 8): each case below was a traceback, a silent choice or a DAMAGED
verdict on the previous main."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from controller.cli import EXIT_INTERNAL, EXIT_USAGE, main
from controller.web.app import WebApp
from controller.web.auth import Authenticator, Role
from testbed.journalgen import write_synthetic_journal
from tests.stderr import one_error_line


def test_settle_file_nested_too_deeply(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    assert main(["settle", str(deep)]) == EXIT_USAGE
    assert "nested too deeply" in one_error_line(capsys)


def test_settle_file_with_a_key_twice_is_refused(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The last value used to win silently: which one did the person mean?"""
    twice = tmp_path / "twice.json"
    twice.write_text('{"game": "rws-three-card-poker", "game": "mbs-three-pictures"}')
    assert main(["settle", str(twice)]) == EXIT_USAGE
    assert "'game' appears twice" in one_error_line(capsys)


def test_journal_verify_given_the_directory_listing(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``journal verify DIR/*`` read journal.head as a record file and said DAMAGED: a false
    tamper alarm. The head and the verified mark are the journal's bookkeeping, not records."""
    journal = tmp_path / "journal"
    assert main(["bench", "--game", "rws-three-card-poker", "--rounds", "2",
                 "--journal-dir", str(journal)]) == 0
    capsys.readouterr()
    names = sorted(str(path) for path in journal.iterdir())
    assert any(name.endswith("journal.head") for name in names)
    assert main(["journal", "verify", *names]) == 0
    assert capsys.readouterr().out.startswith("OK:")


def test_integrity_report_to_an_unwritable_place(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, rounds=3)
    assert main(["integrity", "report", str(journal), "--out", "/proc/x"]) == EXIT_USAGE
    assert "/proc/x" in one_error_line(capsys)


def test_web_index_that_cannot_be_opened(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["web", "--journal", str(tmp_path), "--index", "/proc/nope.sqlite",
                 "--local-role", "surveillance", "--port", "0"]) == EXIT_USAGE
    assert "the index /proc/nope.sqlite" in one_error_line(capsys)


def test_web_without_its_extra_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A Pi installed without ``[web]``: the missing package is a fault no simulator makes, so
    the import system is told starlette is absent."""
    for name in [n for n in sys.modules if n.startswith(("controller.web", "starlette"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "starlette", None)
    assert main(["web", "--journal", str(tmp_path), "--local-role", "surveillance"]) \
        == EXIT_USAGE
    assert "pip install 'tablectl[web]'" in one_error_line(capsys)


def test_a_bug_is_one_line_not_a_traceback(tmp_path: Path, mocker: object,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The last wall: an exception nobody expected is one line and exit 70."""
    mocker.patch("controller.cli.games.run", side_effect=RuntimeError("boom"))  # type: ignore[attr-defined]
    parser_main = main(["games"])
    assert parser_main == EXIT_INTERNAL
    assert "internal error: RuntimeError: boom" in one_error_line(capsys)


@pytest.mark.parametrize("amount", ["100000000000000000000000000", "1e26", "\u00b2", "-5"])
def test_console_amount_over_out_of_range(tmp_path: Path, amount: str) -> None:
    """``amount_over=10**26`` was an HTTP 500 (SQLite's integers end at 2**63)."""
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, rounds=3)
    app = WebApp(journal_dir=journal, index_path=tmp_path / "i.sqlite", socket_path=None,
                 key=None, auth=Authenticator({}), local_role=Role.SURVEILLANCE, poll=3600)
    with TestClient(app.asgi, base_url="http://127.0.0.1") as client:  # the kiosk: loopback
        answer = client.get("/console", params={"amount_over": amount})
    assert answer.status_code == 200
    assert "amount_over: not a whole number of minor units" in answer.text
