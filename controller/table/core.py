"""What every input handler of the round may read: the round's parts and its read-only views
of them, the guard conditions, and the output.

The round's state lives in parts (the wager book, the cards, the deck, the holds, the options,
the money, the devices, the clock gate), each an object that alone writes its fields
(``tests/controller/table/test_ownership.py``); :class:`~controller.table.machine.RoundMachine`
builds them and is the only code that assigns the round's own attributes. :class:`RoundCore`
declares those attributes, gives read-only views of the parts under the names the service and
the tests read (``wagers``, ``deal``, ``deck_blocked``, ...; a view has no setter, so a handler
cannot assign through it), holds the pure predicates ``transitions`` evaluates as conditions,
and declares, without defining, the triggers ``transitions`` binds on the model and the
handlers the concerns call on one another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import structlog

from controller.games.cards import Card
from controller.games.rules import Family, GameRules
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

if TYPE_CHECKING:  # the parts' modules hold handlers built on this class
    from controller.table.betting import WagerBook
    from controller.table.cards import RoundCards
    from controller.table.clockgate import ClockGate
    from controller.table.deck import Deck
    from controller.table.holds import Holds
    from controller.table.intake import Devices
    from controller.table.options import Options
    from controller.table.settling import Money

log = structlog.get_logger("controller.table")

SettledHands = tuple[tuple[str, tuple[Card, ...]], ...]
"""The hands a settlement was made on, by position."""


class RoundCore:
    """What a handler of the round reads. Not thread-safe by design: only the table thread
    calls it."""

    # the model's own fields, written only by :class:`~controller.table.machine.RoundMachine`
    state: RoundState
    layout: TableLayout
    rules: GameRules
    number: int
    clock_gate: ClockGate
    deck: Deck
    book: WagerBook
    devices: Devices
    cards: RoundCards
    holds: Holds
    options: Options
    money: Money

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
    resume: Callable[[RoundState], bool]
    void: Callable[[], bool]

    # handlers one concern provides to the others
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

    # -- read-only views of the parts (what the service and the tests read) ------------------
    @property
    def offline(self) -> Mapping[str, str]:
        """Devices reported offline and not yet back: "No more bets" waits for them."""
        return self.devices.offline

    @property
    def deal(self) -> Deal | None:
        return self.cards.deal

    @property
    def removed(self) -> Mapping[str, str]:
        return self.cards.removed

    @property
    def exposed(self) -> int:
        return self.cards.exposed

    @property
    def exposed_in_deal(self) -> int:
        return self.cards.exposed_in_deal

    @property
    def swapped(self) -> bool:
        return self.cards.swapped

    @property
    def hold_info(self) -> Hold | None:
        return self.holds.held

    @property
    def source(self) -> RoundState:
        return self.holds.source

    @property
    def buffer(self) -> Sequence[dev.DeviceEvent]:
        return self.holds.buffer

    @property
    def offer(self) -> Offer | None:
        return self.options.offer

    @property
    def offers(self) -> int:
        """Announcements of options this round (numbers each :class:`Offer`)."""
        return self.options.announcements

    @property
    def memory(self) -> TableMemory:
        return self.money.memory

    @property
    def last_settlement(self) -> Settlement | None:
        return self.money.last_settlement

    @property
    def wagers(self) -> Mapping[str, Wager]:
        return self.book.wagers

    @property
    def withdrawn(self) -> Mapping[str, str]:
        return self.book.withdrawn

    @property
    def decisions(self) -> Mapping[str, cmd.Choice]:
        return self.book.decisions

    @property
    def deck_blocked(self) -> str | None:
        return self.deck.blocked

    @property
    def shuffled(self) -> bool:
        return self.deck.shuffled

    @property
    def clock_block(self) -> str | None:
        """Why the ``[clock]`` policy refuses new rounds (:mod:`.clockgate`); ``None`` if not."""
        return self.clock_gate.block

    @property
    def clock_override(self) -> str | None:
        """Who let rounds open despite :attr:`clock_block`, and why."""
        return self.clock_gate.override

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

    def _remember_source(self, *args: object, **kwargs: object) -> None:
        self.holds.remember(self.state)

    def only_memory_carries_over(self) -> bool:
        """Between rounds, nothing but :attr:`memory` ties the next round to the earlier ones:
        no round open, the deck usable, every device online, no shuffle confirmed for the next
        round, no fault echo outstanding. A fresh machine given the same memory then does
        exactly what this one would, which is what lets the journal start a new session here
        (and recovery replay only from it)."""
        return (self.state in NO_ROUND and self.deck_blocked is None and not self.offline
                and not self.deck.next_round and not self.devices.echoes
                and not self.devices.face_up_pending and self.clock_block is None)

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
