"""``tablectl games [--json]``: the rule sets, their bet types, pay tables and positions."""

from __future__ import annotations

import argparse
from typing import Any

from controller.cli.output import print_json
from controller.games.catalog import GAMES
from controller.games.rules import GameRules


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("games", help="list the rule sets, bets and pay tables")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def game_summary(rules: GameRules) -> dict[str, Any]:
    return {
        "id": rules.id.value,
        "cite": rules.cite,
        "title": rules.title,
        "version": rules.version,
        "positions": list(rules.positions),
        "dealer": rules.dealer,
        "bets": {
            spec.bet: {
                "title": spec.title,
                "clause": spec.clause,
                "positions": list(spec.positions),
                "requires": spec.requires,
                "paytable": [{"key": line.key, "label": line.label, "pays": line.describe(),
                              "clause": line.clause} for line in spec.paytable],
            }
            for spec in rules.bets.values()
        },
        "ranking": list(rules.rank_names),
    }


def run(args: argparse.Namespace) -> int:
    summaries = [game_summary(rules) for rules in GAMES.values()]
    if args.json:
        print_json({"games": summaries})
        return 0
    for summary in summaries:
        print(f"{summary['id']}  ({summary['cite']}: {summary['title']}, {summary['version']})")
        print(f"  positions: {' '.join(summary['positions'])}  vs  {summary['dealer']}")
        for bet, spec in summary["bets"].items():
            where = "" if spec["positions"] == summary["positions"] else \
                f" [at {' '.join(spec['positions'])}]"
            print(f"  {bet}: {spec['title']}{where}")
            for line in spec["paytable"]:
                print(f"      {line['label']:<48} {line['pays']:<30} {line['clause']}")
        print()
    return 0
