"""``tablectl rank GAME C1 C2 C3 [--json]``: the name of a hand as the rule set spells it."""

from __future__ import annotations

import argparse
from typing import Any

from controller.cli.output import print_json
from controller.games import hands
from controller.games.cards import ensure_single_deck, parse_cards
from controller.games.catalog import get_game


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("rank", help="name a three-card hand in a game")
    parser.add_argument("game", help="game id (see 'tablectl games')")
    parser.add_argument("cards", nargs=3, metavar="CARD", help="e.g. QD 10h 9♣")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = get_game(args.game)
    cards = parse_cards(args.cards)
    ensure_single_deck(cards)
    described = hands.describe(rules, cards)
    if args.json:
        print_json(described)
    else:
        print(described["name"])
    return 0
