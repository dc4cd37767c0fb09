"""``tablectl games [--json]``: the rule sets, their bet types, pay tables and positions."""

from __future__ import annotations

import argparse
from typing import Any

from controller.cli.output import print_json
from controller.games.catalog import GAMES
from controller.games.rules import Family, GameRules, PayLine
from controller.settlement.model import ProgressiveConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("games", help="list the rule sets, bets and pay tables")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def _line(line: PayLine) -> dict[str, Any]:
    """One pay line; the amounts a player-facing table needs are kept as numbers: ``fixed`` and
    ``envy_bonus`` in minor units, ``jackpot_percent`` of the meter (RWS-3CP 4.4's columns)."""
    out: dict[str, Any] = {"key": line.key, "label": line.label, "pays": line.describe(),
                           "clause": line.clause}
    for name in ("fixed", "jackpot_percent", "envy_bonus"):
        if getattr(line, name) is not None:
            out[name] = getattr(line, name)
    return out


def game_summary(rules: GameRules) -> dict[str, Any]:
    summary = {
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
                "paytable": [_line(line) for line in spec.paytable],
            }
            for spec in rules.bets.values()
        },
        "ranking": list(rules.rank_names),
    }
    if rules.family is Family.THREE_CARD_POKER:
        # 4.4 prints sums for a stake it does not state: the table's setting (docs/money.md).
        summary["progressive_stake"] = ProgressiveConfig().stake
        summary["progressive_sums"] = PROGRESSIVE_SUMS
    return summary


PROGRESSIVE_SUMS = ("paid for the stake: a fixed sum is the whole payout, the stake not "
                    "returned on top (RWS-3CP 4.4 prints the sums and no stake; docs/money.md)")
"""The reading of RWS-3CP 4.4's fixed sums that settlement applies, said where they are shown."""


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
                envy = f"envy {line['envy_bonus']}" if "envy_bonus" in line else ""
                print(f"      {line['label']:<48} {line['pays']:<31} {envy:<11} "
                      f"{line['clause']}".rstrip())
        if "progressive_stake" in summary:
            print(f"  progressive stake: {summary['progressive_stake']} (minor units, a table "
                  "setting)")
            print(f"  progressive sums: {summary['progressive_sums']}")
        print()
    return 0
