"""Each irregularity -> the outcome its rule set prescribes, with the clause. Pure functions.

:func:`rule` reads the game, the dealing device and what is known about the moment (phase,
whether players handled their cards, whether an outcome is established, ...) and returns a
:class:`Ruling`; the machine only applies rulings. Where a rule set has no clause for the
irregularity the general provision applies: RWS-NC3P 5.17 and MBS-R3P 6.1 give the decision to
the Shift Manager; MBS-3P, RWS-3CP and LIVE-3P print no general provision, so the controller holds
the round for a supervisor there too and says so in the clause ("no clause; house: ..."). The
full table, per game, is in docs/table.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from controller.games.rules import GameId, GameRules
from controller.table.commands import IrregularityKind as Kind
from controller.table.commands import Source
from controller.table.commands import SupervisorAction as Act


class Action(str, Enum):
    VOID = "void"
    REMOVE_HAND = "remove_hand"
    CONTINUE = "continue"
    IGNORE = "ignore"
    SUPERVISOR = "supervisor"
    """Hold the round until a supervisor decides, among :attr:`Ruling.options`."""
    PLAYER_OPTIONS = "player_options"
    """Offer each player the options of RWS-NC3P 5.7 / MBS-R3P 5.7 / 5.13.1, then continue."""
    SWAP_RESULTS = "swap_results"
    STANDS = "stands"
    """The error belongs to a round already settled: that settlement stands."""


class Phase(str, Enum):
    NO_ROUND = "no_round"
    BETTING = "betting"
    BEFORE_DEAL = "before_deal"
    BURNING = "burning"
    DEALING = "dealing"
    DEALT = "dealt"


@dataclass(frozen=True, slots=True)
class Context:
    """What the rulings depend on besides the game."""

    phase: Phase
    manual_device: bool = True
    handled: bool = False
    first_card: bool = False
    exposed_count: int = 0
    """Cards exposed this round so far, this one included (LIVE-3P T&C 2: "number of exposed
    cards")."""
    exposed_in_deal: int = 0
    """Of those, the ones exposed during the deal (RWS-3CP 5.1.2: "during the deal")."""
    source: Source | None = None
    """An exposed card: found in the shoe/shuffler, exposed by the dealer, or not known (None:
    the supervisor is asked); :attr:`Source.DRAWN` for a card taken from the device while bets
    are offered."""
    established: bool | None = None
    revealed: bool = False
    """The dealer's hand has been revealed: every hand is face up (an exposure changes nothing)."""
    before_p1_second_card: bool = False
    exposed_before_drop: bool = False


@dataclass(frozen=True, slots=True)
class Ruling:
    action: Action
    clause: str
    note: str = ""
    options: tuple[Act, ...] = ()
    then: Action | None = None
    """After a supervisor's ORDER/RECONSTRUCT: what follows (RWS-NC3P 5.11.1: the options)."""
    declined: Action | None = None
    """What NOT_RECONSTRUCTABLE leads to (RWS-NC3P 5.9: hand removed; 5.5.5: void)."""
    complete_hands_only: bool = False
    """RECONSTRUCT may only move complete hands (RWS-NC3P 5.5.4, MBS-3P 5.3, MBS-R3P 5.4,
    RWS-3CP 5.1.4): ``hands`` that are not a rearrangement of the recorded hands are refused."""


_GENERAL = {
    GameId.RWS_NC3P: "RWS-NC3P 5.17",
    GameId.MBS_R3P: "MBS-R3P 6.1",
    GameId.MBS_3P: "MBS-3P (no clause; house: supervisor decides)",
    GameId.RWS_3CP: "RWS-3CP (no clause; house: supervisor decides)",
    GameId.LIVE_3P: "LIVE-3P (no clause; house: management decides)",
}

_FOREIGN = {GameId.RWS_NC3P: "RWS-NC3P 5.5.1", GameId.MBS_3P: "MBS-3P 5.1",
            GameId.MBS_R3P: "MBS-R3P 5.1", GameId.RWS_3CP: "RWS-3CP 5.1.1"}
_DUPLICATE = {GameId.RWS_NC3P: "RWS-NC3P 5.5.1, 5.5.2", GameId.MBS_3P: "MBS-3P 5.1, 5.2",
              GameId.MBS_R3P: "MBS-R3P 5.1", GameId.RWS_3CP: "RWS-3CP 5.1.1, 5.1.3"}
_COUNT = {GameId.RWS_NC3P: "RWS-NC3P 5.5.2", GameId.MBS_3P: "MBS-3P 5.2",
          GameId.MBS_R3P: "MBS-R3P 5.1, 5.9", GameId.RWS_3CP: "RWS-3CP 5.1.3"}
_NOT_SHUFFLED = {GameId.RWS_NC3P: "RWS-NC3P 5.5.3", GameId.MBS_R3P: "MBS-R3P 5.1"}
_DEALT_INCORRECTLY = {GameId.RWS_NC3P: "RWS-NC3P 5.5.4", GameId.MBS_3P: "MBS-3P 5.3",
                      GameId.MBS_R3P: "MBS-R3P 5.4", GameId.RWS_3CP: "RWS-3CP 5.1.4"}
_PREVIOUS_STANDS = {GameId.RWS_NC3P: "RWS-NC3P 5.6, 5.12", GameId.MBS_3P: "MBS-3P 5.1.2",
                    GameId.MBS_R3P: "MBS-R3P 5.1.2, 5.12", GameId.RWS_3CP: "RWS-3CP 5.1.1",
                    GameId.LIVE_3P: "LIVE-3P (no clause; house: a settled round stands)"}

_VOID_OR_CONTINUE = (Act.VOID, Act.CONTINUE)
_RECONSTRUCT_OR_VOID = (Act.RECONSTRUCT, Act.VOID)


def general(rules: GameRules, what: str) -> Ruling:
    """No clause covers it: the general provision, a supervisor decides."""
    return Ruling(Action.SUPERVISOR, _GENERAL[rules.id], f"{what}: not provided for",
                  (Act.VOID, Act.CONTINUE, Act.RECONSTRUCT))


def previous_round(rules: GameRules) -> Ruling:
    """An error noticed after the next round began never changes a settled round."""
    return Ruling(Action.STANDS, _PREVIOUS_STANDS[rules.id],
                  "noticed after the next round began: previous outcomes stand")


_UNTIL_NEXT_ROUND = {
    (GameId.RWS_NC3P, Kind.WRONG_COUNT_PLAYER): (Action.REMOVE_HAND, "RWS-NC3P 5.9"),
    (GameId.RWS_NC3P, Kind.WRONG_COUNT_DEALER): (Action.VOID, "RWS-NC3P 5.5.5"),
    (GameId.MBS_R3P, Kind.WRONG_COUNT_PLAYER): (Action.REMOVE_HAND, "MBS-R3P 5.5"),
    (GameId.RWS_3CP, Kind.WRONG_COUNT_DEALER): (Action.VOID, "RWS-3CP 5.1.5"),
}
"""The only clauses that reach past settlement: each says "provided that this is noticed before
the commencement of the next round". Every other irregularity is "found during the Round of
play", which concludes when the settlement is made (RWS-NC3P 1.14), so a settled round stands."""
_CANNOT_BE_RECONSTRUCTED = {"RWS-NC3P 5.9", "RWS-NC3P 5.5.5", "RWS-3CP 5.1.5"}
"""The corrections whose clause adds "and the cards cannot be Reconstructed": asked of the
supervisor (MBS-R3P 5.5 has no such condition)."""
_CONCLUDED = {GameId.RWS_NC3P: "RWS-NC3P 1.14, 5.6", GameId.MBS_3P: "MBS-3P 1.1.4",
              GameId.MBS_R3P: "MBS-R3P 1.1.3",
              GameId.RWS_3CP: "RWS-3CP (no clause; house: a settled game stands)",
              GameId.LIVE_3P: "LIVE-3P (no clause; house: a settled round stands)"}
"""Where the text defines the round of play, the definition says it concludes at settlement."""
_CLAUSE_OF = {(GameId.MBS_3P, Kind.WRONG_COUNT_DEALER): "5.4",
              (GameId.MBS_R3P, Kind.WRONG_COUNT_DEALER): "5.4"}


def after_settlement(rules: GameRules, kind: Kind) -> Ruling:
    """An irregularity of the round just settled, noticed before the next round commenced."""
    entry = _UNTIL_NEXT_ROUND.get((rules.id, kind))
    if entry is not None:
        action, clause = entry
        if clause in _CANNOT_BE_RECONSTRUCTED:
            return Ruling(Action.SUPERVISOR, clause, "noticed after settlement, before the next "
                          "round commenced: corrected only if the cards cannot be reconstructed",
                          (Act.RECONSTRUCT, Act.NOT_RECONSTRUCTABLE), declined=action)
        return Ruling(action, clause, "noticed after settlement, before the next round "
                      "commenced: the settlement is corrected")
    clause = _CONCLUDED[rules.id]
    if (rules.id, kind) in _CLAUSE_OF:
        clause = f"{clause}, {_CLAUSE_OF[rules.id, kind]}"
    return Ruling(Action.STANDS, clause,
                  "the round concluded at settlement; only a wrong count reaches until the next "
                  "round: the settlement stands")


def rule(rules: GameRules, kind: Kind, ctx: Context) -> Ruling:
    """The ruling for ``kind`` in game ``rules`` at the moment described by ``ctx``."""
    game = rules.id
    handler = _HANDLERS.get(kind)
    if handler is None:
        return general(rules, kind.value)
    ruling = handler(rules, game, ctx)
    return _no_options_after_reveal(rules, ruling) if ctx.revealed else ruling


_NO_WITHDRAWAL = {GameId.RWS_NC3P: "5.8", GameId.MBS_3P: "5.6", GameId.MBS_R3P: "5.3",
                  GameId.RWS_3CP: "5.2"}
"""Each game's clause that no wager may be withdrawn after "No more bets" (LIVE-3P prints
none and offers no options)."""


def _no_options_after_reveal(rules: GameRules, ruling: Ruling) -> Ruling:
    """After the dealer's hand is revealed every bet is decided. The players' options (RWS-NC3P
    5.7: continue the hand, "accept any subsequent cards", or have the bet returned; MBS-R3P
    5.7: withdraw "before the round of play" concludes) are a choice made before the outcome;
    offered now they would let each loser take his stake back and each winner stay, which the
    no-withdrawal clause forbids (RWS-NC3P 5.8, MBS-R3P 5.3: a wager withdrawn is "won or lost
    based on the outcomes"). So no option is offered after the reveal: the round is settled as
    dealt, and a hand removed by its own clause (MBS-R3P 5.5) stays removed. An exposure after
    the reveal is ruled the same way (:func:`_exposed`)."""
    clause = _NO_WITHDRAWAL.get(rules.id)
    if clause is None:
        return ruling
    reading = (f"noticed after the dealer's hand was revealed: every bet is decided, so no "
               f"option is offered ({rules.cite} {clause}: no withdrawal after \"No more "
               f"bets\")")
    if ruling.action is Action.PLAYER_OPTIONS:
        return Ruling(Action.CONTINUE, f"{ruling.clause}, {clause}",
                      f"{reading}; the round is settled as dealt")
    if ruling.then is Action.PLAYER_OPTIONS:
        return Ruling(ruling.action, ruling.clause, f"{ruling.note}; {reading}",
                      ruling.options, None, ruling.declined, ruling.complete_hands_only)
    return ruling


def _void_or_general(table: dict[GameId, str], what: str):  # type: ignore[no-untyped-def]
    def handler(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
        if game in table:
            return Ruling(Action.VOID, table[game], what)
        return general(rules, what)
    return handler


def _wrong_count_player(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    if game is GameId.RWS_NC3P:
        return Ruling(Action.SUPERVISOR, "RWS-NC3P 5.9",
                      "hand removed and bets returned unless the cards can be reconstructed",
                      (Act.RECONSTRUCT, Act.NOT_RECONSTRUCTABLE), declined=Action.REMOVE_HAND)
    if game is GameId.MBS_R3P and ctx.handled:
        return Ruling(Action.REMOVE_HAND, "MBS-R3P 5.5", "hand removed and wager returned; "
                      "players dissatisfied with 5.5 may withdraw (5.7)",
                      then=Action.PLAYER_OPTIONS)
    if game is GameId.LIVE_3P:
        return Ruling(Action.SUPERVISOR, "LIVE-3P T&C 5",
                      "reconstruction before submission, else management may void",
                      _RECONSTRUCT_OR_VOID)
    if not ctx.handled:
        return _dealt_incorrectly(rules, game, ctx)
    return general(rules, "wrong number of cards to a player's hand after handling")


def _wrong_count_dealer(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    if game is GameId.MBS_3P:
        return Ruling(Action.VOID, "MBS-3P 5.4", "incorrect number of cards to the Dealer")
    clause = {GameId.RWS_NC3P: "RWS-NC3P 5.5.5", GameId.RWS_3CP: "RWS-3CP 5.1.5",
              GameId.MBS_R3P: "MBS-R3P 5.4, 6.1", GameId.LIVE_3P: "LIVE-3P T&C 5"}[game]
    return Ruling(Action.SUPERVISOR, clause, "void unless the cards can be reconstructed",
                  (Act.RECONSTRUCT, Act.NOT_RECONSTRUCTABLE, Act.VOID), declined=Action.VOID)


def _dealt_incorrectly(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    if game is GameId.LIVE_3P:
        return Ruling(Action.SUPERVISOR, "LIVE-3P T&C 5",
                      "reconstruction before submission, else management may void",
                      _RECONSTRUCT_OR_VOID)
    if not ctx.handled:
        return Ruling(Action.SUPERVISOR, _DEALT_INCORRECTLY[game],
                      "void unless reconstructable by moving complete hands (supervisor)",
                      (Act.RECONSTRUCT, Act.NOT_RECONSTRUCTABLE, Act.VOID), declined=Action.VOID,
                      complete_hands_only=True)
    if game is GameId.MBS_R3P:
        return Ruling(Action.PLAYER_OPTIONS, "MBS-R3P 5.6, 5.7",
                      "played to a conclusion; players may withdraw their wagers")
    if game is GameId.RWS_NC3P:
        return Ruling(Action.PLAYER_OPTIONS, "RWS-NC3P 5.7",
                      "dealing error after handling: each player continues or has the bet "
                      "returned")
    return general(rules, "cards dealt incorrectly after players handled them")


def _other_dealing_error(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    if game is GameId.RWS_NC3P:
        return Ruling(Action.PLAYER_OPTIONS, "RWS-NC3P 5.7",
                      "each player continues (reconstructed if possible) or has the bet returned")
    if game is GameId.LIVE_3P:
        return _dealt_incorrectly(rules, game, ctx)
    return general(rules, "dealing error")


def _exposed(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    """The clause turns on where the card was seen (RWS-NC3P 5.10 vs 5.7), when (MBS-R3P 5.8
    "dealt", RWS-3CP 5.1.2 "during the deal", LIVE-3P T&C 2 bets offering vs shuffling) and how
    many (RWS-3CP 5.1.2 "two or more", LIVE-3P T&C 2 "number of exposed cards")."""
    if game is GameId.LIVE_3P:
        return _live_exposed(rules, ctx)
    if ctx.source is Source.DRAWN:
        return general(rules, "card drawn while bets are offered")
    if ctx.revealed:
        return Ruling(Action.CONTINUE, f"{rules.cite} (no clause: every hand is face up after "
                      f"the reveal)", "a card exposed after the reveal changes nothing")
    if game is GameId.RWS_NC3P:
        if ctx.source is Source.DEVICE:
            return Ruling(Action.CONTINUE, "RWS-NC3P 5.10",
                          "card found face up in the shoe/shuffler: used as the next card")
        if ctx.source is Source.DEALER:
            return Ruling(Action.PLAYER_OPTIONS, "RWS-NC3P 5.7",
                          "card exposed by the dealer, a dealing error: each player continues "
                          "or has the bet returned and the hand invalidated (5.7.3)")
        return Ruling(Action.SUPERVISOR, "RWS-NC3P 5.10, 5.7",
                      "exposed card: found face up in the shoe/shuffler (5.10, used as the next "
                      "card) or exposed by the dealer (5.7, the players' options)?",
                      (Act.IN_DEVICE, Act.BY_DEALER))
    dealing = ctx.phase in (Phase.DEALING, Phase.BURNING)
    if game is GameId.MBS_R3P and dealing:
        if ctx.manual_device and ctx.first_card:
            return Ruling(Action.VOID, "MBS-R3P 5.8.1",
                          "first card from a manual dealing device exposed")
        return Ruling(Action.CONTINUE, "MBS-R3P 5.8", "card turned face down, dealing continues")
    if game is GameId.RWS_3CP and dealing:
        if ctx.exposed_in_deal >= 2:
            return Ruling(Action.VOID, "RWS-3CP 5.1.2", "two or more cards exposed during the deal")
        return general(rules, "one card exposed during the deal (5.1.2 voids for two or more)")
    return general(rules, f"card exposed ({ctx.phase.value})")


def _live_exposed(rules: GameRules, ctx: Context) -> Ruling:
    if ctx.source is Source.DEVICE and ctx.phase not in (Phase.DEALING, Phase.BURNING):
        count = f"{ctx.exposed_count} card{'s' if ctx.exposed_count != 1 else ''}"
        return Ruling(Action.SUPERVISOR, "LIVE-3P T&C 2",
                      f"found face up in the shuffler while shuffling ({count} this round, "
                      f"{ctx.phase.value}): management acts on the stage of shuffling and the "
                      f"number of cards", _VOID_OR_CONTINUE)
    if ctx.phase is Phase.BETTING:
        return Ruling(Action.VOID, "LIVE-3P T&C 2", "card exposed during bets offering")
    if ctx.phase is Phase.BURNING:
        return Ruling(Action.CONTINUE, "LIVE-3P T&C 2",
                      "a burn card exposed: T&C 2 excepts burn cards")
    if ctx.phase is Phase.BEFORE_DEAL:
        return Ruling(Action.SUPERVISOR, "LIVE-3P T&C 2", "card exposed after bets closed, "
                      "before the burn: management decides", _VOID_OR_CONTINUE)
    return Ruling(Action.CONTINUE, "LIVE-3P Game Play",
                  "cards are dealt face up in the studio; exposure during the deal is normal")


def _simultaneous(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    if game is GameId.RWS_NC3P:
        return Ruling(Action.SUPERVISOR, "RWS-NC3P 5.11, 5.11.1",
                      "Pit Supervisor decides the order; a dealing error: options of 5.7",
                      (Act.ORDER, Act.VOID), then=Action.PLAYER_OPTIONS)
    return Ruling(Action.SUPERVISOR, _GENERAL[game],
                  "simultaneous draw not provided for: supervisor decides the order",
                  (Act.ORDER, Act.VOID))


def _burn(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    if game is not GameId.LIVE_3P:
        return general(rules, "burn error")
    if ctx.before_p1_second_card:
        return Ruling(Action.SUPERVISOR, "LIVE-3P T&C 1",
                      "burn error found before Player 1's second card: reconstruction",
                      (Act.RECONSTRUCT,))
    return Ruling(Action.SUPERVISOR, "LIVE-3P T&C 1",
                  "burn error found after Player 1's second card: management may void",
                  _VOID_OR_CONTINUE)


def _dropped(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    if game is not GameId.LIVE_3P:
        return general(rules, "dropped card")
    if ctx.phase is not Phase.DEALING or ctx.exposed_before_drop:
        return Ruling(Action.CONTINUE, "LIVE-3P T&C 4", "dropped card picked up and reused")
    return Ruling(Action.VOID, "LIVE-3P T&C 4",
                  "card fell out of camera view during dealing without being exposed")


def _reversed(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    if game is not GameId.LIVE_3P:
        return general(rules, "reversed dealing sequence")
    if ctx.phase is Phase.DEALT:
        return Ruling(Action.SWAP_RESULTS, "LIVE-3P T&C 5",
                      "whole hand dealt P3 -> P2 -> P1 -> Banker: results of P1 and P3 swapped")
    return Ruling(Action.SUPERVISOR, "LIVE-3P T&C 5",
                  "wrong sequence found before submission: reconstruction", _RECONSTRUCT_OR_VOID)


def _after_game(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    if game is GameId.LIVE_3P:
        return Ruling(Action.IGNORE, "LIVE-3P T&C 3", "card drawn after the game does not count")
    if ctx.phase is Phase.NO_ROUND:
        return Ruling(Action.IGNORE, _GENERAL[game], "no round in progress: card not used")
    return general(rules, "card drawn after the deal was complete")


def _jammed(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    """RWS-NC3P 5.4 applies to a technical interruption "that affects the continuation of a
    Round of play": a jam the dealer clears does not, one that stops the round does. The table
    cannot tell which, so the supervisor is asked exactly that; with an outcome established the
    answer changes nothing (5.4.1: play continues). MBS-R3P 5.13 is for a power failure only."""
    if game is GameId.LIVE_3P:
        return Ruling(Action.SUPERVISOR, "LIVE-3P T&C 6",
                      "cards jammed in the shuffler: management may void", _VOID_OR_CONTINUE)
    if game is GameId.RWS_NC3P and ctx.phase is not Phase.BETTING:
        if ctx.established:
            return Ruling(Action.CONTINUE, "RWS-NC3P 5.4.1", "shuffler jammed with an outcome "
                          "established: play continues to a conclusion")
        return Ruling(Action.SUPERVISOR, "RWS-NC3P 5.4, 5.17",
                      "shuffler jammed, no outcome established: cleared and dealing continues "
                      "(continue), or it stops the round (interrupts: 5.4.2 voids)?",
                      (Act.CONTINUE, Act.INTERRUPTS))
    return Ruling(Action.SUPERVISOR, _GENERAL[game],
                  "shuffler jammed: a supervisor has it cleared and dealing continues, or voids"
                  + (" (outcome established)" if ctx.established else ""), _VOID_OR_CONTINUE)


def _interruption(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    """The round of play began at "Place your bets" (RWS-NC3P 1.14): after "No more bets" an
    interruption is ruled whether or not a card has been dealt, a reboot as an offline device
    (5.4.2 makes no exception before the first card; docs/rules-coverage.md)."""
    if game is GameId.RWS_NC3P:
        if ctx.established:
            return Ruling(Action.CONTINUE, "RWS-NC3P 5.4.1",
                          "outcome established: play continues to a conclusion")
        return Ruling(Action.VOID, "RWS-NC3P 5.4.2", "technical interruption, no outcome "
                      "established")
    if game is GameId.MBS_R3P:
        if ctx.established:
            return Ruling(Action.CONTINUE, "MBS-R3P 5.13.2",
                          "outcome established: play continues to a conclusion")
        return Ruling(Action.PLAYER_OPTIONS, "MBS-R3P 5.13.1",
                      "no outcome established: players may withdraw all their wagers")
    return Ruling(Action.SUPERVISOR, _GENERAL[game],
                  "technical interruption not provided for"
                  + (" (outcome established)" if ctx.established else " (no outcome established)"),
                  _VOID_OR_CONTINUE)


def _no_read(rules: GameRules, game: GameId, ctx: Context) -> Ruling:
    return Ruling(Action.SUPERVISOR, _GENERAL[game],
                  "a card passed the reader unidentified: a supervisor enters it or voids",
                  (Act.ORDER, Act.VOID))


_HANDLERS = {
    Kind.FOREIGN_CARD: _void_or_general(_FOREIGN, "card not of the deck in use"),
    Kind.DUPLICATE_CARD: _void_or_general(_DUPLICATE, "second copy of a card"),
    Kind.DECK_COUNT: _void_or_general(_COUNT, "shortage or excess of cards in the deck"),
    Kind.NOT_SHUFFLED: _void_or_general(_NOT_SHUFFLED, "cards not shuffled"),
    Kind.WRONG_COUNT_PLAYER: _wrong_count_player,
    Kind.WRONG_COUNT_DEALER: _wrong_count_dealer,
    Kind.DEALT_INCORRECTLY: _dealt_incorrectly,
    Kind.OTHER_DEALING_ERROR: _other_dealing_error,
    Kind.EXPOSED_CARD: _exposed,
    Kind.SIMULTANEOUS_DRAW: _simultaneous,
    Kind.BURN_ERROR: _burn,
    Kind.DROPPED_CARD: _dropped,
    Kind.REVERSED_SEQUENCE: _reversed,
    Kind.CARD_AFTER_GAME: _after_game,
    Kind.JAMMED: _jammed,
    Kind.INTERRUPTION: _interruption,
    Kind.NO_READ: _no_read,
}
