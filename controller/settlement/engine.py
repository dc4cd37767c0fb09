"""``settle``: the one pure function from a round's hands and wagers to every wager's result.

Order of decisions for each wager: a hand removed from play returns its wagers (RWS-NC3P 5.9,
MBS-R3P 5.5); a side wager on a box without the wager it needs is returned (RWS-NC3P 5.14,
MBS-R3P 3.5, RWS-3CP 3.4); limits decide the stake in action (RWS-NC3P 5.1, MBS-R3P 5.10-5.11);
then the bet is resolved against the hands. A void returns everything (:func:`void_round`).
"""

from __future__ import annotations

from collections.abc import Iterable

from controller.games import pictures, poker
from controller.games.rules import Family, GameRules, LimitPolicy
from controller.settlement import pictures as pictures_bets
from controller.settlement import poker as poker_bets
from controller.settlement.limits import Stake, cap_and_memory, pro_rata
from controller.settlement.model import (
    Outcome,
    Result,
    RoundInput,
    Settlement,
    TableMemory,
    Wager,
)
from controller.settlement.payout import Resolution, returned
from controller.settlement.validate import check_hands, check_wagers


def void_round(wagers: Iterable[Wager], clause: str, memory: TableMemory = TableMemory()
               ) -> Settlement:
    """A void round returns every wager (RWS-NC3P 5.15 and the void clauses of each game)."""
    results = tuple(Result(w.id, Outcome.RETURNED, 0, clause, (), amount=w.amount,
                           returned=w.amount) for w in wagers)
    return Settlement(results, memory)


def _needed_hands(rules: GameRules, round_: RoundInput) -> set[str]:
    needed: set[str] = set()
    for wager in round_.wagers:
        if wager.position in round_.returned_positions:
            continue
        spec = rules.bet(wager.bet)
        has_required = spec.requires is None or _has_required(round_, wager.position,
                                                               spec.requires)
        if has_required:
            needed.update((wager.position, rules.dealer))
    return needed


def _has_required(round_: RoundInput, position: str, bet: str) -> bool:
    """A wager of ``bet`` is at ``position``, or was when bets closed (withdrawn since by its
    player's option: :attr:`RoundInput.on_layout_at_close`)."""
    return (position, bet) in round_.on_layout_at_close or any(
        w.position == position and w.bet == bet for w in round_.wagers)


def _stakes(round_: RoundInput, wagers: list[Wager]) -> tuple[dict[str, Stake], frozenset[str]]:
    rules = round_.rules
    if rules.limit_policy is LimitPolicy.PRO_RATA:
        return pro_rata(wagers, round_.limits, round_.rounding_unit, rules.initial_bet), \
            round_.memory.under_minimum_players
    if rules.limit_policy is LimitPolicy.CAP_AND_MEMORY:
        return cap_and_memory(wagers, round_.limits, round_.memory)
    return {w.id: Stake(w.amount) for w in wagers}, round_.memory.under_minimum_players


def settle(round_: RoundInput) -> Settlement:
    """Settle every wager of a round that reached its showdown."""
    rules = round_.rules
    if round_.rounding_unit < 1:
        from controller.errors import RequestError

        raise RequestError(f"rounding unit must be at least 1 minor unit, got "
                           f"{round_.rounding_unit}")
    wagers = list(round_.wagers)
    check_wagers(rules, wagers, round_.limits, round_.progressive.stake)
    if round_.void_clause is not None:
        return void_round(wagers, round_.void_clause, round_.memory)
    check_hands(rules, round_.hands, _needed_hands(rules, round_))

    early: dict[str, Resolution] = {}
    playing: list[Wager] = []
    for wager in wagers:
        spec = rules.bet(wager.bet)
        if wager.position in round_.returned_positions:
            early[wager.id] = returned(round_.returned_positions[wager.position],
                                      label="hand removed from play")
        elif spec.requires and not _has_required(round_, wager.position, spec.requires):
            early[wager.id] = returned(spec.requires_clause or spec.clause,
                                       label=f"no {spec.requires} wager at this box")
        else:
            playing.append(wager)

    stakes, remembered = _stakes(round_, playing)
    if rules.family is Family.THREE_CARD_POKER:
        resolver = _PokerRound(round_, playing)
    else:
        resolver = _PicturesRound(round_)

    results = []
    for wager in wagers:
        if wager.id in early:
            res, stake_amount = early[wager.id], 0
        else:
            stake = stakes[wager.id]
            if stake.returned_by is not None:
                res, stake_amount = returned(stake.returned_by, label="limit"), 0
            else:
                res = resolver.resolve(wager, stake.amount)
                res = Resolution(res.outcome, res.net, res.rule, (*res.components, *stake.notes))
                stake_amount = stake.amount
        results.append(Result(wager.id, res.outcome, res.net, res.rule, res.components,
                              stake_amount, amount=wager.amount,
                              returned=wager.amount - stake_amount))
    jackpot = resolver.jackpot_after() if isinstance(resolver, _PokerRound) \
        else round_.memory.progressive_jackpot
    return Settlement(tuple(results), TableMemory(remembered, jackpot))


class _PicturesRound:
    """Evaluated hands of a Three Pictures round and the dispatch from bet to resolver."""

    def __init__(self, round_: RoundInput) -> None:
        self.rules = round_.rules
        self.unit = round_.rounding_unit
        self.values = {pos: pictures.evaluate(cards) for pos, cards in round_.hands.items()}
        self.hands = round_.hands
        self._resolved: dict[tuple[str, str, int], Resolution] = {}

    def resolve(self, wager: Wager, stake: int) -> Resolution:
        """A Three Pictures wager's result depends only on its box, bet and stake (no
        meter, no decision): worked out once per such triple, so a studio round of 2,000
        members' wagers on three hands costs a few hundred resolutions, not 2,000."""
        key = (wager.position, wager.bet, stake)
        known = self._resolved.get(key)
        if known is None:
            known = self._resolved[key] = self._resolve(wager, stake)
        return known

    def _resolve(self, wager: Wager, stake: int) -> Resolution:
        rules, unit, bet = self.rules, self.unit, wager.bet
        if bet == "pair_plus":
            return pictures_bets.resolve_pair_plus(
                rules, stake, poker.evaluate(self.hands[wager.position]), unit)
        own, dealer = self.values[wager.position], self.values[rules.dealer]
        if bet == "main":
            return pictures_bets.resolve_main(rules, stake, own, dealer, unit)
        if bet == "win":
            return pictures_bets.resolve_live_win(rules, stake, own, dealer, unit)
        if bet == "lose":
            return pictures_bets.resolve_live_lose(rules, stake, own, dealer, unit)
        if bet == "tie":
            return pictures_bets.resolve_tie(rules, stake, own, dealer, unit)
        if bet == "royal_pictures":
            return pictures_bets.resolve_royal_pictures(rules, stake, own, unit)
        return pictures_bets.resolve_three_pictures(rules, bet, stake, own, unit)


class _PokerRound:
    """Evaluated hands, decisions and the progressive meter of an RWS-3CP round."""

    def __init__(self, round_: RoundInput, playing: list[Wager]) -> None:
        self.rules = round_.rules
        self.unit = round_.rounding_unit
        self.hands = {
            pos: poker_bets.ProgressiveHand(
                poker.evaluate(cards),
                cards[0].suit if cards[0].suit is cards[1].suit is cards[2].suit else None)
            for pos, cards in round_.hands.items()
        }
        antes = {w.position for w in playing if w.bet == "ante"}
        # 3.8: each player decides for himself; a fold is an Ante without that player's Play.
        self.played = {(w.position, w.player) for w in playing if w.bet == "play"}
        self.folded = {(w.position, w.player) for w in playing
                       if w.bet == "ante"} - self.played
        progressive = [w for w in playing if w.bet == "progressive"]
        config = round_.progressive
        self.meter = round_.memory.progressive_jackpot + sum(
            w.amount for w in progressive) * config.contribution_per_mille // 1000
        self.seed = config.seed
        # Top-two hands achieved at a box holding an Ante trigger Envy Bonuses (3.12, 3.13).
        triggers = [
            (pos, {w.player for w in playing if w.position == pos and w.bet == "ante"},
             self.hands[pos].line_key)
            for pos in sorted(antes) if pos in self.hands
            and self.hands[pos].line_key in ("akq_spades", "akq_suited")
        ]
        self.envy = _envy_by_wager(progressive, triggers, self.rules.positions)
        self.jackpot_paid = False

    def resolve(self, wager: Wager, stake: int) -> Resolution:
        rules, unit, pos = self.rules, self.unit, wager.position
        player, dealer = self.hands[pos].value, self.hands[rules.dealer].value
        if wager.bet == "ante":
            return poker_bets.resolve_ante(rules, stake, player, dealer,
                                           (pos, wager.player) in self.played, unit)
        if wager.bet == "play":
            return poker_bets.resolve_play(rules, stake, player, dealer, unit)
        if wager.bet == "pair_plus":
            return poker_bets.resolve_pair_plus_3cp(rules, stake, player,
                                                    (pos, wager.player) in self.folded, unit)
        res = poker_bets.resolve_progressive(
            rules, stake, self.hands[pos], self.meter, self.envy.get(wager.id, ()),
            seated=wager.seated is not False)
        if any(c.label == "akq_spades" for c in res.components):
            self.jackpot_paid = True
        return res

    def jackpot_after(self) -> int:
        """The meter after this round: reset to the seed when the jackpot was won."""
        return self.seed if self.jackpot_paid else self.meter


def _envy_by_wager(progressive: list[Wager], triggers: list[tuple[str, set[str | None], str]],
                   positions: tuple[str, ...]) -> dict[str, list[str]]:
    """RWS-3CP 3.12: each other seated Player receives one Envy Bonus per top-two hand, however
    many boxes he holds a progressive wager at ("Players", not wagers). The bonus is attached to
    his first eligible progressive wager in layout order, so the list order of the request does
    not matter. A wager without a player id cannot be matched to others and counts as its own
    player; a trigger at the wager's own box is never "other"."""
    order = {pos: index for index, pos in enumerate(positions)}
    by_player: dict[str, list[Wager]] = {}
    for wager in progressive:
        if wager.seated is not False:
            by_player.setdefault(wager.player or f"wager:{wager.id}", []).append(wager)
    envy: dict[str, list[str]] = {}
    for wagers in by_player.values():
        paid: set[int] = set()
        for wager in sorted(wagers, key=lambda w: (order.get(w.position, len(order)), w.id)):
            for index, (trigger_pos, owners, key) in enumerate(triggers):
                if index in paid or trigger_pos == wager.position or (
                        wager.player is not None and wager.player in owners):
                    continue
                envy.setdefault(wager.id, []).append(key)
                paid.add(index)
    return envy
