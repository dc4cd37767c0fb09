"""The Three Card Poker lookup table: its size and the speed of :func:`evaluate`, side by side.

Issue 27 stored the table's 52**3 slots as 16-bit value numbers (``array('H')`` and a tuple of
the few hundred values) instead of a list of object pointers. This times
``controller.games.poker.evaluate`` with the table as it is against the same function handed
the pointer list it replaced (built here from the same values), over every ordered triple of
distinct cards, in alternating repeats in one process so machine load hits both alike; the fastest repeat of
each is reported (load only adds time).

Run alone: ``python benchmarks/poker_table.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.games import poker  # noqa: E402
from controller.errors import HandError  # noqa: E402
from controller.games.cards import FULL_DECK, Card  # noqa: E402
from controller.games.poker import PokerValue  # noqa: E402


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


def measure_poker_table(repeats: int = 9) -> dict[str, Any]:
    table, values = poker._TABLE, poker._VALUES
    pointers = [values[number] for number in table]  # the list of pointers it replaced
    hands = list(itertools.permutations(FULL_DECK, 3))
    evaluate = poker.evaluate

    def numbers_layout() -> float:
        begun = time.perf_counter()
        for hand in hands:
            evaluate(hand)
        return time.perf_counter() - begun

    def pointer_layout() -> float:
        begun = time.perf_counter()
        for hand in hands:
            _evaluate_pointers(hand, pointers)
        return time.perf_counter() - begun

    new_times, old_times = [], []
    for _ in range(repeats):
        old_times.append(pointer_layout())
        new_times.append(numbers_layout())
    # the fastest repeat of each: load from other work only ever adds time
    new_ns = min(new_times) / len(hands) * 1e9
    old_ns = min(old_times) / len(hands) * 1e9
    return {
        "hands": len(hands), "repeats": repeats,
        "table_bytes": table.itemsize * len(table) + sys.getsizeof(values),
        "pointer_table_bytes": sys.getsizeof(pointers),
        "evaluate_ns": round(new_ns, 1), "pointer_evaluate_ns": round(old_ns, 1),
        "time_ratio": round(new_ns / old_ns, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args(argv)
    print(json.dumps(measure_poker_table(args.repeats), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
