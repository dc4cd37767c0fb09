"""``tablectl odds GAME [--json]``: exact house edge of every bet by enumeration."""

from __future__ import annotations

import argparse
from typing import Any

from controller.analysis.odds import game_odds, hand_class_counts
from controller.cli.output import minor_units, print_json, print_table
from controller.games.catalog import get_game
from controller.games.rules import Family
from controller.settlement.model import ProgressiveConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("odds", help="exact house edge of every bet")
    parser.add_argument("game", help="game id (see 'tablectl games')")
    parser.add_argument("--jackpot", type=minor_units(0), default=0,
                        help="RWS-3CP progressive meter in minor units (default 0)")
    parser.add_argument("--progressive-stake", type=minor_units(1),
                        default=ProgressiveConfig().stake,
                        help="RWS-3CP progressive stake in minor units (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = get_game(args.game)
    odds = game_odds(rules, jackpot=args.jackpot, progressive_stake=args.progressive_stake)
    out: dict[str, Any] = {"game": rules.id.value,
                           "bets": {bet: o.as_json() for bet, o in odds.items()}}
    if rules.family is Family.THREE_CARD_POKER:
        out["hand_classes"] = hand_class_counts()
    if args.json:
        print_json(out)
        return 0
    rows = []
    for bet, o in odds.items():
        extra = f"element of risk {float(o.element_of_risk):.4%}" \
            if o.element_of_risk is not None else ""
        rows.append([bet, f"{float(o.house_edge):.4%}", f"{float(o.win_probability):.4%}",
                     " ".join(x for x in (extra, o.note) if x)])
    print(f"{rules.id.value} ({rules.cite})")
    print_table(["bet", "house edge", "P(win)", "note"], rows)
    return 0
