"""RWS-NC3P 5.1 at the moment a wager is placed: the Seated Player's priority up to the box's
maximum, whoever bet first.

5.1: "the House shall reject the excess Bets. For the purposes of assessing whether and when the
maximum Bet has been reached ... Seated Players shall have the priority in the placement of
their Bets, following which Standing Players may place their Bets subject to and until the
maximum Bet has been reached for that betting box." The table notices the excess when the wager
is placed, before "No more bets", so 5.1 (reject the excess) applies, not 5.1.1 (pro rata for an
excess *not* rejected). When the Seated Player's wager would take the box over the maximum, the
excess is the Standing Players', not his: the Seated Player's wager is accepted and the Standing
Players' wagers are cut back to what is left, earliest placed kept first ("subject to and until
the maximum Bet has been reached"); the rest is returned to them. A wager that would be cut
below the minimum (3.5, 3.6: a Bet is placed within the limits) is returned whole.

Pure: wagers and the limit in, the reductions out (with the reason the journal records).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from controller.settlement.model import BetLimit, Wager
from controller.table.states import Refused

CLAUSE = "RWS-NC3P 5.1"


@dataclass(frozen=True, slots=True)
class Reduction:
    """A Standing Player's wager cut back to ``keep`` (0: returned whole)."""

    wager: Wager
    keep: int
    reason: str


def seated_priority(seated: Wager, same_bet: Sequence[Wager], limit: BetLimit
                    ) -> list[Reduction]:
    """The reductions that make room for the Seated Player's ``seated`` wager at a box whose
    ``same_bet`` wagers (in placement order) would otherwise exceed ``limit.maximum``; refused
    when the Seated Player's own wagers exceed it (his own excess is rejected)."""
    seated_players = {w.player for w in same_bet if w.seated and w.player is not None}
    if seated.player is not None:
        seated_players.add(seated.player)

    def is_seated(wager: Wager) -> bool:
        return bool(wager.seated) or (wager.player is not None and wager.player in seated_players)

    own = sum(w.amount for w in same_bet if is_seated(w)) + seated.amount
    if own > limit.maximum:
        raise Refused(f"box {seated.position} {seated.bet}: the Seated Player's wagers would "
                      f"total {own}, over the maximum {limit.maximum}: excess rejected "
                      f"({CLAUSE})")
    room = limit.maximum - own
    reductions: list[Reduction] = []
    for wager in (w for w in same_bet if not is_seated(w)):
        keep = min(wager.amount, room)
        if keep < wager.amount and keep < limit.minimum:
            keep = 0
        room -= keep
        if keep < wager.amount:
            who = wager.player or f"wager {wager.id}"
            reductions.append(Reduction(wager, keep, (
                f"box {seated.position} {seated.bet} maximum {limit.maximum}: the Seated "
                f"Player's {seated.amount} has priority; Standing Player {who}'s "
                f"{wager.amount} {'cut to ' + str(keep) if keep else 'returned whole'}, "
                f"{wager.amount - keep} returned ({CLAUSE}"
                f"{'' if keep else '; the room left is under the minimum ' + str(limit.minimum)})")))
    return reductions


__all__ = ["CLAUSE", "Reduction", "seated_priority"]
