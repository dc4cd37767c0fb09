"""Replay checks the wagers in action against the round's own wager records (issue 33, finding
1): a journal whose ``bets_closed`` holds a wager that no acceptance placed fails replay, even
where the rules that wrote it regenerate the same outputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from controller.cli import main
from controller.journal import JournalWriter, iter_records
from controller.journal.forms import REVISION_FIELD
from controller.journal.recovery import Decision, recover
from controller.journal.replay import DivergenceKind, replay_records
from controller.journal.wagerbook import WagerBook
from controller.table import commands as cmd
from controller.table.layout import TableLayout
from drivers import events as dev
from tests.controller.journal.conftest import close_deal_and_settle

DEALER = dict(actor="dana", role=cmd.Role.DEALER)
GAME = "mbs-royal-three-pictures"


def _batch_round(writer: JournalWriter) -> None:
    """alice, an unknown bet, carol in one batch; then the round dealt and settled."""
    table, report = recover(writer, TableLayout.for_game(GAME))
    assert report.decision is Decision.NO_ROUND
    table.process(dev.DeviceOnline("shuffler"))
    table.process(cmd.OpenRound(**DEALER))
    table.process(cmd.PlaceWagers(**DEALER, wagers=(
        cmd.WagerOrder(wager_id="alice", position="1", bet="main", amount=1000),
        cmd.WagerOrder(wager_id="bob", position="2", bet="dragon", amount=1000),
        cmd.WagerOrder(wager_id="carol", position="2", bet="main", amount=1000))))
    close_deal_and_settle(table)


def _old_batch_fault(mocker: MockerFixture) -> None:
    """The table as it was before the fix: a rule set's refusal of one row escaped the batch's
    loop, refusing the batch whole after the rows ahead of it were placed. No device or input
    produces this any more, so it is made by hiding the exception the loop now catches."""
    mocker.patch("controller.table.betting.WagerError", type("NotCaught", (Exception,), {}))


def test_a_wager_in_action_that_no_record_placed_fails_replay(
        open_writer: Callable[..., JournalWriter], journal_dir: Path,
        mocker: MockerFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """Written by the faulty table and replayed by the same faulty rules (so every output
    regenerates identically), the journal still fails: ``bets_closed`` holds alice's wager, but
    the batch that carried it is recorded ``command_refused`` with no acceptance; and
    ``tablectl journal replay`` exits 1 naming it."""
    _old_batch_fault(mocker)
    _batch_round(open_writer())
    records = list(iter_records([journal_dir]))
    kinds = [r.event_type for r in records]
    assert "command_refused" in kinds and "wagers_accepted" not in kinds
    closed = next(r for r in records if r.event_type == "bets_closed")
    assert [w["id"] for w in closed.payload["wagers"]] == ["alice"], "the fault was made"
    report = replay_records(records)
    assert [d.kind for d in report.divergences] == [DivergenceKind.UNACCOUNTED]
    assert report.divergences[0].seq == closed.seq
    assert "alice" in report.divergences[0].detail
    assert main(["journal", "replay", str(journal_dir)]) == 1
    assert "unaccounted" in capsys.readouterr().err


def test_the_same_batch_today_places_both_good_rows_and_replays_clean(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """The fixed table: alice and carol accepted in one record, bob refused alone, and the
    journal replays with no divergence (the book accounts for every wager in action)."""
    _batch_round(open_writer())
    records = list(iter_records([journal_dir]))
    accepted = next(r for r in records if r.event_type == "wagers_accepted")
    assert [w["id"] for w in accepted.payload["wagers"]] == ["alice", "carol"]
    assert [r.payload["wager_id"] for r in records if r.event_type == "wager_refused"] == ["bob"]
    assert "command_refused" not in [r.event_type for r in records]
    report = replay_records(records)
    assert report.divergences == [] and report.settlements_checked == 1


def _wager(wager_id: str, amount: int) -> dict:
    return {"id": wager_id, "amount": amount, "bet": "main", "position": "1"}


def test_the_book_follows_reductions_and_withdrawals() -> None:
    """A Standing wager cut back (RWS-NC3P 5.1) is in action at what was kept, one cut to 0 and
    one withdrawn are not; a listed amount other than the kept one, or a placed wager missing
    from ``bets_closed``, is named."""
    def book() -> WagerBook:
        b = WagerBook()
        b.see("round_opened", {"round": 4})
        b.see("wagers_accepted", {"round": 4, "wagers": [_wager("a", 800), _wager("b", 500)]})
        b.see("wager_accepted", {"round": 4, "wager": _wager("c", 300)})
        b.see("wager_reduced", {"round": 4, "wager_id": "a", "amount": 200, "returned": 600})
        b.see("wager_reduced", {"round": 4, "wager_id": "b", "amount": 0, "returned": 500})
        b.see("wager_accepted", {"round": 3, "wager": _wager("old", 300)})  # another round
        return b
    assert book().see("bets_closed", {"round": 4, "wagers": [_wager("a", 200),
                                                             _wager("c", 300)]}) is None
    with_withdrawal = book()
    with_withdrawal.see("wager_withdrawn", {"round": 4, "wager_id": "c"})
    assert with_withdrawal.see("bets_closed", {"round": 4, "wagers": [_wager("a", 200)]}) is None
    assert "at 800" in (book().see("bets_closed", {"round": 4, "wagers": [
        _wager("a", 800), _wager("c", 300)]}) or "")
    assert "lacks wager(s) c" in (book().see("bets_closed", {"round": 4, "wagers": [
        _wager("a", 200)]}) or "")
    unopened = WagerBook()  # an excerpt that starts mid-round: nothing to account from
    assert unopened.see("bets_closed", {"round": 9, "wagers": [_wager("x", 1)]}) is None


def test_a_settlement_recorded_before_amount_and_returned_still_replays(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """A journal written before each result named its amount and what was returned (issue
    34) replays clean: its sessions declare no journal revision, so those two fields are left
    out of the comparison where the recorded results have neither; a stake altered in such a
    record is still caught. In a session that declares revision 1 or later, the same deletion
    is a finding (the form says the fields are there)."""
    _batch_round(open_writer())
    records = list(iter_records([journal_dir]))
    settled = next(r for r in records if r.event_type == "round_settled")
    results = settled.payload["settlement"]["results"]
    assert all(r["amount"] == r["stake"] + r["returned"] for r in results)
    for result in results:
        del result["amount"], result["returned"]
    declared = [r for r in records if r.event_type == "session_started"]
    assert declared and all(REVISION_FIELD in r.payload for r in declared)
    deleted = replay_records(records)
    assert [d.kind for d in deleted.divergences] == [DivergenceKind.ALTERED]
    assert "amount: recorded (absent)" in deleted.divergences[0].detail
    for record in declared:
        del record.payload[REVISION_FIELD]
    assert replay_records(records).divergences == []
    results[0]["stake"] += 1
    report = replay_records(records)
    assert [d.kind for d in report.divergences] == [DivergenceKind.ALTERED]
    assert "stake" in report.divergences[0].detail
