"""The vocabulary in which each rule set is written down as data.

A :class:`GameRules` value holds what a reviewer checks against the rule text line by line:
positions, bet types, pay tables with their clause numbers, the ranking list, and the few
switches where the rule sets genuinely differ (what a Tie bet means, how limits are enforced).
The settlement functions read these tables; they hold no numbers of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum


class GameId(str, Enum):
    RWS_NC3P = "rws-nc-three-pictures"
    MBS_3P = "mbs-three-pictures"
    MBS_R3P = "mbs-royal-three-pictures"
    LIVE_3P = "live-three-pictures"
    RWS_3CP = "rws-three-card-poker"


class Family(str, Enum):
    THREE_PICTURES = "three_pictures"
    THREE_CARD_POKER = "three_card_poker"


class TieRule(str, Enum):
    """What wins the Tie bet."""

    SAME_POINT_TOTAL = "same_point_total"  # RWS-NC3P 1.18/3.13.4, MBS-3P 3.13.1, MBS-R3P 1.1.6
    SAME_RANKING = "same_ranking"          # LIVE-3P: "ranks the same ... as per the ranking list"


class LimitPolicy(str, Enum):
    """How a wager outside the table limits is settled if it was not caught at placement."""

    PRO_RATA = "pro_rata"              # RWS-NC3P 5.1-5.2
    CAP_AND_MEMORY = "cap_and_memory"  # MBS-R3P 5.10-5.12
    REFUSE = "refuse"                  # no clause: the controller refuses it at placement


@dataclass(frozen=True, slots=True)
class Odds:
    """Pays ``win`` to ``stake``: "8 to 1" is ``Odds(8, 1)``, "1 to 2" is ``Odds(1, 2)``."""

    win: int
    stake: int = 1

    def __str__(self) -> str:
        return f"{self.win} to {self.stake}"


@dataclass(frozen=True, slots=True)
class PayLine:
    """One row of a pay table: a winning hand or condition and what it pays."""

    key: str
    label: str
    clause: str
    odds: Odds | None = None
    fixed: int | None = None
    """A fixed amount in minor units instead of odds (RWS-3CP 4.4 progressive)."""
    jackpot_percent: int | None = None
    """A share of the progressive meter (RWS-3CP 4.4: "100 % Progressive Jackpot")."""
    envy_bonus: int | None = None
    """Fixed Envy Bonus in minor units paid to other seated progressive players (3.12)."""

    def describe(self) -> str:
        if self.odds is not None:
            return str(self.odds)
        if self.jackpot_percent is not None:
            return f"{self.jackpot_percent}% of the progressive jackpot"
        return f"{self.fixed} (minor units)"


@dataclass(frozen=True, slots=True)
class BetSpec:
    """A bet type: where it may stand, what it pays, and which clause says so."""

    bet: str
    title: str
    clause: str
    paytable: tuple[PayLine, ...]
    positions: tuple[str, ...]
    requires: str | None = None
    """Bet that must stand at the same position for this one to be valid (a side wager)."""
    requires_clause: str | None = None
    outcomes: Mapping[str, str] = field(default_factory=dict)
    """Clause per outcome ("win", "lose", "push") where the text gives each its own."""

    def clause_for(self, outcome: str) -> str:
        return self.outcomes.get(outcome, self.clause)

    def line(self, key: str) -> PayLine:
        for line in self.paytable:
            if line.key == key:
                return line
        raise KeyError(f"{self.bet} has no pay line {key!r}")


@dataclass(frozen=True, slots=True)
class GameRules:
    id: GameId
    cite: str
    title: str
    version: str
    family: Family
    positions: tuple[str, ...]
    dealer: str
    rank_names: tuple[str, ...]
    bets: Mapping[str, BetSpec]
    initial_bet: str
    """The bet a player must hold to receive cards at a box (empty for LIVE-3P: all hands dealt)."""
    tie_rule: TieRule | None = None
    six_point_odds: Odds | None = None
    limit_policy: LimitPolicy = LimitPolicy.REFUSE
    limit_clause: str | None = None
    max_wagers_per_area: int | None = None
    max_wagers_clause: str | None = None
    notes: tuple[str, ...] = field(default=())
    void_clauses: tuple[str, ...] = ()
    """Every clause of the rule text under which a round may be voided (the round "shall be
    void", or management/a supervisor may void it): what a supervisor's void may cite. Written
    without the game's cite ("5.5.1"), read side by side with section 5 of the text."""
    void_returns: str | None = None
    """The clause that says what a Void round returns, where the text prints it apart from the
    void clauses (RWS-NC3P 5.15; the other texts say it in each void clause). It may be cited
    beside a void clause, never instead of one: it says what a void does, not why."""
    removal_clauses: tuple[str, ...] = ()
    """Every clause under which one box's hand is removed from play and its bets returned
    while the round goes on (RWS-NC3P 5.9, and 5.7.3 once every player at the box has taken
    it; MBS-R3P 5.5): what a removed hand may cite. Empty where the text removes no single
    hand (a round of it is played whole or voided)."""
    dealt_face_up: bool = False
    """Every card is dealt face up, the Banker's included, so no hand waits for a reveal
    (LIVE-3P Game Play: "Dealing will be carried out one by one, faced up"). Elsewhere the
    dealer's hand is face down until the dealer reveals it. The one place this is said: the
    table's deal goes straight to revealed, and nobody's view withholds a face-down card."""

    def void_clause(self, given: str, *, returns: bool = False) -> str:
        """``given`` ("5.5.1", "RWS-NC3P 5.5.1" or several, comma-separated) as this game's
        cited void clause(s); a clause the game's text does not void under is refused, naming
        the ones it does, so an invented clause never reaches the journal. With ``returns``,
        :attr:`void_returns` may stand beside them ("RWS-NC3P 5.5.2, 5.15")."""
        from controller.errors import RequestError

        extra = (self.void_returns,) if returns and self.void_returns else ()
        known = ", ".join(self.void_clauses) or "none"
        if extra:
            known += f" ({self.void_returns} may stand beside one)"
        numbers = self._cited(given, (*self.void_clauses, *extra),
                              f"is not a void clause of {self.cite}; its void clauses are: "
                              f"{known}")
        if extra and all(number in extra for number in numbers):
            raise RequestError(f"{given.strip()!r}: {self.cite} {self.void_returns} says what a "
                               f"Void round returns, not why it is void; cite the clause that "
                               f"voids it too: {', '.join(self.void_clauses)}")
        return f"{self.cite} {', '.join(numbers)}"

    def removal_clause(self, given: str) -> str:
        """``given`` as this game's cited clause(s) that remove one hand from play (RWS-NC3P
        5.9, MBS-R3P 5.5), in the same forms as :meth:`void_clause`; anything else is refused,
        naming the ones there are."""
        from controller.errors import RequestError

        if not self.removal_clauses:
            raise RequestError(f"{given.strip()!r}: no clause of {self.cite} removes one hand "
                               f"from play; a round of it is settled whole or voided")
        numbers = self._cited(given, self.removal_clauses,
                              f"is not a clause of {self.cite} that removes a hand from play; "
                              f"its clauses that do are: {', '.join(self.removal_clauses)}")
        return f"{self.cite} {', '.join(numbers)}"

    def _cited(self, given: str, allowed: tuple[str, ...], refusal: str) -> list[str]:
        """The clause numbers of ``given`` (comma-separated, each with or without this game's
        cite), each one of ``allowed``; else :class:`RequestError` "'PART' ``refusal``"."""
        from controller.errors import RequestError

        numbers: list[str] = []
        for part in given.split(","):
            number = part.strip()
            if number.upper().startswith(self.cite.upper()):
                number = number[len(self.cite):].strip()
            if number not in allowed:
                raise RequestError(f"{part.strip()!r} {refusal}")
            numbers.append(number)
        return numbers

    @property
    def hand_positions(self) -> tuple[str, ...]:
        """Every hand that can be dealt: the player positions then the dealer/banker."""
        return (*self.positions, self.dealer)

    def bet(self, bet: str) -> BetSpec:
        try:
            return self.bets[bet]
        except KeyError:
            from controller.errors import WagerError

            known = ", ".join(self.bets)
            raise WagerError(f"{self.cite} has no bet {bet!r}; its bets are: {known}") from None
