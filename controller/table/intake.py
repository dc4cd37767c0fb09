"""Device events into the round: cards read or dispensed as sets, shuffles, faults, devices
going offline and rebooting.

A card is routed by the state it arrives in (dealt, burnt, ignored after the game, or ruled an
irregularity); a device fault that only echoes a card event already counted is noted, not ruled
twice. While the round is held, card events are buffered and replayed on resumption.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.games.cards import Card
from controller.table import events as ev
from controller.table.core import RoundCore
from controller.table.dealing import Delivery
from controller.table.commands import Source
from controller.table.irregularities import Action, Phase, rule
from controller.table.layout import DealingDevice
from controller.table.states import (
    DEALING_PHASES,
    NO_ROUND,
    RESUMABLE,
    Kind,
    Refused,
    S,
)
from drivers import events as dev

_FAULT_KINDS = {dev.Fault.FOREIGN_CARD: Kind.FOREIGN_CARD,
                dev.Fault.DUPLICATE_CARD: Kind.DUPLICATE_CARD,
                dev.Fault.COUNT_MISMATCH: Kind.DECK_COUNT,
                dev.Fault.NOT_SHUFFLED: Kind.NOT_SHUFFLED,
                dev.Fault.EXPOSED_CARD: Kind.EXPOSED_CARD,
                dev.Fault.REVERSED_CARD: Kind.EXPOSED_CARD,
                dev.Fault.UNREADABLE_CARD: Kind.NO_READ,
                dev.Fault.JAM: Kind.JAMMED}


@dataclass(slots=True)
class Devices:
    """What the round knows of its devices between inputs, written only here: which are
    offline, which fault of which device only echoes a card event already counted, and cards
    found face up while shuffling between rounds. Kept across rounds."""

    offline: dict[str, str] = field(default_factory=dict)
    """Devices reported offline and not yet back: "No more bets" waits for them."""
    echoes: set[tuple[str, Kind]] = field(default_factory=set)
    """(device, kind) already reported by a card event: the fault the same device raises
    right after it (shuffler exposed or duplicate bit, Bee-Tek E3/E5 alarm after the card)
    is the same event. Kept across rounds (the echo may arrive after a void and the next
    "Place your bets") until the device's next card event."""
    face_up_pending: int = 0
    """Cards the shuffler found face up while shuffling between rounds (its exposed-card
    fault bit with no round open): ruled when the next round opens, which they belong to."""

    def card_event(self, device: str) -> None:
        """The device's next card event: its earlier echoes are spent."""
        self.echoes = {echo for echo in self.echoes if echo[0] != device}

    def will_echo(self, device: str, kind: Kind) -> None:
        self.echoes.add((device, kind))

    def echoed(self, device: str, kind: Kind) -> bool:
        """True (and the echo spent) when this fault only echoes a counted card event."""
        if (device, kind) not in self.echoes:
            return False
        self.echoes.discard((device, kind))
        return True

    def went_offline(self, device: str, reason: str) -> None:
        self.offline[device] = reason

    def came_back(self, device: str) -> None:
        self.offline.pop(device, None)

    def found_face_up(self) -> None:
        self.face_up_pending += 1

    def take_face_up(self) -> int:
        """The cards found face up since the last round, now ruled in the one opening."""
        found, self.face_up_pending = self.face_up_pending, 0
        return found


class IntakeMixin(RoundCore):
    """Device events and card intake: what each card or fault does to the round."""

    def _device(self, event: dev.DeviceEvent) -> None:
        if isinstance(event, (dev.CardRead, dev.CardSetDispensed, dev.NoRead, dev.DoubleFeed)):
            self.devices.card_event(event.device)
        if isinstance(event, (dev.CardRead, dev.CardSetDispensed, dev.NoRead, dev.DoubleFeed)) \
                and self.state in (S.HOLD, S.OPTIONS):
            self.holds.keep(event)
            return
        if isinstance(event, dev.CardRead):
            self._card_read(event)
        elif isinstance(event, dev.CardSetDispensed):
            self._card_set(event)
        elif isinstance(event, dev.ShuffleDone):
            if event.counted != event.expected:
                # the shuffler may raise its count fault after this report: the same count
                self.devices.will_echo(event.device, Kind.DECK_COUNT)
                self._deck_count_wrong(f"{event.device} counted {event.counted} cards, expected "
                                       f"{event.expected}")
            else:
                try:
                    self._shuffle_done(event.device)
                except Refused as refusal:
                    self._note(event, f"shuffle not accepted: {refusal}",
                               ev.NoteCause.SHUFFLE_REFUSED)
        elif isinstance(event, dev.ForeignCard):
            self._in_round_irregularity(event, Kind.FOREIGN_CARD,
                                        f"foreign card {event.barcode} {event.deck_id or ''}")
        elif isinstance(event, dev.NoRead):
            self.devices.will_echo(event.device, Kind.NO_READ)
            self._in_round_irregularity(event, Kind.NO_READ, "card not identified")
        elif isinstance(event, dev.DoubleFeed):
            self._in_round_irregularity(event, Kind.SIMULTANEOUS_DRAW, "two cards drawn together")
        elif isinstance(event, dev.FaultRaised):
            kind = _FAULT_KINDS.get(event.fault)
            if kind is Kind.DECK_COUNT and self.deck_blocked is not None:
                # the shuffler's fault bit echoes the count it already reported in ShuffleDone
                self.devices.echoed(event.device, kind)  # spent: the next count fault is new
                self._note(event, f"fault {event.fault.value} {event.detail} (deck already "
                           f"blocked)")
            elif kind is Kind.DECK_COUNT and self.devices.echoed(event.device, kind):
                # ... and when it arrives after the deck was replaced and the next round opened,
                # it is still that count, not a new one: the new round is untouched
                self._note(event, f"fault {event.fault.value} {event.detail} (already counted)")
            elif kind is Kind.DECK_COUNT:
                self._deck_count_wrong(f"{event.device}: {event.fault.value} {event.detail}")
            elif kind is not None and self.devices.echoed(event.device, kind):
                # the device flagged the card (or reported the no-read) AND raises the fault
                self._note(event, f"fault {event.fault.value} {event.detail} (already counted)")
            elif kind is Kind.EXPOSED_CARD and self.state in NO_ROUND:
                self.devices.found_face_up()
                self._note(event, f"fault {event.fault.value} {event.detail}: found while "
                           f"shuffling between rounds; ruled when the next round opens")
            elif kind is Kind.EXPOSED_CARD and self.state in RESUMABLE:
                # a card found face up inside the device, no card read with it (protocol: the
                # shuffler's fault bit 6 outside a formed hand): ruled in any phase of a round
                self._exposure(Source.DEVICE, detail=f"{event.device}: {event.detail}".strip())
            elif kind is not None and kind is not Kind.EXPOSED_CARD:
                if kind is Kind.JAMMED:
                    self._interruption(event, Kind.JAMMED)
                else:
                    self._in_round_irregularity(event, kind, event.detail)
            else:
                self._note(event, f"fault {event.fault.value} {event.detail}")
        elif isinstance(event, dev.DeviceOffline):
            self.devices.went_offline(event.device, event.reason or "offline")
            self._interruption(event, Kind.INTERRUPTION)
        elif isinstance(event, dev.DeviceRebooted):
            self._rebooted(event)
        elif isinstance(event, dev.DeviceOnline):
            self.devices.came_back(event.device)
            self._note(event, type(event).__name__)
        else:
            self._note(event, type(event).__name__)

    def _note(self, event: dev.DeviceEvent, detail: str,
              cause: ev.NoteCause = ev.NoteCause.OTHER) -> None:
        self.emit(ev.DeviceNoted(round=self.number, device=event.device, detail=detail.strip(),
                                 cause=cause))

    def _in_round_irregularity(self, event: dev.DeviceEvent, kind: Kind, detail: str) -> None:
        if self.state in NO_ROUND or self.state is S.HOLD:
            self._note(event, f"{kind.value}: {detail}")
            return
        self._irregularity(kind, detail=detail)

    def _rebooted(self, event: dev.DeviceRebooted) -> None:
        """A rebooted shuffler has lost its deck (and any shuffle not yet dealt from), so a
        shuffle confirmed before the deal no longer counts; and after "No more bets" a reboot is
        an interruption like a device going offline, before the first card too (RWS-NC3P 5.4,
        MBS-R3P 5.13: both or neither, and the text makes no exception)."""
        lost = self.layout.device is DealingDevice.SHUFFLER and \
            self.state not in (S.BURN, S.DEALING, S.DECISIONS, S.DEALT, S.REVEALED, S.HOLD,
                               S.OPTIONS)
        if lost and (self.shuffled or self.deck.next_round):
            self.deck.shuffle_lost()
            if self.state is S.SHUFFLED:
                self.lose_shuffle()  # nothing dealt yet: back to waiting for a shuffle
            self._note(event, "DeviceRebooted: the shuffle before it is lost; shuffle again",
                       ev.NoteCause.SHUFFLE_LOST)
        self._interruption(event, Kind.INTERRUPTION)

    def _interruption(self, event: dev.DeviceEvent, kind: Kind) -> None:
        # during the players' options the round is still being dealt: a jam or a power failure
        # then is ruled like one while dealing (the options outlive the hold it may bring)
        dealing = self.state in DEALING_PHASES or \
            self.state is S.OPTIONS and self.source in DEALING_PHASES
        if not dealing:
            what = type(event).__name__
            if self.state is S.BETTING and isinstance(event, dev.DeviceOffline):
                what += (": no card dealt, nothing established; the round continues when the "
                         "device returns, No more bets waits for it")
            self._note(event, f"{kind.value}: {what}")
            return
        self._irregularity(kind, detail=f"{event.device}: {type(event).__name__}")

    def _card_read(self, event: dev.CardRead) -> None:
        if event.card is None:
            self._in_round_irregularity(event, Kind.NO_READ, "card read without identity")
            return
        if not self._accept_cards(event, (event.card,)):
            return
        deal = self.deal
        assert deal is not None
        card = event.card
        if deal.burning and self.layout.burns_marked and not event.burn:
            self._short_burn(card)
            return
        if deal.burning:
            deal.mark_seen((card,))
            self.emit(ev.BurnCard(round=self.number, card=card, index=deal.burn(card)))
            if not deal.burning:
                self.start_deal()
            return
        if event.burn and deal.burn_target:
            deal.mark_seen((card,))
            self.emit(ev.BurnCard(round=self.number, card=card, index=deal.burn(card)))
            self._irregularity(Kind.BURN_ERROR, detail=f"extra burn card {card.code}")
            return
        first = deal.first_card
        deal.mark_seen((card,))
        self._assigned([deal.deliver_card(card)])
        if event.exposed:
            self.devices.will_echo(event.device, Kind.EXPOSED_CARD)
            self._exposure(Source.DEVICE, detail=card.code, first_card=first)
        self._maybe_finish_deal()

    def _short_burn(self, card: Card) -> None:
        """LIVE-3P T&C 1: a shoe that marks its burn cards sent this one from its game section
        while burns were still due. Taking it as a burn would shift every hand by a card;
        it is a burn error, found before Player 1's second card (nothing is dealt yet), so the
        ruling is reconstruction: the card is held out of the hands until the supervisor's
        ``reconstruct`` makes it the missing burn."""
        deal = self.deal
        assert deal is not None
        deal.hold_out(card)
        self._irregularity(Kind.BURN_ERROR, detail=f"short burn: {card.code} came unmarked "
                           f"from the shoe's game section after {len(deal.burns)} of "
                           f"{deal.burn_target} burn cards")

    def _card_set(self, event: dev.CardSetDispensed) -> None:
        if not self._accept_cards(event, event.cards):
            return
        deal = self.deal
        assert deal is not None
        first = deal.first_card
        deal.mark_seen(event.cards)
        deliveries = deal.deliver_set(event.cards)
        self._assigned(deliveries)
        if event.exposed:
            self.devices.will_echo(event.device, Kind.EXPOSED_CARD)
            self._exposure(Source.DEVICE, cards=len(event.exposed), first_card=first,
                           detail="exposed in set: " + " ".join(c.code for c in event.exposed))
            if self.state not in (S.DEALING, S.BURN):
                return
        for delivery in deliveries:
            if delivery.wrong_count and self.state in RESUMABLE:
                kind = Kind.WRONG_COUNT_DEALER if delivery.position == self.rules.dealer \
                    else Kind.WRONG_COUNT_PLAYER
                self._irregularity(kind, position=delivery.position,
                                   detail=f"set of {len(delivery.cards)} cards")
        self._maybe_finish_deal()

    def _accept_cards(self, event: dev.DeviceEvent, cards: tuple[Card, ...]) -> bool:
        """Route a card by state; True when it may be dealt now."""
        state = self.state
        if state in NO_ROUND or state in (S.DECISIONS, S.DEALT, S.REVEALED):
            kind, phase = Kind.CARD_AFTER_GAME, (Phase.NO_ROUND if state in NO_ROUND
                                                 else Phase.DEALT)
            ruling = rule(self.rules, kind, self._context(phase=phase))
            if ruling.action is Action.IGNORE:
                for card in cards:
                    if self.deal is not None and state not in NO_ROUND:
                        self.deal.ignore(card)
                    self.emit(ev.CardIgnored(round=self.number, card=card, clause=ruling.clause,
                                             reason=ruling.note))
                return False
            self._apply(kind, ruling, None, ", ".join(c.code for c in cards))
            return False
        if state is S.BETTING:
            self._exposure(Source.DRAWN, detail="card drawn while bets are offered")
            return False
        deal = self.deal
        assert deal is not None
        if state is S.CLOSED or (state is S.SHUFFLED and self.deck_blocked is not None):
            if self.deck_blocked is not None:
                self._irregularity(Kind.DECK_COUNT, detail=f"card dealt from a blocked deck: "
                                   f"{self.deck_blocked}")
            else:
                self._irregularity(Kind.NOT_SHUFFLED, detail="card dealt with no shuffle "
                                   "confirmed for this deck")
            return False
        repeated = [card for card in cards if card in deal.seen] or \
            [card for i, card in enumerate(cards) if card in cards[:i]]
        if repeated:
            self.devices.will_echo(event.device, Kind.DUPLICATE_CARD)  # the shuffler's fault bit
            self._irregularity(Kind.DUPLICATE_CARD,
                               detail=f"second copy of {repeated[0].code} in this round")
            return False
        if state is S.SHUFFLED:
            # with queued=True a trigger always returns True: decide first, then trigger
            if self.must_burn():
                self.start_burn()
            else:
                self.start_deal()
        return self.state in (S.BURN, S.DEALING)

    def _assigned(self, deliveries: list[Delivery]) -> None:
        for delivery in deliveries:
            for offset, card in enumerate(delivery.cards):
                self.emit(ev.CardAssigned(round=self.number, position=delivery.position,
                                          card=card, index=delivery.first_index + offset))
            if delivery.completed and not delivery.wrong_count:
                assert self.deal is not None
                self.emit(ev.HandComplete(
                    round=self.number, position=delivery.position,
                    cards=tuple(self.deal.hands[delivery.position])))

    def _maybe_finish_deal(self) -> None:
        if self.state is S.DEALING and self.deal is not None and self.deal.complete:
            self.emit(ev.DealComplete(round=self.number))
            self.finish_deal()
            if self.state is S.DECISIONS and self.all_decided():
                self.decisions_done()
            self._settle_on_deal_complete()
