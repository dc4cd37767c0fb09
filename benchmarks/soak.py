"""Crash soak: the controller SIGKILLed at seeded random moments over many rounds, restarted
with recovery each time (the CI version is tests/crash, 3 x 70 rounds, 7 kills each).

Run: ``python benchmarks/soak.py --game rws-nc-three-pictures --rounds 2000 --kills 200
[--seed N] [--dir PATH] [--json]``. Exit 0 when the journal verifies, replays without
divergence and reconciles (every wager settled or returned exactly once, every interrupted
round ended as its clause says); 1 otherwise, with the problems listed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.journal import iter_records, verify  # noqa: E402
from controller.journal.replay import replay_records  # noqa: E402
from firmware_sim.framed import bind_server  # noqa: E402
from firmware_sim.serve import PtyServer  # noqa: E402
from firmware_sim.shuffler import ShufflerSim  # noqa: E402
from tests.crash.rig import check_journal, run_crash_campaign  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="rws-nc-three-pictures")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", default=None, help="keep the journal here (default: temp)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(args.dir) if args.dir else Path(scratch)
        base.mkdir(parents=True, exist_ok=True)
        sim = ShufflerSim(seed=args.seed, shuffle_seconds=0.01, dispense_seconds=0.005,
                          take_seconds=0.005)
        server = PtyServer(sim, link=base / "shuffler")
        bind_server(sim, server)
        server.start()
        started = time.monotonic()
        try:
            campaign = run_crash_campaign(base / "journal", base / "shuffler", args.game,
                                          args.rounds, args.kills, args.seed,
                                          finish_timeout=max(600.0, args.rounds * 2.0))
        finally:
            server.close()
        elapsed = time.monotonic() - started
        verified = verify([base / "journal"])
        replay = replay_records(iter_records([base / "journal"]))
        findings = check_journal(base / "journal", args.game)
    problems = list(findings.problems) + [d.describe() for d in replay.divergences]
    if not verified.ok and verified.problem is not None:
        problems.append(verified.problem.describe())
    result = {"game": args.game, "rounds": findings.rounds, "kills": len(campaign.kill_delays),
              "restarts": campaign.restarts, "settled": findings.settled,
              "voided": findings.voided, "wagers": findings.wagers, "staked": findings.staked,
              "results": findings.results, "returned": findings.returned,
              "interrupted": dict(findings.interrupted), "seconds": round(elapsed, 1),
              "problems": problems}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>12}: {value}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
