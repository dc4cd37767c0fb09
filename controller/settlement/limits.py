"""Table limits applied to wagers that were not caught at placement.

Two rule sets say what happens to such wagers; the others have no clause, so the controller
refuses an out-of-limit wager when it is placed (see :mod:`controller.settlement.validate`).

* RWS-NC3P 5.1-5.2 (:func:`pro_rata`): when a box's total on one bet exceeds the maximum, Seated
  Players have priority (5.1; 1.15 says who is seated: with nobody seated, every player with
  the highest Initial Bet), the rest share what is left pro rata (5.1.1), a wager under the
  minimum is not pro-rated (5.1.2), and a share that would fall below the minimum is returned
  rather than played (5.1.1: no one wins or loses on such a share). A box under the minimum is
  settled as it stands (5.2.1).
* MBS-R3P 5.10-5.12 (:func:`cap_and_memory`): over the maximum is paid or collected to the maximum
  only (5.11); under the minimum is settled once per player, and that player's later
  under-minimum wagers are returned (5.10), which needs the table's memory.

Every stake in action is rounded down to the table unit; the rest of the wager is returned.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from controller.settlement.model import BetLimit, Component, TableMemory, Wager
from controller.settlement.payout import round_down


@dataclass(frozen=True, slots=True)
class Stake:
    """How much of a wager is in action, why, or the clause that returns it whole."""

    amount: int
    notes: tuple[Component, ...] = ()
    returned_by: str | None = None


def seated_players(wagers: Sequence[Wager], initial_bet: str) -> set[str]:
    """RWS-NC3P 1.15: the players seated at the box, else the player(s) with the highest Bet.

    "The highest Bet" is read as the highest Initial Bet (1.7): the Initial Bet is what puts a
    hand on the box (3.9, 3.12), side Bets only ride on it, and each bet type is limited on its
    own (5.1). Players whose Initial Bets are equal and highest are all Seated Players: 1.15
    names no tie-break and the order in which chips were placed is not something the controller
    can see, so they share the seated priority pro rata (equally for equal bets) and the result
    never depends on the order wagers are listed in. Without any Initial Bet on the box (its
    side Bets are then returned by 5.14) the highest total decides.
    """
    seated = {w.player or w.id for w in wagers if w.seated}
    if seated:
        return seated
    totals: dict[str, int] = defaultdict(int)
    initial = [w for w in wagers if w.bet == initial_bet] or list(wagers)
    for wager in initial:
        totals[wager.player or wager.id] += wager.amount
    if not totals:
        return set()
    highest = max(totals.values())
    return {player for player, total in totals.items() if total == highest}


def _share(wagers: Sequence[Wager], capacity: int, limit: BetLimit, unit: int,
           stakes: dict[str, Stake]) -> None:
    total = sum(w.amount for w in wagers)
    for wager in wagers:
        if total <= capacity:
            stakes[wager.id] = Stake(wager.amount)
            continue
        share = round_down(wager.amount * capacity // total, unit)
        if share < limit.minimum:
            stakes[wager.id] = Stake(0, returned_by="RWS-NC3P 5.1.1")
        else:
            note = Component(f"pro rata: {share} of {wager.amount} in action, "
                             f"{wager.amount - share} returned", 0, "RWS-NC3P 5.1.1")
            stakes[wager.id] = Stake(share, (note,))


def pro_rata(wagers: Iterable[Wager], limits: Mapping[str, BetLimit], unit: int,
             initial_bet: str) -> dict[str, Stake]:
    """RWS-NC3P 5.1-5.2: stakes in action per wager id."""
    wagers = list(wagers)
    by_box: dict[str, list[Wager]] = defaultdict(list)
    for wager in wagers:
        by_box[wager.position].append(wager)
    stakes: dict[str, Stake] = {}
    for box_wagers in by_box.values():
        seated = seated_players(box_wagers, initial_bet)
        groups: dict[str, list[Wager]] = defaultdict(list)
        for wager in box_wagers:
            groups[wager.bet].append(wager)
        for bet, group in groups.items():
            limit = limits.get(bet)
            if limit is None or sum(w.amount for w in group) <= limit.maximum:
                stakes.update({w.id: Stake(w.amount) for w in group})
                continue
            under = [w for w in group if w.amount < limit.minimum]
            for wager in under:
                stakes[wager.id] = Stake(wager.amount, (Component(
                    "under the minimum in a box over the maximum: not pro-rated", 0,
                    "RWS-NC3P 5.1.2"),))
            rest = [w for w in group if w.amount >= limit.minimum]
            capacity = max(limit.maximum - sum(w.amount for w in under), 0)
            first = [w for w in rest if (w.player or w.id) in seated]
            standing = [w for w in rest if (w.player or w.id) not in seated]
            _share(first, capacity, limit, unit, stakes)
            left = max(capacity - sum(stakes[w.id].amount for w in first), 0)
            _share(standing, left, limit, unit, stakes)
    return stakes


def cap_and_memory(wagers: Iterable[Wager], limits: Mapping[str, BetLimit],
                   memory: TableMemory) -> tuple[dict[str, Stake], frozenset[str]]:
    """MBS-R3P 5.10-5.12: stakes in action, and the players now remembered as settled once."""
    stakes: dict[str, Stake] = {}
    remembered = set(memory.under_minimum_players)
    settled_now: set[str] = set()
    for wager in wagers:
        limit = limits.get(wager.bet)
        if limit is None or limit.minimum <= wager.amount <= limit.maximum:
            stakes[wager.id] = Stake(wager.amount)
        elif wager.amount > limit.maximum:
            note = Component(f"over the maximum: settled on {limit.maximum}, "
                             f"{wager.amount - limit.maximum} returned", 0, "MBS-R3P 5.11")
            stakes[wager.id] = Stake(limit.maximum, (note,))
        elif wager.player is not None and wager.player in remembered:
            stakes[wager.id] = Stake(0, returned_by="MBS-R3P 5.10")
        else:
            note = Component("under the minimum: settled one time only", 0, "MBS-R3P 5.10")
            stakes[wager.id] = Stake(wager.amount, (note,))
            if wager.player is not None:
                settled_now.add(wager.player)
    return stakes, frozenset(remembered | settled_now)
