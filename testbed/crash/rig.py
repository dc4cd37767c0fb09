"""Crash rig: a controller process (the service's table thread, :class:`TableThread`, around the
recovered JournaledTable + shuffler driver + automated dealer, players and supervisor) that is
SIGKILLed mid-round and restarted with recovery, against a simulated shuffler that keeps running
(the devices have their own power; the controller is what fails).

``python -m testbed.crash.rig controller --dir D --link L --game G --rounds N --seed S`` runs one
controller life: recover, then play until the journal holds N rounds, then exit 0. It prints
``EVENT <type>`` on stdout, flushed, for every round event it publishes, so that the parent can
aim its kills (:mod:`testbed.crash.targets`); errors go to stderr.
:func:`run_crash_campaign` is the parent: it serves the simulator on a pty, starts controllers
and kills each at a seeded target (most just after an event of the deal, some at a random
time), checks the journal verifies after every kill, and finally lets a controller finish.
:func:`check_journal` (:mod:`testbed.crash.reconcile`, re-exported here) is what the tests assert
on; :func:`dispensed_vs_journaled` compares the shuffler's hand meter with the sets the journal
holds.
"""

from __future__ import annotations

import argparse
import queue
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.table import commands as cmd
from controller.table import events as ev
from testbed.crash.reconcile import GAMES, Findings, check_journal
from testbed.crash.targets import (
    EVENT_PREFIX,
    THREE_CARD_POKER,
    ChildOutput,
    How,
    Strike,
    count,
    plan_targets,
    strike,
)

if TYPE_CHECKING:
    from controller.table.machine import RoundMachine
    from firmware_sim.shuffler import ShufflerSim

__all__ = ["GAMES", "Campaign", "DecisionsDue", "Findings", "check_journal",
           "dispensed_vs_journaled", "run_crash_campaign", "spawn", "summary"]

ROOT = Path(__file__).resolve().parents[2]
DECISIONS = (cmd.Choice.PLAY, cmd.Choice.FOLD)
PLAY_WEIGHTS = (3, 1)
"""RWS-3CP 3.8: most players play; enough fold that both branches are killed in."""
THINK_SECONDS = (0.0, 0.04)
"""A player's look at the cards before deciding: without it the decisions follow each other
within a millisecond and no kill lands between two of them (a restart with some boxes decided)."""


# -- the controller process ------------------------------------------------------------------
@dataclass(slots=True)
class DecisionsDue:
    """RWS-3CP 3.8: the Ante boxes of the current round that have still to play or fold.

    The recovery tracker has no decisions phase (from DealComplete on it says DEALT) and the
    round machine belongs to the table thread. So this view is seeded from the machine once,
    before the table thread starts (nothing else can touch the machine then; after a restart the
    round may be held with some boxes decided), and from then on kept by the events the
    operator loop takes off its queue, in the order the table published them: the loop never
    reads table state across threads."""

    antes: list[str] = field(default_factory=list)
    decided: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, machine: RoundMachine) -> DecisionsDue:
        return cls(list(machine.ante_positions()), set(machine.decisions))

    @property
    def pending(self) -> list[str]:
        return [box for box in self.antes if box not in self.decided]

    def see(self, event: ev.RoundEvent) -> None:
        if isinstance(event, (ev.RoundOpened, ev.RoundSettled, ev.RoundVoided)):
            self.antes, self.decided = [], set()
        elif isinstance(event, ev.BetsClosed):
            self.antes = list(dict.fromkeys(w.position for w in event.wagers if w.bet == "ante"))
            self.decided = set()
        elif isinstance(event, ev.DecisionMade):
            self.decided.add(event.position)
        elif isinstance(event, ev.HandRemoved) and event.position in self.antes:
            self.antes.remove(event.position)  # a removed hand does not decide


def _announce(event: ev.RoundEvent) -> None:
    """Tell the parent, one flushed line per event, which event the journal now holds: the
    parent aims its kills at them (a subscriber runs on the table thread, after the journal)."""
    sys.stdout.write(f"{EVENT_PREFIX}{type(event).__name__}\n")
    sys.stdout.flush()


def _bets(rng: random.Random, game: str, initial: str) -> tuple[str, ...]:
    """The bets one box places. RWS-3CP: mostly Ante, some Ante and Pair Plus, a few Pair Plus
    only (3.3: such a box is dealt a hand but has no decision, 3.8.2)."""
    if game != THREE_CARD_POKER:
        return (initial,)
    roll = rng.random()
    return ("pair_plus",) if roll < 0.1 else ("ante", "pair_plus") if roll < 0.4 else ("ante",)


def _controller(args: argparse.Namespace) -> int:
    import structlog

    from controller.journal import Durability, JournalWriter
    from controller.journal.recorder import Phase
    from controller.journal.recovery import recover
    from controller.service.wiring.tablethread import TableThread
    from controller.table.layout import TableLayout
    from drivers.errors import DriverError
    from drivers.shuffler import Shuffler

    # stdout carries the event lines only; errors go to stderr, which the parent keeps
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40),
                        logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    layout = TableLayout.for_game(args.game, table_id="crash")
    writer = JournalWriter(args.dir, table_id="crash", durability=Durability.MONEY)
    journaled, report = recover(writer, layout)
    # the service's own table thread (service/wiring/pipeline.py wires it the same way)
    table = TableThread(journaled)
    out: queue.Queue[ev.RoundEvent] = queue.Queue()
    table.subscribe(out.put)
    table.subscribe(_announce)
    due = DecisionsDue.of(journaled.table.machine)  # before start(): the thread is not running
    # as the service wires it: the journal acknowledges each event once it holds it, and
    # "No more bets" waits until the shuffler has resent what it held when the last life died
    driver = Shuffler(args.link, table.inputs, backoff=(0.02, 0.1),  # type: ignore[arg-type]
                      deferred_ack=True)
    journaled.attach_link("shuffler", driver)
    table.start()
    driver.start()
    rng = random.Random(f"{args.seed}:{report.last_seq}")
    dealer = dict(actor="dana", role=cmd.Role.DEALER)
    supervisor = dict(actor="sam", role=cmd.Role.SUPERVISOR)
    tracker = journaled.tracker
    rules = layout.rules

    def take(timeout: float) -> ev.RoundEvent | None:
        try:
            event = out.get(timeout=timeout) if timeout > 0 else out.get_nowait()
        except queue.Empty:
            return None
        due.see(event)  # every event the loop takes, in order
        return event

    def wait(*kinds: type, timeout: float = 10.0) -> ev.RoundEvent | None:  # ends at the event
        while True:
            event = take(timeout)
            if event is None or isinstance(event, kinds):
                return event

    def drain() -> None:
        while take(0.0) is not None:
            pass

    def idle(seconds: float) -> None:
        """Let ``seconds`` pass taking events as they come (the view stays current)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            take(left)

    def command(action: Any) -> bool:
        try:
            action()
        except DriverError:
            wait(ev.DeviceNoted, timeout=0.1)  # busy or a hand still out: look again
            return False
        return True

    attempt = 0
    placed_for: int | None = None
    while True:
        attempt += 1
        phase = tracker.phase
        if not tracker.open:
            if tracker.round >= args.rounds:
                break
            table.put(cmd.OpenRound(**dealer))
            if wait(ev.RoundOpened) is None:
                continue
            phase = Phase.BETTING
        if phase is Phase.BETTING:
            number = tracker.round
            if placed_for != number:
                placed_for = number
                for box in rng.sample(rules.positions, rng.randint(1, 3)):
                    for bet in _bets(rng, args.game, rules.initial_bet or ""):
                        table.put(cmd.PlaceWager(
                            **dealer, wager_id=f"r{number}-{box}-{bet}-{attempt}", position=box,
                            bet=bet, amount=rng.choice((500, 1000, 2500)), player=f"p{box}"))
            table.put(cmd.CloseBets(**dealer))
            if isinstance(wait(ev.BetsClosed, ev.CommandRefused), ev.CommandRefused):
                wait(ev.DeviceNoted, timeout=0.5)  # the shuffler is still resending: look again
        elif phase is Phase.CLOSED:  # END_ROUND first: SHUFFLE only from idle (protocols.md 5.2)
            if command(driver.end_round) and command(driver.shuffle):
                wait(ev.ShuffleConfirmed, ev.RoundVoided)
        elif phase in (Phase.SHUFFLED, Phase.DEALING):
            if command(driver.dispense_hand):
                wait(ev.HandComplete, ev.DealComplete, ev.RoundVoided, ev.SupervisorRequired,
                     ev.PlayerOptionsOffered)
        elif phase is Phase.OPTIONS:
            for box in list(tracker.options_pending):
                option = rng.choice((cmd.Option.WITHDRAW, cmd.Option.CONTINUE))
                table.put(cmd.PlayerOption(**dealer, position=box, option=option,
                                           player=f"p{box}" if box in rules.positions
                                           else None))
            table.put(cmd.CloseOptions(**dealer))
            wait(ev.PlayerOptionTaken, ev.CommandRefused)
        elif phase is Phase.HOLD:
            action = rng.choice((cmd.SupervisorAction.CONTINUE, cmd.SupervisorAction.VOID))
            table.put(cmd.SupervisorDecision(**supervisor, action=action,
                                             reason="after controller restart"))
            if isinstance(wait(ev.SupervisorDecided, ev.CommandRefused), ev.CommandRefused):
                table.put(cmd.SupervisorDecision(**supervisor, action=cmd.SupervisorAction.VOID,
                                                 reason="after controller restart"))
                wait(ev.SupervisorDecided)
        elif phase is Phase.DEALT:
            drain()  # the view must hold every decision published so far
            if due.pending:  # RWS-3CP 3.8: each Ante box plays or folds before the reveal
                for box in due.pending:
                    idle(rng.uniform(*THINK_SECONDS))
                    choice = rng.choices(DECISIONS, weights=PLAY_WEIGHTS)[0]
                    table.put(cmd.PlayerDecision(**dealer, position=box, choice=choice))
                    if not isinstance(wait(ev.DecisionMade, ev.CommandRefused), ev.DecisionMade):
                        break  # held meanwhile, or not due: the tracker says what next
                continue
            table.put(cmd.RevealDealer(**dealer))
            wait(ev.DealerRevealed, ev.CommandRefused)
        elif phase is Phase.REVEALED:
            table.put(cmd.SettleRound(**dealer))
            wait(ev.RoundSettled, ev.CommandRefused)
    driver.close()
    table.close()
    writer.close()
    return 0


# -- the parent --------------------------------------------------------------------------------
@dataclass
class Campaign:
    """What the parent did: per life, the target it aimed at and how the life ended."""

    rounds: int
    kills: int
    restarts: int = 0
    kill_delays: list[float] = field(default_factory=list)
    """Seconds from each killed controller's start to its kill."""
    verified_after_kill: int = 0
    targets: list[str] = field(default_factory=list)
    strikes: list[Strike] = field(default_factory=list)

    @property
    def killed(self) -> int:
        return len(self.kill_delays)

    @property
    def aimed(self) -> int:
        return count(self.strikes, How.AIMED)

    @property
    def timed(self) -> int:
        return count(self.strikes, How.TIMED)

    @property
    def fallback(self) -> int:
        return count(self.strikes, How.FALLBACK)


def spawn(directory: Path, link: Path, game: str, rounds: int, seed: int
          ) -> tuple[subprocess.Popen[bytes], ChildOutput]:
    """Start one controller life, its stdout and stderr drained from the first byte."""
    process = subprocess.Popen(
        [sys.executable, "-m", "testbed.crash.rig", "controller", "--dir", str(directory),
         "--link", str(link), "--game", game, "--rounds", str(rounds), "--seed", str(seed)],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return process, ChildOutput(process, f"crash-child-{process.pid}")


def run_crash_campaign(directory: Path, link: Path, game: str, rounds: int, kills: int,
                       seed: int, *, timed_share: float = 0.2, min_delay: float = 0.9,
                       max_delay: float = 3.0, aim_deadline: float = 30.0,
                       finish_timeout: float = 600.0) -> Campaign:
    """Kill ``kills`` controllers, each at a seeded target (:func:`plan_targets`: mostly just
    after an event of the deal, ``timed_share`` at a random time in [min_delay, max_delay]),
    verify the journal after each, then let one finish ``rounds`` rounds. The simulator must
    already be serving on ``link``."""
    from controller.journal import verify

    rng = random.Random(seed)
    campaign = Campaign(rounds, kills)
    targets = plan_targets(rng, game, kills, rounds, timed_share=timed_share,
                           min_delay=min_delay, max_delay=max_delay, deadline=aim_deadline)
    for life, target in enumerate(targets):
        process, output = spawn(directory, link, game, rounds, seed * 1000 + life)
        try:
            hit = strike(process, output, target)
        finally:
            _reap(process, output)
        campaign.targets.append(target.describe())
        campaign.strikes.append(hit)
        if hit.how is How.FINISHED:
            _fail_on_error(process, output)
        else:
            campaign.kill_delays.append(hit.after)
        campaign.restarts += 1
        report = verify([directory])
        if not report.ok:
            raise AssertionError(f"journal damaged after kill {life} ({target.describe()}): "
                                 f"{report.problem.describe() if report.problem else ''}")
        campaign.verified_after_kill += 1
    process, output = spawn(directory, link, game, rounds, seed * 1000 + kills)
    try:
        process.wait(timeout=finish_timeout)
    except subprocess.TimeoutExpired:
        _reap(process, output)
        raise AssertionError(f"the last controller did not finish {rounds} rounds: "
                             f"{output.stderr_text()[-2000:]}") from None
    _reap(process, output)
    _fail_on_error(process, output)
    return campaign


def _reap(process: subprocess.Popen[bytes], output: ChildOutput) -> None:
    """The child is gone (killed if still running) and its pipes drained and closed."""
    if process.poll() is None:
        process.kill()
    process.wait()
    output.close()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _fail_on_error(process: subprocess.Popen[bytes], output: ChildOutput) -> None:
    if process.returncode != 0:
        raise AssertionError(f"controller exited {process.returncode}: "
                             f"{output.stderr_text()[-2000:]}")


def dispensed_vs_journaled(sim: ShufflerSim, directory: Path) -> tuple[int, int]:
    """(hands the simulated shuffler dispensed, ``CardSetDispensed`` inputs the journal holds).

    Every hand the device formed must reach the journal exactly once whatever the controller
    was doing when it died: an event acknowledged before the journal held it is lost with the
    process (fewer journaled), one journaled but not acknowledged is sent again (more). The
    shuffler's hand meter survives reboots (``meters[1]``); read under the sim's lock."""
    from controller.journal import iter_records

    with sim.lock:
        dispensed = sim.meters[1]
    journaled = sum(1 for record in iter_records([directory])
                    if record.event_type == "input_device"
                    and record.payload.get("type") == "CardSetDispensed")
    return dispensed, journaled


def summary(campaign: Campaign, findings: Findings) -> dict[str, Any]:
    """The numbers of a campaign, plain (the soak prints them; the test prints them so that a
    failure shows where the kills landed). ``kills_in_order`` pairs each target with the phase
    the journal was left in; a kill before the child's recovery started shifts the pairs."""
    return {"rounds": findings.rounds, "kills": campaign.killed, "aimed": campaign.aimed,
            "timed": campaign.timed, "fallback": campaign.fallback,
            "mid_round_kills": findings.mid_round_kills, "kill_phases": dict(findings.kill_phases),
            "recoveries_cut": findings.recoveries_cut,
            "interrupted": dict(findings.interrupted),
            "late_device_events": findings.late_device_events,
            "stale_sets": findings.stale_sets,
            "kills_in_order": [f"{target} -> {phase}" for target, phase
                               in zip(campaign.targets, findings.kill_sequence)]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.crash.rig")
    sub = parser.add_subparsers(dest="mode", required=True)
    run = sub.add_parser("controller")
    run.add_argument("--dir", required=True)
    run.add_argument("--link", required=True)
    run.add_argument("--game", required=True)
    run.add_argument("--rounds", type=int, required=True)
    run.add_argument("--seed", type=int, default=0)
    return _controller(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
