"""Risk in money of a flagged one-pass shuffler (issue 25): every bet of the five games, the
player's return per 100.00 staked on a fair shuffle (exact enumeration, ``tablectl odds``) and
on the one-pass machine of 10 and 20 shelves, blind and for a player guessing with the
machine's posterior (:mod:`controller.protection.risk`), fed a new deck or the collected cards.

Each cell is ``return +- one standard error`` in minor units per 100.00 staked (10,000 minor
units), rounded to the unit with halves to even; "taken" is the share of the guessing player's
chances (boxes times deals) on which he bet. Every box of the table receives cards (a full
table: 8 boxes in the Three Pictures casino games, 7 in RWS-3CP, LIVE-3P's three hands).

Run: ``python benchmarks/risk.py [--json] [--games ...] [--shelves 10,20]
[--feeds new-deck,collected-reversed] [--deals N] [--collected-deals N] [--inner N]
[--seed N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from controller.analysis.odds import game_odds
from controller.games.catalog import GAMES, get_game
from controller.protection.feed import Feed
from controller.protection.risk import Machine, RiskReport, estimate


def run(game_id: str, shelves: int | None, feed: Feed, deals: int, inner: int,
        seed: int) -> tuple[RiskReport, float]:
    rules = get_game(game_id)
    fair = {bet: -odds.house_edge for bet, odds in game_odds(rules).items()}
    started = time.perf_counter()
    report = estimate(rules, Machine(shelves, feed), random.Random(seed), deals=deals,
                      inner=inner, fair=fair, seed=seed)
    return report, time.perf_counter() - started


def _cell(per_hundred: int, se: int) -> str:
    return f"{per_hundred:+d} +- {se}"


def table(rows: list[tuple[RiskReport, float]]) -> str:
    out = ["| game | machine | feed | deals | bet | fair | blind | guessing | taken | seconds |",
           "|---|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for report, seconds in rows:
        for bet in report.bets:
            guessed = (_cell(bet.guessed.per_hundred, bet.guessed.se_per_hundred)
                       if bet.taken else "never bets")
            out.append(
                f"| {report.game.value} | {report.machine.name} | {report.machine.feed.value} "
                f"| {report.deals} | {bet.bet} | {round(bet.fair * 10_000):+d} | "
                f"{_cell(bet.blind.per_hundred, bet.blind.se_per_hundred)} | {guessed} | "
                f"{bet.taken / bet.offered:.2f} | {seconds:.1f} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--shelves", default="10,20", help="shelf counts; 'fair' for a check")
    parser.add_argument("--feeds", default="new-deck,collected-reversed")
    parser.add_argument("--deals", type=int, default=20_000, help="deals fed a new deck")
    parser.add_argument("--collected-deals", type=int, default=2_000,
                        help="deals fed the collected cards (each guessed with --inner more)")
    parser.add_argument("--inner", type=int, default=40)
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    rows = []
    for game_id in args.games.split(","):
        for shelf in args.shelves.split(","):
            shelves = None if shelf == "fair" else int(shelf)
            for feed_name in args.feeds.split(","):
                feed = Feed(feed_name)
                deals = args.deals if feed is Feed.NEW_DECK else args.collected_deals
                rows.append(run(game_id, shelves, feed, deals, args.inner, args.seed))
    if args.json:
        out: list[dict[str, Any]] = [{**report.as_json(), "seconds": round(seconds, 2)}
                                     for report, seconds in rows]
        print(json.dumps(out, indent=1))
    else:
        print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
