"""The five rule sets (RWS-NC3P, MBS-3P, MBS-R3P, LIVE-3P, RWS-3CP), written down as data.

Each table below is meant to be read side by side with its rule text: every pay line carries the
clause that prints it. Amounts in RWS-3CP 4.4 are dollars in the text and minor units (cents)
here. The progressive stake is a table setting (:class:`controller.settlement.model.ProgressiveConfig`),
since 4.4 prints fixed sums but no stake (see docs/rules-coverage.md).
"""

from __future__ import annotations

from types import MappingProxyType

from controller.errors import UnknownGameError
from controller.games.pictures import LIVE_3P_NAMES, MBS_R3P_NAMES, RWS_NC3P_NAMES
from controller.games.rules import (
    BetSpec,
    Family,
    GameId,
    GameRules,
    LimitPolicy,
    Odds,
    PayLine,
    TieRule,
)

EIGHT_BOXES = tuple(str(n) for n in range(1, 9))
SEVEN_BOXES = tuple(str(n) for n in range(1, 8))
LIVE_HANDS = ("p1", "p2", "p3")

SIX_POINTS = Odds(1, 2)
EVEN_MONEY = Odds(1, 1)


def _bets(*specs: BetSpec) -> MappingProxyType[str, BetSpec]:
    return MappingProxyType({spec.bet: spec for spec in specs})


def _three_pictures_main(
    cite: str, clause: str, six_clause: str, outcomes: dict[str, str]
) -> BetSpec:
    return BetSpec(
        bet="main",
        title="Initial Bet" if cite == "RWS-NC3P" else "Main wager",
        clause=f"{cite} {clause}",
        paytable=(
            PayLine("win_six", "Player wins on 6 points", f"{cite} {six_clause}", SIX_POINTS),
            PayLine("win", "Player wins on other points", f"{cite} {six_clause}", EVEN_MONEY),
        ),
        positions=EIGHT_BOXES,
        outcomes={outcome: f"{cite} {text}" for outcome, text in outcomes.items()},
    )


def _tie_and_three_pictures(cite: str, titles: tuple[str, str], tie_clause: str,
                            three_pictures_clause: str, requires_clause: str
                            ) -> tuple[BetSpec, BetSpec]:
    """The Tie (8 to 1) and Three Pictures (16 to 1) side bets of RWS-NC3P and MBS-3P, which
    differ only in their titles and clause numbers."""
    return (
        BetSpec("tie", titles[0], f"{cite} {tie_clause}",
                (PayLine("tie", "Tie", f"{cite} 4.1", Odds(8, 1)),),
                EIGHT_BOXES, requires="main", requires_clause=f"{cite} {requires_clause}"),
        BetSpec("three_pictures", titles[1], f"{cite} {three_pictures_clause}",
                (PayLine("three_pictures", "Three Pictures", f"{cite} 4.1", Odds(16, 1)),),
                EIGHT_BOXES, requires="main", requires_clause=f"{cite} {requires_clause}"),
    )


RWS_NC3P = GameRules(
    id=GameId.RWS_NC3P,
    cite="RWS-NC3P",
    title="Non-Commission Three Pictures (RWS)",
    version="Version 3, 9 July 2019",
    family=Family.THREE_PICTURES,
    positions=EIGHT_BOXES,
    dealer="dealer",
    rank_names=RWS_NC3P_NAMES,
    initial_bet="main",
    bets=_bets(
        _three_pictures_main("RWS-NC3P", "3.13", "1.8, 4.1",
                             {"win": "3.13.1, 4.1", "lose": "3.13.2", "push": "3.13.3"}),
        *_tie_and_three_pictures("RWS-NC3P", ("Tie Bet", "Three Pictures Bet"),
                                 "1.18, 3.13.3, 3.13.4", "1.17", "3.9, 5.14"),
    ),
    tie_rule=TieRule.SAME_POINT_TOTAL,
    six_point_odds=SIX_POINTS,
    limit_policy=LimitPolicy.PRO_RATA,
    limit_clause="RWS-NC3P 5.1",
    void_clauses=("5.4", "5.4.2", "5.5", "5.5.1", "5.5.2", "5.5.3", "5.5.4", "5.5.5", "5.11",
                  "5.17"),
    void_returns="5.15",
    removal_clauses=("5.9", "5.7.3"),
)

MBS_3P = GameRules(
    id=GameId.MBS_3P,
    cite="MBS-3P",
    title="Three Pictures (MBS)",
    version="Version 2, 31 December 2010",
    family=Family.THREE_PICTURES,
    positions=EIGHT_BOXES,
    dealer="dealer",
    rank_names=MBS_R3P_NAMES,
    initial_bet="main",
    bets=_bets(
        _three_pictures_main("MBS-3P", "3.7, 3.12, 3.13", "4.1",
                             {"win": "3.7, 3.12, 4.1", "lose": "3.7, 3.12", "push": "3.13"}),
        *_tie_and_three_pictures("MBS-3P", ("Tie bet", "Three Pictures bet"),
                                 "1.1.3, 3.13.1", "1.1.2", "3.3"),
    ),
    tie_rule=TieRule.SAME_POINT_TOTAL,
    six_point_odds=SIX_POINTS,
    void_clauses=("5.1", "5.1.1", "5.2", "5.3", "5.4"),
)

MBS_R3P = GameRules(
    id=GameId.MBS_R3P,
    cite="MBS-R3P",
    title="Royal Three Pictures (MBS)",
    version="Version 2, 24 March 2020",
    family=Family.THREE_PICTURES,
    positions=EIGHT_BOXES,
    dealer="dealer",
    rank_names=MBS_R3P_NAMES,
    initial_bet="main",
    bets=_bets(
        _three_pictures_main("MBS-R3P", "3.16, 1.1.5", "4.1",
                             {"win": "3.16, 4.1", "lose": "3.16", "push": "1.1.5, 3.16"}),
        BetSpec("tie", "Tie wager", "MBS-R3P 1.1.6, 3.19",
                (PayLine("tie", "Tie", "MBS-R3P 4.1", Odds(8, 1)),),
                EIGHT_BOXES, requires="main", requires_clause="MBS-R3P 3.5"),
        BetSpec("royal_pictures", "Royal Pictures", "MBS-R3P 1.1.4",
                (
                    PayLine("three_kings", "Three Kings", "MBS-R3P 1.1.4.6, 4.2", Odds(188, 1)),
                    PayLine("three_queens", "Three Queens", "MBS-R3P 1.1.4.5, 4.2", Odds(128, 1)),
                    PayLine("three_jacks", "Three Jacks", "MBS-R3P 1.1.4.4, 4.2", Odds(88, 1)),
                    PayLine("three_pictures", "Three Pictures", "MBS-R3P 1.1.4.3, 4.2",
                            Odds(18, 1)),
                    PayLine("any_picture_pair", "Any Picture Pair", "MBS-R3P 1.1.4.1, 4.2",
                            Odds(8, 1)),
                    PayLine("any_king", "Any King", "MBS-R3P 1.1.4.2, 4.2", Odds(1, 1)),
                ),
                EIGHT_BOXES, requires="main", requires_clause="MBS-R3P 3.5"),
    ),
    tie_rule=TieRule.SAME_POINT_TOTAL,
    six_point_odds=SIX_POINTS,
    limit_policy=LimitPolicy.CAP_AND_MEMORY,
    limit_clause="MBS-R3P 5.10-5.12",
    max_wagers_per_area=3,
    max_wagers_clause="MBS-R3P 3.9",
    void_clauses=("5.1", "5.1.1", "5.4", "5.8.1", "5.9", "6.1"),
    removal_clauses=("5.5",),
)

_PAIR_PLUS_LIVE = (
    PayLine("straight_flush", "Straight Flush", "LIVE-3P Pair Plus", Odds(40, 1)),
    PayLine("three_of_a_kind", "Three of a Kind", "LIVE-3P Pair Plus", Odds(30, 1)),
    PayLine("straight", "Straight", "LIVE-3P Pair Plus", Odds(6, 1)),
    PayLine("flush", "Flush", "LIVE-3P Pair Plus", Odds(3, 1)),
    PayLine("pair", "Pairs", "LIVE-3P Pair Plus", Odds(1, 1)),
)


def _live_side(bet: str, title: str, win_label: str) -> BetSpec:
    return BetSpec(
        bet=bet, title=title, clause="LIVE-3P Game Play",
        paytable=(
            PayLine("win_six", f"{win_label} on any combination of 6 (rank list #11-#13)",
                    "LIVE-3P Game Play", SIX_POINTS),
            PayLine("win", f"{win_label}", "LIVE-3P Game Play", EVEN_MONEY),
        ),
        positions=LIVE_HANDS,
    )


LIVE_3P = GameRules(
    id=GameId.LIVE_3P,
    cite="LIVE-3P",
    title="Live 3 Pictures / Triple Face",
    version="live-dealer studio rules",
    family=Family.THREE_PICTURES,
    positions=LIVE_HANDS,
    dealer="banker",
    rank_names=LIVE_3P_NAMES,
    initial_bet="",
    bets=_bets(
        _live_side("win", "Win", "Player hand wins"),
        _live_side("lose", "Lose", "Banker hand wins"),
        BetSpec("tie", "Tie", "LIVE-3P Game Play (TIE)",
                (PayLine("tie", "Same ranking as the Banker", "LIVE-3P Game Play", Odds(8, 1)),),
                LIVE_HANDS),
        BetSpec("three_knights", "3 Knights", "LIVE-3P Game Play (3 Knights)",
                (PayLine("three_knights", "3 Knights", "LIVE-3P Game Play", Odds(16, 1)),),
                LIVE_HANDS),
        BetSpec("pair_plus", "Pair Plus", "LIVE-3P Pair Plus", _PAIR_PLUS_LIVE,
                (*LIVE_HANDS, "banker")),
    ),
    tie_rule=TieRule.SAME_RANKING,
    six_point_odds=SIX_POINTS,
    void_clauses=("T&C 1", "T&C 2", "T&C 4", "T&C 5", "T&C 6"),
    dealt_face_up=True,
)

RWS_3CP = GameRules(
    id=GameId.RWS_3CP,
    cite="RWS-3CP",
    title="Three Card Poker (RWS)",
    version="Version 2, 22 October 2013",
    family=Family.THREE_CARD_POKER,
    positions=SEVEN_BOXES,
    dealer="dealer",
    rank_names=(
        "Straight Flush", "Three of a Kind", "Straight", "Flush", "One Pair", "Three Odd Cards",
    ),
    initial_bet="ante",
    bets=_bets(
        BetSpec("ante", "Ante", "RWS-3CP 3.9.2, 3.10, 4.1", (
            PayLine("win", "Ante wagers", "RWS-3CP 4.1", EVEN_MONEY),
            PayLine("bonus_straight_flush", "Ante Bonus: Straight Flush", "RWS-3CP 4.3",
                    Odds(5, 1)),
            PayLine("bonus_three_of_a_kind", "Ante Bonus: Three-of-a-Kind", "RWS-3CP 4.3",
                    Odds(4, 1)),
            PayLine("bonus_straight", "Ante Bonus: Straight", "RWS-3CP 4.3", Odds(1, 1)),
        ), SEVEN_BOXES),
        BetSpec("play", "Play", "RWS-3CP 3.8.2, 3.9.1, 3.10, 4.1",
                (PayLine("win", "Play wagers", "RWS-3CP 4.1", EVEN_MONEY),),
                SEVEN_BOXES, requires="ante", requires_clause="RWS-3CP 3.8.2"),
        BetSpec("pair_plus", "Pair Plus", "RWS-3CP 3.9.3, 3.10.4, 4.2", (
            PayLine("straight_flush", "Straight Flush", "RWS-3CP 4.2", Odds(40, 1)),
            PayLine("three_of_a_kind", "Three-of-a-Kind", "RWS-3CP 4.2", Odds(30, 1)),
            PayLine("straight", "Straight", "RWS-3CP 4.2", Odds(5, 1)),
            PayLine("flush", "Flush", "RWS-3CP 4.2", Odds(4, 1)),
            PayLine("pair", "Pair", "RWS-3CP 4.2", Odds(1, 1)),
        ), SEVEN_BOXES),
        BetSpec("progressive", "Progressive Jackpot", "RWS-3CP 3.11-3.13, 4.4", (
            PayLine("akq_spades", "AKQ Spades", "RWS-3CP 4.4", jackpot_percent=100,
                    envy_bonus=25_000),
            PayLine("akq_suited", "AKQ Hearts/Diamonds/Clubs", "RWS-3CP 4.4", fixed=125_000,
                    envy_bonus=5_000),
            PayLine("straight_flush", "Straight Flush", "RWS-3CP 4.4", fixed=17_500),
            PayLine("three_of_a_kind", "Three-of-a-Kind", "RWS-3CP 4.4", fixed=15_000),
            PayLine("straight", "Straights", "RWS-3CP 4.4", fixed=1_500),
        ), SEVEN_BOXES, requires="ante", requires_clause="RWS-3CP 3.4"),
    ),
    void_clauses=("5.1", "5.1.1", "5.1.2", "5.1.3", "5.1.4", "5.1.5"),
)

GAMES: MappingProxyType[str, GameRules] = MappingProxyType(
    {rules.id.value: rules for rules in (RWS_NC3P, MBS_3P, MBS_R3P, LIVE_3P, RWS_3CP)}
)


def get_game(game_id: str) -> GameRules:
    """The rule set with id ``game_id``; raises :class:`UnknownGameError` naming the known ids."""
    try:
        return GAMES[game_id]
    except KeyError:
        known = ", ".join(GAMES)
        raise UnknownGameError(f"unknown game {game_id!r}; known games: {known}") from None
