"""The players' options after an irregularity (RWS-NC3P 5.7, 5.11.1; MBS-R3P 5.7, 5.13.1), kept
per Player at a box.

The texts give the option to Players, not to boxes: "all Players on the gaming table shall have
the option" (RWS-NC3P 5.7), "the Player may be permitted to withdraw their wager" (MBS-R3P 5.7),
"Players shall be given the option ... A Player taking the option to withdraw must withdraw all
his wagers" (MBS-R3P 5.13.1). A box may hold a Seated Player and Standing Players (RWS-NC3P
1.15, 1.16), so :class:`Offer` keeps one pending answer per :class:`~controller.table.events.
PlayerAtBox`, and one player's answer settles only his own.

The offer outlives a hold: a supervisor's decision during the options resumes them, announced
again with the answers still awaited and a fresh deadline (:attr:`Offer.number` tells the
announcements apart, so a deadline measured for an earlier one cannot close a later one).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from controller.settlement.model import Wager
from controller.table.events import PlayerAtBox
from controller.table.states import Refused

PER_PLAYER_WITHDRAWAL = ("MBS-R3P 5.13.1",)
"""Options under which a withdrawal takes every wager of the player ("must withdraw all his
wagers"), not only those at the box he answers for."""


def players_at_boxes(wagers: Iterable[Wager], positions: Sequence[str],
                     excluded: Iterable[str] = ()) -> tuple[PlayerAtBox, ...]:
    """Every player with a wager in play, per box, in layout order then order of placement."""
    skip = set(excluded)
    seen: dict[PlayerAtBox, None] = {}
    for wager in wagers:
        if wager.position not in skip:
            seen.setdefault(PlayerAtBox(wager.position, wager.player), None)
    order = {position: index for index, position in enumerate(positions)}
    return tuple(sorted(seen, key=lambda p: order.get(p.position, len(order))))


@dataclass(slots=True)
class Offer:
    """The options on offer: the clause, who has not answered yet, and the deadline."""

    clause: str
    pending: list[PlayerAtBox]
    deadline_s: int = 0
    number: int = 1
    answered: list[PlayerAtBox] = field(default_factory=list)

    @property
    def boxes(self) -> tuple[str, ...]:
        """The boxes with at least one player still to answer, in layout order."""
        return tuple(dict.fromkeys(p.position for p in self.pending))

    @property
    def done(self) -> bool:
        return not self.pending

    def who(self, position: str, player: str | None) -> PlayerAtBox:
        """The player-at-box an answer is for; refused when not pending or ambiguous."""
        here = [p for p in self.pending if p.position == position]
        if not here:
            raise Refused(f"box {position} has no option pending")
        if player is not None:
            for candidate in here:
                if candidate.player == player:
                    return candidate
            names = ", ".join(str(p.player) for p in here)
            raise Refused(f"player {player} has no option pending at box {position} "
                          f"(pending there: {names}; {self.clause})")
        if len(here) > 1:
            names = ", ".join(sorted(str(p.player) for p in here))
            raise Refused(f"box {position} holds players {names}: name the player "
                          f"({self.clause}: each Player answers for himself)")
        return here[0]

    def settle(self, answered: Iterable[PlayerAtBox]) -> None:
        """These players have answered (or no longer have anything to answer for)."""
        gone = set(answered)
        self.answered += [p for p in self.pending if p in gone]
        self.pending = [p for p in self.pending if p not in gone]

    def keep_only(self, in_play: Iterable[PlayerAtBox]) -> None:
        """Drop pending players with no wager left in play (a hand removed meanwhile)."""
        still = set(in_play)
        self.pending = [p for p in self.pending if p in still]

    def to_json(self) -> list[dict[str, str | None]]:
        return [{"position": p.position, "player": p.player} for p in self.pending]


@dataclass(slots=True)
class Options:
    """A round's options, written only here: the offer open now (``None`` when none is) and
    how many announcements the round has made (numbering each). A new one each round."""

    offer: Offer | None = None
    announcements: int = 0

    def open(self, clause: str, players: Iterable[PlayerAtBox], deadline_s: int) -> Offer:
        self.announcements += 1
        self.offer = Offer(clause, list(players), deadline_s, self.announcements)
        return self.offer

    def renew(self) -> None:
        """The open offer announced again (after a hold): a new number, so a deadline measured
        for the earlier announcement closes nothing."""
        assert self.offer is not None
        self.announcements += 1
        self.offer.number = self.announcements

    def close(self) -> None:
        self.offer = None


__all__ = ["Offer", "Options", "PER_PLAYER_WITHDRAWAL", "players_at_boxes"]
