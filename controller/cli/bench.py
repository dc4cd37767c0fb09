"""``tablectl bench --game GAME --rounds N [--seed S] [--faults LIST|RATE] [--json]
[--journal-dir DIR] [--shuffler MODEL]``: a simulated table end to end (see :mod:`controller.bench`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from controller.bench import Bench, BenchReport, applicable_faults, summary_lines
from controller.cli.output import print_json
from controller.logsetup import status_line
from firmware_sim.shuffle_models import ShuffleModel


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench", help="drive a simulated table end to end and summarise the results")
    parser.add_argument("--game", required=True, help="game id (see 'tablectl games')")
    parser.add_argument("--rounds", type=int, default=100, help="rounds to play (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of devices and wagers")
    parser.add_argument("--faults", default=None,
                        help="comma-separated faults, one per round in turn (e.g. set2,exposed),"
                             " or a rate (0.1: a random applicable fault in 10%% of rounds); "
                             f"casino tables: {','.join(applicable_faults('rws-three-card-poker'))}"
                             f"; LIVE-3P: {','.join(applicable_faults('live-three-pictures'))}")
    parser.add_argument("--shuffler", default="fair", choices=[m.value for m in ShuffleModel],
                        help="how the simulated shuffler orders its deck: fair, or a faulty "
                             "machine the game-protection monitors should catch")
    parser.add_argument("--journal-dir", default=None,
                        help="write every table input and round event to a journal here")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)


def _progress(rounds: int, quiet: bool):
    terminal = sys.stderr.isatty()
    every = max(1, rounds // 10)

    def show(report: BenchReport, done: int) -> None:
        line = (f"round {done}/{rounds}: settled {report.settled}, voided {report.voided}, "
                f"hands removed {report.hands_removed}")
        if terminal:  # log lines clear and redraw it (controller.logsetup)
            status_line(line, final=done == rounds)
        elif not quiet and (done % every == 0 or done == rounds):
            print(line, flush=True)  # off a terminal stderr holds only log lines

    return show


def run(args: argparse.Namespace) -> int:
    bench = Bench(args.game, args.rounds, seed=args.seed, faults=args.faults,
                  journal_dir=args.journal_dir, shuffler=args.shuffler, progress=_progress(args.rounds, args.json))
    report = bench.run()
    if args.json:
        print_json(report.as_json())
    else:
        for line in summary_lines(report):
            print(line)
    return 0
