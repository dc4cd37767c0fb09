"""The JSON form of a settlement request and result (``tablectl settle``'s contract).

Request: ``{"game", "hands": {POS: [cards]}, "wagers": [{"id", "position", "bet", "amount",
"player"?, "seated"?}], "limits"?: {BET: {"min", "max"}}, "progressive_jackpot"?,
"progressive_stake"?, "rounding_unit"?, "under_minimum_players"?, "removed_hands"?: {POS:
CLAUSE}, "void"?: CLAUSE}``; the JSON Schema is ``schemas/settle-request.schema.json``.
``removed_hands`` names the hands removed from play with the clause that removes them (RWS-NC3P
5.9, MBS-R3P 5.5); ``void`` makes the round Void under the clause given (RWS-NC3P 5.15), so hands
may be absent. Every structural problem raises :class:`RequestError` naming the field, e.g.
``wagers[2].amount``; a field the contract does not know is refused too, since a misspelt
``"limts"`` silently ignored would settle a different round than the one meant.

The request is also judged as the table would judge the round (issue 34), since whatever it
cites is printed as the rule that applied: a void or removal clause must be one of the game's
own (:attr:`GameRules.void_clauses`, :attr:`GameRules.removal_clauses`, the lists the table's
rulings are checked against); a removed hand must be a box that was dealt; RWS-NC3P has one
Seated Player per box (:func:`~controller.settlement.validate.check_seated`); and the table
memory a game does not keep is refused: the progressive meter and stake outside RWS-3CP, the
under-minimum players outside MBS-R3P (5.10). A wager outside the limits is refused where no
clause settles it (:func:`~controller.settlement.validate.check_wager`); RWS-NC3P 5.1.1, 5.1.2,
5.2.1 and MBS-R3P 5.10-5.12 settle it (docs/rules-coverage.md, interpretation 46).
"""

from __future__ import annotations

from typing import Any

from controller.errors import RequestError
from controller.games import hands as hand_values
from controller.games.cards import codes, parse_cards
from controller.games.catalog import get_game
from controller.games.rules import GameRules, LimitPolicy
from controller.settlement.model import (
    MAX_AMOUNT,
    BetLimit,
    ProgressiveConfig,
    RoundInput,
    Settlement,
    TableMemory,
    Wager,
)
from controller.settlement.validate import check_seated


def _field(obj: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...],
           required: bool = True) -> Any:
    if key not in obj:
        if required:
            raise RequestError(f"{where}: missing field {key!r}")
        return None
    value = obj[key]
    if isinstance(value, bool) and kind is int:
        raise RequestError(f"{where}.{key}: expected a whole number, got {value!r}")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise RequestError(f"{where}.{key}: expected {names}, got {value!r}")
    return value


_REQUEST_FIELDS = frozenset({"game", "hands", "wagers", "limits", "progressive_jackpot",
                             "progressive_stake", "rounding_unit", "under_minimum_players",
                             "removed_hands", "void"})
_WAGER_FIELDS = frozenset({"id", "position", "bet", "amount", "player", "seated"})
_LIMIT_FIELDS = frozenset({"min", "max"})


def _known_fields(obj: dict[str, Any], known: frozenset[str], where: str) -> None:
    unknown = sorted(set(obj) - known)
    if unknown:
        raise RequestError(f"{where}: unknown field {unknown[0]!r}; known fields are "
                           f"{', '.join(sorted(known))}")


def _amount(value: Any, where: str) -> int:
    if value is None:
        raise RequestError(f"{where}: missing (amounts are whole numbers of minor units)")
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{where}: amounts are whole numbers of minor units, got {value!r}")
    if not 0 <= value <= MAX_AMOUNT:
        raise RequestError(f"{where}: {value} is outside 0-{MAX_AMOUNT} minor units")
    return value


def _clause(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RequestError(f"{where}: expected the clause that applies, e.g. \"RWS-NC3P 5.9\", "
                           f"got {value!r}")
    return value


def _player(value: Any, where: str) -> str:
    """A player id: a string with something in it (an empty id names nobody)."""
    if not isinstance(value, str) or not value.strip():
        raise RequestError(f"{where}: expected a player id (a non-empty string), got {value!r}")
    return value


def _void(rules: GameRules, value: Any) -> str | None:
    """The game's own void clause(s), as it cites them; 5.15 may stand beside one (RWS-NC3P)."""
    if value is None:
        return None
    given = _clause(value, "void")
    try:
        return rules.void_clause(given, returns=True)
    except RequestError as error:
        raise RequestError(f"void: {error}") from error


def _removed(rules: GameRules, data: dict[str, Any], hands: dict[str, Any],
             wagers: list[Wager]) -> dict[str, str]:
    """``removed_hands``: each a box of the game that was dealt a hand, with a clause of the
    game's that removes one (RWS-NC3P 5.9, 5.7.3; MBS-R3P 5.5). A box was dealt where its hand
    is given or an Initial Bet stands at it (RWS-NC3P 3.12; MBS-R3P 3.12 with 3.5): removing a
    box that had no hand would print a removal as the rule for nothing that happened."""
    removed = {}
    for position, clause in (_field(data, "removed_hands", "request", dict,
                                    required=False) or {}).items():
        where = f"removed_hands.{position}"
        if position not in rules.positions:
            raise RequestError(f"removed_hands: {rules.cite} has no player position "
                               f"{position!r}; positions are {', '.join(rules.positions)}")
        given = _clause(clause, where)
        try:
            removed[position] = rules.removal_clause(given)
        except RequestError as error:
            raise RequestError(f"{where}: {error}") from error
        dealt = position in hands or any(
            w.position == position and w.bet == rules.initial_bet for w in wagers)
        if not dealt:
            raise RequestError(f"{where}: box {position} was never dealt a hand (no hand given "
                               f"for it and no {rules.initial_bet} wager at it), so there is "
                               f"no hand to remove")
    return removed


def _memory(rules: GameRules, data: dict[str, Any]) -> TableMemory:
    """The table memory the game keeps, and only that: the progressive meter (RWS-3CP 4.4) and
    the players whose under-minimum wager was settled once (MBS-R3P 5.10). The latter names
    players of earlier rounds, so a player with no wager in this round is valid there."""
    jackpot = _amount(data.get("progressive_jackpot", 0), "progressive_jackpot")
    for key in ("progressive_jackpot", "progressive_stake"):
        if key in data and "progressive" not in rules.bets:
            raise RequestError(f"{key}: {rules.cite} has no progressive jackpot (only a game "
                               f"with a progressive wager keeps a meter and a stake)")
    if "under_minimum_players" not in data:
        return TableMemory(frozenset(), jackpot)
    players = data["under_minimum_players"]
    if rules.limit_policy is not LimitPolicy.CAP_AND_MEMORY:
        raise RequestError(f"under_minimum_players: {rules.cite} has no clause that remembers "
                           f"players whose under-minimum wager was settled once (the memory of "
                           f"MBS-R3P 5.10)")
    if not isinstance(players, list):
        raise RequestError("under_minimum_players: expected a list of player ids")
    return TableMemory(frozenset(_player(p, f"under_minimum_players[{i}]")
                                 for i, p in enumerate(players)), jackpot)


def parse_request(data: Any) -> RoundInput:
    """Build a :class:`RoundInput` from decoded JSON."""
    if not isinstance(data, dict):
        raise RequestError("request must be a JSON object")
    _known_fields(data, _REQUEST_FIELDS, "request")
    rules = get_game(_field(data, "game", "request", str))
    raw_hands = _field(data, "hands", "request", dict)
    hands = {}
    for position, cards in raw_hands.items():
        if not isinstance(cards, list):
            raise RequestError(f"hands.{position}: expected a list of cards, got {cards!r}")
        hands[position] = parse_cards(cards)
    wagers = []
    for index, raw in enumerate(_field(data, "wagers", "request", list)):
        where = f"wagers[{index}]"
        if not isinstance(raw, dict):
            raise RequestError(f"{where}: expected an object, got {raw!r}")
        _known_fields(raw, _WAGER_FIELDS, where)
        wagers.append(Wager(
            id=str(_field(raw, "id", where, (str, int))),
            position=str(_field(raw, "position", where, (str, int))),
            bet=_field(raw, "bet", where, str),
            amount=_amount(raw.get("amount"), f"{where}.amount"),
            player=_player(raw["player"], f"{where}.player") if "player" in raw else None,
            seated=_field(raw, "seated", where, bool, required=False),
        ))
    limits = {}
    for bet, raw in (_field(data, "limits", "request", dict, required=False) or {}).items():
        where = f"limits.{bet}"
        if not isinstance(raw, dict):
            raise RequestError(f"{where}: expected {{\"min\", \"max\"}}, got {raw!r}")
        _known_fields(raw, _LIMIT_FIELDS, where)
        limits[bet] = BetLimit(_amount(raw.get("min"), f"{where}.min"),
                               _amount(raw.get("max"), f"{where}.max"))
    check_seated(rules, wagers)
    unit = data.get("rounding_unit", 1)
    stake = _amount(data.get("progressive_stake", ProgressiveConfig().stake), "progressive_stake")
    if stake == 0:
        raise RequestError("progressive_stake: must be at least 1 minor unit")
    memory = _memory(rules, data)
    return RoundInput(
        rules=rules, hands=hands, wagers=tuple(wagers), limits=limits,
        memory=memory,
        rounding_unit=_amount(unit, "rounding_unit"),
        progressive=ProgressiveConfig(stake=stake),
        returned_positions=_removed(rules, data, hands, wagers),
        void_clause=_void(rules, data.get("void")),
    )


def render(round_: RoundInput, settlement: Settlement) -> dict[str, Any]:
    """The JSON result: hands with their names, and one entry per wager in request order."""
    rules = round_.rules
    hands = {
        position: {"cards": codes(cards),
                   "name": hand_values.name(rules, hand_values.evaluate(rules, cards))}
        for position, cards in round_.hands.items()
    }
    results = []
    for result in settlement.results:
        entry: dict[str, Any] = {"id": result.wager_id, "outcome": result.outcome.value,
                                 "amount": result.amount, "stake": result.stake,
                                 "returned": result.returned, "net": result.net,
                                 "rule": result.rule}
        if len(result.components) > 1:
            entry["components"] = [{"label": c.label, "net": c.net, "rule": c.rule}
                                   for c in result.components]
        results.append(entry)
    out: dict[str, Any] = {"hands": hands, "results": results}
    if rules.id.value == "rws-three-card-poker":
        out["progressive_jackpot"] = settlement.memory.progressive_jackpot
    if settlement.memory.under_minimum_players:
        out["under_minimum_players"] = sorted(settlement.memory.under_minimum_players)
    return out
