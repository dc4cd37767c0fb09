"""``tablectl odds GAME [--json]``: exact house edge of every bet by enumeration."""

from __future__ import annotations

import argparse
from typing import Any

from controller.analysis.odds import game_odds, hand_class_counts
from controller.cli.argtypes import minor_units
from controller.cli.output import print_json, print_table
from controller.errors import RequestError
from controller.games.catalog import GAMES, get_game
from controller.games.rules import Family, GameRules
from controller.settlement.model import ProgressiveConfig

PROGRESSIVE = "progressive"
"""The bet the progressive options price; a game without it has nothing for them to change."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("odds", help="exact house edge of every bet")
    parser.add_argument("game", help="game id (see 'tablectl games')")
    parser.add_argument("--jackpot", type=minor_units(0), default=None,
                        help="RWS-3CP progressive meter in minor units (default 0)")
    parser.add_argument("--progressive-stake", type=minor_units(1), default=None,
                        help="RWS-3CP progressive stake in minor units (default "
                             f"{ProgressiveConfig().stake})")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def _progressive_options(rules: GameRules, args: argparse.Namespace) -> tuple[int, int]:
    """``--jackpot`` and ``--progressive-stake``, refused for a game with no progressive bet:
    they were accepted and ignored, and the edge printed looked like one they had priced."""
    given = [f"--{name.replace('_', '-')}" for name in ("jackpot", "progressive_stake")
             if getattr(args, name) is not None]
    if given and PROGRESSIVE not in rules.bets:
        having = [game for game, other in GAMES.items() if PROGRESSIVE in other.bets]
        raise RequestError(f"{given[0]}: {rules.id.value} has no progressive bet (only "
                           f"{', '.join(having)} has one)")
    return (0 if args.jackpot is None else args.jackpot,
            ProgressiveConfig().stake if args.progressive_stake is None
            else args.progressive_stake)


def run(args: argparse.Namespace) -> int:
    rules = get_game(args.game)
    jackpot, stake = _progressive_options(rules, args)
    odds = game_odds(rules, jackpot=jackpot, progressive_stake=stake)
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
