"""Control requests -> table commands: the commands no device produces (deck replaced or
counted, an irregularity reported, options closed, a wager withdrawn), with the peer's role."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.journal.policy import Durability
from controller.journal.recovery import recover
from controller.journal.writer import JournalWriter
from controller.service.wiring.handler import TableHandler
from controller.service.protocol import ErrorCode, Refusal, Request
from controller.service.wiring.tablethread import TableThread
from controller.table import commands as cmd
from controller.table.layout import TableLayout
from tests.controller.service.conftest import DEALER, SUPERVISOR

WHO = "dealer:7 (uid "


@pytest.mark.parametrize(("verb", "args", "expected"), [
    ("deck.replace", {}, cmd.ReplaceDeck),
    ("deck.counted", {"count": 51}, cmd.DeckCounted),
    ("options.close", {}, cmd.CloseOptions),
    ("wager.withdraw", {"wager_id": "1-main"}, cmd.WithdrawWager),
    ("irregularity.report", {"kind": "dropped_card"}, cmd.ReportIrregularity),
])
@pytest.mark.parametrize("peer", [DEALER, SUPERVISOR])
def test_each_verb_is_its_table_command(table: TableThread, verb: str, args: dict[str, Any],
                                        expected: type, peer: Any) -> None:
    """The verb builds the table's own command, and the peer's role is passed through for the
    table to judge (a supervisor's decision from a dealer is the table's refusal, not ours)."""
    command = TableHandler(table, lambda: 0).command_for(
        Request(1, verb, args, actor="dealer:7"), peer)
    assert type(command) is expected
    assert command.actor.startswith(WHO)
    assert command.role is (cmd.Role.SUPERVISOR if peer is SUPERVISOR else cmd.Role.DEALER)
    for name, value in args.items():
        if name != "kind":
            assert getattr(command, name) == value


def test_a_report_carries_every_field(table: TableThread) -> None:
    """kind, box, handled, LIVE-3P's exposed-before-drop and the details reach the table."""
    command = TableHandler(table, lambda: 0).command_for(Request(1, "irregularity.report", {
        "kind": "wrong_count_player", "position": "3", "handled": False,
        "exposed_before_drop": True, "details": "four cards"}), DEALER)
    assert command == cmd.ReportIrregularity(
        actor=command.actor, role=cmd.Role.DEALER, kind=cmd.IrregularityKind.WRONG_COUNT_PLAYER,
        position="3", handled=False, exposed_before_drop=True, details="four cards")
    bare = TableHandler(table, lambda: 0).command_for(
        Request(2, "irregularity.report", {"kind": "other"}), DEALER)
    assert isinstance(bare, cmd.ReportIrregularity)
    assert (bare.position, bare.handled, bare.exposed_before_drop, bare.round_number,
            bare.details) == (None, None, False, None, "")


@pytest.mark.parametrize("answer", ["in_device", "by_dealer", "interrupts",
                                    "not_reconstructable"])
def test_supervisor_answer_and_exposure_source(table: TableThread, answer: str) -> None:
    """The fact a held ruling asks for (issue 12) is answered through the socket, and a report
    of an exposed card can say where it was seen (RWS-NC3P 5.10 vs 5.7)."""
    handler = TableHandler(table, lambda: 0)
    decision = handler.command_for(Request(1, "supervisor.answer", {"answer": answer}),
                                   SUPERVISOR)
    assert isinstance(decision, cmd.SupervisorDecision)
    assert decision.action is cmd.SupervisorAction(answer)
    report = handler.command_for(Request(2, "irregularity.report", {
        "kind": "exposed_card", "source": "dealer"}), DEALER)
    assert isinstance(report, cmd.ReportIrregularity) and report.source is cmd.Source.DEALER


@pytest.fixture(name="second_session")
def fixture_second_session(tmp_path: Path) -> Iterator[tuple[TableHandler, int]]:
    """A started table in the journal's second session (one round was voided in the first):
    its handler and the session's round base."""
    layout = TableLayout.for_game("rws-nc-three-pictures")
    directory = tmp_path / "two-sessions"
    for session in (1, 2):
        writer = JournalWriter(directory, table_id="T1", durability=Durability.NONE)
        journaled, _ = recover(writer, layout)
        table = TableThread(journaled)
        table.start()
        base = journaled.session.base
        handler = TableHandler(table, lambda base=base: base)
        if session == 2:
            break
        handler(Request(1, "round.open"), DEALER)
        handler(Request(2, "supervisor.void", {"reason": "end of session"}), SUPERVISOR)
        table.close()
        writer.close()
    try:
        yield handler, base
    finally:
        table.close()
        writer.close()


def test_a_reported_round_is_the_journal_round(
        second_session: tuple[TableHandler, int]) -> None:
    """``round`` is the number status and events show (session base + table round); the table
    gets its own number, and a round not played in this session is refused with why."""
    handler, base = second_session
    assert base == 1
    handler(Request(1, "round.open"), DEALER)
    assert handler.table.snapshot.round == 2
    command = handler.command_for(
        Request(2, "irregularity.report", {"kind": "dealt_incorrectly", "round": 2}), DEALER)
    assert isinstance(command, cmd.ReportIrregularity) and command.round_number == 1
    with pytest.raises(Refusal, match="round 3 has not been played \\(the current round is "
                                      "2\\)") as caught:
        handler(Request(3, "irregularity.report", {"kind": "other", "round": 3}), DEALER)
    assert caught.value.code is ErrorCode.BAD_ARGS
    with pytest.raises(Refusal, match="round 1 is closed: it was played before this table "
                                      "session, whose rounds start at 2"):
        handler(Request(4, "irregularity.report", {"kind": "other", "round": 1}), DEALER)


def _types(answer: Any) -> list[str]:
    return [event["type"] for event in answer["events"]]


def test_a_wrong_manual_count_blocks_dealing_until_52(table: TableThread) -> None:
    """A count of 51 blocks the deck; no shuffle is accepted until it is counted at 52 or
    replaced (RWS-NC3P 5.5.2, MBS-R3P 5.9); releasing a deck that is not blocked is refused."""
    table.start()
    handler = TableHandler(table, lambda: 0)
    handler(Request(1, "round.open"), DEALER)
    blocked = handler(Request(2, "deck.counted", {"count": 51}), DEALER)
    assert "DeckBlocked" in _types(blocked)
    assert table.snapshot.deck_blocked == "manual count gives 51 cards, not 52"
    with pytest.raises(Refusal, match="dealing is blocked until the deck is replaced or counted"):
        handler(Request(3, "round.shuffled"), DEALER)
    assert _types(handler(Request(4, "deck.counted", {"count": 52}), DEALER)) == ["DeckReleased"]
    assert table.snapshot.deck_blocked is None
    with pytest.raises(Refusal, match="dealing is not blocked") as caught:
        handler(Request(5, "deck.replace"), SUPERVISOR)
    assert caught.value.code is ErrorCode.REFUSED
    handler(Request(6, "deck.counted", {"count": 53}), DEALER)
    assert _types(handler(Request(7, "deck.replace"), DEALER)) == ["DeckReleased"]


def test_withdraw_and_close_options_are_the_table_s_answers(table: TableThread) -> None:
    """A wager comes off the layout while bets are open; closing options nobody was offered is
    the table's refusal, word for word."""
    table.start()
    handler = TableHandler(table, lambda: 0)
    handler(Request(1, "round.open"), DEALER)
    handler(Request(2, "wager.place", {"wager_id": "w1", "position": "1", "bet": "main",
                                       "amount": 500}), DEALER)
    assert _types(handler(Request(3, "wager.withdraw", {"wager_id": "w1"}), DEALER)) == [
        "WagerWithdrawn"]
    assert table.snapshot.wagers == ()
    with pytest.raises(Refusal, match="no wager 'w1' on the layout"):
        handler(Request(4, "wager.withdraw", {"wager_id": "w1"}), DEALER)
    with pytest.raises(Refusal, match="no options are offered now"):
        handler(Request(5, "options.close"), DEALER)


def test_a_report_between_rounds_is_ruled(table: TableThread) -> None:
    """A dealer's report with no round in progress is about an earlier round: the table answers
    with its ruling (RWS-NC3P 5.6) rather than leaving the report unheard."""
    table.start()
    handler = TableHandler(table, lambda: 0)
    answer = handler(Request(1, "irregularity.report", {"kind": "dealt_incorrectly"}), DEALER)
    assert _types(answer) == ["IrregularityRuled"]


OTHER_GAMES = ("RWS-NC3P", "MBS-3P", "MBS-R3P", "LIVE-3P", "RWS-3CP")


@pytest.mark.parametrize(("game", "cite"), [
    ("rws-three-card-poker", "RWS-3CP"), ("rws-nc-three-pictures", "RWS-NC3P 5.11, 5.17"),
    ("mbs-royal-three-pictures", "MBS-R3P 6.1"), ("mbs-three-pictures", "MBS-3P"),
    ("live-three-pictures", "LIVE-3P T&C"),
])
def test_a_refused_supervisor_decision_cites_the_tables_own_game(
        tmp_path: Path, game: str, cite: str) -> None:
    """A dealer's void on an RWS-3CP table cited RWS-NC3P, MBS-R3P and LIVE-3P (issue 11): the
    refusal cites the table's own game and no other."""
    writer = JournalWriter(tmp_path / "journal", table_id="T1", durability=Durability.NONE)
    journaled, _ = recover(writer, TableLayout.for_game(game))
    table = TableThread(journaled)
    table.start()
    try:
        handler = TableHandler(table, lambda: 0)
        handler(Request(1, "round.open"), DEALER)
        with pytest.raises(Refusal) as caught:
            handler(Request(2, "supervisor.void", {"reason": "test"}), DEALER)
    finally:
        table.close()
        writer.close()
    message = caught.value.message
    assert f"belongs to a Pit Supervisor or above ({cite}" in message
    own = cite.split()[0]
    assert [other for other in OTHER_GAMES if other != own and f"{other} " in message] == []


def test_one_verb_table_each_command_verb_reaches_the_table() -> None:
    """Issue 35, one verb table: every verb the protocol lets change the table has exactly one
    builder in TABLE_COMMANDS and nothing else does (journal.acknowledge is the journal's, not
    the table's round, and is answered apart)."""
    from controller.service.protocol import VERBS, Access
    from controller.service.wiring.handler import TABLE_COMMANDS

    commands = {verb for verb, spec in VERBS.items() if spec.access is Access.COMMAND}
    assert set(TABLE_COMMANDS) == commands - {"journal.acknowledge"}
