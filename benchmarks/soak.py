"""Crash soak: the controller SIGKILLed over many rounds, mostly mid-round, restarted with
recovery each time (the CI version is tests/crash: 4 games x 50 rounds, 7 kills each).

Each controller life is killed at a seeded target (testbed/crash/targets.py): most just after the
k-th event of the deal ("No more bets", the shuffle, a card, a hand, the end of the deal, an
RWS-3CP decision, the reveal) plus 0-30 ms, the rest (``--timed-share``) at a random time.

Run: ``python benchmarks/soak.py --game rws-nc-three-pictures --rounds 2000 --kills 200
[--seed N] [--timed-share F] [--dir PATH] [--json]``; ``--game`` is any game the rig has a
power-failure expectation for (RWS-NC3P, MBS-R3P, MBS-3P, RWS-3CP). Exit 0 when the journal
verifies, replays without divergence and reconciles (every wager settled or returned exactly
once, every interrupted round ended as its clause says); 1 otherwise, with the problems listed.
The output counts the kills that landed mid-round and the shuffler's hands dispensed vs. the
sets the journal holds (equal once device events are acknowledged only after the journal).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.journal import iter_records, verify  # noqa: E402
from controller.journal.replay import replay_records  # noqa: E402
from firmware_sim.framed import bind_server  # noqa: E402
from firmware_sim.serve import PtyServer  # noqa: E402
from firmware_sim.shuffler import ShufflerSim  # noqa: E402
from testbed.crash.rig import (  # noqa: E402
    GAMES,
    check_journal,
    dispensed_vs_journaled,
    run_crash_campaign,
    summary,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="rws-nc-three-pictures", choices=GAMES)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timed-share", type=float, default=0.2,
                        help="share of lives killed at a random time instead of an event")
    parser.add_argument("--dir", default=None, help="keep the journal here (default: temp)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    # the replay below logs every irregularity it re-rules at info; the result is the output
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
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
                                          timed_share=args.timed_share,
                                          finish_timeout=max(600.0, args.rounds * 2.0))
        finally:
            server.close()
        elapsed = time.monotonic() - started
        verified = verify([base / "journal"])
        replay = replay_records(iter_records([base / "journal"]))
        findings = check_journal(base / "journal", args.game)
        dispensed, journaled = dispensed_vs_journaled(sim, base / "journal")
    problems = list(findings.problems) + [d.describe() for d in replay.divergences]
    if not verified.ok and verified.problem is not None:
        problems.append(verified.problem.describe())
    numbers = summary(campaign, findings)
    kills_in_order = numbers.pop("kills_in_order")
    result = {"game": args.game, **numbers, "restarts": campaign.restarts,
              "settled": findings.settled, "voided": findings.voided,
              "wagers": findings.wagers, "staked": findings.staked, "results": findings.results,
              "returned": findings.returned, "hands_dispensed": dispensed,
              "sets_journaled": journaled, "seconds": round(elapsed, 1), "problems": problems}
    if args.json:
        result["kills_in_order"] = kills_in_order
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>18}: {value}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
