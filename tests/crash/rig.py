"""Crash rig: a controller process (JournaledTable + shuffler driver + automated operator) that
is SIGKILLed at random moments and restarted with recovery, against a simulated shuffler that
keeps running (the devices have their own power; the controller is what fails).

``python -m tests.crash.rig controller --dir D --link L --game G --rounds N --seed S`` runs one
controller life: recover, then play until the journal holds N rounds, then exit 0.
:func:`run_crash_campaign` is the parent: it serves the simulator on a pty, starts and kills
controllers (seeded delays), checks the journal verifies after every kill, and finally lets a
controller finish. :func:`check_journal` is what the tests assert on.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


# -- the controller process ------------------------------------------------------------------
def _controller(args: argparse.Namespace) -> int:
    import structlog

    from controller.journal import Durability, JournalWriter
    from controller.journal.recorder import Phase
    from controller.journal.recovery import recover
    from controller.table import commands as cmd
    from controller.table import events as ev
    from controller.table.layout import TableLayout
    from drivers.errors import DriverError
    from drivers.shuffler import Shuffler

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    layout = TableLayout.for_game(args.game, table_id="crash")
    writer = JournalWriter(args.dir, table_id="crash", durability=Durability.MONEY)
    table, report = recover(writer, layout)
    out: queue.Queue[ev.RoundEvent] = queue.Queue()
    table.subscribe(out.put)
    table.start()
    driver = Shuffler(args.link, table.inputs, backoff=(0.02, 0.1))  # type: ignore[arg-type]
    driver.start()
    rng = random.Random(f"{args.seed}:{report.last_seq}")
    dealer = dict(actor="dana", role=cmd.Role.DEALER)
    supervisor = dict(actor="sam", role=cmd.Role.SUPERVISOR)
    tracker = table.tracker
    rules = layout.rules

    def wait(*kinds: type, timeout: float = 2.0) -> ev.RoundEvent | None:
        while True:
            try:
                event = out.get(timeout=timeout)
            except queue.Empty:
                return None
            if isinstance(event, kinds):
                return event

    def command(action: Any) -> bool:
        try:
            action()
        except DriverError:
            wait(ev.DeviceNoted, timeout=0.1)  # busy or a hand still out: look again
            return False
        return True

    attempt = 0
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
            for box in rng.sample(rules.positions, rng.randint(1, 3)):
                table.put(cmd.PlaceWager(**dealer, wager_id=f"r{number}-{box}-{attempt}",
                                         position=box, bet=rules.initial_bet,
                                         amount=rng.choice((500, 1000, 2500)),
                                         player=f"p{box}"))
            table.put(cmd.CloseBets(**dealer))
            wait(ev.BetsClosed)
        elif phase is Phase.CLOSED:
            if command(driver.shuffle):
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
    rounds: int
    kills: int
    restarts: int = 0
    kill_delays: list[float] = field(default_factory=list)
    verified_after_kill: int = 0


def spawn(directory: Path, link: Path, game: str, rounds: int, seed: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.crash.rig", "controller", "--dir", str(directory),
         "--link", str(link), "--game", game, "--rounds", str(rounds), "--seed", str(seed)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def run_crash_campaign(directory: Path, link: Path, game: str, rounds: int, kills: int,
                       seed: int, *, min_delay: float = 0.9, max_delay: float = 3.0, finish_timeout: float = 600.0
                       ) -> Campaign:
    """Kill ``kills`` controllers at seeded random moments, verify after each, then let one
    finish ``rounds`` rounds. The simulator must already be serving on ``link``."""
    from controller.journal import verify

    rng = random.Random(seed)
    campaign = Campaign(rounds, kills)
    for life in range(kills):
        delay = rng.uniform(min_delay, max_delay)
        process = spawn(directory, link, game, rounds, seed * 1000 + life)
        try:
            process.wait(timeout=delay)  # a random moment; it may have finished already
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            campaign.kill_delays.append(delay)
        else:
            _fail_on_error(process)
        if process.stderr is not None:
            process.stderr.close()
        campaign.restarts += 1
        report = verify([directory])
        if not report.ok:
            raise AssertionError(f"journal damaged after kill {life}: "
                                 f"{report.problem.describe() if report.problem else ''}")
        campaign.verified_after_kill += 1
    process = spawn(directory, link, game, rounds, seed * 1000 + kills)
    try:
        process.wait(timeout=finish_timeout)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        raise AssertionError(f"the last controller did not finish {rounds} rounds") from None
    _fail_on_error(process)
    if process.stderr is not None:
        process.stderr.close()
    return campaign


def _fail_on_error(process: subprocess.Popen[bytes]) -> None:
    if process.returncode != 0:
        err = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise AssertionError(f"controller exited {process.returncode}: {err[-2000:]}")


# -- what the journal must show ------------------------------------------------------------
@dataclass
class Findings:
    rounds: int = 0
    settled: int = 0
    voided: int = 0
    wagers: int = 0
    staked: int = 0
    results: int = 0
    returned: int = 0
    interrupted: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


CLAUSES = {
    "rws-nc-three-pictures": {(False, "void"): "RWS-NC3P 5.4.2",
                              (True, "continue"): "RWS-NC3P 5.4.1"},
    "mbs-royal-three-pictures": {(False, "player_options"): "MBS-R3P 5.13.1",
                                 (True, "continue"): "MBS-R3P 5.13.2"},
}
"""The power-failure clauses: (outcome established, ruling) -> clause. Other games: supervisor."""


def check_journal(directory: Path, game: str) -> Findings:
    """Reconcile: every wager accepted is settled or returned exactly once; every round ends
    once; every round a restart interrupted ends as its clause says (read from the restart's
    own input record, ``DeviceOffline`` of ``controller``, and the outputs that follow it)."""
    from controller.journal import iter_records

    found = Findings()
    placed: dict[str, int] = {}
    paid: Counter[str] = Counter()
    ends: Counter[str] = Counter()
    opened: set[str] = set()
    end_of: dict[str, str] = {}
    restarts: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for record in iter_records([directory]):
        payload = record.payload
        event = record.event_type
        if event.startswith("input_"):
            fields = payload["fields"]
            current = None
            if payload["type"] == "DeviceOffline" and fields["device"] == "controller":
                current = {"round": record.round_id, "established": None, "ruling": "noted",
                           "clause": None}
                restarts.append(current)
        elif current is not None and event == "outcome_established":
            current["established"] = payload["established"]
        elif current is not None and event == "irregularity_ruled":
            current["ruling"], current["clause"] = payload["action"], payload["clause"]
        if event == "round_opened":
            opened.add(str(payload["round"]))
        elif event == "wager_accepted":
            wager = payload["wager"]
            if wager["id"] in placed:
                found.problems.append(f"wager {wager['id']} accepted twice")
            placed[wager["id"]] = wager["amount"]
        elif event == "decision_made":
            for wager in payload["play_wagers"]:
                placed[wager["id"]] = wager["amount"]
        elif event == "wager_withdrawn":
            placed.pop(payload["wager_id"], None)
        elif event in ("round_settled", "round_voided"):
            ends[str(payload["round"])] += 1
            end_of[str(payload["round"])] = (
                f"void {payload['clause']}" if event == "round_voided" else "settled")
            for result in payload["settlement"]["results"]:
                paid[result["wager_id"]] += 1
                found.results += 1
                found.returned += result["outcome"] == "returned"
    found.rounds = len(opened)
    found.settled = sum(1 for e in end_of.values() if e == "settled")
    found.voided = len(end_of) - found.settled
    found.wagers, found.staked = len(placed), sum(placed.values())
    for number in sorted(opened, key=int):
        if ends[number] != 1:
            found.problems.append(f"round {number} ended {ends[number]} times")
    for wager_id in placed:
        if paid[wager_id] != 1:
            found.problems.append(f"wager {wager_id} settled {paid[wager_id]} times")
    for wager_id in paid:
        if wager_id not in placed:
            found.problems.append(f"settlement of a wager never placed: {wager_id}")
    expected = CLAUSES.get(game)
    for restart in restarts:
        number, ruling = restart["round"], restart["ruling"]
        found.interrupted[ruling] += 1
        if ruling == "noted":
            continue  # betting, or already held: nothing was decided by the restart
        if expected is None:
            if ruling != "supervisor":
                found.problems.append(f"round {number}: {ruling}; no clause -> supervisor")
            continue
        key = (bool(restart["established"]), ruling)
        if expected.get(key) != restart["clause"]:
            found.problems.append(f"round {number}: {ruling} ({restart['clause']}) with "
                                  f"established={restart['established']} is not the clause")
        if ruling == "void" and end_of.get(number) != f"void {restart['clause']}":
            found.problems.append(f"round {number}: voided on restart, ended {end_of.get(number)}")
        if ruling == "continue" and end_of.get(number) != "settled":
            found.problems.append(f"round {number}: continued on restart, ended "
                                  f"{end_of.get(number)}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.crash.rig")
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
