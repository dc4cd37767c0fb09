"""The Three Card Poker lookup table: its size and the speed of :func:`evaluate`, side by side
with the pointer list it replaced and with pokerkit, in one run.

Issue 27 stored the table's 52**3 slots as 16-bit value numbers (``array('H')`` and a tuple of
the few hundred values) instead of a list of object pointers (0.28 MB instead of 1.1 MB in every
process that ranks a hand). Issue 38 asked whether that cost the 20x-pokerkit goal. This times
``controller.games.poker.evaluate`` with the table as it is, the same function handed the pointer
list (built here from the same values), and pokerkit's ``RhodeIslandHoldemHand`` on the same
hands, in repeats of shuffled order in one process, and prints each one's nanoseconds, the
ratios and both tables' bytes.

Run alone: ``python benchmarks/poker_table.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.games import poker  # noqa: E402
from controller.errors import HandError  # noqa: E402
from controller.games.cards import FULL_DECK, Card  # noqa: E402
from controller.games.poker import PokerValue  # noqa: E402


SAMPLE = 30_000
"""Hands per repeat: a few milliseconds of each side, short enough that a repeat often runs
without another process taking the core, long enough to time."""


def _evaluate_pointers(cards: Sequence[Card], _table: list[PokerValue | None]) -> PokerValue:
    """``evaluate`` as it was before issue 27, verbatim but for the table it is handed."""
    try:
        a, b, c = cards
    except ValueError:
        raise HandError(f"a Three Card Poker hand has three cards, got {len(cards)}") from None
    value = _table[a.first_offset + b.second_offset + c.index]
    if value is None:
        raise HandError(f"a hand cannot hold the same card twice: {a} {b} {c}")
    return value


def _pokerkit_hands(hands: list[tuple[Card, ...]]) -> tuple[Any, list[Any]] | None:
    """pokerkit's ``RhodeIslandHoldemHand`` and the same hands parsed for it (the only Python
    peer that ranks three-card hands; ``pip install -e '.[bench]'``), or ``None``."""
    try:
        from pokerkit import Card as PkCard
        from pokerkit import RhodeIslandHoldemHand
    except ImportError:
        return None
    parsed = [list(PkCard.parse("".join(c.rank.symbol + c.suit.value.lower() for c in hand)))
              for hand in hands]
    return RhodeIslandHoldemHand, parsed


def measure_poker_table(repeats: int = 25, seed: int = 7) -> dict[str, Any]:
    """Nanoseconds per evaluation of the 16-bit table, the pointer list and pokerkit, and the
    ratios, from one process: each repeat runs the three in a shuffled order (no side always
    runs first, after the other has warmed or cooled the caches), each timed by the process's
    CPU time (time another process takes the core from it is not counted), the fastest repeat
    of each kept (load only adds time)."""
    table, values = poker._TABLE, poker._VALUES
    pointers = [values[number] for number in table]  # the list of pointers it replaced
    hands = list(itertools.permutations(FULL_DECK, 3))
    random.Random(seed).shuffle(hands)  # no run of one first card: the caches as in play
    hands = hands[:SAMPLE]
    evaluate = poker.evaluate
    peer = _pokerkit_hands(hands)

    def table_layout() -> None:
        for hand in hands:
            evaluate(hand)

    def pointer_layout() -> None:
        for hand in hands:
            _evaluate_pointers(hand, pointers)

    sides: dict[str, Callable[[], None]] = {"table": table_layout, "pointers": pointer_layout}
    if peer is not None:
        rank, parsed = peer

        def pokerkit() -> None:
            for hand in parsed:
                rank(hand)

        sides["pokerkit"] = pokerkit
    best = {name: float("inf") for name in sides}
    order = random.Random(seed)
    for _ in range(repeats):
        names = list(sides)
        order.shuffle(names)
        for name in names:
            begun = time.process_time()
            sides[name]()
            best[name] = min(best[name], time.process_time() - begun)
    ns = {name: best[name] / len(hands) * 1e9 for name in sides}
    result: dict[str, Any] = {
        "hands": len(hands), "repeats": repeats, "clock": "process CPU time",
        "table_bytes": table.itemsize * len(table) + sys.getsizeof(values),
        "pointer_table_bytes": sys.getsizeof(pointers),
        "evaluate_ns": round(ns["table"], 1), "pointer_evaluate_ns": round(ns["pointers"], 1),
        "time_ratio": round(ns["table"] / ns["pointers"], 3),
    }
    if peer is None:
        result["pokerkit"] = "not installed (pip install -e '.[bench]')"
        return result
    result["pokerkit_ns"] = round(ns["pokerkit"], 1)
    result["ratio_vs_pokerkit"] = round(ns["pokerkit"] / ns["table"], 1)
    result["pointer_ratio_vs_pokerkit"] = round(ns["pokerkit"] / ns["pointers"], 1)
    result["goal"] = ">= 20x pokerkit"
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25)
    args = parser.parse_args(argv)
    print(json.dumps(measure_poker_table(args.repeats), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
