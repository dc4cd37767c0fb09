"""A simulated table, end to end, for throughput and for the irregularity paths at volume.

Seeded simulated devices are served over real ptys (:class:`firmware_sim.serve.PtyServer`), read
by the real drivers, whose events go on the :class:`~controller.table.table.Table`'s one input
queue together with the bench operator's commands, exactly as the service wires them; the
table settles through :mod:`controller.settlement`. The casino games deal from the hand-forming
shuffler, LIVE-3P from a Bee-Tek shoe in burn mode.

The bench operator plays everyone at the table: seeded random wagers, the RWS-3CP Q-6-4 strategy
(play Q-6-4 or better), "continue" for every player option, and a supervisor who decides as a
pit would (not reconstructable for a wrong count, continue after an interruption or a cleared
jam, void for a bad deck). The devices are the "physical" world, so the operator also lifts
hands, clears alarms and ticks the simulators' clocks (no waiting for a 50 ms server tick).
Nothing sleeps: every step waits for the table event it caused, with a timeout.

The faults and ``--faults`` are in :mod:`controller.bench_faults`, the report and its summary in
:mod:`controller.bench_report`, the operator's view of the round in :mod:`controller.bench_round`
and the devices, servers and drivers in :mod:`controller.bench_rig`.
"""

from __future__ import annotations

import queue
import random
import time
from collections.abc import Callable
from pathlib import Path

import structlog

from controller.analysis.odds import Q64
from controller.bench_faults import BEFORE_SHUFFLE, applicable_faults, parse_faults
from controller.bench_report import BenchReport, BetTally, summary_lines
from controller.bench_round import RoundView, may_step_after
from controller.errors import RequestError
from controller.games import poker
from controller.games.cards import Card
from controller.games.catalog import get_game
from controller.games.rules import Family, GameId
from controller.settlement.model import ProgressiveConfig
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import TableLayout
from drivers.errors import DriverError
from firmware_sim.faults import FaultKind, FaultSpec

log = structlog.get_logger("controller.bench")

DEALER = {"actor": "bench-dealer", "role": cmd.Role.DEALER}
SUPERVISOR = {"actor": "bench-supervisor", "role": cmd.Role.SUPERVISOR}
EVENT_TIMEOUT = 5.0
BOXES = 5
AMOUNTS = (100, 200, 500, 1000)

_SUPERVISOR_PREFERENCE = {
    "wrong_count_player": ("not_reconstructable", "void"),
    "wrong_count_dealer": ("not_reconstructable", "void"),
    "burn_error": ("reconstruct", "void"),
    "not_shuffled": ("void",), "deck_count": ("void",), "foreign_card": ("void",),
    "duplicate_card": ("void",),
}


class Bench:
    """``Bench(game, rounds, seed=..., faults=...).run()`` -> :class:`BenchReport`."""

    def __init__(self, game: str, rounds: int, *, seed: int = 0, faults: str | None = None,
                 journal_dir: str | Path | None = None,
                 progress: Callable[[BenchReport, int], None] | None = None) -> None:
        if rounds < 1:
            raise RequestError(f"--rounds must be at least 1, got {rounds}")
        self.rules = get_game(game)
        self.game = self.rules.id.value
        self.live = self.rules.id is GameId.LIVE_3P
        self.rounds = rounds
        self.rng = random.Random(seed)
        self.fault_list, self.fault_rate = parse_faults(self.game, faults)
        self.report = BenchReport(self.game, rounds, seed)
        self.journal_dir = Path(journal_dir) if journal_dir is not None else None
        self.progress = progress
        self.out: queue.Queue[ev.RoundEvent] = queue.Queue()
        self.deck_blocked = False
        self.offline = False
        self.seed = seed

    # wiring ---------------------------------------------------------------------------------
    def run(self) -> BenchReport:
        from controller.bench_rig import BenchRig  # the devices, servers and drivers

        started = time.monotonic()
        layout = TableLayout.for_game(self.game)
        with BenchRig(self.game, layout, self.out.put, self.seed, self.journal_dir) as rig:
            self.rig = rig
            self._wait_online(rig.devices)
            for index in range(self.rounds):
                self._round(index)
                if self.progress is not None:
                    self.progress(self.report, index + 1)
        # After the rig closed the journal: the count includes its last records (the devices'
        # final notes, journal_closed), the same count `journal verify` reports.
        self.report.journal = rig.journal_summary()
        self.report.seconds = time.monotonic() - started
        return self.report

    def _wait_online(self, devices: int) -> None:
        online = 0
        while online < devices:
            try:
                event = self.out.get(timeout=EVENT_TIMEOUT)
            except queue.Empty:
                raise RuntimeError("bench devices did not come online") from None
            if isinstance(event, ev.DeviceNoted) and event.detail == "DeviceOnline":
                online += 1

    def put(self, command: cmd.Command) -> None:
        self.rig.table.put(command)

    # one round ------------------------------------------------------------------------------
    def _fault_for(self, index: int) -> FaultSpec | None:
        if self.fault_rate >= 0:
            if self.fault_list and self.rng.random() < self.fault_rate:
                return self.rng.choice(self.fault_list)
            return None
        return self.fault_list[index % len(self.fault_list)] if self.fault_list else None

    def _round(self, index: int) -> None:
        state = self.state = RoundView(fault=self._fault_for(index))
        if self.deck_blocked:
            self.rig.clear_faults()
            self.put(cmd.ReplaceDeck(**SUPERVISOR))
            self.deck_blocked = False
        self.put(cmd.OpenRound(**DEALER))
        for wager in self._wagers():
            self.put(wager)
        self.put(cmd.CloseBets(**DEALER))
        deadline_misses = 0
        while not state.over:
            try:
                event = self.out.get(timeout=EVENT_TIMEOUT)
            except queue.Empty:
                deadline_misses += 1
                self._stuck(deadline_misses)
                continue
            self._on_event(event)
            if not state.over and may_step_after(event):
                self._step()

    def _wagers(self) -> list[cmd.PlaceWager]:
        rng, rules, out = self.rng, self.rules, []
        n = len(self.state.wagers)

        def add(position: str, bet: str, amount: int) -> None:
            nonlocal n
            n += 1
            out.append(cmd.PlaceWager(**DEALER, wager_id=f"b{n}", position=position, bet=bet,
                                      amount=amount, player=f"player-{position}"))

        if self.live:
            for position in rules.positions:
                if rng.random() < 0.8:
                    add(position, rng.choice(("win", "lose")), rng.choice(AMOUNTS))
                for side in ("tie", "three_knights", "pair_plus"):
                    if rng.random() < 0.25:
                        add(position, side, rng.choice(AMOUNTS))
            return out
        for position in rules.positions[:BOXES]:
            if rng.random() < 0.75:
                add(position, rules.initial_bet or "main", rng.choice(AMOUNTS))
                for side in (b for b in rules.bets if b not in ("main", "ante", "play")):
                    if rng.random() < 0.3:
                        stake = ProgressiveConfig().stake if side == "progressive" \
                            else rng.choice(AMOUNTS)
                        add(position, side, stake)
            elif rules.family is Family.THREE_CARD_POKER and rng.random() < 0.2:
                add(position, "pair_plus", rng.choice(AMOUNTS))  # a Pair-Plus-only player
        return out

    # reacting to the table ------------------------------------------------------------------
    def _on_event(self, event: ev.RoundEvent) -> None:
        state, report = self.state, self.report
        if isinstance(event, ev.RoundOpened):
            state.number = event.round
        elif isinstance(event, ev.BetsClosed):
            state.closed = True
            state.wagers = {w.id: w for w in event.wagers}
            hands = len(event.receiving) + 1
            state.needed = 4 + 3 * hands if self.live else hands
            if state.fault is not None:
                deliveries = (len(event.receiving) + 1) * (3 if self.live else 1)
                state.fault_at = (-1 if state.fault.kind in BEFORE_SHUFFLE
                                  else self.rng.randrange(deliveries))
                report.faults_injected[str(state.fault)] += 1
        elif isinstance(event, ev.ShuffleConfirmed) and event.round == state.number:
            state.shuffled = True
        elif isinstance(event, ev.DeviceNoted):
            self._on_note(event)
        elif isinstance(event, ev.DealingError) and "DeviceOffline" in event.detail:
            self.offline = True
        elif isinstance(event, ev.HandComplete):
            state.hands[event.position] = event.cards
        elif isinstance(event, (ev.CardAssigned, ev.BurnCard, ev.CardIgnored)) and self.live:
            state.hand_out = False
        elif isinstance(event, ev.IrregularityRuled):
            if event.kind == "interruption":
                state.hand_out = False  # a rebooted device forgot the set it was forming
            if event.action == "continue":
                self.rig.clear_faults()  # the dealer turns the card down, clears the alarm
                state.fault_blocked = False
        elif isinstance(event, ev.DecisionMade):
            state.wagers.update({w.id: w for w in event.play_wagers})
        elif isinstance(event, ev.DealComplete):
            state.complete = True
        elif isinstance(event, ev.SupervisorRequired):
            state.held = True
            if event.kind == "simultaneous_draw":
                state.sets += 1  # one draw brought out two cards
                state.cards += 1
            self._supervise(event)
        elif isinstance(event, ev.SupervisorDecided):
            state.held = False
            state.fault_blocked = False
        elif isinstance(event, ev.PlayerOptionsOffered):
            for position in event.positions:
                self.put(cmd.PlayerOption(**DEALER, position=position,
                                          option=cmd.Option.CONTINUE))
        elif isinstance(event, ev.HandRemoved):
            report.hands_removed += 1
        elif isinstance(event, ev.CommandRefused) and event.command == "CloseBets":
            state.close_refused = True  # a device is offline: "No more bets" when it is back
        elif isinstance(event, ev.DeckBlocked):
            self.deck_blocked = True
        elif isinstance(event, ev.RoundVoided):
            report.voided += 1
            report.voids_by_clause[event.clause] += 1
            state.over = True
        elif isinstance(event, ev.RoundSettled):
            report.settled += 1
            self._tally(event)
            state.over = True

    def _on_note(self, event: ev.DeviceNoted) -> None:
        state, detail = self.state, event.detail
        if detail == "HandTaken":
            state.hand_out = False
        elif detail == "DeviceOnline":
            self.offline = False
            if state.close_refused and not state.closed:
                state.close_refused = False
                self.put(cmd.CloseBets(**DEALER))
        elif "DeviceOffline" in detail:
            self.offline = True
        elif "shuffle before it is lost" in detail:
            state.shuffled = state.shuffle_asked = False
        elif detail.startswith("shuffle not accepted"):
            state.shuffle_asked = False

    def _supervise(self, event: ev.SupervisorRequired) -> None:
        """The supervisor's decision, as a pit would take it on the bench."""
        preference = _SUPERVISOR_PREFERENCE.get(event.kind, ("continue", "order", "void"))
        for action in preference:
            if action not in event.options:
                continue
            cards: tuple[Card, ...] = ()
            if action == "order":
                cards = self.rig.cards_in_hand(2 if event.kind == "simultaneous_draw" else 1)
                if not cards:
                    continue
            if action == "continue":
                self.rig.clear_faults()
            self.put(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction(action),
                                            reason=f"bench: {event.kind}", cards=cards))
            return

    def _tally(self, event: ev.RoundSettled) -> None:
        bets = self.report.bets
        for result in event.settlement.results:
            wager = self.state.wagers.get(result.wager_id)
            if wager is None or result.outcome.value == "returned":
                continue
            bet = "ante" if wager.bet == "play" else wager.bet  # Ante with Play, per Ante
            tally = bets.setdefault(bet, BetTally())
            tally.net += result.net
            if wager.bet != "play":
                tally.staked += wager.amount
                tally.wagers += 1

    # acting ---------------------------------------------------------------------------------
    def _step(self) -> None:
        """The next physical action, if the table is ready for it."""
        state = self.state
        if state.held or state.fault_blocked or self.offline or state.finishing \
                or not state.closed:
            return
        if state.complete:
            self._finish()
            return
        if not state.shuffled:
            if not state.shuffle_asked:
                if state.fault is not None and state.fault_at == -1:
                    self.rig.inject(state.fault)
                    state.fault_at = -2
                state.shuffle_asked = self.rig.shuffle(self.put)
            return
        if state.hand_out or state.sets >= state.needed:
            return
        if state.fault is not None and state.fault_at == state.sets:
            self.rig.inject(state.fault)
            state.fault_at = -2
            if state.fault.kind in (FaultKind.DISCONNECT, FaultKind.JAM):
                return  # at once: wait for the table's answer to it
        try:
            delivered = self.rig.deliver(burn=self.live and state.cards < 4)
        except DriverError as error:
            log.info("bench delivery failed", error=str(error))
            if self.rig.lost_cards():
                self.put(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.VOID,
                                                reason="bench: the device lost the cards"))
            state.fault_blocked = True
            return
        if not delivered:
            return  # nothing came out (a no-read or a reboot): the table rules on it
        state.hand_out = True
        state.sets += 1
        state.cards += 1

    def _finish(self) -> None:
        state = self.state
        state.finishing = True
        if self.rules.family is Family.THREE_CARD_POKER:
            for position in sorted({w.position for w in state.wagers.values()
                                    if w.bet == "ante"}):
                hand = state.hands.get(position)
                if hand is None:
                    continue
                plays = poker.evaluate(hand).strength >= Q64
                self.put(cmd.PlayerDecision(**DEALER, position=position,
                                            choice=cmd.Choice.PLAY if plays else cmd.Choice.FOLD))
        if not self.live:
            self.put(cmd.RevealDealer(**DEALER))
        self.put(cmd.SettleRound(**DEALER))

    def _stuck(self, misses: int) -> None:
        """Nothing happened for a while: a device lost its cards or a command went missing. The
        supervisor voids the round (general provision); a second miss gives up on the round."""
        self.report.stuck += 1
        log.warning("bench round stuck", round=self.state.number, misses=misses)
        if misses == 1:
            self.put(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.VOID,
                                            reason="bench: round stuck"))
            return
        raise RuntimeError(f"bench round {self.state.number} is stuck")


__all__ = ["Bench", "BenchReport", "applicable_faults", "parse_faults", "summary_lines"]
