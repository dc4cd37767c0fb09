"""The Bee-Tek dealing shoe's ASCII output at 9600 baud, byte for byte.

A draw sends `` [Game]<Card:4S> `` (or ``[Manual Burn Cards]`` in burn mode); options choose
suit-first order (``<Card:H3>``) and ``T`` or ``10`` for tens. Faults: ``noread``
(`` [Game]<Game> `` then the E3 alarm), ``exposed`` (card, then alarm E5), ``reversed`` (alarm E4,
card unread), ``doubleread`` (alarm E6, two cards out unread), ``repeat`` (the message twice),
``duplicate`` (a card already dealt), ``truncate``, ``stall`` and ``disconnect`` (armed: the
cable comes out after the next card's line; planned, :meth:`~SimShoe.plan`: as the dealer
reaches for card ``j``, before it is drawn). ``foreign`` does
not apply: the Bee-Tek line carries rank and suit only, no deck id, so a foreign card can only
show up as a duplicate. :meth:`BeeTekShoeSim.warn` sends a warning such as ``<W0x01>``.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.games.cards import Card
from drivers.shoe.beetek_codec import (
    BeeTekAlarm,
    BeeTekCard,
    BeeTekCodec,
    BeeTekNoRead,
    BeeTekWarning,
)
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.shoe_deck import SimShoe

GAME = "Game"
BURN = "Manual Burn Cards"
ALARM = "GameAlarm"
ALARMS = {
    FaultKind.NO_READ: ("E3", "Card Not Read"),
    FaultKind.REVERSED: ("E4", "Card Reversed"),
    FaultKind.EXPOSED: ("E5", "Card Exposed"),
    FaultKind.DOUBLE_READ: ("E6", "Double Card"),
}


class BeeTekShoeSim(SimShoe):
    """Bee-Tek shoe in dealing (or manual burn) mode."""

    SUPPORTED = frozenset({
        FaultKind.DUPLICATE, FaultKind.NO_READ, FaultKind.DOUBLE_READ,
        FaultKind.EXPOSED, FaultKind.REVERSED, FaultKind.REPEAT_EVENT, FaultKind.TRUNCATE,
        FaultKind.STALL, FaultKind.DISCONNECT,
    })

    def __init__(self, seed: int | None = None, faults: Sequence[FaultSpec] = (), *,
                 suit_first: bool = False, ten: str = "10", burn: bool = False) -> None:
        if ten not in {"10", "T"}:
            raise ValueError(f"ten must be '10' or 'T', got {ten!r}")
        self.suit_first = suit_first
        self.ten = ten
        self.burn = burn
        super().__init__(seed, faults)

    def message(self, msg: BeeTekCard | BeeTekNoRead | BeeTekAlarm | BeeTekWarning) -> bytes:
        return BeeTekCodec.encode(msg, suit_first=self.suit_first, ten=self.ten)

    def warn(self, code: str = "W0x01") -> None:
        self.output(self.message(BeeTekWarning(code, "")))

    def draw(self, *, burn: bool | None = None) -> Card | None:
        """Draw one card; ``burn`` overrides the burn mode for this card."""
        section = BURN if (self.burn if burn is None else burn) else GAME
        with self._lock:
            if self.planned_draw():
                return None  # the cable came out as the dealer reached for the card
            said: list[bytes] = []
            card: Card | None = None
            if (fault := self.take_fault(FaultKind.NO_READ)) is not None:
                card = self.next_card()
                said = [self.message(BeeTekNoRead(section)), self._alarm(fault.kind)]
            elif (fault := self.take_fault(FaultKind.REVERSED)) is not None:
                card = self.next_card()
                said = [self._alarm(fault.kind)]
            elif (fault := self.take_fault(FaultKind.DOUBLE_READ)) is not None:
                card = self.next_card()
                self.next_card()
                said = [self._alarm(fault.kind)]
            else:
                if self.dealt and self.take_fault(FaultKind.DUPLICATE):
                    shown = self.dealt[0]
                else:
                    card = shown = self.next_card()
                said = [self.message(BeeTekCard(shown, section, burn=section == BURN))]
                if (fault := self.take_fault(FaultKind.EXPOSED)) is not None:
                    said.append(self._alarm(fault.kind))
            out, messages = b"".join(said), len(said)
            if self.take_fault(FaultKind.TRUNCATE):
                out = out[: max(1, len(out) // 2)]
            elif self.take_fault(FaultKind.REPEAT_EVENT):
                out, messages = out + out, messages * 2
            self.output(out, messages)
            disconnect = self.take_fault(FaultKind.DISCONNECT)
        if disconnect:
            self.disconnect_for(disconnect.arg or 0.5)
        return card

    def _alarm(self, kind: FaultKind) -> bytes:
        code, text = ALARMS[kind]
        return self.message(BeeTekAlarm(code, text, ALARM))
