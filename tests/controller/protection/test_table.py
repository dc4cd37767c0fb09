"""Findings into the table and the journal: an alert as a round event, a short deck held, and
a journal that replays with the findings recorded as inputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from controller.journal import JournalWriter, iter_records
from controller.journal.recorder import JournaledTable
from controller.journal.recovery import recover
from controller.journal.replay import replay_records
from controller.protection import Guard, TableGuard
from controller.service.wiring.warmup import WarmingGuard, warm_from_journal
from controller.service.wiring.handler import event_json
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import TableLayout
from drivers import events as dev
from tests.controller.journal.conftest import close_deal_and_settle
from tests.controller.table.conftest import Harness

DEALER = dict(actor="dana", role=cmd.Role.DEALER)
GAME = "mbs-royal-three-pictures"


def _report(holds: bool) -> dev.ProtectionReport:
    return dev.ProtectionReport("protection", monitor="ledger", statistic=-14.2,
                                threshold=-13.16, decks=26, holds=holds,
                                detail="QH not dispensed for a run of decks")


def test_alert_is_a_round_event_and_what_watch_is_sent(make: Callable[..., Harness]) -> None:
    """A finding that does not hold: one ``ProtectionAlert`` with the statistic, threshold and
    decks seen; the service publishes it to ``tablectl watch`` as ``protection_alert``."""
    table = make("rws-three-card-poker", "shuffler")
    events = table.send(_report(holds=False))
    assert [type(e) for e in events] == [ev.ProtectionAlert]
    alert = events[0]
    assert (alert.monitor, alert.statistic, alert.threshold, alert.decks, alert.held) == (
        "ledger", -14.2, -13.16, 26, False)
    shown = event_json(alert, base=0)
    assert shown["type"] == "ProtectionAlert" and shown["detail"].startswith("QH not")


def test_short_deck_blocks_dealing_under_the_count_clause(make: Callable[..., Harness]) -> None:
    """A finding resting on cards counted (``Evidence.COUNT``: more cards dispensed than the
    deck was counted to hold): the alert names the rule set's shortage clause, the deck is
    blocked (``DeckBlocked``, as for the shuffler's own wrong count) and the round, shuffle not
    yet dealt from, is ruled at once (RWS-NC3P 5.5.2: void)."""
    table = make("rws-nc-three-pictures", "shuffler")
    table.open()
    table.default_bets()
    table.close()
    events = table.send(_report(holds=True))
    kinds = [type(e) for e in events]
    assert kinds[:2] == [ev.ProtectionAlert, ev.DeckBlocked] and ev.RoundVoided in kinds
    assert events[0].held and events[0].clause == "RWS-NC3P 5.5.2"
    assert table.machine.deck_blocked is not None
    assert table.last(ev.RoundVoided).clause == "RWS-NC3P 5.5.2"
    again = table.send(_report(holds=True))
    assert [type(e) for e in again] == [ev.ProtectionAlert] and not again[0].held


def test_statistical_finding_blocks_for_a_count_and_rules_nothing(
        make: Callable[..., Harness]) -> None:
    """A statistical finding ("stuck inside or missing") after "No more bets", nothing dealt:
    the deck is blocked under the count clause but nothing is ruled (MBS-R3P 5.9 counts
    first); a count of 52 releases it and the round deals on."""
    table = make("mbs-royal-three-pictures", "shuffler")
    table.open()
    table.default_bets()
    table.close()
    report = dev.ProtectionReport("protection", monitor="ledger", statistic=-14.2,
                                  threshold=-13.16, decks=18, holds=True,
                                  detail="QH not dispensed: a card stuck inside or missing",
                                  evidence=dev.Evidence.STATISTICAL)
    events = table.send(report)
    assert [type(e) for e in events] == [ev.ProtectionAlert, ev.DeckBlocked]
    assert events[1].clause == "MBS-R3P 5.1, 5.9"
    assert table.machine.state.value == "closed" and table.machine.deck_blocked is not None
    assert [type(e) for e in table.send(cmd.DeckCounted(**DEALER, count=52))] == [
        ev.DeckReleased]
    assert table.machine.deck_blocked is None


def _round(table: JournaledTable, number: int) -> None:
    table.process(cmd.OpenRound(**DEALER))
    for box in ("1", "2"):
        table.process(cmd.PlaceWager(**DEALER, wager_id=f"r{number}-{box}", position=box,
                                     bet="main", amount=1000))
    close_deal_and_settle(table)


def test_repeated_order_in_the_journal_and_replayed(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """The same nine cards in the same order after two shuffles: the repeat monitor's finding
    is journaled as an input (``ProtectionReport``) and its ``protection_alert`` output follows;
    the journal, sessions at every round boundary included, replays without divergence."""
    writer = open_writer()
    table, _ = recover(writer, TableLayout.for_game(GAME))
    table.guard = TableGuard()
    table.process(dev.DeviceOnline("shuffler"))
    for number in (1, 2):
        _round(table, number)
    records = list(iter_records([journal_dir]))
    inputs = [r for r in records if r.event_type == "input_device"
              and r.payload["type"] == "ProtectionReport"]
    alerts = [r for r in records if r.event_type == "protection_alert"]
    assert len(inputs) == 1 and len(alerts) == 1
    assert alerts[0].payload["monitor"] == "repeat" and alerts[0].payload["round"] == 2
    assert alerts[0].seq == inputs[0].seq + 1
    report = replay_records(records)
    assert report.divergences == [] and report.settlements_checked == 2


def _warming(journal_dir: Path, writer: JournalWriter, found: list[dev.ProtectionReport]
             ) -> WarmingGuard:
    """The guard the service installs after a restart, its late findings kept in ``found``."""
    return WarmingGuard(Guard(), journal_dir, writer.seq, found.append)


def _warm_and_feed(table: JournaledTable, guard: WarmingGuard,
                   found: list[dev.ProtectionReport]) -> None:
    """Start the warm-up, wait for it (generously: a loaded machine), then give the table the
    late findings as the service's table thread would take them from its queue."""
    guard.start()
    assert guard.warmed.wait(60), "warm-up did not finish within 60 s"
    guard.close()
    for report in found:
        table.process(report)


def _alerts(journal_dir: Path) -> list[dict[str, object]]:
    return [r.payload for r in iter_records([journal_dir]) if r.event_type == "protection_alert"]


def _restarted_after_one_round(open_writer: Callable[..., JournalWriter]
                               ) -> tuple[JournaledTable, JournalWriter]:
    """One round dealt and journaled under a guard, the journal closed (the service stopped),
    then the table recovered from it on a fresh writer: what a restart leaves."""
    writer = open_writer()
    table, _ = recover(writer, TableLayout.for_game(GAME))
    table.guard = TableGuard()
    table.process(dev.DeviceOnline("shuffler"))
    _round(table, 1)
    writer.close()
    again = open_writer()
    table, _ = recover(again, TableLayout.for_game(GAME))
    return table, again


def test_a_restart_keeps_the_evidence(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """A replay older than the restart is still seen: the new guard is warmed with the last
    decks of the journal (not re-reporting what is recorded), so the first round after the
    restart that repeats a round before it raises the alert."""
    table, _ = _restarted_after_one_round(open_writer)
    table.guard = guard = TableGuard()
    assert warm_from_journal(guard, journal_dir) == 1 and guard.reports == 0
    table.process(dev.DeviceOnline("shuffler"))
    _round(table, 2)
    alerts = _alerts(journal_dir)
    assert [a["monitor"] for a in alerts] == ["repeat"] and alerts[0]["round"] == 2


def test_inputs_during_the_warm_up_are_judged_after_the_history(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """The table does not wait for the warm-up: a round dealt while the guard warms is dealt
    and recorded at once, its cards held for the monitors and fed after the journal's decks,
    so its repeat of the round before the restart is still found, and recorded as an input
    (then its alert) when the warm-up ends."""
    table, again = _restarted_after_one_round(open_writer)
    found: list[dev.ProtectionReport] = []
    table.guard = guard = _warming(journal_dir, again, found)
    table.process(dev.DeviceOnline("shuffler"))
    _round(table, 2)  # dealt and settled before the warm-up starts
    assert _alerts(journal_dir) == [] and table.table.machine.number == 1
    _warm_and_feed(table, guard, found)
    assert guard.decks_fed == 1 and guard.late_reports == 1
    alerts = _alerts(journal_dir)
    assert [a["monitor"] for a in alerts] == ["repeat"]
    report = replay_records(list(iter_records([journal_dir])))
    assert report.divergences == []


def test_a_restart_mid_episode_alerts_once(
        open_writer: Callable[..., JournalWriter], journal_dir: Path, tmp_path: Path) -> None:
    """One fault, one alert, across a restart: round 2 repeats round 1 (alert), the service
    restarts, and rounds 3 and 4 repeat it again within the episode. The warmed guard knows
    the episode from the journal and stays quiet: the journal's alerts are those of the same
    four rounds without a restart. (A guard started afresh would alert the repeat again at
    round 4: round 3 would be its first deck.)"""
    straight = tmp_path / "straight"
    writer = open_writer(directory=straight)
    table, _ = recover(writer, TableLayout.for_game(GAME))
    table.guard = TableGuard()
    table.process(dev.DeviceOnline("shuffler"))
    for number in (1, 2, 3, 4):
        _round(table, number)
    without_restart = [a["monitor"] for a in _alerts(straight)]

    writer = open_writer()
    table, _ = recover(writer, TableLayout.for_game(GAME))
    table.guard = TableGuard()
    table.process(dev.DeviceOnline("shuffler"))
    for number in (1, 2):
        _round(table, number)
    assert [a["monitor"] for a in _alerts(journal_dir)] == ["repeat"]
    writer.close()
    again = open_writer()
    table, _ = recover(again, TableLayout.for_game(GAME))
    found: list[dev.ProtectionReport] = []
    table.guard = guard = _warming(journal_dir, again, found)
    table.process(dev.DeviceOnline("shuffler"))
    _round(table, 3)  # while the guard warms
    _warm_and_feed(table, guard, found)
    _round(table, 4)  # after it
    monitors = [a["monitor"] for a in _alerts(journal_dir)]
    assert guard.decks_fed == 2
    assert monitors.count("repeat") == 1 and monitors == without_restart


def test_a_restart_keeps_the_batches_in_progress_and_the_whole_repeat_window(
        open_writer: Callable[..., JournalWriter], journal_dir: Path) -> None:
    """Warmed from 700 decks of card inputs, the new guard holds the repeat window's decks and
    the position batch in progress (699 decks closed, the last is open until the next shuffle:
    699 - 520 = 179 since the batch's last decision): a
    restart no longer starts the regulators' chi-square afresh (the warm-up used to stop at
    200 decks)."""
    import random

    from controller.games.cards import FULL_DECK
    from controller.journal.codec import encode_input
    from controller.protection.monitors import Position, Repeat

    rng = random.Random(3)
    writer = open_writer()
    for _ in range(700):
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        items: list[object] = [dev.ShuffleDone("shuffler", counted=52)]
        items += [dev.CardSetDispensed("shuffler", cards=tuple(deck[3 * h:3 * h + 3]))
                  for h in range(7)]
        for item in items:
            writer.append(*encode_input(item))
    writer.close()
    guard = TableGuard()
    assert warm_from_journal(guard, journal_dir) == 700 and guard.reports == 0
    monitors = {type(m): m for m in guard.guard.monitors}
    position = monitors[Position]
    assert isinstance(position, Position) and position.decks == 699
    assert position.test.seen == 179 and sum(position.test.observed) == 179 * 18
    repeat = monitors[Repeat]
    assert isinstance(repeat, Repeat) and len(repeat.kept) >= 699


def test_a_journal_the_warm_up_cannot_read_holds_nothing_for_ever(tmp_path: Path) -> None:
    """A warm-up that cannot read the journal (here: no such directory) is logged and ends:
    the inputs held meanwhile reach the monitors in order, and later ones go to them
    directly, so the monitors are never left waiting."""
    found: list[dev.ProtectionReport] = []
    guard = WarmingGuard(Guard(), tmp_path / "gone", 0, found.append)
    shuffle = dev.ShuffleDone("shuffler", counted=52)
    assert guard.before(shuffle) == [] and guard.after(shuffle) == []
    assert guard.guard.decks == 0  # held, not fed
    guard.start()
    assert guard.warmed.wait(60), "warm-up did not end within 60 s"
    guard.close()
    assert guard.decks_fed == 0 and guard.guard.decks == 1
    guard.after(dev.ShuffleDone("shuffler", counted=52))
    assert guard.guard.decks == 2 and found == []
