"""RWS-NC3P 5.1 and 5.2 at the moment a wager is placed: the box's limits as the text allocates
them, before "No more bets".

5.1: "In the event the total Bets placed on any betting boxes exceed the maximum permissible limit
for that betting box, and this is noticed by the Dealer before the Bets are closed, the House
shall reject the excess Bets. For the purposes of assessing whether and when the maximum Bet has
been reached ... Seated Players shall have the priority in the placement of their Bets, following
which Standing Players may place their Bets subject to and until the maximum Bet has been reached
for that betting box." The table sees every wager as it is placed, so the excess is always
noticed: 5.1 applies (reject the excess), never 5.1.1 (pro rata for an excess *not* rejected).

The allocation, re-run over the box's wagers of one bet type each time a wager arrives:

1. The Seated Players' wagers first, in the order placed, then the Standing Players', in the
   order placed, each kept up to what is left of the maximum; the rest of it (the excess) is
   returned at once. Who is seated is 1.15 (:func:`~controller.settlement.limits.seated_players`):
   the players marked seated, else the player with the highest Initial Bet on the box, so a
   higher Bet placed later takes the priority from earlier ones.
2. A wager that would be kept below the minimum is returned whole (3.5, 3.6: a Bet is placed
   within the limits; 5.1.1's "shall not result in any Player winning or losing based on a ...
   Bet that is below the minimum").
3. The new wager itself is refused when nothing of it would be kept (the box is full for it);
   the layout is then unchanged.

5.2: a wager under the minimum is refused when placed, naming the minimum: the controller knows
the minimum before the bets close, so the Dealer has noticed, and refusing it is 5.2's "advise
the Player that the minimum permissible limit must be met and give the Player the opportunity to
increase or withdraw his Bet" (5.2.1, settling it as it stands, is for a Bet *not* noticed).

A withdrawal only lowers a box's total, so it never needs a cut; the chips an earlier cut returned
went back to the player at once and are not reinstated (the player may place them again).

Pure: wagers and the limit in, the cuts out (with the reason the journal records).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from controller.settlement.limits import seated_players
from controller.settlement.model import BetLimit, Wager
from controller.table.states import Refused

CLAUSE = "RWS-NC3P 5.1"
MINIMUM_CLAUSE = "RWS-NC3P 5.2"


@dataclass(frozen=True, slots=True)
class Reduction:
    """A wager kept at ``keep`` of its amount (0: returned whole); the rest is returned."""

    wager: Wager
    keep: int
    reason: str


def allocate(new: Wager, box: Sequence[Wager], limit: BetLimit, initial_bet: str
             ) -> list[Reduction]:
    """The cuts that placing ``new`` at a box holding ``box`` (every bet type, in placement
    order) needs to keep its bet type within ``limit`` (RWS-NC3P 5.1), maybe one of ``new``
    itself; refused when ``new`` is under the minimum (5.2) or none of it would be kept."""
    where = f"box {new.position} {new.bet}"
    if new.amount < limit.minimum:
        raise Refused(f"{where}: {new.amount} is under the minimum {limit.minimum}; the Player "
                      f"may increase the Bet to the minimum or withdraw it ({MINIMUM_CLAUSE})")
    everyone = [*box, new]
    group = [w for w in everyone if w.bet == new.bet]
    if sum(w.amount for w in group) <= limit.maximum:
        return []
    marked = any(w.seated for w in everyone)
    seated = seated_players(everyone, initial_bet)
    first = [w for w in group if (w.player or w.id) in seated]
    standing = [w for w in group if (w.player or w.id) not in seated]
    room = limit.maximum
    reductions: list[Reduction] = []
    for wager in (*first, *standing):
        keep = min(wager.amount, room)
        if keep < wager.amount and keep < limit.minimum:
            keep = 0
        room -= keep
        if keep < wager.amount:
            reductions.append(Reduction(wager, keep, _reason(
                where, limit, wager, keep, is_seated=wager in first, marked=marked)))
    if any(r.wager is new and r.keep == 0 for r in reductions):
        raise Refused(f"{where}: the maximum {limit.maximum} is reached for this wager: "
                      f"{_priority(marked)}; {new.amount} rejected, none of it in action "
                      f"({CLAUSE}; what is left is under the minimum {limit.minimum})")
    return reductions


def _priority(marked: bool) -> str:
    seated = "the Seated Player" if marked else "the Seated Player (the highest Initial Bet, 1.15)"
    return f"{seated} first, then Standing Players in the order placed"


def _reason(where: str, limit: BetLimit, wager: Wager, keep: int, *, is_seated: bool,
            marked: bool) -> str:
    who = f"{'Seated' if is_seated else 'Standing'} Player " \
          f"{wager.player or 'of wager ' + wager.id}"
    cut = f"cut to {keep}" if keep else "returned whole"
    under = "" if keep else f"; what was left is under the minimum {limit.minimum}"
    return (f"{where} maximum {limit.maximum}: {_priority(marked)}; {who}'s {wager.amount} "
            f"{cut}, {wager.amount - keep} returned ({CLAUSE}: the excess rejected{under})")


__all__ = ["CLAUSE", "MINIMUM_CLAUSE", "Reduction", "allocate"]
