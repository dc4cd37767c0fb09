"""The arithmetic of a shuffling machine that game protection models: pure permutations of pack
indices, no device and no card.

The one-pass k-shelf hand-former of Diaconis, Fulman and Holmes (2013): each card in turn goes
on a random shelf, on top or at the bottom at random; the shelves are then stacked in order.
Game protection prices the risk of a machine flagged as one (:mod:`controller.protection.risk`)
and the simulated shuffler behaves as one (``firmware_sim.shuffle_models``): one model, here,
below both, so the service imports no simulator and the simulator no second copy (issue 35).
"""

from __future__ import annotations

from collections.abc import Callable

RandBelow = Callable[[int], int]
"""``randbelow(n)``: a uniform integer in ``0..n-1`` (the caller's random source)."""


def one_pass(deck: list[int], shelves: int, randbelow: RandBelow) -> list[int]:
    """``deck`` (pack indices, in the order fed) through a one-pass ``shelves``-shelf machine."""
    stacks: list[list[int]] = [[] for _ in range(shelves)]
    for card in deck:
        stack = stacks[randbelow(shelves)]
        if randbelow(2):
            stack.insert(0, card)
        else:
            stack.append(card)
    return [card for stack in stacks for card in stack]


__all__ = ["RandBelow", "one_pass"]
