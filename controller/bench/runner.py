"""A simulated table, end to end, through the service's own wiring (``tablectl bench``).

The table is built exactly as ``tablectl run`` builds it (:class:`controller.bench.rig.BenchRig`
around :class:`controller.service.wiring.pipeline.Wiring`): journal, recovery, the table thread, the
real driver reading a seeded simulator over a real pty with deferred acknowledgement, and the
product's device operator, which shuffles, dispenses and (in sim mode) lifts the hands. The bench
adds only the people: the dealer here (open, no more bets, reveal, settle), the players and the
pit supervisor in :mod:`controller.bench.actors`, all acting through table commands (a device
fault is cleared by the supervisor's ``ClearDeviceFault``, as ``tablectl supervisor
clear-fault`` does); and the physical world (a planned fault appearing in the device) through
the rig. The service's own simulated dealer lifts the hands and works the shoe.
So ``--faults`` exercises the product's path, and a round the product leaves stuck shows up as
``stuck`` in the report (the supervisor then voids it), not as a bench workaround.

One seed, one run (issue 44): the people act only on the table's events, in the order the
table gave them, and only once the device side has settled (:meth:`BenchRig.settle`: every
input handled, the device operator and the simulated dealer done, everything the simulator
said in the journal, the device online); the faults are planned on the device's own count of
hands and cards; the simulators, and the pace of their reconnects, draw from the seed. So two
runs of one seed write the same records, but for the wall clock (``benchmarks/determinism.py``
counts what differs). A round is stuck only when nothing at all happens for
:data:`STUCK_SECONDS` (the supervisor voids it), never because a step was slow.

Nothing sleeps: every step waits for the table event it caused, or for the device side to
settle, with a generous bound. The faults are in :mod:`controller.bench.faults`, the report in
:mod:`controller.bench.report`.
"""

from __future__ import annotations

import queue
import random
import shlex
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import structlog

from controller.bench.actors import DEALER, Players, Supervisor
from controller.bench.faults import FaultInjector, parse_faults
from controller.bench.report import BenchReport, BetTally
from controller.bench.rig import BenchRig
from controller.bench.round import RoundView
from controller.errors import RequestError
from controller.games.catalog import get_game
from controller.games.rules import GameId
from controller.table import commands as cmd
from controller.table import events as ev
from drivers import events as dev
from firmware_sim.faults import FaultSpec

log = structlog.get_logger("controller.bench")

STUCK_SECONDS = 60.0
"""No input at all reaches the table for this long: the round is stuck (the supervisor voids
it). It judges the absence of progress, never the length of a step: a reconnect, a backoff or
a loaded machine makes a step slower, not stuck."""
LOOK_SECONDS = 0.25
"""How often the bench looks up while it waits for the table: once the device side has
settled, the supervisor reads ``round status``, as a pit glances at the screen, and acts if
the device operator holds for a supervisor."""


class Bench:
    """``Bench(game, rounds, seed=..., faults=...).run()`` -> :class:`BenchReport`."""

    def __init__(self, game: str, rounds: int, *, seed: int = 0, faults: str | None = None,
                 journal_dir: str | Path | None = None, shuffler: str = "fair",
                 publish: Callable[[Mapping[str, Any]], None] | None = None,
                 progress: Callable[[BenchReport, int], None] | None = None) -> None:
        if rounds < 1:
            raise RequestError(f"--rounds must be at least 1, got {rounds}")
        self.rules = get_game(game)
        self.game = self.rules.id.value
        self.live = self.rules.id is GameId.LIVE_3P
        self.rounds = rounds
        self.seed = seed
        self.rng = random.Random(seed)
        self.fault_list, self.fault_rate = parse_faults(self.game, faults)
        self.faults = faults
        self.report = BenchReport(self.game, rounds, seed)
        self.journal_dir = Path(journal_dir) if journal_dir is not None else None
        self.shuffler = shuffler
        self.report.command = self.command()
        self.publish = publish
        """What ``tablectl watch`` would be sent (the service's publish), if anyone listens."""
        self.progress = progress
        self.out: queue.Queue[tuple[object, list[ev.RoundEvent]]] = queue.Queue()
        self.deck_blocked = False
        self.state = RoundView()

    def command(self) -> str:
        """The command line that runs this bench again: the same seed, the same records (into
        a journal directory of its own, if one is wanted)."""
        words = ["tablectl", "bench", "--game", self.game, "--rounds", str(self.rounds),
                 "--seed", str(self.seed)]
        if self.faults:
            words += ["--faults", self.faults]
        if self.shuffler != "fair":
            words += ["--shuffler", self.shuffler]
        # no --journal-dir: a second run into the first one's journal would continue it, not
        # repeat it (give a new directory to keep the rerun's journal)
        return shlex.join(words)

    def run(self) -> BenchReport:
        started = time.monotonic()
        rig = BenchRig(self.game, self.seed, self.journal_dir, self._observe, self.shuffler,
                       self.publish)
        self.rig = rig
        self.injector = FaultInjector(rig.inject, rig.plan, self.seed, live=self.live)
        self.players = Players(self.rules, self.rng, self.put, live=self.live)
        self.supervisor = Supervisor(self.put, rig.cards_in_hand)
        with rig:
            for index in range(self.rounds):
                self._round(index)
                if self.progress is not None:
                    self.progress(self.report, index + 1)
            # what the devices were still doing as the last round ended (a set dispensed as
            # the link dropped, a hand lifted) reaches the journal before it closes, every run
            self.settle()
        # After the rig closed the journal: the count includes its last records (the devices'
        # final notes, journal_closed), the same count `journal verify` reports.
        self.report.journal = rig.summary
        self.report.faults_injected.update(self.injector.injected)
        self.report.seconds = time.monotonic() - started
        return self.report

    def put(self, command: cmd.Command) -> None:
        """A person's command, once the device side has settled: it lands after everything
        the machines did, at the same point of the journal every run."""
        self.settle()
        self.rig.put(command)

    def settle(self) -> None:
        if not self.rig.settle():
            self.report.unsettled += 1

    # on the table thread --------------------------------------------------------------------
    def _observe(self, item: object, events: list[ev.RoundEvent]) -> None:
        """Each input and its events, before the device operator sees them: a planned fault
        appears in the device at once; the people's decisions are taken on the bench
        thread."""
        for event in events:
            self.injector.see(event)
        if events or isinstance(item, dev.FaultRaised):
            self.out.put((item, events))

    # one round ------------------------------------------------------------------------------
    def _fault_for(self, index: int) -> FaultSpec | None:
        if self.fault_rate >= 0:
            if self.fault_list and self.rng.random() < self.fault_rate:
                return self.rng.choice(self.fault_list)
            return None
        return self.fault_list[index % len(self.fault_list)] if self.fault_list else None

    def _round(self, index: int) -> None:
        self.injector.plan(self._fault_for(index))
        state = self.state = RoundView()
        if self.deck_blocked:
            self.supervisor.replace_deck()
            self.deck_blocked = False
        self.put(cmd.OpenRound(**DEALER))
        for wager in self.players.wagers():
            self.put(wager)
        self.put(cmd.CloseBets(**DEALER))
        misses, looked = 0, -1
        progress, since = self.rig.inputs(), time.monotonic()
        while not state.over:
            try:
                item, events = self.out.get(timeout=LOOK_SECONDS)
            except queue.Empty:
                inputs = self.rig.inputs()
                if inputs != progress:
                    progress, since = inputs, time.monotonic()
                if inputs != looked and self.out.empty() and self.rig.settled():
                    looked = inputs  # once per settled point: it acts, then the table moves
                    self.supervisor.look(self.rig.operator_status())
                elif time.monotonic() - since >= STUCK_SECONDS:
                    since = time.monotonic()
                    misses += 1
                    self._stuck(misses)
                continue
            if isinstance(item, dev.FaultRaised) and not self.live:
                # the pit fixes the shuffler (frees the jam, turns the card down, takes the
                # foreign card out) and clears its fault: `tablectl supervisor clear-fault`
                self.supervisor.clear_fault(item.device, item.fault.value)
            for event in events:
                self._on_event(event)
            if self.deck_blocked and state.closed and not state.over and not state.hands \
                    and not state.counted:
                # blocked and nothing ruled (a statistical finding): the dealer counts the deck
                # by hand, as MBS-R3P 5.9 has it; the table rules the count
                state.counted = True
                self.put(cmd.DeckCounted(**DEALER, count=self.rig.count_by_hand()))

    # reacting to the table ------------------------------------------------------------------
    def _on_event(self, event: ev.RoundEvent) -> None:
        state, report = self.state, self.report
        if isinstance(event, ev.RoundOpened):
            state.number = event.round
        elif isinstance(event, ev.BetsClosed):
            state.closed = True
            state.wagers = {w.id: w for w in event.wagers}
        elif isinstance(event, ev.DeviceNoted) and event.detail == "DeviceOnline":
            if state.close_refused and not state.closed:
                state.close_refused = False
                self.put(cmd.CloseBets(**DEALER))
            if state.held is not None:
                self._supervise(state.held)
        elif isinstance(event, ev.HandComplete):
            state.hands[event.position] = event.cards
        elif isinstance(event, ev.DecisionMade):
            state.wagers.update({w.id: w for w in event.play_wagers})
        elif isinstance(event, ev.DealComplete):
            self._finish()
        elif isinstance(event, ev.SupervisorRequired):
            self._supervise(event)
        elif isinstance(event, ev.PlayerOptionsOffered):
            self.players.options(event)
        elif isinstance(event, ev.HandRemoved):
            report.hands_removed += 1
        elif isinstance(event, ev.CommandRefused) and event.command == "CloseBets":
            state.close_refused = True  # a device is offline: "No more bets" when it is back
        elif isinstance(event, ev.DeckBlocked):
            self.deck_blocked = True
        elif isinstance(event, ev.DeckReleased):
            self.deck_blocked = False
        elif isinstance(event, ev.ProtectionAlert):
            report.protection_alerts[event.monitor] += 1
        elif isinstance(event, ev.RoundVoided):
            report.voided += 1
            report.voids_by_clause[event.clause] += 1
            state.over = True
        elif isinstance(event, ev.RoundSettled):
            report.settled += 1
            self._tally(event)
            state.over = True

    def _supervise(self, event: ev.SupervisorRequired) -> None:
        """The pit decides once the device side has settled, which includes the device being
        back: "continue" on an interruption while the shuffler is still unplugged would only
        ask the operator to deal into a dead port."""
        self.settle()
        if event.kind == "interruption" and not self.rig.device_online():
            self.state.held = event
            return
        self.state.held = None
        self.supervisor.decide(event)

    def _finish(self) -> None:
        """The deal is complete: players decide (RWS-3CP), the dealer reveals and settles."""
        state = self.state
        if state.finishing:
            return
        state.finishing = True
        self.players.decide({w.position for w in state.wagers.values() if w.bet == "ante"},
                            state.hands)
        if not self.live:
            self.put(cmd.RevealDealer(**DEALER))
        self.put(cmd.SettleRound(**DEALER))

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

    def _stuck(self, misses: int) -> None:
        """Nothing happened for a while: the product left the round waiting (``round status``
        names the operator's last failure). The supervisor voids it (general provision); a
        second miss gives up on the run."""
        self.report.stuck += 1
        log.warning("bench round stuck", round=self.state.number, misses=misses,
                    status=self.rig.waits())
        if misses == 1:
            self.supervisor.rule("void", "bench: round stuck")
            return
        raise RuntimeError(f"bench round {self.state.number} is stuck: "
                           f"{self.rig.waits()}")


__all__ = ["Bench"]
