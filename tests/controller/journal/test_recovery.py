"""Recorder, recovery and replay (issue 5): inputs journaled before the table acts, outputs
before subscribers see them; restart mid-round applies the game's power-failure clause
(RWS-NC3P 5.4, MBS-R3P 5.13; others: supervisor); replay reproduces every decision and names a
doctored settlement by its seq."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.cli import main
from controller.games.cards import parse_cards
from controller.journal import JournalWriter, iter_records, verify
from controller.journal.record import compute_hash
from controller.journal.recorder import JournaledTable
from controller.journal.recovery import Decision, recover
from controller.journal.replay import DivergenceKind, replay_records
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import TableLayout
from drivers import events as dev

from .conftest import read_lines, write_lines

DEALER = dict(actor="dana", role=cmd.Role.DEALER)
SUPERVISOR = dict(actor="sam", role=cmd.Role.SUPERVISOR)
IDENTITY = dev.DeviceIdentity("Sim", "HF-3", "SIM-0001", "2.3.1", "abcd", 1)
# player box 1 QD JD KD (three pictures), box 2 2C 3C 4C (9 points), dealer 5H 6H 7H (8 points)
HANDS = (("QD", "JD", "KD"), ("2C", "3C", "4C"), ("5H", "6H", "7H"))


def start(open_writer: Callable[..., JournalWriter], game: str
          ) -> tuple[JournalWriter, JournaledTable]:
    writer = open_writer()
    table, report = recover(writer, TableLayout.for_game(game))
    assert report.decision is Decision.NO_ROUND and report.new_session
    return writer, table


def play(table: JournaledTable, hands: int, *, settle: bool = False, bet: str = "main") -> None:
    """Open, two boxes bet (players p1, p2), close, shuffle, ``hands`` sets dispensed."""
    table.process(dev.DeviceOnline("shuffler", identity=IDENTITY))
    table.process(cmd.OpenRound(**DEALER))
    for box in ("1", "2"):
        table.process(cmd.PlaceWager(**DEALER, wager_id=f"w{box}", position=box, bet=bet,
                                     amount=1000, player=f"p{box}"))
    table.process(cmd.CloseBets(**DEALER))
    table.process(dev.ShuffleDone("shuffler", counted=52))
    for number, cards in enumerate(HANDS[:hands], 1):
        table.process(dev.CardSetDispensed("shuffler", cards=parse_cards(cards),
                                           hand_number=number))
    if settle:
        table.process(cmd.RevealDealer(**DEALER))
        table.process(cmd.SettleRound(**DEALER))


def restart(writer: JournalWriter, open_writer: Callable[..., JournalWriter], game: str):  # noqa: ANN201
    writer.close()
    again = open_writer()
    return again, *recover(again, TableLayout.for_game(game))


def events_of(directory: Path, kind: str) -> list[dict]:
    return [dict(r.payload, _seq=r.seq, _round=r.round_id) for r in iter_records([directory])
            if r.event_type == kind]


def test_inputs_precede_outputs_and_round_names_provenance(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """Every output follows the input that caused it; the opening record names rule set,
    version, catalog hash, software version and hash, and the shuffler's serial/firmware."""
    writer, table = start(open_writer, "rws-nc-three-pictures")
    seen: list[ev.RoundEvent] = []
    table.subscribe(seen.append)
    play(table, 3, settle=True)
    records = list(iter_records([journal_dir]))
    kinds = [r.event_type for r in records]
    assert kinds.index("input_command") < kinds.index("round_opened")
    close = next(r for r in records if r.payload.get("type") == "CloseBets")
    assert records[records.index(close) + 1].event_type == "bets_closed"
    opened = events_of(journal_dir, "round_opened")[0]
    provenance = opened["provenance"]
    assert provenance["rules"]["id"] == "rws-nc-three-pictures"
    assert provenance["rules"]["version"] == TableLayout.for_game(
        "rws-nc-three-pictures").rules.version
    assert len(provenance["rules"]["catalog_sha256"]) == 64
    assert len(provenance["software"]["sha256"]) == 64
    assert provenance["devices"]["shuffler"]["serial"] == "SIM-0001"
    assert provenance["devices"]["shuffler"]["firmware"] == "2.3.1"
    assert [type(e).__name__ for e in seen][-1] == "RoundSettled"
    assert len(seen) == sum(1 for k in kinds if k not in {
        "input_command", "input_device", "journal_file_opened", "recovery_started",
        "session_started", "recovery_completed"})


def test_outputs_are_in_the_file_before_subscribers_see_them(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """A subscriber acting on a card finds that card (and its input) already in the journal;
    card inputs are money inputs (fsynced first under the money policy)."""
    from controller.journal.codec import MONEY_INPUT_TYPES

    writer, table = start(open_writer, "rws-nc-three-pictures")
    found: list[bool] = []

    def check(event: ev.RoundEvent) -> None:
        if isinstance(event, ev.CardAssigned):
            text = b"".join(p.read_bytes() for p in sorted(journal_dir.glob("journal-*")))
            found.append(f'"card":"{event.card.code}"'.encode() in text)

    table.subscribe(check)
    play(table, 1)
    assert found == [True, True, True]
    assert {"CardSetDispensed", "CardRead", "CloseBets", "SettleRound"} <= MONEY_INPUT_TYPES


def test_rws_nc3p_restart_without_outcome_voids(open_writer: Callable[..., JournalWriter],
                                                journal_dir: Path) -> None:
    """RWS-NC3P 5.4.2: no outcome established -> void, every wager returned, journaled."""
    writer, table = start(open_writer, "rws-nc-three-pictures")
    play(table, 1)
    writer, table, report = restart(writer, open_writer, "rws-nc-three-pictures")
    assert (report.decision, report.clause, report.established) == \
        (Decision.VOID, "RWS-NC3P 5.4.2", False)
    voided = events_of(journal_dir, "round_voided")
    assert [v["clause"] for v in voided] == ["RWS-NC3P 5.4.2"]
    assert {r["outcome"] for r in voided[0]["settlement"]["results"]} == {"returned"}
    completed = events_of(journal_dir, "recovery_completed")[-1]
    assert completed["decision"] == "void" and completed["_round"] == "1"


def test_rws_nc3p_restart_with_outcome_continues(open_writer: Callable[..., JournalWriter],
                                                 journal_dir: Path) -> None:
    """RWS-NC3P 5.4.1: all hands dealt (outcome established) -> play continues to settlement,
    which is recorded once."""
    writer, table = start(open_writer, "rws-nc-three-pictures")
    play(table, 3)
    writer, table, report = restart(writer, open_writer, "rws-nc-three-pictures")
    assert (report.decision, report.clause, report.established) == \
        (Decision.CONTINUE, "RWS-NC3P 5.4.1", True)
    table.process(cmd.RevealDealer(**DEALER))
    table.process(cmd.SettleRound(**DEALER))
    settled = events_of(journal_dir, "round_settled")
    assert len(settled) == 1 and settled[0]["round"] == 1
    assert {r["wager_id"]: r["outcome"] for r in settled[0]["settlement"]["results"]} == \
        {"w1": "win", "w2": "win"}


def test_mbs_r3p_restart_offers_withdrawal(open_writer: Callable[..., JournalWriter],
                                           journal_dir: Path) -> None:
    """MBS-R3P 5.13.1: no outcome established -> players may withdraw all their wagers."""
    writer, table = start(open_writer, "mbs-royal-three-pictures")
    play(table, 0)
    writer, table, report = restart(writer, open_writer, "mbs-royal-three-pictures")
    assert (report.decision, report.clause) == (Decision.PLAYER_OPTIONS, "MBS-R3P 5.13.1")
    assert table.tracker.options_pending == ["1", "2"]
    table.process(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.WITHDRAW,
                                   player="p1"))
    table.process(cmd.PlayerOption(**DEALER, position="2", option=cmd.Option.CONTINUE))
    taken = events_of(journal_dir, "player_option_taken")
    assert [(t["position"], t["wager_ids"]) for t in taken] == [("1", ["w1"]), ("2", [])]


def test_mbs_r3p_restart_with_outcome_continues(open_writer: Callable[..., JournalWriter]
                                                ) -> None:
    """MBS-R3P 5.13.2: outcome established -> play continues."""
    writer, table = start(open_writer, "mbs-royal-three-pictures")
    play(table, 3)
    writer, table, report = restart(writer, open_writer, "mbs-royal-three-pictures")
    assert (report.decision, report.clause, report.established) == \
        (Decision.CONTINUE, "MBS-R3P 5.13.2", True)


@pytest.mark.parametrize("game", ["mbs-three-pictures", "rws-three-card-poker"])
def test_games_without_clause_hold_for_supervisor(
        game: str, open_writer: Callable[..., JournalWriter]) -> None:
    """No power-failure clause: the round is held for a supervisor (void or continue)."""
    writer, table = start(open_writer, game)
    play(table, 1, bet="ante" if "poker" in game else "main")
    writer, table, report = restart(writer, open_writer, game)
    assert report.decision is Decision.SUPERVISOR
    assert report.clause is not None and "no clause" in report.clause


def test_restart_between_rounds_keeps_memory_and_numbers(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """A settled round is never touched; a new session continues round numbers and carries
    TableMemory (here the under-minimum players of MBS-R3P 5.10)."""
    from controller.settlement.model import TableMemory

    writer, table = start(open_writer, "mbs-royal-three-pictures")
    play(table, 3, settle=True)
    remembered = table.tracker.memory
    writer, table, report = restart(writer, open_writer, "mbs-royal-three-pictures")
    assert report.decision is Decision.NO_ROUND and report.new_session
    assert table.session.base == 1 and table.session.memory == remembered
    assert isinstance(remembered, TableMemory)
    table.process(cmd.OpenRound(**DEALER))
    assert [o["round"] for o in events_of(journal_dir, "round_opened")] == [1, 2]
    assert len(events_of(journal_dir, "round_settled")) == 1


def test_cut_off_outputs_are_recorded_on_recovery(open_writer: Callable[..., JournalWriter],
                                                  journal_dir: Path) -> None:
    """A power cut after an input record but before its outputs: recovery records the outputs
    the rules give (no card lost), and replay then finds the journal complete."""
    writer, table = start(open_writer, "rws-nc-three-pictures")
    play(table, 3)
    writer.close()
    path = sorted(journal_dir.glob("journal-*.jsonl"))[-1]
    lines = read_lines(path)
    last_input = max(i for i, line in enumerate(lines) if b'"input_device"' in line)
    write_lines(path, lines[:last_input + 1])  # the dealer's three cards never recorded
    again = open_writer()
    table, report = recover(again, TableLayout.for_game("rws-nc-three-pictures"))
    assert report.outputs_recorded == 5  # 3 card_assigned, hand_complete, deal_complete
    dealer = [c["card"] for c in events_of(journal_dir, "card_assigned")
              if c["position"] == "dealer"]
    assert dealer == ["5H", "6H", "7H"]
    again.close()
    assert replay_records(iter_records([journal_dir])).divergences == []


def test_replay_names_doctored_settlement_even_rehashed(
        open_writer: Callable[..., JournalWriter], journal_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A settlement rewritten and the chain re-hashed (no HMAC) is a valid chain (the journal
    head catches it: its hash no longer matches), and replay reports the divergence with its
    seq and exits 1."""
    writer, table = start(open_writer, "rws-nc-three-pictures")
    play(table, 3, settle=True)
    writer.close()
    assert main(["journal", "replay", str(journal_dir)]) == 0
    capsys.readouterr()
    path = sorted(journal_dir.glob("journal-*.jsonl"))[-1]
    records = [json.loads(line) for line in read_lines(path)]
    target = next(r for r in records if r["event"] == "round_settled")
    target["payload"]["settlement"]["results"][0]["net"] = 999999
    prev = None
    for record in records:  # re-hash the whole chain from the start
        if prev is not None:
            record["prev"] = prev
        body = {k: v for k, v in record.items() if k not in ("hash", "hmac")}
        record["hash"] = prev = compute_hash(body)
    path.write_text("".join(json.dumps(r, sort_keys=True, separators=(",", ":"),
                                       ensure_ascii=False) + "\n" for r in records))
    assert verify([journal_dir], head=None).ok
    assert verify([journal_dir]).problem.kind.value == "altered"  # type: ignore[union-attr]
    report = replay_records(iter_records([journal_dir]))
    assert [(d.seq, d.kind) for d in report.divergences] == \
        [(target["seq"], DivergenceKind.ALTERED)]
    assert "settlement.results[0].net: recorded 999999" in report.divergences[0].detail
    assert main(["journal", "replay", str(journal_dir)]) == 1
    out = capsys.readouterr()
    assert f"seq {target['seq']}: altered" in out.out
    assert f"seq {target['seq']}" in out.err and "Traceback" not in out.err


def test_review_verbs(open_writer: Callable[..., JournalWriter], journal_dir: Path,
                      capsys: pytest.CaptureFixture[str]) -> None:
    """rounds: cards per position in deal order, outcome, overrides and who made them;
    show: the round's timeline; recall: the last ten games; default PATH is --dir."""
    writer, table = start(open_writer, "rws-nc-three-pictures")
    play(table, 3, settle=True)
    table.process(cmd.OpenRound(**DEALER))
    table.process(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.VOID,
                                         reason="camera failure"))
    writer.close()
    assert main(["journal", "rounds", "--dir", str(journal_dir), "--json"]) == 0
    rows = {r["round"]: r for r in json.loads(capsys.readouterr().out)["rounds"]}
    assert rows["1"]["cards"] == {"1": list(HANDS[0]), "2": list(HANDS[1]),
                                  "dealer": list(HANDS[2])}
    assert rows["1"]["game"] == "rws-nc-three-pictures"
    assert [(r["wager"], r["outcome"], r["net"]) for r in rows["1"]["results"]] == \
        [("w1", "win", 1000), ("w2", "win", 1000)]
    assert rows["2"]["overrides"][0]["actor"] == "sam"
    assert rows["2"]["overrides"][0]["action"] == "void"
    assert rows["2"]["void"]["reason"] == "camera failure"
    assert main(["journal", "show", "1", str(journal_dir)]) == 0
    timeline = capsys.readouterr().out.splitlines()
    assert "round_opened" in timeline[0] and "round_settled" in timeline[-1]
    assert main(["journal", "recall", str(journal_dir), "--json"]) == 0
    assert [g["round"] for g in json.loads(capsys.readouterr().out)["games"]] == ["1", "2"]
    assert main(["journal", "show", "99", str(journal_dir)]) == 1
    assert "no records of round '99'" in capsys.readouterr().err
