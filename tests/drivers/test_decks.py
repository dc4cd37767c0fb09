"""Deck maps: every shipped map round-trips, foreign decks and unknown codes are told apart."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from controller.games.cards import FULL_DECK, parse_card
from drivers.decks import DeckMap, ForeignDeckBarcode, available
from drivers.errors import DriverConfigError, UnknownBarcode


@pytest.fixture(name="raw_map")
def fixture_raw_map() -> dict:
    return json.loads((resources.files("drivers") / "decks" / "generic-code128.json").read_text())


def test_at_least_two_vendors_are_shipped():
    """Two deck vendors with different barcode layouts ship as package data."""
    names = available()
    assert {"generic-code128", "house-s2"} <= set(names)
    assert len({DeckMap.load(n).vendor for n in names}) >= 2


@pytest.mark.parametrize("name", ["generic-code128", "house-s2"])
def test_every_card_round_trips(name):
    """barcode_for and lookup are inverse for all 52 cards, and all barcodes differ."""
    deck = DeckMap.load(name)
    codes = {deck.barcode_for(card) for card in FULL_DECK}
    assert len(codes) == 52
    assert all(deck.lookup(deck.barcode_for(card)) == card for card in FULL_DECK)


@pytest.mark.parametrize(("name", "other"), [("generic-code128", "2002"), ("house-s2", "ZZ999")])
def test_card_of_another_deck_is_foreign_with_its_deck_id(name, other):
    """A card of the same vendor but another deck id is foreign, never silently accepted."""
    deck = DeckMap.load(name)
    barcode = deck.with_deck_id(other).barcode_for(parse_card("QD"))
    with pytest.raises(ForeignDeckBarcode) as caught:
        deck.lookup(barcode)
    assert caught.value.deck_id == other
    assert caught.value.card == parse_card("QD")


@pytest.mark.parametrize("barcode", ["", "xx", "100153", "100100", "KP417-S14", "10013"])
def test_unknown_barcodes_raise_unknown(barcode):
    """Codes that are no card of the deck raise UnknownBarcode naming the code."""
    deck = DeckMap.load("generic-code128" if barcode[:1].isdigit() or not barcode else "house-s2")
    with pytest.raises(UnknownBarcode, match="barcode"):
        deck.lookup(barcode)


def test_deck_id_override_applies():
    """A casino's second deck of one vendor is configured by overriding the deck id."""
    deck = DeckMap.load("generic-code128", deck_id="1002")
    assert deck.barcode_for(parse_card("AS")) == "100201"
    with pytest.raises(ForeignDeckBarcode):
        deck.lookup("100101")


def test_load_by_path(tmp_path, raw_map):
    """A map file outside the package loads by path."""
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(raw_map))
    assert DeckMap.load(path).lookup("100152") == parse_card("KC")


@pytest.mark.parametrize(("mutate", "problem"), [
    (lambda m: m.pop("deck_id"), "missing key"),
    (lambda m: m["cards"].pop("AS"), "missing card"),
    (lambda m: m["cards"].update({"KC": "01"}), "used twice"),
    (lambda m: m["cards"].update({"ZZ": "99"}), "not a card"),
    (lambda m: m.update({"barcode": "{card}"}), "{deck}"),
    (lambda m: m.update({"deck_pattern": "("}), "not a regex"),
    (lambda m: m.update({"deck_id": "12"}), "deck_pattern"),
    (lambda m: m["cards"].update({"AS": "x1"}), "card_pattern"),
])
def test_malformed_maps_name_file_and_problem(tmp_path, raw_map, mutate, problem):
    """Every malformed map is a DriverConfigError that names the file and the problem."""
    mutate(raw_map)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(raw_map))
    with pytest.raises(DriverConfigError, match="broken.json") as caught:
        DeckMap.load(path)
    assert problem in str(caught.value)


def test_not_json_and_unknown_name(tmp_path):
    """Invalid JSON and an unknown map name are clear ConfigErrors."""
    path = tmp_path / "bad.json"
    path.write_text("{")
    with pytest.raises(DriverConfigError, match="bad.json: not valid JSON"):
        DeckMap.load(path)
    with pytest.raises(DriverConfigError, match="unknown deck map 'nope'.*generic-code128"):
        DeckMap.load("nope")
