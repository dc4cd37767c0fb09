"""One seed, one run (issue 44): how many rounds differ between two ``tablectl bench`` runs of
the same seed, the wall clock left out (:mod:`testbed.determinism` says what that is).

Each run is the command line itself (``tablectl bench ... --journal-dir DIR`` in a process of
its own, as an engineer reruns a failing seed), into a journal directory of its own; the two
journals are then compared record by record. ``--load N`` runs N CPU-bound processes beside
(a busy machine is where thread interleavings and wall-clock timeouts show).

Run: ``python benchmarks/determinism.py --game rws-nc-three-pictures --rounds 200 --seed 11
--faults 0.3 [--load 2] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testbed.determinism import compare_journals  # noqa: E402

BURN = "while True: pass"


def bench_command(game: str, rounds: int, seed: int, faults: str | None,
                  journal: Path) -> list[str]:
    command = [sys.executable, "-m", "controller", "bench", "--game", game, "--rounds",
               str(rounds), "--seed", str(seed), "--journal-dir", str(journal), "--json"]
    return command + (["--faults", faults] if faults else [])


def measure(game: str, rounds: int, seed: int, faults: str | None, load: int = 0,
            runs: int = 2) -> dict[str, Any]:
    """``runs`` bench runs of one seed, each compared with the first."""
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(load)]
    try:
        with tempfile.TemporaryDirectory(prefix="determinism-") as scratch:
            journals, reports, seconds = [], [], []
            for run in range(runs):
                journal = Path(scratch) / f"run{run}"
                started = time.monotonic()
                done = subprocess.run(bench_command(game, rounds, seed, faults, journal),
                                      capture_output=True, text=True, check=False)
                seconds.append(round(time.monotonic() - started, 1))
                if done.returncode != 0:
                    raise RuntimeError(f"bench run {run} failed ({done.returncode}): "
                                       f"{done.stderr[-2000:]}")
                journals.append(journal)
                reports.append(json.loads(done.stdout))
            comparisons = [compare_journals(journals[0], other) for other in journals[1:]]
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    return {
        "game": game, "rounds": rounds, "seed": seed, "faults": faults, "load": load,
        "seconds": seconds,
        "rounds_differing": [c.rounds_differing for c in comparisons],
        "money_differing": [c.money_differing for c in comparisons],
        "settled": [r["settled"] for r in reports], "voided": [r["voided"] for r in reports],
        "stuck": [r["stuck"] for r in reports],
        "net": [{bet: tally["net"] for bet, tally in r["bets"].items()} for r in reports],
        "first_difference": next((c.differences[0].describe() for c in comparisons
                                  if c.differences), None),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="rws-nc-three-pictures")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--faults", default="0.3")
    parser.add_argument("--load", type=int, default=0, help="CPU-bound processes beside")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = measure(args.game, args.rounds, args.seed, args.faults, args.load, args.runs)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key}: {value}")
    return 0 if not any(figures["rounds_differing"]) else 1


if __name__ == "__main__":
    sys.exit(main())
