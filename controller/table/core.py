"""The round machine's data, its guard conditions and its output, shared by every part of it.

:class:`RoundCore` is the base of the mixins that :class:`~controller.table.machine.RoundMachine`
is composed of (betting, card intake, rulings, holds, settlement). It owns the round's data and
the pure predicates ``transitions`` evaluates as conditions, and it declares, without defining,
the triggers ``transitions`` binds on the model and the handlers the mixins call on one another,
so each mixin reads as if it were the whole machine.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from controller.games.cards import Card
from controller.games.rules import Family
from controller.settlement import Settlement, TableMemory, Wager
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.dealing import Deal, Delivery
from controller.table.irregularities import Context, Ruling
from controller.table.layout import TableLayout
from controller.table.procedure import burn_cards
from controller.table.options import Offer
from controller.table.states import NO_ROUND, Hold, Kind, RoundState, S
from drivers import events as dev

log = structlog.get_logger("controller.table")

SettledHands = tuple[tuple[str, tuple[Card, ...]], ...]
"""The hands a settlement was made on, by position."""


class RoundCore:
    """One table's round data. Not thread-safe by design: only the table thread calls it."""

    state: RoundState

    # triggers bound by ``transitions`` (RoundMachine.__init__); each returns True when queued
    open_round: Callable[[], bool]
    close_bets: Callable[[], bool]
    confirm_shuffle: Callable[[], bool]
    lose_shuffle: Callable[[], bool]
    start_burn: Callable[[], bool]
    start_deal: Callable[[], bool]
    finish_deal: Callable[[], bool]
    decisions_done: Callable[[], bool]
    reveal: Callable[[], bool]
    settle_round: Callable[[], bool]
    hold: Callable[[], bool]
    offer_options: Callable[[], bool]
    resume: Callable[[], bool]
    void: Callable[[], bool]

    # handlers one mixin provides to the others
    _device: Callable[[dev.DeviceEvent], None]  # intake
    _assigned: Callable[[list[Delivery]], None]  # intake
    _maybe_finish_deal: Callable[[], None]  # intake
    _settle_on_deal_complete: Callable[[], None]  # settling
    _shuffle_done: Callable[[str], None]  # betting
    _deck_count_wrong: Callable[[str], None]  # betting
    _context: Callable[..., Context]  # rulings
    _irregularity: Callable[..., None]  # rulings
    _exposure: Callable[..., None]  # rulings
    _apply: Callable[[Kind, Ruling, str | None, str], None]  # rulings
    _offer_options: Callable[[str], None]  # rulings
    _announce_options: Callable[[bool], None]  # rulings
    _remove_hand: Callable[[str, str], None]  # rulings
    _void: Callable[..., None]  # rulings
    _after_resume: Callable[[], None]  # holds
    _after_settlement: Callable[[cmd.ReportIrregularity], None]  # settling
    _decide_correction: Callable[[Hold, cmd.SupervisorDecision], None]  # settling
    _settlement: Callable[..., tuple[Settlement, SettledHands]]  # settling

    def __init__(self, layout: TableLayout, emit: Callable[[ev.RoundEvent], None],
                 memory: TableMemory = TableMemory()) -> None:
        self.layout = layout
        self.rules = layout.rules
        self.memory = memory
        self._emit_to = emit
        self.number = 0
        self.deck_blocked: str | None = None
        self.offline: dict[str, str] = {}
        """Devices reported offline and not yet back: "No more bets" waits for them."""
        self.clock_block: str | None = None
        """Why the ``[clock]`` policy refuses new rounds (:mod:`.clockgate`); ``None`` if not."""
        self.clock_override: str | None = None
        """Who let rounds open despite :attr:`clock_block`, and why."""
        self._shuffle_pending = False
        self._face_up_pending = 0
        """Cards the shuffler found face up while shuffling between rounds (its exposed-card
        fault bit with no round open): ruled when the next round opens, which they belong to."""
        self._echoes: set[tuple[str, Kind]] = set()
        """(device, kind) already reported by a card event: the fault the same device raises
        right after it (shuffler exposed or duplicate bit, Bee-Tek E3/E5 alarm after the card)
        is the same event. Kept across rounds (the echo may arrive after a void and the next
        "Place your bets") until the device's next card event."""
        self._settled_from: TableMemory | None = None
        self._corrected = False
        self._reset_round()

    # -- round data -------------------------------------------------------------------------
    def _reset_round(self) -> None:
        self.wagers: dict[str, Wager] = {}
        self.withdrawn: dict[str, str] = {}
        self.removed: dict[str, str] = {}
        self.decisions: dict[str, cmd.Choice] = {}
        self.deal: Deal | None = None
        self.shuffled = False
        self.exposed = 0
        self.exposed_in_deal = 0
        self.hold_info: Hold | None = None
        self.offer: Offer | None = None
        self.offers = 0
        """Announcements of options this round (numbers each :class:`Offer`)."""
        self.buffer: list[dev.DeviceEvent] = []
        self.source: RoundState = S.IDLE
        self.swapped = False
        self.last_settlement: Settlement | None = None
        self._settled_from = None
        self._corrected = False

    # -- conditions (pure predicates) ------------------------------------------------------
    def is_shuffled(self) -> bool:
        return self.shuffled and self.deck_blocked is None

    def deck_usable(self) -> bool:
        return self.deck_blocked is None

    def must_burn(self) -> bool:
        return burn_cards(self.layout.device) > 0

    def needs_decisions(self) -> bool:
        return bool(self.ante_positions())

    def face_up(self) -> bool:
        return self.rules.dealt_face_up

    def all_decided(self) -> bool:
        return all(position in self.decisions for position in self.ante_positions())

    def can_settle(self) -> bool:
        return self.deal is not None and self.deal.complete

    def _resumes_to(self, target: RoundState) -> Callable[[], bool]:
        return lambda *args, **kwargs: self.source is target

    def _remember_source(self, *args: object, **kwargs: object) -> None:
        if self.state not in (S.HOLD, S.OPTIONS):
            self.source = self.state

    def only_memory_carries_over(self) -> bool:
        """Between rounds, nothing but :attr:`memory` ties the next round to the earlier ones:
        no round open, the deck usable, every device online, no shuffle confirmed for the next
        round, no fault echo outstanding. A fresh machine given the same memory then does
        exactly what this one would, which is what lets the journal start a new session here
        (and recovery replay only from it)."""
        return (self.state in NO_ROUND and self.deck_blocked is None and not self.offline
                and not self._shuffle_pending and not self._echoes
                and not self._face_up_pending and self.clock_block is None)

    def bets_still_open(self) -> bool:
        """No round, or a round still taking bets: nothing has been dealt or decided, so a
        device going offline now changes nothing but that "No more bets" waits for it."""
        return self.state in NO_ROUND or self.state is S.BETTING

    def ante_positions(self) -> list[str]:
        if self.rules.family is not Family.THREE_CARD_POKER:
            return []
        return sorted({w.position for w in self.active_wagers() if w.bet == "ante"}
                      - set(self.removed), key=self.rules.positions.index)

    def active_wagers(self) -> list[Wager]:
        return [w for w in self.wagers.values() if w.id not in self.withdrawn]

    def short_hands(self, deal: Deal | None = None) -> dict[str, int]:
        """Boxes in play (an active wager, not removed) and the dealer whose hand in ``deal``
        (default: the round's) can never be three cards, with the cards each holds."""
        deal = deal if deal is not None else self.deal
        if deal is None:
            return {}
        boxes = {w.position for w in self.active_wagers()} - set(self.removed)
        in_play = [p for p in deal.hands if p in boxes or p == self.rules.dealer]
        return deal.short_hands(in_play)

    # -- output -----------------------------------------------------------------------------
    def emit(self, event: ev.RoundEvent) -> None:
        self._emit_to(event)

    def _refuse(self, what: object, reason: str) -> None:
        log.info("input refused", input=type(what).__name__, reason=reason)
        self.emit(ev.CommandRefused(round=self.number, command=type(what).__name__,
                                    reason=reason))
