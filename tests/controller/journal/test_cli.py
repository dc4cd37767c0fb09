"""``tablectl journal verify`` and ``rounds``: exit 0 intact, 1 damaged (naming file, seq and
kind), 2 for a problem the user can fix, one line and no traceback (issue 5 "Review tools")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.cli import main
from controller.journal import JournalWriter

from .conftest import KEY, deal_round, read_lines, write_lines


@pytest.fixture(name="journal")
def fixture_journal(open_writer: Callable[..., JournalWriter], journal_dir: Path) -> Path:
    writer = open_writer(hmac_key=KEY)
    deal_round(writer, "r1")
    deal_round(writer, "r2", ("2C", "3C", "4C"))
    writer.append("round_voided", {"reason": "power failure", "clause": "RWS-NC3P 5.4"},
                  round_id="r3")
    writer.close()
    return journal_dir


def test_verify_intact_exits_zero(journal: Path, key_file: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Intact: exit 0, records and files checked, HMAC verified."""
    assert main(["journal", "verify", str(journal), "--hmac-key", str(key_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: 15 records (seq 1..15) in 1 file(s)") and "HMAC verified" in out


def test_verify_damage_exits_one_naming_it(journal: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    """Damaged: exit 1 with the first bad file, sequence number and kind, also as JSON."""
    path = journal / "journal-000001.jsonl"
    lines = read_lines(path)
    del lines[5]
    write_lines(path, lines)
    assert main(["journal", "verify", str(path)]) == 1
    captured = capsys.readouterr()
    assert "missing at" in captured.out and "journal-000001.jsonl line 6 (seq 7)" in captured.out
    assert captured.err.startswith("tablectl journal: missing")
    assert main(["journal", "verify", str(journal), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["problem"]["kind"] == "missing" and report["problem"]["seq"] == 7


@pytest.mark.parametrize(
    ("content", "message"),
    [("zz", "not hex"), ("abcd", "need at least 32"), (None, "not found")],
)
def test_bad_key_file_is_one_line_exit_two(journal: Path, tmp_path: Path, content: str | None,
                                           message: str, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    """A key file that is missing or not a key: one clear line, exit 2."""
    key = tmp_path / "bad.key"
    if content is not None:
        key.write_text(content)
    assert main(["journal", "verify", str(journal), "--hmac-key", str(key)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tablectl journal: HMAC key file") and message in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_unreadable_path_is_exit_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    """A path that is not there is a usage problem, not damage."""
    assert main(["journal", "verify", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_rounds_lists_cards_and_voids(journal: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    """One row per round id: cards per position in deal order, void reason and clause."""
    assert main(["journal", "rounds", str(journal), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {row["round"]: row for row in data["rounds"]}
    assert rows["r1"]["cards"] == {"1": ["QD"], "2": ["7S"], "dealer": ["AH"]}
    assert rows["r1"]["settled"] and rows["r1"]["game"] == "rws-nc-three-pictures"
    assert rows["r3"]["void"]["clause"] == "RWS-NC3P 5.4"
    assert main(["journal", "rounds", str(journal)]) == 0
    assert "void (power failure; RWS-NC3P 5.4)" in capsys.readouterr().out


@pytest.mark.parametrize("verb", [["rounds"], ["rounds", "--json"], ["recall"], ["show", "r1"],
                                  ["replay"]])
@pytest.mark.parametrize("layout", ["two paths", "one directory", "two tables"])
def test_two_journals_in_one_read_are_refused_naming_both(
        open_writer: Callable[..., JournalWriter], tmp_path: Path, verb: list[str],
        layout: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34: two journals read as one (the same table id twice, as two bench journals
    are, given as two paths or put in one directory; or two tables) are refused by every review
    verb, naming both files (and both tables), never merged into one round's rows."""
    first, second = tmp_path / "a", tmp_path / "b"
    writer = open_writer(directory=first)
    deal_round(writer, "r1")
    writer.close()
    writer = open_writer(directory=second, table_id="T8" if layout == "two tables" else "T7")
    deal_round(writer, "r1", ("2C", "3C", "4C"))
    writer.close()
    if layout == "one directory":
        (second / "journal-000001.jsonl").rename(first / "journal-000002.jsonl")
        paths = [str(first)]
        named = [str(first / "journal-000001.jsonl"), str(first / "journal-000002.jsonl")]
    else:
        paths = [str(first), str(second)]
        named = [str(first / "journal-000001.jsonl"), str(second / "journal-000001.jsonl")]
    assert main(["journal", *verb, *paths]) != 0
    captured = capsys.readouterr()
    assert all(name in captured.err for name in named), captured.err
    assert "Traceback" not in captured.err and '"rounds"' not in captured.out
    if layout == "two tables":
        assert "'T7'" in captured.err and "'T8'" in captured.err
    if verb == ["rounds"] and layout == "two paths":  # each read apart is fine
        assert main(["journal", "rounds", str(first)]) == 0
        assert main(["journal", "rounds", str(second)]) == 0


@pytest.mark.parametrize("argv", [["verify", ""], ["rounds", ""], ["show", "1", ""],
                                  ["recall", "--dir", " "], ["replay", ""],
                                  ["verify", "x", "--hmac-key", ""]])
def test_an_empty_journal_path_is_refused_not_the_current_directory(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34: an empty path (an unset shell variable) read the current directory as the
    journal; it is argparse's one-line error, exit 2."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(["journal", *argv])
    assert stopped.value.code == 2
    assert "path" in capsys.readouterr().err
