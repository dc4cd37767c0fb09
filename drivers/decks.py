"""Barcode-to-card maps, one data file per deck vendor (``drivers/decks/*.json``).

A barcode encodes a deck id and a card, so that a card from another deck (same vendor, other
deck id) or from another vendor is reported as foreign instead of being accepted as the card it
happens to resemble. A map file is declarative so a reviewer can check it against the vendor's
print sheet line by line::

    {"name": "generic-code128", "vendor": "generic", "symbology": "code128",
     "deck_id": "1001", "barcode": "{deck}{card}",
     "deck_pattern": "[0-9]{4}", "card_pattern": "[0-9]{2}",
     "cards": {"AS": "01", "2S": "02", ...}}          # all 52 cards, each field unique

``barcode`` is the template; ``deck_pattern``/``card_pattern`` are regular expressions for the two
fields, used to tell "another deck of this vendor" (:class:`ForeignDeckBarcode`, carries the other
deck id) from "not a card of this vendor at all" (:class:`UnknownBarcode`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from controller.errors import CardError
from controller.games.cards import FULL_DECK, Card, parse_card
from drivers.errors import DriverConfigError, UnknownBarcode

_REQUIRED = ("name", "deck_id", "barcode", "deck_pattern", "card_pattern", "cards")


class ForeignDeckBarcode(UnknownBarcode):
    """A well-formed barcode of this vendor that belongs to another deck (``deck_id``)."""

    def __init__(self, message: str, deck_id: str, card: Card | None) -> None:
        super().__init__(message)
        self.deck_id = deck_id
        self.card = card


def available() -> list[str]:
    """Names of the maps shipped in ``drivers/decks``."""
    folder = resources.files("drivers") / "decks"
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir()
                  if p.name.endswith(".json"))


@dataclass(frozen=True, slots=True)
class DeckMap:
    """One deck's barcodes: ``lookup`` for drivers, ``barcode_for`` for simulators."""

    name: str
    deck_id: str
    template: str
    deck_pattern: str
    card_pattern: str
    fields: tuple[tuple[Card, str], ...]
    vendor: str = ""
    symbology: str = ""

    # loading ----------------------------------------------------------------------------------
    @classmethod
    def load(cls, name_or_path: str | Path, *, deck_id: str | None = None) -> DeckMap:
        """Load a shipped map by name (``"generic-code128"``) or a JSON file by path.

        ``deck_id`` overrides the file's deck id: a casino runs several decks of one vendor.
        """
        text, origin = _read(name_or_path)
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as error:
            raise DriverConfigError(f"deck map {origin}: not valid JSON ({error})") from error
        deck = cls.from_dict(raw, origin=origin)
        return deck.with_deck_id(deck_id) if deck_id is not None else deck

    @classmethod
    def from_dict(cls, raw: Any, *, origin: str = "<dict>") -> DeckMap:
        """Validate ``raw``; every problem is a :class:`DriverConfigError` naming ``origin``."""
        if not isinstance(raw, dict):
            raise DriverConfigError(f"deck map {origin}: top level must be an object")
        missing = [key for key in _REQUIRED if key not in raw]
        if missing:
            raise DriverConfigError(f"deck map {origin}: missing key(s) {', '.join(missing)}")
        for key in _REQUIRED[:5]:
            if not isinstance(raw[key], str) or not raw[key]:
                raise DriverConfigError(f"deck map {origin}: {key!r} must be a non-empty string")
        if raw["barcode"].count("{deck}") != 1 or raw["barcode"].count("{card}") != 1:
            raise DriverConfigError(
                f"deck map {origin}: 'barcode' must contain {{deck}} and {{card}} once")
        for key in ("deck_pattern", "card_pattern"):
            try:
                re.compile(raw[key])
            except re.error as error:
                raise DriverConfigError(f"deck map {origin}: {key} is not a regex "
                                        f"({error})") from error
        if not isinstance(raw["cards"], dict):
            raise DriverConfigError(f"deck map {origin}: 'cards' must map card codes to "
                                    "barcode fields")
        fields: dict[Card, str] = {}
        for code, value in raw["cards"].items():
            try:
                card = parse_card(code)
            except CardError as error:
                raise DriverConfigError(f"deck map {origin}: {error}") from error
            if card in fields:
                raise DriverConfigError(f"deck map {origin}: card {card.code} listed twice")
            if not isinstance(value, str) or not re.fullmatch(raw["card_pattern"], value):
                raise DriverConfigError(f"deck map {origin}: field {value!r} of {card.code} "
                                        f"does not match card_pattern "
                                        f"{raw['card_pattern']!r}")
            fields[card] = value
        missing_cards = [c.code for c in FULL_DECK if c not in fields]
        if missing_cards:
            raise DriverConfigError(f"deck map {origin}: missing card(s) "
                                    f"{', '.join(missing_cards)}")
        values = list(fields.values())
        if len(set(values)) != len(values):
            dup = sorted({v for v in values if values.count(v) > 1})
            raise DriverConfigError(f"deck map {origin}: barcode field(s) {', '.join(dup)} "
                                    "used twice")
        deck = cls(name=raw["name"], deck_id="", template=raw["barcode"],
                   deck_pattern=raw["deck_pattern"], card_pattern=raw["card_pattern"],
                   fields=tuple(sorted(fields.items())), vendor=str(raw.get("vendor", "")),
                   symbology=str(raw.get("symbology", "")))
        try:
            return deck.with_deck_id(raw["deck_id"])
        except DriverConfigError as error:
            raise DriverConfigError(f"deck map {origin}: {error}") from error

    def with_deck_id(self, deck_id: str) -> DeckMap:
        """The same vendor map for another physical deck (simulators use it for foreign cards)."""
        if not re.fullmatch(self.deck_pattern, deck_id):
            raise DriverConfigError(f"deck id {deck_id!r} does not match deck_pattern "
                                    f"{self.deck_pattern!r} of deck map {self.name!r}")
        return replace(self, deck_id=deck_id)

    # use --------------------------------------------------------------------------------------
    def barcode_for(self, card: Card) -> str:
        """The barcode printed on ``card`` of this deck."""
        return self.template.replace("{deck}", self.deck_id).replace(
            "{card}", dict(self.fields)[card])

    def lookup(self, barcode: str) -> Card:
        """The card of this deck behind ``barcode``.

        Raises :class:`ForeignDeckBarcode` for a card of another deck of this vendor and
        :class:`UnknownBarcode` for anything else that is not one of this deck's 52 barcodes.
        """
        match = _compiled(self.template, self.deck_pattern, self.card_pattern).fullmatch(barcode)
        if match is None:
            raise UnknownBarcode(f"barcode {barcode!r} is not a {self.name} card barcode")
        card = _by_field(self.fields).get(match["card"])
        if match["deck"] != self.deck_id:
            raise ForeignDeckBarcode(
                f"barcode {barcode!r} is from deck {match['deck']}, not deck {self.deck_id}",
                match["deck"], card)
        if card is None:
            raise UnknownBarcode(f"barcode {barcode!r}: card field {match['card']!r} is not in "
                                 f"deck map {self.name}")
        return card


def _read(name_or_path: str | Path) -> tuple[str, str]:
    path = Path(name_or_path)
    if isinstance(name_or_path, Path) or path.suffix == ".json" or "/" in str(name_or_path):
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except OSError as error:
            raise DriverConfigError(f"deck map {path}: cannot read ({error.strerror})") from error
    resource = resources.files("drivers") / "decks" / f"{name_or_path}.json"
    if not resource.is_file():
        raise DriverConfigError(f"unknown deck map {str(name_or_path)!r}; shipped maps: "
                                f"{', '.join(available())}")
    return resource.read_text(encoding="utf-8"), f"drivers/decks/{name_or_path}.json"


_PATTERNS: dict[tuple[str, str, str], re.Pattern[str]] = {}


def _compiled(template: str, deck_pattern: str, card_pattern: str) -> re.Pattern[str]:
    key = (template, deck_pattern, card_pattern)
    if key not in _PATTERNS:
        head, _, rest = template.partition("{deck}")
        parts = re.split(r"(\{card\})", head + "\0" + rest)
        regex = "".join(
            f"(?P<card>{card_pattern})" if part == "{card}"
            else "\0".join(re.escape(p) for p in part.split("\0"))
            for part in parts
        ).replace("\0", f"(?P<deck>{deck_pattern})")
        _PATTERNS[key] = re.compile(regex)
    return _PATTERNS[key]


_FIELD_INDEX: dict[tuple[tuple[Card, str], ...], dict[str, Card]] = {}


def _by_field(fields: tuple[tuple[Card, str], ...]) -> dict[str, Card]:
    if fields not in _FIELD_INDEX:
        _FIELD_INDEX[fields] = {value: card for card, value in fields}
    return _FIELD_INDEX[fields]
