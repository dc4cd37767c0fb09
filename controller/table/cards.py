"""The cards of a round and their places: the deal (which card went to which hand, the burns,
the cards seen), the hands removed from play, the cards exposed, and whether the results of two
positions were swapped.

:class:`RoundCards` is the only code that writes these; betting starts the deal at "No more
bets", a supervisor's reconstruction replaces it, the rulings remove a hand or count an exposed
card, each by asking. The :class:`~controller.table.dealing.Deal` it holds changes only through
its own methods (a card delivered, burnt, ignored, held out).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.table.dealing import Deal


@dataclass(slots=True)
class RoundCards:
    """One round's cards and places; a new one each round."""

    deal: Deal | None = None
    """``None`` until "No more bets" fixes who receives cards."""
    removed: dict[str, str] = field(default_factory=dict)
    """Position -> the clause under which its hand left play (its wagers are returned)."""
    exposed: int = 0
    """Cards exposed this round (RWS-3CP 5.1.2 counts them)."""
    exposed_in_deal: int = 0
    """Of those, the ones exposed while dealing or burning."""
    swapped: bool = False
    """The results of the first and last positions were swapped by a ruling."""

    def start(self, deal: Deal) -> None:
        """No more bets: the deal the round's cards follow."""
        self.deal = deal

    def reconstructed(self, deal: Deal) -> None:
        """A supervisor's reconstruction, accepted whole, replaces the deal."""
        self.deal = deal

    def remove_hand(self, position: str, clause: str, dealer: str) -> bool:
        """Take ``position``'s hand out of play; the cards still to come go to the boxes in
        play. False when it was already out."""
        if position in self.removed:
            return False
        self.removed[position] = clause
        if self.deal is not None and position != dealer:
            self.deal.drop_position(position)
        return True

    def remove_settled_hand(self, position: str, clause: str) -> None:
        """A hand taken out of a settled round by a correction: nothing is dealt any more."""
        self.removed[position] = clause

    def count_exposed(self, cards: int, in_deal: bool) -> None:
        self.exposed += cards
        if in_deal:
            self.exposed_in_deal += cards

    def swap_results(self) -> None:
        self.swapped = True


__all__ = ["RoundCards"]
