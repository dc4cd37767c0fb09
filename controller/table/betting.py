"""Betting and the deck before the deal: wagers placed and withdrawn, "No more bets", the
shuffle confirmed, and a deck blocked by a wrong count until it is replaced or counted.

A wager is checked against the layout, the limits and the bet's prerequisites before it goes on
the layout, so a refused wager leaves the round exactly as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from controller.errors import WagerError
from controller.games.rules import GameId, LimitPolicy
from controller.settlement import Wager
from controller.settlement.validate import check_seated, check_wager
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.core import RoundCore
from controller.table.dealing import Deal
from controller.table.irregularities import rule
from controller.table.layout import DealingDevice
from controller.table.priority import CLAUSE as BOX_MAXIMUM_CLAUSE
from controller.table.priority import Reduction, allocate
from controller.table.procedure import burn_cards, deal_plan, receiving_boxes
from controller.table.states import AFTER_CLOSE, IN_ROUND, NO_ROUND, Kind, Refused, S

_NO_MORE_BETS = {GameId.RWS_NC3P: "RWS-NC3P 5.8", GameId.MBS_3P: "MBS-3P 5.5",
                 GameId.MBS_R3P: "MBS-R3P 5.2", GameId.RWS_3CP: "RWS-3CP 5.2",
                 GameId.LIVE_3P: "LIVE-3P Game Play (bets are taken while bets are offered)"}
_NO_WITHDRAW = {GameId.RWS_NC3P: "RWS-NC3P 5.8", GameId.MBS_3P: "MBS-3P 5.6",
                GameId.MBS_R3P: "MBS-R3P 5.3", GameId.RWS_3CP: "RWS-3CP 5.2",
                GameId.LIVE_3P: "LIVE-3P Game Play"}


@dataclass(slots=True)
class WagerBook:
    """The round's wagers, the ones taken out of play by a player's option, and the players'
    play-or-fold decisions: written only here, a new book each round. Betting places, cuts
    (the box maximum, RWS-NC3P 5.1) and takes back wagers; the options withdraw them and the
    decisions add the Play wagers (RWS-3CP 3.8.2), each by asking the book."""

    wagers: dict[str, Wager] = field(default_factory=dict)
    withdrawn: dict[str, str] = field(default_factory=dict)
    """Wager id -> the clause under which the player withdrew it (returned at settlement)."""
    decisions: dict[str, cmd.Choice] = field(default_factory=dict)

    def put(self, wager: Wager) -> None:
        self.wagers[wager.id] = wager

    def cut(self, wager: Wager, keep: int) -> None:
        """The box maximum cuts ``wager`` back to ``keep`` (0: off the layout)."""
        if keep:
            self.wagers[wager.id] = replace(wager, amount=keep)
        else:
            del self.wagers[wager.id]

    def take_back(self, wager_id: str) -> None:
        """Withdrawn while bets are open: as if never placed."""
        del self.wagers[wager_id]

    def withdraw(self, wager_id: str, clause: str) -> None:
        """Taken out of play by the player's option; returned at settlement under ``clause``."""
        self.withdrawn[wager_id] = clause

    def adopt(self, wagers: tuple[Wager, ...]) -> None:
        """Replay only, of a journal written before a listed change of a placement ruling
        (:mod:`controller.journal.rule_changes`): the layout that release's ruling left when
        bets closed, so the deal, the cards and the money are re-derived by today's rules from
        what was really on the layout, and an upgraded table resumes the round it had."""
        self.wagers = {wager.id: wager for wager in wagers}

    def decide(self, position: str, choice: cmd.Choice, plays: tuple[Wager, ...]) -> None:
        """A player's decision at ``position``, with the Play wagers it places."""
        for wager in plays:
            self.wagers[wager.id] = wager
        self.decisions[position] = choice


class BettingMixin(RoundCore):
    """Wagers, No more bets, the shuffle and the deck: the round up to its first card."""

    def _betting_open(self) -> None:
        if self.state is not S.BETTING:
            if self.state in AFTER_CLOSE:
                raise Refused(f"no more bets: no wager may be placed or increased "
                              f"({_NO_MORE_BETS[self.rules.id]})")
            raise Refused("no round is open for betting")

    def _cmd_PlaceWagers(self, command: cmd.PlaceWagers) -> None:
        """Each wager judged alone, in order, exactly as a :class:`cmd.PlaceWager` of it; the
        accepted ones are announced together in one :class:`ev.WagersAccepted` (one journal
        record for the batch). A reduction of a Standing Player's wager (RWS-NC3P 5.1) first
        announces the wagers accepted before it, so the records keep the table's order.

        Whatever refuses one wager (the layout, a bet the game lacks or does not offer at that
        position, an amount outside the limits) refuses that wager alone: the batch is never
        refused whole once a wager of it is on the layout, so the batch's outcome (what
        ``WagersAccepted`` and each ``WagerRefused`` say) is exactly what the table holds
        (issue 33, finding 1: a limit's refusal escaped the loop and left the wagers ahead of
        it placed under a ``command_refused``)."""
        self._betting_open()
        if not command.wagers:
            raise Refused("the batch holds no wager")
        accepted: list[Wager] = []
        for order in command.wagers:
            try:
                wager, reductions = self._placement(command.single(order))
            except (Refused, WagerError) as refusal:
                self.emit(ev.WagerRefused(round=self.number, wager_id=order.wager_id,
                                          reason=str(refusal)))
                continue
            others = [r for r in reductions if r.wager.id != wager.id]
            if others:
                self._announce(accepted)
                for reduction in others:
                    self._reduce(reduction)
            self.book.put(wager)
            accepted.append(wager)
            if len(others) < len(reductions):  # its own excess returned: after its acceptance
                self._announce(accepted)
                self._reduce(next(r for r in reductions if r.wager.id == wager.id))
        self._announce(accepted)

    def _announce(self, accepted: list[Wager]) -> None:
        if accepted:
            self.emit(ev.WagersAccepted(round=self.number, wagers=tuple(accepted)))
            accepted.clear()

    def _cmd_PlaceWager(self, command: cmd.PlaceWager) -> None:
        """The cuts to other wagers first, then the wager accepted as placed, then its own cut
        (RWS-NC3P 5.1: its excess returned), so each record names the amount it cuts from."""
        wager, reductions = self._placement(command)
        own = [r for r in reductions if r.wager.id == wager.id]
        for reduction in reductions:
            if reduction.wager.id != wager.id:
                self._reduce(reduction)
        self.book.put(wager)
        self.emit(ev.WagerAccepted(round=self.number, wager=wager))
        for reduction in own:
            self._reduce(reduction)

    def _placement(self, command: cmd.PlaceWager) -> tuple[Wager, list[Reduction]]:
        """The wager a placement would put on the layout and the reductions it needs; raises
        :class:`Refused` (nothing changed) when it may not go on."""
        self._betting_open()
        wager = Wager(command.wager_id, command.position, command.bet, command.amount,
                      command.player, command.seated)
        return wager, self._check_placement(wager)

    def _check_placement(self, wager: Wager) -> list[Reduction]:
        """Refuse a wager the layout, limits or prerequisites forbid; else the Standing
        Players' wagers to cut back to make room for it (RWS-NC3P 5.1), maybe none."""
        rules = self.rules
        if wager.id in self.wagers:
            raise Refused(f"wager id {wager.id!r} is already on the layout")
        if wager.position not in self.layout.boxes and wager.position != rules.dealer:
            raise Refused(f"box {wager.position} is not on this table's layout")
        if wager.bet == "play":
            raise Refused("the Play wager is placed by a play decision after the deal "
                          "(RWS-3CP 3.8.2)")
        check_wager(rules, wager, self.layout.limits, self.layout.progressive.stake)
        if wager.seated:  # one Seated Player a box (RWS-NC3P 1.15): settle refuses two too
            check_seated(rules, [*(w for w in self.wagers.values()
                                   if w.position == wager.position), wager])
        spec = rules.bet(wager.bet)
        limit = self.layout.limits.get(wager.bet)
        per_box = limit is not None and rules.limit_policy is LimitPolicy.PRO_RATA
        if not (spec.requires or rules.max_wagers_per_area is not None or per_box):
            return []  # nothing here depends on the box's other wagers: no scan of the layout
        # (a studio round holds thousands of wagers: scanning them for each was quadratic)
        here = [w for w in self.wagers.values() if w.position == wager.position]
        if spec.requires and not any(w.bet == spec.requires for w in here):
            raise Refused(f"{wager.bet} needs a {spec.requires} wager at box {wager.position} "
                          f"({spec.requires_clause})")
        if rules.max_wagers_per_area is not None:
            if sum(1 for w in here if w.bet == wager.bet) >= rules.max_wagers_per_area:
                raise Refused(f"at most {rules.max_wagers_per_area} wagers per playing area "
                              f"({rules.max_wagers_clause})")
        if per_box and limit is not None:  # RWS-NC3P 5.1, 5.2: the box's limits by priority
            return allocate(wager, here, limit, rules.initial_bet)
        return []

    def _reduce(self, reduction: Reduction) -> None:
        wager = reduction.wager
        self.book.cut(wager, reduction.keep)
        self.emit(ev.WagerReduced(round=self.number, wager_id=wager.id, player=wager.player,
                                  amount=reduction.keep, returned=wager.amount - reduction.keep,
                                  clause=BOX_MAXIMUM_CLAUSE, reason=reduction.reason))

    def _cmd_WithdrawWager(self, command: cmd.WithdrawWager) -> None:
        if self.state is not S.BETTING:
            raise Refused(f"no more bets: no wager may be withdrawn "
                          f"({_NO_WITHDRAW[self.rules.id]})")
        wager = self.wagers.get(command.wager_id)
        if wager is None:
            raise Refused(f"no wager {command.wager_id!r} on the layout")
        rest = [w for w in self.wagers.values() if w.position == wager.position and w is not wager]
        needing = [w for w in rest if self.rules.bet(w.bet).requires == wager.bet]
        if needing and not any(w.bet == wager.bet for w in rest):
            raise Refused(f"wager {wager.id} carries the {needing[0].bet} wager "
                          f"{needing[0].id} ({self.rules.bet(needing[0].bet).requires_clause}); "
                          f"withdraw that first")
        self.book.take_back(wager.id)
        self.emit(ev.WagerWithdrawn(round=self.number, wager_id=wager.id, player=wager.player))

    def _cmd_CloseBets(self, command: cmd.CloseBets) -> None:
        if self.state is not S.BETTING:
            raise Refused(f"bets are not open (state {self.state.value})")
        if self.offline:
            devices = ", ".join(f"{name} ({why})" for name, why in sorted(self.offline.items()))
            raise Refused(f"dealing device offline: {devices}; bets stay open until it returns "
                          f"(a round closed now could not be dealt)")
        receiving = receiving_boxes(self.rules, self.layout.boxes, self.wagers.values())
        self.cards.start(Deal(deal_plan(self.rules, self.layout.device, receiving),
                              burn_cards(self.layout.device), self.rules.dealer))
        self.close_bets()
        self.emit(ev.BetsClosed(round=self.number, wagers=tuple(self.wagers.values()),
                                receiving=receiving))
        if self.state is S.SHUFFLED:
            self.emit(ev.ShuffleConfirmed(round=self.number, source="before close"))

    def _cmd_ConfirmShuffle(self, command: cmd.ConfirmShuffle) -> None:
        if self.layout.device is DealingDevice.SHUFFLER and \
                self.state not in (*NO_ROUND, S.BETTING, S.CLOSED):
            raise Refused(f"the shuffler confirms its own shuffles; a shuffle confirmed by hand "
                          f"during the round ({self.state.value}) would count for a deck the "
                          f"shuffler never shuffled")
        self._shuffle_done(f"{command.actor} ({command.role.value})")

    def _shuffle_done(self, source: str) -> None:
        if self.deck_blocked is not None:
            raise Refused(f"dealing is blocked until the deck is replaced or counted: "
                          f"{self.deck_blocked}")
        if self.state in NO_ROUND:
            self.deck.shuffled_for_next()
            self.emit(ev.ShuffleConfirmed(round=self.number + 1, source=source))
        elif self.state is S.BETTING:
            self.deck.shuffled_now()
            self.emit(ev.ShuffleConfirmed(round=self.number, source=source))
        elif self.state is S.CLOSED:
            self.deck.shuffled_now()
            self.confirm_shuffle()
            self.emit(ev.ShuffleConfirmed(round=self.number, source=source))
        else:
            self.deck.shuffled_for_next()  # a shuffle for the next round (two-deck shufflers)
            self.emit(ev.ShuffleConfirmed(round=self.number + 1, source=source))

    def _cmd_ReplaceDeck(self, command: cmd.ReplaceDeck) -> None:
        self._release(f"{command.actor}: deck replaced")

    def _cmd_DeckCounted(self, command: cmd.DeckCounted) -> None:
        if command.count == 52:
            self._release(f"{command.actor}: deck counted, 52 cards")
            return
        self._deck_count_wrong(f"manual count gives {command.count} cards, not 52")

    def _release(self, by: str) -> None:
        if self.deck_blocked is None:
            raise Refused("dealing is not blocked")
        self.deck.release()
        self.emit(ev.DeckReleased(round=self.number, by=by))

    def _deck_count_wrong(self, detail: str) -> None:
        clause = rule(self.rules, Kind.DECK_COUNT, self._context()).clause
        self.deck.block(detail)
        self.emit(ev.DeckBlocked(round=self.number, reason=detail, clause=clause))
        # During betting nothing is dealt from the deck yet: blocking it is enough, and the
        # round deals once the deck is replaced or counted.
        if self.state in IN_ROUND and self.state not in (S.VOIDED, S.BETTING):
            self._irregularity(Kind.DECK_COUNT, detail=detail)
