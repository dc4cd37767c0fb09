"""``tablectl bench --game GAME --rounds N [--seed S] [--faults LIST|RATE] [--json]
[--journal-dir DIR] [--shuffler MODEL]``: a simulated table end to end (see :mod:`controller.bench`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from controller.bench import Bench, BenchReport, applicable_faults, summary_lines
from controller.bench.rig import bench_config
from controller.cli.argtypes import nonempty_path
from controller.cli.output import print_json
from controller.errors import RequestError
from controller.games.rules import GameId
from controller.logsetup import status_line
from controller.service.config import DeviceKind
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
    parser.add_argument("--shuffler", default=None, choices=[m.value for m in ShuffleModel],
                        help="how the simulated shuffler orders its deck: fair (the default), "
                             "or a faulty machine the game-protection monitors should catch; "
                             "only for the games dealt from a shuffler: "
                             f"{', '.join(_shuffler_games())}")
    parser.add_argument("--journal-dir", type=nonempty_path, default=None, metavar="DIR",
                        help="write every table input and round event to a journal here")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)


def _shuffler_games() -> list[str]:
    """The games whose bench table deals from a shuffler, as the bench's own config wires it
    (LIVE-3P deals from a card-reading shoe: a shuffle model means nothing there)."""
    return [game.value for game in GameId
            if bench_config(game.value, 0, Path(), ephemeral=True).device.kind
            is DeviceKind.SHUFFLER]


def _shuffler(game: str, model: str | None) -> str:
    """``--shuffler``, refused for a game whose bench table has no shuffler: it used to be
    accepted and silently ignored, and the run looked like a test of that machine."""
    if model is None:
        return ShuffleModel.FAIR.value
    device = bench_config(game, 0, Path(), model, ephemeral=True).device
    if device.kind is not DeviceKind.SHUFFLER:
        raise RequestError(f"--shuffler {model}: the {game} bench table deals from a "
                           f"card-reading shoe ({device.kind.value}), not a shuffler; "
                           f"--shuffler is for {', '.join(_shuffler_games())}")
    return model


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
    shuffler = _shuffler(args.game, args.shuffler)
    bench = Bench(args.game, args.rounds, seed=args.seed, faults=args.faults,
                  journal_dir=args.journal_dir, shuffler=shuffler,
                  progress=_progress(args.rounds, args.json))
    try:
        report = bench.run()
    except BaseException:
        # a failing run says how to run it again: the same seed writes the same records
        print(f"tablectl bench: seed {args.seed} failed; rerun: {bench.command()}",
              file=sys.stderr, flush=True)
        raise
    if args.json:
        print_json(report.as_json())
    else:
        for line in summary_lines(report):
            print(line)
    return 0
