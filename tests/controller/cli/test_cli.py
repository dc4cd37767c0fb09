"""The ``tablectl`` command-line contract (issue 2): games, rank, settle, odds, and invalid input
exiting 2 with one line on stderr and no traceback."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main

GAME_IDS = {"rws-nc-three-pictures", "mbs-three-pictures", "mbs-royal-three-pictures",
            "live-three-pictures", "rws-three-card-poker"}

SETTLE_REQUEST: dict[str, Any] = {
    "game": "mbs-royal-three-pictures",
    "hands": {"1": ["KS", "5H", "7D"], "2": ["K♦", "K♣", "4h"], "dealer": ["QD", "JH", "9C"]},
    "wagers": [
        {"id": "m1", "position": "1", "bet": "main", "amount": 100},
        {"id": "r1", "position": "1", "bet": "royal_pictures", "amount": 10},
        {"id": "m2", "position": "2", "bet": "main", "amount": 100},
        {"id": "r2", "position": "2", "bet": "royal_pictures", "amount": 10},
        {"id": "t3", "position": "3", "bet": "tie", "amount": 10},
    ],
}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_games_json(capsys: pytest.CaptureFixture[str]) -> None:
    """``games --json`` lists the five rule sets with their positions and bet types (issue 2)."""
    out = run_json(capsys, "games", "--json")
    games = {game["id"]: game for game in out["games"]}
    assert set(games) == GAME_IDS
    assert set(games["rws-nc-three-pictures"]["bets"]) == {"main", "tie", "three_pictures"}
    assert set(games["mbs-three-pictures"]["bets"]) == {"main", "tie", "three_pictures"}
    assert set(games["mbs-royal-three-pictures"]["bets"]) == {"main", "tie", "royal_pictures"}
    assert set(games["live-three-pictures"]["bets"]) == {"win", "lose", "tie", "three_knights",
                                                         "pair_plus"}
    assert set(games["rws-three-card-poker"]["bets"]) == {"ante", "play", "pair_plus",
                                                          "progressive"}
    assert games["live-three-pictures"]["positions"] == ["p1", "p2", "p3"]
    assert "banker" in games["live-three-pictures"]["bets"]["pair_plus"]["positions"]
    assert games["rws-three-card-poker"]["positions"] == [str(n) for n in range(1, 8)]
    assert games["mbs-three-pictures"]["positions"] == [str(n) for n in range(1, 9)]
    progressive = games["rws-three-card-poker"]["bets"]["progressive"]["paytable"]
    assert [(line["key"], line.get("envy_bonus")) for line in progressive] == [
        ("akq_spades", 25000), ("akq_suited", 5000), ("straight_flush", None),
        ("three_of_a_kind", None), ("straight", None)]   # RWS-3CP 4.4's Envy Bonus column
    assert progressive[0]["jackpot_percent"] == 100 and progressive[1]["fixed"] == 125000
    assert games["rws-three-card-poker"]["progressive_stake"] == 500
    assert "stake not returned on top" in games["rws-three-card-poker"]["progressive_sums"]
    royal = {line["key"]: line["pays"]
             for line in games["mbs-royal-three-pictures"]["bets"]["royal_pictures"]["paytable"]}
    assert royal["three_kings"] == "188 to 1"
    assert royal["any_king"] == "1 to 1"


def test_games_text(capsys: pytest.CaptureFixture[str]) -> None:
    """``games`` without ``--json`` prints every game id for a person to read."""
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    for game_id in GAME_IDS:
        assert game_id in out


@pytest.mark.parametrize(("game", "hand", "expected"), [
    ("live-three-pictures", ["J♠", "3h", "6D"],
     {"name": "Single Knights Nine", "points": 9, "pictures": 1}),
    ("rws-nc-three-pictures", ["6H", "9H", "4C"], {"name": "Plain Nine", "points": 9,
                                                   "pictures": 0}),
    ("mbs-three-pictures", ["6H", "9H", "4C"], {"name": "Nine", "points": 9, "pictures": 0}),
    ("mbs-royal-three-pictures", ["KD", "JC", "QD"], {"name": "Three Pictures", "points": 0,
                                                      "pictures": 3}),
    ("rws-three-card-poker", ["3s", "2h", "AD"], {"name": "Straight", "category": "straight"}),
    ("rws-three-card-poker", ["6S", "4H", "2D"], {"name": "Three Odd Cards",
                                                  "category": "high_card"}),
])
def test_rank_json(capsys: pytest.CaptureFixture[str], game: str, hand: list[str],
                   expected: dict[str, Any]) -> None:
    """``rank --json`` prints {"name","points","pictures"} for Three Pictures games and
    {"name","category"} for 3CP (issue 2; LIVE-3P TIE example, MBS-R3P 3.22, RWS-3CP 3.5.2)."""
    assert run_json(capsys, "rank", game, *hand, "--json") == expected


def test_rank_text(capsys: pytest.CaptureFixture[str]) -> None:
    """``rank`` prints the hand's name as the rule set spells it (LIVE-3P ranking list)."""
    assert main(["rank", "live-three-pictures", "K♠", "Q♥", "J♦"]) == 0
    assert capsys.readouterr().out.strip() == "3 Knights"


def check_settle_output(out: dict[str, Any]) -> None:
    assert set(out) >= {"hands", "results"}
    assert out["hands"]["1"] == {"cards": ["KS", "5H", "7D"], "name": "Single Picture Two"}
    assert out["hands"]["dealer"]["name"] == "Double Picture Nine"
    results = {r["id"]: r for r in out["results"]}
    assert [r["id"] for r in out["results"]] == ["m1", "r1", "m2", "r2", "t3"]
    for entry in out["results"]:
        assert {"id", "outcome", "net", "rule"} <= set(entry)
    assert (results["m1"]["outcome"], results["m1"]["net"]) == ("lose", -100)
    assert (results["r1"]["outcome"], results["r1"]["net"]) == ("win", 1 * 10)   # Any King
    assert (results["r2"]["outcome"], results["r2"]["net"]) == ("win", 8 * 10)   # K K pair
    assert (results["t3"]["outcome"], results["t3"]["net"]) == ("returned", 0)   # 3.5
    assert "MBS-R3P" in results["r1"]["rule"]


def test_settle_json_from_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``settle FILE --json`` prints {"hands": {POS: {"cards","name"}}, "results": [...]}
    (issue 2 settle contract; MBS-R3P 1.1.4.1, 1.1.4.2, 3.5, 3.16)."""
    path = tmp_path / "round.json"
    path.write_text(json.dumps(SETTLE_REQUEST), encoding="utf-8")
    check_settle_output(run_json(capsys, "settle", str(path), "--json"))


def test_settle_json_from_stdin(capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``settle -`` reads the request from standard input."""
    stdin = io.TextIOWrapper(io.BytesIO(json.dumps(SETTLE_REQUEST).encode("utf-8")))
    monkeypatch.setattr(sys, "stdin", stdin)
    check_settle_output(run_json(capsys, "settle", "-", "--json"))


def test_settle_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``settle`` without ``--json`` prints a table of hands and results."""
    path = tmp_path / "round.json"
    path.write_text(json.dumps(SETTLE_REQUEST), encoding="utf-8")
    assert main(["settle", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Single Picture Two" in out
    assert "m1" in out and "returned" in out


def test_odds_json_three_card_poker(capsys: pytest.CaptureFixture[str]) -> None:
    """``odds rws-three-card-poker --json``: {"game", "bets": {BET: {"house_edge", ...}}}, the
    Ante with its element of risk: 3.37% and 2.01% (published figures)."""
    out = run_json(capsys, "odds", "rws-three-card-poker", "--json")
    assert out["game"] == "rws-three-card-poker"
    assert set(out["bets"]) == {"ante", "pair_plus", "progressive"}
    for bet in out["bets"].values():
        assert isinstance(bet["house_edge"], float)
    assert out["bets"]["ante"]["house_edge"] == pytest.approx(0.0337, abs=0.0001)
    assert out["bets"]["ante"]["element_of_risk"] == pytest.approx(0.0201, abs=0.0001)


def write(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "request.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return str(path)


def request_with(**changes: Any) -> str:
    doc = json.loads(json.dumps(SETTLE_REQUEST))
    wager = changes.pop("wager", None)
    if wager:
        doc["wagers"][0].update(wager)
    drop = changes.pop("drop", None)
    if drop:
        doc["wagers"][0].pop(drop)
    doc.update(changes)
    return json.dumps(doc)


INVALID = [
    ("bad card", ["rank", "live-three-pictures", "QX", "3H", "6D"], None, "QX"),
    ("duplicate card", ["rank", "rws-three-card-poker", "QD", "q♦", "2C"], None, "QD"),
    ("unknown game (rank)", ["rank", "baccarat", "QD", "3H", "6D"], None, "baccarat"),
    ("two cards", ["rank", "live-three-pictures", "QD", "3H"], None, None),
    ("unknown game (odds)", ["odds", "baccarat"], None, "baccarat"),
    ("no command", [], None, None),
    ("malformed JSON", ["settle", "FILE"], '{"game": "mbs-three-pictures", ', "JSON"),
    ("missing field", ["settle", "FILE"], request_with(drop="amount"), "amount"),
    ("unknown game (settle)", ["settle", "FILE"], request_with(game="baccarat"), "baccarat"),
    ("unknown bet", ["settle", "FILE"], request_with(wager={"bet": "banker_pair"}),
     "banker_pair"),
    ("bad position", ["settle", "FILE"], request_with(wager={"position": "9"}), "9"),
    ("float amount", ["settle", "FILE"], request_with(wager={"amount": 12.5}), "12.5"),
    ("negative amount", ["settle", "FILE"], request_with(wager={"amount": -100}), "-100"),
    ("bad card in request", ["settle", "FILE"],
     request_with(hands={"1": ["KS", "5H", "7X"], "dealer": ["QD", "JH", "9C"]}), "7X"),
    ("duplicate card in request", ["settle", "FILE"],
     request_with(hands={"1": ["KS", "5H", "QD"], "dealer": ["QD", "JH", "9C"]}), "QD"),
    ("missing file", ["settle", "/nonexistent/round.json"], None, "round.json"),
    ("non-UTF-8 request", ["settle", "FILE"], b'{"game": "\xff\xfe"}', "not UTF-8"),
    ("amount 10**35", ["settle", "FILE"], request_with(wager={"amount": 10**35}), "outside"),
    ("unknown request field", ["settle", "FILE"], request_with(hand={}), "unknown field 'hand'"),
    ("unknown wager field", ["settle", "FILE"], request_with(wager={"stake": 5}),
     "unknown field 'stake'"),
    ("progressive stake 0", ["odds", "rws-three-card-poker", "--progressive-stake", "0"], None,
     "--progressive-stake: 0 is outside"),
    ("progressive stake -100", ["odds", "rws-three-card-poker", "--progressive-stake", "-100"],
     None, "-100 is outside"),
    ("jackpot 10**26", ["odds", "rws-three-card-poker", "--jackpot", str(10**26)], None,
     "--jackpot"),
    ("log level LOUD", ["--log-level", "LOUD", "games"], None, "--log-level"),
]


@pytest.mark.parametrize(("argv", "content", "mentions"), [i[1:] for i in INVALID],
                         ids=[i[0] for i in INVALID])
def test_invalid_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path, argv: list[str],
                                             content: str | bytes | None, mentions: str | None) -> None:
    """Invalid input exits 2 with one clear line on stderr, naming the problem, and no
    traceback (issue 2 command-line contract)."""
    if content is not None:
        argv = [write(tmp_path, content) if arg == "FILE" else arg for arg in argv]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse usage errors
        code = exit_.code
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    if mentions is not None:
        assert mentions in lines[0]


def test_python_dash_m_controller_entry_point() -> None:
    """``python -m controller`` is the same program as ``tablectl`` (issue 2 Foundation): it
    prints the games as JSON and exits 0, and a bad card exits 2 with one stderr line."""
    ok = subprocess.run([sys.executable, "-m", "controller", "games", "--json"],
                        capture_output=True, text=True, timeout=60, check=False)
    assert ok.returncode == 0, ok.stderr
    assert {game["id"] for game in json.loads(ok.stdout)["games"]} == GAME_IDS
    bad = subprocess.run([sys.executable, "-m", "controller", "rank", "live-three-pictures",
                          "QX", "3H", "6D"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1
    assert "QX" in bad.stderr and "Traceback" not in bad.stderr


def test_output_into_a_closed_pipe_is_not_an_error() -> None:
    """``tablectl games | head -1``: when the reader goes away the command stops quietly, with
    no traceback on stderr and a zero exit."""
    proc = subprocess.Popen([sys.executable, "-m", "controller", "games"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes away after one line, as `head -1` does
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0, err
    assert first.startswith(b"rws-nc-three-pictures")
    assert "Traceback" not in err and err == ""
